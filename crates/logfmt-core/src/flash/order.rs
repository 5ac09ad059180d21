//! The order a flash log's blocks are read in: the region's, or a ring's from its oldest
//! block to its newest (found from the blocks' ring headers). Shared by the block reader's
//! [`FlashSource`](super::FlashSource) and the small-RAM [`WordReader`](super::WordReader).

use embedded_storage::nor_flash::ReadNorFlash as ReadFlashSync;
#[cfg(feature = "embedded-storage-async")]
use embedded_storage_async::nor_flash::ReadNorFlash as ReadFlashAsync;

use super::config::FlashConfig;
use crate::format::BLOCK_SIZE;
use crate::ring::{RING_HEADER_SIZE, Ring, RingFinder, RingHeader};

/// The order the blocks are read in.
#[derive(Debug, Clone, Copy)]
pub(super) enum Order {
    /// The region's, from its start.
    Region,
    /// A ring's, from its oldest block (the second field) to its newest; the oldest block's
    /// ring header counts the records begun before it (the third).
    Ring(Ring, u32, u32),
    /// None: a ring reader over a region with no ring header.
    Nothing,
}

impl Order {
    /// The region index of the `n`-th block to read, and whether it is the last; `None` past
    /// the last.
    pub(super) fn block(&self, config: &FlashConfig, n: u32) -> Option<(u32, bool)> {
        match *self {
            Self::Region => {
                let blocks = config.len / BLOCK_SIZE as u32;
                (n < blocks).then_some((n, false))
            }
            Self::Ring(ring, oldest, _) => {
                let count = ring.order(oldest).count() as u32;
                let index = ring.order(oldest).nth(n as usize)?;
                Some((index, n + 1 == count))
            }
            Self::Nothing => None,
        }
    }

    /// Whether block `index`, whose first bytes are `first`, holds part of the log (in a
    /// ring: its ring header is there, of the right lap).
    pub(super) fn holds(&self, index: u32, first: &[u8]) -> bool {
        match self {
            Self::Ring(ring, ..) => ring.holds(index, RingHeader::parse(first)),
            Self::Region | Self::Nothing => true,
        }
    }

    /// The ring, if the blocks are a ring's.
    pub(super) fn ring_of(&self) -> Option<Ring> {
        match self {
            Self::Ring(ring, ..) => Some(*ring),
            Self::Region | Self::Nothing => None,
        }
    }

    /// Records begun before a ring's oldest block (aged out).
    pub(super) fn aged_out(&self) -> Option<u32> {
        match self {
            Self::Ring(_, _, records) => Some(*records),
            Self::Region | Self::Nothing => None,
        }
    }

    /// The region offset of byte `offset` of the blocks read in order.
    pub(super) fn region_offset(&self, offset: u64) -> u64 {
        match self {
            Self::Ring(ring, oldest, _) => ring.region_offset(*oldest, offset),
            Self::Region | Self::Nothing => offset,
        }
    }
}

/// The ring in region `config` of `flash`: each block's ring header is read (19 bytes a
/// block, twice at most) to find the newest block and the oldest one the ring holds.
/// (`find_ring_sync` for a blocking flash, `find_ring_async` for an async one: one source.)
#[maybe_async_cfg::maybe(
    idents(ReadFlash, ring_header(fn)),
    sync(),
    async(feature = "embedded-storage-async")
)]
pub(super) async fn find_ring<R: ReadFlash>(
    flash: &mut R,
    config: &FlashConfig,
) -> Result<Order, R::Error> {
    let mut finder = RingFinder::default();
    for index in 0..config.len / BLOCK_SIZE as u32 {
        finder.add(index, ring_header(flash, config, index).await?);
    }
    let Some(ring) = finder.ring() else {
        return Ok(Order::Nothing);
    };
    for index in ring.candidates() {
        let header = ring_header(flash, config, index).await?;
        if let Some(found) = header.filter(|_| ring.holds(index, header)) {
            return Ok(Order::Ring(ring, index, found.records));
        }
    }
    Ok(Order::Nothing)
}

/// The ring header of block `index` of the region, if one is there intact.
#[maybe_async_cfg::maybe(
    idents(ReadFlash, read(fn, sync = "read_outlined")),
    sync(),
    async(feature = "embedded-storage-async")
)]
pub(super) async fn ring_header<R: ReadFlash>(
    flash: &mut R,
    config: &FlashConfig,
    index: u32,
) -> Result<Option<RingHeader>, R::Error> {
    let mut bytes = [0u8; RING_HEADER_SIZE];
    // A header that cannot be read whole (an ECC error: its program was interrupted) reads
    // as unknown bytes: not intact.
    super::piece::read(flash, config, index * BLOCK_SIZE as u32, &mut bytes).await?;
    Ok(RingHeader::parse(&bytes))
}
