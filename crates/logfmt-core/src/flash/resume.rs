//! Resume policy: where a writer continues a log after a reset, found by a scan that reads the
//! flash in small pieces (sans I/O: [`Scan::step`] asks for reads, a driver does them).
//!
//! The scan reads the first header of every block; the last block whose first header is not
//! erased is the log's last block. Then, by [`Resume`]:
//! - [`Resume::NextBlock`]: the log continues at the next block;
//! - [`Resume::SameBlock`]: the last block's chunks are walked (headers, and payloads through
//!   the checksum); if only whole chunks are followed by erased bytes to the end of the block,
//!   from a word boundary, the log continues there, otherwise at the next block.
//!
//! A fresh block inside an erase unit begun earlier is usable only if the rest of the unit is
//! erased; otherwise the log continues at the next unit. What a reopen reads: one header per
//! block, plus (with [`Resume::SameBlock`]) the last block, plus the rest of an erase unit.

use super::{FlashConfig, Resume};
use crate::checksum;
use crate::format::{BLOCK_SIZE, CHECKSUM_FIELD, HEADER_SIZE, LENGTH_FIELD, TYPE_FIELD};

/// Bytes read at a time when checking payloads and erased areas.
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
    /// Reading the first header of the block at `at`; `last` is the last written block.
    Heads,
    /// Reading the chunk header at `at` in the block at `base`.
    Header,
    /// Checksumming a chunk's payload `at..end` into `crc`, against `stored`.
    Payload,
    /// Checking that `at..end` is erased: then the log continues at `pos` with the flash
    /// erased up to `end`. A written byte before `split` means a fresh block at `restart`;
    /// from `split` on, the log still continues at `pos`, erased up to `split`.
    Erased,
    /// Complete: the log continues at `pos`, erased up to `end`.
    Done,
}

/// The resume scan, sans I/O. `SAME_BLOCK` is whether the config's resume policy is
/// [`Resume::SameBlock`]: a constant, so that firmware resuming at the next block carries no
/// chunk walk (drivers pick the instance by the policy; [`Scan::new`] checks they agree).
#[derive(Debug)]
pub(super) struct Scan<const SAME_BLOCK: bool> {
    config: FlashConfig,
    write_size: u32,
    erase_size: u32,
    read_size: u32,
    phase: Phase,
    at: u32,
    end: u32,
    base: u32,
    last: Option<u32>,
    pos: u32,
    split: u32,
    restart: u32,
    crc: u32,
    stored: u32,
    /// Bytes wanted by the read in flight: `len` of them at `skip` in `buffer`.
    wanted: Option<(u8, u8)>,
    buffer: [u8; BUFFER],
}

fn all_erased(bytes: &[u8], erased: u8) -> bool {
    bytes.iter().all(|&b| b == erased)
}

impl<const SAME_BLOCK: bool> Scan<SAME_BLOCK> {
    /// A scan of the region `config` of a flash with these geometry constants (checked by
    /// [`FlashConfig::check`]).
    pub(super) fn new(
        (config, write_size, erase_size, read_size): (FlashConfig, usize, usize, usize),
    ) -> Self {
        Self {
            // A scan whose policy disagrees with the config's resumes at the next block.
            config: if SAME_BLOCK {
                config
            } else {
                config.resume(Resume::NextBlock)
            },
            write_size: write_size as u32,
            erase_size: erase_size as u32,
            read_size: read_size.max(1) as u32,
            phase: Phase::Heads,
            at: 0,
            end: 0,
            base: 0,
            last: None,
            pos: 0,
            split: 0,
            restart: 0,
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
        let block = BLOCK_SIZE as u32;
        let len = loop {
            match self.phase {
                Phase::Heads if self.at < self.config.len => break HEADER_SIZE as u32,
                Phase::Heads => match self.last {
                    None => self.fresh(0),
                    Some(last) if SAME_BLOCK && self.config.resume == Resume::SameBlock => {
                        self.phase = Phase::Header;
                        (self.base, self.at) = (last, last);
                    }
                    Some(last) => self.fresh(last + block),
                },
                // Without the chunk walk (never reached, but the code then compiles out).
                Phase::Header | Phase::Payload if !SAME_BLOCK => self.phase = Phase::Done,
                Phase::Header if self.base + block - self.at >= HEADER_SIZE as u32 => {
                    break HEADER_SIZE as u32;
                }
                // A trailer: the block is complete.
                Phase::Header => self.fresh(self.base + block),
                Phase::Payload if self.at < self.end => {
                    break (self.end - self.at).min(PIECE as u32);
                }
                Phase::Payload if checksum::mask(self.crc) == self.stored => {
                    (self.phase, self.at) = (Phase::Header, self.end);
                }
                Phase::Payload => self.fresh(self.base + block),
                Phase::Erased if self.at < self.end => {
                    // Pieces never straddle `split` (only a chunk walk sets it apart).
                    let to = if SAME_BLOCK && self.at < self.split {
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

    /// Continues in a fresh block at or after region offset `start`: right there if it
    /// begins an erase unit (or is the region's end), else if the rest of its unit is erased,
    /// else at the next unit.
    #[inline(never)]
    fn fresh(&mut self, start: u32) {
        let unit_end = start.next_multiple_of(self.erase_size).min(self.config.len);
        (self.phase, self.at, self.end, self.pos) = (Phase::Erased, start, unit_end, start);
        (self.split, self.restart) = (unit_end, unit_end);
        if start >= self.config.len || start.is_multiple_of(self.erase_size) {
            (self.phase, self.end) = (Phase::Done, start);
        }
    }

    /// Takes in the `len` bytes at `skip` of the buffer, read for the current phase.
    fn absorb(&mut self, skip: usize, len: usize) {
        let block = BLOCK_SIZE as u32;
        let bytes = self.buffer.get(skip..skip + len).unwrap_or_default();
        let erased = all_erased(bytes, self.config.erased);
        let n = len as u32;
        match self.phase {
            Phase::Header | Phase::Payload if !SAME_BLOCK => self.phase = Phase::Done,
            Phase::Heads => {
                if !erased {
                    self.last = Some(self.at);
                }
                self.at += block;
            }
            Phase::Header => {
                let field = |i: usize| bytes.get(i).copied().unwrap_or(0);
                let block_end = self.base + block;
                if erased {
                    // Nothing written from here: the log continues here if at a word
                    // boundary with only erased bytes to the end of the block (and the rest
                    // of its erase unit erased, or the log cannot go past the block).
                    if (self.at - self.base).is_multiple_of(self.write_size) {
                        let unit_end = block_end
                            .next_multiple_of(self.erase_size)
                            .min(self.config.len);
                        (self.phase, self.pos, self.end) = (Phase::Erased, self.at, unit_end);
                        (self.at, self.split, self.restart) = (self.at + n, block_end, block_end);
                    } else {
                        self.fresh(block_end);
                    }
                    return;
                }
                let declared = u32::from(u16::from_le_bytes([
                    field(LENGTH_FIELD.start),
                    field(LENGTH_FIELD.start + 1),
                ]));
                let kind = field(TYPE_FIELD);
                let end = self.at + HEADER_SIZE as u32 + declared;
                if end > block_end || (kind == 0 && declared == 0) {
                    // A bad length (torn), or a zero header (the block was sealed).
                    self.fresh(block_end);
                    return;
                }
                self.stored = u32::from_le_bytes([
                    field(CHECKSUM_FIELD.start),
                    field(CHECKSUM_FIELD.start + 1),
                    field(CHECKSUM_FIELD.start + 2),
                    field(CHECKSUM_FIELD.start + 3),
                ]);
                self.crc = checksum::crc32c(&[kind]);
                (self.phase, self.at, self.end) = (Phase::Payload, self.at + n, end);
            }
            Phase::Payload => {
                self.crc = checksum::extend(self.crc, bytes);
                self.at += n;
            }
            Phase::Erased => {
                if erased {
                    self.at += n;
                } else if !SAME_BLOCK || self.at < self.split {
                    self.fresh(self.restart);
                } else {
                    (self.phase, self.end) = (Phase::Done, self.split);
                }
            }
            Phase::Done => {}
        }
    }
}
