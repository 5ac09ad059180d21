//! [`StaleTail`]: where the stale bytes after a recyclable log's end begin, and how many there
//! are.

use std::io;

use logfmt_core::{BLOCK_SIZE, BlockSource, LogEnd};

use crate::error::{Error, Operation};
use crate::file::LogFile;
use crate::reader::LogReader;
use crate::recovery::Ending;

/// The bytes after the end of a recyclable log that an earlier use of the file left (RocksDB
/// recycles obsolete log files without truncating them): they begin with, or lead up to, a
/// chunk of another log number, and run to the end of the file.
///
/// Where they begin is where the log ended ([`LogEnd::OldRecord`], as a [`LogReader`] decides
/// it: at the old chunk, or where the last complete record ends when the earlier use's bytes
/// resume in the middle of a chunk); how many there are is counted here, to the end of the
/// file.
///
/// ```
/// use logfmt_std::advanced::{Format, LogReader, ReadFormat, ReadOptions, StaleTail, WriteOptions};
/// use logfmt_std::{LogReaderOptions, LogWriter, LogWriterOptions};
///
/// // A recycled file: log 7's record, written over log 6's first one; log 6's second
/// // record after it.
/// let write = |log_number, records: &[&[u8]]| -> Result<Vec<u8>, logfmt_std::LogWriterError> {
///     let format = Format::Recyclable { log_number };
///     let options = LogWriterOptions::new().write(WriteOptions::new().format(format));
///     let mut writer = LogWriter::new(Vec::new(), &options);
///     for record in records {
///         writer.add_record(record)?;
///     }
///     writer.close()
/// };
/// let mut file = write(6, &[&[6u8; 100], b"old"])?;
/// file[..111].copy_from_slice(&write(7, &[&[7u8; 100]])?);
///
/// let read = ReadOptions::new().format(ReadFormat::Recyclable { log_number: 7 });
/// let mut reader = LogReader::from_slice(&file, &LogReaderOptions::new().read(read));
/// while reader.next()?.is_some() {}
/// let stale = StaleTail::after(&mut reader, None)?;
/// let stale = stale.expect("stale bytes after the log");
/// assert_eq!((stale.offset, stale.bytes, stale.log_number), (111, 14, 6));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct StaleTail {
    /// Where this log ends and the stale bytes begin.
    pub offset: u64,
    /// How many there are, to the end of the file.
    pub bytes: u64,
    /// The log number of the stale chunk that ends the log.
    pub log_number: u32,
}

impl StaleTail {
    /// The stale bytes of a file `len` bytes long whose log ended at `end`: `None` unless it
    /// ended at a chunk of an earlier use of the file ([`LogEnd::OldRecord`]).
    pub fn new(end: LogEnd, len: u64) -> Option<Self> {
        let LogEnd::OldRecord { offset, log_number } = end else {
            return None;
        };
        Some(Self {
            offset,
            bytes: len.saturating_sub(offset),
            log_number,
        })
    }

    /// The stale bytes after the log `reader` has read to its end: `None` unless it ended at
    /// a chunk of an earlier use of the file ([`Ending::Log`] of [`LogEnd::OldRecord`]).
    /// They run to `len`, the input's length if it is known (a file's); otherwise they are
    /// counted by reading the rest of the reader's source (a pipe), which leaves it at its
    /// end.
    ///
    /// # Errors
    /// Reading the rest of the source failed.
    pub fn after<S: BlockSource>(
        reader: &mut LogReader<S>,
        len: Option<u64>,
    ) -> Result<Option<Self>, S::Error> {
        let Some(Ending::Log(end @ LogEnd::OldRecord { .. })) = reader.ending() else {
            return Ok(None);
        };
        let len = match len {
            Some(len) => len,
            None => {
                // The reader stopped at the end of the block that holds the old chunk: count
                // the blocks after it.
                let mut len = reader.position();
                let source = reader.get_mut();
                loop {
                    source.load_next()?;
                    let read = source.block().len();
                    len += read as u64;
                    if read < BLOCK_SIZE {
                        break len;
                    }
                }
            }
        };
        Ok(Self::new(end, len))
    }

    /// The stale bytes after `log`, which `reader` (a reader of it, such as one over
    /// [`LogFile::source`]) has read to its end, as [`after`](Self::after) counts them: to
    /// the length of a regular file, by reading the rest of a pipe.
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be inspected or read.
    pub fn in_file<S>(log: &LogFile, reader: &mut LogReader<S>) -> Result<Option<Self>, Error>
    where
        S: BlockSource<Error = io::Error>,
    {
        let len = if log.is_regular() {
            let meta = log
                .file()
                .metadata()
                .map_err(|e| Error::io(Operation::Inspect, log.path(), e))?;
            Some(meta.len())
        } else {
            None
        };
        Self::after(reader, len).map_err(|e| log.read_error(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{LogReaderOptions, LogWriter, LogWriterOptions, StdSource};
    use logfmt_core::{Format, ReadOptions, WriteOptions, parts::ReadFormat};

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    fn recyclable(log_number: u32, records: &[usize]) -> Result<Vec<u8>, crate::LogWriterError> {
        let format = Format::Recyclable { log_number };
        let options = LogWriterOptions::new().write(WriteOptions::new().format(format));
        let mut writer = LogWriter::new(Vec::new(), &options);
        for (i, &len) in records.iter().enumerate() {
            writer.add_record(&vec![i as u8 + 1; len])?;
        }
        writer.close()
    }

    /// A file that held log 6 (`old`), recycled for log 7 (`new`, written over its start).
    fn recycled(new: &[usize], old: &[usize]) -> Result<Vec<u8>, crate::LogWriterError> {
        let mut file = recyclable(7, new)?;
        let old = recyclable(6, old)?;
        if let Some(rest) = old.get(file.len()..) {
            file.extend_from_slice(rest);
        }
        Ok(file)
    }

    fn options() -> LogReaderOptions {
        LogReaderOptions::new()
            .read(ReadOptions::new().format(ReadFormat::Recyclable { log_number: 7 }))
    }

    /// Reads `file` to its end, then the stale tail with `len` given or counted.
    fn stale(file: &[u8], len: Option<u64>) -> io::Result<Option<StaleTail>> {
        let mut reader = LogReader::new(StdSource::new(file), &options());
        while reader.next().map_err(io::Error::other)?.is_some() {}
        StaleTail::after(&mut reader, len)
    }

    #[test]
    fn counted_to_the_end_of_the_file_whether_its_length_is_known_or_not() -> TestResult {
        // Log 6's bytes resume in a chunk (garbage to the end of the block), at a block's
        // start, and in a chunk again.
        for (new, old) in [
            (&[100][..], &[40_000, 5, 70_000][..]),
            (&[32_757], &[32_757, 10, 100_000]),
            (&[10, 20], &[40_000, 30_000, 3]),
        ] {
            let file = recycled(new, old)?;
            let counted = stale(&file, None)?;
            let given = stale(&file, Some(file.len() as u64))?;
            let Some(tail) = counted else {
                return Err(format!("no stale tail: {new:?} {old:?}").into());
            };
            assert_eq!(given, counted);
            assert_eq!(tail.log_number, 6);
            // From where log 7's last record ends (in log 6's garbage, at its chunk) to the
            // end of the file.
            let new_len = recyclable(7, new)?.len() as u64;
            assert_eq!(tail.offset, new_len);
            assert_eq!(tail.bytes, file.len() as u64 - new_len);
        }
        Ok(())
    }

    #[test]
    fn none_unless_the_log_ends_at_an_old_record() -> TestResult {
        let clean = recyclable(7, &[10, 40_000])?;
        assert_eq!(stale(&clean, None)?, None);
        let torn = &clean[..clean.len() - 3];
        assert_eq!(stale(torn, Some(torn.len() as u64))?, None);
        let end = LogEnd::Torn {
            offset: 21,
            len: 40_000,
        };
        assert_eq!(StaleTail::new(end, 50_000), None);
        Ok(())
    }

    #[test]
    fn in_a_file_and_in_a_pipe() -> TestResult {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("000007.log");
        let file = recycled(&[100, 200], &[50_000, 50_000])?;
        std::fs::write(&path, &file)?;
        let log = LogFile::open(&path)?;
        let mut reader = LogReader::new(log.source(), &options());
        while reader.next()?.is_some() {}
        let tail = StaleTail::in_file(&log, &mut reader)?;
        assert_eq!(
            tail,
            Some(StaleTail {
                offset: 322,
                bytes: file.len() as u64 - 322,
                log_number: 6
            })
        );

        #[cfg(target_os = "linux")]
        {
            // The same bytes through a pipe: counted by reading on.
            let mut child = std::process::Command::new("cat")
                .arg(&path)
                .stdout(std::process::Stdio::piped())
                .spawn()?;
            let pipe = child.stdout.take().ok_or("no pipe")?;
            let fd: std::os::fd::OwnedFd = pipe.into();
            let pipe_path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&fd));
            let log = LogFile::open(&pipe_path)?;
            assert!(!log.is_regular());
            let mut reader = LogReader::new(log.source(), &options());
            while reader.next()?.is_some() {}
            assert_eq!(StaleTail::in_file(&log, &mut reader)?, tail);
            child.wait()?;
        }
        Ok(())
    }
}
