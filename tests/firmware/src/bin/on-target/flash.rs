//! The flash log on target: power cuts in a bounded region with each writer (buffered,
//! small-RAM, async), read back with the flash tests' reference reader; brown-out loops (every
//! boot cut at its first program), bounded and ring; the three writers behind one enum, for
//! these tests and the ring's; and the demo's scenario, run quietly.

use logfmt_core::BLOCK_SIZE;
use logfmt_core::flash::{
    AsyncWordWriter, FlashConfig, FlashError, FlashItem, FlashStats, FlashWriter, MockError,
    MockFlash, PowerCut, SecondProgram, WordReader, WordWriter,
};
use logfmt_core::parts::checksum::{self, crc32c};
use logfmt_firmware::demo_log::{self, Buffers};
use logfmt_firmware::fmtbuf::FmtBuf;
use logfmt_firmware::harness::{Fail, TestResult};
use logfmt_firmware::reference::{self, Event as Seen};
use logfmt_firmware::{ensure, fail};

use crate::Ram;

/// The demo's flash: 8-byte words, 4 KiB erase units.
type Flash<'a> = MockFlash<'a, { demo_log::WRITE_SIZE }, { demo_log::ERASE_SIZE }>;

const FLASH_BLOCKS: u32 = demo_log::BLOCKS as u32;

fn flash_config() -> FlashConfig {
    FlashConfig::new(0, FLASH_BLOCKS * BLOCK_SIZE as u32)
}

/// Record `i` of the scripted flash run: its length and bytes.
fn script_len(i: usize) -> usize {
    match i % 11 {
        3 => 1_000 + i * 37,
        7 if i == 18 => 40_000, // spans two blocks
        _ => (i * 29) % 200,
    }
}

fn script_byte(i: usize, j: usize) -> u8 {
    (i * 31 + j * 7) as u8 ^ 0x5a
}

const SCRIPT: usize = 30;
/// Records logged after the reboot.
const MORE: usize = 3;

/// Record `k` read back: the script up to `cut_at` records, then the post-reboot ones.
fn expected_len(k: usize, cut_at: usize) -> usize {
    if k < cut_at {
        script_len(k)
    } else {
        60 + (k - cut_at) * 20
    }
}

fn expected_byte(k: usize, j: usize, cut_at: usize) -> u8 {
    if k < cut_at {
        script_byte(k, j)
    } else {
        0xa0 + (k - cut_at) as u8
    }
}

/// A chunk's masked CRC-32C, for the reference reader.
fn chunk_crc(kind: u8, payload: &[u8]) -> u32 {
    checksum::mask(checksum::extend(crc32c(&[kind]), payload))
}

/// Reads the flash region with the reference reader (the flash read rules: padding, torn
/// writes before a resume marker): every record must be the expected one, nothing may be
/// reported damaged, and the region may end in a torn write only if `tail_ok`. Returns how
/// many records there are.
fn read_flash(
    flash: &Flash<'_>,
    scratch: &mut [u8],
    cut_at: usize,
    tail_ok: bool,
) -> Result<usize, Fail> {
    let mut k = 0;
    let mut bad: Option<FmtBuf<96>> = None;
    let mut note = |what: core::fmt::Arguments<'_>| {
        if bad.is_none() {
            let mut line = FmtBuf::new();
            let _ = core::fmt::write(&mut line, what);
            bad = Some(line);
        }
    };
    let image = flash.memory();
    reference::walk(
        image,
        0xFF,
        demo_log::WRITE_SIZE,
        chunk_crc,
        scratch,
        |seen| match seen {
            Seen::Record { offset, data } => {
                let same = data.len() == expected_len(k, cut_at)
                    && data
                        .iter()
                        .enumerate()
                        .all(|(j, &b)| b == expected_byte(k, j, cut_at));
                if !same {
                    note(format_args!(
                        "record {k} at {offset} is not the one written"
                    ));
                }
                k += 1;
            }
            Seen::Torn { .. } => {}
            Seen::TornTail { offset } if !tail_ok => {
                note(format_args!("a torn write at {offset} after the reboot"))
            }
            Seen::TornTail { .. } => {}
            Seen::Damage { offset } => note(format_args!("damage reported at {offset}")),
            Seen::Oversized { offset } => note(format_args!("oversized record at {offset}")),
        },
    );
    if let Some(line) = bad {
        fail!("{line}");
    }
    Ok(k)
}

/// Which flash writer a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Which {
    /// `FlashWriter`, with its RAM block.
    Buffered,
    /// `WordWriter`: no block buffer.
    Word,
    /// `AsyncWordWriter`, its futures run to completion one by one.
    Async,
}

/// The writers, in turn.
pub(crate) const WRITERS: [Which; 3] = [Which::Buffered, Which::Word, Which::Async];

/// Any of the three flash writers, over a simulated flash with 8-byte words and `E`-byte erase
/// units.
pub(crate) enum AnyWriter<'f, 'm, const E: usize> {
    Buffered(FlashWriter<&'f mut MockFlash<'m, 8, E>, &'f mut [u8; BLOCK_SIZE]>),
    Word(WordWriter<&'f mut MockFlash<'m, 8, E>>),
    Async(AsyncWordWriter<&'f mut MockFlash<'m, 8, E>>),
}

impl<'f, 'm, const E: usize> AnyWriter<'f, 'm, E> {
    /// Opens the log in `config` with the writer `which` (`block`: the buffered writer's).
    pub(crate) fn open(
        which: Which,
        flash: &'f mut MockFlash<'m, 8, E>,
        config: FlashConfig,
        block: &'f mut [u8; BLOCK_SIZE],
    ) -> Result<Self, FlashError<MockError>> {
        Ok(match which {
            Which::Buffered => Self::Buffered(FlashWriter::open(flash, config, block)?),
            Which::Word => Self::Word(WordWriter::open(flash, config)?),
            Which::Async => Self::Async(embassy_futures::block_on(AsyncWordWriter::open(
                flash, config,
            ))?),
        })
    }

    /// Appends a record; where it went.
    pub(crate) fn add_record(
        &mut self,
        data: &[u8],
    ) -> Result<logfmt_core::Written, FlashError<MockError>> {
        match self {
            Self::Buffered(w) => w.add_record(data),
            Self::Word(w) => w.add_record(data),
            Self::Async(w) => embassy_futures::block_on(w.add_record(data)),
        }
    }

    /// Flushes: what was added is acknowledged.
    pub(crate) fn flush(&mut self) -> Result<(), FlashError<MockError>> {
        match self {
            Self::Buffered(w) => w.flush(),
            Self::Word(w) => w.flush(),
            Self::Async(w) => embassy_futures::block_on(w.flush()),
        }
    }

    /// Where the next record goes.
    pub(crate) fn position(&self) -> u64 {
        match self {
            Self::Buffered(w) => w.position(),
            Self::Word(w) => w.position(),
            Self::Async(w) => w.position(),
        }
    }

    /// The writer's flash work since it was opened.
    pub(crate) fn stats(&self) -> FlashStats {
        match self {
            Self::Buffered(w) => w.stats(),
            Self::Word(w) => w.stats(),
            Self::Async(w) => w.stats(),
        }
    }
}

/// Logs the script with a flush after each record until an error. Returns (acknowledged,
/// laid out but not acknowledged, the error).
fn log_script(
    writer: &mut AnyWriter<'_, '_, { demo_log::ERASE_SIZE }>,
    payload: &mut [u8],
) -> (usize, usize, Option<FlashError<MockError>>) {
    for i in 0..SCRIPT {
        let data = &mut payload[..script_len(i)];
        for (j, b) in data.iter_mut().enumerate() {
            *b = script_byte(i, j);
        }
        if let Err(e) = writer.add_record(data) {
            return (i, 1, Some(e));
        }
        if let Err(e) = writer.flush() {
            return (i, 1, Some(e));
        }
    }
    (SCRIPT, 0, None)
}

/// One run with a power cut after `cut` bytes of flash work, a reboot, and more logging.
fn run_with_cut(ram: &mut Ram<'_>, which: Which, cut: usize, mode: PowerCut) -> TestResult {
    let config = flash_config();
    let Ok(mut flash) = Flash::new(
        &mut ram.flash[..demo_log::REGION],
        &mut ram.words[..demo_log::WORDS],
        0xFF,
    ) else {
        fail!("flash geometry");
    };
    flash.cut_power_after(cut, mode);
    let (acknowledged, in_flight, error) = {
        let mut writer = match AnyWriter::open(which, &mut flash, config, &mut *ram.block) {
            Ok(w) => w,
            Err(e) => fail!("open: {e:?}"),
        };
        log_script(&mut writer, &mut *ram.scratch)
    };
    if let Some(e) = &error {
        ensure!(
            matches!(e, FlashError::Flash(MockError::PowerCut) | FlashError::Full),
            "cut {cut}: {e:?}"
        );
    }
    flash.power_on();
    let read = read_flash(&flash, ram.scratch, SCRIPT, true)?;
    ensure!(
        read >= acknowledged && read <= acknowledged + in_flight,
        "{which:?} cut {cut} ({mode:?}): read {read} records, acknowledged {acknowledged}, in flight {in_flight}"
    );
    // Reboot and log more; nothing before may be lost.
    let mut writer = match AnyWriter::open(which, &mut flash, config, &mut *ram.block) {
        Ok(w) => w,
        Err(e) => fail!("reopen after cut {cut}: {e:?}"),
    };
    let mut more = 0;
    for m in 0..MORE {
        let data = &mut ram.scratch[..expected_len(read + m, read)];
        data.fill(expected_byte(read + m, 0, read));
        match writer.add_record(data) {
            Ok(_) => more += 1,
            Err(FlashError::Full) => break,
            Err(e) => fail!("cut {cut}: logging after the reboot: {e:?}"),
        }
    }
    match writer.flush() {
        Ok(()) | Err(FlashError::Full) => {}
        Err(e) => fail!("cut {cut}: flush after the reboot: {e:?}"),
    }
    let after = read_flash(&flash, ram.scratch, read, false)?;
    ensure!(
        after == read + more,
        "cut {cut} ({mode:?}): {after} records after the reboot, expected {read} + {more}"
    );
    Ok(())
}

pub(crate) fn flash_power_cuts(ram: &mut Ram<'_>) -> TestResult {
    // A dry run: how many bytes of flash work the script takes.
    let total = {
        let Ok(mut flash) = Flash::new(
            &mut ram.flash[..demo_log::REGION],
            &mut ram.words[..demo_log::WORDS],
            0xFF,
        ) else {
            fail!("flash geometry");
        };
        let config = flash_config();
        let mut writer = match AnyWriter::open(Which::Buffered, &mut flash, config, &mut *ram.block)
        {
            Ok(w) => w,
            Err(e) => fail!("open: {e:?}"),
        };
        let (acknowledged, _, error) = log_script(&mut writer, &mut *ram.scratch);
        ensure!(
            acknowledged == SCRIPT && error.is_none(),
            "dry run: {acknowledged} records, {error:?}"
        );
        let stats = writer.stats();
        (stats.erased_bytes + stats.programmed_bytes) as usize
    };
    // Cut points spread over the run, plus the first bytes of programming after each block's
    // erase; every power-cut mode (on a flash with per-word ECC), all three writers.
    let mut runs = 0;
    let stride = total / 180 + 1;
    for (i, cut) in (0..total).step_by(stride).chain(32_760..32_800).enumerate() {
        let mode = [
            PowerCut::Untouched,
            PowerCut::Partial,
            PowerCut::Complete,
            PowerCut::Arbitrary { seed: i as u64 },
        ][i % 4];
        let which = [Which::Buffered, Which::Word, Which::Async][(i / 4) % 3];
        run_with_cut(ram, which, cut, mode)?;
        runs += 1;
    }
    ensure!(runs > 150, "only {runs} runs");
    Ok(())
}

/// A console that prints nothing.
struct Quiet;

impl demo_log::Console for Quiet {
    fn line(&mut self, _: core::fmt::Arguments<'_>) {}
}

/// The demo on target, quietly: it checks the ring it reads back after every reboot and at the
/// end itself (an error fails the test); here, that its story took place.
pub(crate) fn flash_demo_scenario(ram: &mut Ram<'_>) -> TestResult {
    let mut buffers = Buffers {
        memory: &mut ram.flash[..demo_log::REGION],
        words: &mut ram.words[..demo_log::WORDS],
        block: &mut *ram.block,
        read_block: &mut *ram.read_block,
        scratch: &mut ram.scratch[..demo_log::SCRATCH],
        acks: &mut *ram.acks,
        in_flight: &mut *ram.in_flight,
    };
    let outcome = match demo_log::run(&mut buffers, &mut Quiet) {
        Ok(outcome) => outcome,
        Err(e) => fail!("{e}"),
    };
    let cuts = outcome.cuts.iter().flatten().count();
    ensure!(cuts == demo_log::PLAN.len(), "{cuts} power cuts");
    ensure!(
        outcome.laps >= demo_log::LAPS && outcome.lap < demo_log::FIRST_LAP,
        "{} laps, up to lap {}",
        outcome.laps,
        outcome.lap
    );
    ensure!(
        outcome.first_retained <= outcome.must_keep && outcome.retained > 1_000,
        "{} records retained from acknowledged record {} (it had to keep those from {})",
        outcome.retained,
        outcome.first_retained,
        outcome.must_keep
    );
    let acks = &buffers.acks[..outcome.acked];
    ensure!(
        acks.windows(2).all(|w| w[0].sample < w[1].sample),
        "acknowledged samples out of order"
    );
    let mut line = FmtBuf::<96>::new();
    let _ = demo_log::ack_line(&acks[0], &mut line);
    ensure!(line.as_str().starts_with("19\t0\tt=0ms "), "{line}");
    TestResult::Ok(())
}

/// Which boots of a brown-out loop are cut at their first program; the others log and flush.
const BROWNOUT_BOOTS: [bool; 7] = [false, true, true, true, false, true, false];

/// Records a boot of a brown-out loop logs.
const BROWNOUT_RECORDS: usize = 3;

/// Record `i` of a brown-out loop: its length, and its bytes (its number first, then bytes
/// with runs of erased-looking ones).
fn brownout_len(i: usize) -> usize {
    2 + (i * 37) % 150
}

fn brownout_byte(i: usize, j: usize) -> u8 {
    match j {
        0 => i as u8,
        1 => (i >> 8) as u8,
        _ if (j / 9) % 4 == 3 => 0xFF,
        _ => (i * 31 + j * 7) as u8,
    }
}

/// Where a reopened writer at `position` programs first: before the resume marker it still
/// has to lay out, if any (the marker's 7 bytes after a word boundary).
fn first_program(position: u64) -> usize {
    (position - position % demo_log::WRITE_SIZE as u64) as usize
}

/// Bytes erased before a boot's first program at `at`: the rest of the block, where the boot
/// begins a block or continues in a fresh erase unit (the demo's units are smaller than a
/// block: a ring's erase group is one block).
fn erased_before(at: usize, fresh: bool) -> usize {
    let in_block = at % BLOCK_SIZE;
    if fresh || in_block == 0 {
        BLOCK_SIZE - in_block
    } else {
        0
    }
}

/// The brown-out records a loop has acknowledged, by number: a boot's records but those a
/// refused program took.
type Acked = [bool; BROWNOUT_BOOTS.len() * BROWNOUT_RECORDS];

/// Reads the region with `WordReader` (through the flash's ECC errors): the records must be
/// acknowledged brown-out records, each as written, in order, and every acknowledged one from
/// the first read on — all of them in a bounded log, at least the last session's `last` in a
/// ring (it keeps the newest) — and no damage reported.
fn read_brownout(
    flash: &mut Flash<'_>,
    config: FlashConfig,
    buffer: &mut [u8],
    acked: &Acked,
    last: usize,
) -> TestResult {
    let Ok(mut reader) = WordReader::open(&mut *flash, config) else {
        fail!("WordReader: cannot open");
    };
    let (mut first, mut expect, mut read) = (None, 0, 0);
    loop {
        let len = match reader.next(buffer) {
            Ok(None) => break,
            Ok(Some(FlashItem::Record { len, .. })) => len,
            Ok(Some(item)) => fail!("damage: {item:?}"),
            Err(e) => fail!("read error {e:?}"),
        };
        let data = &buffer[..len];
        let i = usize::from(data[0]) | usize::from(data[1]) << 8;
        if first.is_none() {
            (first, expect) = (Some(i), i);
        }
        // The next acknowledged record.
        while expect < acked.len() && !acked[expect] {
            expect += 1;
        }
        let same = i == expect
            && len == brownout_len(i)
            && data
                .iter()
                .enumerate()
                .all(|(j, &b)| b == brownout_byte(i, j));
        ensure!(
            same,
            "record {read} read is {i}, not acknowledged record {expect}"
        );
        (expect, read) = (expect + 1, read + 1);
    }
    let missing = acked.iter().skip(expect).filter(|&&a| a).count();
    ensure!(
        missing == 0,
        "{missing} acknowledged records after the last read"
    );
    let before = acked
        .iter()
        .take(first.unwrap_or(0))
        .filter(|&&a| a)
        .count();
    ensure!(
        if config.ring {
            read >= last
        } else {
            before == 0
        },
        "acknowledged records lost: {before} before the first read, {read} read"
    );
    Ok(())
}

/// One brown-out loop: [`BROWNOUT_BOOTS`] with the writer `which` on a fresh flash that does
/// `second` with a second program of a word, each cut boot cut `bytes` into its first program
/// as `mode` says; every boot not cut appends (a refused program survived, the records it
/// took reported); the region read back after each boot.
fn brownout_loop(
    ram: &mut Ram<'_>,
    which: Which,
    config: FlashConfig,
    (bytes, mode): (usize, PowerCut),
    second: SecondProgram,
) -> TestResult {
    let Ok(mut flash) = Flash::new(
        &mut ram.flash[..demo_log::REGION],
        &mut ram.words[..demo_log::WORDS],
        0xFF,
    ) else {
        fail!("flash geometry");
    };
    flash.set_second_program(second);
    let mut acked: Acked = [false; BROWNOUT_BOOTS.len() * BROWNOUT_RECORDS];
    let mut last = 0;
    let mut next = 0;
    for (n, &cut) in BROWNOUT_BOOTS.iter().enumerate() {
        // Opening does no flash work: where this boot programs first.
        let at = match AnyWriter::open(which, &mut flash, config, &mut *ram.block) {
            Ok(writer) => first_program(writer.position()),
            Err(e) => fail!("boot {n}: open: {e:?}"),
        };
        if cut {
            let erase = erased_before(at, config.fresh_unit_on_reopen);
            flash.cut_power_after(erase + bytes, mode);
        }
        // The records of this boot, and how many of the newest a refused program took.
        let mut kept = [false; BROWNOUT_RECORDS];
        let result = {
            let mut writer = match AnyWriter::open(which, &mut flash, config, &mut *ram.block) {
                Ok(w) => w,
                Err(e) => fail!("boot {n}: open: {e:?}"),
            };
            let mut result = Ok(());
            for k in 0..BROWNOUT_RECORDS {
                let i = next + k;
                let data = &mut ram.scratch[..brownout_len(i)];
                for (j, b) in data.iter_mut().enumerate() {
                    *b = brownout_byte(i, j);
                }
                let lost = writer.stats().lost_records;
                result = writer.add_record(data).map(drop);
                forget_lost(&mut kept[..k], writer.stats().lost_records - lost);
                kept[k] = true;
                if result.is_err() {
                    break;
                }
            }
            let lost = writer.stats().lost_records;
            let result = result.and_then(|()| writer.flush());
            forget_lost(&mut kept, writer.stats().lost_records - lost);
            result
        };
        flash.power_on();
        match result {
            Ok(()) | Err(FlashError::Lost { .. }) if !cut => {
                for (k, &kept) in kept.iter().enumerate() {
                    acked[next + k] = kept;
                }
                last = kept.iter().filter(|&&k| k).count();
            }
            Err(FlashError::Flash(MockError::PowerCut)) if cut => {}
            other => fail!("{which:?} {mode:?} {second:?}: boot {n}: {other:?}"),
        }
        next += BROWNOUT_RECORDS;
        read_brownout(&mut flash, config, &mut *ram.read_block, &acked, last)?;
    }
    let acknowledged = acked.iter().filter(|&&a| a).count();
    ensure!(acknowledged >= 3, "{acknowledged} records acknowledged");
    Ok(())
}

/// The newest `lost` records still kept, forgotten: a refused program took them.
fn forget_lost(kept: &mut [bool], lost: u32) {
    for slot in kept.iter_mut().rev().filter(|k| **k).take(lost as usize) {
        *slot = false;
    }
}

/// Brown-out loops: boot after boot cut at its first program after a reopen — leaving a word
/// whose reads report an ECC error, a word that reads erased yet may not be programmed again,
/// or arbitrary bits — on a part that refuses a second program of a word and on one that
/// accepts it and spoils the word, in the default configuration and with a fresh erase unit
/// after each reopening, bounded and ring, with each writer: every boot not cut appends, and
/// every acknowledged record reads back.
pub(crate) fn flash_brownout_loops(ram: &mut Ram<'_>) -> TestResult {
    let half = demo_log::WRITE_SIZE / 2;
    let cuts = [
        (0, PowerCut::EccError),
        (half, PowerCut::EccError),
        (0, PowerCut::Partial),
        (0, PowerCut::Arbitrary { seed: 0xB20 }),
    ];
    for ring in [false, true] {
        for fresh in [false, true] {
            for cut in cuts {
                for second in [SecondProgram::Refused, SecondProgram::Spoiled] {
                    let config = flash_config();
                    let config = if ring { config.ring() } else { config };
                    let config = if fresh {
                        config.fresh_unit_on_reopen()
                    } else {
                        config
                    };
                    for which in WRITERS {
                        brownout_loop(ram, which, config, cut, second)?;
                    }
                }
            }
        }
    }
    Ok(())
}
