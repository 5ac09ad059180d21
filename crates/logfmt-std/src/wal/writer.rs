//! [`WalWriter`]: appends to a WAL directory's current log with group commit, starts new logs
//! (rotation), and releases old ones (removed, or kept for reuse).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use logfmt_core::{Format, WriteOptions};

use crate::file::recyclable_log_number;
use crate::group::{GroupStats, GroupWriter, SyncHandle};
use crate::writer::{LogWriter, LogWriterOptions};

use super::error::{WalError, WalOperation};
use super::names::{self, Kind};
use super::options::WalOptions;
use super::storage::Storage;
use super::{Wal, WalPosition, WalTicket};

type Group<S> = GroupWriter<<S as Storage>::File, <S as Storage>::Handle>;

/// The log appended to.
#[derive(Debug)]
struct Active<S: Storage> {
    number: u64,
    group: Arc<Group<S>>,
}

/// A live log.
#[derive(Debug, Clone)]
struct Live {
    path: PathBuf,
    /// Written by this writer in the recyclable format: it may be reused once released.
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
    /// The next log's number.
    next: u64,
    /// Groups' statistics of the logs written before the current one.
    earlier: GroupStats,
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
    dir: PathBuf,
    options: WalOptions,
    active: RwLock<Active<S>>,
    logs: Mutex<Logs>,
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
            storage
                .sync_dir(&dir)
                .map_err(|e| WalError::io(WalOperation::SyncDir, &dir, e))?;
        }
        let number = logs.next;
        let group = new_log(&storage, &dir, &options, &mut logs, number)?;
        Ok(Self {
            storage,
            dir,
            options,
            active: RwLock::new(Active {
                number,
                group: Arc::new(group),
            }),
            logs: Mutex::new(logs),
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
            let written = active
                .group
                .append(data)
                .map_err(|source| WalError::Write {
                    log: active.number,
                    source,
                })?;
            let ticket = WalTicket {
                position: WalPosition::new(active.number, written.offset),
                end: written.end,
            };
            (ticket, written.end >= self.options.log_size)
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
        let group = {
            let active = read(&self.active);
            if ticket.position.log < active.number {
                // Its log was synced whole before the next one was started.
                return Ok(());
            }
            Arc::clone(&active.group)
        };
        group.wait(ticket.end).map_err(|source| WalError::Write {
            log: ticket.position.log,
            source,
        })
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

    /// Starts a new log, unless `from` is given and is no longer the current one.
    fn rotate_from(&self, from: Option<u64>) -> Result<Option<u64>, WalError> {
        let mut logs = lock(&self.logs);
        let mut active = write(&self.active);
        if from.is_some_and(|from| from != active.number) {
            return Ok(None);
        }
        // Every record of the current log durable before the next log takes any.
        let end = active.group.position();
        active.group.wait(end).map_err(|source| WalError::Write {
            log: active.number,
            source,
        })?;
        if logs.live.get(&active.number).is_some_and(|l| l.reused) {
            end_reused_log(&self.storage, &logs, active.number, end)?;
        }
        let number = logs.next;
        let group = new_log(&self.storage, &self.dir, &self.options, &mut logs, number)?;
        let stats = active.group.stats();
        add_stats(&mut logs.earlier, &stats);
        *active = Active {
            number,
            group: Arc::new(group),
        };
        Ok(Some(number))
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
        for &number in &doomed {
            let Some(live) = logs.live.get(&number).cloned() else {
                continue;
            };
            if live.recyclable && logs.recycle.len() < self.options.recycle {
                let kept = names::path(&self.dir, number, Kind::Recycle);
                self.storage
                    .rename(&live.path, &kept)
                    .map_err(|e| WalError::io(WalOperation::Rename, &live.path, e))?;
                logs.recycle.push(number);
            } else {
                self.storage
                    .remove(&live.path)
                    .map_err(|e| WalError::io(WalOperation::Remove, &live.path, e))?;
            }
            logs.live.remove(&number);
        }
        if !doomed.is_empty() {
            self.storage
                .sync_dir(&self.dir)
                .map_err(|e| WalError::io(WalOperation::SyncDir, &self.dir, e))?;
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

    /// The released logs kept for reuse, oldest first.
    pub fn kept_for_reuse(&self) -> Vec<u64> {
        lock(&self.logs).recycle.clone()
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
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
        let active = read(&self.active);
        let end = active.group.position();
        active.group.wait(end).map_err(|source| WalError::Write {
            log: active.number,
            source,
        })
    }
}

fn add_stats(total: &mut GroupStats, more: &GroupStats) {
    total.records += more.records;
    total.syncs += more.syncs;
    total.synced_records += more.synced_records;
    total.largest_batch = total.largest_batch.max(more.largest_batch);
    total.sync_time += more.sync_time;
    total.slowest_sync = total.slowest_sync.max(more.slowest_sync);
}

/// Starts log `number` in `dir`: a released log reused (renamed to its new name) if one is
/// kept, else a new file; the file synced and the directory synced before it is written.
fn new_log<S: Storage>(
    storage: &S,
    dir: &Path,
    options: &WalOptions,
    logs: &mut Logs,
    number: u64,
) -> Result<Group<S>, WalError> {
    let path = names::path(dir, number, Kind::Live);
    let recycling = options.recycle > 0;
    let reused = recycling && !logs.recycle.is_empty();
    let (file, handle) = if reused {
        let old = logs.recycle.remove(0);
        let kept = names::path(dir, old, Kind::Recycle);
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
    handle
        .sync()
        .map_err(|e| WalError::io(WalOperation::Create, &path, e))?;
    storage
        .sync_dir(dir)
        .map_err(|e| WalError::io(WalOperation::SyncDir, dir, e))?;
    logs.live.insert(
        number,
        Live {
            path,
            recyclable: recycling,
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
    Ok(GroupWriter::new(
        LogWriter::new(file, &writing),
        handle,
        options.group,
    ))
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
