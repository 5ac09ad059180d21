//! Durable appends: threads appending records to one log file, each append returning only
//! once its record is durable, through logfmt's group commit ([`GroupWriter`]).
//!
//! One line per thread count:
//! `DURABLE impl=logfmt threads=N record=SIZE appends_per_s=F syncs=N appends=N seconds=F sync_ms=F`
//! (`sync_ms`: the mean time of one sync).
//! The record is `SIZE` bytes; each thread appends for the given time; a new log file in the
//! directory per case, removed after it.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use logfmt_std::{GroupPolicy, GroupWriter, LogWriter, LogWriterOptions};

/// What to run.
#[derive(Debug, Clone)]
pub struct DurableOptions {
    /// Thread counts, one case each.
    pub threads: Vec<usize>,
    /// Bytes of each record.
    pub record: usize,
    /// How long each case appends.
    pub time: Duration,
}

/// One case's figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Durable {
    /// Threads appending.
    pub threads: usize,
    /// Appends acknowledged durable.
    pub appends: u64,
    /// Syncs done.
    pub syncs: u64,
    /// Wall time of the case.
    pub seconds: f64,
    /// The mean time of one sync, in seconds.
    pub sync_seconds: f64,
}

impl Durable {
    /// The case's `DURABLE` line.
    #[must_use]
    pub fn line(&self, record: usize) -> String {
        format!(
            "DURABLE impl=logfmt threads={} record={record} appends_per_s={:.1} syncs={} appends={} seconds={:.3} sync_ms={:.3}",
            self.threads,
            self.appends as f64 / self.seconds,
            self.syncs,
            self.appends,
            self.seconds,
            self.sync_seconds * 1e3,
        )
    }
}

/// Runs every case in `dir`, reporting each line to `out`.
///
/// # Errors
/// A message if the log cannot be created or a write or sync fails.
pub fn run(dir: &Path, options: &DurableOptions, out: &mut dyn FnMut(&str)) -> Result<(), String> {
    for &threads in &options.threads {
        let case = case(dir, threads, options.record, options.time)?;
        out(&case.line(options.record));
    }
    Ok(())
}

/// `threads` threads appending durably for `time`.
fn case(dir: &Path, threads: usize, record: usize, time: Duration) -> Result<Durable, String> {
    let path = dir.join(format!("durable-{threads}.log"));
    let _ = std::fs::remove_file(&path);
    let writer = LogWriter::create(&path, &LogWriterOptions::new()).map_err(|e| e.to_string())?;
    let group = Arc::new(
        GroupWriter::from_file_writer(writer, GroupPolicy::new()).map_err(|e| e.to_string())?,
    );
    let stop = Arc::new(AtomicBool::new(false));
    let appends = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let (group, stop, appends) =
                (Arc::clone(&group), Arc::clone(&stop), Arc::clone(&appends));
            std::thread::spawn(move || -> Result<(), String> {
                let data = vec![t as u8; record];
                // At least one append, however late the thread starts (a loaded machine).
                loop {
                    group.append_durable(&data).map_err(|e| e.to_string())?;
                    appends.fetch_add(1, Ordering::Relaxed);
                    if stop.load(Ordering::Relaxed) {
                        return Ok(());
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(time);
    stop.store(true, Ordering::Relaxed);
    for worker in workers {
        worker
            .join()
            .map_err(|_| "a thread panicked".to_owned())??;
    }
    let seconds = started.elapsed().as_secs_f64();
    let stats = group.stats();
    let group = Arc::into_inner(group).ok_or("the log is still shared")?;
    group.close().map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&path);
    Ok(Durable {
        threads,
        appends: appends.load(Ordering::Relaxed),
        syncs: stats.syncs,
        seconds,
        sync_seconds: stats.sync_time.as_secs_f64() / stats.syncs.max(1) as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_run_appends_and_syncs() {
        let dir = std::env::temp_dir().join(format!("logfmt-bench-durable-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let options = DurableOptions {
            threads: vec![1, 4],
            record: 100,
            time: Duration::from_millis(50),
        };
        let mut lines = Vec::new();
        run(&dir, &options, &mut |l| lines.push(l.to_owned())).unwrap();
        assert_eq!(lines.len(), 2);
        for line in &lines {
            assert!(line.starts_with("DURABLE impl=logfmt threads="), "{line}");
            let syncs: u64 = line
                .split_whitespace()
                .find_map(|w| w.strip_prefix("syncs="))
                .and_then(|v| v.parse().ok())
                .unwrap();
            assert!(syncs > 0, "{line}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
