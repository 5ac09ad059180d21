//! `cargo xtask bench wal`: durable appends per second to a WAL directory, logfmt's
//! (`logfmt-bench wal`) against RocksDB's own WAL with `sync = true` (a small C++ program built
//! here against Debian's `librocksdb-dev`), 100-byte records from 1, 4, 16 and 64 threads,
//! logs switched every 64 MiB, each written as a fresh file and as a recycled one
//! (`recycle_log_file_num` off and on), on real files in the target directory's file system.
//! The two run case by case, alternating, for several rounds; then the medians, the ratios
//! to RocksDB, the 64-thread/1-thread scaling and the recycled/fresh ratio. First it says what
//! the file system is and whether it charges a sync for metadata: `fdatasync` after a write
//! that extends a file against one that overwrites bytes already there. With `--baseline REV`,
//! that commit's `logfmt-bench wal` (built in a worktree under the target directory) runs
//! beside today's in every case, and the table gives today's ratio to it.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use crate::cmd::{Cmd, Error, Result, banner, project_root};

/// Thread counts measured.
const THREADS: [&str; 4] = ["1", "4", "16", "64"];

/// The two ways a log file is written.
const MODES: [&str; 2] = ["fresh", "recycled"];

/// `cargo xtask bench wal [--quick] [--baseline REV]`.
pub(crate) fn run(quick: bool, baseline: Option<&str>) -> Result {
    banner("bench wal: RocksDB and a C++ compiler");
    crate::interop::ensure_libraries()?;
    let root = project_root();
    let dir = root.join("target").join("bench-wal");
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::Failed(format!("cannot create {}: {e}", dir.display())))?;
    let rocksdb = dir.join("rocksdb_wal");
    let source = root.join("crates/logfmt-bench/cpp/rocksdb_wal.cc");
    Cmd::new("c++")
        .args(["-std=c++17", "-O2", "-o"])
        .args([rocksdb.to_string_lossy(), source.to_string_lossy()])
        .args(["-lrocksdb", "-lpthread"])
        .run()?;
    banner("bench wal: build logfmt-bench (release)");
    let logfmt = crate::cmd::build_release_bin("logfmt-bench", "logfmt-bench")?;
    let baseline = match baseline {
        Some(rev) => {
            let commit = crate::bench_baseline::resolve(rev)?;
            banner(&format!(
                "bench wal: build logfmt-bench of {rev} ({commit})"
            ));
            Some(crate::bench_baseline::build_baseline(&commit)?)
        }
        None => None,
    };
    banner("bench wal: the disk");
    print_file_system(&dir);
    print_sync_costs(&dir, if quick { 100 } else { 1_000 })?;
    println!("load average before: {}", load_average());
    let (rounds, seconds) = if quick { (1, "0.3") } else { (5, "1") };
    let dir_arg = dir.to_string_lossy().into_owned();
    let mut lines = Vec::new();
    for round in 1..=rounds {
        banner(&format!("bench wal: round {round} of {rounds}"));
        // Alternating case by case (each thread count fresh then recycled, logfmt then
        // RocksDB): all four meet the same disk at nearly the same moment.
        for threads in THREADS {
            for mode in MODES {
                let logfmt_case = |exe: &Path| {
                    let mut case = Cmd::new(&exe.to_string_lossy()).args([
                        "wal",
                        "--dir",
                        &dir_arg,
                        "--seconds",
                        seconds,
                        "--record",
                        "100",
                    ]);
                    if mode == "recycled" {
                        case = case.args(["--recycled"]);
                    }
                    case.args([threads]).read()
                };
                let ours = logfmt_case(&logfmt)?;
                let before = match &baseline {
                    // Its lines say `impl=logfmt` too.
                    Some(exe) => logfmt_case(exe)?.replace("impl=logfmt", "impl=baseline"),
                    None => String::new(),
                };
                let theirs = Cmd::new(&rocksdb.to_string_lossy())
                    .args([dir_arg.as_str(), seconds, "100", mode, threads])
                    .read()?;
                for line in ours.lines().chain(before.lines()).chain(theirs.lines()) {
                    if line.starts_with("WAL ") {
                        println!("{line}");
                        lines.push(line.to_owned());
                    }
                }
            }
        }
    }
    println!("load average after: {}", load_average());
    print!("{}", table(&lines)?);
    let _ = std::fs::remove_dir_all(&dir_arg);
    Ok(())
}

/// The file system of `dir`, as `df -T` says it.
fn print_file_system(dir: &Path) {
    let df = Cmd::new("df")
        .args(["-T", &dir.to_string_lossy()])
        .read()
        .unwrap_or_default();
    println!("file system (df -T):");
    for line in df.lines() {
        println!("  {line}");
    }
}

/// The load average (`/proc/loadavg`'s first three figures).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// Times `fdatasync` after appending 100 bytes to a file (its length grows: metadata to
/// write) and after overwriting 100 bytes of a file already written and synced (nothing but
/// the data), alternating one with the other so that both meet the disk as it is at the
/// moment: whether the file system charges metadata to a sync. Medians.
fn print_sync_costs(dir: &Path, syncs: usize) -> Result {
    use std::io::{Seek, SeekFrom};
    let failed = |e: std::io::Error| Error::Failed(format!("sync timing: {e}"));
    let (growing, written) = (dir.join("sync-cost-growing"), dir.join("sync-cost-written"));
    let record = [7u8; 100];
    let mut extending = std::fs::File::create(&growing).map_err(failed)?;
    let mut overwriting = std::fs::File::create(&written).map_err(failed)?;
    overwriting
        .write_all(&vec![0u8; record.len() * syncs])
        .and_then(|()| overwriting.sync_all())
        .and_then(|()| overwriting.seek(SeekFrom::Start(0)).map(drop))
        .map_err(failed)?;
    let timed = |file: &mut std::fs::File| -> Result<f64> {
        let started = Instant::now();
        file.write_all(&record)
            .and_then(|()| file.sync_data())
            .map_err(failed)?;
        Ok(started.elapsed().as_secs_f64())
    };
    let (mut grown, mut overwritten) = (Vec::new(), Vec::new());
    for _ in 0..syncs {
        grown.push(timed(&mut extending)?);
        overwritten.push(timed(&mut overwriting)?);
    }
    drop((extending, overwriting));
    let _ = std::fs::remove_file(&growing);
    let _ = std::fs::remove_file(&written);
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (extending, overwriting) = (median(grown), median(overwritten));
    println!(
        "fdatasync after a 100-byte write (medians of {syncs}, alternating): {:.3} ms extending \
         the file, {:.3} ms overwriting ({:.2}x: {})",
        extending * 1e3,
        overwriting * 1e3,
        extending / overwriting,
        if extending > overwriting * 1.2 {
            "the file system charges metadata to a sync that extends a file"
        } else {
            "no charge for metadata seen"
        }
    );
    Ok(())
}

/// The medians per implementation, mode and thread count, and the ratios.
fn table(lines: &[String]) -> Result<String> {
    // (impl, mode, threads) -> appends/s of each run.
    let mut runs: BTreeMap<(String, String, u64), Vec<f64>> = BTreeMap::new();
    for line in lines {
        let field = |key: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
        };
        let (Some(imp), Some(mode), Some(threads), Some(rate)) = (
            field("impl"),
            field("files"),
            field("threads").and_then(|v| v.parse::<u64>().ok()),
            field("appends_per_s").and_then(|v| v.parse::<f64>().ok()),
        ) else {
            return Err(Error::Failed(format!("unreadable line: {line}")));
        };
        runs.entry((imp.to_owned(), mode.to_owned(), threads))
            .or_default()
            .push(rate);
    }
    let median = |imp: &str, mode: &str, threads: u64| {
        let mut values = runs
            .get(&(imp.to_owned(), mode.to_owned(), threads))?
            .clone();
        values.sort_by(f64::total_cmp);
        values.get(values.len() / 2).copied()
    };
    let mut out = String::from(
        "\ndurable appends/s of 100-byte records, logs of 64 MiB (medians of the rounds; \
         ratio = logfmt / RocksDB)\n",
    );
    let baseline = runs.keys().any(|(imp, _, _)| imp == "baseline");
    out.push_str(&format!(
        "{:>9} {:>7} {:>10} {:>10} {:>7} {:>14}",
        "files", "threads", "logfmt", "rocksdb", "ratio", "recycled/fresh"
    ));
    if baseline {
        out.push_str(&format!(" {:>10} {:>12}", "baseline", "vs baseline"));
    }
    out.push('\n');
    for mode in MODES {
        for threads in THREADS.iter().filter_map(|t| t.parse::<u64>().ok()) {
            let (Some(ours), Some(theirs)) = (
                median("logfmt", mode, threads),
                median("rocksdb", mode, threads),
            ) else {
                continue;
            };
            let versus_fresh = match (mode, median("logfmt", "fresh", threads)) {
                ("recycled", Some(fresh)) => format!("{:.2}x", ours / fresh),
                _ => "-".to_owned(),
            };
            out.push_str(&format!(
                "{mode:>9} {threads:>7} {ours:>10.0} {theirs:>10.0} {:>6.2}x {versus_fresh:>14}",
                ours / theirs
            ));
            if let Some(before) = median("baseline", mode, threads).filter(|_| baseline) {
                out.push_str(&format!(" {before:>10.0} {:>11.2}x", ours / before));
            }
            out.push('\n');
        }
    }
    for mode in MODES {
        for imp in ["logfmt", "baseline", "rocksdb"] {
            if let (Some(one), Some(many)) = (median(imp, mode, 1), median(imp, mode, 64)) {
                out.push_str(&format!(
                    "{imp} {mode}: 64 threads / 1 thread = {:.1}x\n",
                    many / one
                ));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_takes_medians_and_ratios() {
        let lines: Vec<String> = [
            "WAL impl=logfmt files=fresh threads=1 record=100 appends_per_s=100.0",
            "WAL impl=logfmt files=fresh threads=1 record=100 appends_per_s=300.0",
            "WAL impl=logfmt files=fresh threads=1 record=100 appends_per_s=200.0",
            "WAL impl=rocksdb files=fresh threads=1 record=100 appends_per_s=400.0",
            "WAL impl=logfmt files=recycled threads=1 record=100 appends_per_s=300.0",
            "WAL impl=rocksdb files=recycled threads=1 record=100 appends_per_s=300.0",
            "WAL impl=logfmt files=fresh threads=64 record=100 appends_per_s=4000.0",
            "WAL impl=rocksdb files=fresh threads=64 record=100 appends_per_s=2000.0",
        ]
        .map(str::to_owned)
        .to_vec();
        let printed = table(&lines).unwrap();
        assert!(
            printed.contains("    fresh       1        200        400   0.50x              -"),
            "{printed}"
        );
        assert!(
            printed.contains(" recycled       1        300        300   1.00x          1.50x"),
            "{printed}"
        );
        assert!(
            printed.contains("logfmt fresh: 64 threads / 1 thread = 20.0x"),
            "{printed}"
        );
        assert!(!printed.contains("baseline"), "{printed}");
        assert!(table(&["WAL impl=logfmt".to_owned()]).is_err());
    }

    #[test]
    fn the_table_compares_with_the_baseline_when_it_ran() {
        let lines: Vec<String> = [
            "WAL impl=logfmt files=fresh threads=1 record=100 appends_per_s=300.0",
            "WAL impl=baseline files=fresh threads=1 record=100 appends_per_s=200.0",
            "WAL impl=rocksdb files=fresh threads=1 record=100 appends_per_s=150.0",
        ]
        .map(str::to_owned)
        .to_vec();
        let printed = table(&lines).unwrap();
        assert!(
            printed.contains("    fresh       1        300        150   2.00x              -        200        1.50x"),
            "{printed}"
        );
    }
}
