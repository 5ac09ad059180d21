//! [`StdSource`]: blocks read from any [`std::io::Read`].

use std::fmt;
use std::io::{self, Read, Seek, SeekFrom};

use embedded_io_adapters::std::FromStd;
use logfmt_core::{BLOCK_SIZE, BlockSource, IoSource};

/// How a [`StdSource`] skips input: by reading it (the core [`IoSource`]'s way), or by seeking
/// past it.
type SeekFn<R> = fn(&mut R, u64) -> io::Result<()>;

/// A [`BlockSource`] over any [`std::io::Read`], with its own 32 KiB block buffer on the heap:
/// the core [`IoSource`] over the reader, with seeking.
///
/// Each block is read until it is full or the reader reports the end of its data (`Ok(0)`): short
/// reads and [`ErrorKind::Interrupted`](io::ErrorKind::Interrupted) are retried, so a partial
/// read (a pipe, a socket, a signal) is never mistaken for the end of the log. (LevelDB's
/// `PosixSequentialFile` made that mistake: google/leveldb#1285.)
///
/// The initial offset of [`ReadOptions`](logfmt_core::ReadOptions) is reached by reading and
/// discarding input ([`new`](Self::new)), or by one seek ([`seekable`](Self::seekable)).
/// Offsets are counted from where the reader is when the source is made.
///
/// ```
/// use logfmt_core::parts::{Event, FragmentReader};
/// use logfmt_std::advanced::StdSource;
///
/// // "foo" as a FULL chunk.
/// let log: &[u8] = &[0xdd, 0x5f, 0xb3, 0x7a, 0x03, 0x00, 0x01, b'f', b'o', b'o'];
/// let mut reader = FragmentReader::new(StdSource::new(log));
/// let Some(Event::Fragment(fragment)) = reader.next()? else { panic!() };
/// assert_eq!(fragment.data, b"foo");
/// assert_eq!(reader.next()?, None);
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct StdSource<R> {
    io: IoSource<FromStd<R>, Box<[u8; BLOCK_SIZE]>>,
    seek: Option<SeekFn<R>>,
}

impl<R: Read> StdSource<R> {
    /// A source that reads `reader` from where it is, skipping by reading.
    pub fn new(reader: R) -> Self {
        Self::with_seek(reader, None)
    }

    fn with_seek(reader: R, seek: Option<SeekFn<R>>) -> Self {
        Self {
            io: IoSource::new(FromStd::new(reader), Box::new([0; BLOCK_SIZE])),
            seek,
        }
    }
}

impl<R: Read + Seek> StdSource<R> {
    /// A source that reads `reader` from where it is and reaches an initial offset by one seek.
    /// Seeking past the end of the input is not an error: reading then starts at its end.
    pub fn seekable(reader: R) -> Self {
        Self::with_seek(reader, Some(seek_by::<R>))
    }
}

impl<R> StdSource<R> {
    /// Whether skips are made by seeking.
    pub fn seeks(&self) -> bool {
        self.seek.is_some()
    }

    /// The underlying reader.
    pub fn get_ref(&self) -> &R {
        self.io.get_ref().inner()
    }

    /// The underlying reader, mutably. Moving its position corrupts what is read.
    pub fn get_mut(&mut self) -> &mut R {
        self.io.get_mut().inner_mut()
    }

    /// Gives back the underlying reader.
    pub fn into_inner(self) -> R {
        self.io.into_inner().0.into_inner()
    }
}

impl<R: fmt::Debug> fmt::Debug for StdSource<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdSource")
            .field("reader", self.get_ref())
            .field("seeks", &self.seeks())
            .finish_non_exhaustive()
    }
}

impl<R: Read> BlockSource for StdSource<R> {
    type Error = io::Error;

    fn load_next(&mut self) -> io::Result<()> {
        self.io.load_next()
    }

    fn block(&self) -> &[u8] {
        self.io.block()
    }

    fn skip(&mut self, bytes: u64) -> io::Result<()> {
        match self.seek {
            Some(seek) => {
                self.io.skip(0)?;
                seek(self.get_mut(), bytes)
            }
            None => self.io.skip(bytes),
        }
    }

    fn refill(&mut self) -> io::Result<bool> {
        self.io.refill()
    }
}

/// Seeks `bytes` forward, stopping at the end of the input if the position would overflow.
fn seek_by<R: Seek>(reader: &mut R, mut bytes: u64) -> io::Result<()> {
    while bytes > 0 {
        let step = i64::try_from(bytes).unwrap_or(i64::MAX);
        match reader.seek(SeekFrom::Current(step)) {
            Ok(_) => bytes -= step.unsigned_abs(),
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
                reader.seek(SeekFrom::End(0))?;
                return Ok(());
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StdSink;
    use logfmt_core::{ReadOptions, Reader, SliceSource, Writer, parts::Item};
    use proptest::prelude::*;
    use std::io::Cursor;
    use std::io::ErrorKind;

    /// A reader that returns at most `step` bytes per call and is interrupted before every
    /// successful read.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
        interrupt: bool,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.interrupt = !self.interrupt;
            if self.interrupt {
                return Err(io::Error::from(ErrorKind::Interrupted));
            }
            let n = buf.len().min(self.step).min(self.data.len());
            let (head, tail) = self.data.split_at(n);
            buf[..n].copy_from_slice(head);
            self.data = tail;
            Ok(n)
        }
    }

    fn log_of(records: &[Vec<u8>]) -> Vec<u8> {
        let mut writer = Writer::new(StdSink::new(Vec::new()), Box::new([0u8; BLOCK_SIZE]));
        for record in records {
            writer.add_record(record).expect("writing to memory");
        }
        writer.flush().expect("writing to memory");
        writer.into_parts().0.into_inner()
    }

    fn read_all<S: BlockSource>(source: S, offset: u64) -> Result<Vec<(u64, Vec<u8>)>, S::Error> {
        let mut scratch = vec![0u8; 1 << 20];
        let options = ReadOptions::new().initial_offset(offset);
        let mut reader = Reader::with_options(source, &mut scratch, &options);
        let mut out = Vec::new();
        while let Some(item) = reader.next()? {
            if let Item::Record(r) = item {
                out.push((r.offset, r.data.to_vec()));
            }
        }
        Ok(out)
    }

    fn sample_log() -> Vec<u8> {
        let records: Vec<Vec<u8>> = [5usize, 50_000, 0, 32_758, 100_000, 7, 1]
            .iter()
            .map(|&n| vec![n as u8; n])
            .collect();
        log_of(&records)
    }

    #[test]
    fn short_and_interrupted_reads_are_retried() -> io::Result<()> {
        let log = sample_log();
        let Ok(expected) = read_all(SliceSource::new(&log), 0);
        let trickle = Trickle {
            data: &log,
            step: 1000,
            interrupt: false,
        };
        assert_eq!(read_all(StdSource::new(trickle), 0)?, expected);
        assert_eq!(expected.len(), 7);
        Ok(())
    }

    #[test]
    fn read_and_seek_skips_agree_with_slices() -> io::Result<()> {
        let log = sample_log();
        for offset in [
            0,
            1,
            12,
            32_768,
            32_762,
            50_000,
            100_000,
            log.len() as u64,
            1 << 40,
        ] {
            let Ok(expected) = read_all(SliceSource::new(&log), offset);
            let by_reading = StdSource::new(Trickle {
                data: &log,
                step: 777,
                interrupt: false,
            });
            assert!(!by_reading.seeks());
            assert_eq!(
                read_all(by_reading, offset)?,
                expected,
                "read-skip to {offset}"
            );
            let by_seeking = StdSource::seekable(Cursor::new(&log));
            assert!(by_seeking.seeks());
            assert_eq!(
                read_all(by_seeking, offset)?,
                expected,
                "seek-skip to {offset}"
            );
        }
        Ok(())
    }

    #[test]
    fn errors_are_passed_on() {
        struct Failing;
        impl Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::from(ErrorKind::PermissionDenied))
            }
        }
        let mut source = StdSource::new(Failing);
        let error = source.load_next().err().map(|e| e.kind());
        assert_eq!(error, Some(ErrorKind::PermissionDenied));
        assert!(source.block().is_empty());
    }

    proptest! {
        #[test]
        fn any_read_sizes_give_the_same_records(
            lens in proptest::collection::vec(0usize..70_000, 0..6),
            step in 1usize..40_000,
        ) {
            let records: Vec<Vec<u8>> = lens.iter().map(|&n| vec![n as u8; n]).collect();
            let log = log_of(&records);
            let read = read_all(StdSource::new(Trickle { data: &log, step, interrupt: false }), 0);
            let read = read.map_err(|e| TestCaseError::fail(e.to_string()))?;
            let got: Vec<Vec<u8>> = read.into_iter().map(|(_, d)| d).collect();
            prop_assert_eq!(got, records);
        }
    }
}
