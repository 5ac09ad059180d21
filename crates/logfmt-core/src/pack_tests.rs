//! Packs through the writers and readers: round trips with plain records around them, packs
//! across blocks, what an old reader (LevelDB's rules) makes of them, and every way a pack can
//! be wrong.

use std::vec::Vec;

use proptest::prelude::*;

use crate::pack::{self, PackBuffer, PackError};
use crate::{
    BLOCK_SIZE, CorruptionKind, Event, Format, FragmentReader, Item, ReadFormat, ReadOptions,
    Reader, SliceWriter, WriteError, WriteOptions,
};

/// What a reader returned: records (offset, index, bytes), reports (offset, bytes, kind) and
/// coded packs (offset).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    Record(u64, Option<u32>, Vec<u8>),
    Report(u64, u64, CorruptionKind),
    Oversized(u64, u64),
    Coded(u64),
}

fn read(log: &[u8], options: &ReadOptions, buffer: usize) -> Vec<Seen> {
    let mut scratch = std::vec![0u8; buffer];
    let mut reader = Reader::with_options(crate::SliceSource::new(log), &mut scratch, options);
    let mut seen = Vec::new();
    while let Some(item) = reader.next().unwrap_or_else(|e| match e {}) {
        seen.push(match item {
            Item::Record(r) => Seen::Record(r.offset, r.index, r.data.to_vec()),
            Item::Corruption(c) => Seen::Report(c.offset, c.bytes, c.kind),
            Item::Oversized(o) => Seen::Oversized(o.offset, o.len),
            Item::Coded(p) => Seen::Coded(p.offset),
        });
    }
    seen
}

/// What a log holds: plain records, or packs of records.
#[derive(Debug, Clone)]
enum Entry {
    Plain(Vec<u8>),
    Pack(Vec<Vec<u8>>),
}

fn pack_of(records: &[Vec<u8>]) -> PackBuffer<{ 3 * BLOCK_SIZE }> {
    let mut pack = PackBuffer::new();
    for record in records {
        pack.push(record).expect("the test's packs fit");
    }
    pack
}

/// Writes `entries`; returns the log and the records a reader must return.
fn write(entries: &[Entry]) -> (Vec<u8>, Vec<Seen>) {
    let mut buffer = std::vec![0u8; 64 * BLOCK_SIZE];
    let mut writer = SliceWriter::new(&mut buffer);
    let mut expected = Vec::new();
    for entry in entries {
        match entry {
            Entry::Plain(data) => {
                let at = writer.add_record(data).expect("room").offset;
                expected.push(Seen::Record(at, None, data.clone()));
            }
            Entry::Pack(records) => {
                let at = writer
                    .add_pack(pack_of(records).as_bytes())
                    .expect("room")
                    .offset;
                expected.extend(
                    records
                        .iter()
                        .enumerate()
                        .map(|(i, r)| Seen::Record(at, Some(i as u32), r.clone())),
                );
            }
        }
    }
    let len = writer.len();
    buffer.truncate(len);
    (buffer, expected)
}

fn record(len: usize, seed: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 + seed * 7) as u8).collect()
}

fn entry() -> BoxedStrategy<Entry> {
    if cfg!(miri) {
        // Miri is slow: small records only.
        let small = proptest::collection::vec(any::<u8>(), 0..40);
        return prop_oneof![
            small.clone().prop_map(Entry::Plain),
            proptest::collection::vec(small, 1..10).prop_map(Entry::Pack),
        ]
        .boxed();
    }
    let plain = prop_oneof![
        4 => proptest::collection::vec(any::<u8>(), 0..40),
        1 => proptest::collection::vec(any::<u8>(), 0..3_000),
        1 => (30_000usize..50_000).prop_map(|n| record(n, n)),
    ];
    let packed = prop_oneof![
        6 => proptest::collection::vec(any::<u8>(), 0..40),
        1 => proptest::collection::vec(any::<u8>(), 0..1_500),
    ];
    prop_oneof![
        3 => plain.prop_map(Entry::Plain),
        3 => proptest::collection::vec(packed, 1..40).prop_map(Entry::Pack),
        // A pack across blocks (up to 3 of them).
        1 => proptest::collection::vec((10_000usize..30_000).prop_map(|n| record(n, n)), 1..4)
            .prop_map(Entry::Pack),
    ]
    .boxed()
}

proptest! {
    // Under Miri (`cargo xtask miri`), as few cases as the environment asks for.
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { ProptestConfig::default().cases } else { 64 },
        ..ProptestConfig::default()
    })]

    /// Any mix of plain records and packs (packs across blocks included) reads back record by
    /// record, each with its pack's offset and its index; the fragment reader sees each pack
    /// as one record of pack fragments.
    #[test]
    fn packs_and_records_round_trip(entries in proptest::collection::vec(entry(), 1..12)) {
        let (log, expected) = write(&entries);
        prop_assert_eq!(read(&log, &ReadOptions::new(), 1 << 20), expected);
        let mut fragments = FragmentReader::from_slice(&log);
        let mut packs = 0;
        while let Some(event) = fragments.next().unwrap_or_else(|e| match e {}) {
            if let Event::Fragment(f) = event
                && f.pack
                && f.kind.ends_record()
            {
                packs += 1;
            }
        }
        let written = entries.iter().filter(|e| matches!(e, Entry::Pack(_))).count();
        prop_assert_eq!(packs, written);
    }

    /// A byte damaged in the payload of any chunk of any pack loses that pack and nothing
    /// else: every other record reads back, in order, and the pack is reported with the
    /// number of its records (where the pack's count was not itself the damaged byte).
    #[test]
    #[cfg_attr(miri, ignore = "blocks of data: slow under Miri")]
    fn damage_inside_a_pack_loses_that_pack_only(
        entries in proptest::collection::vec(entry(), 1..12),
        pick in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        flip in 1u8..,
    ) {
        let (mut log, expected) = write(&entries);
        // Every pack chunk with a payload: (its file offset, its payload's, its payload's
        // length, the offset of the pack it belongs to).
        let mut chunks = Vec::new();
        let mut pack_at = 0;
        for (b, block) in log.chunks(BLOCK_SIZE).enumerate() {
            for parsed in crate::block::BlockParser::new(block) {
                let crate::block::Parsed::Chunk(chunk) = parsed else { continue };
                let at = (b * BLOCK_SIZE + chunk.offset) as u64;
                if matches!(chunk.record_type, 0x51 | 0x52) {
                    pack_at = at;
                }
                if (0x51..=0x54).contains(&chunk.record_type) && !chunk.payload.is_empty() {
                    chunks.push((at, at + 7, chunk.payload.len(), pack_at, chunk.record_type));
                }
            }
        }
        prop_assume!(!chunks.is_empty());
        let (chunk_at, payload_at, len, pack_at, record_type) = *pick.get(&chunks);
        let byte = at.index(len);
        log[payload_at as usize + byte] ^= flip;

        let seen = read(&log, &ReadOptions::new(), 1 << 20);
        let records: Vec<_> = seen.iter().filter(|s| matches!(s, Seen::Record(..))).cloned().collect();
        let kept: Vec<_> = expected
            .iter()
            .filter(|s| !matches!(s, Seen::Record(offset, Some(_), _) if *offset == pack_at))
            .cloned()
            .collect();
        prop_assert_eq!(records, kept);
        // The damaged chunk is reported, alone.
        let chunk_len = 7 + len as u64;
        prop_assert!(seen.iter().any(|s| matches!(
            s,
            Seen::Report(offset, bytes, _) if *offset == chunk_at && *bytes == chunk_len
        )), "{:?}", seen);
        let count = expected
            .iter()
            .filter(|s| matches!(s, Seen::Record(offset, Some(_), _) if *offset == pack_at))
            .count() as u32;
        let count_damaged = matches!(record_type, 0x51 | 0x52) && (1..5).contains(&byte);
        let count_readable = chunk_at > pack_at || matches!(record_type, 0x51 | 0x52);
        if !count_damaged && count_readable {
            let reported = seen.iter().any(|s| matches!(
                s,
                Seen::Report(_, _, CorruptionKind::BadPack { lost, .. }) if *lost == count
            ));
            // A pack whose first chunk is too short to hold its count is reported without it.
            let first_short = chunk_at > pack_at
                && log.len() as u64 > pack_at + 6
                && u16::from_le_bytes([log[pack_at as usize + 4], log[pack_at as usize + 5]]) < 5;
            prop_assert!(reported || first_short, "{:?}", seen);
        }
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "blocks of data: slow under Miri, and the core has no unsafe code"
)]
fn a_pack_of_16_byte_records_costs_17_bytes_a_record() {
    let records: Vec<Vec<u8>> = (0..1_000).map(|i| record(16, i)).collect();
    let (log, _) = write(&[Entry::Pack(records)]);
    // One pack across blocks: 1000 × 17 bytes, 5 bytes of pack header, a chunk header a block.
    assert_eq!(log.len(), 1_000 * 17 + 5 + 7);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "blocks of data: slow under Miri, and the core has no unsafe code"
)]
fn old_readers_report_packs_as_unknown_types_and_keep_framing() {
    let (log, expected) = write(&[
        Entry::Plain(b"before".to_vec()),
        Entry::Pack(std::vec![b"a".to_vec(), b"b".to_vec()]),
        Entry::Plain(b"after".to_vec()),
    ]);
    let leveldb = read(&log, &ReadOptions::new().read_packs(false), 1 << 16);
    assert_eq!(
        leveldb,
        [
            expected[0].clone(),
            // LevelDB: "unknown record type", the chunk's payload bytes.
            Seen::Report(13, 9, CorruptionKind::UnknownRecordType(0x51)),
            expected[3].clone(),
        ]
    );
    // A pack across blocks: each of its chunks reported, the records around it intact.
    let big: Vec<Vec<u8>> = (0..3).map(|i| record(20_000, i)).collect();
    let (log, expected) = write(&[Entry::Pack(big), Entry::Plain(b"after".to_vec())]);
    let leveldb = read(&log, &ReadOptions::new().read_packs(false), 1 << 16);
    let kinds: Vec<_> = leveldb
        .iter()
        .map(|s| match s {
            Seen::Report(_, _, kind) => Some(*kind),
            _ => None,
        })
        .collect();
    assert_eq!(
        kinds,
        [
            Some(CorruptionKind::UnknownRecordType(0x52)),
            Some(CorruptionKind::UnknownRecordType(0x54)),
            None
        ]
    );
    assert_eq!(leveldb.last(), expected.last());
}

#[test]
fn a_malformed_pack_is_reported_with_the_records_it_loses() {
    let mut pack = PackBuffer::<64>::new();
    for r in [&b"one"[..], b"two", b"three"] {
        pack.push(r).unwrap();
    }
    let mut bytes = pack.as_bytes().to_vec();
    bytes[1] = 5; // five records claimed, three held
    let mut buffer = std::vec![0u8; 256];
    let mut writer = SliceWriter::new(&mut buffer);
    writer.add_pack(&bytes).unwrap();
    writer.add_record(b"next").unwrap();
    let len = writer.len();
    let seen = read(&buffer[..len], &ReadOptions::new(), 1024);
    assert_eq!(
        seen,
        [
            Seen::Record(0, Some(0), b"one".to_vec()),
            Seen::Record(0, Some(1), b"two".to_vec()),
            Seen::Record(0, Some(2), b"three".to_vec()),
            Seen::Report(
                0,
                0,
                CorruptionKind::BadPack {
                    error: PackError::Short { found: 3 },
                    lost: 2
                }
            ),
            Seen::Record(7 + bytes.len() as u64, None, b"next".to_vec()),
        ]
    );
    // A pack too short for its header, and one of 0 records.
    for payload in [&[0u8, 1][..], &[0, 0, 0, 0, 0]] {
        let mut buffer = std::vec![0u8; 64];
        let mut writer = SliceWriter::new(&mut buffer);
        writer.add_pack(payload).unwrap();
        let len = writer.len();
        let seen = read(&buffer[..len], &ReadOptions::new(), 1024);
        let error = if payload.len() < 5 {
            PackError::Truncated
        } else {
            PackError::Empty
        };
        assert_eq!(
            seen,
            [Seen::Report(
                0,
                payload.len() as u64,
                CorruptionKind::BadPack { error, lost: 0 }
            )]
        );
    }
}

#[test]
fn a_coded_pack_is_left_to_the_caller() {
    let mut coded = std::vec![pack::ZSTD, 2, 0, 0, 0, 9, 0, 0, 0];
    coded.extend_from_slice(b"opaque");
    let mut buffer = std::vec![0u8; 64];
    let mut writer = SliceWriter::new(&mut buffer);
    writer.add_pack(&coded).unwrap();
    let len = writer.len();
    let mut scratch = std::vec![0u8; 64];
    let mut reader = Reader::from_slice(&buffer[..len], &mut scratch);
    let Some(Item::Coded(found)) = reader.next().unwrap_or_else(|e| match e {}) else {
        panic!("a coded pack");
    };
    assert_eq!((found.offset, found.data), (0, &coded[..]));
    let parsed = pack::Pack::parse(found.data).unwrap();
    assert_eq!(
        (parsed.codec(), parsed.count(), parsed.decoded_len()),
        (pack::ZSTD, 2, Some(9))
    );
}

#[test]
#[cfg_attr(
    miri,
    ignore = "blocks of data: slow under Miri, and the core has no unsafe code"
)]
fn a_pack_larger_than_the_buffer_is_oversized() {
    let records: Vec<Vec<u8>> = (0..4).map(|i| record(20_000, i)).collect();
    let (log, _) = write(&[Entry::Pack(records), Entry::Plain(b"x".to_vec())]);
    let seen = read(&log, &ReadOptions::new(), 1 << 16);
    assert!(matches!(seen[0], Seen::Oversized(0, _)), "{:?}", &seen[..1]);
    assert_eq!(seen[1..].len(), 1);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "blocks of data: slow under Miri, and the core has no unsafe code"
)]
fn a_pack_fragment_in_a_plain_record_cuts_it() {
    // A plain FIRST, then a pack's LAST (as a writer bug or a splice would leave them).
    let mut buffer = std::vec![0u8; 4 * BLOCK_SIZE];
    let mut writer = SliceWriter::new(&mut buffer);
    writer.add_record(&record(BLOCK_SIZE, 1)).unwrap(); // FIRST + LAST
    writer
        .add_pack(pack_of(&[record(BLOCK_SIZE, 2)]).as_bytes())
        .unwrap(); // PACK_FIRST + PACK_LAST
    let len = writer.len();
    let mut log = buffer[..len].to_vec();
    // Swap the plain LAST chunk's type for PACK_LAST, checksum fixed.
    let last = BLOCK_SIZE;
    let payload_len = u16::from_le_bytes([log[last + 4], log[last + 5]]) as usize;
    log[last + 6] = 0x54;
    let crc = crate::checksum::mask(crate::checksum::crc32c(
        &log[last + 6..last + 7 + payload_len],
    ));
    log[last..last + 4].copy_from_slice(&crc.to_le_bytes());
    let seen = read(&log, &ReadOptions::new(), 1 << 18);
    let kinds: Vec<_> = seen
        .iter()
        .filter_map(|s| match s {
            Seen::Report(_, _, kind) => Some(*kind),
            _ => None,
        })
        .collect();
    assert_eq!(
        kinds[..2],
        [
            CorruptionKind::ErrorInMiddleOfRecord,
            CorruptionKind::LastWithoutStart
        ]
    );
    // The pack after it reads whole.
    assert!(
        seen.iter()
            .any(|s| matches!(s, Seen::Record(_, Some(0), d) if d.len() == BLOCK_SIZE))
    );
}

#[test]
fn packs_are_refused_in_recyclable_logs_and_reported_there() {
    let mut buffer = std::vec![0u8; 256];
    let options = WriteOptions::new().format(Format::Recyclable { log_number: 7 });
    let mut writer = SliceWriter::with_options(&mut buffer, &options);
    assert_eq!(
        writer.add_pack(pack_of(&[b"x".to_vec()]).as_bytes()),
        Err(WriteError::PackInRecyclableLog)
    );
    writer.add_record(b"plain").unwrap();
    let len = writer.len();
    // A pack chunk spliced after the recyclable record: a legacy type in a recyclable log.
    let mut log = buffer[..len].to_vec();
    let mut legacy = std::vec![0u8; 64];
    let mut legacy_writer = SliceWriter::new(&mut legacy);
    legacy_writer
        .add_pack(pack_of(&[b"x".to_vec()]).as_bytes())
        .unwrap();
    let pack_len = legacy_writer.len();
    log.extend_from_slice(&legacy[..pack_len]);
    let options = ReadOptions::new().format(ReadFormat::Recyclable { log_number: 7 });
    let seen = read(&log, &options, 1024);
    assert_eq!(seen.len(), 2);
    assert!(matches!(
        seen[1],
        Seen::Report(_, _, CorruptionKind::UnexpectedFormat(0x51))
    ));
}
