//! Interoperability with real LevelDB (Debian's `libleveldb-dev`), both ways:
//!
//! - LevelDB writes a database with batches of every size (empty batches to 300 KB values, so
//!   records fragment across blocks); its write-ahead log and MANIFEST read back here with no
//!   drop, and every batch decodes intact.
//! - logfmt writes a write-ahead log (a new file; appended to LevelDB's own log; appended after
//!   truncating a torn tail) and LevelDB opens the database with `paranoid_checks` and returns
//!   every key.
//! - `logfmt write --append` (the CLI) is killed (SIGKILL) at seeded random moments while it
//!   appends write batches to a LevelDB log, the torn tail a kill leaves is cut off with
//!   `--truncate-torn-tail`, more is appended; after every step LevelDB's own log reader
//!   returns exactly the records logfmt's reader returns, at the same offsets, and reports no
//!   corruption, and at the end LevelDB (paranoid) opens the database with every key.
//!
//! LevelDB is driven by `interop/leveldb_helper.cc`, compiled here with `c++ … -lleveldb`; the
//! CLI is built with cargo, in the profile of this test.
//! These tests are ignored by a plain `cargo test`; `cargo xtask interop` installs LevelDB and
//! runs them. Without a compiler or LevelDB they fail, saying what is missing.

mod interop_tools;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use interop_tools::logfmt_bin;
use logfmt_std::{
    DamageKind, LogReaderOptions, LogWriter, LogWriterOptions, RecoveryMode, TornTailPolicy,
    advanced::{BLOCK_SIZE, Entry, LogReader},
};
use logfmt_tests::LevelDbRandom;
use logfmt_tests::write_batch::{Batch, Op, apply, decode, encode, numbered};

// ------------------------------------------------------------------------- the helper

/// The compiled helper, built once per test run.
fn helper() -> &'static Path {
    static HELPER: OnceLock<PathBuf> = OnceLock::new();
    HELPER.get_or_init(|| {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("interop/leveldb_helper.cc");
        let binary = Path::new(env!("CARGO_TARGET_TMPDIR")).join("leveldb_helper");
        let output = Command::new("c++")
            .args(["-std=c++17", "-O1", "-o"])
            .arg(&binary)
            .arg(&source)
            .arg("-lleveldb")
            .output();
        match output {
            Err(e) => panic!(
                "cannot run the C++ compiler `c++` ({e}): the LevelDB interop tests need it \
                 and Debian's libleveldb-dev (`cargo xtask interop` installs them)"
            ),
            Ok(out) if !out.status.success() => panic!(
                "compiling {} against LevelDB failed: is Debian's libleveldb-dev installed? \
                 (`cargo xtask interop` installs it)\n{}",
                source.display(),
                String::from_utf8_lossy(&out.stderr)
            ),
            Ok(_) => binary,
        }
    })
}

/// Runs the helper; panics with its message if it fails.
fn leveldb(args: &[&Path]) {
    let out = Command::new(helper())
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running the LevelDB helper: {e}"));
    assert!(
        out.status.success(),
        "leveldb_helper {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("leveldb_interop")
        .join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// The files of `dir` whose names end in `suffix` (or start with it, for a prefix), sorted.
fn files(dir: &Path, matches: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(&matches)
        })
        .collect();
    found.sort();
    found
}

fn logs(dir: &Path) -> Vec<PathBuf> {
    files(dir, |name| name.ends_with(".log"))
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
/// log records span several blocks), many-operation batches, overwrites.
fn batches(seed: u64, count: usize) -> Vec<Vec<Op>> {
    let sizes = [
        0usize, 1, 10, 100, 1000, 32_000, 32_761, 32_768, 40_000, 100_000, 300_000,
    ];
    (0..count)
        .map(|i| {
            let key =
                |j: usize| format!("key-{seed}-{:05}", (i * 7 + j) % (count * 3)).into_bytes();
            match i % 6 {
                0 => Vec::new(),
                1 => vec![Op::Delete(key(0))],
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

/// The helper's input for `batches`.
fn spec(batches: &[Vec<Op>]) -> Vec<u8> {
    let mut out = Vec::new();
    let bytes = |out: &mut Vec<u8>, b: &[u8]| {
        out.extend_from_slice(&(b.len() as u32).to_le_bytes());
        out.extend_from_slice(b);
    };
    for batch in batches {
        out.extend_from_slice(&(batch.len() as u32).to_le_bytes());
        for op in batch {
            match op {
                Op::Put(k, v) => {
                    out.push(1);
                    bytes(&mut out, k);
                    bytes(&mut out, v);
                }
                Op::Delete(k) => {
                    out.push(0);
                    bytes(&mut out, k);
                }
            }
        }
    }
    out
}

// ------------------------------------------------------------------------- reading

/// Every record of the log at `path` (with its end offset), asserting that nothing at all
/// was dropped, not even a torn tail.
fn read_clean(path: &Path) -> Vec<(u64, Vec<u8>)> {
    let data = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let options = LogReaderOptions::new().recovery(RecoveryMode::AbsoluteConsistency);
    let mut reader = LogReader::from_slice(&data, &options);
    let mut records = Vec::new();
    loop {
        match reader.next() {
            Ok(Some(Entry::Record(r))) => records.push((r.end, r.data.to_vec())),
            Ok(None) => return records,
            Ok(Some(Entry::Damage(d))) => panic!("{}: {d}", path.display()),
            Err(e) => panic!("{}: {e}", path.display()),
            other => panic!("not expected here: {other:?}"),
        }
    }
}

/// What LevelDB returns for the database in `dir`, opened with `paranoid_checks`.
fn leveldb_contents(dir: &Path) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let out = dir.with_extension("contents");
    leveldb(&[Path::new("read"), dir, &out]);
    let data = fs::read(&out).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    let mut rest = &data[..];
    let take = |rest: &mut &[u8]| {
        let (len, tail) = rest.split_first_chunk::<4>().expect("a length");
        let len = u32::from_le_bytes(*len) as usize;
        let (item, tail) = tail.split_at(len);
        *rest = tail;
        item.to_vec()
    };
    let mut contents = BTreeMap::new();
    while !rest.is_empty() {
        let key = take(&mut rest);
        let value = take(&mut rest);
        contents.insert(key, value);
    }
    contents
}

/// Writes `batches` through LevelDB into the database in `dir`.
fn leveldb_write(dir: &Path, batches: &[Vec<Op>]) {
    let spec_path = dir.with_extension("spec");
    fs::write(&spec_path, spec(batches)).unwrap_or_else(|e| panic!("{e}"));
    leveldb(&[Path::new("write"), dir, &spec_path]);
}

/// The single write-ahead log of `dir`.
fn the_log(dir: &Path) -> PathBuf {
    let logs = logs(dir);
    assert_eq!(logs.len(), 1, "{logs:?}");
    logs[0].clone()
}

// ------------------------------------------------------------------------- tests

#[test]
#[ignore = "needs LevelDB: run with cargo xtask interop"]
fn leveldb_writes_logfmt_reads() {
    let dir = scratch("leveldb_writes").join("db");
    let written = batches(1, 60);
    leveldb_write(&dir, &written);

    // The write-ahead log: every batch, intact, in order, numbered as LevelDB numbers them.
    let log = the_log(&dir);
    let records = read_clean(&log);
    let decoded: Vec<Batch> = records
        .iter()
        .map(|(end, r)| {
            decode(r).unwrap_or_else(|| panic!("the record ending at {end} is no WriteBatch"))
        })
        .collect();
    assert_eq!(decoded.len(), written.len());
    assert!(decoded == numbered(&written, 1), "the batches differ");
    // Records did fragment across blocks.
    assert!(records.iter().any(|(_, r)| r.len() > 2 * BLOCK_SIZE));
    assert!(fs::metadata(&log).map(|m| m.len()).unwrap_or(0) > 10 * BLOCK_SIZE as u64);
    // The same through the memory map, and through split ranges.
    let mapped = logfmt_std::MappedLog::open(&log).unwrap_or_else(|e| panic!("{e}"));
    let counts = mapped.par_scan(&LogReaderOptions::new(), 5, |_, mut reader| {
        let mut n = 0;
        while let Ok(Some(entry)) = reader.next() {
            assert!(matches!(entry, Entry::Record(_)), "{entry:?}");
            n += 1;
        }
        n
    });
    assert_eq!(counts.iter().sum::<usize>(), written.len());

    // The MANIFEST: VersionEdit records, none dropped; the first names the comparator.
    let current = fs::read_to_string(dir.join("CURRENT")).unwrap_or_default();
    let manifest = dir.join(current.trim());
    let edits = read_clean(&manifest);
    assert!(!edits.is_empty(), "{}", manifest.display());
    let first = &edits[0].1;
    assert!(
        first
            .windows(26)
            .any(|w| w == b"leveldb.BytewiseComparator"),
        "{first:?}"
    );
    for manifest in files(&dir, |n| n.starts_with("MANIFEST-")) {
        assert!(!read_clean(&manifest).is_empty());
    }

    // And LevelDB agrees on what the database holds.
    let mut expected = BTreeMap::new();
    apply(&mut expected, &decoded);
    assert!(leveldb_contents(&dir) == expected);
}

#[test]
#[ignore = "needs LevelDB: run with cargo xtask interop"]
fn logfmt_writes_leveldb_reads() {
    // A new log: LevelDB creates an empty database (and an empty log), logfmt fills the log.
    let dir = scratch("logfmt_writes").join("db");
    leveldb(&[Path::new("create"), &dir]);
    let log = the_log(&dir);
    assert_eq!(fs::metadata(&log).map(|m| m.len()).ok(), Some(0));
    let ours = numbered(&batches(2, 60), 1);
    let mut writer =
        LogWriter::create(&log, &LogWriterOptions::new()).unwrap_or_else(|e| panic!("{e}"));
    for batch in &ours {
        writer
            .add_record(&encode(batch))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    writer.close().unwrap_or_else(|e| panic!("{e}"));
    let mut expected = BTreeMap::new();
    apply(&mut expected, &ours);
    assert!(!expected.is_empty());
    assert!(
        leveldb_contents(&dir) == expected,
        "LevelDB read other contents"
    );
}

#[test]
#[ignore = "needs LevelDB: run with cargo xtask interop"]
fn logfmt_appends_to_a_leveldb_log() {
    // LevelDB writes batches; logfmt continues its log (safe append); LevelDB reads both.
    let dir = scratch("logfmt_appends").join("db");
    let theirs = batches(3, 30);
    leveldb_write(&dir, &theirs);
    let log = the_log(&dir);
    let before = fs::read(&log).unwrap_or_default();
    let last = numbered(&theirs, 1);
    let next = last.last().map_or(1, |b| b.sequence + b.ops.len() as u64);
    let ours = numbered(&batches(4, 30), next);
    let (mut writer, report) = LogWriter::append(&log, &LogWriterOptions::new())
        .unwrap_or_else(|e| panic!("appending to LevelDB's log: {e}"));
    assert_eq!(report.records, theirs.len() as u64);
    assert_eq!(report.start, before.len() as u64);
    for batch in &ours {
        writer
            .add_record(&encode(batch))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    writer.close().unwrap_or_else(|e| panic!("{e}"));
    let after = fs::read(&log).unwrap_or_default();
    assert!(after.starts_with(&before), "LevelDB's records were changed");
    let mut expected = BTreeMap::new();
    apply(&mut expected, &last);
    apply(&mut expected, &ours);
    assert!(
        leveldb_contents(&dir) == expected,
        "LevelDB read other contents"
    );
}

#[test]
#[ignore = "needs LevelDB: run with cargo xtask interop"]
fn logfmt_appends_after_a_torn_leveldb_log() {
    // google/leveldb#1287: LevelDB's log torn by a crash in its last batch. Appending after
    // the torn bytes would hide the new batches from LevelDB; logfmt refuses, then truncates
    // exactly the torn bytes when asked, and LevelDB (paranoid) returns every complete batch
    // and every appended one.
    let dir = scratch("logfmt_appends_torn").join("db");
    let mut theirs = batches(5, 24);
    theirs.push(vec![Op::Put(b"torn".to_vec(), bytes(100_000, 5))]);
    leveldb_write(&dir, &theirs);
    let log = the_log(&dir);
    let records = read_clean(&log);
    let complete_end = records[records.len() - 2].0;
    let len = fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
    let cut = complete_end + (len - complete_end) / 2;
    fs::File::options()
        .write(true)
        .open(&log)
        .and_then(|f| f.set_len(cut))
        .unwrap_or_else(|e| panic!("{e}"));
    let torn = fs::read(&log).unwrap_or_default();

    let refused = LogWriter::append(&log, &LogWriterOptions::new()).err();
    assert!(
        matches!(refused, Some(logfmt_std::Error::TornTail { offset, bytes, .. })
            if offset == complete_end && bytes == cut - complete_end),
        "{refused:?}"
    );
    assert!(fs::read(&log).unwrap_or_default() == torn);

    let complete = numbered(&theirs[..theirs.len() - 1], 1);
    let next = complete
        .last()
        .map_or(1, |b| b.sequence + b.ops.len() as u64);
    let ours = numbered(&batches(6, 10), next);
    let options = LogWriterOptions::new().torn_tail(TornTailPolicy::Truncate);
    let (mut writer, report) = LogWriter::append(&log, &options).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.start, complete_end);
    for batch in &ours {
        writer
            .add_record(&encode(batch))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    writer.close().unwrap_or_else(|e| panic!("{e}"));
    let mut expected = BTreeMap::new();
    apply(&mut expected, &complete);
    apply(&mut expected, &ours);
    assert!(!expected.contains_key(&b"torn"[..]));
    assert!(
        leveldb_contents(&dir) == expected,
        "LevelDB read other contents"
    );
}

// ------------------------------------------------------------------------- the CLI, killed

/// Batch `i` of run `run`: one put of a key naming both, with a unique sequence number and a
/// value from empty to three blocks long, printable (LevelDB's dump shows it as it is).
fn run_batch(run: u64, i: u64, rng: &mut LevelDbRandom) -> Batch {
    let len = match rng.uniform(10) {
        0 => 0,
        1 | 2 => 40_000 + rng.uniform(60_000),
        3..=5 => rng.uniform(5_000),
        _ => rng.uniform(200),
    };
    let value = bytes(len as usize, run << 32 | i)
        .iter()
        .map(|b| b'a' + b % 26)
        .collect();
    Batch {
        sequence: run * 1_000_000 + i + 1,
        ops: vec![Op::Put(format!("run{run:03}-{i:05}").into_bytes(), value)],
    }
}

/// `batches` as `logfmt write --input framed` reads them: a u32 length, then the record.
fn framed(batches: &[Batch]) -> Vec<u8> {
    let mut out = Vec::new();
    for batch in batches {
        let record = encode(batch);
        out.extend_from_slice(&(record.len() as u32).to_le_bytes());
        out.extend_from_slice(&record);
    }
    out
}

fn file_len(path: &Path) -> u64 {
    fs::metadata(path).map_or(0, |m| m.len())
}

/// Runs `logfmt write --append --input framed [flags] LOG`, fed `batches`. With `kill`, kills
/// it (SIGKILL) `kill.1` after the log has grown by `kill.0` bytes (0: as soon as it started),
/// unless it has finished by then.
fn write_append(
    log: &Path,
    flags: &[&str],
    batches: &[Batch],
    kill: Option<(u64, Duration)>,
) -> Output {
    let start = file_len(log);
    let mut child = Command::new(logfmt_bin())
        .args(["write", "--append", "--input", "framed"])
        .args(flags)
        .arg(log)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("running logfmt: {e}"));
    let mut stdin = child.stdin.take().expect("a piped stdin");
    let input = framed(batches);
    // Fed from a thread, and closed at the end; once logfmt is killed, writing fails.
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    if let Some((grow, delay)) = kill {
        let deadline = Instant::now() + Duration::from_secs(60);
        while child.try_wait().ok().flatten().is_none() && file_len(log) < start + grow {
            assert!(Instant::now() < deadline, "logfmt write --append hangs");
            std::thread::sleep(Duration::from_micros(100));
        }
        std::thread::sleep(delay);
        // Fails only if it has exited already (and been waited for).
        let _ = child.kill();
    }
    let out = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("waiting for logfmt: {e}"));
    feeder.join().expect("the feeder");
    out
}

/// Whether a run of `logfmt write --append` finished (exit status 0, its records acknowledged)
/// rather than being killed; any other ending fails the test.
fn finished(out: &Output, context: &str) -> bool {
    let killed = !out.status.success() && out.status.code().is_none();
    assert!(
        out.status.success() || killed,
        "{context}: logfmt write --append failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    !killed
}

/// The records of `log` as logfmt reads them (offset and batch), and whether a torn tail
/// follows them; any other damage, or a record that is no batch, fails the test.
fn logfmt_records(log: &Path, context: &str) -> (Vec<(u64, Batch)>, bool) {
    let data = fs::read(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    let options = LogReaderOptions::new().recovery(RecoveryMode::SkipAnyCorruptedRecords);
    let mut reader = LogReader::from_slice(&data, &options);
    let mut records = Vec::new();
    loop {
        match reader.next() {
            Ok(Some(Entry::Record(r))) => records.push((
                r.offset,
                decode(r.data)
                    .unwrap_or_else(|| panic!("{context}: the record at {} is no batch", r.offset)),
            )),
            Ok(Some(Entry::Damage(d))) if d.kind == DamageKind::TornTail => {}
            Ok(Some(Entry::Damage(d))) => panic!("{context}: damage after a crash: {d}"),
            Ok(None) => return (records, reader.tail().is_some()),
            Err(e) => panic!("{context}: {e}"),
            other => panic!("not expected here: {other:?}"),
        }
    }
}

/// Asserts that LevelDB's own log reader (`leveldb::DumpFile`, checksums verified) returns
/// exactly `records` from `log`, at the same offsets, and reports no corruption.
fn assert_leveldb_reads(log: &Path, records: &[(u64, Batch)], context: &str) {
    let out = log.with_extension("dump");
    leveldb(&[Path::new("dump"), log, &out]);
    let dump = fs::read_to_string(&out).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    if let Some(line) = dump.lines().find(|l| l.starts_with("corruption:")) {
        panic!("{context}: LevelDB's log reader reports {line}");
    }
    // The text LevelDB's dump shows for those batches at those offsets.
    let mut expected = String::new();
    for (offset, batch) in records {
        let _ = writeln!(expected, "--- offset {offset}; sequence {}", batch.sequence);
        for op in &batch.ops {
            let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            let _ = match op {
                Op::Put(k, v) => writeln!(expected, "  put '{}' '{}'", text(k), text(v)),
                Op::Delete(k) => writeln!(expected, "  del '{}'", text(k)),
            };
        }
    }
    if dump != expected {
        let (ours, theirs) = (expected.lines(), dump.lines());
        let at = ours
            .clone()
            .zip(theirs.clone())
            .take_while(|(a, b)| a == b)
            .count();
        let show = |mut lines: std::str::Lines<'_>| {
            lines
                .nth(at)
                .map_or_else(|| "(the end)".to_owned(), |l| l.chars().take(100).collect())
        };
        panic!(
            "{context}: LevelDB's log reader differs from logfmt's at line {at} of its dump: \
             LevelDB {:?}, logfmt {:?}",
            show(theirs),
            show(ours)
        );
    }
}

/// How many runs are killed or finish, at least; more (up to [`MAX_RUNS`]) until a kill has
/// left a torn tail.
const RUNS: u64 = 10;
const MAX_RUNS: u64 = 40;

#[test]
#[ignore = "needs LevelDB: run with cargo xtask interop"]
fn logfmt_write_append_killed_at_random_moments_leveldb_reads_the_same() {
    let seed: u32 = std::env::var("LOGFMT_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x1e7e1);
    let mut rng = LevelDbRandom::new(seed);
    let dir = scratch("killed_appends").join("db");
    leveldb(&[Path::new("create"), &dir]);
    let log = the_log(&dir);
    // What the log holds: every batch acknowledged, and what the killed runs had written.
    let mut expected: Vec<Batch> = Vec::new();
    let (mut kills, mut finishes, mut repairs) = (0, 0, 0);
    let mut run = 0;
    while run < RUNS || (repairs == 0 && run < MAX_RUNS) {
        run += 1;
        let context = format!("run {run} (LOGFMT_CRASH_SEED={seed})");
        let count = 10 + u64::from(rng.uniform(40));
        let batches: Vec<Batch> = (0..count).map(|i| run_batch(run, i, &mut rng)).collect();
        // Most runs are killed, once the log has grown by up to the run's size (now and then
        // at once), a random moment later; the others run to the end.
        let input = framed(&batches).len() as u32;
        let kill = (rng.uniform(5) != 0).then(|| {
            let grow = if rng.uniform(8) == 0 {
                0
            } else {
                rng.uniform(input)
            };
            (
                u64::from(grow),
                Duration::from_micros(u64::from(rng.uniform(2_000))),
            )
        });
        let done = finished(&write_append(&log, &[], &batches, kill), &context);
        kills += u32::from(!done);
        finishes += u32::from(done);

        // Every batch of the earlier runs, then a prefix of this run's: all of it if the run
        // finished; and LevelDB reads the same.
        let (records, torn) = logfmt_records(&log, &context);
        let held: Vec<Batch> = records.iter().map(|(_, b)| b.clone()).collect();
        assert!(
            held.len() >= expected.len() && held[..expected.len()] == expected[..],
            "{context}: batches of earlier runs lost or changed"
        );
        let new = &held[expected.len()..];
        assert!(
            new.len() <= batches.len() && new == &batches[..new.len()],
            "{context}: a batch never written appeared"
        );
        if done {
            assert_eq!(
                new.len(),
                batches.len(),
                "{context}: a finished run lost batches"
            );
            assert!(!torn, "{context}: a finished run left a torn tail");
        }
        assert_leveldb_reads(&log, &records, &context);
        expected = held;

        if torn {
            // Without --truncate-torn-tail the torn log is refused and left as it is; with it,
            // the torn bytes are cut off and the log continues.
            let before = fs::read(&log).unwrap_or_default();
            let more: Vec<Batch> = (count..count + 3)
                .map(|i| run_batch(run, i, &mut rng))
                .collect();
            let refused = write_append(&log, &[], &more, None);
            assert_eq!(
                refused.status.code(),
                Some(1),
                "{context}: a torn log not refused"
            );
            assert!(
                fs::read(&log).unwrap_or_default() == before,
                "{context}: changed"
            );
            let out = write_append(&log, &["--truncate-torn-tail"], &more, None);
            assert!(finished(&out, &context), "{context}: killed?");
            repairs += 1;
            expected.extend(more);
            let (records, torn) = logfmt_records(&log, &context);
            assert!(!torn, "{context}: torn after --truncate-torn-tail");
            let held: Vec<Batch> = records.iter().map(|(_, b)| b.clone()).collect();
            assert!(
                held == expected,
                "{context}: the repaired log holds other batches"
            );
            assert_leveldb_reads(&log, &records, &format!("{context}, repaired"));
        }
    }

    // A last plain append continues cleanly; logfmt verifies the log; LevelDB's log reader
    // returns the same records, and LevelDB (paranoid) opens the database with every key.
    let context = format!("the end (LOGFMT_CRASH_SEED={seed})");
    let last = vec![run_batch(run + 1, 0, &mut rng)];
    assert!(finished(&write_append(&log, &[], &last, None), &context));
    expected.extend(last);
    let (records, torn) = logfmt_records(&log, &context);
    assert!(!torn);
    assert!(
        records.iter().map(|(_, b)| b).eq(expected.iter()),
        "{context}"
    );
    assert_leveldb_reads(&log, &records, &context);
    let verify = Command::new(logfmt_bin())
        .arg("verify")
        .arg(&log)
        .output()
        .unwrap_or_else(|e| panic!("running logfmt verify: {e}"));
    assert!(
        verify.status.success(),
        "{context}: logfmt verify: {}",
        String::from_utf8_lossy(&verify.stdout)
    );
    let log_len = file_len(&log);
    let mut state = BTreeMap::new();
    apply(&mut state, &expected);
    assert!(
        leveldb_contents(&dir) == state,
        "{context}: LevelDB read other contents"
    );
    assert!(kills > 0, "no run was killed");
    assert!(repairs > 0, "no kill left a torn tail in {run} runs");
    eprintln!(
        "{run} runs: {kills} killed, {finishes} finished; {repairs} torn tails cut off and \
         continued; {} batches, {} bytes",
        expected.len(),
        log_len
    );
}

/// Runs `logfmt args…` with `input` on standard input: its output, whatever its status.
fn logfmt_fed(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(logfmt_bin())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("running logfmt: {e}"));
    let mut stdin = child.stdin.take().expect("a pipe");
    stdin
        .write_all(input)
        .unwrap_or_else(|e| panic!("feeding logfmt: {e}"));
    drop(stdin);
    child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("running logfmt: {e}"))
}

/// `logfmt write --pack` refuses a LevelDB write-ahead log; told to write packs anyway, it
/// does, and `logfmt verify` says how many records LevelDB and RocksDB will drop: exactly the
/// records LevelDB's own log reader and RocksDB's `ldb dump_wal` do not return, each pack
/// chunk reported as an unknown record type.
#[test]
#[ignore = "needs LevelDB and RocksDB: run with cargo xtask interop"]
fn verify_counts_the_records_leveldb_and_rocksdb_drop_from_packs() {
    let dir = scratch("packs_dropped");
    let log = dir.join("000009.log");
    let log_str = log.to_str().expect("a UTF-8 path");
    let all = numbered(
        &(0..60)
            .map(|i| {
                vec![Op::Put(
                    format!("key-{i:03}").into_bytes(),
                    bytes(20 + i, i as u64),
                )]
            })
            .collect::<Vec<_>>(),
        1,
    );
    let (first, rest) = all.split_at(10);
    let (packed, last) = rest.split_at(40);
    let write = logfmt_fed(&["write", "--input", "framed", log_str], &framed(first));
    assert!(
        write.status.success(),
        "{}",
        String::from_utf8_lossy(&write.stderr)
    );
    let before = fs::read(&log).unwrap_or_else(|e| panic!("{e}"));

    // Refused: one line, nothing written.
    let refused = logfmt_fed(
        &["write", "--append", "--input", "framed", "--pack", log_str],
        &framed(packed),
    );
    assert_eq!(refused.status.code(), Some(2));
    let message = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains("--allow-logfmt-chunks"), "{message}");
    assert_eq!(fs::read(&log).ok(), Some(before));

    // Told to: 40 batches in packs (of at most 512 bytes: several packs), then plain ones.
    let allowed = logfmt_fed(
        &[
            "write",
            "--append",
            "--input",
            "framed",
            "--pack=512",
            "--allow-logfmt-chunks",
            log_str,
        ],
        &framed(packed),
    );
    assert!(
        allowed.status.success(),
        "{}",
        String::from_utf8_lossy(&allowed.stderr)
    );
    let plain = logfmt_fed(
        &["write", "--append", "--input", "framed", log_str],
        &framed(last),
    );
    assert!(
        plain.status.success(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );

    let verify = logfmt_fed(&["verify", "--json", log_str], b"");
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&verify.stdout).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(doc["records"], 60);
    let dropped = doc["logfmt_only"]["records"]
        .as_u64()
        .expect("logfmt_only.records");
    let packs = doc["logfmt_only"]["packs"]
        .as_u64()
        .expect("logfmt_only.packs");
    // A pack of one record is written plain: most of the 40, not necessarily all.
    assert!((30..=40).contains(&dropped), "{doc}");
    assert!(packs > 1, "{doc}");
    let text = logfmt_fed(&["verify", log_str], b"");
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(&format!("{dropped} records in {packs} logfmt packs")),
        "{text}"
    );

    // LevelDB's own reader: the plain batches, one unknown type per pack (one chunk each).
    let out = log.with_extension("dump");
    leveldb(&[Path::new("dump"), &log, &out]);
    let dump = fs::read_to_string(&out).unwrap_or_else(|e| panic!("{e}"));
    let listed = dump
        .lines()
        .filter(|l| l.starts_with("--- offset "))
        .count() as u64;
    assert_eq!(listed, 60 - dropped, "{dump}");
    let unknown = dump.matches("unknown record type").count() as u64;
    assert_eq!(unknown, packs, "{dump}");

    // RocksDB's: the same.
    let out = interop_tools::ldb_dump_wal(&log);
    let rows = String::from_utf8_lossy(&out.stdout).lines().skip(1).count() as u64;
    assert_eq!(rows, 60 - dropped);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("unknown record type").count() as u64,
        packs,
        "{stderr}"
    );
}

#[test]
fn write_batches_round_trip() {
    // The encoding used above, checked without LevelDB.
    for batch in numbered(&batches(7, 12), 100) {
        assert_eq!(decode(&encode(&batch)), Some(batch));
    }
    assert_eq!(decode(&[0; 11]), None);
    assert_eq!(
        decode(&[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
        Some(Batch {
            sequence: 1,
            ops: vec![]
        })
    );
}
