//! `-q` and `-v`: what is said on standard error besides the output. Warnings (damage) always;
//! notes and hints unless `-q`; each file's details only with `-v`. The output and the exit
//! status are the same whatever the verbosity.

mod common;

use common::*;

/// A log named as a write-ahead log whose records are no write batches, with a byte flipped
/// in its second block: `cat` notes that it prints it raw, and warns of the damage.
fn damaged_wal(dir: &std::path::Path) -> std::path::PathBuf {
    let log = dir.join("000001.log");
    let lines: String = (1..=2000).map(|i| format!("plain record {i}\n")).collect();
    let out = logfmt(&["write", p(&log)], lines.as_bytes());
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let mut bytes = std::fs::read(&log).expect("reads the log");
    bytes[33_000] ^= 0xff;
    std::fs::write(&log, bytes).expect("writes the log");
    log
}

#[test]
fn quiet_drops_notes_and_hints_and_keeps_warnings() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = damaged_wal(dir.path());
    let normal = logfmt(&["cat", p(&log)], b"");
    let quiet = logfmt(&["-q", "cat", p(&log)], b"");
    let also_quiet = logfmt(&["cat", "--quiet", p(&log)], b"");
    assert_eq!(stdout(&normal), stdout(&quiet));
    assert_eq!(status(&normal), status(&quiet));
    assert!(stderr(&normal).contains("is not a WriteBatch: the log is printed raw"));
    assert!(
        !stderr(&quiet).contains("printed raw"),
        "{}",
        stderr(&quiet)
    );
    for said in [&normal, &quiet, &also_quiet] {
        assert!(
            stderr(said).contains("checksum mismatch"),
            "{}",
            stderr(said)
        );
    }
    assert_eq!(stderr(&quiet), stderr(&also_quiet));

    let dump = logfmt(&["-q", "dump", p(&log)], b"");
    assert_eq!(status(&dump), 0);
    assert_eq!(
        stderr(&dump),
        "",
        "-q drops the note of the deprecated name"
    );
    let dump = logfmt(&["dump", p(&log)], b"");
    assert!(stderr(&dump).contains("`logfmt dump` is now `logfmt chunks`"));
}

#[test]
fn verbose_adds_each_files_details_and_changes_no_output() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = damaged_wal(dir.path());
    let normal = logfmt(&["verify", p(&log)], b"");
    let verbose = logfmt(&["-v", "verify", p(&log)], b"");
    assert_eq!(stdout(&normal), stdout(&verbose));
    assert_eq!(status(&normal), status(&verbose));
    assert_eq!(stderr(&normal), "");
    let size = std::fs::metadata(&log).expect("a file").len();
    let said = stderr(&verbose);
    assert!(
        said.contains(&format!("{size} bytes, a log file (no ring headers)")),
        "{said}"
    );
    assert!(said.contains(": done in "), "{said}");

    let json = logfmt(&["stats", "--json", "--verbose", p(&log)], b"");
    assert_eq!(status(&json), 0);
    assert_eq!(
        json_lines(&json),
        1,
        "the details go to standard error only"
    );
    assert!(stderr(&json).contains("done in"));
}

#[test]
fn quiet_and_verbose_conflict() {
    let out = logfmt(&["-q", "-v", "verify", "a.log"], b"");
    assert_eq!(status(&out), 2);
    assert!(
        stderr(&out).contains("cannot be used with"),
        "{}",
        stderr(&out)
    );
}

/// The lines of standard output, each a JSON object.
fn json_lines(output: &std::process::Output) -> usize {
    let lines: Vec<serde_json::Value> = stdout(output)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    lines.len()
}
