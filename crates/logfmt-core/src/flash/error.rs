//! The flash log's errors.

use core::fmt;

/// Errors of the flash log.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum FlashError<E> {
    /// The flash driver failed. A program or erase the flash refuses (an error of kind
    /// `Other`) is survived — the writer leaves that erase unit for a fresh one and tries
    /// again ([Refused programs](super#refused-programs-and-erases)) — and returned only when
    /// it failed in [`MAX_ABANDONED`](super::MAX_ABANDONED) units in a row, or is of another kind; the writer is
    /// then poisoned.
    Flash(E),
    /// A word read back other than it was programmed (the first program of each session is
    /// read back): survived as a refused program is, and returned only as [`Flash`](Self::Flash)
    /// is. `offset` is the word's region offset.
    Mismatch {
        /// Region offset of the word.
        offset: u32,
    },
    /// The flash refused a program, and records added since the last flush had bytes in
    /// it: those `records` (the newest added before the refused program, not counting the
    /// one being added then, which was written again) are not in the log. The writer left
    /// the erase unit, and this flush made every other record durable; add them again if
    /// they must be kept. Reported once, by the flush (or commit) after the refusal.
    Lost {
        /// How many records were lost.
        records: u32,
    },
    /// The bounded region has no room for the record; in a ring, the record is longer than
    /// what the ring keeps.
    Full,
    /// The region is not a whole number of blocks and erase units inside the flash, or the
    /// flash's `WRITE_SIZE` is not a power of two up to 32 (or not the one
    /// [`FlashConfig::write_size`](super::FlashConfig::write_size) tells), or its `READ_SIZE` is over 32; or
    /// a ring has fewer than two erase groups (or more than 65 535 blocks).
    BadRegion,
    /// An earlier failure left the log in an unknown state; nothing more is written (reopen to
    /// resume safely).
    Poisoned,
    /// A ring's cursor was committed past the records the log has begun: it may only name a
    /// record read from the log, or the next one to be written. Nothing is written.
    CursorAhead,
}

impl<E: fmt::Debug> fmt::Display for FlashError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Flash(e) => write!(f, "flash operation failed: {e:?}"),
            Self::Mismatch { offset } => {
                write!(
                    f,
                    "the flash word at {offset} read back other than programmed"
                )
            }
            Self::Lost { records } => write!(
                f,
                "{records} records added since the last flush were lost to a refused program"
            ),
            Self::Full => f.write_str("the flash log region is full"),
            Self::BadRegion => f.write_str(
                "the flash log region must be whole erase units and 32 KiB blocks inside the flash",
            ),
            Self::Poisoned => f.write_str("the flash log failed earlier; reopen it to resume"),
            Self::CursorAhead => {
                f.write_str("the cursor names a record past the end of the flash log")
            }
        }
    }
}

impl<E: fmt::Debug> core::error::Error for FlashError<E> {}
