//! The format freeze: every structure logfmt writes beyond LevelDB's format
//! (`crates/logfmt-core/FORMAT.md`), kept as files written by logfmt 0.1.0 (the read cursors' by
//! the first version that writes them) in
//! `tests/data/format-freeze/`, and read by every later version.
//!
//! For each file: the records it holds are read back, exactly, with no damage, by the readers a
//! user of that structure has (std's `LogReader`, the core's `Reader`, the flash readers); the
//! bytes that FORMAT.md specifies are checked where they are; and where today's writer is
//! deterministic (everything but zstd's output, which depends on the zstd version) it must still
//! write exactly the same bytes. A golden file is never rewritten: a change that makes this
//! test fail is a change of the format, which FORMAT.md's stability rule governs.
//!
//! A missing golden file (a new structure) is written by `LOGFMT_FREEZE_WRITE=1 cargo test -p
//! logfmt-tests --test format_freeze`, and committed.

use std::path::PathBuf;

use logfmt_core::flash::{
    CursorReader, FlashConfig, FlashItem, FlashSource, MockFlash, PowerCut, WordReader, WordWriter,
};
use logfmt_core::pack::Pack;
use logfmt_core::parts::cursor::Cursor;
use logfmt_core::parts::format::{BLOCK_SIZE, CURSOR_TYPE, RESUME_TYPE, RING_TYPE};
use logfmt_core::parts::ring::RingHeader;
use logfmt_core::{
    Format, ReadOptions, Reader, WriteOptions,
    parts::{Item, ReadFormat},
};
use logfmt_std::{
    Compression, LogReaderOptions, LogWriter, LogWriterOptions, RecoveryMode,
    advanced::{Entry, LogReader, PackLimit},
};

/// The flash geometry of the flash images: 8-byte words, 4 KiB erase units.
const WRITE: usize = 8;
const ERASE: usize = 4096;

/// Record `i` of every file: a sensor-like sample, and every 13th one long enough to cross a
/// block boundary.
fn sample(i: usize) -> Vec<u8> {
    if i % 13 == 12 {
        (0..20_000 + i)
            .map(|j| b'a' + ((i + j) % 26) as u8)
            .collect()
    } else {
        format!("sample {i:04}: t={}.{}", 18 + i % 7, i % 10).into_bytes()
    }
}

fn samples(n: usize) -> Vec<Vec<u8>> {
    (0..n).map(sample).collect()
}

fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("data/format-freeze")
        .join(name)
}

/// The golden file `name`; written from `made` if it is missing and `LOGFMT_FREEZE_WRITE` is
/// set (never rewritten).
fn golden(name: &str, made: &[u8]) -> Vec<u8> {
    let path = golden_path(name);
    match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            assert!(
                std::env::var_os("LOGFMT_FREEZE_WRITE").is_some(),
                "{} is missing: a golden file is written once, with LOGFMT_FREEZE_WRITE=1",
                path.display()
            );
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("creates");
            std::fs::write(&path, made).expect("writes");
            made.to_vec()
        }
        Err(e) => panic!("{}: {e}", path.display()),
    }
}

/// Every record of `log` read by std's `LogReader` with absolute consistency (any damage
/// fails).
fn std_records(log: &[u8], read: ReadOptions) -> Vec<(u64, Option<u32>, Vec<u8>)> {
    let options = LogReaderOptions::new()
        .read(read)
        .recovery(RecoveryMode::AbsoluteConsistency);
    let mut reader = LogReader::from_slice(log, &options);
    let mut records = Vec::new();
    while let Some(entry) = reader.next().unwrap_or_else(|e| panic!("{e}")) {
        match entry {
            Entry::Record(r) => records.push((r.offset, r.index, r.data.to_vec())),
            Entry::Damage(d) => panic!("damage: {d}"),
            other => panic!("unexpected entry: {other:?}"),
        }
    }
    records
}

/// Every record of `log` read by the core's `Reader` (`no_std`); a compressed pack fails.
fn core_records(log: &[u8], read: &ReadOptions) -> Vec<Vec<u8>> {
    let mut scratch = vec![0u8; 1 << 17];
    let mut reader = Reader::with_options(logfmt_core::SliceSource::new(log), &mut scratch, read);
    let mut records = Vec::new();
    while let Some(item) = reader.next().expect("reads") {
        match item {
            Item::Record(r) => records.push(r.data.to_vec()),
            other => panic!("not a record: {other:?}"),
        }
    }
    records
}

fn data(records: &[(u64, Option<u32>, Vec<u8>)]) -> Vec<Vec<u8>> {
    records.iter().map(|(_, _, d)| d.clone()).collect()
}

fn write_log(options: &LogWriterOptions, records: &[Vec<u8>]) -> Vec<u8> {
    let mut writer = LogWriter::new(Vec::new(), options);
    for record in records {
        writer.add_record(record).expect("writes");
    }
    writer.close().expect("closes")
}

// ------------------------------------------------------------------- RocksDB's recyclable format

fn recyclable_options() -> LogWriterOptions {
    LogWriterOptions::new().write(WriteOptions::new().format(Format::Recyclable { log_number: 7 }))
}

#[test]
fn recyclable_log_with_log_number() {
    let records = samples(14);
    let made = write_log(&recyclable_options(), &records);
    let log = golden("recyclable-7.log", &made);
    assert_eq!(
        log, made,
        "today's writer writes the recyclable format differently"
    );
    // Header: crc, length, type 5 (recyclable FULL), log number 7 (u32 LE).
    assert_eq!(&log[4..11], &[19, 0, 5, 7, 0, 0, 0]);
    let read = ReadOptions::new().format(ReadFormat::Recyclable { log_number: 7 });
    assert_eq!(data(&std_records(&log, read.clone())), records);
    assert_eq!(core_records(&log, &read), records);
}

// ------------------------------------------------------------------------------------- packs

#[test]
fn stored_packs() {
    let records = samples(40);
    let options = LogWriterOptions::new().pack(Some(PackLimit::bytes(256)));
    let made = write_log(&options, &records);
    let log = golden("packs.log", &made);
    assert_eq!(log, made, "today's writer writes packs differently");
    // The first chunk is a PACK_FULL whose payload starts with codec 0 and a count.
    assert_eq!(log[6], 0x51);
    let payload = &log[7..7 + usize::from(u16::from_le_bytes([log[4], log[5]]))];
    let pack = Pack::parse(payload).expect("a pack");
    assert_eq!((pack.codec(), payload[0]), (0, 0));
    assert!(pack.count() > 1);
    let read = std_records(&log, ReadOptions::new());
    assert_eq!(data(&read), records);
    // Records of a pack share its offset and are numbered from 0.
    assert_eq!(read[0].0, 0);
    assert_eq!(read[0].1, Some(0));
    assert_eq!(read[1].1, Some(1));
    assert_eq!(core_records(&log, &ReadOptions::new()), records);
}

#[test]
fn compressed_packs() {
    let records = samples(40);
    let options = LogWriterOptions::new()
        .pack(Some(PackLimit::bytes(1024)))
        .compress(Compression::zstd());
    let made = write_log(&options, &records);
    let log = golden("compressed-packs.log", &made);
    // zstd's output may differ between zstd versions: the records are what must hold.
    let first = &log[7..7 + usize::from(u16::from_le_bytes([log[4], log[5]]))];
    assert_eq!(log[6], 0x51);
    assert_eq!(first[0], 1, "codec 1: zstd");
    let pack = Pack::parse(first).expect("a pack");
    assert!(pack.decoded_len().is_some());
    assert_eq!(data(&std_records(&log, ReadOptions::new())), records);
    assert!(log.len() < made.len() * 2);
}

// ------------------------------------------------------------------ RocksDB's WAL compression

#[test]
fn rocksdb_wal_compression() {
    let records = samples(14);
    let options = LogWriterOptions::new().compress(Compression::rocksdb());
    let made = write_log(&options, &records);
    let log = golden("rocksdb-wal-compression.log", &made);
    // RocksDB's kSetCompressionType record first, byte for byte: zstd (7).
    let set_compression = [
        0xe1, 0x2c, 0x08, 0xf8, 0x04, 0x00, 0x09, 0x07, 0x00, 0x00, 0x00,
    ];
    assert_eq!(&log[..11], &set_compression);
    assert_eq!(&made[..11], &set_compression);
    assert_eq!(data(&std_records(&log, ReadOptions::new())), records);
}

// ------------------------------------------------------------------------------- flash logs

/// A flash region of `blocks` blocks, as a `MockFlash` over `memory` (and its word flags).
fn flash_memory(blocks: usize) -> (Vec<u8>, Vec<bool>) {
    (
        vec![0xFF; blocks * BLOCK_SIZE],
        vec![false; blocks * BLOCK_SIZE / WRITE],
    )
}

/// A flash log written with a power cut in the middle of a record and reopened: the records
/// flushed before the cut and after the reopening, and the resume marker between them.
fn flash_log() -> (Vec<u8>, Vec<Vec<u8>>) {
    let (mut memory, mut programmed) = flash_memory(2);
    let config = FlashConfig::new(0, memory.len() as u32);
    let mut flash =
        MockFlash::<WRITE, ERASE>::new(&mut memory, &mut programmed, 0xFF).expect("a flash");
    let mut kept = Vec::new();
    {
        let mut writer = WordWriter::open(&mut flash, config).expect("opens");
        for i in 0..5 {
            writer.add_record(&sample(i)).expect("writes");
            writer.flush().expect("flushes");
            kept.push(sample(i));
        }
    }
    // The power fails 20 bytes into the next record's programming.
    flash.cut_power_after(20, PowerCut::Partial);
    {
        let mut writer = WordWriter::open(&mut flash, config).expect("opens");
        assert!(writer.add_record(&[b'x'; 100]).is_err());
    }
    flash.power_on();
    let mut writer = WordWriter::open(&mut flash, config).expect("reopens");
    for i in 5..10 {
        writer.add_record(&sample(i)).expect("writes");
        writer.flush().expect("flushes");
        kept.push(sample(i));
    }
    (flash.memory().to_vec(), kept)
}

#[test]
fn flash_log_with_resume_marker() {
    let (made, kept) = flash_log();
    let image = golden("flash-resume.img", &made);
    assert_eq!(image, made, "today's flash writer writes differently");
    // The resume marker: an empty chunk of type 0xB1 at a word boundary.
    let marker = image
        .chunks(WRITE)
        .position(|word| word.len() == WRITE && word[4..7] == [0, 0, RESUME_TYPE])
        .expect("a resume marker");
    let crc =
        logfmt_core::parts::checksum::mask(logfmt_core::parts::checksum::crc32c(&[RESUME_TYPE]));
    assert_eq!(&image[marker * WRITE..][..4], &crc.to_le_bytes());
    // The block reader with the flash rules, and the small-RAM reader.
    let read = ReadOptions::new().erased(Some(0xFF));
    assert_eq!(core_records(&image, &read), kept);
    assert_eq!(word_reader_records(image, 2, false), kept);
}

/// A ring of 4 blocks written 2.5 laps round: the newest records are kept.
fn ring_image() -> (Vec<u8>, Vec<Vec<u8>>) {
    let (mut memory, mut programmed) = flash_memory(4);
    let config = FlashConfig::new(0, memory.len() as u32).ring();
    let mut flash =
        MockFlash::<WRITE, ERASE>::new(&mut memory, &mut programmed, 0xFF).expect("a flash");
    let mut writer = WordWriter::open(&mut flash, config).expect("opens");
    let written = samples(600);
    for (i, record) in written.iter().enumerate() {
        writer.add_record(record).expect("writes");
        if i % 10 == 9 {
            writer.flush().expect("flushes");
        }
    }
    writer.flush().expect("flushes");
    (flash.memory().to_vec(), written)
}

#[test]
fn ring_image_with_ring_headers() {
    let (made, written) = ring_image();
    let image = golden("ring.img", &made);
    assert_eq!(image, made, "today's ring writer writes differently");
    // Every block begins with a ring header (type 0xB0) of the ring's geometry, but the one
    // erased ahead of the newest.
    let erased = image
        .chunks(BLOCK_SIZE)
        .filter(|block| block.iter().all(|&b| b == 0xFF))
        .count();
    assert_eq!(erased, 1);
    let laps: Vec<u32> = image
        .chunks(BLOCK_SIZE)
        .filter(|block| block.iter().any(|&b| b != 0xFF))
        .map(|block| {
            assert_eq!(block[6], RING_TYPE);
            let header = RingHeader::parse(block).expect("an intact ring header");
            assert_eq!(
                (
                    header.blocks,
                    header.group,
                    header.write_size,
                    header.erased
                ),
                (4, 1, 8, 0xFF)
            );
            header.lap
        })
        .collect();
    assert!(
        laps.iter().any(|&lap| lap > 2),
        "the ring wrapped: {laps:?}"
    );
    // The kept records are the newest ones, in order, ending with the last one written.
    let kept = ring_records(&image);
    assert!(kept.len() > 10 && kept.len() < written.len());
    assert_eq!(kept[..], written[written.len() - kept.len()..]);
    assert_eq!(word_reader_records(image, 4, true), kept);
}

/// A ring of 4 blocks written 2.5 laps round, two read cursors committed as it goes: cursor 0
/// every 50 records (delivered up to 5 records before), cursor 1 every 120 (up to 100 before).
fn ring_cursor_image() -> (Vec<u8>, Vec<Vec<u8>>) {
    let (mut memory, mut programmed) = flash_memory(4);
    let config = FlashConfig::new(0, memory.len() as u32).ring();
    let mut flash =
        MockFlash::<WRITE, ERASE>::new(&mut memory, &mut programmed, 0xFF).expect("a flash");
    let mut writer = WordWriter::open(&mut flash, config).expect("opens");
    let written = samples(600);
    for (i, record) in written.iter().enumerate() {
        writer.add_record(record).expect("writes");
        let n = i as u32 + 1;
        if n.is_multiple_of(50) {
            writer.commit(Cursor::new(0, n - 5)).expect("commits");
        }
        if n.is_multiple_of(120) {
            writer.commit(Cursor::new(1, n - 100)).expect("commits");
        }
    }
    writer.flush().expect("flushes");
    (flash.memory().to_vec(), written)
}

#[test]
fn ring_image_with_read_cursors() {
    let (made, written) = ring_cursor_image();
    let image = golden("ring-cursors.img", &made);
    assert_eq!(
        image, made,
        "today's ring writer writes cursors differently"
    );
    // The cursor chunks, as FORMAT.md lays them out: type 0xB2, 5 bytes of payload, the
    // newest of cursor 0 at record 595.
    let cursors: Vec<Cursor> = (0..image.len() - 12)
        .filter(|&at| image[at + 6] == CURSOR_TYPE)
        .filter_map(|at| Cursor::parse(&image[at..]))
        .collect();
    assert_eq!(cursors.len(), 3, "the ones not aged out: {cursors:?}");
    assert!(cursors.contains(&Cursor::new(0, 595)), "{cursors:?}");
    // Every reader passes them over: the records are the newest, in order, no damage.
    let kept = ring_records(&image);
    assert!(kept.len() > 10 && kept.len() < written.len());
    assert_eq!(kept[..], written[written.len() - kept.len()..]);
    assert_eq!(word_reader_records(image.clone(), 4, true), kept);
    // Reading from cursor 0 starts at its newest commit; cursor 1's next records aged out,
    // counted, and reading starts at the oldest kept.
    let (from, aged_out) = cursor_reader_records(&image, 0);
    assert_eq!((&from[..], aged_out), (&written[595..], 0));
    let (from, aged_out) = cursor_reader_records(&image, 1);
    let oldest = written.len() - kept.len();
    assert_eq!((from, aged_out), (kept, oldest as u32 - 500));
}

/// The records of a ring image from cursor `id`, by `CursorReader`, and the records it
/// reports aged out before they were delivered.
fn cursor_reader_records(image: &[u8], id: u8) -> (Vec<Vec<u8>>, u32) {
    let (mut memory, mut programmed) = flash_memory(image.len() / BLOCK_SIZE);
    let config = FlashConfig::new(0, memory.len() as u32).ring();
    let mut flash =
        MockFlash::<WRITE, ERASE>::new(&mut memory, &mut programmed, 0xFF).expect("a flash");
    flash.memory_mut().copy_from_slice(image);
    let mut reader = CursorReader::open(&mut flash, config, id).expect("opens");
    let mut buffer = vec![0u8; 1 << 17];
    let mut records = Vec::new();
    while let Some(item) = reader.next(&mut buffer).expect("reads") {
        match item {
            FlashItem::Record { len, .. } => records.push(buffer[..len].to_vec()),
            other => panic!("not a record: {other:?}"),
        }
    }
    (records, reader.start().aged_out)
}

/// The examples FORMAT.md gives are the bytes of these files and of today's writers.
#[test]
fn format_md_examples() {
    let ring = std::fs::read(golden_path("ring.img")).expect("reads ring.img");
    let documented = [
        0xaa, 0x15, 0x52, 0xbf, 0x0c, 0x00, 0xb0, 0x08, 0x00, 0x00, 0x00, 0x49, 0x02, 0x00, 0x00,
        0x04, 0x00, 0x01, 0x03,
    ];
    assert_eq!(ring[..19], documented);
    let mut pack = logfmt_core::pack::PackBuffer::<64>::new();
    pack.push(b"t=21.5").expect("fits");
    pack.push(b"t=21.6").expect("fits");
    let mut stored = vec![0, 2, 0, 0, 0, 6];
    stored.extend_from_slice(b"t=21.5");
    stored.push(6);
    stored.extend_from_slice(b"t=21.6");
    assert_eq!(pack.as_bytes(), stored);
    let mut log = logfmt_std::LogWriter::new(Vec::new(), &LogWriterOptions::new());
    log.add_record(b"x").expect("writes");
    log.pad_to(16).expect("pads");
    let log = log.close().expect("closes");
    assert_eq!(log[8..15], [0x64, 0x51, 0xd0, 0xe9, 0x00, 0x00, 0x02]);
    let cursor = [
        0xf7, 0x2f, 0xeb, 0x6e, 0x05, 0x00, 0xb2, 0x01, 0x49, 0x02, 0x00, 0x00,
    ];
    assert_eq!(Cursor::new(1, 585).encode(), cursor);
}

/// The records of a ring image, by the core's block reader over `FlashSource::ring`.
fn ring_records(image: &[u8]) -> Vec<Vec<u8>> {
    let (mut memory, mut programmed) = flash_memory(image.len() / BLOCK_SIZE);
    let config = FlashConfig::new(0, memory.len() as u32).ring();
    let mut flash =
        MockFlash::<WRITE, ERASE>::new(&mut memory, &mut programmed, 0xFF).expect("a flash");
    flash.memory_mut().copy_from_slice(image);
    let mut block = Box::new([0u8; BLOCK_SIZE]);
    let source = FlashSource::ring(&mut flash, config, &mut *block).expect("reads");
    let options = ReadOptions::new().erased(Some(0xFF)).starts_mid_log(true);
    let mut buffer = vec![0u8; 1 << 17];
    let mut reader = Reader::with_options(source, &mut buffer, &options);
    let mut records = Vec::new();
    while let Some(item) = reader.next().expect("reads") {
        match item {
            Item::Record(r) => records.push(r.data.to_vec()),
            other => panic!("not a record: {other:?}"),
        }
    }
    records
}

/// The records of a flash image of `blocks` blocks, by the small-RAM `WordReader`.
fn word_reader_records(image: Vec<u8>, blocks: usize, ring: bool) -> Vec<Vec<u8>> {
    let (mut memory, mut programmed) = flash_memory(blocks);
    let mut config = FlashConfig::new(0, memory.len() as u32);
    if ring {
        config = config.ring();
    }
    let mut flash =
        MockFlash::<WRITE, ERASE>::new(&mut memory, &mut programmed, 0xFF).expect("a flash");
    flash.memory_mut().copy_from_slice(&image);
    let mut reader = WordReader::open(&mut flash, config).expect("opens");
    let mut buffer = vec![0u8; 1 << 17];
    let mut records = Vec::new();
    while let Some(item) = reader.next(&mut buffer).expect("reads") {
        match item {
            FlashItem::Record { len, .. } => records.push(buffer[..len].to_vec()),
            other => panic!("not a record: {other:?}"),
        }
    }
    records
}
