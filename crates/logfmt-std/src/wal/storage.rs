//! [`Storage`]: the file operations a [`Wal`](super::Wal) makes, the seam through which a test
//! injects crashes and stalls ([`CrashableStorage`](super::CrashableStorage)); [`OsStorage`]:
//! the operating system's files.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

use crate::atomic::sync_directory;
use crate::error::Error;
use crate::group::SyncHandle;
use crate::lock::{LockWait, open_locked};
use crate::writer::SyncWrite;

/// The file operations of a [`Wal`](super::Wal): everything it does to a directory and its
/// logs goes through one of these, so that another implementation can lose what was not
/// synced at a simulated crash, or make a sync stall
/// ([`CrashableStorage`](super::CrashableStorage)).
///
/// A log is written through [`File`](Self::File) (positioned at its start) and synced from
/// any thread through [`Handle`](Self::Handle), as [`GroupWriter`](crate::GroupWriter) does.
pub trait Storage: Send + Sync + 'static {
    /// A log open to write.
    type File: SyncWrite + Send + std::fmt::Debug + 'static;
    /// Syncs a log open to write, from any thread.
    type Handle: SyncHandle + std::fmt::Debug + 'static;
    /// A log open to read.
    type Reader: Read + Send;
    /// The directory's writer lock, held until dropped.
    type Lock: Send + Sync + std::fmt::Debug + 'static;

    /// Creates the directory and its parents, if missing.
    ///
    /// # Errors
    /// The operating system's.
    fn create_dir(&self, dir: &Path) -> io::Result<()>;

    /// Takes the directory's writer lock; `None` if another writer holds it.
    ///
    /// # Errors
    /// The operating system's (the directory does not exist, …).
    fn lock(&self, dir: &Path) -> io::Result<Option<Self::Lock>>;

    /// The names of the directory's entries.
    ///
    /// # Errors
    /// The operating system's.
    fn list(&self, dir: &Path) -> io::Result<Vec<String>>;

    /// Creates a new, empty file (failing if it exists), open to write from its start.
    ///
    /// # Errors
    /// The operating system's.
    fn create(&self, path: &Path) -> io::Result<(Self::File, Self::Handle)>;

    /// Opens an existing file to write it again from its start, its bytes and length kept
    /// (a recycled log, overwritten in place).
    ///
    /// # Errors
    /// The operating system's.
    fn reuse(&self, path: &Path) -> io::Result<(Self::File, Self::Handle)>;

    /// Opens a file to read it from its start.
    ///
    /// # Errors
    /// The operating system's.
    fn open(&self, path: &Path) -> io::Result<Self::Reader>;

    /// Cuts a file to `len` bytes and makes that durable.
    ///
    /// # Errors
    /// The operating system's.
    fn truncate(&self, path: &Path, len: u64) -> io::Result<()>;

    /// Writes `bytes` at `offset` of an existing file, and makes them durable.
    ///
    /// # Errors
    /// The operating system's.
    fn write_at(&self, path: &Path, offset: u64, bytes: &[u8]) -> io::Result<()>;

    /// Renames a file (durable once the directory is synced).
    ///
    /// # Errors
    /// The operating system's.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;

    /// Removes a file (durable once the directory is synced).
    ///
    /// # Errors
    /// The operating system's.
    fn remove(&self, path: &Path) -> io::Result<()>;

    /// Makes the directory's entries durable: files created, renamed and removed.
    ///
    /// # Errors
    /// The operating system's.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
}

/// The operating system's files: logs written in place and synced with `fdatasync`, new
/// logs' space reserved ahead of their end (`fallocate` on Linux), the directory synced with
/// `fsync`, the lock an exclusive `flock` on the directory's `LOCK` file.
///
/// ```
/// use logfmt_std::wal::{OsStorage, Storage};
///
/// let dir = tempfile::tempdir()?;
/// let lock = OsStorage.lock(dir.path())?;
/// assert!(lock.is_some());
/// assert!(OsStorage.lock(dir.path())?.is_none()); // one writer at a time
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct OsStorage;

impl Storage for OsStorage {
    type File = File;
    type Handle = File;
    type Reader = File;
    type Lock = File;

    fn create_dir(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)
    }

    fn lock(&self, dir: &Path) -> io::Result<Option<File>> {
        let path = dir.join(super::names::LOCK);
        let open = || {
            OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map(Some)
                .map_err(|e| Error::io(crate::error::Operation::Lock, &path, e))
        };
        match open_locked(&path, LockWait::Refuse, open) {
            Ok(file) => Ok(file),
            Err(Error::Locked { .. }) => Ok(None),
            Err(Error::Io { source, .. }) => Err(source),
            Err(other) => Err(io::Error::other(other.to_string())),
        }
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            if let Ok(name) = entry?.file_name().into_string() {
                names.push(name);
            }
        }
        Ok(names)
    }

    fn create(&self, path: &Path) -> io::Result<(File, File)> {
        let file = OpenOptions::new().write(true).create_new(true).open(path)?;
        let handle = file.try_clone()?;
        Ok((file, handle))
    }

    fn reuse(&self, path: &Path) -> io::Result<(File, File)> {
        let file = OpenOptions::new().write(true).open(path)?;
        let handle = file.try_clone()?;
        Ok((file, handle))
    }

    fn open(&self, path: &Path) -> io::Result<File> {
        File::open(path)
    }

    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        let file = OpenOptions::new().write(true).open(path)?;
        file.set_len(len)?;
        file.sync_all()
    }

    fn write_at(&self, path: &Path, offset: u64, bytes: &[u8]) -> io::Result<()> {
        use std::io::{Seek, SeekFrom, Write};
        let mut file = OpenOptions::new().write(true).open(path)?;
        file.seek(SeekFrom::Start(offset))?;
        file.write_all(bytes)?;
        file.sync_data()
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        sync_directory(dir)
    }
}
