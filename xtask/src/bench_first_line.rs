//! `cargo xtask bench-first-line`: how long `logfmt cat big.log | head -1` waits for its first
//! line, on a 1 GiB log, with the file's pages dropped from the cache (cold) and cached: the
//! default (one thread per core) against `--threads 1`, and RocksDB's `ldb dump_wal` where it
//! is installed. The output goes to a pipe, as to `head`; the reader stops at the first line.
//!
//! The cache is dropped with `dd iflag=nocache count=0` (GNU coreutils: `posix_fadvise`
//! `POSIX_FADV_DONTNEED` on the whole file), so that xtask stays std-only.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cmd::{Error, Result, banner, build_release_bin};

/// The log's size.
const LOG_BYTES: u64 = 1 << 30;

/// `cargo xtask bench-first-line [--quick]` (`--quick`: a 256 MiB log, 3 runs).
pub(crate) fn run(args: &[String]) -> Result {
    let quick = args.iter().any(|a| a == "--quick");
    if let Some(bad) = args.iter().find(|a| *a != "--quick") {
        return Err(Error::Usage(format!(
            "unexpected argument `{bad}` for `bench-first-line`"
        )));
    }
    let (bytes, reps) = if quick {
        (LOG_BYTES / 4, 3)
    } else {
        (LOG_BYTES, 5)
    };
    banner("bench-first-line: build logfmt (release)");
    let logfmt = build_release_bin("logfmt-cli", "logfmt")?;
    let dir = crate::cmd::fresh_bench_dir("logfmt-bench-first-line")?;
    let log = dir.join("000001.log");
    banner(&format!("bench-first-line: write a log of {bytes} bytes"));
    crate::bench_threads::write_log(&logfmt, &log, bytes)?;
    let logfmt = logfmt.to_string_lossy().into_owned();
    let log_arg = log.to_string_lossy().into_owned();
    let mut cases: Vec<(&str, Vec<String>)> = vec![
        (
            "logfmt cat",
            vec![logfmt.clone(), "cat".into(), log_arg.clone()],
        ),
        (
            "logfmt cat --threads 1",
            vec![
                logfmt,
                "cat".into(),
                "--threads".into(),
                "1".into(),
                log_arg.clone(),
            ],
        ),
    ];
    if found("ldb") {
        cases.push((
            "ldb dump_wal",
            vec![
                "ldb".into(),
                "dump_wal".into(),
                format!("--walfile={log_arg}"),
            ],
        ));
    } else {
        println!("ldb not found: only logfmt is timed (`cargo xtask interop` installs it)");
    }
    println!("CPU: {}", cpu_name());
    banner(&format!(
        "bench-first-line: {reps} runs each, cold (cache dropped) and cached, output to a pipe"
    ));
    for cold in [true, false] {
        for (name, command) in &cases {
            let mut times = Vec::new();
            for _ in 0..reps {
                if cold {
                    drop_cache(&log)?;
                } else {
                    // Read once, so that the file is cached.
                    std::fs::read(&log).map_err(|e| Error::Failed(format!("{e}")))?;
                }
                times.push(first_line(command)?);
            }
            let median = crate::cmd::median_duration(&mut times);
            println!(
                "FIRST_LINE cmd=\"{name}\" cache={} median={:.4}s",
                if cold { "cold" } else { "cached" },
                median.as_secs_f64()
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// Whether `program` runs.
fn found(program: &str) -> bool {
    Command::new(program)
        .arg("--help")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// The CPU's model name, from /proc/cpuinfo.
fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split_once(':'))
                .map(|(_, name)| name.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// Drops `file`'s pages from the page cache (`posix_fadvise` DONTNEED, by GNU dd).
fn drop_cache(file: &Path) -> Result {
    let status = Command::new("dd")
        .arg(format!("if={}", file.display()))
        .args(["iflag=nocache", "count=0", "status=none"])
        .status()
        .map_err(|e| Error::Failed(format!("dd: {e}")))?;
    if !status.success() {
        return Err(Error::Failed(format!("dd iflag=nocache failed: {status}")));
    }
    Ok(())
}

/// The time from starting `command` to the first newline on its standard output (or its
/// end), read through a pipe; then the command is stopped, as `head -1` stops it.
fn first_line(command: &[String]) -> Result<Duration> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| Error::Failed("no command".into()))?;
    let start = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| Error::Failed(format!("{program}: {e}")))?;
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| Error::Failed(format!("{program}: no stdout")))?;
    let mut buffer = [0u8; 64 * 1024];
    loop {
        match stdout.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) if buffer[..n].contains(&b'\n') => break,
            Ok(_) => {}
            Err(e) => return Err(Error::Failed(format!("{program}: {e}"))),
        }
    }
    let wall = start.elapsed();
    drop(stdout);
    let _ = child.kill();
    let _ = child.wait();
    Ok(wall)
}
