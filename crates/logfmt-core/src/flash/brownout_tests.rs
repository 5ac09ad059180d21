//! Brown-out loops: a power cut at the first program after a reopen, boot after boot, on every
//! geometry, both writers (and the async one), bounded and ring, in the default configuration
//! and with a fresh erase unit after each reopen. The simulated flash has per-word ECC: it
//! refuses a second program of a word, or accepts it and spoils the word, as parts do; a
//! test passes only if every boot that is not cut appends (the writer survives a refused
//! program and says what it cost), and every acknowledged record reads back (a ring keeps the
//! newest of them), with no damage.

use std::boxed::Box;
use std::format;
use std::string::String;
use std::vec::Vec;

use embedded_storage::nor_flash::{ErrorType, NorFlash, ReadNorFlash};

use super::tests::{Kind, Memory, open, read_image};
use super::{
    FlashConfig, FlashError, FlashItem, FlashSource, MockError, MockFlash, PowerCut, SecondProgram,
    WordReader, WordWriter,
};
use crate::format::BLOCK_SIZE;
use crate::{Item, ReadOptions, Reader};

/// The writers a loop runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Writer {
    Blocking(Kind),
    #[cfg(feature = "embedded-storage-async")]
    Async,
}

const WRITERS: &[Writer] = &[
    Writer::Blocking(Kind::Buffered),
    Writer::Blocking(Kind::Word),
    #[cfg(feature = "embedded-storage-async")]
    Writer::Async,
];

/// The flash of a boot: its first program is cut after `cut.0` bytes, as `cut.1` says.
struct CutFirst<'f, 'm, const W: usize, const E: usize> {
    flash: &'f mut MockFlash<'m, W, E>,
    cut: Option<(usize, PowerCut)>,
}

impl<const W: usize, const E: usize> CutFirst<'_, '_, W, E> {
    /// Arms the cut just before the first program.
    fn before_program(&mut self) {
        if let Some((bytes, mode)) = self.cut.take() {
            self.flash.cut_power_after(bytes, mode);
        }
    }
}

impl<const W: usize, const E: usize> ErrorType for CutFirst<'_, '_, W, E> {
    type Error = MockError;
}

impl<const W: usize, const E: usize> ReadNorFlash for CutFirst<'_, '_, W, E> {
    const READ_SIZE: usize = 1;
    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), MockError> {
        ReadNorFlash::read(self.flash, offset, bytes)
    }
    fn capacity(&self) -> usize {
        ReadNorFlash::capacity(self.flash)
    }
}

impl<const W: usize, const E: usize> NorFlash for CutFirst<'_, '_, W, E> {
    const WRITE_SIZE: usize = W;
    const ERASE_SIZE: usize = E;
    fn erase(&mut self, from: u32, to: u32) -> Result<(), MockError> {
        NorFlash::erase(self.flash, from, to)
    }
    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), MockError> {
        self.before_program();
        NorFlash::write(self.flash, offset, bytes)
    }
}

#[cfg(feature = "embedded-storage-async")]
mod asynch {
    use embedded_storage_async::nor_flash::{NorFlash, ReadNorFlash};

    use super::CutFirst;
    use crate::flash::MockError;

    impl<const W: usize, const E: usize> ReadNorFlash for CutFirst<'_, '_, W, E> {
        const READ_SIZE: usize = 1;
        async fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), MockError> {
            embedded_storage::nor_flash::ReadNorFlash::read(self, offset, bytes)
        }
        fn capacity(&self) -> usize {
            embedded_storage::nor_flash::ReadNorFlash::capacity(self)
        }
    }

    impl<const W: usize, const E: usize> NorFlash for CutFirst<'_, '_, W, E> {
        const WRITE_SIZE: usize = W;
        const ERASE_SIZE: usize = E;
        async fn erase(&mut self, from: u32, to: u32) -> Result<(), MockError> {
            embedded_storage::nor_flash::NorFlash::erase(self, from, to)
        }
        async fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), MockError> {
            embedded_storage::nor_flash::NorFlash::write(self, offset, bytes)
        }
    }
}

/// One boot: the log opened, `records` added, then a flush; the first program cut if `cut`.
/// Returns where the reopened log resumed, and how the session ended.
fn boot<const W: usize, const E: usize>(
    flash: &mut MockFlash<'_, W, E>,
    writer: Writer,
    config: FlashConfig,
    records: &[Vec<u8>],
    cut: Option<(usize, PowerCut)>,
) -> (u64, Result<(), FlashError<MockError>>) {
    let mut flash = CutFirst { flash, cut };
    let mut resumed = u64::MAX;
    let result = match writer {
        Writer::Blocking(kind) => {
            let mut block = Box::new([0u8; BLOCK_SIZE]);
            open(kind, &mut flash, config, &mut block).and_then(|mut log| {
                resumed = log.position();
                records
                    .iter()
                    .try_for_each(|r| log.add_record(r).map(drop))?;
                log.flush()
            })
        }
        #[cfg(feature = "embedded-storage-async")]
        Writer::Async => embassy_futures::block_on(async {
            let mut log = super::AsyncWordWriter::open(&mut flash, config).await?;
            resumed = log.position();
            for r in records {
                log.add_record(r).await?;
            }
            log.flush().await
        }),
    };
    (resumed, result)
}

/// Record `id`: its number first, then assorted bytes (some runs of erased-looking ones).
fn record(id: usize) -> Vec<u8> {
    let len = 2 + (id * 37) % 180;
    (0..len)
        .map(|j| match j {
            0 => id as u8,
            1 => (id >> 8) as u8,
            _ if (j / 9) % 4 == 3 => 0xFF,
            _ => (id * 11 + j * 29) as u8,
        })
        .collect()
}

/// The records the small-RAM reader reads from the region (through the flash's ECC errors),
/// and the damage it reports.
fn read_words<const W: usize, const E: usize>(
    flash: &mut MockFlash<'_, W, E>,
    config: FlashConfig,
) -> (Vec<Vec<u8>>, Vec<FlashItem>) {
    let mut reader = WordReader::open(&mut *flash, config).expect("opens");
    let mut buffer = std::vec![0u8; 4096];
    let (mut records, mut other) = (Vec::new(), Vec::new());
    while let Some(item) = reader.next(&mut buffer).expect("reads") {
        match item {
            FlashItem::Record { len, .. } => records.push(buffer[..len].to_vec()),
            item => other.push(item),
        }
    }
    (records, other)
}

/// The records the block reader reads from the region ([`FlashSource`], through the flash's
/// ECC errors; a ring from its oldest block), and the damage it reports.
fn read_blocks<const W: usize, const E: usize>(
    flash: &mut MockFlash<'_, W, E>,
    config: FlashConfig,
) -> (Vec<Vec<u8>>, Vec<String>) {
    let mut block = Box::new([0u8; BLOCK_SIZE]);
    let source = if config.ring {
        FlashSource::ring(&mut *flash, config, &mut *block).expect("reads")
    } else {
        FlashSource::new(&mut *flash, config, &mut *block)
    };
    let options = ReadOptions::new()
        .erased(Some(config.erased))
        .starts_mid_log(config.ring);
    let mut buffer = std::vec![0u8; 1 << 16];
    let mut reader = Reader::with_options(source, &mut buffer, &options);
    let (mut records, mut damage) = (Vec::new(), Vec::new());
    while let Some(item) = reader.next().expect("reads") {
        match item {
            Item::Record(record) => records.push(record.data.to_vec()),
            other => damage.push(format!("{other:?}")),
        }
    }
    (records, damage)
}

/// Which boots of a loop are cut at their first program: the others write and flush.
const BOOTS: [bool; 7] = [false, true, true, true, false, true, false];

/// What a boot that is not cut acknowledged: its records, but the `n` a refused program took
/// ([`FlashError::Lost`]), told from what the log holds now — the records read after the
/// ones acknowledged before must be the session's, in order, `n` fewer.
fn acknowledged_by(
    result: &Result<(), FlashError<MockError>>,
    session: &[Vec<u8>],
    read: &[Vec<u8>],
    what: &str,
) -> Vec<Vec<u8>> {
    let lost = match result {
        Ok(()) => 0,
        Err(FlashError::Lost { records }) => *records as usize,
        other => panic!("{what}: a boot that is not cut: {other:?}"),
    };
    assert!(lost <= session.len(), "{what}: lost {lost}");
    let kept = &read[read.len() - (session.len() - lost).min(read.len())..];
    let mut rest = session.iter();
    for record in kept {
        assert!(
            rest.any(|r| r == record),
            "{what}: a record read that the session did not add, or out of order"
        );
    }
    kept.to_vec()
}

/// The brown-out loop on a flash of `W`-byte words and `E`-byte erase units, `blocks` blocks:
/// [`BOOTS`], each cut `cut`, with every writer, the flash doing `second` with a second
/// program of a word. After each boot, the small-RAM reader (through the ECC errors) reads
/// exactly the acknowledged records (a ring: the newest of them, at least the last session's);
/// at the end the block reader and the reference reader read the same; no damage.
fn brownout_loop<const W: usize, const E: usize>(
    config: FlashConfig,
    cut: (usize, PowerCut),
    second: SecondProgram,
) {
    let blocks = (config.len as usize) / BLOCK_SIZE;
    // The async writer runs the same engine (its driver differs): one cut of each kind.
    let all = matches!(cut, (0, PowerCut::EccError | PowerCut::Partial));
    for &writer in WRITERS
        .iter()
        .filter(|&&w| all || matches!(w, Writer::Blocking(_)))
    {
        let what = format!(
            "W = {W}, E = {E}, {} blocks{}{}, {writer:?}, cut {cut:?}, {second:?}",
            blocks,
            if config.ring { ", ring" } else { "" },
            if config.fresh_unit_on_reopen {
                ", fresh unit"
            } else {
                ""
            }
        );
        let mut memory = Memory::<W>::new(blocks);
        let mut flash = memory.flash::<E>();
        flash.set_second_program(second);
        let mut acknowledged: Vec<Vec<u8>> = Vec::new();
        let mut last_session = 0;
        let mut id = 0;
        for (n, &cut_here) in BOOTS.iter().enumerate() {
            let records: Vec<Vec<u8>> = (0..3)
                .map(|_| {
                    id += 1;
                    record(id)
                })
                .collect();
            let (_, result) = boot(
                &mut flash,
                writer,
                config,
                &records,
                cut_here.then_some(cut),
            );
            flash.power_on();
            let (read, damage) = read_words(&mut flash, config);
            let what = format!("{what}: boot {n}");
            match result {
                // A bounded region the reopenings have filled.
                Err(FlashError::Full) if !config.ring && n > 0 => {}
                Err(FlashError::Flash(MockError::PowerCut)) if cut_here => {}
                result if !cut_here => {
                    let kept = acknowledged_by(&result, &records, &read, &what);
                    last_session = kept.len();
                    acknowledged.extend(kept);
                }
                other => panic!("{what}: {other:?}"),
            }
            // After each boot, the small-RAM reader (through the flash's ECC errors).
            let kept = &acknowledged[acknowledged.len() - read.len().min(acknowledged.len())..];
            assert_eq!(read, kept, "{what}: the records read");
            assert!(
                config.ring || kept.len() == acknowledged.len(),
                "{what}: acknowledged records lost"
            );
            assert!(
                read.len() >= last_session,
                "{what}: the last session's records lost"
            );
            assert_eq!(damage, [], "{what}: damage");
        }
        // At the end, the block reader (through the ECC errors) and the reference reader (the
        // raw bytes, an ECC word's bits as they are) read the same.
        let (words, _) = read_words(&mut flash, config);
        let (records, damage) = read_blocks(&mut flash, config);
        assert_eq!(records, words, "{what}: the block reader");
        assert_eq!(damage, [] as [String; 0], "{what}: damage (block reader)");
        if !config.ring && second == SecondProgram::Refused {
            let read = read_image(flash.memory(), config.erased, W);
            assert_eq!(read.records, records, "{what}: the reference reader");
            assert_eq!(
                read.damage,
                [] as [usize; 0],
                "{what}: damage (reference reader)"
            );
        }
        // (A bounded region fills after a few reopenings in fresh units as large as a block.)
        assert!(acknowledged.len() >= 3, "{what}: nothing written");
    }
}

/// Every way the loop's cut can leave the first word: the program never begun, a word whose
/// reads report an ECC error (at its start, and half-way), a word that reads erased yet may
/// not be programmed again before an erase (the cut the reads cannot see), arbitrary bits.
fn any_cuts<const W: usize>() -> Vec<(usize, PowerCut)> {
    std::vec![
        (0, PowerCut::Untouched),
        (0, PowerCut::EccError),
        (W / 2, PowerCut::EccError),
        (0, PowerCut::Partial),
        (0, PowerCut::Arbitrary { seed: 0xB20 }),
    ]
}

/// The loop on one geometry: every cut, on a part that refuses a second program and on one
/// that spoils the word, in the default configuration and with a fresh erase unit after each
/// reopening; bounded and ring.
fn every_cut<const W: usize, const E: usize>(blocks: u32) {
    let len = blocks * BLOCK_SIZE as u32;
    for ring in [false, true] {
        let config = FlashConfig::new(0, len);
        let config = if ring { config.ring() } else { config };
        for second in [SecondProgram::Refused, SecondProgram::Spoiled] {
            for cut in any_cuts::<W>() {
                brownout_loop::<W, E>(config, cut, second);
                brownout_loop::<W, E>(config.fresh_unit_on_reopen(), cut, second);
            }
        }
    }
}

#[test]
fn brownout_loop_byte_words_1k_units() {
    // Byte-programmable parts: the first program is a single byte.
    every_cut::<1, 1024>(4);
}

#[test]
fn brownout_loop_8_byte_words_2k_pages() {
    // STM32L4-like: 64-bit words with ECC, 2 KiB pages.
    every_cut::<8, 2048>(4);
}

#[test]
fn brownout_loop_16_byte_words_8k_pages() {
    // STM32U5-like: 128-bit words, 8 KiB pages.
    every_cut::<16, 8192>(4);
}

#[test]
fn brownout_loop_32_byte_words_block_units() {
    every_cut::<32, 32768>(4);
}

#[test]
fn brownout_loop_32_byte_words_128k_sectors() {
    // STM32H7-like: 256-bit words, 128 KiB sectors (four blocks each); a ring of two groups.
    every_cut::<32, 131072>(8);
}

// ---- the case the fuzzer found

/// The `flash_writer` fuzz input of W = 8, 4 KiB units, a 4-block region: session 0 writes a
/// 110-byte record and flushes (the log ends at 117, padded to 120); session 1 reopens (at
/// 128: 120..128 is the extra word) and the power fails at its first program, `cut`;
/// session 2 reopens and logs. Returns where each reopening resumed and session 2's result.
fn first_program_after_a_reopen(
    writer: Writer,
    config: FlashConfig,
    cut: PowerCut,
) -> (Vec<u64>, Result<(), FlashError<MockError>>) {
    let mut memory = Memory::<8>::new(4);
    let mut flash = memory.flash::<4096>();
    let (first, second, third) = (std::vec![0x11; 110], record(1), record(2));
    let (at0, r0) = boot(
        &mut flash,
        writer,
        config,
        core::slice::from_ref(&first),
        None,
    );
    assert_eq!((at0, r0), (0, Ok(())));
    let (at1, r1) = boot(&mut flash, writer, config, &[second], Some((0, cut)));
    assert_eq!(r1, Err(FlashError::Flash(MockError::PowerCut)));
    flash.power_on();
    let (at2, r2) = boot(
        &mut flash,
        writer,
        config,
        core::slice::from_ref(&third),
        None,
    );
    let read = read_image(flash.memory(), 0xFF, 8);
    let expected = if r2.is_ok() {
        std::vec![first, third]
    } else {
        std::vec![first]
    };
    assert_eq!(read.records, expected, "{writer:?} {cut:?}");
    (std::vec![at0, at1, at2], r2)
}

#[test]
fn a_cut_at_the_first_program_after_a_reopen_that_reads_as_an_ecc_error() {
    // The word at 128 reads as an ECC error: the reopening takes it for a written word (an
    // unknown, torn one), resumes past it with the resume marker, and logs.
    for &writer in WRITERS {
        let (at, result) = first_program_after_a_reopen(
            writer,
            FlashConfig::new(0, 4 * 32768),
            PowerCut::EccError,
        );
        assert_eq!(result, Ok(()), "{writer:?}");
        // 128..136 unreadable, then the extra word, then the marker (7 bytes).
        assert_eq!(at, [0, 128, 144 + 7], "{writer:?}");
    }
}

#[test]
fn a_cut_at_the_first_program_after_a_reopen_that_reads_erased() {
    // The fuzzer's case: the word at 128 reads erased, yet may not be programmed again.
    for &writer in WRITERS {
        // A fresh erase unit after each reopening: session 1 erased 4096.. and was cut at
        // its first program there; session 2 erases the unit again and programs it.
        let config = FlashConfig::new(0, 4 * 32768).fresh_unit_on_reopen();
        let (at, result) = first_program_after_a_reopen(writer, config, PowerCut::Partial);
        assert_eq!(result, Ok(()), "{writer:?}");
        assert_eq!(at, [0, 4096, 4096], "{writer:?}");
        // The default rules: the reopening sees what the one before saw and picks the same
        // word; the flash refuses the second program, and the writer goes on in the next
        // erase unit (4096), the resume marker first. The small-RAM writers write the record
        // again there; the buffered one had the record in its block only, and says it lost it.
        let (at, result) =
            first_program_after_a_reopen(writer, FlashConfig::new(0, 4 * 32768), PowerCut::Partial);
        let expected = match writer {
            Writer::Blocking(Kind::Buffered) => Err(FlashError::Lost { records: 1 }),
            _ => Ok(()),
        };
        assert_eq!(result, expected, "{writer:?}");
        assert_eq!(at, [0, 128, 128], "{writer:?}");
    }
}

// ---- what a reboot costs

/// Where each reopening after a clean shutdown resumed, after a session that ended at
/// which offset: `(end, resumed)` pairs, over sessions of assorted lengths.
fn reboots<const W: usize, const E: usize>(config: FlashConfig) -> Vec<(u64, u64)> {
    let mut memory = Memory::<W>::new((config.len as usize) / BLOCK_SIZE);
    let mut flash = memory.flash::<E>();
    let mut pairs = Vec::new();
    let mut end = None;
    for session in 1..=40 {
        let mut writer = WordWriter::open(&mut flash, config).expect("open");
        if let Some(end) = end {
            pairs.push((end, writer.position()));
        }
        for i in 0..session % 5 + 1 {
            match writer.add_record(&record(session * 7 + i)) {
                Ok(_) => {}
                Err(FlashError::Full) => return pairs,
                Err(e) => panic!("{e:?}"),
            }
        }
        writer.flush().expect("flush");
        end = Some(writer.position());
    }
    pairs
}

#[test]
fn what_a_reboot_costs() {
    // The default rules: the extra word, W bytes after a clean shutdown.
    let bounded = FlashConfig::new(0, 16 * BLOCK_SIZE as u32);
    for (end, resumed) in reboots::<8, 2048>(bounded) {
        assert_eq!(resumed, end + 8);
    }
    for (end, resumed) in reboots::<32, 4096>(bounded) {
        assert_eq!(resumed, end + 32);
    }
    // A fresh erase unit after each reopening: the rest of the unit after the extra word.
    let fresh = bounded.fresh_unit_on_reopen();
    let pairs = reboots::<8, 2048>(fresh);
    assert!(pairs.len() > 30);
    for (end, resumed) in pairs {
        assert_eq!(resumed, (end + 8).next_multiple_of(2048));
    }
    for (end, resumed) in reboots::<16, 8192>(fresh) {
        assert_eq!(resumed, (end + 16).next_multiple_of(8192));
    }
}

// ---- the simulated flash

#[test]
fn an_interrupted_program_can_read_as_an_ecc_error_until_erased() {
    let mut memory = Memory::<8>::new(1);
    let mut flash = memory.flash::<4096>();
    // A 16-byte program at 8 cut after 3 bytes: the word 8..16 in flight.
    flash.cut_power_after(3, PowerCut::EccError);
    assert_eq!(flash.write(8, &[0; 16]), Err(MockError::PowerCut));
    flash.power_on();
    let mut bytes = [0u8; 4];
    assert_eq!(flash.read(6, &mut bytes), Err(MockError::Ecc { offset: 8 }));
    assert_eq!(
        flash.read(15, &mut bytes[..1]),
        Err(MockError::Ecc { offset: 8 })
    );
    assert_eq!(flash.read(4, &mut bytes), Ok(()));
    assert_eq!(flash.read(16, &mut bytes), Ok(()));
    assert_eq!(bytes, [0xFF; 4], "the word after it was never begun");
    assert_eq!(
        flash.write(8, &[0; 8]),
        Err(MockError::WrittenTwice { offset: 8 })
    );
    assert_eq!(flash.write(16, &[0; 8]), Ok(()));
    flash.erase(0, 4096).expect("erase");
    assert_eq!(flash.read(8, &mut bytes), Ok(()));
    assert_eq!(bytes, [0xFF; 4]);
    assert_eq!(flash.write(8, &[0; 8]), Ok(()));
}

// ---- any boots, any cuts

/// One boot of a random brown-out run: cut at its first program (how), or logging records of
/// these lengths and flushing.
#[derive(Debug, Clone)]
enum Boot {
    Cut(PowerCut),
    Log(Vec<usize>),
}

fn boots() -> impl proptest::strategy::Strategy<Value = Vec<Boot>> {
    use proptest::prelude::*;
    let cut = prop_oneof![
        Just(PowerCut::Partial),
        Just(PowerCut::Untouched),
        Just(PowerCut::EccError),
        any::<u64>().prop_map(|seed| PowerCut::Arbitrary { seed }),
    ];
    let log = proptest::collection::vec(0usize..300, 1..8);
    let boot = prop_oneof![cut.prop_map(Boot::Cut), log.prop_map(Boot::Log)];
    proptest::collection::vec(boot, 1..24)
}

/// A run of `boots` on a 4-block region of 8-byte words and 2 KiB pages: every boot that is
/// not cut logs (a refused program survived, the records it took reported), and the region
/// holds every acknowledged record, in order (a ring: the newest of them), nothing else.
fn random_brownouts(boots: &[Boot], writer: Writer, ring: bool, second: SecondProgram) {
    let config = FlashConfig::new(0, 4 * BLOCK_SIZE as u32);
    let config = if ring { config.ring() } else { config };
    let mut memory = Memory::<8>::new(4);
    let mut flash = memory.flash::<2048>();
    flash.set_second_program(second);
    let mut acknowledged: Vec<Vec<u8>> = Vec::new();
    let mut id = 0;
    for (n, boot_now) in boots.iter().enumerate() {
        let what = format!("{writer:?}, ring {ring}, {second:?}: boot {n} {boot_now:?}");
        match boot_now {
            Boot::Cut(mode) => {
                let records = [record(1_000_000 + n)];
                let (_, result) = boot(&mut flash, writer, config, &records, Some((0, *mode)));
                assert!(
                    matches!(
                        result,
                        Err(FlashError::Flash(MockError::PowerCut) | FlashError::Full)
                    ),
                    "{what}: {result:?}"
                );
            }
            Boot::Log(lengths) => {
                let records: Vec<Vec<u8>> = lengths
                    .iter()
                    .map(|&len| {
                        id += 1;
                        let mut r = record(id);
                        r.resize(len.max(2), 0x5A);
                        r
                    })
                    .collect();
                let (_, result) = boot(&mut flash, writer, config, &records, None);
                flash.power_on();
                if matches!(result, Err(FlashError::Full)) && !ring {
                    // The bounded region is full: nothing more is checked of it.
                    return;
                }
                let (read, _) = read_words(&mut flash, config);
                let kept = acknowledged_by(&result, &records, &read, &what);
                acknowledged.extend(kept);
            }
        }
        flash.power_on();
        let (read, damage) = read_words(&mut flash, config);
        let kept = &acknowledged[acknowledged.len() - read.len().min(acknowledged.len())..];
        assert_eq!(read, kept, "{what}: the records read");
        assert!(
            ring || read.len() == acknowledged.len(),
            "{what}: records lost"
        );
        assert_eq!(damage, [], "{what}: damage");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 128, ..Default::default() })]

    #[test]
    fn a_device_cut_at_boots_first_programs_keeps_appending(
        boots in boots(),
        ring in proptest::prelude::any::<bool>(),
        spoil in proptest::prelude::any::<bool>(),
        writer in 0usize..WRITERS.len(),
    ) {
        let second = if spoil { SecondProgram::Spoiled } else { SecondProgram::Refused };
        random_brownouts(&boots, WRITERS[writer], ring, second);
    }
}
