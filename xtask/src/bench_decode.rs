//! `cargo xtask bench-decode`: decoding a write-ahead log of 2 000 000 single-put
//! WriteBatches, `logfmt cat` (text and `--output json`, on every core and with `--threads
//! 1`) against RocksDB's `ldb dump_wal --print_value`, on the same file in the same run
//! (output to `/dev/null`). Prints the
//! median wall time of each, the ratio, and each one's peak resident memory (from
//! `/usr/bin/time`, where there is one). `ldb` comes from Debian's `rocksdb-tools` (`cargo
//! xtask interop` installs it); without it only logfmt is timed.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cmd::{Error, Result, banner, build_release_bin, fmt_duration, runs};

/// Batches in the log.
const BATCHES: u64 = 2_000_000;
/// Bytes of each value.
const VALUE: usize = 32;

/// `cargo xtask bench-decode [--quick]`.
pub(crate) fn run(args: &[String]) -> Result {
    let quick = args.iter().any(|a| a == "--quick");
    if let Some(bad) = args.iter().find(|a| *a != "--quick") {
        return Err(Error::Usage(format!(
            "unexpected argument `{bad}` for `bench-decode`"
        )));
    }
    let reps = if quick { 1 } else { 3 };
    let batches = if quick { BATCHES / 10 } else { BATCHES };
    banner("bench-decode: build logfmt (release)");
    let logfmt = build_release_bin("logfmt-cli", "logfmt")?;
    let dir = crate::cmd::fresh_bench_dir("logfmt-bench-decode")?;
    let wal = dir.join("000007.log");
    banner(&format!("bench-decode: write {batches} single-put batches"));
    write_wal(&logfmt, &dir, &wal, batches)?;
    let size = fs::metadata(&wal).map_or(0, |m| m.len());
    println!("{}: {size} bytes", wal.display());

    let wal_arg = wal.to_string_lossy().into_owned();
    let logfmt_arg = logfmt.to_string_lossy().into_owned();
    // On every core (the default) and on one, as `ldb` runs.
    let cat = |args: &[&str]| -> Vec<String> {
        let mut argv = vec![logfmt_arg.clone(), "cat".into()];
        argv.extend(args.iter().map(|a| (*a).to_owned()));
        argv.push(wal_arg.clone());
        argv
    };
    let mut cases: Vec<(&str, Vec<String>)> = vec![
        ("logfmt cat (text)", cat(&[])),
        ("logfmt cat --output json", cat(&["--output", "json"])),
        ("logfmt cat --threads 1 (text)", cat(&["--threads", "1"])),
        (
            "logfmt cat --threads 1 --output json",
            cat(&["--threads", "1", "--output", "json"]),
        ),
    ];
    let have_ldb = Command::new("ldb")
        .arg("--help")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if have_ldb {
        cases.push((
            "ldb dump_wal --print_value",
            vec![
                "ldb".into(),
                "dump_wal".into(),
                format!("--walfile={wal_arg}"),
                "--print_value".into(),
            ],
        ));
    } else {
        println!("ldb not found: only logfmt is timed (`cargo xtask interop` installs it)");
    }
    let time = runs("/usr/bin/time", &["-f", "%M", "true"]);
    banner(&format!(
        "bench-decode: {reps} runs each, output to /dev/null"
    ));
    let mut medians = Vec::new();
    for (name, argv) in &cases {
        let mut walls = Vec::new();
        let mut peak_kib = 0u64;
        for _ in 0..reps {
            let (wall, kib) = timed(argv, time, &dir)?;
            walls.push(wall);
            peak_kib = peak_kib.max(kib.unwrap_or(0));
        }
        walls.sort();
        let median = walls[walls.len() / 2];
        let rate = batches as f64 / median.as_secs_f64();
        let memory = if time {
            format!(", peak RSS {:.1} MiB", peak_kib as f64 / 1024.0)
        } else {
            String::new()
        };
        println!(
            "DECODE {name:<36} {:>9}  {:>6.2} M batches/s{memory}",
            fmt_duration(median),
            rate / 1e6
        );
        medians.push((*name, median));
    }
    if let Some(&(_, ldb)) = medians.iter().find(|(name, _)| name.starts_with("ldb")) {
        for (name, median) in medians
            .iter()
            .filter(|(name, _)| name.starts_with("logfmt"))
        {
            println!(
                "RATIO {name:<36} {:.1}x faster than ldb dump_wal --print_value",
                ldb.as_secs_f64() / median.as_secs_f64()
            );
        }
    }
    let _ = fs::remove_dir_all(&dir);
    Ok(())
}

/// Writes `wal`: `batches` WriteBatches (sequence 1, 2, ...; count 1; one put of a 16-byte
/// key and a 32-byte value), through `logfmt write --input framed`.
fn write_wal(logfmt: &Path, dir: &Path, wal: &Path, batches: u64) -> Result {
    let framed = dir.join("batches.framed");
    let file = File::create(&framed).map_err(|e| Error::Failed(format!("{e}")))?;
    let mut out = BufWriter::new(file);
    let mut record = Vec::with_capacity(80);
    for i in 0..batches {
        record.clear();
        record.extend_from_slice(&(i + 1).to_le_bytes());
        record.extend_from_slice(&1u32.to_le_bytes());
        record.push(1);
        let key = format!("key{i:013}");
        record.push(key.len() as u8);
        record.extend_from_slice(key.as_bytes());
        record.push(VALUE as u8);
        record.extend((0..VALUE).map(|j| (i as usize).wrapping_mul(31).wrapping_add(j) as u8));
        out.write_all(&(record.len() as u32).to_le_bytes())
            .and_then(|()| out.write_all(&record))
            .map_err(|e| Error::Failed(format!("{e}")))?;
    }
    out.flush().map_err(|e| Error::Failed(format!("{e}")))?;
    drop(out);
    let input = File::open(&framed).map_err(|e| Error::Failed(format!("{e}")))?;
    let status = Command::new(logfmt)
        .args(["write", "--input", "framed"])
        .arg(wal)
        .stdin(input)
        .status()
        .map_err(|e| Error::Failed(format!("logfmt write: {e}")))?;
    let _ = fs::remove_file(&framed);
    if !status.success() {
        return Err(Error::Failed("logfmt write failed".into()));
    }
    Ok(())
}

/// Runs `argv` with its output to `/dev/null`: the wall time, and the peak resident memory in
/// KiB when `time` (`/usr/bin/time -f %M`) is used.
fn timed(argv: &[String], time: bool, dir: &Path) -> Result<(Duration, Option<u64>)> {
    let report = dir.join("time.txt");
    let mut cmd = if time {
        let mut cmd = Command::new("/usr/bin/time");
        cmd.arg("-f").arg("%M").arg("-o").arg(&report).args(argv);
        cmd
    } else {
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]);
        cmd
    };
    let null = File::create("/dev/null").map_err(|e| Error::Failed(format!("{e}")))?;
    let start = Instant::now();
    let status = cmd
        .stdout(null)
        .stderr(Stdio::inherit())
        .status()
        .map_err(|e| Error::Failed(format!("{}: {e}", argv[0])))?;
    let wall = start.elapsed();
    if !status.success() {
        return Err(Error::Failed(format!("{argv:?} failed: {status}")));
    }
    let kib = if time {
        fs::read_to_string(&report)
            .ok()
            .and_then(|t| t.trim().lines().last().and_then(|l| l.trim().parse().ok()))
    } else {
        None
    };
    Ok((wall, kib))
}
