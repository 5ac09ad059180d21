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
//! per-word ECC: it refuses a second program of a word, or (`spoil`) accepts it and spoils the
//! word. A session cut in its very first program, leaving that word reading erased, makes the
//! next session that programs anything program that word again: the writer must survive it
//! (leave the erase unit, write on in the next one), never fail with the flash's refusal, and
//! report the records in flight the refusal took ([`FlashError::Lost`], counted in the
//! writer's stats when it happens): those, and only those, are missing from the log. The
//! region is read with the reference reader of the flash read rules ([`crate::reference`]).
#![allow(dead_code, unreachable_pub)]

use arbitrary::{Arbitrary, Unstructured};
use logfmt_core::BLOCK_SIZE;
use logfmt_core::flash::{
    FlashConfig, FlashError, FlashWriter, MockError, MockFlash, PowerCut, SecondProgram,
};

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
    /// The flash accepts a second program of a word and spoils it (else it refuses it).
    pub spoil: bool,
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
    if script.spoil {
        flash.set_second_program(SecondProgram::Spoiled);
    }
    let config = FlashConfig::new(0, (blocks * BLOCK_SIZE) as u32);
    let mut survived: Vec<Vec<u8>> = Vec::new();
    let mut id = 0u64;
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
        let Logged {
            acknowledged,
            in_flight,
        } = {
            let mut block = Box::new([0u8; BLOCK_SIZE]);
            let mut writer = FlashWriter::open(&mut flash, config, &mut *block)
                .unwrap_or_else(|e| panic!("session {s}: open: {e:?}"));
            log(&mut writer, &records, batch, s)
        };
        flash.power_on();
        let (read, damage) = read_flash(flash.memory(), 0xFF, W);
        assert_eq!(damage, 0, "session {s}: damage reported");
        let kept = survived.len() + acknowledged.len();
        assert!(
            read.len() >= kept,
            "session {s}: read {} records, {} survived before and {} were acknowledged",
            read.len(),
            survived.len(),
            acknowledged.len()
        );
        assert!(
            read.len() <= kept + in_flight.len(),
            "session {s}: read {} records, at most {} expected",
            read.len(),
            kept + in_flight.len()
        );
        assert!(
            read[..survived.len()] == survived[..],
            "session {s}: earlier records changed"
        );
        let expected = acknowledged.iter().chain(&in_flight).map(|&i| &records[i]);
        assert!(
            read[survived.len()..]
                .iter()
                .zip(expected)
                .all(|(a, b)| a == b),
            "session {s}: this session's records differ"
        );
        survived = read;
    }
}

/// The records of a session (indices) that its flushes acknowledged, and those in flight
/// after them (added since the last successful flush, counting one whose `add_record`
/// failed), in order; the records a refused program took are in neither.
struct Logged {
    acknowledged: Vec<usize>,
    in_flight: Vec<usize>,
}

/// Logs `records`, flushing every `batch`, stopping at the first error but a refused
/// program's [`FlashError::Lost`].
fn log<F: embedded_storage::nor_flash::NorFlash<Error = MockError>>(
    writer: &mut FlashWriter<F, &mut [u8; BLOCK_SIZE]>,
    records: &[Vec<u8>],
    batch: usize,
    session: usize,
) -> Logged {
    let mut logged = Logged {
        acknowledged: Vec::new(),
        in_flight: Vec::new(),
    };
    let mut lost = 0;
    // The records a refused program took: the newest in flight, when it happened.
    let mut take_lost = |writer: &FlashWriter<F, _>, in_flight: &mut Vec<usize>| {
        let now = writer.stats().lost_records;
        let newly = (now - lost) as usize;
        assert!(newly <= in_flight.len(), "session {session}: lost {newly}");
        in_flight.truncate(in_flight.len() - newly);
        lost = now;
    };
    for (i, record) in records.iter().enumerate() {
        let added = writer.add_record(record);
        if let Err(e) = added {
            // The session ends here (a power cut, a full region). A power cut in the middle of
            // a program is seen as the flash's failure: the records the writer counted lost
            // on the way may still have reached the flash whole, so they stay in flight.
            logged.in_flight.push(i);
            expected(&e, session);
            return logged;
        }
        take_lost(writer, &mut logged.in_flight);
        logged.in_flight.push(i);
        if (i + 1) % batch == 0 || i + 1 == records.len() {
            match writer.flush() {
                Ok(()) | Err(FlashError::Lost { .. }) => {
                    take_lost(writer, &mut logged.in_flight);
                    logged.acknowledged.append(&mut logged.in_flight);
                }
                // As above: what was in flight may be there or not.
                Err(e) => {
                    expected(&e, session);
                    return logged;
                }
            }
        }
    }
    logged
}

/// A power cut or a full region: never the flash's refusal of a second program, which the
/// writer survives.
fn expected(e: &FlashError<MockError>, session: usize) {
    match e {
        FlashError::Flash(MockError::PowerCut) | FlashError::Full => {}
        e => panic!("session {session}: unexpected flash error: {e:?}"),
    }
}
