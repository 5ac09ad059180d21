//! [`GroupWriter`]: one log shared by many threads, with group commit. Any thread appends a
//! record and gets its end offset in the log (its ticket); a thread that needs the record
//! durable waits for it, and one `fdatasync` makes every record up to the durable watermark
//! durable at once.

use std::fs::File;
use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use logfmt_core::Written;

use crate::error::{LogWriterError, WriteOperation};
use crate::writer::{LogWriter, SyncWrite};

/// Makes the bytes written to a destination durable from any thread, apart from the writer
/// that wrote them: for a file, a second handle on it (`fdatasync` on any handle of a file
/// syncs the file).
pub trait SyncHandle: Send + Sync {
    /// Makes every byte written to the destination so far durable.
    ///
    /// # Errors
    /// Whatever the operating system reports: the state of the data on disk is then unknown.
    fn sync(&self) -> io::Result<()>;

    /// Reserves room for the destination to grow to `len` bytes without changing its length,
    /// where that makes syncs cheaper (a file's blocks allocated ahead of its end). By default
    /// nothing.
    ///
    /// # Errors
    /// Whatever the operating system reports; the group writer goes on without the room.
    fn reserve(&self, len: u64) -> io::Result<()> {
        let _ = len;
        Ok(())
    }
}

impl SyncHandle for File {
    fn sync(&self) -> io::Result<()> {
        self.sync_data()
    }

    /// `fallocate` with `FALLOC_FL_KEEP_SIZE` on Linux (the file's length stays: readers see
    /// only the log), as RocksDB preallocates its WAL; nothing elsewhere.
    fn reserve(&self, len: u64) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::{FallocateFlags, fallocate};
            fallocate(self, FallocateFlags::KEEP_SIZE, 0, len).map_err(io::Error::from)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = len;
            Ok(())
        }
    }
}

/// How far ahead of the log's end a group writer reserves room ([`SyncHandle::reserve`]).
const RESERVE: u64 = 4 << 20;

/// When a group commit's leader syncs: at once by default (batches then form while a sync is
/// in progress), or after waiting up to `max_delay` for more records, unless `max_bytes` or
/// `max_records` wait to be synced already.
///
/// ```
/// use std::time::Duration;
/// use logfmt_std::GroupPolicy;
///
/// let policy = GroupPolicy::new().max_delay(Duration::from_micros(200)).max_records(64);
/// assert_eq!(policy.max_records, 64);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct GroupPolicy {
    /// How long a leader waits for more records before it syncs. Default zero.
    pub max_delay: Duration,
    /// A leader stops waiting once this many bytes wait to be synced. Default 1 MiB.
    pub max_bytes: u64,
    /// A leader stops waiting once this many records wait to be synced. Default 1024.
    pub max_records: u64,
}

impl Default for GroupPolicy {
    fn default() -> Self {
        Self::new()
    }
}

impl GroupPolicy {
    /// The defaults: sync at once.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            max_delay: Duration::ZERO,
            max_bytes: 1 << 20,
            max_records: 1024,
        }
    }

    /// With this delay.
    #[must_use]
    pub const fn max_delay(mut self, delay: Duration) -> Self {
        self.max_delay = delay;
        self
    }

    /// With this bound on the bytes a leader waits for.
    #[must_use]
    pub const fn max_bytes(mut self, bytes: u64) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// With this bound on the records a leader waits for.
    #[must_use]
    pub const fn max_records(mut self, records: u64) -> Self {
        self.max_records = records;
        self
    }
}

/// What a [`GroupWriter`] did so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct GroupStats {
    /// Records appended.
    pub records: u64,
    /// Syncs done.
    pub syncs: u64,
    /// Records made durable by syncs.
    pub synced_records: u64,
    /// The most records one sync made durable.
    pub largest_batch: u64,
    /// Time spent syncing, in all.
    pub sync_time: Duration,
    /// The longest sync.
    pub slowest_sync: Duration,
}

impl GroupStats {
    /// Records a sync made durable, on average.
    #[must_use]
    pub fn mean_batch(&self) -> f64 {
        if self.syncs == 0 {
            return 0.0;
        }
        self.synced_records as f64 / self.syncs as f64
    }
}

/// What the lock guards.
#[derive(Debug)]
struct State<W: SyncWrite> {
    writer: LogWriter<W>,
    /// The durable watermark: every byte of the log before it is durable.
    durable: u64,
    /// A leader is syncing.
    syncing: bool,
    /// A leader waits for more records ([`GroupPolicy::max_delay`]): appends wake it.
    gathering: bool,
    /// Syncs begun: sync `n` wakes the threads waiting on `synced[n % 2]`.
    generation: u64,
    /// The log's length the sync in progress makes durable (`u64::MAX` while its leader
    /// gathers records: everything appended before its write).
    sync_target: u64,
    /// Threads waiting on each of [`GroupWriter::synced`].
    waiters: [u32; 2],
    /// The length up to which the destination has room reserved (`None`: reserving failed,
    /// and is not tried again).
    reserved: Option<u64>,
    /// Records appended since the last sync began.
    unsynced_records: u64,
    failure: Option<(WriteOperation, Arc<io::Error>)>,
    stats: GroupStats,
}

impl<W: SyncWrite> State<W> {
    /// The writer's refusal once it failed.
    fn refusal(&self) -> Option<LogWriterError> {
        let (operation, source) = self.failure.clone()?;
        Some(LogWriterError::Poisoned { operation, source })
    }

    /// Notes a failure of the writer (the first one sticks).
    fn fail(&mut self, error: &LogWriterError) {
        if let LogWriterError::Failed { operation, source }
        | LogWriterError::Poisoned { operation, source } = error
        {
            self.failure
                .get_or_insert_with(|| (*operation, Arc::clone(source)));
        }
    }
}

/// A log shared by many threads (`Send + Sync`), with group commit.
///
/// How it works: appending takes a lock for as long as it takes to lay the record out in the
/// writer's block buffer (a copy; a full block goes to the operating system in one write), so
/// the log's bytes are exactly those of sequential [`LogWriter::add_record`] calls in ticket
/// order. A thread that waits for a ticket not yet durable either finds a sync in progress and
/// waits for it, or becomes the leader: it hands the buffered bytes to the operating system,
/// notes the log's length, and syncs *without the lock*, through a second handle on the same
/// file ([`SyncHandle`]), while other threads go on appending; the next leader takes all of
/// them in its sync. A failed write or sync fails every waiter with the original error and
/// poisons the writer, as [`LogWriter`] does.
///
/// ```
/// use std::sync::Arc;
/// use logfmt_std::{GroupPolicy, GroupWriter, advanced::LogReader, LogWriter, LogReaderOptions, LogWriterOptions};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("000001.log");
/// let writer = LogWriter::create(&path, &LogWriterOptions::new())?;
/// let log = Arc::new(GroupWriter::from_file_writer(writer, GroupPolicy::new())?);
/// let threads: Vec<_> = (0..4u8)
///     .map(|t| {
///         let log = Arc::clone(&log);
///         std::thread::spawn(move || log.append_durable(&[t; 100]))
///     })
///     .collect();
/// for thread in threads {
///     thread.join().unwrap()?; // each record durable when its append returns
/// }
/// let log = Arc::into_inner(log).unwrap();
/// assert!(log.stats().syncs <= 4);
/// log.close()?;
/// let bytes = std::fs::read(&path)?;
/// let mut reader = LogReader::from_slice(&bytes, &LogReaderOptions::new());
/// let mut records = 0;
/// while reader.next()?.is_some() {
///     records += 1;
/// }
/// assert_eq!(records, 4);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct GroupWriter<W: SyncWrite, S: SyncHandle = File> {
    state: Mutex<State<W>>,
    /// A sync ended, or the writer failed: `synced[n % 2]` for the threads sync `n` makes
    /// durable, the other for those that wait for the next sync. Waking only the threads a
    /// sync finished (and one of the rest, to lead the next) spares the others a wake-up
    /// that finds their record not yet durable.
    synced: [Condvar; 2],
    /// A record was appended (a waiting leader counts them).
    appended: Condvar,
    handle: S,
    policy: GroupPolicy,
}

impl GroupWriter<File, File> {
    /// Shares `writer` (a log file opened by any of [`LogWriter`]'s file constructors, which
    /// hold the log's writer lock) among threads, syncing through a second handle on its
    /// file. Give it [`SyncPolicy::Manual`](crate::SyncPolicy::Manual) (the default): the
    /// group writer decides when to sync.
    ///
    /// # Errors
    /// If the file handle cannot be duplicated, or the writer failed earlier.
    pub fn from_file_writer(writer: LogWriter<File>, policy: GroupPolicy) -> io::Result<Self> {
        let handle = writer
            .get_ref()
            .ok_or_else(|| io::Error::other("the log writer failed earlier"))?
            .try_clone()?;
        Ok(Self::new(writer, handle, policy))
    }
}

impl<W: SyncWrite, S: SyncHandle> GroupWriter<W, S> {
    /// Shares `writer` among threads; `handle` syncs its destination.
    pub fn new(writer: LogWriter<W>, handle: S, policy: GroupPolicy) -> Self {
        let durable = writer.position() - writer.unsynced();
        Self {
            state: Mutex::new(State {
                writer,
                durable,
                syncing: false,
                gathering: false,
                generation: 0,
                sync_target: 0,
                waiters: [0; 2],
                reserved: Some(0),
                unsynced_records: 0,
                failure: None,
                stats: GroupStats::default(),
            }),
            synced: [Condvar::new(), Condvar::new()],
            appended: Condvar::new(),
            handle,
            policy,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<W>> {
        // Nothing here panics while holding the lock; if a caller's thread did, the state is
        // still whole (every change to it is made at once).
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wakes every waiting thread: the writer failed.
    fn wake_all(&self) {
        for synced in &self.synced {
            synced.notify_all();
        }
    }

    /// Waits on `synced[slot]` until woken (or spuriously).
    fn sleep<'a>(
        &'a self,
        mut state: MutexGuard<'a, State<W>>,
        slot: usize,
    ) -> MutexGuard<'a, State<W>> {
        state.waiters[slot] += 1;
        let mut state = self.synced[slot]
            .wait(state)
            .unwrap_or_else(PoisonError::into_inner);
        state.waiters[slot] -= 1;
        state
    }

    /// Appends one record; returns where it is in the log. Its `end` is the ticket to
    /// [`wait`](Self::wait) for.
    ///
    /// # Errors
    /// As [`LogWriter::add_record`]; after any failure, [`LogWriterError::Poisoned`] with the
    /// original error.
    pub fn append(&self, data: &[u8]) -> Result<Written, LogWriterError> {
        let mut state = self.lock();
        if let Some(refusal) = state.refusal() {
            return Err(refusal);
        }
        let written = state.writer.add_record(data).inspect_err(|e| {
            state.fail(e);
            self.wake_all();
        })?;
        state.unsynced_records += 1;
        state.stats.records += 1;
        // Waking costs a system call: only a gathering leader listens.
        let gathering = state.gathering;
        drop(state);
        if gathering {
            self.appended.notify_one();
        }
        Ok(written)
    }

    /// Appends one record and waits until it is durable.
    ///
    /// # Errors
    /// As [`append`](Self::append) and [`wait`](Self::wait).
    pub fn append_durable(&self, data: &[u8]) -> Result<Written, LogWriterError> {
        let written = self.append(data)?;
        self.wait(written.end)?;
        Ok(written)
    }

    /// Waits until the log is durable up to `ticket` (a record's `end`): at once if it is,
    /// else until a sync in progress or one this thread leads makes it so.
    ///
    /// # Errors
    /// The write or sync that failed ([`LogWriterError::Failed`] for the thread that did it,
    /// [`LogWriterError::Poisoned`] for the others), if the log is not durable up to `ticket`.
    pub fn wait(&self, ticket: u64) -> Result<(), LogWriterError> {
        let mut state = self.lock();
        loop {
            if state.durable >= ticket {
                return Ok(());
            }
            if let Some(refusal) = state.refusal() {
                return Err(refusal);
            }
            if state.syncing {
                // The sync in progress makes this ticket durable, or the next one will.
                let next = u64::from(ticket > state.sync_target);
                let slot = ((state.generation + next) % 2) as usize;
                state = self.sleep(state, slot);
                continue;
            }
            state.syncing = true;
            state.generation += 1;
            state.sync_target = u64::MAX;
            let slot = (state.generation % 2) as usize;
            state = self.gather(state);
            let flushed = state.writer.flush();
            if let Err(e) = flushed {
                state.fail(&e);
                state.syncing = false;
                self.wake_all();
                return Err(e);
            }
            let target = state.writer.position();
            state.sync_target = target;
            let batch = std::mem::take(&mut state.unsynced_records);
            let reserve = state
                .reserved
                .filter(|&r| r < target)
                .map(|_| target + RESERVE);
            drop(state);
            // Room ahead, reserved by the leader (outside the lock): a best effort.
            let reserved = reserve.map(|len| self.handle.reserve(len).ok().map(|()| len));
            let started = Instant::now();
            let result = self.handle.sync();
            let took = started.elapsed();
            state = self.lock();
            state.syncing = false;
            if let Some(reserved) = reserved {
                state.reserved = reserved;
            }
            if let Err(e) = result {
                let source = Arc::new(e);
                state
                    .failure
                    .get_or_insert_with(|| (WriteOperation::Sync, Arc::clone(&source)));
                self.wake_all();
                return Err(LogWriterError::Failed {
                    operation: WriteOperation::Sync,
                    source,
                });
            }
            state.durable = state.durable.max(target);
            let stats = &mut state.stats;
            stats.syncs += 1;
            stats.synced_records += batch;
            stats.largest_batch = stats.largest_batch.max(batch);
            stats.sync_time += took;
            stats.slowest_sync = stats.slowest_sync.max(took);
            // Every thread this sync waited for is done; one of those waiting for the next
            // sync leads it.
            if state.waiters[slot] > 0 {
                self.synced[slot].notify_all();
            }
            if state.waiters[1 - slot] > 0 {
                self.synced[1 - slot].notify_one();
            }
        }
    }

    /// A leader waits for more records, as the policy allows.
    fn gather<'a>(&'a self, mut state: MutexGuard<'a, State<W>>) -> MutexGuard<'a, State<W>> {
        let policy = self.policy;
        if policy.max_delay.is_zero() {
            return state;
        }
        let deadline = Instant::now() + policy.max_delay;
        loop {
            let bytes = state.writer.position().saturating_sub(state.durable);
            if bytes >= policy.max_bytes || state.unsynced_records >= policy.max_records {
                return state;
            }
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return state;
            };
            state.gathering = true;
            state = match self.appended.wait_timeout(state, left) {
                Ok((state, _)) => state,
                Err(poisoned) => poisoned.into_inner().0,
            };
            state.gathering = false;
        }
    }

    /// The durable watermark: every record whose `end` is at most this is durable.
    pub fn durable(&self) -> u64 {
        self.lock().durable
    }

    /// The log's length: every byte laid out so far.
    pub fn position(&self) -> u64 {
        self.lock().writer.position()
    }

    /// What the writer did so far.
    pub fn stats(&self) -> GroupStats {
        self.lock().stats
    }

    /// Makes everything appended durable, and gives the destination back.
    ///
    /// # Errors
    /// As [`wait`](Self::wait).
    pub fn close(self) -> Result<W, LogWriterError> {
        let end = self.position();
        self.wait(end)?;
        let state = self
            .state
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(refusal) = state.refusal() {
            return Err(refusal);
        }
        state.writer.close()
    }
}

#[cfg(test)]
mod tests;
