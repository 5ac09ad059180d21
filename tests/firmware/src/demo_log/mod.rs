//! The demo of `cargo xtask demo`: a sensor logger keeps its readings in a small **ring** log in
//! NOR flash. The ring wraps several times (its 32-bit lap counter wraps too), and the power
//! fails again and again — in the middle of a record, in the middle of a flush, inside a ring
//! header, in a record that runs across a block boundary, and in the middle of an erase, where
//! the flash is left with arbitrary bits. After each cut the device reboots, reads the ring
//! back and reopens the log; at the end the ring must hold exactly the newest acknowledged
//! records, in order (records in flight at a cut may survive too; nothing else may appear).
//!
//! The same code runs on the Cortex-M under QEMU (`src/bin/demo.rs`) and, where QEMU is not
//! available, on the host (`host/`): it uses only `core` and `logfmt-core`. The flash is
//! `logfmt-core`'s simulated NOR flash (`MockFlash`) in RAM: QEMU's boards have no NOR flash
//! controller, and the simulation is what can cut the power in the middle of a program or an
//! erase. The power cuts are planned ([`PLAN`]): a trap in the flash driver (`board`) cuts the
//! power at the byte the plan names.
//!
//! Reading back (`check`) uses the library's ring reader: `FlashSource::ring` (the blocks from
//! the oldest to the newest) under a `Reader` told the erased value and that the log starts
//! mid-way (records whose start the ring erased are skipped silently).

use core::borrow::BorrowMut;
use core::cell::RefCell;
use core::fmt;

use logfmt_core::BLOCK_SIZE;
use logfmt_core::flash::{FlashConfig, FlashError, FlashStats, FlashWriter, MockError};

/// Prints one line on a [`Console`].
macro_rules! say {
    ($out:expr, $($arg:tt)*) => {
        $out.line(format_args!($($arg)*))
    };
}

mod board;
mod check;
mod plan;
mod sample;
mod story;
mod upload;

pub use board::{Flash, Hit};
pub use plan::{Cut, PLAN, Strike};
pub use sample::{Text, sample, sample_of};

use board::{Board, Shared, Trap};
use check::{Expect, Tools, block_of_end, read_back, unroll};
use plan::{Laid, record_target};

/// The flash's program unit: 8-byte words (as on STM32L4 and others).
pub const WRITE_SIZE: usize = 8;
/// The flash's erase unit: 4 KiB sectors (so the ring erases one 32 KiB block at a time).
pub const ERASE_SIZE: usize = 4096;
/// Blocks in the ring.
pub const BLOCKS: usize = 4;
/// Blocks per erase group: one erase unit, or one block if the unit is smaller.
pub const GROUP: usize = if ERASE_SIZE > BLOCK_SIZE {
    ERASE_SIZE / BLOCK_SIZE
} else {
    1
};
/// Bytes in the log region (the whole simulated flash).
pub const REGION: usize = BLOCKS * BLOCK_SIZE;
/// Words in the region: the simulated flash keeps one "programmed" flag per word.
pub const WORDS: usize = REGION / WRITE_SIZE;
/// The erased value of the flash.
pub const ERASED: u8 = 0xFF;
/// The lap of the ring's first block: the 32-bit lap counter wraps to 0 two laps later.
pub const FIRST_LAP: u32 = u32::MAX - 1;
/// The demo logs until the ring has wrapped this many times (and every planned cut happened).
pub const LAPS: u32 = 4;
/// The log bytes the ring always keeps before its end: every block but the group being written
/// and the group erased ahead of it.
pub const KEEP: usize = (BLOCKS - 2 * GROUP) * BLOCK_SIZE;
/// The most acknowledged samples the demo keeps track of.
pub const MAX_ACKS: usize = 16_384;
/// The most samples in flight at the power cuts, all cuts together.
pub const MAX_IN_FLIGHT: usize = 128;
/// The most records in one flush.
pub const MAX_BATCH: usize = 5;
/// Bytes of the reading buffer (records up to this size are assembled there).
pub const SCRATCH: usize = 2048;
/// The region offset of a record not known (the power failed before `add_record` returned).
const UNKNOWN: u32 = u32::MAX;

/// The RAM the demo works in, provided by the caller (the device's stack, the host's heap).
pub struct Buffers<'a> {
    /// The simulated flash's bytes (`REGION`): the flash image once the demo is over.
    pub memory: &'a mut [u8],
    /// Its per-word "programmed" flags (`WORDS`).
    pub words: &'a mut [bool],
    /// The log writer's RAM block.
    pub block: &'a mut [u8; BLOCK_SIZE],
    /// The block buffer of the ring reader.
    pub read_block: &'a mut [u8; BLOCK_SIZE],
    /// The reader's buffer for records that span chunks (`SCRATCH`).
    pub scratch: &'a mut [u8],
    /// The acknowledged samples (`MAX_ACKS`), in log order.
    pub acks: &'a mut [Ack],
    /// The samples in flight at the power cuts (`MAX_IN_FLIGHT`).
    pub in_flight: &'a mut [Ack],
}

/// Where the demo prints its lines (semihosting on the device, stdout on the host).
pub trait Console {
    /// Prints one line.
    fn line(&mut self, args: fmt::Arguments<'_>);
}

/// A sample the log was given: acknowledged, or in flight at a power cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ack {
    /// The sample number.
    pub sample: u32,
    /// The region offset of its record (the flash image's offset of its first chunk), or
    /// `u32::MAX` if the power failed before `add_record` returned it.
    pub offset: u32,
    /// Its offset in the log unrolled (laps counted): what tells how old it is.
    pub position: u32,
}

/// What happened at one power cut and the reboot after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutReport {
    /// The plan's cut.
    pub cut: Cut,
    /// The sample being logged.
    pub sample: u32,
    /// Where it struck.
    pub hit: Hit,
    /// Samples in flight (not acknowledged).
    pub in_flight: u32,
    /// Of those, read back whole after the reboot.
    pub survived: u32,
    /// Flash bytes the reboot leaves unused: from the end of the last record read back to
    /// where the reopened log goes on (torn bytes, the rest of their word, a spare word, the
    /// resume marker — or the rest of a block).
    pub lost: u32,
    /// The reopened log goes on in the block where the last record read back ends (else in
    /// the next one).
    pub same_block: bool,
}

/// What the demo did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Samples logged.
    pub samples: u32,
    /// Acknowledged samples (the first `acked` of [`Buffers::acks`]).
    pub acked: usize,
    /// Samples in flight at the cuts (the first `in_flight` of [`Buffers::in_flight`]).
    pub in_flight: usize,
    /// The cuts, in order.
    pub cuts: [Option<CutReport>; PLAN.len()],
    /// Times the ring wrapped.
    pub laps: u32,
    /// The newest lap.
    pub lap: u32,
    /// Records read back at the end.
    pub retained: usize,
    /// Of those, samples in flight at a cut.
    pub retained_in_flight: usize,
    /// Index (in the acknowledged samples) of the oldest acknowledged record read back.
    pub first_retained: usize,
    /// Index of the oldest acknowledged record the ring had to keep.
    pub must_keep: usize,
    /// Records begun before the ring's oldest block, from its ring header.
    pub aged_out_records: u32,
    /// The writers' flash work, all boots together.
    pub stats: FlashStats,
}

/// Why the demo failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DemoError {
    /// The flash log failed (other than by a planned power cut).
    Log(FlashError<MockError>),
    /// The simulated flash could not be set up or read.
    Flash(MockError),
    /// The log failed with a power cut that the plan did not make.
    UnplannedCut,
    /// More samples than the demo keeps track of.
    TooManySamples,
    /// An acknowledged sample is missing from the ring read back.
    Missing {
        /// The sample.
        sample: u32,
    },
    /// The ring read back starts after an acknowledged sample it must still hold.
    NotKept {
        /// The oldest acknowledged sample the ring must hold.
        sample: u32,
        /// The oldest one read back.
        first: u32,
    },
    /// A record read back was never given to the log as it reads, or is out of order.
    Unexpected {
        /// Its region offset.
        offset: u64,
    },
    /// An acknowledged record read back at another place than it was written.
    Moved {
        /// The sample.
        sample: u32,
        /// Where it was written.
        written: u32,
        /// Where it was read.
        read: u64,
    },
    /// The reader reported damage (other than a torn write at the log's end after a cut).
    Damage {
        /// Where (an offset of the ring read in order).
        offset: u64,
    },
    /// A block's ring header is not the one the writer should have put there.
    Header {
        /// The block.
        block: u64,
    },
    /// The upload cycle went wrong.
    Upload(&'static str),
}

impl fmt::Display for DemoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Log(e) => write!(f, "the flash log failed: {e}"),
            Self::Flash(e) => write!(f, "the simulated flash failed: {e}"),
            Self::UnplannedCut => f.write_str("a power cut that the plan did not make"),
            Self::TooManySamples => f.write_str("more samples than the demo keeps track of"),
            Self::Missing { sample } => {
                write!(f, "acknowledged sample {sample} is missing from the ring")
            }
            Self::NotKept { sample, first } => write!(
                f,
                "the ring must still hold acknowledged sample {sample}, but its oldest record \
                 read back is sample {first}"
            ),
            Self::Unexpected { offset } => write!(
                f,
                "the ring holds a record at offset {offset} that was never logged there, or \
                 out of order"
            ),
            Self::Moved {
                sample,
                written,
                read,
            } => write!(
                f,
                "sample {sample} was written at offset {written}, read back at {read}"
            ),
            Self::Damage { offset } => write!(f, "the reader reported damage at {offset}"),
            Self::Header { block } => write!(f, "block {block} has the wrong ring header"),
            Self::Upload(what) => write!(f, "the upload cycle: {what}"),
        }
    }
}

impl From<FlashError<MockError>> for DemoError {
    fn from(e: FlashError<MockError>) -> Self {
        Self::Log(e)
    }
}

impl From<MockError> for DemoError {
    fn from(e: MockError) -> Self {
        Self::Flash(e)
    }
}

/// Runs the demo in `ram`; afterwards `ram.memory` holds the flash image, `ram.acks` (the first
/// [`Outcome::acked`]) the acknowledged samples and `ram.in_flight` those in flight at a cut.
///
/// # Errors
/// [`DemoError`]: in particular if the ring read back is not exactly the newest acknowledged
/// records (and records in flight at a cut), after any reboot or at the end.
pub fn run(ram: &mut Buffers<'_>, out: &mut dyn Console) -> Result<Outcome, DemoError> {
    let Buffers {
        memory,
        words,
        block,
        read_block,
        scratch,
        acks,
        in_flight,
    } = ram;
    let board = RefCell::new(Board::new(Flash::new(memory, words, ERASED)?));
    let mut logger = Logger {
        board: &board,
        config: FlashConfig::new(0, REGION as u32)
            .ring()
            .first_lap(FIRST_LAP),
        tools: Tools {
            block: read_block,
            scratch,
        },
        acks,
        in_flight,
        outcome: Outcome {
            samples: 0,
            acked: 0,
            in_flight: 0,
            cuts: [None; PLAN.len()],
            laps: 0,
            lap: FIRST_LAP,
            retained: 0,
            retained_in_flight: 0,
            first_retained: 0,
            must_keep: 0,
            aged_out_records: 0,
            stats: FlashStats::default(),
        },
        flushed: 0,
        laid_end: 0,
        next: 0,
        batch: 0,
        cuts: 0,
        armed: false,
    };
    story::intro(out);
    let mut boot = 1;
    loop {
        let mut writer = FlashWriter::open(Shared(&board), logger.config, &mut **block)?;
        logger.boot(boot, writer.position(), out)?;
        let step = loop {
            match logger.flush_batch(&mut writer, out)? {
                Step::Flushed => {}
                step => break step,
            }
        };
        logger.outcome.stats = add_stats(logger.outcome.stats, writer.stats());
        logger.outcome.samples = logger.next;
        if step == Step::Done {
            let config = logger.config;
            let outcome = logger.finish(out)?;
            upload::run(&board, config, block, scratch, out)?;
            return Ok(outcome);
        }
        board.borrow_mut().flash.power_on();
        boot += 1;
    }
}

/// What one flush came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Its records are acknowledged.
    Flushed,
    /// The power failed.
    Cut,
    /// The demo is over: nothing was logged.
    Done,
}

/// The logger's state across boots (what the demo knows; the device itself would know none of
/// it after a reset).
struct Logger<'b, 'm> {
    board: &'b RefCell<Board<'m>>,
    config: FlashConfig,
    tools: Tools<'b>,
    acks: &'b mut [Ack],
    in_flight: &'b mut [Ack],
    outcome: Outcome,
    /// Unrolled log end after the last successful flush.
    flushed: u64,
    /// The furthest the log was laid out (unrolled), programmed or not.
    laid_end: u64,
    /// The next sample.
    next: u32,
    /// Flushes so far.
    batch: u32,
    /// Cuts so far.
    cuts: usize,
    /// A trap waits for the next erase or ring header.
    armed: bool,
}

impl Logger<'_, '_> {
    /// A boot with the log reopened at region offset `position`: after a cut, the ring is read
    /// back and checked, and the story goes on.
    fn boot(&mut self, boot: u32, position: u64, out: &mut dyn Console) -> Result<(), DemoError> {
        let region_position = position;
        let position = unroll(self.flushed, position);
        if let Some(report) = self
            .cuts
            .checked_sub(1)
            .and_then(|c| self.outcome.cuts.get_mut(c))
            .and_then(Option::as_mut)
        {
            let acks = self.acks.get(..self.outcome.acked).unwrap_or_default();
            let in_flight = self
                .in_flight
                .get(..self.outcome.in_flight)
                .unwrap_or_default();
            let end = self.laid_end.max(position);
            let expect = Expect {
                since: report.sample + 1 - report.in_flight,
                tail_ok: true,
                ..Expect::new(acks, in_flight, end, KEEP as u64)
            };
            let read = read_back(self.board, self.config, &mut self.tools, &expect)?;
            report.survived = read.survived;
            report.lost = position.saturating_sub(read.last_end) as u32;
            report.same_block =
                read.last_end.saturating_sub(1) / BLOCK_SIZE as u64 == position / BLOCK_SIZE as u64;
            story::reboot(out, boot, &read, &expect, report, region_position);
        } else {
            story::first_boot(out, region_position);
        }
        (self.flushed, self.laid_end) = (position, position);
        Ok(())
    }

    /// Lays out the next few samples and flushes them, with a planned cut's trap set if one is
    /// due.
    fn flush_batch<B: BorrowMut<[u8; BLOCK_SIZE]>>(
        &mut self,
        writer: &mut FlashWriter<Shared<'_, '_>, B>,
        out: &mut dyn Console,
    ) -> Result<Step, DemoError> {
        if self.outcome.laps >= LAPS && self.cuts >= PLAN.len() {
            return Ok(Step::Done);
        }
        let plan = PLAN.get(self.cuts).copied();
        let due = plan
            .filter(|c| {
                let spacing = (LAPS as usize * REGION / (PLAN.len() + 1)) as u64;
                c.strike == Strike::AfterReboot || self.flushed >= spacing * (self.cuts as u64 + 1)
            })
            .filter(|_| !self.armed);
        if let Some(cut) = due {
            self.arm_ahead(cut, writer.position());
        }
        let mut laid = [Laid::default(); MAX_BATCH];
        let mut count = 0;
        let mut failed = None;
        for slot in laid.iter_mut().take(batch_size(self.batch)) {
            let n = self.next;
            self.next += 1;
            match writer.add_record(sample(n).as_bytes()) {
                Ok(w) => {
                    let offset = unroll(self.laid_end, w.offset);
                    let end = unroll(offset, w.end);
                    *slot = Laid {
                        sample: n,
                        offset,
                        end,
                    };
                    self.laid_end = end;
                    count += 1;
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        self.batch += 1;
        let laid = laid.get(..count).unwrap_or_default();
        let result = match failed {
            Some(e) => Err(e),
            None => {
                // A cut aimed at this flush's records.
                let aimed = due
                    .filter(|_| !self.armed)
                    .and_then(|cut| Some((record_target(cut.strike, laid)?, cut.mode)));
                if let Some((at, mode)) = aimed {
                    self.board.borrow_mut().trap = Some((Trap::Program { at }, mode));
                }
                let result = writer.flush();
                if aimed.is_some() {
                    // Not struck (the bytes were programmed with a complete block): next time.
                    self.board.borrow_mut().trap = None;
                }
                result
            }
        };
        match result {
            Ok(()) => {
                self.acknowledge(laid, writer.position(), out)?;
                Ok(Step::Flushed)
            }
            Err(FlashError::Flash(MockError::PowerCut)) => {
                self.power_cut(plan, laid, out)?;
                Ok(Step::Cut)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Sets the trap of a cut that waits for the next erase or ring header (none for the
    /// others), the log being at region offset `position`.
    fn arm_ahead(&mut self, cut: Cut, position: u64) {
        let here = (position % REGION as u64) as u32;
        let next_block = (here / BLOCK_SIZE as u32 + 1) % BLOCKS as u32;
        let trap = match cut.strike {
            Strike::Erase { unit } => Trap::Erase {
                after: unit * ERASE_SIZE as u32 + ERASE_SIZE as u32 / 2,
            },
            Strike::RingHeader { wrap } => Trap::Program {
                at: if wrap {
                    0
                } else {
                    next_block * BLOCK_SIZE as u32
                } + 9,
            },
            _ => return,
        };
        self.board.borrow_mut().trap = Some((trap, cut.mode));
        self.armed = true;
    }

    /// The flush of `laid` returned `Ok`: they are acknowledged. The log ends at region
    /// offset `position`; a new lap is told.
    fn acknowledge(
        &mut self,
        laid: &[Laid],
        position: u64,
        out: &mut dyn Console,
    ) -> Result<(), DemoError> {
        for l in laid {
            let slot = self
                .acks
                .get_mut(self.outcome.acked)
                .ok_or(DemoError::TooManySamples)?;
            *slot = Ack {
                sample: l.sample,
                offset: (l.offset % REGION as u64) as u32,
                position: l.offset as u32,
            };
            self.outcome.acked += 1;
        }
        self.flushed = unroll(self.flushed, position);
        self.laid_end = self.laid_end.max(self.flushed);
        // The head block's ring header (on the flash now) tells the lap.
        let head = block_of_end(position);
        let lap = self.board.borrow().lap_of(head);
        if lap != Some(self.outcome.lap) {
            // The next lap (seen in block 0, or in block 1 if a reboot moved the log on).
            if lap != Some(self.outcome.lap.wrapping_add(1)) {
                return Err(DemoError::Header { block: head });
            }
            self.outcome.lap = self.outcome.lap.wrapping_add(1);
            self.outcome.laps += 1;
            let first = laid.first().map_or(self.next, |l| l.sample);
            story::new_lap(out, self.outcome.lap, first, self.outcome.acked);
        }
        Ok(())
    }

    /// The power failed in the flush of `laid` (or while laying out the sample after them).
    fn power_cut(
        &mut self,
        plan: Option<Cut>,
        laid: &[Laid],
        out: &mut dyn Console,
    ) -> Result<(), DemoError> {
        let hit = self.board.borrow_mut().hit.take();
        let (Some(hit), Some(cut)) = (hit, plan) else {
            return Err(DemoError::UnplannedCut);
        };
        self.board.borrow_mut().trap = None;
        self.armed = false;
        let last = self.next - 1;
        let first = laid.first().map_or(last, |l| l.sample);
        for n in first..=last {
            let laid = laid.iter().find(|l| l.sample == n);
            let slot = self
                .in_flight
                .get_mut(self.outcome.in_flight)
                .ok_or(DemoError::TooManySamples)?;
            *slot = Ack {
                sample: n,
                offset: laid.map_or(UNKNOWN, |l| (l.offset % REGION as u64) as u32),
                position: laid.map_or(UNKNOWN, |l| l.offset as u32),
            };
            self.outcome.in_flight += 1;
        }
        let report = CutReport {
            cut,
            sample: last,
            hit,
            in_flight: last + 1 - first,
            survived: 0,
            lost: 0,
            same_block: false,
        };
        if let Some(slot) = self.outcome.cuts.get_mut(self.cuts) {
            *slot = Some(report);
        }
        self.cuts += 1;
        story::power_cut(out, self.cuts, &report, laid);
        Ok(())
    }

    /// The end: the ring read back once more, strictly (no report even at the log's end), and
    /// the story told.
    fn finish(mut self, out: &mut dyn Console) -> Result<Outcome, DemoError> {
        let acks = self.acks.get(..self.outcome.acked).unwrap_or_default();
        let in_flight = self
            .in_flight
            .get(..self.outcome.in_flight)
            .unwrap_or_default();
        let expect = Expect::new(acks, in_flight, self.flushed, KEEP as u64);
        let read = read_back(self.board, self.config, &mut self.tools, &expect)?;
        let outcome = &mut self.outcome;
        outcome.retained = read.records;
        outcome.retained_in_flight = read.in_flight;
        outcome.first_retained = read.first_ack.unwrap_or(acks.len());
        outcome.must_keep = expect.must;
        outcome.aged_out_records = read.aged_out;
        story::summary(out, outcome, &read, acks);
        Ok(self.outcome)
    }
}

/// How many records flush number `batch` gathers: 1 to [`MAX_BATCH`].
fn batch_size(batch: u32) -> usize {
    1 + (batch.wrapping_mul(7) % MAX_BATCH as u32) as usize
}

/// Two writers' stats added up.
fn add_stats(a: FlashStats, b: FlashStats) -> FlashStats {
    FlashStats {
        erases: a.erases + b.erases,
        erased_bytes: a.erased_bytes + b.erased_bytes,
        programs: a.programs + b.programs,
        programmed_bytes: a.programmed_bytes + b.programmed_bytes,
        laps: a.laps + b.laps,
        aged_out_bytes: a.aged_out_bytes + b.aged_out_bytes,
        abandoned_units: a.abandoned_units + b.abandoned_units,
        lost_records: a.lost_records + b.lost_records,
    }
}

/// Writes the `acked.txt` (or `inflight.txt`) line of `ack`: `offset<TAB>sample<TAB>text`,
/// with `-` for an offset not known.
pub fn ack_line(ack: &Ack, out: &mut dyn fmt::Write) -> fmt::Result {
    if ack.offset == UNKNOWN {
        write!(out, "-")?;
    } else {
        write!(out, "{}", ack.offset)?;
    }
    writeln!(out, "\t{}\t{}", ack.sample, sample(ack.sample).as_str())
}
