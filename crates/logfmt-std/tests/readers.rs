//! The readers over files: short reads, memory maps, tailing a growing log.

mod common;

use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Read, Write};

use common::{Seen, damages, drain, log_of, read, records};
use logfmt_std::{
    LogEntry, LogReaderOptions, MappedLog, RecoveryMode,
    advanced::{Ending, Entry, LogEnd, LogReader, ReadOptions, StdSource},
};
use proptest::prelude::*;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Returns 1..=`max` bytes per read (cycling), and `Interrupted` before every other read.
struct Stingy<'a> {
    data: &'a [u8],
    max: usize,
    next: usize,
    interrupt: bool,
}

impl Read for Stingy<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.interrupt = !self.interrupt;
        if self.interrupt {
            return Err(ErrorKind::Interrupted.into());
        }
        self.next = self.next % self.max + 1;
        let n = buf.len().min(self.next).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

#[test]
fn short_and_interrupted_reads_lose_nothing() {
    // google/leveldb#1285: a short read taken for the end of the log loses its tail.
    let (mut log, _) = log_of(&[5, 50_000, 0, 32_758, 100_000, 7, 1]);
    log[40_000] ^= 1;
    for options in [
        LogReaderOptions::new(),
        LogReaderOptions::new().recovery(RecoveryMode::SkipAnyCorruptedRecords),
        LogReaderOptions::new().range(100..90_000),
    ] {
        let expected = read(&log, &options);
        assert!(!records(&expected).is_empty());
        for max in [1, 2, 7, 4096, 40_000] {
            let source = StdSource::new(Stingy {
                data: &log,
                max,
                next: 0,
                interrupt: false,
            });
            let got = drain(&mut LogReader::new(source, &options));
            assert_eq!(got, expected, "reads of at most {max} bytes");
        }
    }
}

#[test]
fn a_mapped_log_reads_like_a_file() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("000007.log");
    let (mut log, written) = log_of(&[10, 40_000, 0, 5, 32_761, 3]);
    log[20] ^= 1; // the FIRST chunk of the big record
    fs::write(&path, &log)?;
    let mapped = MappedLog::open(&path)?;
    assert_eq!(mapped.bytes(), &log[..]);
    let options = LogReaderOptions::new().recovery(RecoveryMode::SkipAnyCorruptedRecords);
    let expected = read(&log, &options);
    let file = File::open(&path)?;
    assert_eq!(
        drain(&mut LogReader::new(StdSource::seekable(&file), &options)),
        expected
    );
    assert_eq!(drain(&mut mapped.reader(&options)), expected);

    // The iterator's records in one chunk are slices of the map.
    let map = mapped.bytes().as_ptr_range();
    let mut seen = Vec::new();
    for entry in mapped.records(&options) {
        match entry? {
            LogEntry::Record(record) => {
                let single = written.iter().any(|(w, d)| {
                    w.offset == record.offset && w.end - w.offset == 7 + d.len() as u64
                });
                assert_eq!(record.is_borrowed(), single, "{}", record.offset);
                if record.is_borrowed() {
                    assert!(map.contains(&record.data.as_ptr()) || record.data.is_empty());
                }
                seen.push(Seen::Record(record.offset, record.data.into_owned()));
            }
            LogEntry::Damage(d) => seen.push(Seen::Damage(d)),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(seen, expected);
    // Records borrowed from the map outlive the iterator.
    let first = mapped.records(&LogReaderOptions::new()).next();
    assert!(matches!(first, Some(Ok(LogEntry::Record(ref r))) if r.data.as_ref() == written[0].1));
    Ok(())
}

#[test]
fn an_empty_or_odd_file_maps() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("empty.log");
    fs::write(&path, b"")?;
    let mapped = MappedLog::open(&path)?;
    assert!(mapped.is_empty());
    assert_eq!(mapped.records(&LogReaderOptions::new()).count(), 0);
    assert!(MappedLog::open(dir.path()).is_err());
    assert!(MappedLog::open(dir.path().join("missing")).is_err());
    #[cfg(unix)]
    assert!(matches!(
        MappedLog::open("/dev/null"),
        Err(logfmt_std::Error::NotAFile { .. })
    ));
    // Absolute consistency ends the iterator with the error.
    let (log, _) = log_of(&[10, 100]);
    fs::write(&path, &log[..50])?;
    let mapped = MappedLog::open(&path)?;
    let options = LogReaderOptions::new().recovery(RecoveryMode::AbsoluteConsistency);
    let items: Vec<_> = mapped.records(&options).collect();
    assert_eq!(items.len(), 2);
    assert!(items[1].is_err());
    Ok(())
}

/// Appends `log` to a file in steps of the given sizes, draining a tailing reader after each:
/// every record comes out once, in order, and nothing is reported.
fn tail_in_steps(log: &[u8], steps: &[usize]) -> Result<Vec<Seen>, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("growing.log");
    let mut writer = OpenOptions::new().create(true).append(true).open(&path)?;
    let file = File::open(&path)?;
    let options = LogReaderOptions::new()
        .read(ReadOptions::new().tailing(true))
        .recovery(RecoveryMode::SkipAnyCorruptedRecords);
    let mut reader = LogReader::new(StdSource::new(&file), &options);
    let mut seen = Vec::new();
    let mut written = 0;
    let mut steps = steps.iter().copied().cycle();
    while written < log.len() {
        let step = steps.next().unwrap_or(1).max(1).min(log.len() - written);
        writer.write_all(&log[written..written + step])?;
        written += step;
        loop {
            match reader.next() {
                Ok(Some(Entry::Record(r))) => seen.push(Seen::Record(r.offset, r.data.to_vec())),
                Ok(Some(Entry::Damage(d))) => seen.push(Seen::Damage(d)),
                Ok(None) => break,
                Err(e) => return Err(e.to_string().into()),
                other => panic!("not expected here: {other:?}"),
            }
        }
        // Nothing has ended: more may come.
        assert_eq!(reader.ending(), None);
    }
    Ok(seen)
}

#[test]
fn tailing_a_growing_log() -> TestResult {
    let (log, written) = log_of(&[5, 50_000, 0, 32_758, 100_000, 7, 1, 3]);
    let expected: Vec<Seen> = written
        .iter()
        .map(|(w, d)| Seen::Record(w.offset, d.clone()))
        .collect();
    // Byte by byte through the first records, then mid-chunk and mid-header steps, then whole
    // blocks.
    for steps in [
        &[1usize][..],
        &[3, 5000],
        &[7, 32_768],
        &[32_769],
        &[log.len()],
    ] {
        let log = if steps == [1] { &log[..2000] } else { &log[..] };
        let got = tail_in_steps(log, steps)?;
        let want: Vec<Seen> = expected
            .iter()
            .filter(|s| matches!(s, Seen::Record(o, d) if (*o as usize) + 7 + d.len() <= log.len()))
            .cloned()
            .collect();
        assert_eq!(got, want, "steps {steps:?}");
    }
    Ok(())
}

#[test]
fn a_tailing_reader_ends_when_the_log_does() -> TestResult {
    // Not tailing: the same file read at any moment ends in a torn tail, which is reported
    // by the skip mode; tailing waits instead.
    let (log, _) = log_of(&[10, 40_000]);
    let half = &log[..30_000];
    let seen = read(
        half,
        &LogReaderOptions::new().recovery(RecoveryMode::SkipAnyCorruptedRecords),
    );
    assert_eq!(records(&seen).len(), 1);
    assert_eq!(damages(&seen).len(), 1);
    let options = LogReaderOptions::new().read(ReadOptions::new().tailing(true));
    let mut reader = LogReader::from_slice(half, &options);
    assert_eq!(records(&drain(&mut reader)).len(), 1);
    assert_eq!(reader.ending(), None);
    // A slice never grows, so a tailing reader over one keeps waiting.
    assert_eq!(records(&drain(&mut reader)).len(), 0);
    let mut reader = LogReader::from_slice(&log, &LogReaderOptions::new());
    assert_eq!(records(&drain(&mut reader)).len(), 2);
    assert_eq!(
        reader.ending(),
        Some(Ending::Log(LogEnd::Clean {
            offset: log.len() as u64
        }))
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn tailing_in_random_steps(
        lens in proptest::collection::vec(0usize..40_000, 1..6),
        steps in proptest::collection::vec(1usize..20_000, 1..8),
    ) {
        let (log, written) = log_of(&lens);
        let got = tail_in_steps(&log, &steps).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let want: Vec<Seen> = written.iter().map(|(w, d)| Seen::Record(w.offset, d.clone())).collect();
        prop_assert_eq!(got, want);
    }
}
