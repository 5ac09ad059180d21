//! Appending to a flash log: the resume scan, lazy erase, aligned programming.

use core::borrow::BorrowMut;

use embedded_storage::nor_flash::NorFlash;

use super::{FlashConfig, FlashError};
use crate::block::{BlockParser, ChunkRules, Parsed};
use crate::error::WriteError;
use crate::format::{BLOCK_SIZE, HEADER_SIZE};
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
            let block_end = (self.ready_to / BLOCK_SIZE as u32 + 1) * BLOCK_SIZE as u32;
            let erase_end = block_end.next_multiple_of(erase).min(self.config.len);
            let (from, to) = (
                self.config.start + self.ready_to,
                self.config.start + erase_end,
            );
            self.flash.erase(from, to).map_err(FlashError::Flash)?;
            self.stats.erases += 1;
            self.stats.erased_bytes += u64::from(to - from);
            self.ready_to = erase_end;
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
    /// [`FlashError::BadRegion`] if the region does not fit the flash's geometry; a read error.
    pub fn open(
        mut flash: F,
        config: FlashConfig,
        mut block: B,
    ) -> Result<Self, FlashError<F::Error>> {
        config.check(flash.capacity(), F::WRITE_SIZE, F::ERASE_SIZE)?;
        let (pos, ready_to) = resume_point(&mut flash, &config, block.borrow_mut())?;
        let programmer = Programmer {
            flash,
            config,
            pos,
            ready_to,
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
        if self.writer.end_after(data.len()) > u64::from(self.writer.sink().config.len) {
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

/// Where to continue the log: `(position, ready_to)` in region offsets.
fn resume_point<F: NorFlash>(
    flash: &mut F,
    config: &FlashConfig,
    buffer: &mut [u8; BLOCK_SIZE],
) -> Result<(u32, u32), FlashError<F::Error>> {
    let block = BLOCK_SIZE as u32;
    let header_read = HEADER_SIZE
        .next_multiple_of(F::READ_SIZE.max(1))
        .min(BLOCK_SIZE);
    let mut last_used = None;
    for i in 0..config.blocks() {
        let head = buffer.get_mut(..header_read).unwrap_or_default();
        flash
            .read(config.start + i * block, head)
            .map_err(FlashError::Flash)?;
        if !all_erased(head.get(..HEADER_SIZE).unwrap_or_default(), config.erased) {
            last_used = Some(i);
        }
    }
    let Some(last) = last_used else {
        return fresh_block(flash, config, buffer, 0);
    };
    let last_start = last * block;
    flash
        .read(config.start + last_start, buffer)
        .map_err(FlashError::Flash)?;
    let end = match config.resume {
        super::Resume::NextBlock => None,
        super::Resume::SameBlock => clean_end(buffer, config.erased, F::WRITE_SIZE),
    };
    match end {
        Some(end) if end < BLOCK_SIZE => {
            let block_end = last_start + block;
            let unit_end = block_end
                .next_multiple_of(F::ERASE_SIZE as u32)
                .min(config.len);
            let ready_to = if blocks_erased(flash, config, buffer, block_end, unit_end)? {
                unit_end
            } else {
                block_end
            };
            Ok((last_start + end as u32, ready_to))
        }
        _ => fresh_block(flash, config, buffer, last_start + block),
    }
}

/// The first usable fresh block at or after region offset `start`.
fn fresh_block<F: NorFlash>(
    flash: &mut F,
    config: &FlashConfig,
    buffer: &mut [u8; BLOCK_SIZE],
    mut start: u32,
) -> Result<(u32, u32), FlashError<F::Error>> {
    let erase = F::ERASE_SIZE as u32;
    loop {
        if start >= config.len || start.is_multiple_of(erase) {
            return Ok((start, start));
        }
        // Inside an erase unit begun earlier: usable only if the rest of the unit is erased.
        let unit_end = start.next_multiple_of(erase).min(config.len);
        if blocks_erased(flash, config, buffer, start, unit_end)? {
            return Ok((start, unit_end));
        }
        start = unit_end;
    }
}

/// Whether every byte of region offsets `from..to` (whole blocks) reads as erased.
fn blocks_erased<F: NorFlash>(
    flash: &mut F,
    config: &FlashConfig,
    buffer: &mut [u8; BLOCK_SIZE],
    from: u32,
    to: u32,
) -> Result<bool, FlashError<F::Error>> {
    let mut at = from;
    while at < to {
        flash
            .read(config.start + at, buffer)
            .map_err(FlashError::Flash)?;
        if !all_erased(buffer, config.erased) {
            return Ok(false);
        }
        at += BLOCK_SIZE as u32;
    }
    Ok(true)
}

/// Where appending may continue in a written block: after its last whole chunk, if only erased
/// bytes follow from a word boundary; `BLOCK_SIZE` if the block is complete; `None` if it holds
/// anything else (a torn chunk), so that it must never be written again.
fn clean_end(block: &[u8; BLOCK_SIZE], erased: u8, write_size: usize) -> Option<usize> {
    let rules = ChunkRules {
        erased: Some(erased),
        ..ChunkRules::default()
    };
    for parsed in BlockParser::new(block).last_block(false).rules(rules) {
        match parsed {
            Parsed::Chunk(_) => {}
            Parsed::Erased { offset, .. } => {
                let rest = block.get(offset..).unwrap_or_default();
                return (offset.is_multiple_of(write_size) && all_erased(rest, erased))
                    .then_some(offset);
            }
            // A trailer or zero padding to the end: the block was sealed.
            Parsed::Trailer { .. } | Parsed::ZeroHeader { .. } => return Some(BLOCK_SIZE),
            _ => return None,
        }
    }
    Some(BLOCK_SIZE)
}
