//! The progress bar: on a terminal (a pseudo-terminal, by util-linux's `script`), a default
//! multi-threaded `verify` of a log over the bar's threshold shows it; on a pipe, or with
//! `-q`, nothing.

use std::process::Command;

mod common;

use common::{TestResult, logfmt, p, status, stderr};
use logfmt_std::{LogWriter, LogWriterOptions};

/// A clean log of 72 MiB: more than the bar's threshold (64 MiB) and the parallel path's.
fn big_log() -> Vec<u8> {
    let mut writer = LogWriter::new(Vec::new(), &LogWriterOptions::new());
    let mut len = 0usize;
    let mut i = 0usize;
    while len < 72 << 20 {
        let size = 100 + (i * 7_919) % 4_000;
        writer
            .add_record(&vec![i as u8; size])
            .expect("writing to memory");
        len += size + 7;
        i += 1;
    }
    writer.close().expect("writing to memory")
}

/// What `command` writes to a pseudo-terminal, run by `script`; `None` without `script`.
fn on_a_terminal(command: &str) -> Option<String> {
    let out = Command::new("script")
        .args(["-qfec", command, "/dev/null"])
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn the_bar_shows_on_a_terminal_on_the_parallel_path_and_never_on_a_pipe() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("big.log");
    std::fs::write(&log, big_log())?;
    let bin = env!("CARGO_BIN_EXE_logfmt");
    let Some(shown) = on_a_terminal(&format!("'{bin}' verify --threads 2 '{}'", p(&log))) else {
        eprintln!("no `script`: the terminal case is not checked");
        return Ok(());
    };
    // The bar is drawn for the whole file. (How far it has moved when it is first drawn
    // depends on the machine's speed: the parts' counting is tested in `progress.rs`.)
    assert!(shown.contains("verify ["), "{shown}");
    assert!(shown.contains("/72.02 MiB"), "{shown}");
    assert!(shown.contains("no corruption"), "{shown}");
    let quiet =
        on_a_terminal(&format!("'{bin}' verify -q --threads 2 '{}'", p(&log))).unwrap_or_default();
    assert!(!quiet.contains("verify ["), "{quiet}");
    assert!(quiet.contains("no corruption"), "{quiet}");
    // A pipe: no bar.
    let piped = logfmt(&["verify", "--threads", "2", p(&log)], b"");
    assert_eq!(status(&piped), 0);
    assert_eq!(stderr(&piped), "");
    Ok(())
}
