//! The machinery of failover (Pebble's): a clock on every log file's syncs (how long the one
//! in progress has taken), a thread per file that makes it durable (its creation first, then
//! its records, so that no appending thread is stuck in a sync that stalls), and the records
//! not yet known durable (to be written again in the log's next segment when the current one
//! stalls).

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::error::LogWriterError;
use crate::group::{GroupWriter, SyncHandle};
use crate::writer::SyncWrite;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// When the sync in progress on a log began, if one is.
#[derive(Debug)]
pub(crate) struct SyncClock {
    base: Instant,
    /// Nanoseconds after `base` plus one when the sync in progress began; 0 when none is.
    started: AtomicU64,
}

impl SyncClock {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            base: Instant::now(),
            started: AtomicU64::new(0),
        })
    }

    fn begin(&self) {
        let now = u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX - 1);
        self.started.store(now + 1, Ordering::Release);
    }

    fn end(&self) {
        self.started.store(0, Ordering::Release);
    }

    /// How long the sync in progress has taken so far; `None` when none is.
    pub(crate) fn in_progress(&self) -> Option<Duration> {
        let started = self.started.load(Ordering::Acquire);
        let started = Duration::from_nanos(started.checked_sub(1)?);
        Some(self.base.elapsed().saturating_sub(started))
    }
}

/// A sync handle whose syncs are timed on a [`SyncClock`] (shared: the file's creation is
/// synced through it too).
#[derive(Debug)]
pub(crate) struct Timed<H> {
    pub(crate) inner: Arc<H>,
    pub(crate) clock: Arc<SyncClock>,
}

impl<H> Clone for Timed<H> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
            clock: Arc::clone(&self.clock),
        }
    }
}

impl<H: SyncHandle> SyncHandle for Timed<H> {
    fn sync(&self) -> io::Result<()> {
        self.clock.begin();
        let result = self.inner.sync();
        self.clock.end();
        result
    }

    fn reserve(&self, len: u64) -> io::Result<()> {
        self.inner.reserve(len)
    }
}

/// Something happened that a waiter may be waiting for: a sync ended, a log was started.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    generation: Mutex<u64>,
    changed: Condvar,
}

impl Progress {
    pub(crate) fn bump(&self) {
        *lock(&self.generation) += 1;
        self.changed.notify_all();
    }

    /// The generation now.
    pub(crate) fn now(&self) -> u64 {
        *lock(&self.generation)
    }

    /// Waits until the generation is past `seen`, or `timeout`.
    pub(crate) fn wait_past(&self, seen: u64, timeout: Duration) {
        let generation = lock(&self.generation);
        if *generation != seen {
            return;
        }
        let _ = self
            .changed
            .wait_timeout(generation, timeout)
            .unwrap_or_else(PoisonError::into_inner);
    }
}

/// Makes a new log file's creation durable: the file synced, then its directory.
pub(crate) type Creation = Box<dyn FnOnce() -> io::Result<()> + Send>;

/// The thread that makes one log file durable: its creation first, then its records, woken by
/// appends, until the file is no longer written and everything in it is synced (or it
/// failed).
#[derive(Debug, Default)]
pub(crate) struct Syncer {
    wake: Mutex<bool>,
    woken: Condvar,
    retired: AtomicBool,
    /// The file and its directory entry are durable: its records may be acknowledged.
    created: AtomicBool,
    failure: Mutex<Option<LogWriterError>>,
}

impl Syncer {
    /// Starts the thread making `creation` durable, then syncing `group`, bumping `progress`
    /// after each sync.
    pub(crate) fn spawn<W, H>(
        group: Arc<GroupWriter<W, H>>,
        progress: Arc<Progress>,
        creation: Creation,
    ) -> Arc<Self>
    where
        W: SyncWrite + Send + 'static,
        H: SyncHandle + 'static,
    {
        let syncer = Arc::new(Self::default());
        let this = Arc::clone(&syncer);
        std::thread::spawn(move || this.run(&group, &progress, creation));
        syncer
    }

    fn run<W: SyncWrite, H: SyncHandle>(
        &self,
        group: &GroupWriter<W, H>,
        progress: &Progress,
        creation: Creation,
    ) {
        if let Err(e) = creation() {
            *lock(&self.failure) = Some(LogWriterError::Failed {
                operation: crate::error::WriteOperation::Sync,
                source: Arc::new(e),
            });
            progress.bump();
            return;
        }
        self.created.store(true, Ordering::Release);
        progress.bump();
        loop {
            let target = group.position();
            if target > group.durable() {
                let synced = group.wait(target);
                if let Err(e) = synced {
                    *lock(&self.failure) = Some(e);
                    progress.bump();
                    return;
                }
                progress.bump();
                continue;
            }
            if self.retired.load(Ordering::Acquire) {
                return;
            }
            let mut wake = lock(&self.wake);
            if !*wake {
                wake = self
                    .woken
                    .wait_timeout(wake, Duration::from_millis(20))
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            *wake = false;
        }
    }

    /// There is something to sync.
    pub(crate) fn wake(&self) {
        *lock(&self.wake) = true;
        self.woken.notify_one();
    }

    /// The log is no longer written: the thread ends once everything in it is synced.
    pub(crate) fn retire(&self) {
        self.retired.store(true, Ordering::Release);
        self.wake();
    }

    /// Whether the file and its directory entry are durable.
    pub(crate) fn created(&self) -> bool {
        self.created.load(Ordering::Acquire)
    }

    /// The sync that failed, if one did.
    pub(crate) fn failure(&self) -> Option<LogWriterError> {
        lock(&self.failure).clone()
    }
}

/// A log file's records not yet known durable, with their bytes (to be written again in the
/// log's next segment if this file stalls), and the number the next record appended takes.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    /// The next record's number in the log.
    pub(crate) next: u64,
    /// (number, end in the file, bytes), in order.
    pub(crate) records: VecDeque<(u64, u64, Vec<u8>)>,
}

impl Pending {
    /// The number of the first record not durable once the file is durable up to `durable`
    /// (every record before it is).
    pub(crate) fn durable_before(&mut self, durable: u64) -> u64 {
        while self.records.front().is_some_and(|r| r.1 <= durable) {
            self.records.pop_front();
        }
        self.records.front().map_or(self.next, |r| r.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_durable_in_order() {
        let mut pending = Pending {
            next: 13,
            records: [(10, 100, vec![]), (11, 150, vec![]), (12, 200, vec![])].into(),
        };
        assert_eq!(pending.durable_before(99), 10);
        assert_eq!(pending.durable_before(150), 12);
        assert_eq!(pending.records.len(), 1);
        assert_eq!(pending.durable_before(200), 13);
    }

    #[test]
    fn the_clock_times_the_sync_in_progress() {
        let clock = SyncClock::new();
        assert_eq!(clock.in_progress(), None);
        clock.begin();
        std::thread::sleep(Duration::from_millis(2));
        assert!(
            clock
                .in_progress()
                .is_some_and(|d| d >= Duration::from_millis(2))
        );
        clock.end();
        assert_eq!(clock.in_progress(), None);
    }
}
