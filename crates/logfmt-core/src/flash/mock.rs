//! A simulated NOR flash with power cuts, for tests, fuzzing, benchmarks and demos (host or
//! target). Feature `mock-flash`: a test and simulation aid, not part of the flash log's API.

use core::fmt;

use embedded_storage::nor_flash::{
    ErrorType, NorFlash, NorFlashError, NorFlashErrorKind, ReadNorFlash, check_erase, check_read,
    check_write,
};

/// What a power cut leaves of the word being programmed (or the unit being erased).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum PowerCut {
    /// The word (unit) is left as it was.
    Untouched,
    /// Some of the word's bytes are programmed (some of the unit's bytes erased).
    Partial,
    /// The word is fully programmed (the unit fully erased), but the operation still fails.
    Complete,
    /// What real NOR may leave, drawn from `seed`: each bit of the word being programmed is
    /// either programmed or not; the erase unit being erased holds arbitrary bits (the units
    /// before it in the same erase are erased, those after it untouched), and none of its
    /// words may be programmed before it is erased again.
    Arbitrary {
        /// Seed of the pseudo-random bits.
        seed: u64,
    },
    /// What parts with per-word ECC usually leave of an interrupted program: the bytes before
    /// the cut are programmed (as [`Partial`](Self::Partial)) and every read of the word
    /// fails with [`MockError::Ecc`] until its unit is erased. (An erase cut this way is
    /// [`Partial`](Self::Partial).) The flash remembers up to [`MAX_ECC_WORDS`] such words at
    /// a time; a cut past that leaves its word as [`Partial`](Self::Partial) does.
    EccError,
}

/// What a part with per-word ECC does with a second program of a word before an erase (a word
/// whose first program a power cut interrupted, even one that still reads erased).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum SecondProgram {
    /// Refuses it ([`MockError::WrittenTwice`]) and leaves the word as it was, as STM32L4,
    /// L5, U5, G4 and H7 do (PROGERR / PGSERR). The default.
    Refused,
    /// Accepts it: the bits are programmed, the ECC no longer matches, and every read of the
    /// word fails with [`MockError::Ecc`] until its unit is erased — as parts that do not
    /// check do.
    Spoiled,
}

/// How many words that read as ECC errors ([`PowerCut::EccError`]) a [`MockFlash`] keeps.
pub const MAX_ECC_WORDS: usize = 16;

/// xorshift64: the arbitrary bits of [`PowerCut::Arbitrary`].
fn next_random(state: &mut u64) -> u64 {
    let mut x = *state | 1;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    x
}

/// Errors of [`MockFlash`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum MockError {
    /// Offset or length not aligned to the read, write or erase size.
    NotAligned,
    /// Outside the flash.
    OutOfBounds,
    /// A word programmed twice without an erase in between (real parts with ECC corrupt it).
    WrittenTwice {
        /// Offset of the word.
        offset: u32,
    },
    /// The power failed during (or before) the operation.
    PowerCut,
    /// A read of a word whose program a power cut interrupted ([`PowerCut::EccError`]): its
    /// ECC does not match its bits.
    Ecc {
        /// Offset of the word.
        offset: u32,
    },
}

impl NorFlashError for MockError {
    fn kind(&self) -> NorFlashErrorKind {
        match self {
            Self::NotAligned => NorFlashErrorKind::NotAligned,
            Self::OutOfBounds => NorFlashErrorKind::OutOfBounds,
            Self::WrittenTwice { .. } | Self::PowerCut | Self::Ecc { .. } => {
                NorFlashErrorKind::Other
            }
        }
    }
}

impl fmt::Display for MockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAligned => f.write_str("not aligned"),
            Self::OutOfBounds => f.write_str("out of bounds"),
            Self::WrittenTwice { offset } => write!(f, "word at {offset} programmed twice"),
            Self::PowerCut => f.write_str("power cut"),
            Self::Ecc { offset } => write!(f, "ECC error in the word at {offset}"),
        }
    }
}

impl core::error::Error for MockError {}

/// Operation counts of a [`MockFlash`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct MockStats {
    /// Read operations.
    pub reads: u32,
    /// Program operations.
    pub writes: u32,
    /// Erase operations.
    pub erases: u32,
    /// Bytes programmed.
    pub bytes_written: u64,
}

/// A NOR flash simulated in two caller-provided buffers: erase sets bytes to the erased value,
/// programming ANDs bits in (for the `0xFF` erased value; ORs for `0x00`), every word may be
/// programmed once between erases, offsets and lengths are checked against `WRITE`, `ERASE`
/// (and a read size of 1).
///
/// A power cut can be scheduled after a number of bytes of programming or erasing: the
/// operation in flight stops there, leaving its current word (or unit) as [`PowerCut`] says,
/// and every operation fails with [`MockError::PowerCut`] until [`power_on`](Self::power_on).
#[derive(Debug)]
pub struct MockFlash<'a, const WRITE: usize, const ERASE: usize> {
    memory: &'a mut [u8],
    programmed: &'a mut [bool],
    erased: u8,
    budget: Option<usize>,
    cut: PowerCut,
    powered: bool,
    ecc: bool,
    second: SecondProgram,
    /// Words (their indices) that read as ECC errors until erased.
    ecc_words: [Option<u32>; MAX_ECC_WORDS],
    /// Operation counts.
    pub stats: MockStats,
}

impl<'a, const WRITE: usize, const ERASE: usize> MockFlash<'a, WRITE, ERASE> {
    /// A flash over `memory`, erased to `erased`; `programmed` (one flag per word, so
    /// `memory.len() / WRITE` of them) tracks which words were programmed.
    ///
    /// # Errors
    /// [`MockError::OutOfBounds`] if the buffers' sizes do not match, or `memory` is not a whole
    /// number of erase units.
    pub fn new(
        memory: &'a mut [u8],
        programmed: &'a mut [bool],
        erased: u8,
    ) -> Result<Self, MockError> {
        if WRITE == 0
            || ERASE == 0
            || !memory.len().is_multiple_of(ERASE)
            || !ERASE.is_multiple_of(WRITE)
            || programmed.len() != memory.len() / WRITE
        {
            return Err(MockError::OutOfBounds);
        }
        memory.fill(erased);
        programmed.fill(false);
        Ok(Self {
            memory,
            programmed,
            erased,
            budget: None,
            cut: PowerCut::Partial,
            powered: true,
            ecc: true,
            second: SecondProgram::Refused,
            ecc_words: [None; MAX_ECC_WORDS],
            stats: MockStats::default(),
        })
    }

    /// Models per-word ECC (the default): a word whose programming began may never be
    /// programmed again before an erase, even if it still reads as erased. Without it, a word
    /// that reads as erased may be programmed (plain NOR cells).
    pub fn set_ecc(&mut self, ecc: bool) {
        self.ecc = ecc;
    }

    /// What a second program of a word does with per-word ECC ([`set_ecc`](Self::set_ecc)):
    /// refused (the default) or accepted, spoiling the word.
    pub fn set_second_program(&mut self, second: SecondProgram) {
        self.second = second;
    }

    /// Schedules a power cut after `bytes` more bytes of programming or erasing.
    pub fn cut_power_after(&mut self, bytes: usize, cut: PowerCut) {
        self.budget = Some(bytes);
        self.cut = cut;
    }

    /// Restores power (after a cut) and cancels any scheduled cut.
    pub fn power_on(&mut self) {
        self.powered = true;
        self.budget = None;
    }

    /// Whether a power cut has happened (and power is still off).
    pub fn is_cut(&self) -> bool {
        !self.powered
    }

    /// The flash's contents.
    pub fn memory(&self) -> &[u8] {
        self.memory
    }

    /// The flash's contents, to damage them as time and wear do (bit flips), outside the
    /// flash's own operations.
    pub fn memory_mut(&mut self) -> &mut [u8] {
        self.memory
    }

    fn check_power(&self) -> Result<(), MockError> {
        if self.powered {
            Ok(())
        } else {
            Err(MockError::PowerCut)
        }
    }

    /// Takes `want` bytes from the budget; returns how many may be done before a cut.
    fn spend(&mut self, want: usize) -> usize {
        match &mut self.budget {
            None => want,
            Some(left) => {
                let done = want.min(*left);
                *left -= done;
                done
            }
        }
    }

    /// The first word of `start..end` that reads as an ECC error.
    fn ecc_word_in(&self, start: usize, end: usize) -> Option<u32> {
        let words = (start / WRITE) as u32..end.div_ceil(WRITE) as u32;
        self.ecc_words
            .iter()
            .flatten()
            .copied()
            .filter(|word| words.contains(word))
            .min()
    }

    /// The word at index `word` reads as an ECC error from now on (if there is room to
    /// remember it).
    fn spoil(&mut self, word: usize) {
        if let Some(slot) = self.ecc_words.iter_mut().find(|slot| slot.is_none()) {
            *slot = Some(word as u32);
        }
    }

    /// The words of `start..end` (whole words) read right again: erased.
    fn clear_ecc(&mut self, start: usize, end: usize) {
        let words = start.div_ceil(WRITE) as u32..(end / WRITE) as u32;
        for slot in &mut self.ecc_words {
            if slot.is_some_and(|word| words.contains(&word)) {
                *slot = None;
            }
        }
    }

    fn program_byte(&mut self, at: usize, value: u8) {
        let erased = self.erased;
        if let Some(byte) = self.memory.get_mut(at) {
            *byte = if erased == 0 {
                *byte | value
            } else {
                *byte & value
            };
        }
    }
}

fn kind_to_mock(kind: NorFlashErrorKind) -> MockError {
    match kind {
        NorFlashErrorKind::NotAligned => MockError::NotAligned,
        _ => MockError::OutOfBounds,
    }
}

impl<const WRITE: usize, const ERASE: usize> ErrorType for MockFlash<'_, WRITE, ERASE> {
    type Error = MockError;
}

impl<const WRITE: usize, const ERASE: usize> ReadNorFlash for MockFlash<'_, WRITE, ERASE> {
    const READ_SIZE: usize = 1;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), MockError> {
        self.check_power()?;
        check_read(self, offset, bytes.len()).map_err(kind_to_mock)?;
        let start = offset as usize;
        if let Some(word) = self.ecc_word_in(start, start + bytes.len()) {
            return Err(MockError::Ecc {
                offset: word * WRITE as u32,
            });
        }
        let src = self
            .memory
            .get(start..start + bytes.len())
            .ok_or(MockError::OutOfBounds)?;
        bytes.copy_from_slice(src);
        self.stats.reads += 1;
        Ok(())
    }

    fn capacity(&self) -> usize {
        self.memory.len()
    }
}

impl<const WRITE: usize, const ERASE: usize> NorFlash for MockFlash<'_, WRITE, ERASE> {
    const WRITE_SIZE: usize = WRITE;
    const ERASE_SIZE: usize = ERASE;

    fn erase(&mut self, from: u32, to: u32) -> Result<(), MockError> {
        self.check_power()?;
        check_erase(self, from, to).map_err(kind_to_mock)?;
        self.stats.erases += 1;
        let (from, to) = (from as usize, to as usize);
        let done = self.spend(to - from);
        let cut = done < to - from;
        let end = match self.cut {
            _ if !cut => to,
            PowerCut::Complete => to,
            PowerCut::Untouched => from,
            PowerCut::Partial | PowerCut::EccError => from + done,
            // Units before the one in flight are erased; that one is scrambled below.
            PowerCut::Arbitrary { .. } => (from + done) / ERASE * ERASE,
        };
        let erased = self.erased;
        if let Some(range) = self.memory.get_mut(from..end) {
            range.fill(erased);
        }
        self.clear_ecc(from, end);
        // A word is programmable again only once all of it is erased.
        for word in from.div_ceil(WRITE)..end / WRITE {
            if let Some(flag) = self.programmed.get_mut(word) {
                *flag = false;
            }
        }
        if cut {
            if let PowerCut::Arbitrary { seed } = self.cut {
                let mut state = seed;
                if let Some(unit) = self.memory.get_mut(end..end + ERASE) {
                    for byte in unit.iter_mut() {
                        *byte = next_random(&mut state) as u8;
                    }
                }
                for word in end / WRITE..(end + ERASE) / WRITE {
                    if let Some(flag) = self.programmed.get_mut(word) {
                        *flag = true;
                    }
                }
            }
            self.powered = false;
            return Err(MockError::PowerCut);
        }
        Ok(())
    }

    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), MockError> {
        self.check_power()?;
        check_write(self, offset, bytes.len()).map_err(kind_to_mock)?;
        let start = offset as usize;
        let mut spoiled = None;
        for word in start / WRITE..(start + bytes.len()) / WRITE {
            let erased = self.erased;
            let blank = self
                .memory
                .get(word * WRITE..(word + 1) * WRITE)
                .is_some_and(|w| w.iter().all(|&b| b == erased));
            if self.programmed.get(word).copied().unwrap_or(false) && (self.ecc || !blank) {
                if self.ecc && self.second == SecondProgram::Spoiled {
                    spoiled = spoiled.or(Some(word));
                    continue;
                }
                return Err(MockError::WrittenTwice {
                    offset: (word * WRITE) as u32,
                });
            }
        }
        if let Some(first) = spoiled {
            // Accepted; every word programmed a second time reads as an ECC error.
            for word in first..(start + bytes.len()) / WRITE {
                if self.programmed.get(word).copied().unwrap_or(false) {
                    self.spoil(word);
                }
            }
        }
        self.stats.writes += 1;
        let done = self.spend(bytes.len());
        for (i, &value) in bytes.iter().enumerate().take(done) {
            self.program_byte(start + i, value);
        }
        if done == bytes.len() {
            self.stats.bytes_written += bytes.len() as u64;
            for word in start / WRITE..(start + bytes.len()) / WRITE {
                if let Some(flag) = self.programmed.get_mut(word) {
                    *flag = true;
                }
            }
            return Ok(());
        }
        // The cut lands in the word holding byte `done`: bytes before it are programmed
        // (`Partial`), none of them (`Untouched`), or the whole word (`Complete`).
        let word_start = (start + done) / WRITE * WRITE;
        let word_end = word_start + WRITE;
        match self.cut {
            PowerCut::Untouched => {
                let erased = self.erased;
                if let Some(word) = self.memory.get_mut(word_start..start + done) {
                    word.fill(erased);
                }
            }
            PowerCut::Partial => {}
            PowerCut::EccError => self.spoil(word_start / WRITE),
            PowerCut::Arbitrary { seed } => {
                // Each bit of the word's untouched bytes: programmed or not.
                let mut state = seed;
                let erased = self.erased;
                for at in start + done..word_end {
                    let random = next_random(&mut state) as u8;
                    if let Some(&value) = bytes.get(at - start) {
                        let value = if erased == 0 {
                            value & random
                        } else {
                            value | random
                        };
                        self.program_byte(at, value);
                    }
                }
            }
            PowerCut::Complete => {
                for at in start + done..word_end {
                    if let Some(&value) = bytes.get(at - start) {
                        self.program_byte(at, value);
                    }
                }
            }
        }
        let flagged_end = if self.cut == PowerCut::Untouched {
            word_start
        } else {
            word_end
        };
        for word in start / WRITE..flagged_end / WRITE {
            if let Some(flag) = self.programmed.get_mut(word) {
                *flag = true;
            }
        }
        self.stats.bytes_written += done as u64;
        self.powered = false;
        Err(MockError::PowerCut)
    }
}

#[cfg(feature = "embedded-storage-async")]
mod asynch {
    //! The same flash behind `embedded-storage-async`'s traits: each operation completes at
    //! once.

    use embedded_storage_async::nor_flash::{NorFlash, ReadNorFlash};

    use super::{MockError, MockFlash};

    impl<const WRITE: usize, const ERASE: usize> ReadNorFlash for MockFlash<'_, WRITE, ERASE> {
        const READ_SIZE: usize = 1;

        async fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), MockError> {
            embedded_storage::nor_flash::ReadNorFlash::read(self, offset, bytes)
        }

        fn capacity(&self) -> usize {
            embedded_storage::nor_flash::ReadNorFlash::capacity(self)
        }
    }

    impl<const WRITE: usize, const ERASE: usize> NorFlash for MockFlash<'_, WRITE, ERASE> {
        const WRITE_SIZE: usize = WRITE;
        const ERASE_SIZE: usize = ERASE;

        async fn erase(&mut self, from: u32, to: u32) -> Result<(), MockError> {
            embedded_storage::nor_flash::NorFlash::erase(self, from, to)
        }

        async fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), MockError> {
            embedded_storage::nor_flash::NorFlash::write(self, offset, bytes)
        }
    }
}
