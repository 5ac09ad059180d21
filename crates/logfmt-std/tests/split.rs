//! Splits: the ranges' records, concatenated, are the sequential read's records, for any
//! number of ranges and any log, damaged included.

mod common;

use common::{Seen, damages, drain, log_of, read, records};
use logfmt_std::{
    Damage, DamageKind, LogReaderOptions, MappedLog, RecoveryMode,
    advanced::{CorruptionKind, LogReader, ReadOptions, par_scan, split},
};
use proptest::prelude::*;

/// The records of every range of `ranges`, in order.
fn by_ranges(log: &[u8], options: &LogReaderOptions, ranges: &[std::ops::Range<u64>]) -> Vec<Seen> {
    par_scan(log, options, ranges, |range, mut reader| {
        let seen = drain(&mut reader);
        for record in records(&seen) {
            assert!(range.contains(&record.0), "{record:?} outside {range:?}");
        }
        seen
    })
    .into_iter()
    .flatten()
    .collect()
}

fn check(log: &[u8], options: &LogReaderOptions, parts: usize) -> Result<(), TestCaseError> {
    let sequential = read(log, options);
    let ranges = split(log.len() as u64, parts);
    let split_read = by_ranges(log, options, &ranges);
    prop_assert_eq!(
        records(&split_read),
        records(&sequential),
        "{} parts",
        parts
    );
    // Damage in the skip mode is reported by exactly one range — a continuation whose start
    // was dropped too (a "missing start" drop): the next range's reader skips the chunks it
    // starts with that continue a record, and the range before reports them — except where
    // a torn tail begins, which depends on what came before the range, and, in a flash image,
    // a missing start at a range's start, which goes unreported.
    if options.recovery == RecoveryMode::SkipAnyCorruptedRecords {
        let flash = options.read.erased.is_some();
        let continuation = |d: &Damage| {
            matches!(d.kind, DamageKind::TornTail)
                || flash
                    && matches!(
                        d.kind,
                        DamageKind::Corruption(
                            CorruptionKind::MiddleWithoutStart | CorruptionKind::LastWithoutStart
                        )
                    )
        };
        let mut sequential: Vec<Damage> = damages(&sequential)
            .into_iter()
            .filter(|d| !continuation(d))
            .collect();
        let mut ranged: Vec<Damage> = damages(&split_read)
            .into_iter()
            .filter(|d| !continuation(d))
            .collect();
        sequential.sort_by_key(|d| d.offset);
        ranged.sort_by_key(|d| d.offset);
        prop_assert_eq!(ranged, sequential, "{} parts, flash {}", parts, flash);
    }
    Ok(())
}

#[test]
fn split_covers_the_file() {
    for len in [0u64, 1, 7, 32_768, 1 << 40] {
        for parts in [0, 1, 2, 3, 10, 1000] {
            let ranges = split(len, parts);
            assert_eq!(ranges.len(), parts.max(1));
            assert_eq!(ranges.first().map(|r| r.start), Some(0));
            assert_eq!(ranges.last().map(|r| r.end), Some(len));
            for pair in ranges.windows(2) {
                assert_eq!(pair[0].end, pair[1].start);
            }
        }
    }
}

#[test]
fn ranges_on_a_fixed_log() {
    let lens = [10, 40_000, 3, 32_742, 0, 100_000, 5, 7, 32_761, 1];
    let (log, written) = log_of(&lens);
    for parts in 1..=40 {
        check(&log, &LogReaderOptions::new(), parts)
            .map_err(|e| format!("{e}"))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    // A range that starts exactly at a record gets it; the one ending there does not.
    let at = written[3].0.offset;
    let options = LogReaderOptions::new();
    let seen = by_ranges(&log, &options, &[0..at, at..at + 1]);
    assert_eq!(records(&seen).len(), 4);
    let seen = read(&log, &options.clone().range(at..at + 1));
    assert_eq!(records(&seen), [(at, written[3].1.clone())]);
}

#[test]
fn a_mapped_log_splits_the_same() -> Result<(), Box<dyn std::error::Error>> {
    let (log, _) = log_of(&[1000; 200]);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("000001.log");
    std::fs::write(&path, &log)?;
    let mapped = MappedLog::open(&path)?;
    let counts = mapped.par_scan(&LogReaderOptions::new(), 7, |_, mut reader| {
        records(&drain(&mut reader)).len()
    });
    assert_eq!(counts.len(), 7);
    assert_eq!(counts.iter().sum::<usize>(), 200);
    Ok(())
}

fn damaged_log() -> impl Strategy<Value = Vec<u8>> {
    (
        proptest::collection::vec(0usize..70_000, 0..10),
        proptest::collection::vec((any::<usize>(), any::<u8>()), 0..5),
        proptest::option::of(any::<usize>()),
        proptest::option::of((any::<usize>(), 1usize..40_000)),
    )
        .prop_map(|(lens, flips, cut, zeros)| {
            let (mut log, _) = log_of(&lens);
            if !log.is_empty() {
                for (at, byte) in flips {
                    let at = at % log.len();
                    log[at] = byte;
                }
                if let Some((at, len)) = zeros {
                    let at = at % log.len();
                    let end = (at + len).min(log.len());
                    log[at..end].fill(0);
                }
            }
            if let Some(cut) = cut {
                log.truncate(cut % (log.len() + 1));
            }
            log
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn split_scan_equals_sequential_scan(
        log in damaged_log(),
        parts in 1usize..64,
        recovery in proptest::sample::select(RecoveryMode::ALL.to_vec()),
        erased in proptest::option::of(proptest::sample::select(vec![0u8, 0xff])),
    ) {
        let options = LogReaderOptions::new()
            .recovery(recovery)
            .read(ReadOptions::new().erased(erased));
        // Point-in-time and absolute stop at the first damage; each range stops at the first in
        // it, so only the tolerant modes read the same records range by range.
        if matches!(recovery, RecoveryMode::TolerateCorruptedTailRecords | RecoveryMode::SkipAnyCorruptedRecords) {
            check(&log, &options, parts)?;
        }
        // Any ranges, not only even ones: random cut points.
        let mut cuts: Vec<u64> = (0..parts as u64).map(|i| (i * 7919 * 4099) % (log.len() as u64 + 1)).collect();
        cuts.push(0);
        cuts.push(log.len() as u64);
        cuts.sort_unstable();
        cuts.dedup();
        let ranges: Vec<_> = cuts.windows(2).map(|w| w[0]..w[1]).collect();
        let tolerant = options.clone().recovery(RecoveryMode::TolerateCorruptedTailRecords);
        prop_assert_eq!(records(&by_ranges(&log, &tolerant, &ranges)), records(&read(&log, &tolerant)));
    }
}

#[test]
fn a_range_reader_stops_early() {
    // A range at the start of a long log reads little past its end.
    let (log, _) = log_of(&[100; 10_000]);
    let options = LogReaderOptions::new().range(0..1000);
    let mut reader = LogReader::from_slice(&log, &options);
    let seen = drain(&mut reader);
    assert_eq!(records(&seen).len(), 10);
    assert!(reader.position() < 2000, "{}", reader.position());
}

/// Ranges of one block each over packed logs with bytes overwritten: the ranges report exactly
/// the sequential read's damage — a record's continuation whose start was dropped at the end
/// of the block before included (the range before reports it: the range it is in skips it as
/// LevelDB does from an initial offset).
#[test]
fn block_ranges_report_the_damage_a_sequential_read_reports() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let records: Vec<Vec<u8>> = (0..600)
        .map(|i| {
            let len = if i % 17 == 3 {
                40_000 + next() % 900
            } else {
                next() % 900
            };
            vec![i as u8; len as usize]
        })
        .collect();
    let options = logfmt_std::LogWriterOptions::new()
        .pack(Some(logfmt_std::advanced::PackLimit::bytes(2000)));
    let mut writer = logfmt_std::LogWriter::new(Vec::new(), &options);
    for record in &records {
        writer.add_record(record).unwrap();
    }
    let clean = writer.close().unwrap();
    let options = LogReaderOptions::new().recovery(RecoveryMode::SkipAnyCorruptedRecords);
    let mut missing_starts = 0;
    for round in 0..40 {
        let mut log = clean.clone();
        for _ in 0..(1 + round % 6) {
            let at = (next() % log.len() as u64) as usize;
            log[at] = next() as u8;
        }
        if round % 4 == 1 {
            log.truncate((next() % log.len() as u64) as usize);
        }
        let blocks: Vec<_> = (0..(log.len() as u64).div_ceil(32768))
            .map(|b| b * 32768..((b + 1) * 32768).min(log.len() as u64))
            .collect();
        // In order of offset: a record's drop comes before or after the damage that cut it,
        // by range.
        let by_offset = |mut d: Vec<Damage>| {
            d.sort_by_key(|d| d.offset);
            d
        };
        let sequential = by_offset(damages(&read(&log, &options)));
        missing_starts += sequential
            .iter()
            .filter(|d| {
                matches!(
                    d.kind,
                    DamageKind::Corruption(
                        CorruptionKind::MiddleWithoutStart | CorruptionKind::LastWithoutStart
                    )
                )
            })
            .count();
        assert_eq!(
            by_offset(damages(&by_ranges(&log, &options, &blocks))),
            sequential,
            "round {round}"
        );
    }
    // The case this test is for occurred.
    assert!(missing_starts > 0);
}
