//! A file read in slices: [`Read`] + [`Seek`] over a function that reads bytes at an offset,
//! keeping one window of them (the browser reads a `File` slice by slice).

use std::io::{self, Read, Seek, SeekFrom};

/// Reads up to `len` bytes at `offset`: fewer only at the end of the file.
pub trait ReadAt {
    /// The bytes at `offset`, at most `len` of them, in place of what `into` held (its
    /// memory is used again: a window is not allocated anew for each read).
    ///
    /// # Errors
    /// The read failed.
    fn read_at(&mut self, offset: u64, len: usize, into: &mut Vec<u8>) -> io::Result<()>;
}

impl<F: FnMut(u64, usize) -> io::Result<Vec<u8>>> ReadAt for F {
    fn read_at(&mut self, offset: u64, len: usize, into: &mut Vec<u8>) -> io::Result<()> {
        *into = self(offset, len)?;
        Ok(())
    }
}

/// What a read of fewer bytes fetches: a ring header's read does not fetch a whole window.
const SMALL: usize = 4096;

/// A file of known length read through a [`ReadAt`], one window of `window` bytes at a time:
/// memory stays at one window whatever the file's size.
///
/// ```
/// use std::io::Read;
/// use logfmt_web::Window;
///
/// let data: Vec<u8> = (0..=255).collect();
/// let mut file = Window::new(|at: u64, len: usize| {
///     let at = at as usize;
///     Ok(data[at.min(256)..(at + len).min(256)].to_vec())
/// }, 256, 16);
/// let mut all = Vec::new();
/// file.read_to_end(&mut all)?;
/// assert_eq!(all, data);
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct Window<R> {
    source: R,
    len: u64,
    window: usize,
    /// Where the bytes held begin.
    start: u64,
    held: Vec<u8>,
    position: u64,
    /// Bytes read through the source, for the reader's statistics.
    fetched: u64,
}

impl<R: ReadAt> Window<R> {
    /// A file of `len` bytes read through `source`, `window` bytes at a time.
    pub fn new(source: R, len: u64, window: usize) -> Self {
        Self {
            source,
            len,
            window: window.max(1),
            start: 0,
            held: Vec::new(),
            position: 0,
            fetched: 0,
        }
    }

    /// The file's length.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes read through the source so far.
    pub fn fetched(&self) -> u64 {
        self.fetched
    }

    fn held_end(&self) -> u64 {
        self.start + self.held.len() as u64
    }
}

impl<R: ReadAt> Read for Window<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() || self.position >= self.len {
            return Ok(0);
        }
        if self.position < self.start || self.position >= self.held_end() {
            // A small read (a ring header) fetches a little; a block read, a whole window.
            let size = if buf.len() < SMALL {
                SMALL
            } else {
                self.window
            };
            let want = usize::try_from((self.len - self.position).min(size as u64)).unwrap_or(size);
            self.source.read_at(self.position, want, &mut self.held)?;
            self.held.truncate(want);
            self.start = self.position;
            self.fetched += self.held.len() as u64;
            if self.held.is_empty() {
                // The file is shorter than it said: its end is here.
                self.len = self.position;
                return Ok(0);
            }
        }
        let from = usize::try_from(self.position - self.start).unwrap_or(usize::MAX);
        let have = self.held.get(from..).unwrap_or_default();
        let n = have.len().min(buf.len());
        buf[..n].copy_from_slice(&have[..n]);
        self.position += n as u64;
        Ok(n)
    }
}

impl<R: ReadAt> Seek for Window<R> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(at) => Some(at),
            SeekFrom::End(delta) => self.len.checked_add_signed(delta),
            SeekFrom::Current(delta) => self.position.checked_add_signed(delta),
        };
        let target = target.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek before the start of the file",
            )
        })?;
        self.position = target;
        Ok(target)
    }
}
