//! [`WalWriter`]: appends to a WAL directory's current log with group commit, starts new logs
//! (rotation), releases old ones (removed, or kept for reuse), and fails over to a second
//! directory when a sync stalls (the log going on in a new segment there).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use logfmt_core::{Format, WriteOptions};

use crate::file::recyclable_log_number;
use crate::group::{GroupStats, GroupWriter, SyncHandle};
use crate::writer::{LogWriter, LogWriterOptions};

use super::error::{WalError, WalOperation};
use super::failover::{Creation, Pending, Progress, SyncClock, Syncer, Timed};
use super::names;
use super::options::WalOptions;
use super::storage::Storage;
use super::{Wal, WalPosition, WalTicket};

type Group<S> = GroupWriter<<S as Storage>::File, Timed<<S as Storage>::Handle>>;

/// The primary directory's index in [`WalWriter::dirs`].
const PRIMARY: usize = 0;

/// The log file appended to.
#[derive(Debug)]
struct Active<S: Storage> {
    number: u64,
    /// Its segment of the log (0: the log's first file).
    segment: u32,
    /// Its directory (an index in [`WalWriter::dirs`]).
    dir: usize,
    /// The number of its first record in the log.
    first: u64,
    group: Arc<Group<S>>,
    clock: Arc<SyncClock>,
    /// With failover: the thread that makes it durable.
    syncer: Option<Arc<Syncer>>,
    /// With failover: its records not yet known durable.
    pending: Mutex<Pending>,
}

impl<S: Storage> Active<S> {
    /// With failover: the number of the log's first record not known durable (every record
    /// before it is, in this file or an earlier segment).
    fn durable_before(&self) -> u64 {
        if self.syncer.as_ref().is_some_and(|s| !s.created()) {
            return self.first;
        }
        lock(&self.pending).durable_before(self.group.durable())
    }

    fn position(&self) -> WalPosition {
        WalPosition::in_segment(self.number, self.segment, self.group.position())
    }
}

/// A live log's file.
#[derive(Debug, Clone)]
struct LiveFile {
    path: PathBuf,
    /// Written by this writer in the recyclable format as a log's first file in the primary
    /// directory: it may be reused once released.
    recyclable: bool,
    /// A released log's file written again: its earlier use's bytes follow the new ones.
    reused: bool,
}

/// The directory's logs, as the writer keeps them.
#[derive(Debug)]
struct Logs {
    /// Every live log's files, in segment order.
    live: BTreeMap<u64, Vec<LiveFile>>,
    /// Released logs kept for reuse, oldest first.
    recycle: Vec<u64>,
    /// The next log's number.
    next: u64,
    /// Groups' statistics of the files written before the current one.
    earlier: GroupStats,
}

/// With failover: what is kept to go on in the other directory.
#[derive(Debug)]
struct FailoverState {
    threshold: Duration,
    /// A sync ended or a file was created.
    progress: Arc<Progress>,
    /// While writing to the secondary: the clock of the primary's last file, whose stalled
    /// sync ending says the primary answers again.
    primary: Mutex<Option<Arc<SyncClock>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn read<T>(rw: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    rw.read().unwrap_or_else(PoisonError::into_inner)
}

fn write<T>(rw: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    rw.write().unwrap_or_else(PoisonError::into_inner)
}

/// Writes a WAL directory, shared by any number of threads (`Send + Sync`): made by
/// [`Wal::start`].
///
/// - [`append`](Self::append) lays a record out in the current log and returns its
///   [`WalTicket`]; [`wait`](Self::wait) returns once it is durable, with one sync for every
///   record waiting ([`GroupWriter`]'s group commit); [`append_durable`](Self::append_durable)
///   does both.
/// - A new log is started when the current one reaches
///   [`WalOptions::log_size`](super::WalOptions::log_size), or by [`rotate`](Self::rotate):
///   the current log is synced whole, the new one created (or a released one reused), the
///   file synced, and then its directory entry synced, before any record in it is
///   acknowledged.
/// - [`release_before`](Self::release_before) removes every log wholly before a position
///   (or keeps it for reuse) and syncs the directory.
/// - With [`WalOptions::failover`](super::WalOptions::failover), as Pebble does: when a sync
///   of the current log file has taken longer than the threshold, the log goes on in a new
///   file (its next segment, `NNNNNN-SSS-FIRST.log`) in the other directory, where every
///   record not yet durable is written again, the file's name saying which record of the log
///   it starts at; [`wait`](Self::wait) follows a ticket there. Once the stalled sync ends,
///   the log goes on in a new segment in the primary directory again. Recovery reads a log's
///   segments in turn from both directories, a record written in two of them yielded once:
///   every acknowledged record once, in order.
///
/// ```
/// use std::sync::Arc;
/// use logfmt_std::wal::{Wal, WalOptions};
///
/// let dir = tempfile::tempdir()?;
/// let options = WalOptions::new().create(true).log_size(64 << 10);
/// let writer = Arc::new(Wal::open(dir.path(), &options)?.start()?);
/// let threads: Vec<_> = (0..4u8)
///     .map(|t| {
///         let writer = Arc::clone(&writer);
///         std::thread::spawn(move || -> Result<(), logfmt_std::wal::WalError> {
///             for _ in 0..500 {
///                 writer.append_durable(&[t; 100])?;
///             }
///             Ok(())
///         })
///     })
///     .collect();
/// for thread in threads {
///     thread.join().unwrap()?;
/// }
/// assert!(writer.logs().len() > 1); // 2 000 records of 107 bytes: a new log every 64 KiB
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct WalWriter<S: Storage = super::OsStorage> {
    place: Place<S>,
    active: RwLock<Active<S>>,
    logs: Mutex<Logs>,
    failover: Option<FailoverState>,
    /// Why the last rotation at [`WalOptions::log_size`] failed, if it did (appends go on to
    /// the current log, and the next append tries again).
    rotation_failure: Mutex<Option<Arc<WalError>>>,
    _lock: S::Lock,
}

impl<S: Storage> WalWriter<S> {
    /// Starts writing the recovered `wal` (see [`Wal::start`]).
    pub(crate) fn start(wal: Wal<S>) -> Result<Self, WalError> {
        let Wal {
            storage,
            dir,
            options,
            lock: dir_lock,
            recycle,
            files,
            remains,
            ..
        } = wal;
        let storage = Arc::new(storage);
        let mut live: BTreeMap<u64, Vec<LiveFile>> = BTreeMap::new();
        for file in files {
            live.entry(file.number).or_default().push(LiveFile {
                path: file.path,
                recyclable: false,
                reused: false,
            });
        }
        let last = live
            .keys()
            .chain(&recycle)
            .chain(remains.iter().map(|(n, _)| n))
            .copied()
            .max()
            .unwrap_or(0);
        // The remains of a release a crash cut short.
        let mut touched = Vec::new();
        for (_, path) in &remains {
            storage
                .remove(path)
                .map_err(|e| WalError::io(WalOperation::Remove, path, e))?;
            let parent = parent(path);
            if !touched.contains(&parent) {
                touched.push(parent);
            }
        }
        let reuse = if options.failover.is_some() {
            0
        } else {
            options.recycle
        };
        let mut logs = Logs {
            live,
            recycle,
            next: last + 1,
            earlier: GroupStats::default(),
        };
        if reuse == 0 && !logs.recycle.is_empty() {
            // Kept for reuse by an earlier writer that reused logs; this one does not.
            for number in std::mem::take(&mut logs.recycle) {
                let path = names::recycle_path(&dir, number);
                storage
                    .remove(&path)
                    .map_err(|e| WalError::io(WalOperation::Remove, &path, e))?;
            }
            if !touched.contains(&dir) {
                touched.push(dir.clone());
            }
        }
        for each in &touched {
            sync_dir(&*storage, each)?;
        }
        let dirs: Vec<PathBuf> = std::iter::once(dir)
            .chain(options.failover.as_ref().map(|f| f.secondary.clone()))
            .collect();
        let failover = options.failover.as_ref().map(|f| FailoverState {
            threshold: f.threshold,
            progress: Arc::default(),
            primary: Mutex::default(),
        });
        let place = Place {
            storage,
            dirs,
            options,
            recycle: reuse,
            progress: failover.as_ref().map(|f| Arc::clone(&f.progress)),
        };
        let number = logs.next;
        let first = place.new_file(&mut logs, number, 0, 0, PRIMARY)?;
        Ok(Self {
            place,
            active: RwLock::new(first),
            logs: Mutex::new(logs),
            failover,
            rotation_failure: Mutex::new(None),
            _lock: dir_lock,
        })
    }

    /// Appends one record to the current log; returns its ticket. Starts a new log after it
    /// if the current one reached [`WalOptions::log_size`](super::WalOptions::log_size).
    ///
    /// # Errors
    /// [`WalError::Write`]: the current log's writer failed (now or earlier).
    pub fn append(&self, data: &[u8]) -> Result<WalTicket, WalError> {
        let (ticket, full) = {
            let active = read(&self.active);
            let failed = |source| WalError::Write {
                log: active.number,
                source,
            };
            let (written, record) = match &self.failover {
                None => (active.group.append(data).map_err(failed)?, 0),
                Some(_) => {
                    // In record order, with its bytes: to be written again after a failover.
                    let mut pending = lock(&active.pending);
                    let written = active.group.append(data).map_err(failed)?;
                    let record = pending.next;
                    pending.next += 1;
                    pending
                        .records
                        .push_back((record, written.end, data.to_vec()));
                    (written, record)
                }
            };
            if let Some(syncer) = &active.syncer {
                syncer.wake();
            }
            let ticket = WalTicket {
                position: WalPosition::in_segment(active.number, active.segment, written.offset),
                end: written.end,
                record,
            };
            (ticket, written.end >= self.place.options.log_size)
        };
        if full {
            let rotated = self.rotate_from(Some(ticket.position.log));
            *lock(&self.rotation_failure) = rotated.err().map(Arc::new);
        }
        Ok(ticket)
    }

    /// Waits until the record of `ticket` is durable (and every record before it).
    ///
    /// # Errors
    /// [`WalError::Write`]: the sync failed.
    pub fn wait(&self, ticket: WalTicket) -> Result<(), WalError> {
        let Some(failover) = &self.failover else {
            let group = {
                let active = read(&self.active);
                if ticket.position.log < active.number {
                    // Its log was synced whole before the next one was started.
                    return Ok(());
                }
                Arc::clone(&active.group)
            };
            return group.wait(ticket.end).map_err(|source| WalError::Write {
                log: ticket.position.log,
                source,
            });
        };
        loop {
            let seen = failover.progress.now();
            let (number, segment, dir, durable_before, failure, stalled) = {
                let active = read(&self.active);
                if ticket.position.log < active.number {
                    // Its log was durable whole before the next one was started.
                    return Ok(());
                }
                if let Some(syncer) = &active.syncer {
                    syncer.wake();
                }
                (
                    active.number,
                    active.segment,
                    active.dir,
                    active.durable_before(),
                    active.syncer.as_ref().and_then(|s| s.failure()),
                    active.clock.in_progress(),
                )
            };
            if ticket.record < durable_before {
                self.maybe_fail_back(number, segment, dir);
                return Ok(());
            }
            if let Some(source) = failure {
                return Err(WalError::Write {
                    log: number,
                    source,
                });
            }
            if stalled.is_some_and(|took| took > failover.threshold) {
                // The disk stalls: the log goes on in the other directory.
                let mut logs = lock(&self.logs);
                let mut active = write(&self.active);
                if (active.number, active.segment) == (number, segment) {
                    self.switch(&mut logs, &mut active, 1 - dir)?;
                }
                continue;
            }
            failover.progress.wait_past(seen, poll(failover.threshold));
        }
    }

    /// Writing to the secondary directory, and the primary's stalled sync ended: the log goes
    /// on in the primary directory again.
    fn maybe_fail_back(&self, number: u64, segment: u32, dir: usize) {
        let Some(failover) = &self.failover else {
            return;
        };
        if dir == PRIMARY {
            return;
        }
        let answers = lock(&failover.primary)
            .as_ref()
            .is_none_or(|clock| clock.in_progress().is_none());
        if answers {
            let mut logs = lock(&self.logs);
            let mut active = write(&self.active);
            if (active.number, active.segment) == (number, segment) {
                // A failure leaves the secondary in use; the next wait tries again.
                let _ = self.switch(&mut logs, &mut active, PRIMARY);
            }
        }
    }

    /// Goes on with the current log in a new segment in directory `to`: every record not yet
    /// known durable written again there.
    fn switch(&self, logs: &mut Logs, active: &mut Active<S>, to: usize) -> Result<(), WalError> {
        let Some(failover) = &self.failover else {
            return Ok(());
        };
        let first = active.durable_before();
        let next = self
            .place
            .new_file(logs, active.number, active.segment + 1, first, to)?;
        {
            let mut pending = lock(&active.pending);
            let mut moved = lock(&next.pending);
            moved.next = pending.next;
            for (record, _, data) in std::mem::take(&mut pending.records) {
                if record < first {
                    continue;
                }
                let written = next.group.append(&data).map_err(|source| WalError::Write {
                    log: next.number,
                    source,
                })?;
                moved.records.push_back((record, written.end, data));
            }
        }
        if active.dir == PRIMARY && to != PRIMARY {
            *lock(&failover.primary) = Some(Arc::clone(&active.clock));
        }
        self.retire(logs, active, next);
        Ok(())
    }

    /// Makes `next` the file appended to, `active` done with.
    fn retire(&self, logs: &mut Logs, active: &mut Active<S>, next: Active<S>) {
        let old = std::mem::replace(active, next);
        add_stats(&mut logs.earlier, &old.group.stats());
        if let Some(syncer) = &old.syncer {
            syncer.retire();
        }
        if let Some(syncer) = &active.syncer {
            syncer.wake();
        }
        if let Some(failover) = &self.failover {
            failover.progress.bump();
        }
    }

    /// Appends one record and waits until it is durable.
    ///
    /// # Errors
    /// As [`append`](Self::append) and [`wait`](Self::wait).
    pub fn append_durable(&self, data: &[u8]) -> Result<WalTicket, WalError> {
        let ticket = self.append(data)?;
        self.wait(ticket)?;
        Ok(ticket)
    }

    /// Starts a new log now (as RocksDB does at a memtable switch); returns its number.
    ///
    /// # Errors
    /// [`WalError::Write`] if the current log cannot be synced; [`WalError::Io`] if the new
    /// one cannot be created: appends then go on to the current log.
    pub fn rotate(&self) -> Result<u64, WalError> {
        self.rotate_from(None)
            .map(|number| number.unwrap_or_default())
    }

    /// Starts a new log, unless `from` is given and is no longer the current log.
    fn rotate_from(&self, from: Option<u64>) -> Result<Option<u64>, WalError> {
        let mut logs = lock(&self.logs);
        let mut active = write(&self.active);
        if from.is_some_and(|from| from != active.number) {
            return Ok(None);
        }
        // Every record of the current log durable before the next log takes any.
        self.seal(&mut logs, &mut active)?;
        let reused = logs
            .live
            .get(&active.number)
            .and_then(|files| files.last())
            .filter(|f| f.reused)
            .map(|f| f.path.clone());
        if let Some(path) = reused {
            end_reused_log(
                &*self.place.storage,
                &path,
                active.number,
                active.group.position(),
            )?;
        }
        let number = logs.next;
        let next = self.place.new_file(&mut logs, number, 0, 0, active.dir)?;
        self.retire(&mut logs, &mut active, next);
        Ok(Some(number))
    }

    /// Makes every record of the current log durable; with failover, going on in a new
    /// segment in the other directory while a sync stalls.
    fn seal(&self, logs: &mut Logs, active: &mut Active<S>) -> Result<(), WalError> {
        let Some(failover) = &self.failover else {
            let end = active.group.position();
            return active.group.wait(end).map_err(|source| WalError::Write {
                log: active.number,
                source,
            });
        };
        loop {
            let seen = failover.progress.now();
            if active.durable_before() >= lock(&active.pending).next {
                return Ok(());
            }
            if let Some(source) = active.syncer.as_ref().and_then(|s| s.failure()) {
                return Err(WalError::Write {
                    log: active.number,
                    source,
                });
            }
            if active
                .clock
                .in_progress()
                .is_some_and(|took| took > failover.threshold)
            {
                let to = 1 - active.dir;
                self.switch(logs, active, to)?;
                continue;
            }
            if let Some(syncer) = &active.syncer {
                syncer.wake();
            }
            failover.progress.wait_past(seen, poll(failover.threshold));
        }
    }

    /// Releases every log wholly before `position` — every log numbered below
    /// `position.log`, never the current one — and syncs the directory; returns how many.
    /// A released log is removed, or, with [`WalOptions::recycle`](super::WalOptions::recycle),
    /// kept (renamed `NNNNNN.recycle`) to be written again as a later log. Once this returns,
    /// a crash does not bring any of them back.
    ///
    /// # Errors
    /// [`WalError::Io`]: the logs before the one that failed are released, once the
    /// directory is synced by a later call.
    pub fn release_before(&self, position: WalPosition) -> Result<usize, WalError> {
        let mut logs = lock(&self.logs);
        let current = read(&self.active).number;
        let doomed: Vec<u64> = logs
            .live
            .range(..position.log.min(current))
            .map(|(&number, _)| number)
            .collect();
        // In log order and, within a log, first file first, each directory synced before a
        // file of the other one is removed: a crash leaves the released logs' newest gone
        // only with every older one, and a log in part only without its beginning (which
        // recovery takes for a release cut short).
        let mut unsynced: Option<PathBuf> = None;
        for &number in &doomed {
            let mut files = logs.live.remove(&number).unwrap_or_default();
            while let Some(file) = files.first().cloned() {
                let dir = parent(&file.path);
                if let Some(before) = unsynced.take_if(|before| *before != dir)
                    && let Err(e) = sync_dir(&*self.place.storage, &before)
                {
                    logs.live.insert(number, files);
                    return Err(e);
                }
                let done = if file.recyclable && logs.recycle.len() < self.place.recycle {
                    let kept = names::recycle_path(&dir, number);
                    self.place
                        .storage
                        .rename(&file.path, &kept)
                        .map(|()| logs.recycle.push(number))
                        .map_err(|e| WalError::io(WalOperation::Rename, &file.path, e))
                } else {
                    self.place
                        .storage
                        .remove(&file.path)
                        .map_err(|e| WalError::io(WalOperation::Remove, &file.path, e))
                };
                if let Err(e) = done {
                    logs.live.insert(number, files);
                    return Err(e);
                }
                unsynced = Some(dir);
                files.remove(0);
            }
        }
        if let Some(dir) = unsynced {
            sync_dir(&*self.place.storage, &dir)?;
        }
        Ok(doomed.len())
    }

    /// Where the next record will start: the current log, its file, and that file's length.
    pub fn position(&self) -> WalPosition {
        read(&self.active).position()
    }

    /// The live logs' numbers, in order (the current one last).
    pub fn logs(&self) -> Vec<u64> {
        lock(&self.logs).live.keys().copied().collect()
    }

    /// The directory the current log file is in: the primary, or with failover the
    /// secondary.
    pub fn current_dir(&self) -> &Path {
        &self.place.dirs[read(&self.active).dir]
    }

    /// The released logs kept for reuse, oldest first.
    pub fn kept_for_reuse(&self) -> Vec<u64> {
        lock(&self.logs).recycle.clone()
    }

    /// The (primary) directory.
    pub fn dir(&self) -> &Path {
        &self.place.dirs[PRIMARY]
    }

    /// What the group commit did so far, over every log file written.
    pub fn stats(&self) -> GroupStats {
        let mut stats = lock(&self.logs).earlier;
        add_stats(&mut stats, &read(&self.active).group.stats());
        stats
    }

    /// Why the last rotation at the log size failed, if it did: appends went on to the
    /// current log, and the next append tries again.
    pub fn rotation_failure(&self) -> Option<Arc<WalError>> {
        lock(&self.rotation_failure).clone()
    }

    /// Makes every record appended durable, and releases the directory's lock.
    ///
    /// # Errors
    /// As [`wait`](Self::wait).
    pub fn close(self) -> Result<(), WalError> {
        let last = {
            let active = read(&self.active);
            let record = lock(&active.pending).next;
            WalTicket {
                position: active.position(),
                end: active.group.position(),
                record: record.saturating_sub(1),
            }
        };
        let waited = if self.failover.is_some() && last.record == 0 && last.end == 0 {
            Ok(())
        } else {
            self.wait(last)
        };
        if let Some(syncer) = &read(&self.active).syncer {
            syncer.retire();
        }
        waited
    }
}

/// What a writer needs to start a log file.
#[derive(Debug)]
struct Place<S: Storage> {
    storage: Arc<S>,
    /// The primary directory, and the secondary one with failover.
    dirs: Vec<PathBuf>,
    options: WalOptions,
    /// Released logs kept for reuse, at most (none with failover).
    recycle: usize,
    /// With failover: bumped when a sync ends or a file is created.
    progress: Option<Arc<Progress>>,
}

impl<S: Storage> Place<S> {
    /// Starts segment `segment` of log `number`, whose first record is the log's record
    /// `first`, in directory `dir`: a released log reused (renamed to its new name) if one is
    /// kept and this is a log's first file in the primary directory, else a new file. The
    /// file is synced, then its directory, before any record in it is acknowledged: here, or
    /// with failover by its syncing thread (timed, so that a stall there fails over too).
    fn new_file(
        &self,
        logs: &mut Logs,
        number: u64,
        segment: u32,
        first: u64,
        dir: usize,
    ) -> Result<Active<S>, WalError> {
        let storage = &self.storage;
        let dir_path = &self.dirs[dir];
        let path = names::path(dir_path, number, segment, first);
        let recycling = self.recycle > 0 && dir == PRIMARY && segment == 0;
        let reused = recycling && !logs.recycle.is_empty();
        let (file, handle) = if reused {
            let old = logs.recycle.remove(0);
            let kept = names::recycle_path(dir_path, old);
            let renamed = storage
                .rename(&kept, &path)
                .map_err(|e| WalError::io(WalOperation::Rename, &kept, e));
            if let Err(e) = renamed {
                logs.recycle.insert(0, old);
                return Err(e);
            }
            storage
                .reuse(&path)
                .map_err(|e| WalError::io(WalOperation::Reuse, &path, e))?
        } else {
            storage
                .create(&path)
                .map_err(|e| WalError::io(WalOperation::Create, &path, e))?
        };
        let clock = SyncClock::new();
        let handle = Timed {
            inner: Arc::new(handle),
            clock: Arc::clone(&clock),
        };
        let creation: Creation = {
            let (handle, storage, dir) = (handle.clone(), Arc::clone(storage), dir_path.clone());
            Box::new(move || {
                handle.sync()?;
                storage.sync_dir(&dir)
            })
        };
        let progress = self.progress.clone();
        let creation = match progress {
            Some(_) => Some(creation),
            None => {
                creation().map_err(|e| WalError::io(WalOperation::Create, &path, e))?;
                None
            }
        };
        let files = logs.live.entry(number).or_default();
        files.push(LiveFile {
            path,
            recyclable: recycling,
            reused,
        });
        logs.next = logs.next.max(number + 1);
        let format = if self.options.recycle > 0 {
            Format::Recyclable {
                log_number: recyclable_log_number(number),
            }
        } else {
            Format::Legacy
        };
        let writing = LogWriterOptions::new().write(WriteOptions::new().format(format));
        let group = Arc::new(GroupWriter::new(
            LogWriter::new(file, &writing),
            handle,
            self.options.group,
        ));
        let syncer = progress
            .zip(creation)
            .map(|(p, c)| Syncer::spawn(Arc::clone(&group), p, c));
        Ok(Active {
            number,
            segment,
            dir,
            first,
            group,
            clock,
            syncer,
            pending: Mutex::new(Pending {
                next: first,
                ..Pending::default()
            }),
        })
    }
}

impl<S: Storage> Drop for WalWriter<S> {
    /// Lets the syncing threads end (each once its log file is synced).
    fn drop(&mut self) {
        if let Some(syncer) = &read(&self.active).syncer {
            syncer.retire();
        }
    }
}

/// How long a waiter sleeps between looks at a stalling sync.
fn poll(threshold: Duration) -> Duration {
    (threshold / 4).max(Duration::from_micros(100))
}

fn parent(path: &Path) -> PathBuf {
    path.parent().map(Path::to_path_buf).unwrap_or_default()
}

fn sync_dir<S: Storage>(storage: &S, dir: &Path) -> Result<(), WalError> {
    storage
        .sync_dir(dir)
        .map_err(|e| WalError::io(WalOperation::SyncDir, dir, e))
}

fn add_stats(total: &mut GroupStats, more: &GroupStats) {
    total.records += more.records;
    total.syncs += more.syncs;
    total.synced_records += more.synced_records;
    total.largest_batch = total.largest_batch.max(more.largest_batch);
    total.sync_time += more.sync_time;
    total.slowest_sync = total.slowest_sync.max(more.slowest_sync);
}

/// Ends reused log `number` (its file at `path`) at `end` (its records durable up to there)
/// with a chunk of the next log's number, synced, as Pebble ends its logs: a reader of this
/// log stops there (a chunk of another use of the file, RocksDB's old record) instead of
/// reading the earlier use's bytes after it as damage — which point-in-time recovery would
/// stop at, before the next log.
fn end_reused_log<S: Storage>(
    storage: &S,
    path: &Path,
    number: u64,
    end: u64,
) -> Result<(), WalError> {
    let format = Format::Recyclable {
        log_number: recyclable_log_number(number + 1),
    };
    let writing = LogWriterOptions::new().write(WriteOptions::new().format(format).start(end));
    let mut marker = LogWriter::new(Vec::new(), &writing);
    let bytes = marker
        .add_record(b"")
        .and_then(|_| marker.close())
        .map_err(|source| WalError::Write {
            log: number,
            source,
        })?;
    storage
        .write_at(path, end, &bytes)
        .map_err(|e| WalError::io(WalOperation::Write, path, e))
}
