//! Helpers shared by the CLI's integration tests: running the binary, reading its output,
//! framing records.

#![allow(dead_code)] // each test binary uses some of them

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// What a test returns.
pub(crate) type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Runs `logfmt args...` with `stdin` as its standard input.
pub(crate) fn logfmt<S: AsRef<std::ffi::OsStr>>(args: &[S], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_logfmt"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn logfmt");
    let mut pipe = child.stdin.take().expect("stdin");
    let input = stdin.to_vec();
    // Fed from a thread: the child may fill its stdout before it has read all of its stdin.
    let feeder = std::thread::spawn(move || {
        // logfmt may legitimately stop reading early (a usage error).
        let _ = pipe.write_all(&input);
    });
    let output = child.wait_with_output().expect("wait for logfmt");
    feeder.join().expect("stdin feeder");
    output
}
pub(crate) fn status(output: &Output) -> i32 {
    output.status.code().expect("exit code")
}
pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
pub(crate) fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}
pub(crate) fn p(path: &Path) -> &str {
    path.to_str().expect("UTF-8 temp path")
}
pub(crate) fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).expect("one JSON document")
}
pub(crate) fn framed(records: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in records {
        out.extend_from_slice(&(r.len() as u32).to_le_bytes());
        out.extend_from_slice(r);
    }
    out
}
pub(crate) fn unframe(mut bytes: &[u8]) -> Vec<Vec<u8>> {
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
