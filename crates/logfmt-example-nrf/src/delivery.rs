//! Delivering the log's records oldest first, each once while the device runs.
//!
//! The reader numbers the ring's records: its first record is number
//! `aged_out_records()` (the records begun before the oldest block it holds), and each record
//! after it one more. A delivery ([`deliver`]) reads the log from its oldest record and sends
//! the records from a [`Position`] on; releasing them ([`release`]) keeps the position after
//! them, in RAM. After a reboot the position is gone, so delivery starts again from the oldest
//! record the ring holds.

use embedded_storage_async::nor_flash::ReadNorFlash;
use logfmt_core::flash::{AsyncWordReader, FlashConfig, FlashItem};

use crate::sample::Sample;

/// Where delivery goes on.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Position {
    /// The number of the next record to deliver; `None` before the first delivery since boot.
    next: Option<u32>,
}

/// What one delivery did.
#[derive(Debug, Default, Clone, Copy, defmt::Format)]
pub(crate) struct Delivery {
    /// Records delivered.
    pub(crate) delivered: u32,
    /// Records that aged out of the ring before they were delivered.
    pub(crate) aged_out: u32,
    /// Bytes the reader reported as damage (dropped, with any record in them).
    pub(crate) damaged_bytes: u32,
    /// Records or packs skipped: longer than the buffer, or a pack (this logger writes none).
    pub(crate) skipped: u32,
}

/// Reads the log in `config` of `flash` and delivers its records from `position` on, oldest
/// first, with [`upload`]: what it did, and the position after the last record read.
///
/// # Errors
/// A read error of the flash; the records already uploaded are uploaded again by the next
/// delivery.
pub(crate) async fn deliver<F: ReadNorFlash>(
    flash: F,
    config: FlashConfig,
    position: Position,
    buffer: &mut [u8],
) -> Result<(Delivery, Position), F::Error> {
    let mut reader = AsyncWordReader::open(flash, config).await?;
    let mut number = reader.aged_out_records().unwrap_or(0);
    let mut delivery = Delivery::default();
    let from = match position.next {
        Some(next) if precedes(next, number) => {
            delivery.aged_out = number.wrapping_sub(next);
            number
        }
        Some(next) => next,
        None => number,
    };
    while let Some(item) = reader.next(buffer).await? {
        match item {
            FlashItem::Record { offset, len } => {
                if !precedes(number, from) {
                    upload(number, offset, &buffer[..len]);
                    delivery.delivered += 1;
                }
                number = number.wrapping_add(1);
            }
            FlashItem::Pack { .. } | FlashItem::Oversized { .. } => {
                delivery.skipped += 1;
                number = number.wrapping_add(1);
            }
            FlashItem::Damage { offset, bytes } => {
                defmt::warn!("log damage: {} bytes at region offset {}", bytes, offset);
                delivery.damaged_bytes += bytes;
            }
        }
    }
    let next = if precedes(number, from) { from } else { number };
    Ok((delivery, Position { next: Some(next) }))
}

/// Releases the records delivered before `position`: they are not delivered again.
pub(crate) fn release(kept: &mut Position, position: Position) {
    *kept = position;
}

/// Sends one record on: here a defmt line over RTT, where a device would send it uplink.
fn upload(number: u32, offset: u32, record: &[u8]) {
    match Sample::decode(record) {
        Some(sample) => defmt::info!("record {} (region offset {}): {}", number, offset, sample),
        None => defmt::info!(
            "record {} (region offset {}): {=[u8]:x}",
            number,
            offset,
            record
        ),
    }
}

/// Whether record number `a` comes before `b`, the numbers wrapping (serial-number
/// arithmetic: the ring holds far fewer than 2^31 records).
fn precedes(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}
