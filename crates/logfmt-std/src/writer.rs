//! [`LogWriter`]: records written to a file (or any [`Write`]) with separate, explicit
//! buffering, flushing and syncing, and errors that stick.

use std::fs::File;
use std::io::{self, Write};
use std::sync::Arc;

use logfmt_core::pack::{PackLimit, Take};
use logfmt_core::{BLOCK_SIZE, Format, WriteOptions, Writer, Written, parts::HEADER_SIZE};

use crate::append_policy::{AppendFormat, TornTailPolicy};
use crate::compression::{self, Compression};
use crate::error::{LogWriterError, WriteOperation};
use crate::lock::LockWait;
use crate::packing::Pending;
use crate::sink::StdSink;

/// A destination that can make written bytes durable: a [`File`] (`fdatasync`), or memory.
pub trait SyncWrite: Write {
    /// Makes every byte written so far durable (for a file: `fdatasync`).
    ///
    /// # Errors
    /// Whatever the operating system reports. After a failed sync the state of the data on
    /// disk is unknown, so a [`LogWriter`] accepts nothing more.
    fn sync(&mut self) -> io::Result<()>;
}

impl SyncWrite for File {
    fn sync(&mut self) -> io::Result<()> {
        self.sync_data()
    }
}

impl SyncWrite for &File {
    fn sync(&mut self) -> io::Result<()> {
        self.sync_data()
    }
}

/// Memory is as durable as it gets: syncing does nothing.
impl SyncWrite for Vec<u8> {
    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<W: SyncWrite + ?Sized> SyncWrite for &mut W {
    fn sync(&mut self) -> io::Result<()> {
        (**self).sync()
    }
}

impl<W: SyncWrite + ?Sized> SyncWrite for Box<W> {
    fn sync(&mut self) -> io::Result<()> {
        (**self).sync()
    }
}

/// When a [`LogWriter`] makes records durable on its own (`fdatasync`). A sync always
/// flushes first. Records are never synced fragment by fragment: a sync happens between
/// records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum SyncPolicy {
    /// Only when [`sync`](LogWriter::sync) is called (and at [`close`](LogWriter::close)
    /// only if asked). The default.
    #[default]
    Manual,
    /// After every record: LevelDB's and RocksDB's `WriteOptions::sync = true`.
    EveryRecord,
    /// After the record that brings the bytes written since the last sync to at least this
    /// many (RocksDB's `wal_bytes_per_sync`). `EveryBytes(0)` syncs after every record.
    EveryBytes(u64),
    /// After every this many records (group commit). `EveryRecords(0)` and
    /// `EveryRecords(1)` sync after every record.
    EveryRecords(u64),
}

/// When a [`LogWriter`] hands buffered bytes to the operating system on its own.
///
/// Bytes are buffered one block at a time: by default a block reaches the operating system
/// in one write when it is full, so a process crash can lose up to one block of records that
/// were not flushed. Flushed bytes survive a process crash, not a power cut: that takes a
/// sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum FlushPolicy {
    /// Only when a block is full, or when [`flush`](LogWriter::flush) or a sync is asked for.
    /// The default.
    #[default]
    Manual,
    /// After every record, as LevelDB's writer does (one write per record).
    EveryRecord,
}

/// How a log is written: by a [`LogWriter`] (made by [`create`](LogWriter::create),
/// [`overwrite`](LogWriter::overwrite), [`append`](LogWriter::append) or over any destination
/// with [`new`](LogWriter::new)) and by an [`AtomicLog`](crate::AtomicLog). The one options
/// type of the writing side: a field that only one of them reads says so.
///
/// ```
/// use logfmt_std::{LogWriter, LogWriterOptions, SyncPolicy, TornTailPolicy};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("000001.log");
/// let options = LogWriterOptions::new()
///     .sync(SyncPolicy::EveryRecord)
///     .torn_tail(TornTailPolicy::Truncate);
/// let (mut writer, _found) = LogWriter::append(&path, &options)?;
/// writer.add_record(b"durable once add_record returns")?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LogWriterOptions {
    /// How records are laid out: the chunk format (default LevelDB's legacy format) and the
    /// length of the log being continued, where the destination must be positioned (at its
    /// end; default 0, a new log). The file constructors set the start themselves: use
    /// [`LogWriter::append`] to continue a file safely.
    pub write: WriteOptions,
    /// When records are made durable. Default [`SyncPolicy::Manual`].
    pub sync: SyncPolicy,
    /// When buffered bytes are handed to the operating system. Default
    /// [`FlushPolicy::Manual`].
    pub flush: FlushPolicy,
    /// Whether [`close`](LogWriter::close) syncs. Default `true`.
    pub sync_on_close: bool,
    /// What the file constructors ([`LogWriter::create`], [`LogWriter::overwrite`],
    /// [`LogWriter::append`], [`AtomicLog`](crate::AtomicLog)) do when another writer holds
    /// the log's lock. Default [`LockWait::Refuse`].
    pub lock_wait: LockWait,
    /// Pack small records ([`pack`](logfmt_core::pack)): gathered into packs within this
    /// limit, each written when full and at every flush and sync (so packing never delays
    /// a record's durability; a sync or flush policy of every record leaves every record
    /// plain). Legacy logs only. Default `None`: every record is written as it comes, as
    /// LevelDB writes it.
    pub pack: Option<PackLimit>,
    /// Compress packs, and records too large for a pack, when that makes them smaller
    /// ([`Compression`]; a compressed record is written as a compressed pack of one). Legacy
    /// logs only. Default [`Compression::None`].
    pub compress: Compression,
    /// [`LogWriter::append`]: what to do with a torn tail. Default [`TornTailPolicy::Refuse`].
    pub torn_tail: TornTailPolicy,
    /// [`LogWriter::append`]: create the file if it does not exist. Default `true`.
    pub create_missing: bool,
    /// [`LogWriter::append`]: which format the log is continued in. Default
    /// [`AppendFormat::Writer`]: the format of [`write`](Self::write), exactly.
    pub append_format: AppendFormat,
    /// [`AtomicLog::create`](crate::AtomicLog::create): replace a destination that is not
    /// empty. Default `false`: it is refused ([`Error::AlreadyExists`](crate::Error)); an empty
    /// one is replaced either way.
    pub replace: bool,
}

impl Default for LogWriterOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl LogWriterOptions {
    /// The defaults: a new legacy log, synced only on [`close`](LogWriter::close) or when
    /// asked, flushed a block at a time; appending refuses a torn tail, creates a missing
    /// log and keeps the writer's format; an atomic log refuses a destination that is not
    /// empty.
    #[must_use]
    pub fn new() -> Self {
        Self {
            write: WriteOptions::default(),
            sync: SyncPolicy::default(),
            flush: FlushPolicy::default(),
            sync_on_close: true,
            lock_wait: LockWait::default(),
            pack: None,
            compress: Compression::default(),
            torn_tail: TornTailPolicy::Refuse,
            create_missing: true,
            append_format: AppendFormat::Writer,
            replace: false,
        }
    }

    /// Sets [`write`](Self::write).
    #[must_use]
    pub fn write(mut self, write: WriteOptions) -> Self {
        self.write = write;
        self
    }

    /// These options with the log starting at `start` (0 for a new file).
    pub(crate) fn starting_at(&self, start: u64) -> Self {
        self.clone().write(self.write.clone().start(start))
    }

    /// These options for a log in `format` continued at `start`.
    pub(crate) fn continuing(&self, format: Format, start: u64) -> Self {
        self.clone()
            .write(self.write.clone().format(format).start(start))
    }

    /// Sets [`sync`](Self::sync).
    #[must_use]
    pub fn sync(mut self, sync: SyncPolicy) -> Self {
        self.sync = sync;
        self
    }

    /// Sets [`flush`](Self::flush).
    #[must_use]
    pub fn flush(mut self, flush: FlushPolicy) -> Self {
        self.flush = flush;
        self
    }

    /// Sets [`sync_on_close`](Self::sync_on_close).
    #[must_use]
    pub fn sync_on_close(mut self, sync: bool) -> Self {
        self.sync_on_close = sync;
        self
    }

    /// Sets [`lock_wait`](Self::lock_wait).
    #[must_use]
    pub fn lock_wait(mut self, wait: LockWait) -> Self {
        self.lock_wait = wait;
        self
    }

    /// Sets [`pack`](Self::pack).
    #[must_use]
    pub fn pack(mut self, pack: Option<PackLimit>) -> Self {
        self.pack = pack;
        self
    }

    /// Sets [`compress`](Self::compress).
    #[must_use]
    pub fn compress(mut self, compress: Compression) -> Self {
        self.compress = compress;
        self
    }

    /// Sets [`torn_tail`](Self::torn_tail).
    #[must_use]
    pub fn torn_tail(mut self, policy: TornTailPolicy) -> Self {
        self.torn_tail = policy;
        self
    }

    /// Sets [`create_missing`](Self::create_missing).
    #[must_use]
    pub fn create_missing(mut self, create: bool) -> Self {
        self.create_missing = create;
        self
    }

    /// Sets [`append_format`](Self::append_format).
    #[must_use]
    pub fn append_format(mut self, format: AppendFormat) -> Self {
        self.append_format = format;
        self
    }

    /// Sets [`replace`](Self::replace).
    #[must_use]
    pub fn replace(mut self, replace: bool) -> Self {
        self.replace = replace;
        self
    }
}

type Inner<W> = Writer<StdSink<W>, Box<[u8; BLOCK_SIZE]>>;

/// Writes records to a file (or any [`SyncWrite`]) in LevelDB's log format, with buffering,
/// flushing and syncing kept apart:
///
/// - **buffering**: records are laid out in a 32 KiB block buffer; a full block reaches the
///   destination in one write;
/// - **flush** ([`flush`](Self::flush), [`FlushPolicy`]): the buffered part of the current
///   block is written to the destination (it survives a process crash);
/// - **sync** ([`sync`](Self::sync), [`SyncPolicy`]): flush, then `fdatasync` (it survives a
///   power cut). Never per fragment: only between records.
///
/// Errors stick: after a write, flush or sync fails, every call returns
/// [`LogWriterError::Poisoned`] carrying the original error.
///
/// [`close`](Self::close) flushes, syncs (unless [`LogWriterOptions::sync_on_close`] is off) and
/// gives the destination back. Dropping the writer flushes what is buffered, ignoring errors.
///
/// A writer made by [`create`](Self::create), [`overwrite`](Self::overwrite) or
/// [`append`](Self::append) holds the log's exclusive writer lock for as long as the file is
/// open (until the writer, or the file [`close`](Self::close) gives back, is dropped): one
/// writer at a time (see [`LockWait`]). Readers take no lock.
///
/// ```
/// use logfmt_std::{LogWriter, SyncPolicy, LogWriterOptions};
///
/// let options = LogWriterOptions::new().sync(SyncPolicy::EveryRecords(100));
/// let mut writer = LogWriter::new(Vec::new(), &options);
/// let written = writer.add_record(b"hello")?;
/// assert_eq!((written.offset, written.end), (0, 12));
/// assert_eq!(writer.buffered(), 12); // not written yet
/// let log = writer.close()?;
/// assert_eq!(log.len(), 12);
/// # Ok::<(), logfmt_std::LogWriterError>(())
/// ```
#[derive(Debug)]
pub struct LogWriter<W: SyncWrite> {
    inner: Option<Inner<W>>,
    options: LogWriterOptions,
    /// Bytes laid out since the last sync.
    unsynced_bytes: u64,
    /// Records added since the last sync.
    unsynced_records: u64,
    /// The pack records are gathered in, when packing.
    pending: Option<Pending>,
    /// RocksDB's compression record is still to be written, before anything else.
    compression_record_due: bool,
    /// zstd's contexts, used again record after record.
    contexts: compression::Contexts,
    failure: Option<(WriteOperation, Arc<io::Error>)>,
}

impl<W: SyncWrite> LogWriter<W> {
    /// A writer to `dest`, which must be positioned at `options.write.start` (0 for a new
    /// log).
    pub fn new(dest: W, options: &LogWriterOptions) -> Self {
        Self {
            inner: Some(Writer::with_options(
                StdSink::new(dest),
                Box::new([0; BLOCK_SIZE]),
                &options.write,
            )),
            options: options.clone(),
            unsynced_bytes: 0,
            unsynced_records: 0,
            pending: options.pack.map(Pending::new),
            compression_record_due: matches!(options.compress, Compression::Rocksdb { .. })
                && options.write.start == 0,
            contexts: compression::Contexts::default(),
            failure: None,
        }
    }

    /// Appends one record, then flushes or syncs if the policies say so.
    ///
    /// When packing ([`LogWriterOptions::pack`]), the record joins the pack in progress (written
    /// when full, or at the next flush or sync); the place returned is its pack's (`end` as if
    /// the pack ended now).
    ///
    /// # Errors
    /// [`LogWriterError::Failed`] if the destination fails (the writer is then poisoned),
    /// [`LogWriterError::Poisoned`] after an earlier failure,
    /// [`LogWriterError::PackInRecyclableLog`] when packing in a recyclable log.
    pub fn add_record(&mut self, data: &[u8]) -> Result<Written, LogWriterError> {
        let written = match self.pending.as_ref().map(|p| p.take(data.len())) {
            None => self.write_plain(data)?,
            Some(Take::Plain) => {
                self.end_pack()?;
                self.write_plain(data)?
            }
            Some(take) => {
                if self.options.write.format != Format::Legacy {
                    return Err(LogWriterError::PackInRecyclableLog);
                }
                if take == Take::EndFirst {
                    self.end_pack()?;
                }
                let inner = self.usable()?;
                // Where the pack starts: after a trailer, if the block has no room for a header.
                let start = inner.end_after(0) - HEADER_SIZE as u64;
                if let Some(pending) = self.pending.as_mut() {
                    pending.push(data);
                    let end = start + (HEADER_SIZE + pending.record().0.len()) as u64;
                    Written::new(start, end)
                } else {
                    Written::new(start, start)
                }
            }
        };
        self.record_added()?;
        Ok(written)
    }

    /// Appends one record of `len` bytes without holding it whole: `fill` is called with
    /// slices of the block buffer in turn (at most a block each) and fills each with the
    /// record's next bytes (see [`Writer::add_record_with`]); then flushes or syncs as
    /// [`add_record`](Self::add_record) does. The log is the one `add_record` writes for the
    /// same bytes, except when packing or compressing: the record is then written as it is, on
    /// its own — or, with RocksDB's WAL compression (every record compressed), gathered whole
    /// and added with `add_record`.
    ///
    /// ```
    /// use logfmt_std::{LogWriter, LogWriterOptions};
    ///
    /// let mut writer = LogWriter::new(Vec::new(), &LogWriterOptions::new());
    /// let written = writer.add_record_with(100_000, |payload| {
    ///     payload.fill(b'x');
    ///     Ok(())
    /// })?;
    /// assert_eq!((written.offset, written.end), (0, 100_000 + 4 * 7));
    /// # Ok::<(), logfmt_std::LogWriterError>(())
    /// ```
    ///
    /// # Errors
    /// As for [`add_record`](Self::add_record); an error of `fill` is returned as
    /// [`LogWriterError::Failed`] and poisons the writer (the record is incomplete).
    ///
    /// [`Writer::add_record_with`]: logfmt_core::Writer::add_record_with
    pub fn add_record_with(
        &mut self,
        len: u64,
        mut fill: impl FnMut(&mut [u8]) -> io::Result<()>,
    ) -> Result<Written, LogWriterError> {
        if let Compression::Rocksdb { .. } = self.options.compress {
            let mut whole = match usize::try_from(len) {
                Ok(len) => vec![0; len],
                Err(e) => return Err(self.fail(WriteOperation::Write, io::Error::other(e))),
            };
            if let Err(e) = fill(&mut whole) {
                return Err(self.fail(WriteOperation::Write, e));
            }
            return self.add_record(&whole);
        }
        self.end_pack()?;
        let inner = self.usable()?;
        let before = inner.position();
        let result = inner.add_record_with(len, fill);
        let written = self.check(result, WriteOperation::Write)?;
        self.unsynced_bytes += written.end - before;
        self.record_added()?;
        Ok(written)
    }

    /// Counts a record added, then flushes or syncs if the policies say so.
    fn record_added(&mut self) -> Result<(), LogWriterError> {
        self.unsynced_records += 1;
        let sync_now = match self.options.sync {
            SyncPolicy::Manual => false,
            SyncPolicy::EveryRecord => true,
            SyncPolicy::EveryBytes(n) => self.unsynced_bytes >= n,
            SyncPolicy::EveryRecords(n) => self.unsynced_records >= n.max(1),
        };
        if sync_now {
            self.sync()?;
        } else if self.options.flush == FlushPolicy::EveryRecord {
            self.flush()?;
        }
        Ok(())
    }

    /// Lays out a record on its own: as it is, or as a compressed pack of one when that is
    /// smaller.
    fn write_plain(&mut self, data: &[u8]) -> Result<Written, LogWriterError> {
        if let Compression::Rocksdb { level } = self.options.compress {
            return self.write_rocksdb(data, level);
        }
        let coded = match self.options.compress {
            Compression::Zstd { level } => self.contexts.encode_record(data, level),
            Compression::None | Compression::Rocksdb { .. } => None,
        };
        if coded.is_some() && self.options.write.format != Format::Legacy {
            return Err(LogWriterError::PackInRecyclableLog);
        }
        let inner = self.usable()?;
        let before = inner.position();
        let result = match &coded {
            Some(pack) => inner.add_pack(pack),
            None => inner.add_record(data),
        };
        let written = self.check(result, WriteOperation::Write)?;
        self.unsynced_bytes += written.end - before;
        Ok(written)
    }

    /// Lays out a record compressed as RocksDB's WAL compression does (after its compression
    /// record, if a new log has not written it yet).
    fn write_rocksdb(&mut self, data: &[u8], level: i32) -> Result<Written, LogWriterError> {
        self.compression_record()?;
        let frame = self
            .contexts
            .encode_stream(data, level)
            .map_err(|e| self.fail(WriteOperation::Write, e))?;
        let inner = self.usable()?;
        let before = inner.position();
        let result = inner.add_record(&frame);
        let written = self.check(result, WriteOperation::Write)?;
        self.unsynced_bytes += written.end - before;
        Ok(written)
    }

    /// Writes RocksDB's compression record if it is due: first in a new log.
    fn compression_record(&mut self) -> Result<(), LogWriterError> {
        if !self.compression_record_due {
            return Ok(());
        }
        let inner = self.usable()?;
        let result = inner.add_compression_record(logfmt_core::parts::format::ZSTD_CODEC);
        let written = self.check(result, WriteOperation::Write)?;
        self.unsynced_bytes += written.end - written.offset;
        self.compression_record_due = false;
        Ok(())
    }

    /// Lays out the pack in progress, if any (a pack of one as a record on its own),
    /// compressed when that makes it smaller.
    fn end_pack(&mut self) -> Result<(), LogWriterError> {
        let Some(pending) = self.pending.as_mut().filter(|p| p.count() > 0) else {
            return Ok(());
        };
        let (bytes, single) = pending.record();
        if single {
            let record = bytes.to_vec();
            if let Some(pending) = self.pending.as_mut() {
                pending.clear();
            }
            return self.write_plain(&record).map(|_| ());
        }
        let coded = match self.options.compress {
            Compression::Zstd { level } => self.contexts.encode_pack(bytes, pending.count(), level),
            Compression::None | Compression::Rocksdb { .. } => None,
        };
        let Some(inner) = self.inner.as_mut().filter(|_| self.failure.is_none()) else {
            return Err(self.poisoned());
        };
        let before = inner.position();
        let result = inner.add_pack(coded.as_deref().unwrap_or(bytes));
        if let Err(logfmt_core::WriteError::PackInRecyclableLog) = result {
            return Err(LogWriterError::PackInRecyclableLog);
        }
        pending.clear();
        let written = self.check(result, WriteOperation::Write)?;
        self.unsynced_bytes += written.end - before;
        Ok(())
    }

    /// Pads the log to a multiple of `align` bytes (see
    /// [`Writer::pad_to`](logfmt_core::Writer::pad_to)); returns the padding length.
    ///
    /// # Errors
    /// [`LogWriterError::BadAlignment`], or as for [`add_record`](Self::add_record).
    pub fn pad_to(&mut self, align: usize) -> Result<usize, LogWriterError> {
        self.end_pack()?;
        let inner = self.usable()?;
        match inner.pad_to(align) {
            Err(logfmt_core::WriteError::BadAlignment) => {
                Err(LogWriterError::BadAlignment { align })
            }
            result => {
                let padded = self.check(result, WriteOperation::Write)?;
                self.unsynced_bytes += padded as u64;
                Ok(padded)
            }
        }
    }

    /// Hands every buffered byte to the destination and flushes it. Not durable: see
    /// [`sync`](Self::sync).
    ///
    /// # Errors
    /// As for [`add_record`](Self::add_record).
    pub fn flush(&mut self) -> Result<(), LogWriterError> {
        self.compression_record()?;
        self.end_pack()?;
        let inner = self.usable()?;
        let result = inner.flush();
        self.check(result, WriteOperation::Flush)
    }

    /// Flushes, then makes everything written durable (`fdatasync` for a file).
    ///
    /// # Errors
    /// As for [`add_record`](Self::add_record); a failed sync poisons the writer too.
    pub fn sync(&mut self) -> Result<(), LogWriterError> {
        self.flush()?;
        let inner = self.usable()?;
        let result = inner.sink_mut().get_mut().sync();
        if let Err(e) = result {
            return Err(self.fail(WriteOperation::Sync, e));
        }
        self.unsynced_bytes = 0;
        self.unsynced_records = 0;
        Ok(())
    }

    /// Flushes, syncs (if [`LogWriterOptions::sync_on_close`]) and gives the destination back.
    ///
    /// # Errors
    /// As for [`sync`](Self::sync). The destination is dropped.
    pub fn close(mut self) -> Result<W, LogWriterError> {
        if self.options.sync_on_close {
            self.sync()?;
        } else {
            self.flush()?;
        }
        match self.inner.take() {
            Some(inner) => Ok(inner.into_parts().0.into_inner()),
            None => Err(self.poisoned()),
        }
    }

    /// The log's length: every byte laid out so far, written or buffered (not the pack in
    /// progress, when packing).
    pub fn position(&self) -> u64 {
        self.inner.as_ref().map_or(0, Writer::position)
    }

    /// The chunk format written.
    pub fn format(&self) -> Format {
        self.options.write.format
    }

    /// Bytes laid out but not yet handed to the destination (less than a block).
    pub fn buffered(&self) -> usize {
        self.inner.as_ref().map_or(0, Writer::unsent)
    }

    /// Bytes laid out since the last sync.
    pub fn unsynced(&self) -> u64 {
        self.unsynced_bytes
    }

    /// The original error, if the writer failed.
    pub fn failure(&self) -> Option<&io::Error> {
        self.failure.as_ref().map(|(_, e)| &**e)
    }

    /// The destination. Writing to it directly corrupts the log.
    pub fn get_ref(&self) -> Option<&W> {
        self.inner.as_ref().map(|w| w.sink().get_ref())
    }

    /// The writer, unless it failed.
    fn usable(&mut self) -> Result<&mut Inner<W>, LogWriterError> {
        match (&self.failure, self.inner.as_mut()) {
            (None, Some(inner)) => Ok(inner),
            (failure, _) => Err(poisoned(failure.as_ref())),
        }
    }

    fn poisoned(&self) -> LogWriterError {
        poisoned(self.failure.as_ref())
    }

    fn fail(&mut self, operation: WriteOperation, error: io::Error) -> LogWriterError {
        let source = Arc::new(error);
        self.failure = Some((operation, Arc::clone(&source)));
        LogWriterError::Failed { operation, source }
    }

    fn check<T>(
        &mut self,
        result: Result<T, logfmt_core::WriteError<io::Error>>,
        operation: WriteOperation,
    ) -> Result<T, LogWriterError> {
        match result {
            Ok(value) => Ok(value),
            Err(logfmt_core::WriteError::Sink(e)) => Err(self.fail(operation, e)),
            Err(_) => Err(self.poisoned()),
        }
    }
}

/// The refusal of a writer that failed with `failure`.
fn poisoned(failure: Option<&(WriteOperation, Arc<io::Error>)>) -> LogWriterError {
    let (operation, source) = failure.cloned().unwrap_or_else(|| {
        // Only reachable once `close` took the writer, which consumes it.
        (WriteOperation::Write, Arc::new(io::ErrorKind::Other.into()))
    });
    LogWriterError::Poisoned { operation, source }
}

impl<W: SyncWrite> Drop for LogWriter<W> {
    /// Flushes what is buffered (the pack in progress included), ignoring errors (call
    /// [`close`](Self::close) to see them).
    fn drop(&mut self) {
        let _ = self.end_pack();
        if self.failure.is_none()
            && let Some(inner) = self.inner.as_mut()
        {
            let _ = inner.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use logfmt_core::{Reader, parts::Item};

    /// Accepts `room` bytes, then fails every write; counts writes and syncs.
    #[derive(Debug, Default)]
    struct Probe {
        data: Vec<u8>,
        room: usize,
        writes: usize,
        syncs: usize,
        fail_sync: bool,
    }

    impl Write for Probe {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.writes += 1;
            let n = buf.len().min(self.room);
            if n == 0 && !buf.is_empty() {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
            }
            self.room -= n;
            self.data.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl SyncWrite for Probe {
        fn sync(&mut self) -> io::Result<()> {
            self.syncs += 1;
            if self.fail_sync {
                return Err(io::Error::other("sync lost the data"));
            }
            Ok(())
        }
    }

    fn probe(room: usize) -> Probe {
        Probe {
            room,
            ..Probe::default()
        }
    }

    fn records_in(log: &[u8]) -> Vec<Vec<u8>> {
        let mut scratch = vec![0u8; 1 << 20];
        let mut reader = Reader::from_slice(log, &mut scratch);
        let mut out = Vec::new();
        while let Ok(Some(item)) = reader.next() {
            if let Item::Record(r) = item {
                out.push(r.data.to_vec());
            }
        }
        out
    }

    #[test]
    fn one_write_per_block_unless_asked() -> Result<(), LogWriterError> {
        let mut writer = LogWriter::new(probe(usize::MAX), &LogWriterOptions::new());
        for _ in 0..100 {
            writer.add_record(&[7u8; 1000])?;
        }
        // 100 records of 1007 bytes: 3 full blocks written, in 3 writes.
        let dest = writer.get_ref().map(|p| (p.writes, p.data.len(), p.syncs));
        assert_eq!(dest, Some((3, 3 * BLOCK_SIZE, 0)));
        let probe = writer.close()?;
        assert_eq!((probe.writes, probe.syncs), (4, 1));
        assert_eq!(records_in(&probe.data).len(), 100);
        Ok(())
    }

    #[test]
    fn sync_policies() -> Result<(), LogWriterError> {
        let cases = [
            (SyncPolicy::Manual, 0),
            (SyncPolicy::EveryRecord, 10),
            (SyncPolicy::EveryRecords(3), 3),
            (SyncPolicy::EveryRecords(0), 10),
            (SyncPolicy::EveryBytes(2500), 3), // 1007 bytes a record: every third
            (SyncPolicy::EveryBytes(0), 10),
        ];
        for (policy, syncs) in cases {
            let options = LogWriterOptions::new().sync(policy).sync_on_close(false);
            let mut writer = LogWriter::new(probe(usize::MAX), &options);
            for _ in 0..10 {
                writer.add_record(&[1u8; 1000])?;
            }
            let synced = writer.get_ref().map(|p| p.syncs);
            assert_eq!(synced, Some(syncs), "{policy:?}");
            // A sync flushes first: everything synced is in the destination.
            let written = writer.get_ref().map_or(0, |p| p.data.len() as u64);
            assert_eq!(written + writer.buffered() as u64, writer.position());
            if syncs == 10 {
                assert_eq!(writer.buffered(), 0);
            }
            let probe = writer.close()?;
            assert_eq!(probe.syncs, syncs, "{policy:?}: close must not sync");
        }
        Ok(())
    }

    #[test]
    fn flush_every_record_writes_once_per_record() -> Result<(), LogWriterError> {
        let options = LogWriterOptions::new().flush(FlushPolicy::EveryRecord);
        let mut writer = LogWriter::new(probe(usize::MAX), &options);
        for _ in 0..5 {
            writer.add_record(b"abc")?;
            assert_eq!(writer.buffered(), 0);
        }
        assert_eq!(writer.get_ref().map(|p| (p.writes, p.syncs)), Some((5, 0)));
        Ok(())
    }

    #[test]
    fn a_failed_write_sticks_with_the_original_error() {
        // The destination takes 40 000 bytes, then reports a full disk.
        let mut writer = LogWriter::new(probe(40_000), &LogWriterOptions::new());
        let mut first_error = None;
        for i in 0..100 {
            match writer.add_record(&[i as u8; 1000]) {
                Ok(_) => {}
                Err(e) => {
                    first_error = Some((i, e));
                    break;
                }
            }
        }
        let Some((at, error)) = first_error else {
            panic!("the destination never failed")
        };
        assert_eq!(at, 65, "the second block is written with record 65");
        assert!(matches!(
            error,
            LogWriterError::Failed {
                operation: WriteOperation::Write,
                ..
            }
        ));
        assert_eq!(error.kind(), Some(io::ErrorKind::StorageFull));
        for again in [
            writer.add_record(b"more"),
            writer.add_record(b""),
            writer.flush().map(|()| Written::new(0, 0)),
            writer.sync().map(|()| Written::new(0, 0)),
        ] {
            let Err(e) = again else {
                panic!("a poisoned writer accepted a call")
            };
            assert!(e.is_poisoned(), "{e:?}");
            assert_eq!(e.kind(), Some(io::ErrorKind::StorageFull));
            let cause = std::error::Error::source(&e).map(ToString::to_string);
            assert_eq!(cause.as_deref(), Some("disk full"));
            assert!(e.to_string().contains("earlier write failed"), "{e}");
        }
        assert_eq!(
            writer.failure().map(io::Error::kind),
            Some(io::ErrorKind::StorageFull)
        );
        assert!(writer.close().is_err());
    }

    #[test]
    fn a_failed_sync_sticks_too() {
        let mut dest = probe(usize::MAX);
        dest.fail_sync = true;
        let options = LogWriterOptions::new().sync(SyncPolicy::EveryRecords(2));
        let mut writer = LogWriter::new(dest, &options);
        assert!(writer.add_record(b"one").is_ok());
        let error = writer.add_record(b"two").err();
        assert!(
            matches!(
                error,
                Some(LogWriterError::Failed {
                    operation: WriteOperation::Sync,
                    ..
                })
            ),
            "{error:?}"
        );
        let again = writer.add_record(b"three").err();
        assert!(
            matches!(
                again,
                Some(LogWriterError::Poisoned {
                    operation: WriteOperation::Sync,
                    ..
                })
            ),
            "{again:?}"
        );
    }

    #[test]
    fn continuing_a_log_matches_writing_it_at_once() -> Result<(), LogWriterError> {
        let first = LogWriter::new(Vec::new(), &LogWriterOptions::new());
        let mut first = first;
        first.add_record(&[1u8; 32_758])?;
        let mut log = first.close()?;
        let options = LogWriterOptions::new().write(WriteOptions::new().start(log.len() as u64));
        let mut second = LogWriter::new(&mut log, &options);
        second.add_record(b"abc")?;
        second.close()?;

        let mut once = LogWriter::new(Vec::new(), &LogWriterOptions::new());
        once.add_record(&[1u8; 32_758])?;
        once.add_record(b"abc")?;
        assert_eq!(log, once.close()?);
        Ok(())
    }

    #[test]
    fn dropping_flushes() -> Result<(), LogWriterError> {
        let mut log = Vec::new();
        {
            let mut writer = LogWriter::new(&mut log, &LogWriterOptions::new());
            writer.add_record(b"kept")?;
        }
        assert_eq!(records_in(&log), [b"kept".to_vec()]);
        Ok(())
    }

    #[test]
    fn padding() -> Result<(), LogWriterError> {
        let mut writer = LogWriter::new(Vec::new(), &LogWriterOptions::new());
        writer.add_record(b"x")?;
        assert_eq!(
            writer.pad_to(3).err().map(|e| e.to_string()).as_deref(),
            Some("padding alignment 3 is not a power of two no larger than a block")
        );
        let padded = writer.pad_to(16)?;
        assert_eq!((8 + padded) % 16, 0);
        writer.add_record(b"y")?;
        let log = writer.close()?;
        assert_eq!(records_in(&log), [b"x".to_vec(), b"y".to_vec()]);
        Ok(())
    }
}
