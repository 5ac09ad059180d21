//! [`ReadOnlyWal`]: a WAL directory opened only to read it, as a tool reads a directory
//! another process may be writing: no lock taken, nothing created, nothing changed.

use std::path::{Path, PathBuf};

use super::error::WalError;
use super::listing::{self, Listing};
use super::options::WalOptions;
use super::recover::{Outcome, Recovery};
use super::storage::{OsStorage, Storage};

/// A live log of a [`ReadOnlyWal`]: its number and its file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct WalLog {
    /// Its number (its file is `NNNNNN.log`).
    pub number: u64,
    /// Its file.
    pub path: PathBuf,
}

/// A WAL directory (or any directory of numbered logs `NNNNNN.log`: a LevelDB or RocksDB
/// database's, RocksDB's `archive`) opened to read only: its live logs are read in
/// log-number order, as one log, with the same [`Recovery`] and the same rules across logs
/// as [`Wal::recover`](super::Wal::recover) — but no writer lock is taken (a writer may hold
/// it), and nothing in the directory is created, cut or removed. A log a writer is appending
/// to is read up to where it ends when read.
///
/// ```
/// use logfmt_std::wal::{ReadOnlyWal, Wal, WalEntry, WalOptions};
///
/// let dir = tempfile::tempdir()?;
/// let writer = Wal::open(dir.path(), &WalOptions::new().create(true))?.start()?;
/// writer.append_durable(b"one")?;
/// writer.rotate()?;
/// writer.append_durable(b"two")?;
///
/// // Read while the writer holds the lock.
/// let mut wal = ReadOnlyWal::open(dir.path(), &WalOptions::new())?;
/// assert_eq!(wal.logs().len(), 2);
/// let mut records = Vec::new();
/// for entry in wal.recover() {
///     if let WalEntry::Record(record) = entry? {
///         records.push((record.position.log, record.data));
///     }
/// }
/// let first = wal.logs()[0].number;
/// assert_eq!(records, [(first, b"one".to_vec()), (first + 1, b"two".to_vec())]);
/// writer.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct ReadOnlyWal<S: Storage = OsStorage> {
    storage: S,
    dir: PathBuf,
    options: WalOptions,
    listing: Listing,
    outcome: Outcome,
}

impl ReadOnlyWal<OsStorage> {
    /// Lists the WAL directory `dir` (and the failover directory of `options`, if any) to
    /// read it. [`WalOptions::create`] is ignored: nothing is created.
    ///
    /// # Errors
    /// [`WalError::Io`] if a directory cannot be listed (it does not exist, ...).
    pub fn open(dir: impl AsRef<Path>, options: &WalOptions) -> Result<Self, WalError> {
        Self::open_in(OsStorage, dir, options)
    }
}

impl<S: Storage> ReadOnlyWal<S> {
    /// As [`open`](ReadOnlyWal::open), through `storage`.
    ///
    /// # Errors
    /// As [`open`](ReadOnlyWal::open).
    pub fn open_in(
        storage: S,
        dir: impl AsRef<Path>,
        options: &WalOptions,
    ) -> Result<Self, WalError> {
        let dir = dir.as_ref().to_path_buf();
        let listing = listing::list(&storage, &dir, options)?;
        Ok(Self {
            storage,
            dir,
            options: options.clone(),
            listing,
            outcome: Outcome::default(),
        })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The live logs, in log-number order: the files [`recover`](Self::recover) reads.
    pub fn logs(&self) -> Vec<WalLog> {
        self.listing
            .logs
            .iter()
            .map(|log| WalLog {
                number: log.number,
                path: log.path.clone(),
            })
            .collect()
    }

    /// The directories' other entries, in name order: not a live log (`NNNNNN.log`, the
    /// number fitting in 64 bits), a log kept for reuse, a failover's cut file, nor the lock.
    /// They are not read.
    pub fn others(&self) -> &[PathBuf] {
        &self.listing.others
    }

    /// Reads every live log, in log-number order, as one log, with
    /// [`WalOptions::recovery`]: see [`Recovery`].
    pub fn recover(&mut self) -> Recovery<'_, S> {
        Recovery::new(
            &self.storage,
            &self.listing.logs,
            self.options.recovery,
            &mut self.outcome,
        )
    }
}
