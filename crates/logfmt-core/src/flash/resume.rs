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
enum State {
    /// Reading the first header of `block`; `last` is the last written block so far.
    Heads { block: u32, last: Option<u32> },
    /// Reading the chunk header at `offset` of the block at `base`.
    Chunk { base: u32, offset: u32 },
    /// Checksumming the payload of the chunk ending at `end`, read up to `at`.
    Payload {
        base: u32,
        at: u32,
        end: u32,
        crc: u32,
        stored: u32,
    },
    /// Checking that the block at `base` is erased from `at` on, for a log ending at `end`.
    Tail { base: u32, end: u32, at: u32 },
    /// Looking for a fresh block at or after `start`.
    Fresh { start: u32 },
    /// Checking that `at..to` is erased: then the log continues at `pos` with the flash
    /// erased up to `to`; if not, at `pos` erased to `fallback`, or (`None`) in a fresh block
    /// at `to`.
    Erased {
        at: u32,
        to: u32,
        pos: u32,
        fallback: Option<u32>,
    },
    /// Complete.
    Done(Resumed),
}

/// The resume scan, sans I/O.
#[derive(Debug)]
pub(super) struct Scan {
    config: FlashConfig,
    write_size: u32,
    erase_size: u32,
    read_size: u32,
    state: State,
    /// Bytes wanted by the read in flight: `len` of them at `skip` in `buffer`.
    wanted: Option<(u8, u8)>,
    buffer: [u8; BUFFER],
}

impl Scan {
    /// A scan of the region `config` of a flash with these geometry constants (checked by
    /// [`FlashConfig::check`]).
    pub(super) fn new(
        config: FlashConfig,
        write_size: usize,
        erase_size: usize,
        read_size: usize,
    ) -> Self {
        Self {
            config,
            write_size: write_size as u32,
            erase_size: erase_size as u32,
            read_size: read_size.max(1) as u32,
            state: State::Heads {
                block: 0,
                last: None,
            },
            wanted: None,
            buffer: [0; BUFFER],
        }
    }

    /// The next read, or the result. Call again after each read.
    pub(super) fn step(&mut self) -> ScanOp<'_> {
        if let Some((skip, len)) = self.wanted.take() {
            let (skip, len) = (usize::from(skip), usize::from(len));
            let bytes = self.buffer.get(skip..skip + len).unwrap_or_default();
            self.state = absorb(&self.config, self.write_size, self.state, bytes);
        }
        loop {
            match want(&self.config, self.erase_size, self.state) {
                Want::Read { at, len } => {
                    // Aligned to READ_SIZE around the bytes wanted.
                    let abs = self.config.start + at;
                    let from = abs - abs % self.read_size;
                    let to = (abs + len).next_multiple_of(self.read_size);
                    let skip = (abs - from) as usize;
                    self.wanted = Some((skip as u8, len as u8));
                    let buffer = self
                        .buffer
                        .get_mut(..(to - from) as usize)
                        .unwrap_or_default();
                    return ScanOp::Read { at: from, buffer };
                }
                Want::Go(next) => self.state = next,
                Want::Done(resumed) => return ScanOp::Done(resumed),
            }
        }
    }
}

/// What a state needs next.
enum Want {
    /// `len` bytes at region offset `at`.
    Read { at: u32, len: u32 },
    /// Nothing to read: go on in this state.
    Go(State),
    /// The result.
    Done(Resumed),
}

fn all_erased(bytes: &[u8], erased: u8) -> bool {
    bytes.iter().all(|&b| b == erased)
}

fn want(config: &FlashConfig, erase_size: u32, state: State) -> Want {
    let block = BLOCK_SIZE as u32;
    let piece = |at: u32, to: u32| Want::Read {
        at,
        len: (to - at).min(PIECE as u32),
    };
    match state {
        State::Heads { block: i, last } => {
            if i < config.blocks() {
                return Want::Read {
                    at: i * block,
                    len: HEADER_SIZE as u32,
                };
            }
            Want::Go(match (last, config.resume) {
                (None, _) => State::Fresh { start: 0 },
                (Some(last), Resume::NextBlock) => State::Fresh {
                    start: (last + 1) * block,
                },
                (Some(last), Resume::SameBlock) => State::Chunk {
                    base: last * block,
                    offset: 0,
                },
            })
        }
        State::Chunk { base, offset } => {
            if block - offset < HEADER_SIZE as u32 {
                // A trailer: the block is complete.
                Want::Go(State::Fresh {
                    start: base + block,
                })
            } else {
                Want::Read {
                    at: base + offset,
                    len: HEADER_SIZE as u32,
                }
            }
        }
        State::Payload {
            base,
            at,
            end,
            crc,
            stored,
        } => {
            if at < end {
                piece(base + at, base + end)
            } else if checksum::mask(crc) == stored {
                Want::Go(State::Chunk { base, offset: end })
            } else {
                Want::Go(State::Fresh {
                    start: base + block,
                })
            }
        }
        State::Tail { base, end, at } => {
            if at < block {
                return piece(base + at, base + block);
            }
            // Only erased bytes after the last chunk: continue right there.
            let block_end = base + block;
            Want::Go(State::Erased {
                at: block_end,
                to: block_end.next_multiple_of(erase_size).min(config.len),
                pos: base + end,
                fallback: Some(block_end),
            })
        }
        State::Fresh { start } => {
            if start >= config.len || start.is_multiple_of(erase_size) {
                return Want::Done(Resumed {
                    pos: start,
                    ready_to: start,
                });
            }
            // Inside an erase unit begun earlier: usable only if the rest of it is erased.
            Want::Go(State::Erased {
                at: start,
                to: start.next_multiple_of(erase_size).min(config.len),
                pos: start,
                fallback: None,
            })
        }
        State::Erased { at, to, pos, .. } => {
            if at < to {
                piece(at, to)
            } else {
                Want::Done(Resumed { pos, ready_to: to })
            }
        }
        State::Done(resumed) => Want::Done(resumed),
    }
}

/// The state after reading `bytes` (what `want` asked for) in `state`.
fn absorb(config: &FlashConfig, write_size: u32, state: State, bytes: &[u8]) -> State {
    let block = BLOCK_SIZE as u32;
    let erased = config.erased;
    let len = bytes.len() as u32;
    match state {
        State::Heads { block: i, last } => State::Heads {
            block: i + 1,
            last: if all_erased(bytes, erased) {
                last
            } else {
                Some(i)
            },
        },
        State::Chunk { base, offset } => {
            let next_block = State::Fresh {
                start: base + block,
            };
            let Some(header) = bytes.first_chunk::<HEADER_SIZE>() else {
                return next_block;
            };
            if all_erased(header, erased) {
                // Nothing written from here: clean if at a word boundary with only erased
                // bytes to the end of the block.
                return if offset.is_multiple_of(write_size) {
                    State::Tail {
                        base,
                        end: offset,
                        at: offset + HEADER_SIZE as u32,
                    }
                } else {
                    next_block
                };
            }
            let field = |i: usize| header.get(i).copied().unwrap_or(0);
            let declared = u32::from(u16::from_le_bytes([
                field(LENGTH_FIELD.start),
                field(LENGTH_FIELD.start + 1),
            ]));
            let kind = field(TYPE_FIELD);
            let end = offset + HEADER_SIZE as u32 + declared;
            if end > block || (kind == 0 && declared == 0) {
                // A bad length (torn), or a zero header (the block was sealed).
                return next_block;
            }
            let stored = u32::from_le_bytes([
                field(CHECKSUM_FIELD.start),
                field(CHECKSUM_FIELD.start + 1),
                field(CHECKSUM_FIELD.start + 2),
                field(CHECKSUM_FIELD.start + 3),
            ]);
            State::Payload {
                base,
                at: offset + HEADER_SIZE as u32,
                end,
                crc: checksum::crc32c(&[kind]),
                stored,
            }
        }
        State::Payload {
            base,
            at,
            end,
            crc,
            stored,
        } => State::Payload {
            base,
            at: at + len,
            end,
            crc: checksum::extend(crc, bytes),
            stored,
        },
        State::Tail { base, end, at } => {
            if all_erased(bytes, erased) {
                State::Tail {
                    base,
                    end,
                    at: at + len,
                }
            } else {
                State::Fresh {
                    start: base + block,
                }
            }
        }
        State::Erased {
            at,
            to,
            pos,
            fallback,
        } => {
            if all_erased(bytes, erased) {
                State::Erased {
                    at: at + len,
                    to,
                    pos,
                    fallback,
                }
            } else {
                match fallback {
                    Some(ready_to) => State::Done(Resumed { pos, ready_to }),
                    None => State::Fresh { start: to },
                }
            }
        }
        // Nothing is read in these states.
        State::Fresh { .. } | State::Done(_) => state,
    }
}
