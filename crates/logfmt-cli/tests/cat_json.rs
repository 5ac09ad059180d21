//! The record line of `logfmt cat --output json`, pinned byte for byte.
//!
//! Tools read it by its exact shape, `{"offset": N, "length": N, "hex": "HEX"}` and a newline:
//! these keys, in this order, spaced so, numbers in decimal and the payload in lowercase hex
//! (the firmware demo of `cargo xtask` parses exactly this line). A record printed from
//! memory and one streamed by a second read of the file print the same line.

use std::fs;

use logfmt_std::{LogWriter, LogWriterOptions};

mod common;

use common::*;

/// The records and the exact lines `cat --output json` prints for them.
fn records_and_lines() -> (Vec<Vec<u8>>, String) {
    let big: Vec<u8> = (0..40_000u32).map(|i| (i % 251) as u8).collect();
    let big_hex: String = big.iter().map(|b| format!("{b:02x}")).collect();
    let records = vec![Vec::new(), b"\x00\xff\"\\\n".to_vec(), big, b"hi".to_vec()];
    // A header is 7 bytes. The 40000-byte record starts at 19: 32742 bytes fit in the first
    // block, the other 7258 follow the next block's header at 32768 + 7, up to 40033.
    let lines = format!(
        "{{\"offset\": 0, \"length\": 0, \"hex\": \"\"}}\n\
         {{\"offset\": 7, \"length\": 5, \"hex\": \"00ff225c0a\"}}\n\
         {{\"offset\": 19, \"length\": 40000, \"hex\": \"{big_hex}\"}}\n\
         {{\"offset\": 40033, \"length\": 2, \"hex\": \"6869\"}}\n"
    );
    (records, lines)
}

#[test]
fn each_record_is_one_exact_line() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log");
    let (records, expected) = records_and_lines();
    let mut writer = LogWriter::create(&path, &LogWriterOptions::new())?;
    for r in &records {
        writer.add_record(r)?;
    }
    writer.close()?;
    // From memory; streamed by a second read (any record longer than 0 bytes); from a pipe.
    for (args, stdin) in [
        (vec!["cat", "--output", "json", p(&path)], Vec::new()),
        (
            vec!["cat", "--output", "json", "--buffer-limit", "0", p(&path)],
            Vec::new(),
        ),
        (
            vec!["cat", "--output", "json", "/dev/stdin"],
            fs::read(&path)?,
        ),
    ] {
        let out = logfmt(&args, &stdin);
        assert_eq!(status(&out), 0, "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}");
        assert!(stdout(&out) == expected, "{args:?}: {}", stdout(&out));
    }
    Ok(())
}
