//! [`LogReader`]: whole records with a [`RecoveryMode`] applied, optionally limited to a
//! byte range of the log.

use std::collections::VecDeque;
use std::ops::Range;

use logfmt_core::pack::{self, Pack, PackError, Unpacker};
use logfmt_core::parts::assembler::{Assembler, Assembly, Room};
use logfmt_core::{
    BLOCK_SIZE, BlockSource, LogEnd, ReadOptions, Record,
    parts::{
        ChunkFormat, CorruptionKind, Event, FragmentKind, FragmentReader, Oversized, ReadFormat,
        SkipKind,
    },
};

use crate::compression::{self, MAX_DECODED};
use crate::recovery::{Action, Damage, DamageKind, Ending, ReadError, RecoveryMode};

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

/// Follows, past a range's `end`, what the next range's reader skips at its start (see
/// `LogReader::next_leading`, which `leading` is): whether the chunk at `offset`, of the kind
/// `seen`, is one it skips.
fn next_range_skips(end: Option<u64>, leading: &mut bool, offset: u64, seen: Seen) -> bool {
    let Some(end) = end else {
        return false;
    };
    if !*leading || offset < end - end % BLOCK_SIZE as u64 {
        return false;
    }
    match seen {
        Seen::Middle => true,
        Seen::Last => {
            *leading = false;
            true
        }
        Seen::Other => {
            *leading = false;
            false
        }
    }
}

/// A chunk as the next range's resynchronisation sees it ([`next_range_skips`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Middle,
    Last,
    /// Any other chunk: it ends the resynchronisation.
    Other,
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
    /// A compressed record or pack this build has no codec for.
    NeedsFeature {
        offset: u64,
        end: u64,
    },
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

/// What [`LogReader::unpack`] took from the pack being read.
enum Unpacked {
    /// Its next record, at `data` of `place`.
    Record {
        offset: u64,
        end: u64,
        index: u32,
        place: Place,
        data: Range<usize>,
    },
    /// What the damage that ends it comes to under the recovery mode.
    Step(Step),
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
///   ([`CorruptionKind::BadPack`], under the recovery mode), with the records it loses.
///
/// **Recycled files.** RocksDB reuses obsolete log files without truncating them: after a
/// crash, the records of the new use are followed by the bytes of the earlier use. Where the
/// new records end, the earlier use's bytes generally resume in the middle of one of its
/// chunks, which reads as a bad checksum or length up to the end of that block; the next
/// block starts with a chunk of the earlier log ([`LogEnd::OldRecord`]). That pattern — a
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
                        let bytes = match place {
                            Place::Block => self.inner.get_ref().block(),
                            Place::Buffer => self.assembler.record(),
                            Place::Decoded => &self.decoded,
                        };
                        return Ok(Some(Bounded::Record(Record::new(
                            offset,
                            end,
                            Some(index),
                            bytes.get(data).unwrap_or_default(),
                        ))));
                    }
                    Some(Unpacked::Step(Step::Damage(damage))) => {
                        return Ok(Some(Bounded::Damage(damage)));
                    }
                    Some(Unpacked::Step(Step::Done)) => return Ok(None),
                    Some(Unpacked::Step(_)) | None => continue,
                }
            }
            let step = match self.pending.pop_front() {
                // Already through the recycled-file check.
                Some(step) => step,
                None => {
                    if let Some((offset, end, payload, form)) = self.held.take() {
                        self.pending.push_front(Step::Single {
                            offset,
                            end,
                            payload,
                            form,
                        });
                        continue;
                    }
                    let step = self.step()?;
                    match self.recycled_end(step) {
                        Some(step) => step,
                        None => continue,
                    }
                }
            };
            match step {
                Step::Continue => {}
                Step::Done => return Ok(None),
                Step::Damage(damage) => return Ok(Some(Bounded::Damage(damage))),
                Step::Oversized(oversized) => return Ok(Some(Bounded::Oversized(oversized))),
                Step::NeedsFeature { offset, end } => {
                    return Err(ReadError::NeedsFeature {
                        offset,
                        end,
                        feature: compression::FEATURE,
                    });
                }
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

    /// A record compressed by RocksDB's WAL compression, at `range` of `place`: decoded into
    /// the decoded buffer (`true`), or — if it does not decode — damage, or — if it decodes to
    /// more than the limit — oversized, held in `pending` (`false`).
    fn decompress(
        &mut self,
        offset: u64,
        end: u64,
        place: Place,
        range: Range<usize>,
        codec: u32,
    ) -> Result<bool, ReadError<S::Error>> {
        if !compression::BUILT {
            self.pending.push_front(Step::NeedsFeature { offset, end });
            return Ok(false);
        }
        let mut decoded = std::mem::take(&mut self.decoded);
        let bytes = match place {
            Place::Block => self.inner.get_ref().block(),
            Place::Buffer => self.assembler.record(),
            Place::Decoded => &[],
        };
        let data = bytes.get(range).unwrap_or_default();
        let limit = self.assembler.room().limit;
        let result = self
            .contexts
            .decode_stream(data, codec, &mut decoded, limit);
        let stored = data.len() as u64;
        self.decoded = decoded;
        match result {
            Ok(true) => Ok(true),
            Ok(false) => {
                // Decoded as far as the limit: longer than that, by one byte at least.
                let len = (limit.min(MAX_DECODED) as u64).saturating_add(1);
                self.pending
                    .push_front(Step::Oversized(Oversized::new(offset, end, len, true)));
                Ok(false)
            }
            Err(()) => {
                let damage = Damage {
                    offset,
                    bytes: stored,
                    kind: DamageKind::Corruption(CorruptionKind::BadCompressedRecord { codec }),
                };
                let step = self.damage(damage)?;
                self.pending.push_front(step);
                Ok(false)
            }
        }
    }

    /// The record just decompressed.
    fn decompressed(&self, offset: u64, end: u64) -> Bounded<'_> {
        Bounded::Record(Record::new(offset, end, None, &self.decoded))
    }

    /// A whole pack at `range` of `place`: its records are returned from the next step on (a
    /// pack that does not parse, or whose codec is not read here, is damage, held in
    /// `pending`).
    fn open_pack(
        &mut self,
        offset: u64,
        end: u64,
        place: Place,
        range: Range<usize>,
    ) -> Result<(), ReadError<S::Error>> {
        // A decoded pack is decoded into a buffer of its own (a pack is never in one).
        let mut decoded = std::mem::take(&mut self.decoded);
        let bytes = match place {
            Place::Block => self.inner.get_ref().block(),
            Place::Buffer => self.assembler.record(),
            Place::Decoded => &[],
        };
        let data = bytes.get(range.clone()).unwrap_or_default();
        let limit = self.assembler.room().limit;
        let error = match Pack::parse(data) {
            Ok(parsed) if parsed.codec() == pack::ZSTD && !compression::BUILT => {
                self.decoded = decoded;
                self.pending.push_front(Step::NeedsFeature { offset, end });
                return Ok(());
            }
            Ok(parsed) if parsed.codec() == pack::ZSTD => {
                let count = parsed.count();
                let declared = parsed.decoded_len().unwrap_or(0);
                if usize::try_from(declared).is_ok_and(|len| len > limit && len <= MAX_DECODED) {
                    // More than the caller's limit (not damage): not decoded, as a record
                    // longer than the limit is not assembled.
                    self.decoded = decoded;
                    self.pending.push_front(Step::Oversized(Oversized::new(
                        offset,
                        end,
                        u64::from(declared),
                        true,
                    )));
                    return Ok(());
                }
                let result = self.contexts.decode(&parsed, &mut decoded, limit);
                let len = decoded.len();
                self.decoded = decoded;
                match result {
                    Ok(()) => {
                        self.unpacking =
                            Some(Unpacker::new(offset, end, Place::Decoded, 0..len, count));
                        return Ok(());
                    }
                    Err(error) => (error, count),
                }
            }
            Ok(parsed) if parsed.codec() == pack::STORED => {
                let body = range.end - parsed.body().len()..range.end;
                self.unpacking = Some(Unpacker::new(offset, end, place, body, parsed.count()));
                return Ok(());
            }
            Ok(parsed) => (PackError::UnknownCodec(parsed.codec()), parsed.count()),
            Err(error) => (error, 0),
        };
        let damage = bad_pack(offset, data.len(), error.0, error.1);
        let step = self.damage(damage)?;
        self.pending.push_front(step);
        Ok(())
    }

    /// Takes the next record of the pack being read, located, or the damage (under the
    /// recovery mode) that ends it; `None` once it is read to its end.
    fn unpack(&mut self) -> Result<Option<Unpacked>, ReadError<S::Error>> {
        let Some(unpacking) = self.unpacking.as_mut() else {
            return Ok(None);
        };
        let place = unpacking.place();
        let bytes = match place {
            Place::Block => self.inner.get_ref().block(),
            Place::Buffer => self.assembler.record(),
            Place::Decoded => &self.decoded,
        };
        let (offset, end) = (unpacking.offset(), unpacking.end());
        match unpacking.next(bytes) {
            None => {
                self.unpacking = None;
                Ok(None)
            }
            Some(Ok((index, data))) => {
                self.records += 1;
                Ok(Some(Unpacked::Record {
                    offset,
                    end,
                    index,
                    place,
                    data,
                }))
            }
            Some(Err(corruption)) => {
                self.unpacking = None;
                self.damage(corruption.into())
                    .map(|step| Some(Unpacked::Step(step)))
            }
        }
    }

    /// The recycled-file check on each step: holds back the damage that may be the garbage
    /// where a recycled file's new records end, and drops it if an old record follows at the
    /// next block. Returns the step to act on now, or `None` to read on.
    fn recycled_end(&mut self, step: Step) -> Option<Step> {
        if let Step::Damage(damage) = &step {
            let suspect = match damage.kind {
                DamageKind::Corruption(
                    CorruptionKind::ChecksumMismatch | CorruptionKind::BadRecordLength,
                ) => {
                    self.suspects.is_empty()
                        && self.ending.is_none()
                        && self.format != ReadFormat::Legacy
                        && (damage.offset + damage.bytes).is_multiple_of(BLOCK_SIZE as u64)
                }
                // The record in progress the garbage cut off.
                DamageKind::Corruption(CorruptionKind::ErrorInMiddleOfRecord) => {
                    !self.suspects.is_empty()
                }
                _ => false,
            };
            if suspect {
                self.suspects.push(*damage);
                return None;
            }
        }
        let Some(&first) = self.suspects.first() else {
            return Some(step);
        };
        if let Step::Done = step {
            match self.ending {
                Some(Ending::Log(LogEnd::OldRecord { offset, log_number }))
                    if offset == first.offset + first.bytes =>
                {
                    // The end of this use of the file: where its last complete record ends.
                    let offset = self
                        .suspects
                        .iter()
                        .map(|d| d.offset)
                        .min()
                        .unwrap_or(first.offset);
                    self.suspects.clear();
                    self.ending = Some(Ending::Log(LogEnd::OldRecord { offset, log_number }));
                    self.last_clean = Some(offset);
                    return Some(Step::Done);
                }
                // Tailing, nothing more yet: undecided.
                None => return Some(Step::Done),
                Some(_) => {}
            }
        }
        // Damage after all: report it in order, then act on the step.
        let mut suspects = std::mem::take(&mut self.suspects).into_iter();
        let damage = suspects.next().unwrap_or(first);
        self.pending.extend(suspects.map(Step::Damage));
        self.pending.push_back(step);
        Some(Step::Damage(damage))
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

    fn single(&mut self, offset: u64, end: u64, payload: Range<usize>) -> Entry<'_> {
        let data = self
            .inner
            .get_ref()
            .block()
            .get(payload)
            .unwrap_or_default();
        Entry::Record(Record::new(offset, end, None, data))
    }

    /// The hot path of [`next_bounded`](Self::next_bounded): a whole `FULL` record next in a
    /// clean legacy log ([`FragmentReader::next_full`]), with nothing held back, no gap before
    /// it, within the range — returned as [`step`](Self::step) and
    /// [`fragment`](Self::fragment) would return it, leaving the state they would leave.
    #[inline]
    fn next_full(&mut self) -> Option<(Range<usize>, u64, u64)> {
        let at = self.inner.position();
        if self.unpacking.is_some()
            || self.held.is_some()
            || self.ending.is_some()
            || self.compression.is_some()
            || self.gap_end.is_some()
            || !self.pending.is_empty()
            || !self.suspects.is_empty()
            || at < self.start
            || self.end.is_some_and(|end| at >= end)
        {
            return None;
        }
        let (payload, offset, end) = self.inner.next_full()?;
        // A FULL chunk ends the next range's resynchronisation, as the general path notes.
        next_range_skips(self.end, &mut self.next_leading, offset, Seen::Other);
        self.current = Current::None;
        self.clean_at(end);
        self.records += 1;
        self.settled = Some(end);
        Some((payload, offset, end))
    }

    /// Reads one event and acts on it.
    fn step(&mut self) -> Result<Step, ReadError<S::Error>> {
        if self.ending.is_some() {
            return Ok(Step::Done);
        }
        let event = match self.inner.next() {
            Ok(Some(event)) => event,
            Ok(None) => return self.at_end(),
            Err(e) => {
                self.ending = Some(Ending::Failed {
                    offset: self.position(),
                });
                return Err(ReadError::Io(e));
            }
        };
        let step = match event {
            Event::Fragment(fragment) => {
                let seen = match fragment.kind {
                    FragmentKind::Middle => Seen::Middle,
                    FragmentKind::Last => Seen::Last,
                    FragmentKind::First | FragmentKind::Full => Seen::Other,
                };
                next_range_skips(
                    self.end,
                    &mut self.next_leading,
                    fragment.chunk_offset,
                    seen,
                );
                let form = match (fragment.pack, fragment.compressed) {
                    (true, _) => Form::Pack,
                    (false, Some(codec)) => Form::Compressed(codec),
                    (false, None) => Form::Plain,
                };
                let (kind, record_offset, chunk_offset, end) = (
                    fragment.kind,
                    fragment.record_offset,
                    fragment.chunk_offset,
                    fragment.end,
                );
                self.written_since_clean = true;
                if kind.starts_record() {
                    self.current = if record_offset < self.start {
                        self.assembler.abort();
                        Current::Ignored
                    } else {
                        Current::Kept
                    };
                }
                let assembly = (self.current == Current::Kept)
                    .then(|| self.assembler.push(kind, fragment.data));
                let len = fragment.data.len();
                self.fragment(kind, form, record_offset, chunk_offset, end, len, assembly)?
            }
            Event::Aborted(aborted) => {
                self.current = Current::None;
                self.assembler.abort();
                // A zero header that cut the record: its bytes after the record's.
                let gap = self.gap_end.zip(self.settled).map(|(end, from)| Damage {
                    offset: from,
                    bytes: end.saturating_sub(from),
                    kind: DamageKind::Skipped,
                });
                let gap = gap.filter(|gap| gap.bytes > 0 && !self.erased);
                let report = aborted.report.map(Damage::from);
                if report.is_some() {
                    self.clean_at(self.position());
                }
                self.damages(report, gap)?
            }
            Event::Corruption(corruption) => {
                let seen = match corruption.kind {
                    CorruptionKind::MiddleWithoutStart => Seen::Middle,
                    CorruptionKind::LastWithoutStart => Seen::Last,
                    _ => Seen::Other,
                };
                if next_range_skips(self.end, &mut self.next_leading, corruption.offset, seen) {
                    self.owned = Some(corruption.offset);
                }
                let gap = self.gap(corruption.offset);
                self.clean_at(self.position());
                self.damages(gap, Some(corruption.into()))?
            }
            Event::Skipped(skip) => {
                // Chunks that end the next range's resynchronisation as they end LevelDB's: a
                // zero header (a bad chunk there) and chunks of other types.
                if matches!(
                    skip.kind,
                    SkipKind::ZeroHeader | SkipKind::Compression(_) | SkipKind::Ignorable(_)
                ) {
                    next_range_skips(self.end, &mut self.next_leading, skip.offset, Seen::Other);
                }
                match skip.kind {
                    // What LevelDB skips from an initial offset (a range reader's first block): a
                    // record's continuation, read, not lost. Its last chunk ends where a record
                    // ends.
                    SkipKind::Resync(FragmentKind::Last) => {
                        self.clean_at(skip.end());
                        Step::Continue
                    }
                    SkipKind::Resync(_) => {
                        self.written_since_clean = true;
                        Step::Continue
                    }
                    // Not damage: block trailers, ignorable chunks, a flash image's padding, writes
                    // torn by a power cut (proved by the writer's resume marker), a ring's block
                    // headers and RocksDB's compression record.
                    SkipKind::Compression(codec) => {
                        self.compression = Some(codec);
                        return Ok(Step::Continue);
                    }
                    SkipKind::Trailer
                    | SkipKind::Ignorable(_)
                    | SkipKind::Padding
                    | SkipKind::Torn
                    | SkipKind::RingHeader => {
                        return Ok(Step::Continue);
                    }
                    // A zero header: bytes hidden without a report.
                    _ => {
                        self.gap_end = Some(skip.end());
                        self.written_since_clean = true;
                        return Ok(Step::Continue);
                    }
                }
            }
            // An event of a later core: nothing to do here.
            _ => return Ok(Step::Continue),
        };
        self.settled = Some(self.position());
        self.gap_end = None;
        // Past the range's end, outside a record of the range, with no tail that could start
        // in the range: no more records or damage for this range.
        if matches!(step, Step::Continue)
            && let Some(end) = self.end
            && self.current != Current::Kept
            && self.position() >= end
            && self.last_clean.is_none_or(|clean| clean >= end)
        {
            self.ending = Some(Ending::RangeEnd { offset: end });
            return Ok(Step::Done);
        }
        Ok(step)
    }

    /// A complete record or a reported drop ends at `offset`.
    fn clean_at(&mut self, offset: u64) {
        self.last_clean = Some(offset);
        self.written_since_clean = false;
    }

    /// Acts on a fragment (whose data, for a kept record, is already in the buffer).
    #[expect(
        clippy::too_many_arguments,
        reason = "one fragment's facts, taken apart"
    )]
    fn fragment(
        &mut self,
        kind: FragmentKind,
        form: Form,
        record_offset: u64,
        chunk_offset: u64,
        end: u64,
        len: usize,
        assembly: Option<Assembly>,
    ) -> Result<Step, ReadError<S::Error>> {
        let mut before = None;
        if kind.starts_record() {
            // A gap before the record belongs to the range it starts in.
            if let Some(gap) = self.gap(chunk_offset) {
                let step = self.damage(gap)?;
                if self.ending.is_some() {
                    // Stopped before this record.
                    self.current = Current::None;
                    return Ok(step);
                }
                if matches!(step, Step::Damage(_)) {
                    before = Some(step);
                }
            }
            if let Some(range_end) = self.end
                && record_offset >= range_end
            {
                self.current = Current::None;
                self.ending = Some(Ending::RangeEnd { offset: range_end });
                return Ok(before.unwrap_or(Step::Done));
            }
        }
        if !kind.ends_record() {
            return Ok(before.unwrap_or(Step::Continue));
        }
        self.clean_at(end);
        self.current = Current::None;
        let record = match assembly {
            // A chunk never crosses a block, and blocks start at multiples of BLOCK_SIZE: the
            // payload's place in the current block follows from its end.
            Some(Assembly::Whole) => {
                let payload_start = ((end - len as u64) % BLOCK_SIZE as u64) as usize;
                Step::Single {
                    offset: record_offset,
                    end,
                    payload: payload_start..payload_start + len,
                    form,
                }
            }
            Some(Assembly::Complete) => Step::Assembled {
                offset: record_offset,
                end,
                form,
            },
            Some(Assembly::Overflowed { len }) => {
                Step::Oversized(Oversized::new(record_offset, end, len, form != Form::Plain))
            }
            // Not kept (it starts before the range).
            Some(Assembly::Pending) | None => return Ok(before.unwrap_or(Step::Continue)),
        };
        // A pack's records are counted as they are returned.
        if form != Form::Pack {
            self.records += 1;
        }
        Ok(match (before, record) {
            (None, record) => record,
            (
                Some(damage),
                Step::Single {
                    offset,
                    end,
                    payload,
                    form,
                },
            ) => {
                self.held = Some((offset, end, payload, form));
                damage
            }
            // A fragmented record ends in a later chunk than the one the gap is before.
            (Some(damage), _) => damage,
        })
    }

    /// Bytes skipped as damage (a zero header) between the last event and a record starting
    /// at `chunk_offset`: from the last event to the record, as a gap.
    fn gap(&self, chunk_offset: u64) -> Option<Damage> {
        let from = self.settled?;
        if chunk_offset <= from || self.erased || self.gap_end.is_none() {
            return None;
        }
        Some(Damage {
            offset: from,
            bytes: chunk_offset - from,
            kind: DamageKind::Skipped,
        })
    }

    /// The log has ended (or, tailing, has nothing more yet).
    fn at_end(&mut self) -> Result<Step, ReadError<S::Error>> {
        let Some(end) = self.inner.end() else {
            return Ok(Step::Done);
        };
        self.ending = Some(Ending::Log(end));
        self.current = Current::None;
        let (input_end, torn_at) = match end {
            LogEnd::Clean { offset } => (offset, None),
            LogEnd::Torn { offset, len } => (offset + len, Some(offset)),
            // An ending of a later core: nothing more to read.
            LogEnd::OldRecord { .. } | LogEnd::ReadError { .. } | _ => return Ok(Step::Done),
        };
        // A range reader that saw nothing from its first block on: a tail began before it,
        // and belongs to an earlier range.
        let unseen = if self.end.is_some() { None } else { torn_at };
        let Some(from) = self.last_clean.or(unseen) else {
            return Ok(Step::Done);
        };
        // Only block trailers and ignorable chunks since the last clean point: nothing torn.
        let silent = torn_at.is_none() && !self.written_since_clean;
        let benign = input_end <= from || silent || (self.erased && torn_at.is_none());
        if benign {
            return Ok(Step::Done);
        }
        // A torn write is never followed by written chunks: if some follow, this is damage.
        let kind = match self.inner.chunks_after_end() {
            Some(after) => DamageKind::LostTail {
                chunks: after.count,
                next: after.offset,
            },
            None => DamageKind::TornTail,
        };
        let tail = Damage {
            offset: from,
            bytes: input_end - from,
            kind,
        };
        self.tail = Some(tail);
        let step = self.damage(tail)?;
        // Reading has ended whatever the mode says.
        self.ending = Some(Ending::Log(end));
        Ok(step)
    }

    /// Applies the recovery mode to two damages in file order: the step for the first one
    /// reported, the other's queued behind it (unless the mode stopped at the first).
    fn damages(
        &mut self,
        first: Option<Damage>,
        second: Option<Damage>,
    ) -> Result<Step, ReadError<S::Error>> {
        let mut reported = None;
        for damage in [first, second].into_iter().flatten() {
            if self.ending.is_some() {
                break;
            }
            match self.damage(damage)? {
                Step::Continue => {}
                step if reported.is_none() => reported = Some(step),
                step => self.pending.push_back(step),
            }
        }
        Ok(reported.unwrap_or(Step::Continue))
    }

    /// Applies the recovery mode to `damage`.
    fn damage(&mut self, damage: Damage) -> Result<Step, ReadError<S::Error>> {
        let owned = self.owned.take() == Some(damage.offset);
        let in_range =
            owned || damage.offset >= self.start && self.end.is_none_or(|end| damage.offset < end);
        if !in_range {
            return Ok(Step::Continue);
        }
        match self.mode.action(damage.kind) {
            Action::Ignore => Ok(Step::Continue),
            Action::Report => Ok(Step::Damage(damage)),
            Action::Stop => {
                self.ending = Some(Ending::Stopped(damage));
                Ok(Step::Damage(damage))
            }
            Action::Fail => {
                self.ending = Some(Ending::Stopped(damage));
                Err(ReadError::Damaged(damage))
            }
        }
    }
}

/// The damage of a pack that does not hold together: `bytes` of it dropped, `lost` records.
fn bad_pack(offset: u64, bytes: usize, error: PackError, lost: u32) -> Damage {
    Damage {
        offset,
        bytes: bytes as u64,
        kind: DamageKind::Corruption(CorruptionKind::BadPack { error, lost }),
    }
}
