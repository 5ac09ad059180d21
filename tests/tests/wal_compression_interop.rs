//! RocksDB's WAL compression, read by logfmt.
//!
//! Real RocksDB (`interop/rocksdb_wal_writer.cc` with `DBOptions::wal_compression = kZSTD`)
//! writes a database whose write-ahead log starts with its compression record (type 9, codec
//! 7) and holds each write batch as one zstd frame cut into ordinary chunks. logfmt reads that
//! log: `logfmt cat` gives back exactly the batches RocksDB applied, in order, decompressed;
//! `logfmt verify` finds no damage; `logfmt chunks` shows the compression record. And a record
//! whose compressed bytes are damaged (checksum fixed up, so only the zstd frame is wrong) is
//! reported as a record that does not decompress, the batches around it read.
//!
//! Ignored by a plain `cargo test`; `cargo xtask interop` installs RocksDB and runs it.

mod interop_tools;

use std::fs;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use interop_tools::*;
use logfmt_tests::write_batch::{Batch, Op, decode};

/// Batch `i`: a few puts with repetitive values (they compress), some large.
fn ops(i: usize) -> Vec<Op> {
    let value_len = if i % 17 == 5 { 50_000 } else { 40 + i % 90 };
    (0..1 + i % 3)
        .map(|j| {
            Op::Put(
                format!("compressed-{i:05}-{j}").into_bytes(),
                format!("value {i} ").repeat(value_len / 8).into_bytes(),
            )
        })
        .collect()
}

/// Runs the RocksDB helper with WAL compression on.
fn rocksdb_compressed(args: &[&Path]) -> String {
    static HELPER: OnceLock<std::path::PathBuf> = OnceLock::new();
    let binary = compiled("rocksdb_wal_writer", "-lrocksdb", &HELPER);
    let out = Command::new(binary)
        .args(args)
        .env("LOGFMT_WAL_COMPRESSION", "zstd")
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", binary.display()));
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The batches of `cat --output framed` on `log`.
fn cat_batches(log: &Path) -> Vec<Batch> {
    let cat = logfmt(&["cat", "--output", "framed", path_str(log)]);
    let mut framed = &cat.stdout[..];
    let mut batches = Vec::new();
    while let Some((len, rest)) = framed.split_first_chunk::<4>() {
        let (record, rest) = rest.split_at(u32::from_le_bytes(*len) as usize);
        batches.push(decode(record).expect("a WriteBatch"));
        framed = rest;
    }
    batches
}

#[test]
#[ignore = "needs RocksDB: run with cargo xtask interop"]
fn a_wal_compressed_by_rocksdb_reads_in_logfmt() {
    let dir = scratch("wal_compression_interop", "rocksdb");
    let batches: Vec<Vec<Op>> = (0..300).map(ops).collect();
    let spec_file = dir.join("spec");
    fs::write(&spec_file, spec(std::slice::from_ref(&batches))).unwrap_or_else(|e| panic!("{e}"));
    let db = dir.join("db");
    let printed = rocksdb_compressed(&[Path::new("write"), &db, &spec_file, Path::new("close")]);
    let sequences: Vec<u64> = printed
        .lines()
        .filter_map(|l| l.strip_prefix("batch "))
        .map(|l| l.split_whitespace().nth(2).unwrap().parse().unwrap())
        .collect();
    assert_eq!(sequences.len(), batches.len(), "{printed}");
    let log = the_log(&db);
    let bytes = fs::read(&log).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(bytes[6], 9, "RocksDB's compression record first");
    assert_eq!(&bytes[7..11], &7u32.to_le_bytes(), "codec 7: zstd");

    // logfmt reads every batch, decompressed.
    let read = cat_batches(&log);
    let expected: Vec<Batch> = batches
        .iter()
        .zip(&sequences)
        .map(|(ops, &sequence)| Batch {
            sequence,
            ops: ops.clone(),
        })
        .collect();
    assert!(read == expected, "cat reads the batches RocksDB wrote");
    let verify = logfmt(&["verify", path_str(&log)]);
    let text = String::from_utf8_lossy(&verify.stdout);
    assert!(text.contains("no corruption"), "{text}");
    let dump = logfmt(&["chunks", path_str(&log)]);
    let text = String::from_utf8_lossy(&dump.stdout);
    assert!(text.contains("SET_COMPRESSION"), "{text:.400}");
    let plain_size: usize = expected
        .iter()
        .map(|b| logfmt_tests::write_batch::encode(b).len())
        .sum();

    // Damage inside one compressed record: its checksum fixed up, so only the frame is wrong.
    let mut damaged = bytes.clone();
    let victim = 4_000;
    let chunk = find_chunk_at(&damaged, victim);
    let (start, len) = chunk;
    damaged[start + 7 + len / 2] ^= 0x55;
    let crc = crc32c::crc32c(&damaged[start + 6..start + 7 + len]);
    let masked = crc.rotate_right(15).wrapping_add(0xa282_ead8);
    damaged[start..start + 4].copy_from_slice(&masked.to_le_bytes());
    let damaged_log = dir.join("damaged.log");
    fs::write(&damaged_log, &damaged).unwrap_or_else(|e| panic!("{e}"));
    let out = Command::new(logfmt_bin())
        .args(["cat", "--output", "framed", path_str(&damaged_log)])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("does not decompress"), "{stderr}");
    let mut framed = &out.stdout[..];
    let mut count = 0;
    while let Some((len, rest)) = framed.split_first_chunk::<4>() {
        let (record, rest) = rest.split_at(u32::from_le_bytes(*len) as usize);
        assert!(decode(record).is_some());
        count += 1;
        framed = rest;
    }
    assert!(
        count >= batches.len() - 2,
        "{count} batches read around the damage"
    );

    println!(
        "RocksDB wrote a compressed WAL of {} bytes ({} batches, {plain_size} bytes of batches): \
         logfmt reads every batch; a damaged frame is reported and the rest read",
        bytes.len(),
        batches.len()
    );
}

/// The chunk (header offset, payload length) that holds byte `at` of a legacy log with no
/// damage.
fn find_chunk_at(log: &[u8], at: usize) -> (usize, usize) {
    let mut pos = 0;
    loop {
        let left = 32_768 - pos % 32_768;
        if left < 7 {
            pos += left;
            continue;
        }
        let len = u16::from_le_bytes([log[pos + 4], log[pos + 5]]) as usize;
        if pos + 7 + len > at && len > 16 {
            return (pos, len);
        }
        pos += 7 + len;
    }
}

#[test]
#[ignore = "needs RocksDB: run with cargo xtask interop"]
fn a_wal_compressed_by_logfmt_reads_in_rocksdb() {
    let dir = scratch("wal_compression_interop", "logfmt");
    let batches: Vec<Batch> = (0..300)
        .map(|i| Batch {
            sequence: 1 + 3 * i as u64,
            ops: ops(i),
        })
        .collect();
    let mut framed = Vec::new();
    for batch in &batches {
        let record = logfmt_tests::write_batch::encode(batch);
        framed.extend_from_slice(&(record.len() as u32).to_le_bytes());
        framed.extend_from_slice(&record);
    }
    let input = dir.join("batches.framed");
    fs::write(&input, &framed).unwrap_or_else(|e| panic!("{e}"));
    let wal = dir.join("000007.log");
    logfmt_with_input(
        &[
            "write",
            "--input",
            "framed",
            "--compress",
            "rocksdb",
            path_str(&wal),
        ],
        &input,
    );
    let bytes = fs::read(&wal).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        &bytes[..11],
        &[0xe1, 0x2c, 0x08, 0xf8, 4, 0, 9, 7, 0, 0, 0],
        "RocksDB's bytes"
    );
    assert!(
        bytes.len() * 10 < framed.len(),
        "{} of {}",
        bytes.len(),
        framed.len()
    );
    // logfmt reads its own.
    assert!(cat_batches(&wal) == batches, "cat reads the batches");

    // RocksDB's `ldb dump_wal` lists every batch, decompressed, with no report.
    let out = ldb_dump_wal(&wal);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.trim().is_empty(),
        "ldb: {stderr}"
    );
    let rows: Vec<(u64, usize, usize)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(u64, usize, usize)> = batches
        .iter()
        .map(|b| {
            (
                b.sequence,
                b.ops.len(),
                logfmt_tests::write_batch::encode(b).len(),
            )
        })
        .collect();
    assert_eq!(
        rows, expected,
        "ldb lists every batch: sequence, count, size"
    );

    // RocksDB recovers a database whose write-ahead log it is.
    let db = dir.join("db");
    let spec_file = dir.join("empty.spec");
    fs::write(&spec_file, spec(&[])).unwrap_or_else(|e| panic!("{e}"));
    rocksdb_compressed(&[Path::new("write"), &db, &spec_file, Path::new("close")]);
    let log = the_log(&db);
    fs::remove_file(&log).unwrap_or_else(|e| panic!("{e}"));
    fs::copy(&wal, &log).unwrap_or_else(|e| panic!("{e}"));
    let contents_file = dir.join("contents");
    rocksdb_compressed(&[Path::new("read"), &db, &contents_file]);
    let mut expected = std::collections::BTreeMap::new();
    logfmt_tests::write_batch::apply(&mut expected, &batches);
    assert!(
        contents(&contents_file) == expected,
        "RocksDB recovers every key"
    );

    // The same batches in logfmt's own compressed packs (compressed across records).
    let packed = dir.join("packed.log");
    logfmt_with_input(
        &[
            "write",
            "--input",
            "framed",
            "--pack",
            "--compress",
            "zstd",
            path_str(&packed),
        ],
        &input,
    );
    assert!(
        cat_batches(&packed) == batches,
        "cat reads the packed batches"
    );
    let plain = dir.join("plain.log");
    logfmt_with_input(&["write", "--input", "framed", path_str(&plain)], &input);
    let size = |p: &Path| fs::metadata(p).map_or(0, |m| m.len());
    println!(
        "logfmt wrote a RocksDB-compressed WAL of {} bytes ({} batches; {} bytes plain, {} in \
         logfmt's compressed packs): ldb dump_wal lists every batch, RocksDB recovers {} keys \
         from it",
        bytes.len(),
        batches.len(),
        size(&plain),
        size(&packed),
        expected.len()
    );
}
