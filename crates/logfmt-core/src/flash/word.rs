//! The small-RAM flash writer over a blocking `NorFlash`: the engine's blocking steps.

use embedded_storage::nor_flash::NorFlash;

use super::config::FlashConfig;
use super::engine::Engine;
use super::error::FlashError;
use super::reader::Walk;
use super::resume::{Geometry, Resumed};
use super::writer::FlashStats;
use crate::pack::PackBuffer;
use crate::pack::{PackLimit, Take};
use crate::writer::Written;

/// Opens a log on a blocking flash: the resume walk, which finds where the engine appends.
pub(super) fn open<F: NorFlash>(
    flash: &mut F,
    config: FlashConfig,
) -> Result<Resumed, FlashError<F::Error>> {
    config.check(flash.capacity(), F::WRITE_SIZE, F::ERASE_SIZE, F::READ_SIZE)?;
    let geometry = Geometry {
        write_size: F::WRITE_SIZE as u32,
        erase_size: F::ERASE_SIZE as u32,
    };
    Walk::resume_sync(flash, config, geometry).map_err(FlashError::Flash)
}

/// Appends records to a log in NOR flash with no block buffer: a [`FlashWriter`](super::FlashWriter)
/// in about 100 bytes of RAM. Each chunk's checksum is computed from the record in the
/// caller's memory, and the log is programmed through one staging word of `WRITE_SIZE` bytes
/// (whole words of payload straight from the record).
///
/// The flash holds exactly the bytes [`FlashWriter`](super::FlashWriter) puts there for the
/// same records, flushes and reopenings, and the same rules make it safe across power cuts
/// (see the [module docs](super)). One difference: words are programmed as soon as they are
/// complete, so records not yet flushed may already be on the flash (readable after a power
/// cut); only [`flush`](Self::flush) makes them durable.
///
/// ```
/// # #[cfg(not(feature = "mock-flash"))] fn main() {}
/// # #[cfg(feature = "mock-flash")]
/// # fn main() -> Result<(), logfmt_core::flash::FlashError<logfmt_core::flash::MockError>> {
/// use logfmt_core::flash::{FlashConfig, MockFlash, WordWriter};
/// use logfmt_core::BLOCK_SIZE;
///
/// let (mut memory, mut programmed) = ([0u8; BLOCK_SIZE], [false; BLOCK_SIZE / 8]);
/// let flash = MockFlash::<8, 4096>::new(&mut memory, &mut programmed, 0xFF).unwrap();
/// let config = FlashConfig::new(0, BLOCK_SIZE as u32);
/// let mut writer = WordWriter::open(flash, config)?;
/// writer.add_record(b"temperature=21.5")?;
/// writer.flush()?; // acknowledged: survives a power cut
/// // A 7-byte header and 16 bytes, the last 8-byte flash word's last byte left erased.
/// assert_eq!(writer.position(), 24);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct WordWriter<F> {
    flash: F,
    engine: Engine,
}

impl<F: NorFlash> WordWriter<F> {
    /// Opens the log in region `config` of `flash`, finding where it ends in small
    /// reads (see the module docs).
    ///
    /// # Errors
    /// [`FlashError::BadRegion`] if the region does not fit the flash's geometry (or its
    /// `WRITE_SIZE` or `READ_SIZE` is over 32 bytes); a read error of kind `NotAligned` or
    /// `OutOfBounds` (one of kind `Other`, such as an ECC error, reads as unknown bytes:
    /// see [the module docs](super#power-cuts-on-parts-with-per-word-ecc)).
    pub fn open(mut flash: F, config: FlashConfig) -> Result<Self, FlashError<F::Error>> {
        let resumed = open(&mut flash, config)?;
        Ok(Self {
            flash,
            engine: Engine::new(config, F::WRITE_SIZE, F::ERASE_SIZE, resumed, true),
        })
    }

    /// Appends one record: its complete words are programmed at once, the last partial word
    /// is kept for the next record or flush. Acknowledged (will survive a power cut) after
    /// the next successful [`flush`](Self::flush).
    ///
    /// # Errors
    /// [`FlashError::Full`] if the record does not fit in the rest of the region (nothing is
    /// written; smaller records may still fit). A program or erase the flash refuses is
    /// survived: the record is written in the next erase unit ([refused
    /// programs](super#refused-programs-and-erases)); a flash error that is not poisons the
    /// writer ([`FlashError::Poisoned`] from then on).
    pub fn add_record(&mut self, data: &[u8]) -> Result<Written, FlashError<F::Error>> {
        self.add(data, false)
    }

    /// Appends a [pack](crate::pack) of records: `pack` is a pack's payload (the bytes of a
    /// [`PackBuffer`](crate::pack::PackBuffer) the caller filled), laid out as
    /// [`add_record`](Self::add_record) lays out a record, in the pack types. Gathering the
    /// samples made between two flushes in a pack, and adding it just before the flush,
    /// shares one chunk header and one flash-word padding among them (packing never delays
    /// durability: the flush is where the samples are acknowledged anyway).
    ///
    /// # Errors
    /// As for [`add_record`](Self::add_record).
    pub fn add_pack(&mut self, pack: &[u8]) -> Result<Written, FlashError<F::Error>> {
        self.add(pack, true)
    }

    /// Adds `record` to `pack`, a pack the caller keeps in its own RAM (`N` bytes): when the
    /// pack has no room for it under `limit`, the pack is written first
    /// ([`end_pack`](Self::end_pack)); a record too large for any pack is written plain.
    /// Packed records are on the flash once their pack is written, and durable after the
    /// next [`flush`](Self::flush) — call [`end_pack`](Self::end_pack) before it.
    ///
    /// ```
    /// # #[cfg(not(feature = "mock-flash"))] fn main() {}
    /// # #[cfg(feature = "mock-flash")]
    /// # fn main() -> Result<(), logfmt_core::flash::FlashError<logfmt_core::flash::MockError>> {
    /// use logfmt_core::flash::{FlashConfig, MockFlash, WordWriter};
    /// use logfmt_core::pack::PackBuffer;
    /// use logfmt_core::pack::PackLimit;
    /// use logfmt_core::BLOCK_SIZE;
    ///
    /// let (mut memory, mut programmed) = ([0u8; BLOCK_SIZE], [false; BLOCK_SIZE / 8]);
    /// let flash = MockFlash::<8, 4096>::new(&mut memory, &mut programmed, 0xFF).unwrap();
    /// let mut writer = WordWriter::open(flash, FlashConfig::new(0, BLOCK_SIZE as u32))?;
    /// let mut pack = PackBuffer::<512>::new();
    /// for i in 0..16u8 {
    ///     writer.pack_record(&mut pack, &[i; 16], PackLimit::default())?; // 16-byte samples
    /// }
    /// writer.end_pack(&mut pack)?;
    /// writer.flush()?; // all 16 acknowledged
    /// // One header, the pack's 5 bytes, 17 bytes a sample, rounded up to the 8-byte word.
    /// assert_eq!(writer.position(), (7 + 5 + 16 * 17u64).next_multiple_of(8));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// As for [`add_record`](Self::add_record), when a pack or a record is written.
    pub fn pack_record<const N: usize>(
        &mut self,
        pack: &mut PackBuffer<N>,
        record: &[u8],
        limit: PackLimit,
    ) -> Result<(), FlashError<F::Error>> {
        match pack.take(record.len(), limit) {
            Take::Add => {}
            Take::EndFirst => self.end_pack(pack)?,
            Take::Plain => {
                self.end_pack(pack)?;
                return self.add_record(record).map(|_| ());
            }
        }
        if pack.push(record).is_err() {
            // `take` said it fits: only a pack of `u32::MAX` records gets here.
            self.end_pack(pack)?;
            self.add_record(record)?;
        }
        Ok(())
    }

    /// Writes `pack` if it holds records — as a pack, or as a plain record if it holds one —
    /// and empties it.
    ///
    /// # Errors
    /// As for [`add_record`](Self::add_record) (the pack is kept then).
    pub fn end_pack<const N: usize>(
        &mut self,
        pack: &mut PackBuffer<N>,
    ) -> Result<(), FlashError<F::Error>> {
        match (pack.count(), pack.single()) {
            (0, _) => return Ok(()),
            (1, Some(record)) => self.add_record(record)?,
            _ => self.add_pack(pack.as_bytes())?,
        };
        pack.clear();
        Ok(())
    }

    fn add(&mut self, data: &[u8], pack: bool) -> Result<Written, FlashError<F::Error>> {
        let mut tries = 0;
        loop {
            match self.engine.add_sync(&mut self.flash, data, pack) {
                Ok(written) => {
                    self.engine.ended_word(written.end);
                    return Ok(written);
                }
                Err(e) => self.engine.recover(e, &mut tries)?,
            }
        }
    }

    /// Programs the last, partly filled flash word (its rest left erased): every record added
    /// so far is then durable. The next record starts at the next word boundary.
    ///
    /// # Errors
    /// As for [`add_record`](Self::add_record); [`FlashError::Lost`] once after a refused
    /// program took records added since the last flush (those whose last bytes were in the
    /// word it refused): every other record is durable then.
    pub fn flush(&mut self) -> Result<(), FlashError<F::Error>> {
        let mut tries = 0;
        while let Err(e) = self.engine.flush_sync(&mut self.flash) {
            self.engine.recover(e, &mut tries)?;
        }
        self.engine.flushed()
    }

    /// Commits read cursor `cursor`: the records numbered below `cursor.next` were delivered.
    /// One chunk of 12 bytes, flushed with the records added before it: `roundup(12, W)` bytes
    /// of flash after a flush, never an erase of its own (see [Read
    /// cursors](super#read-cursors)). Once it returns `Ok`, a
    /// [`CursorReader`](super::CursorReader) opened at `cursor.id` after any power cut starts
    /// at record `cursor.next`; a power cut during the commit leaves the cursor committed
    /// before.
    ///
    /// # Errors
    /// [`FlashError::CursorAhead`] if a ring has not begun record `cursor.next - 1` (nothing
    /// is written); [`FlashError::Full`] if a bounded region has no room for it; a flash
    /// error poisons the writer, as for [`add_record`](Self::add_record).
    pub fn commit(&mut self, cursor: crate::cursor::Cursor) -> Result<(), FlashError<F::Error>> {
        let mut tries = 0;
        while let Err(e) = self.engine.commit_sync(&mut self.flash, cursor) {
            self.engine.recover(e, &mut tries)?;
        }
        self.engine.flushed()
    }

    /// The flash, to read the log while the writer is open (with a
    /// [`CursorReader`](super::CursorReader) or a [`WordReader`](super::WordReader) over
    /// `&mut F`): it holds everything flushed. Writing or erasing the region through it
    /// breaks the log.
    pub fn flash_mut(&mut self) -> &mut F {
        &mut self.flash
    }

    /// Region offset where the next record will start: the log's length (after the resume
    /// marker, if a reopened log still has to write one).
    pub fn position(&self) -> u64 {
        self.engine.position()
    }

    /// Operations on the flash since [`open`](Self::open).
    pub fn stats(&self) -> FlashStats {
        self.engine.stats()
    }

    /// The region, with the word size it is written in filled in
    /// ([`FlashConfig::write_size`]): a reader opened with it skips a flush's padding unread.
    pub fn config(&self) -> FlashConfig {
        self.engine.config()
    }

    /// Gives back the flash; records not flushed may be partly programmed.
    pub fn into_inner(self) -> F {
        self.flash
    }
}
