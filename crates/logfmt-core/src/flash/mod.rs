//! A log in a region of NOR flash (feature `embedded-storage`), that survives power cuts.
//!
//! The region is a whole number of 32 KiB blocks and of erase units. The log in it is an
//! ordinary LevelDB log: a dump of the region reads with any LevelDB-rules reader told that
//! erased bytes mean "nothing written here" ([`ReadOptions::erased`](crate::ReadOptions)), and
//! with LevelDB's own reader except for a "bad record length" report per partly written block.
//!
//! # Two writers, one log
//!
//! - [`FlashWriter`] lays records out in a 32 KiB RAM block buffer and programs complete
//!   blocks, and on [`flush`](FlashWriter::flush) the part laid out since the last program.
//! - [`WordWriter`] needs no block buffer (about 100 bytes of state): it computes each chunk's
//!   checksum from the record in the caller's memory and programs the log through one staging
//!   word of `WRITE_SIZE` bytes. `AsyncWordWriter` (feature `embedded-storage-async`) is the
//!   same writer over an async flash driver. Both are driven by one sans-I/O engine that hands
//!   out "erase this, program that" operations; the blocking and the async driver only carry
//!   them out.
//!
//! Both put exactly the same bytes on the flash for the same records, flushes and reopenings
//! (a property test holds them to it), so everything below holds for each. The layout policy
//! (chunks, padding) and the resume policy (where a reopened log continues) are kept apart from
//! the I/O mechanics (staging, erasing, programming).
//!
//! # The rules
//!
//! - **Erased bytes** read as `0xFF` (or `0x00` on inverted parts, [`FlashConfig::erased`]); a
//!   chunk header made only of them means nothing was written from there to the end of its
//!   block.
//! - **Each flash word is programmed once**, at `WRITE_SIZE` alignment; a word made only of
//!   erased bytes at the end of what is programmed is left unprogrammed (the small-RAM writer
//!   leaves every such word), so the erased area after the log always means "may be
//!   programmed".
//! - **Padding** on flush: the laid-out bytes rarely end on a word boundary, and the rest of a
//!   partly programmed word cannot be programmed later. So flush first pads the log to
//!   `WRITE_SIZE` with empty `FIRST` chunks, which LevelDB's reader discards silently when a
//!   record follows (see [`Writer::pad_to`](crate::Writer::pad_to)), up to the end of the block
//!   if need be. Zero padding is never used: a zero header makes readers skip the rest of its
//!   block, which would hide the records written after it.
//! - **Resuming after a reset** (`open`): the log continues at the first block after the last
//!   one whose first header is written, so no record is ever appended after a torn one (where a
//!   reader would lose it with the rest of the block). With [`Resume::SameBlock`] the last block
//!   is scanned instead, and if it holds only whole chunks followed by erased bytes to its end,
//!   from a word boundary, the log continues right there; anything else — a chunk torn by a
//!   power cut, a partly programmed word — still means the next block. The scan reads in
//!   pieces of at most 64 bytes: one header per block, the last block (with
//!   [`Resume::SameBlock`]), and the rest of an erase unit begun earlier.
//! - **Erase lazily**: the erase units of a block are erased just before the block is first
//!   programmed. A full region is [`FlashError::Full`]; old blocks are never reused.
//!
//! A record is *acknowledged* once a `flush` after it has returned `Ok`. After a power cut at
//! any point — or, for `AsyncWordWriter`, a future dropped before it completes — reading the
//! region returns every acknowledged record, in order, possibly followed by records that were
//! being written, and nothing else. (The small-RAM writer programs words as soon as they are
//! complete, so unacknowledged records may survive too.)
//!
//! # Testing aid
//!
//! `MockFlash` (feature `mock-flash`) simulates a NOR flash in RAM, with power cuts during
//! programs and erases (including the arbitrary bits a real interrupted erase leaves). It is
//! for tests, fuzzing, benchmarks and demos, not part of the flash log's API.

#[cfg(feature = "embedded-storage-async")]
mod asynch;
mod engine;
mod layout;
#[cfg(any(test, feature = "mock-flash"))]
mod mock;
mod resume;
mod source;
mod word;
mod writer;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod word_tests;

#[cfg(feature = "embedded-storage-async")]
#[cfg_attr(docsrs, doc(cfg(feature = "embedded-storage-async")))]
pub use asynch::AsyncWordWriter;
#[cfg(any(test, feature = "mock-flash"))]
#[cfg_attr(docsrs, doc(cfg(feature = "mock-flash")))]
pub use mock::{MockError, MockFlash, MockStats, PowerCut};
pub use source::FlashSource;
pub use word::WordWriter;
pub use writer::{FlashStats, FlashWriter};

use core::fmt;

/// Where [`FlashWriter::open`] continues a log whose last block is partly written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Resume {
    /// Always start a fresh block: the rest of the partly written block is left erased. Safe on
    /// every part, including those with per-word ECC (STM32H7/L4/U5 and others), where a power
    /// cut at the very start of a program can leave a word that reads as erased but can never
    /// be programmed again. Costs up to one block of space per reopen.
    #[default]
    NextBlock,
    /// Continue in the same block, right after its last whole chunk, when only erased bytes
    /// follow from a word boundary. Saves space; use it only where programming a word that
    /// reads as erased is always harmless (no per-word ECC, or a `MultiwriteNorFlash` part).
    SameBlock,
}

/// Where the log lives in the flash, and how erased flash reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FlashConfig {
    /// Offset of the region in the flash: a multiple of the erase size.
    pub start: u32,
    /// Length of the region: a multiple of the erase size and of [`BLOCK_SIZE`](crate::BLOCK_SIZE).
    pub len: u32,
    /// The value erased flash reads as. Default `0xFF`.
    pub erased: u8,
    /// Where to continue a partly written last block on reopening. Default
    /// [`Resume::NextBlock`].
    pub resume: Resume,
}

impl FlashConfig {
    /// A region of `len` bytes at `start`, erased value `0xFF`.
    #[must_use]
    pub const fn new(start: u32, len: u32) -> Self {
        Self {
            start,
            len,
            erased: 0xFF,
            resume: Resume::NextBlock,
        }
    }

    /// Sets [`resume`](Self::resume).
    #[must_use]
    pub const fn resume(mut self, resume: Resume) -> Self {
        self.resume = resume;
        self
    }

    /// Sets [`erased`](Self::erased).
    #[must_use]
    pub const fn erased(mut self, erased: u8) -> Self {
        self.erased = erased;
        self
    }

    /// Number of 32 KiB blocks in the region.
    #[must_use]
    pub const fn blocks(&self) -> u32 {
        self.len / crate::BLOCK_SIZE as u32
    }

    /// Checks the region against a flash's geometry.
    fn check<E>(
        &self,
        capacity: usize,
        write_size: usize,
        erase_size: usize,
        read_size: usize,
    ) -> Result<(), FlashError<E>> {
        let block = crate::BLOCK_SIZE;
        let len = self.len as usize;
        let fits = (self.start as usize)
            .checked_add(len)
            .is_some_and(|end| end <= capacity);
        let aligned = erase_size > 0
            && (self.start as usize).is_multiple_of(erase_size)
            && len.is_multiple_of(erase_size)
            && len.is_multiple_of(block)
            && len > 0;
        let words = write_size.is_power_of_two()
            && write_size <= engine::MAX_WRITE
            && block.is_multiple_of(write_size)
            && read_size <= resume::MAX_READ
            && (read_size == 0 || erase_size.is_multiple_of(read_size));
        let units = block.is_multiple_of(erase_size) || erase_size.is_multiple_of(block);
        if fits && aligned && words && units {
            Ok(())
        } else {
            Err(FlashError::BadRegion)
        }
    }
}

/// Errors of the flash log.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum FlashError<E> {
    /// The flash driver failed. After a failed program or erase the writer is poisoned.
    Flash(E),
    /// The region has no room for the next block.
    Full,
    /// The region is not a whole number of blocks and erase units inside the flash, or the
    /// flash's `WRITE_SIZE` is not a power of two up to 32, or its `READ_SIZE` is over 32.
    BadRegion,
    /// An earlier failure left the log in an unknown state; nothing more is written (reopen to
    /// resume safely).
    Poisoned,
}

impl<E: fmt::Debug> fmt::Display for FlashError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Flash(e) => write!(f, "flash operation failed: {e:?}"),
            Self::Full => f.write_str("the flash log region is full"),
            Self::BadRegion => f.write_str(
                "the flash log region must be whole erase units and 32 KiB blocks inside the flash",
            ),
            Self::Poisoned => f.write_str("the flash log failed earlier; reopen it to resume"),
        }
    }
}

impl<E: fmt::Debug> core::error::Error for FlashError<E> {}
