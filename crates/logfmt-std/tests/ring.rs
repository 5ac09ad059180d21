//! Ring images made by the real flash writer (wrapping several times, with power cuts) read
//! through [`RingImage`] and [`RingSource`] by the std [`LogReader`]: exactly the records the
//! core's reference way of reading a ring returns, offsets mapped to the image, damage
//! reported where it is.

#[path = "common/ring_image.rs"]
mod ring_image;

use std::io::Cursor;

use logfmt_core::parts::ring::RingHeader;
use logfmt_std::{
    Damage, DamageKind, LogFile, LogReaderOptions, RecoveryMode,
    advanced::{
        BLOCK_SIZE, BlockRole, CorruptionKind, Entry, LogReader, ReadOptions, RingDisagreement,
        RingImage,
    },
};
use ring_image::{Run, Spec, check, run, sample};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// What the std reader returns from a ring image: records (image offset, data), damage at
/// image offsets, and the tail.
#[derive(Debug, Default)]
struct Read {
    records: Vec<(u64, Vec<u8>)>,
    damage: Vec<Damage>,
    tail: Option<Damage>,
    /// The error reading ended with.
    failed: Option<String>,
}

fn read(image: &[u8], mode: RecoveryMode) -> Read {
    let ring = RingImage::find(image).expect("a ring image");
    let options = LogReaderOptions::new()
        .read(ring.read_options(ReadOptions::new()))
        .recovery(mode);
    let mut reader = LogReader::new(ring.source(Cursor::new(image)), &options);
    let mut out = Read::default();
    loop {
        match reader.next() {
            Ok(Some(Entry::Record(r))) => out
                .records
                .push((ring.region_offset(r.offset), r.data.to_vec())),
            Ok(Some(Entry::Damage(d))) => out.damage.push(ring.region_damage(d)),
            Ok(None) => break,
            Err(e) => {
                out.failed = Some(e.to_string());
                break;
            }
            other => panic!("not expected here: {other:?}"),
        }
    }
    out.tail = reader.tail().map(|t| ring.region_damage(t));
    out
}

fn data(read: &Read) -> Vec<Vec<u8>> {
    read.records.iter().map(|(_, d)| d.clone()).collect()
}

/// The record's first chunk is at its image offset: a FULL chunk holding it, or a FIRST
/// chunk holding its beginning.
fn assert_at(image: &[u8], offset: u64, record: &[u8]) {
    let at = offset as usize;
    let header = &image[at..at + 7];
    let len = usize::from(u16::from_le_bytes([header[4], header[5]]));
    match header[6] {
        1 => assert_eq!(&image[at + 7..at + 7 + len], record, "FULL at {at}"),
        2 => assert_eq!(
            &image[at + 7..at + 7 + len],
            &record[..len],
            "FIRST at {at}"
        ),
        other => panic!("a chunk of type {other} at {at}"),
    }
}

fn runs() -> Vec<(String, Run)> {
    let mut runs = Vec::new();
    for (erased, first_lap) in [(0xFF, 1), (0x00, u32::MAX - 1)] {
        let spec = Spec {
            erased,
            first_lap,
            ..Spec::new(4, 1_500, 11)
        };
        runs.push((
            format!("4 blocks, erased {erased:#x}"),
            run::<4096>(&spec, sample),
        ));
    }
    // Erase units of two blocks: erase groups of two.
    let spec = Spec::new(6, 1_500, 23);
    runs.push((
        "6 blocks, groups of 2".to_owned(),
        run::<{ 2 * BLOCK_SIZE }>(&spec, sample),
    ));
    runs
}

#[test]
fn a_ring_image_reads_as_the_reference_reads_it() {
    for (what, run) in runs() {
        assert!(run.laps >= 3, "{what}: wrapped {} times", run.laps);
        assert!(run.cuts >= 4, "{what}: {} power cuts", run.cuts);
        let read = read(&run.image, RecoveryMode::AbsoluteConsistency);
        assert_eq!(data(&read), run.reference, "{what}");
        check(&run, &data(&read));
        assert_eq!(
            (read.damage, read.tail, read.failed),
            (vec![], None, None),
            "{what}"
        );
        for (offset, record) in &read.records {
            assert_at(&run.image, *offset, record);
        }
    }
}

#[test]
fn a_ring_image_file_reads_as_in_memory() -> TestResult {
    let (_, run) = runs().swap_remove(2);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("flash.img");
    std::fs::write(&path, &run.image)?;
    let log = LogFile::open(&path)?;
    let ring = log.ring()?.expect("a ring image");
    assert_eq!(Some(&ring), RingImage::find(&run.image).as_ref());
    assert_eq!(ring.erased(), 0xFF);
    let options = LogReaderOptions::new().read(ring.read_options(ReadOptions::new()));
    let mut reader = LogReader::new(log.ring_source(&ring)?, &options);
    let mut records = Vec::new();
    while let Some(entry) = reader.next()? {
        match entry {
            Entry::Record(r) => records.push(r.data.to_vec()),
            Entry::Damage(d) => panic!("{d}"),
            other => panic!("not expected here: {other:?}"),
        }
    }
    assert_eq!(records, run.reference);
    Ok(())
}

#[test]
fn the_erased_value_comes_from_the_ring_headers() {
    for (what, run) in runs() {
        let ring = RingImage::find(&run.image).expect("a ring image");
        let head = ring.header(ring.ring().head()).expect("the head's header");
        assert_eq!(ring.erased(), head.erased, "{what}");
        assert_eq!(
            ring.read_options(ReadOptions::new()),
            ReadOptions::new()
                .erased(Some(head.erased))
                .starts_mid_log(true)
        );
    }
}

#[test]
fn every_block_has_its_role() {
    for (what, run) in runs() {
        let ring = RingImage::find(&run.image).expect("a ring image");
        let order: Vec<u32> = ring.order().collect();
        assert_eq!(order.first(), Some(&ring.oldest()), "{what}");
        assert_eq!(order.last(), Some(&ring.ring().head()), "{what}");
        let mut read = 0;
        for index in 0..ring.image_blocks() {
            let role = ring.role(index);
            match role {
                BlockRole::Read { place } => {
                    assert_eq!(order[place as usize], index, "{what}");
                    let header = ring.header(index).expect("a read block's header");
                    assert_eq!(header.lap, ring.ring().expected_lap(index), "{what}");
                    read += 1;
                }
                BlockRole::Ahead => {
                    // The rest of the head's group, or the group after it.
                    let group = ring.ring().group();
                    let head_group = ring.ring().head() / group;
                    let groups = ring.ring().blocks() / group;
                    assert!(
                        index / group == head_group || index / group == (head_group + 1) % groups,
                        "{what}: block {index} {role}"
                    );
                }
                other => panic!("{what}: block {index}: {other}"),
            }
        }
        assert_eq!(read, order.len(), "{what}");
        // A full ring holds every block but the group erased ahead and the rest of the head's.
        assert!(read >= ring.image_blocks() as usize - 2 * ring.ring().group() as usize);
    }
}

#[test]
fn records_aged_out_and_records_read_are_all_records_written() {
    // No power cut: every record begun is written once.
    let spec = Spec {
        cuts: 0,
        sessions: 3,
        ..Spec::new(4, 1_000, 5)
    };
    let run = run::<4096>(&spec, sample);
    let ring = RingImage::find(&run.image).expect("a ring image");
    let read = read(&run.image, RecoveryMode::AbsoluteConsistency);
    let start = check(&run, &data(&read));
    assert!(start > 0, "records aged out");
    assert_eq!(ring.records_aged_out() as usize, start);
    assert_eq!(
        ring.records_aged_out() as usize + read.records.len(),
        run.written.len()
    );
}

#[test]
fn a_bit_flip_in_a_record_is_damage_at_its_image_offset() {
    let (what, run) = runs().swap_remove(0);
    let clean = read(&run.image, RecoveryMode::TolerateCorruptedTailRecords);
    let ring = RingImage::find(&run.image).expect("a ring image");
    // A record in the middle of what is read, in a block that is not the newest.
    let head = u64::from(ring.ring().head());
    let (offset, record) = clean
        .records
        .iter()
        .skip(clean.records.len() / 3)
        .find(|(offset, r)| offset / BLOCK_SIZE as u64 != head && r.len() > 20)
        .expect("a record");
    let flipped = *offset as usize + 7 + record.len().min(20) / 2;
    let mut image = run.image.clone();
    image[flipped] ^= 0x10;
    let damaged = read(&image, RecoveryMode::TolerateCorruptedTailRecords);
    assert!(!damaged.damage.is_empty(), "{what}: no damage reported");
    let first = damaged.damage[0];
    assert_eq!(
        first.kind,
        DamageKind::Corruption(CorruptionKind::ChecksumMismatch),
        "{what}"
    );
    assert!(
        first.offset <= flipped as u64 && flipped as u64 - first.offset < BLOCK_SIZE as u64,
        "{what}: damage at {} for a bit flipped at {flipped}",
        first.offset
    );
    assert_eq!(
        first.offset, *offset,
        "{what}: reported at the damaged chunk"
    );
    assert!(
        !data(&damaged).contains(record),
        "{what}: the record is dropped"
    );
    // Everything else around it reads.
    assert!(damaged.records.len() < clean.records.len());
    assert!(damaged.records.len() + 3 >= clean.records.len());
    let absolute = read(&image, RecoveryMode::AbsoluteConsistency);
    assert!(
        absolute.failed.is_some(),
        "absolute consistency fails on it"
    );
}

#[test]
fn images_without_ring_headers_are_not_ring_images() -> TestResult {
    assert_eq!(RingImage::find(&[]), None);
    assert_eq!(RingImage::find(&vec![0xFF; 3 * BLOCK_SIZE]), None);
    // A plain log of whole blocks.
    let mut writer = logfmt_std::LogWriter::new(Vec::new(), &logfmt_std::LogWriterOptions::new());
    writer.add_record(&vec![7u8; 2 * BLOCK_SIZE - 2 * 7])?;
    let log = writer.close()?;
    assert_eq!(log.len() % BLOCK_SIZE, 0);
    assert_eq!(RingImage::find(&log), None);
    // Not whole blocks, a ring header or not.
    let header = RingHeader {
        lap: 1,
        records: 0,
        blocks: 2,
        group: 1,
        write_size: 8,
        erased: 0xFF,
    };
    let mut image = vec![0xFF; 2 * BLOCK_SIZE];
    image[..19].copy_from_slice(&header.encode());
    assert!(RingImage::find(&image).is_some());
    // Cut short, it is still a ring image (its headers say so), the shortfall reported.
    let short = RingImage::find(&image[..BLOCK_SIZE + 1]).expect("a ring image cut short");
    assert_eq!(
        short.disagreements().collect::<Vec<_>>(),
        [RingDisagreement::Short {
            len: BLOCK_SIZE as u64 + 1,
            ring_len: 2 * BLOCK_SIZE as u64
        }]
    );
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("short.img");
    std::fs::write(&path, &image[..BLOCK_SIZE + 1])?;
    assert_eq!(LogFile::open(&path)?.ring()?, Some(short));
    // A plain log cut short of whole blocks is not one, nor is a file too short for a header.
    assert_eq!(RingImage::find(&log[..log.len() - 1000]), None);
    assert_eq!(RingImage::find(&image[..18]), None);
    assert_eq!(LogFile::open("/dev/null")?.ring()?, None);
    Ok(())
}

#[test]
fn a_block_of_another_lap_on_the_way_reads_as_erased() {
    let (what, run) = runs().swap_remove(0);
    let ring = RingImage::find(&run.image).expect("a ring image");
    let order: Vec<u32> = ring.order().collect();
    assert!(order.len() >= 3, "{what}");
    // The second block read gets a header of an older lap: it holds nothing of the log now.
    let victim = order[1];
    let mut header = ring.header(victim).expect("a header");
    header.lap = header.lap.wrapping_sub(5);
    let mut image = run.image.clone();
    let at = victim as usize * BLOCK_SIZE;
    image[at..at + 19].copy_from_slice(&header.encode());
    let changed = RingImage::find(&image).expect("a ring image");
    assert_eq!(changed.oldest(), ring.oldest(), "{what}");
    assert_eq!(changed.role(victim), BlockRole::ReadAsErased { place: 1 });
    // Not silently: the block is reported.
    assert_eq!(
        changed.disagreements().collect::<Vec<_>>(),
        [RingDisagreement::Lap {
            index: victim,
            lap: header.lap,
            expected: header.lap.wrapping_add(5),
            read: true
        }],
        "{what}"
    );
    let damaged = read(&image, RecoveryMode::SkipAnyCorruptedRecords);
    // The records that start in the other blocks read; none is invented.
    let all = data(&read(&run.image, RecoveryMode::SkipAnyCorruptedRecords));
    let records = data(&damaged);
    assert!(records.len() < all.len(), "{what}");
    let mut rest = all.iter();
    for record in &records {
        assert!(
            rest.any(|r| r == record),
            "{what}: a record not in the ring"
        );
    }
    for (offset, _) in &damaged.records {
        assert_ne!(offset / BLOCK_SIZE as u64, u64::from(victim), "{what}");
    }
}

/// The writer's images, power cuts included, have nothing that disagrees.
#[test]
fn the_writers_images_have_no_disagreement() {
    for (what, run) in runs() {
        let ring = RingImage::find(&run.image).expect("a ring image");
        assert_eq!(ring.disagreements().count(), 0, "{what}");
    }
}

/// A ring header of four blocks, erased to 0xFF.
fn header(lap: u32, blocks: u16, group: u8) -> RingHeader {
    RingHeader {
        lap,
        records: 0,
        blocks,
        group,
        write_size: 8,
        erased: 0xFF,
    }
}

/// Blocks of laps 5 and 9 mixed, and one whose header gives other groups: each reported,
/// none resolved silently.
#[test]
fn mixed_laps_and_group_sizes_are_reported() {
    let mut image = vec![0xFF; 6 * BLOCK_SIZE];
    for (block, lap, group) in [(0, 9, 1), (1, 5, 1), (2, 9, 1), (4, 5, 1), (5, 8, 2)] {
        image[block * BLOCK_SIZE..][..19].copy_from_slice(&header(lap, 6, group).encode());
    }
    let ring = RingImage::find(&image).expect("a ring image");
    assert_eq!((ring.ring().head(), ring.ring().lap()), (2, 9));
    let found: Vec<_> = ring.disagreements().collect();
    assert_eq!(
        found,
        [
            RingDisagreement::Lap {
                index: 1,
                lap: 5,
                expected: 9,
                read: true
            },
            RingDisagreement::Lap {
                index: 4,
                lap: 5,
                expected: 8,
                read: false
            },
            RingDisagreement::Geometry {
                index: 5,
                header: header(8, 6, 2),
                newest: header(9, 6, 1)
            },
        ]
    );
    for line in &found {
        let text = line.to_string();
        assert!(text.starts_with("block "), "{text}");
        assert!(!text.contains('\n'), "{text}");
    }
    // Another block count in one header.
    image[3 * BLOCK_SIZE..][..19].copy_from_slice(&header(8, 7, 1).encode());
    let ring = RingImage::find(&image).expect("a ring image");
    assert!(ring.disagreements().any(
        |d| matches!(d, RingDisagreement::Geometry { index: 3, header, .. } if header.blocks == 7)
    ));
}

/// An image cut short by 1000 bytes reads in the ring's order as the whole image does, but
/// for the records in the bytes it lacks; the shortfall is reported.
#[test]
fn an_image_cut_short_reads_in_ring_order() -> TestResult {
    for (what, run) in runs() {
        let whole = RingImage::find(&run.image).expect("a ring image");
        let cut = &run.image[..run.image.len() - 1000];
        let ring = RingImage::find(cut).expect("still a ring image");
        assert_eq!(
            (ring.ring(), ring.oldest()),
            (whole.ring(), whole.oldest()),
            "{what}"
        );
        assert_eq!(
            ring.disagreements().collect::<Vec<_>>(),
            [RingDisagreement::Short {
                len: cut.len() as u64,
                ring_len: run.image.len() as u64
            }],
            "{what}"
        );
        // Read from a file: the same ring, the same records as in memory.
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("cut.img");
        std::fs::write(&path, cut)?;
        let log = LogFile::open(&path)?;
        assert_eq!(log.ring()?.as_ref(), Some(&ring), "{what}");
        let options = LogReaderOptions::new()
            .read(ring.read_options(ReadOptions::new()))
            .recovery(RecoveryMode::SkipAnyCorruptedRecords);
        let mut reader = LogReader::new(log.ring_source(&ring)?, &options);
        let mut records = Vec::new();
        while let Some(entry) = reader.next()? {
            if let Entry::Record(r) = entry {
                records.push(r.data.to_vec());
            }
        }
        // The records of the whole image, in order, less those the cut took.
        let all = data(&read(&run.image, RecoveryMode::SkipAnyCorruptedRecords));
        assert!(!records.is_empty() && records.len() <= all.len(), "{what}");
        let mut rest = all.iter();
        for record in &records {
            assert!(
                rest.any(|r| r == record),
                "{what}: a record not in the ring"
            );
        }
        // In memory too.
        assert_eq!(
            data(&read(cut, RecoveryMode::SkipAnyCorruptedRecords)),
            records,
            "{what}"
        );
    }
    Ok(())
}

/// A block whose ring header a bit flip damaged holds records all the same: reported, on the
/// way from the oldest block or before it, never left unread silently.
#[test]
fn a_block_of_records_without_its_ring_header_is_reported() {
    let (what, run) = runs().swap_remove(0);
    let ring = RingImage::find(&run.image).expect("a ring image");
    let order: Vec<u32> = ring.order().collect();
    for (victim, read) in [(order[1], true), (order[0], false)] {
        let mut image = run.image.clone();
        image[victim as usize * BLOCK_SIZE + 9] ^= 0x10;
        let changed = RingImage::find(&image).expect("a ring image");
        let found: Vec<_> = changed.disagreements().collect();
        assert!(
            matches!(
                found.as_slice(),
                [RingDisagreement::Unread { index, chunks, read: r }]
                    if *index == victim && *chunks > 0 && *r == read
            ),
            "{what}: {found:?}"
        );
        // Through a file: the same.
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("flipped.img");
        std::fs::write(&path, &image).expect("writes");
        let log = LogFile::open(&path).expect("opens");
        assert_eq!(log.ring().expect("reads").as_ref(), Some(&changed));
    }
}

/// An image larger than its ring, with a block of records beyond the ring's blocks: reported.
#[test]
fn records_beyond_the_rings_blocks_are_reported() {
    let (what, run) = runs().swap_remove(0);
    let ring = RingImage::find(&run.image).expect("a ring image");
    let blocks = ring.ring().blocks();
    // One more block: a copy of the oldest, its ring header erased.
    let oldest = ring.oldest() as usize * BLOCK_SIZE;
    let mut image = run.image.clone();
    let mut extra = run.image[oldest..oldest + BLOCK_SIZE].to_vec();
    extra[..19].fill(0xFF);
    image.extend_from_slice(&extra);
    let larger = RingImage::find(&image).expect("a ring image");
    assert_eq!(larger.role(blocks), BlockRole::Outside, "{what}");
    let found: Vec<_> = larger.disagreements().collect();
    assert!(
        matches!(
            found.as_slice(),
            [RingDisagreement::Unread { index, chunks, read: false }]
                if *index == blocks && *chunks > 0
        ),
        "{what}: {found:?}"
    );
    // An erased block beyond the ring is nothing to report.
    let mut image = run.image.clone();
    image.extend_from_slice(&vec![0xFF; BLOCK_SIZE]);
    let larger = RingImage::find(&image).expect("a ring image");
    assert_eq!(larger.disagreements().count(), 0, "{what}");
}
