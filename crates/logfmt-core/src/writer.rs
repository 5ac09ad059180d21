//! The writer: logical records cut into chunks in a caller-provided block buffer, byte for byte
//! as LevelDB's `log::Writer` lays them out.
//!
//! Invariants of the layout:
//! - a record that fits in the rest of the block is one `FULL` chunk; otherwise a `FIRST` chunk
//!   fills the block, a `MIDDLE` chunk fills each further block, and a `LAST` chunk ends it;
//! - a zero-length record is one `FULL` chunk with an empty payload;
//! - a chunk never starts in the last `header size − 1` bytes of a block: those bytes become a
//!   zero trailer, written when the next record arrives (so a log can end 1–6 bytes short of a
//!   block boundary, exactly as LevelDB leaves it);
//! - with exactly a header's worth of bytes left, a non-empty record starts with an empty
//!   `FIRST` chunk there.
//!
//! Bytes reach the [`Sink`] a whole block at a time, or as the unsent part of the current block
//! on [`Writer::flush`].

use core::borrow::BorrowMut;

use crate::checksum;
use crate::error::WriteError;
use crate::format::{
    BLOCK_SIZE, Format, FragmentKind, HEADER_SIZE, HOT_PATHS, RECYCLABLE_HEADER_SIZE, RecordType,
};

/// Where a [`Writer`] sends its bytes, in order.
pub trait Sink {
    /// The error writing can fail with.
    type Error;

    /// Writes all of `bytes`, or fails.
    ///
    /// # Errors
    /// Whatever the destination reports; the writer is poisoned after it.
    fn write(&mut self, bytes: &[u8]) -> Result<(), Self::Error>;

    /// Pushes written bytes on to their destination (not necessarily durably).
    ///
    /// # Errors
    /// Whatever the destination reports.
    fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

impl<S: Sink + ?Sized> Sink for &mut S {
    type Error = S::Error;

    fn write(&mut self, bytes: &[u8]) -> Result<(), S::Error> {
        (**self).write(bytes)
    }

    fn flush(&mut self) -> Result<(), S::Error> {
        (**self).flush()
    }
}

/// A [`Sink`] over any [`embedded_io::Write`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoSink<W>(pub W);

impl<W: embedded_io::Write> Sink for IoSink<W> {
    type Error = W::Error;

    fn write(&mut self, bytes: &[u8]) -> Result<(), W::Error> {
        self.0.write_all(bytes)
    }

    fn flush(&mut self) -> Result<(), W::Error> {
        self.0.flush()
    }
}

/// A [`Sink`] that calls a function with each run of bytes — no I/O trait needed (for example to
/// program a flash page directly).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FnSink<F>(pub F);

impl<F: FnMut(&[u8]) -> Result<(), E>, E> Sink for FnSink<F> {
    type Error = E;

    fn write(&mut self, bytes: &[u8]) -> Result<(), E> {
        (self.0)(bytes)
    }
}

/// Writer options.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct WriteOptions {
    /// The chunk format. Default: LevelDB's legacy format.
    pub format: Format,
    /// Length of the log the writer continues (LevelDB's `Writer(dest, dest_length)`): the new
    /// records go after that many bytes, and the block offset is `start % BLOCK_SIZE`. The sink
    /// must be positioned at that length. Only safe at the end of the last valid record.
    pub start: u64,
}

impl WriteOptions {
    /// The defaults: legacy format, a new log.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`format`](Self::format).
    #[must_use]
    pub fn format(mut self, format: Format) -> Self {
        self.format = format;
        self
    }

    /// Sets [`start`](Self::start).
    #[must_use]
    pub fn start(mut self, start: u64) -> Self {
        self.start = start;
        self
    }
}

/// Where a record was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Written {
    /// File offset of the record's first chunk.
    pub offset: u64,
    /// File offset just past its last chunk (the log's length now).
    pub end: u64,
}

impl Written {
    /// A record written at `offset..end`: for a writer built on this crate's parts.
    pub const fn new(offset: u64, end: u64) -> Self {
        Self { offset, end }
    }
}

/// The layout engine shared by [`Writer`] and [`SliceWriter`]: where the next chunk goes, and
/// how a record is cut into chunks.
#[derive(Debug)]
struct Layout {
    /// Bytes of the current block laid out so far.
    offset: usize,
    /// The log's length.
    position: u64,
    format: Format,
    /// CRC-32C of each fragment kind's type byte (and log number, for recyclable chunks).
    prefix_crc: [u32; 4],
    /// The records being laid out are packs (types `0x51`–`0x54`).
    pack: bool,
}

/// Where a [`Layout`] puts its blocks.
trait Blocks {
    type Error;

    /// The current block (at most [`BLOCK_SIZE`] bytes, from its start).
    fn block(&mut self) -> &mut [u8];

    /// The current block is laid out to its end.
    fn block_done(&mut self) -> Result<(), Self::Error>;
}

impl Layout {
    fn new(options: &WriteOptions) -> Self {
        let recyclable = matches!(options.format, Format::Recyclable { .. });
        let prefix_crc = [
            FragmentKind::Full,
            FragmentKind::First,
            FragmentKind::Middle,
            FragmentKind::Last,
        ]
        .map(|kind| {
            let t = RecordType::for_fragment(kind, recyclable) as u8;
            match options.format {
                Format::Legacy => checksum::crc32c(&[t]),
                Format::Recyclable { log_number } => {
                    checksum::extend(checksum::crc32c(&[t]), &log_number.to_le_bytes())
                }
            }
        });
        Self {
            offset: (options.start % BLOCK_SIZE as u64) as usize,
            position: options.start,
            format: options.format,
            prefix_crc,
            pack: false,
        }
    }

    fn end_after(&self, len: usize) -> u64 {
        let header_size = self.format.header_size();
        let mut offset = self.offset;
        let mut position = self.position;
        let mut left = len;
        loop {
            if BLOCK_SIZE - offset < header_size {
                position += (BLOCK_SIZE - offset) as u64;
                offset = 0;
            }
            let fragment = left.min(BLOCK_SIZE - offset - header_size);
            offset += header_size + fragment;
            position += (header_size + fragment) as u64;
            left -= fragment;
            if left == 0 {
                return position;
            }
        }
    }

    /// Ends the current block once it is laid out to its end.
    fn finish_block<T: Blocks>(&mut self, out: &mut T) -> Result<(), T::Error> {
        if self.offset == BLOCK_SIZE {
            self.offset = 0;
            out.block_done()?;
        }
        Ok(())
    }

    /// Fills the rest of the current block with zeros (a trailer, or a zero header).
    fn zero_rest<T: Blocks>(&mut self, out: &mut T) -> Result<(), T::Error> {
        if let Some(rest) = out.block().get_mut(self.offset..) {
            // A byte loop the optimiser leaves alone: `fill(0)` would pull the 200-byte
            // `memclr` into firmware images just for these few bytes (a trailer is at most 10).
            for byte in rest.iter_mut() {
                *byte = core::hint::black_box(0);
            }
        }
        self.position += (BLOCK_SIZE - self.offset) as u64;
        self.offset = BLOCK_SIZE;
        self.finish_block(out)
    }

    /// The hot path of [`add`](Self::add): a legacy record that fits in the current block
    /// before its end, as one `FULL` chunk, laid out at the start of `out` (the buffer from the
    /// current offset on). Byte for byte what `add` writes; `None` (nothing written) sends the
    /// caller to `add`, which handles every case.
    #[inline(always)]
    fn add_full(&mut self, out: &mut [u8], data: &[u8]) -> Option<Written> {
        let size = HEADER_SIZE + data.len();
        if self.format != Format::Legacy || self.offset + size >= BLOCK_SIZE {
            return None;
        }
        let (header, body) = out.get_mut(..size)?.split_at_mut(HEADER_SIZE);
        let crc = checksum::mask(checksum::extend_copy(
            self.prefix_crc[FragmentKind::Full as usize],
            data,
            body,
        ));
        let [c0, c1, c2, c3] = crc.to_le_bytes();
        // `size < BLOCK_SIZE`: the length fits in 16 bits.
        let [l0, l1] = (data.len() as u16).to_le_bytes();
        header.copy_from_slice(&[c0, c1, c2, c3, l0, l1, RecordType::Full as u8]);
        let offset = self.position;
        self.offset += size;
        self.position += size as u64;
        Some(Written {
            offset,
            end: self.position,
        })
    }

    /// A [pack](crate::pack) record: laid out as `add` lays out a record, in the pack types.
    /// The caller checks the log is a legacy one.
    fn add_pack<T: Blocks>(&mut self, out: &mut T, pack: &[u8]) -> Result<Written, T::Error> {
        self.pack = true;
        let written = self.add(out, pack);
        self.pack = false;
        written
    }

    /// A chunk of `record_type` with a 7-byte header in any format, never fragmented:
    /// RocksDB's metadata records. If the block has no room for it, the rest of the block is
    /// zeros first (RocksDB's `MaybeSwitchToNewBlock`). The caller checks it fits in a block.
    fn add_unfragmented<T: Blocks>(
        &mut self,
        out: &mut T,
        record_type: u8,
        payload: &[u8],
    ) -> Result<Written, T::Error> {
        if BLOCK_SIZE - self.offset < HEADER_SIZE + payload.len() {
            self.zero_rest(out)?;
        }
        let offset = self.position;
        let start = self.offset;
        if let Some(chunk) = out
            .block()
            .get_mut(start..start + HEADER_SIZE + payload.len())
        {
            let (head, body) = chunk.split_at_mut(HEADER_SIZE);
            let prefix = checksum::crc32c(&[record_type]);
            let crc = checksum::mask(checksum::extend_copy(prefix, payload, body));
            let [c0, c1, c2, c3] = crc.to_le_bytes();
            // `payload` is shorter than a block: its length fits in 16 bits.
            let [l0, l1] = (payload.len() as u16).to_le_bytes();
            head.copy_from_slice(&[c0, c1, c2, c3, l0, l1, record_type]);
        }
        self.offset += HEADER_SIZE + payload.len();
        self.position += (HEADER_SIZE + payload.len()) as u64;
        self.finish_block(out)?;
        Ok(Written {
            offset,
            end: self.position,
        })
    }

    /// LevelDB's `AddRecord`.
    fn add<T: Blocks>(&mut self, out: &mut T, data: &[u8]) -> Result<Written, T::Error> {
        let header_size = self.format.header_size();
        if header_size + data.len() <= BLOCK_SIZE - self.offset {
            // The common case: one FULL chunk in the current block.
            let offset = self.position;
            self.emit(out.block(), FragmentKind::Full, data);
            self.finish_block(out)?;
            return Ok(Written {
                offset,
                end: self.position,
            });
        }
        let mut left = data;
        let mut begin = true;
        let mut record_offset = self.position;
        loop {
            if BLOCK_SIZE - self.offset < header_size {
                // Too little room for a header: zero trailer, next block.
                self.zero_rest(out)?;
            }
            if begin {
                record_offset = self.position;
            }
            let available = BLOCK_SIZE - self.offset - header_size;
            let (fragment, rest) = left.split_at(left.len().min(available));
            let kind = match (begin, rest.is_empty()) {
                (true, true) => FragmentKind::Full,
                (true, false) => FragmentKind::First,
                (false, false) => FragmentKind::Middle,
                (false, true) => FragmentKind::Last,
            };
            self.emit(out.block(), kind, fragment);
            self.finish_block(out)?;
            left = rest;
            begin = false;
            if left.is_empty() {
                return Ok(Written {
                    offset: record_offset,
                    end: self.position,
                });
            }
        }
    }

    /// [`add`](Self::add) for a record of `len` bytes that `fill` lays out straight into the
    /// block, chunk by chunk (see [`Writer::add_record_with`]): the same chunks.
    fn add_with<T: Blocks>(
        &mut self,
        out: &mut T,
        len: u64,
        fill: &mut impl FnMut(&mut [u8]) -> Result<(), T::Error>,
    ) -> Result<Written, T::Error> {
        let header_size = self.format.header_size();
        let mut left = len;
        let mut begin = true;
        let mut record_offset = self.position;
        loop {
            if BLOCK_SIZE - self.offset < header_size {
                // Too little room for a header: zero trailer, next block.
                self.zero_rest(out)?;
            }
            if begin {
                record_offset = self.position;
            }
            let available = BLOCK_SIZE - self.offset - header_size;
            // At most `available`: fits in a usize.
            let size = left.min(available as u64) as usize;
            left -= size as u64;
            let kind = match (begin, left == 0) {
                (true, true) => FragmentKind::Full,
                (true, false) => FragmentKind::First,
                (false, false) => FragmentKind::Middle,
                (false, true) => FragmentKind::Last,
            };
            let start = self.offset + header_size;
            if let Some(body) = out.block().get_mut(start..start + size) {
                fill(body)?;
            }
            self.emit_filled(out.block(), kind, size);
            self.finish_block(out)?;
            begin = false;
            if left == 0 {
                return Ok(Written {
                    offset: record_offset,
                    end: self.position,
                });
            }
        }
    }

    /// See [`Writer::pad_to`]; `align` is already checked.
    fn pad_to<T: Blocks>(&mut self, out: &mut T, align: usize) -> Result<usize, T::Error> {
        let header_size = self.format.header_size();
        let start = self.position;
        let mut count = 0;
        while !(self.offset + count * header_size).is_multiple_of(align) {
            count += 1;
        }
        if self.offset + count * header_size <= BLOCK_SIZE {
            for _ in 0..count {
                self.emit(out.block(), FragmentKind::First, &[]);
            }
        }
        if !self.offset.is_multiple_of(align) {
            // To the end of the block instead (block ends are aligned): empty FIRST chunks
            // while a header fits, then a trailer — never a zero header, which after an empty
            // FIRST would be reported ("error in middle of record", 0 bytes).
            while BLOCK_SIZE - self.offset >= header_size {
                self.emit(out.block(), FragmentKind::First, &[]);
            }
            self.zero_rest(out)?;
        }
        self.finish_block(out)?;
        Ok((self.position - start) as usize)
    }

    /// Lays out one chunk at the current offset of `block`; the caller guarantees it fits.
    fn emit(&mut self, block: &mut [u8], kind: FragmentKind, payload: &[u8]) {
        let start = self.offset;
        let header_size = self.format.header_size();
        let (recyclable, log_number) = match self.format {
            Format::Legacy => (false, 0u32),
            Format::Recyclable { log_number } => (true, log_number),
        };
        if let Some(chunk) = block.get_mut(start..start + header_size + payload.len()) {
            let (head, body) = chunk.split_at_mut(header_size);
            let record_type = if self.pack {
                RecordType::for_pack(kind)
            } else {
                RecordType::for_fragment(kind, recyclable)
            };
            let prefix = if self.pack {
                checksum::crc32c(&[record_type as u8])
            } else {
                self.prefix_crc[kind as usize]
            };
            let crc = checksum::mask(checksum::extend_copy(prefix, payload, body));
            write_header(head, crc, payload.len(), record_type as u8, log_number);
        }
        self.offset += header_size + payload.len();
        self.position += (header_size + payload.len()) as u64;
    }

    /// [`emit`](Self::emit) for a chunk whose `size` bytes of payload are already in place
    /// after its header: lays out the header.
    fn emit_filled(&mut self, block: &mut [u8], kind: FragmentKind, size: usize) {
        let start = self.offset;
        let header_size = self.format.header_size();
        let (recyclable, log_number) = match self.format {
            Format::Legacy => (false, 0u32),
            Format::Recyclable { log_number } => (true, log_number),
        };
        if let Some(chunk) = block.get_mut(start..start + header_size + size) {
            let (head, body) = chunk.split_at_mut(header_size);
            let record_type = RecordType::for_fragment(kind, recyclable);
            let crc = checksum::mask(checksum::extend(self.prefix_crc[kind as usize], body));
            write_header(head, crc, size, record_type as u8, log_number);
        }
        self.offset += header_size + size;
        self.position += (header_size + size) as u64;
    }
}

/// Writes a chunk header into `head` (7 bytes, or 11 in the recyclable format, where the log
/// number follows): the masked checksum, the payload's length (less than a block), the type.
fn write_header(head: &mut [u8], crc: u32, len: usize, record_type: u8, log_number: u32) {
    let mut header = [0u8; RECYCLABLE_HEADER_SIZE];
    header[..4].copy_from_slice(&crc.to_le_bytes());
    // A chunk's payload is shorter than a block: its length fits in 16 bits.
    header[4..6].copy_from_slice(&(len as u16).to_le_bytes());
    header[6] = record_type;
    header[7..11].copy_from_slice(&log_number.to_le_bytes());
    if let Some(header) = header.get(..head.len()) {
        head.copy_from_slice(header);
    }
}

fn check_alignment<E>(align: usize) -> Result<(), WriteError<E>> {
    if align.is_power_of_two() && align <= BLOCK_SIZE {
        Ok(())
    } else {
        Err(WriteError::BadAlignment)
    }
}

/// Writes logical records in LevelDB's log format: LevelDB's `log::Writer`, with a caller's
/// 32 KiB buffer between it and the sink.
///
/// The layout, exactly LevelDB's:
/// - a record that fits in the rest of the block is one `FULL` chunk; otherwise a `FIRST` chunk
///   fills the block, a `MIDDLE` chunk fills each further block, and a `LAST` chunk ends it;
/// - a zero-length record is one `FULL` chunk with an empty payload;
/// - a chunk never starts in the last `header size − 1` bytes of a block: those bytes become a
///   zero trailer, written when the next record arrives (so a log can end 1–6 bytes short of a
///   block boundary, as LevelDB leaves it);
/// - with exactly a header's worth of bytes left, a non-empty record starts with an empty
///   `FIRST` chunk there.
///
/// Bytes reach the [`Sink`] a whole block at a time, or as the unsent part of the current block
/// on [`flush`](Self::flush). See [`Reader`](crate::Reader) for an example; [`SliceWriter`]
/// lays a log out straight into memory instead.
#[derive(Debug)]
pub struct Writer<S, B> {
    sink: S,
    block: B,
    layout: Layout,
    /// Bytes of the current block already handed to the sink.
    sent: usize,
    poisoned: bool,
}

/// [`Blocks`] for a [`Writer`]: its buffer, handed to its sink when complete.
struct SinkBlocks<'w, S, B> {
    sink: &'w mut S,
    block: &'w mut B,
    sent: &'w mut usize,
    poisoned: &'w mut bool,
}

impl<S: Sink, B: BorrowMut<[u8; BLOCK_SIZE]>> Blocks for SinkBlocks<'_, S, B> {
    type Error = WriteError<S::Error>;

    fn block(&mut self) -> &mut [u8] {
        let block: &mut [u8; BLOCK_SIZE] = self.block.borrow_mut();
        block
    }

    fn block_done(&mut self) -> Result<(), Self::Error> {
        let block: &[u8; BLOCK_SIZE] = (*self.block).borrow();
        let result = self.sink.write(block.get(*self.sent..).unwrap_or_default());
        *self.sent = 0;
        result.map_err(|e| {
            *self.poisoned = true;
            WriteError::Sink(e)
        })
    }
}

impl<S: Sink, B: BorrowMut<[u8; BLOCK_SIZE]>> Writer<S, B> {
    /// A writer starting a new legacy log, laying out blocks in `block`.
    pub fn new(sink: S, block: B) -> Self {
        Self::with_options(sink, block, &WriteOptions::default())
    }

    /// A writer with `options`.
    pub fn with_options(sink: S, block: B, options: &WriteOptions) -> Self {
        let layout = Layout::new(options);
        Self {
            sink,
            block,
            sent: layout.offset,
            layout,
            poisoned: false,
        }
    }

    /// The layout engine and, separately borrowed, where it puts its blocks.
    fn parts(&mut self) -> (&mut Layout, SinkBlocks<'_, S, B>) {
        let Self {
            sink,
            block,
            layout,
            sent,
            poisoned,
        } = self;
        (
            layout,
            SinkBlocks {
                sink,
                block,
                sent,
                poisoned,
            },
        )
    }

    /// Appends one logical record (LevelDB's `AddRecord`). It is laid out in the block buffer;
    /// complete blocks go to the sink at once, the rest on [`flush`](Self::flush).
    ///
    /// # Errors
    /// [`WriteError::Sink`] if the sink fails (the record is not written, and the writer is
    /// poisoned), [`WriteError::Poisoned`] after an earlier failure.
    #[inline]
    pub fn add_record(&mut self, data: &[u8]) -> Result<Written, WriteError<S::Error>> {
        if HOT_PATHS && !self.poisoned {
            let offset = self.layout.offset;
            let block: &mut [u8; BLOCK_SIZE] = self.block.borrow_mut();
            if let Some(out) = block.get_mut(offset..)
                && let Some(written) = self.layout.add_full(out, data)
            {
                return Ok(written);
            }
        }
        self.add_record_slow(data)
    }

    /// Every case of [`add_record`](Self::add_record), kept out of line so that its hot path
    /// inlines into the caller's loop.
    #[cfg_attr(not(target_os = "none"), inline(never))]
    fn add_record_slow(&mut self, data: &[u8]) -> Result<Written, WriteError<S::Error>> {
        if self.poisoned {
            return Err(WriteError::Poisoned);
        }
        let (layout, mut blocks) = self.parts();
        layout.add(&mut blocks, data)
    }

    /// Appends one record of `len` bytes without holding it: `fill` is called with the payload
    /// of each of its chunks in turn (a slice of the block buffer, at most a block) and fills
    /// it with the record's next bytes. The log is byte for byte what
    /// [`add_record`](Self::add_record) writes for the same bytes; a record of any length
    /// takes no more memory than the block.
    ///
    /// ```
    /// use logfmt_core::{FnSink, Writer, BLOCK_SIZE};
    ///
    /// let record = vec![7u8; 100_000];
    /// let mut whole = Vec::new();
    /// let mut block = [0u8; BLOCK_SIZE];
    /// let sink = FnSink(|b: &[u8]| { whole.extend_from_slice(b); Ok::<_, core::convert::Infallible>(()) });
    /// let mut writer = Writer::new(sink, &mut block);
    /// writer.add_record(&record)?;
    /// writer.flush()?;
    /// drop(writer);
    ///
    /// let mut streamed = Vec::new();
    /// let mut block = [0u8; BLOCK_SIZE];
    /// let sink = FnSink(|b: &[u8]| { streamed.extend_from_slice(b); Ok::<_, core::convert::Infallible>(()) });
    /// let mut writer = Writer::new(sink, &mut block);
    /// let mut next = 0;
    /// writer.add_record_with(record.len() as u64, |payload| {
    ///     payload.copy_from_slice(&record[next..next + payload.len()]);
    ///     next += payload.len();
    ///     Ok(())
    /// })?;
    /// writer.flush()?;
    /// drop(writer);
    /// assert_eq!(streamed, whole);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As for [`add_record`](Self::add_record). An error of `fill` is returned as
    /// [`WriteError::Sink`] and poisons the writer: the record is incomplete.
    pub fn add_record_with(
        &mut self,
        len: u64,
        mut fill: impl FnMut(&mut [u8]) -> Result<(), S::Error>,
    ) -> Result<Written, WriteError<S::Error>> {
        if self.poisoned {
            return Err(WriteError::Poisoned);
        }
        let (layout, mut blocks) = self.parts();
        let mut fill = |payload: &mut [u8]| fill(payload).map_err(WriteError::Sink);
        let written = layout.add_with(&mut blocks, len, &mut fill);
        if written.is_err() {
            self.poisoned = true;
        }
        written
    }

    /// Appends RocksDB's compression record ([`SET_COMPRESSION_TYPE`], a 7-byte header in any
    /// format, the codec as a fixed32 payload): written first in a write-ahead log whose
    /// records are each one compressed stream (codec [`ZSTD_CODEC`]: a zstd frame). The records
    /// after it are the caller's to compress (`logfmt-std` does it).
    ///
    /// ```
    /// use logfmt_core::{FnSink, Writer, BLOCK_SIZE};
    /// use logfmt_core::parts::format::ZSTD_CODEC;
    ///
    /// let mut log = Vec::new();
    /// let mut block = [0u8; BLOCK_SIZE];
    /// let sink = FnSink(|b: &[u8]| { log.extend_from_slice(b); Ok::<_, core::convert::Infallible>(()) });
    /// let mut writer = Writer::new(sink, &mut block);
    /// writer.add_compression_record(ZSTD_CODEC)?;
    /// writer.flush()?;
    /// drop(writer);
    /// // RocksDB's own bytes for it.
    /// assert_eq!(log, [0xe1, 0x2c, 0x08, 0xf8, 4, 0, 9, 7, 0, 0, 0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// [`SET_COMPRESSION_TYPE`]: crate::format::SET_COMPRESSION_TYPE
    /// [`ZSTD_CODEC`]: crate::format::ZSTD_CODEC
    ///
    /// # Errors
    /// As for [`add_record`](Self::add_record).
    pub fn add_compression_record(&mut self, codec: u32) -> Result<Written, WriteError<S::Error>> {
        if self.poisoned {
            return Err(WriteError::Poisoned);
        }
        let (layout, mut blocks) = self.parts();
        layout.add_unfragmented(
            &mut blocks,
            crate::format::SET_COMPRESSION_TYPE,
            &codec.to_le_bytes(),
        )
    }

    /// Appends a [pack](crate::pack) record: `pack` is a pack's payload (a
    /// [`PackBuffer`](crate::pack::PackBuffer)'s bytes), laid out as
    /// [`add_record`](Self::add_record) lays out a record, in the pack types. Readers of this
    /// crate return its records one by one.
    ///
    /// ```
    /// use logfmt_core::pack::PackBuffer;
    /// use logfmt_core::{FnSink, parts::Item, Reader, Writer, BLOCK_SIZE};
    ///
    /// let mut log = Vec::new();
    /// let mut block = [0u8; BLOCK_SIZE];
    /// let sink = FnSink(|b: &[u8]| { log.extend_from_slice(b); Ok::<_, core::convert::Infallible>(()) });
    /// let mut writer = Writer::new(sink, &mut block);
    /// let mut pack = PackBuffer::<256>::new();
    /// for sample in [&b"t=21.5"[..], b"t=21.6", b"t=21.4"] {
    ///     pack.push(sample)?;
    /// }
    /// writer.add_pack(pack.as_bytes())?;
    /// writer.flush()?;
    /// drop(writer);
    /// assert_eq!(log.len(), 7 + 5 + 3 * 7); // one header, the pack's 5, three samples
    ///
    /// let mut scratch = [0u8; 1024];
    /// let mut reader = Reader::from_slice(&log, &mut scratch);
    /// let Some(Item::Record(r)) = reader.next()? else { panic!() };
    /// assert_eq!((r.offset, r.index, r.data), (0, Some(0), &b"t=21.5"[..]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`WriteError::PackInRecyclableLog`] in a recyclable log; as for
    /// [`add_record`](Self::add_record).
    pub fn add_pack(&mut self, pack: &[u8]) -> Result<Written, WriteError<S::Error>> {
        if self.poisoned {
            return Err(WriteError::Poisoned);
        }
        if self.layout.format != Format::Legacy {
            return Err(WriteError::PackInRecyclableLog);
        }
        let (layout, mut blocks) = self.parts();
        layout.add_pack(&mut blocks, pack)
    }

    /// Pads the log so that its length is a multiple of `align` (a power of two up to
    /// [`BLOCK_SIZE`]), for media programmed in words of that size (NOR flash `WRITE_SIZE`).
    /// Returns the number of padding bytes.
    ///
    /// The padding is read by LevelDB's reader (and every reader with its rules) as nothing at
    /// all, so records appended after it are never hidden:
    /// - empty `FIRST` chunks, as many as needed (header sizes 7 and 11 are odd, so some count
    ///   of them always reaches a power-of-two boundary; at most `align - 1`): a reader discards
    ///   an empty `FIRST` followed by a new record without a report, a tolerance LevelDB keeps
    ///   for an old writer bug;
    /// - if they do not fit in the block, empty `FIRST` chunks to the end of the block and a
    ///   trailer of fewer than a header's bytes (block ends are aligned).
    ///
    /// A log that ends right after padding reads as ending in a torn (empty) record.
    ///
    /// # Errors
    /// [`WriteError::BadAlignment`] if `align` is not a power of two up to [`BLOCK_SIZE`]; sink
    /// errors as for [`add_record`](Self::add_record).
    pub fn pad_to(&mut self, align: usize) -> Result<usize, WriteError<S::Error>> {
        if self.poisoned {
            return Err(WriteError::Poisoned);
        }
        check_alignment(align)?;
        let (layout, mut blocks) = self.parts();
        layout.pad_to(&mut blocks, align)
    }

    /// Hands the unsent part of the current block to the sink, then flushes the sink.
    ///
    /// # Errors
    /// As for [`add_record`](Self::add_record).
    pub fn flush(&mut self) -> Result<(), WriteError<S::Error>> {
        if self.poisoned {
            return Err(WriteError::Poisoned);
        }
        let offset = self.layout.offset;
        if offset > self.sent {
            let block: &[u8; BLOCK_SIZE] = self.block.borrow();
            let result = self
                .sink
                .write(block.get(self.sent..offset).unwrap_or_default());
            self.check(result)?;
            self.sent = offset;
        }
        let result = self.sink.flush();
        self.check(result)
    }

    /// Where a record of `len` bytes added now would end (the log's length after it), without
    /// adding it.
    pub fn end_after(&self, len: usize) -> u64 {
        self.layout.end_after(len)
    }

    /// The log's length: every byte laid out so far, sent or not.
    pub fn position(&self) -> u64 {
        self.layout.position
    }

    /// Bytes laid out but not yet handed to the sink.
    pub fn unsent(&self) -> usize {
        self.layout.offset - self.sent
    }

    /// Whether an earlier sink error poisoned the writer.
    pub fn is_poisoned(&self) -> bool {
        self.poisoned
    }

    /// The chunk format being written.
    pub fn format(&self) -> Format {
        self.layout.format
    }

    /// The sink.
    pub fn sink(&self) -> &S {
        &self.sink
    }

    /// The sink, mutably. Writing to it directly corrupts the log.
    pub fn sink_mut(&mut self) -> &mut S {
        &mut self.sink
    }

    /// Gives back the sink and the buffer, dropping unsent bytes: call
    /// [`flush`](Self::flush) first.
    pub fn into_parts(self) -> (S, B) {
        (self.sink, self.block)
    }

    fn check(&mut self, result: Result<(), S::Error>) -> Result<(), WriteError<S::Error>> {
        result.map_err(|e| {
            self.poisoned = true;
            WriteError::Sink(e)
        })
    }
}

/// A record did not fit in a [`SliceWriter`]'s buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct BufferFull {
    /// The log's length the record would have needed.
    pub needed: u64,
    /// The buffer's size.
    pub capacity: u64,
}

impl core::fmt::Display for BufferFull {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "log buffer full: the record needs {} bytes, the buffer has {}",
            self.needed, self.capacity
        )
    }
}

impl core::error::Error for BufferFull {}

/// Lays a log out straight into a caller's buffer of any size — no block buffer, no sink, no
/// copy — with exactly [`Writer`]'s layout. For logs kept in memory, in a memory-mapped file or
/// in a RAM region.
///
/// ```
/// use logfmt_core::SliceWriter;
///
/// let mut buffer = [0u8; 64];
/// let mut writer = SliceWriter::new(&mut buffer);
/// writer.add_record(b"foo")?;
/// assert_eq!(writer.as_bytes(), [0xdd, 0x5f, 0xb3, 0x7a, 3, 0, 1, b'f', b'o', b'o']);
/// assert!(writer.add_record(&[0; 100]).is_err()); // does not fit: nothing is written
/// assert_eq!(writer.len(), 10);
/// # Ok::<(), logfmt_core::parts::BufferFull>(())
/// ```
#[derive(Debug)]
pub struct SliceWriter<'a> {
    buffer: &'a mut [u8],
    layout: Layout,
}

/// [`Blocks`] for a [`SliceWriter`]: windows of its buffer.
struct SliceBlocks<'s> {
    buffer: &'s mut [u8],
    block_start: usize,
}

impl Blocks for SliceBlocks<'_> {
    type Error = core::convert::Infallible;

    fn block(&mut self) -> &mut [u8] {
        let end = self
            .block_start
            .saturating_add(BLOCK_SIZE)
            .min(self.buffer.len());
        self.buffer
            .get_mut(self.block_start..end)
            .unwrap_or_default()
    }

    fn block_done(&mut self) -> Result<(), Self::Error> {
        self.block_start += BLOCK_SIZE;
        Ok(())
    }
}

impl<'a> SliceWriter<'a> {
    /// A writer starting a new legacy log at the start of `buffer`.
    pub fn new(buffer: &'a mut [u8]) -> Self {
        Self::with_options(buffer, &WriteOptions::default())
    }

    /// A writer with `options`; with a non-zero [`start`](WriteOptions::start), `buffer` holds
    /// the existing log in its first `start` bytes.
    pub fn with_options(buffer: &'a mut [u8], options: &WriteOptions) -> Self {
        Self {
            buffer,
            layout: Layout::new(options),
        }
    }

    fn room(&self, end: u64) -> Result<(), BufferFull> {
        let capacity = self.buffer.len() as u64;
        if end > capacity {
            return Err(BufferFull {
                needed: end,
                capacity,
            });
        }
        Ok(())
    }

    /// The layout engine and, separately borrowed, the buffer's current block.
    fn parts(&mut self) -> (&mut Layout, SliceBlocks<'_>) {
        let block_start = (self.layout.position - self.layout.offset as u64) as usize;
        (
            &mut self.layout,
            SliceBlocks {
                buffer: self.buffer,
                block_start,
            },
        )
    }

    /// Appends one logical record.
    ///
    /// # Errors
    /// [`BufferFull`] if it does not fit; nothing is written then.
    #[inline]
    pub fn add_record(&mut self, data: &[u8]) -> Result<Written, BufferFull> {
        if HOT_PATHS
            && let Ok(at) = usize::try_from(self.layout.position)
            && let Some(out) = self.buffer.get_mut(at..)
            && let Some(written) = self.layout.add_full(out, data)
        {
            return Ok(written);
        }
        self.add_record_slow(data)
    }

    /// Every case of [`add_record`](Self::add_record), kept out of line so that its hot path
    /// inlines into the caller's loop.
    #[cfg_attr(not(target_os = "none"), inline(never))]
    fn add_record_slow(&mut self, data: &[u8]) -> Result<Written, BufferFull> {
        self.room(self.layout.end_after(data.len()))?;
        let (layout, mut blocks) = self.parts();
        layout.add(&mut blocks, data).map_err(|e| match e {})
    }

    /// Appends a [pack](crate::pack) record, as [`Writer::add_pack`] does.
    ///
    /// # Errors
    /// [`WriteError::PackInRecyclableLog`] in a recyclable log; [`WriteError::Sink`] with
    /// [`BufferFull`] if it does not fit (nothing is written then).
    pub fn add_pack(&mut self, pack: &[u8]) -> Result<Written, WriteError<BufferFull>> {
        if self.layout.format != Format::Legacy {
            return Err(WriteError::PackInRecyclableLog);
        }
        self.room(self.layout.end_after(pack.len()))
            .map_err(WriteError::Sink)?;
        let (layout, mut blocks) = self.parts();
        layout.add_pack(&mut blocks, pack).map_err(|e| match e {})
    }

    /// Pads the log to a multiple of `align`, as [`Writer::pad_to`] does.
    ///
    /// # Errors
    /// [`WriteError::BadAlignment`], or [`WriteError::Sink`] with [`BufferFull`] if the padding
    /// does not fit.
    pub fn pad_to(&mut self, align: usize) -> Result<usize, WriteError<BufferFull>> {
        check_alignment(align)?;
        let block_end = self.layout.position - self.layout.offset as u64 + BLOCK_SIZE as u64;
        let header_size = self.layout.format.header_size() as u64;
        let worst = (self.layout.position + align as u64 * header_size).min(block_end);
        self.room(worst).map_err(WriteError::Sink)?;
        let (layout, mut blocks) = self.parts();
        layout.pad_to(&mut blocks, align).map_err(|e| match e {})
    }

    /// The log's length.
    pub fn len(&self) -> usize {
        self.layout.position as usize
    }

    /// Whether nothing has been written.
    pub fn is_empty(&self) -> bool {
        self.layout.position == 0
    }

    /// Where a record of `len` bytes added now would end.
    pub fn end_after(&self, len: usize) -> u64 {
        self.layout.end_after(len)
    }

    /// The log laid out so far.
    pub fn as_bytes(&self) -> &[u8] {
        self.buffer.get(..self.len()).unwrap_or_default()
    }

    /// Gives back the buffer.
    pub fn into_inner(self) -> &'a mut [u8] {
        self.buffer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

        /// The hot path of `add_record` lays out exactly what the general path does, in both
        /// writers, at every block offset the lengths lead to.
        #[test]
        fn hot_path_matches_the_general_path(
            lengths in proptest::collection::vec(
                proptest::prop_oneof![0usize..40, 32_730usize..32_768, 0usize..70_000], 1..40),
            start in 0u64..(2 * BLOCK_SIZE as u64),
        ) {
            let total: usize = lengths.iter().map(|n| n + 64).sum::<usize>() + 3 * BLOCK_SIZE;
            let options = WriteOptions::new().start(start);
            let (mut hot, mut general) = (std::vec![0u8; total], std::vec![0u8; total]);
            let mut a = SliceWriter::with_options(&mut hot, &options);
            let mut b = SliceWriter::with_options(&mut general, &options);
            let mut block = [0u8; BLOCK_SIZE];
            let mut sunk = std::vec::Vec::new();
            let sink = FnSink(|bytes: &[u8]| {
                sunk.extend_from_slice(bytes);
                Ok::<_, core::convert::Infallible>(())
            });
            let mut c = Writer::with_options(sink, &mut block, &WriteOptions::new());
            for (i, &len) in lengths.iter().enumerate() {
                let data: std::vec::Vec<u8> = (0..len).map(|j| (i * 31 + j) as u8).collect();
                let via_hot = a.add_record(&data);
                proptest::prop_assert_eq!(via_hot, b.add_record_slow(&data));
                proptest::prop_assert!(c.add_record(&data).is_ok());
            }
            proptest::prop_assert_eq!(a.as_bytes(), b.as_bytes());
            c.flush().ok();
            let _ = c.into_parts();
            let mut d = SliceWriter::new(&mut general);
            for (i, &len) in lengths.iter().enumerate() {
                let data: std::vec::Vec<u8> = (0..len).map(|j| (i * 31 + j) as u8).collect();
                proptest::prop_assert!(d.add_record_slow(&data).is_ok());
            }
            proptest::prop_assert_eq!(&sunk[..], d.as_bytes());
        }

        /// A record laid out piece by piece (`add_record_with`) is byte for byte the record
        /// laid out whole, in both formats, at every block offset the lengths lead to.
        #[test]
        fn a_record_filled_in_place_is_the_record_added_whole(
            lengths in proptest::collection::vec(
                proptest::prop_oneof![0usize..40, 32_730usize..32_768, 0usize..70_000], 1..12),
            start in 0u64..(2 * BLOCK_SIZE as u64),
            recyclable in proptest::bool::ANY,
        ) {
            let format = if recyclable {
                Format::Recyclable { log_number: 7 }
            } else {
                Format::Legacy
            };
            let options = WriteOptions::new().start(start).format(format);
            let mut logs = [std::vec::Vec::new(), std::vec::Vec::new()];
            for (streamed, log) in logs.iter_mut().enumerate() {
                let mut block = [0u8; BLOCK_SIZE];
                let sink = FnSink(|bytes: &[u8]| {
                    log.extend_from_slice(bytes);
                    Ok::<_, core::convert::Infallible>(())
                });
                let mut writer = Writer::with_options(sink, &mut block, &options);
                for (i, &len) in lengths.iter().enumerate() {
                    let data: std::vec::Vec<u8> = (0..len).map(|j| (i * 31 + j) as u8).collect();
                    let written = if streamed == 1 {
                        let mut next = 0;
                        writer.add_record_with(len as u64, |payload| {
                            payload.copy_from_slice(&data[next..next + payload.len()]);
                            next += payload.len();
                            Ok(())
                        })
                    } else {
                        writer.add_record(&data)
                    };
                    proptest::prop_assert!(written.is_ok());
                }
                proptest::prop_assert!(writer.flush().is_ok());
            }
            proptest::prop_assert_eq!(&logs[0], &logs[1]);
        }
    }

    #[test]
    fn a_failed_fill_poisons_the_writer() {
        let mut block = [0u8; BLOCK_SIZE];
        let sink = FnSink(|_: &[u8]| Ok::<_, ()>(()));
        let mut writer = Writer::new(sink, &mut block);
        let failed = writer.add_record_with(100_000, |_| Err(()));
        assert_eq!(failed, Err(WriteError::Sink(())));
        assert_eq!(writer.add_record(b"after"), Err(WriteError::Poisoned));
    }
}
