//! [`WalError`]: what can go wrong with a WAL directory, each naming the directory, log or
//! file concerned.

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::error::LogWriterError;
use crate::escape::EscapedPath;
use crate::recovery::Damage;

/// What a [`Wal`](super::Wal) was doing when the operating system said no.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WalOperation {
    /// Creating the directory.
    CreateDir,
    /// Taking the directory's lock.
    Lock,
    /// Listing the directory.
    List,
    /// Reading a log.
    Read,
    /// Creating a new log.
    Create,
    /// Taking a released log to write it again.
    Reuse,
    /// Cutting the torn tail off the last log.
    Truncate,
    /// Ending a reused log.
    Write,
    /// Renaming a log (to keep it for reuse, or to reuse it).
    Rename,
    /// Removing a released log.
    Remove,
    /// Syncing the directory.
    SyncDir,
}

impl fmt::Display for WalOperation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::CreateDir => "cannot create the WAL directory",
            Self::Lock => "cannot lock the WAL directory",
            Self::List => "cannot list the WAL directory",
            Self::Read => "cannot read log",
            Self::Create => "cannot create log",
            Self::Reuse => "cannot reuse log",
            Self::Truncate => "cannot cut the torn tail off log",
            Self::Write => "cannot end log",
            Self::Rename => "cannot rename log",
            Self::Remove => "cannot remove log",
            Self::SyncDir => "cannot sync the WAL directory",
        })
    }
}

/// An error of a [`Wal`](super::Wal). The [`Display`](fmt::Display) text is one line; the
/// operating system's reason, if any, is the [`source`](std::error::Error::source).
#[derive(Debug)]
#[non_exhaustive]
pub enum WalError {
    /// An I/O operation failed.
    Io {
        /// What was being done.
        operation: WalOperation,
        /// The directory or file.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// Another writer holds the directory's lock.
    Locked {
        /// The directory.
        dir: PathBuf,
    },
    /// Damage that [`RecoveryMode::AbsoluteConsistency`](crate::RecoveryMode) refuses.
    Damaged {
        /// The log's number.
        log: u64,
        /// The damage, its offset in that log.
        damage: Damage,
    },
    /// [`RecoveryMode::PointInTimeRecovery`](crate::RecoveryMode) stopped at this damage
    /// before the end of the last log: records after it could not be recovered, and a new
    /// record written after them could not be either. The directory is left as it is; read it
    /// with another mode to salvage what follows, then release or remove the logs.
    Stopped {
        /// The log's number.
        log: u64,
        /// The damage, its offset in that log.
        damage: Damage,
    },
    /// Writing a log failed (the WAL accepts nothing more).
    Write {
        /// The log's number.
        log: u64,
        /// The writer's error.
        source: LogWriterError,
    },
}

impl WalError {
    pub(crate) fn io(operation: WalOperation, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::Io {
            operation,
            path: path.into(),
            source,
        }
    }

    /// The I/O error kind behind this error, if any.
    pub fn kind(&self) -> Option<io::ErrorKind> {
        match self {
            Self::Io { source, .. } => Some(source.kind()),
            Self::Write { source, .. } => source.kind(),
            _ => None,
        }
    }
}

impl fmt::Display for WalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io {
                operation, path, ..
            } => write!(f, "{operation}: {}", EscapedPath::new(path)),
            Self::Locked { dir } => write!(
                f,
                "another writer holds the WAL directory's lock: {}",
                EscapedPath::new(dir)
            ),
            Self::Damaged { log, damage } => write!(f, "log {log}: {damage}"),
            Self::Stopped { log, damage } => write!(
                f,
                "point-in-time recovery stopped in log {log} before the end of the last log \
                 (a new record would not be recovered): {damage}"
            ),
            Self::Write { log, source } => write!(f, "log {log}: {source}"),
        }
    }
}

impl std::error::Error for WalError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            Self::Write { source, .. } => Some(source),
            _ => None,
        }
    }
}
