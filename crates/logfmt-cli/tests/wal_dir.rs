//! `verify`, `cat` and `stats` on a WAL directory (numbered logs without a `CURRENT` file):
//! every log read in log-number order as one log, with each file's boundaries, damage told
//! with its file and offset, the recovery mode deciding what a gap between logs means, and
//! the directory left as it was. The directories are written by `logfmt_std::wal`.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::*;
use logfmt_std::RecoveryMode;
use logfmt_std::wal::{ReadOnlyWal, Wal, WalEntry, WalOptions};
use serde_json::Value;

/// A record's payload, distinct per record and log.
fn payload(log: usize, i: usize) -> Vec<u8> {
    format!("log {log} record {i} {}", "x".repeat(i * 37 % 300)).into_bytes()
}

/// Writes a WAL directory of `logs` logs of `per_log` records each (a rotation between each).
fn write_wal(dir: &Path, logs: usize, per_log: usize) -> Vec<Vec<u8>> {
    let options = WalOptions::new().create(true);
    let writer = Wal::open(dir, &options)
        .expect("open")
        .start()
        .expect("start");
    let mut written = Vec::new();
    for log in 0..logs {
        if log > 0 {
            writer.rotate().expect("rotate");
        }
        for i in 0..per_log {
            let data = payload(log, i);
            writer.append_durable(&data).expect("append");
            written.push(data);
        }
    }
    writer.close().expect("close");
    written
}

/// The live logs of `dir`, in order, as `logfmt_std::wal` lists them.
fn live_logs(dir: &Path) -> Vec<PathBuf> {
    ReadOnlyWal::open(dir, &WalOptions::new())
        .expect("list")
        .logs()
        .into_iter()
        .map(|log| log.path)
        .collect()
}

/// What `logfmt_std::wal` recovers from `dir` with `mode`: each record's log file and bytes.
fn recovered(dir: &Path, mode: RecoveryMode) -> Vec<(PathBuf, Vec<u8>)> {
    let mut wal = ReadOnlyWal::open(dir, &WalOptions::new().recovery(mode)).expect("list");
    let mut file = PathBuf::new();
    let mut records = Vec::new();
    for entry in wal.recover() {
        match entry {
            Ok(WalEntry::Log { path, .. }) => file = path,
            Ok(WalEntry::Record(record)) => records.push((file.clone(), record.data)),
            Ok(_) => {}
            Err(_) => break,
        }
    }
    records
}

/// Every entry of `dir` with its bytes: to check that nothing was changed.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .expect("list")
        .map(|e| {
            let e = e.expect("entry");
            let bytes = std::fs::read(e.path()).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect()
}

/// The records `cat --decode raw --json DIR` prints: each one's file and bytes.
fn cat_records(dir: &Path, extra: &[&str]) -> (i32, Vec<(PathBuf, Vec<u8>)>, String) {
    let mut args = vec!["cat", "--decode", "raw", "--json"];
    args.extend_from_slice(extra);
    args.push(p(dir));
    let out = logfmt(&args, b"");
    let records = stdout(&out)
        .lines()
        .map(|line| {
            let record: Value = serde_json::from_str(line).expect("a JSON record");
            let hex = record["hex"].as_str().expect("hex");
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex digits"))
                .collect();
            let file = PathBuf::from(record["file"].as_str().expect("file"));
            (file, bytes)
        })
        .collect();
    (status(&out), records, stderr(&out))
}

fn verify_json(dir: &Path, mode: &str) -> (i32, Value) {
    let out = logfmt(&["verify", "--json", "--recovery", mode, p(dir)], b"");
    (status(&out), json(&out))
}

#[test]
fn rotated_released_and_recycled_logs_are_read_in_order() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let dir = tmp.path().join("wal");
    // Small logs, two kept for reuse: rotation at a size, releases, reuse of released files.
    let options = WalOptions::new().create(true).log_size(4096).recycle(2);
    let writer = Wal::open(&dir, &options)?.start()?;
    let mut tickets = Vec::new();
    let mut reused = false;
    for i in 0..400 {
        tickets.push(writer.append_durable(&payload(i % 7, i))?);
        if i % 50 == 49 && i >= 60 {
            // A checkpoint made the logs before the last 60 records obsolete.
            writer.release_before(tickets[i - 60].position)?;
        }
        reused |= !writer.kept_for_reuse().is_empty();
    }
    assert!(reused, "no log was kept for reuse");
    // Read while the writer holds the lock: nothing is changed, nothing is refused.
    let before = snapshot(&dir);
    let expected = recovered(&dir, RecoveryMode::TolerateCorruptedTailRecords);
    assert!(expected.len() > 20, "{}", expected.len());
    let logs = live_logs(&dir);
    assert!(logs.len() > 2, "{logs:?}");

    let (code, report) = verify_json(&dir, "tolerate");
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["wal_dir"], p(&dir));
    assert_eq!(report["records"], expected.len() as u64);
    let payload: u64 = expected.iter().map(|(_, d)| d.len() as u64).sum();
    assert_eq!(report["payload_bytes"], payload);
    assert_eq!(report["corruptions"], serde_json::json!([]));
    let listed: Vec<PathBuf> = report["logs"]
        .as_array()
        .expect("logs")
        .iter()
        .map(|l| PathBuf::from(l["file"].as_str().expect("file")))
        .collect();
    assert_eq!(listed, logs);
    for log in report["logs"].as_array().expect("logs") {
        let file = PathBuf::from(log["file"].as_str().expect("file"));
        let records = expected.iter().filter(|(f, _)| *f == file).count() as u64;
        assert_eq!(log["records"], records, "{log}");
        assert_eq!(log["read"], true);
        assert_eq!(log["bytes"], std::fs::metadata(&file)?.len());
    }
    // Logs kept for reuse and the lock are the WAL's own files, not strangers.
    assert!(report.get("other_files").is_none(), "{report}");

    let (code, records, err) = cat_records(&dir, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(records, expected);
    assert_eq!(snapshot(&dir), before, "reading changed the directory");
    writer.close()?;
    Ok(())
}

#[test]
fn text_shows_each_file() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let written = write_wal(tmp.path(), 3, 4);
    let logs = live_logs(tmp.path());
    let out = logfmt(&["verify", p(tmp.path())], b"");
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let payload: usize = written.iter().map(Vec::len).sum();
    assert!(
        text.starts_with(&format!(
            "{}: a WAL directory of 3 logs (tolerate recovery): 12 records in 3 logs, {payload} \
             bytes of payload, no corruption\n",
            p(tmp.path())
        )),
        "{text}"
    );
    for log in &logs {
        let name = log.file_name().expect("name").to_string_lossy();
        let number: u64 = name.trim_end_matches(".log").parse()?;
        let bytes = std::fs::metadata(log)?.len();
        let line = format!("  {name}: log {number}, {bytes} bytes: 4 records, ");
        assert!(text.contains(&line), "{line}\n{text}");
    }
    // `stats` says the same of the directory.
    let out = logfmt(&["stats", "--json", p(tmp.path())], b"");
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert_eq!(json(&out)["records"], 12);
    // Decoded text: a heading per log before its records.
    let out = logfmt(&["cat", "--decode", "raw", p(tmp.path())], b"");
    assert_eq!(status(&out), 0);
    let lines: Vec<Vec<u8>> = out
        .stdout
        .split(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    assert_eq!(&lines[..12], &written[..]);
    // `-n N`: the first N records of the directory, across its logs.
    let out = logfmt(&["cat", "--decode", "raw", "-n", "5", p(tmp.path())], b"");
    assert_eq!(status(&out), 0);
    let lines: Vec<&[u8]> = out.stdout.split(|&b| b == b'\n').collect();
    assert_eq!(lines.len(), 6, "{}", stdout(&out));
    assert_eq!(lines[4], &written[4][..]);
    Ok(())
}

/// Flips a byte of the second record of `log` (a checksum mismatch there).
fn damage_second_record(log: &Path) -> u64 {
    let mut bytes = std::fs::read(log).expect("read");
    // The second record starts after the first: its header is 7 bytes, its payload follows.
    let first = payload(1, 0).len() as u64 + 7;
    let at = usize::try_from(first + 7 + 2).expect("small");
    bytes[at] ^= 0x55;
    std::fs::write(log, bytes).expect("write");
    first
}

#[test]
fn a_damaged_middle_log_under_each_recovery_mode() -> TestResult {
    let tmp = tempfile::tempdir()?;
    write_wal(tmp.path(), 3, 4);
    let logs = live_logs(tmp.path());
    let middle = &logs[1];
    let second = damage_second_record(middle);
    let middle_name = p(middle);
    for mode in ["tolerate", "skip", "point-in-time", "absolute"] {
        let (code, report) = verify_json(tmp.path(), mode);
        assert_eq!(code, 1, "{mode}: {report}");
        assert_eq!(report["recovery"], mode);
        let corruption = &report["corruptions"][0];
        assert_eq!(corruption["file"], middle_name, "{mode}: {report}");
        assert_eq!(corruption["offset"], second, "{mode}: {report}");
        assert_eq!(corruption["reason"], "checksum mismatch", "{mode}");
        assert_eq!(corruption["log"], report["logs"][1]["log"], "{mode}");
        let stops = matches!(mode, "point-in-time" | "absolute");
        let rust_mode = match mode {
            "tolerate" => RecoveryMode::TolerateCorruptedTailRecords,
            "skip" => RecoveryMode::SkipAnyCorruptedRecords,
            "point-in-time" => RecoveryMode::PointInTimeRecovery,
            _ => RecoveryMode::AbsoluteConsistency,
        };
        let expected = recovered(tmp.path(), rust_mode);
        assert_eq!(report["records"], expected.len() as u64, "{mode}");
        assert_eq!(report["logs"][2]["read"], !stops, "{mode}");
        if stops {
            assert_eq!(report["stopped_at"]["file"], middle_name, "{mode}");
            assert_eq!(report["stopped_at"]["offset"], second, "{mode}");
            // Only the first log and the record before the damage.
            assert_eq!(report["records"], 5, "{mode}");
        } else {
            assert_eq!(report["stopped_at"], Value::Null, "{mode}");
            // The damaged record's block is skipped: the rest of the middle log.
            assert_eq!(report["records"], 9, "{mode}");
        }
        let (code, records, err) = cat_records(tmp.path(), &["--recovery", mode]);
        assert_eq!(records, expected, "{mode}: {err}");
        assert!(
            err.contains(&format!("{middle_name}: dropped ")),
            "{mode}: {err}"
        );
        assert!(
            err.contains(&format!(" at offset {second}: ")),
            "{mode}: {err}"
        );
        if mode == "absolute" {
            assert_eq!(code, 1, "{err}");
        } else {
            assert_eq!(code, 0, "{mode}: {err}");
        }
        if mode == "point-in-time" {
            assert!(err.contains("stopped at offset"), "{err}");
        }
    }
    // --max-errors 0 lists none and counts them all; --summary shows no damaged region.
    let out = logfmt(
        &["verify", "--json", "--max-errors", "0", p(tmp.path())],
        b"",
    );
    assert_eq!(status(&out), 1);
    let report = json(&out);
    assert_eq!(report["corruptions"], serde_json::json!([]));
    assert_eq!(report["corruptions_total"], 1);
    let out = logfmt(&["verify", "--summary", p(tmp.path())], b"");
    assert!(!stdout(&out).contains("    offset "), "{}", stdout(&out));
    // In text: the file, its offset and bytes.
    let out = logfmt(
        &["verify", "--recovery", "point-in-time", p(tmp.path())],
        b"",
    );
    let text = stdout(&out);
    let name = middle.file_name().expect("name").to_string_lossy();
    assert!(text.contains(&format!("  {name}: log ")), "{text}");
    assert!(text.contains(&format!("    offset {second}: ")), "{text}");
    assert!(
        text.contains("not read (reading stopped before it)"),
        "{text}"
    );
    assert!(
        text.contains(&format!("reading stopped in {middle_name} (log ")),
        "{text}"
    );
    Ok(())
}

#[test]
fn a_gap_between_logs_stops_point_in_time_only() -> TestResult {
    let tmp = tempfile::tempdir()?;
    write_wal(tmp.path(), 3, 4);
    let logs = live_logs(tmp.path());
    // The first log loses the end of its last record: a torn tail before the next log.
    let len = std::fs::metadata(&logs[0])?.len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&logs[0])?
        .set_len(len - 3)?;
    let (code, report) = verify_json(tmp.path(), "point-in-time");
    assert_eq!(code, 1, "{report}");
    assert_eq!(report["stopped_at"]["file"], p(&logs[0]), "{report}");
    assert_eq!(report["records"], 3);
    assert_eq!(report["logs"][1]["read"], false);
    // LevelDB's reading: the torn tail ends that log, and the next ones are read.
    let (code, report) = verify_json(tmp.path(), "tolerate");
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["records"], 11);
    // The last log's torn tail is no gap: told, not damage.
    let tmp = tempfile::tempdir()?;
    write_wal(tmp.path(), 2, 2);
    let logs = live_logs(tmp.path());
    let last = logs.last().expect("a log");
    let len = std::fs::metadata(last)?.len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(last)?
        .set_len(len - 3)?;
    let (code, report) = verify_json(tmp.path(), "point-in-time");
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["tail"]["file"], p(last), "{report}");
    assert_eq!(report["records"], 3);
    Ok(())
}

#[test]
fn files_that_are_not_logs_are_reported() -> TestResult {
    let tmp = tempfile::tempdir()?;
    write_wal(tmp.path(), 2, 2);
    std::fs::write(tmp.path().join("README.txt"), "not a log")?;
    std::fs::create_dir(tmp.path().join("archive"))?;
    std::fs::write(tmp.path().join("99999999999999999999999.log"), "x")?;
    // A file named as a log that holds text: read, its damage told.
    let (code, report) = verify_json(tmp.path(), "tolerate");
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["records"], 4);
    let others: BTreeMap<String, String> = report["other_files"]
        .as_array()
        .expect("other_files")
        .iter()
        .map(|o| {
            let file = Path::new(o["file"].as_str().expect("file"));
            let name = file
                .file_name()
                .expect("name")
                .to_string_lossy()
                .into_owned();
            (name, o["reason"].as_str().expect("reason").to_owned())
        })
        .collect();
    assert_eq!(others["README.txt"], "not a numbered log (NNNNNN.log)");
    assert_eq!(others["archive"], "a directory");
    assert_eq!(
        others["99999999999999999999999.log"],
        "named as a log, but its number does not fit in 64 bits"
    );
    assert_eq!(others.len(), 3);
    let out = logfmt(&["verify", p(tmp.path())], b"");
    assert!(stdout(&out).contains("  3 other files not read (not logs of the WAL):\n"));

    // A file named as a log that holds text, before the others: told as not a log.
    std::fs::write(tmp.path().join("000000.log"), "this is text, not a log\n")?;
    for mode in ["tolerate", "point-in-time"] {
        let (code, report) = verify_json(tmp.path(), mode);
        assert_eq!(code, 1, "{report}");
        assert_eq!(report["logs"][0]["file"], p(&tmp.path().join("000000.log")));
        assert_eq!(report["logs"][0]["not_a_log"], "text", "{report}");
    }
    let out = logfmt(&["verify", p(tmp.path())], b"");
    assert!(
        stdout(&out).contains("  000000.log: log 0, 24 bytes: not a log: the file holds text"),
        "{}",
        stdout(&out)
    );
    Ok(())
}

/// Makes a hostile entry at a path.
type Make = dyn Fn(&Path) -> std::io::Result<()>;

#[test]
fn hostile_directories_get_clear_errors() -> TestResult {
    use std::os::unix::fs::symlink;
    // Thousands of logs (empty: logs without records), read in order.
    let tmp = tempfile::tempdir()?;
    write_wal(tmp.path(), 1, 3);
    for n in 1000..4000 {
        std::fs::write(tmp.path().join(format!("{n:06}.log")), b"")?;
    }
    let (code, report) = verify_json(tmp.path(), "point-in-time");
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["logs"].as_array().map(Vec::len), Some(3001));
    assert_eq!(report["records"], 3);
    assert_eq!(
        report["logs"][3000]["file"],
        p(&tmp.path().join("003999.log"))
    );

    // Many strangers: the first 20 listed, all counted.
    for n in 0..50 {
        std::fs::write(tmp.path().join(format!("junk-{n}")), b"")?;
    }
    let (_, report) = verify_json(tmp.path(), "tolerate");
    assert_eq!(report["other_files"].as_array().map(Vec::len), Some(20));
    assert_eq!(report["other_files_total"], 50);

    // A log that is a link to itself, one that leads nowhere, a FIFO, a directory: refused,
    // naming it, before anything is read.
    let cases: [(&str, &Make, &str); 4] = [
        (
            "000005.log",
            &|p| symlink(p, p),
            "Too many levels of symbolic links",
        ),
        (
            "000006.log",
            &|p| symlink(p.with_file_name("nowhere"), p),
            "No such file or directory",
        ),
        (
            "000007.log",
            &|p| {
                let status = std::process::Command::new("mkfifo").arg(p).status()?;
                assert!(status.success());
                Ok(())
            },
            "not a regular file",
        ),
        (
            "000008.log",
            &|p| std::fs::create_dir(p),
            "not a regular file",
        ),
    ];
    for (name, make, says) in cases {
        let tmp = tempfile::tempdir()?;
        write_wal(tmp.path(), 2, 2);
        let path = tmp.path().join(name);
        make(&path)?;
        for command in ["verify", "cat", "stats"] {
            let out = logfmt(&[command, p(tmp.path())], b"");
            assert_eq!(status(&out), 2, "{name} {command}: {}", stderr(&out));
            let err = stderr(&out);
            assert!(
                err.starts_with(&format!("logfmt: error: {}: ", p(&path))),
                "{err}"
            );
            assert!(err.contains(says), "{name}: {err}");
            assert!(out.stdout.is_empty());
        }
    }
    Ok(())
}

#[test]
fn usage_errors() -> TestResult {
    let tmp = tempfile::tempdir()?;
    write_wal(tmp.path(), 2, 1);
    let log = live_logs(tmp.path()).remove(0);
    let out = logfmt(&["verify", p(tmp.path()), p(&log)], b"");
    assert_eq!(status(&out), 2);
    assert!(stderr(&out).contains("is read alone"), "{}", stderr(&out));
    for flags in [
        &["verify", "--offset", "7"][..],
        &["cat", "--range", "0..9"],
        &["cat", "--follow"],
        &["verify", "--format", "legacy"],
    ] {
        let mut args = flags.to_vec();
        args.push(p(tmp.path()));
        let out = logfmt(&args, b"");
        assert_eq!(status(&out), 2, "{flags:?}");
        assert!(
            stderr(&out).contains("does not apply to a WAL directory"),
            "{}",
            stderr(&out)
        );
    }
    // An empty directory is neither a database nor a WAL directory.
    let empty = tempfile::tempdir()?;
    let out = logfmt(&["verify", p(empty.path())], b"");
    assert_eq!(status(&out), 2);
    assert!(stderr(&out).contains("neither a CURRENT file nor numbered logs"));
    Ok(())
}

#[test]
fn a_database_directorys_live_logs_as_one_log() -> TestResult {
    let tmp = tempfile::tempdir()?;
    let written = write_wal(tmp.path(), 4, 3);
    let logs = live_logs(tmp.path());
    // A database whose MANIFEST needs the logs from the second on (one edit: log number).
    std::fs::write(tmp.path().join("CURRENT"), "MANIFEST-000009\n")?;
    let mut manifest = logfmt_std::LogWriter::create(
        tmp.path().join("MANIFEST-000009"),
        &logfmt_std::LogWriterOptions::new(),
    )?;
    let floor = u8::try_from(
        logs[1]
            .file_stem()
            .expect("name")
            .to_str()
            .expect("utf-8")
            .parse::<u64>()?,
    )?;
    manifest.add_record(&[2, floor])?;
    manifest.close()?;

    let (code, report) = {
        let out = logfmt(&["verify", "--json", "--wal", p(tmp.path())], b"");
        (status(&out), json(&out))
    };
    assert_eq!(code, 0, "{report}");
    let read: Vec<&str> = report["logs"]
        .as_array()
        .expect("logs")
        .iter()
        .map(|l| l["file"].as_str().expect("file"))
        .collect();
    assert_eq!(read, logs[1..].iter().map(|l| p(l)).collect::<Vec<_>>());
    assert_eq!(report["records"], 9);
    let obsolete = &report["other_files"][0];
    assert_eq!(obsolete["file"], p(&logs[0]), "{report}");
    assert_eq!(
        obsolete["reason"],
        "a write-ahead log the database's MANIFEST no longer needs"
    );
    let (code, records, err) = cat_records(tmp.path(), &["--wal"]);
    assert_eq!(code, 0, "{err}");
    let data: Vec<Vec<u8>> = records.into_iter().map(|(_, d)| d).collect();
    assert_eq!(data, written[3..]);
    // Without --wal, a database is read file by file, its MANIFEST first.
    let out = logfmt(&["verify", "--summary", p(tmp.path())], b"");
    assert!(
        stdout(&out).starts_with(&format!("{}: ", p(&tmp.path().join("MANIFEST-000009")))),
        "{}",
        stdout(&out)
    );
    // --wal reads one directory.
    let out = logfmt(&["verify", "--wal", p(&logs[1])], b"");
    assert_eq!(status(&out), 2);
    assert!(
        stderr(&out).contains("--wal reads one directory"),
        "{}",
        stderr(&out)
    );
    Ok(())
}

/// A log that cannot be opened (its mode denies reading): an error naming it. Root is not
/// denied by file modes, so as root the command runs as `nobody` (uid 65534); if that is not
/// possible the test says so and skips.
#[test]
fn an_unreadable_log_is_an_error_naming_it() -> TestResult {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let tmp = tempfile::tempdir()?;
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755))?;
    write_wal(tmp.path(), 2, 2);
    let logs = live_logs(tmp.path());
    std::fs::set_permissions(&logs[1], std::fs::Permissions::from_mode(0o000))?;
    let root =
        std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)?;
    let run = |args: &[&str]| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_logfmt"));
        command.args(args);
        if root {
            command.uid(65_534).gid(65_534);
        }
        command.output()
    };
    match run(&["--version"]) {
        Ok(out) if out.status.success() => {}
        other => {
            println!("SKIPPED: cannot run logfmt as another user: {other:?}");
            return Ok(());
        }
    }
    for command in ["verify", "cat", "stats"] {
        let out = run(&["-q", command, p(tmp.path())])?;
        assert_eq!(status(&out), 2, "{command}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!(
                "logfmt: error: cannot read log: {}: Permission denied (os error 13)\n",
                p(&logs[1])
            ),
            "{command}"
        );
    }
    Ok(())
}

/// Writes a WAL that failed over: records in `primary`'s log, then (its disk stalled) in a
/// segment of the same log in `secondary`, then back in `primary`. Written through
/// `logfmt_std::wal`'s crashable storage (the stall injected there), then copied to the two
/// directories. Returns every record, in order.
fn write_failed_over_wal(primary: &Path, secondary: &Path) -> Vec<Vec<u8>> {
    use logfmt_std::wal::{CrashableStorage, Failover, Storage};
    use std::time::Duration;
    let (mem_primary, mem_secondary) = (Path::new("/primary"), Path::new("/secondary"));
    let failover = Failover::new(mem_secondary, Duration::from_millis(20));
    let options = WalOptions::new().create(true).failover(Some(failover));
    let fs = CrashableStorage::new();
    let writer = Wal::open_in(fs.clone(), mem_primary, &options)
        .expect("open")
        .start()
        .expect("start");
    let mut written = Vec::new();
    let mut append = |data: Vec<u8>| {
        writer.append_durable(&data).expect("append");
        written.push(data);
    };
    for i in 0..5 {
        append(payload(0, i));
    }
    fs.stall(mem_primary);
    append(payload(1, 0));
    assert_eq!(writer.current_dir(), mem_secondary, "failed over");
    for i in 1..5 {
        append(payload(1, i));
    }
    fs.unstall(mem_primary);
    let mut i = 0;
    while writer.current_dir() != mem_primary {
        assert!(i < 500, "never back to the primary");
        append(payload(2, i));
        i += 1;
        std::thread::sleep(Duration::from_millis(1));
    }
    append(b"back in the primary".to_vec());
    writer.close().expect("close");
    for (from, to) in [(mem_primary, primary), (mem_secondary, secondary)] {
        for name in fs.list(from).expect("list") {
            let bytes = fs.contents(&from.join(&name)).expect("a file");
            std::fs::write(to.join(name), bytes).expect("copy");
        }
    }
    written
}

#[test]
fn a_failed_over_wal_is_read_with_its_secondary_directory() -> TestResult {
    let (primary, secondary) = (tempfile::tempdir()?, tempfile::tempdir()?);
    let written = write_failed_over_wal(primary.path(), secondary.path());
    let secondary_arg = ["--secondary", p(secondary.path())];

    // Every record once, in order, each with the file it is in: some in the secondary.
    let (code, records, err) = cat_records(primary.path(), &secondary_arg);
    assert_eq!(code, 0, "{err}");
    let data: Vec<_> = records.iter().map(|(_, data)| data.clone()).collect();
    assert_eq!(data, written);
    assert!(
        records
            .iter()
            .any(|(file, _)| file.starts_with(secondary.path())),
        "{:?}",
        records
            .iter()
            .map(|(file, _)| file)
            .collect::<std::collections::BTreeSet<_>>()
    );
    assert!(
        records
            .last()
            .is_some_and(|(file, _)| file.starts_with(primary.path()))
    );

    for command in ["verify", "stats"] {
        let out = logfmt(
            &[
                command,
                "--json",
                secondary_arg[0],
                secondary_arg[1],
                p(primary.path()),
            ],
            b"",
        );
        assert_eq!(status(&out), 0, "{command}: {}", stderr(&out));
        let report = json(&out);
        assert_eq!(report["records"], written.len() as u64, "{command}");
        assert_eq!(report["secondary"], p(secondary.path()), "{command}");
        assert_eq!(report["corruptions"].as_array().map(Vec::len), Some(0));
        let text = logfmt(
            &[
                command,
                secondary_arg[0],
                secondary_arg[1],
                p(primary.path()),
            ],
            b"",
        );
        assert!(
            stdout(&text).contains("(and its failover directory ")
                && stdout(&text).contains(" of 1 log in 3 files ("),
            "{}",
            stdout(&text)
        );
    }

    // Without it, the records in the secondary are not read: the report does not claim all.
    let out = logfmt(&["verify", "--json", p(primary.path())], b"");
    let report = json(&out);
    assert!(report["secondary"].is_null());
    assert!(
        report["records"].as_u64() < Some(written.len() as u64),
        "{report}"
    );
    Ok(())
}

#[test]
fn secondary_is_refused_where_it_does_not_apply() -> TestResult {
    let tmp = tempfile::tempdir()?;
    write_wal(tmp.path(), 1, 2);
    let log = live_logs(tmp.path()).remove(0);
    let out = logfmt(&["verify", "--secondary", p(tmp.path()), p(&log)], b"");
    assert_eq!(status(&out), 2);
    assert!(
        stderr(&out).contains("give the WAL directory alone"),
        "{}",
        stderr(&out)
    );
    let missing = tmp.path().join("nowhere");
    let out = logfmt(&["cat", "--secondary", p(&missing), p(tmp.path())], b"");
    assert_eq!(status(&out), 2);
    assert!(stderr(&out).contains("not a directory"), "{}", stderr(&out));
    // The WAL directory itself, by another name.
    let itself = tmp.path().join(".");
    let out = logfmt(&["stats", "--secondary", p(&itself), p(tmp.path())], b"");
    assert_eq!(status(&out), 2);
    assert!(
        stderr(&out).contains("the WAL directory itself"),
        "{}",
        stderr(&out)
    );
    Ok(())
}
