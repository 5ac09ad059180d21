//! Recovery modes on damaged logs, and LevelDB's behaviour kept exactly by default.

mod common;

use common::{Seen, damages, log_of, read, records};
use logfmt_std::{
    Damage, DamageKind, LogReaderOptions, RecoveryMode,
    advanced::{
        BLOCK_SIZE, Corruption, CorruptionKind, Ending, Entry, Item, LogEnd, LogReader, ReadError,
        ReadOptions, Reader,
    },
};
use proptest::prelude::*;

fn mode(mode: RecoveryMode) -> LogReaderOptions {
    LogReaderOptions::new().recovery(mode)
}

/// What the core reader (LevelDB's) returns.
fn leveldb(log: &[u8], options: &ReadOptions) -> Vec<Seen> {
    let mut scratch = vec![0u8; 1 << 20];
    let mut reader = Reader::with_options(
        logfmt_std::advanced::SliceSource::new(log),
        &mut scratch,
        options,
    );
    let mut seen = Vec::new();
    while let Ok(Some(item)) = reader.next() {
        match item {
            Item::Record(r) => seen.push(Seen::Record(r.offset, r.data.to_vec())),
            Item::Corruption(c) => seen.push(Seen::Damage(c.into())),
            Item::Oversized(o) => panic!("{o:?}"),
            Item::Coded(pack) => panic!("{pack:?}"),
            other => panic!("not expected here: {other:?}"),
        }
    }
    seen
}

#[test]
fn a_checksum_mismatch_in_every_mode() {
    // Records of 100, 200, 300 bytes in block 0, 40 000 bytes across blocks 0-1, then 50.
    let (mut log, written) = log_of(&[100, 200, 300, 40_000, 50]);
    log[written[1].0.offset as usize + 10] ^= 1;
    let mismatch = Damage::new(
        written[1].0.offset,
        BLOCK_SIZE as u64 - written[1].0.offset,
        DamageKind::Corruption(CorruptionKind::ChecksumMismatch),
    );
    // Block 0 is dropped from record 1 on; record 3's last chunk has no start.
    let missing_start = Damage::new(
        BLOCK_SIZE as u64,
        written[3].0.end - BLOCK_SIZE as u64 - 7,
        DamageKind::Corruption(CorruptionKind::LastWithoutStart),
    );
    let first = Seen::Record(0, written[0].1.clone());
    let last = Seen::Record(written[4].0.offset, written[4].1.clone());

    let tolerate = read(&log, &mode(RecoveryMode::TolerateCorruptedTailRecords));
    assert_eq!(
        tolerate,
        [
            first.clone(),
            Seen::Damage(mismatch),
            Seen::Damage(missing_start),
            last.clone()
        ]
    );
    assert_eq!(tolerate, leveldb(&log, &ReadOptions::new()));
    assert_eq!(
        read(&log, &mode(RecoveryMode::SkipAnyCorruptedRecords)),
        tolerate
    );
    assert_eq!(
        read(&log, &mode(RecoveryMode::PointInTimeRecovery)),
        [first.clone(), Seen::Damage(mismatch)]
    );
    assert_eq!(
        read(&log, &mode(RecoveryMode::AbsoluteConsistency)),
        [first, Seen::Error(mismatch)]
    );

    let mut reader =
        logfmt_std::advanced::LogReader::from_slice(&log, &mode(RecoveryMode::PointInTimeRecovery));
    let _ = common::drain(&mut reader);
    assert_eq!(reader.ending(), Some(Ending::Stopped(mismatch)));
}

#[test]
fn a_torn_tail_in_every_mode() {
    let (log, written) = log_of(&[100, 40_000]);
    let cut = &log[..log.len() - 100];
    let torn = Damage::new(
        written[0].0.end,
        cut.len() as u64 - written[0].0.end,
        DamageKind::TornTail,
    );
    let first = Seen::Record(0, written[0].1.clone());
    for (recovery, expected) in [
        (
            RecoveryMode::TolerateCorruptedTailRecords,
            vec![first.clone()],
        ),
        (RecoveryMode::PointInTimeRecovery, vec![first.clone()]),
        (
            RecoveryMode::SkipAnyCorruptedRecords,
            vec![first.clone(), Seen::Damage(torn)],
        ),
        (
            RecoveryMode::AbsoluteConsistency,
            vec![first.clone(), Seen::Error(torn)],
        ),
    ] {
        let mut reader = logfmt_std::advanced::LogReader::from_slice(cut, &mode(recovery));
        assert_eq!(common::drain(&mut reader), expected, "{recovery}");
        // The tail is found whatever the mode.
        assert_eq!(reader.tail(), Some(torn), "{recovery}");
        assert_eq!(reader.last_clean_end(), written[0].0.end);
    }
    assert_eq!(
        read(cut, &LogReaderOptions::new()),
        leveldb(cut, &ReadOptions::new())
    );
}

#[test]
fn a_zero_region_hides_records_silently_in_leveldb_only() {
    // Block 0 ends in a trailer, block 1 holds the last record.
    let (mut log, written) = log_of(&[100, 200, 300, 32_137, 50]);
    let hole = written[1].0;
    log[hole.offset as usize..hole.end as usize].fill(0);
    let skipped = Damage::new(
        hole.offset,
        BLOCK_SIZE as u64 - hole.offset,
        DamageKind::Skipped,
    );
    let first = Seen::Record(0, written[0].1.clone());
    let last = Seen::Record(BLOCK_SIZE as u64, written[4].1.clone());
    let tolerate = read(&log, &LogReaderOptions::new());
    assert_eq!(tolerate, [first.clone(), last.clone()]);
    assert_eq!(tolerate, leveldb(&log, &ReadOptions::new()));
    assert_eq!(
        read(&log, &mode(RecoveryMode::SkipAnyCorruptedRecords)),
        [first.clone(), Seen::Damage(skipped), last]
    );
    assert_eq!(
        read(&log, &mode(RecoveryMode::PointInTimeRecovery)),
        [first.clone(), Seen::Damage(skipped)]
    );
    assert_eq!(
        read(&log, &mode(RecoveryMode::AbsoluteConsistency)),
        [first, Seen::Error(skipped)]
    );
}

#[test]
fn a_clean_log_is_clean_in_every_mode() {
    let (log, written) = log_of(&[0, 1, 32_742, 3, 70_000, 32_761, 0]);
    assert_eq!(written[2].0.end, 32_764);
    let expected: Vec<Seen> = written
        .iter()
        .map(|(w, d)| Seen::Record(w.offset, d.clone()))
        .collect();
    for recovery in RecoveryMode::ALL {
        let mut reader = logfmt_std::advanced::LogReader::from_slice(&log, &mode(recovery));
        assert_eq!(common::drain(&mut reader), expected, "{recovery}");
        assert_eq!(reader.tail(), None);
        assert_eq!(
            reader.ending(),
            Some(Ending::Log(LogEnd::Clean {
                offset: log.len() as u64
            }))
        );
        // A log cut in a block trailer is not torn either.
        let trailer_cut = &log[..written[2].0.end as usize + 3];
        let seen = read(trailer_cut, &mode(recovery));
        assert_eq!(records(&seen).len(), 3);
        assert_eq!(damages(&seen), [], "{recovery}");
    }
}

#[test]
fn an_erased_flash_image_has_no_damage() {
    // Records written at the start of each block of an image of 0xff bytes.
    let mut image = vec![0xffu8; 4 * BLOCK_SIZE];
    let (a, _) = log_of(&[10, 20]);
    let (b, _) = log_of(&[30_000]);
    image[..a.len()].copy_from_slice(&a);
    image[BLOCK_SIZE..BLOCK_SIZE + b.len()].copy_from_slice(&b);
    image[2 * BLOCK_SIZE..2 * BLOCK_SIZE + a.len()].copy_from_slice(&a);
    let erased = ReadOptions::new().erased(Some(0xff));
    for recovery in RecoveryMode::ALL {
        let seen = read(&image, &mode(recovery).read(erased.clone()));
        assert_eq!(records(&seen).len(), 5, "{recovery}");
        assert_eq!(damages(&seen), [], "{recovery}");
    }
    // Without the option, LevelDB's reader sees bad record lengths.
    let seen = read(&image, &LogReaderOptions::new());
    assert!(!damages(&seen).is_empty());
    assert_eq!(seen, leveldb(&image, &ReadOptions::new()));
}

#[test]
fn mode_names() {
    for recovery in RecoveryMode::ALL {
        assert_eq!(recovery.name().parse(), Ok(recovery));
    }
    assert!("paranoid".parse::<RecoveryMode>().is_err());
    let corruption = Corruption::new(3, 10, CorruptionKind::ChecksumMismatch);
    assert_eq!(
        Damage::from(corruption).to_string(),
        "dropped 10 bytes at offset 3: checksum mismatch"
    );
}

#[test]
fn a_failed_read_ends_the_log_with_the_one_block_drop_leveldb_reports() {
    /// One good block, then a failure.
    struct FailsAfter<'a>(&'a [u8]);
    impl std::io::Read for FailsAfter<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() {
                return Err(std::io::ErrorKind::PermissionDenied.into());
            }
            self.0.read(buf)
        }
    }
    let (log, _) = log_of(&[10, 40_000, 5]);
    for recovery in RecoveryMode::ALL {
        let source = logfmt_std::advanced::StdSource::new(FailsAfter(&log[..BLOCK_SIZE]));
        let mut reader = LogReader::new(source, &mode(recovery));
        assert!(matches!(reader.next(), Ok(Some(Entry::Record(r))) if r.offset == 0));
        let failed = reader.next().err();
        assert!(
            matches!(&failed, Some(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::PermissionDenied),
            "{recovery}: {failed:?}"
        );
        // The second record's first chunk was read; the block after it was not.
        let ending = reader.ending();
        assert_eq!(
            ending,
            Some(Ending::Failed { offset: 32_768 }),
            "{recovery}"
        );
        let dropped = Corruption::new(32_768, 32_768, CorruptionKind::ReadError);
        assert_eq!(ending.and_then(Ending::read_error), Some(dropped));
        assert_eq!(
            Damage::from(dropped).to_string(),
            "dropped 32768 bytes at offset 32768: read error"
        );
        assert!(
            matches!(reader.next(), Ok(None)),
            "{recovery}: the log ended"
        );
    }
}

/// A log of `lens`, damaged: each (position, byte) pair overwrites a byte, `cut` truncates.
fn damaged(lens: &[usize], flips: &[(usize, u8)], cut: Option<usize>) -> Vec<u8> {
    let (mut log, _) = log_of(lens);
    for &(at, byte) in flips {
        if !log.is_empty() {
            let at = at % log.len();
            log[at] = byte;
        }
    }
    if let Some(cut) = cut {
        log.truncate(cut.min(log.len()));
    }
    log
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Tolerate is LevelDB's reader; skip adds reports but no record; point-in-time returns a
    /// prefix of those records; absolute returns them only while nothing is damaged.
    #[test]
    fn the_modes_agree_with_leveldb(
        lens in proptest::collection::vec(0usize..50_000, 0..8),
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..4),
        cut in proptest::option::of(any::<usize>()),
    ) {
        let log = damaged(&lens, &flips, cut);
        let reference = leveldb(&log, &ReadOptions::new());
        let tolerate = read(&log, &LogReaderOptions::new());
        prop_assert_eq!(&tolerate, &reference);
        let all = records(&reference);
        let skip = read(&log, &mode(RecoveryMode::SkipAnyCorruptedRecords));
        prop_assert_eq!(records(&skip), all.clone());
        let pit = read(&log, &mode(RecoveryMode::PointInTimeRecovery));
        let pit_records = records(&pit);
        prop_assert_eq!(&all[..pit_records.len()], &pit_records[..]);
        let absolute = read(&log, &mode(RecoveryMode::AbsoluteConsistency));
        prop_assert_eq!(records(&absolute), pit_records.clone());
        // Point-in-time stops at the first damage skip reports (unless it is the tail).
        let first_damage = skip.iter().position(|s| matches!(s, Seen::Damage(_)));
        match first_damage {
            None => prop_assert_eq!(pit_records.len(), all.len()),
            Some(at) => {
                let before = records(&skip[..at]).len();
                let is_tail = matches!(skip[at], Seen::Damage(Damage { kind: DamageKind::TornTail, .. }));
                prop_assert_eq!(pit_records.len(), if is_tail { all.len() } else { before });
                prop_assert!(matches!(absolute.last(), Some(Seen::Error(_))));
            }
        }
    }
}
