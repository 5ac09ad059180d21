//! Resume policy: where a writer continues a log after a reset, found by a scan that reads the
//! flash in small pieces (sans I/O: [`Scan::step`] asks for reads, a driver does them).
//!
//! 1. The first header of every block is read; the last block whose first header is not all
//!    erased holds the log's end (a written block always starts with a chunk).
//! 2. That block's chunks are walked from its start, as a reader walks them: a well-formed
//!    chunk (length inside the block, checksum right) is stepped over; erased bytes where a
//!    chunk would start are flush padding, stepped over to the word boundary where the next
//!    chunk starts; anything else is a chunk torn by a power cut, and the walk looks for the
//!    resume marker a later reopening put after it (at a word boundary), and goes on after it.
//! 3. The walk ends at the log's end. Let `l` be one past the last byte of the block that is
//!    not erased, and of the end of the last well-formed chunk. The log continues at
//!    `r = roundup(l, W) + W`: one word more than needed, because a power cut at the very
//!    start of programming that word may have left it reading erased but unprogrammable (per-word
//!    ECC). If the walk ended in a torn chunk, `r` is also past the end the chunk's header
//!    declares (when it fits in the block: the word in flight at the cut lies inside the torn
//!    chunk), and the writer puts the resume marker at `r` first. The same when the log ends
//!    in the middle of a record (its last chunk a `FIRST` or `MIDDLE` fragment).
//! 4. If fewer than a header's bytes are left after `r` in the block, the log continues at the
//!    next block (the one after, if the first word of the next one may have been in flight and
//!    the next one shares an erase unit with the last, so that it cannot be erased again).
//!
//! A fresh block inside an erase unit begun earlier is usable only if the rest of the unit is
//! erased; otherwise the log continues at the next unit.
//!
//! What a reopen reads: the first header of every block; the last written block, once (the
//! chunk walk reads headers and payloads, through the checksum; after a torn chunk, and after
//! the last chunk, the rest of the block is read in pieces); with erase units larger than a
//! block, the rest of the unit. Every read is of at most 70 bytes.

use super::FlashConfig;
use super::layout::marker;
use crate::checksum;
use crate::format::{
    BLOCK_SIZE, CHECKSUM_FIELD, HEADER_SIZE, LENGTH_FIELD, RecordType, TYPE_FIELD,
};

/// Bytes stepped over at a time when checking payloads and erased areas.
const PIECE: usize = 64;
/// A piece of the search for markers reads this many bytes more, so that a marker starting in
/// the piece is whole in the buffer.
const OVERLAP: usize = HEADER_SIZE - 1;
/// The largest `READ_SIZE` the scan supports.
pub(super) const MAX_READ: usize = 32;
/// Room for a piece (with its overlap) read at `READ_SIZE` alignment.
const BUFFER: usize = PIECE + OVERLAP + 2 * MAX_READ;

/// Where a writer continues: region offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Resumed {
    /// The log's end: where the next byte goes.
    pub(super) pos: u32,
    /// The end of the area known erased (and never programmed since) after `pos`. When it is
    /// not an erase-unit boundary, the log cannot go past it: the unit holds earlier blocks.
    pub(super) ready_to: u32,
    /// The log ended in a torn chunk or in the middle of a record: the resume marker goes at
    /// `pos` first.
    pub(super) marker: bool,
}

/// A read for the driver: `buffer.len()` bytes at flash offset `at`.
#[derive(Debug)]
pub(super) enum ScanOp<'a> {
    /// Read into `buffer`, then call [`Scan::step`] again.
    Read {
        /// Absolute flash offset.
        at: u32,
        /// Where the bytes go.
        buffer: &'a mut [u8],
    },
    /// The scan is complete.
    Done(Resumed),
}

/// What the scan is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Reading the first header of the block at `at`.
    Heads,
    /// Reading the chunk header at `at` (the walk of the block at `base`); erased bytes there
    /// are padding unless `direct`.
    Header,
    /// Checksumming the payload `at..end` of the chunk at `chunk` into `crc`.
    Payload,
    /// Erased bytes from `chunk`: looking for the first byte that is not erased, from `at`.
    Gap,
    /// After the chunk torn at `chunk`: looking for a resume marker at a word boundary, and
    /// for the last byte that is not erased, from `at` to the end of the block.
    Torn,
    /// After the last chunk: looking for the last byte that is not erased, from `at`.
    Tail,
    /// Checking that `at..end` is erased: then the log continues at `pos` with the flash
    /// erased up to `end`. A written byte before `split` means a fresh block at `restart`;
    /// from `split` on, the log still continues at `pos`, erased up to `split`.
    Erased,
    /// Complete: the log continues at `pos`, erased up to `end`.
    Done,
}

/// The resume scan, sans I/O.
#[derive(Debug)]
pub(super) struct Scan {
    config: FlashConfig,
    write_size: u32,
    erase_size: u32,
    read_size: u32,
    phase: Phase,
    at: u32,
    end: u32,
    /// The block walked (region offset of its start).
    base: u32,
    /// The last block whose first header is written.
    last: Option<u32>,
    /// The chunk being checked (or torn, or where the erased bytes began).
    chunk: u32,
    /// The chunk is checked as a chunk even if its first byte is erased.
    direct: bool,
    /// Where erased bytes began before the chunk being checked: if it is not well-formed, the
    /// chunk there is checked (its checksum may begin with erased bytes).
    retry: Option<u32>,
    /// The chunk being checked is that second chance: its header does not count for `reach`
    /// (erased bytes before a chunk are almost always padding, so its header is likely the
    /// next chunk's bytes).
    second: bool,
    /// Its type byte.
    kind: u8,
    /// End of the last well-formed chunk, and whether it left a record open (`FIRST`,
    /// `MIDDLE`).
    good_end: u32,
    open: bool,
    /// The walk ended in a torn chunk.
    torn: bool,
    /// How far the chunks found not well-formed since the last well-formed one reach, by
    /// their headers (the word in flight at a power cut lies inside the torn chunk).
    reach: u32,
    /// One past the last byte seen that is not erased.
    written_end: u32,
    pos: u32,
    split: u32,
    restart: u32,
    marker: bool,
    crc: u32,
    stored: u32,
    /// Bytes wanted by the read in flight: `len` of them at `skip` in `buffer`.
    wanted: Option<(u8, u8)>,
    buffer: [u8; BUFFER],
}

fn is_erased(bytes: &[u8], erased: u8) -> bool {
    bytes.iter().all(|&b| b == erased)
}

impl Scan {
    /// A scan of the region `config` of a flash with these geometry constants (checked by
    /// [`FlashConfig::check`]).
    pub(super) fn new(
        (config, write_size, erase_size, read_size): (FlashConfig, usize, usize, usize),
    ) -> Self {
        Self {
            config,
            write_size: write_size as u32,
            erase_size: erase_size as u32,
            read_size: read_size.max(1) as u32,
            phase: Phase::Heads,
            at: 0,
            end: 0,
            base: 0,
            last: None,
            chunk: 0,
            direct: false,
            retry: None,
            second: false,
            kind: 0,
            good_end: 0,
            open: false,
            torn: false,
            reach: 0,
            written_end: 0,
            pos: 0,
            split: 0,
            restart: 0,
            marker: false,
            crc: 0,
            stored: 0,
            wanted: None,
            buffer: [0; BUFFER],
        }
    }

    /// The next read, or the result. Call again after each read.
    pub(super) fn step(&mut self) -> ScanOp<'_> {
        if let Some((skip, len)) = self.wanted.take() {
            self.absorb(usize::from(skip), usize::from(len));
        }
        let header = HEADER_SIZE as u32;
        let len = loop {
            let block_end = self.base + BLOCK_SIZE as u32;
            match self.phase {
                Phase::Heads if self.at < self.config.len => break header,
                Phase::Heads => match self.last {
                    None => self.fresh(0),
                    Some(last) => {
                        (self.phase, self.base) = (Phase::Header, last);
                        (self.at, self.good_end, self.written_end) = (last, last, last);
                        self.reach = last;
                    }
                },
                Phase::Header if block_end.saturating_sub(self.at) >= header => break header,
                // A trailer: nothing more in the block, but what it holds.
                Phase::Header => self.phase = Phase::Tail,
                Phase::Payload if self.at < self.end => {
                    break (self.end - self.at).min(PIECE as u32);
                }
                Phase::Payload if checksum::mask(self.crc) == self.stored => {
                    let (first, middle) = (RecordType::First as u8, RecordType::Middle as u8);
                    self.open = self.kind == first || self.kind == middle;
                    (self.phase, self.at, self.good_end) = (Phase::Header, self.end, self.end);
                    (self.direct, self.retry, self.reach) = (false, None, self.end);
                    self.second = false;
                }
                Phase::Payload => self.fail(self.end),
                Phase::Gap | Phase::Tail if self.at < block_end => {
                    break (block_end - self.at).min(PIECE as u32);
                }
                Phase::Torn if self.at < block_end => {
                    break (block_end - self.at).min((PIECE + OVERLAP) as u32);
                }
                // Erased to the end of the block: the log ends where the erased bytes began.
                Phase::Gap | Phase::Torn | Phase::Tail => self.finish(),
                Phase::Erased if self.at < self.end => {
                    // Pieces never straddle `split`.
                    let to = if self.at < self.split {
                        self.split
                    } else {
                        self.end
                    };
                    break (to - self.at).min(PIECE as u32);
                }
                Phase::Erased | Phase::Done => {
                    self.phase = Phase::Done;
                    return ScanOp::Done(Resumed {
                        pos: self.pos,
                        ready_to: self.end,
                        marker: self.marker,
                    });
                }
            }
        };
        // Aligned to READ_SIZE around the bytes wanted.
        let abs = self.config.start + self.at;
        let from = abs - abs % self.read_size;
        let to = (abs + len).next_multiple_of(self.read_size);
        self.wanted = Some(((abs - from) as u8, len as u8));
        let buffer = self
            .buffer
            .get_mut(..(to - from) as usize)
            .unwrap_or_default();
        ScanOp::Read { at: from, buffer }
    }

    /// The chunk at `chunk` is not well-formed; its header declares `declared` as its end.
    /// Checks the chunk where erased bytes began before it, if any, else it is torn: looks for
    /// a resume marker after it.
    fn fail(&mut self, declared: u32) {
        let block_end = self.base + BLOCK_SIZE as u32;
        let reach = if declared <= block_end {
            declared
        } else {
            self.chunk + HEADER_SIZE as u32
        };
        if !self.second {
            self.reach = self.reach.max(reach);
        }
        match self.retry.take() {
            Some(at) => {
                (self.phase, self.at) = (Phase::Header, at);
                (self.direct, self.second) = (true, true);
            }
            None => (self.phase, self.at, self.torn) = (Phase::Torn, self.chunk, true),
        }
    }

    /// The walk is over: where the log continues.
    #[inline(never)]
    fn finish(&mut self) {
        let word = self.write_size;
        let block_end = self.base + BLOCK_SIZE as u32;
        let end = self.written_end.max(self.good_end);
        let mut resume = end.next_multiple_of(word) + word;
        if self.torn {
            resume = resume.max(self.reach.next_multiple_of(word));
        }
        self.marker = self.torn || self.open;
        if resume + HEADER_SIZE as u32 <= block_end {
            // Here; erased up to the block's end, and beyond it up to the end of its erase
            // unit if that is erased too (else the log cannot go past the block).
            let unit_end = block_end
                .next_multiple_of(self.erase_size)
                .min(self.config.len);
            (self.phase, self.pos, self.at) = (Phase::Erased, resume, block_end);
            (self.end, self.split, self.restart) = (unit_end, block_end, block_end);
        } else if resume > block_end && !block_end.is_multiple_of(self.erase_size) {
            // The next block's first word may have been in flight, and it cannot be erased
            // again without the blocks before it in its unit: the block after it.
            self.fresh(block_end + BLOCK_SIZE as u32);
        } else {
            self.fresh(block_end);
        }
    }

    /// Continues in a fresh block at or after region offset `start`: right there if it
    /// begins an erase unit (or is the region's end), else if the rest of its unit is erased,
    /// else at the next unit.
    #[inline(never)]
    fn fresh(&mut self, start: u32) {
        let start = start.min(self.config.len);
        let unit_end = start.next_multiple_of(self.erase_size).min(self.config.len);
        (self.phase, self.at, self.end, self.pos) = (Phase::Erased, start, unit_end, start);
        (self.split, self.restart) = (unit_end, unit_end);
        if start >= self.config.len || start.is_multiple_of(self.erase_size) {
            (self.phase, self.end) = (Phase::Done, start);
        }
    }

    /// Takes in the `len` bytes at `skip` of the buffer, read for the current phase.
    fn absorb(&mut self, skip: usize, len: usize) {
        let erased = self.config.erased;
        let bytes = self.buffer.get(skip..skip + len).unwrap_or_default();
        let n = len as u32;
        let at = self.at;
        match self.phase {
            Phase::Heads => {
                if !is_erased(bytes, erased) {
                    self.last = Some(at);
                }
                self.at += BLOCK_SIZE as u32;
            }
            Phase::Header => {
                self.chunk = at;
                let field = |i: usize| bytes.get(i).copied().unwrap_or(0);
                if field(0) == erased && !self.direct {
                    // Erased where a chunk would start: padding, or nothing more.
                    self.phase = Phase::Gap;
                    self.gap(first_written(bytes, erased), len);
                    return;
                }
                let declared = u32::from(u16::from_le_bytes([
                    field(LENGTH_FIELD.start),
                    field(LENGTH_FIELD.start + 1),
                ]));
                self.kind = field(TYPE_FIELD);
                self.stored = u32::from_le_bytes([
                    field(CHECKSUM_FIELD.start),
                    field(CHECKSUM_FIELD.start + 1),
                    field(CHECKSUM_FIELD.start + 2),
                    field(CHECKSUM_FIELD.start + 3),
                ]);
                self.crc = checksum::crc32c(&[self.kind]);
                let end = at + n + declared;
                if end > self.base + BLOCK_SIZE as u32 {
                    self.fail(end);
                } else {
                    (self.phase, self.at, self.end) = (Phase::Payload, at + n, end);
                }
            }
            Phase::Payload => {
                self.crc = checksum::extend(self.crc, bytes);
                self.at += n;
            }
            Phase::Gap => self.gap(first_written(bytes, erased), len),
            Phase::Torn => {
                let word = self.write_size as usize;
                let marker = marker();
                let piece = len.min(PIECE);
                // A marker at a word boundary after the torn chunk, whole in the buffer.
                let first = (at.max(self.chunk + 1) as usize).next_multiple_of(word) - at as usize;
                let found = (first..piece)
                    .step_by(word)
                    .find(|&i| bytes.get(i..i + HEADER_SIZE) == Some(&marker[..]));
                if let Some(i) = found {
                    // The log goes on after the marker.
                    let after = at + (i + HEADER_SIZE) as u32;
                    (self.phase, self.at, self.good_end) = (Phase::Header, after, after);
                    (self.torn, self.open, self.direct, self.reach) = (false, false, false, after);
                    self.second = false;
                    return;
                }
                let last = last_written(bytes.get(..piece).unwrap_or_default(), erased);
                self.note_written(last);
                self.at += piece as u32;
            }
            Phase::Tail => {
                self.note_written(last_written(bytes, erased));
                self.at += n;
            }
            Phase::Erased => {
                if is_erased(bytes, erased) {
                    self.at += n;
                } else if at < self.split {
                    self.fresh(self.restart);
                } else {
                    (self.phase, self.end) = (Phase::Done, self.split);
                }
            }
            Phase::Done => {}
        }
    }

    /// Erased bytes began at `chunk`; `len` bytes were read at `at`, the first not erased at
    /// `first`. There, the next chunk starts at the word boundary at or before it if that is
    /// past `chunk` (padding), else at `chunk` itself (a checksum that begins with erased
    /// bytes).
    fn gap(&mut self, first: Option<usize>, len: usize) {
        match first {
            Some(i) => {
                let next = (self.at + i as u32) & !(self.write_size - 1);
                self.phase = Phase::Header;
                if next > self.chunk {
                    (self.at, self.retry) = (next, Some(self.chunk));
                } else {
                    (self.at, self.direct) = (self.chunk, true);
                }
            }
            None => self.at += len as u32,
        }
    }

    /// Notes the last byte that is not erased, `last` bytes after `at`.
    fn note_written(&mut self, last: Option<usize>) {
        if let Some(i) = last {
            self.written_end = self.at + i as u32 + 1;
        }
    }
}

fn first_written(bytes: &[u8], erased: u8) -> Option<usize> {
    bytes.iter().position(|&b| b != erased)
}

fn last_written(bytes: &[u8], erased: u8) -> Option<usize> {
    bytes.iter().rposition(|&b| b != erased)
}
