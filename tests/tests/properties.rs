//! Properties of the writer and the readers, checked against the independent model
//! (`logfmt_tests::model`):
//!
//! - (a) round trip of arbitrary record lists, lengths weighted toward block edges;
//! - (b) the writer's bytes equal the model's, for any list and any resume offset;
//! - (c) every prefix of a valid log reads as a prefix of its records with no report
//!   (exhaustively for LevelDB's measured log, sampled for generated ones);
//! - (d) the streaming `FragmentReader` and the `Reader` agree, on clean and damaged logs;
//! - (e) byte soup and random damage never panic, and damaged logs only ever yield records
//!   that were written, in order, at their own offsets (never a join);
//! - (f) an `IoSource` fed by a reader returning 1..=k bytes per call equals `SliceSource`;
//! - (g) a too-small assembly buffer yields `Oversized` for exactly the fragmented records
//!   longer than it, and everything else unchanged;
//! - (h) the CRC paths agree with the `crc32c` crate;
//! - initial offsets: reading from any offset returns exactly the records starting at or
//!   after it; from a record's own offset, with no report.

use std::ops::Range;

use logfmt_core::{BLOCK_SIZE, IoSource, ReadOptions, SliceSource, parts::Oversized};
use logfmt_tests::model::{self, Piece};
use logfmt_tests::{
    Dribble, Seen, content, read_fragments, read_log, read_source, read_with, write_from,
};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::FileFailurePersistence;

const BLOCK: u64 = BLOCK_SIZE as u64;

/// `cases` cases; failures are saved in `tests/proptest-regressions/properties.txt` (test
/// binaries run in the package directory; proptest's default would put them beside `tests/`,
/// at the workspace root, because this crate's `lib.rs` sits in `tests/`).
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/properties.txt",
        ))),
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Generators

/// Record lengths, weighted toward the edges of a block.
fn record_len() -> impl Strategy<Value = usize> {
    prop_oneof![
        3 => Just(0usize),
        2 => Just(1usize),
        5 => 2usize..100,
        4 => 32_754usize..=32_768,
        3 => 32_740usize..32_800,
        2 => 100usize..32_740,
        1 => 32_800usize..=100_000,
    ]
}

/// How the next record's length is chosen: directly, or so that exactly `n` bytes (0..=10)
/// are left in the block after it (7 left: the empty-FIRST rule; fewer: a trailer).
#[derive(Debug, Clone)]
enum Spec {
    Len(usize),
    Leave(u64),
}

fn spec() -> impl Strategy<Value = (Spec, u64)> {
    (
        prop_oneof![4 => record_len().prop_map(Spec::Len), 1 => (0u64..=10).prop_map(Spec::Leave)],
        any::<u64>(),
    )
}

/// Where a record of `len` bytes ends when written at `pos` (the model's rules).
fn end_after(pos: u64, len: usize) -> u64 {
    model::write_spans(&[vec![0; len]], pos).1[0].end
}

/// Turns specs into records for a log continued at `start`.
fn resolve(specs: &[(Spec, u64)], start: u64) -> Vec<Vec<u8>> {
    let mut pos = start;
    let mut records = Vec::with_capacity(specs.len());
    for (spec, seed) in specs {
        let len = match *spec {
            Spec::Len(len) => len,
            Spec::Leave(n) => {
                let mut at = pos;
                if BLOCK - at % BLOCK < 7 {
                    at += BLOCK - at % BLOCK;
                }
                let room = BLOCK - at % BLOCK;
                if room >= 7 + n {
                    (room - 7 - n) as usize
                } else {
                    // FIRST fills this block, LAST leaves n in the next one.
                    (room - 7 + (BLOCK - 7 - n)) as usize
                }
            }
        };
        let end = end_after(pos, len);
        if let Spec::Leave(n) = spec {
            assert_eq!(BLOCK - end % BLOCK, if *n == 0 { BLOCK } else { *n });
        }
        pos = end;
        records.push(content(len, *seed));
    }
    records
}

fn records(max: usize) -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(spec(), 0..max).prop_map(|specs| resolve(&specs, 0))
}

/// Resume offsets: small, at block edges, anywhere.
fn start_offset() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        0u64..64,
        (0u64..4, 32_750u64..=32_768).prop_map(|(b, o)| b * BLOCK + o),
        0u64..(1 << 40),
    ]
}

/// Damage applied to a valid log.
#[derive(Debug, Clone)]
enum Damage {
    Flip(Index, u8),
    Set(Index, u8),
    Zero(Index, usize),
    Garbage(Index, Vec<u8>),
    Truncate(Index),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        4 => (any::<Index>(), 0u8..8).prop_map(|(i, b)| Damage::Flip(i, b)),
        2 => (any::<Index>(), any::<u8>()).prop_map(|(i, v)| Damage::Set(i, v)),
        3 => (any::<Index>(), 1usize..64).prop_map(|(i, n)| Damage::Zero(i, n)),
        1 => (any::<Index>(), prop::collection::vec(any::<u8>(), 1..32)).prop_map(|(i, g)| Damage::Garbage(i, g)),
        1 => any::<Index>().prop_map(Damage::Truncate),
    ]
}

fn apply(log: &mut Vec<u8>, damage: &Damage) {
    if log.is_empty() {
        return;
    }
    let n = log.len();
    match damage {
        Damage::Flip(i, bit) => log[i.index(n)] ^= 1 << bit,
        Damage::Set(i, v) => log[i.index(n)] = *v,
        Damage::Zero(i, n) => {
            let at = i.index(log.len());
            let end = (at + n).min(log.len());
            log[at..end].fill(0);
        }
        Damage::Garbage(i, bytes) => {
            let at = i.index(log.len());
            let end = (at + bytes.len()).min(log.len());
            log[at..end].copy_from_slice(&bytes[..end - at]);
        }
        Damage::Truncate(i) => log.truncate(i.index(log.len() + 1)),
    }
}

/// Byte soup built from pieces that exercise the reader's state machine: chunks of every type
/// (valid or wrong checksums, lengths that may cross blocks), zero runs and garbage.
#[derive(Debug, Clone)]
enum SoupPiece {
    Chunk {
        kind: u8,
        len: usize,
        good_crc: bool,
    },
    Zeros(usize),
    Garbage(Vec<u8>),
}

fn soup() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        16 => (prop_oneof![6 => 1u8..=4, 1 => 0u8..=10, 1 => any::<u8>()],
              prop_oneof![3 => 0usize..64, 1 => 0usize..40_000], prop::bool::weighted(0.9))
            .prop_map(|(kind, len, good_crc)| SoupPiece::Chunk { kind, len, good_crc }),
        1 => prop_oneof![0usize..16, 0usize..40_000].prop_map(SoupPiece::Zeros),
        1 => prop::collection::vec(any::<u8>(), 0..64).prop_map(SoupPiece::Garbage),
    ];
    prop::collection::vec(piece, 0..60).prop_map(|pieces| {
        let mut out = Vec::new();
        for (i, piece) in pieces.into_iter().enumerate() {
            match piece {
                SoupPiece::Chunk {
                    kind,
                    len,
                    good_crc,
                } => {
                    let payload = content(len.min(u16::MAX as usize), i as u64);
                    let mut chunk = model::chunk(1, &payload);
                    chunk[6] = kind;
                    logfmt_tests::damage::fix_checksum(&mut chunk, 0, payload.len());
                    if !good_crc {
                        chunk[0] ^= 0x5a;
                    }
                    out.extend(chunk);
                }
                SoupPiece::Zeros(n) => out.resize(out.len() + n, 0),
                SoupPiece::Garbage(bytes) => out.extend(bytes),
            }
        }
        out
    })
}

// ---------------------------------------------------------------------------------------------
// Helpers

fn expected_items(spans: &[Range<u64>], records: &[Vec<u8>]) -> Vec<Seen> {
    spans
        .iter()
        .zip(records)
        .map(|(s, r)| Seen::Record {
            offset: s.start,
            end: s.end,
            data: r.clone(),
        })
        .collect()
}

/// Checks what a reader returned from a damaged copy of a log of `written` records: every
/// record is one of them, at its own offset and end, in written order.
fn assert_only_written_records(items: &[Seen], written: &[Seen], log_len: usize) {
    let mut candidates = written.iter();
    for item in items {
        match item {
            Seen::Record { offset, end, data } => {
                assert!(
                    candidates.any(|w| w == item),
                    "returned a record that was not written (or out of order, or joined): \
                     offset {offset}, end {end}, len {}",
                    data.len()
                );
            }
            Seen::Drop(c) => assert!(c.bytes <= log_len as u64, "{c:?}"),
            Seen::Oversized(o) => panic!("unexpected {o:?}"),
        }
    }
}

/// Invariants of whatever a reader returns from any input.
fn assert_sane(items: &[Seen], log_len: usize, initial_offset: u64) {
    let mut last_offset = None;
    let mut accounted = 0u64;
    for item in items {
        match item {
            Seen::Record { offset, end, data } => {
                assert!(
                    *offset >= initial_offset,
                    "record before the initial offset"
                );
                assert!(last_offset.is_none_or(|l| *offset > l), "offsets increase");
                assert!(*end <= log_len as u64 && offset + 7 + data.len() as u64 <= *end);
                last_offset = Some(*offset);
                accounted += data.len() as u64;
            }
            Seen::Drop(c) => {
                assert!(c.offset < log_len as u64, "{c:?}");
                accounted += c.bytes;
            }
            Seen::Oversized(o) => panic!("unexpected {o:?}"),
        }
    }
    assert!(
        accounted <= log_len as u64,
        "each byte is returned or dropped at most once"
    );
}

fn read_dribbled(log: &[u8], options: &ReadOptions, max: usize, seed: u64) -> Vec<Seen> {
    let source = IoSource::new(Dribble::new(log, max, seed), Box::new([0u8; BLOCK_SIZE]));
    let o = read_source(source, options, 2 << 20);
    assert!(o.errors.is_empty());
    o.items
}

fn read_streaming(log: &[u8], options: &ReadOptions) -> Vec<Seen> {
    read_fragments(SliceSource::new(log), options).items
}

// ---------------------------------------------------------------------------------------------
// (a), (b)

proptest! {
    #![proptest_config(config(128))]

    /// (a) Whatever is written is read back: same records, offsets and ends, no report.
    #[test]
    fn round_trip(records in records(8)) {
        let (log, written) = write_from(0, &records);
        let (_, spans) = model::write_spans(&records, 0);
        let got: Vec<Range<u64>> = written.iter().map(|w| w.offset..w.end).collect();
        prop_assert_eq!(&got, &spans);
        let o = read_log(&log);
        prop_assert!(o.items == expected_items(&spans, &records), "read back differs");
        prop_assert!(model::read(&log) == records);
    }

    /// (b) The writer's output is the model's, for any resume offset.
    #[test]
    fn writer_matches_model((start, records) in start_offset().prop_flat_map(|start| {
        (Just(start), prop::collection::vec(spec(), 0..8))
    }).prop_map(|(start, specs)| (start, resolve(&specs, start)))) {
        let (bytes, written) = write_from(start, &records);
        let (expected, spans) = model::write_spans(&records, start);
        prop_assert!(bytes == expected, "bytes differ from the model (start {})", start);
        let got: Vec<Range<u64>> = written.iter().map(|w| w.offset..w.end).collect();
        prop_assert_eq!(got, spans);
        // Item 12: only valid chunks (types 1–4, checksums right, none crossing a block,
        // zero trailers): model::layout_at panics otherwise.
        let pieces = model::layout_at(&bytes, start);
        let chunks = pieces.iter().filter(|p| matches!(p, Piece::Chunk { .. })).count();
        prop_assert!(chunks >= records.len());
    }
}

// ---------------------------------------------------------------------------------------------
// (c) prefixes

/// Item 31, exhaustively, on the log LevelDB measured (foo, 40000 bytes, bar: 40035 cut
/// points, all clean in LevelDB).
#[test]
fn every_prefix_of_leveldbs_measured_log_reads_cleanly() {
    let records = [b"foo".to_vec(), content(40_000, 31), b"bar".to_vec()];
    let (log, written) = write_from(0, &records);
    assert_eq!(log.len() + 1, 40_035);
    let mut cuts_checked = 0;
    for cut in 0..=log.len() {
        let o = read_source(
            SliceSource::new(&log[..cut]),
            &ReadOptions::default(),
            40_000,
        );
        let complete = written.iter().take_while(|w| w.end <= cut as u64).count();
        assert_eq!(o.items.len(), complete, "cut {cut}: {:?}", o.drops());
        for (item, (w, r)) in o.items.iter().zip(written.iter().zip(&records)) {
            let Seen::Record { offset, end, data } = item else {
                panic!("cut {cut}: {item:?}")
            };
            assert!(
                *offset == w.offset && *end == w.end && data == r,
                "cut {cut}"
            );
        }
        cuts_checked += 1;
    }
    assert_eq!(cuts_checked, 40_035);
}

/// Item 31 around every chunk boundary and trailer (and at every 97th byte) of a 5-block log
/// with every layout case: FULL, FIRST/MIDDLE/LAST, an empty FIRST, an empty record, a 3-byte
/// trailer.
#[test]
fn prefixes_around_every_boundary_read_cleanly() {
    let records = vec![
        b"foo".to_vec(),
        content(32_744, 1),                   // leaves exactly 7 bytes in block 0
        b"xyz".to_vec(),                      // FIRST(0) @32761, LAST(3) @32768
        vec![],                               // FULL(0)
        content(32_744 + 32_761 + 32_758, 2), // FIRST, MIDDLE, LAST leaving 3 bytes
        content(100, 3),                      // after a 3-byte trailer
    ];
    let (log, spans) = model::write_spans(&records, 0);
    assert_eq!(write_from(0, &records).0, log);
    let pieces = model::layout(&log);
    assert_eq!(
        pieces,
        [
            Piece::Chunk {
                offset: 0,
                kind: model::FULL,
                len: 3
            },
            Piece::Chunk {
                offset: 10,
                kind: model::FULL,
                len: 32_744
            },
            Piece::Chunk {
                offset: 32_761,
                kind: model::FIRST,
                len: 0
            },
            Piece::Chunk {
                offset: 32_768,
                kind: model::LAST,
                len: 3
            },
            Piece::Chunk {
                offset: 32_778,
                kind: model::FULL,
                len: 0
            },
            Piece::Chunk {
                offset: 32_785,
                kind: model::FIRST,
                len: 32_744
            },
            Piece::Chunk {
                offset: 65_536,
                kind: model::MIDDLE,
                len: 32_761
            },
            Piece::Chunk {
                offset: 98_304,
                kind: model::LAST,
                len: 32_758
            },
            Piece::Trailer {
                offset: 131_069,
                len: 3
            },
            Piece::Chunk {
                offset: 131_072,
                kind: model::FULL,
                len: 100
            },
        ]
    );
    let mut cuts = std::collections::BTreeSet::new();
    for piece in &pieces {
        let (Piece::Chunk { offset, .. } | Piece::Trailer { offset, .. }) = *piece;
        for d in 0..=9 {
            cuts.insert(offset.saturating_sub(d));
            cuts.insert(offset + d);
        }
    }
    cuts.insert(log.len() as u64);
    cuts.extend((0..log.len() as u64).step_by(97));
    for cut in cuts.into_iter().filter(|&c| c <= log.len() as u64) {
        let items = read_with(&log[..cut as usize], &ReadOptions::default());
        let complete = spans.iter().take_while(|s| s.end <= cut).count();
        assert!(
            items == expected_items(&spans[..complete], &records[..complete]),
            "cut {cut}: {items:?}"
        );
        assert_eq!(
            read_streaming(&log[..cut as usize], &ReadOptions::default()),
            items
        );
    }
}

proptest! {
    #![proptest_config(config(128))]

    /// (c) Sampled cut points of generated logs: a prefix of the records, no report.
    #[test]
    fn every_prefix_reads_as_a_prefix(records in records(7), cuts in prop::collection::vec(any::<Index>(), 1..6)) {
        let (log, spans) = model::write_spans(&records, 0);
        for cut in cuts {
            let cut = cut.index(log.len() + 1);
            let items = read_with(&log[..cut], &ReadOptions::default());
            let complete = spans.iter().take_while(|s| s.end <= cut as u64).count();
            prop_assert!(
                items == expected_items(&spans[..complete], &records[..complete]),
                "cut {}: {} items, {} expected", cut, items.len(), complete
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// (d), (e), (f)

proptest! {
    #![proptest_config(config(256))]

    /// (e) Damaged logs never yield a record that was not written; (d) the streaming reader
    /// agrees with the record reader; (f) short reads change nothing.
    #[test]
    fn damaged_logs_yield_only_written_records(
        records in records(7),
        damages in prop::collection::vec(damage(), 1..4),
        max_read in 1usize..100,
        seed in any::<u64>(),
    ) {
        let (clean, spans) = model::write_spans(&records, 0);
        let written = expected_items(&spans, &records);
        let mut log = clean;
        for d in &damages {
            apply(&mut log, d);
        }
        let options = ReadOptions::default();
        let items = read_with(&log, &options);
        assert_only_written_records(&items, &written, log.len());
        assert_sane(&items, log.len(), 0);
        prop_assert_eq!(&read_streaming(&log, &options), &items);
        prop_assert_eq!(&read_dribbled(&log, &options, max_read, seed), &items);
    }

    /// (e) Byte soup: no panic, sane output, and all three ways of reading agree — with and
    /// without checksums, from any initial offset.
    #[test]
    fn byte_soup_never_panics(
        log in prop_oneof![4 => soup(), 1 => prop::collection::vec(any::<u8>(), 0..2000)],
        verify in prop::bool::weighted(0.8),
        initial in prop_oneof![3 => Just(0u64), 1 => 0u64..100_000],
        max_read in 1usize..100,
        seed in any::<u64>(),
    ) {
        let options = ReadOptions::new().verify_checksums(verify).initial_offset(initial);
        let items = read_with(&log, &options);
        assert_sane(&items, log.len(), initial);
        prop_assert_eq!(&read_streaming(&log, &options), &items);
        prop_assert_eq!(&read_dribbled(&log, &options, max_read, seed), &items);
    }

    /// (f) and (d) on clean logs, from any initial offset.
    #[test]
    fn sources_and_readers_agree(
        records in records(7),
        initial in any::<Index>(),
        max_read in 1usize..100,
        seed in any::<u64>(),
    ) {
        let (log, _) = model::write_spans(&records, 0);
        let options = ReadOptions::new().initial_offset(initial.index(log.len() + 2) as u64);
        let items = read_with(&log, &options);
        prop_assert_eq!(&read_streaming(&log, &options), &items);
        prop_assert_eq!(&read_dribbled(&log, &options, max_read, seed), &items);
    }
}

// ---------------------------------------------------------------------------------------------
// Initial offsets, (g), (h)

proptest! {
    #![proptest_config(config(96))]

    /// Items 43–49: from any offset, exactly the records that start at or after it; from a
    /// record's own offset, exactly the rest of the log with no report.
    #[test]
    fn initial_offset_returns_the_records_from_there(
        records in records(7),
        offsets in prop::collection::vec(any::<Index>(), 1..5),
    ) {
        let (log, spans) = model::write_spans(&records, 0);
        let all = expected_items(&spans, &records);
        for offset in offsets {
            let offset = offset.index(log.len() + 2) as u64;
            let items = read_with(&log, &ReadOptions::new().initial_offset(offset));
            let got: Vec<&Seen> = items.iter().filter(|s| matches!(s, Seen::Record { .. })).collect();
            let want: Vec<&Seen> = all.iter().zip(&spans).filter(|(_, s)| s.start >= offset).map(|(r, _)| r).collect();
            prop_assert!(got == want, "from {}", offset);
        }
        if !spans.is_empty() {
            let i = records.len() / 2;
            let items = read_with(&log, &ReadOptions::new().initial_offset(spans[i].start));
            prop_assert!(items == all[i..], "from record {} @{}", i, spans[i].start);
        }
    }

    /// (g) A reader whose buffer is too small for some records reports exactly those that
    /// must be assembled (fragmented) and are longer than it; records in one chunk are
    /// returned from the block whatever their size; nothing else changes.
    #[test]
    fn small_buffer_yields_oversized(
        records in records(7),
        near_a_record in any::<bool>(),
        pick in any::<Index>(),
        delta in 0usize..3,
        cap in 0usize..100_000,
    ) {
        let (log, spans) = model::write_spans(&records, 0);
        // The buffer is either random or within one byte of a record's length.
        let cap = if near_a_record && !records.is_empty() {
            (records[pick.index(records.len())].len() + delta).saturating_sub(1)
        } else {
            cap
        };
        let expected: Vec<Seen> = spans.iter().zip(&records).map(|(s, r)| {
            let len = r.len() as u64;
            let fragmented = s.end - s.start > 7 + len;
            if fragmented && r.len() > cap {
                Seen::Oversized(Oversized::new(s.start, s.end, len, false))
            } else {
                Seen::Record { offset: s.start, end: s.end, data: r.clone() }
            }
        }).collect();
        let o = read_source(SliceSource::new(&log), &ReadOptions::default(), cap);
        prop_assert!(o.items == expected, "buffer of {} bytes", cap);
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// (h) The software CRC-32C, the default path and the model's equal the `crc32c` crate.
    #[test]
    fn crc_paths_agree(data in prop::collection::vec(any::<u8>(), 0..3000), split in any::<Index>()) {
        let reference = crc32c::crc32c(&data);
        prop_assert_eq!(logfmt_core::parts::checksum::software::crc32c(&data), reference);
        prop_assert_eq!(logfmt_core::parts::checksum::crc32c(&data), reference);
        prop_assert_eq!(model::crc32c(&data), reference);
        let (a, b) = data.split_at(split.index(data.len() + 1));
        prop_assert_eq!(logfmt_core::parts::checksum::software::extend(crc32c::crc32c(a), b), reference);
        let c = reference;
        prop_assert_eq!(logfmt_core::parts::checksum::mask(c), model::mask(c));
        prop_assert_eq!(logfmt_core::parts::checksum::unmask(model::mask(c)), c);
    }
}

#[test]
fn crc_check_value() {
    assert_eq!(
        logfmt_core::parts::checksum::software::crc32c(b"123456789"),
        0xE306_9283
    );
    assert_eq!(
        logfmt_core::parts::checksum::crc32c(b"123456789"),
        0xE306_9283
    );
    assert_eq!(crc32c::crc32c(b"123456789"), 0xE306_9283);
    assert_eq!(model::crc32c(b"123456789"), 0xE306_9283);
}
