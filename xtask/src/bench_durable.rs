//! `cargo xtask bench durable`: durable appends per second of 100-byte records from 1, 4, 16
//! and 64 threads, logfmt's group commit (`logfmt-bench durable`) against RocksDB's own WAL
//! with `sync = true` (a small C++ program built here against Debian's `librocksdb-dev`), on
//! real files in the target directory's file system. The two run case by case, alternating,
//! for several rounds: the `DURABLE` lines of every run, then the medians and same-run ratios.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::cmd::{Cmd, Error, Result, banner, project_root};

/// Thread counts measured.
const THREADS: [&str; 4] = ["1", "4", "16", "64"];

/// `cargo xtask bench durable [--quick]`.
pub(crate) fn run(quick: bool) -> Result {
    banner("bench durable: RocksDB and a C++ compiler");
    crate::interop::ensure_libraries()?;
    let root = project_root();
    let dir = root.join("target").join("bench-durable");
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::Failed(format!("cannot create {}: {e}", dir.display())))?;
    let rocksdb = dir.join("rocksdb_durable");
    let source = root.join("crates/logfmt-bench/cpp/rocksdb_durable.cc");
    Cmd::new("c++")
        .args(["-std=c++17", "-O2", "-o"])
        .args([rocksdb.to_string_lossy(), source.to_string_lossy()])
        .args(["-lrocksdb", "-lpthread"])
        .run()?;
    banner("bench durable: build logfmt-bench (release)");
    let logfmt = crate::cmd::build_release_bin("logfmt-bench", "logfmt-bench")?;
    let (rounds, seconds) = if quick { (1, "0.2") } else { (5, "1") };
    let dir_arg = dir.to_string_lossy().into_owned();
    let mut lines = Vec::new();
    for round in 1..=rounds {
        banner(&format!("bench durable: round {round} of {rounds}"));
        // Alternating case by case: both meet the same disk at nearly the same moment.
        for threads in THREADS {
            let ours = Cmd::new(&logfmt.to_string_lossy())
                .args([
                    "durable",
                    "--dir",
                    &dir_arg,
                    "--seconds",
                    seconds,
                    "--record",
                    "100",
                ])
                .args([threads])
                .read()?;
            let theirs = Cmd::new(&rocksdb.to_string_lossy())
                .args([dir_arg.as_str(), seconds, "100", threads])
                .read()?;
            for line in ours.lines().chain(theirs.lines()) {
                if line.starts_with("DURABLE ") {
                    println!("{line}");
                    lines.push(line.to_owned());
                }
            }
        }
    }
    print!("{}", table(&lines)?);
    let _ = std::fs::remove_dir_all(PathBuf::from(&dir_arg));
    Ok(())
}

/// The medians per implementation and thread count, and the ratios.
fn table(lines: &[String]) -> Result<String> {
    // (impl, threads) -> appends/s of each run.
    let mut runs: BTreeMap<(String, u64), Vec<f64>> = BTreeMap::new();
    for line in lines {
        let field = |key: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
        };
        let (Some(imp), Some(threads), Some(rate)) = (
            field("impl"),
            field("threads").and_then(|v| v.parse::<u64>().ok()),
            field("appends_per_s").and_then(|v| v.parse::<f64>().ok()),
        ) else {
            return Err(Error::Failed(format!("unreadable line: {line}")));
        };
        runs.entry((imp.to_owned(), threads))
            .or_default()
            .push(rate);
    }
    let median = |imp: &str, threads: u64| {
        let mut values = runs.get(&(imp.to_owned(), threads))?.clone();
        values.sort_by(f64::total_cmp);
        values.get(values.len() / 2).copied()
    };
    let mut out = String::from(
        "\ndurable appends/s of 100-byte records (medians of the rounds; ratio = logfmt / RocksDB \
         in the same run)\n",
    );
    out.push_str(&format!(
        "{:>7} {:>12} {:>12} {:>8} {:>16}\n",
        "threads", "logfmt", "rocksdb", "ratio", "logfmt vs 1 thr"
    ));
    let single = median("logfmt", 1);
    for threads in THREADS.iter().filter_map(|t| t.parse::<u64>().ok()) {
        let (Some(ours), Some(theirs)) = (median("logfmt", threads), median("rocksdb", threads))
        else {
            continue;
        };
        let scale = single.map_or_else(|| "-".to_owned(), |s| format!("{:.1}x", ours / s));
        out.push_str(&format!(
            "{threads:>7} {ours:>12.0} {theirs:>12.0} {:>7.2}x {scale:>16}\n",
            ours / theirs
        ));
    }
    out.push_str(
        "(the issue's targets: logfmt >= RocksDB at every thread count, and >= 10x its own \
         1-thread rate at 64 threads)\n",
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_takes_medians_and_ratios() {
        let lines: Vec<String> = [
            "DURABLE impl=logfmt threads=1 record=100 appends_per_s=100.0 syncs=1",
            "DURABLE impl=logfmt threads=1 record=100 appends_per_s=300.0 syncs=1",
            "DURABLE impl=logfmt threads=1 record=100 appends_per_s=200.0 syncs=1",
            "DURABLE impl=rocksdb threads=1 record=100 appends_per_s=400.0 syncs=1",
            "DURABLE impl=logfmt threads=64 record=100 appends_per_s=4000.0 syncs=1",
            "DURABLE impl=rocksdb threads=64 record=100 appends_per_s=2000.0 syncs=1",
        ]
        .map(str::to_owned)
        .to_vec();
        let printed = table(&lines).unwrap();
        assert!(
            printed.contains("      1          200          400    0.50x             1.0x"),
            "{printed}"
        );
        assert!(
            printed.contains("     64         4000         2000    2.00x            20.0x"),
            "{printed}"
        );
        assert!(table(&["DURABLE impl=logfmt".to_owned()]).is_err());
    }
}
