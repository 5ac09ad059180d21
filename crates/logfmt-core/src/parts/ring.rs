//! Ring logs: a flash log that, when its region is full, erases its oldest erase units and
//! goes on at the region's start — the block header that makes this safe, and the order in
//! which a ring's blocks are read.
//!
//! # On the flash
//!
//! A ring region is `N` blocks of 32 KiB, taken in *groups* of `G` blocks: one erase unit
//! when the flash's erase unit is 32 KiB or more, else one block. The log is written block
//! after block, as a flash log is (LevelDB chunks, word-exact padding, the resume marker);
//! after block `N - 1` it goes on at block 0, one *lap* later. A record may run across the
//! wrap like across any block boundary.
//!
//! **Every block begins with a ring header**, a chunk of type [`RING_TYPE`] (`0xB0`, 7-byte
//! legacy header, so 19 bytes in all) that is written before anything else in the block:
//!
//! ```text
//! 0..4    masked CRC-32C of the type byte and the 12 payload bytes
//! 4..6    12 (payload length)        6   0xB0 (RING_TYPE)
//! 7..11   lap, u32 LE: the lap the block was written in (wrapping: lap 0 follows 0xFFFF_FFFF)
//! 11..15  records, u32 LE: records begun in the log before this block (wrapping)
//! 15..17  blocks, u16 LE: N, the blocks in the ring
//! 17      group: G, blocks per erase group
//! 18      flags: bits 0..3 log2(WRITE_SIZE); bit 4 set if erased flash reads 0x00
//! 19..    the log's chunks go on (a record begun in the block before continues here)
//! ```
//!
//! **Erase ahead.** When the writer programs the word that completes the first ring header it
//! writes in a group, it then erases the *next* group (the oldest data): so the group after
//! the newest block is always the one being erased, or erased, or about to be — never read.
//! A power cut in that erase leaves arbitrary bits only in the group that readers skip.
//!
//! **Reading order.** The *head* is the block with the newest lap (serial-number arithmetic,
//! so the lap counter may wrap), the last such in the region. The group after the head's is
//! skipped; reading starts at the first block after it whose ring header is intact and of
//! the lap that block must have (the head's lap up to the head, one less after it), and goes
//! block by block to the head. A block on the way whose header is missing or of another lap
//! holds nothing of this log and reads as erased. The records at the start of the oldest
//! block whose beginning was erased are dropped silently, like LevelDB's initial-offset
//! resynchronisation: aged out, not damage.

use core::fmt;

use crate::checksum;
use crate::format::{BLOCK_SIZE, HEADER_SIZE, RING_TYPE};

/// Bytes of a ring header's payload.
pub const RING_PAYLOAD: usize = 12;
/// Bytes of a ring header: a 7-byte chunk header and its payload.
pub const RING_HEADER_SIZE: usize = HEADER_SIZE + RING_PAYLOAD;

/// The header at the start of every block of a ring log.
///
/// ```
/// use logfmt_core::parts::ring::RingHeader;
///
/// let header = RingHeader { lap: 7, records: 1_000, blocks: 4, group: 1, write_size: 8, erased: 0xFF };
/// let bytes = header.encode();
/// assert_eq!(bytes.len(), 19);
/// assert_eq!(RingHeader::parse(&bytes), Some(header));
/// let mut damaged = bytes;
/// damaged[8] ^= 1;
/// assert_eq!(RingHeader::parse(&damaged), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RingHeader {
    /// The lap the block was written in.
    pub lap: u32,
    /// Records begun in the log before this block (wrapping).
    pub records: u32,
    /// Blocks in the ring.
    pub blocks: u16,
    /// Blocks per erase group.
    pub group: u8,
    /// The flash's `WRITE_SIZE` (a power of two).
    pub write_size: u8,
    /// The value erased flash reads as (`0xFF` or `0x00`).
    pub erased: u8,
}

impl RingHeader {
    /// The header's 19 bytes, checksum included.
    #[must_use]
    pub fn encode(&self) -> [u8; RING_HEADER_SIZE] {
        let log2 = self.write_size.max(1).trailing_zeros() as u8 & 0x0F;
        let flags = log2 | if self.erased == 0 { 0x10 } else { 0 };
        let [a0, a1, a2, a3] = self.lap.to_le_bytes();
        let [r0, r1, r2, r3] = self.records.to_le_bytes();
        let [b0, b1] = self.blocks.to_le_bytes();
        let payload = [a0, a1, a2, a3, r0, r1, r2, r3, b0, b1, self.group, flags];
        let crc = checksum::mask(checksum::extend(checksum::crc32c(&[RING_TYPE]), &payload));
        let [c0, c1, c2, c3] = crc.to_le_bytes();
        #[rustfmt::skip]
        let bytes = [
            c0, c1, c2, c3, RING_PAYLOAD as u8, 0, RING_TYPE,
            a0, a1, a2, a3, r0, r1, r2, r3, b0, b1, self.group, flags,
        ];
        bytes
    }

    /// The ring header at the start of `bytes` (the first bytes of a block), if one is there
    /// intact: type, length and checksum right, geometry sane.
    #[must_use]
    pub fn parse(bytes: &[u8]) -> Option<Self> {
        let bytes: &[u8; RING_HEADER_SIZE] = bytes.get(..RING_HEADER_SIZE)?.try_into().ok()?;
        let [c0, c1, c2, c3, l0, l1, kind, p @ ..] = *bytes;
        if kind != RING_TYPE || u16::from_le_bytes([l0, l1]) != RING_PAYLOAD as u16 {
            return None;
        }
        let crc = checksum::mask(checksum::extend(checksum::crc32c(&[RING_TYPE]), &p));
        if crc != u32::from_le_bytes([c0, c1, c2, c3]) {
            return None;
        }
        let [a0, a1, a2, a3, r0, r1, r2, r3, b0, b1, group, flags] = p;
        let blocks = u16::from_le_bytes([b0, b1]);
        let log2 = flags & 0x0F;
        if blocks == 0 || group == 0 || log2 > 5 || flags & 0xE0 != 0 {
            return None;
        }
        Some(Self {
            lap: u32::from_le_bytes([a0, a1, a2, a3]),
            records: u32::from_le_bytes([r0, r1, r2, r3]),
            blocks,
            group,
            write_size: 1 << log2,
            erased: if flags & 0x10 != 0 { 0x00 } else { 0xFF },
        })
    }
}

/// Whether lap `a` is newer than lap `b` (serial-number arithmetic: the counter may wrap).
///
/// ```
/// use logfmt_core::parts::ring::newer;
/// assert!(newer(5, 4));
/// assert!(newer(0, u32::MAX)); // the lap after 0xFFFF_FFFF
/// assert!(!newer(4, 4));
/// ```
#[must_use]
pub const fn newer(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// Finds a ring from its blocks' headers given one at a time, as a reader reads them: what
/// [`Ring::find`] does with all of them at once.
///
/// ```
/// use logfmt_core::parts::ring::{RingFinder, RingHeader};
///
/// let header = |lap| Some(RingHeader { lap, records: 0, blocks: 3, group: 1, write_size: 8, erased: 0xFF });
/// let mut finder = RingFinder::default();
/// for (index, h) in [header(4), None, header(3)].into_iter().enumerate() {
///     finder.add(index as u32, h);
/// }
/// let ring = finder.ring().unwrap();
/// assert_eq!((ring.head(), ring.lap(), ring.blocks()), (0, 4, 3));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct RingFinder {
    /// The newest block so far, and its header.
    best: Option<(u32, RingHeader)>,
}

impl RingFinder {
    /// Takes in block `index`'s header (`None`: no intact ring header there).
    pub fn add(&mut self, index: u32, header: Option<RingHeader>) {
        let Some(header) = header else { return };
        let better = match self.best {
            None => true,
            Some((at, best)) => {
                newer(header.lap, best.lap) || (header.lap == best.lap && index > at)
            }
        };
        if better {
            self.best = Some((index, header));
        }
    }

    /// The ring: its head is the last block of the newest lap, its geometry that block's
    /// header's. `None` if no block had a ring header.
    #[must_use]
    pub fn ring(&self) -> Option<Ring> {
        let (head, header) = self.best?;
        let blocks = u32::from(header.blocks).max(head.saturating_add(1));
        Some(Ring {
            blocks,
            group: u32::from(header.group).clamp(1, blocks),
            head,
            lap: header.lap,
            records: header.records,
        })
    }
}

/// A ring's geometry and newest block, found from its blocks' headers: the order its blocks
/// are read in.
///
/// ```
/// use logfmt_core::parts::ring::{Ring, RingHeader};
///
/// // Six blocks, one per group; the writer is in block 1 of lap 9, block 2 is the one erased
/// // ahead, blocks 3..6 hold lap 8.
/// let header = |lap| Some(RingHeader { lap, records: 0, blocks: 6, group: 1, write_size: 8, erased: 0xFF });
/// let laps = [header(9), header(9), None, header(8), header(8), header(8)];
/// let ring = Ring::find(laps.iter().copied().enumerate().map(|(i, h)| (i as u32, h))).unwrap();
/// assert_eq!((ring.head(), ring.lap()), (1, 9));
/// let oldest = ring.candidates().find(|&b| ring.holds(b, laps[b as usize])).unwrap();
/// assert_eq!(oldest, 3);
/// assert_eq!(ring.order(oldest).collect::<Vec<_>>(), [3, 4, 5, 0, 1]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Ring {
    blocks: u32,
    group: u32,
    head: u32,
    lap: u32,
    records: u32,
}

impl Ring {
    /// The ring whose blocks have these headers (block index, intact header or `None`), in
    /// any order: the head is the last block of the newest lap, the geometry its header's.
    /// `None` if no block has a ring header. (The same as giving them one at a time to a
    /// [`RingFinder`].)
    pub fn find(headers: impl IntoIterator<Item = (u32, Option<RingHeader>)>) -> Option<Self> {
        let mut finder = RingFinder::default();
        for (index, header) in headers {
            finder.add(index, header);
        }
        finder.ring()
    }

    /// The newest block: where the log ends.
    #[must_use]
    pub const fn head(&self) -> u32 {
        self.head
    }

    /// The newest block's lap.
    #[must_use]
    pub const fn lap(&self) -> u32 {
        self.lap
    }

    /// Blocks in the ring.
    #[must_use]
    pub const fn blocks(&self) -> u32 {
        self.blocks
    }

    /// Blocks per erase group.
    #[must_use]
    pub const fn group(&self) -> u32 {
        self.group
    }

    /// Records begun in the log before the head block.
    #[must_use]
    pub const fn records_before_head(&self) -> u32 {
        self.records
    }

    /// The lap block `index` holds if it is part of the log: the head's up to the head, one
    /// less after it.
    #[must_use]
    pub const fn expected_lap(&self, index: u32) -> u32 {
        if index <= self.head {
            self.lap
        } else {
            self.lap.wrapping_sub(1)
        }
    }

    /// Whether block `index`, with this header, holds part of the log.
    #[must_use]
    pub fn holds(&self, index: u32, header: Option<RingHeader>) -> bool {
        header.is_some_and(|h| h.lap == self.expected_lap(index))
    }

    /// The blocks that may be the oldest, in ring order: from the group after the one erased
    /// ahead of the head's, to the head. The oldest is the first that [holds](Self::holds)
    /// part of the log.
    pub fn candidates(&self) -> impl Iterator<Item = u32> + use<> {
        let groups = self.blocks.div_ceil(self.group);
        let head_group = self.head / self.group;
        let first = if groups > 2 {
            ((head_group + 2) % groups) * self.group
        } else {
            // Two groups: the one erased ahead is the other; the head's own group holds it all.
            head_group * self.group
        };
        self.order(first)
    }

    /// The blocks from `oldest` to the head, in ring order: the order to read them in.
    pub fn order(&self, oldest: u32) -> impl Iterator<Item = u32> + use<> {
        let (blocks, head) = (self.blocks, self.head);
        let oldest = oldest % blocks;
        let count = (head + blocks - oldest) % blocks + 1;
        (0..count).map(move |i| (oldest + i) % blocks)
    }

    /// Region offset of byte `offset` of the ring read in order from block `oldest` (the
    /// offsets a reader of the ordered blocks reports), as a region offset.
    #[must_use]
    pub fn region_offset(&self, oldest: u32, offset: u64) -> u64 {
        let block = BLOCK_SIZE as u64;
        // Block counts fit 32 bits (a ring has at most 65 535 blocks): no 64-bit division.
        let blocks = self.blocks.max(1);
        let n = u32::try_from(offset / block).unwrap_or(u32::MAX) % blocks;
        let index = (oldest % blocks + n) % blocks;
        u64::from(index) * block + offset % block
    }
}

impl fmt::Display for Ring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ring of {} blocks ({} per erase group), newest block {} in lap {}",
            self.blocks, self.group, self.head, self.lap
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn header(lap: u32, blocks: u16, group: u8) -> Option<RingHeader> {
        Some(RingHeader {
            lap,
            records: lap.wrapping_mul(3),
            blocks,
            group,
            write_size: 4,
            erased: 0xFF,
        })
    }

    fn oldest_and_order(headers: &[Option<RingHeader>]) -> Option<(u32, Vec<u32>)> {
        let ring = Ring::find(
            headers
                .iter()
                .copied()
                .enumerate()
                .map(|(i, h)| (i as u32, h)),
        )?;
        let oldest = ring
            .candidates()
            .find(|&b| ring.holds(b, headers[b as usize]))?;
        Some((oldest, ring.order(oldest).collect()))
    }

    #[test]
    fn the_first_lap_reads_from_block_zero() {
        let headers = [header(1, 4, 1), header(1, 4, 1), None, None];
        assert_eq!(oldest_and_order(&headers), Some((0, std::vec![0, 1])));
    }

    #[test]
    fn the_lap_counter_wraps() {
        let h = |lap| header(lap, 5, 1);
        let headers = [h(0), h(0), None, h(u32::MAX), h(u32::MAX)];
        assert_eq!(oldest_and_order(&headers), Some((3, std::vec![3, 4, 0, 1])));
    }

    #[test]
    fn the_group_ahead_is_skipped_even_when_it_holds_an_old_lap() {
        // Groups of two blocks; head in group 1 (block 3); group 2 (blocks 4, 5) was being
        // erased and still holds lap 4; the oldest is group 3.
        let h = |lap| header(lap, 8, 2);
        let headers = [h(5), h(5), h(5), h(5), h(4), h(4), h(4), h(4)];
        assert_eq!(
            oldest_and_order(&headers),
            Some((6, std::vec![6, 7, 0, 1, 2, 3]))
        );
    }

    #[test]
    fn a_stale_block_is_not_the_oldest() {
        // Block 3 holds lap 3 (left from before): the oldest of lap 4 is block 4.
        let h = |lap| header(lap, 6, 1);
        let headers = [h(5), h(5), None, h(3), h(4), h(4)];
        assert_eq!(oldest_and_order(&headers), Some((4, std::vec![4, 5, 0, 1])));
    }

    #[test]
    fn region_offsets_follow_the_order() {
        let h = |lap| header(lap, 4, 1);
        let ring = Ring::find([(0, h(2)), (1, None), (2, h(1)), (3, h(1))]).unwrap();
        let block = BLOCK_SIZE as u64;
        assert_eq!(ring.region_offset(2, 5), 2 * block + 5);
        assert_eq!(ring.region_offset(2, 2 * block + 9), 9);
    }

    #[test]
    fn no_header_no_ring() {
        assert_eq!(Ring::find([(0, None), (1, None)]), None);
    }

    proptest::proptest! {
        #[test]
        fn headers_round_trip(lap: u32, records: u32, blocks in 1u16.., group in 1u8..,
                              log2 in 0u8..6, zero: bool) {
            let header = RingHeader { lap, records, blocks, group, write_size: 1 << log2,
                                      erased: if zero { 0 } else { 0xFF } };
            proptest::prop_assert_eq!(RingHeader::parse(&header.encode()), Some(header));
        }

        #[test]
        fn parsing_never_panics(bytes: Vec<u8>) {
            let _ = RingHeader::parse(&bytes);
        }
    }
}
