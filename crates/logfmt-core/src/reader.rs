//! The record reader: whole logical records, LevelDB's `log::Reader`.

use crate::assembler::{Assembler, Assembly, SliceRoom};
use crate::decoder::Step;
use crate::error::Corruption;
use crate::format::{ChunkFormat, HOT_PATHS};
use crate::fragments::FragmentReader;
use crate::options::{LogEnd, ReadOptions};
use crate::source::{BlockSource, SliceSource};

/// A logical record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Record<'a> {
    /// File offset of the record's first chunk (LevelDB's `LastRecordOffset`).
    pub offset: u64,
    /// File offset just past the record's last chunk (RocksDB's `LastRecordEnd`).
    pub end: u64,
    /// The payload.
    pub data: &'a [u8],
}

/// A complete record that did not fit the reader's buffer: skipped, reading goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Oversized {
    /// File offset of the record's first chunk.
    pub offset: u64,
    /// File offset just past the record's last chunk.
    pub end: u64,
    /// The record's length.
    pub len: u64,
}

/// What [`Reader::next`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Item<'a> {
    /// A record.
    Record(Record<'a>),
    /// Bytes dropped, as LevelDB's reader reports them.
    Corruption(Corruption),
    /// A valid record larger than the buffer, skipped. Not a corruption: LevelDB would have
    /// returned it.
    Oversized(Oversized),
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
/// use logfmt_core::{Item, Reader, Writer, FnSink, BLOCK_SIZE};
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
    #[inline]
    pub fn next(&mut self) -> Result<Option<Item<'_>>, S::Error> {
        if HOT_PATHS && let Some((range, offset, end)) = self.inner.fast_full() {
            let data = self.inner.source.block().get(range).unwrap_or_default();
            return Ok(Some(Item::Record(Record { offset, end, data })));
        }
        self.next_slow()
    }

    /// Every case of [`next`](Self::next), kept out of line so that its hot path inlines into
    /// the caller's loop.
    #[cfg_attr(not(target_os = "none"), inline(never))]
    fn next_slow(&mut self) -> Result<Option<Item<'_>>, S::Error> {
        loop {
            let Some(step) = self.inner.next_step()? else {
                return Ok(None);
            };
            match step {
                Step::Fragment(raw) => {
                    let (offset, end) = (raw.record_offset, raw.end);
                    let assembly = self
                        .assembler
                        .push(raw.kind, self.inner.fragment(raw.clone()).data);
                    match assembly {
                        Assembly::Whole => {
                            let data = self.inner.fragment(raw).data;
                            return Ok(Some(Item::Record(Record { offset, end, data })));
                        }
                        Assembly::Pending => {}
                        Assembly::Complete => {
                            let data = self.assembler.record();
                            return Ok(Some(Item::Record(Record { offset, end, data })));
                        }
                        Assembly::Overflowed { len } => {
                            return Ok(Some(Item::Oversized(Oversized { offset, end, len })));
                        }
                    }
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
