//! The buffered flash writer: the small-RAM writer's engine, its programs gathered in a RAM
//! block and carried out a block (or a flush) at a time.

use core::borrow::BorrowMut;

use embedded_storage::nor_flash::{ErrorType, NorFlash, ReadNorFlash};

use super::config::{FlashConfig, MAX_WRITE};
use super::engine::Engine;
use super::error::FlashError;
use super::piece::read_aligned_sync;
use super::word::open;
use crate::format::BLOCK_SIZE;
use crate::writer::Written;

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
    /// Bytes programmed.
    pub programmed_bytes: u64,
    /// A ring's wraps from the region's end to its start.
    pub laps: u32,
    /// Bytes of a ring's erase groups erased while they held the log's oldest records: the
    /// records there aged out.
    pub aged_out_bytes: u64,
    /// Erase units the writer left after the flash refused a program or an erase in them, or
    /// a word read back wrong: each time it went on in the next unit (a ring's next group
    /// where the unit could not be left within its group).
    pub abandoned_units: u32,
    /// Records added and not yet flushed that refused programs took ([`FlashError::Lost`]).
    pub lost_records: u32,
}

/// The engine's programs, gathered in the RAM block: `from..to` (region offsets, whole words,
/// inside one block) are laid out and not programmed yet.
#[derive(Debug)]
struct Pending<B> {
    block: B,
    config: FlashConfig,
    from: u32,
    to: u32,
    /// Programs carried out on the flash, and their bytes.
    programs: u32,
    programmed_bytes: u64,
    /// The next program's first word is read back (the session's first program).
    verify: bool,
    /// A program failed (or its first word read back wrong, `true`): where it began.
    failed: Option<(u32, bool)>,
}

impl<B: BorrowMut<[u8; BLOCK_SIZE]>> Pending<B> {
    /// Takes a program of the engine: the words are gathered (the engine programs every word
    /// of the log, in order); a complete block is programmed.
    fn gather<F: NorFlash>(
        &mut self,
        flash: &mut F,
        at: u32,
        bytes: &[u8],
    ) -> Result<(), F::Error> {
        let at = at - self.config.start;
        if at != self.to {
            self.program(flash)?;
            (self.from, self.to) = (at, at);
        }
        let offset = (at % BLOCK_SIZE as u32) as usize;
        let buffer: &mut [u8; BLOCK_SIZE] = self.block.borrow_mut();
        if let Some(slot) = buffer.get_mut(offset..offset + bytes.len()) {
            slot.copy_from_slice(bytes);
        }
        self.to = at + bytes.len() as u32;
        if self.to.is_multiple_of(BLOCK_SIZE as u32) {
            self.program(flash)?;
        }
        Ok(())
    }

    /// Programs what is pending. A failure is noted (`failed`) and what was pending dropped.
    /// The session's first program is read back first, its first word programmed alone: a
    /// word that reads back wrong is noted the same way, nothing after it programmed, without
    /// an error.
    fn program<F: NorFlash>(&mut self, flash: &mut F) -> Result<(), F::Error> {
        if self.from < self.to {
            let from = self.from;
            self.from = self.to;
            let offset = (from % BLOCK_SIZE as u32) as usize;
            let len = (self.to - from) as usize;
            let at = self.config.start + from;
            let buffer: &mut [u8; BLOCK_SIZE] = self.block.borrow_mut();
            let pending = buffer.get(offset..offset + len).unwrap_or_default();
            let first = if core::mem::take(&mut self.verify) {
                F::WRITE_SIZE.min(len)
            } else {
                0
            };
            let (word, rest) = pending.split_at(first);
            for (at, bytes) in [(at, word), (at + first as u32, rest)] {
                if bytes.is_empty() {
                    continue;
                }
                if let Err(e) = flash.write(at, bytes) {
                    self.failed = Some((from, false));
                    return Err(e);
                }
                self.programs += 1;
                self.programmed_bytes += bytes.len() as u64;
                if first > 0 && at == self.config.start + from {
                    let mut back = [0u8; MAX_WRITE];
                    let back = back.get_mut(..first).unwrap_or_default();
                    if read_aligned_sync(flash, at, back).is_err() || back != word {
                        self.failed = Some((from, true));
                        return Ok(());
                    }
                }
            }
        }
        Ok(())
    }

    /// Drops what is pending (its program failed, or the writer moved on).
    fn discard(&mut self) {
        self.from = self.to;
    }
}

/// The flash as the engine sees it in the buffered writer: programs gathered in the RAM block,
/// an erase done at once (after programming what is pending, which lies in an earlier block).
struct Gather<'a, F, B> {
    flash: &'a mut F,
    pending: &'a mut Pending<B>,
}

impl<F: NorFlash, B> ErrorType for Gather<'_, F, B> {
    type Error = F::Error;
}

impl<F: NorFlash, B: BorrowMut<[u8; BLOCK_SIZE]>> ReadNorFlash for Gather<'_, F, B> {
    const READ_SIZE: usize = F::READ_SIZE;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), F::Error> {
        self.flash.read(offset, bytes)
    }

    fn capacity(&self) -> usize {
        self.flash.capacity()
    }
}

impl<F: NorFlash, B: BorrowMut<[u8; BLOCK_SIZE]>> NorFlash for Gather<'_, F, B> {
    const WRITE_SIZE: usize = F::WRITE_SIZE;
    const ERASE_SIZE: usize = F::ERASE_SIZE;

    fn erase(&mut self, from: u32, to: u32) -> Result<(), F::Error> {
        self.pending.program(self.flash)?;
        self.flash.erase(from, to)
    }

    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), F::Error> {
        self.pending.gather(self.flash, offset, bytes)
    }
}

/// Appends records to a log in NOR flash, gathering what it programs in a 32 KiB RAM block:
/// a complete block is programmed at once, the rest on [`flush`](Self::flush), so records not
/// flushed never reach the flash. See the [module docs](super) for the layout and the rules
/// that make it safe across power cuts.
///
/// The flash holds exactly the bytes [`WordWriter`](super::WordWriter) puts there for the same
/// records, flushes and reopenings: both are driven by the same engine.
///
/// ```
/// # #[cfg(not(feature = "mock-flash"))] fn main() {}
/// # #[cfg(feature = "mock-flash")]
/// # fn main() -> Result<(), logfmt_core::flash::FlashError<logfmt_core::flash::MockError>> {
/// use logfmt_core::flash::{FlashConfig, FlashWriter, MockFlash};
/// use logfmt_core::BLOCK_SIZE;
///
/// let (mut memory, mut programmed) = ([0u8; BLOCK_SIZE], [false; BLOCK_SIZE / 4]);
/// let mut flash = MockFlash::<4, 4096>::new(&mut memory, &mut programmed, 0xFF).unwrap();
/// let mut block = [0u8; BLOCK_SIZE];
/// let config = FlashConfig::new(0, BLOCK_SIZE as u32);
/// let mut writer = FlashWriter::open(&mut flash, config, &mut block)?;
/// writer.add_record(b"30 bytes of sensor readings...")?;
/// writer.flush()?; // acknowledged: survives a power cut
/// // A 7-byte header and 30 bytes: 37 bytes, the rest of the last 4-byte word left erased.
/// assert_eq!(writer.position(), 40);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct FlashWriter<F, B> {
    flash: F,
    engine: Engine,
    pending: Pending<B>,
}

impl<F: NorFlash, B: BorrowMut<[u8; BLOCK_SIZE]>> FlashWriter<F, B> {
    /// Opens the log in region `config` of `flash`, finding where it ends in small
    /// reads (after a reset or power cut, see the module docs), with `block` as the RAM block.
    ///
    /// # Errors
    /// [`FlashError::BadRegion`] if the region does not fit the flash's geometry (or its
    /// `WRITE_SIZE` or `READ_SIZE` is over 32 bytes); a read error of kind `NotAligned` or
    /// `OutOfBounds` (one of kind `Other`, such as an ECC error, reads as unknown bytes:
    /// see [the module docs](super#power-cuts-on-parts-with-per-word-ecc)).
    pub fn open(mut flash: F, config: FlashConfig, block: B) -> Result<Self, FlashError<F::Error>> {
        let resumed = open(&mut flash, config)?;
        // The block's first program is read back, not the engine's gathering.
        let engine = Engine::new(config, F::WRITE_SIZE, F::ERASE_SIZE, resumed, false);
        let pending = Pending {
            block,
            config,
            from: 0,
            to: 0,
            programs: 0,
            programmed_bytes: 0,
            verify: true,
            failed: None,
        };
        Ok(Self {
            flash,
            engine,
            pending,
        })
    }

    /// Lays out one record in the RAM block; complete blocks are programmed at once. The
    /// record is acknowledged (will survive a power cut) after the next successful
    /// [`flush`](Self::flush).
    ///
    /// # Errors
    /// [`FlashError::Full`] if the record does not fit in the rest of the region (nothing is
    /// written; smaller records may still fit). A program or erase the flash refuses is
    /// survived ([refused programs](super#refused-programs-and-erases)); a flash error that is
    /// not poisons the writer ([`FlashError::Poisoned`] from then on).
    pub fn add_record(&mut self, data: &[u8]) -> Result<Written, FlashError<F::Error>> {
        self.add(data, false)
    }

    /// Lays out a [pack](crate::pack) of records, as
    /// [`WordWriter::add_pack`](super::WordWriter::add_pack) does.
    ///
    /// # Errors
    /// As for [`add_record`](Self::add_record).
    pub fn add_pack(&mut self, pack: &[u8]) -> Result<Written, FlashError<F::Error>> {
        self.add(pack, true)
    }

    fn add(&mut self, data: &[u8], pack: bool) -> Result<Written, FlashError<F::Error>> {
        let mut tries = 0;
        loop {
            let mut gather = Gather {
                flash: &mut self.flash,
                pending: &mut self.pending,
            };
            let result = self.engine.add_sync(&mut gather, data, pack);
            match self.failure(result) {
                Ok(written) => {
                    self.engine.ended(written.end, self.pending.from);
                    return Ok(written);
                }
                Err(e) => self.engine.recover(e, &mut tries)?,
            }
        }
    }

    /// `result`, unless a program of the block failed (or read back wrong) meanwhile: then
    /// that failure, told to the engine.
    fn failure<T>(
        &mut self,
        result: Result<T, FlashError<F::Error>>,
    ) -> Result<T, FlashError<F::Error>> {
        let Some((at, mismatch)) = self.pending.failed.take() else {
            return result;
        };
        self.pending.discard();
        self.engine.failed_from(at);
        match result {
            Err(e) if !mismatch => Err(e),
            _ => Err(FlashError::Mismatch { offset: at }),
        }
    }

    /// Programs every record laid out so far; the last, partly filled flash word is programmed
    /// with its rest left erased, and the next record starts at the next word boundary.
    ///
    /// # Errors
    /// As for [`add_record`](Self::add_record); [`FlashError::Lost`] once after a refused
    /// program took records laid out since the last flush (in this writer, the ones in the
    /// RAM block when its program was refused): every other record is durable then.
    pub fn flush(&mut self) -> Result<(), FlashError<F::Error>> {
        self.durably(|engine, gather| engine.flush_sync(gather))
    }

    /// Commits read cursor `cursor`, as [`WordWriter::commit`](super::WordWriter::commit):
    /// the records laid out before it are programmed with it.
    ///
    /// # Errors
    /// As [`WordWriter::commit`](super::WordWriter::commit).
    pub fn commit(&mut self, cursor: crate::cursor::Cursor) -> Result<(), FlashError<F::Error>> {
        self.durably(|engine, gather| engine.commit_sync(gather, cursor))
    }

    /// Runs `op` (a flush or a commit) and programs what it left in the block, again after
    /// each refused program the engine survives; then reports the records refusals took.
    fn durably(
        &mut self,
        mut op: impl FnMut(&mut Engine, &mut Gather<'_, F, B>) -> Result<(), FlashError<F::Error>>,
    ) -> Result<(), FlashError<F::Error>> {
        let mut tries = 0;
        loop {
            let mut gather = Gather {
                flash: &mut self.flash,
                pending: &mut self.pending,
            };
            let mut result = op(&mut self.engine, &mut gather);
            if result.is_ok() {
                result = self
                    .pending
                    .program(&mut self.flash)
                    .map_err(FlashError::Flash);
            }
            match self.failure(result) {
                Ok(()) => return self.engine.flushed(),
                Err(e) => self.engine.recover(e, &mut tries)?,
            }
        }
    }

    /// The flash, to read what is flushed while the writer is open, as
    /// [`WordWriter::flash_mut`](super::WordWriter::flash_mut).
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
        // Programs as carried out on the flash (the engine's are gathered in the block).
        FlashStats {
            programs: self.pending.programs,
            programmed_bytes: self.pending.programmed_bytes,
            ..self.engine.stats()
        }
    }

    /// The region, with the word size it is written in filled in
    /// ([`FlashConfig::write_size`]): a reader opened with it skips a flush's padding unread.
    pub fn config(&self) -> FlashConfig {
        self.engine.config()
    }

    /// Gives back the flash and the buffer; records not flushed are lost.
    pub fn into_inner(self) -> (F, B) {
        (self.flash, self.pending.block)
    }
}
