//! Target `flash_writer`: the flash log writer across sessions, each possibly cut by a power
//! failure at an arbitrary byte of flash work, checked against a model of what must survive.
//!
//! Input: structured, decoded with `arbitrary` into a [`Script`].
//!
//! The model: after each session (open, add records, flush every `batch` records, maybe a power
//! cut, power back on), reading the region returns exactly what it returned after the previous
//! session, then every record of this session acknowledged by a successful flush, then possibly
//! some of the records in flight (added after the last successful flush, or failing), in order
//! — nothing else, nothing lost, nothing out of order, and no damage reported. The flash has
//! per-word ECC (a word is never programmed twice), with one exception, the one the flash
//! module's docs state: a session cut in its very first program, leaving that word reading
//! erased, lets the next session that programs anything program that word again (the flash
//! refuses it; the run stops there, as every later session would pick the same word). The region is read with
//! the reference reader of the flash read rules ([`crate::reference`]).
#![allow(dead_code, unreachable_pub)]

use arbitrary::{Arbitrary, Unstructured};
use embedded_storage::nor_flash::{ErrorType, NorFlash, ReadNorFlash};
use logfmt_core::BLOCK_SIZE;
use logfmt_core::flash::{FlashConfig, FlashError, FlashWriter, MockError, MockFlash, PowerCut};

use crate::common::record_content;
use crate::flash_read::read_flash;

/// The flash geometry: program word and erase unit.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum Geometry {
    /// 8-byte words, 4 KiB sectors (STM32L4-like).
    W8E4K,
    /// 32-byte words, 32 KiB units (one block per erase).
    W32E32K,
    /// Byte-programmable, 1 KiB sectors.
    W1E1K,
}

/// How a power cut leaves the word (or unit) in flight.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum Cut {
    Untouched,
    Partial,
    Complete,
}

/// One power-on session.
#[derive(Debug, Clone, Arbitrary)]
pub struct Session {
    /// Record lengths: small, or `Big(n)` = n·331 bytes.
    pub records: Vec<RecordLen>,
    /// Flush after every `batch % 4 + 1` records (and at the end).
    pub batch: u8,
    /// Cut the power after this many bytes of flash work (programs and erases).
    pub cut: Option<(u32, Cut)>,
}

#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum RecordLen {
    Small(u8),
    Big(u8),
}

/// What the target runs.
#[derive(Debug, Clone, Arbitrary)]
pub struct Script {
    pub geometry: Geometry,
    /// Region size: 1 + n % 4 blocks.
    pub blocks: u8,
    pub sessions: Vec<Session>,
}

/// Checks one input.
pub fn check(data: &[u8]) {
    let mut u = Unstructured::new(data);
    if let Ok(script) = Script::arbitrary(&mut u) {
        match script.geometry {
            Geometry::W8E4K => run::<8, 4096>(&script),
            Geometry::W32E32K => run::<32, 32768>(&script),
            Geometry::W1E1K => run::<1, 1024>(&script),
        }
    }
}

/// Runs the sessions of `script` on a flash of geometry `W`/`E`.
pub fn run<const W: usize, const E: usize>(script: &Script) {
    let blocks = 1 + usize::from(script.blocks % 4);
    let mut memory = vec![0u8; blocks * BLOCK_SIZE];
    let mut programmed = vec![false; memory.len() / W];
    let mut flash: MockFlash<'_, W, E> =
        MockFlash::new(&mut memory, &mut programmed, 0xFF).expect("geometry");
    let config = FlashConfig::new(0, (blocks * BLOCK_SIZE) as u32);
    let mut survived: Vec<Vec<u8>> = Vec::new();
    let mut id = 0u64;
    // The last session that programmed anything was cut in its first program (a session that
    // programs nothing, such as one whose first record does not fit, leaves the flash as it
    // found it, so the word cut stays the one the next program picks).
    let mut cut_first = false;
    for (s, session) in script.sessions.iter().enumerate().take(6) {
        let records: Vec<Vec<u8>> = session
            .records
            .iter()
            .take(24)
            .map(|len| {
                let len = match *len {
                    RecordLen::Small(n) => usize::from(n),
                    RecordLen::Big(n) => usize::from(n) * 331,
                };
                id += 1;
                record_content(id, len)
            })
            .collect();
        if let Some((bytes, mode)) = session.cut {
            let mode = match mode {
                Cut::Untouched => PowerCut::Untouched,
                Cut::Partial => PowerCut::Partial,
                Cut::Complete => PowerCut::Complete,
            };
            flash.cut_power_after(bytes as usize % (2 * blocks * BLOCK_SIZE), mode);
        }
        let batch = usize::from(session.batch % 4) + 1;
        let mut first = FirstProgram {
            flash: &mut flash,
            programs: 0,
            cut: false,
        };
        let (acknowledged, in_flight, twice) = {
            let mut block = Box::new([0u8; BLOCK_SIZE]);
            let mut writer = FlashWriter::open(&mut first, config, &mut *block)
                .unwrap_or_else(|e| panic!("session {s}: open: {e:?}"));
            log(&mut writer, &records, batch)
        };
        let cut_now = first.cut || (cut_first && first.programs == 0);
        if let Some(offset) = twice {
            let word = &flash.memory()[offset as usize..offset as usize + W];
            assert!(
                cut_first && word.iter().all(|&b| b == 0xFF),
                "session {s}: the word at {offset} programmed twice"
            );
        }
        cut_first = cut_now;
        flash.power_on();
        let (read, damage) = read_flash(flash.memory(), 0xFF, W);
        assert_eq!(damage, 0, "session {s}: damage reported");
        let kept = survived.len() + acknowledged;
        assert!(
            read.len() >= kept,
            "session {s}: read {} records, {} survived before and {acknowledged} were acknowledged",
            read.len(),
            survived.len()
        );
        assert!(
            read.len() <= kept + in_flight,
            "session {s}: read {} records, at most {} expected",
            read.len(),
            kept + in_flight
        );
        assert!(
            read[..survived.len()] == survived[..],
            "session {s}: earlier records changed"
        );
        assert!(
            read[survived.len()..] == records[..read.len() - survived.len()],
            "session {s}: this session's records differ"
        );
        survived = read;
        if twice.is_some() {
            // Every later session would pick the same word.
            return;
        }
    }
}

/// Logs `records`, flushing every `batch`, stopping at the first error. Returns the number of
/// acknowledged records and of records in flight (added since the last successful flush,
/// counting one whose `add_record` failed), and the word the flash refused to program twice.
fn log<F: embedded_storage::nor_flash::NorFlash<Error = MockError>>(
    writer: &mut FlashWriter<F, &mut [u8; BLOCK_SIZE]>,
    records: &[Vec<u8>],
    batch: usize,
) -> (usize, usize, Option<u32>) {
    let mut acknowledged = 0;
    let mut pending = 0;
    for (i, record) in records.iter().enumerate() {
        match writer.add_record(record) {
            Ok(_) => pending += 1,
            Err(e) => return (acknowledged, pending + 1, expected(&e)),
        }
        if (i + 1) % batch == 0 || i + 1 == records.len() {
            match writer.flush() {
                Ok(()) => {
                    acknowledged += pending;
                    pending = 0;
                }
                Err(e) => return (acknowledged, pending, expected(&e)),
            }
        }
    }
    (acknowledged, pending, None)
}

/// A power cut or a full region; or the word the flash refused to program twice.
fn expected(e: &FlashError<MockError>) -> Option<u32> {
    match e {
        FlashError::Flash(MockError::WrittenTwice { offset }) => Some(*offset),
        FlashError::Flash(MockError::PowerCut) | FlashError::Full => None,
        e => panic!("unexpected flash error: {e:?}"),
    }
}

/// The flash of a session, noting whether the power failed in its first program.
struct FirstProgram<'f, 'm, const W: usize, const E: usize> {
    flash: &'f mut MockFlash<'m, W, E>,
    programs: u32,
    /// The first program failed with a power cut.
    cut: bool,
}

impl<const W: usize, const E: usize> ErrorType for FirstProgram<'_, '_, W, E> {
    type Error = MockError;
}

impl<const W: usize, const E: usize> ReadNorFlash for FirstProgram<'_, '_, W, E> {
    const READ_SIZE: usize = 1;
    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), MockError> {
        self.flash.read(offset, bytes)
    }
    fn capacity(&self) -> usize {
        self.flash.capacity()
    }
}

impl<const W: usize, const E: usize> NorFlash for FirstProgram<'_, '_, W, E> {
    const WRITE_SIZE: usize = W;
    const ERASE_SIZE: usize = E;
    fn erase(&mut self, from: u32, to: u32) -> Result<(), MockError> {
        self.flash.erase(from, to)
    }
    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), MockError> {
        self.programs += 1;
        let result = self.flash.write(offset, bytes);
        self.cut |= self.programs == 1 && result == Err(MockError::PowerCut);
        result
    }
}
