//! Where a flash log lives and how its flash behaves ([`FlashConfig`]), and the limits of the
//! geometry the flash log supports.

use super::error::FlashError;

/// The largest `WRITE_SIZE` the flash log supports.
pub(super) const MAX_WRITE: usize = 32;

/// The largest `READ_SIZE` the flash log supports.
pub(super) const MAX_READ: usize = 32;

/// The value the readers and the reopening walk take for bytes whose read fails (an ECC
/// error): never the erased value, and a chunk header made of it declares a length past any
/// block (so it looks cut short, as an interrupted program is).
pub(super) const fn unreadable(erased: u8) -> u8 {
    0x80 | !erased
}

/// Where the log lives in the flash, and how erased flash reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FlashConfig {
    /// Offset of the region in the flash: a multiple of the erase size.
    pub start: u32,
    /// Length of the region: a multiple of the erase size and of [`BLOCK_SIZE`](crate::format::BLOCK_SIZE).
    pub len: u32,
    /// The value erased flash reads as. Default `0xFF`.
    pub erased: u8,
    /// Keep the log as a ring ([`ring`](crate::ring)): when the region is full, erase its
    /// oldest erase units and go on at its start, for ever. Default `false`: bounded, a full
    /// region is [`FlashError::Full`]. (In a ring, the offsets a writer returns are region
    /// offsets: a record that runs across the wrap ends before it starts.)
    pub ring: bool,
    /// The lap a ring starts with in an empty region. Default 1. (Any value: the lap counter
    /// wraps safely; tests start it near its maximum.)
    pub first_lap: u32,
    /// A reopened log continues at the start of an erase unit (a ring: of an erase group)
    /// that the writer erases before its first program, instead of a word after the log's
    /// end. Default `false`: the default reads the session's first program back and leaves
    /// the unit if the flash refused it, which is safe on parts that refuse or spoil a second
    /// program. This never programs a word after a reopen before erasing it, for parts whose
    /// read-back cannot be trusted, at a cost of an erase unit (most of it) and one erase
    /// every reboot: see [Power cuts on parts with per-word
    /// ECC](super#power-cuts-on-parts-with-per-word-ecc).
    pub fresh_unit_on_reopen: bool,
    /// The flash's word size (its `WRITE_SIZE`), for readers of a bounded log: with it, a
    /// flush's padding is skipped to the next word boundary without being read, as in a ring,
    /// whose ring headers tell the word size. Default `None`: a bounded log's reader reads
    /// the padding up to the next chunk. A writer's `config()` gives its region with this
    /// filled in, so a reader opened with it reads at the lower cost. Writers check it against their flash (another value
    /// is [`FlashError::BadRegion`]); in a ring the ring headers' word size is the one used.
    pub write_size: Option<u8>,
}

impl FlashConfig {
    /// A region of `len` bytes at `start`, erased value `0xFF`.
    #[must_use]
    pub const fn new(start: u32, len: u32) -> Self {
        Self {
            start,
            len,
            erased: 0xFF,
            ring: false,
            first_lap: 1,
            fresh_unit_on_reopen: false,
            write_size: None,
        }
    }

    /// Sets [`write_size`](Self::write_size): the flash's `WRITE_SIZE` (a power of two up to
    /// 32; any other value makes writers refuse the region and readers ignore it).
    ///
    /// ```
    /// use logfmt_core::flash::FlashConfig;
    ///
    /// let config = FlashConfig::new(0, 65_536).write_size(16);
    /// assert_eq!(config.write_size, Some(16));
    /// ```
    #[must_use]
    pub const fn write_size(mut self, write_size: usize) -> Self {
        self.write_size = Some(if write_size <= 32 {
            write_size as u8
        } else {
            0
        });
        self
    }

    /// The word size readers may rely on: [`write_size`](Self::write_size) if it is a power
    /// of two up to 32.
    pub(super) const fn told_word(&self) -> Option<u32> {
        match self.write_size {
            Some(w) if w.is_power_of_two() && w <= 32 => Some(w as u32),
            _ => None,
        }
    }

    /// Makes the log a ring ([`ring`](Self::ring)).
    #[must_use]
    pub const fn ring(mut self) -> Self {
        self.ring = true;
        self
    }

    /// Sets [`first_lap`](Self::first_lap).
    #[must_use]
    pub const fn first_lap(mut self, lap: u32) -> Self {
        self.first_lap = lap;
        self
    }

    /// Bytes of a ring's erase group on a flash with erase units of `erase_size` bytes: one
    /// erase unit, or one block if the unit is smaller.
    pub(super) const fn group_bytes(erase_size: u32) -> u32 {
        let block = crate::format::BLOCK_SIZE as u32;
        if erase_size > block {
            erase_size
        } else {
            block
        }
    }

    /// Sets [`fresh_unit_on_reopen`](Self::fresh_unit_on_reopen).
    #[must_use]
    pub const fn fresh_unit_on_reopen(mut self) -> Self {
        self.fresh_unit_on_reopen = true;
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
        self.len / crate::format::BLOCK_SIZE as u32
    }

    /// Checks the region against a flash's geometry.
    pub(super) fn check<E>(
        &self,
        capacity: usize,
        write_size: usize,
        erase_size: usize,
        read_size: usize,
    ) -> Result<(), FlashError<E>> {
        let block = crate::format::BLOCK_SIZE;
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
            && self
                .write_size
                .is_none_or(|told| usize::from(told) == write_size)
            && write_size <= MAX_WRITE
            && block.is_multiple_of(write_size)
            && read_size <= MAX_READ
            && (read_size == 0 || erase_size.is_multiple_of(read_size));
        let units = block.is_multiple_of(erase_size) || erase_size.is_multiple_of(block);
        // A ring: at least two erase groups (one is always erased ahead), its geometry fits
        // the ring header.
        let group = Self::group_bytes(erase_size as u32) as usize;
        let ring = !self.ring
            || (len.is_multiple_of(group)
                && len / group >= 2
                && len / block <= usize::from(u16::MAX)
                && group / block <= usize::from(u8::MAX));
        if fits && aligned && words && units && ring {
            Ok(())
        } else {
            Err(FlashError::BadRegion)
        }
    }
}
