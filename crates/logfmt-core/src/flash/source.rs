//! Reading a flash log: blocks read from the region into a caller's buffer — in region order,
//! or, for a ring, from the oldest block to the newest.

use core::borrow::BorrowMut;

use embedded_storage::nor_flash::ReadNorFlash;

use super::FlashConfig;
use crate::format::BLOCK_SIZE;
use crate::ring::{RING_HEADER_SIZE, Ring, RingHeader};
use crate::source::BlockSource;

/// A [`BlockSource`] over a flash region: read it with a [`Reader`](crate::Reader) or
/// [`FragmentReader`](crate::FragmentReader) and
/// [`ReadOptions::erased`](crate::ReadOptions::erased) set to the region's erased value.
///
/// For a ring ([`FlashSource::ring`]), the blocks come from the oldest to the newest: read
/// with [`ReadOptions::starts_mid_log`](crate::ReadOptions::starts_mid_log) too, and map the
/// offsets the reader reports to region offsets with [`FlashSource::region_offset`].
#[derive(Debug)]
pub struct FlashSource<F, B> {
    flash: F,
    config: FlashConfig,
    buffer: B,
    /// Blocks loaded so far (a ring's, counted from its oldest).
    next: u32,
    len: usize,
    order: Order,
}

/// The order the blocks are read in.
#[derive(Debug, Clone, Copy)]
enum Order {
    /// The region's, from its start.
    Region,
    /// A ring's, from its oldest block (the second field) to its newest; the oldest block's
    /// ring header counts the records begun before it (the third).
    Ring(Ring, u32, u32),
    /// None: a ring source over a region with no ring header.
    Nothing,
}

impl<F: ReadNorFlash, B: BorrowMut<[u8; BLOCK_SIZE]>> FlashSource<F, B> {
    /// A source over the region `config` of `flash`, reading blocks into `buffer`.
    pub fn new(flash: F, config: FlashConfig, buffer: B) -> Self {
        Self {
            flash,
            config,
            buffer,
            next: 0,
            len: 0,
            order: Order::Region,
        }
    }

    /// A source over the ring in region `config` of `flash`: it reads each block's ring
    /// header (19 bytes a block, twice at most) to find the oldest block, then gives the blocks
    /// from the oldest to the newest; a block on the way that holds nothing of the log (its
    /// ring header missing or of another lap) reads as erased. A region with no ring header
    /// gives nothing.
    ///
    /// # Errors
    /// A read error.
    pub fn ring(mut flash: F, config: FlashConfig, buffer: B) -> Result<Self, F::Error> {
        let blocks = config.len / BLOCK_SIZE as u32;
        let mut error = None;
        let mut read = |flash: &mut F, index| {
            ring_header(flash, &config, index).unwrap_or_else(|e| {
                error.get_or_insert(e);
                None
            })
        };
        let found = Ring::find((0..blocks).map(|index| (index, read(&mut flash, index))));
        let ring = found.and_then(|ring| {
            ring.candidates().find_map(|index| {
                let header = read(&mut flash, index);
                let records = header.map(|h| h.records)?;
                ring.holds(index, header).then_some((ring, index, records))
            })
        });
        if let Some(e) = error {
            return Err(e);
        }
        Ok(Self {
            flash,
            config,
            buffer,
            next: 0,
            len: 0,
            order: ring.map_or(Order::Nothing, |(ring, oldest, records)| {
                Order::Ring(ring, oldest, records)
            }),
        })
    }

    /// The ring found by [`ring`](Self::ring), if the region holds one.
    pub fn ring_order(&self) -> Option<Ring> {
        match self.order {
            Order::Ring(ring, ..) => Some(ring),
            Order::Region | Order::Nothing => None,
        }
    }

    /// For a ring: records aged out, begun before the oldest block the ring holds (wrapping;
    /// a record that runs into that block is one of them). `None` for a region read in order.
    pub fn aged_out_records(&self) -> Option<u32> {
        match self.order {
            Order::Ring(_, _, records) => Some(records),
            Order::Region | Order::Nothing => None,
        }
    }

    /// The region offset of `offset` as a reader of this source reports it: the same for a
    /// region read in order; for a ring, counted from its oldest block.
    pub fn region_offset(&self, offset: u64) -> u64 {
        match self.order {
            Order::Ring(ring, oldest, _) => ring.region_offset(oldest, offset),
            Order::Region | Order::Nothing => offset,
        }
    }

    /// Gives back the flash and the buffer.
    pub fn into_inner(self) -> (F, B) {
        (self.flash, self.buffer)
    }
}

/// The ring header of block `index` of the region, if one is there intact.
fn ring_header<F: ReadNorFlash>(
    flash: &mut F,
    config: &FlashConfig,
    index: u32,
) -> Result<Option<RingHeader>, F::Error> {
    // Whole READ_SIZE units from the block's start (checked: at most 32 bytes each).
    let mut bytes = [0u8; 64];
    let len = RING_HEADER_SIZE.next_multiple_of(F::READ_SIZE.clamp(1, 32));
    let at = config.start + index * BLOCK_SIZE as u32;
    flash.read(at, bytes.get_mut(..len).unwrap_or_default())?;
    Ok(RingHeader::parse(&bytes))
}

impl<F: ReadNorFlash, B: BorrowMut<[u8; BLOCK_SIZE]>> BlockSource for FlashSource<F, B> {
    type Error = F::Error;

    fn load_next(&mut self) -> Result<(), F::Error> {
        self.len = 0;
        let index = match self.order {
            Order::Region if self.next < self.config.len / BLOCK_SIZE as u32 => self.next,
            Order::Ring(ring, oldest, _) => match ring.order(oldest).nth(self.next as usize) {
                Some(index) => index,
                None => return Ok(()),
            },
            Order::Region | Order::Nothing => return Ok(()),
        };
        let buffer: &mut [u8; BLOCK_SIZE] = self.buffer.borrow_mut();
        self.flash
            .read(self.config.start + index * BLOCK_SIZE as u32, buffer)?;
        if let Order::Ring(ring, ..) = self.order
            && !ring.holds(index, RingHeader::parse(buffer))
        {
            // Nothing of this log: read as erased.
            buffer.fill(self.config.erased);
        }
        self.next += 1;
        self.len = BLOCK_SIZE;
        Ok(())
    }

    fn block(&self) -> &[u8] {
        self.buffer.borrow().get(..self.len).unwrap_or_default()
    }

    fn is_last(&self) -> bool {
        // A ring's newest block ends the log.
        match self.order {
            Order::Ring(ring, oldest, _) => {
                self.len > 0 && ring.order(oldest).count() == self.next as usize
            }
            Order::Region | Order::Nothing => false,
        }
    }

    fn skip(&mut self, bytes: u64) -> Result<(), F::Error> {
        let blocks = u32::try_from(bytes / BLOCK_SIZE as u64).unwrap_or(u32::MAX);
        self.next = self.next.saturating_add(blocks);
        Ok(())
    }
}
