//! Where readers get their blocks: memory, or any [`embedded_io::Read`].

use core::borrow::BorrowMut;
use core::convert::Infallible;

use embedded_io::Error as _;

use crate::format::BLOCK_SIZE;

/// A supply of blocks for a reader.
///
/// Implementations hand out one block at a time; a block shorter than [`BLOCK_SIZE`] (possibly
/// empty) marks the end of the input, as a short read does for LevelDB's reader.
pub trait BlockSource {
    /// The error reading can fail with.
    type Error;

    /// Replaces the current block with the next one.
    ///
    /// # Errors
    /// A read error; the reader then treats the log as ended there.
    fn load_next(&mut self) -> Result<(), Self::Error>;

    /// The current block: empty before the first [`load_next`](Self::load_next), at most
    /// [`BLOCK_SIZE`] bytes after it.
    fn block(&self) -> &[u8];

    /// Skips `bytes` bytes of input. Called at most once, before the first block is loaded, to
    /// start at an initial offset. Skipping past the end is not an error: the next block is
    /// empty.
    ///
    /// # Errors
    /// A read or seek error.
    fn skip(&mut self, bytes: u64) -> Result<(), Self::Error>;

    /// Tailing a growing log: tries to extend the current block (shorter than a block) with
    /// bytes that arrived since it was loaded, keeping what it held. Returns whether it grew.
    /// The default never grows.
    ///
    /// # Errors
    /// A read error.
    fn refill(&mut self) -> Result<bool, Self::Error> {
        Ok(false)
    }

    /// Whether the current block is the input's last even though it is whole (a ring's newest
    /// block): the reader applies its end-of-input rules there. The default: only a block
    /// shorter than [`BLOCK_SIZE`] is the last.
    fn is_last(&self) -> bool {
        false
    }
}

impl<S: BlockSource + ?Sized> BlockSource for &mut S {
    type Error = S::Error;

    fn load_next(&mut self) -> Result<(), S::Error> {
        (**self).load_next()
    }

    fn block(&self) -> &[u8] {
        (**self).block()
    }

    fn skip(&mut self, bytes: u64) -> Result<(), S::Error> {
        (**self).skip(bytes)
    }

    fn refill(&mut self) -> Result<bool, S::Error> {
        (**self).refill()
    }

    fn is_last(&self) -> bool {
        (**self).is_last()
    }
}

/// A log held in memory: blocks are borrowed slices of it, nothing is copied.
#[derive(Debug, Clone)]
pub struct SliceSource<'a> {
    data: &'a [u8],
    /// The current block.
    block: &'a [u8],
    next: usize,
}

impl<'a> SliceSource<'a> {
    /// A source over the whole of `data`.
    #[must_use]
    pub const fn new(data: &'a [u8]) -> Self {
        Self {
            data,
            block: &[],
            next: 0,
        }
    }

    /// The bytes of the log.
    #[must_use]
    pub const fn data(&self) -> &'a [u8] {
        self.data
    }
}

impl BlockSource for SliceSource<'_> {
    type Error = Infallible;

    fn load_next(&mut self) -> Result<(), Infallible> {
        let rest = self.data.get(self.next..).unwrap_or_default();
        self.block = rest.get(..BLOCK_SIZE).unwrap_or(rest);
        self.next += self.block.len();
        Ok(())
    }

    #[inline]
    fn block(&self) -> &[u8] {
        self.block
    }

    fn skip(&mut self, bytes: u64) -> Result<(), Infallible> {
        let bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
        self.next = self.next.saturating_add(bytes).min(self.data.len());
        Ok(())
    }
}

/// Blocks read from an [`embedded_io::Read`] into a caller-provided 32 KiB buffer.
///
/// Short reads and [`Interrupted`](embedded_io::ErrorKind::Interrupted) errors are retried until
/// the block is full or the reader reports the end of its data (`Ok(0)`), so an interrupted or
/// partial read is never mistaken for the end of the log.
#[derive(Debug)]
pub struct IoSource<R, B> {
    reader: R,
    buffer: B,
    len: usize,
    /// Bytes of an initial-offset skip not read yet (the input ended first; it may grow).
    skip_left: u64,
}

impl<R, B: BorrowMut<[u8; BLOCK_SIZE]>> IoSource<R, B> {
    /// A source reading from `reader` into `buffer` (a `&mut [u8; BLOCK_SIZE]`, or a
    /// `Box<[u8; BLOCK_SIZE]>` where there is a heap).
    pub const fn new(reader: R, buffer: B) -> Self {
        Self {
            reader,
            buffer,
            len: 0,
            skip_left: 0,
        }
    }

    /// The underlying reader.
    pub const fn get_ref(&self) -> &R {
        &self.reader
    }

    /// The underlying reader, mutably.
    pub const fn get_mut(&mut self) -> &mut R {
        &mut self.reader
    }

    /// Gives back the reader and the buffer.
    pub fn into_inner(self) -> (R, B) {
        (self.reader, self.buffer)
    }
}

impl<R: embedded_io::Read, B: BorrowMut<[u8; BLOCK_SIZE]>> IoSource<R, B> {
    /// Reads and discards what is left of the skip; returns whether it is done (if the input
    /// ends first, the rest is kept for later reads, as a tailed input may grow).
    fn finish_skip(&mut self) -> Result<bool, R::Error> {
        while self.skip_left > 0 {
            let chunk = usize::try_from(self.skip_left)
                .unwrap_or(BLOCK_SIZE)
                .min(BLOCK_SIZE);
            let buffer: &mut [u8; BLOCK_SIZE] = self.buffer.borrow_mut();
            let read = Self::fill(
                &mut self.reader,
                buffer.get_mut(..chunk).unwrap_or_default(),
            )?;
            self.skip_left -= read as u64;
            if read < chunk {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Reads into `buffer[..]` until it is full or the input ends; returns the bytes read.
    fn fill(reader: &mut R, buffer: &mut [u8]) -> Result<usize, R::Error> {
        let mut filled = 0;
        while let Some(rest) = buffer.get_mut(filled..) {
            if rest.is_empty() {
                break;
            }
            match reader.read(rest) {
                Ok(0) => break,
                Ok(n) => filled += n.min(rest.len()),
                Err(e) if e.kind() == embedded_io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(filled)
    }
}

impl<R: embedded_io::Read, B: BorrowMut<[u8; BLOCK_SIZE]>> BlockSource for IoSource<R, B> {
    type Error = R::Error;

    fn load_next(&mut self) -> Result<(), R::Error> {
        self.len = 0;
        if !self.finish_skip()? {
            return Ok(());
        }
        self.len = Self::fill(&mut self.reader, self.buffer.borrow_mut())?;
        Ok(())
    }

    fn block(&self) -> &[u8] {
        self.buffer.borrow().get(..self.len).unwrap_or_default()
    }

    fn refill(&mut self) -> Result<bool, R::Error> {
        if !self.finish_skip()? {
            return Ok(false);
        }
        let buffer: &mut [u8; BLOCK_SIZE] = self.buffer.borrow_mut();
        let added = Self::fill(
            &mut self.reader,
            buffer.get_mut(self.len..).unwrap_or_default(),
        )?;
        self.len += added;
        Ok(added > 0)
    }

    fn skip(&mut self, bytes: u64) -> Result<(), R::Error> {
        self.len = 0;
        self.skip_left = self.skip_left.saturating_add(bytes);
        self.finish_skip()?;
        Ok(())
    }
}
