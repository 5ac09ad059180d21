//! Resume policy: where a writer continues a log after a reset. The small-RAM reader's walk
//! finds it (`Walk::resume`, blocking and async from one source): the writer and the reader
//! read a block by the same rules, in the same code.
//!
//! 1. The first header of every block is read; the last block whose first header is not all
//!    erased holds the log's end (a written block always starts with a chunk). In a ring, the
//!    ring headers tell: the last block of the newest lap.
//! 2. That block's chunks are walked as the reader walks them, in small reads: a well-formed
//!    chunk (length inside the block, checksum right) is stepped over; erased bytes where a
//!    chunk would start are flush padding, up to the well-formed chunk that starts at most a
//!    header's length before the next byte that is not erased (a checksum may begin with
//!    erased bytes); anything else is a chunk torn by a power cut (how far its header says it
//!    reaches is kept), after which the walk goes on at the next well-formed chunk — the
//!    resume marker a later reopening put after it.
//! 3. Let `l` be one past the last byte of the block that is not erased, and at least the end
//!    of the last well-formed chunk. The log continues at `r = roundup(l, W) + W`: one word
//!    more than needed, because a power cut at the very start of programming that word may
//!    have left it reading erased but unprogrammable (per-word ECC). If the walk ended in a
//!    torn chunk, `r` is also past the end a torn chunk's header declares (when it fits in the
//!    block: the word in flight at the cut lies inside the torn chunk), and the writer puts
//!    the resume marker at `r` first. The same when the log ends in the middle of a record
//!    (its last chunk a `FIRST` or `MIDDLE` fragment).
//! 4. If fewer than a header's bytes are left after `r` in the block, the log continues at the
//!    next block (the one after, if the first word of the next one may have been in flight and
//!    the next one shares an erase unit with the last, so that it cannot be erased again).
//!    Also if the block holds written bytes beyond what a torn write explains (`l` past the
//!    torn chunk's declared end and one word): garbage, which could hide what follows it.
//!
//! 5. With [`FlashConfig::fresh_unit_on_reopen`], a log that would continue inside an erase
//!    unit (a ring: erase group) it does not erase first continues at the start of the next
//!    one instead, erased before the first program: a boot that picks the same place as the
//!    one before, after a power cut that left its first program reading erased, erases that
//!    word again before programming it.
//!
//! A word whose reads fail with an ECC error (a program a power cut interrupted) reads as
//! written bytes that are no chunk's: a torn write (the walk's reads, in `reader`).
//!
//! The flash after the log's end is erased (the region was erased before its first use, and a
//! block's erase units are erased before it is first programmed): where the log continues at
//! the start of an erase unit, the writer erases it first; elsewhere the rest of the unit is
//! erased already.
//!
//! What a reopen reads: the first header of every block (19 bytes in a ring, 7 otherwise), the
//! last written block's chunk headers and payloads (in pieces of 32 bytes), and that block's
//! bytes after its last well-formed chunk, from its end backwards; more only after a torn
//! chunk, where the walk looks for the next chunk a byte at a time.

use super::config::FlashConfig;
use crate::format::{BLOCK_SIZE, HEADER_SIZE};

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

/// What the walk of the log's last block found (offsets in the block).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Tail {
    /// The block's region offset.
    pub(super) base: u32,
    /// The end of the last well-formed chunk (or marker).
    pub(super) good_end: u32,
    /// One past the last byte that is not erased.
    pub(super) written_end: u32,
    /// How far the chunks found torn reach, by their headers.
    pub(super) reach: u32,
    /// The walk ended in a torn chunk.
    pub(super) torn: bool,
    /// The last well-formed chunk left a record open (`FIRST`, `MIDDLE`).
    pub(super) open: bool,
    /// A ring's block after this one, in its erase group, has written bytes where its ring
    /// header goes: a header torn by a power cut. The log goes on after that block.
    pub(super) skip_next: bool,
}

/// The geometry a reopening needs: `WRITE_SIZE` and `ERASE_SIZE`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Geometry {
    pub(super) write_size: u32,
    pub(super) erase_size: u32,
}

impl Geometry {
    /// Where the log continues after its last block's `tail` (rule 3 and 4), a ring at `lap`
    /// with `records` begun before.
    pub(super) fn resume(
        &self,
        config: &FlashConfig,
        tail: &Tail,
        lap: u32,
        records: u32,
    ) -> Resumed {
        let word = self.write_size;
        let mut block_end = tail.base + BLOCK_SIZE as u32;
        if tail.skip_next {
            // A ring header torn in the next block: the log goes on after that block.
            block_end += BLOCK_SIZE as u32;
        }
        let base = tail.base;
        let end = base + tail.written_end.max(tail.good_end);
        let reach = base + tail.reach;
        let explained = reach.next_multiple_of(word) + word;
        let resume = (end.next_multiple_of(word) + word).max(reach.next_multiple_of(word));
        let marker = tail.torn || tail.open;
        let here = Resumed {
            pos: resume,
            ready_to: block_end.next_multiple_of(self.erase_size),
            marker,
            lap,
            records,
        };
        let resumed = if tail.torn && base + tail.written_end > explained {
            // Written bytes beyond what a torn write explains (the torn chunk as far as its
            // header reaches, and the word in flight): not this log's, or an interrupted erase.
            // A fresh block, where no chunk of theirs can hide what follows.
            self.fresh(config, block_end, here)
        } else if resume + HEADER_SIZE as u32 <= block_end && !tail.skip_next {
            // Here, the flash erased to the end of the block's erase unit.
            self.within(config, here)
        } else if resume > block_end && !block_end.is_multiple_of(self.erase_size) {
            // The next block's first word may have been in flight, and it cannot be erased
            // again without the blocks before it in its unit: the block after it.
            self.fresh(config, block_end + BLOCK_SIZE as u32, here)
        } else {
            self.fresh(config, block_end, here)
        };
        if config.fresh_unit_on_reopen && resumed.ready_to > resumed.pos {
            // The first program after the reopening goes to a word erased just before it
            // (rule 5): the next unit (a ring's group).
            let unit = if config.ring {
                FlashConfig::group_bytes(self.erase_size)
            } else {
                self.erase_size
            };
            return self.fresh(config, resumed.pos.next_multiple_of(unit), resumed);
        }
        resumed
    }

    /// Continues in a fresh block at region offset `start`: erased first if it begins an
    /// erase unit. A ring past its end goes on at its start, one lap later, its first group
    /// erased first.
    pub(super) fn fresh(&self, config: &FlashConfig, start: u32, resumed: Resumed) -> Resumed {
        let len = config.len;
        if config.ring && start >= len {
            let lap = resumed.lap.wrapping_add(1);
            return self.within(
                config,
                Resumed {
                    pos: start - len,
                    ready_to: start - len,
                    lap,
                    ..resumed
                },
            );
        }
        self.within(
            config,
            Resumed {
                pos: start,
                ready_to: start.next_multiple_of(self.erase_size),
                ..resumed
            },
        )
    }

    /// Both offsets kept within the region.
    fn within(&self, config: &FlashConfig, resumed: Resumed) -> Resumed {
        Resumed {
            pos: resumed.pos.min(config.len),
            ready_to: resumed.ready_to.min(config.len),
            ..resumed
        }
    }
}
