//! Reading a flash log: blocks read from the region into a caller's buffer — in region order,
//! or, for a ring, from the oldest block to the newest.

use core::borrow::BorrowMut;

use embedded_storage::nor_flash::{NorFlashError, NorFlashErrorKind, ReadNorFlash};

use super::config::{FlashConfig, unreadable};
use super::order::Order;
use crate::format::BLOCK_SIZE;
use crate::ring::Ring;
use crate::source::BlockSource;

/// A [`BlockSource`] over a flash region: read it with a [`Reader`](crate::Reader) or
/// [`FragmentReader`](crate::FragmentReader) and
/// [`ReadOptions::erased`](crate::ReadOptions::erased) set to the region's erased value.
///
/// For a ring ([`FlashSource::ring`]), the blocks come from the oldest to the newest: read
/// with [`ReadOptions::starts_mid_log`](crate::ReadOptions::starts_mid_log) too, and map the
/// offsets the reader reports to region offsets with [`FlashSource::region_offset`].
///
/// A block read that fails with an error of kind `Other` (an ECC error: a word whose program
/// a power cut interrupted) is read again in smaller pieces; the bytes that still fail read as
/// unknown bytes that are no chunk's (a torn write before a resume marker, or damage), as the
/// small-RAM reader reads them.
#[derive(Debug)]
pub struct FlashSource<F, B> {
    flash: F,
    config: FlashConfig,
    buffer: B,
    /// Blocks loaded so far (a ring's, counted from its oldest).
    next: u32,
    len: usize,
    /// The current block is the last to read (a ring's newest).
    last: bool,
    order: Order,
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
            last: false,
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
    /// A read error (one of kind `Other`, an ECC error, while reading a ring header: that
    /// header is taken as missing).
    pub fn ring(mut flash: F, config: FlashConfig, buffer: B) -> Result<Self, F::Error> {
        let order = super::order::find_ring_sync(&mut flash, &config)?;
        Ok(Self {
            flash,
            config,
            buffer,
            next: 0,
            len: 0,
            last: false,
            order,
        })
    }

    /// The ring found by [`ring`](Self::ring), if the region holds one.
    pub fn ring_order(&self) -> Option<Ring> {
        self.order.ring_of()
    }

    /// For a ring: records aged out, begun before the oldest block the ring holds (wrapping;
    /// a record that runs into that block is one of them). `None` for a region read in order.
    pub fn aged_out_records(&self) -> Option<u32> {
        self.order.aged_out()
    }

    /// The region offset of `offset` as a reader of this source reports it: the same for a
    /// region read in order; for a ring, counted from its oldest block.
    pub fn region_offset(&self, offset: u64) -> u64 {
        self.order.region_offset(offset)
    }

    /// Gives back the flash and the buffer.
    pub fn into_inner(self) -> (F, B) {
        (self.flash, self.buffer)
    }
}

impl<F: ReadNorFlash, B: BorrowMut<[u8; BLOCK_SIZE]>> BlockSource for FlashSource<F, B> {
    type Error = F::Error;

    fn load_next(&mut self) -> Result<(), F::Error> {
        self.len = 0;
        let Some((index, last)) = self.order.block(&self.config, self.next) else {
            return Ok(());
        };
        let buffer: &mut [u8; BLOCK_SIZE] = self.buffer.borrow_mut();
        let at = self.config.start + index * BLOCK_SIZE as u32;
        read_or_unknown(&mut self.flash, at, buffer, self.config.erased)?;
        if !self.order.holds(index, buffer) {
            // Nothing of this log: read as erased.
            buffer.fill(self.config.erased);
        }
        self.next += 1;
        self.len = BLOCK_SIZE;
        self.last = last;
        Ok(())
    }

    fn block(&self) -> &[u8] {
        self.buffer.borrow().get(..self.len).unwrap_or_default()
    }

    fn is_last(&self) -> bool {
        // A ring's newest block ends the log.
        self.len > 0 && self.last
    }

    fn skip(&mut self, bytes: u64) -> Result<(), F::Error> {
        let blocks = u32::try_from(bytes / BLOCK_SIZE as u64).unwrap_or(u32::MAX);
        self.next = self.next.saturating_add(blocks);
        Ok(())
    }
}

/// Reads `buffer` at `at`. A read that fails with an error of kind `Other` (an ECC error: a
/// word whose program a power cut interrupted, on parts with per-word ECC) is read again in
/// pieces of 32 bytes, and a piece that fails a `READ_SIZE` unit at a time; a unit that still
/// fails holds unknown bytes, taken as written bytes that are no chunk's
/// ([`unreadable`]), as the small-RAM reader takes them. Other errors are
/// returned.
fn read_or_unknown<F: ReadNorFlash>(
    flash: &mut F,
    at: u32,
    buffer: &mut [u8],
    erased: u8,
) -> Result<(), F::Error> {
    match flash.read(at, buffer) {
        Err(e) if e.kind() == NorFlashErrorKind::Other => {}
        done => return done,
    }
    let unit = F::READ_SIZE.max(1);
    let piece = 32usize.next_multiple_of(unit);
    for (i, chunk) in buffer.chunks_mut(piece).enumerate() {
        let chunk_at = at + (i * piece) as u32;
        match flash.read(chunk_at, chunk) {
            Err(e) if e.kind() == NorFlashErrorKind::Other => {}
            done => {
                done?;
                continue;
            }
        }
        for (j, bytes) in chunk.chunks_mut(unit).enumerate() {
            match flash.read(chunk_at + (j * unit) as u32, bytes) {
                Err(e) if e.kind() == NorFlashErrorKind::Other => {
                    bytes.fill(unreadable(erased));
                }
                done => done?,
            }
        }
    }
    Ok(())
}
