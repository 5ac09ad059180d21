//! The small-RAM writer's engine: it turns the [layout](super::layout)'s pieces into flash
//! operations — erase these units, program this word. Its steps are written once, as `async`
//! code, and `maybe-async-cfg` makes a blocking copy of them with no future machinery
//! (`add_sync`, `flush_sync`) besides the async one (`add_async`, `flush_async`, with feature
//! `embedded-storage-async`). The blocking [`WordWriter`](super::WordWriter) runs it on its
//! flash, the async `AsyncWordWriter` on an async flash, and the buffered
//! [`FlashWriter`](super::FlashWriter) on its RAM block.
//!
//! Mechanics (the policy is in `layout` and `resume`):
//! - the log's bytes go through one staging word of `WRITE_SIZE` bytes, a byte at a time; a
//!   full word is programmed — every word of the log, each once, erased-looking or not (the
//!   resume walk never resumes before the end of what the log's chunks and bytes reach);
//! - a flush stages erased bytes to the end of the word and programs it: the log continues at
//!   the next word boundary;
//! - the resume marker a reopening asks for is laid out before the first record (or flush)
//!   after the reopening, so reopening programs nothing;
//! - before a word is programmed in a block not yet erased, the block's erase units are erased
//!   (lazily, a block at a time); a ring erases the group after the one it enters once that
//!   group's first ring header is on the flash;
//! - the engine is busy from the start of an operation to its end: if the operation stops (a
//!   dropped future), it stays busy and refuses everything ([`FlashError::Poisoned`]): the
//!   flash is then in the state a power cut leaves, and reopening resumes safely;
//! - a program or erase the flash refuses (an error of kind `Other`, or a word that reads back
//!   other than programmed: the session's first program is read back) is survived: the
//!   writer leaves that erase unit for the next one (a ring: of the same erase group once the
//!   block's ring header is on the flash, else the next group), erased first, resumes there
//!   with the resume marker, and the driver tries the operation again ([`Engine::recover`]),
//!   at most [`MAX_ABANDONED`] units in a row.

use embedded_storage::nor_flash::NorFlash as NorFlashSync;
#[cfg(feature = "embedded-storage-async")]
use embedded_storage_async::nor_flash::NorFlash as NorFlashAsync;

use embedded_storage::nor_flash::{NorFlashError, NorFlashErrorKind};

use super::config::{FlashConfig, MAX_WRITE};
use super::error::FlashError;
use super::layout::{self, MARKER, RecordLayout};
#[cfg(feature = "embedded-storage-async")]
use super::piece::read_aligned_async;
use super::piece::read_aligned_sync;
use super::resume::Resumed;
use super::writer::FlashStats;
use crate::cursor::{CURSOR_CHUNK, Cursor};
use crate::format::{BLOCK_SIZE, HEADER_SIZE};
use crate::ring::{RING_HEADER_SIZE, RingHeader};
use crate::writer::Written;

/// How many erase units in a row one operation of a flash writer may leave after refused
/// programs or erases before it gives up (the writer is then poisoned; reopening resumes).
pub const MAX_ABANDONED: u8 = 3;

/// The records added whose last bytes are not on the flash yet (in the staged word, or a
/// buffered writer's block): what a refused program takes with it.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct InFlight {
    /// How many.
    records: u32,
    /// Where the last of them ends.
    last_end: u32,
}

impl InFlight {
    /// A record ending at `end` was laid out; the flash holds everything before
    /// `programmed_to`.
    fn ended(&mut self, end: u32, programmed_to: u32) {
        if self.last_end <= programmed_to {
            self.records = 0;
        }
        if end > programmed_to {
            (self.records, self.last_end) = (self.records + 1, end);
        }
    }

    /// The records a failure at `failed_at` loses: everything before it is on the flash, and
    /// the bytes that failed lie in one block (the staged word, or a buffered writer's block).
    fn lost_at(&mut self, failed_at: u32) -> u32 {
        let block = BLOCK_SIZE as u32;
        let same_block = self.last_end.saturating_sub(1) / block == failed_at / block;
        let lost = if same_block && self.last_end > failed_at {
            self.records
        } else {
            0
        };
        *self = Self::default();
        lost
    }
}

/// The engine's state: everything the small-RAM writer keeps between calls.
#[derive(Debug, Clone)]
pub(super) struct Engine {
    config: FlashConfig,
    write_size: u8,
    /// An operation began and did not end (a flash error, or a dropped future).
    busy: bool,
    erase_size: u32,
    /// Region offset of the log's end: every byte laid out, programmed or staged.
    pos: u32,
    /// Region offset up to which the flash is erased and not programmed since.
    ready_to: u32,
    /// The resume marker is still to be laid out, before anything else.
    marker: bool,
    /// The staged bytes of the word that holds `pos`: `pos % write_size` of them.
    word: [u8; MAX_WRITE],
    stats: FlashStats,
    /// A ring's state (unused in a bounded log).
    ring: RingState,
    /// The next program is read back (the session's first: a power cut at the first program
    /// of the session before may have left that word unprogrammable yet reading erased).
    verify: bool,
    /// Region offset where the program or erase that failed last began.
    failed_at: Option<u32>,
    /// That failure was an erase's.
    failed_erase: bool,
    in_flight: InFlight,
    /// Records added since the last flush that a refused program took: the next flush says so.
    lost: u32,
    /// An erase unit (its region offset) to erase before the next program: where the log went
    /// on after a refusal.
    erase_first: Option<u32>,
}

/// What a ring writer keeps: its lap, its record count, and which erase groups are erased
/// (group indices fit 16 bits: a ring has at most 65 535 blocks).
#[derive(Debug, Clone, Copy)]
struct RingState {
    /// The lap of the block being written.
    lap: u32,
    /// Records begun in the log so far (wrapping).
    records: u32,
    /// The group being written, erased after the log's end.
    ready: Option<u16>,
    /// The group after it, erased ahead.
    ahead: Option<u16>,
    /// The next group is to be erased once the ring header being laid out (the first one
    /// written in the current group) is programmed.
    due: bool,
}

impl Engine {
    /// An engine appending where a reopening found the log's end (with the resume marker
    /// first, if the reopening asks for it).
    pub(super) fn new(
        config: FlashConfig,
        write_size: usize,
        erase_size: usize,
        resumed: Resumed,
        verify: bool,
    ) -> Self {
        let group = FlashConfig::group_bytes(erase_size as u32);
        let ring = RingState {
            lap: resumed.lap,
            records: resumed.records,
            ready: (resumed.ready_to > resumed.pos).then_some((resumed.pos / group) as u16),
            ahead: None,
            due: false,
        };
        Self {
            config,
            write_size: write_size.min(MAX_WRITE) as u8,
            busy: false,
            erase_size: erase_size as u32,
            pos: resumed.pos,
            ready_to: resumed.ready_to,
            marker: resumed.marker,
            // Every byte is staged before its word is programmed.
            word: [0; MAX_WRITE],
            stats: FlashStats::default(),
            ring,
            verify,
            failed_at: None,
            failed_erase: false,
            in_flight: InFlight::default(),
            lost: 0,
            erase_first: None,
        }
    }

    /// After an operation failed with `error`: whether to try it again. A program or erase
    /// the flash refused (an error of kind `Other`, or a word that read back wrong) is
    /// survived: the writer leaves the erase unit where it failed for the next one
    /// ([`unit_after`](Self::unit_after)), with the resume marker first, and the
    /// records added since the last flush whose bytes were not all programmed are counted
    /// lost (the next flush reports them). `Ok` to try again, at most [`MAX_ABANDONED`] times
    /// (`tries` counts them); else the error to return, and the writer is poisoned.
    pub(super) fn recover<E: NorFlashError>(
        &mut self,
        error: FlashError<E>,
        tries: &mut u8,
    ) -> Result<(), FlashError<E>> {
        let refused = match &error {
            FlashError::Flash(e) => e.kind() == NorFlashErrorKind::Other,
            FlashError::Mismatch { .. } => true,
            _ => false,
        };
        let failed_at = match self.failed_at.take() {
            // Not the flash's failure (a full region, a cursor ahead, a poisoned writer).
            None => return Err(error),
            Some(at) if refused && *tries < MAX_ABANDONED => at,
            Some(_) => {
                // Not survived: the flash is in an unknown state until reopened.
                self.busy = true;
                return Err(error);
            }
        };
        *tries += 1;
        let lost = self.in_flight.lost_at(failed_at);
        self.lost += lost;
        self.stats.lost_records += lost;
        self.stats.abandoned_units += 1;
        let next = self.unit_after(failed_at);
        if next >= self.config.len {
            // No unit left in a bounded region: nothing more fits.
            (self.pos, self.ready_to, self.marker, self.busy) =
                (self.config.len, self.config.len, false, false);
            return Err(FlashError::Full);
        }
        (self.pos, self.marker, self.busy) = (next, true, false);
        Ok(())
    }

    /// Where the log goes on after a refusal at region offset `failed_at`: the next erase
    /// unit, erased before its first program (the flash after the log's end is erased, but
    /// for a unit whose first program an earlier refusal's retry may have begun). In a ring:
    /// in the same erase group, after a block's ring header is on the flash (a block is read
    /// only from its ring header); else at the next group, erased by the group's rules (the
    /// one after it erased ahead once its first ring header is on the flash), one lap later
    /// past the region's end. The region's length if a bounded region has no unit left.
    fn unit_after(&mut self, failed_at: u32) -> u32 {
        let (unit, block) = (self.erase_size, BLOCK_SIZE as u32);
        let mut next = (failed_at / unit + 1) * unit;
        if self.config.ring {
            let header = (RING_HEADER_SIZE as u32).next_multiple_of(u32::from(self.write_size));
            if failed_at % block < header {
                next = next.max((failed_at / block + 1) * block);
            }
            let group = self.group();
            if next / group != failed_at / group || self.failed_erase {
                // (A group whose erase failed is left whole.)
                next = next.next_multiple_of(group);
                if next >= self.config.len {
                    next = 0;
                    self.ring.lap = self.ring.lap.wrapping_add(1);
                    self.stats.laps += 1;
                }
                (self.ring.ready, self.ring.ahead, self.ring.due) = (None, None, false);
                return next;
            }
        } else if next >= self.config.len {
            return next;
        }
        // (Past that unit, a bounded log's flash is erased again before it is programmed:
        // an erase that failed may have left anything there.)
        (self.erase_first, self.ready_to) = (Some(next), next + unit);
        next
    }

    /// A record ending at region offset `end` was laid out by a writer whose flash holds
    /// everything before `programmed_to` (a buffered writer's block programmed so far).
    pub(super) fn ended(&mut self, end: u64, programmed_to: u32) {
        self.in_flight.ended(end as u32, programmed_to);
    }

    /// A record ending at `end` was laid out by a small-RAM writer: the flash holds every
    /// word before the one staged.
    pub(super) fn ended_word(&mut self, end: u64) {
        let word = u32::from(self.write_size);
        self.ended(end, self.pos - self.pos % word);
    }

    /// A buffered writer's program of what it gathered from `at` failed (its words are lost,
    /// whatever the engine staged after them).
    pub(super) fn failed_from(&mut self, at: u32) {
        (self.failed_at, self.failed_erase) = (Some(at), false);
    }

    /// The region, with the word size this writer writes in: a reader opened with it skips
    /// a flush's padding unread ([`FlashConfig::write_size`]).
    pub(super) fn config(&self) -> FlashConfig {
        FlashConfig {
            write_size: Some(self.write_size),
            ..self.config
        }
    }

    pub(super) fn stats(&self) -> FlashStats {
        self.stats
    }

    /// Where the next record goes: the log's end, after the resume marker if it is still to
    /// be laid out.
    pub(super) fn position(&self) -> u64 {
        let marker = if self.marker { HEADER_SIZE as u64 } else { 0 };
        u64::from(self.pos) + marker
    }

    /// A driver's flush is done: every record laid out is on the flash, but those a refused
    /// program took since the last flush, which this reports once
    /// ([`FlashError::Lost`]).
    pub(super) fn flushed<E>(&mut self) -> Result<(), FlashError<E>> {
        self.in_flight = InFlight::default();
        match core::mem::take(&mut self.lost) {
            0 => Ok(()),
            records => Err(FlashError::Lost { records }),
        }
    }

    /// Begins an operation: refused while one is unfinished.
    fn begin<E>(&mut self) -> Result<(), FlashError<E>> {
        if self.busy {
            return Err(FlashError::Poisoned);
        }
        self.busy = true;
        Ok(())
    }

    /// Whether the writer takes `cursor`: in a ring, whose writer counts the records, one
    /// whose next record has begun (or is the next to begin); in a bounded log, any.
    fn accepts(&self, cursor: Cursor) -> bool {
        !self.config.ring || !crate::ring::newer(cursor.next, self.ring.records)
    }

    /// Whether a record of `len` bytes fits.
    fn fits(&self, len: usize) -> bool {
        if self.config.ring {
            // No longer than what the ring keeps besides the group erased ahead, with a ring
            // header, a chunk header and a trailer per block.
            let blocks = (self.config.len / BLOCK_SIZE as u32) as usize;
            let per_block = RING_HEADER_SIZE + 2 * HEADER_SIZE;
            let keeps = (self.config.len - self.group()) as usize;
            len <= keeps.saturating_sub(blocks * per_block)
        } else {
            layout::end_after(self.position(), len) <= u64::from(self.config.len)
        }
    }

    /// The ring header of the block being written.
    fn ring_header(&self) -> RingHeader {
        RingHeader {
            lap: self.ring.lap,
            records: self.ring.records,
            blocks: (self.config.len / BLOCK_SIZE as u32) as u16,
            group: (self.group() / BLOCK_SIZE as u32) as u8,
            write_size: self.write_size,
            erased: self.config.erased,
        }
    }

    /// Bytes of a ring's erase group.
    fn group(&self) -> u32 {
        FlashConfig::group_bytes(self.erase_size)
    }

    /// The erase of a ring's erase group `group`, counted.
    fn erase_group(&mut self, group: u16) -> (u32, u32) {
        let bytes = self.group();
        self.stats.erases += 1;
        self.stats.erased_bytes += u64::from(bytes);
        let from = self.config.start + u32::from(group) * bytes;
        (from, from + bytes)
    }

    /// Makes sure the flash is erased up to region offset `end` before the word there is
    /// programmed: the erase to do first, if any (the state moves on as if it succeeds).
    /// `ready_to` is an erase unit boundary.
    fn prepare(&mut self, end: u32) -> Option<(u32, u32)> {
        if let Some(from) = self.erase_first.take() {
            self.stats.erases += 1;
            self.stats.erased_bytes += u64::from(self.erase_size);
            let from = self.config.start + from;
            return Some((from, from + self.erase_size));
        }
        if self.config.ring {
            // The group of the word at `end`: erased with the group before it (ahead), or now.
            let bytes = self.group();
            let group = ((end - u32::from(self.write_size)) / bytes) as u16;
            if self.ring.ready == Some(group) {
                return None;
            }
            if self.ring.ahead == Some(group) {
                (self.ring.ready, self.ring.ahead) = (Some(group), None);
                return None;
            }
            self.ring.ready = Some(group);
            return Some(self.erase_group(group));
        }
        if self.ready_to >= end {
            return None;
        }
        let (from, to) = erase_range(&self.config, self.ready_to, self.erase_size);
        self.stats.erases += 1;
        self.stats.erased_bytes += u64::from(to - from);
        self.ready_to = to - self.config.start;
        Some((from, to))
    }

    /// After the word ending at `pos` is programmed: the erase of the group after the one
    /// entered, once its first ring header is on the flash (the state moves on as if it
    /// succeeds).
    fn erase_ahead(&mut self) -> Option<(u32, u32)> {
        let in_block = (self.pos - 1) as usize % BLOCK_SIZE + 1;
        if !self.ring.due || in_block < RING_HEADER_SIZE {
            return None;
        }
        self.ring.due = false;
        let groups = self.config.len / self.group();
        let next = (((self.pos - 1) / self.group() + 1) % groups) as u16;
        if self.ring.ahead == Some(next) {
            return None;
        }
        self.ring.ahead = Some(next);
        if self.ring.lap != self.config.first_lap || next == 0 {
            // Log bytes of an earlier lap (or of this one, the region's start) aged out.
            self.stats.aged_out_bytes += u64::from(self.group());
        }
        Some(self.erase_group(next))
    }
}

#[maybe_async_cfg::maybe(
    idents(
        NorFlash,
        add(fn),
        flush(fn),
        commit(fn),
        before_chunk(fn),
        put(fn),
        put_erased(fn),
        stage(fn),
        verify(fn),
        erase(fn),
        read_aligned(fn),
    ),
    keep_self,
    sync(),
    async(feature = "embedded-storage-async")
)]
impl Engine {
    /// Appends a record of `data` (a [pack](crate::pack) if `pack`): its words are programmed
    /// as they fill, the last partial word staged for the next record or flush.
    pub(super) async fn add<F: NorFlash>(
        &mut self,
        flash: &mut F,
        data: &[u8],
        pack: bool,
    ) -> Result<Written, FlashError<F::Error>> {
        if !self.busy && !self.fits(data.len()) {
            return Err(FlashError::Full);
        }
        self.begin()?;
        let mut layout = RecordLayout::new(pack);
        let mut first = None;
        loop {
            Self::before_chunk(self, flash, true).await?;
            let Some(piece) = layout.next(data, self.pos as usize % BLOCK_SIZE) else {
                break;
            };
            Self::put_erased(self, flash, piece.trailer).await?;
            if first.is_none() {
                // After the trailer (if any): where the record's first header goes.
                first = Some(self.pos);
                self.ring.records = self.ring.records.wrapping_add(1);
            }
            Self::put(self, flash, &piece.header).await?;
            let payload = data.get(piece.payload).unwrap_or_default();
            Self::put(self, flash, payload).await?;
        }
        self.busy = false;
        Ok(Written {
            offset: u64::from(first.unwrap_or(self.pos)),
            end: u64::from(self.pos),
        })
    }

    /// Programs the last, partly staged word, its rest left erased (after the resume marker,
    /// if it is still to be laid out and there is room for it).
    pub(super) async fn flush<F: NorFlash>(
        &mut self,
        flash: &mut F,
    ) -> Result<(), FlashError<F::Error>> {
        self.begin()?;
        // A marker with no room left (a full region) is of no use.
        self.marker &= self.position() <= u64::from(self.config.len);
        if self.marker {
            Self::before_chunk(self, flash, false).await?;
        }
        let word = u32::from(self.write_size);
        let rest = (word - self.pos % word) % word;
        Self::put_erased(self, flash, rest as usize).await?;
        self.busy = false;
        Ok(())
    }

    /// Lays out the read cursor `cursor` as one chunk (in the next block, after the rest of
    /// this one left erased, if fewer than its 12 bytes are left), then flushes: the chunk is
    /// on the flash when this returns.
    pub(super) async fn commit<F: NorFlash>(
        &mut self,
        flash: &mut F,
        cursor: Cursor,
    ) -> Result<(), FlashError<F::Error>> {
        if !self.busy && !self.accepts(cursor) {
            return Err(FlashError::CursorAhead);
        }
        if !self.busy && !self.config.ring {
            let at = self.position();
            let in_block = (at % BLOCK_SIZE as u64) as usize;
            let skip = if BLOCK_SIZE - in_block < CURSOR_CHUNK {
                BLOCK_SIZE - in_block
            } else {
                0
            };
            if at + (skip + CURSOR_CHUNK) as u64 > u64::from(self.config.len) {
                return Err(FlashError::Full);
            }
        }
        self.begin()?;
        Self::before_chunk(self, flash, true).await?;
        let offset = self.pos as usize % BLOCK_SIZE;
        if BLOCK_SIZE - offset < CURSOR_CHUNK {
            Self::put_erased(self, flash, BLOCK_SIZE - offset).await?;
            Self::before_chunk(self, flash, true).await?;
        }
        let chunk = cursor.encode();
        Self::put(self, flash, &chunk).await?;
        self.busy = false;
        Self::flush(self, flash).await
    }

    /// What goes before the next chunk: in a ring, the trailer of a block with no room for a
    /// header and the ring header that begins every block (after the wrap to the region's
    /// start, one lap later); the resume marker, if it is due (and after it, if `again`, a
    /// ring's own bytes once more).
    async fn before_chunk<F: NorFlash>(
        &mut self,
        flash: &mut F,
        again: bool,
    ) -> Result<(), FlashError<F::Error>> {
        loop {
            if self.config.ring {
                let offset = self.pos as usize % BLOCK_SIZE;
                if offset != 0 && BLOCK_SIZE - offset < HEADER_SIZE {
                    Self::put_erased(self, flash, BLOCK_SIZE - offset).await?;
                }
                if self.pos.is_multiple_of(BLOCK_SIZE as u32) {
                    if self.pos >= self.config.len {
                        self.pos = 0;
                        self.ring.lap = self.ring.lap.wrapping_add(1);
                        self.stats.laps += 1;
                    }
                    // The first ring header written in a group: the next group is erased once
                    // this one is on the flash.
                    self.ring.due |= self.ring.ready != Some((self.pos / self.group()) as u16);
                    Self::put(self, flash, &self.ring_header().encode()).await?;
                }
            }
            if !self.marker {
                return Ok(());
            }
            self.marker = false;
            Self::put(self, flash, &MARKER).await?;
            if !again {
                return Ok(());
            }
        }
    }

    /// Lays out `bytes`.
    async fn put<F: NorFlash>(
        &mut self,
        flash: &mut F,
        bytes: &[u8],
    ) -> Result<(), FlashError<F::Error>> {
        for &byte in bytes {
            Self::stage(self, flash, byte).await?;
        }
        Ok(())
    }

    /// Lays out `len` erased bytes.
    async fn put_erased<F: NorFlash>(
        &mut self,
        flash: &mut F,
        len: usize,
    ) -> Result<(), FlashError<F::Error>> {
        for _ in 0..len {
            Self::stage(self, flash, self.config.erased).await?;
        }
        Ok(())
    }

    /// Stages one byte; a full word is programmed (after the erase it needs, and before the
    /// erase ahead it makes due).
    async fn stage<F: NorFlash>(
        &mut self,
        flash: &mut F,
        byte: u8,
    ) -> Result<(), FlashError<F::Error>> {
        let word = usize::from(self.write_size);
        let staged = self.pos as usize % word;
        if let Some(slot) = self.word.get_mut(staged) {
            *slot = byte;
        }
        self.pos += 1;
        if staged + 1 < word {
            return Ok(());
        }
        if let Some(range) = self.prepare(self.pos) {
            Self::erase(self, flash, range).await?;
        }
        self.stats.programs += 1;
        self.stats.programmed_bytes += word as u64;
        let at = self.pos - word as u32;
        (self.failed_at, self.failed_erase) = (Some(at), false);
        let bytes = self.word.get(..word).unwrap_or_default();
        flash
            .write(self.config.start + at, bytes)
            .await
            .map_err(FlashError::Flash)?;
        if core::mem::take(&mut self.verify) {
            Self::verify(self, flash, at).await?;
        }
        self.failed_at = None;
        if let Some(range) = self.erase_ahead()
            && Self::erase(self, flash, range).await.is_err()
        {
            // Never read while it is ahead of the log, and erased again when the log enters
            // it (where a failure leaves it for the next group).
            (self.ring.ahead, self.failed_at, self.failed_erase) = (None, None, false);
        }
        Ok(())
    }

    /// Reads back the word just programmed at region offset `at`: a word a power cut left
    /// unprogrammable yet reading erased is refused by some parts, spoiled by others.
    async fn verify<F: NorFlash>(
        &mut self,
        flash: &mut F,
        at: u32,
    ) -> Result<(), FlashError<F::Error>> {
        // In pieces of 8 bytes, compared byte by byte (small code: no buffer of a word's
        // size to clear, no `memcmp`).
        let word = u32::from(self.write_size);
        let mut done = 0;
        while done < word {
            let n = (word - done).min(8);
            let mut piece = [0u8; 8];
            let piece = piece.get_mut(..n as usize).unwrap_or_default();
            let read = read_aligned(flash, self.config.start + at + done, piece).await;
            let staged = self.word.iter().skip(done as usize);
            if read.is_err() || piece.iter().zip(staged).any(|(a, b)| a != b) {
                return Err(FlashError::Mismatch { offset: at });
            }
            done += n;
        }
        Ok(())
    }

    /// Erases `from..to` (flash offsets).
    async fn erase<F: NorFlash>(
        &mut self,
        flash: &mut F,
        (from, to): (u32, u32),
    ) -> Result<(), FlashError<F::Error>> {
        (self.failed_at, self.failed_erase) = (Some(from - self.config.start), true);
        flash.erase(from, to).await.map_err(FlashError::Flash)?;
        (self.failed_at, self.failed_erase) = (None, false);
        Ok(())
    }
}

/// The erase that prepares the block at region offset `ready_to` (an erase-unit boundary):
/// absolute flash offsets, from `ready_to` to the block's end rounded up to erase units.
pub(super) fn erase_range(config: &FlashConfig, ready_to: u32, erase_size: u32) -> (u32, u32) {
    let block_end = (ready_to / BLOCK_SIZE as u32 + 1) * BLOCK_SIZE as u32;
    let erase_end = block_end.next_multiple_of(erase_size).min(config.len);
    (config.start + ready_to, config.start + erase_end)
}
