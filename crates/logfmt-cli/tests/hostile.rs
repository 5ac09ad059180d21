//! The `logfmt` binary against hostile input: missing paths, directories, files it may not
//! read or write, FIFOs and standard input, a 10 GB sparse file, a 4 GiB frame length, empty
//! input, invalid offsets, a full device, a file-size limit hit mid-write.
//!
//! For each: the documented exit status (0 success; 1 damage found, a log refused or malformed
//! framed input; 2 usage or I/O error), a clear error on one line (`logfmt: error: ...`; usage
//! errors are clap's, whose first line is the error), no hang (every run is time-boxed), and no
//! file created, truncated or modified by a command that failed. Large inputs are read in
//! bounded memory: the peak RSS of `verify` on a 4 GiB log is measured and printed.
//!
//! The framed-input parser (`src/input.rs`) lives in the binary crate, out of reach of a fuzz
//! target; `framed_input_round_trips_whatever_the_frames` checks its contract through the
//! binary instead.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use logfmt_core::Writer;
use logfmt_std::advanced::{BLOCK_SIZE, StdSink};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const EXIT_OK: i32 = 0;
const EXIT_BAD_DATA: i32 = 1;
const EXIT_ERROR: i32 = 2;

/// What a run of `logfmt` did.
#[derive(Debug)]
struct Run {
    status: ExitStatus,
    stdout: Vec<u8>,
    stderr: String,
    elapsed: Duration,
    /// The largest `VmHWM` (peak resident set) seen while it ran, in KiB.
    peak_rss_kib: u64,
}

impl Run {
    fn code(&self) -> i32 {
        self.status
            .code()
            .unwrap_or_else(|| panic!("killed by a signal: {self:?}"))
    }

    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// The error, which must be exactly one line `logfmt: error: ...`.
    fn one_line_error(&self) -> &str {
        let lines: Vec<&str> = self
            .stderr
            .lines()
            .filter(|l| !l.trim().is_empty())
            .collect();
        assert_eq!(lines.len(), 1, "one line of error, got: {:?}", self.stderr);
        let line = lines[0];
        assert!(line.starts_with("logfmt: error: "), "{line:?}");
        line
    }
}

/// How a child is started.
#[derive(Default)]
struct Opts<'a> {
    stdin: Option<&'a [u8]>,
    /// Run as this user id (and group id), for permission tests as root.
    uid: Option<u32>,
    timeout: Option<Duration>,
    /// Run under `sh -c '<prefix> exec "$@"'`.
    shell_prefix: Option<&'a str>,
}

fn logfmt<S: AsRef<std::ffi::OsStr>>(args: &[S], stdin: &[u8]) -> Run {
    run_with(
        args,
        &Opts {
            stdin: Some(stdin),
            ..Opts::default()
        },
    )
}

/// Runs `logfmt args...`, feeding `stdin` (closed if `None`), killing it if it runs past the
/// timeout (a hang is a failure), and sampling its peak RSS.
fn run_with<S: AsRef<std::ffi::OsStr>>(args: &[S], opts: &Opts<'_>) -> Run {
    let bin = env!("CARGO_BIN_EXE_logfmt");
    let mut command = match opts.shell_prefix {
        Some(prefix) => {
            let mut c = Command::new("/bin/sh");
            c.arg("-c")
                .arg(format!("{prefix} exec \"$@\""))
                .arg("sh")
                .arg(bin);
            c
        }
        None => Command::new(bin),
    };
    command
        .args(args)
        .stdin(if opts.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    if let Some(uid) = opts.uid {
        use std::os::unix::process::CommandExt;
        command.uid(uid).gid(uid);
    }
    let start = Instant::now();
    let mut child = command.spawn().expect("spawn logfmt");
    let pid = child.id();
    let feeder = opts.stdin.map(|input| {
        let mut pipe = child.stdin.take().expect("stdin");
        let input = input.to_vec();
        // logfmt may legitimately stop reading early.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
        })
    });
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let timeout = opts.timeout.unwrap_or(Duration::from_secs(60));
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        peak = peak.max(vm_hwm_kib(pid).unwrap_or(0));
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "logfmt {:?} hung: killed after {timeout:?}",
                args.iter()
                    .map(|a| a.as_ref().to_owned())
                    .collect::<Vec<_>>()
            );
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let elapsed = start.elapsed();
    if let Some(f) = feeder {
        f.join().expect("stdin feeder");
    }
    Run {
        status,
        stdout: out_reader.join().expect("stdout reader"),
        stderr: String::from_utf8_lossy(&err_reader.join().expect("stderr reader")).into_owned(),
        elapsed,
        peak_rss_kib: peak,
    }
}

/// `VmHWM` of a live process, in KiB.
fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn p(path: &Path) -> &str {
    path.to_str().expect("UTF-8 temp path")
}

/// A log of `records` as LevelDB's writer lays it out.
fn log_of(records: &[Vec<u8>]) -> Vec<u8> {
    let mut writer = Writer::new(StdSink::new(Vec::new()), Box::new([0u8; BLOCK_SIZE]));
    for r in records {
        writer.add_record(r).expect("writing to memory");
    }
    writer.flush().expect("writing to memory");
    writer.into_parts().0.into_inner()
}

fn framed(records: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in records {
        out.extend_from_slice(&(r.len() as u32).to_le_bytes());
        out.extend_from_slice(r);
    }
    out
}

fn unframe(mut bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let (len, rest) = bytes.split_at(4);
        let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
        let (record, rest) = rest.split_at(len);
        out.push(record.to_vec());
        bytes = rest;
    }
    out
}

fn record(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// The state of a path: absent, or a file's bytes, or a directory's entry names.
#[derive(Debug, PartialEq, Eq)]
enum Snapshot {
    Absent,
    File(Vec<u8>),
    Dir(Vec<String>),
}

fn snapshot(path: &Path) -> Snapshot {
    match fs::symlink_metadata(path) {
        Err(_) => Snapshot::Absent,
        Ok(m) if m.is_dir() => {
            let mut names: Vec<String> = fs::read_dir(path)
                .map(|d| {
                    d.filter_map(Result::ok)
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            names.sort();
            Snapshot::Dir(names)
        }
        Ok(m) if m.is_file() => Snapshot::File(fs::read(path).unwrap_or_default()),
        Ok(_) => Snapshot::Dir(Vec::new()),
    }
}

/// The commands that read a log: `(name, extra args)`.
const READERS: &[&[&str]] = &[
    &["cat"],
    &["verify"],
    &["verify", "--json"],
    &["chunks"],
    &["stats"],
    &["split"],
];

// ---------------------------------------------------------------------------------------------

#[test]
fn missing_paths() -> TestResult {
    let dir = tempfile::tempdir()?;
    let missing = dir.path().join("missing.log");
    for args in READERS {
        let run = logfmt(&[args, &[p(&missing)][..]].concat(), b"");
        assert_eq!(run.code(), EXIT_ERROR, "{args:?}: {run:?}");
        let line = run.one_line_error();
        assert!(
            line.contains("missing.log") && line.contains("No such file"),
            "{line}"
        );
    }
    // Writing into a directory that does not exist: nothing is created.
    let nested = dir.path().join("no/such/dir/new.log");
    for extra in [&[][..], &["--append"], &["--force"]] {
        let mut args = vec!["write"];
        args.extend_from_slice(extra);
        args.push(p(&nested));
        let run = logfmt(&args, b"a record\n");
        assert_eq!(run.code(), EXIT_ERROR, "{args:?}: {run:?}");
        assert!(run.one_line_error().contains("new.log"), "{}", run.stderr);
        assert_eq!(snapshot(&dir.path().join("no")), Snapshot::Absent);
    }
    // salvage from a missing log creates no output.
    let out = dir.path().join("salvaged.log");
    let run = logfmt(&["salvage", p(&missing), p(&out)], b"");
    assert_eq!(run.code(), EXIT_ERROR, "{run:?}");
    run.one_line_error();
    assert_eq!(snapshot(&out), Snapshot::Absent);
    Ok(())
}

#[test]
fn directories() -> TestResult {
    let dir = tempfile::tempdir()?;
    fs::write(dir.path().join("inside.log"), log_of(&[b"x".to_vec()]))?;
    let before = snapshot(dir.path());
    for args in READERS {
        let run = logfmt(&[args, &[p(dir.path())][..]].concat(), b"");
        assert_eq!(run.code(), EXIT_ERROR, "{args:?}: {run:?}");
        assert!(
            run.one_line_error().contains("is a directory"),
            "{}",
            run.stderr
        );
    }
    for extra in [&[][..], &["--append"], &["--force"]] {
        let mut args = vec!["write"];
        args.extend_from_slice(extra);
        args.push(p(dir.path()));
        let run = logfmt(&args, b"a record\n");
        assert_eq!(run.code(), EXIT_ERROR, "{args:?}: {run:?}");
        assert!(
            run.one_line_error().contains("is a directory"),
            "{}",
            run.stderr
        );
    }
    let run = logfmt(
        &["salvage", p(&dir.path().join("inside.log")), p(dir.path())],
        b"",
    );
    assert_eq!(run.code(), EXIT_ERROR, "{run:?}");
    run.one_line_error();
    assert_eq!(snapshot(dir.path()), before, "the directory changed");
    Ok(())
}

/// Unreadable and unwritable files. Root is not denied by file modes, so as root the command
/// runs as `nobody` (uid 65534); if that is not possible the test says so and skips.
#[cfg(unix)]
#[test]
fn permission_denied() -> TestResult {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir()?;
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755))?;
    let log = log_of(&[b"secret".to_vec(), b"record".to_vec()]);
    let unreadable = dir.path().join("unreadable.log");
    fs::write(&unreadable, &log)?;
    fs::set_permissions(&unreadable, fs::Permissions::from_mode(0o000))?;
    let read_only = dir.path().join("read-only.log");
    fs::write(&read_only, &log)?;
    fs::set_permissions(&read_only, fs::Permissions::from_mode(0o444))?;
    let locked_dir = dir.path().join("locked");
    fs::create_dir(&locked_dir)?;
    fs::set_permissions(&locked_dir, fs::Permissions::from_mode(0o555))?;

    let root = fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)?;
    let uid = root.then_some(65_534);
    let opts = |stdin: &'static [u8]| Opts {
        stdin: Some(stdin),
        uid,
        ..Opts::default()
    };
    // Can the command run as that user at all (the binary reachable, setuid allowed)?
    let probe = std::panic::catch_unwind(|| run_with(&["--version"], &opts(b"")));
    match probe {
        Ok(run) if run.status.success() => {}
        other => {
            println!("SKIPPED permission_denied: cannot run logfmt as uid {uid:?}: {other:?}");
            return Ok(());
        }
    }
    // Is the file really unreadable for that user (not root, no capability)?
    if File::open(&unreadable).is_ok() && !root {
        println!("SKIPPED permission_denied: file modes do not deny this user");
        return Ok(());
    }

    let before = [&unreadable, &read_only, &locked_dir].map(|p| snapshot(p));
    for args in READERS {
        let run = run_with(&[args, &[p(&unreadable)][..]].concat(), &opts(b""));
        assert_eq!(run.code(), EXIT_ERROR, "{args:?}: {run:?}");
        let line = run.one_line_error();
        assert!(
            line.contains("unreadable.log") && line.contains("Permission denied"),
            "{line}"
        );
    }
    for extra in [&["--force"][..], &["--append"]] {
        let mut args = vec!["write"];
        args.extend_from_slice(extra);
        args.push(p(&read_only));
        let run = run_with(&args, &opts(b"more\n"));
        assert_eq!(run.code(), EXIT_ERROR, "{args:?}: {run:?}");
        assert!(
            run.one_line_error().contains("Permission denied"),
            "{}",
            run.stderr
        );
    }
    let new = locked_dir.join("new.log");
    for extra in [&[][..], &["--append"], &["--force"]] {
        let mut args = vec!["write"];
        args.extend_from_slice(extra);
        args.push(p(&new));
        let run = run_with(&args, &opts(b"record\n"));
        assert_eq!(run.code(), EXIT_ERROR, "{args:?}: {run:?}");
        assert!(
            run.one_line_error().contains("Permission denied"),
            "{}",
            run.stderr
        );
    }
    let after = [&unreadable, &read_only, &locked_dir].map(|p| snapshot(p));
    assert_eq!(before, after, "a failed command changed a file");
    // Let the temporary directory be removed.
    fs::set_permissions(&locked_dir, fs::Permissions::from_mode(0o755))?;
    Ok(())
}

/// A FIFO is read like any stream; writing a log into one is refused without blocking;
/// `/dev/stdin` works, empty or not, with and without an offset.
#[cfg(unix)]
#[test]
fn fifos_and_stdin() -> TestResult {
    let dir = tempfile::tempdir()?;
    let records = vec![b"one".to_vec(), record(40_000, 1), b"three".to_vec()];
    let log = log_of(&records);
    let fifo = dir.path().join("pipe");
    let made = Command::new("mkfifo").arg(&fifo).status()?;
    assert!(made.success(), "mkfifo");

    // Reading a FIFO: a writer feeds it.
    for args in [&["verify"][..], &["cat", "--output", "framed"]] {
        let feeder = {
            let fifo = fifo.clone();
            let log = log.clone();
            std::thread::spawn(move || -> std::io::Result<()> {
                let mut pipe = fs::OpenOptions::new().write(true).open(&fifo)?;
                pipe.write_all(&log)
            })
        };
        let run = run_with(&[args, &[p(&fifo)][..]].concat(), &Opts::default());
        feeder.join().expect("feeder")?;
        assert_eq!(run.code(), EXIT_OK, "{args:?}: {run:?}");
        if args[0] == "cat" {
            assert_eq!(unframe(&run.stdout), records);
        } else {
            assert!(run.stdout().contains("3 records"), "{}", run.stdout());
        }
    }
    // Writing a log into a FIFO: refused at once (opening it to write would block).
    let fifo_before = fs::symlink_metadata(&fifo)?.file_type();
    for extra in [&[][..], &["--append"], &["--force"]] {
        let mut args = vec!["write"];
        args.extend_from_slice(extra);
        args.push(p(&fifo));
        let run = run_with(
            &args,
            &Opts {
                stdin: Some(b"x\n"),
                timeout: Some(Duration::from_secs(20)),
                ..Opts::default()
            },
        );
        assert_eq!(run.code(), EXIT_ERROR, "{args:?}: {run:?}");
        assert!(
            run.one_line_error().contains("not a regular file"),
            "{}",
            run.stderr
        );
    }
    assert_eq!(
        fs::symlink_metadata(&fifo)?.file_type(),
        fifo_before,
        "the FIFO was replaced"
    );
    // Standard input, with an offset (skipped by reading), and empty.
    let run = logfmt(
        &["cat", "--output", "framed", "--offset", "1", "/dev/stdin"],
        &log,
    );
    assert_eq!(run.code(), EXIT_OK, "{run:?}");
    assert_eq!(unframe(&run.stdout), records[1..]);
    for args in READERS {
        let run = logfmt(&[args, &["/dev/stdin"][..]].concat(), b"");
        if args[0] == "split" {
            // Splitting needs a regular file (it reads ranges in parallel).
            assert_eq!(run.code(), EXIT_ERROR, "{args:?} on stdin: {run:?}");
            assert!(
                run.one_line_error().contains("not a regular file"),
                "{}",
                run.stderr
            );
        } else {
            assert_eq!(run.code(), EXIT_OK, "{args:?} on empty stdin: {run:?}");
        }
    }
    // Empty input to write: an empty log, successfully.
    for input in ["lines", "framed"] {
        let path = dir.path().join(format!("empty-{input}.log"));
        let run = logfmt(&["write", "--input", input, p(&path)], b"");
        assert_eq!(run.code(), EXIT_OK, "{run:?}");
        assert_eq!(fs::read(&path)?, b"");
    }
    Ok(())
}

/// A sparse file of `len` bytes (no disk used for the holes) with `records` written as a log
/// at offset 0 and again at the block-aligned offset `tail_at`.
fn sparse_log(path: &Path, len: u64, records: &[Vec<u8>], tail_at: u64) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom};
    let log = log_of(records);
    let mut file = File::create(path)?;
    file.set_len(len)?;
    file.write_all(&log)?;
    assert_eq!(tail_at % BLOCK_SIZE as u64, 0);
    file.seek(SeekFrom::Start(tail_at))?;
    file.write_all(&log)?;
    file.sync_all()
}

/// A 10 GB sparse file, zeros (as preallocated space reads) between a few records at its start
/// and a few more past 4 GiB near its end: every reading command gets through it in bounded
/// time and memory, offsets past 2^32 are right, and `--offset` seeks there.
#[test]
fn a_10_gb_sparse_file() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("sparse.log");
    let len = 10_000_000_000u64;
    let tail_at = (len - 100_000) / BLOCK_SIZE as u64 * BLOCK_SIZE as u64;
    let records = vec![b"first".to_vec(), record(50_000, 2), b"third".to_vec()];
    sparse_log(&path, len, &records, tail_at)?;
    let before = fs::metadata(&path)?.len();

    let run = run_with(
        &["verify", "--json", p(&path)],
        &Opts {
            timeout: Some(Duration::from_secs(300)),
            ..Opts::default()
        },
    );
    assert_eq!(run.code(), EXIT_OK, "{run:?}");
    let report: serde_json::Value = serde_json::from_slice(&run.stdout)?;
    assert_eq!(report["records"], 6, "{report}");
    println!(
        "verify, 10 GB sparse file: {:.1} s, peak RSS {} KiB ({} build)",
        run.elapsed.as_secs_f64(),
        run.peak_rss_kib,
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );
    assert!(
        run.peak_rss_kib < 64 * 1024,
        "peak RSS {} KiB",
        run.peak_rss_kib
    );

    // The records past 4 GiB, at their offsets, by seeking.
    let run = run_with(
        &[
            "cat",
            "--output",
            "json",
            "--offset",
            &(tail_at - 5).to_string(),
            p(&path),
        ],
        &Opts {
            timeout: Some(Duration::from_secs(60)),
            ..Opts::default()
        },
    );
    assert_eq!(run.code(), EXIT_OK, "{run:?}");
    let offsets: Vec<u64> = run
        .stdout()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).expect("JSON")["offset"]
                .as_u64()
                .expect("offset")
        })
        .collect();
    assert_eq!(offsets.len(), 3, "{}", run.stdout());
    assert_eq!(offsets[0], tail_at);
    assert!(offsets.iter().all(|&o| o > 1 << 32));
    assert!(
        run.elapsed < Duration::from_secs(10),
        "--offset did not seek: {:?}",
        run.elapsed
    );
    assert_eq!(
        fs::metadata(&path)?.len(),
        before,
        "reading changed the file"
    );
    Ok(())
}

/// Peak RSS of `verify` on a 4 GiB log (sparse: a few records at its start and past 4 GiB,
/// zeros between), printed for the README; it must stay small.
#[test]
fn verify_4_gib_peak_rss() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("4gib.log");
    let len = 4u64 << 30;
    let tail_at = len - 4 * BLOCK_SIZE as u64;
    let records: Vec<Vec<u8>> = (0..20).map(|i| record(1000 + i * 3000, i as u64)).collect();
    sparse_log(&path, len, &records, tail_at)?;
    let run = run_with(
        &["verify", p(&path)],
        &Opts {
            timeout: Some(Duration::from_secs(300)),
            ..Opts::default()
        },
    );
    assert_eq!(run.code(), EXIT_OK, "{run:?}");
    assert!(run.stdout().contains("40 records"), "{}", run.stdout());
    println!(
        "verify, 4 GiB log: peak RSS {} KiB, {:.1} s ({} build)",
        run.peak_rss_kib,
        run.elapsed.as_secs_f64(),
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );
    assert!(run.peak_rss_kib > 0, "no RSS sample");
    assert!(
        run.peak_rss_kib < 64 * 1024,
        "peak RSS {} KiB",
        run.peak_rss_kib
    );
    Ok(())
}

/// The largest frame length there is (a u32: 4 GiB − 1) with little behind it: refused as
/// malformed input without allocating it (bounded memory), exit 1; in `--append` mode the
/// complete records before it are appended (as documented) and the log stays whole.
#[test]
fn a_4_gib_frame_length() -> TestResult {
    let dir = tempfile::tempdir()?;
    let mut input = u32::MAX.to_le_bytes().to_vec();
    input.extend_from_slice(&[7u8; 1000]);
    let path = dir.path().join("new.log");
    let run = logfmt(&["write", "--input", "framed", p(&path)], &input);
    assert_eq!(run.code(), EXIT_BAD_DATA, "{run:?}");
    let line = run.one_line_error();
    assert!(
        line.contains("4294967295") && line.contains("byte offset 0"),
        "{line}"
    );
    assert!(
        run.peak_rss_kib < 64 * 1024,
        "peak RSS {} KiB",
        run.peak_rss_kib
    );

    let existing = dir.path().join("existing.log");
    let first = vec![b"kept".to_vec()];
    fs::write(&existing, log_of(&first))?;
    let good = vec![b"appended 1".to_vec(), b"appended 2".to_vec()];
    let mut input = framed(&good);
    input.extend_from_slice(&u32::MAX.to_le_bytes());
    input.extend_from_slice(b"short");
    let run = logfmt(
        &["write", "--append", "--input", "framed", p(&existing)],
        &input,
    );
    assert_eq!(run.code(), EXIT_BAD_DATA, "{run:?}");
    run.one_line_error();
    let all: Vec<Vec<u8>> = first.into_iter().chain(good).collect();
    assert_eq!(
        fs::read(&existing)?,
        log_of(&all),
        "the complete records, appended"
    );
    Ok(())
}

/// A failed `write` must not create the log: with no complete record in the input, there is
/// nothing to write.
#[test]
fn malformed_input_creates_no_file() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("new.log");
    let mut input = u32::MAX.to_le_bytes().to_vec();
    input.extend_from_slice(b"short");
    let run = logfmt(&["write", "--input", "framed", p(&path)], &input);
    assert_eq!(run.code(), EXIT_BAD_DATA, "{run:?}");
    assert_eq!(
        snapshot(&path),
        Snapshot::Absent,
        "a failed write created the file"
    );
    Ok(())
}

/// A failed `write --force` must not destroy the log it would have replaced.
#[test]
fn malformed_input_with_force_keeps_the_old_log() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("precious.log");
    let old = log_of(&[b"precious".to_vec()]);
    fs::write(&path, &old)?;
    let run = logfmt(
        &["write", "--force", "--input", "framed", p(&path)],
        &[5, 0, 0, 0, b'a'],
    );
    assert_eq!(run.code(), EXIT_BAD_DATA, "{run:?}");
    assert_eq!(
        fs::read(&path)?,
        old,
        "a failed write --force truncated the log"
    );
    Ok(())
}

/// Offsets that are not a u64 (in decimal, or in hex after `0x`) are usage errors (exit 2,
/// the error on the first line, nothing read); an offset past the end of the log reads
/// nothing, successfully.
#[test]
fn invalid_offsets() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log");
    fs::write(&path, log_of(&[b"a".to_vec(), b"b".to_vec()]))?;
    for bad in [
        "abc",
        "-1",
        "18446744073709551616",
        "",
        "1.5",
        "0x",
        "0x1g",
        "x10",
        " 7",
    ] {
        for cmd in ["cat", "verify"] {
            let arg = format!("--offset={bad}");
            let run = logfmt(&[cmd, &arg, p(&path)], b"");
            assert_eq!(run.code(), EXIT_ERROR, "{cmd} {arg}: {run:?}");
            let first = run.stderr.lines().next().unwrap_or_default();
            assert!(
                first.starts_with("error:") && first.contains("--offset"),
                "{cmd} {arg}: {first:?}"
            );
            assert!(run.stdout.is_empty());
        }
    }
    for past in ["1000000", "4294967296", "1099511627776", "0x10000000000"] {
        let run = logfmt(&["verify", "--offset", past, p(&path)], b"");
        assert_eq!(run.code(), EXIT_OK, "--offset {past}: {run:?}");
        assert!(run.stdout().contains("0 records"), "{}", run.stdout());
    }
    assert_eq!(
        fs::read(&path)?,
        log_of(&[b"a".to_vec(), b"b".to_vec()]),
        "the log changed"
    );
    Ok(())
}

/// Offsets past the largest file the file system allows (ext4: 16 TiB; any offset from 2^63
/// on, where `lseek` takes an `i64`) are past the end of any log too, but seeking there fails
/// with `EINVAL`, and `verify` reports it as a read error of the log (exit 2, and a "read
/// error" drop of 32768 bytes at that offset in its report) instead of reading nothing.
#[test]
fn offsets_past_the_largest_file_read_nothing() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log");
    fs::write(&path, log_of(&[b"a".to_vec()]))?;
    for past in [
        "17592186044416",
        "9223372036854775808",
        "18446744073709551000",
    ] {
        let run = logfmt(&["verify", "--offset", past, p(&path)], b"");
        assert_eq!(run.code(), EXIT_OK, "--offset {past}: {run:?}");
        assert!(run.stdout().contains("0 records"), "{}", run.stdout());
    }
    Ok(())
}

/// The last offsets of the u64 range (the decoder's block arithmetic overflowed there: a panic
/// in debug builds, fixed in the core) do not crash any reading command; the result is either
/// nothing read, or the seek error of `offsets_past_the_largest_file_read_nothing`.
#[test]
fn the_largest_offsets_do_not_crash() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log");
    fs::write(&path, log_of(&[b"a".to_vec()]))?;
    for offset in [u64::MAX - 4, u64::MAX] {
        for cmd in ["cat", "verify"] {
            let run = logfmt(&[cmd, "--offset", &offset.to_string(), p(&path)], b"");
            assert!(
                [EXIT_OK, EXIT_ERROR].contains(&run.code()),
                "{cmd} --offset {offset}: {run:?}"
            );
            assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
            if run.code() == EXIT_ERROR {
                let last = run.stderr.lines().last().unwrap_or_default();
                assert!(last.starts_with("logfmt: error: "), "{last}");
            }
        }
    }
    Ok(())
}

/// Writing to `/dev/full`: a clear error, exit 2, whatever the mode.
#[cfg(target_os = "linux")]
#[test]
fn dev_full() {
    for extra in [&[][..], &["--append"], &["--force"], &["--input", "framed"]] {
        let mut args = vec!["write"];
        args.extend_from_slice(extra);
        args.push("/dev/full");
        let run = logfmt(&args, &framed(&[b"a record".to_vec()]));
        assert_eq!(run.code(), EXIT_ERROR, "{args:?}: {run:?}");
        assert!(run.one_line_error().contains("/dev/full"), "{}", run.stderr);
    }
}

/// The file system refuses to grow the log mid-write (`RLIMIT_FSIZE`: `EFBIG`, like `ENOSPC` a
/// write that fails part-way): a clear error, exit 2, and what was written reads back as the
/// first records, whole, with nothing but a torn tail after them.
#[cfg(target_os = "linux")]
#[test]
fn the_file_system_refuses_mid_write() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("limited.log");
    let records: Vec<Vec<u8>> = (0..40).map(|i| record(100 + i * 2017, i as u64)).collect();
    let limit = 100_000;
    let run = run_with(
        &["write", "--append", "--input", "framed", p(&path)],
        &Opts {
            stdin: Some(&framed(&records)),
            // SIGXFSZ ignored, so the write fails with EFBIG instead of killing the process.
            shell_prefix: Some(&format!(
                "trap '' XFSZ; prlimit --pid $$ --fsize={limit}:{limit} &&"
            )),
            ..Opts::default()
        },
    );
    if run.stderr.contains("prlimit:") {
        println!("SKIPPED the_file_system_refuses_mid_write: {}", run.stderr);
        return Ok(());
    }
    assert_eq!(run.code(), EXIT_ERROR, "{run:?}");
    let line = run.one_line_error();
    assert!(
        line.contains("limited.log") && line.contains("File too large"),
        "{line}"
    );
    let written = fs::read(&path)?;
    assert!(written.len() as u64 <= limit);
    let complete = {
        let full = log_of(&records);
        assert_eq!(
            written[..],
            full[..written.len()],
            "the bytes written are the log's"
        );
        let run = logfmt(&["cat", "--output", "framed", p(&path)], b"");
        assert_eq!(run.code(), EXIT_OK, "{run:?}");
        assert!(
            run.stderr.is_empty(),
            "a report on a torn tail: {}",
            run.stderr
        );
        unframe(&run.stdout)
    };
    assert!(!complete.is_empty());
    assert_eq!(
        complete,
        records[..complete.len()],
        "the first records, whole"
    );
    let run = logfmt(&["verify", p(&path)], b"");
    assert_eq!(run.code(), EXIT_OK, "a torn tail is not damage: {run:?}");
    Ok(())
}

/// The framed-input parser's contract, through the binary: any sequence of frames (empty,
/// small, block-sized, larger than a block) is written as exactly those records; input cut
/// anywhere writes exactly the complete frames before the cut and exits 1.
#[test]
fn framed_input_round_trips_whatever_the_frames() -> TestResult {
    let dir = tempfile::tempdir()?;
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    for case in 0..16 {
        let count = next(12) as usize;
        let records: Vec<Vec<u8>> = (0..count)
            .map(|i| {
                let len = match next(6) {
                    0 => 0,
                    1 => next(8) as usize,
                    2 => 32_754 + next(16) as usize,
                    3 => next(100_000) as usize,
                    _ => next(300) as usize,
                };
                record(len, (case * 100 + i) as u64)
            })
            .collect();
        let input = framed(&records);
        let cut = if case % 2 == 0 {
            input.len()
        } else {
            next(input.len() as u64 + 1) as usize
        };
        let path = dir.path().join(format!("case-{case}.log"));
        let run = logfmt(&["write", "--input", "framed", p(&path)], &input[..cut]);
        // The frames complete before the cut.
        let mut complete = 0;
        let mut at = 0;
        for r in &records {
            if at + 4 + r.len() <= cut {
                complete += 1;
                at += 4 + r.len();
            } else {
                break;
            }
        }
        let whole = at == cut;
        assert_eq!(
            run.code(),
            if whole { EXIT_OK } else { EXIT_BAD_DATA },
            "case {case}: {run:?}"
        );
        if !whole {
            assert!(
                run.one_line_error().contains(&format!("byte offset {at}")),
                "{}",
                run.stderr
            );
        }
        if complete == 0 && !whole {
            // Failed before any whole record: nothing was created.
            assert!(
                !path.exists(),
                "case {case}: a failed write created the file"
            );
            continue;
        }
        let back = logfmt(&["cat", "--output", "framed", p(&path)], b"");
        assert_eq!(back.code(), EXIT_OK);
        assert_eq!(unframe(&back.stdout), records[..complete], "case {case}");
        assert_eq!(
            fs::read(&path)?,
            log_of(&records[..complete]),
            "case {case}: LevelDB's bytes"
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// FIFOs as outputs, pipelines into the log they read, standard input's limits, SIGXFSZ.

/// A FIFO at `dir/name`.
#[cfg(unix)]
fn fifo(dir: &Path, name: &str) -> std::io::Result<std::path::PathBuf> {
    let path = dir.join(name);
    let made = Command::new("mkfifo").arg(&path).status()?;
    assert!(made.success(), "mkfifo");
    Ok(path)
}

/// An output that is a FIFO (nobody reading it) is refused at once, with one line, not opened:
/// opening it would wait for a reader. `split` of a FIFO too (it needs a regular file).
#[cfg(unix)]
#[test]
fn fifo_outputs_are_refused_at_once() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("in.log");
    fs::write(&log, log_of(&[b"one".to_vec(), record(40_000, 2)]))?;
    let out = fifo(dir.path(), "out")?;
    let quick = |args: &[&str], stdin: Option<&[u8]>| {
        run_with(
            args,
            &Opts {
                stdin,
                timeout: Some(Duration::from_secs(20)),
                ..Opts::default()
            },
        )
    };
    for args in [
        &["salvage", p(&log), p(&out)][..],
        &["salvage", "--force", p(&log), p(&out)],
        &["export", p(&log), p(&out)],
        &["export", "--force", p(&log), p(&out)],
        &["split", p(&out)],
        &["split", "--parts", "2", p(&log), p(&out)],
    ] {
        let run = quick(args, None);
        assert_eq!(run.code(), EXIT_ERROR, "{args:?}: {run:?}");
        let line = run.one_line_error();
        assert!(
            line.contains("not a regular file") && line.contains("out"),
            "{line}"
        );
        assert!(run.elapsed < Duration::from_secs(10), "{args:?}: {run:?}");
    }
    // Standard input a regular file (the same-file check looks at the FIFO too).
    let run = run_with(
        &["write", "--append", p(&out)],
        &Opts {
            shell_prefix: Some(&format!("exec < '{}';", p(&log))),
            timeout: Some(Duration::from_secs(20)),
            ..Opts::default()
        },
    );
    assert_eq!(run.code(), EXIT_ERROR, "{run:?}");
    assert!(run.one_line_error().contains("not a regular file"));
    use std::os::unix::fs::FileTypeExt;
    assert!(fs::symlink_metadata(&out)?.file_type().is_fifo());
    Ok(())
}

/// `logfmt cat a.log | logfmt write --append a.log` ends: `cat` reads the log up to the length
/// it had when it was opened, not what `write` appends meanwhile. The log then holds its
/// records twice, on one thread and on several.
#[cfg(unix)]
#[test]
fn a_pipeline_into_the_log_it_reads_ends() -> TestResult {
    let dir = tempfile::tempdir()?;
    let records: Vec<Vec<u8>> = (0..60_000).map(|i| record(30 + i % 20, i as u64)).collect();
    let bin = env!("CARGO_BIN_EXE_logfmt");
    for threads in ["1", "4"] {
        let path = dir.path().join(format!("a{threads}.log"));
        fs::write(&path, log_of(&records))?;
        let mut cat = Command::new(bin)
            .args(["cat", "--threads", threads, "--output", "framed", p(&path)])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let pipe = cat.stdout.take().ok_or("cat's standard output")?;
        let mut write = Command::new(bin)
            .args(["write", "--input", "framed", "--append", p(&path)])
            .stdin(Stdio::from(pipe))
            .stderr(Stdio::null())
            .spawn()?;
        let start = Instant::now();
        let mut codes = [None, None];
        while codes.iter().any(Option::is_none) {
            for (code, child) in codes.iter_mut().zip([&mut cat, &mut write]) {
                if code.is_none() {
                    *code = child.try_wait()?.map(|s| s.code());
                }
            }
            if start.elapsed() > Duration::from_secs(60) {
                let _ = cat.kill();
                let _ = write.kill();
                let _ = cat.wait();
                let _ = write.wait();
                panic!(
                    "the pipeline did not end: the log grew to {} bytes",
                    fs::metadata(&path)?.len()
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(codes, [Some(Some(0)), Some(Some(0))], "threads {threads}");
        let run = logfmt(&["cat", "--output", "framed", p(&path)], b"");
        assert_eq!(run.code(), EXIT_OK, "{run:?}");
        let twice = [records.clone(), records.clone()].concat();
        assert!(
            unframe(&run.stdout) == twice,
            "threads {threads}: not the records twice"
        );
    }
    Ok(())
}

/// `write --append a.log < a.log` is refused with one line, the log unchanged (it would read
/// its own records back without end); through a symbolic link too.
#[cfg(unix)]
#[test]
fn standard_input_that_is_the_log_is_refused() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("a.log");
    let log = log_of(&[b"one".to_vec(), b"two".to_vec()]);
    fs::write(&path, &log)?;
    let link = dir.path().join("link.log");
    std::os::unix::fs::symlink(&path, &link)?;
    for (stdin, target) in [(&path, &path), (&path, &link), (&link, &path)] {
        for mode in ["--append", "--force"] {
            let run = run_with(
                &["write", mode, p(target)],
                &Opts {
                    shell_prefix: Some(&format!("exec < '{}';", p(stdin))),
                    timeout: Some(Duration::from_secs(20)),
                    ..Opts::default()
                },
            );
            assert_eq!(
                run.code(),
                EXIT_ERROR,
                "{mode} {target:?} < {stdin:?}: {run:?}"
            );
            assert!(
                run.one_line_error().contains("the output is the input"),
                "{}",
                run.stderr
            );
            assert_eq!(fs::read(&path)?, log);
        }
    }
    Ok(())
}

/// The names in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// A line of standard input longer than --line-limit (64 MiB by default) is an error on one
/// line, exit 2: a new log is not written and no temporary file is left; the line is not held
/// whole (the peak memory stays near the limit). A line of exactly the limit is a record.
#[test]
fn an_endless_line_is_refused_in_bounded_memory() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("x.log");
    // The default limit, passed by one byte: 64 MiB of zeros and no newline.
    let endless = vec![0u8; (64 << 20) + 1];
    let run = logfmt(&["write", p(&path)], &endless);
    assert_eq!(run.code(), EXIT_ERROR, "{run:?}");
    let line = run.one_line_error();
    assert!(
        line.contains("longer than 67108864 bytes") && line.contains("--line-limit"),
        "{line}"
    );
    assert_eq!(names_in(dir.path()), Vec::<String>::new());
    assert!(
        run.peak_rss_kib < 100 << 10,
        "peak RSS {} KiB for a line limited to 64 MiB",
        run.peak_rss_kib
    );
    // --force over a log: the log is kept.
    let old = log_of(&[b"old".to_vec()]);
    fs::write(&path, &old)?;
    let run = logfmt(
        &["write", "--force", "--line-limit", "1000", p(&path)],
        &[b'x'; 5000],
    );
    assert_eq!(run.code(), EXIT_ERROR, "{run:?}");
    assert!(run.one_line_error().contains("longer than 1000 bytes"));
    assert_eq!(fs::read(&path)?, old);
    assert_eq!(names_in(dir.path()), ["x.log"]);
    // --append: the records before the line are appended, the line is not.
    let run = logfmt(
        &["write", "--append", "--line-limit", "3", p(&path)],
        b"abc\nd\nabcd\nlast\n",
    );
    assert_eq!(run.code(), EXIT_ERROR, "{run:?}");
    assert!(
        run.one_line_error().contains("byte offset 6"),
        "{}",
        run.stderr
    );
    let run = logfmt(&["cat", "--output", "framed", p(&path)], b"");
    let want: Vec<Vec<u8>> = vec![b"old".to_vec(), b"abc".to_vec(), b"d".to_vec()];
    assert_eq!(unframe(&run.stdout), want);
    // A line of exactly the limit is a record.
    let exact = dir.path().join("exact.log");
    let run = logfmt(&["write", "--line-limit", "3", p(&exact)], b"abc\nab\nabc");
    assert_eq!(run.code(), EXIT_OK, "{run:?}");
    let run = logfmt(&["cat", "--output", "framed", p(&exact)], b"");
    let want: Vec<Vec<u8>> = vec![b"abc".to_vec(), b"ab".to_vec(), b"abc".to_vec()];
    assert_eq!(unframe(&run.stdout), want);
    Ok(())
}

/// Under a file-size limit (`ulimit -f`) with SIGXFSZ at its default action, `write` is not
/// killed: the write fails with EFBIG, reported on one line (exit 2); a new log is not put in
/// place and no temporary file is left, with or without --force.
#[cfg(target_os = "linux")]
#[test]
fn a_file_size_limit_is_an_error_not_a_signal() -> TestResult {
    let dir = tempfile::tempdir()?;
    let records: Vec<Vec<u8>> = (0..40).map(|i| record(100 + i * 2017, i as u64)).collect();
    let limit = 100_000;
    let old = log_of(&[record(150_000, 7)]);
    for force in [false, true] {
        let path = dir.path().join("limited.log");
        if force {
            fs::write(&path, &old)?;
        }
        let mut args = vec!["write", "--input", "framed"];
        if force {
            args.push("--force");
        }
        args.push(p(&path));
        let run = run_with(
            &args,
            &Opts {
                stdin: Some(&framed(&records)),
                // SIGXFSZ back at its default action (killing), whatever the caller set.
                shell_prefix: Some(&format!(
                    "trap - XFSZ; prlimit --pid $$ --fsize={limit}:{limit} &&"
                )),
                ..Opts::default()
            },
        );
        if run.stderr.contains("prlimit:") {
            println!(
                "SKIPPED a_file_size_limit_is_an_error_not_a_signal: {}",
                run.stderr
            );
            return Ok(());
        }
        assert!(run.status.code().is_some(), "killed by a signal: {run:?}");
        assert_eq!(run.code(), EXIT_ERROR, "{run:?}");
        let line = run.one_line_error();
        assert!(line.contains("File too large"), "{line}");
        if force {
            assert_eq!(fs::read(&path)?, old, "--force: the old log is kept");
            assert_eq!(names_in(dir.path()), ["limited.log"]);
        } else {
            assert_eq!(names_in(dir.path()), Vec::<String>::new());
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Smaller things: terminal bytes in clap's errors, `cat --follow` on a truncated or replaced
// log, `write --force` on a symbolic link, a database log that is a device, `split` with more
// parts than blocks.

/// A value clap refuses is quoted in its message with its control characters escaped: an
/// escape sequence on the command line does not reach the terminal.
#[test]
fn refused_values_are_shown_escaped() {
    for args in [
        &["cat", "--offset", "x\x1b[31m", "f"][..],
        &["cat", "--range", "\x1b]0;title\x07..", "f"],
        &["write", "--wait=\x1b[2J", "f"],
        &["cat", "--bogus\x1b[31m", "f"],
    ] {
        let run = logfmt(args, b"");
        assert_eq!(run.code(), EXIT_ERROR, "{args:?}: {run:?}");
        assert!(
            !run.stderr.chars().any(|c| c.is_control() && c != '\n'),
            "{:?}",
            run.stderr
        );
        assert!(run.stderr.contains(r"\u{1b}"), "{:?}", run.stderr);
        assert!(run.stderr.starts_with("error: "), "{:?}", run.stderr);
    }
    // Help is as it was.
    let run = logfmt(&["cat", "--help"], b"");
    assert_eq!(run.code(), EXIT_OK);
    assert!(run.stdout().contains("--follow"));
}

/// `cat --follow` notes on standard error that the log was truncated, or replaced by a new
/// file (as `tail -f` says "file truncated"), and prints the log again from its start.
#[cfg(unix)]
#[test]
fn follow_notes_truncation_and_replacement() -> TestResult {
    use std::sync::{Arc, Mutex};
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("f.log");
    fs::write(&path, log_of(&[b"one".to_vec(), b"two".to_vec()]))?;
    /// Killed when dropped: a failed assertion does not leave it running.
    struct Follower(std::process::Child);
    impl Drop for Follower {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = Follower(
        Command::new(env!("CARGO_BIN_EXE_logfmt"))
            .args(["cat", "--follow", "--decode", "raw", p(&path)])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?,
    );
    let collect = |mut from: Box<dyn Read + Send>| {
        let seen = Arc::new(Mutex::new(String::new()));
        let into = Arc::clone(&seen);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = from.read(&mut buf) {
                if n == 0 {
                    break;
                }
                if let Ok(mut text) = into.lock() {
                    text.push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            }
        });
        seen
    };
    let out = collect(Box::new(child.0.stdout.take().ok_or("stdout")?));
    let err = collect(Box::new(child.0.stderr.take().ok_or("stderr")?));
    let wait_for = |what: &Arc<Mutex<String>>, text: &str| {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20) {
            if what.lock().is_ok_and(|t| t.contains(text)) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    };
    assert!(
        wait_for(&out, "one\ntwo\n"),
        "{:?}",
        out.lock().map(|t| t.clone())
    );
    // Truncated, then written again.
    fs::write(&path, log_of(&[b"three".to_vec()]))?;
    assert!(
        wait_for(&err, "file truncated"),
        "{:?}",
        err.lock().map(|t| t.clone())
    );
    assert!(
        wait_for(&out, "two\nthree\n"),
        "{:?}",
        out.lock().map(|t| t.clone())
    );
    // Replaced by a new file (renamed over it).
    let new = dir.path().join("new.log");
    fs::write(
        &new,
        log_of(&[b"four".to_vec(), b"five".to_vec(), b"six".to_vec()]),
    )?;
    fs::rename(&new, &path)?;
    assert!(
        wait_for(&err, "replaced by a new file"),
        "{:?}",
        err.lock().map(|t| t.clone())
    );
    assert!(
        wait_for(&out, "three\nfour\nfive\nsix\n"),
        "{:?}",
        out.lock().map(|t| t.clone())
    );
    drop(child);
    let notes = err.lock().map(|t| t.clone()).unwrap_or_default();
    assert_eq!(notes.lines().count(), 2, "{notes}");
    Ok(())
}

/// `write --force` on a symbolic link writes through it, as `write --append` does: the link
/// stays, the file it points to gets the new log.
#[cfg(unix)]
#[test]
fn force_writes_through_a_symbolic_link_as_append_does() -> TestResult {
    let dir = tempfile::tempdir()?;
    let target = dir.path().join("real.log");
    let link = dir.path().join("link.log");
    fs::write(&target, log_of(&[b"old".to_vec()]))?;
    std::os::unix::fs::symlink("real.log", &link)?;
    let run = logfmt(&["write", "--force", p(&link)], b"new\n");
    assert_eq!(run.code(), EXIT_OK, "{run:?}");
    assert!(fs::symlink_metadata(&link)?.file_type().is_symlink());
    assert_eq!(fs::read(&target)?, log_of(&[b"new".to_vec()]));
    let run = logfmt(&["write", "--append", p(&link)], b"more\n");
    assert_eq!(run.code(), EXIT_OK, "{run:?}");
    assert!(fs::symlink_metadata(&link)?.file_type().is_symlink());
    assert_eq!(
        fs::read(&target)?,
        log_of(&[b"new".to_vec(), b"more".to_vec()])
    );
    assert_eq!(names_in(dir.path()), ["link.log", "real.log"]);
    Ok(())
}

/// A database directory whose write-ahead log is a link to `/dev/zero` is refused at once
/// (one line, exit 2), not read without end; so is one whose MANIFEST is a FIFO, or whose
/// CURRENT is a link to `/dev/zero`.
#[cfg(unix)]
#[test]
fn a_database_file_that_is_not_regular_is_refused() -> TestResult {
    for (case, culprit) in [
        ("log", "000003.log"),
        ("manifest", "MANIFEST-000001"),
        ("current", "CURRENT"),
    ] {
        let dir = tempfile::tempdir()?;
        let db = dir.path();
        if case == "current" {
            std::os::unix::fs::symlink("/dev/zero", db.join("CURRENT"))?;
        } else {
            fs::write(db.join("CURRENT"), "MANIFEST-000001\n")?;
        }
        if case == "manifest" {
            fifo(db, "MANIFEST-000001")?;
        } else {
            fs::write(db.join("MANIFEST-000001"), b"")?;
        }
        if case == "log" {
            std::os::unix::fs::symlink("/dev/zero", db.join("000003.log"))?;
        } else {
            fs::write(db.join("000003.log"), log_of(&[b"one".to_vec()]))?;
        }
        for args in READERS {
            let run = run_with(
                &[args, &[p(db)][..]].concat(),
                &Opts {
                    timeout: Some(Duration::from_secs(20)),
                    ..Opts::default()
                },
            );
            assert_eq!(run.code(), EXIT_ERROR, "{case}: {args:?}: {run:?}");
            let line = run.one_line_error();
            assert!(
                line.contains("not a regular file") && line.contains(culprit),
                "{case}: {line}"
            );
        }
    }
    Ok(())
}

/// `split --parts 1000000` of a 108 KB log is quick: at most 64 ranges per block (256 here).
#[test]
fn more_parts_than_blocks_are_quick() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("small.log");
    let records: Vec<Vec<u8>> = (0..3375).map(|i| record(25, i)).collect();
    let log = log_of(&records);
    assert!(
        log.len() > 100_000 && log.len() <= 4 * BLOCK_SIZE,
        "{}",
        log.len()
    );
    fs::write(&path, &log)?;
    let run = run_with(
        &["split", "--json", "--parts", "1000000", p(&path)],
        &Opts {
            timeout: Some(Duration::from_secs(30)),
            ..Opts::default()
        },
    );
    assert_eq!(run.code(), EXIT_OK, "{run:?}");
    let doc: serde_json::Value = serde_json::from_slice(&run.stdout)?;
    assert_eq!(doc["records"], 3375);
    assert_eq!(doc["ranges"].as_array().map(Vec::len), Some(256));
    assert!(run.elapsed < Duration::from_secs(10), "{:?}", run.elapsed);
    Ok(())
}
