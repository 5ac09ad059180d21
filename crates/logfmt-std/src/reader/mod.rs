//! [`LogReader`]: whole records with a [`RecoveryMode`] applied, optionally limited to a
//! byte range of the log.
//!
//! By job: this module holds the reader, its options and the loop that hands out records
//! ([`LogReader::next_bounded`]); `events` turns what the core reads into steps; `ending`
//! applies the recovery mode and tells how the log ends; `packs` opens packs and compressed
//! records. Each has its unit tests beside it.

use std::collections::VecDeque;
use std::ops::Range;

use logfmt_core::pack::Unpacker;
use logfmt_core::parts::assembler::{Assembler, Room};
use logfmt_core::{
    BLOCK_SIZE, BlockSource, ReadOptions, Record,
    parts::{ChunkFormat, FragmentReader, Oversized, ReadFormat},
};

use crate::compression;
use crate::recovery::{Damage, Ending, ReadError, RecoveryMode};

mod ending;
mod events;
mod packs;

use packs::Unpacked;

/// How a [`LogReader`] reads.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct LogReaderOptions {
    /// How chunks are read (checksums, format, erased flash, tailing, initial offset).
    pub read: ReadOptions,
    /// What is done with damage. Default: LevelDB's behaviour.
    pub recovery: RecoveryMode,
    /// Only the records whose first chunk starts in this byte range; reading stops at the
    /// first record that starts at or after its end. Ranges that cover a file without
    /// overlapping return every record of a sequential read exactly once, damaged logs
    /// included (see [`split`](crate::split)). Damage is reported by the range it starts in.
    pub range: Option<Range<u64>>,
}

impl LogReaderOptions {
    /// The defaults: LevelDB's reader.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`read`](Self::read).
    #[must_use]
    pub fn read(mut self, read: ReadOptions) -> Self {
        self.read = read;
        self
    }

    /// Sets [`recovery`](Self::recovery).
    #[must_use]
    pub fn recovery(mut self, recovery: RecoveryMode) -> Self {
        self.recovery = recovery;
        self
    }

    /// Sets [`range`](Self::range).
    #[must_use]
    pub fn range(mut self, range: Range<u64>) -> Self {
        self.range = Some(range);
        self
    }
}

/// What [`LogReader::next`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Entry<'a> {
    /// A complete record. One in a single chunk is borrowed from the block (from the map,
    /// for a [`MappedLog`](crate::MappedLog)); a fragmented one from the reader's buffer.
    Record(Record<'a>),
    /// Damage the recovery mode reports.
    Damage(Damage),
}

/// What [`LogReader::next_bounded`] found: an [`Entry`], or a record too large to assemble.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Bounded<'a> {
    /// A complete record: in one chunk (borrowed from the block, whatever its size), or
    /// assembled from fragments in no more than the limit.
    Record(Record<'a>),
    /// A complete, valid record assembled from more bytes than the limit: its data was not
    /// kept (reading goes on). Stream it from the file with a
    /// [`RecordStream`](crate::RecordStream), which reads it again from its offset and notices
    /// a log that changed meanwhile.
    Oversized(Oversized),
    /// Damage the recovery mode reports.
    Damage(Damage),
}

impl<'a> From<Entry<'a>> for Bounded<'a> {
    fn from(entry: Entry<'a>) -> Self {
        match entry {
            Entry::Record(record) => Self::Record(record),
            Entry::Damage(damage) => Self::Damage(damage),
        }
    }
}

/// Where a [`LogReader`] assembles records: a growing buffer that takes no more than a limit.
#[derive(Debug, Default)]
struct VecRoom {
    buffer: Vec<u8>,
    limit: usize,
}

impl Room for VecRoom {
    fn clear(&mut self) {
        self.buffer.clear();
    }

    fn push(&mut self, data: &[u8]) -> bool {
        if self.buffer.len().saturating_add(data.len()) > self.limit {
            return false;
        }
        self.buffer.extend_from_slice(data);
        true
    }

    fn filled(&self) -> &[u8] {
        &self.buffer
    }
}

/// Whether the reader is inside a record, and whether that record is returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Current {
    None,
    /// A record that starts in the range: its fragments are assembled.
    Kept,
    /// A record that starts before the range: its fragments are ignored.
    Ignored,
}

/// What one event led to.
#[derive(Debug)]
enum Step {
    Continue,
    /// A record in one chunk: `payload` is its place in the current block.
    Single {
        offset: u64,
        end: u64,
        payload: Range<usize>,
        form: Form,
    },
    /// A record assembled in the buffer.
    Assembled {
        offset: u64,
        end: u64,
        form: Form,
    },
    /// A record longer than the limit: not assembled.
    Oversized(Oversized),
    Damage(Damage),
    Done,
}

/// What a whole record holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// A record.
    Plain,
    /// A [pack](logfmt_core::pack) of records.
    Pack,
    /// A record compressed with this codec (after RocksDB's compression record).
    Compressed(u32),
}

/// Where the body of the pack being read lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// In the current block (a pack in one chunk).
    Block,
    /// In the assembler's buffer.
    Buffer,
    /// In the buffer a compressed pack was decoded into.
    Decoded,
}

/// Reads whole records and applies a [`RecoveryMode`]: LevelDB's reader, plus policy.
///
/// Records and reports are exactly those of [`FragmentReader`] (LevelDB's), assembled in a
/// growing buffer (a record can be no larger than the log). On top:
///
/// - the recovery mode decides whether each damage is ignored, reported
///   ([`Entry::Damage`]), ends reading, or is an error ([`ReadError::Damaged`]);
/// - the end of the log is classified: a torn or unwritten tail is found whatever the mode
///   ([`tail`](Self::tail)), and [`ending`](Self::ending) says how reading stopped;
/// - regions LevelDB skips silently (a zero header mid-log) are found;
/// - an optional byte range limits reading to the records that start in it;
/// - in a recyclable log (RocksDB's), the end of this use of a recycled file is found even
///   when the stale bytes of the earlier use do not start at a chunk boundary (see below);
/// - [`next_bounded`](Self::next_bounded) assembles records only up to a limit, for reading
///   records of any size in bounded memory;
/// - the records of a [pack](logfmt_core::pack) are returned one by one, each with its index
///   ([`Record::index`]); a pack that does not hold together is damage
///   ([`CorruptionKind::BadPack`](logfmt_core::parts::CorruptionKind::BadPack), under the recovery mode), with the records it loses.
///
/// **Recycled files.** RocksDB reuses obsolete log files without truncating them: after a
/// crash, the records of the new use are followed by the bytes of the earlier use. Where the
/// new records end, the earlier use's bytes generally resume in the middle of one of its
/// chunks, which reads as a bad checksum or length up to the end of that block; the next
/// block starts with a chunk of the earlier log ([`LogEnd::OldRecord`](logfmt_core::LogEnd::OldRecord)). That pattern — a
/// checksum or length error (with the record in progress it cuts off, if any) followed
/// directly by an old record at the next block — is the end of the log, not damage:
/// [`ending`](Self::ending) is `Log(OldRecord)` at the offset where the new records end, as
/// RocksDB reads it. Under [`RecoveryMode::AbsoluteConsistency`] it is still an error (it
/// cannot be told apart from damage in the last block; RocksDB refuses to recycle logs in
/// that mode), and [`RecoveryMode::PointInTimeRecovery`] stops at it as at any damage.
///
/// Like the core readers it is a lending iterator: each entry borrows the reader.
///
/// ```
/// use logfmt_std::{LogWriter, LogReaderOptions, RecoveryMode, LogWriterOptions, advanced::{Entry, LogReader}};
///
/// let mut writer = LogWriter::new(Vec::new(), &LogWriterOptions::new());
/// writer.add_record(b"one")?;
/// writer.add_record(&[2u8; 40_000])?;
/// let mut log = writer.close()?;
/// log.truncate(log.len() - 5); // a crash while the second record was written
///
/// // LevelDB's behaviour: the torn record is the end of the log.
/// let mut reader = LogReader::from_slice(&log, &LogReaderOptions::new());
/// let Some(Entry::Record(record)) = reader.next()? else { panic!() };
/// assert_eq!(record.data, b"one");
/// assert!(reader.next()?.is_none());
/// assert_eq!(reader.tail().map(|t| t.offset), Some(10)); // truncate here to append
///
/// // Absolute consistency: the same torn tail is an error.
/// let options = LogReaderOptions::new().recovery(RecoveryMode::AbsoluteConsistency);
/// let mut reader = LogReader::from_slice(&log, &options);
/// assert!(matches!(reader.next()?, Some(Entry::Record(_))));
/// assert!(reader.next().is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct LogReader<S> {
    inner: FragmentReader<S>,
    mode: RecoveryMode,
    /// Records starting before this offset are not returned.
    start: u64,
    /// Reading stops at the first record starting at or after this offset.
    end: Option<u64>,
    /// Gaps and unwritten tails are expected (a flash image).
    erased: bool,
    /// Fragmented records, assembled up to the limit of [`next_bounded`](Self::next_bounded).
    assembler: Assembler<VecRoom>,
    /// The chunk format read.
    format: ReadFormat,
    /// Steps held back while the damage before them is reported (recycled-file check).
    pending: VecDeque<Step>,
    /// Damage that may be the garbage at the end of a recycled file's new records: held back
    /// until the next step tells (see the type's documentation).
    suspects: Vec<Damage>,
    current: Current,
    /// File position after the last event.
    settled: Option<u64>,
    /// Bytes were skipped as damage (a zero header) since `settled`, up to here: what comes
    /// next has a gap before it.
    gap_end: Option<u64>,
    /// File offset just past the last complete record or reported drop.
    last_clean: Option<u64>,
    /// Since `last_clean`, the log held more than block trailers and ignorable chunks.
    written_since_clean: bool,
    /// A record in one chunk (and what it holds), held back while a damage before it is
    /// reported.
    held: Option<(u64, u64, Range<usize>, Form)>,
    /// The pack being read, record by record.
    unpacking: Option<Unpacker<Place>>,
    /// The body of the compressed pack being read, decoded.
    decoded: Vec<u8>,
    /// zstd's contexts, used again record after record.
    contexts: compression::Contexts,
    /// The codec of RocksDB's compression record, once read.
    compression: Option<u32>,
    tail: Option<Damage>,
    ending: Option<Ending>,
    records: u64,
    /// A range reader: the chunks at the start of the next range's first block that the next
    /// range's reader skips (LevelDB's resynchronisation from an initial offset: `MIDDLE`
    /// chunks and one `LAST`) are still being read here. Their damage — a continuation whose
    /// start was dropped — is reported by this range, past its end: no range would otherwise.
    /// (Not in a flash image: there such damage at a range's start goes unreported.)
    next_leading: bool,
    /// The offset of such damage, reported past the range's end.
    owned: Option<u64>,
}

impl<'a> LogReader<logfmt_core::SliceSource<'a>> {
    /// A reader over a log in memory.
    pub fn from_slice(log: &'a [u8], options: &LogReaderOptions) -> Self {
        Self::new(logfmt_core::SliceSource::new(log), options)
    }
}

impl<S: BlockSource> LogReader<S> {
    /// A reader over `source` (positioned at the start of the log) with `options`.
    pub fn new(source: S, options: &LogReaderOptions) -> Self {
        let range = options.range.clone();
        let start = range
            .as_ref()
            .map_or(0, |r| r.start)
            .max(options.read.initial_offset);
        // With a range, the decoder starts at the block holding its start, skipping the
        // continuation of an earlier record as LevelDB does from an initial offset; records
        // that start before `start` are read and filtered out here.
        let initial_offset = if range.is_some() {
            start - start % BLOCK_SIZE as u64
        } else {
            options.read.initial_offset
        };
        let read = options.read.clone().initial_offset(initial_offset);
        let from_start = initial_offset == 0;
        let range_end = range.map(|r| r.end);
        Self {
            inner: FragmentReader::with_options(source, &read),
            mode: options.recovery,
            start,
            end: range_end,
            erased: options.read.erased.is_some(),
            assembler: Assembler::new(VecRoom::default()),
            format: options.read.format,
            pending: VecDeque::new(),
            suspects: Vec::new(),
            current: Current::None,
            settled: from_start.then_some(0),
            gap_end: None,
            last_clean: from_start.then_some(0),
            written_since_clean: false,
            held: None,
            unpacking: None,
            decoded: Vec::new(),
            contexts: compression::Contexts::default(),
            compression: None,
            tail: None,
            ending: None,
            records: 0,
            // Not in a flash image, whose erased bytes end the next range's resynchronisation
            // in ways this reader does not see.
            next_leading: options.read.erased.is_none()
                && range_end.is_some_and(|end| end - end % BLOCK_SIZE as u64 > 0),
            owned: None,
        }
    }

    /// The next record or reported damage; `None` at the end (of the log, of the range, or
    /// where the recovery mode stopped), and on every call after it. In tailing mode `None`
    /// may also mean "nothing more yet": [`ending`](Self::ending) is `None` then, and a later
    /// call reads on.
    ///
    /// # Errors
    /// [`ReadError::Io`] if reading fails (the log ends there), [`ReadError::Damaged`] for
    /// damage in [`RecoveryMode::AbsoluteConsistency`], [`ReadError::NotAssembled`] for a
    /// record that an earlier [`next_bounded`](Self::next_bounded) call stopped assembling.
    #[expect(
        clippy::should_implement_trait,
        reason = "a lending iterator: items borrow the reader, which `Iterator` cannot express"
    )]
    pub fn next(&mut self) -> Result<Option<Entry<'_>>, ReadError<S::Error>> {
        match self.next_bounded(usize::MAX)? {
            None => Ok(None),
            Some(Bounded::Record(record)) => Ok(Some(Entry::Record(record))),
            Some(Bounded::Damage(damage)) => Ok(Some(Entry::Damage(damage))),
            Some(Bounded::Oversized(oversized)) => Err(ReadError::NotAssembled(oversized)),
        }
    }

    /// As [`next`](Self::next), but a record assembled from fragments is kept only up to
    /// `limit` bytes: a longer one is counted, and returned as [`Bounded::Oversized`] once it
    /// is complete (a record that is not completed is dropped as by `next`). Records, damage
    /// and the end of the log are otherwise exactly those of `next`, so the memory used is
    /// bounded by `limit` whatever the size of the records. A record in one chunk is always
    /// returned (it is borrowed from the block). With `limit` 0 nothing is assembled: enough
    /// to count records and their sizes.
    ///
    /// ```
    /// use logfmt_std::{LogWriter, LogReaderOptions, LogWriterOptions, advanced::{Bounded, LogReader}};
    ///
    /// let mut writer = LogWriter::new(Vec::new(), &LogWriterOptions::new());
    /// writer.add_record(&[1u8; 1000])?;
    /// writer.add_record(&[2u8; 100_000])?;
    /// let log = writer.close()?;
    ///
    /// let mut reader = LogReader::from_slice(&log, &LogReaderOptions::new());
    /// assert!(matches!(reader.next_bounded(0)?, Some(Bounded::Record(r)) if r.data.len() == 1000));
    /// let Some(Bounded::Oversized(big)) = reader.next_bounded(64 * 1024)? else { panic!() };
    /// assert_eq!((big.offset, big.len), (1007, 100_000));
    /// assert!(reader.next_bounded(0)?.is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As for [`next`](Self::next).
    pub fn next_bounded(
        &mut self,
        limit: usize,
    ) -> Result<Option<Bounded<'_>>, ReadError<S::Error>> {
        self.assembler.room_mut().limit = limit;
        if let Some((payload, offset, end)) = self.next_full() {
            return Ok(Some(self.single(offset, end, payload).into()));
        }
        loop {
            if self.unpacking.is_some() {
                match self.unpack()? {
                    Some(Unpacked::Record {
                        offset,
                        end,
                        index,
                        place,
                        data,
                    }) => {
                        let bytes = self.placed(place).get(data).unwrap_or_default();
                        return Ok(Some(Bounded::Record(Record::new(
                            offset,
                            end,
                            Some(index),
                            bytes,
                        ))));
                    }
                    Some(Unpacked::Step(Step::Damage(damage))) => {
                        return Ok(Some(Bounded::Damage(damage)));
                    }
                    Some(Unpacked::Step(Step::Done)) => return Ok(None),
                    Some(Unpacked::Step(_)) | None => continue,
                }
            }
            let Some(step) = self.next_step()? else {
                continue;
            };
            match step {
                Step::Continue => {}
                Step::Done => return Ok(None),
                Step::Damage(damage) => return Ok(Some(Bounded::Damage(damage))),
                Step::Oversized(oversized) => return Ok(Some(Bounded::Oversized(oversized))),
                Step::Single {
                    offset,
                    end,
                    payload,
                    form: Form::Pack,
                } => self.open_pack(offset, end, Place::Block, payload)?,
                Step::Single {
                    offset,
                    end,
                    payload,
                    form: Form::Plain,
                } => return Ok(Some(self.single(offset, end, payload).into())),
                Step::Single {
                    offset,
                    end,
                    payload,
                    form: Form::Compressed(codec),
                } => {
                    if self.decompress(offset, end, Place::Block, payload, codec)? {
                        return Ok(Some(self.decompressed(offset, end)));
                    }
                }
                Step::Assembled {
                    offset,
                    end,
                    form: Form::Pack,
                } => {
                    let len = self.assembler.record().len();
                    self.open_pack(offset, end, Place::Buffer, 0..len)?;
                }
                Step::Assembled {
                    offset,
                    end,
                    form: Form::Compressed(codec),
                } => {
                    let len = self.assembler.record().len();
                    if self.decompress(offset, end, Place::Buffer, 0..len, codec)? {
                        return Ok(Some(self.decompressed(offset, end)));
                    }
                }
                Step::Assembled {
                    offset,
                    end,
                    form: Form::Plain,
                } => {
                    return Ok(Some(Bounded::Record(Record::new(
                        offset,
                        end,
                        None,
                        self.assembler.record(),
                    ))));
                }
            }
        }
    }

    /// The next step to act on: one held back (already through the recycled-file check), or
    /// one read now and checked; `None` to read on.
    fn next_step(&mut self) -> Result<Option<Step>, ReadError<S::Error>> {
        if let Some(step) = self.pending.pop_front() {
            return Ok(Some(step));
        }
        if let Some((offset, end, payload, form)) = self.held.take() {
            self.pending.push_front(Step::Single {
                offset,
                end,
                payload,
                form,
            });
            return Ok(None);
        }
        let step = self.step()?;
        Ok(self.recycled_end(step))
    }

    /// The bytes a record of a pack lies in.
    fn placed(&self, place: Place) -> &[u8] {
        match place {
            Place::Block => self.inner.get_ref().block(),
            Place::Buffer => self.assembler.record(),
            Place::Decoded => &self.decoded,
        }
    }

    /// How reading stopped, once [`next`](Self::next) has returned `None` for good.
    pub fn ending(&self) -> Option<Ending> {
        self.ending
    }

    /// The torn or unwritten tail of the log, found whatever the recovery mode once the end
    /// of the log was read: truncating the file at its offset removes exactly the bytes that
    /// hold no complete record. `None` if the log ends cleanly (or in a block trailer).
    pub fn tail(&self) -> Option<Damage> {
        self.tail
    }

    /// The codec of RocksDB's compression record (type 9), if the log has one so far: its
    /// records after it are compressed (and decompressed by this reader).
    pub fn compression(&self) -> Option<u32> {
        self.compression
    }

    /// Records returned so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// File offset just past the last chunk read.
    pub fn position(&self) -> u64 {
        self.inner.position()
    }

    /// The chunk format: as the options gave it, or as the first chunk of a known type decided
    /// it ([`ReadFormat::Auto`]), with its log number.
    pub fn format(&self) -> ChunkFormat {
        self.inner.format()
    }

    /// File offset just past the last complete record or reported drop: where the log can be
    /// continued once [`tail`](Self::tail) is removed.
    pub fn last_clean_end(&self) -> u64 {
        self.last_clean.unwrap_or(self.start)
    }

    /// The source.
    pub fn get_ref(&self) -> &S {
        self.inner.get_ref()
    }

    /// The source, mutably: for feeding a tailing source. Moving its read position corrupts
    /// what is read.
    pub fn get_mut(&mut self) -> &mut S {
        self.inner.get_mut()
    }

    /// Gives back the source.
    pub fn into_inner(self) -> S {
        self.inner.into_inner()
    }
}
