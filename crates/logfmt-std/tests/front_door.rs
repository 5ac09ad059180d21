//! The common case of each layer: `LogFile::records` (std) and `Reader::next_record` (core),
//! on a log with a damaged record in the middle.

use logfmt_core::Reader;
use logfmt_core::parts::{CodedKind, CorruptionKind, DropReason};
use logfmt_std::{
    DamageKind, Error, LogEntry, LogFile, LogReaderOptions, LogWriter, LogWriterOptions,
    RecoveryMode,
};

/// Three records: 100 bytes at 0, 32 654 at 107 (filling block 0 to its end), 100 at 32 768
/// (block 1); the second's payload damaged.
fn damaged_log(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("000001.log");
    let mut writer = LogWriter::create(&path, &LogWriterOptions::new()).unwrap();
    for (byte, len) in [(1u8, 100), (2, 32_654), (3, 100)] {
        writer.add_record(&vec![byte; len]).unwrap();
    }
    writer.close().unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[107 + 7 + 50] ^= 0xFF;
    std::fs::write(&path, &bytes).unwrap();
    path
}

#[test]
fn log_file_records_yields_owned_records_and_the_damage_between_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = damaged_log(dir.path());
    let log = LogFile::open(&path).unwrap();
    let entries: Vec<LogEntry<'static>> = log.records().collect::<Result<_, _>>().unwrap();
    let [
        LogEntry::Record(first),
        LogEntry::Damage(damage),
        LogEntry::Record(third),
    ] = &entries[..]
    else {
        panic!("{entries:?}");
    };
    assert_eq!((first.offset, &first.data[..]), (0, &[1u8; 100][..]));
    assert!(!first.is_borrowed());
    assert_eq!(
        (damage.offset, damage.bytes, damage.kind),
        (
            107,
            32_661,
            DamageKind::Corruption(CorruptionKind::ChecksumMismatch)
        )
    );
    assert_eq!((third.offset, &third.data[..]), (32_768, &[3u8; 100][..]));
    assert_eq!(
        entries[1].to_string(),
        "dropped 32661 bytes at offset 107: checksum mismatch"
    );
}

#[test]
fn log_file_records_ends_with_an_error_naming_the_file_in_absolute_consistency() {
    let dir = tempfile::tempdir().unwrap();
    let path = damaged_log(dir.path());
    let log = LogFile::open(&path).unwrap();
    let options = LogReaderOptions::new().recovery(RecoveryMode::AbsoluteConsistency);
    let results: Vec<_> = log.records_with(&options).collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(matches!(&results[0], Ok(LogEntry::Record(r)) if r.offset == 0));
    let Err(Error::Damaged {
        path: named, first, ..
    }) = &results[1]
    else {
        panic!("{results:?}");
    };
    assert_eq!((named, first.offset), (&path, 107));
}

#[test]
fn core_next_record_gives_records_and_what_was_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let log = std::fs::read(damaged_log(dir.path())).unwrap();
    let mut buffer = [0u8; 256];
    let mut reader = Reader::from_slice(&log, &mut buffer);
    let mut seen = Vec::new();
    while let Some(read) = reader.next_record().unwrap() {
        seen.push(match read {
            Ok(record) => format!("record at {}: {}", record.offset, record.data[0]),
            Err(dropped) => {
                assert_eq!(
                    dropped.reason,
                    DropReason::Corruption(CorruptionKind::ChecksumMismatch)
                );
                dropped.to_string()
            }
        });
    }
    assert_eq!(
        seen,
        [
            "record at 0: 1",
            "dropped 32661 bytes at offset 107: checksum mismatch",
            "record at 32768: 3",
        ]
    );
}

#[test]
fn core_next_record_reports_a_record_too_large_for_the_buffer() {
    let mut log = Vec::new();
    let mut writer = LogWriter::new(&mut log, &LogWriterOptions::new());
    writer.add_record(&[9u8; 40_000]).unwrap();
    writer.add_record(b"small").unwrap();
    writer.close().unwrap();
    let mut buffer = [0u8; 1024];
    let mut reader = Reader::from_slice(&log, &mut buffer);
    let Some(Err(dropped)) = reader.next_record().unwrap() else {
        panic!("the large record was returned");
    };
    assert_eq!(dropped.reason, DropReason::TooLarge { len: 40_000 });
    assert_eq!((dropped.offset, dropped.bytes), (0, 40_000 + 2 * 7));
    let Some(Ok(record)) = reader.next_record().unwrap() else {
        panic!("the small record was not returned");
    };
    assert_eq!(record.data, b"small");
    assert!(reader.next_record().unwrap().is_none());
    let _ = CodedKind::Pack; // nameable
}
