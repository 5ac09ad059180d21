//! Power-cut tests of the flash log against the simulated flash.

use std::boxed::Box;
use std::vec::Vec;

use super::{
    FlashConfig, FlashError, FlashSource, FlashStats, FlashWriter, MockError, MockFlash, PowerCut,
    Resume, WordWriter,
};
use crate::{BLOCK_SIZE, Item, ReadOptions, Reader, Written};

const WRITE: usize = 8;
const ERASE: usize = 4096;
type Flash<'a> = MockFlash<'a, WRITE, ERASE>;

pub(super) struct Memory {
    pub(super) bytes: Vec<u8>,
    flags: Vec<bool>,
}

impl Memory {
    pub(super) fn new(blocks: usize) -> Self {
        Self {
            bytes: std::vec![0u8; blocks * BLOCK_SIZE],
            flags: std::vec![false; blocks * BLOCK_SIZE / WRITE],
        }
    }

    pub(super) fn flash(&mut self) -> Flash<'_> {
        MockFlash::new(&mut self.bytes, &mut self.flags, 0xFF).expect("geometry")
    }
}

pub(super) fn config(blocks: u32) -> FlashConfig {
    FlashConfig::new(0, blocks * BLOCK_SIZE as u32)
}

/// The two safe combinations: a fresh block after every reopen on a part with per-word ECC, or
/// resuming in the same block where a word that reads as erased may be programmed.
const SETUPS: [(Resume, bool); 2] = [(Resume::NextBlock, true), (Resume::SameBlock, false)];

/// The two flash writers, behind one interface for the tests that run both.
pub(super) trait LogWriter {
    fn add_record(&mut self, data: &[u8]) -> Result<Written, FlashError<MockError>>;
    fn flush(&mut self) -> Result<(), FlashError<MockError>>;
    fn position(&self) -> u64;
    fn stats(&self) -> FlashStats;
}

impl<const W: usize, const E: usize> LogWriter
    for FlashWriter<&mut MockFlash<'_, W, E>, &mut [u8; BLOCK_SIZE]>
{
    fn add_record(&mut self, data: &[u8]) -> Result<Written, FlashError<MockError>> {
        FlashWriter::add_record(self, data)
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

impl<const W: usize, const E: usize> LogWriter for WordWriter<&mut MockFlash<'_, W, E>> {
    fn add_record(&mut self, data: &[u8]) -> Result<Written, FlashError<MockError>> {
        WordWriter::add_record(self, data)
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
pub(super) fn open<'f, 'm, const W: usize, const E: usize>(
    kind: Kind,
    flash: &'f mut MockFlash<'m, W, E>,
    config: FlashConfig,
    block: &'f mut [u8; BLOCK_SIZE],
) -> Result<Box<dyn LogWriter + 'f>, FlashError<MockError>> {
    Ok(match kind {
        Kind::Buffered => Box::new(FlashWriter::open(flash, config, block)?),
        Kind::Word => Box::new(WordWriter::open(flash, config)?),
    })
}

/// Reads every record of the region (erased value 0xFF), and counts the corruption reports.
pub(super) fn read_all(flash: &mut Flash<'_>, config: FlashConfig) -> (Vec<Vec<u8>>, usize) {
    let mut block = std::boxed::Box::new([0u8; BLOCK_SIZE]);
    let mut scratch = std::vec![0u8; 1 << 18];
    let source = FlashSource::new(flash, config, &mut *block);
    let mut reader =
        Reader::with_options(source, &mut scratch, &ReadOptions::new().erased(Some(0xFF)));
    let mut records = Vec::new();
    let mut reports = 0;
    while let Some(item) = reader.next().expect("mock reads succeed while powered") {
        match item {
            Item::Record(r) => records.push(r.data.to_vec()),
            Item::Corruption(_) => reports += 1,
            Item::Oversized(o) => panic!("{o:?}"),
        }
    }
    (records, reports)
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

/// One run with a power cut after `cut` bytes of flash work: checks what survives, then that
/// logging goes on correctly after the reboot.
fn run_with_cut(
    memory: &mut Memory,
    kind: Kind,
    (resume, ecc): (Resume, bool),
    blocks: u32,
    records: &[Vec<u8>],
    batch: usize,
    (cut, mode): (usize, PowerCut),
) {
    let config = config(blocks).resume(resume);
    let mut flash = memory.flash();
    flash.set_ecc(ecc);
    flash.cut_power_after(cut, mode);
    let mut block = [0u8; BLOCK_SIZE];
    let (acknowledged, in_flight, error) = {
        let mut writer = open(kind, &mut flash, config, &mut block).expect("open");
        log(&mut *writer, records, batch)
    };
    if let Some(e) = &error {
        assert!(
            matches!(e, FlashError::Flash(MockError::PowerCut) | FlashError::Full),
            "cut {cut}: {e:?}"
        );
    }
    flash.power_on();
    // After the reboot: exactly the acknowledged records, plus possibly some in flight.
    let (read, _) = read_all(&mut flash, config);
    assert!(
        read.len() >= acknowledged && read.len() <= acknowledged + in_flight,
        "{kind:?} cut {cut} ({mode:?}): read {} records, acknowledged {acknowledged}, in flight {in_flight}",
        read.len()
    );
    assert_eq!(
        read[..],
        records[..read.len()],
        "cut {cut} ({mode:?}): records differ"
    );
    // Logging goes on after the reboot, and nothing before is lost.
    let more: Vec<Vec<u8>> = (0..3)
        .map(|i| std::vec![0xa0 + i; 50 + usize::from(i) * 20])
        .collect();
    let mut writer = open(kind, &mut flash, config, &mut block).expect("reopen");
    for r in &more {
        match writer.add_record(r) {
            Ok(_) => {}
            Err(FlashError::Full) => return,
            Err(e) => panic!("cut {cut}: {e:?}"),
        }
    }
    match writer.flush() {
        Ok(()) | Err(FlashError::Full) => {}
        Err(e) => panic!("cut {cut}: {e:?}"),
    }
    drop(writer);
    let (after, _) = read_all(&mut flash, config);
    assert!(
        after.len() >= read.len(),
        "cut {cut}: records lost after reboot"
    );
    assert_eq!(after[..read.len()], read[..], "cut {cut}");
    assert_eq!(
        after[read.len()..],
        more[..after.len() - read.len()],
        "cut {cut}: appended records"
    );
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

#[test]
fn open_empty_write_read_reopen() {
    for kind in KINDS {
        for (resume, _) in SETUPS {
            let mut memory = Memory::new(16);
            let mut flash = memory.flash();
            let config = config(16).resume(resume);
            let mut block = [0u8; BLOCK_SIZE];
            let records = script(60, 7);
            let mut writer = open(kind, &mut flash, config, &mut block).expect("open");
            let (ack, _, err) = log(&mut *writer, &records[..30], 1);
            assert_eq!((ack, err), (30, None));
            let position = writer.position();
            assert_eq!(position % WRITE as u64, 0);
            drop(writer);
            let mut writer = open(kind, &mut flash, config, &mut block).expect("reopen");
            let expected = match resume {
                Resume::SameBlock => position,
                Resume::NextBlock => position.next_multiple_of(BLOCK_SIZE as u64),
            };
            assert_eq!(writer.position(), expected, "{kind:?} {resume:?}");
            let (ack, _, err) = log(&mut *writer, &records[30..], 4);
            assert_eq!((ack, err), (30, None));
            drop(writer);
            let (read, reports) = read_all(&mut flash, config);
            assert_eq!(read, records);
            assert_eq!(reports, 0, "padding and resuming are invisible to readers");
        }
    }
}

#[test]
fn full_region_is_an_error() {
    for kind in KINDS {
        let mut memory = Memory::new(1);
        let mut flash = memory.flash();
        let mut block = [0u8; BLOCK_SIZE];
        let mut writer = open(kind, &mut flash, config(1), &mut block).expect("open");
        assert!(writer.add_record(&[1u8; 30_000]).is_ok());
        assert_eq!(writer.add_record(&[2u8; 30_000]), Err(FlashError::Full));
        // A record refused for lack of room leaves the log usable.
        assert!(writer.add_record(b"x").is_ok());
        assert!(writer.flush().is_ok());
        drop(writer);
        let bad = FlashConfig::new(100, BLOCK_SIZE as u32);
        assert!(matches!(
            open(kind, &mut flash, bad, &mut block),
            Err(FlashError::BadRegion)
        ));
    }
}

#[test]
fn power_cut_at_every_point_of_a_small_run() {
    // A short run inside one block (small records, a flush after each), every cut point and
    // every way the word in flight can be left.
    let records: Vec<Vec<u8>> = (0..12).map(|i| std::vec![i as u8; (i * 13) % 70]).collect();
    let total = {
        let mut memory = Memory::new(2);
        let mut flash = memory.flash();
        let mut block = [0u8; BLOCK_SIZE];
        let mut writer = FlashWriter::open(&mut flash, config(2), &mut block).expect("open");
        assert_eq!(log(&mut writer, &records, 1).2, None);
        let stats = writer.stats();
        let erased = usize::try_from(stats.erased_bytes).unwrap_or(0);
        (
            erased,
            erased + usize::try_from(stats.programmed_bytes).unwrap_or(0),
        )
    };
    let (erased, total) = total;
    // Every byte of programming; the erase before it (one block) at a stride and at its edges.
    let cuts = (0..erased)
        .step_by(331)
        .chain(erased.saturating_sub(3)..=total);
    let cuts: Vec<usize> = cuts.collect();
    let mut memory = Memory::new(2);
    for kind in KINDS {
        for setup in SETUPS {
            for &cut in &cuts {
                for mode in cut_modes(cut) {
                    run_with_cut(&mut memory, kind, setup, 2, &records, 1, (cut, mode));
                }
            }
        }
    }
}

#[test]
fn power_cut_across_blocks() {
    // Larger records that fragment across blocks, flushed in batches; cut points every 97 bytes
    // of work plus around every block boundary.
    let records = script(40, 99);
    let total = {
        let mut memory = Memory::new(8);
        let mut flash = memory.flash();
        let mut block = [0u8; BLOCK_SIZE];
        let mut writer = FlashWriter::open(&mut flash, config(8), &mut block).expect("open");
        let (_, _, err) = log(&mut writer, &records, 3);
        assert!(matches!(err, None | Some(FlashError::Full)));
        let stats = writer.stats();
        usize::try_from(stats.programmed_bytes + stats.erased_bytes).unwrap_or(0)
    };
    let mut memory = Memory::new(8);
    let mut cuts: Vec<usize> = (0..total).step_by(97).collect();
    for b in 1..8 {
        let around = b * (BLOCK_SIZE + ERASE * (BLOCK_SIZE / ERASE));
        cuts.extend(around.saturating_sub(16)..(around + 16).min(total));
    }
    for (i, cut) in cuts.into_iter().enumerate() {
        let mode = cut_modes(i)[i % 4];
        let kind = KINDS[(i / 4) % 2];
        run_with_cut(
            &mut memory,
            kind,
            SETUPS[i % 2],
            8,
            &records,
            3,
            (cut, mode),
        );
    }
}

#[test]
fn interrupted_erase_leaves_arbitrary_bits() {
    // A cut in the middle of a 3-unit erase: the first unit erased, the second scrambled (and
    // unprogrammable until erased), the third untouched.
    let mut memory = Memory::new(1);
    let mut flash = memory.flash();
    use embedded_storage::nor_flash::NorFlash;
    flash
        .write(3 * ERASE as u32, &[0u8; WRITE])
        .expect("program");
    flash.cut_power_after(ERASE + 100, PowerCut::Arbitrary { seed: 7 });
    assert_eq!(
        flash.erase(0, 3 * ERASE as u32 + ERASE as u32),
        Err(MockError::PowerCut)
    );
    flash.power_on();
    let memory = flash.memory();
    assert!(memory[..ERASE].iter().all(|&b| b == 0xFF));
    let scrambled = &memory[ERASE..2 * ERASE];
    assert!(scrambled.iter().filter(|&&b| b != 0xFF).count() > ERASE / 2);
    assert_eq!(&memory[3 * ERASE..3 * ERASE + WRITE], &[0u8; WRITE]);
    assert_eq!(
        flash.write(ERASE as u32 + 8 * WRITE as u32, &[0x55; WRITE]),
        Err(MockError::WrittenTwice {
            offset: (ERASE + 8 * WRITE) as u32
        })
    );
    // The same seed scrambles the same way.
    let first = flash.memory()[ERASE..2 * ERASE].to_vec();
    flash.cut_power_after(ERASE + 100, PowerCut::Arbitrary { seed: 7 });
    assert!(flash.erase(0, 2 * ERASE as u32).is_err());
    flash.power_on();
    assert_eq!(&flash.memory()[ERASE..2 * ERASE], &first[..]);
}
