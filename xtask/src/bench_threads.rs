//! `cargo xtask bench-threads`: `logfmt verify`, `stats` and `cat --output json` on a 1 GiB
//! log with one thread and with one per core (`--threads`), in the same run, alternating the
//! two so that both see the same machine. Prints each median wall time and the speed-up.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cmd::{Error, Result, banner, build_release_bin};

/// The log's size.
const LOG_BYTES: u64 = 1 << 30;

/// `cargo xtask bench-threads [--quick]` (`--quick`: a 256 MiB log, 3 runs).
pub(crate) fn run(args: &[String]) -> Result {
    let quick = args.iter().any(|a| a == "--quick");
    if let Some(bad) = args.iter().find(|a| *a != "--quick") {
        return Err(Error::Usage(format!(
            "unexpected argument `{bad}` for `bench-threads`"
        )));
    }
    let (bytes, reps) = if quick {
        (LOG_BYTES / 4, 3)
    } else {
        (LOG_BYTES, 5)
    };
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    banner("bench-threads: build logfmt (release)");
    let logfmt = build_release_bin("logfmt-cli", "logfmt")?;
    let dir = crate::cmd::fresh_bench_dir("logfmt-bench-threads")?;
    let log = dir.join("big.log");
    banner(&format!("bench-threads: write a log of {bytes} bytes"));
    write_log(&logfmt, &log, bytes)?;
    println!(
        "{}: {} bytes; {cores} cores",
        log.display(),
        fs::metadata(&log).map_or(0, |m| m.len())
    );
    let commands: [&[&str]; 3] = [
        &["verify"],
        &["stats", "--json"],
        &["cat", "--output", "json"],
    ];
    banner(&format!(
        "bench-threads: {reps} runs each, 1 and {cores} threads alternating, output to /dev/null"
    ));
    for command in commands {
        let mut one = Vec::new();
        let mut many = Vec::new();
        for _ in 0..reps {
            one.push(timed(&logfmt, command, 1, &log)?);
            many.push(timed(&logfmt, command, cores, &log)?);
        }
        let (one, many) = (
            crate::cmd::median_duration(&mut one),
            crate::cmd::median_duration(&mut many),
        );
        let name = command.join(" ");
        println!(
            "THREADS cmd=\"{name}\" threads=1 median={:.3}s threads={cores} median={:.3}s \
             speedup={:.2}x",
            one.as_secs_f64(),
            many.as_secs_f64(),
            one.as_secs_f64() / many.as_secs_f64()
        );
    }
    let _ = fs::remove_dir_all(&dir);
    Ok(())
}

/// Writes `log` with `logfmt write --input framed`: records of 16 to 1 015 bytes, and one in
/// 500 of 40 000 (across blocks), to `bytes` of log.
pub(crate) fn write_log(logfmt: &Path, log: &Path, bytes: u64) -> Result {
    let mut child = Command::new(logfmt)
        .args(["write", "--input", "framed"])
        .arg(log)
        .stdin(Stdio::piped())
        .spawn()
        .map_err(|e| Error::Failed(format!("logfmt write: {e}")))?;
    let stdin = child
        .stdin
        .take()
        .ok_or_else(|| Error::Failed("logfmt write: no stdin".into()))?;
    let mut out = BufWriter::with_capacity(1 << 20, stdin);
    let mut written = 0u64;
    let mut record = Vec::new();
    for i in 0u64.. {
        if written >= bytes {
            break;
        }
        let len = if i % 500 == 499 {
            40_000
        } else {
            16 + (i * 7_919 % 1_000) as usize
        };
        record.clear();
        record.extend((0..len).map(|j| (i as usize).wrapping_mul(31).wrapping_add(j) as u8));
        out.write_all(&(len as u32).to_le_bytes())
            .and_then(|()| out.write_all(&record))
            .map_err(|e| Error::Failed(format!("logfmt write: {e}")))?;
        written += len as u64 + 7;
    }
    drop(out);
    let status = child
        .wait()
        .map_err(|e| Error::Failed(format!("logfmt write: {e}")))?;
    if !status.success() {
        return Err(Error::Failed("logfmt write failed".into()));
    }
    Ok(())
}

/// The wall time of `logfmt <command> --threads <threads> <log>`, its output to `/dev/null`.
fn timed(logfmt: &Path, command: &[&str], threads: usize, log: &Path) -> Result<Duration> {
    let null = File::create("/dev/null").map_err(|e| Error::Failed(format!("{e}")))?;
    let start = Instant::now();
    let status = Command::new(logfmt)
        .args(command)
        .args(["--threads", &threads.to_string()])
        .arg(log)
        .stdout(null)
        .stderr(Stdio::inherit())
        .status()
        .map_err(|e| Error::Failed(format!("logfmt {}: {e}", command.join(" "))))?;
    let wall = start.elapsed();
    if !status.success() {
        return Err(Error::Failed(format!(
            "logfmt {} failed: {status}",
            command.join(" ")
        )));
    }
    Ok(wall)
}
