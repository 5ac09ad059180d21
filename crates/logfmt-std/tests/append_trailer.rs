//! Appending after bytes left in a block's trailer: every (bytes left in the block, bytes of
//! garbage after the last record) pair, in both chunk formats, is either refused with the
//! file unchanged or appended to so that every recovery mode reads every record, old and new
//! — and LevelDB's and RocksDB's chunk rules report nothing.
//!
//! A recyclable log pads the last 1 to 10 bytes of a block (an 11-byte header does not fit);
//! garbage there that the reader passes over at the end of the file becomes, once an append
//! completes the block, a legacy header that LevelDB and RocksDB read (a bad record length):
//! a point-in-time recovery stopped there and lost every appended record.

use std::fs;
use std::path::Path;

use logfmt_std::{
    Error, LogReaderOptions, LogWriter, LogWriterOptions, RecoveryMode, TornTailPolicy,
    advanced::{
        BLOCK_SIZE, Bounded, Ending, Format, Item, LogReader, ReadFormat, ReadOptions, Reader,
        SliceSource, WriteOptions,
    },
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const FORMATS: [Format; 2] = [Format::Legacy, Format::Recyclable { log_number: 7 }];

/// Bytes left in the first block after the last record: 0 to 14 (past both header sizes).
const LEFT: std::ops::RangeInclusive<usize> = 0..=14;

/// Garbage lengths: 1 to 14 (some reach into the next block).
const GARBAGE: std::ops::RangeInclusive<usize> = 1..=14;

fn header(format: Format) -> usize {
    match format {
        Format::Legacy => 7,
        Format::Recyclable { .. } => 11,
    }
}

fn writer_options(format: Format) -> LogWriterOptions {
    LogWriterOptions::new()
        .sync_on_close(false)
        .write(WriteOptions::new().format(format))
}

/// A short record, then one that ends `left` bytes before the end of the first block.
fn old_records(format: Format, left: usize) -> Vec<Vec<u8>> {
    let first = b"first record".to_vec();
    let second_len = BLOCK_SIZE - left - 2 * header(format) - first.len();
    vec![first, vec![b'a'; second_len]]
}

/// Records appended (in the next block).
fn new_records() -> Vec<Vec<u8>> {
    vec![b"NEW".to_vec(), vec![b'n'; 300], b"last".to_vec()]
}

/// Garbage bytes of a pattern: 0 the issue's `11 22 33 44 55 ...`, 1 all `ff`, 2 zeros with
/// a last byte 1, 3 all zeros.
fn garbage(len: usize, pattern: u8) -> Vec<u8> {
    (0..len)
        .map(|i| match pattern {
            0 => ((i as u8 % 15) + 1) * 0x11,
            1 => 0xff,
            2 if i + 1 == len => 1,
            _ => 0,
        })
        .collect()
}

fn write_log(path: &Path, format: Format, records: &[Vec<u8>]) -> TestResult {
    if path.exists() {
        fs::remove_file(path)?;
    }
    let mut writer = LogWriter::create(path, &writer_options(format))?;
    for record in records {
        writer.add_record(record)?;
    }
    writer.close()?;
    Ok(())
}

/// Every record of `log` read in `mode` (as `format`); panics on any damage or error, or on
/// a reading stopped early.
fn read_all(log: &[u8], format: ReadFormat, mode: RecoveryMode, what: &str) -> Vec<Vec<u8>> {
    let options = LogReaderOptions::new()
        .read(ReadOptions::new().format(format))
        .recovery(mode);
    let mut reader = LogReader::from_slice(log, &options);
    let mut records = Vec::new();
    loop {
        match reader.next_bounded(usize::MAX) {
            Ok(Some(Bounded::Record(record))) => records.push(record.data.to_vec()),
            Ok(None) => break,
            Ok(Some(other)) => panic!("{what}, {mode} ({format:?}): {other:?}"),
            Err(e) => panic!("{what}, {mode} ({format:?}): {e}"),
        }
    }
    assert!(
        !matches!(reader.ending(), Some(Ending::Stopped(_))),
        "{what}, {mode}: stopped: {:?}",
        reader.ending()
    );
    records
}

/// LevelDB's and RocksDB's chunk rules (no recovery policy): the records and the drops they
/// report.
fn read_core(log: &[u8], format: ReadFormat) -> (Vec<Vec<u8>>, usize) {
    let mut buffer = vec![0u8; 1 << 17];
    let options = ReadOptions::new().format(format);
    let mut reader = Reader::with_options(SliceSource::new(log), &mut buffer, &options);
    let (mut records, mut drops) = (Vec::new(), 0);
    while let Some(item) = reader.next().unwrap_or_else(|never| match never {}) {
        match item {
            Item::Record(r) => records.push(r.data.to_vec()),
            Item::Corruption(_) => drops += 1,
            other => panic!("{other:?}"),
        }
    }
    (records, drops)
}

/// What one append attempt did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Refused, the file unchanged.
    Refused,
    /// Appended as it was.
    Appended,
    /// Appended after cutting bytes off.
    Truncated,
}

/// Appends to the log at `path` (holding `old`) with `policy`, and checks the result: refused
/// with the file unchanged, or read whole by every mode and by LevelDB's rules.
fn append_and_check(
    path: &Path,
    format: Format,
    old: &[Vec<u8>],
    policy: TornTailPolicy,
    what: &str,
) -> Result<Outcome, Box<dyn std::error::Error>> {
    let before = fs::read(path)?;
    let options = writer_options(format).torn_tail(policy);
    let (mut writer, report) = match LogWriter::append(path, &options) {
        Err(Error::TornTail { .. } | Error::Damaged { .. } | Error::StaleTail { .. }) => {
            assert_eq!(fs::read(path)?, before, "{what}: refused, yet changed");
            return Ok(Outcome::Refused);
        }
        Err(e) => return Err(format!("{what}: {e}").into()),
        Ok(opened) => opened,
    };
    for record in new_records() {
        writer.add_record(&record)?;
    }
    writer.close()?;
    let log = fs::read(path)?;
    let mut expected = old.to_vec();
    expected.extend(new_records());
    for mode in RecoveryMode::ALL {
        let got = read_all(&log, ReadFormat::from(format), mode, what);
        assert!(got == expected, "{what}, {mode}: other records");
    }
    let auto = ReadFormat::Auto { log_number: None };
    let got = read_all(&log, auto, RecoveryMode::PointInTimeRecovery, what);
    assert!(got == expected, "{what}, auto: other records");
    let (got, drops) = read_core(&log, ReadFormat::from(format));
    assert_eq!(drops, 0, "{what}: LevelDB's rules report drops");
    assert!(
        got == expected,
        "{what}: LevelDB's rules read other records"
    );
    Ok(match report.truncated {
        Some(_) => Outcome::Truncated,
        None => Outcome::Appended,
    })
}

#[test]
fn appending_after_trailer_garbage_never_loses_a_record() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("000007.log");
    let mut outcomes = std::collections::HashMap::new();
    for format in FORMATS {
        for left in LEFT {
            let old = old_records(format, left);
            for len in GARBAGE {
                for pattern in 0..4 {
                    let what = format!("{format:?}, {left} bytes left, {len} of pattern {pattern}");
                    let mut log = {
                        write_log(&path, format, &old)?;
                        fs::read(&path)?
                    };
                    assert_eq!(log.len(), BLOCK_SIZE - left, "{what}: the layout");
                    log.extend(garbage(len, pattern));
                    for policy in [TornTailPolicy::Refuse, TornTailPolicy::Truncate] {
                        fs::write(&path, &log)?;
                        let outcome = append_and_check(&path, format, &old, policy, &what)?;
                        outcomes.insert((format, left, len, pattern, policy), outcome);
                    }
                }
            }
        }
    }
    // The case reported: a recyclable log 7 to 10 bytes before a block's end, 5 or 6 bytes
    // of garbage: refused as a torn tail, cut off when asked.
    let recyclable = Format::Recyclable { log_number: 7 };
    for left in 7..=10 {
        for len in 5..=6 {
            for pattern in 0..3 {
                let key = |policy| (recyclable, left, len, pattern, policy);
                assert_eq!(outcomes[&key(TornTailPolicy::Refuse)], Outcome::Refused);
                assert_eq!(outcomes[&key(TornTailPolicy::Truncate)], Outcome::Truncated);
            }
        }
    }
    // Zeros in a trailer are what a writer pads it with: the log is continued as it is
    // (7 zeros or more at the end of the file are a zero-filled tail: refused, or cut off).
    for format in FORMATS {
        for left in 1..header(format) {
            for len in 1..=left.min(6) {
                let key = (format, left, len, 3, TornTailPolicy::Refuse);
                assert_eq!(outcomes[&key], Outcome::Appended, "{key:?}");
            }
        }
    }
    // Garbage shorter than any header that ends the file inside a trailer (where no header
    // of the format fits) is continued after or cut off, never refused outright when
    // truncation is asked for. (Seven bytes or more there read as a header, which LevelDB's
    // and RocksDB's readers report already: damage, refused.)
    for (&(format, left, len, pattern, policy), &outcome) in &outcomes {
        let trailer = len < left && left < header(format);
        if policy == TornTailPolicy::Truncate && trailer && len < 7 {
            assert_ne!(
                outcome,
                Outcome::Refused,
                "{format:?}, {left} left, {len} of pattern {pattern}"
            );
        }
    }
    Ok(())
}
