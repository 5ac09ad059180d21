//! A ring flash log, exported, read by real LevelDB and RocksDB.
//!
//! The real flash writer (`WordWriter` over the simulated NOR flash, `MockFlash`) keeps a log
//! of write batches as a ring — wrapping many times, with power cuts in programs and erases
//! and reopenings after them, batches across blocks and across the wrap — and the flash is
//! dumped to an image file. Then:
//!
//! - `logfmt cat` reads the image with no flag: exactly the batches the ring keeps, in order
//!   (those the core's reference ring reader returns, a run of the batches written ending
//!   with the last one);
//! - `logfmt export` turns it into a plain LevelDB log, which LevelDB's own log reader
//!   (`leveldb::DumpFile`, checksums verified) and RocksDB's (`ldb dump_wal`) read with no
//!   corruption: every batch, at the offsets logfmt reads them at; and both recover a
//!   database from it as its write-ahead log (LevelDB with `paranoid_checks`), holding every
//!   key the batches put.
//!
//! LevelDB and RocksDB are driven by `interop/leveldb_helper.cc` and
//! `interop/rocksdb_wal_writer.cc`, compiled here; the CLI is built with cargo, in the profile
//! of this test. Ignored by a plain `cargo test`; `cargo xtask interop` installs LevelDB and
//! RocksDB and runs it. Without a compiler, LevelDB, RocksDB or `ldb` it fails, saying what
//! is missing.

mod interop_tools;
#[path = "../../crates/logfmt-std/tests/common/ring_image.rs"]
mod ring_image;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::Command;

use interop_tools::*;

use logfmt_std::{
    LogReaderOptions, RecoveryMode,
    advanced::{BLOCK_SIZE, Entry, LogReader},
};
use logfmt_tests::write_batch::{Batch, Op, apply, decode, encode};
use ring_image::{Random, Run, Spec, check, run};

// The tools: `interop_tools`.

// ------------------------------------------------------------------------- the ring

/// Batch `i`: one put of a key naming it, with sequence number `i + 1` and a printable value,
/// mostly small, some across blocks.
fn batch(i: usize) -> Batch {
    let mut random = Random::new(i as u64 * 0x2545_f491 + 3);
    let len = match random.below(10) {
        0 => 20_000 + random.below(40_000),
        1 | 2 => random.below(3_000),
        _ => random.below(200),
    };
    let value = (0..len).map(|_| b'a' + random.below(26) as u8).collect();
    Batch {
        sequence: i as u64 + 1,
        ops: vec![Op::Put(format!("ring-{i:06}").into_bytes(), value)],
    }
}

fn batch_record(i: usize) -> Vec<u8> {
    encode(&batch(i))
}

/// The batches in a log's records.
fn batches(records: &[Vec<u8>]) -> Vec<Batch> {
    records
        .iter()
        .map(|r| decode(r).expect("a record is a WriteBatch"))
        .collect()
}

/// The records of a plain log with their offsets, read with absolute consistency.
fn plain_records(path: &Path) -> Vec<(u64, Batch)> {
    let data = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let options = LogReaderOptions::new().recovery(RecoveryMode::AbsoluteConsistency);
    let mut reader = LogReader::from_slice(&data, &options);
    let mut records = Vec::new();
    while let Some(entry) = reader.next().unwrap_or_else(|e| panic!("{e}")) {
        match entry {
            Entry::Record(r) => records.push((r.offset, decode(r.data).expect("a WriteBatch"))),
            Entry::Damage(d) => panic!("{}: {d}", path.display()),
            other => panic!("not expected here: {other:?}"),
        }
    }
    records
}

/// Asserts that LevelDB's own log reader returns exactly `records` from `log`, at the same
/// offsets, with no corruption.
fn assert_leveldb_reads(log: &Path, records: &[(u64, Batch)]) {
    let out = log.with_extension("dump");
    leveldb(&[Path::new("dump"), log, &out]);
    let dump = fs::read_to_string(&out).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    if let Some(line) = dump.lines().find(|l| l.starts_with("corruption:")) {
        panic!("LevelDB's log reader reports {line}");
    }
    let mut expected = String::new();
    for (offset, batch) in records {
        let _ = writeln!(expected, "--- offset {offset}; sequence {}", batch.sequence);
        for op in &batch.ops {
            if let Op::Put(k, v) = op {
                let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
                let _ = writeln!(expected, "  put '{}' '{}'", text(k), text(v));
            }
        }
    }
    let at = dump
        .lines()
        .zip(expected.lines())
        .take_while(|(a, b)| a == b)
        .count();
    assert!(
        dump == expected,
        "LevelDB's dump differs from logfmt's reading at line {at}"
    );
}

/// Asserts that RocksDB's `ldb dump_wal` lists exactly `records` of `log` (sequence, count,
/// size, offset, key), with no corruption.
fn assert_rocksdb_reads(log: &Path, records: &[(u64, Batch)]) {
    let mut walfile = std::ffi::OsString::from("--walfile=");
    walfile.push(log);
    let out = Command::new("ldb")
        .arg("dump_wal")
        .arg(walfile)
        .args(["--header", "--print_value"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run RocksDB's `ldb` ({e}): {MISSING}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "ldb: {stderr}");
    assert!(stderr.trim().is_empty(), "ldb reports: {stderr}");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    assert_eq!(
        lines.next().map(str::trim_end),
        Some("Sequence,Count,ByteSize,Physical Offset,Key(s) : value"),
        "ldb's header"
    );
    let listed: Vec<&str> = lines.collect();
    assert_eq!(listed.len(), records.len(), "ldb lists every batch");
    for (line, (offset, batch)) in listed.iter().zip(records) {
        let Some(Op::Put(key, _)) = batch.ops.first() else {
            panic!("a put")
        };
        let key_hex: String = key.iter().map(|b| format!("{b:02X}")).collect();
        let head = format!(
            "{},{},{},{offset},PUT(0) : 0x{key_hex} : 0x",
            batch.sequence,
            batch.ops.len(),
            encode(batch).len()
        );
        assert!(
            line.to_ascii_uppercase()
                .starts_with(&head.to_ascii_uppercase()),
            "ldb lists {line:.120}, expected {head}"
        );
    }
}

/// What the case made, for the report line.
struct Made {
    name: &'static str,
    run: Run,
    blocks: usize,
}

fn cases() -> Vec<Made> {
    let spec = Spec {
        sessions: 16,
        cuts: 12,
        ..Spec::new(8, 700, 41)
    };
    let blocks = run::<4096>(&spec, batch_record);
    let spec = Spec {
        erased: 0x00,
        first_lap: u32::MAX - 3,
        sessions: 16,
        cuts: 12,
        ..Spec::new(6, 500, 43)
    };
    let groups = run::<{ 2 * BLOCK_SIZE }>(&spec, batch_record);
    vec![
        Made {
            name: "erased 0xff, erase units of 4 KiB",
            run: blocks,
            blocks: 8,
        },
        Made {
            name: "erased 0x00, erase groups of 2 blocks, the lap counter wrapping",
            run: groups,
            blocks: 6,
        },
    ]
}

#[test]
#[ignore = "needs LevelDB and RocksDB: run with cargo xtask interop"]
fn a_ring_image_exported_reads_cleanly_in_leveldb_and_rocksdb() {
    for (k, made) in cases().into_iter().enumerate() {
        let run = &made.run;
        let what = made.name;
        assert!(run.laps >= 3, "{what}: wrapped {} times", run.laps);
        assert!(run.cuts >= 4, "{what}: {} power cuts", run.cuts);
        let dir = scratch("ring_interop", &format!("case{k}"));
        let image = dir.join("flash.img");
        fs::write(&image, &run.image).unwrap_or_else(|e| panic!("{e}"));

        // logfmt reads the ring as the ring keeps it.
        let cat = logfmt(&["cat", "--output", "framed", path_str(&image)]);
        let mut framed = &cat.stdout[..];
        let mut records = Vec::new();
        while let Some((len, rest)) = framed.split_first_chunk::<4>() {
            let (record, rest) = rest.split_at(u32::from_le_bytes(*len) as usize);
            records.push(record.to_vec());
            framed = rest;
        }
        assert!(records == run.reference, "{what}: cat reads the ring");
        let start = check(run, &records);
        let kept = batches(&records);
        assert!(
            kept.iter().any(|b| encode(b).len() > BLOCK_SIZE),
            "{what}: a batch across blocks"
        );

        // Exported: a plain log of the same batches.
        let wal = dir.join("000005.log");
        logfmt(&["export", path_str(&image), path_str(&wal)]);
        let exported = plain_records(&wal);
        assert!(
            exported.iter().map(|(_, b)| b).eq(kept.iter()),
            "{what}: export holds the batches cat reads"
        );

        // LevelDB's and RocksDB's log readers read it cleanly.
        assert_leveldb_reads(&wal, &exported);
        assert_rocksdb_reads(&wal, &exported);

        // Both recover a database with it as the write-ahead log.
        let mut expected = BTreeMap::new();
        apply(&mut expected, &kept);
        let db = dir.join("leveldb");
        leveldb(&[Path::new("create"), &db]);
        let log = the_log(&db);
        fs::copy(&wal, &log).unwrap_or_else(|e| panic!("{e}"));
        let out = dir.join("leveldb.contents");
        leveldb(&[Path::new("read"), &db, &out]);
        assert!(
            contents(&out) == expected,
            "{what}: LevelDB recovers the keys"
        );
        let db = dir.join("rocksdb");
        let spec = dir.join("rocksdb.spec");
        fs::write(&spec, 0u32.to_le_bytes()).unwrap_or_else(|e| panic!("{e}"));
        rocksdb(&[Path::new("write"), &db, &spec, Path::new("close")]);
        let log = the_log(&db);
        fs::remove_file(&log).unwrap_or_else(|e| panic!("{e}"));
        fs::copy(&wal, &log).unwrap_or_else(|e| panic!("{e}"));
        let out = dir.join("rocksdb.contents");
        rocksdb(&[Path::new("read"), &db, &out]);
        assert!(
            contents(&out) == expected,
            "{what}: RocksDB recovers the keys"
        );

        println!(
            "ring image ({what}): {} blocks, {} laps, {} power cuts; {} of {} batches kept \
             (from batch {start}); exported to a {}-byte log that LevelDB and RocksDB read \
             with no corruption and recover {} keys from",
            made.blocks,
            run.laps,
            run.cuts,
            kept.len(),
            run.written.len(),
            fs::metadata(&wal).map_or(0, |m| m.len()),
            expected.len()
        );
    }
}
