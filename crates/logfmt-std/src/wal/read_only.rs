//! [`ReadOnlyWal`]: a WAL directory opened only to read it, as a tool reads a directory
//! another process may be writing: no lock taken, nothing created, nothing changed.

use std::path::{Path, PathBuf};

use super::error::WalError;
use super::listing::{self, Listing};
use super::options::WalOptions;
use super::recover::{LogFile, Outcome, Recovery};
use super::storage::{OsStorage, Storage};

/// A file of a live log of a [`ReadOnlyWal`]: the log's number, the file's segment and its
/// path. A log has one file (`NNNNNN.log`, segment 0) unless a failover moved its later
/// records to files in the other directory (segments 1, 2, ...).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct WalLog {
    /// The log's number.
    pub number: u64,
    /// The file's segment: 0 for the log's first file.
    pub segment: u32,
    /// The file.
    pub path: PathBuf,
}

impl WalLog {
    /// The description of `file`.
    fn of(file: &LogFile) -> Self {
        Self {
            number: file.number,
            segment: file.segment,
            path: file.path.clone(),
        }
    }
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

    /// The live logs' files, in log-number and segment order: the files
    /// [`recover`](Self::recover) reads.
    pub fn logs(&self) -> Vec<WalLog> {
        self.listing.files.iter().map(WalLog::of).collect()
    }

    /// Keeps only the logs `keep` says to read (a database's live logs, say: those its
    /// MANIFEST still needs); the others are left out of [`logs`](Self::logs) and of
    /// [`recover`](Self::recover).
    ///
    /// ```
    /// use logfmt_std::wal::{ReadOnlyWal, WalOptions};
    ///
    /// let dir = tempfile::tempdir()?;
    /// for log in ["000003.log", "000007.log"] {
    ///     std::fs::write(dir.path().join(log), b"")?;
    /// }
    /// let mut wal = ReadOnlyWal::open(dir.path(), &WalOptions::new())?;
    /// wal.retain(|log| log.number >= 5);
    /// assert_eq!(wal.logs().iter().map(|l| l.number).collect::<Vec<_>>(), [7]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn retain(&mut self, mut keep: impl FnMut(&WalLog) -> bool) {
        self.listing.files.retain(|file| keep(&WalLog::of(file)));
    }

    /// The directories' other entries, in name order: not a live log's file (`NNNNNN.log`,
    /// `NNNNNN-SSS-FIRST.log`, the numbers fitting in 64 bits), a log kept for reuse, nor the
    /// lock. The remains of a log whose release a crash cut short are not read either.
    /// They are not read.
    pub fn others(&self) -> &[PathBuf] {
        &self.listing.others
    }

    /// Reads every live log, in log-number order, as one log, with
    /// [`WalOptions::recovery`]: see [`Recovery`].
    pub fn recover(&mut self) -> Recovery<'_, S> {
        Recovery::new(
            &self.storage,
            &self.listing.files,
            self.options.recovery,
            &mut self.outcome,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wal::{Wal, WalEntry};

    /// Every entry of `dir`, with its bytes.
    fn snapshot(dir: &Path) -> Vec<(std::ffi::OsString, Vec<u8>)> {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (e.file_name(), std::fs::read(e.path()).unwrap_or_default())
            })
            .collect();
        entries.sort();
        entries
    }

    #[test]
    fn reading_changes_nothing_and_takes_no_lock() {
        let dir = tempfile::tempdir().unwrap();
        // A directory no writer ever opened: no LOCK file, and none is made.
        std::fs::write(dir.path().join("000003.log"), b"").unwrap();
        std::fs::write(dir.path().join("notes.txt"), b"x").unwrap();
        let before = snapshot(dir.path());
        let mut wal = ReadOnlyWal::open(dir.path(), &WalOptions::new().create(true)).unwrap();
        assert_eq!(wal.recover().count(), 1); // the log's entry, no record
        assert_eq!(snapshot(dir.path()), before);
        assert_eq!(wal.others(), [dir.path().join("notes.txt")]);

        // A missing directory is not created.
        let missing = dir.path().join("missing");
        let error = ReadOnlyWal::open(&missing, &WalOptions::new().create(true)).unwrap_err();
        assert_eq!(error.kind(), Some(std::io::ErrorKind::NotFound));
        assert!(!missing.exists());
    }

    #[test]
    fn a_writers_directory_reads_as_its_recovery_does() {
        let dir = tempfile::tempdir().unwrap();
        let options = WalOptions::new().create(true).recycle(1).log_size(1024);
        let writer = Wal::open(dir.path(), &options).unwrap().start().unwrap();
        for i in 0..60u32 {
            let ticket = writer.append_durable(&i.to_le_bytes().repeat(20)).unwrap();
            if i == 40 {
                writer.release_before(ticket.position).unwrap();
            }
        }
        // The writer holds the lock: a second writer is refused, a reader is not.
        assert!(matches!(
            Wal::open(dir.path(), &WalOptions::new()),
            Err(WalError::Locked { .. })
        ));
        let before = snapshot(dir.path());
        let mut reader = ReadOnlyWal::open(dir.path(), &WalOptions::new()).unwrap();
        let read: Vec<WalEntry> = reader.recover().map(Result::unwrap).collect();
        // The lock, kept logs and cut files are the WAL's own: not among the others.
        assert!(reader.others().is_empty(), "{:?}", reader.others());
        assert_eq!(snapshot(dir.path()), before);
        writer.close().unwrap();
        let mut wal = Wal::open(dir.path(), &WalOptions::new()).unwrap();
        let recovered: Vec<WalEntry> = wal.recover().map(Result::unwrap).collect();
        assert_eq!(read, recovered);
        // The records from the released log's successor on: consecutive, to the last.
        let records: Vec<Vec<u8>> = read
            .iter()
            .filter_map(|e| match e {
                WalEntry::Record(r) => Some(r.data.clone()),
                _ => None,
            })
            .collect();
        let first = 60 - records.len() as u32;
        assert!(first <= 40, "{first}");
        let want: Vec<Vec<u8>> = (first..60).map(|i| i.to_le_bytes().repeat(20)).collect();
        assert_eq!(records, want);
        assert_eq!(
            reader.logs().iter().map(|l| l.number).collect::<Vec<_>>(),
            wal.logs()
        );
    }
}
