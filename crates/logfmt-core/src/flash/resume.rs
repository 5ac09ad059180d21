//! Resume policy: where a writer continues a log after a reset, found by a scan that reads the
//! flash in small pieces (sans I/O: [`Scan::step`] asks for reads, a driver does them).
//!
//! 1. The first header of every block is read; the last block whose first header is not all
//!    erased holds the log's end (a written block always starts with a chunk).
//! 2. That block is read from its start to its end, in pieces, and its chunks walked as a
//!    reader walks them: a well-formed chunk (length inside the block, checksum right) is
//!    stepped over; erased bytes where a chunk would start are flush padding, up to the chunk
//!    at the word boundary before the next byte that is not erased (or right there, if that
//!    boundary is not past where the erased bytes began); anything else is a chunk torn by a
//!    power cut, after which the walk looks for the resume marker a later reopening put at a
//!    word boundary, and goes on after it.
//! 3. Let `l` be one past the last byte of the block that is not erased, and at least the end
//!    of the last well-formed chunk. The log continues at `r = roundup(l, W) + W`: one word
//!    more than needed, because a power cut at the very start of programming that word may
//!    have left it reading erased but unprogrammable (per-word ECC). If the walk ended in a
//!    torn chunk, `r` is also past the end the chunk's header declares (when it fits in the
//!    block: the word in flight at the cut lies inside the torn chunk), and the writer puts
//!    the resume marker at `r` first. The same when the log ends in the middle of a record
//!    (its last chunk a `FIRST` or `MIDDLE` fragment).
//! 4. If fewer than a header's bytes are left after `r` in the block, the log continues at the
//!    next block (the one after, if the first word of the next one may have been in flight and
//!    the next one shares an erase unit with the last, so that it cannot be erased again).
//!
//! A fresh block inside an erase unit begun earlier is usable only if the rest of the unit is
//! erased; otherwise the log continues at the next unit.
//!
//! What a reopen reads: the first header of every block, the last written block (once, in
//! pieces of 64 bytes), and with erase units larger than a block the rest of the unit.

use super::FlashConfig;
use super::layout::marker;
use crate::checksum;
use crate::format::{BLOCK_SIZE, HEADER_SIZE, RecordType};

/// Bytes read at a time.
const PIECE: usize = 64;
/// The largest `READ_SIZE` the scan supports.
pub(super) const MAX_READ: usize = 32;
/// Room for a piece read at `READ_SIZE` alignment.
const BUFFER: usize = PIECE + 2 * MAX_READ;

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
    /// Reading the block at `base`, from `at` on, walking its chunks.
    Walk,
    /// Checking that `at..end` is erased: then the log continues at `pos` with the flash
    /// erased up to `end`. A written byte before `split` means a fresh block at `restart`;
    /// from `split` on, the log still continues at `pos`, erased up to `split`.
    Erased,
    /// Complete: the log continues at `pos`, erased up to `end`.
    Done,
}

/// Where the walk is in the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walk {
    /// At a chunk boundary.
    Boundary,
    /// Erased bytes since the chunk boundary `chunk`.
    Gap,
    /// `got` bytes of the header of the chunk at `chunk`.
    Header(u8),
    /// In the payload of the chunk at `chunk`, which ends at `end`.
    Payload,
    /// After the chunk torn at `chunk`, looking for a resume marker.
    Torn,
    /// In the last bytes of the block, too few for a chunk.
    Trailer,
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
    walk: Walk,
    /// The chunk being read (or torn, or where erased bytes began).
    chunk: u32,
    header: [u8; HEADER_SIZE],
    crc: u32,
    /// End of the last well-formed chunk (or marker), and whether it left a record open
    /// (`FIRST`, `MIDDLE`).
    good_end: u32,
    open: bool,
    /// How far the chunks found torn since the last well-formed one reach, by their headers.
    reach: u32,
    /// One past the last byte that is not erased.
    written_end: u32,
    /// The last bytes read (the newest in the high byte): a marker ends here when they match.
    window: u64,
    pos: u32,
    split: u32,
    restart: u32,
    marker: bool,
    /// Bytes wanted by the read in flight: `len` of them at `skip` in `buffer`.
    wanted: Option<(u8, u8)>,
    buffer: [u8; BUFFER],
}

/// Up to 8 bytes as a little-endian number.
fn as_u64(bytes: &[u8]) -> u64 {
    bytes.iter().rev().fold(0, |n, &b| (n << 8) | u64::from(b))
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
            walk: Walk::Boundary,
            chunk: 0,
            header: [0; HEADER_SIZE],
            crc: 0,
            good_end: 0,
            open: false,
            reach: 0,
            written_end: 0,
            window: 0,
            pos: 0,
            split: 0,
            restart: 0,
            marker: false,
            wanted: None,
            buffer: [0; BUFFER],
        }
    }

    /// The next read, or the result. Call again after each read.
    pub(super) fn step(&mut self) -> ScanOp<'_> {
        if let Some((skip, len)) = self.wanted.take() {
            self.absorb(usize::from(skip), usize::from(len));
        }
        let block = BLOCK_SIZE as u32;
        let len = loop {
            match self.phase {
                Phase::Heads if self.at < self.config.len => break HEADER_SIZE as u32,
                Phase::Heads => match self.last {
                    None => self.fresh(0),
                    Some(last) => {
                        (self.phase, self.base, self.at) = (Phase::Walk, last, last);
                        (self.good_end, self.reach, self.written_end) = (last, last, last);
                    }
                },
                Phase::Walk if self.at < self.base + block => {
                    break (self.base + block - self.at).min(PIECE as u32);
                }
                Phase::Walk => self.finish(),
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

    /// The walk is over: where the log continues.
    #[inline(never)]
    fn finish(&mut self) {
        let word = self.write_size;
        let block_end = self.base + BLOCK_SIZE as u32;
        let torn = self.walk == Walk::Torn;
        let end = self.written_end.max(self.good_end);
        let mut resume = end.next_multiple_of(word) + word;
        if torn {
            resume = resume.max(self.reach.next_multiple_of(word));
        }
        self.marker = torn || self.open;
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
        let n = len as u32;
        let at = self.at;
        let bytes = self.buffer.get(skip..skip + len).unwrap_or_default();
        let all_erased = bytes.iter().all(|&b| b == erased);
        match self.phase {
            Phase::Heads => {
                if !all_erased {
                    self.last = Some(at);
                }
                self.at += BLOCK_SIZE as u32;
            }
            // Erased after the log: nothing changes but the window of the marker search.
            Phase::Walk if all_erased && matches!(self.walk, Walk::Gap | Walk::Torn) => {
                self.window = as_u64(&[erased; HEADER_SIZE]);
                self.at += n;
            }
            Phase::Walk => {
                for i in 0..len {
                    let byte = self.buffer.get(skip + i).copied().unwrap_or(erased);
                    self.walk_byte(at + i as u32, byte);
                }
                self.at += n;
            }
            Phase::Erased => {
                if all_erased {
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

    /// Takes in the byte at region offset `at` of the block walked.
    fn walk_byte(&mut self, at: u32, byte: u8) {
        let erased = self.config.erased;
        let block_end = self.base + BLOCK_SIZE as u32;
        if byte != erased {
            self.written_end = at + 1;
        }
        self.window = (self.window >> 8) | (u64::from(byte) << 48);
        match self.walk {
            Walk::Boundary if block_end - at < HEADER_SIZE as u32 => self.walk = Walk::Trailer,
            Walk::Boundary if byte == erased => (self.chunk, self.walk) = (at, Walk::Gap),
            Walk::Boundary => (self.chunk, self.walk) = (at, Walk::Header(0)),
            Walk::Gap if byte != erased => {
                // The chunk after the padding starts at the word boundary at or before this
                // byte (its checksum may begin with erased bytes), or where the padding began.
                let start = (at & !(self.write_size - 1)).max(self.chunk);
                self.header = [erased; HEADER_SIZE];
                (self.chunk, self.walk) = (start, Walk::Header((at - start).min(7) as u8));
            }
            _ => {}
        }
        match self.walk {
            Walk::Header(got) => {
                if let Some(slot) = self.header.get_mut(usize::from(got)) {
                    *slot = byte;
                }
                if usize::from(got) + 1 < HEADER_SIZE {
                    self.walk = Walk::Header(got + 1);
                    return;
                }
                let [_, _, _, _, l0, l1, kind] = self.header;
                let end = self.chunk + HEADER_SIZE as u32 + u32::from(u16::from_le_bytes([l0, l1]));
                if end > block_end || kind == 0 {
                    // A length beyond the block: torn where the header is.
                    self.tear(self.chunk + HEADER_SIZE as u32);
                } else {
                    (self.crc, self.end, self.walk) =
                        (checksum::crc32c(&[kind]), end, Walk::Payload);
                    self.payload_done(at + 1);
                }
            }
            Walk::Payload => {
                self.crc = checksum::extend(self.crc, &[byte]);
                self.payload_done(at + 1);
            }
            Walk::Torn => {
                // A marker ending here, at a word boundary after the torn chunk.
                let start = (at + 1).saturating_sub(HEADER_SIZE as u32);
                if start > self.chunk
                    && start.is_multiple_of(self.write_size)
                    && self.window == as_u64(&marker())
                {
                    (self.walk, self.good_end, self.open) = (Walk::Boundary, at + 1, false);
                    self.reach = at + 1;
                }
            }
            _ => {}
        }
    }

    /// The payload of the chunk at `chunk` is read up to `at`: if that is its end, it is
    /// well-formed or torn.
    fn payload_done(&mut self, at: u32) {
        if at < self.end {
            return;
        }
        let [c0, c1, c2, c3, _, _, kind] = self.header;
        if checksum::mask(self.crc) == u32::from_le_bytes([c0, c1, c2, c3]) {
            (self.walk, self.good_end, self.reach) = (Walk::Boundary, at, at);
            self.open = kind == RecordType::First as u8 || kind == RecordType::Middle as u8;
        } else {
            self.tear(self.end);
        }
    }

    /// The chunk at `chunk` is torn; its header declares `declared` as its end.
    fn tear(&mut self, declared: u32) {
        self.reach = self.reach.max(declared);
        self.walk = Walk::Torn;
    }
}
