//! Unit tests of the options beyond LevelDB's behaviour: recyclable chunks, ignorable types,
//! erased flash, tailing, and how a log ends. (LevelDB conformance lives in the workspace's
//! `tests/` crate.)

use std::vec::Vec;

use crate::checksum;
use crate::error::{CorruptionKind, WriteError};
use crate::format::{BLOCK_SIZE, Format, RESUME_TYPE};
use crate::fragments::{Event, FragmentReader};
use crate::options::{LogEnd, ReadFormat, ReadOptions};
use crate::reader::{Item, Reader};
use crate::skip::SkipKind;
use crate::source::{BlockSource, SliceSource};
use crate::writer::{BufferFull, FnSink, SliceWriter, WriteOptions, Writer};

fn write(records: &[&[u8]], options: &WriteOptions) -> Vec<u8> {
    let mut log = Vec::new();
    let mut block = [0u8; BLOCK_SIZE];
    let sink = FnSink(|b: &[u8]| {
        log.extend_from_slice(b);
        Ok::<_, core::convert::Infallible>(())
    });
    let mut writer = Writer::with_options(sink, &mut block, options);
    for r in records {
        assert!(writer.add_record(r).is_ok());
    }
    assert!(writer.flush().is_ok());
    log
}

#[derive(Debug, PartialEq, Eq)]
enum Seen {
    Record(u64, Vec<u8>),
    Drop(u64, u64, CorruptionKind),
    Oversized(u64),
}

fn read(log: &[u8], options: &ReadOptions) -> (Vec<Seen>, Option<LogEnd>) {
    let mut scratch = std::vec![0u8; 1 << 18];
    let mut reader = Reader::with_options(SliceSource::new(log), &mut scratch, options);
    let mut seen = Vec::new();
    while let Ok(Some(item)) = reader.next() {
        seen.push(match item {
            Item::Record(r) => Seen::Record(r.offset, r.data.to_vec()),
            Item::Corruption(c) => Seen::Drop(c.offset, c.bytes, c.kind),
            Item::Oversized(o) => Seen::Oversized(o.offset),
            Item::Coded(pack) => Seen::Oversized(pack.offset),
        });
    }
    (seen, reader.end())
}

#[test]
fn recyclable_golden_bytes() {
    let log = write(
        &[b"foo"],
        &WriteOptions::new().format(Format::Recyclable { log_number: 123 }),
    );
    assert_eq!(
        log,
        [
            0x45, 0xb7, 0x1d, 0x10, 0x03, 0x00, 0x05, 0x7b, 0, 0, 0, b'f', b'o', b'o'
        ]
    );
    let empty = write(
        &[b""],
        &WriteOptions::new().format(Format::Recyclable { log_number: 1 }),
    );
    assert_eq!(empty, [0x9e, 0x6b, 0xa5, 0xbd, 0, 0, 0x05, 1, 0, 0, 0]);
}

#[test]
fn recyclable_round_trip_and_block_switch() {
    let format = Format::Recyclable { log_number: 42 };
    // 32757 fills block 0 exactly; 32746 leaves exactly 11 bytes (an empty FIRST follows);
    // 32747 leaves 10 bytes of trailer.
    let big = std::vec![7u8; 70_000];
    let records: [&[u8]; 6] = [&[1; 32757], b"a", &[2; 32746], b"bc", &big, b""];
    let log = write(&records, &WriteOptions::new().format(format));
    let (seen, end) = read(
        &log,
        &ReadOptions::new().format(ReadFormat::Recyclable { log_number: 42 }),
    );
    let data: Vec<_> = seen
        .iter()
        .map(|s| match s {
            Seen::Record(_, d) => d.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(data, records.map(<[u8]>::to_vec));
    assert_eq!(
        end,
        Some(LogEnd::Clean {
            offset: log.len() as u64
        })
    );
    // Record 1 starts at the second block; record 3 starts with an empty FIRST at 32768+12+32757.
    assert!(matches!(seen[1], Seen::Record(32768, _)));
    let auto = read(
        &log,
        &ReadOptions::new().format(ReadFormat::Auto { log_number: None }),
    );
    assert_eq!(auto.0, seen);
}

#[test]
fn stale_records_end_a_recycled_log() {
    // An earlier use of the file (log 7) wrote three records; the new use (log 8) overwrote
    // the start with one record of the same size.
    let old = write(
        &[b"old-1", b"old-2", b"old-3"],
        &WriteOptions::new().format(Format::Recyclable { log_number: 7 }),
    );
    let new = write(
        &[b"new-1"],
        &WriteOptions::new().format(Format::Recyclable { log_number: 8 }),
    );
    let mut file = old.clone();
    file[..new.len()].copy_from_slice(&new);
    let options = ReadOptions::new().format(ReadFormat::Recyclable { log_number: 8 });
    let (seen, end) = read(&file, &options);
    assert_eq!(seen, [Seen::Record(0, b"new-1".to_vec())]);
    assert_eq!(
        end,
        Some(LogEnd::OldRecord {
            offset: new.len() as u64,
            log_number: 7
        })
    );
    // Read as log 7, the first chunk is stale: nothing belongs to it.
    let (seen, end) = read(
        &file,
        &ReadOptions::new().format(ReadFormat::Recyclable { log_number: 7 }),
    );
    assert_eq!(seen, []);
    assert_eq!(
        end,
        Some(LogEnd::OldRecord {
            offset: 0,
            log_number: 8
        })
    );
}

#[test]
fn legacy_chunk_in_recyclable_log_is_reported() {
    let mut log = write(
        &[b"r1"],
        &WriteOptions::new().format(Format::Recyclable { log_number: 3 }),
    );
    log.extend_from_slice(&write(&[b"legacy"], &WriteOptions::new()));
    log.extend_from_slice(&write(
        &[b"r2"],
        &WriteOptions::new().format(Format::Recyclable { log_number: 3 }),
    ));
    let (seen, _) = read(
        &log,
        &ReadOptions::new().format(ReadFormat::Recyclable { log_number: 3 }),
    );
    assert_eq!(
        seen,
        [
            Seen::Record(0, b"r1".to_vec()),
            Seen::Drop(13, 6, CorruptionKind::UnexpectedFormat(1)),
            Seen::Record(26, b"r2".to_vec()),
        ]
    );
}

/// A legacy chunk of any type with a valid checksum.
fn chunk(record_type: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = std::vec![0u8; 7];
    out[4..6].copy_from_slice(&(payload.len() as u16).to_le_bytes());
    out[6] = record_type;
    out.extend_from_slice(payload);
    let crc = checksum::mask(checksum::crc32c(&out[6..]));
    out[..4].copy_from_slice(&crc.to_le_bytes());
    out
}

#[test]
fn ignorable_types_are_skipped_only_when_asked() {
    let mut log = write(&[b"a"], &WriteOptions::new());
    log.extend_from_slice(&chunk(0x80 + 100, b"ext"));
    log.extend_from_slice(&write(
        &[b"b"],
        &WriteOptions::new().start(log.len() as u64),
    ));
    let (seen, _) = read(&log, &ReadOptions::new());
    assert_eq!(
        seen[1],
        Seen::Drop(8, 3, CorruptionKind::UnknownRecordType(0xe4))
    );
    assert_eq!(seen.len(), 3);
    let (seen, _) = read(&log, &ReadOptions::new().skip_ignorable_types(true));
    assert_eq!(
        seen,
        [
            Seen::Record(0, b"a".to_vec()),
            Seen::Record(18, b"b".to_vec())
        ]
    );
    // Types without bit 7 are still reported.
    let mut log = chunk(0x7f, b"x");
    log.extend_from_slice(&chunk(1, b"y"));
    let (seen, _) = read(&log, &ReadOptions::new().skip_ignorable_types(true));
    assert_eq!(
        seen,
        [
            Seen::Drop(0, 1, CorruptionKind::UnknownRecordType(0x7f)),
            Seen::Record(8, b"y".to_vec())
        ]
    );
}

#[test]
fn erased_flash_is_not_corruption() {
    // A flash region: two blocks, the first with two records then erased bytes, the second with
    // one record then erased bytes.
    let mut image = std::vec![0xffu8; 2 * BLOCK_SIZE];
    let first = write(&[b"one", b"two"], &WriteOptions::new());
    image[..first.len()].copy_from_slice(&first);
    let second = write(&[b"three"], &WriteOptions::new().start(BLOCK_SIZE as u64));
    image[BLOCK_SIZE..BLOCK_SIZE + second.len()].copy_from_slice(&second);
    let (seen, _) = read(&image, &ReadOptions::new());
    assert!(
        seen.iter()
            .any(|s| matches!(s, Seen::Drop(_, _, CorruptionKind::BadRecordLength)))
    );
    let (seen, end) = read(&image, &ReadOptions::new().erased(Some(0xff)));
    assert_eq!(
        seen,
        [
            Seen::Record(0, b"one".to_vec()),
            Seen::Record(10, b"two".to_vec()),
            Seen::Record(BLOCK_SIZE as u64, b"three".to_vec()),
        ]
    );
    assert_eq!(
        end,
        Some(LogEnd::Clean {
            offset: image.len() as u64
        })
    );
    // A record torn by a power cut (FIRST written, rest erased) is dropped silently.
    let mut image = std::vec![0xffu8; 3 * BLOCK_SIZE];
    let torn = write(&[b"ok", &[9u8; 40_000]], &WriteOptions::new());
    image[..BLOCK_SIZE].copy_from_slice(&torn[..BLOCK_SIZE]);
    let after = write(
        &[b"after"],
        &WriteOptions::new().start(2 * BLOCK_SIZE as u64),
    );
    image[2 * BLOCK_SIZE..2 * BLOCK_SIZE + after.len()].copy_from_slice(&after);
    let (seen, _) = read(&image, &ReadOptions::new().erased(Some(0xff)));
    assert_eq!(
        seen,
        [
            Seen::Record(0, b"ok".to_vec()),
            Seen::Record(2 * BLOCK_SIZE as u64, b"after".to_vec())
        ]
    );
}

#[test]
fn how_logs_end() {
    let log = write(&[b"hello", &[5u8; 40_000], b"bye"], &WriteOptions::new());
    let (_, end) = read(&log, &ReadOptions::new());
    assert_eq!(
        end,
        Some(LogEnd::Clean {
            offset: log.len() as u64
        })
    );
    // Cut inside the last chunk's payload, inside its header, and inside the fragmented record.
    let bye = log.len() as u64 - 10;
    for cut in [log.len() - 1, log.len() - 5, log.len() - 9] {
        let (seen, end) = read(&log[..cut], &ReadOptions::new());
        assert_eq!(seen.len(), 2);
        assert_eq!(
            end,
            Some(LogEnd::Torn {
                offset: bye,
                len: cut as u64 - bye
            })
        );
    }
    let cut = BLOCK_SIZE + 100;
    let (seen, end) = read(&log[..cut], &ReadOptions::new());
    assert_eq!(seen, [Seen::Record(0, b"hello".to_vec())]);
    assert_eq!(
        end,
        Some(LogEnd::Torn {
            offset: 12,
            len: cut as u64 - 12
        })
    );
}

#[test]
fn tailing_a_growing_log() {
    let log = write(
        &[b"alpha", &[3u8; 50_000], b"omega", &[4u8; 70_000]],
        &WriteOptions::new(),
    );
    // Feed the log in uneven steps through a source that only sees a growing prefix.
    struct Growing<'a> {
        log: &'a [u8],
        visible: usize,
        block_start: usize,
        next: usize,
        len: usize,
    }
    impl BlockSource for Growing<'_> {
        type Error = core::convert::Infallible;
        fn load_next(&mut self) -> Result<(), Self::Error> {
            self.block_start = self.next;
            self.len = self
                .visible
                .saturating_sub(self.block_start)
                .min(BLOCK_SIZE);
            self.next = self.block_start + BLOCK_SIZE;
            Ok(())
        }
        fn block(&self) -> &[u8] {
            &self.log[self.block_start..self.block_start + self.len]
        }
        fn skip(&mut self, bytes: u64) -> Result<(), Self::Error> {
            self.next += bytes as usize;
            Ok(())
        }
        fn refill(&mut self) -> Result<bool, Self::Error> {
            let len = self
                .visible
                .saturating_sub(self.block_start)
                .min(BLOCK_SIZE);
            let grew = len > self.len;
            self.len = len;
            Ok(grew)
        }
    }
    let source = Growing {
        log: &log,
        visible: 0,
        block_start: 0,
        next: 0,
        len: 0,
    };
    let mut scratch = std::vec![0u8; 1 << 17];
    let mut reader = Reader::with_options(source, &mut scratch, &ReadOptions::new().tailing(true));
    let mut got = Vec::new();
    let mut visible = 0;
    loop {
        while let Ok(Some(item)) = reader.next() {
            match item {
                Item::Record(r) => got.push((r.offset, r.data.len())),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(reader.end(), None, "a tailing reader never ends by itself");
        if visible == log.len() {
            break;
        }
        visible = (visible + 4099).min(log.len());
        reader.get_mut().visible = visible;
    }
    assert_eq!(got, [(0, 5), (12, 50_000), (50_026, 5), (50_038, 70_000)]);
}

#[test]
fn padding_keeps_every_record_visible() {
    // Under Miri (7 minutes for every case), the alignments and lengths at the edges.
    let (aligns, lens): (&[usize], &[usize]) = if cfg!(miri) {
        (&[1, 8, 256], &[0, 32_748, 32_755, 40_000])
    } else {
        (
            &[1, 2, 4, 8, 16, 32, 256],
            &[
                0, 1, 5, 100, 32_700, 32_740, 32_748, 32_754, 32_755, 32_761, 40_000,
            ],
        )
    };
    for &align in aligns {
        for &first_len in lens {
            let mut log = Vec::new();
            let mut block = [0u8; BLOCK_SIZE];
            let sink = FnSink(|b: &[u8]| {
                log.extend_from_slice(b);
                Ok::<_, core::convert::Infallible>(())
            });
            let mut writer = Writer::new(sink, &mut block);
            let first = std::vec![1u8; first_len];
            assert!(writer.add_record(&first).is_ok());
            let padding = writer.pad_to(align).unwrap_or(usize::MAX);
            assert!(padding < BLOCK_SIZE, "align {align}, first {first_len}");
            assert_eq!(writer.position() % align as u64, 0);
            assert!(writer.add_record(b"after").is_ok());
            assert!(writer.pad_to(align).is_ok());
            assert!(writer.flush().is_ok());
            let (seen, _) = read(&log, &ReadOptions::new());
            let data: Vec<_> = seen
                .iter()
                .map(|s| match s {
                    Seen::Record(_, d) => d.clone(),
                    other => panic!("align {align}, first {first_len}: {other:?}"),
                })
                .collect();
            assert_eq!(
                data,
                [first, b"after".to_vec()],
                "align {align}, first {first_len}"
            );
        }
    }
    let mut block = [0u8; BLOCK_SIZE];
    let mut writer = Writer::new(FnSink(|_: &[u8]| Ok::<_, ()>(())), &mut block);
    assert_eq!(writer.pad_to(3), Err(WriteError::BadAlignment));
    assert_eq!(writer.pad_to(2 * BLOCK_SIZE), Err(WriteError::BadAlignment));
}

#[test]
fn records_after_zeros_can_be_recovered() {
    // "a" at 0, then 20 zero bytes (a hole), then "b" and "c" in the same block; then "d" in
    // the next block.
    let a = write(&[b"a"], &WriteOptions::new());
    let mut log = a.clone();
    log.extend_from_slice(&[0u8; 20]);
    let bc = write(&[b"b", b"c"], &WriteOptions::new().start(log.len() as u64));
    log.extend_from_slice(&bc);
    log.resize(BLOCK_SIZE, 0);
    log.extend_from_slice(&write(
        &[b"d"],
        &WriteOptions::new().start(BLOCK_SIZE as u64),
    ));
    let (seen, _) = read(&log, &ReadOptions::new());
    assert_eq!(
        seen,
        [
            Seen::Record(0, b"a".to_vec()),
            Seen::Record(BLOCK_SIZE as u64, b"d".to_vec())
        ]
    );
    let (seen, _) = read(&log, &ReadOptions::new().resync_after_zeros(true));
    assert_eq!(
        seen,
        [
            Seen::Record(0, b"a".to_vec()),
            Seen::Record(28, b"b".to_vec()),
            Seen::Record(36, b"c".to_vec()),
            Seen::Record(BLOCK_SIZE as u64, b"d".to_vec()),
        ]
    );
    // Zeros followed by garbage: the rest of the block is skipped, as LevelDB does.
    let mut garbage = log.clone();
    garbage[28] ^= 0x40;
    let (seen, _) = read(&garbage, &ReadOptions::new().resync_after_zeros(true));
    assert_eq!(
        seen,
        [
            Seen::Record(0, b"a".to_vec()),
            Seen::Record(BLOCK_SIZE as u64, b"d".to_vec())
        ]
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

    /// `SliceWriter` lays out exactly what `Writer` sends to its sink, padding included.
    #[test]
    fn slice_writer_matches_writer(
        lengths in proptest::collection::vec(
            proptest::prop_oneof![0usize..100, 32_740usize..32_770, 0usize..70_000], 1..6),
        start in proptest::prop_oneof![proptest::strategy::Just(0u64), 0u64..70_000],
        recyclable in proptest::bool::ANY,
        pad in proptest::option::of(0u32..6),
    ) {
        let format = if recyclable { Format::Recyclable { log_number: 9 } } else { Format::Legacy };
        let options = WriteOptions::new().format(format).start(start);
        let records: Vec<Vec<u8>> =
            lengths.iter().enumerate().map(|(i, &n)| std::vec![i as u8 + 1; n]).collect();
        let mut expected = std::vec![0xeeu8; start as usize];
        let mut block = [0u8; BLOCK_SIZE];
        let sink = FnSink(|b: &[u8]| {
            expected.extend_from_slice(b);
            Ok::<_, core::convert::Infallible>(())
        });
        let mut writer = Writer::with_options(sink, &mut block, &options);
        let mut buffer = std::vec![0xeeu8; start as usize + 400_000];
        let mut slice = SliceWriter::with_options(&mut buffer, &options);
        for r in &records {
            proptest::prop_assert_eq!(writer.add_record(r).ok(), slice.add_record(r).ok());
            if let Some(p) = pad {
                let align = 1usize << p;
                proptest::prop_assert_eq!(writer.pad_to(align).ok(), slice.pad_to(align).ok());
            }
        }
        proptest::prop_assert!(writer.flush().is_ok());
        proptest::prop_assert_eq!(slice.as_bytes(), &expected[..]);
    }
}

#[test]
fn slice_writer_refuses_what_does_not_fit() {
    let mut buffer = [0u8; BLOCK_SIZE + 100];
    let mut writer = SliceWriter::new(&mut buffer);
    assert!(writer.add_record(&[1; BLOCK_SIZE]).is_ok()); // FIRST + LAST(7) = 32782 bytes
    let before = writer.len();
    assert_eq!(
        writer.add_record(&[2; 100]),
        Err(BufferFull {
            needed: before as u64 + 107,
            capacity: BLOCK_SIZE as u64 + 100
        })
    );
    assert_eq!(writer.len(), before);
    assert!(writer.add_record(&[3; 50]).is_ok());
}

#[test]
fn rocksdb_recyclable_metadata_types_use_the_long_header() {
    // A type-131 chunk (predecessor WAL info) with the 11-byte header, then a record.
    let log_number = 7u32;
    let mut chunk = std::vec![0u8; 11];
    chunk[4..6].copy_from_slice(&24u16.to_le_bytes());
    chunk[6] = 131;
    chunk[7..11].copy_from_slice(&log_number.to_le_bytes());
    chunk.extend_from_slice(&[0x11; 24]);
    let crc = checksum::mask(checksum::crc32c(&chunk[6..]));
    chunk[..4].copy_from_slice(&crc.to_le_bytes());
    let format = Format::Recyclable { log_number };
    let rest = write(
        &[b"after"],
        &WriteOptions::new().format(format).start(chunk.len() as u64),
    );
    let mut log = chunk;
    log.extend_from_slice(&rest);
    let options = ReadOptions::new().format(ReadFormat::Recyclable { log_number });
    let (seen, _) = read(&log, &options.clone().skip_ignorable_types(true));
    assert_eq!(seen, [Seen::Record(35, b"after".to_vec())]);
    let (seen, _) = read(&log, &options);
    assert_eq!(
        seen,
        [
            Seen::Drop(0, 24, CorruptionKind::UnknownRecordType(131)),
            Seen::Record(35, b"after".to_vec())
        ]
    );
}

/// A flash image of one block, erased (0xFF), with `parts` programmed at their offsets.
fn flash_image(parts: &[(usize, &[u8])]) -> Vec<u8> {
    let mut image = std::vec![0xFFu8; BLOCK_SIZE];
    for (at, bytes) in parts {
        image[*at..*at + bytes.len()].copy_from_slice(bytes);
    }
    image
}

fn flash_read(image: &[u8]) -> Vec<Seen> {
    read(image, &ReadOptions::new().erased(Some(0xFF))).0
}

#[test]
fn flash_padding_to_a_word_is_skipped() {
    // "abc" (10 bytes), flushed: the rest of its 8-byte word left erased; "defg" at 16.
    let image = flash_image(&[(0, &chunk(1, b"abc")), (16, &chunk(1, b"defg"))]);
    assert_eq!(
        flash_read(&image),
        [
            Seen::Record(0, b"abc".to_vec()),
            Seen::Record(16, b"defg".to_vec())
        ]
    );
    // A chunk starting with erased bytes is a chunk, not padding.
    let mut payload = std::vec![0xFFu8; 3];
    payload.push(1);
    let image = flash_image(&[(0, &chunk(1, &payload))]);
    assert_eq!(flash_read(&image), [Seen::Record(0, payload.clone())]);
}

#[test]
fn flash_torn_write_then_resume_marker_is_not_damage() {
    // "abc" at 0; a chunk torn by a power cut at 10 (its header and 6 payload bytes
    // programmed, claiming 50); after the reboot, the marker at the second word boundary after
    // the torn bytes (roundup(23, 8) + 8 = 32), then "xyz".
    let torn = chunk(1, &[7u8; 50]);
    let marker = chunk(RESUME_TYPE, b"");
    let image = flash_image(&[
        (0, &chunk(1, b"abc")),
        (10, &torn[..13]),
        (32, &marker),
        (39, &chunk(1, b"xyz")),
    ]);
    assert_eq!(
        flash_read(&image),
        [
            Seen::Record(0, b"abc".to_vec()),
            Seen::Record(39, b"xyz".to_vec())
        ]
    );
    // A record whose FIRST chunk was whole but whose next chunk was torn: dropped silently.
    let first = chunk(2, &[5u8; 20]);
    let image = flash_image(&[
        (0, &first),
        (27, &chunk(3, &[6u8; 40])[..9]),
        (48, &marker),
        (55, &chunk(1, b"xyz")),
    ]);
    assert_eq!(flash_read(&image), [Seen::Record(55, b"xyz".to_vec())]);
    // The skips say what was passed over.
    let mut reader = FragmentReader::with_options(
        SliceSource::new(&image),
        &ReadOptions::new().erased(Some(0xFF)),
    );
    let mut kinds = Vec::new();
    while let Ok(Some(event)) = reader.next() {
        if let Event::Skipped(skip) = event {
            kinds.push((skip.offset, skip.kind));
        }
    }
    assert_eq!(
        kinds[..2],
        [(27, SkipKind::Torn), (48, SkipKind::Ignorable(RESUME_TYPE))]
    );
}

#[test]
#[cfg_attr(
    miri,
    ignore = "scans a 32 KiB erased block for the next chunk at every offset (13 M instructions \
              natively): 8 minutes under Miri, and the code it runs has no unsafe"
)]
fn flash_damage_without_a_marker_is_reported_and_reading_goes_on() {
    let torn = chunk(1, &[7u8; 50]);
    let image = flash_image(&[
        (0, &chunk(1, b"abc")),
        (10, &torn[..13]),
        (32, &chunk(1, b"xyz")),
    ]);
    assert_eq!(
        flash_read(&image),
        [
            Seen::Record(0, b"abc".to_vec()),
            Seen::Drop(10, 22, CorruptionKind::ChecksumMismatch),
            Seen::Record(32, b"xyz".to_vec())
        ]
    );
    // LevelDB's rules (no flash image): the rest of the block is dropped.
    let (seen, _) = read(&image, &ReadOptions::new());
    assert_eq!(seen.len(), 2);
}

/// What a reader over `log` (with a `scratch`-byte buffer) reports, with the fused path of
/// records that span blocks on or off.
fn read_fused(log: &[u8], scratch: usize, fused: bool) -> (Vec<Seen>, Option<LogEnd>, u64) {
    let mut scratch = std::vec![0u8; scratch];
    let mut reader = Reader::from_slice(log, &mut scratch);
    reader.fused = fused;
    let mut seen = Vec::new();
    while let Ok(Some(item)) = reader.next() {
        seen.push(match item {
            Item::Record(r) => Seen::Record(r.offset, r.data.to_vec()),
            Item::Corruption(c) => Seen::Drop(c.offset, c.bytes, c.kind),
            Item::Oversized(o) => Seen::Oversized(o.offset),
            Item::Coded(pack) => Seen::Oversized(pack.offset),
        });
    }
    (seen, reader.end(), reader.position())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 96,
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Records that span blocks, damaged anywhere (a byte flipped, a range zeroed or copied
    /// from elsewhere, the log cut), read with the fused copy-and-checksum path and without:
    /// the same records, reports and end, to the byte.
    #[test]
    #[cfg_attr(miri, ignore = "megabytes of records: too slow under Miri")]
    fn fused_reading_reports_as_the_general_path(
        lengths in proptest::collection::vec(
            proptest::prop_oneof![0usize..100, 32_700usize..32_800, 0usize..100_000], 1..8),
        damage in proptest::collection::vec((0u8..4, proptest::num::usize::ANY, 1usize..40_000, proptest::num::u8::ANY), 0..4),
        cut in proptest::option::of(proptest::num::usize::ANY),
        scratch in proptest::prop_oneof![proptest::strategy::Just(1usize << 18), 0usize..120_000],
    ) {
        let records: Vec<Vec<u8>> = lengths
            .iter()
            .enumerate()
            .map(|(i, &n)| (0..n).map(|j| (i * 131 + j * 7) as u8).collect())
            .collect();
        let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
        let mut log = write(&refs, &WriteOptions::new());
        for &(op, at, len, byte) in &damage {
            let n = log.len();
            if n == 0 {
                break;
            }
            let at = at % n;
            let end = (at + len).min(n);
            match op {
                0 => log[at] ^= byte | 1,
                1 => log[at..end].fill(0),
                2 => {
                    let from = (at + n / 2) % n;
                    let k = (end - at).min(n - from);
                    log.copy_within(from..from + k, at);
                }
                _ => log[at] = byte,
            }
        }
        if let Some(cut) = cut {
            let n = log.len();
            log.truncate(cut % (n + 1));
        }
        proptest::prop_assert_eq!(read_fused(&log, scratch, true), read_fused(&log, scratch, false));
    }
}

/// The hot path of whole `FULL` records returns none that begins before the initial offset
/// (small records in one block, read from their middle: the records before it are passed over
/// by the general path, and the hot path takes over after them), and none once the log has
/// ended; through [`Reader`], and through [`FragmentReader`], whose caller sees each record
/// passed over as a skip and may try the hot path right after it.
#[test]
fn the_hot_path_starts_at_the_initial_offset_and_stops_at_the_end() {
    let records: Vec<Vec<u8>> = (0u8..8).map(|i| std::vec![i; 10]).collect();
    let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    let log = write(&refs, &WriteOptions::new());
    // Each record is a 7-byte header and 10 bytes: record `k` begins at `17 k`.
    for k in 1..8u64 {
        for initial in [17 * k - 16, 17 * k] {
            let options = ReadOptions::new().initial_offset(initial);
            let expected: Vec<(u64, Vec<u8>)> =
                (k..8).map(|i| (17 * i, std::vec![i as u8; 10])).collect();

            let mut scratch = std::vec![0u8; 64];
            let mut reader = Reader::with_options(SliceSource::new(&log), &mut scratch, &options);
            let mut seen = Vec::new();
            while let Ok(Some(item)) = reader.next() {
                match item {
                    Item::Record(r) => seen.push((r.offset, r.data.to_vec())),
                    other => panic!("initial offset {initial}: unexpected {other:?}"),
                }
            }
            assert_eq!(seen, expected, "Reader, initial offset {initial}");
            assert_eq!(reader.end(), Some(LogEnd::Clean { offset: 8 * 17 }));
            assert_eq!(reader.next(), Ok(None));

            let mut reader = FragmentReader::with_options(SliceSource::new(&log), &options);
            let mut seen = Vec::new();
            loop {
                if let Some((range, offset, end)) = reader.next_full() {
                    assert_eq!(end, offset + 17);
                    seen.push((offset, reader.get_ref().block()[range].to_vec()));
                    continue;
                }
                match reader.next() {
                    Ok(Some(Event::Fragment(f))) => seen.push((f.record_offset, f.data.to_vec())),
                    Ok(Some(Event::Skipped(skip))) => {
                        assert_eq!(skip.kind, SkipKind::BeforeInitialOffset);
                    }
                    Ok(None) => break,
                    other => panic!("initial offset {initial}: unexpected {other:?}"),
                }
            }
            assert_eq!(seen, expected, "FragmentReader, initial offset {initial}");
            assert_eq!(reader.next_full(), None, "after the end");
        }
    }
}
