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
//!   (`set_len`) and the writer continues there. Bytes other than zeros in the last 7 to 10
//!   bytes of a block (a recyclable log's trailer) are such a tail too: a reader passes over
//!   them at the end of the file, but once the block is complete LevelDB's and RocksDB's
//!   readers take them for a header, and a point-in-time recovery would stop there, before
//!   every appended record;
//! - a recyclable log that ends at a record of an earlier use of the file (a recycled file,
//!   or a file of another log number) is treated the same way: refused
//!   ([`Error::StaleTail`]) or, with [`TornTailPolicy::Truncate`], cut off there — records
//!   appended after stale bytes would never be read;
//! - anything else is damaged: refused ([`Error::Damaged`]). A log is never continued after
//!   garbage: copy its records into a new log instead.
//!
//! The log is read once, and its own format decides how it is continued ([`AppendFormat`]):
//! its first chunk's format and log number, never the number in the file's name, which only
//! names the log number of a new or empty one. Bytes are only ever called stale when a chunk
//! of the log's own number precedes them.

use std::fs::{File, OpenOptions};
use std::path::Path;

use logfmt_core::{
    BLOCK_SIZE, Format, ReadOptions,
    parts::{ChunkFormat, HEADER_SIZE, RECYCLABLE_HEADER_SIZE, ReadFormat},
};

use crate::append_policy::{AppendFormat, TornTailPolicy};
use crate::compression::Compression;
use crate::create::missing;
use crate::error::{Error, Operation};
use crate::file::{
    check_kind, check_writable_kind, inspect, log_number_in_name, recyclable_log_number,
};
use crate::lock::open_locked;
use crate::reader::{Bounded, LogReader, LogReaderOptions};
use crate::recovery::{Damage, DamageKind, ReadError, RecoveryMode};
use crate::source::StdSource;
use crate::split::ReadAt;
use crate::stale::StaleTail;
use crate::writer::{LogWriter, LogWriterOptions};

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
    /// The format the new records are written in.
    pub format: Format,
}

impl LogWriter<File> {
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
    /// The log is continued in the format [`LogWriterOptions::append_format`] says, checked against the
    /// log's own (its first chunk's).
    ///
    /// The log's writer lock is taken before it is read, and held until the writer (or the
    /// file its [`close`](Self::close) gives back) is dropped: a second writer is refused
    /// ([`Error::Locked`]) or waits ([`LogWriterOptions::lock_wait`]). Readers are not locked
    /// out; they see the log grow.
    ///
    /// ```
    /// use logfmt_std::{Error, LogWriter, LogWriterOptions, TornTailPolicy};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("000001.log");
    /// let mut writer = LogWriter::create(&path, &LogWriterOptions::new())?;
    /// writer.add_record(b"complete")?;
    /// writer.add_record(&[9u8; 100])?;
    /// writer.close()?;
    /// // A crash tore the second record.
    /// std::fs::File::options().write(true).open(&path)?.set_len(60)?;
    ///
    /// // Refused by default, and the file is left as it is.
    /// let refused = LogWriter::append(&path, &LogWriterOptions::new()).err();
    /// assert!(matches!(refused, Some(Error::TornTail { offset: 15, bytes: 45, .. })));
    ///
    /// // Truncating the torn bytes is explicit.
    /// let options = LogWriterOptions::new().torn_tail(TornTailPolicy::Truncate);
    /// let (mut writer, report) = LogWriter::append(&path, &options)?;
    /// assert_eq!((report.records, report.start), (1, 15));
    /// writer.add_record(b"after the crash")?;
    /// writer.close()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::TornTail`] (file unchanged) unless truncating; [`Error::Damaged`] (file
    /// unchanged) for any other damage; [`Error::FormatMismatch`] and [`Error::NoLogNumber`]
    /// (file unchanged); [`Error::Locked`]; [`Error::IsADirectory`], [`Error::NotAFile`],
    /// [`Error::Io`].
    pub fn append(
        path: impl AsRef<Path>,
        options: &LogWriterOptions,
    ) -> Result<(Self, AppendReport), Error> {
        let path = path.as_ref();
        check_writable_kind(path)?;
        let file = open_locked(path, options.lock_wait, || {
            OpenOptions::new()
                .read(true)
                .append(true)
                .create(options.create_missing)
                .open(path)
                .map(Some)
                .map_err(|e| Error::io(Operation::Create, path, e))
        })?
        .ok_or_else(|| Error::io(Operation::Create, path, missing()))?;
        let meta = inspect(&file, path)?;
        check_kind(&meta, path)?;
        let len = meta.len();
        let found = survey(&file, len).map_err(|e| Error::io(Operation::Read, path, e))?;
        let format = continued_format(path, options, found.own)?;
        let options = &continued_compression(options, found.compression, len);
        if let Some(first) = found.first_damage {
            return Err(Error::Damaged {
                path: path.into(),
                first,
                count: found.damages,
            });
        }
        if let Some(tail) = found.stale {
            if options.torn_tail == TornTailPolicy::Refuse {
                return Err(Error::StaleTail {
                    path: path.into(),
                    offset: tail.offset,
                    bytes: tail.bytes,
                    log_number: tail.log_number,
                });
            }
            file.set_len(tail.offset)
                .map_err(|e| Error::io(Operation::Truncate, path, e))?;
            let writer = Self::new(file, &options.continuing(format, tail.offset));
            let report = AppendReport {
                records: found.records,
                len,
                start: tail.offset,
                truncated: None,
                stale: Some(tail),
                format,
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
        let writer = Self::new(file, &options.continuing(format, start));
        let report = AppendReport {
            records: found.records,
            len,
            start,
            truncated,
            stale: None,
            format,
        };
        Ok((writer, report))
    }
}

/// What a log file holds after a write to it failed (see [`LogWriter::kept`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Kept {
    /// Complete records in the file from the offset asked about.
    pub records: u64,
    /// Where the last of them ends (the offset asked about if there is none): the log can be
    /// continued there.
    pub end: u64,
    /// The file's length; bytes past [`end`](Self::end) are a torn tail.
    pub len: u64,
    /// Whether what the file holds was synced (made durable) after the failure.
    pub synced: bool,
}

impl LogWriter<File> {
    /// After a failure, what the log file holds from `from` (where this writer started, as
    /// [`AppendReport::start`] says): the file is synced (what reached it is made durable if
    /// the disk allows it) and read back, and its complete records counted. Records the
    /// writer accepted are in the file if and only if they are counted here: a failed write
    /// can leave a part of a record, a torn tail that [`TornTailPolicy::Truncate`] cuts off.
    ///
    /// # Errors
    /// Reading the file failed, or the writer was closed.
    pub fn kept(&self, from: u64) -> std::io::Result<Kept> {
        let file = self
            .get_ref()
            .ok_or_else(|| std::io::Error::other("the log writer was closed"))?;
        let synced = file.sync_data().is_ok();
        let len = file.metadata()?.len();
        let read = ReadOptions::new()
            .format(ReadFormat::from(self.format()))
            .initial_offset(from);
        let options = LogReaderOptions::new()
            .read(read)
            .recovery(RecoveryMode::SkipAnyCorruptedRecords);
        let mut reader = LogReader::new(StdSource::seekable(ReadAt::new(file)), &options);
        let (mut records, mut end) = (0, from);
        loop {
            match reader.next_bounded(0) {
                Ok(Some(Bounded::Record(record))) => {
                    records += 1;
                    end = record.end;
                }
                Ok(Some(Bounded::Oversized(record))) => {
                    records += 1;
                    end = record.end;
                }
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(ReadError::Io(e)) => return Err(e),
                Err(_) => break,
            }
        }
        Ok(Kept {
            records,
            end,
            len,
            synced,
        })
    }
}

/// The format to continue a log in, from the options and the log's own format (`None` if no
/// chunk decides it).
fn continued_format(
    path: &Path,
    options: &LogWriterOptions,
    own: Option<Format>,
) -> Result<Format, Error> {
    let wanted = options.write.format;
    let mismatch = |found, wanted| Error::FormatMismatch {
        path: path.into(),
        found,
        wanted,
    };
    match (options.append_format, own) {
        (AppendFormat::Writer, Some(found)) if found != wanted => {
            Err(mismatch(found, Some(wanted)))
        }
        (AppendFormat::RecyclableLog, Some(Format::Legacy)) => Err(mismatch(Format::Legacy, None)),
        (_, Some(found)) => Ok(found),
        (AppendFormat::Writer | AppendFormat::Log, None) => Ok(wanted),
        (AppendFormat::RecyclableLog, None) => match (log_number_in_name(path), wanted) {
            (Some(number), _) => Ok(Format::Recyclable {
                log_number: recyclable_log_number(number),
            }),
            (None, Format::Recyclable { .. }) => Ok(wanted),
            (None, Format::Legacy) => Err(Error::NoLogNumber { path: path.into() }),
        },
    }
}

/// The options to continue a log with, as to compression: RocksDB's WAL compression follows
/// the log (a log that starts with RocksDB's compression record is continued compressed, a
/// log of `len` bytes that does not is continued without it: the record must be first).
fn continued_compression(
    options: &LogWriterOptions,
    compression: Option<u32>,
    len: u64,
) -> LogWriterOptions {
    let mut options = options.clone();
    let asked = options.compress;
    options.compress = match (compression, asked) {
        (Some(_), Compression::Rocksdb { .. }) => asked,
        (Some(_), _) => Compression::rocksdb(),
        (None, Compression::Rocksdb { .. }) if len > 0 => Compression::None,
        (None, _) => asked,
    };
    options
}

/// What reading a log before appending found.
#[derive(Debug)]
struct Survey {
    records: u64,
    first_damage: Option<Damage>,
    damages: u64,
    tail: Option<Damage>,
    /// A recyclable log ending at a stale record: the stale bytes from there.
    stale: Option<StaleTail>,
    /// The log's own format: its first chunk's.
    own: Option<Format>,
    /// The codec of RocksDB's compression record, if the log starts with one.
    compression: Option<u32>,
}

/// Reads the log in `file` (`len` bytes long) once, from its start: its own format (its first
/// chunk decides, as [`ReadFormat::Auto`] reads it), its records, its damage and how it ends.
fn survey(file: &File, len: u64) -> std::io::Result<Survey> {
    let options = LogReaderOptions::new()
        .read(ReadOptions::new().format(ReadFormat::Auto { log_number: None }))
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
    let stale = StaleTail::after(&mut reader, Some(len))?;
    let tail = match (reader.tail(), &stale) {
        (None, None) => trailer_garbage(file, reader.last_clean_end(), len)?,
        (tail, _) => tail,
    };
    Ok(Survey {
        records: reader.records(),
        first_damage,
        damages,
        tail,
        stale,
        own: match reader.format() {
            ChunkFormat::Decided(format) => Some(format),
            ChunkFormat::Undecided { .. } => None,
        },
        compression: reader.compression(),
    })
}

/// The bytes from `from` (where the last complete record ends) to the end of the file
/// (`len`), if they are a block trailer that is not zeros and that a reader would read as a
/// chunk header once the block is complete: a torn tail.
///
/// A recyclable log's writer pads a block whose last 1 to 10 bytes cannot hold an 11-byte
/// header; a reader at the end of the file passes over those bytes as the trailer they were
/// to become. But once a continued log completes the block, LevelDB's and RocksDB's readers
/// read any 7 or more of them as a legacy header: zeros are skipped silently, anything else
/// is a bad record length or an unknown type that drops the rest of the block — and stops a
/// point-in-time recovery there, losing every record appended after it. Such bytes hold no
/// record (nothing fits in them), so they are a torn tail: refused, or cut off. Trailers of
/// fewer than 7 bytes are never read as a header, and are left as they are.
fn trailer_garbage(file: &File, from: u64, len: u64) -> std::io::Result<Option<Damage>> {
    let block = BLOCK_SIZE as u64;
    let room = block - from % block;
    let read_as_header = (HEADER_SIZE as u64..RECYCLABLE_HEADER_SIZE as u64).contains(&room);
    if !read_as_header || len <= from || len - from > room {
        return Ok(None);
    }
    let zeros = crate::tail::all_zero(file, from, len - from)?;
    Ok((!zeros).then_some(Damage {
        offset: from,
        bytes: len - from,
        kind: DamageKind::TornTail,
    }))
}
