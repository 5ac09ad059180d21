//! `cargo xtask bench scan [--quick]`: logs as a DataFusion table, timed against the CLI. The
//! query `SELECT count(*), sum(length) FROM logs` by `logfmt-sql` over 1 GiB of logs (four
//! files of 256 MiB in `/dev/shm`), with one partition and with two, against `logfmt verify
//! --threads 1` on the same files — all in one run, alternating, so that each sees the same
//! machine. Prints each median wall time, its throughput, and the ratios: one partition against
//! the CLI (a partition's share of the CLI's single-thread speed) and two partitions against
//! one. Before timing, the query's count and sum are checked against the CLI's records and
//! payload bytes.
//!
//! `logfmt-sql` is built in release from `crates/logfmt-datafusion` (not a workspace member:
//! its first release build takes a quarter of an hour on two cores).

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cmd::{Cmd, Error, Result, banner, build_release_bin, executables};

/// The logs' total size, and the number of files it is cut into.
const TOTAL_BYTES: u64 = 1 << 30;
const FILES: u64 = 4;
/// The query timed.
const QUERY: &str = "SELECT count(*) AS records, sum(length) AS bytes FROM logs";

/// `cargo xtask bench scan [--quick]` (`--quick`: 256 MiB of logs, 3 runs).
pub(crate) fn run(quick: bool) -> Result {
    let (total, reps) = if quick {
        (TOTAL_BYTES / 4, 3)
    } else {
        (TOTAL_BYTES, 5)
    };
    banner("bench scan: build logfmt (release)");
    let logfmt = build_release_bin("logfmt-cli", "logfmt")?;
    banner("bench scan: build logfmt-sql (release, crates/logfmt-datafusion)");
    let json = Cmd::cargo()
        .dir(crate::datafusion::DIR)
        .args([
            "build",
            "--release",
            "--locked",
            "--bin",
            "logfmt-sql",
            "--message-format=json-render-diagnostics",
        ])
        .read()?;
    let sql = executables(&json)
        .into_iter()
        .find(|(name, _)| name == "logfmt-sql")
        .map(|(_, path)| path)
        .ok_or_else(|| Error::Failed("cargo built no executable named `logfmt-sql`".into()))?;

    let dir = crate::cmd::fresh_bench_dir("logfmt-bench-scan")?;
    banner(&format!(
        "bench scan: write {FILES} logs of {} bytes",
        total / FILES
    ));
    let mut logs = Vec::new();
    for i in 0..FILES {
        let log = dir.join(format!("{i:02}.log"));
        crate::bench_threads::write_log(&logfmt, &log, total / FILES)?;
        logs.push(log);
    }
    let bytes: u64 = logs
        .iter()
        .map(|log| fs::metadata(log).map_or(0, |m| m.len()))
        .sum();
    println!("{}: {FILES} files, {bytes} bytes", dir.display());

    banner("bench scan: the query's answer against the CLI's");
    let (records, payload) = cli_totals(&logfmt, &logs)?;
    for partitions in [1, 2] {
        let answer = query(&sql, &dir, partitions)?;
        if answer != (records, payload) {
            return Err(Error::Failed(format!(
                "logfmt-sql with {partitions} partition(s) counts {} records of {} bytes; \
                 logfmt verify counts {records} of {payload}",
                answer.0, answer.1
            )));
        }
    }
    println!(
        "records {records}, payload bytes {payload}: logfmt-sql (1 and 2 partitions) and \
         logfmt verify agree"
    );

    banner(&format!(
        "bench scan: {reps} runs each, alternating, output to /dev/null"
    ));
    let (mut cli, mut one, mut two) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps {
        cli.push(timed(
            Command::new(&logfmt)
                .args(["verify", "--threads", "1"])
                .args(&logs),
        )?);
        one.push(timed(&mut sql_command(&sql, &dir, 1))?);
        two.push(timed(&mut sql_command(&sql, &dir, 2))?);
    }
    let (cli, one, two) = (
        crate::cmd::median_duration(&mut cli),
        crate::cmd::median_duration(&mut one),
        crate::cmd::median_duration(&mut two),
    );
    let rate = |d: Duration| bytes as f64 / d.as_secs_f64() / f64::from(1u32 << 30);
    for (name, d) in [
        ("logfmt verify --threads 1", cli),
        ("logfmt-sql --partitions 1", one),
        ("logfmt-sql --partitions 2", two),
    ] {
        println!(
            "SCAN cmd=\"{name}\" median={:.3}s throughput={:.2}GiB/s",
            d.as_secs_f64(),
            rate(d)
        );
    }
    println!(
        "SCAN one_partition_vs_cli={:.2} two_partitions_vs_one={:.2}x (cores: {})",
        cli.as_secs_f64() / one.as_secs_f64(),
        one.as_secs_f64() / two.as_secs_f64(),
        std::thread::available_parallelism().map_or(1, usize::from)
    );
    let _ = fs::remove_dir_all(&dir);
    Ok(())
}

/// The records and payload bytes `logfmt verify --json` counts in `logs`.
fn cli_totals(logfmt: &Path, logs: &[PathBuf]) -> Result<(u64, u64)> {
    let output = Command::new(logfmt)
        .args(["verify", "--json"])
        .args(logs)
        .output()
        .map_err(|e| Error::Failed(format!("logfmt verify: {e}")))?;
    if !output.status.success() {
        return Err(Error::Failed(format!(
            "logfmt verify failed ({}) on the generated logs",
            output.status
        )));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let (mut records, mut payload, mut files) = (0, 0, 0);
    for line in text.lines().filter(|line| line.starts_with('{')) {
        records += json_number(line, "records")?;
        payload += json_number(line, "payload_bytes")?;
        files += 1;
    }
    if files != logs.len() {
        return Err(Error::Failed(format!(
            "logfmt verify --json reported {files} files of {}",
            logs.len()
        )));
    }
    Ok((records, payload))
}

/// The number after `"key":` in a line of JSON.
fn json_number(line: &str, key: &str) -> Result<u64> {
    let pattern = format!("\"{key}\":");
    line.find(&pattern)
        .map(|at| &line[at + pattern.len()..])
        .and_then(|rest| {
            let digits: String = rest
                .trim_start()
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .ok_or_else(|| Error::Failed(format!("no number `{key}` in {line}")))
}

fn sql_command(sql: &Path, dir: &Path, partitions: u16) -> Command {
    let mut command = Command::new(sql);
    command
        .args(["--partitions", &partitions.to_string(), "--output", "csv"])
        .arg(QUERY)
        .arg(dir);
    command
}

/// The query's answer: (records, bytes).
fn query(sql: &Path, dir: &Path, partitions: u16) -> Result<(u64, u64)> {
    let output = sql_command(sql, dir, partitions)
        .output()
        .map_err(|e| Error::Failed(format!("logfmt-sql: {e}")))?;
    if !output.status.success() {
        return Err(Error::Failed(format!(
            "logfmt-sql failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let row = text
        .lines()
        .nth(1)
        .ok_or_else(|| Error::Failed(format!("logfmt-sql printed no row: {text}")))?;
    let mut fields = row.split(',').map(|f| f.trim().parse::<u64>());
    match (fields.next(), fields.next()) {
        (Some(Ok(records)), Some(Ok(bytes))) => Ok((records, bytes)),
        _ => Err(Error::Failed(format!("logfmt-sql printed {row:?}"))),
    }
}

/// The wall time of `command`, its output to `/dev/null`.
fn timed(command: &mut Command) -> Result<Duration> {
    let null = File::create("/dev/null").map_err(|e| Error::Failed(format!("{e}")))?;
    let start = Instant::now();
    let status = command
        .stdout(null)
        .stderr(Stdio::inherit())
        .status()
        .map_err(|e| Error::Failed(format!("{command:?}: {e}")))?;
    let wall = start.elapsed();
    if !status.success() {
        return Err(Error::Failed(format!("{command:?} failed: {status}")));
    }
    Ok(wall)
}
