//! A file handed over in slices, in order: the reader's blocks are read from the slices held,
//! so that the page can read the next slice while the reader scans this one. A block not
//! handed over yet (a record longer than what is held) is read at once through a [`ReadAt`].

use std::io;

use logfmt_core::{BLOCK_SIZE, BlockSource};

use crate::ReadAt;

/// How much of what was handed over the reader keeps ahead of it: it pauses
/// ([`Feed::wants_more`]) when less than this is left, so that only a record longer than this
/// that crosses the end of a slice makes the feed read on at once.
pub(crate) const MARGIN: u64 = 256 << 10;

/// Bytes read at a time when the reader needs bytes not handed over yet.
const CATCH_UP: usize = 1 << 20;

/// A [`BlockSource`] over the bytes of a file handed over in order ([`Feed::push_with`]),
/// from its start: it holds the reader's current block and what follows it, and no more.
#[derive(Debug)]
pub(crate) struct Feed<R> {
    /// Reads bytes not handed over yet, when the reader needs them.
    source: R,
    len: u64,
    /// The bytes held are `buffer[..filled]`, from file offset `start`.
    buffer: Vec<u8>,
    filled: usize,
    start: u64,
    /// The current block: `buffer[block..block + block_len]`.
    block: usize,
    block_len: usize,
    /// The next block's file offset.
    next: u64,
    /// Where the zeros that run to the end of what was handed over begin.
    zeros_from: u64,
    /// Bytes read through `source` (not handed over).
    caught_up: u64,
}

impl<R: ReadAt> Feed<R> {
    /// A file of `len` bytes, nothing handed over yet; `source` reads what the reader needs
    /// before it is handed over.
    pub(crate) fn new(source: R, len: u64) -> Self {
        Self {
            source,
            len,
            buffer: Vec::new(),
            filled: 0,
            start: 0,
            block: 0,
            block_len: 0,
            next: 0,
            zeros_from: 0,
            caught_up: 0,
        }
    }

    /// The file offset just past the bytes handed over (or read) so far.
    pub(crate) fn end(&self) -> u64 {
        self.start + self.filled as u64
    }

    /// Whether the reader should pause for the next slice: less than [`MARGIN`] is held
    /// ahead of it, and the file goes on.
    pub(crate) fn wants_more(&self) -> bool {
        self.end() < self.len && self.next.saturating_add(MARGIN) > self.end()
    }

    /// Whether every byte from `offset` to the end of the file is zero, if every byte from
    /// there was handed over: `None` if not.
    pub(crate) fn zeros_from(&self, offset: u64) -> Option<bool> {
        (self.end() >= self.len).then_some(offset >= self.zeros_from)
    }

    /// The bytes of its buffer (held or not).
    pub(crate) fn capacity(&self) -> usize {
        self.buffer.len()
    }

    /// The source, borrowed.
    pub(crate) fn source_mut(&mut self) -> &mut R {
        &mut self.source
    }

    /// Gives back the source.
    pub(crate) fn into_source(self) -> R {
        self.source
    }

    /// Bytes read through the source because they were needed before they were handed over.
    pub(crate) fn caught_up(&self) -> u64 {
        self.caught_up
    }

    /// Hands over the `n` bytes at `offset`: `fill(skip, into)` copies those from `skip` on
    /// into `into` (the bytes before `skip` are held already). Bytes not following what is
    /// held are ignored (the reader reads what it needs); `n` 0 at the end of what is held
    /// says the file ends there.
    ///
    /// # Errors
    /// The error `fill` returns; nothing is handed over then.
    pub(crate) fn push_with(
        &mut self,
        offset: u64,
        n: usize,
        fill: impl FnOnce(usize, &mut [u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        let end = self.end();
        if offset > end {
            return Ok(());
        }
        if n == 0 {
            if offset == end && end < self.len {
                self.len = end;
            }
            return Ok(());
        }
        let skip = usize::try_from(end - offset).unwrap_or(usize::MAX);
        let Some(new) = n.checked_sub(skip).filter(|&new| new > 0) else {
            return Ok(());
        };
        let room = self.make_room(new);
        fill(skip, &mut room[..new])?;
        self.appended(new);
        Ok(())
    }

    /// Makes room for `more` bytes after what is held — where the buffer is full, by dropping
    /// what is before the current block, and then by growing it — and returns the room.
    fn make_room(&mut self, more: usize) -> &mut [u8] {
        if self.filled + more > self.buffer.len() && self.block > 0 {
            self.buffer.copy_within(self.block..self.filled, 0);
            self.filled -= self.block;
            self.start += self.block as u64;
            self.block = 0;
        }
        let want = self.filled + more;
        if self.buffer.len() < want {
            self.buffer.resize(want, 0);
        }
        &mut self.buffer[self.filled..want]
    }

    /// `new` bytes were written after what is held.
    fn appended(&mut self, new: usize) {
        let from = self.filled;
        self.filled += new;
        let bytes = &self.buffer[from..self.filled];
        if let Some(last) = bytes.iter().rposition(|&b| b != 0) {
            self.zeros_from = self.start + (from + last + 1) as u64;
        }
    }

    /// Reads bytes that follow what is held through the source: the reader needs them now.
    fn catch_up(&mut self) -> io::Result<()> {
        let end = self.end();
        let want = usize::try_from(self.len - end)
            .unwrap_or(CATCH_UP)
            .min(CATCH_UP);
        let mut bytes = Vec::new();
        self.source.read_at(end, want, &mut bytes)?;
        bytes.truncate(want);
        self.caught_up += bytes.len() as u64;
        if bytes.is_empty() {
            // The file is shorter than it said: its end is here.
            self.len = end;
            return Ok(());
        }
        self.push_with(end, bytes.len(), |_, into| {
            into.copy_from_slice(&bytes);
            Ok(())
        })
    }
}

impl<R: ReadAt> BlockSource for Feed<R> {
    type Error = io::Error;

    fn load_next(&mut self) -> io::Result<()> {
        let at = self.next.min(self.len);
        let want = (self.len - at).min(BLOCK_SIZE as u64);
        while self.end() < at + want && self.end() < self.len {
            self.catch_up()?;
        }
        let want = want.min(self.len.saturating_sub(at));
        // The block is held: it ends at or before the end of what is held.
        let from = usize::try_from(at - self.start).unwrap_or(usize::MAX);
        self.block = from.min(self.filled);
        self.block_len = usize::try_from(want)
            .unwrap_or(0)
            .min(self.filled - self.block);
        self.next = at + self.block_len as u64;
        Ok(())
    }

    fn block(&self) -> &[u8] {
        self.buffer
            .get(self.block..self.block + self.block_len)
            .unwrap_or_default()
    }

    fn skip(&mut self, bytes: u64) -> io::Result<()> {
        self.next = self.next.saturating_add(bytes).min(self.len);
        Ok(())
    }
}
