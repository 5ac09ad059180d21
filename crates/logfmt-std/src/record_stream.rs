//! [`RecordStream`]: a record too large to hold in memory, read a second time from its file
//! and handed out fragment by fragment.

use std::ops::Range;

use logfmt_core::{
    BLOCK_SIZE, BlockSource, ReadOptions,
    parts::{Event, FragmentReader, Oversized},
};

use crate::error::Error;
use crate::file::{LogFile, Reread};
use crate::source::StdSource;

/// The payload of a complete record read a second time from its log file, one fragment at a
/// time, in no more memory than a block: for a record a [`LogReader`](crate::LogReader) found
/// too large to assemble ([`Bounded::Oversized`](crate::Bounded::Oversized)).
///
/// The record's first chunk starts exactly at its offset, so a reader started there returns
/// it first. Its fragments must add up to its length and end where it ended; otherwise the
/// log changed since it was read, and [`next`](Self::next) fails with [`Error::Changed`]
/// (the fragments handed out before are then not the record's). The file is read through
/// [`LogFile::reread`], so the first reader is not disturbed and can read on afterwards.
///
/// ```
/// use logfmt_std::advanced::{Bounded, LogReader, RecordStream};
/// use logfmt_std::{LogFile, LogReaderOptions, LogWriter, LogWriterOptions};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("000001.log");
/// let mut writer = LogWriter::create(&path, &LogWriterOptions::new())?;
/// writer.add_record(&[7u8; 100_000])?;
/// writer.close()?;
///
/// let log = LogFile::open(&path)?;
/// let options = LogReaderOptions::new();
/// let mut reader = LogReader::new(log.source(), &options);
/// // At most 64 KiB of a record in memory.
/// let Some(Bounded::Oversized(record)) = reader.next_bounded(64 * 1024)? else { panic!() };
/// let mut stream = RecordStream::new(&log, &options.read, &record)?;
/// let mut streamed = 0;
/// while let Some(piece) = stream.next()? {
///     assert!(piece.iter().all(|&b| b == 7));
///     streamed += piece.len();
/// }
/// assert_eq!(streamed, 100_000);
/// assert!(reader.next_bounded(64 * 1024)?.is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct RecordStream<'f> {
    log: &'f LogFile,
    reader: FragmentReader<StdSource<Reread<'f>>>,
    record: Oversized,
    /// Payload bytes handed out so far.
    delivered: u64,
    /// The record's last fragment was handed out.
    done: bool,
}

impl<'f> RecordStream<'f> {
    /// Reads `record` again from `log` (a regular file), with the `options` it was read with
    /// the first time (its format, checksums, erased value; the initial offset is the
    /// record's, and the file is not tailed).
    ///
    /// # Errors
    /// As for [`LogFile::reread`].
    pub fn new(log: &'f LogFile, options: &ReadOptions, record: &Oversized) -> Result<Self, Error> {
        let options = options.clone().initial_offset(record.offset).tailing(false);
        Ok(Self {
            log,
            reader: FragmentReader::with_options(log.reread()?, &options),
            record: *record,
            delivered: 0,
            done: false,
        })
    }

    /// The record streamed.
    pub fn record(&self) -> Oversized {
        self.record
    }

    /// The next piece of the record's payload (one fragment's, borrowed from the block read);
    /// `None` once the whole record was handed out.
    ///
    /// # Errors
    /// [`Error::Changed`] if the log no longer holds the record as it was read: what follows
    /// its offset is not a record of its length ending where it ended. [`Error::Io`] if
    /// reading fails. Either way the stream is over.
    #[expect(
        clippy::should_implement_trait,
        reason = "a lending iterator: pieces borrow the stream, which `Iterator` cannot express"
    )]
    pub fn next(&mut self) -> Result<Option<&[u8]>, Error> {
        if self.done {
            return Ok(None);
        }
        let payload = self.next_payload();
        if payload.is_err() {
            self.done = true;
        }
        let payload = payload?;
        match self.reader.get_ref().block().get(payload) {
            Some(piece) => Ok(Some(piece)),
            None => {
                self.done = true;
                Err(self.changed())
            }
        }
    }

    /// Reads on to the record's next fragment; returns where its payload is in the block.
    fn next_payload(&mut self) -> Result<Range<usize>, Error> {
        loop {
            let event = match self.reader.next() {
                Ok(event) => event,
                Err(e) => return Err(self.log.read_error(e)),
            };
            let fragment = match event {
                Some(Event::Fragment(fragment)) if fragment.record_offset == self.record.offset => {
                    fragment
                }
                // Block trailers, and the bytes before the record's offset.
                Some(Event::Skipped(_)) => continue,
                _ => return Err(self.changed()),
            };
            let (len, end, last) = (
                fragment.data.len(),
                fragment.end,
                fragment.kind.ends_record(),
            );
            self.delivered += len as u64;
            let whole = self.delivered == self.record.len && end == self.record.end;
            if self.delivered > self.record.len || (last && !whole) {
                return Err(self.changed());
            }
            self.done = last;
            // A chunk never crosses a block, and blocks start at multiples of BLOCK_SIZE: the
            // payload's place in the block follows from its end.
            let start = ((end - len as u64) % BLOCK_SIZE as u64) as usize;
            return Ok(start..start + len);
        }
    }

    fn changed(&self) -> Error {
        Error::Changed {
            path: self.log.path().into(),
            offset: self.record.offset,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{LogWriter, LogWriterOptions};

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    /// Everything `stream` hands out, in pieces.
    fn drain(stream: &mut RecordStream<'_>) -> Result<Vec<Vec<u8>>, Error> {
        let mut pieces = Vec::new();
        while let Some(piece) = stream.next()? {
            pieces.push(piece.to_vec());
        }
        Ok(pieces)
    }

    #[test]
    fn a_record_streams_again_and_a_changed_log_is_noticed() -> TestResult {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("000003.log");
        let mut writer = LogWriter::create(&path, &LogWriterOptions::new())?;
        writer.add_record(b"small")?;
        let big: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let at = writer.add_record(&big)?;
        writer.add_record(b"after")?;
        writer.close()?;
        let log = LogFile::open(&path)?;
        let record = Oversized::new(at.offset, at.end, big.len() as u64, false);
        let mut stream = RecordStream::new(&log, &ReadOptions::new(), &record)?;
        let pieces = drain(&mut stream)?;
        assert_eq!(pieces.concat(), big);
        // FIRST, MIDDLE, MIDDLE, LAST: one piece a chunk.
        assert_eq!(pieces.len(), 4);
        assert!(stream.next()?.is_none());
        assert_eq!(stream.record(), record);

        // Another length, another end, another offset: the log is not what was read.
        for wrong in [
            Oversized::new(record.offset, record.end, 99_999, record.coded),
            Oversized::new(record.offset, record.end, 100_001, record.coded),
            Oversized::new(record.offset, record.end + 1, record.len, record.coded),
            Oversized::new(3, record.end, record.len, record.coded),
            Oversized::new(record.end, record.end, record.len, record.coded),
        ] {
            let mut stream = RecordStream::new(&log, &ReadOptions::new(), &wrong)?;
            let result = drain(&mut stream);
            assert!(
                matches!(&result, Err(Error::Changed { offset, .. }) if *offset == wrong.offset),
                "{wrong:?}: {result:?}"
            );
            assert!(stream.next()?.is_none(), "the stream is over");
        }
        Ok(())
    }

    #[test]
    fn a_record_overwritten_since_it_was_read_is_noticed() -> TestResult {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("000004.log");
        let mut writer = LogWriter::create(&path, &LogWriterOptions::new())?;
        let at = writer.add_record(&[5u8; 70_000])?;
        writer.close()?;
        let log = LogFile::open(&path)?;
        let record = Oversized::new(at.offset, at.end, 70_000, false);
        // The same file, rewritten in place with shorter records.
        let mut writer = LogWriter::overwrite(&path, &LogWriterOptions::new())?;
        for _ in 0..10 {
            writer.add_record(&[6u8; 7_000])?;
        }
        writer.close()?;
        let mut stream = RecordStream::new(&log, &ReadOptions::new(), &record)?;
        let result = drain(&mut stream);
        assert!(
            matches!(&result, Err(Error::Changed { offset: 0, .. })),
            "{result:?}"
        );
        let text = result.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            text.starts_with(
                "the log changed while it was read: the record at offset 0 no longer reads the same: "
            ),
            "{text}"
        );
        Ok(())
    }

    #[cfg(unix)]
    #[test]
    fn a_device_cannot_be_read_again() -> TestResult {
        let log = LogFile::open("/dev/null")?;
        let record = Oversized::new(0, 100_000, 99_000, false);
        let refused = RecordStream::new(&log, &ReadOptions::new(), &record).err();
        assert!(
            matches!(refused, Some(Error::NotAFile { .. })),
            "{refused:?}"
        );
        Ok(())
    }
}
