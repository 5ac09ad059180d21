//! Reading a log a second time, independently of the reader that is going through it: to
//! find its first chunk, and to stream a record too large to hold in memory once it is known
//! to be complete.

use std::io::{self, Read, Seek, SeekFrom};

use logfmt_std::{Event, FragmentReader, LogFile, Oversized, ReadOptions, StdSource};

use crate::error::CliError;

/// A reader of an open file at its own position: reading does not move the file offset that
/// the file's other readers share (`pread`).
#[cfg(unix)]
#[derive(Debug)]
pub(crate) struct ReadAt<'a> {
    file: &'a std::fs::File,
    pos: u64,
}

#[cfg(unix)]
impl Read for ReadAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = std::os::unix::fs::FileExt::read_at(self.file, buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

#[cfg(unix)]
impl Seek for ReadAt<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(at) => Some(at),
            SeekFrom::Current(delta) => self.pos.checked_add_signed(delta),
            SeekFrom::End(delta) => self.file.metadata()?.len().checked_add_signed(delta),
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

/// A second reader of `log`, from its start, that does not disturb the first: the same open
/// file read with `pread` (so it is the same file even if its name was reused meanwhile).
#[cfg(unix)]
pub(crate) fn independent(log: &LogFile) -> io::Result<ReadAt<'_>> {
    Ok(ReadAt {
        file: log.file(),
        pos: 0,
    })
}

/// A second reader of `log`, from its start, that does not disturb the first: the file opened
/// again.
#[cfg(not(unix))]
pub(crate) fn independent(log: &LogFile) -> io::Result<std::fs::File> {
    std::fs::File::open(log.path())
}

/// Reads the complete record `record` again from `log` (a regular file) and hands its payload
/// to `each`, fragment by fragment, with no more memory than a block.
///
/// The record's first chunk starts exactly at its offset, so a reader started there
/// (`options` with that initial offset) returns it first. Its fragments must add up to its
/// length and end where it ended; otherwise the log changed since it was read
/// ([`CliError::Changed`]): `each` may then have had a part of it.
pub(crate) fn stream_record(
    log: &LogFile,
    options: &ReadOptions,
    record: &Oversized,
    mut each: impl FnMut(&[u8]) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let changed = || CliError::Changed {
        path: log.path().into(),
        offset: record.offset,
    };
    let source = StdSource::seekable(independent(log).map_err(|e| log.read_error(e))?);
    let options = options.clone().initial_offset(record.offset).tailing(false);
    let mut reader = FragmentReader::with_options(source, &options);
    let mut delivered = 0u64;
    loop {
        match reader.next().map_err(|e| log.read_error(e))? {
            Some(Event::Fragment(fragment)) if fragment.record_offset == record.offset => {
                delivered += fragment.data.len() as u64;
                if delivered > record.len {
                    return Err(changed());
                }
                each(fragment.data)?;
                if fragment.kind.ends_record() {
                    return if delivered == record.len && fragment.end == record.end {
                        Ok(())
                    } else {
                        Err(changed())
                    };
                }
            }
            // Trailers, and the bytes before the record's offset.
            Some(Event::Skipped(_)) => {}
            _ => return Err(changed()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use logfmt_std::{LogWriter, WriterOptions};

    #[test]
    fn a_record_streams_again_and_a_changed_log_is_noticed()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("000003.log");
        let mut writer = LogWriter::create(&path, &WriterOptions::new())?;
        writer.add_record(b"small")?;
        let big: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let at = writer.add_record(&big)?;
        writer.close()?;
        let log = LogFile::open(&path)?;
        let record = Oversized {
            offset: at.offset,
            end: at.end,
            len: big.len() as u64,
        };
        let mut got = Vec::new();
        let mut pieces = 0;
        stream_record(&log, &ReadOptions::new(), &record, |data| {
            got.extend_from_slice(data);
            pieces += 1;
            Ok(())
        })
        .map_err(|e| e.to_string())?;
        assert_eq!(got, big);
        assert!(pieces > 1);

        // Another length, another end, another offset: the log is not what was read.
        for wrong in [
            Oversized {
                len: 99_999,
                ..record
            },
            Oversized {
                end: record.end + 1,
                ..record
            },
            Oversized {
                offset: 3,
                ..record
            },
        ] {
            let result = stream_record(&log, &ReadOptions::new(), &wrong, |_| Ok(()));
            assert!(matches!(result, Err(CliError::Changed { .. })), "{wrong:?}");
        }
        Ok(())
    }
}
