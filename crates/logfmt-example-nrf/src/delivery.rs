//! Delivering the log's records oldest first, each once, across reboots and power cuts.
//!
//! The log keeps how far delivery went as read cursor [`CURSOR`]: a delivery ([`deliver`])
//! opens an [`AsyncCursorReader`] at the cursor's newest commit and sends the records after
//! it; releasing them ([`release`]) commits the cursor after the last one sent (one 12-byte
//! chunk in the log, never an erase). After a reboot or a power cut, delivery starts exactly
//! after the last committed position: a record is sent again only if the power failed
//! between its upload and the commit, and none is skipped unless the ring overwrote it first
//! (then the reader counts it as aged out).

use embedded_storage_async::nor_flash::{NorFlash, ReadNorFlash};
use logfmt_core::flash::{AsyncCursorReader, AsyncWordWriter, FlashConfig, FlashError, FlashItem};
use logfmt_core::parts::cursor::Cursor;

use crate::sample::Sample;

/// The read cursor of the uplink.
pub(crate) const CURSOR: u8 = 1;

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

/// Reads the log in `config` of `flash` from cursor [`CURSOR`] on and delivers its records,
/// oldest first, with [`upload`]: what it did, and the cursor to commit once the records are
/// safely delivered.
///
/// # Errors
/// A read error of the flash; the records already uploaded are uploaded again by the next
/// delivery (the cursor was not committed).
pub(crate) async fn deliver<F: ReadNorFlash>(
    flash: F,
    config: FlashConfig,
    buffer: &mut [u8],
) -> Result<(Delivery, Cursor), F::Error> {
    let mut reader = AsyncCursorReader::open(flash, config, CURSOR).await?;
    let mut delivery = Delivery {
        aged_out: reader.start().aged_out,
        ..Delivery::default()
    };
    while let Some(item) = reader.next(buffer).await? {
        match item {
            FlashItem::Record { offset, len } => {
                upload(reader.cursor().next.wrapping_sub(1), offset, &buffer[..len]);
                delivery.delivered += 1;
            }
            FlashItem::Damage { offset, bytes } => {
                defmt::warn!("log damage: {} bytes at region offset {}", bytes, offset);
                delivery.damaged_bytes += bytes;
            }
            _ => delivery.skipped += 1,
        }
    }
    Ok((delivery, reader.cursor()))
}

/// Releases the records delivered before `cursor`: commits it, so they are not delivered
/// again after any reboot.
///
/// # Errors
/// A flash error (the writer is then poisoned: reopen it); the cursor committed before stays.
pub(crate) async fn release<F: NorFlash>(
    writer: &mut AsyncWordWriter<F>,
    cursor: Cursor,
) -> Result<(), FlashError<F::Error>> {
    writer.commit(cursor).await
}

/// Sends one record on: here a defmt line (kept by the flight recorder), where a device would
/// send it uplink.
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
