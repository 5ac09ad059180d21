//! The machinery of failover (Pebble's): a clock on every log's syncs (how long the one in
//! progress has taken), a thread per log that syncs it (so that no appending thread is stuck
//! in a sync that stalls), the records not yet known durable (to be written again in the next
//! log when the current one is cut short), and where such records went.

use std::collections::{BTreeMap, VecDeque};
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

/// A sync handle whose syncs are timed on a [`SyncClock`].
#[derive(Debug)]
pub(crate) struct Timed<H> {
    pub(crate) inner: H,
    pub(crate) clock: Arc<SyncClock>,
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

/// The thread that syncs one log, woken by appends, until the log is no longer written and
/// everything in it is synced (or its writer failed).
#[derive(Debug, Default)]
pub(crate) struct Syncer {
    wake: Mutex<bool>,
    woken: Condvar,
    retired: AtomicBool,
    failure: Mutex<Option<LogWriterError>>,
}

impl Syncer {
    /// Starts the thread syncing `group`, bumping `progress` after each sync.
    pub(crate) fn spawn<W, H>(group: Arc<GroupWriter<W, H>>, progress: Arc<Progress>) -> Arc<Self>
    where
        W: SyncWrite + Send + 'static,
        H: SyncHandle + 'static,
    {
        let syncer = Arc::new(Self::default());
        let this = Arc::clone(&syncer);
        std::thread::spawn(move || this.run(&group, &progress));
        syncer
    }

    fn run<W: SyncWrite, H: SyncHandle>(&self, group: &GroupWriter<W, H>, progress: &Progress) {
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

    /// The sync that failed, if one did.
    pub(crate) fn failure(&self) -> Option<LogWriterError> {
        lock(&self.failure).clone()
    }
}

/// Where the records of a log cut short went: every record ending after `cut` was written
/// again in log `to`, where it is given by `moved` (old end, new offset, new end), in order.
#[derive(Debug, Clone)]
pub(crate) struct Redirect {
    pub(crate) cut: u64,
    pub(crate) to: u64,
    pub(crate) moved: Vec<(u64, u64, u64)>,
}

/// Follows a record — its log, offset and end — through the logs it was written again in.
pub(crate) fn resolve(
    redirects: &BTreeMap<u64, Redirect>,
    mut at: (u64, u64, u64),
) -> (u64, u64, u64) {
    while let Some(redirect) = redirects.get(&at.0) {
        if at.2 <= redirect.cut {
            break;
        }
        match redirect
            .moved
            .binary_search_by_key(&at.2, |&(old, _, _)| old)
        {
            Ok(i) => {
                let (_, offset, end) = redirect.moved[i];
                at = (redirect.to, offset, end);
            }
            // Not a record's end: the cut's own log then (never reached for a ticket).
            Err(_) => break,
        }
    }
    at
}

/// The current log's records not yet known durable, as (end, bytes), in order.
pub(crate) type Unsynced = VecDeque<(u64, Vec<u8>)>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickets_follow_their_records() {
        let mut redirects = BTreeMap::new();
        let moved = vec![(150, 0, 40), (200, 40, 90)];
        redirects.insert(
            3,
            Redirect {
                cut: 100,
                to: 4,
                moved,
            },
        );
        let moved = vec![(90, 0, 50)];
        redirects.insert(
            4,
            Redirect {
                cut: 40,
                to: 5,
                moved,
            },
        );
        assert_eq!(resolve(&redirects, (3, 80, 100)), (3, 80, 100));
        assert_eq!(resolve(&redirects, (3, 100, 150)), (4, 0, 40));
        assert_eq!(resolve(&redirects, (3, 150, 200)), (5, 0, 50));
        assert_eq!(resolve(&redirects, (2, 900, 999)), (2, 900, 999));
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
