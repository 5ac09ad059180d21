//! Tests of the flash log against the simulated flash: the exact layout (word-exact padding,
//! erased trailers, where a reopened log resumes, the resume marker) and power cuts at every
//! point of scripted runs. Images are read back with the reference reader
//! ([`reference`](super::reference)), which implements the flash read rules independently of
//! the library's decoder.

use std::boxed::Box;
use std::vec::Vec;

use embedded_storage::nor_flash::{ErrorType, NorFlash, ReadNorFlash};

use super::reference::{self, Event};
use super::{
    FlashConfig, FlashError, FlashStats, FlashWriter, MockError, MockFlash, PowerCut, RESUME_TYPE,
    WordWriter,
};
use crate::format::BLOCK_SIZE;
use crate::writer::Written;

const WRITE: usize = 8;
const ERASE: usize = 4096;
type Flash<'a> = MockFlash<'a, WRITE, ERASE>;

/// The memory of a simulated flash of `WRITE`-byte words.
pub(super) struct Memory<const W: usize = WRITE> {
    pub(super) bytes: Vec<u8>,
    flags: Vec<bool>,
}

impl<const W: usize> Memory<W> {
    pub(super) fn new(blocks: usize) -> Self {
        Self {
            bytes: std::vec![0u8; blocks * BLOCK_SIZE],
            flags: std::vec![false; blocks * BLOCK_SIZE / W],
        }
    }

    pub(super) fn flash<const E: usize>(&mut self) -> MockFlash<'_, W, E> {
        MockFlash::new(&mut self.bytes, &mut self.flags, 0xFF).expect("geometry")
    }
}

pub(super) fn config(blocks: u32) -> FlashConfig {
    FlashConfig::new(0, blocks * BLOCK_SIZE as u32)
}

/// The two flash writers, behind one interface for the tests that run both.
pub(super) trait LogWriter {
    fn add_record(&mut self, data: &[u8]) -> Result<Written, FlashError<MockError>>;
    fn add_pack(&mut self, pack: &[u8]) -> Result<Written, FlashError<MockError>>;
    fn flush(&mut self) -> Result<(), FlashError<MockError>>;
    fn position(&self) -> u64;
    fn stats(&self) -> FlashStats;
}

impl<F: NorFlash<Error = MockError>> LogWriter for FlashWriter<F, &mut [u8; BLOCK_SIZE]> {
    fn add_record(&mut self, data: &[u8]) -> Result<Written, FlashError<MockError>> {
        FlashWriter::add_record(self, data)
    }
    fn add_pack(&mut self, pack: &[u8]) -> Result<Written, FlashError<MockError>> {
        FlashWriter::add_pack(self, pack)
    }
    fn flush(&mut self) -> Result<(), FlashError<MockError>> {
        FlashWriter::flush(self)
    }
    fn position(&self) -> u64 {
        FlashWriter::position(self)
    }
    fn stats(&self) -> FlashStats {
        FlashWriter::stats(self)
    }
}

impl<F: NorFlash<Error = MockError>> LogWriter for WordWriter<F> {
    fn add_record(&mut self, data: &[u8]) -> Result<Written, FlashError<MockError>> {
        WordWriter::add_record(self, data)
    }
    fn add_pack(&mut self, pack: &[u8]) -> Result<Written, FlashError<MockError>> {
        WordWriter::add_pack(self, pack)
    }
    fn flush(&mut self) -> Result<(), FlashError<MockError>> {
        WordWriter::flush(self)
    }
    fn position(&self) -> u64 {
        WordWriter::position(self)
    }
    fn stats(&self) -> FlashStats {
        WordWriter::stats(self)
    }
}

/// Which flash writer a test runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// [`FlashWriter`], with its RAM block.
    Buffered,
    /// [`WordWriter`].
    Word,
}

pub(super) const KINDS: [Kind; 2] = [Kind::Buffered, Kind::Word];

/// Opens the log with the writer `kind` (`block` is the buffered writer's RAM block).
pub(super) fn open<'f, F: NorFlash<Error = MockError> + 'f>(
    kind: Kind,
    flash: F,
    config: FlashConfig,
    block: &'f mut [u8; BLOCK_SIZE],
) -> Result<Box<dyn LogWriter + 'f>, FlashError<MockError>> {
    Ok(match kind {
        Kind::Buffered => Box::new(FlashWriter::open(flash, config, block)?),
        Kind::Word => Box::new(WordWriter::open(flash, config)?),
    })
}

/// A chunk's masked CRC-32C, for the reference reader: computed with the `crc32c` crate, not
/// the library's checksum, and masked as LevelDB masks.
pub(super) fn chunk_crc(kind: u8, payload: &[u8]) -> u32 {
    let crc = crc32c::crc32c_append(crc32c::crc32c(&[kind]), payload);
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// What the reference reader makes of an image.
#[derive(Debug, Default)]
pub(super) struct Read {
    /// The records, in order, and where each starts.
    pub(super) records: Vec<Vec<u8>>,
    pub(super) offsets: Vec<usize>,
    /// Where damage is reported.
    pub(super) damage: Vec<usize>,
    /// Torn writes dropped silently (before a resume marker).
    pub(super) torn: usize,
    /// The image ends in a torn write.
    pub(super) torn_tail: bool,
}

/// Reads a flash image with the reference reader.
pub(super) fn read_image(image: &[u8], erased: u8, word: usize) -> Read {
    let mut scratch = std::vec![0u8; 1 << 18];
    let mut read = Read::default();
    reference::walk(
        image,
        erased,
        word,
        chunk_crc,
        &mut scratch,
        |event| match event {
            Event::Record { offset, data } => {
                read.records.push(data.to_vec());
                read.offsets.push(offset);
            }
            Event::Damage { offset } => read.damage.push(offset),
            Event::Torn { .. } => read.torn += 1,
            Event::TornTail { .. } => read.torn_tail = true,
            Event::Oversized { offset } => panic!("oversized record at {offset}"),
        },
    );
    read
}

/// Reads the region of a flash of `W`-byte words (erased value 0xFF).
pub(super) fn read_all<const W: usize, const E: usize>(
    flash: &MockFlash<'_, W, E>,
    config: FlashConfig,
) -> Read {
    let region = config.start as usize..(config.start + config.len) as usize;
    read_image(&flash.memory()[region], 0xFF, W)
}

/// The scripted run: deterministic records of assorted sizes, some fragmenting.
pub(super) fn script(count: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut x = seed | 1;
    (0..count)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = match x % 10 {
                0 => 0,
                1 => (x >> 8) as usize % 40_000,
                _ => (x >> 8) as usize % 300,
            };
            (0..len).map(|j| (i * 31 + j * 7) as u8 ^ 0x5a).collect()
        })
        .collect()
}

/// Logs `records` with a flush after each `batch`, stopping at the first error. Returns the
/// acknowledged records and the ones in flight (laid out but not acknowledged).
pub(super) fn log(
    writer: &mut dyn LogWriter,
    records: &[Vec<u8>],
    batch: usize,
) -> (usize, usize, Option<FlashError<MockError>>) {
    let mut acknowledged = 0;
    let mut pending = 0;
    for (i, record) in records.iter().enumerate() {
        if let Err(e) = writer.add_record(record) {
            return (acknowledged, pending + 1, Some(e));
        }
        pending += 1;
        if (i + 1) % batch == 0 || i + 1 == records.len() {
            if let Err(e) = writer.flush() {
                return (acknowledged, pending, Some(e));
            }
            acknowledged += pending;
            pending = 0;
        }
    }
    (acknowledged, pending, None)
}

/// Every way a power cut can leave the word (or unit) in flight; `Arbitrary` seeded by `i`.
fn cut_modes(i: usize) -> [PowerCut; 4] {
    [
        PowerCut::Untouched,
        PowerCut::Partial,
        PowerCut::Complete,
        PowerCut::Arbitrary {
            seed: 0x9E37_79B9 ^ i as u64,
        },
    ]
}

fn expected_power_cut(e: &FlashError<MockError>, what: &str) {
    assert!(
        matches!(e, FlashError::Flash(MockError::PowerCut) | FlashError::Full),
        "{what}: {e:?}"
    );
}

/// A flash that records the work of each operation (bytes programmed or erased, as the mock
/// counts them for its power cuts), to place cuts at the edges of operations.
struct Recording<'r, F> {
    flash: F,
    ops: &'r mut Vec<(bool, usize)>,
}

impl<F: ErrorType> ErrorType for Recording<'_, F> {
    type Error = F::Error;
}

impl<F: ReadNorFlash> ReadNorFlash for Recording<'_, F> {
    const READ_SIZE: usize = F::READ_SIZE;
    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), F::Error> {
        self.flash.read(offset, bytes)
    }
    fn capacity(&self) -> usize {
        self.flash.capacity()
    }
}

impl<F: NorFlash> NorFlash for Recording<'_, F> {
    const WRITE_SIZE: usize = F::WRITE_SIZE;
    const ERASE_SIZE: usize = F::ERASE_SIZE;
    fn erase(&mut self, from: u32, to: u32) -> Result<(), F::Error> {
        self.ops.push((true, (to - from) as usize));
        self.flash.erase(from, to)
    }
    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), F::Error> {
        self.ops.push((false, bytes.len()));
        self.flash.write(offset, bytes)
    }
}

// ---- the layout

/// `n`-byte records flushed one at a time cost `roundup(7 + n, W)` bytes each; the rest of
/// the last word stays erased, and the reference reader reads them back.
fn word_exact<const W: usize>(kind: Kind, n: usize, expected: usize) {
    let mut memory = Memory::<W>::new(1);
    let mut flash = memory.flash::<ERASE>();
    let mut block = [0u8; BLOCK_SIZE];
    let records: Vec<Vec<u8>> = (0..20).map(|i| std::vec![i as u8 | 0x40; n]).collect();
    {
        let mut writer = open(kind, &mut flash, config(1), &mut block).expect("open");
        for (i, record) in records.iter().enumerate() {
            let written = writer.add_record(record).expect("add");
            assert_eq!(written.offset, (i * expected) as u64, "W = {W}, {n} B");
            assert_eq!(written.end, (i * expected + 7 + n) as u64);
            writer.flush().expect("flush");
            assert_eq!(writer.position(), ((i + 1) * expected) as u64);
        }
    }
    let image = flash.memory();
    for i in 0..records.len() {
        let padding = &image[i * expected + 7 + n..(i + 1) * expected];
        assert!(
            padding.iter().all(|&b| b == 0xFF),
            "W = {W}: padding erased"
        );
    }
    let read = read_all(&flash, config(1));
    assert_eq!(read.records, records);
    assert_eq!(
        (read.damage.len(), read.torn, read.torn_tail),
        (0, 0, false)
    );
}

#[test]
fn a_durable_record_costs_what_the_flash_word_forces() {
    // roundup(7 + n, W): 16 B: 24/24/32/32, 30 B: 40/40/48/64, 100 B: 108/112/112/128.
    for kind in KINDS {
        for (n, costs) in [
            (16, [24, 24, 32, 32]),
            (30, [40, 40, 48, 64]),
            (100, [108, 112, 112, 128]),
        ] {
            word_exact::<4>(kind, n, costs[0]);
            word_exact::<8>(kind, n, costs[1]);
            word_exact::<16>(kind, n, costs[2]);
            word_exact::<32>(kind, n, costs[3]);
        }
    }
}

#[test]
fn records_between_flushes_follow_each_other() {
    for kind in KINDS {
        let mut memory = Memory::<WRITE>::new(1);
        let mut flash: Flash<'_> = memory.flash();
        let mut block = [0u8; BLOCK_SIZE];
        let mut writer = open(kind, &mut flash, config(1), &mut block).expect("open");
        let a = writer.add_record(&[1; 10]).expect("add");
        let b = writer.add_record(&[2; 11]).expect("add");
        writer.flush().expect("flush");
        let c = writer.add_record(&[3; 12]).expect("add");
        assert_eq!((a.offset, a.end, b.offset, b.end), (0, 17, 17, 35));
        assert_eq!(
            (c.offset, c.end),
            (40, 59),
            "{kind:?}: after the flush, at the word"
        );
    }
}

#[test]
fn the_block_trailer_stays_erased() {
    for kind in KINDS {
        let mut memory = Memory::<WRITE>::new(2);
        let mut flash: Flash<'_> = memory.flash();
        let mut block = [0u8; BLOCK_SIZE];
        // A chunk ending 3 bytes before the block's end, then a record: it starts in the next
        // block; and a flush that leaves 5 bytes after the word boundary: the same.
        let first = std::vec![7u8; BLOCK_SIZE - 7 - 3];
        {
            let mut writer = open(kind, &mut flash, config(2), &mut block).expect("open");
            assert_eq!(
                writer.add_record(&first).expect("add").end,
                BLOCK_SIZE as u64 - 3
            );
            let next = writer.add_record(b"next").expect("add");
            assert_eq!(next.offset, BLOCK_SIZE as u64);
            let fill = std::vec![8u8; BLOCK_SIZE - 31];
            let end = writer.add_record(&fill).expect("add").end;
            assert_eq!(end, 2 * BLOCK_SIZE as u64 - 13);
            writer.flush().expect("flush");
            // 13 bytes were left: the flush leaves 5 of them to the word boundary, then 8.
            assert_eq!(writer.position(), 2 * BLOCK_SIZE as u64 - 8);
            assert!(matches!(writer.add_record(b"x"), Ok(w) if w.end == 2 * BLOCK_SIZE as u64));
            writer.flush().expect("flush");
        }
        let image = flash.memory();
        assert!(
            image[BLOCK_SIZE - 3..BLOCK_SIZE].iter().all(|&b| b == 0xFF),
            "{kind:?}"
        );
        let read = read_all(&flash, config(2));
        assert_eq!(read.records.len(), 4);
        assert_eq!(read.records[1], b"next");
        assert!(read.damage.is_empty() && !read.torn_tail);
    }
}

#[test]
fn open_empty_write_read_reopen() {
    for kind in KINDS {
        let mut memory = Memory::<WRITE>::new(16);
        let mut flash: Flash<'_> = memory.flash();
        let config = config(16);
        let mut block = [0u8; BLOCK_SIZE];
        let records = script(60, 7);
        let mut writer = open(kind, &mut flash, config, &mut block).expect("open");
        assert_eq!(writer.position(), 0, "an empty region starts at 0");
        let (ack, _, err) = log(&mut *writer, &records[..30], 1);
        assert_eq!((ack, err), (30, None));
        let position = writer.position();
        assert_eq!(position % WRITE as u64, 0);
        drop(writer);
        // A reopening after a flush costs one word; reopening again without writing, nothing.
        for _ in 0..2 {
            let writer = open(kind, &mut flash, config, &mut block).expect("reopen");
            assert_eq!(writer.position(), position + WRITE as u64, "{kind:?}");
        }
        let mut writer = open(kind, &mut flash, config, &mut block).expect("reopen");
        let (ack, _, err) = log(&mut *writer, &records[30..], 4);
        assert_eq!((ack, err), (30, None));
        drop(writer);
        let read = read_all(&flash, config);
        assert_eq!(read.records, records);
        assert_eq!(
            (read.damage.len(), read.torn, read.torn_tail),
            (0, 0, false)
        );
    }
}

/// A flushed 30-byte record `a` at 0, then a record `b` of `b_len` bytes whose flush is cut
/// after `cut` bytes of programming (`mode`); then a reopening. Returns the flash bytes after
/// the cut, where the reopened writer puts its next record, and the flash bytes after it
/// logged `c` (16 bytes) and flushed.
fn torn<const W: usize>(
    kind: Kind,
    b_len: usize,
    cut: usize,
    mode: PowerCut,
) -> (Vec<u8>, u64, Vec<u8>) {
    let (a, b, c) = ([0x11u8; 30], std::vec![0x22u8; b_len], [0x33u8; 16]);
    let mut memory = Memory::<W>::new(2);
    let mut flash = memory.flash::<ERASE>();
    let mut block = [0u8; BLOCK_SIZE];
    // The work before `b`'s flush: the block's erase and `a`.
    flash.cut_power_after(BLOCK_SIZE + 40usize.next_multiple_of(W) + cut, mode);
    {
        let mut writer = open(kind, &mut flash, config(2), &mut block).expect("open");
        writer.add_record(&a).expect("add");
        writer.flush().expect("flush");
        let cut = writer.add_record(&b).and_then(|_| writer.flush());
        assert_eq!(cut, Err(FlashError::Flash(MockError::PowerCut)));
    }
    flash.power_on();
    let after_cut = flash.memory().to_vec();
    let position = {
        let mut writer = open(kind, &mut flash, config(2), &mut block).expect("reopen");
        let position = writer.position();
        assert_eq!(writer.add_record(&c).expect("add").offset, position);
        writer.flush().expect("flush");
        position
    };
    let read = read_all(&flash, config(2));
    assert_eq!(read.records, [&a[..], &c[..]], "{kind:?} W = {W} cut {cut}");
    assert!(
        read.damage.is_empty() && !read.torn_tail,
        "{kind:?} W = {W} cut {cut}"
    );
    (after_cut, position, flash.memory().to_vec())
}

fn marker_at(image: &[u8], at: usize) -> bool {
    let marker = &image[at..at + 7];
    marker[4..] == [0, 0, RESUME_TYPE] && marker[..4] == chunk_crc(RESUME_TYPE, &[]).to_le_bytes()
}

#[test]
fn a_torn_record_is_followed_by_a_resume_marker() {
    for kind in KINDS {
        // `b` (100 bytes, a 107-byte chunk at 40) cut after 40 of its bytes: the word in
        // flight is inside the chunk, so the log resumes past the end its header declares,
        // 147 rounded up to the word, 152; the marker there, the next record after it.
        let (cut, position, image) = torn::<8>(kind, 100, 40, PowerCut::Partial);
        assert!(cut[40..80].iter().all(|&b| b != 0xFF) && cut[80..].iter().all(|&b| b == 0xFF));
        assert_eq!(position, 152 + 7, "{kind:?}");
        assert!(marker_at(&image, 152), "{kind:?}");
        // `b` cut after 3 bytes of its header: its length is unreadable; the log resumes a word
        // after the word in flight.
        let (_, position, image) = torn::<8>(kind, 100, 3, PowerCut::Partial);
        assert_eq!(position, 48 + 8 + 7, "{kind:?}");
        assert!(marker_at(&image, 56));
        // `b` (10 bytes, the chunk 40..57) cut after 12 bytes, in its second word: the log
        // resumes at roundup(52, 8) + 8 = 64, which is also past the chunk's declared end.
        let (_, position, image) = torn::<8>(kind, 10, 12, PowerCut::Partial);
        assert_eq!(position, 64 + 7, "{kind:?}");
        assert!(marker_at(&image, 64));
        // At W = 32 `a` takes 0..64, `b` the chunk 64..81, cut after 10 bytes: roundup(74, 32)
        // + 32 = 128.
        let (_, position, image) = torn::<32>(kind, 10, 10, PowerCut::Partial);
        assert_eq!(position, 128 + 7, "{kind:?}");
        assert!(marker_at(&image, 128));
    }
}

#[test]
fn a_word_caught_at_the_start_of_its_programming_is_never_programmed_again() {
    // The cut at the very start of `b`'s first word: it reads erased but is unprogrammable
    // (the mock's per-word ECC). The log resumes one word later: no marker (nothing of `b`
    // is on the flash), and the next record programs fine.
    for kind in KINDS {
        let (cut, position, image) = torn::<8>(kind, 100, 0, PowerCut::Partial);
        assert!(cut[40..].iter().all(|&b| b == 0xFF));
        assert_eq!(position, 48, "{kind:?}");
        assert!(image[40..48].iter().all(|&b| b == 0xFF));
    }
}

#[test]
fn reopening_after_a_torn_write_without_writing_changes_nothing() {
    // The marker is laid out with the first record after the reopening: reopening again
    // before that finds the same place.
    for kind in KINDS {
        let mut memory = Memory::<4>::new(1);
        let mut flash = memory.flash::<ERASE>();
        let mut block = [0u8; BLOCK_SIZE];
        flash.cut_power_after(BLOCK_SIZE + 40 + 20, PowerCut::Partial);
        {
            let mut writer = open(kind, &mut flash, config(1), &mut block).expect("open");
            writer.add_record(&[1; 30]).expect("add");
            writer.flush().expect("flush");
            let cut = writer.add_record(&[2; 100]).and_then(|_| writer.flush());
            assert!(cut.is_err());
        }
        flash.power_on();
        let before = flash.memory().to_vec();
        let positions: Vec<u64> = (0..3)
            .map(|_| {
                let writer = open(kind, &mut flash, config(1), &mut block).expect("reopen");
                writer.position()
            })
            .collect();
        assert_eq!(positions, [148 + 7; 3], "{kind:?}");
        assert!(flash.memory() == &before[..]);
        // A flush alone writes the marker.
        let mut writer = open(kind, &mut flash, config(1), &mut block).expect("reopen");
        writer.flush().expect("flush");
        assert_eq!(writer.position(), 148 + 8);
        drop(writer);
        assert!(marker_at(flash.memory(), 148));
        let writer = open(kind, &mut flash, config(1), &mut block).expect("reopen");
        assert_eq!(writer.position(), 148 + 8 + 4, "a clean end now");
    }
}

#[test]
fn a_record_cut_off_at_a_block_end_gets_a_marker_in_the_next_block() {
    // `b` fills block 0 with its `FIRST` chunk; the power fails while block 1 is erased, so
    // its `LAST` chunk never comes. The reopened log continues at block 1 (erased again), the
    // marker first: readers drop `b` silently.
    for kind in KINDS {
        let mut memory = Memory::<WRITE>::new(2);
        let mut flash: Flash<'_> = memory.flash();
        let mut block = [0u8; BLOCK_SIZE];
        let (a, b, c) = ([1u8; 30], std::vec![2u8; 40_000], [3u8; 20]);
        // Erase of block 0, `a` (40 bytes) and the rest of block 0, then into block 1's erase.
        flash.cut_power_after(2 * BLOCK_SIZE + 1000, PowerCut::Partial);
        {
            let mut writer = open(kind, &mut flash, config(2), &mut block).expect("open");
            writer.add_record(&a).expect("add");
            writer.flush().expect("flush");
            // (The writer tries the next erase units while the power is off, and finds `b` no
            // longer fits after them.)
            let cut = writer.add_record(&b).and_then(|_| writer.flush());
            assert!(
                matches!(
                    cut,
                    Err(FlashError::Flash(MockError::PowerCut) | FlashError::Full)
                ),
                "{kind:?}: {cut:?}"
            );
        }
        flash.power_on();
        let mut writer = open(kind, &mut flash, config(2), &mut block).expect("reopen");
        assert_eq!(writer.position(), BLOCK_SIZE as u64 + 7, "{kind:?}");
        writer.add_record(&c).expect("add");
        writer.flush().expect("flush");
        drop(writer);
        assert!(marker_at(flash.memory(), BLOCK_SIZE));
        let read = read_all(&flash, config(2));
        assert_eq!(read.records, [&a[..], &c[..]], "{kind:?}");
        assert_eq!(
            (read.damage.len(), read.torn, read.torn_tail),
            (0, 1, false)
        );
    }
}

#[test]
fn a_checksum_that_begins_with_an_erased_byte_is_not_padding() {
    // A chunk right after another (no flush between) at the last byte of a word, its checksum
    // beginning with 0xFF: the erased-looking byte could be flush padding before a chunk at
    // the next word boundary. The reopened log reads it as the chunk it is: a clean end, no
    // marker.
    let second = (0u32..)
        .map(|k| k.to_le_bytes().repeat(5))
        .find(|data| super::layout::header(crate::FragmentKind::Full, false, data)[0] == 0xFF)
        .expect("one in 256");
    for kind in KINDS {
        let mut memory = Memory::<WRITE>::new(1);
        let mut flash: Flash<'_> = memory.flash();
        let mut block = [0u8; BLOCK_SIZE];
        let first = [7u8; 8]; // its chunk is 0..15: the next starts at the word's last byte
        {
            let mut writer = open(kind, &mut flash, config(1), &mut block).expect("open");
            writer.add_record(&first).expect("add");
            let at = writer.add_record(&second).expect("add");
            assert_eq!((at.offset, at.end), (15, 15 + 7 + 20));
            writer.flush().expect("flush");
        }
        assert_eq!(flash.memory()[15], 0xFF);
        let writer = open(kind, &mut flash, config(1), &mut block).expect("reopen");
        assert_eq!(writer.position(), 48 + 8, "{kind:?}: a clean end at 42");
        drop(writer);
        let read = read_all(&flash, config(1));
        assert_eq!(read.records, [&first[..], &second[..]]);
    }
}

// ---- power cuts

/// One run with a power cut after `cut` bytes of flash work: checks what survives, then that
/// logging goes on correctly after the reboot.
fn run_with_cut(
    memory: &mut Memory,
    kind: Kind,
    blocks: u32,
    records: &[Vec<u8>],
    batch: usize,
    (cut, mode): (usize, PowerCut),
) {
    let config = config(blocks);
    let mut flash: Flash<'_> = memory.flash();
    flash.cut_power_after(cut, mode);
    let mut block = [0u8; BLOCK_SIZE];
    let (acknowledged, in_flight, error) = {
        let mut writer = open(kind, &mut flash, config, &mut block).expect("open");
        log(&mut *writer, records, batch)
    };
    if let Some(e) = &error {
        expected_power_cut(e, &std::format!("cut {cut}"));
    }
    flash.power_on();
    // After the reboot: exactly the acknowledged records, plus possibly some in flight.
    let read = read_all(&flash, config);
    let survived = read.records.len();
    assert!(
        survived >= acknowledged && survived <= acknowledged + in_flight,
        "{kind:?} cut {cut} ({mode:?}): read {survived} records, acknowledged {acknowledged}, in flight {in_flight}",
    );
    assert_eq!(
        read.records[..],
        records[..survived],
        "cut {cut} ({mode:?})"
    );
    assert_eq!(read.damage, [], "cut {cut} ({mode:?}): damage reported");
    // Logging goes on after the reboot, and nothing before is lost.
    let more: Vec<Vec<u8>> = (0..3)
        .map(|i| std::vec![0xa0 + i; 50 + usize::from(i) * 20])
        .collect();
    let mut writer = open(kind, &mut flash, config, &mut block).expect("reopen");
    for r in &more {
        match writer.add_record(r) {
            Ok(_) => {}
            Err(FlashError::Full) => return,
            Err(e) => panic!("cut {cut} ({mode:?}): {e:?}"),
        }
    }
    match writer.flush() {
        Ok(()) | Err(FlashError::Full) => {}
        Err(e) => panic!("cut {cut}: {e:?}"),
    }
    drop(writer);
    let after = read_all(&flash, config);
    assert_eq!(
        after.records[..survived],
        read.records[..],
        "cut {cut} ({mode:?})"
    );
    assert_eq!(after.records[survived..], more[..], "cut {cut} ({mode:?})");
    assert_eq!(
        (after.damage.len(), after.torn_tail),
        (0, false),
        "cut {cut} ({mode:?}): damage or a torn end after the reboot"
    );
}

#[test]
fn power_cut_at_every_point_of_a_small_run() {
    // A short run inside one block (small records, a flush after each), every cut point and
    // every way the word in flight can be left.
    let records: Vec<Vec<u8>> = (0..12).map(|i| std::vec![i as u8; (i * 13) % 70]).collect();
    let mut ops = Vec::new();
    {
        let mut memory = Memory::<WRITE>::new(2);
        let flash: Flash<'_> = memory.flash();
        let recording = Recording {
            flash,
            ops: &mut ops,
        };
        let mut block = [0u8; BLOCK_SIZE];
        let mut writer = FlashWriter::open(recording, config(2), &mut block).expect("open");
        assert_eq!(log(&mut writer, &records, 1).2, None);
    }
    let cuts = cut_points(&ops, 331);
    let mut memory = Memory::new(2);
    for kind in KINDS {
        for &cut in &cuts {
            for mode in cut_modes(cut) {
                run_with_cut(&mut memory, kind, 2, &records, 1, (cut, mode));
            }
        }
    }
}

#[test]
fn power_cut_across_blocks() {
    // Larger records that fragment across blocks, flushed in batches; cut points every 97 bytes
    // of work plus around every operation's edges.
    let records = script(40, 99);
    let mut ops = Vec::new();
    {
        let mut memory = Memory::<WRITE>::new(8);
        let recording = Recording {
            flash: memory.flash::<ERASE>(),
            ops: &mut ops,
        };
        let mut block = [0u8; BLOCK_SIZE];
        let mut writer = FlashWriter::open(recording, config(8), &mut block).expect("open");
        let (_, _, err) = log(&mut writer, &records, 3);
        assert!(matches!(err, None | Some(FlashError::Full)));
    }
    let mut cuts: Vec<usize> = Vec::new();
    let mut at = 0;
    for &(_, len) in &ops {
        cuts.extend((at..at + len).step_by(97));
        cuts.extend([at, at + 1, at + 7, at + len - 1]);
        at += len;
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut memory = Memory::new(8);
    for (i, cut) in cuts.into_iter().enumerate() {
        let mode = cut_modes(i)[i % 4];
        let kind = KINDS[(i / 4) % 2];
        run_with_cut(&mut memory, kind, 8, &records, 3, (cut, mode));
    }
}

/// A step of a scripted run with reboots.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// A record: its index in the run and length.
    Record(usize, usize),
    Flush,
    /// A reset: the writer is dropped, unflushed records with it, and the log reopened.
    Reboot,
}

/// Record `i` of the run: its index in its first bytes, so every record is told apart, then
/// bytes that include runs of erased-looking words.
fn unique_record(i: usize, len: usize) -> Vec<u8> {
    (0..len.max(2))
        .map(|j| match j {
            0 => i as u8,
            1 => (i >> 8) as u8,
            _ if (j / 16) % 3 == 2 => 0xFF,
            _ => (i * 7 + j * 13) as u8,
        })
        .collect()
}

/// A run with frequent reboots and flushes at random points; records mostly small, some
/// spanning blocks.
fn reboot_script(seed: u64, steps: usize) -> Vec<Step> {
    let mut x = seed | 1;
    let mut next = 0;
    (0..steps)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match x % 24 {
                0..=2 => Step::Flush,
                3..=4 => Step::Reboot,
                5 => {
                    next += 1;
                    Step::Record(next, 10_000 + (x >> 8) as usize % 30_000)
                }
                _ => {
                    next += 1;
                    Step::Record(next, (x >> 8) as usize % 120)
                }
            }
        })
        .collect()
}

/// What must and may be read back: per session (between reboots), the records acknowledged,
/// then those in flight, any prefix of which may have survived.
#[derive(Debug, Default)]
struct Expected {
    sessions: Vec<Session>,
}

/// A session's records: acknowledged, and in flight.
type Session = (Vec<Vec<u8>>, Vec<Vec<u8>>);

impl Expected {
    fn check(&self, read: &[Vec<u8>], what: &str) {
        let mut at = 0;
        for (s, (must, may)) in self.sessions.iter().enumerate() {
            for record in must {
                assert!(
                    read.get(at) == Some(record),
                    "{what}: session {s}: an acknowledged record is missing or out of order at {at}"
                );
                at += 1;
            }
            for record in may {
                if read.get(at) != Some(record) {
                    break;
                }
                at += 1;
            }
        }
        assert_eq!(at, read.len(), "{what}: records read that were not written");
    }
}

/// Runs `steps` on the flash, stopping at a power cut; returns what must and may be read.
fn run_steps<F: NorFlash<Error = MockError>>(
    flash: &mut F,
    kind: Kind,
    config: FlashConfig,
    steps: &[Step],
    block: &mut [u8; BLOCK_SIZE],
) -> Expected {
    let mut expected = Expected::default();
    let mut steps = steps.iter();
    'sessions: loop {
        expected.sessions.push(Default::default());
        let mut writer = match open(kind, &mut *flash, config, block) {
            Ok(w) => w,
            Err(e) => panic!("open: {e:?}"),
        };
        for step in steps.by_ref() {
            let Some(session) = expected.sessions.last_mut() else {
                break 'sessions;
            };
            let result = match *step {
                Step::Record(i, len) => {
                    let record = unique_record(i, len);
                    let result = writer.add_record(&record).map(|_| ());
                    if result.is_ok() {
                        session.1.push(record);
                    } else if !matches!(result, Err(FlashError::Full)) {
                        // Failing part-way: in flight, may be torn.
                        session.1.push(record);
                    }
                    result
                }
                Step::Flush => writer.flush().map(|()| {
                    let acked = core::mem::take(&mut session.1);
                    session.0.extend(acked);
                }),
                Step::Reboot => continue 'sessions,
            };
            match result {
                Ok(()) | Err(FlashError::Full) => {}
                Err(e) => {
                    expected_power_cut(&e, "run");
                    break 'sessions;
                }
            }
        }
        break;
    }
    expected
}

/// Cut points through a run whose flash operations are `ops`: every byte of short programs,
/// and through long programs and erases a stride and their edges.
fn cut_points(ops: &[(bool, usize)], stride: usize) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut at = 0;
    for &(_, len) in ops {
        if len <= 256 {
            cuts.extend(at..at + len);
        } else {
            cuts.extend((at..at + len).step_by(stride));
            cuts.extend(at..at + 9);
            cuts.extend(at + len - 9..at + len);
        }
        at += len;
    }
    cuts.push(at);
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

/// A fresh simulated flash erased to `erased` over `memory`.
fn fresh<const W: usize, const E: usize>(
    memory: &mut Memory<W>,
    erased: u8,
) -> MockFlash<'_, W, E> {
    MockFlash::new(&mut memory.bytes, &mut memory.flags, erased).expect("geometry")
}

/// The run with reboots on a flash of `W`-byte words, `E`-byte erase units and erased value
/// `erased`, cut at every point `cut_points` gives (with `stride`) — or only at every `every`th of
/// them.
fn reboot_sweep<const W: usize, const E: usize>(
    erased: u8,
    (seed, steps, blocks): (u64, usize, u32),
    stride: usize,
    every: usize,
) {
    let steps = reboot_script(seed, steps);
    let config = config(blocks).erased(erased);
    let read = |flash: &MockFlash<'_, W, E>| read_image(flash.memory(), erased, W);
    // Runs without a cut, one per writer: their flash operations (they differ: the buffered
    // writer programs a block or a flush at a time, and nothing of what a reboot drops).
    let ops = KINDS.map(|kind| {
        let mut ops = Vec::new();
        let mut memory = Memory::<W>::new(blocks as usize);
        let mut recording = Recording {
            flash: fresh(&mut memory, erased),
            ops: &mut ops,
        };
        let mut block = [0u8; BLOCK_SIZE];
        let expected = run_steps(&mut recording, kind, config, &steps, &mut block);
        let reboots = expected.sessions.len();
        assert!(reboots > 3, "{reboots} sessions");
        let read = read(&recording.flash);
        expected.check(&read.records, "without a cut");
        // (The last session may end with records not flushed, torn.)
        assert_eq!(read.damage, [], "without a cut");
        ops
    });
    let cuts = cut_points(&ops[1], stride);
    let more: Vec<Vec<u8>> = (0..3).map(|i| unique_record(60_000 + i, 40 + i)).collect();
    let mut memory = Memory::<W>::new(blocks as usize);
    let mut block = [0u8; BLOCK_SIZE];
    for (i, &cut) in cuts.iter().enumerate().filter(|(i, _)| i % every == 0) {
        let mode = cut_modes(i)[(i / every) % 4];
        let kind = KINDS[(i / every / 4) % 2];
        let what =
            std::format!("W = {W}, E = {E}, erased {erased:#x}: {kind:?} cut {cut} ({mode:?})");
        let mut flash = fresh::<W, E>(&mut memory, erased);
        flash.cut_power_after(cut, mode);
        let mut expected = run_steps(&mut flash, kind, config, &steps, &mut block);
        flash.power_on();
        let mut writer = open(kind, &mut flash, config, &mut block).expect("reopen");
        let mut session = (Vec::new(), Vec::new());
        for record in &more {
            match writer.add_record(record) {
                Ok(_) => session.0.push(record.clone()),
                Err(FlashError::Full) => break,
                Err(e) => panic!("{what}: after the reboot: {e:?}"),
            }
        }
        assert!(
            matches!(writer.flush(), Ok(()) | Err(FlashError::Full)),
            "{what}"
        );
        drop(writer);
        expected.sessions.push(session);
        let read = read(&flash);
        expected.check(&read.records, &what);
        assert_eq!(read.damage, [], "{what}: damage reported");
        // An interrupted erase leaves arbitrary bits in its unit, which stay after the log's
        // end (a torn end to readers) until the log reaches the unit and erases it again.
        let ops = if kind == Kind::Buffered {
            &ops[0]
        } else {
            &ops[1]
        };
        assert!(
            !read.torn_tail || in_erase(ops, cut),
            "{what}: a torn end after the reboot"
        );
    }
}

/// Whether the cut after `cut` bytes of flash work falls inside an erase of `ops`.
fn in_erase(ops: &[(bool, usize)], cut: usize) -> bool {
    let mut at = 0;
    ops.iter().any(|&(erase, len)| {
        let inside = erase && (at..at + len).contains(&cut);
        at += len;
        inside
    })
}

#[test]
fn power_cut_at_every_point_of_a_run_with_reboots() {
    // Frequent reboots (reopenings, dropping or tearing records not flushed), flushes at
    // random points, records spanning blocks and holding erased-looking words; a power cut at
    // every byte of the short programs and through the long ones and every erase, each way
    // the word or erase unit in flight can be left, with both writers. After the cut: a
    // reboot and three more records; then every acknowledged record reads back in order, a
    // session's records in flight at most as a prefix, nothing else, and no damage.
    reboot_sweep::<WRITE, ERASE>(0xFF, (0x5EED, 80, 5), 61, 1);
}

#[test]
fn power_cuts_with_erase_units_larger_than_a_block_and_32_byte_words() {
    // 64 KiB erase units (two blocks each, as the large sectors of some parts): a fresh
    // block inside a unit begun earlier cannot be erased again.
    // (About 600 of the cut points, spread over the run.)
    reboot_sweep::<32, { 2 * BLOCK_SIZE }>(0xFF, (0xB10C, 70, 6), 211, 223);
}

#[test]
fn power_cuts_on_a_flash_that_erases_to_zero() {
    // (About 600 of the cut points, spread over the run.)
    reboot_sweep::<4, ERASE>(0x00, (0x0E2A, 70, 5), 211, 131);
}
