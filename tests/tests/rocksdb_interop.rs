//! Interoperability with real RocksDB (Debian's `rocksdb-tools` and `librocksdb-dev`), both
//! ways:
//!
//! - logfmt writes write-ahead logs of RocksDB `WriteBatch`es — legacy and recyclable (the log
//!   number is the file name's), values up to 300 KB so records fragment across blocks — and
//!   RocksDB reads every batch back: `ldb dump_wal --walfile=…/000042.log --header
//!   --print_value` lists each one with its sequence number, count, size, offset, keys and
//!   values, with no corruption; and RocksDB recovers a database from such a log, with
//!   absolute consistency, and returns every key.
//! - RocksDB writes a database with `recycle_log_file_num = 2` (`interop/rocksdb_wal_writer.cc`):
//!   batches, a flush, more batches, a flush, so the next log reuses (recycles) the first
//!   one's file, and fewer batches into it; then the process ends without closing the
//!   database, as a crash would, so the recycled file keeps the earlier use's bytes after the
//!   new records. logfmt reads every log back, with the log number from its name and with
//!   `Auto`: exactly the batches RocksDB wrote, and the stale tail of the earlier use ends
//!   the log cleanly (`LogEnd::OldRecord`, no damage) — both where the old chunks resume at a
//!   chunk boundary and where they resume mid-chunk. The test checks the stale bytes are
//!   really there (a chunk with the old log number), else it would prove nothing.
//!
//! The helper is compiled here with `c++ … -lrocksdb`. These tests are ignored by a plain
//! `cargo test`; `cargo xtask interop` installs RocksDB and runs them. Without a compiler,
//! RocksDB or `ldb` they fail, saying what is missing.

mod interop_tools;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use logfmt_core::parts::block::{ChunkRules, Parsed, parse_chunk};
use logfmt_std::{
    LogReaderOptions, LogWriter, LogWriterOptions, TornTailPolicy,
    advanced::{
        BLOCK_SIZE, Bounded, ChunkFormat, Ending, Format, Item, LogEnd, LogReader, ReadFormat,
        ReadOptions, Reader, SliceSource, WriteOptions,
    },
};

use interop_tools::spec;
use logfmt_tests::write_batch::{Batch, Op, apply, decode, encode, numbered};

const MISSING: &str = "the RocksDB interop tests need a C++ compiler and Debian's \
                       librocksdb-dev and rocksdb-tools (`cargo xtask interop` installs them)";

// ------------------------------------------------------------------------- tools

/// The compiled helper, built once per test run.
fn helper() -> &'static Path {
    static HELPER: OnceLock<PathBuf> = OnceLock::new();
    HELPER.get_or_init(|| {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("interop/rocksdb_wal_writer.cc");
        let binary = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rocksdb_wal_writer");
        let output = Command::new("c++")
            .args(["-std=c++17", "-O1", "-o"])
            .arg(&binary)
            .arg(&source)
            .arg("-lrocksdb")
            .output();
        match output {
            Err(e) => panic!("cannot run the C++ compiler `c++` ({e}): {MISSING}"),
            Ok(out) if !out.status.success() => panic!(
                "compiling {} against RocksDB failed: {MISSING}\n{}",
                source.display(),
                String::from_utf8_lossy(&out.stderr)
            ),
            Ok(_) => binary,
        }
    })
}

/// Runs the helper; panics with its message if it fails.
fn wal_writer(args: &[&Path]) -> String {
    let out = Command::new(helper())
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running the RocksDB helper: {e}"));
    assert!(
        out.status.success(),
        "wal_writer {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `ldb dump_wal --header --print_value` on `wal`.
fn ldb_dump_wal(wal: &Path) -> Output {
    let mut walfile = std::ffi::OsString::from("--walfile=");
    walfile.push(wal);
    Command::new("ldb")
        .arg("dump_wal")
        .arg(walfile)
        .args(["--header", "--print_value"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run RocksDB's `ldb` ({e}): {MISSING}"))
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("rocksdb_interop")
        .join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// The write-ahead logs of `dir` (`NNNNNN.log`) and their numbers, in number order.
fn wals(dir: &Path) -> Vec<(u64, PathBuf)> {
    let mut found: Vec<(u64, PathBuf)> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let path = entry.path();
            let number = path
                .file_name()?
                .to_str()?
                .strip_suffix(".log")?
                .parse()
                .ok()?;
            Some((number, path))
        })
        .collect();
    found.sort();
    found
}

// ------------------------------------------------------------------------- batches

/// Bytes derived from a seed, so that every value differs.
fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

/// Batches of many shapes: empty batches, deletes, small and large puts (up to 300 KB, so
/// log records span several blocks), many-operation batches, empty keys and values.
fn batches(seed: u64, count: usize) -> Vec<Vec<Op>> {
    let sizes = [
        0usize, 1, 10, 100, 1000, 32_000, 32_757, 32_768, 40_000, 100_000, 300_000,
    ];
    (0..count)
        .map(|i| {
            let key =
                |j: usize| format!("key-{seed}-{:05}", (i * 7 + j) % (count * 3)).into_bytes();
            match i % 6 {
                0 => Vec::new(),
                1 => vec![Op::Delete(key(0)), Op::Put(Vec::new(), Vec::new())],
                2 => (0..50)
                    .map(|j| Op::Put(key(j), bytes(j * 3, seed + (i * 100 + j) as u64)))
                    .collect(),
                3 => vec![
                    Op::Put(key(1), bytes(sizes[i % sizes.len()], seed + i as u64)),
                    Op::Delete(key(2)),
                ],
                _ => vec![Op::Put(
                    key(0),
                    bytes(sizes[(i / 2) % sizes.len()], seed ^ i as u64),
                )],
            }
        })
        .collect()
}

// ------------------------------------------------------------------------- ldb

/// A batch as `ldb dump_wal --header --print_value` lists it: sequence, count, byte size,
/// offset, operations.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Listed {
    sequence: u64,
    count: u64,
    size: u64,
    offset: u64,
    ops: Vec<Op>,
}

fn unhex(token: &str) -> Vec<u8> {
    let digits = token
        .strip_prefix("0x")
        .unwrap_or_else(|| panic!("not hex: {token}"));
    (0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&digits[i..i + 2], 16).expect("hex digits"))
        .collect()
}

/// Parses `ldb dump_wal`'s output: a header line, then one line per batch. Panics on
/// anything else, a corruption report on standard error included.
fn listed(out: &Output, wal: &Path) -> Vec<Listed> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "ldb on {}: {stderr}", wal.display());
    assert!(
        !stderr.contains("Corruption") && stderr.trim().is_empty(),
        "ldb reports on {}: {stderr}",
        wal.display()
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    assert_eq!(
        lines.next().map(str::trim_end),
        Some("Sequence,Count,ByteSize,Physical Offset,Key(s) : value"),
        "ldb's header"
    );
    lines
        .map(|line| {
            let mut fields = line.splitn(5, ',');
            let mut number = || {
                fields
                    .next()
                    .and_then(|f| f.parse().ok())
                    .unwrap_or_else(|| panic!("ldb line: {line:.200}"))
            };
            let (sequence, count, size, offset) = (number(), number(), number(), number());
            let mut tokens = fields.next().unwrap_or_default().split_whitespace();
            let mut ops = Vec::new();
            while let Some(op) = tokens.next() {
                assert_eq!(tokens.next(), Some(":"), "{line:.200}");
                let key = unhex(tokens.next().unwrap_or_default());
                ops.push(match op {
                    "PUT(0)" => {
                        assert_eq!(tokens.next(), Some(":"), "{line:.200}");
                        Op::Put(key, unhex(tokens.next().unwrap_or_default()))
                    }
                    "DELETE(0)" => Op::Delete(key),
                    other => panic!("unexpected operation {other} in {line:.200}"),
                });
            }
            Listed {
                sequence,
                count,
                size,
                offset,
                ops,
            }
        })
        .collect()
}

// ------------------------------------------------------------------------- reading

/// Every record of a log in memory, read with `format` by the std reader (LevelDB's
/// tolerance), asserting that nothing was reported; and how it ended.
fn read_wal(data: &[u8], format: ReadFormat, what: &str) -> (Vec<(u64, Vec<u8>)>, Option<Ending>) {
    let options = LogReaderOptions::new().read(ReadOptions::new().format(format));
    let mut reader = LogReader::from_slice(data, &options);
    let mut records = Vec::new();
    loop {
        match reader.next_bounded(usize::MAX) {
            Ok(Some(Bounded::Record(r))) => records.push((r.offset, r.data.to_vec())),
            Ok(None) => break,
            Ok(Some(other)) => panic!("{what} ({format:?}): {other:?}"),
            Err(e) => panic!("{what} ({format:?}): {e}"),
        }
    }
    assert_eq!(reader.tail(), None, "{what}: a torn tail");
    (records, reader.ending())
}

/// The records and drop reports of the core reader (exactly LevelDB's and RocksDB's chunk
/// rules, no recovery policy), and its end.
fn read_core(
    data: &[u8],
    format: ReadFormat,
) -> (
    Vec<Vec<u8>>,
    Vec<logfmt_std::advanced::Corruption>,
    Option<LogEnd>,
) {
    let mut buffer = vec![0u8; 1 << 20];
    let options = ReadOptions::new().format(format);
    let mut reader = Reader::with_options(SliceSource::new(data), &mut buffer, &options);
    let (mut records, mut drops) = (Vec::new(), Vec::new());
    while let Some(item) = reader.next().unwrap_or_else(|never| match never {}) {
        match item {
            Item::Record(r) => records.push(r.data.to_vec()),
            Item::Corruption(c) => drops.push(c),
            Item::Oversized(o) => panic!("{o:?}"),
            Item::Coded(pack) => panic!("{pack:?}"),
            other => panic!("not expected here: {other:?}"),
        }
    }
    (records, drops, reader.end())
}

fn decode_all(records: &[(u64, Vec<u8>)], what: &str) -> Vec<Batch> {
    records
        .iter()
        .map(|(offset, r)| {
            decode(r).unwrap_or_else(|| panic!("{what}: the record at {offset} is no WriteBatch"))
        })
        .collect()
}

// ------------------------------------------------------------------------- logfmt writes

/// Writes `batches` as a log at `path` in `format`; returns each record's offset.
fn write_wal(path: &Path, format: Format, batches: &[Batch]) -> Vec<u64> {
    let mut writer = LogWriter::create(
        path,
        &LogWriterOptions::new().write(WriteOptions::new().format(format)),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let offsets = batches
        .iter()
        .map(|b| {
            writer
                .add_record(&encode(b))
                .unwrap_or_else(|e| panic!("{e}"))
                .offset
        })
        .collect();
    writer.close().unwrap_or_else(|e| panic!("{e}"));
    offsets
}

#[test]
#[ignore = "needs RocksDB: run with cargo xtask interop"]
fn logfmt_writes_rocksdb_reads() {
    for (name, format) in [
        ("legacy", Format::Legacy),
        ("recyclable", Format::Recyclable { log_number: 42 }),
    ] {
        let dir = scratch(&format!("logfmt_writes_{name}"));
        let wal = dir.join("000042.log");
        let ours = numbered(&batches(1, 60), 1);
        let offsets = write_wal(&wal, format, &ours);
        // Records did fragment across blocks.
        assert!(ours.iter().any(|b| encode(b).len() > 3 * BLOCK_SIZE));

        let out = ldb_dump_wal(&wal);
        let got = listed(&out, &wal);
        let expected: Vec<Listed> = ours
            .iter()
            .zip(&offsets)
            .map(|(batch, &offset)| Listed {
                sequence: batch.sequence,
                count: batch.ops.len() as u64,
                size: encode(batch).len() as u64,
                offset,
                ops: batch.ops.clone(),
            })
            .collect();
        assert_eq!(got.len(), expected.len(), "{name}: ldb lists every batch");
        for (got, expected) in got.iter().zip(&expected) {
            assert!(
                got == expected,
                "{name}: ldb lists batch {} differently",
                expected.sequence
            );
        }
    }
}

#[test]
#[ignore = "needs RocksDB: run with cargo xtask interop"]
fn rocksdb_recovers_a_database_from_a_log_logfmt_wrote() {
    for recyclable in [false, true] {
        // RocksDB creates an empty database (and an empty log); logfmt writes the log.
        let dir = scratch(&format!("recovers_{recyclable}")).join("db");
        let spec_path = dir.with_extension("spec");
        fs::write(&spec_path, spec(&[])).unwrap_or_else(|e| panic!("{e}"));
        wal_writer(&[Path::new("write"), &dir, &spec_path, Path::new("close")]);
        let logs = wals(&dir);
        assert_eq!(logs.len(), 1, "{logs:?}");
        let (number, wal) = &logs[0];
        assert_eq!(fs::metadata(wal).map(|m| m.len()).ok(), Some(0));
        fs::remove_file(wal).unwrap_or_else(|e| panic!("{e}"));
        let format = if recyclable {
            Format::Recyclable {
                log_number: *number as u32,
            }
        } else {
            Format::Legacy
        };
        let ours = numbered(&batches(2, 60), 1);
        write_wal(wal, format, &ours);

        let out = dir.with_extension("contents");
        wal_writer(&[Path::new("read"), &dir, &out]);
        let data = fs::read(&out).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
        let mut rest = &data[..];
        let take = |rest: &mut &[u8]| {
            let (len, tail) = rest.split_first_chunk::<4>().expect("a length");
            let (item, tail) = tail.split_at(u32::from_le_bytes(*len) as usize);
            *rest = tail;
            item.to_vec()
        };
        let mut contents = BTreeMap::new();
        while !rest.is_empty() {
            let key = take(&mut rest);
            contents.insert(key, take(&mut rest));
        }
        let mut expected = BTreeMap::new();
        apply(&mut expected, &ours);
        assert!(expected.len() > 10);
        assert!(
            contents == expected,
            "RocksDB recovered other contents (recyclable: {recyclable})"
        );
    }
}

// ------------------------------------------------------------------------- appending

/// An empty database RocksDB created, its log removed for logfmt to write: the database
/// directory, the log's path and the format logfmt writes it in.
fn empty_database(name: &str, recyclable: bool) -> (PathBuf, PathBuf, Format) {
    let dir = scratch(name).join("db");
    let spec_path = dir.with_extension("spec");
    fs::write(&spec_path, spec(&[])).unwrap_or_else(|e| panic!("{e}"));
    wal_writer(&[Path::new("write"), &dir, &spec_path, Path::new("close")]);
    let logs = wals(&dir);
    assert_eq!(logs.len(), 1, "{logs:?}");
    let (number, wal) = logs[0].clone();
    fs::remove_file(&wal).unwrap_or_else(|e| panic!("{e}"));
    let format = if recyclable {
        Format::Recyclable {
            log_number: number as u32,
        }
    } else {
        Format::Legacy
    };
    (dir, wal, format)
}

/// Every key and value RocksDB recovers from the database in `dir` in WAL recovery `mode`,
/// opening a copy of it named `copy` (opening a database replays its log into a table and
/// retires the log: the original stays as it is, for the next reading).
fn recovered(dir: &Path, mode: &str, copy: &str) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let opened = dir.with_extension(copy);
    let _ = fs::remove_dir_all(&opened);
    fs::create_dir_all(&opened).unwrap_or_else(|e| panic!("{}: {e}", opened.display()));
    for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let entry = entry.unwrap_or_else(|e| panic!("{e}"));
        fs::copy(entry.path(), opened.join(entry.file_name()))
            .unwrap_or_else(|e| panic!("{}: {e}", entry.path().display()));
    }
    let out = opened.with_extension(format!("{copy}.contents"));
    wal_writer(&[Path::new("read"), &opened, &out, Path::new(mode)]);
    let data = fs::read(&out).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    let mut rest = &data[..];
    let take = |rest: &mut &[u8]| {
        let (len, tail) = rest.split_first_chunk::<4>().expect("a length");
        let (item, tail) = tail.split_at(u32::from_le_bytes(*len) as usize);
        *rest = tail;
        item.to_vec()
    };
    let mut contents = BTreeMap::new();
    while !rest.is_empty() {
        let key = take(&mut rest);
        contents.insert(key, take(&mut rest));
    }
    contents
}

/// A batch (sequence 1) whose record is `len` bytes long: one put of key `k`.
fn batch_of_len(len: usize) -> Batch {
    // 12 bytes of header, the tag, the key's length and the key, the value's length (a
    // 3-byte varint for these sizes) and the value.
    let batch = Batch {
        sequence: 1,
        ops: vec![Op::Put(b"k".to_vec(), vec![b'v'; len - 18])],
    };
    assert_eq!(encode(&batch).len(), len);
    batch
}

/// A log that ends `left` bytes before its first block's end, with `garbage` bytes after it
/// (as a crash, or another writer, left them), continued by logfmt: RocksDB's default
/// recovery (point-in-time, which stops at the first damage) and absolute consistency
/// recover every batch — old and new. Where the garbage is in a recyclable log's trailer
/// (7 to 10 bytes left, 5 or 6 bytes of garbage), continuing at the file's length, as
/// LevelDB's writer does, makes RocksDB lose the new batches: checked too, so that the test
/// is known to see a loss.
#[test]
#[ignore = "needs RocksDB: run with cargo xtask interop"]
fn rocksdb_recovers_every_batch_of_a_log_appended_after_trailer_garbage() {
    for recyclable in [false, true] {
        for (left, garbage) in [(7, 5), (7, 6), (8, 5), (9, 6), (10, 5), (10, 6), (3, 2)] {
            let name = format!("trailer_{recyclable}_{left}_{garbage}");
            let (dir, wal, format) = empty_database(&name, recyclable);
            let header = if recyclable { 11 } else { 7 };
            let first = batch_of_len(BLOCK_SIZE - header - left);
            write_wal(&wal, format, std::slice::from_ref(&first));
            let mut log = fs::read(&wal).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(log.len(), BLOCK_SIZE - left, "{name}");
            log.extend((1..=garbage as u8).map(|i| i * 0x11));
            fs::write(&wal, &log).unwrap_or_else(|e| panic!("{e}"));
            let more = numbered(&batches(7, 12), 2);
            let mut expected = BTreeMap::new();
            apply(&mut expected, std::slice::from_ref(&first));
            apply(&mut expected, &more);

            let in_trailer = recyclable && (7..=10).contains(&left);
            if in_trailer {
                // Continued at the file's length, after the garbage: RocksDB loses the new
                // batches.
                let options = LogWriterOptions::new()
                    .write(WriteOptions::new().format(format).start(log.len() as u64));
                let mut writer = LogWriter::new(Vec::new(), &options);
                for batch in &more {
                    writer
                        .add_record(&encode(batch))
                        .unwrap_or_else(|e| panic!("{e}"));
                }
                let mut after = log.clone();
                after.extend(writer.close().unwrap_or_else(|e| panic!("{e}")));
                fs::write(&wal, &after).unwrap_or_else(|e| panic!("{e}"));
                let lost = recovered(&dir, "point-in-time", "after_garbage");
                assert!(
                    lost.len() < expected.len(),
                    "{name}: RocksDB was expected to lose the batches written after the garbage"
                );
                fs::write(&wal, &log).unwrap_or_else(|e| panic!("{e}"));
            }

            // logfmt refuses to continue after garbage a reader would take for a header, and
            // cuts it off when asked.
            let writer_options = LogWriterOptions::new().write(WriteOptions::new().format(format));
            let refused = LogWriter::append(&wal, &writer_options.clone());
            let mut writer = match refused {
                Ok((writer, report)) => {
                    assert!(!in_trailer, "{name}: continued after the garbage");
                    assert_eq!(report.start, log.len() as u64, "{name}");
                    writer
                }
                Err(logfmt_std::Error::TornTail { offset, bytes, .. }) => {
                    assert_eq!(fs::read(&wal).ok().as_deref(), Some(&log[..]), "{name}");
                    assert_eq!(
                        (offset, bytes),
                        ((BLOCK_SIZE - left) as u64, garbage as u64)
                    );
                    let truncate = writer_options.torn_tail(TornTailPolicy::Truncate);
                    let (writer, report) = LogWriter::append(&wal, &truncate)
                        .unwrap_or_else(|e| panic!("{name}: {e}"));
                    assert_eq!(report.start, (BLOCK_SIZE - left) as u64, "{name}");
                    writer
                }
                Err(e) => panic!("{name}: {e}"),
            };
            for batch in &more {
                writer
                    .add_record(&encode(batch))
                    .unwrap_or_else(|e| panic!("{e}"));
            }
            writer.close().unwrap_or_else(|e| panic!("{e}"));
            for mode in ["point-in-time", "absolute"] {
                assert!(
                    recovered(&dir, mode, mode) == expected,
                    "{name}: RocksDB ({mode}) recovered other contents"
                );
            }
        }
    }
}

// ------------------------------------------------------------------------- RocksDB writes

/// What the helper printed: the options in force, and each batch's phase, log number,
/// sequence and count.
struct Written {
    recycle_log_file_num: u64,
    batches: Vec<(usize, u64, u64, usize)>,
}

fn parse_written(text: &str) -> Written {
    let mut written = Written {
        recycle_log_file_num: 0,
        batches: Vec::new(),
    };
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let number = |i: usize| -> u64 {
            fields
                .get(i)
                .and_then(|f| f.parse().ok())
                .unwrap_or_else(|| panic!("helper output: {line}"))
        };
        match fields.first() {
            Some(&"options") => written.recycle_log_file_num = number(2),
            Some(&"batch") => {
                written
                    .batches
                    .push((number(1) as usize, number(2), number(3), number(4) as usize))
            }
            Some(&"wal") => {}
            _ => panic!("helper output: {line}"),
        }
    }
    written
}

/// How a scenario ends the recycled log's use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scenario {
    /// The new records end mid-chunk of the old log: garbage to the end of that block.
    CrashMidChunk,
    /// The new records have the old ones' sizes: the old chunks resume at a chunk boundary.
    CrashAligned,
    /// RocksDB closes the log: it trims the stale bytes itself.
    Close,
}

fn rocksdb_writes(scenario: Scenario) {
    let dir = scratch(&format!("{scenario:?}")).join("db");
    let first = batches(10, 40);
    let second = batches(11, 20);
    let third = match scenario {
        Scenario::CrashAligned => {
            // The first phase's first 30 batches again, with other contents of the same sizes.
            first[..30]
                .iter()
                .map(|ops| {
                    ops.iter()
                        .map(|op| match op {
                            Op::Put(k, v) => Op::Put(k.clone(), bytes(v.len(), 99)),
                            Op::Delete(k) => Op::Delete(k.clone()),
                        })
                        .collect()
                })
                .collect()
        }
        // Records of other sizes, some over several blocks.
        _ => batches(12, 9)
            .into_iter()
            .enumerate()
            .map(|(i, mut ops)| {
                ops.push(Op::Put(b"odd".to_vec(), bytes(i % 3 * 60_000 + 777, 1)));
                ops
            })
            .collect(),
    };
    let phases = vec![first, second, third];
    let spec_path = dir.with_extension("spec");
    fs::create_dir_all(dir.parent().unwrap_or(&dir)).unwrap_or_else(|e| panic!("{e}"));
    fs::write(&spec_path, spec(&phases)).unwrap_or_else(|e| panic!("{e}"));
    let mode = if scenario == Scenario::Close {
        "close"
    } else {
        "crash"
    };
    let written = parse_written(&wal_writer(&[
        Path::new("write"),
        &dir,
        &spec_path,
        Path::new(mode),
    ]));
    assert_eq!(
        written.recycle_log_file_num, 2,
        "RocksDB turned log recycling off"
    );

    // What each log holds, by log number: the batches with their sequence numbers.
    let ops: Vec<&Vec<Op>> = phases.iter().flatten().collect();
    assert_eq!(ops.len(), written.batches.len());
    let mut expected: BTreeMap<u64, Vec<Batch>> = BTreeMap::new();
    let mut phase_log = [0u64; 3];
    for (ops, &(phase, log, sequence, count)) in ops.iter().zip(&written.batches) {
        assert_eq!(count, ops.len());
        phase_log[phase] = log;
        expected.entry(log).or_default().push(Batch {
            sequence,
            ops: (*ops).clone(),
        });
    }
    let [first_log, second_log, third_log] = phase_log;
    assert!(first_log < second_log && second_log < third_log);

    // The third log reused the first one's file: it is gone under its own name.
    let logs = wals(&dir);
    let numbers: Vec<u64> = logs.iter().map(|(n, _)| *n).collect();
    assert!(!numbers.contains(&first_log), "{numbers:?}");
    assert!(numbers.contains(&third_log), "{numbers:?}");
    assert!(phases[0].len() > phases[2].len());

    for (number, wal) in &logs {
        let what = wal.display().to_string();
        let data = fs::read(wal).unwrap_or_else(|e| panic!("{what}: {e}"));
        let log_number = *number as u32;
        let want = expected.get(number).cloned().unwrap_or_default();
        for format in [
            ReadFormat::Recyclable { log_number },
            ReadFormat::Auto { log_number: None },
            ReadFormat::Auto {
                log_number: Some(log_number),
            },
        ] {
            let (records, ending) = read_wal(&data, format, &what);
            let got = decode_all(&records, &what);
            assert!(
                got == want,
                "{what} ({format:?}): other batches than RocksDB wrote"
            );
            let stale = *number == third_log && scenario != Scenario::Close;
            match ending {
                Some(Ending::Log(LogEnd::Clean { offset })) => {
                    assert!(!stale, "{what}: the recycled log has no stale tail");
                    assert_eq!(offset, data.len() as u64, "{what}");
                }
                Some(Ending::Log(LogEnd::OldRecord {
                    offset,
                    log_number: old,
                })) => {
                    assert_eq!(*number, third_log, "{what}: only the recycled log is stale");
                    assert_ne!(scenario, Scenario::Close, "{what}");
                    assert_eq!(old, first_log as u32, "{what}: the stale log number");
                    check_stale(&data, offset, old, &what);
                    eprintln!(
                        "{what}: {} batches, then {} stale bytes of log {old} from offset {offset}",
                        got.len(),
                        data.len() as u64 - offset
                    );
                }
                other => panic!("{what} ({format:?}): ended {other:?}"),
            }
        }
        // ldb (RocksDB's reader) lists the same batches.
        let listed = listed(&ldb_dump_wal(wal), wal);
        let sequences: Vec<u64> = listed.iter().map(|l| l.sequence).collect();
        let wanted: Vec<u64> = want.iter().map(|b| b.sequence).collect();
        assert_eq!(sequences, wanted, "{what}: ldb");

        // The core reader, with no recovery policy, reads the same records; it reports the
        // garbage where a recycled file's new records end mid-chunk (as RocksDB's reader
        // does outside its tolerant mode), and nothing else.
        let (records, drops, end) = read_core(&data, ReadFormat::Recyclable { log_number });
        let got: Vec<Batch> = records.iter().filter_map(|r| decode(r)).collect();
        assert!(
            got == want && records.len() == want.len(),
            "{what}: core reader"
        );
        match (scenario, *number == third_log) {
            (Scenario::CrashMidChunk, true) => {
                assert!(
                    !drops.is_empty(),
                    "{what}: no garbage where the new records end"
                );
                let Some(LogEnd::OldRecord { offset, .. }) = end else {
                    panic!("{what}: {end:?}")
                };
                for drop in &drops {
                    assert!(
                        drop.offset + drop.bytes == offset,
                        "{what}: a drop not in the garbage: {drop}"
                    );
                }
            }
            (Scenario::CrashAligned, true) => {
                assert_eq!(drops, [], "{what}");
                assert!(
                    matches!(end, Some(LogEnd::OldRecord { .. })),
                    "{what}: {end:?}"
                );
            }
            _ => {
                assert_eq!(drops, [], "{what}");
                assert!(matches!(end, Some(LogEnd::Clean { .. })), "{what}: {end:?}");
            }
        }
    }
}

/// Checks that the recycled file really holds the earlier use's bytes after `end`: the file
/// goes on, and the block after `end` starts with a valid chunk of log `old`.
fn check_stale(data: &[u8], end: u64, old: u32, what: &str) {
    assert!(
        data.len() as u64 > end + BLOCK_SIZE as u64,
        "{what}: no stale bytes after {end}"
    );
    let next_block = (end as usize).div_ceil(BLOCK_SIZE) * BLOCK_SIZE;
    let block = &data[next_block..(next_block + BLOCK_SIZE).min(data.len())];
    let mut rules = ChunkRules::default();
    rules.format = ChunkFormat::Undecided { log_number: None };
    match parse_chunk(block, 0, block.len() < BLOCK_SIZE, &rules) {
        Parsed::Chunk(chunk) => assert_eq!(chunk.log_number, Some(old), "{what}"),
        other => panic!("{what}: no chunk of the old log at {next_block}: {other:?}"),
    }
}

#[test]
#[ignore = "needs RocksDB: run with cargo xtask interop"]
fn rocksdb_writes_a_recycled_log_ending_mid_chunk() {
    rocksdb_writes(Scenario::CrashMidChunk);
}

#[test]
#[ignore = "needs RocksDB: run with cargo xtask interop"]
fn rocksdb_writes_a_recycled_log_ending_at_a_chunk_boundary() {
    rocksdb_writes(Scenario::CrashAligned);
}

#[test]
#[ignore = "needs RocksDB: run with cargo xtask interop"]
fn rocksdb_closes_a_recycled_log() {
    rocksdb_writes(Scenario::Close);
}

#[test]
fn write_batches_round_trip() {
    // The encoding used above, checked without RocksDB.
    for batch in numbered(&batches(7, 12), 100) {
        assert_eq!(decode(&encode(&batch)), Some(batch));
    }
    assert_eq!(decode(&[0; 11]), None);
    assert_eq!(unhex("0x00FF7a"), [0, 255, 122]);
    assert_eq!(unhex("0x"), Vec::<u8>::new());
}
