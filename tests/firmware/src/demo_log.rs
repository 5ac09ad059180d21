//! The demo of `cargo xtask demo`: a sensor logger writes records into a NOR flash region, the
//! power fails in the middle of a record, the device reboots, reopens the log and keeps logging;
//! then the region is read back and every acknowledged record must be there.
//!
//! The same code runs on the Cortex-M under QEMU (`src/bin/demo.rs`) and, where QEMU is not
//! available, on the host (`host/`): it uses only `core` and `logfmt-core`. The flash is
//! `logfmt-core`'s simulated NOR flash ([`MockFlash`]) in RAM: QEMU's boards have no NOR flash
//! controller, and the simulation is what can cut the power in the middle of a program.

use core::cell::RefCell;
use core::fmt;

use embedded_storage::nor_flash::{ErrorType, NorFlash, ReadNorFlash};
use logfmt_core::flash::{
    FlashConfig, FlashError, FlashStats, FlashWriter, MockError, MockFlash, PowerCut,
};
use logfmt_core::{BLOCK_SIZE, checksum};

use crate::reference::{self, Event};

/// The flash's program unit: 8-byte words (as on STM32L4 and others).
pub const WRITE_SIZE: usize = 8;
/// The flash's erase unit: 4 KiB sectors.
pub const ERASE_SIZE: usize = 4096;
/// Blocks in the log region.
pub const BLOCKS: usize = 4;
/// Bytes in the log region (the whole simulated flash).
pub const REGION: usize = BLOCKS * BLOCK_SIZE;
/// Words in the region: the simulated flash keeps one "programmed" flag per word.
pub const WORDS: usize = REGION / WRITE_SIZE;
/// Samples logged before the power cut; the next one is being written when the power fails.
pub const BOOT1_SAMPLES: u32 = 12;
/// Samples logged after the reboot.
pub const BOOT2_SAMPLES: u32 = 12;
/// The most acknowledged samples.
pub const MAX_ACKS: usize = (BOOT1_SAMPLES + BOOT2_SAMPLES) as usize;
/// The erased value of the flash.
pub const ERASED: u8 = 0xFF;

/// The simulated flash.
pub type Flash<'m> = MockFlash<'m, WRITE_SIZE, ERASE_SIZE>;

/// The flash shared between the log and the "power supply" (which cuts the power while the log
/// writer holds the flash).
pub struct Shared<'r, 'm>(pub &'r RefCell<Flash<'m>>);

impl ErrorType for Shared<'_, '_> {
    type Error = MockError;
}

impl ReadNorFlash for Shared<'_, '_> {
    const READ_SIZE: usize = <Flash<'static> as ReadNorFlash>::READ_SIZE;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), MockError> {
        self.0.borrow_mut().read(offset, bytes)
    }

    fn capacity(&self) -> usize {
        self.0.borrow().capacity()
    }
}

impl NorFlash for Shared<'_, '_> {
    const WRITE_SIZE: usize = WRITE_SIZE;
    const ERASE_SIZE: usize = ERASE_SIZE;

    fn erase(&mut self, from: u32, to: u32) -> Result<(), MockError> {
        self.0.borrow_mut().erase(from, to)
    }

    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), MockError> {
        self.0.borrow_mut().write(offset, bytes)
    }
}

/// Where the demo prints its lines (semihosting on the device, stdout on the host).
pub trait Console {
    /// Prints one line.
    fn line(&mut self, args: fmt::Arguments<'_>);
}

/// A sample's record: short text, formatted without an allocator.
#[derive(Clone)]
pub struct Text {
    buf: [u8; 64],
    len: usize,
}

impl Text {
    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(self.as_bytes()).unwrap_or("?")
    }
}

impl fmt::Write for Text {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let dst = self
            .buf
            .get_mut(self.len..self.len + s.len())
            .ok_or(fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len += s.len();
        Ok(())
    }
}

/// The record of sample `n`: one reading a second, e.g. `t=12000ms temp=21.37C hum=41.2%`.
pub fn sample(n: u32) -> Text {
    let mut text = Text {
        buf: [0; 64],
        len: 0,
    };
    let t_ms = 1000 * n;
    let temp = 2120 + (n * 53) % 61 + n * 3; // centi-degrees, slowly warming
    let hum = 400 + (n * 29) % 45; // per mille
    let _ = fmt::write(
        &mut text,
        format_args!(
            "t={t_ms}ms temp={}.{:02}C hum={}.{}%",
            temp / 100,
            temp % 100,
            hum / 10,
            hum % 10
        ),
    );
    text
}

/// An acknowledged sample: its flush returned `Ok`, so it must survive any power cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ack {
    /// The sample number.
    pub sample: u32,
    /// The log offset of its record.
    pub offset: u64,
}

/// What the demo did.
#[derive(Debug, Clone)]
pub struct Outcome {
    acks: [Ack; MAX_ACKS],
    ack_count: usize,
    /// The sample that was being written when the power failed.
    pub torn_sample: u32,
    /// The offset its record was laid out at.
    pub torn_offset: u64,
    /// Whether the torn sample was read back whole anyway.
    pub torn_survived: bool,
    /// Records read back.
    pub records_read: usize,
    /// Drops the reader reported (the torn record).
    pub reports: usize,
}

impl Outcome {
    /// The acknowledged samples, in log order.
    pub fn acks(&self) -> &[Ack] {
        self.acks.get(..self.ack_count).unwrap_or_default()
    }

    fn ack(&mut self, sample: u32, offset: u64) {
        if let Some(slot) = self.acks.get_mut(self.ack_count) {
            *slot = Ack { sample, offset };
            self.ack_count += 1;
        }
    }
}

/// Why the demo failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DemoError {
    /// The flash log failed (other than by the planned power cut).
    Log(FlashError<MockError>),
    /// The simulated flash could not be set up or read.
    Flash(MockError),
    /// The planned power cut did not interrupt the flush.
    NoPowerCut,
    /// An acknowledged sample is missing from the flash.
    Missing(Ack),
    /// The flash holds a record that was never written, or out of order.
    Unexpected {
        /// Its offset.
        offset: u64,
    },
    /// The reader reported damage other than the torn record.
    UnexpectedDamage {
        /// Where.
        offset: u64,
    },
}

impl fmt::Display for DemoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Log(e) => write!(f, "the flash log failed: {e}"),
            Self::Flash(e) => write!(f, "the simulated flash failed: {e}"),
            Self::NoPowerCut => f.write_str("the planned power cut did not happen"),
            Self::Missing(ack) => write!(
                f,
                "acknowledged sample {} (offset {}) is missing from the flash",
                ack.sample, ack.offset
            ),
            Self::Unexpected { offset } => {
                write!(
                    f,
                    "the flash holds a record at offset {offset} that was never acknowledged"
                )
            }
            Self::UnexpectedDamage { offset } => {
                write!(f, "unexpected damage at offset {offset}")
            }
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

macro_rules! say {
    ($out:expr, $($arg:tt)*) => {
        $out.line(format_args!($($arg)*))
    };
}

/// Runs the demo on a simulated flash over `memory` (`REGION` bytes; it holds the flash image
/// afterwards) and `words` (`WORDS` flags), with `block` as the log's RAM block buffer and
/// `scratch` for reading.
///
/// # Errors
/// [`DemoError`]: in particular if an acknowledged sample is not read back.
pub fn run(
    memory: &mut [u8],
    words: &mut [bool],
    block: &mut [u8; BLOCK_SIZE],
    scratch: &mut [u8],
    out: &mut dyn Console,
) -> Result<Outcome, DemoError> {
    let flash = RefCell::new(Flash::new(memory, words, ERASED)?);
    let config = FlashConfig::new(0, REGION as u32);
    let mut outcome = Outcome {
        acks: [Ack::default(); MAX_ACKS],
        ack_count: 0,
        torn_sample: BOOT1_SAMPLES,
        torn_offset: 0,
        torn_survived: false,
        records_read: 0,
        reports: 0,
    };
    say!(
        out,
        "NOR flash: {BLOCKS} blocks of 32 KiB ({} KiB), programmed in {WRITE_SIZE}-byte words, \
         erased in {} KiB sectors to 0x{ERASED:02X}",
        REGION / 1024,
        ERASE_SIZE / 1024
    );
    say!(
        out,
        "a record is acknowledged once FlashWriter::flush() after it returns Ok"
    );

    // ---- boot 1: log samples, then the power fails in the middle of one.
    {
        let mut writer = FlashWriter::open(Shared(&flash), config, &mut *block)?;
        say!(out, "");
        say!(
            out,
            "boot 1: FlashWriter::open: empty region, appending at offset {}",
            writer.position()
        );
        for n in 0..BOOT1_SAMPLES {
            let text = sample(n);
            let written = writer.add_record(text.as_bytes())?;
            writer.flush()?;
            outcome.ack(n, written.offset);
            say!(
                out,
                "  ack   sample {n:>2} @ {:>6}  {}",
                written.offset,
                text.as_str()
            );
        }
        report_stats(out, "boot 1", writer.stats());
        let n = BOOT1_SAMPLES;
        let text = sample(n);
        let written = writer.add_record(text.as_bytes())?;
        outcome.torn_offset = written.offset;
        // The chunk is a 7-byte header and the text: the power fails half-way through it.
        let cut = (7 + text.as_bytes().len()) / 2;
        flash.borrow_mut().cut_power_after(cut, PowerCut::Partial);
        say!(
            out,
            "  sample {n:>2} @ {:>6}  laid out in RAM; flushing it ... the power fails after \
             {cut} bytes reach the flash",
            written.offset
        );
        match writer.flush() {
            Err(FlashError::Flash(MockError::PowerCut)) => say!(
                out,
                "  flush: Err(power cut): sample {n} is NOT acknowledged (a torn chunk is left \
                 at offset {})",
                written.offset
            ),
            Err(e) => return Err(e.into()),
            Ok(()) => return Err(DemoError::NoPowerCut),
        }
        // The reset: the writer and its RAM buffer are gone.
    }

    // ---- boot 2: power back, reopen (scan), keep logging.
    flash.borrow_mut().power_on();
    {
        let mut writer = FlashWriter::open(Shared(&flash), config, &mut *block)?;
        say!(out, "");
        say!(
            out,
            "boot 2: power back. FlashWriter::open scanned the last written block: it ends in the \
             chunk torn at offset {},",
            outcome.torn_offset
        );
        say!(
            out,
            "        so appending resumes in the same block, past the torn chunk and one more \
             word, after a 7-byte resume marker: at offset {}",
            writer.position()
        );
        for n in BOOT1_SAMPLES + 1..=BOOT1_SAMPLES + BOOT2_SAMPLES {
            let text = sample(n);
            let written = writer.add_record(text.as_bytes())?;
            writer.flush()?;
            outcome.ack(n, written.offset);
            say!(
                out,
                "  ack   sample {n:>2} @ {:>6}  {}",
                written.offset,
                text.as_str()
            );
        }
        report_stats(out, "boot 2", writer.stats());
    }

    // ---- read the region back, as a boot 3 would.
    say!(out, "");
    say!(
        out,
        "reading the region back on the device (the flash read rules: erased = 0x{ERASED:02X}, \
         {WRITE_SIZE}-byte words):"
    );
    let image = flash.borrow();
    let mut next_ack = 0;
    let mut error = None;
    let crc = |kind: u8, payload: &[u8]| {
        checksum::mask(checksum::extend(checksum::crc32c(&[kind]), payload))
    };
    reference::walk(image.memory(), ERASED, WRITE_SIZE, crc, scratch, |event| {
        if error.is_some() {
            return;
        }
        match event {
            Event::Record { offset, data } => {
                outcome.records_read += 1;
                let offset = offset as u64;
                let text = core::str::from_utf8(data).unwrap_or("<not UTF-8>");
                let expected = outcome.acks().get(next_ack).copied();
                if let Some(ack) = expected
                    .filter(|ack| ack.offset == offset && sample(ack.sample).as_bytes() == data)
                {
                    next_ack += 1;
                    say!(
                        out,
                        "  @ {offset:>6}  {text:<36} acknowledged (sample {})",
                        ack.sample
                    );
                } else if offset == outcome.torn_offset
                    && data == sample(outcome.torn_sample).as_bytes()
                {
                    outcome.torn_survived = true;
                    say!(
                        out,
                        "  @ {offset:>6}  {text:<36} in flight at the power cut, survived whole"
                    );
                } else {
                    error = Some(DemoError::Unexpected { offset });
                }
            }
            Event::Torn { offset } => {
                outcome.reports += 1;
                say!(
                    out,
                    "  @ {offset:>6}  torn by the power cut (sample {}) and followed by a resume \
                     marker: dropped silently",
                    outcome.torn_sample
                );
            }
            Event::Damage { offset } | Event::TornTail { offset } | Event::Oversized { offset } => {
                error = Some(DemoError::UnexpectedDamage {
                    offset: offset as u64,
                });
            }
        }
    });
    if let Some(e) = error {
        return Err(e);
    }
    if let Some(&ack) = outcome.acks().get(next_ack) {
        return Err(DemoError::Missing(ack));
    }
    say!(out, "");
    say!(
        out,
        "all {} acknowledged samples read back, in order; the torn sample {} {}",
        outcome.acks().len(),
        outcome.torn_sample,
        if outcome.torn_survived {
            "survived whole"
        } else {
            "was dropped"
        }
    );
    Ok(outcome)
}

fn report_stats(out: &mut dyn Console, boot: &str, stats: FlashStats) {
    say!(
        out,
        "  {boot} flash work: {} erase(s) ({} KiB), {} program(s) ({} bytes, padding included)",
        stats.erases,
        stats.erased_bytes / 1024,
        stats.programs,
        stats.programmed_bytes
    );
}

/// Writes the `acked.txt` line of `ack`: `offset<TAB>sample<TAB>text`.
pub fn ack_line(ack: &Ack, out: &mut dyn fmt::Write) -> fmt::Result {
    writeln!(
        out,
        "{}\t{}\t{}",
        ack.offset,
        ack.sample,
        sample(ack.sample).as_str()
    )
}
