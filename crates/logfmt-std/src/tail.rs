//! [`ZeroFill`]: a torn tail that is not damage, but zeros to the end of the file — space a
//! writer preallocated or memory-mapped and never wrote.

use std::fs::File;
use std::io;

use crate::file::LogFile;
use crate::recovery::{Damage, DamageKind};
use crate::split::read_at;

/// Bytes read at a time when checking a region.
const CHUNK: usize = 64 * 1024;

/// A zero-filled tail: every byte from `offset` to the end of a regular file is zero. Space a
/// writer preallocated or memory-mapped and never wrote (a writer that used mmap and exited
/// without truncating its file leaves one): not a torn record, since no record was being
/// written there, and nothing was lost.
///
/// A reader reports it as a torn tail ([`DamageKind::TornTail`]); [`zero_fill`] tells the
/// two apart by reading the file again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ZeroFill {
    /// Where the zeros begin.
    pub offset: u64,
    /// How many there are, to the end of the file.
    pub bytes: u64,
}

/// Whether the torn tail `tail` of `log`, as a reader reports it ([`LogReader::tail`]), is a
/// zero-filled tail: `Some` if `tail` is a [`DamageKind::TornTail`] of a regular file that
/// runs to the file's length when it was opened ([`LogFile::len_at_open`]), and every byte of
/// it is zero. `None` otherwise, for any other damage, for a pipe or a device (which cannot
/// be read again), and if reading the file again fails.
///
/// [`LogReader::tail`]: crate::LogReader::tail
///
/// ```
/// use std::io::Write;
///
/// use logfmt_std::{LogFile, LogWriter, LogReaderOptions, LogWriterOptions, advanced::LogReader};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("000001.log");
/// let mut writer = LogWriter::create(&path, &LogWriterOptions::new())?;
/// writer.add_record(b"hello")?;
/// writer.close()?;
/// // Space preallocated after the record and never written.
/// std::fs::OpenOptions::new().append(true).open(&path)?.write_all(&[0; 1000])?;
///
/// let log = LogFile::open(&path)?;
/// let mut reader = LogReader::new(log.source(), &LogReaderOptions::new());
/// while reader.next()?.is_some() {}
/// let tail = reader.tail().expect("a torn tail, as the reader sees it");
/// let zeros = logfmt_std::advanced::zero_fill(&log, &tail).expect("zeros to the end");
/// assert_eq!((zeros.offset, zeros.bytes), (12, 1000));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn zero_fill(log: &LogFile, tail: &Damage) -> Option<ZeroFill> {
    if tail.kind != DamageKind::TornTail || !log.is_regular() || tail.bytes == 0 {
        return None;
    }
    let end = tail.offset.checked_add(tail.bytes)?;
    if end != log.len_at_open() {
        return None;
    }
    all_zero(log.file(), tail.offset, tail.bytes)
        .ok()?
        .then_some(ZeroFill {
            offset: tail.offset,
            bytes: tail.bytes,
        })
}

/// Whether `log` (a regular file) ends in a zero-filled tail from `offset`: [`zero_fill`] of a
/// torn tail from `offset` to the file's length when it was opened. `None` if there is no
/// byte from `offset` on, or one is not zero.
///
/// ```
/// use logfmt_std::{LogFile, advanced::ZeroFill};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("000001.log");
/// let mut bytes = vec![1u8; 100];
/// bytes.extend([0u8; 50]);
/// std::fs::write(&path, &bytes)?;
///
/// let log = LogFile::open(&path)?;
/// let zeros = logfmt_std::advanced::zero_fill_from(&log, 100).expect("zeros to the end");
/// assert_eq!((zeros.offset, zeros.bytes), (100, 50));
/// assert_eq!(logfmt_std::advanced::zero_fill_from(&log, 99), None); // a byte 1 at 99
/// assert_eq!(logfmt_std::advanced::zero_fill_from(&log, 150), None); // nothing there
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn zero_fill_from(log: &LogFile, offset: u64) -> Option<ZeroFill> {
    let bytes = log.len_at_open().checked_sub(offset).filter(|&b| b > 0)?;
    zero_fill(
        log,
        &Damage {
            offset,
            bytes,
            kind: DamageKind::TornTail,
        },
    )
}

/// Whether the `len` bytes at `offset` of `file` are all zero: `false` if the file ends
/// before them. Reads 64 KiB at a time, at the offset (the file's position is not used).
///
/// ```
/// use std::io::Write;
///
/// let mut file = tempfile::tempfile()?;
/// file.write_all(b"log\0\0\0\0")?;
/// assert!(logfmt_std::advanced::all_zero(&file, 3, 4)?);
/// assert!(!logfmt_std::advanced::all_zero(&file, 2, 5)?); // a byte of the log
/// assert!(!logfmt_std::advanced::all_zero(&file, 3, 5)?); // past the end
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// # Errors
/// An I/O error reading the file.
pub fn all_zero(file: &File, offset: u64, len: u64) -> io::Result<bool> {
    let mut buffer = vec![0u8; CHUNK];
    let mut at = offset;
    let end = offset.saturating_add(len);
    while at < end {
        let want = usize::try_from((end - at).min(CHUNK as u64)).unwrap_or(CHUNK);
        let read = read_at(file, &mut buffer[..want], at)?;
        if read == 0 {
            return Ok(false);
        }
        if buffer[..read].iter().any(|&b| b != 0) {
            return Ok(false);
        }
        at += read as u64;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of `bytes`, opened as a log.
    fn log_of(bytes: &[u8]) -> (tempfile::TempDir, LogFile) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("000001.log");
        std::fs::write(&path, bytes).unwrap();
        let log = LogFile::open(&path).unwrap();
        (dir, log)
    }

    fn torn(offset: u64, bytes: u64) -> Damage {
        Damage {
            offset,
            bytes,
            kind: DamageKind::TornTail,
        }
    }

    #[test]
    fn zeros_to_the_end_are_zero_fill() {
        // More than one chunk of zeros, so that every chunk is read.
        let mut bytes = vec![7u8; 10];
        bytes.resize(10 + 2 * CHUNK + 5, 0);
        let (_dir, log) = log_of(&bytes);
        let zeros = (2 * CHUNK + 5) as u64;
        let want = Some(ZeroFill {
            offset: 10,
            bytes: zeros,
        });
        assert_eq!(zero_fill(&log, &torn(10, zeros)), want);
        assert_eq!(zero_fill_from(&log, 10), want);
    }

    #[test]
    fn a_byte_not_zero_is_not_zero_fill() {
        // The byte in the last chunk, then in the first.
        for at in [10 + 2 * CHUNK + 4, 10] {
            let mut bytes = vec![7u8; 10];
            bytes.resize(10 + 2 * CHUNK + 5, 0);
            bytes[at] = 1;
            let (_dir, log) = log_of(&bytes);
            assert_eq!(zero_fill(&log, &torn(10, (2 * CHUNK + 5) as u64)), None);
            assert_eq!(zero_fill_from(&log, 10), None);
        }
    }

    #[test]
    fn a_tail_short_of_the_end_is_not_zero_fill() {
        let (_dir, log) = log_of(&[0u8; 100]);
        assert_eq!(zero_fill(&log, &torn(10, 89)), None);
        assert_eq!(zero_fill(&log, &torn(10, 91)), None);
        assert_eq!(zero_fill(&log, &torn(10, 90)).map(|z| z.bytes), Some(90));
        assert_eq!(zero_fill_from(&log, 100), None);
        assert_eq!(zero_fill_from(&log, 101), None);
    }

    #[test]
    fn only_a_torn_tail_is_zero_fill() {
        let (_dir, log) = log_of(&[0u8; 100]);
        let skipped = Damage {
            kind: DamageKind::Skipped,
            ..torn(10, 90)
        };
        assert_eq!(zero_fill(&log, &skipped), None);
        assert_eq!(zero_fill(&log, &torn(100, 0)), None);
    }
}
