//! The streaming reader: logical records delivered fragment by fragment, with no buffer but the
//! block.
//!
//! A record of any size can be hashed, forwarded or written out as it is read. A record that
//! turns out incomplete or damaged part-way ends with an explicit [`Event::Aborted`], so a
//! consumer never takes a partial record for a whole one.

use crate::decoder::{Decoder, RawFragment, Step};
use crate::error::Corruption;
use crate::format::{ChunkFormat, FragmentKind};
use crate::options::{LogEnd, ReadOptions};
use crate::skip::Skip;
use crate::source::{BlockSource, SliceSource};

/// One fragment of a logical record, borrowed from the current block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Fragment<'a> {
    /// Where the fragment sits in its record: a record starts with `Full` or `First` and is
    /// complete after `Full` or `Last`.
    pub kind: FragmentKind,
    /// The record is a [pack](crate::pack) of records (once whole, read them with
    /// [`Pack::parse`](crate::pack::Pack::parse)).
    pub pack: bool,
    /// The record is compressed, with this codec: it follows RocksDB's compression record
    /// (see [`SkipKind::Compression`](crate::SkipKind::Compression)); once whole, it is one
    /// compressed stream.
    pub compressed: Option<u32>,
    /// File offset of the record's first chunk (LevelDB's `LastRecordOffset` once complete).
    pub record_offset: u64,
    /// File offset of this fragment's chunk header.
    pub chunk_offset: u64,
    /// File offset just past this fragment's chunk.
    pub end: u64,
    /// The fragment's payload.
    pub data: &'a [u8],
}

/// A record abandoned part-way: discard every fragment delivered for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Aborted {
    /// File offset of the record's first chunk.
    pub record_offset: u64,
    /// Payload bytes delivered for the record before it was abandoned.
    pub delivered: u64,
    /// The drop LevelDB reports for it, if any. A record cut off by the end of the input (a torn
    /// write) is abandoned silently, as is an empty `FIRST` chunk followed by a new record.
    pub report: Option<Corruption>,
}

/// Well-formed chunks after the point where a reader stopped
/// ([`FragmentReader::chunks_after_end`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct ChunksAfter {
    /// File offset of the first.
    pub offset: u64,
    /// How many follow back to back from there, the first included.
    pub count: u64,
}

/// What [`FragmentReader::next`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Event<'a> {
    /// A fragment of the current record.
    Fragment(Fragment<'a>),
    /// The current record is abandoned.
    Aborted(Aborted),
    /// Bytes were dropped outside any record in progress.
    Corruption(Corruption),
    /// Bytes were passed over without a report, as LevelDB passes them over: a block trailer,
    /// a zero header, erased flash, an ignorable chunk, what lies before the initial offset.
    Skipped(Skip),
}

/// Reads a log as a stream of fragments, with LevelDB's reader semantics.
///
/// ```
/// use logfmt_core::parts::{Event, FragmentKind, FragmentReader};
///
/// // "foo" as a FULL chunk.
/// let log = [0xdd, 0x5f, 0xb3, 0x7a, 0x03, 0x00, 0x01, b'f', b'o', b'o'];
/// let mut reader = FragmentReader::from_slice(&log);
/// let Some(Event::Fragment(f)) = reader.next()? else { panic!() };
/// assert_eq!((f.kind, f.data), (FragmentKind::Full, &b"foo"[..]));
/// assert_eq!(reader.next()?, None);
/// # Ok::<(), core::convert::Infallible>(())
/// ```
#[derive(Debug)]
pub struct FragmentReader<S> {
    pub(crate) source: S,
    decoder: Decoder,
    done: bool,
}

impl<'a> FragmentReader<SliceSource<'a>> {
    /// A reader over a log in memory, with default options.
    #[must_use]
    pub fn from_slice(log: &'a [u8]) -> Self {
        Self::new(SliceSource::new(log))
    }
}

impl<S: BlockSource> FragmentReader<S> {
    /// A reader over `source` with default options.
    pub fn new(source: S) -> Self {
        Self::with_options(source, &ReadOptions::default())
    }

    /// A reader over `source` with `options`.
    pub fn with_options(source: S, options: &ReadOptions) -> Self {
        Self {
            source,
            decoder: Decoder::new(options),
            done: false,
        }
    }

    /// The next event, or `None` at the end of the log (and on every call after it). In
    /// tailing mode `None` means "nothing more yet": a later call reads on once the source has
    /// more.
    ///
    /// # Errors
    /// A read error from the source. The log is then treated as ended at that point: if a
    /// record was in progress, the next call reports it [`Event::Aborted`], and then `None`.
    /// LevelDB counts a read error as a drop of one block.
    #[expect(
        clippy::should_implement_trait,
        reason = "a lending iterator: items borrow the reader, which `Iterator` cannot express"
    )]
    pub fn next(&mut self) -> Result<Option<Event<'_>>, S::Error> {
        Ok(match self.next_step()? {
            None => None,
            Some(Step::Fragment(raw)) => Some(Event::Fragment(self.fragment(raw))),
            Some(Step::Aborted {
                record_offset,
                bytes,
                report,
            }) => Some(Event::Aborted(Aborted {
                record_offset,
                delivered: bytes,
                report,
            })),
            Some(Step::Corruption(c)) => Some(Event::Corruption(c)),
            Some(Step::Skipped(skip)) => Some(Event::Skipped(skip)),
            Some(_) => None,
        })
    }

    /// Offset of the first chunk of the last complete record (LevelDB's `LastRecordOffset`).
    pub fn last_record_offset(&self) -> u64 {
        self.decoder.last_record_offset()
    }

    /// File offset just past the last chunk read.
    pub fn position(&self) -> u64 {
        self.decoder.position()
    }

    /// File offset just past the last chunk of the last complete record (RocksDB's
    /// `LastRecordEnd`).
    pub fn last_record_end(&self) -> u64 {
        self.decoder.last_record_end()
    }

    /// How the log ended, once [`next`](Self::next) has returned `None` (in tailing mode:
    /// `None` until it truly ends).
    pub fn end(&self) -> Option<LogEnd> {
        self.decoder.end()
    }

    /// Once [`next`](Self::next) has returned `None` for good: if the input stopped being
    /// readable before its end — a chunk cut short or a zero header in the last block, which
    /// LevelDB's reader takes for the end of the log — the well-formed chunks written after
    /// that point. `None` means nothing follows but bytes no reader can use: a torn write.
    ///
    /// ```
    /// use logfmt_core::parts::FragmentReader;
    ///
    /// // A chunk whose length runs past the end of the input, then "foo" as a FULL chunk.
    /// let mut log = vec![0, 0, 0, 0, 0xff, 0x00, 0x01];
    /// log.extend_from_slice(&[0xdd, 0x5f, 0xb3, 0x7a, 0x03, 0x00, 0x01, b'f', b'o', b'o']);
    /// let mut reader = FragmentReader::from_slice(&log);
    /// assert_eq!(reader.next()?, None); // LevelDB: a torn write, the end of the log
    /// let after = reader.chunks_after_end().expect("a chunk follows");
    /// assert_eq!((after.offset, after.count), (7, 1));
    /// # Ok::<(), core::convert::Infallible>(())
    /// ```
    pub fn chunks_after_end(&self) -> Option<ChunksAfter> {
        let (offset, count) = self.decoder.chunks_after_end(self.source.block())?;
        Some(ChunksAfter { offset, count })
    }

    /// The chunk format: as the options gave it, or as the first chunk of a known type decided
    /// it ([`ReadFormat::Auto`](crate::ReadFormat::Auto)), with its log number.
    pub fn format(&self) -> ChunkFormat {
        self.decoder.format()
    }

    /// The source, mutably: for feeding a tailing source. Moving its read position corrupts
    /// what is read.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.source
    }

    /// The source.
    pub fn get_ref(&self) -> &S {
        &self.source
    }

    /// Gives back the source.
    pub fn into_inner(self) -> S {
        self.source
    }

    pub(crate) fn fragment(&self, raw: RawFragment) -> Fragment<'_> {
        Fragment {
            kind: raw.kind,
            pack: raw.pack,
            compressed: raw.compressed,
            record_offset: raw.record_offset,
            chunk_offset: raw.chunk_offset,
            end: raw.end,
            data: self.source.block().get(raw.payload).unwrap_or_default(),
        }
    }

    /// The next event by the decoder's hot path, if it is a whole `FULL` record of a legacy log
    /// read with nothing in progress, its checksum checked: the range of its payload in the
    /// current block (`get_ref().block()`), its file offset and its end — what
    /// [`next`](Self::next) would return as an [`Event::Fragment`] of kind `Full`, with the
    /// same state after it. Otherwise `None`, and nothing is read: [`next`](Self::next) takes
    /// every case.
    ///
    /// ```
    /// use logfmt_core::{BlockSource, parts::FragmentReader, SliceWriter};
    ///
    /// let mut buffer = [0u8; 64];
    /// let mut writer = SliceWriter::new(&mut buffer);
    /// writer.add_record(b"one")?;
    /// writer.add_record(b"two")?;
    /// let mut reader = FragmentReader::from_slice(writer.as_bytes());
    /// // The first block is not loaded yet: the general path first.
    /// assert!(reader.next_full().is_none());
    /// assert!(reader.next()?.is_some());
    /// let (payload, offset, end) = reader.next_full().expect("a FULL record");
    /// assert_eq!((&reader.get_ref().block()[payload], offset, end), (&b"two"[..], 10, 20));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline(always)]
    pub fn next_full(&mut self) -> Option<(core::ops::Range<usize>, u64, u64)> {
        // After the end of the log the decoder's hot path is off: `None`, as `next` returns.
        let (payload, offset) = self.decoder.fast_full(self.source.block())?;
        let end = offset + (crate::format::HEADER_SIZE + payload.len()) as u64;
        Some((payload, offset, end))
    }

    /// The chunk at the current position if the reader may verify it while copying it
    /// ([`Decoder::fused_candidate`](crate::decoder::Decoder::fused_candidate)).
    #[inline]
    pub(crate) fn fused_candidate(&self) -> Option<crate::decoder::Candidate> {
        self.decoder.fused_candidate(self.source.block())
    }

    /// The reader verified the candidate's checksum.
    pub(crate) fn verified(&mut self) {
        self.decoder.verified();
    }

    /// Drives the decoder to its next event: a fragment, an abort, a corruption, or `None`.
    pub(crate) fn next_step(&mut self) -> Result<Option<Step>, S::Error> {
        if self.done {
            return Ok(None);
        }
        loop {
            match self.decoder.step(self.source.block()) {
                Step::NeedBlock => {
                    if let Err(e) = self.source.load_next() {
                        self.decoder.read_failed();
                        return Err(e);
                    }
                    self.decoder
                        .block_loaded(self.source.block().len(), self.source.is_last());
                }
                Step::SkipInput(bytes) => {
                    if let Err(e) = self.source.skip(bytes) {
                        self.decoder.read_failed();
                        return Err(e);
                    }
                }
                Step::Pending => match self.source.refill() {
                    Ok(true) if self.decoder.at_short_block() => {
                        self.decoder
                            .block_loaded(self.source.block().len(), self.source.is_last());
                    }
                    Ok(_) => return Ok(None),
                    Err(e) => {
                        self.decoder.read_failed();
                        return Err(e);
                    }
                },
                Step::Eof => {
                    self.done = true;
                    return Ok(None);
                }
                step => return Ok(Some(step)),
            }
        }
    }
}
