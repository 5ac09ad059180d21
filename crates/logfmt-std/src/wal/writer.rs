//! [`WalWriter`]: appends to a WAL directory's current log with group commit, starts new logs
//! (rotation), releases old ones (removed, or kept for reuse), and fails over to a second
//! directory when a sync stalls.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use logfmt_core::{Format, WriteOptions};

use crate::file::recyclable_log_number;
use crate::group::{GroupStats, GroupWriter};
use crate::writer::{LogWriter, LogWriterOptions};

use super::error::{WalError, WalOperation};
use super::failover::{self, Progress, Redirect, SyncClock, Syncer, Timed, Unsynced};
use super::names::{self, Kind};
use super::options::WalOptions;
use super::storage::Storage;
use super::{Wal, WalPosition, WalTicket};

type Group<S> = GroupWriter<<S as Storage>::File, Timed<<S as Storage>::Handle>>;

/// The primary directory's index in [`WalWriter::dirs`].
const PRIMARY: usize = 0;

/// The log appended to.
#[derive(Debug)]
struct Active<S: Storage> {
    number: u64,
    /// Its directory (an index in [`WalWriter::dirs`]).
    dir: usize,
    group: Arc<Group<S>>,
    clock: Arc<SyncClock>,
    /// With failover: the thread that syncs it.
    syncer: Option<Arc<Syncer>>,
}

/// A live log.
#[derive(Debug, Clone)]
struct Live {
    path: PathBuf,
    /// Written by this writer in the recyclable format, in the primary directory: it may be
    /// reused once released.
    recyclable: bool,
    /// A released log's file written again: its earlier use's bytes follow the new ones.
    reused: bool,
}

/// The directory's logs, as the writer keeps them.
#[derive(Debug)]
struct Logs {
    live: BTreeMap<u64, Live>,
    /// Released logs kept for reuse, oldest first.
    recycle: Vec<u64>,
    /// The files saying where a log ends: log -> file.
    cuts: BTreeMap<u64, PathBuf>,
    /// The next log's number.
    next: u64,
    /// Groups' statistics of the logs written before the current one.
    earlier: GroupStats,
}

/// With failover: what is kept to move records to the other directory.
#[derive(Debug)]
struct FailoverState {
    threshold: Duration,
    /// The current log's records not yet known durable.
    unsynced: Mutex<Unsynced>,
    /// Where the records of logs cut short went (kept after a release: a record moved from
    /// a released log lives on in a later one).
    redirects: Mutex<BTreeMap<u64, Redirect>>,
    /// A sync ended or a log started.
    progress: Arc<Progress>,
    /// While writing to the secondary: the clock of the primary's last log, whose stalled
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
///   the current log is synced whole, the new one created (or a released one reused), synced,
///   and the directory synced, before any record goes to it.
/// - [`release_before`](Self::release_before) removes every log wholly before a position
///   (or keeps it for reuse) and syncs the directory.
/// - With [`WalOptions::failover`](super::WalOptions::failover), as Pebble does: when a sync
///   of the current log has taken longer than the threshold, the log is cut at what is
///   durable (an empty file `NNNNNN-OFFSET.cut` in the other directory says where), a new log
///   is started in the other directory, and the records after the cut are written again
///   there, their tickets following them; once the stalled sync ends, new logs go to the
///   primary directory again. Recovery reads the logs of both directories in number order,
///   each cut log up to its cut: every acknowledged record once, in order.
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
    storage: S,
    /// The primary directory, and the secondary one with failover.
    dirs: Vec<PathBuf>,
    options: WalOptions,
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
            logs,
            cuts,
            ..
        } = wal;
        let live: BTreeMap<u64, Live> = logs
            .into_iter()
            .map(|log| {
                let live = Live {
                    path: log.path,
                    recyclable: false,
                    reused: false,
                };
                (log.number, live)
            })
            .collect();
        let last = live.keys().chain(&recycle).copied().max().unwrap_or(0);
        let mut logs = Logs {
            live,
            recycle,
            cuts: cuts.into_iter().map(|(n, (path, _))| (n, path)).collect(),
            next: last + 1,
            earlier: GroupStats::default(),
        };
        if options.recycle == 0 && !logs.recycle.is_empty() {
            // Kept for reuse by an earlier writer that reused logs; this one does not.
            for number in std::mem::take(&mut logs.recycle) {
                let path = names::path(&dir, number, Kind::Recycle);
                storage
                    .remove(&path)
                    .map_err(|e| WalError::io(WalOperation::Remove, &path, e))?;
            }
            sync_dir(&storage, &dir)?;
        }
        let dirs: Vec<PathBuf> = std::iter::once(dir)
            .chain(options.failover.as_ref().map(|f| f.secondary.clone()))
            .collect();
        let failover = options.failover.as_ref().map(|f| FailoverState {
            threshold: f.threshold,
            unsynced: Mutex::default(),
            redirects: Mutex::default(),
            progress: Arc::default(),
            primary: Mutex::default(),
        });
        let number = logs.next;
        let progress = failover.as_ref().map(|f| &f.progress);
        let first = new_log(
            &storage, &dirs, &options, progress, &mut logs, number, PRIMARY,
        )?;
        Ok(Self {
            active: RwLock::new(first),
            storage,
            dirs,
            options,
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
            let appended = match &self.failover {
                None => active.group.append(data),
                Some(failover) => {
                    // In ticket order, with its bytes: to be written again after a cut.
                    let mut unsynced = lock(&failover.unsynced);
                    let appended = active.group.append(data);
                    if let Ok(written) = &appended {
                        unsynced.push_back((written.end, data.to_vec()));
                    }
                    appended
                }
            };
            let written = appended.map_err(|source| WalError::Write {
                log: active.number,
                source,
            })?;
            if let Some(syncer) = &active.syncer {
                syncer.wake();
            }
            let ticket = WalTicket {
                position: WalPosition::new(active.number, written.offset),
                end: written.end,
            };
            (ticket, written.end >= self.options.log_size)
        };
        if full {
            let rotated = self.rotate_from(Some(ticket.position.log), None);
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
            let (log, _, end) = failover::resolve(
                &lock(&failover.redirects),
                (ticket.position.log, ticket.position.offset, ticket.end),
            );
            let (number, dir, group, clock, syncer) = {
                let active = read(&self.active);
                (
                    active.number,
                    active.dir,
                    Arc::clone(&active.group),
                    Arc::clone(&active.clock),
                    active.syncer.clone(),
                )
            };
            if log < number {
                // Its log was synced up to its end, or cut after it, before the next began.
                return Ok(());
            }
            if group.durable() >= end {
                self.maybe_fail_back(number, dir);
                return Ok(());
            }
            if let Some(source) = syncer.as_ref().and_then(|s| s.failure()) {
                return Err(WalError::Write { log, source });
            }
            if clock
                .in_progress()
                .is_some_and(|took| took > failover.threshold)
            {
                // The disk stalls: on to the other directory.
                self.rotate_from(Some(number), Some(1 - dir))?;
                continue;
            }
            if let Some(syncer) = &syncer {
                syncer.wake();
            }
            failover.progress.wait_past(
                seen,
                (failover.threshold / 4).max(Duration::from_micros(100)),
            );
        }
    }

    /// Writing to the secondary directory, and the primary's stalled sync ended: new records
    /// go to the primary again.
    fn maybe_fail_back(&self, number: u64, dir: usize) {
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
            // A failure leaves the secondary in use; the next wait tries again.
            let _ = self.rotate_from(Some(number), Some(PRIMARY));
        }
    }

    /// Where the record of `ticket` is now: where it was appended, or, after a failover cut
    /// its log short before it was durable, where it was written again (its ticket there,
    /// which [`wait`](Self::wait) follows on its own).
    ///
    /// ```
    /// use logfmt_std::wal::{Wal, WalOptions};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let writer = Wal::open(dir.path(), &WalOptions::new().create(true))?.start()?;
    /// let ticket = writer.append(b"x")?;
    /// assert_eq!(writer.locate(ticket), ticket); // no failover: where it was appended
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn locate(&self, ticket: WalTicket) -> WalTicket {
        let Some(failover) = &self.failover else {
            return ticket;
        };
        let (log, offset, end) = failover::resolve(
            &lock(&failover.redirects),
            (ticket.position.log, ticket.position.offset, ticket.end),
        );
        WalTicket {
            position: WalPosition::new(log, offset),
            end,
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
        self.rotate_from(None, None)
            .map(|number| number.unwrap_or_default())
    }

    /// Starts a new log (in directory `to`, else the current log's), unless `from` is given
    /// and is no longer the current log.
    fn rotate_from(&self, from: Option<u64>, to: Option<usize>) -> Result<Option<u64>, WalError> {
        let mut logs = lock(&self.logs);
        let mut active = write(&self.active);
        if from.is_some_and(|from| from != active.number) {
            return Ok(None);
        }
        let end = active.group.position();
        // Every record of the current log durable before the next log takes any — or, with
        // failover, the log cut at what is durable and the rest written again in the next.
        let cut = self.seal(&active, end)?;
        let to = to.unwrap_or(active.dir);
        let reused = logs.live.get(&active.number).is_some_and(|l| l.reused);
        // A reused log's earlier bytes after its end: an end chunk, or with failover (whose
        // disk may stall in that chunk's sync) a cut file.
        let cut_file = cut < end || (reused && self.failover.is_some());
        if reused && !cut_file {
            end_reused_log(&self.storage, &logs, active.number, end)?;
        }
        if cut_file {
            let marker = names::cut_path(&self.dirs[to], active.number, cut);
            drop(
                self.storage
                    .create(&marker)
                    .map_err(|e| WalError::io(WalOperation::Create, &marker, e))?,
            );
            sync_dir(&self.storage, &self.dirs[to])?;
            logs.cuts.insert(active.number, marker);
        }
        let number = logs.next;
        let progress = self.failover.as_ref().map(|f| &f.progress);
        let next = new_log(
            &self.storage,
            &self.dirs,
            &self.options,
            progress,
            &mut logs,
            number,
            to,
        )?;
        if let Some(failover) = &self.failover {
            self.carry_over(failover, &active, &next, cut)?;
            if active.dir == PRIMARY && to != PRIMARY {
                *lock(&failover.primary) = Some(Arc::clone(&active.clock));
            }
        }
        let stats = active.group.stats();
        add_stats(&mut logs.earlier, &stats);
        if let Some(syncer) = &active.syncer {
            syncer.retire();
        }
        *active = next;
        if let Some(failover) = &self.failover {
            failover.progress.bump();
        }
        Ok(Some(number))
    }

    /// Makes the current log durable up to `end` and returns `end`; with failover, returns
    /// instead what is durable once a sync of it has stalled longer than the threshold.
    fn seal(&self, active: &Active<S>, end: u64) -> Result<u64, WalError> {
        let failed = |source| WalError::Write {
            log: active.number,
            source,
        };
        let Some(failover) = &self.failover else {
            active.group.wait(end).map_err(failed)?;
            return Ok(end);
        };
        loop {
            let seen = failover.progress.now();
            let durable = active.group.durable();
            if durable >= end {
                return Ok(end);
            }
            if let Some(source) = active.syncer.as_ref().and_then(|s| s.failure()) {
                return Err(failed(source));
            }
            let stalled = active.clock.in_progress();
            if stalled.is_some_and(|took| took > failover.threshold) {
                return Ok(durable);
            }
            if let Some(syncer) = &active.syncer {
                syncer.wake();
            }
            failover.progress.wait_past(
                seen,
                (failover.threshold / 4).max(Duration::from_micros(100)),
            );
        }
    }

    /// Writes the records of `old` after `cut` again in `next`, and notes where they went.
    fn carry_over(
        &self,
        failover: &FailoverState,
        old: &Active<S>,
        next: &Active<S>,
        cut: u64,
    ) -> Result<(), WalError> {
        let mut unsynced = lock(&failover.unsynced);
        let moved: Vec<(u64, Vec<u8>)> = unsynced.drain(..).filter(|(end, _)| *end > cut).collect();
        let mut places = Vec::with_capacity(moved.len());
        for (end, data) in moved {
            let written = next.group.append(&data).map_err(|source| WalError::Write {
                log: next.number,
                source,
            })?;
            places.push((end, written.offset, written.end));
            unsynced.push_back((written.end, data));
        }
        if let Some(syncer) = &next.syncer {
            syncer.wake();
        }
        if cut < old.group.position() {
            lock(&failover.redirects).insert(
                old.number,
                Redirect {
                    cut,
                    to: next.number,
                    moved: places,
                },
            );
        }
        Ok(())
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
        // In log order, each directory synced before a later log of the other one is
        // removed: a crash leaves the released logs' newest gone only with every older one.
        let mut unsynced: Option<PathBuf> = None;
        for &number in &doomed {
            let Some(live) = logs.live.get(&number).cloned() else {
                continue;
            };
            let dir = live
                .path
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default();
            if let Some(before) = unsynced.take_if(|before| *before != dir) {
                sync_dir(&self.storage, &before)?;
            }
            if live.recyclable && logs.recycle.len() < self.options.recycle {
                let kept = names::path(&dir, number, Kind::Recycle);
                self.storage
                    .rename(&live.path, &kept)
                    .map_err(|e| WalError::io(WalOperation::Rename, &live.path, e))?;
                logs.recycle.push(number);
            } else {
                self.storage
                    .remove(&live.path)
                    .map_err(|e| WalError::io(WalOperation::Remove, &live.path, e))?;
            }
            unsynced = Some(dir);
            logs.live.remove(&number);
        }
        if let Some(dir) = unsynced {
            sync_dir(&self.storage, &dir)?;
        }
        // Their cuts, once the logs are gone for good.
        let mut touched = BTreeSet::new();
        for number in &doomed {
            if let Some(marker) = logs.cuts.remove(number) {
                self.storage
                    .remove(&marker)
                    .map_err(|e| WalError::io(WalOperation::Remove, &marker, e))?;
                touched.insert(marker.parent().map(Path::to_path_buf).unwrap_or_default());
            }
        }
        for dir in &touched {
            sync_dir(&self.storage, dir)?;
        }
        Ok(doomed.len())
    }

    /// Where the next record will start: the current log and its length.
    pub fn position(&self) -> WalPosition {
        let active = read(&self.active);
        WalPosition::new(active.number, active.group.position())
    }

    /// The live logs' numbers, in order (the current one last).
    pub fn logs(&self) -> Vec<u64> {
        lock(&self.logs).live.keys().copied().collect()
    }

    /// The directory the current log is in: the primary, or with failover the secondary.
    pub fn current_dir(&self) -> &Path {
        &self.dirs[read(&self.active).dir]
    }

    /// The released logs kept for reuse, oldest first.
    pub fn kept_for_reuse(&self) -> Vec<u64> {
        lock(&self.logs).recycle.clone()
    }

    /// The (primary) directory.
    pub fn dir(&self) -> &Path {
        &self.dirs[PRIMARY]
    }

    /// What the group commit did so far, over every log written.
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
            WalTicket {
                position: WalPosition::new(active.number, 0),
                end: active.group.position(),
            }
        };
        let waited = self.wait(last);
        if let Some(syncer) = &read(&self.active).syncer {
            syncer.retire();
        }
        waited
    }
}

impl<S: Storage> Drop for WalWriter<S> {
    /// Lets the syncing threads end (each once its log is synced).
    fn drop(&mut self) {
        if let Some(syncer) = &read(&self.active).syncer {
            syncer.retire();
        }
    }
}

/// Starts log `number` in directory `dir`: a released log reused (renamed to its new
/// name) if one is kept, else a new file; the file synced and the directory synced before
/// it is written.
fn new_log<S: Storage>(
    storage: &S,
    dirs: &[PathBuf],
    options: &WalOptions,
    progress: Option<&Arc<Progress>>,
    logs: &mut Logs,
    number: u64,
    dir: usize,
) -> Result<Active<S>, WalError> {
    let dir_path = &dirs[dir];
    let path = names::path(dir_path, number, Kind::Live);
    let recycling = options.recycle > 0;
    let reused = recycling && dir == PRIMARY && !logs.recycle.is_empty();
    let (file, handle) = if reused {
        let old = logs.recycle.remove(0);
        let kept = names::path(dir_path, old, Kind::Recycle);
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
    // Its directory entry durable now; the file is synced by the sync that acknowledges its
    // first record (which a stalled disk must not hold up before failover can act).
    sync_dir(storage, dir_path)?;
    logs.live.insert(
        number,
        Live {
            path,
            recyclable: recycling && dir == PRIMARY,
            reused,
        },
    );
    logs.next = number + 1;
    let format = if recycling {
        Format::Recyclable {
            log_number: recyclable_log_number(number),
        }
    } else {
        Format::Legacy
    };
    let writing = LogWriterOptions::new().write(WriteOptions::new().format(format));
    let clock = SyncClock::new();
    let handle = Timed {
        inner: handle,
        clock: Arc::clone(&clock),
    };
    let group = Arc::new(GroupWriter::new(
        LogWriter::new(file, &writing),
        handle,
        options.group,
    ));
    let syncer = progress.map(|p| Syncer::spawn(Arc::clone(&group), Arc::clone(p)));
    Ok(Active {
        number,
        dir,
        group,
        clock,
        syncer,
    })
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

/// Ends reused log `number` at `end` (its records durable up to there) with a chunk of the
/// next log's number, synced, as Pebble ends its logs: a reader of this log stops there (a
/// chunk of another use of the file, RocksDB's old record) instead of reading the earlier
/// use's bytes after it as damage — which point-in-time recovery would stop at, before the
/// next log.
fn end_reused_log<S: Storage>(
    storage: &S,
    logs: &Logs,
    number: u64,
    end: u64,
) -> Result<(), WalError> {
    let Some(live) = logs.live.get(&number) else {
        return Ok(());
    };
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
        .write_at(&live.path, end, &bytes)
        .map_err(|e| WalError::io(WalOperation::Write, &live.path, e))
}
