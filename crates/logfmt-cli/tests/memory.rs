//! Every command in memory bounded by a constant, whatever its input: the peak resident set of
//! `logfmt` (measured exactly, from the kernel's accounting of the child: `wait4`) stays under
//! 64 MiB, and within a few MiB of what the same command takes on a small log of the same
//! kind, on logs built to make it grow —
//!
//! - a million tiny damaged chunks (each a report);
//! - one record of 96 MiB (more than the limit itself);
//! - a write-ahead log of a million records that do not decode as WriteBatches, alone and in
//!   a database directory;
//! - a ring image followed by 96 MiB of erased flash (its read cursors are looked for in all
//!   of it).
//!
//! Each command's output goes to a file (its size is checked where it must stay small), so
//! that nothing but `logfmt` itself is measured.

// The peak is read from `wait4`, which std does not expose: two calls into libc, below.
#![allow(unsafe_code, reason = "wait4: the exact peak resident set of a child")]

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use logfmt_core::parts::checksum::{crc32c, extend, mask};

#[path = "common/ring_image.rs"]
mod ring_image;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The limit: what any command may hold at its peak, input or no input.
const LIMIT_KIB: u64 = 64 * 1024;

const BLOCK: usize = 32 * 1024;
const HEADER: usize = 7;
const FULL: u8 = 1;
const FIRST: u8 = 2;
const MIDDLE: u8 = 3;
const LAST: u8 = 4;

/// A log being written chunk by chunk, in LevelDB's format.
struct LogBuilder {
    out: BufWriter<File>,
    /// Bytes written in the current block.
    in_block: usize,
}

impl LogBuilder {
    fn create(path: &Path) -> std::io::Result<Self> {
        Ok(Self {
            out: BufWriter::with_capacity(1 << 20, File::create(path)?),
            in_block: 0,
        })
    }

    /// Writes one chunk whose masked checksum is `crc` (it must fit in the block).
    fn chunk_with(&mut self, kind: u8, data: &[u8], crc: u32) -> std::io::Result<()> {
        let len = u16::try_from(data.len()).map_err(std::io::Error::other)?;
        self.out.write_all(&crc.to_le_bytes())?;
        self.out.write_all(&len.to_le_bytes())?;
        self.out.write_all(&[kind])?;
        self.out.write_all(data)?;
        self.in_block = (self.in_block + HEADER + data.len()) % BLOCK;
        Ok(())
    }

    /// Writes one chunk (it must fit in the block).
    fn chunk(&mut self, kind: u8, data: &[u8]) -> std::io::Result<()> {
        self.chunk_with(kind, data, checksum(kind, data))
    }

    /// Fills the rest of a block too short for a header with zeros.
    fn trailer(&mut self) -> std::io::Result<()> {
        let left = BLOCK - self.in_block;
        if left < HEADER {
            self.out.write_all(&[0; HEADER][..left])?;
            self.in_block = 0;
        }
        Ok(())
    }

    /// Writes a record as LevelDB's writer does.
    fn record(&mut self, data: &[u8]) -> std::io::Result<()> {
        let mut left = data;
        let mut first = true;
        loop {
            self.trailer()?;
            let room = BLOCK - self.in_block - HEADER;
            let (fragment, rest) = left.split_at(left.len().min(room));
            let kind = match (first, rest.is_empty()) {
                (true, true) => FULL,
                (true, false) => FIRST,
                (false, false) => MIDDLE,
                (false, true) => LAST,
            };
            self.chunk(kind, fragment)?;
            left = rest;
            first = false;
            if left.is_empty() {
                return Ok(());
            }
        }
    }

    fn finish(mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// The masked checksum of a chunk of `kind` holding `data`.
fn checksum(kind: u8, data: &[u8]) -> u32 {
    mask(extend(crc32c(&[kind]), data))
}

/// `bytes` of chunks, each a well-formed MIDDLE chunk of one byte with no record begun: each is
/// a report ("missing start of fragmented record"), 4096 of them a block.
fn many_damaged_chunks(path: &Path, bytes: usize) -> std::io::Result<()> {
    let mut log = LogBuilder::create(path)?;
    let crc = checksum(MIDDLE, b"x");
    for _ in 0..bytes / 8 {
        log.chunk_with(MIDDLE, b"x", crc)?;
    }
    log.finish()
}

/// One record of `bytes` bytes (all `a`), in chunks that fill their blocks.
fn one_huge_record(path: &Path, bytes: usize) -> std::io::Result<()> {
    let mut log = LogBuilder::create(path)?;
    let room = BLOCK - HEADER;
    let data = vec![b'a'; room];
    let middle = checksum(MIDDLE, &data);
    log.chunk(FIRST, &data)?;
    let mut left = bytes - room;
    while left > room {
        log.chunk_with(MIDDLE, &data, middle)?;
        left -= room;
    }
    log.chunk(LAST, &data[..left])?;
    log.finish()
}

/// A WriteBatch: sequence number 1, one put of `k` = `v`.
fn a_write_batch() -> Vec<u8> {
    let mut batch = Vec::new();
    batch.extend_from_slice(&1u64.to_le_bytes());
    batch.extend_from_slice(&1u32.to_le_bytes());
    batch.extend_from_slice(&[1, 1, b'k', 1, b'v']);
    batch
}

/// A write-ahead log that starts with a WriteBatch, then `count` records of one byte: none
/// decodes as a WriteBatch (each is reported).
fn undecodable_batches(path: &Path, count: usize) -> std::io::Result<()> {
    let mut log = LogBuilder::create(path)?;
    log.record(&a_write_batch())?;
    let crc = checksum(FULL, b"x");
    for _ in 0..count {
        log.trailer()?;
        log.chunk_with(FULL, b"x", crc)?;
    }
    log.finish()
}

/// A LevelDB database whose live write-ahead log is 000005.log (the caller writes it).
fn database(dir: &Path) -> std::io::Result<()> {
    fs::create_dir_all(dir)?;
    fs::write(dir.join("CURRENT"), "MANIFEST-000002\n")?;
    let mut comparator = vec![1, 26];
    comparator.extend_from_slice(b"leveldb.BytewiseComparator");
    let mut manifest = LogBuilder::create(&dir.join("MANIFEST-000002"))?;
    manifest.record(&comparator)?;
    // log number 5, next file 7, last sequence 1.
    manifest.record(&[2, 5, 3, 7, 4, 1])?;
    manifest.finish()
}

/// What one run of `logfmt` did.
struct Run {
    code: Option<i32>,
    /// Peak resident set, KiB.
    peak_kib: u64,
    stdout_bytes: u64,
    seconds: f64,
}

/// Runs `logfmt args` with its standard output and error in files under `dir`, and measures
/// its peak resident set.
fn run(dir: &Path, args: &[&str]) -> Result<Run, Box<dyn std::error::Error>> {
    let stdout = dir.join("stdout");
    let stderr = dir.join("stderr");
    let start = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_logfmt"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(File::create(&stdout)?)
        .stderr(File::create(&stderr)?)
        .spawn()?;
    let (status, peak_kib) = wait_with_peak(child.id())?;
    let run = Run {
        code: status,
        peak_kib,
        stdout_bytes: fs::metadata(&stdout)?.len(),
        seconds: start.elapsed().as_secs_f64(),
    };
    eprintln!(
        "logfmt {}: exit {:?}, peak {} KiB, {} bytes out, {:.1} s",
        args.join(" "),
        run.code,
        run.peak_kib,
        run.stdout_bytes,
        run.seconds
    );
    Ok(run)
}

/// Waits for the child `pid`: its exit status (`None` if a signal ended it) and its peak
/// resident set in KiB, as the kernel accounted it (`ru_maxrss`).
fn wait_with_peak(pid: u32) -> std::io::Result<(Option<i32>, u64)> {
    let pid = libc::pid_t::try_from(pid).map_err(std::io::Error::other)?;
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is plain data the call fills in; zeroed is a valid value for it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `status` and `usage` are valid for writes for the duration of the call, and
        // `pid` is our own child, not yet waited for.
        let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if waited == pid {
            break;
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Ok((code, u64::try_from(usage.ru_maxrss).unwrap_or(0)))
}

/// How much more than on a small log of the same kind a command may take on the large one:
/// records are held up to 16 MiB by design (longer ones are streamed or counted), and a little
/// more. The old code held every report (32 bytes or more each) and every record whole, so a
/// million reports or a 96 MiB record took far more.
const GROWTH_KIB: u64 = 24 * 1024;

/// Runs each command on `small` and on `large` (logs of the same kind, `large` holding far
/// more of what made memory grow) and checks each ended by itself (exit status 0 or 1) in
/// less than [`LIMIT_KIB`], and in no more than [`GROWTH_KIB`] more on `large` than on
/// `small`: memory bounded by a constant, not by the input. Returns the runs on `large`.
fn check_all(
    dir: &Path,
    small: &Path,
    large: &Path,
    commands: &[&[&str]],
) -> Result<Vec<Run>, Box<dyn std::error::Error>> {
    let out = dir.join("out.log");
    let out = out.to_str().ok_or("path")?;
    let mut runs = Vec::new();
    let mut over = Vec::new();
    for command in commands {
        let mut peaks = [0; 2];
        for (i, log) in [small, large].into_iter().enumerate() {
            let log = log.to_str().ok_or("path")?;
            let args: Vec<&str> = command
                .iter()
                .map(|&a| match a {
                    "LOG" => log,
                    "OUT" => out,
                    a => a,
                })
                .collect();
            let _ = fs::remove_file(dir.join("out.log"));
            let run = run(dir, &args)?;
            assert!(
                matches!(run.code, Some(0 | 1)),
                "logfmt {args:?}: exit {:?}: {}",
                run.code,
                fs::read_to_string(dir.join("stderr")).unwrap_or_default()
            );
            assert!(run.peak_kib > 0, "no peak measured");
            peaks[i] = run.peak_kib;
            if i == 1 {
                runs.push(run);
            }
        }
        if peaks[1] >= LIMIT_KIB || peaks[1] > peaks[0] + GROWTH_KIB {
            over.push(format!(
                "logfmt {}: {} KiB on the small log, {} KiB on the large one",
                command.join(" "),
                peaks[0],
                peaks[1]
            ));
        }
    }
    assert!(
        over.is_empty(),
        "over {LIMIT_KIB} KiB, or {GROWTH_KIB} KiB more than on a small log: {over:#?}"
    );
    Ok(runs)
}

/// `logfmt verify --json log`'s document.
fn verify_json(dir: &Path, log: &Path) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    run(dir, &["verify", "--json", log.to_str().ok_or("path")?])?;
    Ok(serde_json::from_slice(&fs::read(dir.join("stdout"))?)?)
}

#[test]
fn a_million_damage_reports_in_bounded_memory() -> TestResult {
    let dir = tempfile::tempdir()?;
    let small = dir.path().join("small.dat");
    let large = dir.path().join("damaged.dat");
    many_damaged_chunks(&small, BLOCK)?;
    let reports = 1 << 20;
    many_damaged_chunks(&large, reports * 8)?;
    let runs = check_all(
        dir.path(),
        &small,
        &large,
        &[
            &["verify", "LOG"],
            &["verify", "--json", "LOG"],
            &["stats", "--json", "LOG"],
            &["salvage", "--json", "LOG", "OUT"],
        ],
    )?;
    assert_eq!(runs[0].code, Some(1));
    // Every report counted, the first thousand listed.
    let doc = verify_json(dir.path(), &large)?;
    let reports = reports as u64;
    assert_eq!(doc["corruptions"].as_array().map(Vec::len), Some(1000));
    assert_eq!(doc["corruptions_total"], reports);
    assert_eq!(doc["corruptions_not_shown"], reports - 1000);
    assert_eq!(doc["dropped_bytes"], reports);
    Ok(())
}

#[test]
fn one_huge_record_in_bounded_memory() -> TestResult {
    let dir = tempfile::tempdir()?;
    let small = dir.path().join("small.dat");
    let large = dir.path().join("huge.dat");
    one_huge_record(&small, 100_000)?;
    let bytes = 96 << 20;
    one_huge_record(&large, bytes)?;
    let runs = check_all(
        dir.path(),
        &small,
        &large,
        &[
            // --decode auto resolves to raw by the name: streamed as --decode raw is.
            &["cat", "LOG"],
            &["cat", "--buffer-limit", "1000", "LOG"],
            &["cat", "--decode", "write-batch", "LOG"],
            &["verify", "LOG"],
            &["stats", "LOG"],
            &["chunks", "LOG"],
            &["split", "LOG"],
            // Last: the output of the last run is kept (each run's is removed before it).
            &["salvage", "LOG", "OUT"],
            &["export", "LOG", "OUT"],
        ],
    )?;
    // The record was printed whole (its bytes and a newline), and copied whole.
    assert_eq!(runs[0].stdout_bytes, bytes as u64 + 1);
    assert_eq!(runs[1].stdout_bytes, bytes as u64 + 1);
    assert!(same_bytes(&dir.path().join("out.log"), &large)?);
    Ok(())
}

/// Whether the files `a` and `b` hold the same bytes, read a block at a time: this process
/// holds no whole log (a child started meanwhile by another test would count this process's
/// memory in its own peak, which Linux keeps across `execve`).
fn same_bytes(a: &Path, b: &Path) -> std::io::Result<bool> {
    use std::io::Read;
    let (mut a, mut b) = (File::open(a)?, File::open(b)?);
    if a.metadata()?.len() != b.metadata()?.len() {
        return Ok(false);
    }
    let (mut x, mut y) = (vec![0u8; BLOCK], vec![0u8; BLOCK]);
    loop {
        let n = a.read(&mut x)?;
        if n == 0 {
            return Ok(true);
        }
        b.read_exact(&mut y[..n])?;
        if x[..n] != y[..n] {
            return Ok(false);
        }
    }
}

#[test]
fn a_million_undecodable_write_batches_in_bounded_memory() -> TestResult {
    let dir = tempfile::tempdir()?;
    let small = dir.path().join("small").join("000005.log");
    fs::create_dir_all(dir.path().join("small"))?;
    undecodable_batches(&small, 1000)?;
    let db = dir.path().join("db");
    database(&db)?;
    let large = db.join("000005.log");
    let count = 1 << 20;
    undecodable_batches(&large, count)?;
    let runs = check_all(
        dir.path(),
        &small,
        &large,
        &[
            &["verify", "LOG"],
            &["verify", "--json", "LOG"],
            &["stats", "--json", "LOG"],
        ],
    )?;
    assert_eq!(runs[0].code, Some(1));
    let doc = verify_json(dir.path(), &large)?;
    assert_eq!(doc["records"], count as u64 + 1);
    assert_eq!(doc["undecoded"].as_array().map(Vec::len), Some(1000));
    assert_eq!(doc["undecoded_total"], count as u64);
    // The database directory: its MANIFEST and this log.
    let small_db = dir.path().join("small");
    database(&small_db)?;
    check_all(dir.path(), &small_db, &db, &[&["verify", "LOG"]])?;
    Ok(())
}

#[test]
fn a_large_ring_image_in_bounded_memory() -> TestResult {
    let dir = tempfile::tempdir()?;
    let small = dir.path().join("small.img");
    let large = dir.path().join("large.img");
    let image =
        ring_image::run::<4096>(&ring_image::Spec::new(5, 1_500, 29), ring_image::sample).image;
    fs::write(&small, &image)?;
    let mut out = BufWriter::new(File::create(&large)?);
    out.write_all(&image)?;
    let erased = vec![0xFFu8; BLOCK];
    for _ in 0..(96 << 20) / BLOCK {
        out.write_all(&erased)?;
    }
    out.flush()?;
    drop(out);
    check_all(
        dir.path(),
        &small,
        &large,
        &[&["stats", "LOG"], &["stats", "--json", "LOG"]],
    )?;
    // The same records of the ring, whatever follows it (that the cursors a file holds are
    // found as in memory is logfmt-std's test of `ring_cursors_in_file`).
    let json = |log: &Path| -> Result<Vec<u8>, Box<dyn std::error::Error>> {
        run(
            dir.path(),
            &["stats", "--json", log.to_str().ok_or("path")?],
        )?;
        Ok(fs::read(dir.path().join("stdout"))?)
    };
    let (small, large) = (json(&small)?, json(&large)?);
    let small: serde_json::Value = serde_json::from_slice(&small)?;
    let large: serde_json::Value = serde_json::from_slice(&large)?;
    assert_eq!(small["records"], large["records"]);
    assert!(small["records"].as_u64().is_some_and(|n| n > 0), "{small}");
    Ok(())
}
