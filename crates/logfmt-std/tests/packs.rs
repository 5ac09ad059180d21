//! Packs through the std reader: the same records as the core reader, one by one with their
//! indices, and a pack that does not hold together is damage under the recovery mode.

use logfmt_core::pack::{PackBuffer, PackError};
use logfmt_core::{
    BLOCK_SIZE, Reader, SliceWriter,
    parts::{CorruptionKind, Item},
};
use logfmt_std::{
    DamageKind, LogReaderOptions, RecoveryMode,
    advanced::{Entry, LogReader},
};
use proptest::prelude::*;

/// A log of plain records and packs: `Ok` a plain record, `Err` a pack of records.
fn log_of(entries: &[Result<Vec<u8>, Vec<Vec<u8>>>]) -> Vec<u8> {
    let mut buffer = vec![0u8; 16 * BLOCK_SIZE];
    let mut writer = SliceWriter::new(&mut buffer);
    for entry in entries {
        match entry {
            Ok(record) => {
                writer.add_record(record).expect("room");
            }
            Err(records) => {
                let mut pack = Box::new(PackBuffer::<{ 2 * BLOCK_SIZE }>::new());
                for record in records {
                    pack.push(record).expect("fits");
                }
                writer.add_pack(pack.as_bytes()).expect("room");
            }
        }
    }
    let len = writer.len();
    buffer.truncate(len);
    buffer
}

type Seen = (u64, Option<u32>, Vec<u8>);

fn with_core(log: &[u8]) -> Vec<Seen> {
    let mut scratch = vec![0u8; 1 << 20];
    let mut reader = Reader::from_slice(log, &mut scratch);
    let mut seen = Vec::new();
    while let Some(item) = reader.next().expect("memory") {
        let Item::Record(r) = item else {
            panic!("{item:?}");
        };
        seen.push((r.offset, r.index, r.data.to_vec()));
    }
    seen
}

fn with_std(log: &[u8], options: &LogReaderOptions) -> (Vec<Seen>, u64) {
    let mut reader = LogReader::from_slice(log, options);
    let mut seen = Vec::new();
    while let Some(entry) = reader.next().expect("no damage") {
        let Entry::Record(r) = entry else {
            panic!("{entry:?}");
        };
        seen.push((r.offset, r.index, r.data.to_vec()));
    }
    (seen, reader.records())
}

fn entries() -> impl Strategy<Value = Vec<Result<Vec<u8>, Vec<Vec<u8>>>>> {
    let record = prop_oneof![
        6 => proptest::collection::vec(any::<u8>(), 0..50),
        1 => proptest::collection::vec(any::<u8>(), 0..5_000),
    ];
    let entry = prop_oneof![
        record.clone().prop_map(Ok),
        proptest::collection::vec(record, 1..30).prop_map(Err),
    ];
    proptest::collection::vec(entry, 1..20)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The std reader returns what the core reader returns, and counts every record.
    #[test]
    fn the_std_reader_reads_packs_as_the_core_reader_does(entries in entries()) {
        let log = log_of(&entries);
        let core = with_core(&log);
        let (std, counted) = with_std(&log, &LogReaderOptions::new());
        prop_assert_eq!(&std, &core);
        prop_assert_eq!(counted, core.len() as u64);
        let expected: usize = entries.iter().map(|e| e.as_ref().map_or_else(Vec::len, |_| 1)).sum();
        prop_assert_eq!(core.len(), expected);
    }
}

#[test]
fn a_pack_across_blocks_reads_from_the_buffer() {
    let big: Vec<Vec<u8>> = (0..3u8).map(|i| vec![i; 20_000]).collect();
    let log = log_of(&[Ok(b"a".to_vec()), Err(big.clone()), Ok(b"z".to_vec())]);
    let (seen, counted) = with_std(&log, &LogReaderOptions::new());
    assert_eq!(counted, 5);
    assert_eq!(seen[1], (8, Some(0), big[0].clone()));
    assert_eq!(seen[3], (8, Some(2), big[2].clone()));
    assert_eq!(seen[4].2, b"z");
}

#[test]
fn a_malformed_pack_is_damage_under_the_recovery_mode() {
    let mut pack = PackBuffer::<64>::new();
    pack.push(b"one").unwrap();
    pack.push(b"two").unwrap();
    let mut bytes = pack.as_bytes().to_vec();
    bytes[1] = 4; // four records claimed, two held
    let mut buffer = vec![0u8; 256];
    let mut writer = SliceWriter::new(&mut buffer);
    writer.add_pack(&bytes).unwrap();
    writer.add_record(b"after").unwrap();
    let len = writer.len();
    let log = &buffer[..len];

    // Reported (the default mode), reading goes on.
    let mut reader = LogReader::from_slice(log, &LogReaderOptions::new());
    let mut seen = Vec::new();
    while let Some(entry) = reader.next().unwrap() {
        seen.push(match entry {
            Entry::Record(r) => format!("{:?} {}", r.index, String::from_utf8_lossy(r.data)),
            Entry::Damage(d) => format!("{} {}", d.offset, d.kind),
            other => panic!("not expected here: {other:?}"),
        });
    }
    assert_eq!(
        seen,
        [
            "Some(0) one",
            "Some(1) two",
            "0 bad pack (pack body ends after 2 records): 2 records lost",
            "None after"
        ]
    );

    // Absolute consistency: an error.
    let options = LogReaderOptions::new().recovery(RecoveryMode::AbsoluteConsistency);
    let mut reader = LogReader::from_slice(log, &options);
    assert!(matches!(reader.next(), Ok(Some(Entry::Record(_)))));
    assert!(matches!(reader.next(), Ok(Some(Entry::Record(_)))));
    let Err(logfmt_std::advanced::ReadError::Damaged(damage)) = reader.next() else {
        panic!("an error");
    };
    assert_eq!(
        damage.kind,
        DamageKind::Corruption(CorruptionKind::BadPack {
            error: PackError::Short { found: 2 },
            lost: 2
        })
    );
}

#[test]
fn a_pack_with_a_codec_not_read_here_is_damage_with_its_count() {
    let coded = [9u8, 3, 0, 0, 0, 5, 0, 0, 0, 1, 2];
    let mut buffer = vec![0u8; 64];
    let mut writer = SliceWriter::new(&mut buffer);
    writer.add_pack(&coded).unwrap();
    let len = writer.len();
    let mut reader = LogReader::from_slice(&buffer[..len], &LogReaderOptions::new());
    let Some(Entry::Damage(damage)) = reader.next().unwrap() else {
        panic!("damage");
    };
    assert_eq!(
        damage.kind,
        DamageKind::Corruption(CorruptionKind::BadPack {
            error: PackError::UnknownCodec(9),
            lost: 3
        })
    );
    assert!(reader.next().unwrap().is_none());
}

mod writer {
    use logfmt_core::Format;
    use logfmt_std::{
        FlushPolicy, LogWriter, LogWriterError, LogWriterOptions, SyncPolicy,
        advanced::{PackLimit, WriteOptions},
    };

    use super::{with_core, with_std};

    fn packed(options: &LogWriterOptions, records: &[&[u8]]) -> Vec<u8> {
        let mut writer = LogWriter::new(Vec::new(), options);
        for record in records {
            writer.add_record(record).unwrap();
        }
        writer.close().unwrap()
    }

    #[test]
    fn the_writer_packs_within_its_limit_and_at_every_flush() {
        let options = LogWriterOptions::new().pack(Some(PackLimit::bytes(64)));
        let records: Vec<Vec<u8>> = (0..20u8).map(|i| vec![i; 16]).collect();
        let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
        let log = packed(&options, &refs);
        // Packs of 3 records (5 + 3 × 17 = 56 bytes; a fourth would make 73), the last of 2.
        assert_eq!(log.len(), 6 * (7 + 56) + (7 + 5 + 2 * 17));
        let seen = with_core(&log);
        assert_eq!(seen.len(), 20);
        assert_eq!(seen[4], (63, Some(1), vec![4; 16]));
        assert_eq!(with_std(&log, &logfmt_std::LogReaderOptions::new()).0, seen);

        // A flush ends the pack: with a flush after every record, every record is plain.
        let every = options.clone().flush(FlushPolicy::EveryRecord);
        let log = packed(&every, &refs);
        assert_eq!(log.len(), 20 * (7 + 16));
        assert!(with_core(&log).iter().all(|(_, index, _)| index.is_none()));
        let every = LogWriterOptions::new()
            .pack(Some(PackLimit::default()))
            .sync(SyncPolicy::EveryRecords(4));
        let log = packed(&every, &refs);
        // Packs of 4, each written by the sync after its fourth record.
        assert_eq!(log.len(), 5 * (7 + 5 + 4 * 17));
    }

    #[test]
    fn a_dropped_writer_writes_its_pack() {
        let mut log = Vec::new();
        {
            let options = LogWriterOptions::new().pack(Some(PackLimit::default()));
            let mut writer = LogWriter::new(&mut log, &options);
            writer.add_record(b"one").unwrap();
            let written = writer.add_record(b"two").unwrap();
            assert_eq!((written.offset, written.end), (0, 7 + 5 + 8));
        }
        assert_eq!(with_core(&log).len(), 2);
    }

    #[test]
    fn packing_is_refused_in_a_recyclable_log() {
        let options = LogWriterOptions::new()
            .write(WriteOptions::new().format(Format::Recyclable { log_number: 3 }))
            .pack(Some(PackLimit::default()));
        let mut writer = LogWriter::new(Vec::new(), &options);
        assert!(matches!(
            writer.add_record(b"x"),
            Err(LogWriterError::PackInRecyclableLog)
        ));
        // A record too large for a pack is written plain.
        assert!(writer.add_record(&[0u8; 5000]).is_ok());
    }
}

mod compressed {
    use logfmt_core::{Reader, parts::Item};
    use logfmt_std::{
        Compression, LogReaderOptions, LogWriter, LogWriterOptions, advanced::PackLimit,
    };

    use super::with_std;

    fn written(options: &LogWriterOptions, records: &[Vec<u8>]) -> Vec<u8> {
        let mut writer = LogWriter::new(Vec::new(), options);
        for record in records {
            writer.add_record(record).unwrap();
        }
        writer.close().unwrap()
    }

    #[test]
    fn compressed_packs_and_records_read_back_and_are_smaller() {
        let samples: Vec<Vec<u8>> = (0..5_000)
            .map(|i| {
                format!("{{\"sensor\":\"t{}\",\"value\":{}}}", i % 7, 20 + i % 13).into_bytes()
            })
            .collect();
        let plain = written(&LogWriterOptions::new(), &samples);
        let packed = written(
            &LogWriterOptions::new().pack(Some(PackLimit::default())),
            &samples,
        );
        let compressed = written(
            &LogWriterOptions::new()
                .pack(Some(PackLimit::default()))
                .compress(Compression::zstd()),
            &samples,
        );
        assert!(
            compressed.len() * 4 < packed.len(),
            "{} vs {}",
            compressed.len(),
            packed.len()
        );
        assert!(packed.len() < plain.len());
        let (seen, count) = with_std(&compressed, &LogReaderOptions::new());
        assert_eq!(count, 5_000);
        let data: Vec<Vec<u8>> = seen.into_iter().map(|(_, _, d)| d).collect();
        assert_eq!(data, samples);
        // The core reader leaves a compressed pack to the caller.
        let mut scratch = vec![0u8; 1 << 16];
        let mut reader = Reader::from_slice(&compressed, &mut scratch);
        assert!(matches!(reader.next(), Ok(Some(Item::Coded(_)))));

        // Large records on their own: compressed when that helps, plain when it does not.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let noise: Vec<u8> = (0..70_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let big: Vec<Vec<u8>> = vec![b"abcd".repeat(20_000), noise];
        let log = written(&LogWriterOptions::new().compress(Compression::zstd()), &big);
        assert!(log.len() < 80_000 + 70_000, "{}", log.len());
        let (seen, _) = with_std(&log, &LogReaderOptions::new());
        assert_eq!(seen[0], (0, Some(0), big[0].clone()));
        assert_eq!(seen[1].1, None, "noise is written plain");
        assert_eq!(seen[1].2, big[1]);
    }

    #[test]
    fn a_compressed_pack_larger_than_the_limit_is_not_decoded() {
        let samples: Vec<Vec<u8>> = (0..2_000).map(|_| b"same bytes again".to_vec()).collect();
        let log = written(
            &LogWriterOptions::new()
                .pack(Some(PackLimit::bytes(32 * 1024)))
                .compress(Compression::zstd()),
            &samples,
        );
        let mut reader =
            logfmt_std::advanced::LogReader::from_slice(&log, &LogReaderOptions::new());
        // A limit under the decoded size: the pack is not decoded, as a record longer than
        // the limit is not assembled.
        let item = reader.next_bounded(1_000).unwrap();
        assert!(
            matches!(item, Some(logfmt_std::advanced::Bounded::Oversized(o)) if o.coded && o.len > 30_000),
            "{item:?}"
        );
    }

    /// A RocksDB-compressed record that decodes to more than any reader holds
    /// ([`logfmt_std::advanced::MAX_DECODED`]), read with no limit of the caller's: skipped as too
    /// large, its length given as the most that was decoded and one byte more — never an
    /// overflow.
    #[test]
    fn a_compressed_record_larger_than_any_limit_is_oversized() {
        let huge = vec![0u8; logfmt_std::advanced::MAX_DECODED + 10];
        let log = written(
            &LogWriterOptions::new().compress(Compression::rocksdb()),
            &[huge, b"after".to_vec()],
        );
        assert!(log.len() < 100_000, "{}", log.len());
        let mut reader =
            logfmt_std::advanced::LogReader::from_slice(&log, &LogReaderOptions::new());
        let item = reader.next_bounded(usize::MAX).unwrap();
        assert!(
            matches!(
                item,
                Some(logfmt_std::advanced::Bounded::Oversized(o))
                    if o.coded && o.len == logfmt_std::advanced::MAX_DECODED as u64 + 1
            ),
            "{item:?}"
        );
        let item = reader.next_bounded(usize::MAX).unwrap();
        assert!(
            matches!(item, Some(logfmt_std::advanced::Bounded::Record(r)) if r.data == b"after"),
            "{item:?}"
        );
    }
}
