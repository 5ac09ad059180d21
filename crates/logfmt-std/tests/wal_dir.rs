//! The WAL directory on real files: logs named as RocksDB names them, recovered across files
//! in order with each recovery mode (a torn tail of a log followed by another is a gap), the
//! last log's torn tail cut before writing goes on, one writer at a time, releases removing
//! or keeping logs, reused logs whose stale bytes are never read.

use std::fs;
use std::io::Write;
use std::path::Path;

use logfmt_std::advanced::{ReadFormat, ReadOptions};
use logfmt_std::wal::{Wal, WalEntry, WalError, WalOptions, WalPosition};
use logfmt_std::{
    DamageKind, LogEntry, LogFile, LogReaderOptions, LogWriter, LogWriterOptions, RecoveryMode,
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// What a recovery read: records as (log, offset, data), and damage as (log, offset, kind).
#[derive(Debug, Default)]
struct Read {
    logs: Vec<u64>,
    records: Vec<(u64, u64, Vec<u8>)>,
    damage: Vec<(u64, u64, DamageKind)>,
}

fn recover(dir: &Path, mode: RecoveryMode) -> Result<(Read, Wal), WalError> {
    let mut wal = Wal::open(dir, &WalOptions::new().recovery(mode))?;
    let mut read = Read::default();
    for entry in wal.recover() {
        match entry? {
            WalEntry::Log { number, .. } => read.logs.push(number),
            WalEntry::Record(r) => read
                .records
                .push((r.position.log, r.position.offset, r.data)),
            WalEntry::Damage { log, damage } => read.damage.push((log, damage.offset, damage.kind)),
            other => panic!("unexpected {other:?}"),
        }
    }
    Ok((read, wal))
}

fn data(read: &Read) -> Vec<Vec<u8>> {
    read.records.iter().map(|r| r.2.clone()).collect()
}

/// A log file of `records`, then `torn` bytes of a record cut short.
fn put_log(path: &Path, records: &[&[u8]], torn: bool) -> TestResult {
    let mut writer = LogWriter::create(path, &LogWriterOptions::new())?;
    for record in records {
        writer.add_record(record)?;
    }
    drop(writer.close()?);
    if torn {
        let mut file = fs::OpenOptions::new().append(true).open(path)?;
        // A FULL chunk's header claiming 100 bytes, and 10 of them.
        file.write_all(&[0xAA, 0xBB, 0xCC, 0xDD, 100, 0, 1])?;
        file.write_all(&[7; 10])?;
    }
    Ok(())
}

#[test]
fn records_come_back_in_log_order_across_rotations() -> TestResult {
    let dir = tempfile::tempdir()?;
    let options = WalOptions::new().create(true).log_size(40_000);
    let writer = Wal::open(dir.path(), &options)?.start()?;
    let mut tickets = Vec::new();
    for i in 0..300u32 {
        let record = vec![i as u8; 50 + (i as usize * 37) % 900];
        tickets.push(writer.append_durable(&record)?);
    }
    let logs = writer.logs();
    assert!(logs.len() >= 4, "{logs:?}");
    writer.close()?;

    // Plain logs with RocksDB's names, each read on its own.
    let mut names: Vec<String> = fs::read_dir(dir.path())?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_, _>>()?;
    names.sort();
    let expected: Vec<String> = logs
        .iter()
        .map(|n| format!("{n:06}.log"))
        .chain(["LOCK".into()])
        .collect();
    assert_eq!(names, expected);
    let mut alone = 0;
    for n in &logs {
        for entry in LogFile::open(dir.path().join(format!("{n:06}.log")))?.records() {
            assert!(matches!(entry?, LogEntry::Record(_)));
            alone += 1;
        }
    }
    assert_eq!(alone, 300);

    for mode in RecoveryMode::ALL {
        let (read, _) = recover(dir.path(), mode)?;
        assert_eq!(read.logs, logs);
        assert!(read.damage.is_empty(), "{mode}: {:?}", read.damage);
        let positions: Vec<_> = read
            .records
            .iter()
            .map(|r| WalPosition::new(r.0, r.1))
            .collect();
        let appended: Vec<_> = tickets.iter().map(|t| t.position).collect();
        assert_eq!(positions, appended, "{mode}");
        for (i, record) in data(&read).iter().enumerate() {
            assert_eq!(record, &vec![i as u8; 50 + (i * 37) % 900]);
        }
    }
    Ok(())
}

#[test]
fn one_writer_per_directory() -> TestResult {
    let dir = tempfile::tempdir()?;
    let wal = Wal::open(dir.path(), &WalOptions::new().create(true))?;
    let refused = Wal::open(dir.path(), &WalOptions::new()).err();
    assert!(
        matches!(refused, Some(WalError::Locked { .. })),
        "{refused:?}"
    );
    let writer = wal.start()?;
    assert!(matches!(
        Wal::open(dir.path(), &WalOptions::new()),
        Err(WalError::Locked { .. })
    ));
    writer.close()?;
    assert!(Wal::open(dir.path(), &WalOptions::new()).is_ok());
    // A missing directory is created only when asked.
    let missing = dir.path().join("not/yet");
    let err = Wal::open(&missing, &WalOptions::new()).err();
    assert_eq!(
        err.and_then(|e| e.kind()),
        Some(std::io::ErrorKind::NotFound)
    );
    Ok(())
}

#[test]
fn a_torn_tail_before_another_log_is_a_gap_to_point_in_time_recovery() -> TestResult {
    let dir = tempfile::tempdir()?;
    put_log(&dir.path().join("000001.log"), &[b"a", b"b"], true)?;
    put_log(&dir.path().join("000002.log"), &[b"c"], false)?;

    // Point in time: the records before the gap, the gap reported, no later log read.
    let (read, wal) = recover(dir.path(), RecoveryMode::PointInTimeRecovery)?;
    assert_eq!(data(&read), [b"a".to_vec(), b"b".to_vec()]);
    assert_eq!(read.logs, [1]);
    assert_eq!(read.damage, [(1, 16, DamageKind::TornTail)]);
    // Writing after it would write records no recovery reads: refused, nothing changed.
    let before = fs::read(dir.path().join("000001.log"))?;
    let err = wal.start().err();
    assert!(
        matches!(err, Some(WalError::Stopped { log: 1, .. })),
        "{err:?}"
    );
    assert_eq!(fs::read(dir.path().join("000001.log"))?, before);

    // Tolerating (LevelDB's reading) reads on, silently; skip reports it.
    let (read, _) = recover(dir.path(), RecoveryMode::TolerateCorruptedTailRecords)?;
    assert_eq!(data(&read).len(), 3);
    assert!(read.damage.is_empty());
    let (read, _) = recover(dir.path(), RecoveryMode::SkipAnyCorruptedRecords)?;
    assert_eq!(data(&read).len(), 3);
    assert_eq!(read.damage, [(1, 16, DamageKind::TornTail)]);
    // Absolute consistency refuses it.
    let err = recover(dir.path(), RecoveryMode::AbsoluteConsistency).err();
    assert!(
        matches!(err, Some(WalError::Damaged { log: 1, .. })),
        "{err:?}"
    );
    Ok(())
}

#[test]
fn damage_in_the_middle_stops_point_in_time_recovery_and_is_skipped_by_tolerance() -> TestResult {
    let dir = tempfile::tempdir()?;
    put_log(&dir.path().join("000003.log"), &[b"a", b"b", b"c"], false)?;
    put_log(&dir.path().join("000004.log"), &[b"d"], false)?;
    // Flip a byte of the second record's data (offset 8 + 7).
    let path = dir.path().join("000003.log");
    let mut bytes = fs::read(&path)?;
    bytes[15] ^= 1;
    fs::write(&path, bytes)?;

    let (read, _) = recover(dir.path(), RecoveryMode::PointInTimeRecovery)?;
    assert_eq!(data(&read), [b"a".to_vec()]);
    assert_eq!(read.damage.len(), 1);
    assert_eq!(read.damage[0].0, 3);
    let (read, _) = recover(dir.path(), RecoveryMode::TolerateCorruptedTailRecords)?;
    // LevelDB drops the rest of the block with the bad checksum ("c" too), and reads on.
    assert_eq!(data(&read), [b"a".to_vec(), b"d".to_vec()]);
    assert_eq!(read.damage.len(), 1);
    Ok(())
}

#[test]
fn the_last_logs_torn_tail_is_cut_before_writing_goes_on() -> TestResult {
    let dir = tempfile::tempdir()?;
    put_log(&dir.path().join("000001.log"), &[b"a"], false)?;
    put_log(&dir.path().join("000002.log"), &[b"b"], true)?;
    let (read, wal) = recover(dir.path(), RecoveryMode::PointInTimeRecovery)?;
    assert_eq!(data(&read), [b"a".to_vec(), b"b".to_vec()]);
    let writer = wal.start()?;
    assert_eq!(fs::metadata(dir.path().join("000002.log"))?.len(), 8);
    assert_eq!(writer.position(), WalPosition::new(3, 0));
    writer.append_durable(b"c")?;
    writer.close()?;
    let (read, _) = recover(dir.path(), RecoveryMode::PointInTimeRecovery)?;
    assert_eq!(data(&read), [b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
    assert!(read.damage.is_empty());
    Ok(())
}

#[test]
fn released_logs_are_removed_and_stay_removed() -> TestResult {
    let dir = tempfile::tempdir()?;
    let options = WalOptions::new().create(true);
    let writer = Wal::open(dir.path(), &options)?.start()?;
    writer.append_durable(b"one")?;
    writer.rotate()?;
    let kept = writer.append_durable(b"two")?;
    writer.rotate()?;
    writer.append_durable(b"three")?;
    assert_eq!(writer.logs(), [1, 2, 3]);
    // Wholly before the record "two": log 1 only.
    assert_eq!(writer.release_before(kept.position)?, 1);
    assert_eq!(writer.logs(), [2, 3]);
    assert!(!dir.path().join("000001.log").exists());
    // Never the current log.
    assert_eq!(writer.release_before(WalPosition::new(99, 0))?, 1);
    assert_eq!(writer.logs(), [3]);
    writer.close()?;
    let (read, _) = recover(dir.path(), RecoveryMode::PointInTimeRecovery)?;
    assert_eq!(data(&read), [b"three".to_vec()]);
    Ok(())
}

#[test]
fn reused_logs_never_give_back_their_stale_records() -> TestResult {
    let dir = tempfile::tempdir()?;
    let options = WalOptions::new().create(true).recycle(2);
    let writer = Wal::open(dir.path(), &options)?.start()?;
    for i in 0..200u32 {
        writer.append(&[i as u8; 300])?;
    }
    writer.rotate()?; // log 2
    let size = fs::metadata(dir.path().join("000001.log"))?.len();
    writer.release_before(writer.position())?;
    assert_eq!(writer.kept_for_reuse(), [1]);
    assert!(dir.path().join("000001.recycle").exists());
    writer.rotate()?; // log 3: log 1's file again, its stale records after the new ones
    assert_eq!(writer.kept_for_reuse(), Vec::<u64>::new());
    assert!(!dir.path().join("000001.recycle").exists());
    assert_eq!(fs::metadata(dir.path().join("000003.log"))?.len(), size);
    writer.append_durable(b"new")?;
    writer.close()?;

    let (read, _) = recover(dir.path(), RecoveryMode::PointInTimeRecovery)?;
    assert_eq!(read.logs, [2, 3]);
    assert_eq!(data(&read), [b"new".to_vec()]);
    assert!(read.damage.is_empty(), "{:?}", read.damage);
    // The reused file is a recyclable log that RocksDB's reader stops reading at the stale
    // bytes: read on its own, it holds one record.
    let recyclable = LogReaderOptions::new()
        .read(ReadOptions::new().format(ReadFormat::Recyclable { log_number: 3 }));
    let alone: Vec<_> = LogFile::open(dir.path().join("000003.log"))?
        .records_with(&recyclable)
        .collect::<Result<_, _>>()?;
    assert_eq!(alone.len(), 1, "{alone:?}");
    Ok(())
}
