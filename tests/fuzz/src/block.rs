//! Target `block`: the block parser (`BlockParser`, `parse_chunk`) on arbitrary blocks.
//!
//! Input: a [`HEADER`]-byte header, then the block (cut at `BLOCK_SIZE`).
//!
//! | byte | meaning |
//! |---|---|
//! | 0 | flags: bit 0 checksums off, 1 recyclable headers, 2 expect the log number, 3–4 erased (`01` 0xFF, `10` 0x00), 5–6 last block (`00` if short, `01` yes, `10` no) |
//! | 1 | the expected log number |
//! | 2–3 | u16 LE: an extra offset to probe `parse_chunk` at (any value, past the end too) |
//!
//! Properties: no panic; the parser yields chunks that tile the block from offset 0, each
//! framed exactly (header of 7 bytes, or 11 for a recyclable type — 5–8, 11, 131 — with
//! recyclable rules; the
//! payload the bytes after it; never past the block), with a checksum that the model's own
//! CRC-32C confirms when verification is on, never a zero header or an erased header; then at
//! most one item that ends the block, at the offset where the chunks stop, spanning the rest of
//! the block, of a kind the position allows (a trailer only in a complete block and with fewer
//! than a header's bytes left, a truncated chunk only in the last block); nothing after it
//! (fused); and `parse_chunk` at each chunk offset returns what the parser returned.
#![allow(dead_code, unreachable_pub)]

use logfmt_core::parts::block::{
    BlockParser, ChunkRules, FlashGap, Parsed, damaged_pack_end, flash_gap, flash_padding,
    parse_chunk,
};
use logfmt_core::{BLOCK_SIZE, parts::ChunkFormat};

use crate::common::le;
use crate::model;

/// Bytes of the input header.
pub const HEADER: usize = 4;

/// The types read with RocksDB's 11-byte recyclable header under recyclable rules: 5–8, and
/// its recyclable metadata types 11 (timestamp sizes) and 131 (predecessor WAL info).
fn recyclable_type(kind: u8) -> bool {
    matches!(kind, 5..=8 | 11 | 131)
}

/// Checks one input.
pub fn check(data: &[u8]) {
    let (header, block) = data.split_at(data.len().min(HEADER));
    let block = &block[..block.len().min(BLOCK_SIZE)];
    let flags = header.first().copied().unwrap_or(0);
    let mut rules = ChunkRules::default();
    rules.verify = flags & 1 == 0;
    let log_number = (flags & 4 != 0).then(|| u32::from(header.get(1).copied().unwrap_or(0)));
    if flags & 2 != 0 {
        rules.format = ChunkFormat::Undecided { log_number };
    }
    rules.erased = match (flags >> 3) & 3 {
        1 => Some(0xFF),
        2 => Some(0x00),
        _ => None,
    };
    let is_last = match (flags >> 5) & 3 {
        1 => true,
        2 => false,
        _ => block.len() < BLOCK_SIZE,
    };
    let probe = usize::from(u16::from_le_bytes(le(header, 2)));
    check_block(block, is_last, &rules, probe);
}

/// Checks the parse of `block`.
pub fn check_block(block: &[u8], is_last: bool, rules: &ChunkRules, probe: usize) {
    // Any offset, inside or past the block: no panic.
    let _ = parse_chunk(block, probe, is_last, rules);
    let _ = parse_chunk(block, block.len(), is_last, rules);

    let mut parser = BlockParser::new(block).rules(*rules).last_block(is_last);
    let mut pos = 0usize;
    let mut ended = false;
    for item in parser.by_ref() {
        assert!(
            !ended,
            "an item after the one that ends the block: {item:?}"
        );
        let direct = parse_chunk(block, pos, is_last, rules);
        // A flash image: erased bytes are padding first (before a chunk at their start is);
        // damage or padding that a well-formed chunk follows ends there.
        let padding = flash_padding(block, pos, is_last, rules)
            .filter(|&to| to > pos)
            .map(FlashGap::Padding);
        let gap = padding.or_else(|| match direct {
            Parsed::Erased { .. }
            | Parsed::BadLength { .. }
            | Parsed::ChecksumMismatch { .. }
            | Parsed::Truncated { .. } => flash_gap(block, pos, is_last, rules, false),
            _ => None,
        });
        if let Some(gap) = gap {
            let (FlashGap::Padding(to) | FlashGap::Torn(to) | FlashGap::Damaged(to)) = gap;
            assert!(rules.erased.is_some(), "a flash gap without flash rules");
            assert!(pos < to && to < block.len(), "{gap:?} at {pos}");
            let (offset, len) = match (gap, item) {
                (FlashGap::Padding(_), Parsed::Padding { offset, len })
                | (FlashGap::Torn(_), Parsed::Torn { offset, len })
                | (
                    FlashGap::Damaged(_),
                    Parsed::ChecksumMismatch { offset, len, .. }
                    | Parsed::BadLength { offset, len, .. },
                ) => (offset, len),
                (gap, item) => panic!("{gap:?} at {pos} but the parser says {item:?}"),
            };
            assert_eq!((offset, len), (pos, to - pos));
            assert!(
                matches!(parse_chunk(block, to, is_last, rules), Parsed::Chunk(_)),
                "a flash gap ends at a well-formed chunk"
            );
            pos = to;
            continue;
        }
        // A pack chunk damaged in place whose declared length is borne out: only it is
        // dropped, and the block goes on after it.
        if let Parsed::ChecksumMismatch {
            offset,
            stored,
            computed,
            ..
        } = direct
            && let Some(end) = damaged_pack_end(block, pos, is_last, rules)
        {
            assert_eq!(
                item,
                Parsed::ChecksumMismatch {
                    offset,
                    len: end - offset,
                    stored,
                    computed,
                },
                "a damaged pack chunk at {pos}"
            );
            assert!(pos < end && end <= block.len(), "{end} at {pos}");
            pos = end;
            continue;
        }
        assert_eq!(
            direct, item,
            "parse_chunk disagrees with the parser at {pos}"
        );
        let rest = block.len() - pos;
        match item {
            Parsed::Padding { .. } | Parsed::Torn { .. } => {
                panic!("a flash gap where parse_chunk finds {item:?} at {pos}")
            }
            Parsed::Chunk(chunk) => {
                check_chunk(block, pos, rules, &chunk);
                pos = chunk.end();
            }
            Parsed::Trailer { offset, len } => {
                ended = true;
                assert_eq!((offset, len), (pos, rest));
                assert!(!is_last, "a trailer in the last block");
                // Read as Pebble's, zeros up to a WAL-sync header's 19 bytes are padding too
                // (a zero header with under 11 bytes left whatever follows it).
                let pebble_padding = rules.dialect == logfmt_core::parts::Dialect::Pebble
                    && len < 19
                    && block[pos..pos + 7] == [0; 7];
                assert!(
                    len < 7
                        || (rules.format.reads_recyclable_headers() && len < 11)
                        || pebble_padding,
                    "trailer of {len} bytes"
                );
            }
            Parsed::BadTrailer { offset, len } => {
                ended = true;
                assert_eq!((offset, len), (pos, rest));
                assert!(!is_last, "a bad trailer in the last block is a torn write");
                assert_eq!(rules.dialect, logfmt_core::parts::Dialect::Pebble);
                assert!((7..19).contains(&len), "bad trailer of {len} bytes");
            }
            Parsed::Truncated { offset, len } => {
                ended = true;
                assert_eq!((offset, len), (pos, rest));
                assert!(is_last, "a truncated chunk in a complete block");
                assert!(len > 0);
            }
            Parsed::ZeroHeader { offset, len } => {
                ended = true;
                assert_eq!((offset, len), (pos, rest));
                assert_eq!(block[pos + 4..pos + 7], [0, 0, 0], "zero length and type");
            }
            Parsed::Erased { offset, len } => {
                ended = true;
                assert_eq!((offset, len), (pos, rest));
                let erased = rules.erased.expect("Erased without an erased value");
                assert!(block[pos..pos + 7].iter().all(|&b| b == erased));
            }
            Parsed::OldRecord {
                offset,
                len,
                log_number,
            } => {
                ended = true;
                assert_eq!((offset, len), (pos, rest));
                assert!(rules.format.reads_recyclable_headers() && recyclable_type(block[pos + 6]));
                assert!(rules.format.log_number().is_some_and(|n| n != log_number));
                assert_eq!(
                    log_number,
                    u32::from_le_bytes(block[pos + 7..pos + 11].try_into().expect("4 bytes"))
                );
            }
            Parsed::BadLength {
                offset,
                len,
                declared,
            } => {
                ended = true;
                assert_eq!((offset, len), (pos, rest));
                assert!(!is_last, "a bad length in the last block is a torn write");
                assert_eq!(
                    declared,
                    u16::from_le_bytes([block[pos + 4], block[pos + 5]])
                );
            }
            Parsed::ChecksumMismatch {
                offset,
                len,
                stored,
                computed,
            } => {
                ended = true;
                assert_eq!((offset, len), (pos, rest));
                assert!(rules.verify);
                assert_ne!(stored, computed);
                assert_eq!(
                    stored,
                    u32::from_le_bytes(block[pos..pos + 4].try_into().expect("4"))
                );
            }
        }
    }
    assert!(
        ended || pos == block.len(),
        "the parser stopped at {pos} of {}",
        block.len()
    );
    assert_eq!(parser.next(), None, "fused");
    assert_eq!(parser.next(), None, "fused");
}

fn check_chunk(
    block: &[u8],
    pos: usize,
    rules: &ChunkRules,
    chunk: &logfmt_core::parts::block::Chunk<'_>,
) {
    assert_eq!(chunk.offset, pos);
    let kind = block[pos + 6];
    assert_eq!(chunk.record_type, kind);
    let recyclable = rules.format.reads_recyclable_headers() && recyclable_type(kind);
    let header_len = if recyclable { 11 } else { 7 };
    assert_eq!(chunk.header_len, header_len);
    let declared = usize::from(u16::from_le_bytes([block[pos + 4], block[pos + 5]]));
    assert_eq!(chunk.payload.len(), declared);
    let start = pos + header_len;
    assert_eq!(chunk.payload, &block[start..start + declared]);
    assert!(chunk.end() <= block.len());
    assert!(
        !(kind == 0 && declared == 0),
        "a zero header taken for a chunk"
    );
    if let Some(erased) = rules.erased {
        assert!(
            !block[pos..pos + 7].iter().all(|&b| b == erased),
            "an erased header taken for a chunk"
        );
    }
    let stored = u32::from_le_bytes(block[pos..pos + 4].try_into().expect("4 bytes"));
    assert_eq!(chunk.stored_checksum, stored);
    assert_eq!(chunk.checksum_verified, rules.verify);
    if recyclable {
        let number = u32::from_le_bytes(block[pos + 7..pos + 11].try_into().expect("4 bytes"));
        assert_eq!(chunk.log_number, Some(number));
        if let Some(expected) = rules.format.log_number() {
            assert_eq!(number, expected, "a chunk of another log number");
        }
    } else {
        assert_eq!(chunk.log_number, None);
    }
    if rules.verify {
        // The model's own CRC-32C over the type byte, the log number (recyclable) and the payload.
        let covered = &block[pos + 6..chunk.end()];
        assert_eq!(
            model::mask(model::crc32c(covered)),
            stored,
            "a chunk with a wrong checksum"
        );
    }
}
