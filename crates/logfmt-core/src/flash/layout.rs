//! Layout policy of the flash log: which bytes the log holds next, piece by piece, computed
//! from the record in the caller's memory. No I/O here ([`engine`](super::engine) puts the
//! pieces on the flash).
//!
//! The chunks are LevelDB's, exactly as [`Writer`](crate::Writer) cuts a record:
//! - a record that fits in the rest of the block is one `FULL` chunk; otherwise a `FIRST` chunk
//!   fills the block, `MIDDLE` chunks fill further blocks, and a `LAST` chunk ends it;
//! - a chunk never starts where fewer than a header's bytes are left in the block: those bytes
//!   are the block's trailer, which the flash log leaves **erased** (LevelDB writes zeros; every
//!   reader skips a trailer whatever it holds).
//!
//! Two things are the flash log's own:
//! - **word-exact padding**: a flush leaves the rest of the last, partly written flash word
//!   erased (a piece of erased bytes, like a trailer), and the next record starts at the next
//!   word boundary; a reader skips erased bytes up to a word boundary where a chunk starts;
//! - the **resume marker** ([`RESUME_TYPE`]): an empty chunk a reopened writer puts after a
//!   chunk torn by a power cut, at a word boundary, telling readers that the bytes between
//!   were cut off by the power failure, not damaged later.

use core::ops::Range;

use crate::checksum;
use crate::format::{BLOCK_SIZE, FragmentKind, HEADER_SIZE, RESUME_TYPE, RecordType};

/// The next chunk of a record: `trailer` erased bytes first (the rest of a block with no
/// room for a header), then the chunk header and the payload it frames (a range of the record).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Piece {
    /// Erased bytes of a block trailer, before the header.
    pub(super) trailer: usize,
    /// The chunk header.
    pub(super) header: [u8; HEADER_SIZE],
    /// The chunk's payload, as a range of the record.
    pub(super) payload: Range<usize>,
}

/// A legacy chunk header of type `kind` for `payload`.
pub(super) fn header_of(kind: u8, payload: &[u8]) -> [u8; HEADER_SIZE] {
    let crc = checksum::mask(checksum::extend(checksum::crc32c(&[kind]), payload));
    let [c0, c1, c2, c3] = crc.to_le_bytes();
    // A chunk's payload is shorter than a block: the length fits in 16 bits.
    let [l0, l1] = (payload.len() as u16).to_le_bytes();
    [c0, c1, c2, c3, l0, l1, kind]
}

/// A legacy chunk header for `payload` of the given kind (of a pack's, if `pack`).
pub(super) fn header(kind: FragmentKind, pack: bool, payload: &[u8]) -> [u8; HEADER_SIZE] {
    let record_type = if pack {
        RecordType::for_pack(kind)
    } else {
        RecordType::for_fragment(kind, false)
    };
    header_of(record_type as u8, payload)
}

/// The resume marker: a whole chunk, header only (masked CRC-32C of its type byte, length 0,
/// type), worked out at compile time.
pub(super) const MARKER: [u8; HEADER_SIZE] = {
    // CRC-32C of the type byte, bit by bit.
    let mut crc = !(RESUME_TYPE as u32);
    let mut bit = 0;
    while bit < 8 {
        crc = (crc >> 1) ^ if crc & 1 == 1 { 0x82f6_3b78 } else { 0 };
        bit += 1;
    }
    let [c0, c1, c2, c3] = checksum::mask(!crc).to_le_bytes();
    [c0, c1, c2, c3, 0, 0, RESUME_TYPE]
};

/// Where a record is in its layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct RecordLayout {
    /// Offset in the record of the next fragment.
    next: usize,
    /// Whether the first chunk was laid out.
    started: bool,
    /// The record is a [pack](crate::pack): its chunks have the pack types.
    pack: bool,
}

impl RecordLayout {
    /// The layout of a record (a pack, if `pack`) from its start.
    pub(super) fn new(pack: bool) -> Self {
        Self {
            pack,
            ..Self::default()
        }
    }

    /// The next chunk of `data`, with the log at `offset` in its block; `None` once the record
    /// is laid out.
    pub(super) fn next(&mut self, data: &[u8], offset: usize) -> Option<Piece> {
        if self.started && self.next >= data.len() {
            return None;
        }
        let (trailer, offset) = if BLOCK_SIZE - offset < HEADER_SIZE {
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
            trailer,
            header: header(kind, self.pack, data.get(start..end).unwrap_or_default()),
            payload: start..end,
        })
    }
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
    use crate::writer::{SliceWriter, WriteOptions};

    /// Lays `records` out as pieces into a log image, trailers as zeros (as `SliceWriter` has
    /// them).
    fn lay_out(start: usize, records: &[std::vec::Vec<u8>]) -> std::vec::Vec<u8> {
        let mut log = std::vec![0xAAu8; start];
        for record in records {
            let mut layout = RecordLayout::default();
            while let Some(piece) = layout.next(record, log.len() % BLOCK_SIZE) {
                log.extend(core::iter::repeat_n(0, piece.trailer));
                log.extend(piece.header);
                log.extend_from_slice(&record[piece.payload]);
            }
        }
        log
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

        /// The pieces are byte for byte the chunks `SliceWriter` lays out (LevelDB's layout),
        /// and `end_after` predicts where each record ends.
        #[test]
        fn pieces_match_the_writer(
            lengths in proptest::collection::vec(
                proptest::prop_oneof![0usize..40, 32_740usize..32_768, 0usize..70_000], 1..12),
            start in 0usize..(2 * BLOCK_SIZE),
        ) {
            let records: std::vec::Vec<std::vec::Vec<u8>> = lengths
                .iter()
                .enumerate()
                .map(|(i, &n)| (0..n).map(|j| (i * 7 + j * 13) as u8).collect())
                .collect();
            let pieces = lay_out(start, &records);
            let mut buffer = std::vec![0xAAu8; pieces.len() + BLOCK_SIZE];
            let mut writer = SliceWriter::with_options(&mut buffer, &WriteOptions::new().start(start as u64));
            for record in &records {
                let before = writer.len() as u64;
                let end = writer.add_record(record).map(|w| w.end);
                proptest::prop_assert_eq!(end, Ok(end_after(before, record.len())));
            }
            proptest::prop_assert_eq!(&pieces[start..], &writer.as_bytes()[start..]);
        }
    }

    #[test]
    fn the_marker_is_an_empty_ignorable_chunk() {
        let marker = MARKER;
        assert_eq!(marker, header_of(RESUME_TYPE, &[]));
        assert_eq!(&marker[4..], &[0, 0, RESUME_TYPE]);
        assert_ne!(RESUME_TYPE & 0x80, 0, "ignorable: bit 7 set");
        let crc = checksum::mask(checksum::crc32c(&[RESUME_TYPE]));
        assert_eq!(marker[..4], crc.to_le_bytes());
    }
}
