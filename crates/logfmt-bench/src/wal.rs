//! Durable appends to a WAL directory ([`logfmt_std::wal`]): threads appending records, each
//! append returning only once its record is durable (group commit), logs rotated every 64 MiB,
//! the log written a fresh file or a released log's file reused (RocksDB's
//! `recycle_log_file_num`).
//!
//! One line per thread count:
//! `WAL impl=logfmt files=fresh|recycled threads=N record=SIZE appends_per_s=F syncs=N appends=N seconds=F reused=0|1`
//!
//! Before each case, 64 MiB are appended (not waited for) and the log rotated, released and
//! rotated again: the log then written is a new file (fresh) or, with reuse, the first log's
//! file written again (recycled): both cases run after the same preparation. `reused` says
//! whether the log written was a reused file. A new directory per case, removed after it.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use logfmt_std::wal::{Wal, WalOptions};

/// The log size at which a new log is started.
pub const LOG_SIZE: u64 = 64 << 20;

/// What to run.
#[derive(Debug, Clone)]
pub struct WalBenchOptions {
    /// Thread counts, one case each.
    pub threads: Vec<usize>,
    /// Bytes of each record.
    pub record: usize,
    /// How long each case appends.
    pub time: Duration,
    /// Whether released logs are reused (the log written is a recycled file).
    pub recycled: bool,
}

/// One case's figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WalCase {
    /// Threads appending.
    pub threads: usize,
    /// Appends acknowledged durable.
    pub appends: u64,
    /// Syncs done.
    pub syncs: u64,
    /// Wall time of the case.
    pub seconds: f64,
    /// Whether the log written was a reused file.
    pub reused: bool,
}

impl WalCase {
    /// The case's `WAL` line.
    #[must_use]
    pub fn line(&self, record: usize, recycled: bool) -> String {
        format!(
            "WAL impl=logfmt files={} threads={} record={record} appends_per_s={:.1} syncs={} appends={} seconds={:.3} reused={}",
            if recycled { "recycled" } else { "fresh" },
            self.threads,
            self.appends as f64 / self.seconds,
            self.syncs,
            self.appends,
            self.seconds,
            u8::from(self.reused),
        )
    }
}

/// Runs every case in a directory under `dir`, reporting each line to `out`.
///
/// # Errors
/// A message if the WAL cannot be written.
pub fn run(dir: &Path, options: &WalBenchOptions, out: &mut dyn FnMut(&str)) -> Result<(), String> {
    for &threads in &options.threads {
        let case = case(dir, threads, options)?;
        out(&case.line(options.record, options.recycled));
    }
    Ok(())
}

fn case(dir: &Path, threads: usize, options: &WalBenchOptions) -> Result<WalCase, String> {
    let mode = if options.recycled {
        "recycled"
    } else {
        "fresh"
    };
    let wal_dir = dir.join(format!("logfmt-wal-{mode}-{threads}"));
    let _ = std::fs::remove_dir_all(&wal_dir);
    let wal_options = WalOptions::new()
        .create(true)
        .log_size(LOG_SIZE)
        .recycle(if options.recycled { 4 } else { 0 });
    let writer = Wal::open(&wal_dir, &wal_options)
        .and_then(Wal::start)
        .map_err(|e| e.to_string())?;
    // The same preparation in both modes: 64 MiB appended, rotated at the log size; the first
    // log released (kept for reuse, or removed); a new log (its file reused, or new).
    let big = vec![b'p'; 1 << 20];
    let first = writer.position().log;
    while writer.position().log == first {
        writer.append(&big).map_err(|e| e.to_string())?;
    }
    writer
        .release_before(writer.position())
        .map_err(|e| e.to_string())?;
    writer.rotate().map_err(|e| e.to_string())?;
    let reused = writer.kept_for_reuse().is_empty() && options.recycled;
    let before = writer.stats().syncs;
    let writer = Arc::new(writer);
    let stop = Arc::new(AtomicBool::new(false));
    let appends = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let (writer, stop, appends) =
                (Arc::clone(&writer), Arc::clone(&stop), Arc::clone(&appends));
            let record = options.record;
            std::thread::spawn(move || -> Result<(), String> {
                let data = vec![t as u8; record];
                // At least one append, however late the thread starts (a loaded machine).
                loop {
                    writer.append_durable(&data).map_err(|e| e.to_string())?;
                    appends.fetch_add(1, Ordering::Relaxed);
                    if stop.load(Ordering::Relaxed) {
                        return Ok(());
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(options.time);
    stop.store(true, Ordering::Relaxed);
    for worker in workers {
        worker
            .join()
            .map_err(|_| "a thread panicked".to_owned())??;
    }
    let seconds = started.elapsed().as_secs_f64();
    let syncs = writer.stats().syncs - before;
    let writer = Arc::into_inner(writer).ok_or("the WAL is still shared")?;
    writer.close().map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(&wal_dir);
    Ok(WalCase {
        threads,
        appends: appends.load(Ordering::Relaxed),
        syncs,
        seconds,
        reused,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_says_what_ran() {
        let case = WalCase {
            threads: 4,
            appends: 3_000,
            syncs: 1_000,
            seconds: 1.5,
            reused: true,
        };
        assert_eq!(
            case.line(100, true),
            "WAL impl=logfmt files=recycled threads=4 record=100 appends_per_s=2000.0 syncs=1000 appends=3000 seconds=1.500 reused=1"
        );
    }
}
