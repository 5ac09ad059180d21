//! An inspection handed the file slice by slice, as the page reads it, reports exactly what
//! `inspect` reports reading the whole file: on the LevelDB vectors, damaged logs, records
//! longer than what it holds, zero-filled and torn tails, a ring image, a file shorter than
//! it said, random bytes and compressed logs, for slices of many sizes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../logfmt-cli/tests/common/ring_image.rs"]
mod ring_image;

mod common;

use std::cell::Cell;
use std::io::{self, Cursor};

use common::{log_of, pebbles_wal, pebbles_wal_written_on};
use logfmt_core::BLOCK_SIZE;
use logfmt_web::{Inspection, Options, Report, Window, inspect};

/// What one inspection in slices gave: the report, and the bytes it had to read itself.
struct Sliced {
    report: Report,
    caught_up: u64,
    held: usize,
}

/// Inspects `file` (said to be `len` bytes) handed over `slice` bytes at a time, in order;
/// the source reads what the inspection needs before it is handed over.
fn sliced(file: &[u8], len: u64, slice: usize) -> Sliced {
    let reads = Cell::new(0u64);
    let source = |at: u64, n: usize| -> io::Result<Vec<u8>> {
        reads.set(reads.get() + 1);
        let at = usize::try_from(at).unwrap().min(file.len());
        Ok(file[at..(at + n).min(file.len())].to_vec())
    };
    let mut inspection = Inspection::new(source, len, &Options::default(), 1 << 20).unwrap();
    let mut held = 0;
    while let Some(at) = inspection.wants() {
        let at = usize::try_from(at).unwrap();
        let bytes = &file[at.min(file.len())..(at + slice).min(file.len())];
        inspection.push(at as u64, bytes).unwrap();
        held = held.max(inspection.held());
    }
    let caught_up = inspection.caught_up();
    Sliced {
        report: inspection.finish().unwrap(),
        caught_up,
        held,
    }
}

/// The report of the whole file, read as `logfmt verify` reads it.
fn whole(file: &[u8], len: u64) -> Report {
    let source = |at: u64, n: usize| -> io::Result<Vec<u8>> {
        let at = usize::try_from(at).unwrap().min(file.len());
        Ok(file[at..(at + n).min(file.len())].to_vec())
    };
    inspect(Window::new(source, len, 1 << 20), len, &Options::default()).unwrap()
}

/// Every slice size gives the whole file's report; returns the largest number of bytes read
/// by the inspection itself.
fn agrees(name: &str, file: &[u8]) -> u64 {
    let expected = inspect(Cursor::new(file), file.len() as u64, &Options::default()).unwrap();
    let mut caught_up = 0;
    for slice in [1, 4096, 32 * 1024, 100_000, 1 << 20, 3 << 20] {
        if slice == 1 && file.len() > 1 << 20 {
            continue;
        }
        let got = sliced(file, file.len() as u64, slice);
        assert_eq!(got.report, expected, "{name}, slices of {slice} bytes");
        caught_up = caught_up.max(got.caught_up);
    }
    caught_up
}

fn vectors() -> Vec<(String, Vec<u8>)> {
    let (dir, names) = common::vector_names();
    names
        .into_iter()
        .map(|name| {
            let bytes = std::fs::read(dir.join(&name)).unwrap();
            (name, bytes)
        })
        .collect()
}

#[test]
fn the_leveldb_vectors_in_slices() {
    let vectors = vectors();
    assert_eq!(vectors.len(), 27);
    for (name, bytes) in vectors {
        agrees(&name, &bytes);
    }
}

/// Records of 1 to 9000 bytes, about 6 MiB in all.
fn mixed_log() -> Vec<u8> {
    log_of((0..1500u32).map(|i| vec![(i % 251) as u8; 1 + (i as usize * 7919) % 9000]))
}

#[test]
fn a_damaged_log_in_slices() {
    let mut log = mixed_log();
    for at in [
        3 * BLOCK_SIZE + 100,
        40 * BLOCK_SIZE + 7,
        128 * BLOCK_SIZE - 3,
    ] {
        log[at] ^= 0x40;
    }
    agrees("damaged", &log);
    let report = sliced(&log, log.len() as u64, 1 << 20).report;
    assert!(report.corruption_count >= 3, "{report:?}");
}

#[test]
fn records_shorter_than_what_is_held_need_no_read_of_their_own() {
    let log = mixed_log();
    assert_eq!(agrees("mixed", &log), 0, "bytes read besides the slices");
}

#[test]
fn records_longer_than_what_is_held_are_read_on_at_once() {
    // Records of 3 MiB cross every slice's end by more than the inspection keeps ahead.
    let log = log_of((0..5u8).map(|i| vec![i; 3 << 20]).chain([b"last".to_vec()]));
    let caught_up = agrees("long records", &log);
    assert!(caught_up > 0, "the long records were read on at once");
    let report = sliced(&log, log.len() as u64, 1 << 20).report;
    assert_eq!(report.records, 6);
}

#[test]
fn memory_does_not_grow_with_the_file() {
    let small = log_of((0..4_000u32).map(|i| vec![(i % 7) as u8; 1000]));
    let large = log_of((0..40_000u32).map(|i| vec![(i % 7) as u8; 1000]));
    let slice = 1 << 20;
    let (a, b) = (
        sliced(&small, small.len() as u64, slice),
        sliced(&large, large.len() as u64, slice),
    );
    assert_eq!(b.report.records, 40_000);
    assert_eq!(a.held, b.held, "bytes held for 4 and 40 MB");
    assert!(b.held <= 3 << 20, "{} bytes held", b.held);
}

#[test]
fn zero_filled_and_torn_tails_in_slices() {
    let mut zeros = log_of((0..300u32).map(|i| vec![1 + (i % 200) as u8; 5000]));
    zeros.resize(zeros.len() + (3 << 20) + 12_345, 0);
    agrees("zero-filled", &zeros);
    let report = sliced(&zeros, zeros.len() as u64, 100_000).report;
    assert_eq!(report.tail.as_ref().map(|t| t.kind), Some("zero_fill"));

    // Zeros, then one byte that is not: a torn tail, not zero fill.
    let mut torn = zeros.clone();
    *torn.last_mut().unwrap() = 1;
    agrees("torn after zeros", &torn);
    let report = sliced(&torn, torn.len() as u64, 100_000).report;
    assert_eq!(report.tail.as_ref().map(|t| t.kind), Some("torn"));

    // A record cut short by the end of the file.
    let mut cut = mixed_log();
    cut.truncate(cut.len() - 1000);
    agrees("cut", &cut);
}

#[test]
fn a_ring_image_is_read_whole() {
    let spec = ring_image::Spec::new(4, 1_500, 11);
    let ring = ring_image::run::<4096>(&spec, ring_image::sample);
    agrees("ring", &ring.image);
    let report = sliced(&ring.image, ring.image.len() as u64, 4096).report;
    assert!(report.ring.is_some());
}

#[test]
fn a_file_shorter_than_it_said() {
    let log = mixed_log();
    let said = log.len() as u64 + 50_000;
    for slice in [4096, 1 << 20] {
        assert_eq!(
            sliced(&log, said, slice).report,
            whole(&log, said),
            "slices of {slice}"
        );
    }
}

#[test]
fn random_bytes_in_slices() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let bytes: Vec<u8> = (0..(2 << 20))
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    agrees("random", &bytes);
    agrees("empty", &[]);
}

/// Compressed logs — RocksDB's WAL compression and logfmt's compressed packs — are decoded
/// (zstd in Rust, in the browser too): every record is counted and shown as written, whole
/// or in slices.
#[test]
fn compressed_records_are_decoded_in_slices() {
    use logfmt_std::{Compression, LogWriter, LogWriterOptions, advanced::PackLimit};

    let records: Vec<String> = (0..3000)
        .map(|i| {
            format!(
                "reading {i}: temperature={} humidity={}",
                20 + i % 7,
                i % 50
            )
        })
        .collect();
    let ways = [
        LogWriterOptions::new().compress(Compression::rocksdb()),
        LogWriterOptions::new()
            .compress(Compression::zstd())
            .pack(Some(PackLimit::bytes(4096))),
    ];
    for options in ways {
        let mut writer = LogWriter::new(Vec::new(), &options);
        for record in &records {
            writer.add_record(record.as_bytes()).unwrap();
        }
        let log = writer.close().unwrap();
        let report = whole(&log, log.len() as u64);
        assert_eq!(report.records, records.len() as u64, "{options:?}");
        assert_eq!(report.corruption_count, 0, "{options:?}");
        let shown: Vec<&str> = report
            .first_records
            .iter()
            .map(|r| r.text.as_str())
            .collect();
        let written: Vec<String> = records[..shown.len()]
            .iter()
            .map(|r| format!("{r:?}"))
            .collect();
        assert!(!shown.is_empty());
        assert_eq!(shown.len(), Options::default().max_records);
        for (shown, written) in shown.iter().zip(&written) {
            assert!(
                shown.contains(&written[1..written.len() - 1]),
                "{shown} vs {written}"
            );
        }
        agrees("compressed", &log);
    }
}

#[test]
fn a_pebble_wal_is_read_as_pebbles_found_by_its_first_chunk() {
    let wal = pebbles_wal();
    agrees("pebble", &wal);
    let report = whole(&wal, wal.len() as u64);
    assert_eq!(report.dialect, Some("pebble"));
    assert_eq!(report.records, 30);
    assert!(report.corruptions.is_empty(), "{report:?}");
    // It ends at Pebble's EOF trailer (11 bytes), as `logfmt verify` says: not damage.
    let tail = report.tail.expect("the EOF trailer");
    assert_eq!(
        (tail.offset, tail.bytes, tail.kind),
        (1450, 11, "old_record")
    );
    // Read with logfmt's own rules, type 9 is RocksDB's compression record: no record.
    let mut legacy = Options::default();
    legacy.find_dialect = logfmt_web::FindDialect::Given;
    let len = wal.len() as u64;
    let report = inspect(Cursor::new(&wal), len, &legacy).unwrap();
    assert_eq!(report.records, 0, "{report:?}");
    assert_eq!(report.dialect, None);

    // A byte flipped in the last record: Pebble's torn end (nothing after it was synced).
    let last = wal.len() - 11 - 49;
    let mut flipped = wal.clone();
    flipped[last + 30] ^= 0x40;
    agrees("pebble flipped", &flipped);
    let report = whole(&flipped, len);
    assert_eq!(report.records, 29);
    assert!(report.corruptions.is_empty(), "{report:?}");
    let tail = report.tail.expect("a torn end");
    assert_eq!((tail.offset, tail.bytes), (last as u64, 60));
    assert_eq!(report.pebble_synced, None);
}

#[test]
fn damage_a_later_synced_offset_proves_is_corruption_in_a_pebble_wal() {
    let mut log = pebbles_wal_written_on();
    assert_eq!(whole(&log, log.len() as u64).records, 31);
    // A byte of the sixth record (at 235) flipped: Pebble stops there; block 1's chunk says
    // the log was synced to 1450.
    log[235 + 19 + 2] ^= 1;
    agrees("pebble corrupt", &log);
    let report = whole(&log, log.len() as u64);
    assert_eq!(report.records, 5, "{report:?}");
    assert_eq!(report.corruptions[0].offset, 235, "{report:?}");
    let proof = report.pebble_synced.expect("a proof");
    assert_eq!(
        (proof.damage_offset, proof.chunk, proof.synced_offset),
        (235, 32_768, 1450)
    );
}
