//! Tests of seeking: to a record number, to a key, to the newest records, in rings that
//! wrapped and in logs with a torn tail, with the flash reads counted (a ring header per step
//! of the binary search).

use core::cell::Cell;
use std::vec::Vec;

use embedded_storage::nor_flash::{ErrorType, ReadNorFlash};

use super::{FlashConfig, FlashItem, MockError, MockFlash, PowerCut, WordReader, WordWriter};
use crate::format::BLOCK_SIZE;
use crate::ring::RING_HEADER_SIZE;

const WRITE: usize = 8;
const ERASE: usize = 4096;
type Flash<'m> = MockFlash<'m, WRITE, ERASE>;

/// Reads counted: bytes, and ring headers (19 bytes read at a block's start).
#[derive(Default)]
struct Counts {
    bytes: Cell<u64>,
    headers: Cell<u32>,
}

impl Counts {
    /// The counts so far, set back to 0.
    fn take(&self) -> (u64, u32) {
        (self.bytes.take(), self.headers.take())
    }
}

/// A flash that counts its reads.
struct Counting<'f, 'm> {
    flash: &'f mut Flash<'m>,
    counts: &'f Counts,
}

impl ErrorType for Counting<'_, '_> {
    type Error = MockError;
}

impl ReadNorFlash for Counting<'_, '_> {
    const READ_SIZE: usize = 1;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), Self::Error> {
        let counts = self.counts;
        counts.bytes.set(counts.bytes.get() + bytes.len() as u64);
        if (offset as usize).is_multiple_of(BLOCK_SIZE) && bytes.len() == RING_HEADER_SIZE {
            counts.headers.set(counts.headers.get() + 1);
        }
        self.flash.read(offset, bytes)
    }

    fn capacity(&self) -> usize {
        self.flash.capacity()
    }
}

/// Record `i`: its number, then its "time" (`10 i`), then filler: `len` bytes (at least 8).
fn record(i: u32, len: usize) -> Vec<u8> {
    let mut data = i.to_le_bytes().to_vec();
    data.extend((i * 10).to_le_bytes());
    data.extend((8..len.max(8)).map(|j| (i as usize * 31 + j * 7) as u8));
    data
}

/// The record number a record read says it is.
fn number(data: &[u8]) -> u32 {
    u32::from_le_bytes(data[..4].try_into().expect("4 bytes"))
}

/// The time a record carries.
fn time(data: &[u8]) -> Option<u32> {
    Some(u32::from_le_bytes(data.get(4..8)?.try_into().ok()?))
}

/// A flash of `blocks` blocks.
struct Memory {
    bytes: Vec<u8>,
    flags: Vec<bool>,
}

impl Memory {
    fn new(blocks: usize) -> Self {
        Self {
            bytes: std::vec![0xFF; blocks * BLOCK_SIZE],
            flags: std::vec![false; blocks * BLOCK_SIZE / WRITE],
        }
    }

    fn flash(&mut self) -> Flash<'_> {
        MockFlash::new(&mut self.bytes, &mut self.flags, 0xFF).expect("flash")
    }
}

/// Writes records `from..to` of `len` bytes, each flushed.
fn fill(flash: &mut Flash<'_>, config: FlashConfig, from: u32, to: u32, len: usize) {
    let mut writer = WordWriter::open(&mut *flash, config).expect("open");
    for i in from..to {
        writer.add_record(&record(i, len)).expect("add");
        writer.flush().expect("flush");
    }
}

/// The numbers of at most `at_most` records from where the reader is: `first` (an item a seek
/// returned, in `buffer`), then what `next` returns (damage fails the test).
fn numbers<F: ReadNorFlash>(
    reader: &mut WordReader<F>,
    buffer: &mut [u8],
    first: Option<FlashItem>,
    at_most: usize,
) -> Vec<u32>
where
    F::Error: core::fmt::Debug,
{
    let mut out = Vec::new();
    match first {
        Some(FlashItem::Record { len, .. }) => out.push(number(&buffer[..len])),
        Some(other) => panic!("{other:?}"),
        None => return out,
    }
    while out.len() < at_most {
        match reader.next(buffer).expect("reads") {
            Some(FlashItem::Record { len, .. }) => out.push(number(&buffer[..len])),
            Some(other) => panic!("{other:?}"),
            None => break,
        }
    }
    out
}

/// A ring over the whole of `flash` that wrapped: 1.5 laps of 100-byte records. The records
/// written.
fn wrapped_ring(flash: &mut Flash<'_>) -> (FlashConfig, u32) {
    let len = flash.capacity();
    let config = FlashConfig::new(0, len as u32).ring();
    let count = (len / 112 * 3 / 2) as u32;
    fill(flash, config, 0, count, 100);
    (config, count)
}

#[test]
fn seeking_a_record_in_a_64_block_ring_reads_six_ring_headers() {
    let mut memory = Memory::new(64);
    let mut flash = memory.flash();
    let (config, count) = wrapped_ring(&mut flash);
    let counts = Counts::default();
    let counting = Counting {
        flash: &mut flash,
        counts: &counts,
    };
    let mut reader = WordReader::open(counting, config).expect("open");
    let mut buffer = [0u8; 4096];
    let oldest = reader.aged_out_records().expect("a ring");
    // The ring wrapped: the oldest records aged out.
    assert!(oldest > count / 4, "{oldest} of {count}");
    let mut targets = std::vec![
        oldest,
        oldest + 1,
        (oldest + count) / 2,
        count - 2,
        count - 1
    ];
    targets.extend((0..40).map(|k| oldest + (count - oldest) / 40 * k + k));
    for target in targets {
        counts.take();
        let first = reader.seek_record(&mut buffer, target).expect("seek");
        let read = numbers(&mut reader, &mut buffer, first, 2);
        let want: Vec<u32> = (target..count).take(2).collect();
        assert_eq!(read, want, "record {target}");
        // The binary search: ⌈log2 64⌉ = 6 ring headers, then the block found (its header
        // read as the walk loads it) read up to the record, then the two records (the second
        // may begin in the next block, or be the log's end: the rest of the block read).
        let (bytes, headers) = counts.take();
        assert!(
            headers <= 6 + 2,
            "record {target}: {headers} ring headers read"
        );
        assert!(
            bytes <= (8 * RING_HEADER_SIZE + BLOCK_SIZE + 2 * 112) as u64,
            "record {target}: {bytes} bytes read"
        );
    }
    // A record aged out: from the oldest held; past the newest: nothing.
    let first = reader.seek_record(&mut buffer, oldest - 5).expect("seek");
    assert_eq!(numbers(&mut reader, &mut buffer, first, 1), [oldest]);
    let first = reader.seek_record(&mut buffer, count + 5).expect("seek");
    assert_eq!(numbers(&mut reader, &mut buffer, first, 1), []);
    // The whole ring from a seek to the oldest.
    let first = reader.seek_record(&mut buffer, oldest).expect("seek");
    let all = numbers(&mut reader, &mut buffer, first, usize::MAX);
    assert_eq!(all, (oldest..count).collect::<Vec<_>>());
}

#[test]
fn the_newest_records_read_without_the_rest_of_the_ring() {
    let mut memory = Memory::new(64);
    let mut flash = memory.flash();
    let (config, count) = wrapped_ring(&mut flash);
    let counts = Counts::default();
    let counting = Counting {
        flash: &mut flash,
        counts: &counts,
    };
    let mut reader = WordReader::open(counting, config).expect("open");
    let mut buffer = [0u8; 4096];
    for newest in [1, 10, 100, 1000] {
        counts.take();
        let first = reader.seek_newest(&mut buffer, newest).expect("seek");
        let read = numbers(&mut reader, &mut buffer, first, usize::MAX);
        assert_eq!(read, (count - newest..count).collect::<Vec<_>>());
        let (bytes, headers) = counts.take();
        // The newest block (to count its records), ⌈log2 64⌉ ring headers, then from the start
        // of the block where the first of them begins to the log's end (1000 × 112 bytes
        // span five blocks at most); the walk's reads past a block's last chunk (its trailer,
        // the header that tells the log ends) under 128 bytes a block.
        let blocks = 1 + (newest as usize * 112).div_ceil(BLOCK_SIZE) + 1;
        assert!(
            headers <= 6 + blocks as u32,
            "newest {newest}: {headers} headers"
        );
        assert!(
            bytes <= (blocks * (BLOCK_SIZE + 128) + (6 + blocks) * RING_HEADER_SIZE) as u64,
            "newest {newest}: {bytes} bytes"
        );
    }
}

#[test]
fn seeking_a_time_finds_the_first_record_not_older() {
    let mut memory = Memory::new(64);
    let mut flash = memory.flash();
    let (config, count) = wrapped_ring(&mut flash);
    let counts = Counts::default();
    let counting = Counting {
        flash: &mut flash,
        counts: &counts,
    };
    let mut reader = WordReader::open(counting, config).expect("open");
    let oldest = reader.aged_out_records().expect("a ring");
    let mut buffer = [0u8; 256];
    for want in [oldest + 1, (oldest + count) / 2, count - 1, oldest + 4321] {
        counts.take();
        // A time between two records': the later one.
        let item = reader
            .seek_key(&mut buffer, &(want * 10 - 3), time)
            .expect("seek");
        let Some(FlashItem::Record { len, .. }) = item else {
            panic!("{item:?}")
        };
        assert_eq!(number(&buffer[..len]), want);
        // Reading goes on after it.
        let next = reader.next(&mut buffer).expect("reads");
        assert_eq!(
            numbers(&mut reader, &mut buffer, next, 1),
            (want + 1..count).take(1).collect::<Vec<_>>()
        );
        let (bytes, headers) = counts.take();
        // Each of the 6 steps reads a header and the first record of its block; then the
        // block found, up to the record.
        assert!(headers <= 6 + 2, "time of {want}: {headers} headers");
        assert!(
            bytes <= (8 * (RING_HEADER_SIZE + 2 * 112) + 2 * BLOCK_SIZE) as u64,
            "time of {want}: {bytes} bytes"
        );
    }
    // Older than the oldest: the oldest; newer than the newest: none.
    let item = reader.seek_key(&mut buffer, &0, time).expect("seek");
    assert!(
        matches!(item, Some(FlashItem::Record { len, .. }) if number(&buffer[..len]) == oldest)
    );
    let item = reader
        .seek_key(&mut buffer, &(count * 10), time)
        .expect("seek");
    assert_eq!(item, None);
}

#[test]
fn seeking_in_a_ring_with_a_torn_tail() {
    let mut memory = Memory::new(8);
    let config = FlashConfig::new(0, memory.bytes.len() as u32).ring();
    let count = (memory.bytes.len() / 112 * 3 / 2) as u32;
    let mut flash = memory.flash();
    fill(&mut flash, config, 0, count, 100);
    // A power cut in the middle of a long record: its chunks torn at the log's end.
    flash.cut_power_after(1500, PowerCut::Partial);
    {
        let mut writer = WordWriter::open(&mut flash, config).expect("open");
        let cut = writer
            .add_record(&record(count, 3000))
            .and_then(|_| writer.flush());
        assert!(cut.is_err(), "the power cut");
    }
    flash.power_on();
    let check = |flash: &mut Flash<'_>, what: &str| {
        let mut reader = WordReader::open(&mut *flash, config).expect("open");
        let mut buffer = [0u8; 4096];
        let first = reader.seek_newest(&mut buffer, 10).expect("seek");
        // The torn record took a number if its first chunk is whole: 9 or 10 records.
        let read = numbers(&mut reader, &mut buffer, first, usize::MAX);
        let from = count - read.len() as u32;
        assert!(read.len() >= 9, "{what}: {read:?}");
        assert_eq!(read, (from..count).collect::<Vec<_>>(), "{what}");
        let first = reader.seek_record(&mut buffer, count - 3).expect("seek");
        assert_eq!(
            numbers(&mut reader, &mut buffer, first, usize::MAX),
            (count - 3..count).collect::<Vec<_>>(),
            "{what}"
        );
    };
    check(&mut flash, "torn at the end");
    // Reopened: the resume marker after the torn bytes; then more records.
    fill(&mut flash, config, count, count + 5, 100);
    let mut reader = WordReader::open(&mut flash, config).expect("open");
    let mut buffer = [0u8; 4096];
    let first = reader.seek_newest(&mut buffer, 7).expect("seek");
    // The torn record took a number when it was begun: the newest 7 begun are the torn one
    // (not read) and the 5 after it, and the one before it.
    let read = numbers(&mut reader, &mut buffer, first, usize::MAX);
    assert_eq!(read.last(), Some(&(count + 4)), "{read:?}");
    assert!(read.len() >= 6, "{read:?}");
}

#[test]
fn a_bounded_log_seeks_from_its_start() {
    let mut memory = Memory::new(4);
    let config = FlashConfig::new(0, memory.bytes.len() as u32);
    let mut flash = memory.flash();
    fill(&mut flash, config, 0, 500, 30);
    let mut reader = WordReader::open(&mut flash, config).expect("open");
    let mut buffer = [0u8; 64];
    let first = reader.seek_record(&mut buffer, 321).expect("seek");
    assert_eq!(numbers(&mut reader, &mut buffer, first, 2), [321, 322]);
    let first = reader.seek_newest(&mut buffer, 3).expect("seek");
    assert_eq!(
        numbers(&mut reader, &mut buffer, first, usize::MAX),
        [497, 498, 499]
    );
    let item = reader.seek_key(&mut buffer, &1234, time).expect("seek");
    assert!(matches!(item, Some(FlashItem::Record { len, .. }) if number(&buffer[..len]) == 124));
}

#[cfg(feature = "embedded-storage-async")]
#[test]
fn the_async_reader_seeks_as_the_blocking_one() {
    use super::AsyncWordReader;
    let mut memory = Memory::new(16);
    let mut flash = memory.flash();
    let (config, count) = wrapped_ring(&mut flash);
    embassy_futures::block_on(async {
        let mut reader = AsyncWordReader::open(&mut flash, config)
            .await
            .expect("open");
        let oldest = reader.aged_out_records().expect("a ring");
        let mut buffer = [0u8; 256];
        let number_of = |item: Option<FlashItem>, buffer: &[u8]| match item {
            Some(FlashItem::Record { len, .. }) => Some(number(&buffer[..len])),
            _ => None,
        };
        let item = reader
            .seek_record(&mut buffer, oldest + 100)
            .await
            .expect("seek");
        assert_eq!(number_of(item, &buffer), Some(oldest + 100));
        let item = reader.seek_newest(&mut buffer, 2).await.expect("seek");
        assert_eq!(number_of(item, &buffer), Some(count - 2));
        let item = reader.next(&mut buffer).await.expect("reads");
        assert_eq!(number_of(item, &buffer), Some(count - 1));
        let item = reader.next(&mut buffer).await.expect("reads");
        assert_eq!(item, None);
    });
    let mut buffer = [0u8; 256];
    let mut reader =
        embassy_futures::block_on(AsyncWordReader::open(&mut flash, config)).expect("open");
    let item = embassy_futures::block_on(reader.seek_key(&mut buffer, &((count - 50) * 10), time))
        .expect("seek");
    assert!(
        matches!(item, Some(FlashItem::Record { len, .. }) if number(&buffer[..len]) == count - 50)
    );
}
