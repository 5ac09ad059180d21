//! Safe append: continuing a log file only where its last complete record ends.
//!
//! LevelDB continues a log at the file's length (`log::Writer(dest, dest_length)`). If the
//! file ends in a record torn by a crash, the new records land after the torn bytes, and
//! LevelDB's reader, resynchronising past them, silently loses most of them
//! (google/leveldb#1287: 40168 of 40177 cut points of a 40 KB log lose appended records, nearly
//! all without a report). Here the log is read first, and:
//!
//! - it ends cleanly (or in a block trailer): the writer continues at its length, byte for
//!   byte as LevelDB would;
//! - it ends in a torn or unwritten tail: refused ([`Error::TornTail`]), unless
//!   [`TornTailPolicy::Truncate`] is given; then exactly those bytes are cut off
//!   (`set_len`) and the writer continues there;
//! - a recyclable log that ends at a record of an earlier use of the file (a recycled file,
//!   or a file of another log number) is treated the same way: refused
//!   ([`Error::StaleTail`]) or, with [`TornTailPolicy::Truncate`], cut off there — records
//!   appended after stale bytes would never be read;
//! - anything else is damaged: refused ([`Error::Damaged`]). A log is never continued after
//!   garbage: copy its records into a new log instead.

use std::fs::{File, OpenOptions};
use std::path::Path;

use logfmt_core::{Format, LogEnd, ReadFormat, ReadOptions};

use crate::error::{Error, Operation};
use crate::file::{LogFile, check_kind, check_writable_kind, inspect};
use crate::reader::{Bounded, LogReader, ReaderOptions};
use crate::recovery::{Damage, DamageKind, Ending, ReadError, RecoveryMode};
use crate::source::StdSource;
use crate::writer::{LogWriter, WriterOptions};

/// What [`LogWriter::append`] does with a log that ends in a torn or unwritten tail (or, in a
/// recyclable log, in the stale bytes of an earlier use of the file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum TornTailPolicy {
    /// Refuse with [`Error::TornTail`] (or [`Error::StaleTail`]), leaving the file unchanged.
    /// The default.
    #[default]
    Refuse,
    /// Cut the torn bytes off (no complete record is among them) and continue there; in a
    /// recyclable log, cut the stale bytes of an earlier use off likewise.
    Truncate,
}

/// How [`LogWriter::append`] opens a log.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AppendOptions {
    /// How the writer writes. Its [`start`](WriterOptions::start) is ignored: it is where the
    /// last complete record ends.
    pub writer: WriterOptions,
    /// What to do with a torn tail. Default [`TornTailPolicy::Refuse`].
    pub torn_tail: TornTailPolicy,
    /// Create the file if it does not exist. Default `true`.
    pub create: bool,
}

impl Default for AppendOptions {
    fn default() -> Self {
        Self {
            writer: WriterOptions::new(),
            torn_tail: TornTailPolicy::Refuse,
            create: true,
        }
    }
}

impl AppendOptions {
    /// The defaults: refuse a torn tail, create a missing log.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`writer`](Self::writer).
    #[must_use]
    pub fn writer(mut self, writer: WriterOptions) -> Self {
        self.writer = writer;
        self
    }

    /// Sets [`torn_tail`](Self::torn_tail).
    #[must_use]
    pub fn torn_tail(mut self, policy: TornTailPolicy) -> Self {
        self.torn_tail = policy;
        self
    }

    /// Sets [`create`](Self::create).
    #[must_use]
    pub fn create(mut self, create: bool) -> Self {
        self.create = create;
        self
    }
}

/// What [`LogWriter::append`] found at the end of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct AppendReport {
    /// Complete records in the log.
    pub records: u64,
    /// The file's length when opened.
    pub len: u64,
    /// Where the new records go: the file's length now.
    pub start: u64,
    /// The torn tail that was cut off, if any.
    pub truncated: Option<Damage>,
    /// The stale bytes of an earlier use of the file that were cut off, if any (a recyclable
    /// log).
    pub stale: Option<StaleTail>,
}

/// The bytes after the end of a recyclable log that an earlier use of the file left (RocksDB
/// recycles obsolete log files without truncating them): they begin with, or lead up to, a
/// chunk of another log number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StaleTail {
    /// Where this log ends and the stale bytes begin.
    pub offset: u64,
    /// How many there are, to the end of the file.
    pub bytes: u64,
    /// The log number of the stale chunk that ends the log.
    pub log_number: u32,
}

impl LogWriter<File> {
    /// Creates a new log at `path`; a file that exists and is not empty is refused
    /// ([`Error::AlreadyExists`]) and left unchanged.
    ///
    /// # Errors
    /// As for [`LogFile::create`].
    pub fn create(path: impl AsRef<Path>, options: &WriterOptions) -> Result<Self, Error> {
        let file = LogFile::create(path)?.into_file();
        Ok(Self::new(file, &options.clone().start(0)))
    }

    /// Creates a new log at `path`, emptying the file if it exists.
    ///
    /// # Errors
    /// As for [`LogFile::overwrite`].
    pub fn overwrite(path: impl AsRef<Path>, options: &WriterOptions) -> Result<Self, Error> {
        let file = LogFile::overwrite(path)?.into_file();
        Ok(Self::new(file, &options.clone().start(0)))
    }

    /// Opens the log at `path` to continue it, safely: it is read to the end first, and
    /// continued only where its last complete record ends.
    ///
    /// LevelDB continues a log at the file's length. If the file ends in a record torn by a
    /// crash, the new records land after the torn bytes, and LevelDB's reader, resynchronising
    /// past them, silently loses most of them (google/leveldb#1287). Here:
    ///
    /// - a log that ends cleanly (or in a block trailer) is continued at its length, byte for
    ///   byte as LevelDB would;
    /// - a log that ends in a torn or unwritten tail is refused ([`Error::TornTail`]), unless
    ///   [`TornTailPolicy::Truncate`] is given: then exactly those bytes are cut off
    ///   (`set_len`) and the log is continued there;
    /// - any other damage is refused ([`Error::Damaged`]): a log is never continued after
    ///   garbage. Copy its records into a new log instead.
    ///
    /// No other process may write the log meanwhile.
    ///
    /// ```
    /// use logfmt_std::{AppendOptions, Error, LogWriter, TornTailPolicy, WriterOptions};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("000001.log");
    /// let mut writer = LogWriter::create(&path, &WriterOptions::new())?;
    /// writer.add_record(b"complete")?;
    /// writer.add_record(&[9u8; 100])?;
    /// writer.close()?;
    /// // A crash tore the second record.
    /// std::fs::File::options().write(true).open(&path)?.set_len(60)?;
    ///
    /// // Refused by default, and the file is left as it is.
    /// let refused = LogWriter::append(&path, &AppendOptions::new()).err();
    /// assert!(matches!(refused, Some(Error::TornTail { offset: 15, bytes: 45, .. })));
    ///
    /// // Truncating the torn bytes is explicit.
    /// let options = AppendOptions::new().torn_tail(TornTailPolicy::Truncate);
    /// let (mut writer, report) = LogWriter::append(&path, &options)?;
    /// assert_eq!((report.records, report.start), (1, 15));
    /// writer.add_record(b"after the crash")?;
    /// writer.close()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::TornTail`] (file unchanged) unless truncating; [`Error::Damaged`] (file
    /// unchanged) for any other damage; [`Error::IsADirectory`], [`Error::NotAFile`],
    /// [`Error::Io`].
    pub fn append(
        path: impl AsRef<Path>,
        options: &AppendOptions,
    ) -> Result<(Self, AppendReport), Error> {
        let path = path.as_ref();
        check_writable_kind(path)?;
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(options.create)
            .open(path)
            .map_err(|e| Error::io(Operation::Create, path, e))?;
        let meta = inspect(&file, path)?;
        check_kind(&meta, path)?;
        let len = meta.len();
        let found = survey(&file, options.writer.format)
            .map_err(|e| Error::io(Operation::Read, path, e))?;
        if let Some(first) = found.first_damage {
            return Err(Error::Damaged {
                path: path.into(),
                first,
                count: found.damages,
            });
        }
        if let Some((offset, log_number)) = found.stale {
            let tail = StaleTail {
                offset,
                bytes: len.saturating_sub(offset),
                log_number,
            };
            if options.torn_tail == TornTailPolicy::Refuse {
                return Err(Error::StaleTail {
                    path: path.into(),
                    offset,
                    bytes: tail.bytes,
                    log_number,
                });
            }
            file.set_len(offset)
                .map_err(|e| Error::io(Operation::Truncate, path, e))?;
            let writer = Self::new(file, &options.writer.clone().start(offset));
            let report = AppendReport {
                records: found.records,
                len,
                start: offset,
                truncated: None,
                stale: Some(tail),
            };
            return Ok((writer, report));
        }
        let (start, truncated) = match (found.tail, options.torn_tail) {
            (None, _) => (len, None),
            (Some(tail), TornTailPolicy::Refuse) => {
                return Err(Error::TornTail {
                    path: path.into(),
                    offset: tail.offset,
                    bytes: tail.bytes,
                });
            }
            (Some(tail), TornTailPolicy::Truncate) => {
                file.set_len(tail.offset)
                    .map_err(|e| Error::io(Operation::Truncate, path, e))?;
                (tail.offset, Some(tail))
            }
        };
        let writer = Self::new(file, &options.writer.clone().start(start));
        let report = AppendReport {
            records: found.records,
            len,
            start,
            truncated,
            stale: None,
        };
        Ok((writer, report))
    }
}

/// What reading a log before appending found.
#[derive(Debug)]
struct Survey {
    records: u64,
    first_damage: Option<Damage>,
    damages: u64,
    tail: Option<Damage>,
    /// A recyclable log ending at a stale record: where, and its log number.
    stale: Option<(u64, u32)>,
}

fn survey(file: &File, format: Format) -> std::io::Result<Survey> {
    let read_format = match format {
        Format::Legacy => ReadFormat::Legacy,
        Format::Recyclable { log_number } => ReadFormat::Recyclable { log_number },
    };
    let options = ReaderOptions::new()
        .read(ReadOptions::new().format(read_format))
        .recovery(RecoveryMode::SkipAnyCorruptedRecords);
    let mut reader = LogReader::new(StdSource::new(file), &options);
    let mut first_damage = None;
    let mut damages = 0;
    loop {
        // Records are only counted: none is assembled.
        match reader.next_bounded(0) {
            Ok(None) => break,
            Ok(Some(Bounded::Damage(damage))) if damage.kind != DamageKind::TornTail => {
                damages += 1;
                first_damage.get_or_insert(damage);
            }
            Ok(Some(_)) => {}
            Err(ReadError::Io(e)) => return Err(e),
            Err(ReadError::Damaged(damage)) => {
                damages += 1;
                first_damage.get_or_insert(damage);
                break;
            }
            Err(_) => break,
        }
    }
    let stale = match reader.ending() {
        Some(Ending::Log(LogEnd::OldRecord { offset, log_number })) => Some((offset, log_number)),
        _ => None,
    };
    Ok(Survey {
        records: reader.records(),
        first_damage,
        damages,
        tail: reader.tail(),
        stale,
    })
}
