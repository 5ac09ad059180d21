//! The reference firmware's work, shared by the size probe, its baseline and the stack probe: a
//! sensor log in NOR flash (the memory-mapped [`StubFlash`]) written with [`WordWriter`] and
//! read back with a [`Reader`] over a [`FlashSource`]. Inputs and results pass through
//! [`black_box`] so that the optimiser keeps every path a real firmware would have.

use core::hint::black_box;

use embedded_storage::nor_flash::NorFlash;
use logfmt_core::flash::{FlashConfig, FlashSource, WordWriter};
use logfmt_core::{BLOCK_SIZE, Item, ReadOptions, Reader};

use crate::stub_flash::{CAPACITY, StubFlash};

/// The log region: the whole stub flash.
pub fn config() -> FlashConfig {
    FlashConfig::new(0, CAPACITY as u32)
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

/// Reads the log back; returns (records, payload bytes, dropped bytes).
pub fn read(block: &mut [u8; BLOCK_SIZE], scratch: &mut [u8]) -> (u32, u64, u64) {
    let source = FlashSource::new(StubFlash, config(), block);
    let options = ReadOptions::new().erased(Some(0xFF));
    let mut reader = Reader::with_options(source, scratch, &options);
    let (mut records, mut bytes, mut dropped) = (0, 0, 0);
    while let Ok(Some(item)) = reader.next() {
        match item {
            Item::Record(r) => {
                records += 1;
                bytes += r.data.len() as u64;
            }
            Item::Corruption(c) => dropped += c.bytes,
            Item::Oversized(o) => dropped += o.len,
        }
    }
    (records, bytes, dropped)
}

/// The same work without logfmt: records staged in the block buffer (as any firmware copies
/// and clears buffers: `memcpy`/`memset` are part of the baseline), programmed raw (8-byte
/// aligned) and read back raw.
pub fn baseline(block: &mut [u8; BLOCK_SIZE], payload: &mut [u8], count: u32) -> (u32, u64) {
    let mut flash = StubFlash;
    block.fill(0);
    let mut at = 0u32;
    for n in 0..count {
        let len = sample_len(n, false).next_multiple_of(StubFlash::WRITE_SIZE);
        let Some(record) = payload.get_mut(..len) else {
            break;
        };
        sample(n, record);
        let Some(staged) = block.get_mut(..len) else {
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
