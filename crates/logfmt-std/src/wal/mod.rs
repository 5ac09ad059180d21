//! A write-ahead log kept as a directory of numbered logs, as LevelDB and RocksDB keep theirs
//! (`000123.log`): opened under one writer's lock, recovered across its logs in log-number
//! order with a [`RecoveryMode`](crate::RecoveryMode), appended to with group commit and
//! durable tickets, rotated at a size or on demand, released (removed, or kept and reused as
//! RocksDB's `recycle_log_file_num` does), and optionally failed over to a second directory
//! when a sync stalls, as Pebble does.
//!
//! ```
//! use logfmt_std::wal::{Wal, WalEntry, WalOptions};
//!
//! let dir = tempfile::tempdir()?;
//! let options = WalOptions::new().create(true);
//!
//! // Write: every record durable when its append returns.
//! let writer = Wal::open(dir.path(), &options)?.start()?;
//! let first = writer.append_durable(b"put a=1")?;
//! writer.rotate()?; // a new log, as at a memtable switch
//! writer.append_durable(b"put b=2")?;
//! writer.release_before(writer.position())?; // a checkpoint made the first log obsolete
//! writer.close()?;
//!
//! // Recover after a restart: every live log, in order.
//! let mut wal = Wal::open(dir.path(), &options)?;
//! let mut records = Vec::new();
//! for entry in wal.recover() {
//!     if let WalEntry::Record(record) = entry? {
//!         records.push(record.data);
//!     }
//! }
//! assert_eq!(records, [b"put b=2"]);
//! assert!(first.position.log < wal.logs()[0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! **What survives a crash.** A record whose [`WalWriter::wait`] (or
//! [`append_durable`](WalWriter::append_durable)) returned is recovered, after every record
//! appended before it, exactly once. A new log is created, synced, and its directory entry
//! synced before any record in it is acknowledged; the log before it is synced whole first, so
//! no log that another follows ends in a torn tail. A release returns once the directory is
//! synced: a released log never comes back. Starting to write after a crash cuts the torn
//! tail of the last log (bytes after its last complete record, never acknowledged) so that
//! the next recovery does not read it as a gap.
//!
//! Every file operation goes through [`Storage`]: [`OsStorage`] by default,
//! [`CrashableStorage`] in tests, which loses what was not synced at a simulated crash.

mod crashable;
mod error;
mod failover;
mod listing;
mod names;
mod options;
mod read_only;
mod recover;
mod storage;
mod writer;

use std::path::{Path, PathBuf};

pub use crashable::{CrashFile, CrashHandle, CrashLock, CrashableStorage};
pub use error::{WalError, WalOperation};
pub use options::{Failover, WalOptions};
pub use read_only::{ReadOnlyWal, WalLog};
pub use recover::Recovery;
pub use storage::{OsStorage, Storage};
pub use writer::WalWriter;

use recover::{LiveLog, Outcome};

/// Where a record is: its log's number and its offset in that log. Ordered as the records
/// are.
///
/// ```
/// use logfmt_std::wal::WalPosition;
///
/// assert!(WalPosition::new(7, 90_000) < WalPosition::new(8, 0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[non_exhaustive]
pub struct WalPosition {
    /// The log's number (its file is `NNNNNN.log`).
    pub log: u64,
    /// The offset in that log.
    pub offset: u64,
}

impl WalPosition {
    /// Offset `offset` of log `log`.
    #[must_use]
    pub const fn new(log: u64, offset: u64) -> Self {
        Self { log, offset }
    }
}

impl std::fmt::Display for WalPosition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "log {} offset {}", self.log, self.offset)
    }
}

/// A record appended: where it is, and the ticket to [`WalWriter::wait`] for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct WalTicket {
    /// Where the record starts.
    pub position: WalPosition,
    /// Where it ends in its log: it is durable once its log is durable up to here.
    pub end: u64,
}

/// A record recovered.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WalRecord {
    /// Where it starts.
    pub position: WalPosition,
    /// Where it ends in its log.
    pub end: u64,
    /// Its bytes.
    pub data: Vec<u8>,
}

/// What [`Wal::recover`] yields.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WalEntry {
    /// A log begins: the records until the next `Log` are its.
    Log {
        /// Its number.
        number: u64,
        /// Its file.
        path: PathBuf,
    },
    /// A record.
    Record(WalRecord),
    /// Damage the recovery mode reports, in a log.
    Damage {
        /// The log's number.
        log: u64,
        /// The damage: offset in that log, bytes, kind.
        damage: crate::recovery::Damage,
    },
}

/// A WAL directory, opened under its writer lock: recover it ([`recover`](Self::recover)),
/// then write it ([`start`](Self::start)). See the [module](self) for an example.
#[derive(Debug)]
pub struct Wal<S: Storage = OsStorage> {
    storage: S,
    dir: PathBuf,
    options: WalOptions,
    lock: S::Lock,
    /// Released logs kept for reuse, in log-number order.
    recycle: Vec<u64>,
    /// Every live log, in log-number order (both directories).
    logs: Vec<LiveLog>,
    /// The files saying where a log ends (a failover's cut): log -> (file, offset).
    cuts: std::collections::BTreeMap<u64, (PathBuf, u64)>,
    /// How the last recovery ended, if one was read to its end.
    outcome: Option<Outcome>,
}

impl Wal<OsStorage> {
    /// Opens the WAL directory `dir` (creating it if [`WalOptions::create`]), taking its writer
    /// lock (the `LOCK` file) and listing its logs.
    ///
    /// # Errors
    /// [`WalError::Locked`] if another writer has it open; [`WalError::Io`].
    pub fn open(dir: impl AsRef<Path>, options: &WalOptions) -> Result<Self, WalError> {
        Self::open_in(OsStorage, dir, options)
    }
}

impl<S: Storage> Wal<S> {
    /// As [`open`](Wal::open), through `storage`.
    ///
    /// # Errors
    /// As [`open`](Wal::open).
    pub fn open_in(
        storage: S,
        dir: impl AsRef<Path>,
        options: &WalOptions,
    ) -> Result<Self, WalError> {
        let dir = dir.as_ref().to_path_buf();
        let dirs = std::iter::once(dir.clone())
            .chain(options.failover.as_ref().map(|f| f.secondary.clone()));
        for each in dirs {
            if options.create {
                storage
                    .create_dir(&each)
                    .map_err(|e| WalError::io(WalOperation::CreateDir, &each, e))?;
            }
        }
        let lock = storage
            .lock(&dir)
            .map_err(|e| WalError::io(WalOperation::Lock, &dir, e))?
            .ok_or_else(|| WalError::Locked { dir: dir.clone() })?;
        let listing = listing::list(&storage, &dir, options)?;
        Ok(Self {
            storage,
            dir,
            options: options.clone(),
            lock,
            recycle: listing.recycle,
            logs: listing.logs,
            cuts: listing.cuts,
            outcome: None,
        })
    }

    /// The live logs' numbers, in order.
    pub fn logs(&self) -> Vec<u64> {
        self.logs.iter().map(|log| log.number).collect()
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Reads every live log, in log-number order, as one log ([`Recovery`]).
    pub fn recover(&mut self) -> Recovery<'_, S> {
        let outcome = self.outcome.insert(Outcome::default());
        Recovery::new(&self.storage, &self.logs, self.options.recovery, outcome)
    }

    /// Starts writing: a new log after the last one, created, synced, and its directory entry
    /// synced. Recovers first if [`recover`](Self::recover) was not read to its end.
    ///
    /// The last log's torn tail is cut off first, so that the next recovery does not find a
    /// gap before the new log: the bytes after its last complete record when they hold no
    /// complete record of the log (a record cut short by a crash, or, in a reused log, a
    /// write torn over the file's earlier bytes, which point-in-time recovery stops at). Such
    /// bytes were never acknowledged: a record is acknowledged once synced.
    ///
    /// # Errors
    /// [`WalError::Stopped`] if point-in-time recovery stopped at damage with records of the
    /// same log after it, or before the last log (nothing is changed); [`WalError::Damaged`]
    /// in absolute consistency; [`WalError::Io`].
    pub fn start(mut self) -> Result<WalWriter<S>, WalError> {
        let outcome = match self.outcome.take() {
            Some(outcome) if outcome.complete => outcome,
            _ => {
                for entry in self.recover() {
                    entry?;
                }
                self.outcome.take().unwrap_or_default()
            }
        };
        // Point in time stopped in the last log with no record of it after the damage: a
        // write torn by the crash (in a reused log, over its earlier bytes), cut off after the
        // last record recovered, as a torn tail is.
        let mut cut = outcome.torn_tail.map(|(log, tail)| (log, tail.offset));
        if let Some((log, damage)) = outcome.stopped {
            let last = self.logs.last().filter(|l| l.number == log);
            let end = outcome
                .last
                .filter(|p| p.log == log)
                .map_or(0, |p| p.offset);
            match last {
                Some(last) if !recover::records_after(&self.storage, last, end)? => {
                    cut = Some((log, end));
                }
                _ => return Err(WalError::Stopped { log, damage }),
            }
        }
        if let Some((log, offset)) = cut
            && let Some(last) = self.logs.iter().find(|l| l.number == log)
        {
            self.storage
                .truncate(&last.path, offset)
                .map_err(|e| WalError::io(WalOperation::Truncate, &last.path, e))?;
        }
        writer::WalWriter::start(self)
    }
}
