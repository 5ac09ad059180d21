//! The physical half of the decoder: LevelDB's `ReadPhysicalRecord`. It walks the chunks of
//! the current block, knows where the block sits in the file and whether it is the last one
//! read, and turns what [`parse_chunk`] finds into a [`Phys`]: a chunk, or a region passed
//! over (reported or skipped), or a request for more input.

use core::ops::Range;

use crate::block::{ChunkRules, Parsed, parse_chunk};
use crate::block::{FlashGap, PaddingEnd, chunks_from, damaged_pack_end, flash_gap, padding_end};
use crate::error::{Corruption, CorruptionKind};
use crate::format::{
    BLOCK_SIZE, FragmentKind, HEADER_SIZE, HOT_PATHS, RESUME_TYPE, RING_TYPE, RecordType,
    TYPE_FIELD,
};
use crate::options::ReadOptions;
use crate::pack::{self, PackError};
use crate::skip::{Skip, SkipKind};

/// The size of the smallest header a writer of the format would not start in a block's last
/// bytes: what is left before the block's end is shorter than it, and padded.
fn trailer_limit(rules: &ChunkRules) -> usize {
    rules.trailer_limit()
}

/// Bytes passed over: reported as corruption, or skipped silently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dropped {
    Reported(Corruption),
    Skipped(Skip),
}

/// How the rest of a short block was passed over, so that bytes that arrive in it later
/// (tailing) are passed over the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RestOfBlock {
    Reported(CorruptionKind),
    Skipped(SkipKind),
}

/// What one physical step found.
#[derive(Debug)]
pub(super) enum Phys {
    NeedBlock,
    Pending,
    /// The end of the input; `torn_at` is where an incomplete chunk begins, if any.
    Eof {
        torn_at: Option<u64>,
    },
    /// A chunk from an earlier use of the file.
    Old {
        offset: u64,
        log_number: u32,
    },
    /// Bytes skipped that leave a record in progress alone (a block trailer, zeros before the
    /// end of the input).
    Skipped(Skip),
    /// Erased flash: nothing written to the end of the block. A record in progress was torn.
    Erased(Skip),
    /// LevelDB's `kBadRecord`: what was passed over, if anything. A record in progress is cut.
    Bad(Option<Dropped>),
    /// The rest of the block passed over, its verdict (torn or damage) waiting for the next
    /// block; a record in progress stays so until then.
    Deferred,
    Chunk {
        record_type: u8,
        log_number: Option<u32>,
        header_offset: u64,
        payload: Range<usize>,
    },
}

/// The position in the input: the current block and how far it has been read.
#[derive(Debug, Clone)]
pub(super) struct Cursor {
    // The unread part of the current block is `pos..len`; `end_of_buffer` is the file offset
    // just past the current block (LevelDB's `end_of_buffer_offset_`).
    pub(super) pos: usize,
    pub(super) len: usize,
    /// The current block is short: the end of the input (so far).
    pub(super) eof: bool,
    /// Reading failed: the log ends here, even when tailing.
    failed: bool,
    pub(super) end_of_buffer: u64,
    initial_offset: u64,
    resync_after_zeros: bool,
    resync_in_last_block: bool,
    tailing: bool,
    /// Tailing: the rest of the current (short) block was passed over; bytes that arrive in
    /// it later are passed over too.
    rest: Option<RestOfBlock>,
    /// Where in the current block the input stopped being readable before its end: a chunk
    /// cut short, or a zero header skipped to the end of the input.
    pub(super) unreadable: Option<usize>,
    /// In a flash image: a chunk that is not well-formed, with nothing well-formed after it in
    /// its block — torn if the next block goes on with a resume marker (or holds nothing),
    /// damage otherwise. Decided when the next block is loaded.
    deferred: Option<Deferred>,
    /// The position in the current block of a chunk whose checksum the reader has verified
    /// while copying its payload ([`Decoder::verified`](super::Decoder::verified)): parsed
    /// without checking it again.
    pub(super) verified: Option<usize>,
}

/// Bytes of a flash image that are not a chunk, at the end of a block, waiting for a verdict.
#[derive(Debug, Clone, Copy)]
struct Deferred {
    /// What they are if damaged.
    damage: Corruption,
    /// They look like a write cut short: the chunk's header runs past the block, or its last
    /// byte reads erased.
    torn: bool,
}

impl Cursor {
    pub(super) fn new(options: &ReadOptions) -> Self {
        Self {
            pos: 0,
            len: 0,
            eof: false,
            failed: false,
            end_of_buffer: 0,
            initial_offset: options.initial_offset,
            resync_after_zeros: options.resync_after_zeros,
            #[cfg(feature = "std")]
            resync_in_last_block: options.resync_in_last_block,
            #[cfg(not(feature = "std"))]
            resync_in_last_block: false,
            tailing: options.tailing,
            rest: None,
            unreadable: None,
            deferred: None,
            verified: None,
        }
    }

    /// File offset just past the last chunk consumed.
    pub(super) fn position(&self) -> u64 {
        self.end_of_buffer - (self.len - self.pos) as u64
    }

    /// The next block, or more of the current short one (tailing), now holds `len` bytes.
    /// Returns what to make of bytes that arrived in a block whose rest was passed over.
    pub(super) fn block_loaded(&mut self, len: usize, last: bool) -> Option<Dropped> {
        if HOT_PATHS {
            self.verified = None;
        }
        let len = len.min(BLOCK_SIZE);
        let mut dropped = None;
        if self.eof && len >= self.len {
            // A refill of the current, short block (tailing).
            let added = len - self.len;
            let old_end = self.end_of_buffer;
            self.end_of_buffer = self.end_of_buffer.saturating_add(added as u64);
            self.len = len;
            if let Some(rest) = self.rest {
                // The rest of this block was passed over when it was shorter: what arrives in
                // it now is passed over too, as a reader of the whole block would.
                self.pos = len;
                if added > 0 {
                    dropped = Some(match rest {
                        RestOfBlock::Reported(kind) => self.drop(old_end, added as u64, kind),
                        RestOfBlock::Skipped(kind) => Dropped::Skipped(Skip {
                            offset: old_end,
                            len: added as u64,
                            kind,
                        }),
                    });
                }
            }
        } else {
            self.pos = 0;
            self.rest = None;
            self.unreadable = None;
            self.end_of_buffer = self.end_of_buffer.saturating_add(len as u64);
        }
        self.len = len;
        self.eof = len < BLOCK_SIZE || last;
        dropped
    }

    /// Reading failed: the log ends here.
    pub(super) fn read_failed(&mut self) {
        if HOT_PATHS {
            self.verified = None;
        }
        self.pos = self.len;
        self.eof = true;
        self.failed = true;
    }

    /// LevelDB's `ReportDrop` filter, evaluated with the current buffer state: drops that
    /// begin before the initial offset are not reported.
    pub(super) fn reportable(&self, bytes: u64) -> bool {
        self.position()
            .checked_sub(bytes)
            .is_none_or(|start| start >= self.initial_offset)
    }

    /// `bytes` at `offset` dropped for `kind`: reported, or skipped if before the initial
    /// offset.
    fn drop(&self, offset: u64, bytes: u64, kind: CorruptionKind) -> Dropped {
        if self.reportable(bytes) {
            Dropped::Reported(Corruption {
                offset,
                bytes,
                kind,
            })
        } else {
            Dropped::Skipped(Skip {
                offset,
                len: bytes,
                kind: SkipKind::BeforeInitialOffset,
            })
        }
    }

    /// Skips the rest of the block from `offset` for `kind`.
    fn skip_rest(&mut self, offset: u64, kind: SkipKind) -> Skip {
        let len = (self.len - self.pos) as u64;
        self.pos = self.len;
        self.rest = Some(RestOfBlock::Skipped(kind));
        Skip { offset, len, kind }
    }

    /// Drops the rest of the block from `offset` for `kind`.
    fn drop_rest(&mut self, offset: u64, kind: CorruptionKind) -> Dropped {
        let len = (self.len - self.pos) as u64;
        self.pos = self.len;
        self.rest = Some(RestOfBlock::Reported(kind));
        self.drop(offset, len, kind)
    }

    /// LevelDB's `ReadPhysicalRecord`; `in_record` tells whether a record is in progress.
    pub(super) fn physical(&mut self, block: &[u8], rules: &ChunkRules, in_record: bool) -> Phys {
        let block = block.get(..self.len).unwrap_or(block);
        let waiting = self.tailing && !self.failed;
        let header_offset = self.position();
        if let Some(deferred) = self.deferred
            && self.pos == 0
            && self.len > 0
        {
            // Tailing, in a block still arriving, the verdict waits for the chunk it rests on.
            let arriving = self.eof && waiting;
            let Some(phys) = verdict(block, rules, deferred, arriving) else {
                return Phys::Pending;
            };
            self.deferred = None;
            return phys;
        }
        if self.len - self.pos < HEADER_SIZE {
            if !self.eof {
                if self.pos == self.len {
                    return Phys::NeedBlock;
                }
                return Phys::Skipped(self.skip_rest(header_offset, SkipKind::Trailer));
            }
            if waiting {
                return Phys::Pending;
            }
            if let Some(deferred) = self.deferred.take() {
                // The input ends after a torn write.
                if deferred.torn {
                    return Phys::Eof {
                        torn_at: Some(deferred.damage.offset),
                    };
                }
                return Phys::Bad(Some(Dropped::Reported(deferred.damage)));
            }
            if self.pos < self.len && BLOCK_SIZE - self.pos < trailer_limit(rules) {
                // The end of the input inside a block's trailer: the writer died padding the
                // block, after its last chunk.
                return Phys::Skipped(self.skip_rest(header_offset, SkipKind::Trailer));
            }
            // A truncated header at the end of the input: the writer died mid-header.
            let torn_at = (self.pos < self.len).then_some(header_offset);
            if torn_at.is_some() {
                self.unreadable = Some(self.pos);
            }
            self.pos = self.len;
            return Phys::Eof { torn_at };
        }
        // In a flash image, erased bytes are padding first, before a chunk at their start is
        // (a header read across padding is never taken at its word).
        if rules.erased.is_some() {
            let arriving = self.eof && waiting;
            match padding_end(block, self.pos, self.eof, rules, arriving) {
                PaddingEnd::At(to) if to > self.pos => {
                    return self.padding(to, header_offset, in_record);
                }
                PaddingEnd::Wait => return Phys::Pending,
                _ => {}
            }
        }
        let parsed = if HOT_PATHS && self.verified.take() == Some(self.pos) {
            // The checksum was checked where the payload was copied: the same chunk, parsed
            // with the same rules but that one.
            parse_chunk(
                block,
                self.pos,
                self.eof,
                &ChunkRules {
                    verify: false,
                    ..*rules
                },
            )
        } else {
            parse_chunk(block, self.pos, self.eof, rules)
        };
        // In a flash image a zero header is no preallocated space: a write torn where the
        // flash reads zeros (or damage), judged by the flash rules too.
        if rules.erased.is_some()
            && (matches!(
                parsed,
                Parsed::Erased { .. }
                    | Parsed::BadLength { .. }
                    | Parsed::ChecksumMismatch { .. }
                    | Parsed::ZeroHeader { .. }
            ) || (!waiting && matches!(parsed, Parsed::Truncated { .. })))
            && let Some(phys) = self.flash(block, rules, header_offset, &parsed, in_record)
        {
            return phys;
        }
        match parsed {
            Parsed::Chunk(chunk) => {
                self.pos = chunk.end();
                if header_offset < self.initial_offset {
                    // A chunk that starts before the initial offset is skipped.
                    return Phys::Bad(Some(Dropped::Skipped(Skip {
                        offset: header_offset,
                        len: self.position() - header_offset,
                        kind: SkipKind::BeforeInitialOffset,
                    })));
                }
                let start = chunk.offset + chunk.header_len;
                Phys::Chunk {
                    record_type: chunk.record_type,
                    log_number: chunk.log_number,
                    header_offset,
                    payload: start..start + chunk.payload.len(),
                }
            }
            Parsed::Trailer { .. } => {
                Phys::Skipped(self.skip_rest(header_offset, SkipKind::Trailer))
            }
            Parsed::Truncated { .. } if waiting => Phys::Pending,
            Parsed::Truncated { .. } => {
                if let Some(phys) = self.past_damage(block, rules, header_offset, None) {
                    return phys;
                }
                self.unreadable = Some(self.pos);
                self.pos = self.len;
                Phys::Eof {
                    torn_at: Some(header_offset),
                }
            }
            Parsed::ZeroHeader { offset, .. } => {
                if self.resync_after_zeros
                    && let Some(phys) = self.after_zeros(block, offset, rules, in_record)
                {
                    return phys;
                }
                // Zeros in the last bytes of a complete block, too few for a chunk of the
                // format: a trailer (a recyclable log's is up to 10 bytes long).
                let kind = if !self.eof && BLOCK_SIZE - self.pos < trailer_limit(rules) {
                    SkipKind::Trailer
                } else {
                    SkipKind::ZeroHeader
                };
                if self.eof {
                    if let Some(phys) =
                        self.past_damage(block, rules, header_offset, Some(SkipKind::ZeroHeader))
                    {
                        return phys;
                    }
                    self.unreadable = Some(self.pos);
                }
                let skip = self.skip_rest(header_offset, kind);
                Phys::Bad(Some(Dropped::Skipped(skip)))
            }
            Parsed::Erased { .. } => Phys::Erased(self.skip_rest(header_offset, SkipKind::Erased)),
            // Only a block parser walking a flash image finds these (`flash_gap`, above).
            Parsed::Padding { .. } | Parsed::Torn { .. } => Phys::Bad(None),
            Parsed::OldRecord { log_number, .. } => {
                self.pos = self.len;
                Phys::Old {
                    offset: header_offset,
                    log_number,
                }
            }
            Parsed::BadLength { .. } => Phys::Bad(Some(
                self.drop_rest(header_offset, CorruptionKind::BadRecordLength),
            )),
            Parsed::BadTrailer { .. } => Phys::Bad(Some(
                self.drop_rest(header_offset, CorruptionKind::BadTrailer),
            )),
            Parsed::ChecksumMismatch { offset, .. } => {
                match damaged_pack_end(block, offset, self.eof, rules) {
                    // A pack chunk damaged in place: only that chunk is dropped.
                    Some(end) => {
                        self.pos = end;
                        let kind = damaged_pack_kind(block, offset, end);
                        Phys::Bad(Some(self.drop(header_offset, (end - offset) as u64, kind)))
                    }
                    None => Phys::Bad(Some(
                        self.drop_rest(header_offset, CorruptionKind::ChecksumMismatch),
                    )),
                }
            }
        }
    }

    /// The flash-image rules, where no well-formed chunk starts at the current position
    /// (`header_offset`; `parsed` is what is there instead):
    ///
    /// - padding: erased bytes up to a well-formed chunk (the rest of a flash word a flush
    ///   left unprogrammed, or the words a writer skipped on reopening) are skipped; a record
    ///   in progress there was cut by a power cut and is dropped silently;
    /// - a torn write: the bytes up to the next well-formed chunk of the block, if that chunk
    ///   is a resume marker ([`RESUME_TYPE`]), are skipped, and so is the record in progress;
    /// - damage: bytes up to any other well-formed chunk of the block are dropped and reported,
    ///   and reading goes on there (where LevelDB's rule drops the rest of the block).
    ///
    /// `None` where none applies (nothing well-formed follows): the LevelDB rules go on.
    /// Tailing, in the last block so far, only padding is decided: the rest waits for the
    /// block to be whole (or for the reader to stop tailing).
    fn flash(
        &mut self,
        block: &[u8],
        rules: &ChunkRules,
        header_offset: u64,
        parsed: &Parsed<'_>,
        in_record: bool,
    ) -> Option<Phys> {
        let block = block.get(..self.len)?;
        // Tailing, in a block still arriving: what follows may not be here yet, so nothing is
        // decided but padding up to a chunk that is whole (a reader of the whole input decides
        // the same way).
        let arriving = self.eof && self.tailing && !self.failed;
        let Some(gap) = flash_gap(block, self.pos, self.eof, rules, arriving) else {
            if arriving {
                return Some(Phys::Pending);
            }
            if matches!(parsed, Parsed::Erased { .. }) {
                return None;
            }
            let torn = looks_torn(block, self.pos, rules);
            if self.eof && torn {
                // In the input's last block, with nothing well-formed after it: a write torn
                // by a power cut where the log ends.
                self.unreadable = Some(self.pos);
                self.pos = self.len;
                return Some(Phys::Eof {
                    torn_at: Some(header_offset),
                });
            }
            if self.eof {
                return None;
            }
            // Torn or damaged: the next block tells.
            let kind = match parsed {
                Parsed::ChecksumMismatch { .. } => CorruptionKind::ChecksumMismatch,
                _ => CorruptionKind::BadRecordLength,
            };
            let bytes = (self.len - self.pos) as u64;
            self.pos = self.len;
            if header_offset >= self.initial_offset {
                self.deferred = Some(Deferred {
                    damage: Corruption {
                        offset: header_offset,
                        bytes,
                        kind,
                    },
                    torn,
                });
            }
            return Some(Phys::Deferred);
        };
        if let FlashGap::Padding(to) = gap {
            return Some(self.padding(to, header_offset, in_record));
        }
        let (FlashGap::Padding(to) | FlashGap::Torn(to) | FlashGap::Damaged(to)) = gap;
        let len = (to - self.pos) as u64;
        self.pos = to;
        let skip = |kind| Skip {
            offset: header_offset,
            len,
            kind,
        };
        Some(match gap {
            FlashGap::Padding(_) => Phys::Skipped(skip(SkipKind::Padding)),
            FlashGap::Torn(_) => Phys::Erased(skip(SkipKind::Torn)),
            FlashGap::Damaged(_) => {
                let kind = match parsed {
                    Parsed::ChecksumMismatch { .. } => CorruptionKind::ChecksumMismatch,
                    _ => CorruptionKind::BadRecordLength,
                };
                Phys::Bad(Some(self.drop(header_offset, len, kind)))
            }
        })
    }

    /// Erased padding from the current position (`header_offset`) up to the well-formed chunk
    /// at `to`, skipped; a record in progress there was cut by a power cut: dropped silently.
    fn padding(&mut self, to: usize, header_offset: u64, in_record: bool) -> Phys {
        let skip = Skip {
            offset: header_offset,
            len: (to - self.pos) as u64,
            kind: SkipKind::Padding,
        };
        self.pos = to;
        if in_record {
            Phys::Erased(skip)
        } else {
            Phys::Skipped(skip)
        }
    }

    /// `resync_in_last_block`: at damage in the last block (`header_offset`, the current
    /// position) that well-formed chunks follow, goes on at the first of them; the bytes before
    /// it are skipped as `skip`, or else reported as a bad record length. `None` if the option
    /// is off or no chunk follows.
    fn past_damage(
        &mut self,
        block: &[u8],
        rules: &ChunkRules,
        header_offset: u64,
        skip: Option<SkipKind>,
    ) -> Option<Phys> {
        if !cfg!(feature = "std")
            || !self.resync_in_last_block
            || !self.eof
            || (self.tailing && !self.failed)
        {
            return None;
        }
        let (first, _) = chunks_from(block, self.pos + 1, true, rules)?;
        let len = (first - self.pos) as u64;
        self.pos = first;
        Some(Phys::Bad(Some(match skip {
            Some(kind) => Dropped::Skipped(Skip {
                offset: header_offset,
                len,
                kind,
            }),
            None => self.drop(header_offset, len, CorruptionKind::BadRecordLength),
        })))
    }

    /// `resync_after_zeros`: at a zero header at `offset` in the block, skips only the zeros
    /// if a chunk follows them. `None` when it does not: the rest of the block is skipped, as
    /// LevelDB does.
    fn after_zeros(
        &mut self,
        block: &[u8],
        offset: usize,
        rules: &ChunkRules,
        in_record: bool,
    ) -> Option<Phys> {
        let waiting = self.tailing && !self.failed;
        let header_offset = self.position();
        let next = block
            .get(offset..)
            .and_then(|rest| rest.iter().position(|&b| b != 0))
            .map(|n| offset + n);
        let zeros_to = |this: &mut Self, next: usize| {
            let skip = Skip {
                offset: header_offset,
                len: (next - offset) as u64,
                kind: SkipKind::ZeroHeader,
            };
            this.pos = next;
            skip
        };
        match next.map(|n| (n, parse_chunk(block, n, self.eof, rules))) {
            Some((next, Parsed::Chunk(_))) => {
                Some(Phys::Bad(Some(Dropped::Skipped(zeros_to(self, next)))))
            }
            // A chunk cut by the end of the input: the zeros before it are final (they cut
            // the record in progress, reported now), the chunk is torn or, tailing, still
            // arriving: whether reading goes on there is decided once it is whole.
            Some((next, Parsed::Truncated { .. })) if self.eof => Some(if !waiting {
                Phys::Bad(Some(Dropped::Skipped(zeros_to(self, next))))
            } else if in_record {
                Phys::Bad(None)
            } else {
                Phys::Pending
            }),
            // Zeros to the end of the input: preallocated space, where the log ends (a record
            // in progress is torn). Tailing, they may yet be overwritten.
            None if self.eof => Some(if waiting {
                Phys::Pending
            } else {
                let len = self.len;
                Phys::Skipped(zeros_to(self, len))
            }),
            _ => None,
        }
    }
}

/// What a pack chunk damaged in place (`offset..end` of `block`) is reported as: the pack lost
/// with its records if the chunk begins the pack and its count reads as one, a checksum
/// mismatch otherwise (the records of a pack begun earlier are counted where it is cut).
fn damaged_pack_kind(block: &[u8], offset: usize, end: usize) -> CorruptionKind {
    let begins = block
        .get(offset + TYPE_FIELD)
        .and_then(|&t| RecordType::try_from(t).ok())
        .and_then(RecordType::fragment_kind)
        .is_some_and(|kind| matches!(kind, FragmentKind::Full | FragmentKind::First));
    let payload = block.get(offset + HEADER_SIZE..end).unwrap_or_default();
    match pack::declared_count(payload) {
        Some(lost) if begins => CorruptionKind::BadPack {
            error: PackError::Checksum,
            lost,
        },
        _ => CorruptionKind::ChecksumMismatch,
    }
}

/// The verdict on bytes of a flash image that are not a chunk, at the end of the block before
/// `block` (`deferred`): torn by a power cut if `block` goes on (after its ring header, if
/// any) with a resume marker — the writer puts one after a torn write — or, if they look torn,
/// with anything but a well-formed chunk (nothing written, or a write torn in turn, which the
/// reader judges next); damage otherwise.
/// `None` while `arriving` (tailing, the block not whole yet) and the chunk it rests on is not
/// whole either.
fn verdict(block: &[u8], rules: &ChunkRules, deferred: Deferred, arriving: bool) -> Option<Phys> {
    let at = match parse_chunk(block, 0, false, rules) {
        Parsed::Chunk(chunk) if chunk.record_type == RING_TYPE => chunk.end(),
        Parsed::Chunk(_) | Parsed::Erased { .. } => 0,
        _ if arriving => return None,
        _ => 0,
    };
    let torn = match parse_chunk(block, at, false, rules) {
        Parsed::Chunk(chunk) => chunk.record_type == RESUME_TYPE && chunk.payload.is_empty(),
        _ if arriving => return None,
        _ => deferred.torn,
    };
    Some(if torn {
        Phys::Erased(Skip {
            offset: deferred.damage.offset,
            len: deferred.damage.bytes,
            kind: SkipKind::Torn,
        })
    } else {
        Phys::Bad(Some(Dropped::Reported(deferred.damage)))
    })
}

/// Whether the chunk at `pos` in `block`, not well-formed, looks like a write cut short by a
/// power cut: the length its header declares runs past the block, or the chunk's last byte
/// reads erased. (A complete chunk with a wrong checksum is damage — or a write cut in its
/// very last word, which no reader can tell from damage.)
///
/// After erased padding the chunk starts at the first byte not erased, or up to 6 bytes before
/// (a checksum may begin with erased bytes): it looks torn if any of those starts does.
fn looks_torn(block: &[u8], pos: usize, rules: &ChunkRules) -> bool {
    let Some(erased) = rules.erased else {
        return false;
    };
    let rest = block.get(pos..).unwrap_or_default();
    let written = rest.iter().position(|&b| b != erased).unwrap_or(0);
    let cut_short = |at: usize| {
        let Some(header) = block.get(at..at + HEADER_SIZE) else {
            return true;
        };
        let len = usize::from(u16::from_le_bytes([header[4], header[5]]));
        block
            .get(at + HEADER_SIZE + len - 1)
            .is_none_or(|&last| last == erased)
    };
    (0..=written.min(HEADER_SIZE - 1)).any(|back| cut_short(pos + written - back))
}
