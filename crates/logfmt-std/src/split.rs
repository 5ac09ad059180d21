//! Splitting a log into byte ranges that are read independently (in parallel: `par_scan`,
//! feature `parallel`), and [`ReadAt`], the positioned reads that let readers of one file
//! share it.
//!
//! The format's blocks make this possible: a reader can start at any block and find the next
//! record that starts there. A range's reader
//! ([`LogReaderOptions::range`](crate::LogReaderOptions::range)) starts at the block holding the
//! range's start, skips the records (and continuation chunks) that start before it, returns
//! every record whose first chunk starts in the range — reading past its end to
//! complete the last one — and stops at the first record that starts at or after its end.
//! So ranges that cover a log without overlapping return every record a sequential read
//! returns, exactly once, on damaged logs too. Damage is reported once as well: a
//! continuation chunk whose record's start was dropped, at the start of a range's first
//! block, is skipped there (as LevelDB skips the continuation of a record begun before an
//! initial offset) and reported by the range before, which reads on to it (not in a flash
//! image, where it goes unreported). Only where a torn tail begins depends on the range.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::ops::Range;

/// Splits `0..len` into `parts` (at least one) consecutive ranges of nearly equal size. With
/// more parts than bytes, some ranges are empty.
///
/// ```
/// assert_eq!(logfmt_std::advanced::split(10, 3), [0..3, 3..6, 6..10]);
/// assert_eq!(logfmt_std::advanced::split(0, 2), [0..0, 0..0]);
/// ```
pub fn split(len: u64, parts: usize) -> Vec<Range<u64>> {
    let parts = parts.max(1) as u64;
    let cut = |i: u64| (u128::from(len) * u128::from(i) / u128::from(parts)) as u64;
    (0..parts).map(|i| cut(i)..cut(i + 1)).collect()
}

/// A reader of an open file at a position of its own (`pread`): readers of one file in
/// several threads do not disturb one another. Made by `par_scan_file` (feature `parallel`).
///
/// It may stop at an end of its own ([`up_to`](Self::up_to)): the file then reads as if it
/// ended there, whatever is appended to it meanwhile.
///
/// ```
/// use std::io::{Read, Write};
///
/// let mut file = tempfile::tempfile()?;
/// file.write_all(b"0123456789")?;
/// let mut first = String::new();
/// logfmt_std::advanced::ReadAt::up_to(&file, 4).read_to_string(&mut first)?;
/// assert_eq!(first, "0123");
/// let mut all = String::new();
/// logfmt_std::advanced::ReadAt::new(&file).read_to_string(&mut all)?;
/// assert_eq!(all, "0123456789");
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct ReadAt<'f> {
    file: &'f File,
    pos: u64,
    /// Where reading ends (`u64::MAX`: at the file's end).
    end: u64,
}

impl<'f> ReadAt<'f> {
    /// A reader of `file` from its start to its end, not moving the file's own offset.
    pub fn new(file: &'f File) -> Self {
        Self::up_to(file, u64::MAX)
    }

    /// A reader of the first `end` bytes of `file` (fewer if it is shorter), from its start,
    /// not moving the file's own offset: what is written past `end` is not read.
    pub fn up_to(file: &'f File, end: u64) -> Self {
        Self { file, pos: 0, end }
    }
}

impl Read for ReadAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.end.saturating_sub(self.pos);
        let want = usize::try_from(left).map_or(buf.len(), |left| left.min(buf.len()));
        let Some(buf) = buf.get_mut(..want) else {
            return Ok(0);
        };
        if buf.is_empty() {
            return Ok(0);
        }
        let n = read_at(self.file, buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for ReadAt<'_> {
    /// Moves the position; [`SeekFrom::End`] counts from the file's end, or from the end
    /// given to [`up_to`](ReadAt::up_to) if that comes first.
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(at) => Some(at),
            SeekFrom::Current(delta) => self.pos.checked_add_signed(delta),
            SeekFrom::End(delta) => self
                .file
                .metadata()?
                .len()
                .min(self.end)
                .checked_add_signed(delta),
        };
        self.pos = target.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek before the start of the file",
            )
        })?;
        Ok(self.pos)
    }
}

#[cfg(unix)]
pub(crate) fn read_at(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, pos)
}

#[cfg(windows)]
pub(crate) fn read_at(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, pos)
}

/// Elsewhere (WebAssembly, where there are no files: the browser inspector reads through its
/// own source) a positioned read is an error, never a wrong byte.
#[cfg(not(any(unix, windows)))]
pub(crate) fn read_at(_file: &File, _buf: &mut [u8], _pos: u64) -> io::Result<usize> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "positioned reads are not supported on this platform",
    ))
}
