//! The reference firmware's work, shared by the size probe, its baseline and the stack probe: a
//! sensor log kept as a ring in NOR flash (the memory-mapped [`StubFlash`]), written with the
//! small-RAM [`WordWriter`] and read back with the small-RAM [`WordReader`] (no block buffer).
//! Inputs and results pass through [`black_box`] so that the optimiser keeps every path a real
//! firmware would have.

use core::hint::black_box;

use embedded_storage::nor_flash::NorFlash;
use logfmt_core::flash::{CursorReader, FlashConfig, FlashItem, WordReader, WordWriter};

use crate::stub_flash::{CAPACITY, StubFlash};

/// The log region: the whole stub flash, kept as a ring.
pub fn config() -> FlashConfig {
    FlashConfig::new(0, CAPACITY as u32).ring()
}

/// The factory state: the stub flash erased.
pub fn factory_erase() {
    let _ = black_box(StubFlash.erase(0, CAPACITY as u32));
}

/// Fills `record` with sensor-like bytes.
pub fn sample(n: u32, record: &mut [u8]) {
    for (i, b) in record.iter_mut().enumerate() {
        *b = black_box((n as u8).wrapping_add(i as u8));
    }
}

/// The length of record `n` of a run: mostly small, every 16th 40 000 bytes (spanning blocks)
/// when `big` allows.
pub fn sample_len(n: u32, big: bool) -> usize {
    if big && n % 16 == 15 {
        40_000
    } else {
        black_box(16 + (n as usize * 37) % 220)
    }
}

/// Opens the log (the small-RAM writer: no block buffer), appends `count` records (flushing
/// every 4th), returns the log's length.
pub fn append(payload: &mut [u8], count: u32, big: bool) -> u64 {
    let Ok(mut writer) = WordWriter::open(StubFlash, config()) else {
        return 0;
    };
    for n in 0..count {
        let Some(record) = payload.get_mut(..sample_len(n, big)) else {
            break;
        };
        sample(n, record);
        if writer.add_record(record).is_err() {
            break;
        }
        if n % 4 == 3 && writer.flush().is_err() {
            break;
        }
    }
    let _ = writer.flush();
    writer.position()
}

/// Reads the log back, oldest record first, into `scratch`; returns (records, payload bytes,
/// dropped bytes).
pub fn read(scratch: &mut [u8]) -> (u32, u64, u64) {
    let Ok(mut reader) = WordReader::open(StubFlash, config()) else {
        return (0, 0, 0);
    };
    let (mut records, mut bytes, mut dropped) = (0, 0, 0);
    while let Ok(Some(item)) = reader.next(scratch) {
        match item {
            // The reference firmware writes no packs: a pack counts as one record.
            FlashItem::Record { len, .. } | FlashItem::Pack { len, .. } => {
                records += 1;
                bytes += len as u64;
            }
            FlashItem::Damage { bytes, .. } => dropped += u64::from(bytes),
            FlashItem::Oversized { len, .. } => dropped += u64::from(len),
            // An item of a later version: not counted.
            _ => {}
        }
    }
    (records, bytes, dropped)
}

/// Delivers the records cursor 0 has not (read from its newest commit into `scratch`), then
/// commits the cursor after them; returns (records delivered, records aged out before).
pub fn deliver(scratch: &mut [u8]) -> (u32, u32) {
    let Ok(mut reader) = CursorReader::open(StubFlash, config(), black_box(0)) else {
        return (0, 0);
    };
    let mut records = 0;
    while let Ok(Some(item)) = reader.next(scratch) {
        if let FlashItem::Record { .. } = item {
            records += 1;
        }
    }
    let aged_out = reader.start().aged_out;
    let cursor = reader.cursor();
    let Ok(mut writer) = WordWriter::open(StubFlash, config()) else {
        return (records, aged_out);
    };
    if writer.commit(cursor).is_err() {
        return (0, aged_out);
    }
    (records, aged_out)
}

/// The same work without logfmt: records staged in a buffer (as any firmware copies and clears
/// buffers: `memcpy`/`memset` are part of the baseline), programmed raw (8-byte aligned) and
/// read back raw.
pub fn baseline(payload: &mut [u8], count: u32) -> (u32, u64) {
    let mut flash = StubFlash;
    let mut staging = [0u8; 256];
    staging.fill(black_box(0));
    let mut at = 0u32;
    for n in 0..count {
        let len = sample_len(n, false).next_multiple_of(StubFlash::WRITE_SIZE);
        let Some(record) = payload.get_mut(..len) else {
            break;
        };
        sample(n, record);
        let Some(staged) = staging.get_mut(..len) else {
            break;
        };
        staged.copy_from_slice(record);
        if flash.write(at, black_box(&*staged)).is_err() {
            break;
        }
        at += len as u32;
    }
    let mut sum = 0u64;
    let mut word = [0u8; 8];
    let mut offset = 0;
    while offset < at {
        if embedded_storage::nor_flash::ReadNorFlash::read(&mut flash, offset, &mut word).is_err() {
            break;
        }
        sum += u64::from(word[0]);
        offset += 8;
    }
    (count, sum)
}
