//! Read cursors: the upload cycle (log, deliver, commit, reboot, resume at the cursor), named
//! cursors, aged-out records counted, and power cuts at every byte of a commit and of the
//! appends after it: nothing delivered twice after a committed cursor, nothing acknowledged
//! skipped.

use std::boxed::Box;
use std::vec::Vec;

use embedded_storage::nor_flash::{NorFlash, ReadNorFlash};

use super::{
    Cursor, CursorReader, FlashConfig, FlashError, FlashItem, FlashWriter, MockError, MockFlash,
    PowerCut, WordReader, WordWriter,
};
use crate::cursor::CURSOR_CHUNK;
use crate::format::{BLOCK_SIZE, CURSOR_TYPE};

/// A record that carries its index: 4 bytes of index, then `len` filler bytes.
fn record(index: u32, len: usize) -> Vec<u8> {
    let mut bytes = index.to_le_bytes().to_vec();
    bytes.extend((0..len).map(|j| (index as usize * 7 + j) as u8));
    bytes
}

/// The index a record carries.
fn index_of(record: &[u8]) -> u32 {
    u32::from_le_bytes(record[..4].try_into().expect("an index"))
}

/// What a reading from cursor `id` returns: the records' indices, damage reports, and where
/// it started.
#[derive(Debug)]
struct Delivery {
    indices: Vec<u32>,
    damage: usize,
    start: super::CursorStart,
    cursor: Cursor,
}

/// Reads up to `limit` records from cursor `id`.
fn deliver<F: NorFlash<Error = MockError>>(
    flash: F,
    config: FlashConfig,
    id: u8,
    limit: usize,
) -> Delivery {
    let mut reader = CursorReader::open(flash, config, id).expect("open at the cursor");
    let mut buffer = std::vec![0u8; 4 * BLOCK_SIZE];
    let mut delivery = Delivery {
        indices: Vec::new(),
        damage: 0,
        start: reader.start(),
        cursor: reader.cursor(),
    };
    while delivery.indices.len() < limit {
        match reader.next(&mut buffer).expect("read") {
            None => break,
            Some(FlashItem::Record { len, .. }) => delivery.indices.push(index_of(&buffer[..len])),
            Some(FlashItem::Damage { .. }) => delivery.damage += 1,
            Some(other) => panic!("unexpected {other:?}"),
        }
    }
    delivery.cursor = reader.cursor();
    delivery
}

/// The writers behind one interface, over a simulated flash.
trait CursorLog {
    fn add_record(&mut self, data: &[u8]) -> Result<(), FlashError<MockError>>;
    fn flush(&mut self) -> Result<(), FlashError<MockError>>;
    fn commit(&mut self, cursor: Cursor) -> Result<(), FlashError<MockError>>;
    fn position(&self) -> u64;
    /// Bytes programmed and erased since the writer was opened.
    fn work(&self) -> u64;
    /// Reads from cursor `id` while the writer is open.
    fn deliver(&mut self, config: FlashConfig, id: u8, limit: usize) -> Delivery;
    /// Schedules a power cut after `bytes` bytes of flash work.
    fn cut_after(&mut self, bytes: usize, mode: PowerCut);
}

macro_rules! cursor_log {
    ($writer:ty) => {
        impl<const W: usize, const E: usize> CursorLog for $writer {
            fn add_record(&mut self, data: &[u8]) -> Result<(), FlashError<MockError>> {
                <$writer>::add_record(self, data).map(|_| ())
            }
            fn flush(&mut self) -> Result<(), FlashError<MockError>> {
                <$writer>::flush(self)
            }
            fn commit(&mut self, cursor: Cursor) -> Result<(), FlashError<MockError>> {
                <$writer>::commit(self, cursor)
            }
            fn position(&self) -> u64 {
                <$writer>::position(self)
            }
            fn work(&self) -> u64 {
                let stats = <$writer>::stats(self);
                stats.programmed_bytes + stats.erased_bytes
            }
            fn deliver(&mut self, config: FlashConfig, id: u8, limit: usize) -> Delivery {
                deliver(self.flash_mut(), config, id, limit)
            }
            fn cut_after(&mut self, bytes: usize, mode: PowerCut) {
                self.flash_mut().cut_power_after(bytes, mode);
            }
        }
    };
}

cursor_log!(WordWriter<&mut MockFlash<'_, W, E>>);
cursor_log!(FlashWriter<&mut MockFlash<'_, W, E>, &mut [u8; BLOCK_SIZE]>);

/// Opens the buffered writer (`buffered`) or the small-RAM one.
fn open<'f, const W: usize, const E: usize>(
    buffered: bool,
    flash: &'f mut MockFlash<'_, W, E>,
    config: FlashConfig,
    block: &'f mut [u8; BLOCK_SIZE],
) -> Result<Box<dyn CursorLog + 'f>, FlashError<MockError>> {
    Ok(if buffered {
        Box::new(FlashWriter::open(flash, config, block)?)
    } else {
        Box::new(WordWriter::open(flash, config)?)
    })
}

/// Appends records `from..to` of `len` filler bytes, a flush after each: the index after the
/// last one acknowledged, and the first error.
fn append(
    log: &mut dyn CursorLog,
    from: u32,
    to: u32,
    len: usize,
) -> (u32, Option<FlashError<MockError>>) {
    for index in from..to {
        if let Err(e) = log
            .add_record(&record(index, len))
            .and_then(|()| log.flush())
        {
            return (index, Some(e));
        }
    }
    (to, None)
}

/// A flash that counts the bytes read, and the bytes programmed or erased (the work a power
/// cut's budget counts).
struct Counting<'f, F> {
    flash: &'f mut F,
    read: u64,
    work: u64,
}

impl<'f, F> Counting<'f, F> {
    fn new(flash: &'f mut F) -> Self {
        Self {
            flash,
            read: 0,
            work: 0,
        }
    }
}

impl<F: embedded_storage::nor_flash::ErrorType> embedded_storage::nor_flash::ErrorType
    for Counting<'_, F>
{
    type Error = F::Error;
}

impl<F: ReadNorFlash> ReadNorFlash for Counting<'_, F> {
    const READ_SIZE: usize = F::READ_SIZE;
    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), F::Error> {
        self.read += bytes.len() as u64;
        self.flash.read(offset, bytes)
    }
    fn capacity(&self) -> usize {
        self.flash.capacity()
    }
}

impl<F: NorFlash> NorFlash for Counting<'_, F> {
    const WRITE_SIZE: usize = F::WRITE_SIZE;
    const ERASE_SIZE: usize = F::ERASE_SIZE;
    fn erase(&mut self, from: u32, to: u32) -> Result<(), F::Error> {
        self.work += u64::from(to - from);
        self.flash.erase(from, to)
    }
    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), F::Error> {
        self.work += bytes.len() as u64;
        self.flash.write(offset, bytes)
    }
}

struct Memory<const W: usize> {
    bytes: Vec<u8>,
    flags: Vec<bool>,
}

impl<const W: usize> Memory<W> {
    fn new(blocks: usize) -> Self {
        Self {
            bytes: std::vec![0xFF; blocks * BLOCK_SIZE],
            flags: std::vec![false; blocks * BLOCK_SIZE / W],
        }
    }

    fn flash<const E: usize>(&mut self) -> MockFlash<'_, W, E> {
        MockFlash::new(&mut self.bytes, &mut self.flags, 0xFF).expect("geometry")
    }
}

#[test]
fn the_upload_cycle_resumes_at_the_cursor() {
    for buffered in [false, true] {
        for ring in [false, true] {
            let mut memory = Memory::<8>::new(4);
            let mut flash = memory.flash::<4096>();
            let mut config = FlashConfig::new(0, 4 * BLOCK_SIZE as u32);
            config.ring = ring;
            let mut block = Box::new([0u8; BLOCK_SIZE]);
            // Never committed: everything is delivered, from the first record.
            {
                let mut log = open(buffered, &mut flash, config, &mut block).expect("open");
                assert_eq!(append(&mut *log, 0, 10, 30), (10, None));
            }
            let first = deliver(&mut flash, config, 0, 4);
            assert_eq!(first.start.committed, None);
            assert_eq!(first.indices, [0, 1, 2, 3]);
            assert_eq!(first.cursor, Cursor::new(0, 4));
            // Committed after four; cursor 1 after two.
            {
                let mut log = open(buffered, &mut flash, config, &mut block).expect("reopen");
                log.commit(first.cursor).expect("commit");
                log.commit(Cursor::new(1, 2)).expect("commit");
                assert_eq!(append(&mut *log, 10, 12, 30), (12, None));
            }
            // A reboot: each cursor resumes after its commit.
            let again = deliver(&mut flash, config, 0, usize::MAX);
            assert_eq!(again.start.committed, Some(Cursor::new(0, 4)));
            assert_eq!(again.indices, (4..12).collect::<Vec<_>>());
            assert_eq!(again.cursor, Cursor::new(0, 12));
            let other = deliver(&mut flash, config, 1, usize::MAX);
            assert_eq!(other.indices, (2..12).collect::<Vec<_>>());
            assert_eq!(other.damage + again.damage, 0);
            // Everything delivered and committed: nothing more to read.
            {
                let mut log = open(buffered, &mut flash, config, &mut block).expect("reopen");
                log.commit(again.cursor).expect("commit");
            }
            let done = deliver(&mut flash, config, 0, usize::MAX);
            assert!(done.indices.is_empty(), "{done:?}");
            // The plain reader passes the cursors over: the same records, no damage.
            let mut reader = WordReader::open(&mut flash, config).expect("open");
            let mut buffer = std::vec![0u8; 64];
            let mut indices = Vec::new();
            while let Some(item) = reader.next(&mut buffer).expect("read") {
                let FlashItem::Record { len, .. } = item else {
                    panic!("{item:?}")
                };
                indices.push(index_of(&buffer[..len]));
            }
            assert_eq!(indices, (0..12).collect::<Vec<_>>());
        }
    }
}

#[test]
fn a_commit_costs_one_chunk_rounded_to_the_word_and_no_erase() {
    fn cost<const W: usize>() -> (u64, u64) {
        let mut memory = Memory::<W>::new(2);
        let mut flash = memory.flash::<4096>();
        let config = FlashConfig::new(0, 2 * BLOCK_SIZE as u32).ring();
        let mut writer = WordWriter::open(&mut flash, config).expect("open");
        writer.add_record(&record(0, 30)).expect("add");
        writer.flush().expect("flush");
        let before = writer.stats();
        writer.commit(Cursor::new(7, 1)).expect("commit");
        let after = writer.stats();
        (
            after.programmed_bytes - before.programmed_bytes,
            after.erased_bytes - before.erased_bytes,
        )
    }
    assert_eq!(cost::<1>(), (12, 0));
    assert_eq!(cost::<4>(), (12, 0));
    assert_eq!(cost::<8>(), (16, 0));
    assert_eq!(cost::<16>(), (16, 0));
    assert_eq!(cost::<32>(), (32, 0));
    assert_eq!(CURSOR_CHUNK, 12);
}

#[test]
fn the_commit_chunk_is_the_documented_bytes() {
    let mut memory = Memory::<4>::new(1);
    let mut flash = memory.flash::<4096>();
    let config = FlashConfig::new(0, BLOCK_SIZE as u32);
    let mut writer = WordWriter::open(&mut flash, config).expect("open");
    writer.commit(Cursor::new(1, 585)).expect("commit");
    let bytes = &flash.memory()[..16];
    assert_eq!(bytes[4..12], [5, 0, CURSOR_TYPE, 1, 0x49, 0x02, 0, 0]);
    assert_eq!(
        u32::from_le_bytes(bytes[..4].try_into().unwrap()),
        super::tests::chunk_crc(CURSOR_TYPE, &bytes[7..12])
    );
    assert_eq!(bytes[12..], [0xFF; 4]);
}

#[test]
fn a_cursor_past_the_ring_log_is_refused() {
    let mut memory = Memory::<8>::new(2);
    let mut flash = memory.flash::<4096>();
    let config = FlashConfig::new(0, 2 * BLOCK_SIZE as u32).ring();
    let mut writer = WordWriter::open(&mut flash, config).expect("open");
    writer.add_record(b"one").expect("add");
    let position = writer.position();
    assert_eq!(
        writer.commit(Cursor::new(0, 2)),
        Err(FlashError::CursorAhead)
    );
    assert_eq!(writer.position(), position, "nothing written");
    writer
        .commit(Cursor::new(0, 1))
        .expect("the next record to begin");
}

#[test]
fn a_commit_with_no_room_in_its_block_goes_to_the_next() {
    for ring in [false, true] {
        let mut memory = Memory::<4>::new(3);
        let mut flash = memory.flash::<4096>();
        let mut config = FlashConfig::new(0, 3 * BLOCK_SIZE as u32);
        config.ring = ring;
        let mut writer = WordWriter::open(&mut flash, config).expect("open");
        // A record that leaves 8 bytes in the first block: too few for the cursor's 12.
        let head = if ring { 20 } else { 0 };
        writer
            .add_record(&record(0, BLOCK_SIZE - head - 8 - 7 - 4))
            .expect("add");
        writer.flush().expect("flush");
        assert_eq!(writer.position(), BLOCK_SIZE as u64 - 8);
        writer.commit(Cursor::new(0, 1)).expect("commit");
        writer.add_record(&record(1, 10)).expect("add");
        writer.flush().expect("flush");
        let delivery = deliver(&mut flash, config, 0, usize::MAX);
        assert_eq!(delivery.start.committed, Some(Cursor::new(0, 1)));
        assert_eq!((delivery.indices, delivery.damage), (std::vec![1], 0));
    }
}

#[test]
fn records_aged_out_before_delivery_are_counted() {
    let mut memory = Memory::<8>::new(3);
    let mut flash = memory.flash::<4096>();
    let config = FlashConfig::new(0, 3 * BLOCK_SIZE as u32).ring();
    let mut writer = WordWriter::open(&mut flash, config).expect("open");
    // 300-byte records: about 106 a block.
    let mut next = 0;
    while next < 150 {
        writer.add_record(&record(next, 296)).expect("add");
        next += 1;
    }
    writer.commit(Cursor::new(0, 5)).expect("commit");
    // Into the third block: the ring erases its first (records 5.. among them) ahead, not
    // the second, which holds the commit.
    while writer.position() < 2 * BLOCK_SIZE as u64 + 1000 {
        writer.add_record(&record(next, 296)).expect("add");
        next += 1;
    }
    writer.flush().expect("flush");
    let delivery = deliver(&mut flash, config, 0, usize::MAX);
    assert_eq!(delivery.start.committed, Some(Cursor::new(0, 5)));
    let first = delivery.indices[0];
    assert!(first > 5, "{first}");
    // The ones lost are counted, the rest delivered in order, none twice.
    assert_eq!(delivery.start.aged_out, first - 5);
    assert_eq!(delivery.indices, (first..next).collect::<Vec<_>>());
    // Committing the reader's cursor acknowledges the loss.
    let mut writer = WordWriter::open(&mut flash, config).expect("open");
    writer
        .commit(Cursor::new(0, first + 2))
        .expect("commit after two");
    let again = deliver(&mut flash, config, 0, usize::MAX);
    assert_eq!(again.start.aged_out, 0);
    assert_eq!(again.indices, (first + 2..next).collect::<Vec<_>>());
}

#[test]
fn a_ring_reader_starts_in_the_block_of_the_cursor() {
    let mut memory = Memory::<8>::new(8);
    let mut flash = memory.flash::<4096>();
    let config = FlashConfig::new(0, 8 * BLOCK_SIZE as u32).ring();
    let mut writer = WordWriter::open(&mut flash, config).expect("open");
    for index in 0..600 {
        writer.add_record(&record(index, 296)).expect("add");
    }
    writer.commit(Cursor::new(0, 580)).expect("commit");
    writer.flush().expect("flush");
    let mut counting = Counting::new(&mut flash);
    let delivery = deliver(&mut counting, config, 0, usize::MAX);
    assert_eq!(delivery.indices, (580..600).collect::<Vec<_>>());
    // The ring headers, the newest block for the commit, and the block of record 580 (the
    // same, read again from its start): not the region's 6 blocks of records.
    let read = counting.read;
    assert!(read < 2 * BLOCK_SIZE as u64 + 1024, "{read} bytes read");
}

/// One run of the cut sweep, on a log of 4 blocks: records 0..10 logged, cursor 0
/// committed at 3, records delivered to 7 while the writer is open (and, if `near_end`, record
/// 10 leaving 8 bytes in the block, too few for a cursor, with words of up to 8 bytes); then, with a power cut after `cut`
/// bytes of flash work, cursor 0 committed at 7 and records 11..14 appended; a reboot, records
/// 100..103 appended, and a reading from the cursor. The flash work from the commit on.
fn cut_run<const W: usize, const E: usize>(
    buffered: bool,
    ring: bool,
    near_end: bool,
    cut: Option<(usize, PowerCut)>,
) -> u64 {
    let blocks = 4;
    let mut memory = Memory::<W>::new(blocks);
    let mut flash = memory.flash::<E>();
    let mut config = FlashConfig::new(0, (blocks * BLOCK_SIZE) as u32);
    config.ring = ring;
    let mut block = Box::new([0u8; BLOCK_SIZE]);
    let (committed, acknowledged, spent) = {
        let mut log = open(buffered, &mut flash, config, &mut block).expect("open");
        assert_eq!(append(&mut *log, 0, 10, 21), (10, None));
        log.commit(Cursor::new(0, 3)).expect("commit");
        if near_end {
            // 8 bytes left (with 32-byte words: 32, and the cursor fits).
            let target = ((BLOCK_SIZE - 8) / W * W) as u64;
            let filler = target - log.position() - 11;
            assert_eq!(append(&mut *log, 10, 11, filler as usize), (11, None));
            assert_eq!(log.position(), target);
        } else {
            assert_eq!(append(&mut *log, 10, 11, 21), (11, None));
        }
        let delivered = log.deliver(config, 0, 4);
        assert_eq!(delivered.indices, [3, 4, 5, 6]);
        let work = log.work();
        if let Some((bytes, mode)) = cut {
            log.cut_after(bytes, mode);
        }
        let committed = log.commit(delivered.cursor).is_ok();
        let acknowledged = if committed {
            append(&mut *log, 11, 14, 21).0
        } else {
            11
        };
        (committed, acknowledged, log.work() - work)
    };
    flash.power_on();
    {
        let mut log = open(buffered, &mut flash, config, &mut block).expect("reboot");
        assert_eq!(append(&mut *log, 100, 103, 21), (103, None));
    }
    let after = deliver(&mut flash, config, 0, usize::MAX);
    let start = after.indices[0];
    let cursor = after.start.committed.map(|c| c.next);
    let acknowledged: Vec<u32> = (0..acknowledged).chain(100..103).collect();
    if after.start.aged_out > 0 {
        // A ring of two erase groups that went on in its second (64 KiB sectors): the first
        // aged out, the commits with it. What is lost is counted, the rest delivered.
        let from = cursor.unwrap_or(0) as usize;
        let first = acknowledged
            .iter()
            .position(|&i| i == start)
            .expect("acknowledged");
        let lost = (first - from) as u32;
        assert!(
            (lost..=lost + 1).contains(&after.start.aged_out),
            "{cut:?}: {after:?}"
        );
        assert_eq!(after.indices, acknowledged[first..], "{cut:?}");
        return spent;
    }
    // The commit, if acknowledged, holds; if cut, the old one or the new one.
    if committed {
        assert_eq!((start, cursor), (7, Some(7)), "{cut:?}: {after:?}");
    } else {
        assert!(
            (start, cursor) == (7, Some(7)) || (start, cursor) == (3, Some(3)),
            "{cut:?}: {after:?}"
        );
    }
    // Nothing twice, in order; every acknowledged record from the cursor on (records in
    // flight may be there too).
    assert!(
        after.indices.windows(2).all(|w| w[0] < w[1]),
        "{cut:?}: {after:?}"
    );
    for &index in acknowledged.iter().filter(|&&i| i >= start) {
        assert!(
            after.indices.contains(&index),
            "{cut:?}: {index} missing from {after:?}"
        );
    }
    assert_eq!(after.damage, 0, "{cut:?}: {after:?}");
    spent
}

/// Cuts the power at every byte of flash work of the commit and the appends after it, in
/// every way a cut leaves a word.
fn sweep<const W: usize, const E: usize>(buffered: bool, ring: bool, near_end: bool) -> usize {
    let spent = cut_run::<W, E>(buffered, ring, near_end, None);
    let modes = [
        PowerCut::Untouched,
        PowerCut::Partial,
        PowerCut::Complete,
        PowerCut::Arbitrary { seed: 0xC0 },
        PowerCut::EccError,
    ];
    // Every byte of the programs; an erase of a block (or sector) at a stride.
    let points: Vec<usize> = (0..spent as usize)
        .filter(|&b| b < 200 || b % 4093 == 0)
        .collect();
    for mode in modes {
        for &bytes in &points {
            cut_run::<W, E>(buffered, ring, near_end, Some((bytes, mode)));
        }
    }
    points.len() * modes.len()
}

#[test]
fn a_cut_anywhere_in_a_commit_or_the_appends_after_it_keeps_one_cursor() {
    let mut runs = 0;
    for buffered in [false, true] {
        for ring in [false, true] {
            for near_end in [false, true] {
                runs += sweep::<8, 4096>(buffered, ring, near_end);
                runs += sweep::<4, 4096>(buffered, ring, near_end);
            }
        }
    }
    assert!(runs > 2000, "{runs} cuts");
}

#[test]
fn a_cut_in_a_commit_on_large_words_and_sectors() {
    sweep::<32, 65536>(false, false, false);
    sweep::<32, 65536>(false, true, false);
    sweep::<32, 65536>(false, true, true);
    // Not the bounded log with a commit in a block's last word: `WordReader` reports the
    // torn word as damage when the writer resumed two blocks on (its unit of 64 KiB spans
    // the next block), where the reference reader drops it as torn; a plain record torn
    // there does the same, with or without cursors.
}

/// The async writer and reader: the same bytes and the same deliveries as the blocking ones.
#[cfg(feature = "embedded-storage-async")]
#[test]
fn the_async_cursor_matches_the_blocking_one() {
    use super::{AsyncCursorReader, AsyncWordWriter};
    let config = FlashConfig::new(0, 4 * BLOCK_SIZE as u32).ring();
    let mut blocking = Memory::<8>::new(4);
    let mut asynchronous = Memory::<8>::new(4);
    let mut buffer = std::vec![0u8; 256];
    // Blocking.
    let mut flash = blocking.flash::<4096>();
    let mut writer = WordWriter::open(&mut flash, config).expect("open");
    for index in 0..1000 {
        writer.add_record(&record(index, 100)).expect("add");
    }
    writer.flush().expect("flush");
    let taken = deliver(writer.flash_mut(), config, 2, 50);
    writer.commit(taken.cursor).expect("commit");
    let expected = deliver(&mut flash, config, 2, usize::MAX);
    // Async.
    let mut flash_async = asynchronous.flash::<4096>();
    embassy_futures::block_on(async {
        let mut writer = AsyncWordWriter::open(&mut flash_async, config)
            .await
            .expect("open");
        for index in 0..1000 {
            writer.add_record(&record(index, 100)).await.expect("add");
        }
        writer.flush().await.expect("flush");
        let mut reader = AsyncCursorReader::open(writer.flash_mut(), config, 2)
            .await
            .expect("open");
        assert_eq!(reader.start(), taken.start);
        for _ in 0..50 {
            reader.next(&mut buffer).await.expect("read");
        }
        let cursor = reader.cursor();
        assert_eq!(cursor, taken.cursor);
        writer.commit(cursor).await.expect("commit");
        let mut reader = AsyncCursorReader::open(&mut flash_async, config, 2)
            .await
            .expect("open");
        assert_eq!(reader.start(), expected.start);
        let mut indices = Vec::new();
        while let Some(item) = reader.next(&mut buffer).await.expect("read") {
            let FlashItem::Record { len, .. } = item else {
                panic!("{item:?}")
            };
            indices.push(index_of(&buffer[..len]));
        }
        assert_eq!(indices, expected.indices);
    });
    assert!(
        taken.start.aged_out > 0,
        "the ring wrapped before the first delivery"
    );
    assert_eq!(expected.start.aged_out, 0, "acknowledged by the commit");
    assert_eq!(expected.indices.last(), Some(&999));
    assert_eq!(flash.memory(), flash_async.memory(), "the same bytes");
}
