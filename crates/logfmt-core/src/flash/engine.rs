//! The small-RAM writer's engine, sans I/O: it turns the [layout](super::layout)'s pieces into
//! flash operations — erase these units, program this word — and a driver (the blocking
//! [`WordWriter`](super::WordWriter), the async `AsyncWordWriter`, the buffered
//! [`FlashWriter`](super::FlashWriter)) carries them out, one at a time, and comes back for the
//! next.
//!
//! Mechanics (the policy is in `layout` and `resume`):
//! - the log's bytes go through one staging word of `WRITE_SIZE` bytes, a byte at a time; a
//!   full word is programmed — every word of the log, each once, erased-looking or not (the
//!   resume walk never resumes before the end of what the log's chunks and bytes reach);
//! - a flush stages erased bytes to the end of the word and programs it: the log continues at
//!   the next word boundary;
//! - the resume marker a reopening asks for is laid out before the first record (or flush) after
//!   the reopening, so reopening programs nothing;
//! - before a word is programmed in a block not yet erased, the block's erase units are erased
//!   (lazily, a block at a time);
//! - the engine updates its state as it hands out each operation: if the driver fails, or stops
//!   (a dropped future), the engine stays busy and refuses everything ([`Failure::Poisoned`]):
//!   the flash is then in the state a power cut leaves, and reopening resumes safely.

use super::layout::{self, Piece, RecordLayout};
use super::resume::Resumed;
use super::{FlashConfig, FlashError, FlashStats};
use crate::format::{BLOCK_SIZE, HEADER_SIZE};
use crate::ring::{RING_HEADER_SIZE, RING_PAYLOAD, RingHeader};
use crate::writer::Written;

/// The largest `WRITE_SIZE` the engine supports.
pub(super) const MAX_WRITE: usize = 32;

/// A flash operation for the driver to carry out, in region-absolute flash offsets.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Op<'a> {
    /// Erase `from..to`.
    Erase {
        /// First byte.
        from: u32,
        /// End (exclusive).
        to: u32,
    },
    /// Program `bytes` at `at`.
    Program {
        /// Where.
        at: u32,
        /// What: whole words.
        bytes: &'a [u8],
    },
    /// The operation is complete; for a record, where it was written.
    Done(Written),
    /// The operation stopped.
    Fail(Failure),
}

/// Why the engine stopped, without a flash error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Failure {
    /// No room.
    Full,
    /// Poisoned by an earlier failure or an interrupted operation.
    Poisoned,
}

impl Failure {
    pub(super) fn into_error<E>(self) -> FlashError<E> {
        match self {
            Self::Full => FlashError::Full,
            Self::Poisoned => FlashError::Poisoned,
        }
    }
}

/// What the engine is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Task {
    /// Nothing: ready for the next operation.
    Idle,
    /// Laying out a record.
    Record(RecordLayout),
    /// Programming the last, partly staged word.
    Flush,
    /// Stopped mid-operation (flash error or interrupted operation).
    Poisoned,
}

/// The engine's state: everything the small-RAM writer keeps between calls.
#[derive(Debug, Clone)]
pub(super) struct Engine {
    config: FlashConfig,
    write_size: u8,
    /// The staged word is complete and waits to be programmed.
    full: bool,
    erase_size: u32,
    /// Region offset of the log's end: every byte laid out, programmed or staged.
    pos: u32,
    /// Region offset up to which the flash is erased and not programmed since.
    ready_to: u32,
    /// Where the record being appended starts, once known.
    first: Option<u32>,
    /// The resume marker is still to be laid out, before anything else.
    marker: bool,
    /// The staged bytes of the word that holds `pos`: `pos % write_size` of them (or the whole
    /// word, when `full`).
    word: [u8; MAX_WRITE],
    task: Task,
    /// The piece being emitted, and how many of its bytes are.
    piece: Option<Piece>,
    done: usize,
    stats: FlashStats,
    /// A ring's state (unused in a bounded log).
    ring: RingState,
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
    /// The group to erase before anything else.
    pending: Option<u16>,
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
    ) -> Self {
        let group = FlashConfig::group_bytes(erase_size as u32);
        let ring = RingState {
            lap: resumed.lap,
            records: resumed.records,
            ready: (resumed.ready_to > resumed.pos).then_some((resumed.pos / group) as u16),
            ahead: None,
            pending: None,
            due: false,
        };
        Self {
            config,
            write_size: write_size.min(MAX_WRITE) as u8,
            full: false,
            erase_size: erase_size as u32,
            pos: resumed.pos,
            ready_to: resumed.ready_to,
            first: None,
            marker: resumed.marker,
            // Every byte is staged before its word is programmed.
            word: [0; MAX_WRITE],
            task: Task::Idle,
            piece: None,
            done: 0,
            stats: FlashStats::default(),
            ring,
        }
    }

    pub(super) fn config(&self) -> FlashConfig {
        self.config
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

    /// Begins appending a record of `len` bytes (a [pack](crate::pack) if `pack`).
    pub(super) fn start_record(&mut self, len: usize, pack: bool) -> Result<(), Failure> {
        self.check_idle()?;
        let fits = if self.config.ring {
            // No longer than what the ring keeps besides the group erased ahead, with a ring
            // header, a chunk header and a trailer per block.
            let blocks = (self.config.len / BLOCK_SIZE as u32) as usize;
            let per_block = RING_HEADER_SIZE + 2 * HEADER_SIZE;
            let keeps = (self.config.len - self.group()) as usize;
            len <= keeps.saturating_sub(blocks * per_block)
        } else {
            layout::end_after(self.position(), len) <= u64::from(self.config.len)
        };
        if !fits {
            return Err(Failure::Full);
        }
        self.task = Task::Record(RecordLayout::new(pack));
        self.first = None;
        Ok(())
    }

    /// Begins a flush: programming the last word, its rest left erased.
    pub(super) fn start_flush(&mut self) -> Result<(), Failure> {
        self.check_idle()?;
        // A marker with no room left (a full region) is of no use.
        self.marker &= self.position() <= u64::from(self.config.len);
        self.task = Task::Flush;
        Ok(())
    }

    fn check_idle(&mut self) -> Result<(), Failure> {
        if self.task == Task::Idle {
            Ok(())
        } else {
            // Busy: the last operation never finished (a dropped future), or failed.
            self.task = Task::Poisoned;
            Err(Failure::Poisoned)
        }
    }

    /// The driver's operation failed: the log's state on the flash is unknown.
    pub(super) fn poison(&mut self) {
        self.task = Task::Poisoned;
    }

    /// The next operation of the task in progress; `data` is the record being appended
    /// (ignored by a flush). The engine's state moves on as if the operation succeeds.
    pub(super) fn step<'a>(&'a mut self, data: &'a [u8]) -> Op<'a> {
        let word_size = usize::from(self.write_size);
        if let Some(group) = self.ring.pending.take() {
            // The group after the one entered: erased ahead, once its first ring header is on
            // the flash.
            return self.erase_ahead(group);
        }
        loop {
            if self.full {
                // The staged word is complete: program it.
                if let Some(op) = self.prepare(self.pos) {
                    return op;
                }
                self.full = false;
                let in_block = (self.pos - 1) as usize % BLOCK_SIZE + 1;
                if self.ring.due && in_block >= RING_HEADER_SIZE {
                    // The ring header is on the flash: the next group, erased ahead.
                    self.ring.due = false;
                    let groups = self.config.len / self.group();
                    let next = (((self.pos - 1) / self.group() + 1) % groups) as u16;
                    if self.ring.ahead != Some(next) {
                        self.ring.pending = Some(next);
                    }
                }
                self.stats.programs += 1;
                self.stats.programmed_bytes += word_size as u64;
                return Op::Program {
                    at: self.config.start + self.pos - word_size as u32,
                    bytes: self.word.get(..word_size).unwrap_or_default(),
                };
            }
            let Some(byte) = self.next_byte(data) else {
                if let Err(op) = self.fetch(data) {
                    return op;
                }
                continue;
            };
            let staged = self.pos as usize % word_size;
            if let Some(slot) = self.word.get_mut(staged) {
                *slot = byte;
            }
            self.pos += 1;
            self.full = staged + 1 == word_size;
        }
    }

    /// The next byte of the piece being laid out, if any is left.
    fn next_byte(&mut self, data: &[u8]) -> Option<u8> {
        let piece = self.piece.as_ref()?;
        let at = self.done;
        let header = piece.header.map_or(0, |h| h.len());
        let ring = if piece.ring { RING_PAYLOAD } else { 0 };
        let byte = if at < piece.trailer {
            self.config.erased
        } else if at < piece.trailer + header {
            piece.header?.get(at - piece.trailer).copied()?
        } else if at < piece.trailer + header + ring {
            *self.ring_header().encode().get(at - piece.trailer)?
        } else {
            let payload = data.get(piece.payload.clone())?;
            *payload.get(at - piece.trailer - header - ring)?
        };
        self.done += 1;
        Some(byte)
    }

    /// Takes the task's next piece, or ends the task: `Err` holds the operation to return.
    fn fetch(&mut self, data: &[u8]) -> Result<(), Op<'static>> {
        let offset = self.pos as usize % BLOCK_SIZE;
        let word = usize::from(self.write_size);
        let writes = matches!(self.task, Task::Record(_)) || self.marker;
        let ring = if self.config.ring && writes {
            self.ring_piece(offset)
        } else {
            None
        };
        let next = match &mut self.task {
            Task::Record(_) | Task::Flush if ring.is_some() => ring,
            // The marker before anything else (the resume walk left room for it in the block).
            Task::Record(_) | Task::Flush if self.marker => {
                self.marker = false;
                Some(Piece::chunk(layout::MARKER))
            }
            Task::Record(layout) => layout.next(data, offset).inspect(|piece| {
                // After the trailer (if any): where the record's first header goes.
                if self.first.is_none() {
                    self.first = Some(self.pos + piece.trailer as u32);
                    self.ring.records = self.ring.records.wrapping_add(1);
                }
            }),
            // The rest of the word, erased.
            Task::Flush if !offset.is_multiple_of(word) => {
                Some(Piece::erased(word - offset % word))
            }
            Task::Flush | Task::Idle => None,
            Task::Poisoned => return Err(Op::Fail(Failure::Poisoned)),
        };
        self.done = 0;
        if next.is_some() {
            self.piece = next;
            return Ok(());
        }
        self.piece = None;
        self.task = Task::Idle;
        let first = self.first.take().unwrap_or(self.pos);
        Err(Op::Done(Written {
            offset: u64::from(first),
            end: u64::from(self.pos),
        }))
    }

    /// A ring's own piece before the next chunk, if one is due at `offset` in the block: the
    /// trailer of a block with no room for a header, or the ring header that begins every
    /// block (after the wrap to the region's start, one lap later).
    fn ring_piece(&mut self, offset: usize) -> Option<Piece> {
        if offset != 0 {
            return (BLOCK_SIZE - offset < HEADER_SIZE).then(|| Piece::erased(BLOCK_SIZE - offset));
        }
        if self.pos >= self.config.len {
            self.pos = 0;
            self.ring.lap = self.ring.lap.wrapping_add(1);
            self.stats.laps += 1;
        }
        if self.ring.ready != Some((self.pos / self.group()) as u16) {
            // The first ring header written in this group: the next group is erased once this
            // one is on the flash.
            self.ring.due = true;
        }
        Some(Piece::ring(&self.ring_header()))
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

    /// The erase of the group after the one entered, ahead of the writer (the state moves on
    /// as if it succeeds).
    fn erase_ahead(&mut self, group: u16) -> Op<'static> {
        self.ring.ahead = Some(group);
        if self.ring.lap != self.config.first_lap || group == 0 {
            // Log bytes of an earlier lap (or of this one, the region's start) aged out.
            self.stats.aged_out_bytes += u64::from(self.group());
        }
        self.erase_group(group)
    }

    /// The erase of a ring's erase group `group`, counted.
    fn erase_group(&mut self, group: u16) -> Op<'static> {
        let bytes = self.group();
        self.stats.erases += 1;
        self.stats.erased_bytes += u64::from(bytes);
        let from = self.config.start + u32::from(group) * bytes;
        Op::Erase {
            from,
            to: from + bytes,
        }
    }

    /// Makes sure the flash is erased up to region offset `end` before the word there is
    /// programmed: the erase to do first, if any (the state moves on as if it succeeds).
    /// `ready_to` is an erase unit boundary.
    fn prepare(&mut self, end: u32) -> Option<Op<'static>> {
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
        Some(Op::Erase { from, to })
    }
}

/// The erase that prepares the block at region offset `ready_to` (an erase-unit boundary):
/// absolute flash offsets, from `ready_to` to the block's end rounded up to erase units.
pub(super) fn erase_range(config: &FlashConfig, ready_to: u32, erase_size: u32) -> (u32, u32) {
    let block_end = (ready_to / BLOCK_SIZE as u32 + 1) * BLOCK_SIZE as u32;
    let erase_end = block_end.next_multiple_of(erase_size).min(config.len);
    (config.start + ready_to, config.start + erase_end)
}
