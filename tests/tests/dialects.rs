//! Write-ahead log dialects: LevelDB's, RocksDB's (up to 10) and Pebble's chunk types read as
//! each writer means them.
//!
//! - Pebble: the WALs Pebble's own code wrote (`tests/data/pebble`, from Pebble's test data)
//!   read by `verify`, `cat`, `chunks` and `stats`, with `--format pebble`, `auto` and no
//!   format; a writer following Pebble's `LogWriter` rules (`record/log_writer.go`)
//!   reproduces one of them byte for byte; its synced offsets tell damage from a torn end as
//!   Pebble's reader (`record/record.go`, `readAheadForCorruption`) does.
//! - RocksDB: hand-built logs with timestamp-size records (10, 11), predecessor-WAL records
//!   (130, 131) and an unknown type with bit 7 set, read with `--format rocksdb`.
//! - `auto`: what it decides, and where the log does not tell, that it says so.

mod interop_tools;

use std::path::{Path, PathBuf};
use std::process::Command;

use interop_tools::{logfmt_bin, path_str, scratch};
use logfmt_std::LogReaderOptions;
use logfmt_std::advanced::{Dialect, Entry, LogReader, ReadFormat, ReadOptions};
use serde_json::Value;

const BLOCK: usize = 32 * 1024;

/// LevelDB's masked CRC-32C.
fn masked(bytes: &[u8]) -> u32 {
    let c = crc32c::crc32c(bytes);
    c.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// A chunk: legacy header, then the log number (types with a recyclable or WAL-sync header),
/// the synced offset (WAL-sync), the payload; the checksum over all but the first 6 bytes.
fn chunk(t: u8, log: Option<u32>, synced: Option<u64>, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; 7];
    out[4..6].copy_from_slice(&(payload.len() as u16).to_le_bytes());
    out[6] = t;
    if let Some(log) = log {
        out.extend_from_slice(&log.to_le_bytes());
    }
    if let Some(synced) = synced {
        out.extend_from_slice(&synced.to_le_bytes());
    }
    out.extend_from_slice(payload);
    let crc = masked(&out[6..]);
    out[..4].copy_from_slice(&crc.to_le_bytes());
    out
}

/// Pebble's `LogWriter` with WAL-sync chunks (`emitFragmentSyncOffsets`, `emitEOFTrailer`):
/// each fragment as large as the block allows (FULL/FIRST/MIDDLE/LAST = 9/10/11/12), the log
/// number and the writer's synced offset in every header, and when fewer than 19 bytes are
/// left in a block, zeros to its end.
struct PebbleWriter {
    log: Vec<u8>,
    log_number: u32,
}

impl PebbleWriter {
    const HEADER: usize = 19;

    fn new(log_number: u32) -> Self {
        Self {
            log: Vec::new(),
            log_number,
        }
    }

    /// Writes `record` with `synced` as the writer's synced offset.
    fn add(&mut self, record: &[u8], synced: u64) {
        let mut p = record;
        let mut i = 0;
        while i == 0 || !p.is_empty() {
            let room = BLOCK - self.log.len() % BLOCK - Self::HEADER;
            let last = room >= p.len();
            let t = match (i == 0, last) {
                (true, true) => 9,
                (false, true) => 12,
                (true, false) => 10,
                (false, false) => 11,
            };
            let n = p.len().min(room);
            let c = chunk(t, Some(self.log_number), Some(synced), &p[..n]);
            self.log.extend_from_slice(&c);
            p = &p[n..];
            if BLOCK - self.log.len() % BLOCK < Self::HEADER {
                let pad = BLOCK - self.log.len() % BLOCK;
                self.log.resize(self.log.len() + pad, 0);
            }
            i += 1;
        }
    }

    /// `Close`: the EOF trailer (a recyclable FULL header with checksum 0, length 0 and the
    /// next log number).
    fn close(mut self) -> Vec<u8> {
        self.log.extend_from_slice(&[0, 0, 0, 0, 0, 0, 5]);
        self.log
            .extend_from_slice(&self.log_number.wrapping_add(1).to_le_bytes());
        self.log
    }
}

fn data(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/pebble")
        .join(path)
}

/// `logfmt ARGS`: the exit status, standard output and standard error.
fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(logfmt_bin())
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running logfmt: {e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `logfmt ARGS --json`'s one object.
fn json(args: &[&str]) -> (i32, Value) {
    let mut args = args.to_vec();
    args.push("--json");
    let (code, out, err) = run(&args);
    let value = serde_json::from_str(out.trim())
        .unwrap_or_else(|e| panic!("logfmt {args:?}: not JSON ({e}): {out}{err}"));
    (code, value)
}

/// The records of `log` read as Pebble's WAL number `log_number`.
fn pebble_records(log: &[u8], log_number: u32) -> Vec<(u64, Vec<u8>)> {
    let read = ReadOptions::new()
        .dialect(Dialect::Pebble)
        .format(ReadFormat::Recyclable { log_number });
    let mut reader = LogReader::from_slice(log, &LogReaderOptions::new().read(read));
    let mut records = Vec::new();
    while let Some(entry) = reader.next().expect("memory") {
        match entry {
            Entry::Record(r) => records.push((r.offset, r.data.to_vec())),
            other => panic!("damage in a Pebble WAL: {other:?}"),
        }
    }
    records
}

#[test]
fn pebbles_writer_rules_reproduce_its_own_wal_byte_for_byte() {
    let file = std::fs::read(data("find-val-sep-db/000007.log")).expect("test data");
    let records = pebble_records(&file, 7);
    assert_eq!(records.len(), 30);
    // Every batch was synced before the next was written: each chunk's synced offset is its
    // own offset.
    let mut writer = PebbleWriter::new(7);
    for (offset, record) in &records {
        assert_eq!(writer.log.len() as u64, *offset);
        writer.add(record, *offset);
    }
    assert_eq!(writer.close(), file);
}

#[test]
fn pebbles_wals_read_as_pebble_reads_them() {
    for (path, records, log_number, end) in [
        ("find-val-sep-db/000007.log", 30, 8, "pebble_eof_trailer"),
        ("db-stage-4/000005.log", 3, 6, "pebble_eof_trailer"),
        ("mixed/000002.log", 1, 3, "pebble_eof_trailer"),
        // A recycled file that Pebble closed with no record: its EOF trailer at offset 0,
        // then bytes of log 4.
        ("find-val-sep-db/000010.log", 0, 11, "old_record"),
    ] {
        let file = data(path);
        for format in ["pebble", "auto"] {
            let (code, v) = json(&["verify", "--format", format, path_str(&file)]);
            assert_eq!(code, 0, "{path} {format}: {v}");
            assert_eq!(v["records"], records, "{path} {format}");
            assert_eq!(v["corruptions"], Value::Array(vec![]), "{path}");
            assert_eq!(v["tail"]["kind"], end, "{path} {format}: {v}");
            assert_eq!(v["tail"]["log_number"], log_number, "{path}");
            assert_eq!(v["dialect"]["name"], "pebble", "{path} {format}: {v}");
        }
    }
}

#[test]
fn auto_says_what_told_it_and_the_default_reads_wal_sync_chunks_as_pebbles() {
    let file = data("find-val-sep-db/000007.log");
    let (_, v) = json(&["verify", "--format", "auto", path_str(&file)]);
    assert_eq!(
        v["dialect"]["evidence"],
        "a Pebble WAL-sync chunk (type 9-12, 19-byte header) at offset 0"
    );
    // No format given: the first chunk is a WAL-sync chunk, which only Pebble writes.
    let (code, text, _) = run(&["verify", path_str(&file)]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("30 records, 880 bytes of payload, no corruption"),
        "{text}"
    );
    assert!(text.contains("dialect: pebble"), "{text}");
    // Read as RocksDB's, type 9 is a compression record: no record is read.
    let (code, text, _) = run(&["verify", "--format", "rocksdb", path_str(&file)]);
    assert_ne!(code, 0, "{text}");
    // A recyclable log with Pebble's EOF trailer is Pebble's.
    let (_, v) = json(&[
        "verify",
        "--format",
        "auto",
        path_str(&data("db-stage-4/000005.log")),
    ]);
    assert_eq!(v["dialect"]["name"], "pebble");
    assert_eq!(
        v["dialect"]["evidence"],
        "Pebble's EOF trailer at offset 94"
    );
}

#[test]
fn cat_and_chunks_read_pebbles_wal_sync_chunks() {
    let file = data("find-val-sep-db/000007.log");
    let (code, text, err) = run(&["cat", "--format", "pebble", path_str(&file)]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.starts_with("--- offset 0; sequence 16; count 1\n  put 'ggg0\\x00' 'chicken0'\n"),
        "{text}"
    );
    assert_eq!(text.matches("--- offset").count(), 30);
    let (code, text, err) = run(&["chunks", "--format", "pebble", path_str(&file)]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.contains("    47  WAL_SYNC_FULL         28  log 7, synced to 47;"),
        "{text}"
    );
    let (_, out, _) = run(&["chunks", "--json", "--format", "pebble", path_str(&file)]);
    let first: Value = serde_json::from_str(out.lines().next().expect("a line")).expect("JSON");
    assert_eq!(first["type"], "WAL_SYNC_FULL");
    assert_eq!(first["type_byte"], 9);
    assert_eq!(first["synced_offset"], 0);
}

/// A Pebble WAL of `n` 10000-byte records (three blocks and more), record `i` written with
/// `synced(i, offset)` as the writer's synced offset.
fn big_pebble_log(n: usize, synced: impl Fn(usize, u64) -> u64) -> Vec<u8> {
    let mut writer = PebbleWriter::new(3);
    for i in 0..n {
        let offset = writer.log.len() as u64;
        writer.add(&vec![b'a' + i as u8; 10_000], synced(i, offset));
    }
    writer.close()
}

#[test]
fn synced_offsets_past_damage_make_it_corruption_else_a_torn_end() {
    let dir = scratch("dialects", "synced");
    // Synced after each record: the chunks of block 1 promise that block 0 was synced.
    let mut synced = big_pebble_log(8, |_, offset| offset);
    // Damage inside the second record (block 0).
    let damaged_at = 10_019 + 19 + 100;
    synced[damaged_at] ^= 1;
    let file = dir.join("000003.log");
    std::fs::write(&file, &synced).expect("scratch");
    let (code, v) = json(&["verify", "--format", "pebble", path_str(&file)]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["records"], 1, "Pebble reads no further: {v}");
    let proof = &v["pebble_synced"];
    assert_eq!(proof["damage_offset"], 10_019, "{v}");
    // The first chunk of block 1 is the fourth record's last fragment, written when the
    // writer knew the log synced to the fourth record's start.
    assert_eq!(proof["chunk"], BLOCK, "{v}");
    assert_eq!(proof["synced_offset"], 3 * 10_019, "{v}");
    let (_, text, _) = run(&["stats", "--format", "pebble", path_str(&file)]);
    assert!(
        text.contains("damage at offset 10019, as Pebble reads it: the WAL-sync chunk at offset 32768 says the log was synced to offset 30057"),
        "{text}"
    );

    // Never synced (a WAL written without syncs, or whose syncs never returned): the same
    // damage is the log's torn end, as Pebble's reader takes it.
    let mut unsynced = big_pebble_log(8, |_, _| 0);
    unsynced[damaged_at] ^= 1;
    std::fs::write(&file, &unsynced).expect("scratch");
    let (code, v) = json(&["verify", "--format", "pebble", path_str(&file)]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["records"], 1);
    assert_eq!(v["corruptions"], Value::Array(vec![]));
    assert_eq!(v["tail"]["offset"], 10_019, "{v}");
    assert!(v.get("pebble_synced").is_none(), "{v}");
    let (_, text, _) = run(&["verify", "--format", "pebble", path_str(&file)]);
    assert!(
        text.contains("as Pebble reads it: no WAL-sync chunk after it"),
        "{text}"
    );

    // Synced only up to the damaged record: nothing after it promises its bytes.
    let mut partly = big_pebble_log(8, |i, offset| if i < 2 { offset } else { 10_019 });
    partly[damaged_at] ^= 1;
    std::fs::write(&file, &partly).expect("scratch");
    let (code, v) = json(&["verify", "--format", "pebble", path_str(&file)]);
    assert_eq!(code, 0, "{v}");
    let (_, text, _) = run(&["stats", "--format", "pebble", path_str(&file)]);
    assert!(
        text.contains("the log ends at offset 10019, as Pebble reads it"),
        "{text}"
    );

    // Undamaged, every record reads back.
    let clean = big_pebble_log(8, |_, offset| offset);
    let records = pebble_records(&clean, 3);
    assert_eq!(records.len(), 8);
    assert!(
        records
            .iter()
            .enumerate()
            .all(|(i, (_, r))| r == &vec![b'a' + i as u8; 10_000])
    );
}

/// A RocksDB log of legacy chunks: a timestamp-size record (column family 0, 8-byte
/// timestamps), a write batch, a predecessor-WAL record, an unknown type 0x85, a write batch.
fn rocksdb_legacy_log() -> Vec<u8> {
    let mut log = chunk(10, None, None, &[0, 0, 0, 0, 8, 0]);
    log.extend(chunk(1, None, None, &batch(5, b"key", b"value")));
    let mut predecessor = Vec::new();
    for word in [41u64, 200, 99] {
        predecessor.extend_from_slice(&word.to_le_bytes());
    }
    log.extend(chunk(130, None, None, &predecessor));
    log.extend(chunk(0x85, None, None, b"a newer writer's"));
    log.extend(chunk(1, None, None, &batch(6, b"other", b"v")));
    log
}

/// A one-put write batch whose user key ends in an 8-byte timestamp (`u64` 7).
fn batch(sequence: u64, key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut out = sequence.to_le_bytes().to_vec();
    out.extend_from_slice(&1u32.to_le_bytes());
    out.push(1);
    out.push((key.len() + 8) as u8);
    out.extend_from_slice(key);
    out.extend_from_slice(&7u64.to_le_bytes());
    out.push(value.len() as u8);
    out.extend_from_slice(value);
    out
}

#[test]
fn rocksdb_metadata_records_are_read_not_damage() {
    let dir = scratch("dialects", "rocksdb");
    let file = dir.join("000012.log");
    std::fs::write(&file, rocksdb_legacy_log()).expect("scratch");
    let (code, v) = json(&["verify", "--format", "rocksdb", path_str(&file)]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["records"], 2);
    assert_eq!(v["dropped_bytes"], 0);
    assert_eq!(v["dialect"]["name"], "rocksdb");
    // Not damage in any recovery mode: skip reports what is skipped silently, and these are
    // records, not gaps.
    let (code, v) = json(&[
        "verify",
        "--format",
        "rocksdb",
        "--recovery",
        "skip",
        path_str(&file),
    ]);
    assert_eq!((code, &v["dropped_bytes"]), (0, &Value::from(0)), "{v}");
    let (_, v) = json(&["stats", "--format", "rocksdb", path_str(&file)]);
    assert_eq!(v["damage"]["regions"], 0, "{v}");
    // logfmt's own reading (the default) and LevelDB's know none of these types.
    for format in [&[][..], &["--format", "leveldb"][..]] {
        let mut args = vec!["verify", "--recovery", "skip"];
        args.extend_from_slice(format);
        args.push(path_str(&file));
        let (code, v) = json(&args);
        assert_eq!(code, 1, "{v}");
        let reasons: Vec<&str> = v["corruptions"]
            .as_array()
            .expect("a list")
            .iter()
            .filter_map(|c| c["reason"].as_str())
            .collect();
        assert_eq!(reasons.len(), 3, "{reasons:?}");
        assert!(reasons[0].contains("10"), "{reasons:?}");
    }
    // The chunks say what they hold.
    let (code, text, err) = run(&["chunks", "--format", "rocksdb", path_str(&file)]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("TIMESTAMP_SIZE"), "{text}");
    assert!(
        text.contains("column family 0: 8-byte timestamps"),
        "{text}"
    );
    assert!(text.contains("PREDECESSOR_WAL"), "{text}");
    assert!(
        text.contains("predecessor-WAL record: log 41, 200 bytes, last sequence number 99"),
        "{text}"
    );
    assert!(
        text.contains("ignorable type: skipped without a report"),
        "{text}"
    );
    // cat says the predecessor WAL.
    let (code, _, err) = run(&["cat", "--format", "rocksdb", path_str(&file)]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "offset 51: RocksDB's predecessor-WAL record: the WAL before this one is log 41, \
             200 bytes, last sequence number 99"
        ),
        "{err}"
    );
    // auto: a timestamp-size record is RocksDB's.
    let (_, v) = json(&["verify", "--format", "auto", path_str(&file)]);
    assert_eq!(v["dialect"]["name"], "rocksdb", "{v}");
    assert_eq!(
        v["dialect"]["evidence"],
        "RocksDB's timestamp-size record (type 10/11) at offset 0"
    );
}

#[test]
fn rocksdb_recyclable_metadata_records_carry_the_log_number() {
    let dir = scratch("dialects", "recyclable");
    let file = dir.join("000009.log");
    let mut log = chunk(11, Some(9), None, &[0, 0, 0, 0, 8, 0, 2, 0, 0, 0, 4, 0]);
    log.extend(chunk(5, Some(9), None, &batch(1, b"k", b"v")));
    let mut predecessor = Vec::new();
    for word in [8u64, 4096, 0] {
        predecessor.extend_from_slice(&word.to_le_bytes());
    }
    log.extend(chunk(131, Some(9), None, &predecessor));
    log.extend(chunk(5, Some(9), None, &batch(2, b"k2", b"v2")));
    std::fs::write(&file, &log).expect("scratch");
    let (code, v) = json(&["verify", "--format", "rocksdb", path_str(&file)]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["records"], 2);
    let (_, text, _) = run(&["chunks", "--format", "rocksdb", path_str(&file)]);
    assert!(text.contains("RECYCLABLE_TIMESTAMP_SIZE"), "{text}");
    assert!(
        text.contains("column family 0: 8-byte timestamps, column family 2: 4-byte timestamps"),
        "{text}"
    );
    assert!(text.contains("RECYCLABLE_PREDECESSOR_WAL"), "{text}");
    // Read as LevelDB's, recyclable chunks are of unknown types.
    let (code, _) = json(&["verify", "--format", "leveldb", path_str(&file)]);
    assert_eq!(code, 1);
}

#[test]
fn auto_says_when_the_log_does_not_tell() {
    let dir = scratch("dialects", "ambiguous");
    let file = dir.join("plain.log");
    let mut log = chunk(1, None, None, b"foo");
    log.extend(chunk(1, None, None, b"bar"));
    assert_eq!(
        &log[..10],
        &[0xdd, 0x5f, 0xb3, 0x7a, 3, 0, 1, b'f', b'o', b'o']
    );
    std::fs::write(&file, &log).expect("scratch");
    let (code, v) = json(&["verify", "--format", "auto", path_str(&file)]);
    assert_eq!(code, 0);
    assert_eq!(v["records"], 2);
    assert_eq!(v["dialect"]["name"], "ambiguous");
    assert_eq!(
        v["dialect"]["candidates"],
        serde_json::json!(["leveldb", "rocksdb", "pebble"])
    );
    let (_, text, _) = run(&["verify", "--format", "auto", path_str(&file)]);
    assert!(
        text.contains("dialect: ambiguous (auto: leveldb, rocksdb, pebble read this log alike"),
        "{text}"
    );
    // Recyclable chunks alone: RocksDB's or Pebble's.
    let file = dir.join("000004.log");
    std::fs::write(&file, chunk(5, Some(4), None, b"x")).expect("scratch");
    let (code, v) = json(&["verify", "--format", "auto", path_str(&file)]);
    assert_eq!(code, 0);
    assert_eq!(v["records"], 1);
    assert_eq!(
        v["dialect"]["candidates"],
        serde_json::json!(["rocksdb", "pebble"])
    );
    // No --format: nothing said.
    let (_, v) = json(&["verify", path_str(&dir.join("plain.log"))]);
    assert!(v.get("dialect").is_none(), "{v}");
}

#[test]
fn timestamps_are_shown_apart_from_user_keys_after_a_timestamp_size_record() {
    let dir = scratch("dialects", "timestamps");
    let file = dir.join("000012.log");
    std::fs::write(&file, rocksdb_legacy_log()).expect("scratch");
    let (code, text, err) = run(&["cat", "--format", "rocksdb", path_str(&file)]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.contains("  put 'key' ts '\\x07\\x00\\x00\\x00\\x00\\x00\\x00\\x00' 'value'\n"),
        "{text}"
    );
    let (_, out, _) = run(&[
        "cat",
        "--output",
        "json",
        "--format",
        "rocksdb",
        path_str(&file),
    ]);
    let first: Value = serde_json::from_str(out.lines().next().expect("a line")).expect("JSON");
    assert_eq!(first["ops"][0]["key"], "6b6579");
    assert_eq!(first["ops"][0]["timestamp"], "0700000000000000");
    // Without RocksDB's reading, the key is the whole key.
    let (_, out, _) = run(&[
        "cat",
        "--output",
        "json",
        "--format",
        "legacy",
        "--ignorable-types",
        "skip",
        path_str(&file),
    ]);
    let first: Value = serde_json::from_str(out.lines().next().expect("a line")).expect("JSON");
    assert_eq!(first["ops"][0]["key"], "6b65790700000000000000");
}

#[test]
fn pebble_batches_are_decoded_with_pebbles_key_kinds() {
    // Pebble's `mixed` test database: 26 sets and three range-key operations in one batch.
    let file = data("mixed/000002.log");
    let (code, text, err) = run(&["cat", "--format", "pebble", path_str(&file)]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.starts_with("--- offset 0; sequence 10; count 29\n  put 'a@1' ''\n"),
        "{text}"
    );
    for kind in ["range_key_set", "range_key_unset", "range_key_delete"] {
        assert_eq!(text.matches(&format!("  {kind} ")).count(), 1, "{text}");
    }
    let (code, v) = json(&["stats", "--format", "pebble", path_str(&file)]);
    assert_eq!(code, 0);
    assert_eq!(v["content"]["kind"], "pebble_batch");
    assert_eq!(v["content"]["counts"]["put"], 26);
    assert_eq!(v["content"]["counts"]["range_key_set"], 1);
    // Read as RocksDB's batches, tag 21 is no RocksDB tag's layout: the batch does not decode.
    let (_, v) = json(&[
        "verify",
        "--format",
        "rocksdb",
        "--decode",
        "write-batch",
        path_str(&file),
    ]);
    assert!(
        v.get("undecoded").is_some() || v.get("unknown_tags").is_some(),
        "{v}"
    );
}

/// The last JSON line of `logfmt ARGS --json` (the summary of `chunks`).
fn last_json_line(args: &[&str]) -> (i32, Value, String) {
    let mut args = args.to_vec();
    args.push("--json");
    let (code, out, err) = run(&args);
    let last = out.lines().last().unwrap_or_default();
    let value = serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("logfmt {args:?}: not JSON ({e}): {out}{err}"));
    (code, value, err)
}

/// Pebble's own WAL (`find-val-sep-db/000007.log`, 30 batches in one block), its records
/// written again by Pebble's writer rules and `more` records of 10000 bytes after them (each
/// synced to its own offset), then the EOF trailer: the real log's bytes, then later blocks
/// whose WAL-sync chunks say the log was synced past them.
fn pebbles_wal_extended(more: usize) -> (Vec<u8>, Vec<u64>) {
    let real = std::fs::read(data("find-val-sep-db/000007.log")).expect("test data");
    let records = pebble_records(&real, 7);
    let mut writer = PebbleWriter::new(7);
    for (offset, record) in &records {
        writer.add(record, *offset);
    }
    // Byte for byte Pebble's, but for the EOF trailer it ends with.
    assert_eq!(writer.log[..], real[..real.len() - 11]);
    for i in 0..more {
        let offset = writer.log.len() as u64;
        writer.add(&vec![b'a' + i as u8; 10_000], offset);
    }
    let offsets = records.iter().map(|(offset, _)| *offset).collect();
    (writer.close(), offsets)
}

/// What every reading command says of a Pebble WAL's end, read as Pebble's: `verify`, `cat`,
/// `stats`, `map` and `chunks` (text and --json) give the one verdict.
struct Verdicts {
    verify: Value,
    verify_code: i32,
    verify_text: String,
    stats: Value,
    stats_text: String,
    map: Value,
    map_text: String,
    chunks: Value,
    chunks_err: String,
    cat_records: usize,
    cat_err: String,
    cat_absolute_code: i32,
}

fn verdicts(file: &Path) -> Verdicts {
    let f = path_str(file);
    let (verify_code, verify) = json(&["verify", "--format", "pebble", f]);
    let (_, verify_text, _) = run(&["verify", "--format", "pebble", f]);
    let (_, stats) = json(&["stats", "--format", "pebble", f]);
    let (_, stats_text, _) = run(&["stats", "--format", "pebble", f]);
    let (_, map) = json(&["map", "--format", "pebble", f]);
    let (_, map_text, _) = run(&["map", "--width", "64", "--format", "pebble", f]);
    let (_, chunks, chunks_err) = last_json_line(&["chunks", "--format", "pebble", f]);
    let (code, out, cat_err) = run(&["cat", "--json", "--format", "pebble", f]);
    assert_eq!(code, 0, "{cat_err}");
    let (cat_absolute_code, _, _) = run(&[
        "cat",
        "--recovery",
        "absolute",
        "--format",
        "pebble",
        "--output",
        "json",
        f,
    ]);
    Verdicts {
        verify,
        verify_code,
        verify_text,
        stats,
        stats_text,
        map,
        map_text,
        chunks,
        chunks_err,
        cat_records: out.lines().count(),
        cat_err,
        cat_absolute_code,
    }
}

#[test]
fn a_pebble_wals_end_is_torn_or_corrupt_alike_in_every_command() {
    let dir = scratch("dialects", "pebble-end");
    let file = dir.join("000007.log");

    // Pebble's own WAL: clean in every command.
    std::fs::copy(data("find-val-sep-db/000007.log"), &file).expect("scratch");
    let v = verdicts(&file);
    assert_eq!(v.verify_code, 0, "{}", v.verify);
    assert_eq!(v.cat_records, 30);
    assert_eq!(v.stats["damage"]["regions"], 0, "{}", v.stats);
    assert_eq!(v.map["corruptions"], 0, "{}", v.map);
    assert!(!v.cat_err.contains("as Pebble reads it"), "{}", v.cat_err);

    // A torn tail: the real log cut inside its last record. Nothing after it: torn.
    let real = std::fs::read(data("find-val-sep-db/000007.log")).expect("test data");
    let offsets: Vec<u64> = pebble_records(&real, 7).iter().map(|(o, _)| *o).collect();
    let last = offsets[29];
    std::fs::write(&file, &real[..last as usize + 25]).expect("scratch");
    let torn = verdicts(&file);
    // A byte flipped in the last record: damage, but nothing after it says it was synced.
    let mut flipped = real.clone();
    flipped[last as usize + 25] ^= 0x40;
    std::fs::write(&file, &flipped).expect("scratch");
    let flipped_v = verdicts(&file);
    for (what, v, bytes) in [
        ("cut", &torn, 25),
        ("flipped", &flipped_v, real.len() as u64 - last),
    ] {
        assert_eq!(v.verify_code, 0, "{what}: {}", v.verify);
        assert_eq!(v.verify["corruptions"], Value::Array(vec![]), "{what}");
        assert_eq!(v.verify["tail"]["offset"], last, "{what}: {}", v.verify);
        assert_eq!(v.verify["tail"]["bytes"], bytes, "{what}: {}", v.verify);
        assert!(v.verify.get("pebble_synced").is_none(), "{what}");
        let line = format!("the log ends at offset {last}, as Pebble reads it");
        assert!(v.verify_text.contains(&line), "{what}: {}", v.verify_text);
        assert_eq!(v.stats["damage"]["regions"], 0, "{what}: {}", v.stats);
        assert_eq!(v.stats["damage"]["bytes"], 0, "{what}: {}", v.stats);
        assert_eq!(v.stats["tail"]["offset"], last, "{what}: {}", v.stats);
        assert!(v.stats.get("pebble_synced").is_none(), "{what}");
        assert!(v.stats_text.contains(&line), "{what}: {}", v.stats_text);
        assert_eq!(v.map["corruptions"], 0, "{what}: {}", v.map);
        assert_eq!(v.map["records"], v.verify["records"], "{what}: {}", v.map);
        assert_eq!(v.map["damage"], Value::Array(vec![]), "{what}");
        assert_eq!(v.map["tail"]["kind"], "torn", "{what}: {}", v.map);
        assert_eq!(v.map["tail"]["offset"], last, "{what}: {}", v.map);
        assert!(v.map.get("pebble_synced").is_none(), "{what}");
        assert!(v.map_text.contains(&line), "{what}: {}", v.map_text);
        assert!(
            v.map_text.contains("no corruption"),
            "{what}: {}",
            v.map_text
        );
        assert_eq!(v.chunks["damaged_bytes"], 0, "{what}: {}", v.chunks);
        assert!(v.chunks_err.contains(&line), "{what}: {}", v.chunks_err);
        // cat prints the records before the torn end, and says why it stops there.
        assert_eq!(v.cat_records, 29, "{what}: {}", v.cat_err);
        assert!(v.cat_err.contains(&line), "{what}: {}", v.cat_err);
        assert!(!v.cat_err.contains("dropped"), "{what}: {}", v.cat_err);
        assert_eq!(v.cat_absolute_code, 0, "{what}: a torn end is no damage");
    }

    // Damage in the real log's records, with later blocks whose WAL-sync chunks say the log
    // was synced past it: corruption, in every command.
    let (mut extended, offsets) = pebbles_wal_extended(7);
    assert!(extended.len() > 2 * BLOCK);
    let damaged = offsets[5];
    extended[damaged as usize + 19 + 2] ^= 1;
    std::fs::write(&file, &extended).expect("scratch");
    let v = verdicts(&file);
    assert_eq!(v.verify_code, 1, "{}", v.verify);
    let proof = &v.verify["pebble_synced"];
    assert_eq!(proof["damage_offset"], damaged, "{}", v.verify);
    assert_eq!(proof["chunk"], BLOCK, "{}", v.verify);
    assert!(
        proof["synced_offset"].as_u64() > Some(damaged),
        "{}",
        v.verify
    );
    let line = format!(
        "damage at offset {damaged}, as Pebble reads it: the WAL-sync chunk at offset {BLOCK}"
    );
    assert!(v.verify_text.contains(&line), "{}", v.verify_text);
    for (what, json) in [("stats", &v.stats), ("map", &v.map)] {
        assert_eq!(json["pebble_synced"], *proof, "{what}: {json}");
    }
    assert!(
        v.stats["damage"]["regions"].as_u64() > Some(0),
        "{}",
        v.stats
    );
    assert!(v.stats_text.contains(&line), "{}", v.stats_text);
    assert_eq!(v.map["corruptions"], 1, "{}", v.map);
    assert_eq!(v.map["records"], v.verify["records"], "{}", v.map);
    assert_eq!(v.map["damage"][0]["offset"], damaged, "{}", v.map);
    assert!(v.map_text.contains(&line), "{}", v.map_text);
    assert!(v.chunks["damaged_bytes"].as_u64() > Some(0), "{}", v.chunks);
    assert!(v.chunks_err.contains(&line), "{}", v.chunks_err);
    // Pebble reads no further than the damage: the records before it.
    assert_eq!(v.cat_records, 5, "{}", v.cat_err);
    assert_eq!(v.verify["records"], 5, "{}", v.verify);
    assert!(v.cat_err.contains(&line), "{}", v.cat_err);
    assert!(
        v.cat_err.contains(&format!("offset {damaged}")),
        "{}",
        v.cat_err
    );
    assert_ne!(
        v.cat_absolute_code, 0,
        "corruption fails --recovery absolute"
    );
}

/// A Pebble WAL (log 3) whose first record leaves `left` bytes (fewer than 19) at the end of
/// block 0 — zeros, as Pebble's writer leaves them — then a record in block 1, written when the
/// writer knew the log synced to block 1's start.
fn pebble_log_with_block_end(left: usize) -> Vec<u8> {
    let mut writer = PebbleWriter::new(3);
    writer.add(&vec![b'a'; BLOCK - 19 - left], 0);
    assert_eq!(writer.log.len(), BLOCK);
    writer.add(b"second", BLOCK as u64);
    writer.close()
}

#[test]
fn pebbles_short_block_ends_read_as_pebble_reads_them() {
    let dir = scratch("dialects", "block-end");
    let file = dir.join("000003.log");
    let f = path_str(&file);
    // Zeros, as Pebble's writer pads a block: clean.
    for left in [7, 12, 18] {
        std::fs::write(&file, pebble_log_with_block_end(left)).expect("scratch");
        let (code, v) = json(&["verify", "--format", "pebble", f]);
        assert_eq!((code, &v["records"]), (0, &Value::from(2)), "{left}: {v}");
    }
    // A zero header with fewer than 11 bytes left: Pebble skips the rest, whatever it holds.
    let mut log = pebble_log_with_block_end(10);
    log[BLOCK - 1] = 0x55;
    std::fs::write(&file, &log).expect("scratch");
    let (code, v) = json(&["verify", "--format", "pebble", f]);
    assert_eq!((code, &v["records"]), (0, &Value::from(2)), "{v}");

    // 12 bytes left, not all zeros after a zero header: Pebble's zeroed chunk. Block 1's
    // chunk says the log was synced past it: corruption, reported as logfmt reports damage.
    let mut log = pebble_log_with_block_end(12);
    log[BLOCK - 1] = 0x55;
    std::fs::write(&file, &log).expect("scratch");
    let (code, v) = json(&["verify", "--format", "pebble", f]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["records"], 1, "{v}");
    let damage = &v["corruptions"][0];
    assert_eq!(damage["offset"], BLOCK - 12, "{v}");
    assert_eq!(damage["bytes"], 12, "{v}");
    assert_eq!(damage["reason"], "bad block trailer", "{v}");
    assert_eq!(v["pebble_synced"]["chunk"], BLOCK, "{v}");
    let (_, text, _) = run(&["verify", "--format", "pebble", f]);
    assert!(
        text.contains("offset 32756: 12 bytes dropped: bad block trailer"),
        "{text}"
    );
    let (_, out, _) = run(&["chunks", "--json", "--format", "pebble", f]);
    assert!(out.contains("\"bad_trailer\""), "{out}");
    // auto finds the log Pebble's, and reads it so.
    let (_, v) = json(&["stats", "--format", "auto", f]);
    assert_eq!(v["damage"]["regions"], 1, "{v}");
    assert_eq!(v["pebble_synced"]["damage_offset"], BLOCK - 12, "{v}");

    // A recyclable header with 9 bytes left, cut by the block's end: Pebble's invalid chunk.
    let mut log = pebble_log_with_block_end(9);
    log[BLOCK - 9..BLOCK - 2].copy_from_slice(&[1, 2, 3, 4, 0, 0, 5]);
    std::fs::write(&file, &log).expect("scratch");
    let (code, v) = json(&["verify", "--format", "pebble", f]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["corruptions"][0]["reason"], "bad block trailer", "{v}");
    assert_eq!(v["corruptions"][0]["offset"], BLOCK - 9, "{v}");
}
