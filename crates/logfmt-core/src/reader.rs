//! The record reader: whole logical records, LevelDB's `log::Reader`.

use core::fmt;
use core::ops::Range;

use crate::assembler::{Assembler, Assembly, SliceRoom};
use crate::checksum;
use crate::decoder::Step;
use crate::error::{Corruption, CorruptionKind};
use crate::format::{ChunkFormat, FragmentKind, HOT_PATHS};
use crate::fragments::FragmentReader;
use crate::options::{LogEnd, ReadOptions};
use crate::pack::{self, Pack, Unpacker};
use crate::source::{BlockSource, SliceSource};

/// A logical record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Record<'a> {
    /// File offset of the record's first chunk (LevelDB's `LastRecordOffset`); for a record
    /// from a [pack](crate::pack), the pack's.
    pub offset: u64,
    /// File offset just past the record's last chunk (RocksDB's `LastRecordEnd`); for a record
    /// from a pack, the pack's.
    pub end: u64,
    /// For a record from a pack, its index in the pack (from 0); `None` for a plain record.
    pub index: Option<u32>,
    /// The payload.
    pub data: &'a [u8],
}

impl<'a> Record<'a> {
    /// A record at `offset..end`, its index in a pack (`None` for a plain record), and its
    /// payload: for a reader built on this crate's parts.
    pub const fn new(offset: u64, end: u64, index: Option<u32>, data: &'a [u8]) -> Self {
        Self {
            offset,
            end,
            index,
            data,
        }
    }
}

/// A record this reader returns as it is stored because it is coded (`logfmt-std` decodes both
/// kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Coded<'a> {
    /// File offset of the record's first chunk.
    pub offset: u64,
    /// File offset just past its last chunk.
    pub end: u64,
    /// What it is.
    pub kind: CodedKind,
    /// The record as stored.
    pub data: &'a [u8],
}

/// What a [`Coded`] record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum CodedKind {
    /// A [pack](crate::pack) whose body is compressed: parse it with [`Pack::parse`], decode
    /// its body, read it with [`pack::records_in`](crate::pack::records_in).
    Pack,
    /// A record of a RocksDB write-ahead log with compression: one compressed stream (a zstd
    /// frame for codec 7), after RocksDB's compression record.
    Stream {
        /// The codec its compression record named.
        codec: u32,
    },
}

/// A complete record that did not fit the reader's buffer: skipped, reading goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Oversized {
    /// File offset of the record's first chunk.
    pub offset: u64,
    /// File offset just past the record's last chunk.
    pub end: u64,
    /// The record's length (a compressed one's, decoded: where it was decoded only as far as
    /// a limit, that limit and one byte).
    pub len: u64,
    /// The record is a [pack](crate::pack) or a compressed record: read whole or not at all
    /// (it cannot be streamed as it is stored); a pack's records are skipped with it.
    pub coded: bool,
}

impl Oversized {
    /// A record at `offset..end` of `len` bytes (decoded), `coded` if it is a pack or a
    /// compressed record: for a reader built on this crate's parts.
    pub const fn new(offset: u64, end: u64, len: u64, coded: bool) -> Self {
        Self {
            offset,
            end,
            len,
            coded,
        }
    }
}

/// What [`Reader::next`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Item<'a> {
    /// A record.
    Record(Record<'a>),
    /// Bytes dropped, as LevelDB's reader reports them.
    Corruption(Corruption),
    /// A valid record larger than the buffer, skipped. Not a corruption: LevelDB would have
    /// returned it.
    Oversized(Oversized),
    /// A compressed pack, or a record compressed by RocksDB's WAL compression: the caller
    /// decodes it.
    Coded(Coded<'a>),
}

impl<'a> Item<'a> {
    /// The record, or what was dropped instead as a value to log ([`Dropped`]): what
    /// [`Reader::next_record`] returns.
    pub fn into_record(self) -> Result<Record<'a>, Dropped> {
        match self {
            Item::Record(record) => Ok(record),
            Item::Corruption(corruption) => Err(Dropped {
                offset: corruption.offset,
                bytes: corruption.bytes,
                reason: DropReason::Corruption(corruption.kind),
            }),
            Item::Oversized(oversized) => Err(Dropped {
                offset: oversized.offset,
                bytes: oversized.end.saturating_sub(oversized.offset),
                reason: DropReason::TooLarge { len: oversized.len },
            }),
            Item::Coded(coded) => Err(Dropped {
                offset: coded.offset,
                bytes: coded.end.saturating_sub(coded.offset),
                reason: DropReason::Compressed(coded.kind),
            }),
        }
    }
}

/// What [`Reader::next_record`] read but did not return as a record: where, how many bytes of
/// the log, and why. Its [`Display`](fmt::Display) text is one line, to log as it is; reading
/// goes on after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Dropped {
    /// File offset where the bytes begin (for damage, that of LevelDB's report).
    pub offset: u64,
    /// How many bytes of the log were not returned as records (for damage, LevelDB's count).
    pub bytes: u64,
    /// Why.
    pub reason: DropReason,
}

/// Why a [`Dropped`] region was not returned as records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum DropReason {
    /// Damage, as LevelDB's reader reports it.
    Corruption(CorruptionKind),
    /// A complete, valid record of `len` bytes, larger than the reader's buffer. LevelDB would
    /// have returned it: a larger buffer reads it.
    TooLarge {
        /// The record's length.
        len: u64,
    },
    /// A compressed pack, or a record of a RocksDB log with WAL compression: decoded by
    /// `logfmt-std`, not here.
    Compressed(CodedKind),
}

impl fmt::Display for Dropped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "dropped {} bytes at offset {}: ",
            self.bytes, self.offset
        )?;
        match self.reason {
            DropReason::Corruption(kind) => write!(f, "{kind}"),
            DropReason::TooLarge { len } => {
                write!(f, "a record of {len} bytes, larger than the buffer")
            }
            DropReason::Compressed(CodedKind::Pack) => f.write_str("a compressed pack"),
            DropReason::Compressed(CodedKind::Stream { codec }) => {
                write!(f, "a compressed record (codec {codec})")
            }
        }
    }
}

impl core::error::Error for Dropped {}

/// Where the body of the pack being read lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// In the current block (a pack in one chunk).
    Block,
    /// In the buffer (a pack assembled from fragments).
    Buffer,
}

/// A record of a pack, located.
#[derive(Debug)]
struct UnpackedRecord {
    offset: u64,
    end: u64,
    index: u32,
    place: Place,
    data: Range<usize>,
}

/// Reads whole logical records, with exactly the records, offsets and drop reports of LevelDB's
/// `log::Reader`.
///
/// A record that lies in one chunk is returned as a slice of the block (no copy), whatever the
/// buffer's size; a fragmented one is assembled in the buffer given to [`new`](Self::new). A
/// fragmented record larger than that buffer is skipped and reported as [`Item::Oversized`];
/// reading goes on. (To stream records of any size with no buffer at all, use
/// [`FragmentReader`].)
///
/// ```
/// use logfmt_core::{parts::Item, Reader, Writer, FnSink, BLOCK_SIZE};
///
/// let mut log = Vec::new();
/// let mut block = [0u8; BLOCK_SIZE];
/// let mut writer = Writer::new(FnSink(|b: &[u8]| { log.extend_from_slice(b); Ok::<_, core::convert::Infallible>(()) }), &mut block);
/// writer.add_record(b"hello")?;
/// writer.add_record(&[7u8; 40_000])?; // spans two blocks
/// writer.flush()?;
/// drop(writer);
///
/// let mut scratch = [0u8; 64 * 1024];
/// let mut reader = Reader::from_slice(&log, &mut scratch);
/// let Some(Item::Record(r)) = reader.next()? else { panic!() };
/// assert_eq!((r.offset, r.data), (0, &b"hello"[..]));
/// let Some(Item::Record(r)) = reader.next()? else { panic!() };
/// assert_eq!((r.offset, r.data.len()), (12, 40_000));
/// assert_eq!(reader.next()?, None);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Reader<'b, S> {
    inner: FragmentReader<S>,
    assembler: Assembler<SliceRoom<'b>>,
    unpacking: Option<Unpacker<Place>>,
    /// A fragment copied into the room while its checksum was checked ([`Self::prefill`]):
    /// its chunk's offset and kind, and where in the room it went.
    placed: Option<(u64, FragmentKind, usize)>,
    /// Tests turn the fused path off, to compare.
    #[cfg(test)]
    pub(crate) fused: bool,
}

impl<'a, 'b> Reader<'b, SliceSource<'a>> {
    /// A reader over a log in memory, assembling fragmented records in `buffer`.
    pub fn from_slice(log: &'a [u8], buffer: &'b mut [u8]) -> Self {
        Self::new(SliceSource::new(log), buffer)
    }
}

impl<'b, S: BlockSource> Reader<'b, S> {
    /// A reader over `source` with default options, assembling fragmented records in `buffer`.
    pub fn new(source: S, buffer: &'b mut [u8]) -> Self {
        Self::with_options(source, buffer, &ReadOptions::default())
    }

    /// A reader over `source` with `options`.
    pub fn with_options(source: S, buffer: &'b mut [u8], options: &ReadOptions) -> Self {
        Self {
            inner: FragmentReader::with_options(source, options),
            assembler: Assembler::new(SliceRoom::new(buffer)),
            unpacking: None,
            placed: None,
            #[cfg(test)]
            fused: true,
        }
    }

    /// The next record or report; `None` at the end of the log (and on every call after it).
    ///
    /// # Errors
    /// A read error from the source; the log is treated as ended there (LevelDB counts it as a
    /// drop of one block).
    #[expect(
        clippy::should_implement_trait,
        reason = "a lending iterator: items borrow the reader, which `Iterator` cannot express"
    )]
    #[inline(always)]
    pub fn next(&mut self) -> Result<Option<Item<'_>>, S::Error> {
        // Always inlined: the hot paths are a few dozen instructions, and a call (the item
        // returned through memory, the registers saved) cost as much as a 16-byte record's
        // whole read (callgrind, `logfmt-bench`).
        if HOT_PATHS {
            if self.unpacking.is_none() {
                if let Some((range, offset, end)) = self.inner.next_full() {
                    let data = self.inner.source.block().get(range).unwrap_or_default();
                    return Ok(Some(Item::Record(Record {
                        offset,
                        end,
                        index: None,
                        data,
                    })));
                }
            } else if let Some(next) = self.unpack() {
                return Ok(Some(self.unpacked(next)));
            }
        }
        self.next_slow()
    }

    /// The fused path for records that span blocks: if the next chunk is a fragment of one,
    /// copies its payload to where the room would put it and checks its checksum in the same
    /// pass ([`checksum::extend_copy`]); if it matches, the decoder skips the check and the
    /// push skips the copy. Whatever the decoder then makes of the chunk (a fragment, damage,
    /// a skip), it decides as without this: a mismatch leaves both to the general path, which
    /// checks again and reports it.
    fn prefill(&mut self) {
        /// CRC-32C of the `FIRST`, `MIDDLE` and `LAST` type bytes.
        const TYPE_CRC: [u32; 3] = [0xb346_23a6, 0x412d_a0a5, 0x95e7_c44e];
        #[cfg(test)]
        if !self.fused {
            return;
        }
        let Some(candidate) = self.inner.fused_candidate() else {
            return;
        };
        // Never over bytes of a record in progress: a `FIRST` goes to the start of the room
        // only when none is (a record completed before is the caller's no more).
        let filled = self.assembler.record().len();
        let (at, prefix) = match candidate.kind {
            FragmentKind::First if !candidate.in_record => (0, TYPE_CRC[0]),
            FragmentKind::Middle => (filled, TYPE_CRC[1]),
            FragmentKind::Last => (filled, TYPE_CRC[2]),
            FragmentKind::First | FragmentKind::Full => return,
        };
        let len = candidate.payload.len();
        let (Some(payload), Some(spare)) = (
            self.inner.source.block().get(candidate.payload),
            self.assembler.room_mut().spare(at, len),
        ) else {
            return;
        };
        if checksum::mask(checksum::extend_copy(prefix, payload, spare)) == candidate.stored {
            self.inner.verified();
            self.placed = Some((candidate.chunk_offset, candidate.kind, at));
        }
    }

    /// Every case of [`next`](Self::next), kept out of line so that its hot path inlines into
    /// the caller's loop.
    #[cfg_attr(not(target_os = "none"), inline(never))]
    fn next_slow(&mut self) -> Result<Option<Item<'_>>, S::Error> {
        loop {
            if self.unpacking.is_some()
                && let Some(next) = self.unpack()
            {
                return Ok(Some(self.unpacked(next)));
            }
            if HOT_PATHS {
                self.prefill();
            }
            let Some(step) = self.inner.next_step()? else {
                return Ok(None);
            };
            let placed = if HOT_PATHS { self.placed.take() } else { None };
            match step {
                Step::Fragment(raw) => {
                    let (offset, end, pack) = (raw.record_offset, raw.end, raw.pack);
                    let compressed = raw.compressed;
                    let data = self.inner.fragment(raw.clone()).data;
                    let assembly = match placed {
                        Some((chunk_offset, kind, at))
                            if chunk_offset == raw.chunk_offset && kind == raw.kind =>
                        {
                            self.assembler.push_placed(raw.kind, data, at)
                        }
                        _ => self.assembler.push(raw.kind, data),
                    };
                    let (place, range) = match assembly {
                        Assembly::Whole => (Place::Block, raw.payload),
                        Assembly::Pending => continue,
                        Assembly::Complete => (Place::Buffer, 0..self.assembler.record().len()),
                        Assembly::Overflowed { len } => {
                            return Ok(Some(Item::Oversized(Oversized {
                                offset,
                                end,
                                len,
                                coded: pack || compressed.is_some(),
                            })));
                        }
                    };
                    if pack && let Some(corruption) = self.open_pack(offset, end, place, &range) {
                        return Ok(Some(Item::Corruption(corruption)));
                    }
                    if self.unpacking.is_some() {
                        continue;
                    }
                    let data = self.bytes(place, range);
                    let coded = |kind| {
                        Item::Coded(Coded {
                            offset,
                            end,
                            kind,
                            data,
                        })
                    };
                    return Ok(Some(if pack {
                        coded(CodedKind::Pack)
                    } else if let Some(codec) = compressed {
                        coded(CodedKind::Stream { codec })
                    } else {
                        Item::Record(Record {
                            offset,
                            end,
                            index: None,
                            data,
                        })
                    }));
                }
                Step::Aborted { report, .. } => {
                    self.assembler.abort();
                    if let Some(corruption) = report {
                        return Ok(Some(Item::Corruption(corruption)));
                    }
                }
                Step::Corruption(corruption) => return Ok(Some(Item::Corruption(corruption))),
                Step::Skipped(_) => {}
                Step::NeedBlock | Step::SkipInput(_) | Step::Pending | Step::Eof => {
                    return Ok(None);
                }
            }
        }
    }

    /// Bytes `range` of the current block or of the buffer.
    fn bytes(&self, place: Place, range: Range<usize>) -> &[u8] {
        let bytes = match place {
            Place::Block => self.inner.source.block(),
            Place::Buffer => self.assembler.record(),
        };
        bytes.get(range).unwrap_or_default()
    }

    /// A whole pack at `range` of `place`: a stored one is read from the next call on; a coded
    /// one is left for the caller; one that does not parse is reported.
    fn open_pack(
        &mut self,
        offset: u64,
        end: u64,
        place: Place,
        range: &Range<usize>,
    ) -> Option<Corruption> {
        let data = self.bytes(place, range.clone());
        match Pack::parse(data) {
            Ok(parsed) if parsed.codec() == pack::STORED => {
                let body = range.end - parsed.body().len()..range.end;
                self.unpacking = Some(Unpacker::new(offset, end, place, body, parsed.count()));
                None
            }
            Ok(_) => None,
            Err(error) => Some(bad_pack(offset, data.len(), error, 0)),
        }
    }

    /// The next record of the pack being read, located, or the report that ends the pack;
    /// `None` once it is read (the pack is then done).
    #[inline(always)]
    fn unpack(&mut self) -> Option<Result<UnpackedRecord, Corruption>> {
        let unpacking = self.unpacking.as_mut()?;
        let place = unpacking.place();
        let bytes = match place {
            Place::Block => self.inner.source.block(),
            Place::Buffer => self.assembler.record(),
        };
        let (offset, end) = (unpacking.offset(), unpacking.end());
        let next = unpacking.next(bytes);
        if !matches!(next, Some(Ok(_))) {
            self.unpacking = None;
        }
        Some(next?.map(|(index, data)| UnpackedRecord {
            offset,
            end,
            index,
            place,
            data,
        }))
    }

    /// The item for what [`unpack`](Self::unpack) found.
    #[inline(always)]
    fn unpacked(&self, next: Result<UnpackedRecord, Corruption>) -> Item<'_> {
        match next {
            Ok(record) => Item::Record(Record {
                offset: record.offset,
                end: record.end,
                index: Some(record.index),
                data: self.bytes(record.place, record.data),
            }),
            Err(corruption) => Item::Corruption(corruption),
        }
    }

    /// The next record, or what was dropped instead ([`Dropped`]: damage, a record too large
    /// for the buffer, a compressed record), as a value to log; `None` at the end of the log.
    /// The record loop for a program that only wants records:
    ///
    /// ```
    /// use logfmt_core::{Reader, SliceWriter};
    ///
    /// let mut log = [0u8; 64];
    /// let mut writer = SliceWriter::new(&mut log);
    /// writer.add_record(b"hello")?;
    /// let len = writer.len();
    ///
    /// let mut buffer = [0u8; 256];
    /// let mut reader = Reader::from_slice(&log[..len], &mut buffer);
    /// while let Some(read) = reader.next_record()? {
    ///     match read {
    ///         Ok(record) => assert_eq!(record.data, b"hello"),
    ///         Err(dropped) => panic!("{dropped}"), // e.g. log it and go on
    ///     }
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// A read error from the source, as [`next`](Self::next).
    #[inline]
    pub fn next_record(&mut self) -> Result<Option<Result<Record<'_>, Dropped>>, S::Error> {
        Ok(self.next()?.map(Item::into_record))
    }

    /// Offset of the first chunk of the last record returned (LevelDB's `LastRecordOffset`).
    pub fn last_record_offset(&self) -> u64 {
        self.inner.last_record_offset()
    }

    /// File offset just past the last chunk read.
    pub fn position(&self) -> u64 {
        self.inner.position()
    }

    /// File offset just past the last chunk of the last record returned (RocksDB's
    /// `LastRecordEnd`): where a writer may safely continue the log, if nothing follows.
    pub fn last_record_end(&self) -> u64 {
        self.inner.last_record_end()
    }

    /// How the log ended, once [`next`](Self::next) has returned `None` (in tailing mode:
    /// `None` until it truly ends).
    pub fn end(&self) -> Option<LogEnd> {
        self.inner.end()
    }

    /// The chunk format: as the options gave it, or as the first chunk decided it.
    pub fn format(&self) -> ChunkFormat {
        self.inner.format()
    }

    /// The source, mutably: for feeding a tailing source. Moving its read position corrupts
    /// what is read.
    pub fn get_mut(&mut self) -> &mut S {
        self.inner.get_mut()
    }

    /// The source.
    pub fn get_ref(&self) -> &S {
        self.inner.get_ref()
    }

    /// Gives back the source.
    pub fn into_inner(self) -> S {
        self.inner.into_inner()
    }
}

/// The report of a pack whose body does not hold together: `bytes` of it dropped, `lost`
/// records.
fn bad_pack(offset: u64, bytes: usize, error: pack::PackError, lost: u32) -> Corruption {
    Corruption {
        offset,
        bytes: bytes as u64,
        kind: CorruptionKind::BadPack { error, lost },
    }
}
