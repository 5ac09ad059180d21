//! Records of any size in bounded memory (`LogReader::next_bounded`), and recyclable logs:
//! the end of a recycled file's new records, appending to a recyclable log.

mod common;

use std::fs;

use common::{Seen, drain, record};
use logfmt_std::{
    Damage, DamageKind, Error, LogReaderOptions, LogWriter, LogWriterOptions, RecoveryMode,
    TornTailPolicy,
    advanced::{
        AppendFormat, BLOCK_SIZE, Bounded, Ending, Format, LogEnd, LogReader, ReadError,
        ReadFormat, ReadOptions, WriteOptions,
    },
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A log of records of the given lengths (record `i` is `record(len, seed + i)`).
fn log(format: Format, lens: &[usize], seed: u32) -> Vec<u8> {
    let mut writer = LogWriter::new(
        Vec::new(),
        &LogWriterOptions::new().write(WriteOptions::new().format(format)),
    );
    for (i, &len) in lens.iter().enumerate() {
        writer
            .add_record(&record(len, seed + i as u32))
            .expect("writing to memory");
    }
    writer.close().expect("writing to memory")
}

fn recyclable(log_number: u32) -> Format {
    Format::Recyclable { log_number }
}

fn reading(log_number: u32) -> LogReaderOptions {
    LogReaderOptions::new().read(ReadOptions::new().format(ReadFormat::Recyclable { log_number }))
}

/// What `next_bounded(limit)` returns, with oversized records as (offset, end, len).
#[derive(Debug, PartialEq, Eq)]
enum Got {
    Record(u64, Vec<u8>),
    Oversized(u64, u64, u64),
    Damage(Damage),
}

fn bounded(log: &[u8], options: &LogReaderOptions, limit: usize) -> Vec<Got> {
    let mut reader = LogReader::from_slice(log, options);
    let mut got = Vec::new();
    loop {
        match reader.next_bounded(limit) {
            Ok(None) => return got,
            Ok(Some(Bounded::Record(r))) => got.push(Got::Record(r.offset, r.data.to_vec())),
            Ok(Some(Bounded::Oversized(o))) => got.push(Got::Oversized(o.offset, o.end, o.len)),
            Ok(Some(Bounded::Damage(d))) => got.push(Got::Damage(d)),
            Ok(Some(other)) => panic!("{other:?}"),
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn bounded_reading_keeps_only_records_under_the_limit() {
    let lens = [10, 40_000, 0, 32_758, 100_000, 7, 200_000, 3];
    let data = log(Format::Legacy, &lens, 0);
    let mut damaged = data.clone();
    damaged[150_000] ^= 1; // inside the 100 000-byte record
    for log in [&data, &damaged] {
        for options in [
            LogReaderOptions::new(),
            LogReaderOptions::new().recovery(RecoveryMode::SkipAnyCorruptedRecords),
            LogReaderOptions::new().range(5..140_000),
        ] {
            let full = drain(&mut LogReader::from_slice(log, &options));
            for limit in [0, 1, 40_000, 99_999, 100_000, usize::MAX] {
                // The same records and damage in the same order; those assembled from more
                // than `limit` bytes are oversized, with their length, and end where the full
                // reader says.
                let got = bounded(log, &options, limit);
                assert_eq!(got.len(), full.len(), "limit {limit}");
                for (got, full) in got.iter().zip(&full) {
                    match (got, full) {
                        (Got::Record(o, d), Seen::Record(fo, fd)) => {
                            assert_eq!((o, d), (fo, fd), "limit {limit}");
                            // Only records in one chunk exceed the limit.
                            assert!(d.len() <= limit || d.len() < BLOCK_SIZE, "limit {limit}");
                        }
                        (Got::Oversized(o, _, len), Seen::Record(fo, fd)) => {
                            assert_eq!((o, *len as usize), (fo, fd.len()), "limit {limit}");
                            assert!(fd.len() > limit, "limit {limit}");
                        }
                        (Got::Damage(d), Seen::Damage(fd)) => assert_eq!(d, fd),
                        other => panic!("limit {limit}: {other:?}"),
                    }
                }
            }
        }
    }
}

#[test]
fn an_oversized_record_reports_where_it_ends() {
    let data = log(Format::Legacy, &[5, 100_000, 5], 1);
    let got = bounded(&data, &LogReaderOptions::new(), 1000);
    // 5 + 7 = 12; 100 000 bytes in 4 chunks of 7-byte headers; the last record follows.
    let end = 12 + 100_000 + 4 * 7;
    assert_eq!(
        got,
        [
            Got::Record(0, record(5, 1)),
            Got::Oversized(12, end, 100_000),
            Got::Record(end, record(5, 3)),
        ]
    );
}

#[test]
fn an_oversized_record_cut_off_is_never_returned() {
    // A 100 000-byte record torn by a crash, and one damaged in its middle: neither is
    // returned, whatever the limit; only the damage is reported.
    let data = log(Format::Legacy, &[5, 100_000], 2);
    let torn = &data[..90_000];
    let mut damaged = log(Format::Legacy, &[5, 100_000, 6], 2);
    damaged[70_000] ^= 1;
    for limit in [0, 1000, usize::MAX] {
        assert_eq!(
            bounded(torn, &LogReaderOptions::new(), limit),
            [Got::Record(0, record(5, 2))]
        );
        let got = bounded(&damaged, &LogReaderOptions::new(), limit);
        assert!(matches!(got[0], Got::Record(0, _)), "{got:?}");
        assert!(
            got.iter()
                .all(|g| !matches!(g, Got::Oversized(..) | Got::Record(12, _))),
            "{got:?}"
        );
        assert!(got.iter().any(|g| matches!(g, Got::Damage(_))), "{got:?}");
        assert!(matches!(got.last(), Some(Got::Record(_, r)) if r.len() == 6));
    }
}

#[test]
fn next_refuses_a_record_a_bounded_call_gave_up() -> TestResult {
    // Tailing a growing file: a bounded call stops inside a large record, which has outgrown
    // its limit; `next` cannot return it when it completes, and says so.
    let data = log(Format::Legacy, &[100_000, 3], 3);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("growing.log");
    fs::write(&path, &data[..50_000])?;
    let options = LogReaderOptions::new().read(ReadOptions::new().tailing(true));
    let mut reader = LogReader::new(
        logfmt_std::advanced::StdSource::new(fs::File::open(&path)?),
        &options,
    );
    assert!(reader.next_bounded(10)?.is_none());
    assert!(reader.ending().is_none());
    fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, &data[50_000..]))?;
    match reader.next() {
        Err(ReadError::NotAssembled(big)) => assert_eq!((big.offset, big.len), (0, 100_000)),
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(reader.next()?, Some(logfmt_std::advanced::Entry::Record(r)) if r.data.len() == 3)
    );
    Ok(())
}

/// A recycled file: `new` (log 10) written over `old` (log 4), as RocksDB reuses a file
/// without truncating it (after a crash, the rest of the old log is still there).
fn recycled(new: &[u8], old: &[u8]) -> Vec<u8> {
    assert!(old.len() > new.len());
    let mut file = old.to_vec();
    file[..new.len()].copy_from_slice(new);
    file
}

#[test]
fn a_recycled_file_ends_where_its_new_records_end() {
    let old = log(recyclable(4), &[100; 40].map(|n| n * 1000), 100);
    // Where the new records end, the old bytes resume in the middle of an old chunk (a bad
    // length or checksum to the end of that block); the next block holds an old chunk.
    for new_lens in [&[7_000usize, 50_000, 333][..], &[1], &[32_000, 32_000, 20]] {
        let new = log(recyclable(10), new_lens, 200);
        let file = recycled(&new, &old);
        let expected: Vec<Seen> = {
            let mut reader = LogReader::from_slice(&new, &reading(10));
            drain(&mut reader)
        };
        assert_eq!(expected.len(), new_lens.len());
        for mode in [
            RecoveryMode::TolerateCorruptedTailRecords,
            RecoveryMode::SkipAnyCorruptedRecords,
        ] {
            let mut reader = LogReader::from_slice(&file, &reading(10).recovery(mode));
            assert_eq!(drain(&mut reader), expected, "{new_lens:?} {mode}");
            assert_eq!(
                reader.ending(),
                Some(Ending::Log(LogEnd::OldRecord {
                    offset: new.len() as u64,
                    log_number: 4
                })),
                "{new_lens:?} {mode}"
            );
            assert_eq!(reader.tail(), None);
            assert_eq!(reader.last_clean_end(), new.len() as u64);
        }
        // Auto, with the file name's log number, reads the same.
        let auto = LogReaderOptions::new().read(ReadOptions::new().format(ReadFormat::Auto {
            log_number: Some(10),
        }));
        assert_eq!(drain(&mut LogReader::from_slice(&file, &auto)), expected);
    }
}

#[test]
fn strict_modes_see_the_garbage_of_a_recycled_file() {
    let old = log(recyclable(4), &[60_000; 4], 100);
    let new = log(recyclable(10), &[7_000, 333], 200);
    let file = recycled(&new, &old);
    // Absolute consistency cannot tell it from damage in the last block: an error.
    let mut reader = LogReader::from_slice(
        &file,
        &reading(10).recovery(RecoveryMode::AbsoluteConsistency),
    );
    let seen = drain(&mut reader);
    assert!(matches!(seen.last(), Some(Seen::Error(d)) if d.offset == new.len() as u64));
    // Point-in-time stops there, with every new record returned.
    let mut reader = LogReader::from_slice(
        &file,
        &reading(10).recovery(RecoveryMode::PointInTimeRecovery),
    );
    let seen = drain(&mut reader);
    assert_eq!(
        seen.iter()
            .filter(|s| matches!(s, Seen::Record(..)))
            .count(),
        2
    );
    assert!(matches!(reader.ending(), Some(Ending::Stopped(d)) if d.offset == new.len() as u64));
}

#[test]
fn an_aligned_recycled_file_and_real_damage() {
    let old = log(recyclable(4), &[50_000, 100, 100, 50_000], 100);
    // The new records have the same sizes: the old chunks resume at a chunk boundary.
    let new = log(recyclable(10), &[50_000, 100], 200);
    let file = recycled(&new, &old);
    let mut reader = LogReader::from_slice(&file, &reading(10));
    assert_eq!(drain(&mut reader).len(), 2);
    assert_eq!(
        reader.ending(),
        Some(Ending::Log(LogEnd::OldRecord {
            offset: new.len() as u64,
            log_number: 4
        }))
    );

    // Damage in the middle of the new records is damage: it is not followed by an old
    // record at the next block.
    let long = log(recyclable(10), &[500; 200], 300);
    let mut damaged = recycled(&long, &log(recyclable(4), &[200_000], 9));
    damaged[1000] ^= 1;
    let mut reader = LogReader::from_slice(&damaged, &reading(10));
    let seen = drain(&mut reader);
    let damage: Vec<&Damage> = seen
        .iter()
        .filter_map(|s| match s {
            Seen::Damage(d) => Some(d),
            _ => None,
        })
        .collect();
    // The damaged chunk, then (LevelDB's report) the rest of the record it cut.
    assert_eq!(damage.len(), 2, "{damage:?}");
    assert_eq!(
        (damage[0].offset, damage[0].kind),
        (
            511,
            DamageKind::Corruption(logfmt_std::advanced::CorruptionKind::ChecksumMismatch)
        )
    );
    assert!(matches!(
        reader.ending(),
        Some(Ending::Log(LogEnd::OldRecord { log_number: 4, .. }))
    ));
}

#[test]
fn a_record_torn_in_a_recycled_file_ends_the_log_at_its_start() {
    // The crash tore the last new record: its last chunk is half written over an old one.
    let old = log(recyclable(4), &[20_000; 10], 100);
    let new = log(recyclable(10), &[1000, 40_000], 200);
    let torn = &new[..new.len() - 3000];
    let file = recycled(torn, &old);
    let mut reader = LogReader::from_slice(&file, &reading(10));
    let seen = drain(&mut reader);
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(
        reader.ending(),
        Some(Ending::Log(LogEnd::OldRecord {
            offset: 1011,
            log_number: 4
        }))
    );
}

#[test]
fn appending_to_a_recyclable_log() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("000010.log");
    let writing = LogWriterOptions::new().write(WriteOptions::new().format(recyclable(10)));
    let options = writing.clone();
    for session in 0..2u32 {
        let (mut writer, report) = LogWriter::append(&path, &options)?;
        assert_eq!(report.records, u64::from(session) * 3);
        for i in 0..3 {
            writer.add_record(&record(30_000, session * 10 + i))?;
        }
        writer.close()?;
    }
    let data = fs::read(&path)?;
    let seen = drain(&mut LogReader::from_slice(&data, &reading(10)));
    assert_eq!(seen.len(), 6);
    assert!(seen.iter().all(|s| matches!(s, Seen::Record(..))));

    // A stale tail (a recycled file) is refused, and cut off when asked.
    let old = log(recyclable(4), &[100_000, 100_000], 1);
    fs::write(&path, recycled(&data, &old))?;
    let before = fs::read(&path)?;
    let refused = LogWriter::append(&path, &options).err();
    assert!(
        matches!(refused, Some(Error::StaleTail { offset, log_number: 4, bytes, .. })
            if offset == data.len() as u64 && bytes == (old.len() - data.len()) as u64),
        "{refused:?}"
    );
    assert_eq!(fs::read(&path)?, before);
    let truncate = options.clone().torn_tail(TornTailPolicy::Truncate);
    let (mut writer, report) = LogWriter::append(&path, &truncate)?;
    assert_eq!(report.start, data.len() as u64);
    assert_eq!(report.stale.map(|s| s.log_number), Some(4));
    writer.add_record(b"after")?;
    writer.close()?;
    let after = fs::read(&path)?;
    assert!(after.starts_with(&data));
    let mut reader = LogReader::from_slice(&after, &reading(10));
    let seen = drain(&mut reader);
    assert_eq!(seen.len(), 7);
    assert!(matches!(
        reader.ending(),
        Some(Ending::Log(LogEnd::Clean { .. }))
    ));

    // A whole file of another log number is not stale: it is a log of that number, and
    // continuing it with this one is refused, whatever the policy, leaving it as it was.
    fs::write(&path, &old)?;
    for policy in [TornTailPolicy::Refuse, TornTailPolicy::Truncate] {
        let refused = LogWriter::append(&path, &options.clone().torn_tail(policy)).err();
        assert!(
            matches!(
                refused,
                Some(Error::FormatMismatch {
                    found: Format::Recyclable { log_number: 4 },
                    wanted: Some(Format::Recyclable { log_number: 10 }),
                    ..
                })
            ),
            "{refused:?}"
        );
        assert_eq!(fs::read(&path)?, old);
    }
    Ok(())
}

/// `seq 1 1000 | logfmt write --format recyclable 000050.log`, then an append with log number
/// 51 called the whole log stale and truncating it deleted every record.
#[test]
fn a_log_number_mismatch_never_destroys_a_log() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("000050.log");
    let data = log(recyclable(50), &[5; 1000], 1);
    fs::write(&path, &data)?;
    let truncate = LogWriterOptions::new()
        .write(WriteOptions::new().format(recyclable(51)))
        .torn_tail(TornTailPolicy::Truncate);
    let refused = LogWriter::append(&path, &truncate).err();
    let text = refused
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(
        text.starts_with("log is recyclable (log number 50), not recyclable (log number 51)"),
        "{text}"
    );
    assert_eq!(fs::read(&path)?, data);

    // A copy under another name is still log 50: its own number is continued, whatever the
    // name says.
    let copy = dir.path().join("000099.log");
    fs::write(&copy, &data)?;
    for (format, records) in [
        (AppendFormat::Log, 1000),
        (AppendFormat::RecyclableLog, 1001),
    ] {
        let options = LogWriterOptions::new().append_format(format);
        let (mut writer, report) = LogWriter::append(&copy, &options)?;
        assert_eq!(report.format, recyclable(50), "{format:?}");
        assert_eq!((report.records, report.stale), (records, None));
        writer.add_record(b"x")?;
        writer.close()?;
    }
    let after = fs::read(&copy)?;
    let seen = drain(&mut LogReader::from_slice(&after, &reading(50)));
    assert_eq!(seen.len(), 1002);

    // A legacy log is not continued as a recyclable one, nor the other way round.
    let legacy = dir.path().join("000007.log");
    fs::write(&legacy, log(Format::Legacy, &[3; 3], 1))?;
    let refused = LogWriter::append(
        &legacy,
        &LogWriterOptions::new().append_format(AppendFormat::RecyclableLog),
    )
    .err();
    assert!(
        matches!(
            refused,
            Some(Error::FormatMismatch {
                found: Format::Legacy,
                wanted: None,
                ..
            })
        ),
        "{refused:?}"
    );
    let refused = LogWriter::append(&copy, &LogWriterOptions::new()).err();
    assert!(
        matches!(
            refused,
            Some(Error::FormatMismatch {
                wanted: Some(Format::Legacy),
                ..
            })
        ),
        "{refused:?}"
    );

    // An empty log takes the number in its name, or none is known.
    let empty = dir.path().join("000012.log");
    let options = LogWriterOptions::new().append_format(AppendFormat::RecyclableLog);
    let (writer, report) = LogWriter::append(&empty, &options)?;
    assert_eq!(report.format, recyclable(12));
    drop(writer);
    let unnamed = dir.path().join("wal");
    let refused = LogWriter::append(&unnamed, &options).err();
    assert!(
        matches!(refused, Some(Error::NoLogNumber { .. })),
        "{refused:?}"
    );
    Ok(())
}

#[test]
fn not_assembled_is_a_typed_error() {
    let error: ReadError<std::io::Error> =
        ReadError::NotAssembled(logfmt_std::advanced::Oversized::new(7, 100, 80, false));
    assert!(error.to_string().contains("offset 7"));
}

/// A chunk of type `t` with `payload` (a legacy header, a valid checksum).
fn chunk(t: u8, payload: &[u8]) -> Vec<u8> {
    let mut covered = vec![t];
    covered.extend_from_slice(payload);
    let crc = logfmt_core::parts::checksum::mask(logfmt_core::parts::checksum::crc32c(&covered));
    let mut out = crc.to_le_bytes().to_vec();
    out.extend_from_slice(&(payload.len() as u16).to_le_bytes());
    out.extend_from_slice(&covered);
    out
}

#[test]
fn skipped_ignorable_chunks_are_not_damage_in_any_mode() {
    // An ignorable chunk between records, two filling a block, and one at the very end.
    let mut data = log(Format::Legacy, &[10], 1);
    data.extend(chunk(0x85, b"an extension"));
    data.extend(chunk(0x90, &[7; BLOCK_SIZE - 17 - 19 - 7]));
    assert_eq!(data.len(), BLOCK_SIZE);
    data.extend(log(Format::Legacy, &[20, 40_000], 2));
    data.extend(chunk(0xff, b"last"));
    let records = [record(10, 1), record(20, 2), record(40_000, 3)];
    for mode in RecoveryMode::ALL {
        let options = LogReaderOptions::new()
            .read(ReadOptions::new().skip_ignorable_types(true))
            .recovery(mode);
        let mut reader = LogReader::from_slice(&data, &options);
        let seen = drain(&mut reader);
        let expected: Vec<Seen> = [0u64, 32_768, 32_795]
            .iter()
            .zip(&records)
            .map(|(&at, r)| Seen::Record(at, r.clone()))
            .collect();
        assert_eq!(seen, expected, "{mode}");
        assert_eq!(reader.tail(), None, "{mode}");
        assert!(matches!(
            reader.ending(),
            Some(Ending::Log(LogEnd::Clean { .. }))
        ));
        // Reported as LevelDB does without the option.
        let options = LogReaderOptions::new().recovery(mode);
        let seen = drain(&mut LogReader::from_slice(&data, &options));
        assert!(
            seen.iter().any(|s| !matches!(s, Seen::Record(..))),
            "{mode}"
        );
    }
}
