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

use recover::{LogFile, Outcome};

/// Where a record is: its log's number, the log's file (segment) it is in, and its offset in
/// that file. Ordered as the records are.
///
/// A log has one file, segment 0 (`NNNNNN.log`), unless a failover moved its later records
/// to a file in the other directory (segment 1, and so on: see
/// [`WalOptions::failover`](WalOptions::failover)).
///
/// ```
/// use logfmt_std::wal::WalPosition;
///
/// assert!(WalPosition::new(7, 90_000) < WalPosition::new(8, 0));
/// assert!(WalPosition::new(7, 90_000) < WalPosition::in_segment(7, 1, 0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[non_exhaustive]
pub struct WalPosition {
    /// The log's number (its first file is `NNNNNN.log`).
    pub log: u64,
    /// The log's file: 0 for its first, `NNNNNN.log`.
    pub segment: u32,
    /// The offset in that file.
    pub offset: u64,
}

impl WalPosition {
    /// Offset `offset` of log `log`'s first file.
    #[must_use]
    pub const fn new(log: u64, offset: u64) -> Self {
        Self::in_segment(log, 0, offset)
    }

    /// Offset `offset` of segment `segment` of log `log`.
    #[must_use]
    pub const fn in_segment(log: u64, segment: u32, offset: u64) -> Self {
        Self {
            log,
            segment,
            offset,
        }
    }
}

impl std::fmt::Display for WalPosition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.segment == 0 {
            write!(f, "log {} offset {}", self.log, self.offset)
        } else {
            write!(
                f,
                "log {} segment {} offset {}",
                self.log, self.segment, self.offset
            )
        }
    }
}

/// A record appended: where it is, and the ticket to [`WalWriter::wait`] for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct WalTicket {
    /// Where the record was appended (a failover may write it again in the log's next
    /// segment, where [`WalWriter::wait`] follows it).
    pub position: WalPosition,
    /// Where it ends in that file.
    pub end: u64,
    /// Its number in its log (the log's first record is 0).
    pub(crate) record: u64,
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
    /// A log's file begins: the records until the next `Log` are in it. A log failed over to
    /// another directory has more than one file (each yielded so, with the same number).
    Log {
        /// Its number.
        number: u64,
        /// The file.
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
    /// Every live log's files, in log-number and segment order (both directories).
    files: Vec<LogFile>,
    /// The files left of logs whose release a crash cut short (their first file gone), to
    /// remove.
    remains: Vec<(u64, PathBuf)>,
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
        for each in dirs.clone() {
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
            files: listing.files,
            remains: listing.remains,
            outcome: None,
        })
    }

    /// The live logs' numbers, in order.
    pub fn logs(&self) -> Vec<u64> {
        let mut logs: Vec<u64> = self.files.iter().map(|f| f.number).collect();
        logs.dedup();
        logs
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Reads every live log, in log-number order, as one log ([`Recovery`]).
    pub fn recover(&mut self) -> Recovery<'_, S> {
        let outcome = self.outcome.insert(Outcome::default());
        Recovery::new(&self.storage, &self.files, self.options.recovery, outcome)
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
        let mut cut = outcome.torn_tail.map(|(file, tail)| (file, tail.offset));
        if let Some((file, damage)) = outcome.stopped {
            let log = self.files[file].number;
            let last = Some(file).filter(|&f| f + 1 == self.files.len());
            let end = outcome
                .last
                .filter(|&(f, _)| f == file)
                .map_or(0, |(_, end)| end);
            match last {
                Some(last) if !recover::records_after(&self.storage, &self.files[last], end)? => {
                    cut = Some((last, end));
                }
                _ => return Err(WalError::Stopped { log, damage }),
            }
        }
        if let Some((file, offset)) = cut {
            let path = &self.files[file].path;
            self.storage
                .truncate(path, offset)
                .map_err(|e| WalError::io(WalOperation::Truncate, path, e))?;
        }
        writer::WalWriter::start(self)
    }
}
