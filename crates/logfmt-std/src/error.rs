//! The errors of log files ([`Error`]) and of a [`LogWriter`](crate::LogWriter)
//! ([`LogWriterError`]).

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use logfmt_core::Format;

use crate::escape::EscapedPath;
use crate::recovery::Damage;

/// What a [`LogFile`](crate::LogFile) was doing when the operating system said no.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Operation {
    /// Opening a log to read it.
    Open,
    /// Creating (or opening to write) a log.
    Create,
    /// Looking up a file's type and length.
    Inspect,
    /// Reading a log.
    Read,
    /// Writing a log.
    Write,
    /// Emptying a log that is being overwritten.
    Truncate,
    /// Making written data durable (`fsync`).
    Sync,
    /// Taking the log's writer lock.
    Lock,
    /// Putting a new log in place (renaming it over the destination), and syncing the
    /// directory.
    Rename,
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Open => "cannot open log",
            Self::Create => "cannot create log",
            Self::Inspect => "cannot inspect log",
            Self::Read => "cannot read log",
            Self::Write => "cannot write log",
            Self::Truncate => "cannot truncate log",
            Self::Sync => "cannot sync log",
            Self::Lock => "cannot lock log",
            Self::Rename => "cannot put the new log in place",
        })
    }
}

/// An error opening, reading or writing a log file. Every variant names the file.
///
/// The [`Display`](fmt::Display) text is one line, `<what>: <path>`; the operating system's
/// reason, if any, is the [`source`](std::error::Error::source).
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// An I/O operation failed.
    Io {
        /// What was being done.
        operation: Operation,
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// The path is a directory.
    IsADirectory {
        /// The path.
        path: PathBuf,
    },
    /// The path exists but is not a regular file (a device, a pipe, a socket), where a regular
    /// file is needed.
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// The file exists and is not empty; it was left unchanged.
    AlreadyExists {
        /// The path.
        path: PathBuf,
        /// Its length in bytes.
        len: u64,
    },
    /// The log ends in a torn or unwritten tail: bytes after the last complete record that
    /// hold no complete record (a crash while writing). Appending after them would hide the new
    /// records from LevelDB's reader (google/leveldb#1287), so the log was left unchanged.
    /// Truncating it at `offset` loses no complete record.
    TornTail {
        /// The path.
        path: PathBuf,
        /// Where the torn bytes begin: the end of the last complete record.
        offset: u64,
        /// How many there are, to the end of the file.
        bytes: u64,
    },
    /// A recyclable log ends at a chunk of another log number, followed by the stale bytes
    /// of an earlier use of the file (RocksDB recycles log files without truncating them).
    /// Records appended after them would never be read, so the log was left unchanged.
    /// Truncating it at `offset` loses no record of this log.
    StaleTail {
        /// The path.
        path: PathBuf,
        /// Where this log ends and the stale bytes begin.
        offset: u64,
        /// How many there are, to the end of the file.
        bytes: u64,
        /// The log number of the stale chunk.
        log_number: u32,
    },
    /// The log holds damage other than a torn tail (or, read with
    /// [`RecoveryMode::AbsoluteConsistency`](crate::RecoveryMode::AbsoluteConsistency), any
    /// damage). It was left unchanged: copy its records into a clean log instead.
    Damaged {
        /// The path.
        path: PathBuf,
        /// The first damage found.
        first: Damage,
        /// How many damaged regions were found.
        count: u64,
    },
    /// Writing the log failed.
    Write {
        /// The path.
        path: PathBuf,
        /// What failed.
        source: LogWriterError,
    },
    /// Another writer holds the log's lock (see [`LockWait`](crate::LockWait)); nothing was
    /// changed.
    Locked {
        /// The path.
        path: PathBuf,
        /// How long the lock was waited for, if at all.
        waited: Option<Duration>,
    },
    /// The log to continue is not in the format asked for: another chunk format, or a
    /// recyclable log whose first chunk carries another log number. It was left unchanged.
    FormatMismatch {
        /// The path.
        path: PathBuf,
        /// The log's own format (its first chunk's).
        found: Format,
        /// The format asked for; `None` for a recyclable log of any log number.
        wanted: Option<Format>,
    },
    /// A recyclable log is to be written, and no log number was given or found in the file's
    /// name (as in `000042.log`).
    NoLogNumber {
        /// The path.
        path: PathBuf,
    },
    /// A record read a second time (see [`RecordStream`](crate::RecordStream)) is not what
    /// was read the first time: the log changed in between.
    Changed {
        /// The path.
        path: PathBuf,
        /// The record's offset.
        offset: u64,
    },
}

impl Error {
    /// An [`Io`](Self::Io) error.
    pub fn io(operation: Operation, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::Io {
            operation,
            path: path.into(),
            source,
        }
    }

    /// The file concerned.
    pub fn path(&self) -> &std::path::Path {
        match self {
            Self::Io { path, .. }
            | Self::IsADirectory { path }
            | Self::NotAFile { path }
            | Self::AlreadyExists { path, .. }
            | Self::TornTail { path, .. }
            | Self::StaleTail { path, .. }
            | Self::Damaged { path, .. }
            | Self::Write { path, .. }
            | Self::Locked { path, .. }
            | Self::FormatMismatch { path, .. }
            | Self::NoLogNumber { path }
            | Self::Changed { path, .. } => path,
        }
    }
}

/// `legacy`, or `recyclable (log number N)`.
fn describe(format: Format) -> String {
    match format {
        Format::Legacy => "legacy".into(),
        Format::Recyclable { log_number } => format!("recyclable (log number {log_number})"),
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io {
                operation, path, ..
            } => write!(f, "{operation}: {}", EscapedPath::new(path)),
            Self::IsADirectory { path } => write!(f, "is a directory: {}", EscapedPath::new(path)),
            Self::NotAFile { path } => write!(f, "not a regular file: {}", EscapedPath::new(path)),
            Self::AlreadyExists { path, len } => {
                write!(
                    f,
                    "log exists and is not empty ({len} bytes): {}",
                    EscapedPath::new(path)
                )
            }
            Self::TornTail {
                path,
                offset,
                bytes,
            } => write!(
                f,
                "log ends in {bytes} torn bytes at offset {offset} that hold no complete record: {}",
                EscapedPath::new(path)
            ),
            Self::StaleTail {
                path,
                offset,
                bytes,
                log_number,
            } => write!(
                f,
                "log ends at offset {offset} at a record of log number {log_number}, \
                 followed by {bytes} stale bytes of an earlier use of the file: {}",
                EscapedPath::new(path)
            ),
            Self::Damaged { path, first, count } => {
                write!(f, "log is damaged ({first}")?;
                if *count > 1 {
                    write!(f, "; {count} damaged regions in all")?;
                }
                write!(f, "): {}", EscapedPath::new(path))
            }
            Self::Write { path, .. } => write!(f, "cannot write log: {}", EscapedPath::new(path)),
            Self::Locked { path, waited } => {
                write!(f, "another writer holds the log's lock")?;
                if let Some(waited) = waited {
                    write!(f, " (waited {:.1} s)", waited.as_secs_f64())?;
                }
                write!(f, ": {}", EscapedPath::new(path))
            }
            Self::FormatMismatch {
                path,
                found,
                wanted,
            } => {
                let wanted = match wanted {
                    Some(format) => describe(*format),
                    None => "recyclable".into(),
                };
                write!(
                    f,
                    "log is {}, not {wanted} as asked: {}",
                    describe(*found),
                    EscapedPath::new(path)
                )
            }
            Self::NoLogNumber { path } => write!(
                f,
                "the log number of a recyclable log is not known (none given, none in the \
                 file's name as in 000042.log): {}",
                EscapedPath::new(path)
            ),
            Self::Changed { path, offset } => write!(
                f,
                "the log changed while it was read: the record at offset {offset} no longer \
                 reads the same: {}",
                EscapedPath::new(path)
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            Self::Write { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// What a [`LogWriter`](crate::LogWriter) was doing when the destination failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WriteOperation {
    /// Writing bytes.
    Write,
    /// Flushing written bytes.
    Flush,
    /// Making them durable.
    Sync,
}

impl fmt::Display for WriteOperation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Write => "write",
            Self::Flush => "flush",
            Self::Sync => "sync",
        })
    }
}

/// A [`LogWriter`](crate::LogWriter) error.
///
/// The first failure is [`Failed`](Self::Failed); every later call gets
/// [`Poisoned`](Self::Poisoned) with the same original error, because after a failed write
/// or sync what the destination holds is unknown.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum LogWriterError {
    /// The destination failed: the record being added (and any not yet synced) may or may not
    /// have reached it.
    Failed {
        /// What was being done.
        operation: WriteOperation,
        /// The operating system's error.
        source: Arc<io::Error>,
    },
    /// The writer failed earlier and accepts nothing more. Carries that original failure.
    Poisoned {
        /// What was being done when it failed.
        operation: WriteOperation,
        /// The original error.
        source: Arc<io::Error>,
    },
    /// [`pad_to`](crate::LogWriter::pad_to) was given an alignment that is not a power of two up
    /// to the block size.
    BadAlignment {
        /// The alignment asked for.
        align: usize,
    },
    /// Packing ([`LogWriterOptions::pack`](crate::LogWriterOptions::pack)) asked for in a recyclable
    /// log: packs are written in legacy logs only.
    PackInRecyclableLog,
}

impl LogWriterError {
    /// The kind of the original I/O error, if there is one.
    pub fn kind(&self) -> Option<io::ErrorKind> {
        match self {
            Self::Failed { source, .. } | Self::Poisoned { source, .. } => Some(source.kind()),
            Self::BadAlignment { .. } | Self::PackInRecyclableLog => None,
        }
    }

    /// Whether this is the refusal of a writer that failed earlier.
    pub fn is_poisoned(&self) -> bool {
        matches!(self, Self::Poisoned { .. })
    }
}

impl fmt::Display for LogWriterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Failed { operation, .. } => write!(f, "{operation} failed"),
            Self::Poisoned { operation, .. } => write!(
                f,
                "the log writer refuses more records: an earlier {operation} failed"
            ),
            Self::BadAlignment { align } => write!(
                f,
                "padding alignment {align} is not a power of two no larger than a block"
            ),
            Self::PackInRecyclableLog => f.write_str("packs are written in legacy logs only"),
        }
    }
}

impl std::error::Error for LogWriterError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Failed { source, .. } | Self::Poisoned { source, .. } => Some(&**source),
            Self::BadAlignment { .. } | Self::PackInRecyclableLog => None,
        }
    }
}
