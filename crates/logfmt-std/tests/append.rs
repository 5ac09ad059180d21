//! Safe append: a log cut at every byte offset is refused unless it ends at a safe point,
//! and truncating its torn tail loses no complete record.

mod common;

use std::fs;

use common::{Seen, damages, log_of, read, record, records};
use logfmt_std::{
    DamageKind, Error, LogReaderOptions, LogWriter, LogWriterOptions, RecoveryMode, TornTailPolicy,
    advanced::BLOCK_SIZE,
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Records of 10 bytes, one spanning two blocks, 3 bytes, an empty one and 5 bytes.
const LENS: [usize; 5] = [10, 32_760, 3, 0, 5];

/// A record that leaves a 6-byte trailer in block 0, then two in block 1.
const TRAILER_LENS: [usize; 3] = [32_755, 3, 40];

fn skip_all() -> LogReaderOptions {
    LogReaderOptions::new().recovery(RecoveryMode::SkipAnyCorruptedRecords)
}

#[test]
fn the_layouts() {
    let (log, written) = log_of(&LENS);
    let ends: Vec<u64> = written.iter().map(|(w, _)| w.end).collect();
    assert_eq!(ends, [17, 32_791, 32_801, 32_808, 32_820]);
    assert_eq!(log.len(), 32_820);
    let (log, written) = log_of(&TRAILER_LENS);
    let ends: Vec<u64> = written.iter().map(|(w, _)| w.end).collect();
    assert_eq!(ends, [32_762, 32_778, 32_825]);
    assert_eq!(log.len(), 32_825);
}

/// Where the log may be continued as it is: record ends, and the trailer after one.
fn safe(cut: u64, ends: &[u64]) -> bool {
    let last_end = ends
        .iter()
        .copied()
        .filter(|&e| e <= cut)
        .max()
        .unwrap_or(0);
    let block = BLOCK_SIZE as u64;
    let block_end = (last_end / block + 1) * block;
    cut == last_end || (block_end - last_end < 7 && cut <= block_end)
}

/// Cuts the log of `lens` at every offset in `cuts` and checks appending to it; returns how
/// many cuts were accepted as they are.
fn sweep(
    lens: &[usize],
    cuts: std::ops::RangeInclusive<usize>,
) -> Result<usize, Box<dyn std::error::Error>> {
    let (log, written) = log_of(lens);
    let ends: Vec<u64> = written.iter().map(|(w, _)| w.end).collect();
    // No fsync: 65 556 cuts.
    let no_sync = LogWriterOptions::new().sync_on_close(false);
    let appended = [record(3, 100), record(1000, 101), Vec::new()];
    let dir = common::scratch_dir()?;
    let path = dir.path().join("cut.log");
    let (mut refused, mut accepted) = (0, 0);
    let cuts = *cuts.start()..=(*cuts.end()).min(log.len());
    let count = cuts.clone().count();
    for cut in cuts {
        let prefix = &log[..cut];
        let complete: Vec<&Vec<u8>> = written
            .iter()
            .filter(|(w, _)| w.end <= cut as u64)
            .map(|(_, data)| data)
            .collect();
        let last_end = ends
            .iter()
            .copied()
            .filter(|&e| e <= cut as u64)
            .max()
            .unwrap_or(0);

        // By default: refused unless the cut is a safe point, and the file is unchanged.
        fs::write(&path, prefix)?;
        let result = LogWriter::append(&path, &no_sync.clone());
        if safe(cut as u64, &ends) {
            let (writer, report) = result?;
            assert_eq!(
                (report.start, report.truncated),
                (cut as u64, None),
                "cut {cut}"
            );
            assert_eq!(report.records, complete.len() as u64);
            drop(writer);
            accepted += 1;
        } else {
            match result {
                Err(Error::TornTail { offset, bytes, .. }) => {
                    assert_eq!(
                        (offset, bytes),
                        (last_end, cut as u64 - last_end),
                        "cut {cut}"
                    );
                }
                other => panic!("cut {cut}: {other:?}"),
            }
            assert_eq!(fs::read(&path)?, prefix, "cut {cut}: the file was changed");
            refused += 1;
        }

        // Truncating: every record complete before the cut, then every appended one, and no
        // damage at all.
        let options = no_sync.clone().torn_tail(TornTailPolicy::Truncate);
        let (mut writer, report) = LogWriter::append(&path, &options)?;
        if !safe(cut as u64, &ends) {
            assert_eq!(report.start, last_end, "cut {cut}");
            assert_eq!(report.truncated.map(|t| t.kind), Some(DamageKind::TornTail));
        }
        for data in &appended {
            writer.add_record(data)?;
        }
        writer.close()?;
        let seen = read(&fs::read(&path)?, &skip_all());
        assert_eq!(damages(&seen), [], "cut {cut}");
        let got: Vec<Vec<u8>> = records(&seen).into_iter().map(|(_, d)| d).collect();
        let want: Vec<Vec<u8>> = complete
            .into_iter()
            .cloned()
            .chain(appended.clone())
            .collect();
        assert!(got == want, "cut {cut}: records differ");
    }
    assert_eq!(refused + accepted, count);
    Ok(accepted)
}

#[test]
fn torn_tail_sweep_through_the_library() -> TestResult {
    // Every cut: the start and the record ends are safe, nothing else.
    assert_eq!(sweep(&LENS, 0..=usize::MAX)?, 1 + LENS.len());
    Ok(())
}

#[test]
fn torn_tail_sweep_around_a_trailer() -> TestResult {
    // Around the end of block 0: the record end and the 6 trailer bytes after it are safe.
    assert_eq!(sweep(&TRAILER_LENS, 32_700..=usize::MAX)?, 1 + 6 + 2);
    Ok(())
}

#[test]
fn a_clean_append_is_what_leveldb_writes() -> TestResult {
    let (log, written) = log_of(&LENS);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("clean.log");
    for (i, (at, _)) in written.iter().enumerate() {
        fs::write(&path, &log[..at.end as usize])?;
        let (mut writer, report) = LogWriter::append(&path, &LogWriterOptions::new())?;
        assert_eq!(report.start, at.end);
        for (_, data) in &written[i + 1..] {
            writer.add_record(data)?;
        }
        writer.close()?;
        assert!(fs::read(&path)? == log);
    }
    let (log, written) = log_of(&TRAILER_LENS);
    fs::write(&path, &log[..32_765])?;
    let (mut writer, report) = LogWriter::append(&path, &LogWriterOptions::new())?;
    assert_eq!(report.start, 32_765);
    for (_, data) in &written[1..] {
        writer.add_record(data)?;
    }
    writer.close()?;
    assert!(fs::read(&path)? == log);
    Ok(())
}

#[test]
fn damage_is_refused_and_points_to_salvage() -> TestResult {
    let (mut log, _) = log_of(&LENS);
    log[20] ^= 1; // inside the multi-block record's first chunk
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("damaged.log");
    fs::write(&path, &log)?;
    for policy in [TornTailPolicy::Refuse, TornTailPolicy::Truncate] {
        let result = LogWriter::append(&path, &LogWriterOptions::new().torn_tail(policy));
        let Err(Error::Damaged { first, count, .. }) = result else {
            panic!("{:?}", result.err())
        };
        assert_eq!(first.offset, 17);
        assert!(matches!(first.kind, DamageKind::Corruption(_)));
        assert!(count >= 1);
        assert!(fs::read(&path)? == log);
    }
    Ok(())
}

#[test]
fn a_zero_filled_tail_is_a_torn_tail() -> TestResult {
    // The file's length reached the disk, its last data did not: zeros after the last record.
    let (log, written) = log_of(&[100, 200]);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("zeros.log");
    for zeros in [1, 6, 7, 100, 32_768 - 321, 40_000] {
        let mut bytes = log.clone();
        bytes.resize(log.len() + zeros, 0);
        fs::write(&path, &bytes)?;
        // LevelDB reads both records and no drop; appending after the zeros would put the new
        // records behind a zero header, which LevelDB skips silently.
        let seen = read(&bytes, &LogReaderOptions::new());
        assert_eq!(records(&seen).len(), 2);
        assert_eq!(damages(&seen), []);
        let result = LogWriter::append(&path, &LogWriterOptions::new());
        match result {
            Err(Error::TornTail {
                offset, bytes: n, ..
            }) => {
                assert_eq!((offset, n), (written[1].0.end, zeros as u64));
            }
            other => panic!("{zeros} zeros: {:?}", other.err()),
        }
        let options = LogWriterOptions::new().torn_tail(TornTailPolicy::Truncate);
        let (mut writer, _) = LogWriter::append(&path, &options)?;
        writer.add_record(b"new")?;
        writer.close()?;
        let seen = read(&fs::read(&path)?, &skip_all());
        assert_eq!(records(&seen).len(), 3, "{zeros} zeros");
        assert_eq!(damages(&seen), []);
    }
    Ok(())
}

#[test]
fn a_zero_region_mid_log_is_damage_for_append() -> TestResult {
    // google/leveldb#203: zeros in the middle of a block hide the records after them.
    // Block 0 ends in a trailer; the last record starts block 1.
    let (mut log, written) = log_of(&[100, 200, 300, 32_137, 50]);
    assert_eq!(written[4].0.offset, BLOCK_SIZE as u64);
    let hidden = written[1].0;
    log[hidden.offset as usize..hidden.end as usize].fill(0);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("hole.log");
    fs::write(&path, &log)?;
    let seen = read(&log, &LogReaderOptions::new());
    // LevelDB: records 1 to 3 vanish without a report.
    assert_eq!(records(&seen).len(), 2);
    assert_eq!(damages(&seen), []);
    let result = LogWriter::append(&path, &LogWriterOptions::new());
    let Err(Error::Damaged { first, .. }) = result else {
        panic!("{:?}", result.err())
    };
    assert_eq!(first.kind, DamageKind::Skipped);
    assert_eq!(first.offset, hidden.offset);
    assert_eq!(first.bytes, BLOCK_SIZE as u64 - hidden.offset);
    Ok(())
}

#[test]
fn appending_to_a_missing_or_empty_log() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("new.log");
    let refused = LogWriter::append(&path, &LogWriterOptions::new().create_missing(false)).err();
    assert!(matches!(refused, Some(Error::Io { .. })), "{refused:?}");
    assert!(!path.exists());
    let (mut writer, report) = LogWriter::append(&path, &LogWriterOptions::new())?;
    assert_eq!((report.records, report.len, report.start), (0, 0, 0));
    writer.add_record(b"first")?;
    writer.close()?;
    let seen = read(&fs::read(&path)?, &LogReaderOptions::new());
    assert_eq!(seen, [Seen::Record(0, b"first".to_vec())]);
    Ok(())
}

#[test]
fn errors_read_well() -> TestResult {
    let (log, _) = log_of(&[10, 100]);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("torn.log");
    fs::write(&path, &log[..50])?;
    let error = LogWriter::append(&path, &LogWriterOptions::new()).err();
    let text = error.map(|e| e.to_string()).unwrap_or_default();
    assert_eq!(
        text,
        format!(
            "log ends in 33 torn bytes at offset 17 that hold no complete record: {}",
            path.display()
        )
    );
    Ok(())
}

#[test]
fn a_new_log_is_not_created_over_an_old_one() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("old.log");
    fs::write(&path, b"precious")?;
    let refused = LogWriter::create(&path, &LogWriterOptions::new()).err();
    assert!(matches!(refused, Some(Error::AlreadyExists { len: 8, .. })));
    assert_eq!(fs::read(&path)?, b"precious");
    let mut writer = LogWriter::overwrite(&path, &LogWriterOptions::new())?;
    writer.add_record(b"x")?;
    writer.close()?;
    assert_eq!(fs::read(&path)?.len(), 8);
    Ok(())
}
