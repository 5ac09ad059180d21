//! Layout policy of the small-RAM writer: which bytes the log holds next, piece by piece,
//! computed from the record in the caller's memory. No I/O here ([`engine`](super::engine)
//! puts the pieces on the flash).
//!
//! The rules are LevelDB's, exactly as [`Writer`](crate::Writer) lays a log out, so both flash
//! writers put the same bytes on the flash:
//! - a record that fits in the rest of the block is one `FULL` chunk; otherwise a `FIRST` chunk
//!   fills the block, `MIDDLE` chunks fill further blocks, and a `LAST` chunk ends it;
//! - fewer than a header's bytes left in a block become a zero trailer, laid out when the next
//!   chunk arrives;
//! - padding to a flash word is empty `FIRST` chunks, or empty `FIRST` chunks and a trailer to
//!   the end of the block when the word boundary is not reachable inside it.

use core::ops::Range;

use crate::checksum;
use crate::format::{BLOCK_SIZE, FragmentKind, HEADER_SIZE, RecordType};

/// The next piece of the log: `zeros` trailer bytes (the rest of a block), then a chunk header
/// (if any) and the payload it frames (a range of the record).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Piece {
    /// Zero bytes of a trailer, before the header.
    pub(super) zeros: usize,
    /// The chunk header, `None` for a trailer alone.
    pub(super) header: Option<[u8; HEADER_SIZE]>,
    /// The chunk's payload, as a range of the record.
    pub(super) payload: Range<usize>,
}

/// A legacy chunk header for `payload` of the given kind.
pub(super) fn header(kind: FragmentKind, payload: &[u8]) -> [u8; HEADER_SIZE] {
    let kind = RecordType::for_fragment(kind, false) as u8;
    let crc = checksum::mask(checksum::extend(checksum::crc32c(&[kind]), payload));
    let [c0, c1, c2, c3] = crc.to_le_bytes();
    // A chunk's payload is shorter than a block: the length fits in 16 bits.
    let [l0, l1] = (payload.len() as u16).to_le_bytes();
    [c0, c1, c2, c3, l0, l1, kind]
}

/// Where a record is in its layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct RecordLayout {
    /// Offset in the record of the next fragment.
    next: usize,
    /// Whether the first chunk was laid out.
    started: bool,
}

impl RecordLayout {
    /// The next chunk of `data`, with the log at `offset` in its block; `None` once the record
    /// is laid out.
    pub(super) fn next(&mut self, data: &[u8], offset: usize) -> Option<Piece> {
        if self.started && self.next >= data.len() {
            return None;
        }
        let (zeros, offset) = if BLOCK_SIZE - offset < HEADER_SIZE {
            (BLOCK_SIZE - offset, 0)
        } else {
            (0, offset)
        };
        let available = BLOCK_SIZE - offset - HEADER_SIZE;
        let start = self.next;
        let end = start + (data.len() - start).min(available);
        let kind = match (self.started, end == data.len()) {
            (false, true) => FragmentKind::Full,
            (false, false) => FragmentKind::First,
            (true, false) => FragmentKind::Middle,
            (true, true) => FragmentKind::Last,
        };
        self.started = true;
        self.next = end;
        Some(Piece {
            zeros,
            header: Some(header(kind, data.get(start..end).unwrap_or_default())),
            payload: start..end,
        })
    }
}

/// The next piece of padding that brings the log at `offset` in its block to a multiple of
/// `align` (a power of two); `None` once it is there.
pub(super) fn pad(offset: usize, align: usize) -> Option<Piece> {
    if offset.is_multiple_of(align) {
        return None;
    }
    // Header sizes are odd, so some count of empty chunks reaches every power-of-two boundary.
    let mut count = 1;
    while !(offset + count * HEADER_SIZE).is_multiple_of(align) {
        count += 1;
    }
    let fits = offset + count * HEADER_SIZE <= BLOCK_SIZE;
    Some(if fits || BLOCK_SIZE - offset >= HEADER_SIZE {
        Piece {
            zeros: 0,
            header: Some(header(FragmentKind::First, &[])),
            payload: 0..0,
        }
    } else {
        // Block ends are aligned: a trailer to the end of the block.
        Piece {
            zeros: BLOCK_SIZE - offset,
            header: None,
            payload: 0..0,
        }
    })
}

/// Where a record of `len` bytes added at log position `position` would end.
pub(super) fn end_after(position: u64, len: usize) -> u64 {
    let mut offset = (position % BLOCK_SIZE as u64) as usize;
    let mut position = position;
    let mut left = len;
    loop {
        if BLOCK_SIZE - offset < HEADER_SIZE {
            position += (BLOCK_SIZE - offset) as u64;
            offset = 0;
        }
        let fragment = left.min(BLOCK_SIZE - offset - HEADER_SIZE);
        offset += HEADER_SIZE + fragment;
        position += (HEADER_SIZE + fragment) as u64;
        left -= fragment;
        if left == 0 {
            return position;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SliceWriter, WriteOptions};

    /// Lays `records` out with `pad` after each, as pieces, into a log image.
    fn lay_out(start: usize, records: &[std::vec::Vec<u8>], align: usize) -> std::vec::Vec<u8> {
        let mut log = std::vec![0xAAu8; start];
        let put = |log: &mut std::vec::Vec<u8>, piece: Piece, data: &[u8]| {
            log.extend(core::iter::repeat_n(0, piece.zeros));
            log.extend(piece.header.iter().flatten());
            log.extend_from_slice(&data[piece.payload]);
        };
        for record in records {
            let mut layout = RecordLayout::default();
            while let Some(piece) = layout.next(record, log.len() % BLOCK_SIZE) {
                put(&mut log, piece, record);
            }
            while let Some(piece) = pad(log.len() % BLOCK_SIZE, align) {
                put(&mut log, piece, &[]);
            }
        }
        log
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

        /// The pieces are byte for byte what `SliceWriter` lays out, padding included.
        #[test]
        fn pieces_match_the_writer(
            lengths in proptest::collection::vec(
                proptest::prop_oneof![0usize..40, 32_740usize..32_768, 0usize..70_000], 1..12),
            start in 0usize..(2 * BLOCK_SIZE),
            align_log in 0u32..6,
        ) {
            let align = 1usize << align_log;
            let records: std::vec::Vec<std::vec::Vec<u8>> = lengths
                .iter()
                .enumerate()
                .map(|(i, &n)| (0..n).map(|j| (i * 7 + j * 13) as u8).collect())
                .collect();
            let pieces = lay_out(start, &records, align);
            let mut buffer = std::vec![0xAAu8; pieces.len() + BLOCK_SIZE];
            let mut writer = SliceWriter::with_options(&mut buffer, &WriteOptions::new().start(start as u64));
            for record in &records {
                let before = writer.len() as u64;
                let end = writer.add_record(record).map(|w| w.end);
                proptest::prop_assert_eq!(end, Ok(end_after(before, record.len())));
                proptest::prop_assert!(writer.pad_to(align).is_ok());
            }
            proptest::prop_assert_eq!(&pieces[start..], &writer.as_bytes()[start..]);
        }
    }
}
