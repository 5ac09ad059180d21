//! Appending to a flash log: the resume scan, lazy erase, aligned programming.

use core::borrow::BorrowMut;

use embedded_storage::nor_flash::NorFlash;

use super::engine::{erase_range, limit};
use super::{FlashConfig, FlashError};
use crate::error::WriteError;
use crate::format::BLOCK_SIZE;
use crate::writer::{Sink, WriteOptions, Writer, Written};

/// Counts of flash operations since the writer was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FlashStats {
    /// Erase operations.
    pub erases: u32,
    /// Bytes erased.
    pub erased_bytes: u64,
    /// Program (write) operations.
    pub programs: u32,
    /// Bytes programmed, padding included (words that are all erased bytes are skipped).
    pub programmed_bytes: u64,
}

/// The [`Sink`] that programs the flash: erases lazily, programs aligned runs.
#[derive(Debug)]
struct Programmer<F> {
    flash: F,
    config: FlashConfig,
    /// Region offset of the next byte to program.
    pos: u32,
    /// Region offset up to which the flash is erased and never programmed since.
    ready_to: u32,
    stats: FlashStats,
}

impl<F: NorFlash> Sink for Programmer<F> {
    type Error = FlashError<F::Error>;

    fn write(&mut self, bytes: &[u8]) -> Result<(), Self::Error> {
        let len = u32::try_from(bytes.len()).map_err(|_| FlashError::Full)?;
        let end = self.pos.checked_add(len).ok_or(FlashError::Full)?;
        if end > self.config.len {
            return Err(FlashError::Full);
        }
        if !bytes.len().is_multiple_of(F::WRITE_SIZE)
            || !self.pos.is_multiple_of(F::WRITE_SIZE as u32)
        {
            return Err(FlashError::BadRegion);
        }
        while self.ready_to < end {
            let erase = F::ERASE_SIZE as u32;
            if !self.ready_to.is_multiple_of(erase) {
                // The rest of this erase unit is not erased, and erasing it would destroy the
                // log's earlier blocks in the unit.
                return Err(FlashError::Full);
            }
            let (from, to) = erase_range(&self.config, self.ready_to, erase);
            self.flash.erase(from, to).map_err(FlashError::Flash)?;
            self.stats.erases += 1;
            self.stats.erased_bytes += u64::from(to - from);
            self.ready_to = to - self.config.start;
        }
        // Words of erased bytes at the end (padding on inverted parts, or data that happens to
        // be erased-looking) stay unprogrammed, so the erased area that follows the log always
        // means "may be programmed" (the resume scan relies on it).
        let word = F::WRITE_SIZE;
        let erased = self.config.erased;
        let keep = bytes
            .chunks(word)
            .rposition(|w| !all_erased(w, erased))
            .map_or(0, |last| (last + 1) * word);
        if keep > 0 {
            let run = bytes.get(..keep).unwrap_or_default();
            self.flash
                .write(self.config.start + self.pos, run)
                .map_err(FlashError::Flash)?;
            self.stats.programs += 1;
            self.stats.programmed_bytes += keep as u64;
        }
        self.pos = end;
        Ok(())
    }
}

/// Appends records to a log in NOR flash; see the [module docs](super) for the rules that make
/// it safe across power cuts.
#[derive(Debug)]
pub struct FlashWriter<F, B> {
    writer: Writer<Programmer<F>, B>,
}

impl<F: NorFlash, B: BorrowMut<[u8; BLOCK_SIZE]>> FlashWriter<F, B> {
    /// Opens the log in region `config` of `flash`, finding where it ends by scanning (after a
    /// reset or power cut, see the module docs), with `block` as the RAM block buffer.
    ///
    /// # Errors
    /// [`FlashError::BadRegion`] if the region does not fit the flash's geometry (or its
    /// `WRITE_SIZE` or `READ_SIZE` is over 32 bytes); a read error.
    pub fn open(mut flash: F, config: FlashConfig, block: B) -> Result<Self, FlashError<F::Error>> {
        let resumed = super::word::scan(&mut flash, config)?;
        let pos = resumed.pos;
        let programmer = Programmer {
            flash,
            config,
            pos,
            ready_to: resumed.ready_to,
            stats: FlashStats::default(),
        };
        let writer = Writer::with_options(
            programmer,
            block,
            &WriteOptions::new().start(u64::from(pos)),
        );
        Ok(Self { writer })
    }

    /// Lays out one record in the block buffer; complete blocks are programmed at once. The
    /// record is acknowledged (will survive a power cut) after the next successful
    /// [`flush`](Self::flush).
    ///
    /// # Errors
    /// [`FlashError::Full`] if the record does not fit in the rest of the region (nothing is
    /// written; smaller records may still fit). A flash error poisons the writer
    /// ([`FlashError::Poisoned`] from then on).
    pub fn add_record(&mut self, data: &[u8]) -> Result<Written, FlashError<F::Error>> {
        let sink = self.writer.sink();
        let limit = limit(&sink.config, sink.ready_to, F::ERASE_SIZE as u32);
        if self.writer.end_after(data.len()) > u64::from(limit) {
            return Err(FlashError::Full);
        }
        self.writer.add_record(data).map_err(flatten)
    }

    /// Programs every record laid out so far, padded to the flash's `WRITE_SIZE`.
    ///
    /// # Errors
    /// As for [`add_record`](Self::add_record).
    pub fn flush(&mut self) -> Result<(), FlashError<F::Error>> {
        self.writer.pad_to(F::WRITE_SIZE).map_err(flatten)?;
        self.writer.flush().map_err(flatten)
    }

    /// Region offset where the next record will start (the log's length).
    pub fn position(&self) -> u64 {
        self.writer.position()
    }

    /// Operations on the flash since [`open`](Self::open).
    pub fn stats(&self) -> FlashStats {
        self.writer.sink().stats
    }

    /// The region.
    pub fn config(&self) -> FlashConfig {
        self.writer.sink().config
    }

    /// Gives back the flash and the buffer; records not flushed are lost.
    pub fn into_inner(self) -> (F, B) {
        let (programmer, block) = self.writer.into_parts();
        (programmer.flash, block)
    }
}

fn flatten<E>(error: WriteError<FlashError<E>>) -> FlashError<E> {
    match error {
        WriteError::Sink(e) => e,
        WriteError::Poisoned => FlashError::Poisoned,
        WriteError::BadAlignment => FlashError::BadRegion,
    }
}

fn all_erased(bytes: &[u8], erased: u8) -> bool {
    bytes.iter().all(|&b| b == erased)
}
