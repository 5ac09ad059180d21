//! Nothing lost, whatever the user does: one writer at a time, outputs that never destroy
//! inputs, failures that leave files as they were (or say exactly what they hold).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use logfmt_std::{
    Error, LogReaderOptions, LogWriter, LogWriterOptions, RecoveryMode,
    advanced::{Entry, LogReader, ReadFormat, ReadOptions},
};

mod common;

use common::*;

/// `1\n2\n...n\n`, as `seq` prints it, starting at `from`.
fn seq(from: u64, n: u64) -> Vec<u8> {
    (from..from + n)
        .flat_map(|i| format!("{i}\n").into_bytes())
        .collect()
}

/// Every record of the log at `path` (read as `format`), and how many damaged regions
/// reading it with `--recovery skip` found (a torn tail is not counted).
fn contents(path: &Path, format: ReadFormat) -> Result<(Vec<Vec<u8>>, usize), Error> {
    let data =
        fs::read(path).map_err(|e| Error::io(logfmt_std::advanced::Operation::Read, path, e))?;
    let options = LogReaderOptions::new()
        .read(ReadOptions::new().format(format))
        .recovery(RecoveryMode::SkipAnyCorruptedRecords);
    let mut reader = LogReader::from_slice(&data, &options);
    let (mut records, mut damage) = (Vec::new(), 0);
    while let Ok(Some(entry)) = reader.next() {
        match entry {
            Entry::Record(r) => records.push(r.data.to_vec()),
            Entry::Damage(d) if d.kind != logfmt_std::DamageKind::TornTail => damage += 1,
            Entry::Damage(_) => {}
            other => panic!("not expected here: {other:?}"),
        }
    }
    Ok((records, damage))
}

fn lines(from: u64, n: u64) -> Vec<Vec<u8>> {
    (from..from + n)
        .map(|i| i.to_string().into_bytes())
        .collect()
}

/// Temporary files left in `dir` (named `.NAME.XXXXXX.tmp`).
fn leftovers(dir: &Path) -> Vec<PathBuf> {
    fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().ends_with(".tmp"))
                .collect()
        })
        .unwrap_or_default()
}

/// Starts `logfmt args...` with its standard input a pipe held open.
fn start(args: &[&str]) -> std::io::Result<Child> {
    Command::new(env!("CARGO_BIN_EXE_logfmt"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
}

/// Waits until another process holds the writer lock of `path` (probing takes the lock for
/// an instant, so the process probed for must be one that waits for it).
fn wait_until_locked(path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        let probe = LogWriter::append(path, &LogWriterOptions::new().create_missing(false));
        match probe {
            Err(Error::Locked { .. }) => return Ok(()),
            // Let go at once: the process probed for is waiting for it.
            Ok(writer) => drop(writer),
            Err(Error::Io { .. }) => {}
            Err(e) => return Err(e.into()),
        }
        thread::sleep(Duration::from_millis(5));
    }
    Err("the writer never took the lock".into())
}

/// `logfmt args...` run under `sh` with its file size limited to `blocks` of 512 bytes
/// (`ulimit -f`), SIGXFSZ ignored: writes past the limit fail with EFBIG, as they fail with
/// ENOSPC on a full disk.
fn limited(blocks: u32, args: &[&str], stdin: &[u8]) -> Output {
    let script = format!("trap '' XFSZ; ulimit -f {blocks}; exec \"$0\" \"$@\"");
    let mut sh_args = vec!["-c", &script, env!("CARGO_BIN_EXE_logfmt")];
    sh_args.extend_from_slice(args);
    let mut child = Command::new("sh")
        .args(&sh_args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn sh");
    let mut pipe = child.stdin.take().expect("stdin");
    let input = stdin.to_vec();
    let feeder = thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let output = child.wait_with_output().expect("wait for sh");
    feeder.join().expect("stdin feeder");
    output
}

#[test]
fn two_appenders_at_once_lose_nothing() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("c.log");
    assert_eq!(status(&logfmt(&["write", p(&log)], &seq(1, 10))), 0);
    // Two appenders fed 30 000 lines each, at the same time; each waits for the other.
    let writers: Vec<_> = [(100_000, 30_000), (200_000, 30_000)]
        .into_iter()
        .map(|(from, n)| {
            let log = log.clone();
            thread::spawn(move || logfmt(&["write", "--append", "--wait", p(&log)], &seq(from, n)))
        })
        .collect();
    for writer in writers {
        let out = writer.join().map_err(|_| "writer thread panicked")?;
        assert_eq!(status(&out), 0, "{}", stderr(&out));
    }
    let (records, damage) = contents(&log, ReadFormat::Legacy)?;
    assert_eq!(damage, 0);
    assert_eq!(records.len(), 60_010);
    assert_eq!(records[..10], lines(1, 10)[..]);
    // One after the other, each whole.
    let (a, b) = (lines(100_000, 30_000), lines(200_000, 30_000));
    let rest = &records[10..];
    assert!(
        rest == [a.clone(), b.clone()].concat() || rest == [b, a].concat(),
        "the appenders' records are interleaved"
    );
    Ok(())
}

#[test]
fn a_second_writer_is_refused_at_once_or_waits() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("held.log");
    assert_eq!(status(&logfmt(&["write", p(&log)], &seq(1, 3))), 0);
    let other = dir.path().join("other.log");
    assert_eq!(status(&logfmt(&["write", p(&other)], &seq(1, 3))), 0);
    let mut holder = start(&["write", "--append", "--wait", p(&log)])?;
    wait_until_locked(&log)?;
    let before = fs::read(&log)?;

    // Refused at once, naming the file, with status 2; nothing changed.
    for args in [
        &["write", "--append", p(&log)][..],
        &["write", "--force", p(&log)],
        &["salvage", "--force", p(&other), p(&log)],
    ] {
        let started = Instant::now();
        let out = logfmt(args, b"x\n");
        assert_eq!(status(&out), 2, "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!("another writer holds the log's lock: {}", p(&log))),
            "{}",
            stderr(&out)
        );
        assert!(stderr(&out).contains("--wait"), "{}", stderr(&out));
        assert!(started.elapsed() < Duration::from_secs(5));
    }
    // Waiting a while, then refused.
    let started = Instant::now();
    let out = logfmt(&["write", "--append", "--wait=0.3", p(&log)], b"x\n");
    assert_eq!(status(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("(waited 0.3 s)"), "{}", stderr(&out));
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(fs::read(&log)?, before);

    // A writer that waits goes on once the holder is done.
    let waiter = {
        let log = log.clone();
        thread::spawn(move || logfmt(&["write", "--append", "--wait", p(&log)], &seq(4, 2)))
    };
    thread::sleep(Duration::from_millis(200));
    let mut stdin = holder.stdin.take().ok_or("no stdin")?;
    stdin.write_all(&seq(100, 2))?;
    drop(stdin);
    let out = holder.wait_with_output()?;
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let out = waiter.join().map_err(|_| "waiter panicked")?;
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let (records, damage) = contents(&log, ReadFormat::Legacy)?;
    assert_eq!(damage, 0);
    assert_eq!(
        records,
        [lines(1, 3), lines(100, 2), lines(4, 2)].concat(),
        "the holder appended first, then the waiter"
    );
    // Readers never wait.
    let mut holder = start(&["write", "--append", "--wait", p(&log)])?;
    wait_until_locked(&log)?;
    let out = logfmt(&["cat", p(&log)], b"");
    assert_eq!(status(&out), 0);
    assert_eq!(stdout(&out).lines().count(), 7);
    drop(holder.stdin.take());
    holder.wait()?;
    Ok(())
}

#[test]
fn a_writer_waiting_on_a_replaced_log_writes_the_new_one() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("r.log");
    assert_eq!(status(&logfmt(&["write", p(&log)], &seq(1, 3))), 0);
    // `write --force` holds the old log's lock while it writes the new one beside it.
    let mut replacer = start(&["write", "--force", "--wait", p(&log)])?;
    wait_until_locked(&log)?;
    let appender = {
        let log = log.clone();
        thread::spawn(move || logfmt(&["write", "--append", "--wait", p(&log)], &seq(50, 2)))
    };
    thread::sleep(Duration::from_millis(200));
    let mut stdin = replacer.stdin.take().ok_or("no stdin")?;
    stdin.write_all(&seq(10, 2))?;
    drop(stdin);
    let out = replacer.wait_with_output()?;
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let out = appender.join().map_err(|_| "appender panicked")?;
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    // The appender continued the new log, not the replaced one.
    let (records, _) = contents(&log, ReadFormat::Legacy)?;
    assert_eq!(records, [lines(10, 2), lines(50, 2)].concat());
    Ok(())
}

#[test]
fn salvage_never_writes_over_its_input() -> TestResult {
    let dir = tempfile::tempdir()?;
    let input = dir.path().join("in.log");
    assert_eq!(status(&logfmt(&["write", p(&input)], &seq(1, 1000))), 0);
    let original = fs::read(&input)?;
    let hard = dir.path().join("hard.log");
    fs::hard_link(&input, &hard)?;
    let soft = dir.path().join("soft.log");
    std::os::unix::fs::symlink(&input, &soft)?;
    for output in [&hard, &soft, &input] {
        let out = logfmt(&["salvage", "--force", p(&input), p(output)], b"");
        assert_eq!(status(&out), 2, "{}", stderr(&out));
        assert!(
            stderr(&out).contains("the output is the input"),
            "{}",
            stderr(&out)
        );
        assert_eq!(fs::read(&input)?, original, "{output:?}");
    }
    // Standard input as the log appended to: refused.
    let out = Command::new(env!("CARGO_BIN_EXE_logfmt"))
        .args(["write", "--append", p(&input)])
        .stdin(fs::File::open(&hard)?)
        .output()?;
    assert_eq!(status(&out), 2, "{}", stderr(&out));
    assert_eq!(fs::read(&input)?, original);
    assert!(leftovers(dir.path()).is_empty());
    Ok(())
}

#[test]
fn a_failed_write_leaves_the_file_as_it_was_and_no_temporary_file() -> TestResult {
    let dir = tempfile::tempdir()?;
    let old = dir.path().join("old.log");
    assert_eq!(status(&logfmt(&["write", p(&old)], &seq(1, 100))), 0);
    let original = fs::read(&old)?;
    let big = seq(1, 100_000);
    let new = dir.path().join("new.log");
    let input = dir.path().join("in.log");
    assert_eq!(status(&logfmt(&["write", p(&input)], &big)), 0);
    for args in [
        &["write", "--force", p(&old)][..],
        &["write", p(&new)],
        &["salvage", "--force", p(&input), p(&old)],
        &["salvage", p(&input), p(&new)],
    ] {
        // 64 KiB: the new log does not fit.
        let out = limited(128, args, &big);
        assert_eq!(status(&out), 2, "{args:?}: {}", stderr(&out));
        let message = stderr(&out);
        assert!(message.contains("cannot write log: "), "{message}");
        assert!(message.contains("File too large"), "{message}");
        assert!(message.contains("left as it was"), "{message}");
        assert_eq!(fs::read(&old)?, original, "{args:?}");
        assert!(!new.exists(), "{args:?}");
        assert_eq!(leftovers(dir.path()), Vec::<PathBuf>::new(), "{args:?}");
    }
    Ok(())
}

#[test]
fn a_failed_append_says_what_the_log_holds_and_continues_cleanly() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("full.log");
    assert_eq!(status(&logfmt(&["write", p(&log)], &seq(1, 1000))), 0);
    let out = limited(160, &["write", "--append", p(&log)], &seq(5000, 100_000));
    assert_eq!(status(&out), 2, "{}", stderr(&out));
    let message = stderr(&out);
    assert!(message.contains("File too large"), "{message}");
    // "... (the log holds N new records (synced), from offset S to E[, then T torn bytes
    // ...]; no record after them was written)"
    let held: u64 = message
        .split("the log holds ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("no count in: {message}"))?;
    let (records, damage) = contents(&log, ReadFormat::Legacy)?;
    assert_eq!(damage, 0);
    assert_eq!(records, [lines(1, 1000), lines(5000, held)].concat());
    assert!(held > 0 && records.len() < 101_000);
    // The file ends within the limit: what the message says is torn follows the last
    // record; the next append cuts it off (or has nothing to cut) and goes on.
    let torn = message.contains("torn bytes");
    let out = logfmt(&["write", "--append", p(&log)], b"after\n");
    if torn {
        assert_eq!(status(&out), 1, "{}", stderr(&out));
        let out = logfmt(
            &["write", "--append", "--truncate-torn-tail", p(&log)],
            b"after\n",
        );
        assert_eq!(status(&out), 0, "{}", stderr(&out));
    } else {
        assert_eq!(status(&out), 0, "{}", stderr(&out));
    }
    let (records, damage) = contents(&log, ReadFormat::Legacy)?;
    assert_eq!(damage, 0);
    assert_eq!(
        records,
        [lines(1, 1000), lines(5000, held), vec![b"after".to_vec()]].concat()
    );
    let out = logfmt(&["verify", p(&log)], b"");
    assert_eq!(status(&out), 0, "{}", stdout(&out));
    Ok(())
}

#[test]
fn a_full_device_is_a_clear_error() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("a.log");
    assert_eq!(status(&logfmt(&["write", p(&log)], &seq(1, 10_000))), 0);
    // Standard output on a full device.
    let out = Command::new(env!("CARGO_BIN_EXE_logfmt"))
        .args(["cat", p(&log)])
        .stdout(fs::OpenOptions::new().write(true).open("/dev/full")?)
        .output()?;
    assert_eq!(status(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("No space left on device"),
        "{}",
        stderr(&out)
    );
    // A device is not a log to write.
    let out = logfmt(&["write", "/dev/full"], b"x\n");
    assert_eq!(status(&out), 2);
    assert!(stderr(&out).contains("not a regular file: /dev/full"));
    Ok(())
}

/// `seq 1 1000 | logfmt write --format recyclable 000050.log`, then `echo x | logfmt write
/// --append --log-number 51 000050.log` called the whole log stale, and
/// `--truncate-torn-tail` deleted its 1000 records; a copy under another name did the same
/// with no flag.
#[test]
fn a_log_number_mismatch_is_refused_and_the_log_kept() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("000050.log");
    let out = logfmt(&["write", "--format", "recyclable", p(&log)], &seq(1, 1000));
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let original = fs::read(&log)?;
    for extra in [&[][..], &["--truncate-torn-tail"]] {
        let mut args = vec!["write", "--append", "--log-number", "51"];
        args.extend_from_slice(extra);
        args.push(p(&log));
        let out = logfmt(&args, b"x\n");
        assert_eq!(status(&out), 1, "{}", stderr(&out));
        assert!(
            stderr(&out)
                .contains("log is recyclable (log number 50), not recyclable (log number 51)"),
            "{}",
            stderr(&out)
        );
        assert!(!stderr(&out).contains("stale"), "{}", stderr(&out));
        assert_eq!(fs::read(&log)?, original);
    }
    let out = logfmt(
        &["write", "--append", "--format", "legacy", p(&log)],
        b"x\n",
    );
    assert_eq!(status(&out), 1, "{}", stderr(&out));
    assert_eq!(fs::read(&log)?, original);

    // A copy under another name is continued as the log it is (log 50).
    let copy = dir.path().join("000099.log");
    fs::copy(&log, &copy)?;
    for args in [
        &["write", "--append", p(&copy)][..],
        &["write", "--append", "--format", "recyclable", p(&copy)],
        &["write", "--append", "--log-number", "50", p(&copy)],
    ] {
        let out = logfmt(args, b"x\n");
        assert_eq!(status(&out), 0, "{args:?}: {}", stderr(&out));
    }
    let (records, damage) = contents(&copy, ReadFormat::Recyclable { log_number: 50 })?;
    assert_eq!(damage, 0);
    assert_eq!(records.len(), 1003);
    Ok(())
}

#[test]
fn names_are_shown_with_their_control_characters_escaped() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("evil\x1b]0;owned\x07\x1b[2J.log");
    assert_eq!(status(&logfmt(&["write", p(&log)], b"x\n")), 0);
    let runs = [
        logfmt(&["write", p(&log)], b"x\n"),
        logfmt(&["stats", p(&log)], b""),
        logfmt(&["verify", p(&log)], b""),
        logfmt(&["salvage", p(&log), p(&log)], b""),
        logfmt(&["cat", p(&dir.path().join("missing\x1b[31m.log"))], b""),
    ];
    for out in runs {
        let text = format!("{}{}", stdout(&out), stderr(&out));
        assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
        assert!(text.contains(r"\u{1b}"), "{text:?}");
    }
    Ok(())
}

/// The new log is synced before it is renamed into place, and the directory after: a log
/// reported written cannot vanish on a power cut. Seen with strace where it is installed.
#[test]
fn new_logs_are_synced_then_renamed_then_the_directory_synced() -> TestResult {
    let strace_works = Command::new("strace")
        .args(["-o", "/dev/null", "true"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !strace_works {
        eprintln!("strace is not available here: the order of syncs is not checked");
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let input = dir.path().join("in.log");
    assert_eq!(status(&logfmt(&["write", p(&input)], &seq(1, 10))), 0);
    for args in [
        &["write", "out.log"][..],
        &["write", "--force", "out.log"],
        &["salvage", "--force", "in.log", "out.log"],
    ] {
        let out = Command::new("strace")
            .args([
                "-f",
                "-e",
                "trace=openat,fsync,fdatasync,rename,renameat,renameat2,link,linkat",
            ])
            .arg(env!("CARGO_BIN_EXE_logfmt"))
            .args(args)
            .current_dir(dir.path())
            .stdin(fs::File::open(&input)?)
            .output()?;
        let trace = String::from_utf8_lossy(&out.stderr);
        let calls: Vec<&str> = trace.lines().collect();
        let position = |what: &dyn Fn(&str) -> bool| calls.iter().position(|l| what(l));
        let renamed = position(&|l: &str| {
            (l.contains("rename") || l.contains("link"))
                && l.contains("out.log\"")
                && l.contains("= 0")
        })
        .ok_or_else(|| format!("{args:?}: no rename into place:\n{trace}"))?;
        let synced_before = calls[..renamed].iter().any(|l| {
            l.starts_with("fsync")
                || l.starts_with("fdatasync")
                || l.contains("] fsync")
                || l.contains("] fdatasync")
        });
        assert!(
            synced_before,
            "{args:?}: not synced before the rename:\n{trace}"
        );
        // The directory is opened and synced after the rename.
        let dir_fd = calls[renamed..]
            .iter()
            .find(|l| {
                l.contains("openat") && l.contains("O_DIRECTORY")
                    || l.contains("openat") && l.contains("\".\"")
            })
            .and_then(|l| l.rsplit("= ").next())
            .map(str::trim)
            .ok_or_else(|| {
                format!("{args:?}: the directory is not opened after the rename:\n{trace}")
            })?;
        let dir_synced = calls[renamed..]
            .iter()
            .any(|l| l.contains(&format!("fsync({dir_fd})")));
        assert!(
            dir_synced,
            "{args:?}: the directory is not synced:\n{trace}"
        );
    }
    Ok(())
}

/// `split` memory-mapped the log: truncating it while it was read killed the command with
/// SIGBUS. Each range is now read with positioned reads: a clear result, never a signal.
#[test]
fn split_survives_the_log_being_truncated_while_it_reads() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("big.log");
    let records: Vec<Vec<u8>> = (0..600u32).map(|i| vec![i as u8; 100_000]).collect();
    assert_eq!(
        status(&logfmt(
            &["write", "--input", "framed", p(&log)],
            &framed(&records)
        )),
        0
    );
    for delay in [0u64, 2, 5, 10, 20] {
        let copy = dir.path().join("cut.log");
        fs::copy(&log, &copy)?;
        let child = start(&["split", "--parts", "8", p(&copy)])?;
        thread::sleep(Duration::from_millis(delay));
        fs::OpenOptions::new()
            .write(true)
            .open(&copy)?
            .set_len(4096)?;
        let out = child.wait_with_output()?;
        assert!(
            out.status.code().is_some(),
            "delay {delay} ms: killed by a signal: {:?}",
            out.status
        );
    }
    Ok(())
}

/// `stats` kept every record's size for the median: 394 MB for a log of 50 M empty records.
/// Under a 16 MiB address-space limit it read 3 M of them (a 21 MB log), which took 32 MiB
/// of sizes alone (plus the copy when the list grew); a histogram of sizes takes a few bytes.
/// The limit is 24 MiB since the debug binary maps about 20 MiB itself (the defmt decoder's
/// code): still well under the 48 MiB the list of sizes would take.
#[test]
fn stats_counts_millions_of_records_in_bounded_memory() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("empty-records.log");
    let out = logfmt(&["write", p(&log)], &vec![b'\n'; 3_000_000]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let script = "ulimit -v 24576; exec \"$0\" \"$@\"";
    let out = Command::new("sh")
        .args([
            "-c",
            script,
            env!("CARGO_BIN_EXE_logfmt"),
            "stats",
            "--json",
        ])
        .arg(&log)
        .output()?;
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["records"], 3_000_000);
    assert_eq!(doc["record_size"]["median"], 0);
    Ok(())
}

#[test]
fn a_copied_recyclable_log_reads_as_itself_not_as_stale_bytes() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let original = dir.path().join("000060.log");
    let out = logfmt(
        &["write", "--format", "recyclable", p(&original)],
        &seq(1, 1000),
    );
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let copy = dir.path().join("000099.log");
    fs::copy(&original, &copy).expect("a copy");
    for format in ["auto", "recyclable"] {
        let verify = logfmt(&["verify", "--json", "--format", format, p(&copy)], b"");
        assert_eq!(status(&verify), 0, "{format}: {}", stderr(&verify));
        let doc = json(&verify);
        assert_eq!(doc["records"], 1000, "{format}");
        assert!(doc["tail"].is_null(), "{format}: {doc}");
    }
    // An explicit number is the user's: the chunks of log 60 are stale for log 99.
    let verify = logfmt(&["verify", "--json", "--log-number", "99", p(&copy)], b"");
    assert_eq!(json(&verify)["records"], 0);
}
