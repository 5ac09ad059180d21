//! Resume policy: where a writer continues a log after a reset, found by a scan that reads the
//! flash in small pieces (sans I/O: [`Scan::step`] asks for reads, a driver does them).
//!
//! 1. The first header of every block is read; the last block whose first header is not all
//!    erased holds the log's end (a written block always starts with a chunk).
//! 2. That block is read from its start to its end, in pieces, and its chunks walked as a
//!    reader walks them: a well-formed chunk (length inside the block, checksum right) is
//!    stepped over; erased bytes where a chunk would start are flush padding, up to the chunk
//!    at the word boundary before the next byte that is not erased (or right there, if that
//!    boundary is not past where the erased bytes began — and there too if the chunk at the
//!    boundary is not well-formed: a checksum may begin with erased bytes); anything else is a
//!    chunk torn by a power cut, after which the walk reads on from just after its start,
//!    looking for the resume marker a later reopening put at a word boundary, and goes on
//!    after it.
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
//!    Also if the block holds written bytes beyond what a torn write explains (`l` past the
//!    torn chunk's declared end and one word): garbage, which could hide what follows it.
//!
//! The flash after the log's end is erased (the region was erased before its first use, and a
//! block's erase units are erased before it is first programmed): where the log continues at
//! the start of an erase unit, the writer erases it first; elsewhere the rest of the unit is
//! erased already.
//!
//! What a reopen reads: the first header of every block, then the last written block, in
//! pieces of 64 bytes, once (and again from a torn chunk, or from erased bytes before a chunk
//! that is not well-formed).

use super::FlashConfig;
use super::layout::MARKER_WINDOW;
use crate::checksum;
use crate::format::{BLOCK_SIZE, HEADER_SIZE, RecordType};
use crate::ring::{RING_HEADER_SIZE, RingHeader, newer};

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
    /// The end of the area known erased (and never programmed since) after `pos`: an erase
    /// unit boundary (or the region's end).
    pub(super) ready_to: u32,
    /// The log ended in a torn chunk or in the middle of a record: the resume marker goes at
    /// `pos` first.
    pub(super) marker: bool,
    /// A ring's lap at `pos`.
    pub(super) lap: u32,
    /// Records begun in a ring's log before `pos` (wrapping).
    pub(super) records: u32,
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
    /// Complete: the log continues at `pos`, erased up to `end`.
    Done,
}

/// Where the walk is in the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walk {
    /// Erased bytes since `chunk`, where a chunk may start (after a well-formed one): padding,
    /// or the end of what is written in the block.
    Gap,
    /// In the header of the chunk at `chunk` (the window holds it once complete).
    Header,
    /// In the payload of the chunk at `chunk`, which ends at `end`.
    Payload,
    /// After the chunk torn at `chunk`, looking for a resume marker.
    Torn,
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
    /// The chunk being read (or torn, or where erased bytes began), its type and the checksum
    /// its header holds, and the checksum of its type and payload so far.
    chunk: u32,
    kind: u8,
    stored: u32,
    crc: u32,
    /// End of the last well-formed chunk (or marker), and whether it left a record open
    /// (`FIRST`, `MIDDLE`).
    good_end: u32,
    open: bool,
    /// How far the chunks found torn since the last well-formed one reach, by their headers.
    reach: u32,
    /// Where erased bytes began before the chunk being read: if that is not well-formed, the
    /// chunk there is read instead (its checksum may begin with erased bytes), once.
    retry: Option<u32>,
    /// The chunk being read is that second chance: its header does not count in `reach`.
    second: bool,
    /// One past the last byte that is not erased.
    written_end: u32,
    /// The last bytes read (the newest in the high byte): a marker ends here when they match.
    window: u64,
    pos: u32,
    marker: bool,
    /// A ring's lap and records at the block walked (from its ring header, then counted).
    lap: u32,
    records: u32,
    /// A ring's block after the newest, in its erase group, has written bytes where its ring
    /// header goes: a header torn by a power cut. The log goes on after that block.
    skip_next: bool,
    /// Bytes wanted by the read in flight: `len` of them at `skip` in `buffer`.
    wanted: Option<(u8, u8)>,
    buffer: [u8; BUFFER],
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
            walk: Walk::Gap,
            chunk: 0,
            kind: 0,
            stored: 0,
            crc: 0,
            good_end: 0,
            open: false,
            reach: 0,
            retry: None,
            second: false,
            written_end: 0,
            window: 0,
            pos: 0,
            marker: false,
            lap: config.first_lap,
            records: 0,
            skip_next: false,
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
                Phase::Heads if self.at < self.config.len => {
                    break if self.config.ring {
                        RING_HEADER_SIZE as u32
                    } else {
                        HEADER_SIZE as u32
                    };
                }
                Phase::Heads => match self.last {
                    None => self.fresh(0),
                    Some(last) => {
                        (self.phase, self.base, self.at, self.chunk) =
                            (Phase::Walk, last, last, last);
                        (self.good_end, self.reach, self.written_end) = (last, last, last);
                    }
                },
                Phase::Walk if self.at < self.base + block => {
                    break (self.base + block - self.at).min(PIECE as u32);
                }
                Phase::Walk => self.finish(),
                Phase::Done => {
                    return ScanOp::Done(Resumed {
                        pos: self.pos,
                        ready_to: self.end,
                        marker: self.marker,
                        lap: self.lap,
                        records: self.records,
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
        let mut block_end = self.base + BLOCK_SIZE as u32;
        if self.skip_next {
            // A ring header torn in the next block: the log goes on after that block.
            block_end += BLOCK_SIZE as u32;
        }
        let torn = self.walk == Walk::Torn;
        let end = self.written_end.max(self.good_end);
        let explained = self.reach.next_multiple_of(word) + word;
        let mut resume = end.next_multiple_of(word) + word;
        if torn {
            resume = resume.max(self.reach.next_multiple_of(word));
        }
        self.marker = torn || self.open;
        if torn && self.written_end > explained {
            // Written bytes beyond what a torn write explains (the torn chunk as far as its
            // header reaches, and the word in flight): not this log's, or an interrupted erase.
            // A fresh block, where no chunk of theirs can hide what follows.
            self.fresh(block_end);
        } else if resume + HEADER_SIZE as u32 <= block_end && !self.skip_next {
            // Here, the flash erased to the end of the block's erase unit.
            self.done(resume, block_end.next_multiple_of(self.erase_size));
        } else if resume > block_end && !block_end.is_multiple_of(self.erase_size) {
            // The next block's first word may have been in flight, and it cannot be erased
            // again without the blocks before it in its unit: the block after it.
            self.fresh(block_end + BLOCK_SIZE as u32);
        } else {
            self.fresh(block_end);
        }
    }

    /// Continues in a fresh block at region offset `start`: erased first if it begins an
    /// erase unit. A ring past its end goes on at its start, one lap later, its first group
    /// erased first.
    fn fresh(&mut self, start: u32) {
        let len = self.config.len;
        if self.config.ring && start >= len {
            self.lap = self.lap.wrapping_add(1);
            return self.done(start - len, start - len);
        }
        let erased_to = if start.is_multiple_of(self.erase_size) {
            start
        } else {
            start.next_multiple_of(self.erase_size)
        };
        self.done(start, erased_to);
    }

    /// The log continues at `pos`, the flash erased up to `erased_to` (both within the region).
    fn done(&mut self, pos: u32, erased_to: u32) {
        let len = self.config.len;
        (self.phase, self.pos, self.end) = (Phase::Done, pos.min(len), erased_to.min(len));
    }

    /// Takes in the `len` bytes at `skip` of the buffer, read for the current phase.
    fn absorb(&mut self, skip: usize, len: usize) {
        let erased = self.config.erased;
        let n = len as u32;
        let at = self.at;
        let bytes = self.buffer.get(skip..skip + len).unwrap_or_default();
        let all_erased = bytes.iter().all(|&b| b == erased);
        match self.phase {
            Phase::Heads if self.config.ring => {
                // The newest lap's last block, by the ring headers (blocks come in order).
                if let Some(header) = RingHeader::parse(bytes)
                    && (self.last.is_none() || !newer(self.lap, header.lap))
                {
                    (self.last, self.lap, self.records) = (Some(at), header.lap, header.records);
                    self.skip_next = false;
                } else if !all_erased
                    && let Some(last) = self.last
                    && last + BLOCK_SIZE as u32 == at
                {
                    let group = FlashConfig::group_bytes(self.erase_size);
                    self.skip_next = last / group == at / group;
                }
                self.at += BLOCK_SIZE as u32;
            }
            Phase::Heads => {
                if !all_erased {
                    self.last = Some(at);
                }
                self.at += BLOCK_SIZE as u32;
            }
            // Erased after the log: nothing changes but the window of the marker search.
            Phase::Walk if all_erased && matches!(self.walk, Walk::Gap | Walk::Torn) => {
                self.window = u64::from(erased) * 0x0001_0101_0101_0101;
                self.at += n;
            }
            Phase::Walk => {
                self.at += n;
                for i in 0..len {
                    let byte = self.buffer.get(skip + i).copied().unwrap_or(erased);
                    if !self.walk_byte(at + i as u32, byte) {
                        // The walk goes back (`at` set): the rest of the piece is read again.
                        return;
                    }
                }
            }
            Phase::Done => {}
        }
    }

    /// Takes in the byte at region offset `at` of the block walked; `false` if the walk goes
    /// back to read again from `self.at`.
    fn walk_byte(&mut self, at: u32, byte: u8) -> bool {
        let erased = self.config.erased;
        let header = HEADER_SIZE as u32;
        if byte != erased {
            self.written_end = self.written_end.max(at + 1);
        }
        // The last 7 bytes, the newest in the high byte: a header, or a marker, when they end
        // here.
        self.window = (self.window >> 8) | (u64::from(byte) << 48);
        match self.walk {
            Walk::Gap if byte != erased => {
                // The chunk after the padding starts at the word boundary at or before this
                // byte (its checksum may begin with erased bytes); or, if that is not
                // well-formed, where the padding began.
                let start = at & !(self.write_size - 1);
                if start > self.chunk {
                    (self.retry, self.chunk) = (Some(self.chunk), start);
                }
                self.walk = Walk::Header;
            }
            Walk::Payload => self.crc = checksum::extend(self.crc, &[byte]),
            // A marker ending here, at a word boundary after the torn chunk: the log goes on.
            Walk::Torn
                if at >= self.chunk + header
                    && (at + 1 - header).is_multiple_of(self.write_size)
                    && self.window == MARKER_WINDOW =>
            {
                self.good(at + 1, false);
                return true;
            }
            _ => {}
        }
        let window = self.window;
        if self.walk == Walk::Header && at + 1 > self.chunk + header {
            // Erased where the header would start: not a chunk.
            return self.fail(self.chunk + header);
        }
        if self.walk == Walk::Header && at + 1 == self.chunk + header {
            let len = u32::from((window >> 32) as u16);
            (self.kind, self.stored) = ((window >> 48) as u8, window as u32);
            self.end = self.chunk + header + len;
            if self.end > self.base + BLOCK_SIZE as u32 || self.kind == 0 {
                // A length beyond the block: not a chunk, what it reaches unknown.
                return self.fail(self.chunk + header);
            }
            (self.crc, self.walk) = (checksum::crc32c(&[self.kind]), Walk::Payload);
        }
        if self.walk == Walk::Payload && at + 1 == self.end {
            if checksum::mask(self.crc) != self.stored {
                return self.fail(self.end);
            }
            let open =
                self.kind == RecordType::First as u8 || self.kind == RecordType::Middle as u8;
            if self.kind == RecordType::Full as u8 || self.kind == RecordType::First as u8 {
                self.records = self.records.wrapping_add(1);
            }
            self.good(self.end, open);
        }
        true
    }

    /// A well-formed chunk (or a marker) ends at `end`.
    fn good(&mut self, end: u32, open: bool) {
        (self.walk, self.chunk, self.good_end, self.reach) = (Walk::Gap, end, end, end);
        (self.open, self.retry, self.second) = (open, None, false);
    }

    /// The chunk at `chunk` is not well-formed; its header declares `declared` as its end.
    /// The walk goes back: to the chunk where the padding before it began, if it was not tried
    /// yet; else the chunk is torn, and the walk looks for a resume marker from just after
    /// its start.
    fn fail(&mut self, declared: u32) -> bool {
        if !self.second {
            self.reach = self.reach.max(declared);
        }
        match self.retry.take() {
            Some(start) => {
                (self.walk, self.chunk, self.second) = (Walk::Header, start, true);
                self.at = start;
            }
            None => {
                self.walk = Walk::Torn;
                self.at = self.chunk + 1;
            }
        }
        false
    }
}
