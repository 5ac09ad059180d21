//! [`LogEntry`] and [`LogRecord`]: what the iterators over a log yield, and [`Records`], the
//! iterator over a [`LogFile`](crate::LogFile)'s records.

use std::borrow::Cow;
use std::io;

use crate::error::Error;
use crate::file::{LogBytes, LogFile};
use crate::reader::{Entry, LogReader, LogReaderOptions};
use crate::recovery::{Damage, ReadError};
use crate::source::StdSource;

/// A record, with its place in the log.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LogRecord<'a> {
    /// File offset of the record's first chunk.
    pub offset: u64,
    /// File offset just past its last chunk.
    pub end: u64,
    /// For a record from a [pack](logfmt_core::pack), its index in the pack (the offsets are
    /// the pack's); `None` for a plain record.
    pub index: Option<u32>,
    /// The payload: owned when read from a file ([`LogFile::records`]); from a
    /// [`MappedLog`](crate::MappedLog), a slice of the map for a record in one chunk (or in a
    /// pack in one chunk), a copy for a fragmented one.
    pub data: Cow<'a, [u8]>,
}

impl LogRecord<'_> {
    /// Whether the payload is borrowed (a slice of a map) rather than owned.
    pub fn is_borrowed(&self) -> bool {
        matches!(self.data, Cow::Borrowed(_))
    }
}

/// What [`LogFile::records`] and [`MappedLog::records`](crate::MappedLog::records) yield: a
/// record, or damage the recovery mode reports (reading goes on after it).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LogEntry<'a> {
    /// A record.
    Record(LogRecord<'a>),
    /// Damage the recovery mode reports: where, how many bytes, what.
    Damage(Damage),
}

/// One line: the record's place and length, or the damage's text (where, how many bytes, why).
impl std::fmt::Display for LogEntry<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Record(record) => write!(
                f,
                "a record of {} bytes at offset {}",
                record.data.len(),
                record.offset
            ),
            Self::Damage(damage) => write!(f, "{damage}"),
        }
    }
}

/// What one step of a [`LogReader`] gives an iterator: an entry with its data owned or
/// borrowed (`data` decides), an error, or the end.
pub(crate) enum Step<'a, E> {
    Entry(LogEntry<'a>),
    Damaged(Damage),
    Failed(E),
    End,
}

/// Turns one [`LogReader::next`] result into an iterator's [`Step`]; `data` makes a record's
/// payload (borrowed from a map, or copied).
pub(crate) fn step<'a, E>(
    read: Result<Option<Entry<'_>>, ReadError<E>>,
    data: impl FnOnce(&[u8]) -> Cow<'a, [u8]>,
) -> Step<'a, E> {
    match read {
        Ok(None) => Step::End,
        Ok(Some(Entry::Damage(damage))) => Step::Entry(LogEntry::Damage(damage)),
        Ok(Some(Entry::Record(record))) => Step::Entry(LogEntry::Record(LogRecord {
            offset: record.offset,
            end: record.end,
            index: record.index,
            data: data(record.data),
        })),
        Err(ReadError::Damaged(damage)) => Step::Damaged(damage),
        Err(ReadError::Io(error)) => Step::Failed(error),
        // Only `next_bounded` leaves records unassembled, and the iterators never call it.
        Err(ReadError::NotAssembled(_)) => Step::End,
    }
}

/// The records of a log file: in this module, beside [`Records`], which yields them (the
/// file module knows nothing of entries).
impl LogFile {
    /// The log's records, with LevelDB's policy: a torn tail is the end of the log, every
    /// other damage is reported ([`LogEntry::Damage`](crate::LogEntry::Damage)) and skipped. Each record is owned.
    ///
    /// ```
    /// use logfmt_std::{LogEntry, LogFile, LogWriter, LogWriterOptions};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("000001.log");
    /// let mut writer = LogWriter::create(&path, &LogWriterOptions::new())?;
    /// writer.add_record(b"hello")?;
    /// writer.close()?;
    ///
    /// for entry in LogFile::open(&path)?.records() {
    ///     match entry? {
    ///         LogEntry::Record(record) => assert_eq!(&record.data[..], b"hello"),
    ///         damage => eprintln!("{damage}"),
    ///     }
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn records(&self) -> Records<'_> {
        Records::new(self, &LogReaderOptions::new())
    }

    /// The log's records, read with `options`: another [`RecoveryMode`](crate::RecoveryMode),
    /// a byte range, RocksDB's recyclable format, flash images, …
    pub fn records_with(&self, options: &LogReaderOptions) -> Records<'_> {
        Records::new(self, options)
    }
}

/// The records of a [`LogFile`], as an [`Iterator`] of owned [`LogEntry`]s; made by
/// [`LogFile::records`] and [`LogFile::records_with`].
///
/// A regular file is read up to its length when it was opened. A read error, and damage in
/// [`AbsoluteConsistency`](crate::RecoveryMode::AbsoluteConsistency), is yielded once as an
/// [`Error`] naming the file ([`Error::Damaged`]); then the iterator ends.
#[derive(Debug)]
pub struct Records<'f> {
    file: &'f LogFile,
    reader: LogReader<StdSource<LogBytes<'f>>>,
    done: bool,
}

impl<'f> Records<'f> {
    pub(crate) fn new(file: &'f LogFile, options: &LogReaderOptions) -> Self {
        Self {
            file,
            reader: LogReader::new(file.source(), options),
            done: false,
        }
    }

    /// The reader, for how the log ended ([`ending`](LogReader::ending),
    /// [`tail`](LogReader::tail)) and where it stands.
    pub fn reader(&self) -> &LogReader<StdSource<LogBytes<'f>>> {
        &self.reader
    }

    fn error(&self, read: Result<Damage, io::Error>) -> Error {
        match read {
            Ok(first) => Error::Damaged {
                path: self.file.path().to_path_buf(),
                first,
                count: 1,
            },
            Err(error) => self.file.read_error(error),
        }
    }
}

impl Iterator for Records<'_> {
    type Item = Result<LogEntry<'static>, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let failed = match step(self.reader.next(), |data| Cow::Owned(data.to_vec())) {
            Step::Entry(entry) => return Some(Ok(entry)),
            Step::End => {
                self.done = true;
                return None;
            }
            Step::Damaged(damage) => Ok(damage),
            Step::Failed(error) => Err(error),
        };
        self.done = true;
        Some(Err(self.error(failed)))
    }
}
