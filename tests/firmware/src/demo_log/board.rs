//! The simulated NOR flash with a trap in its driver: the power fails at the byte a planned cut
//! names, in a program or an erase, and the trap notes where.

use core::cell::RefCell;

use embedded_storage::nor_flash::{ErrorType, NorFlash, ReadNorFlash};
use logfmt_core::flash::{MockError, MockFlash, PowerCut};
use logfmt_core::parts::ring::{RING_HEADER_SIZE, RingHeader};

use super::{BLOCK_SIZE, ERASE_SIZE, WRITE_SIZE};

/// The simulated flash.
pub type Flash<'m> = MockFlash<'m, WRITE_SIZE, ERASE_SIZE>;

/// A trap in the flash driver: where the power is to fail.
#[derive(Debug, Clone, Copy)]
pub enum Trap {
    /// In the program that covers region offset `at`, just before that byte.
    Program {
        /// The byte.
        at: u32,
    },
    /// In the next erase, after `after` bytes of it.
    Erase {
        /// Bytes erased before the cut.
        after: u32,
    },
}

/// Where a power cut struck: the operation in flight and the byte it stopped at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    /// A program of `from..to`, stopped at `at`.
    Program {
        /// Start of the program.
        from: u32,
        /// Its end.
        to: u32,
        /// The byte it stopped at.
        at: u32,
    },
    /// An erase of `from..to`, stopped at `at`.
    Erase {
        /// Start of the erase.
        from: u32,
        /// Its end.
        to: u32,
        /// The byte it stopped at.
        at: u32,
    },
}

impl Hit {
    /// The byte the operation stopped at.
    pub fn at(&self) -> u32 {
        match *self {
            Self::Program { at, .. } | Self::Erase { at, .. } => at,
        }
    }
}

/// The simulated flash with its trap.
pub struct Board<'m> {
    /// The flash.
    pub flash: Flash<'m>,
    /// The trap set, and what the cut leaves.
    pub trap: Option<(Trap, PowerCut)>,
    /// Where the last trap struck.
    pub hit: Option<Hit>,
}

impl<'m> Board<'m> {
    /// A board with the flash and no trap.
    pub fn new(flash: Flash<'m>) -> Self {
        Self {
            flash,
            trap: None,
            hit: None,
        }
    }

    /// The lap in block `block`'s ring header, if intact.
    pub fn lap_of(&self, block: u64) -> Option<u32> {
        let at = block as usize * BLOCK_SIZE;
        let header = self.flash.memory().get(at..at + RING_HEADER_SIZE)?;
        RingHeader::parse(header).map(|h| h.lap)
    }
}

/// The flash as the log writer and the reader see it (both at once: the reader checks the log
/// while the writer is open), through the trap.
pub struct Shared<'r, 'm>(pub &'r RefCell<Board<'m>>);

impl ErrorType for Shared<'_, '_> {
    type Error = MockError;
}

impl ReadNorFlash for Shared<'_, '_> {
    const READ_SIZE: usize = <Flash<'static> as ReadNorFlash>::READ_SIZE;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), MockError> {
        self.0.borrow_mut().flash.read(offset, bytes)
    }

    fn capacity(&self) -> usize {
        self.0.borrow().flash.capacity()
    }
}

impl NorFlash for Shared<'_, '_> {
    const WRITE_SIZE: usize = WRITE_SIZE;
    const ERASE_SIZE: usize = ERASE_SIZE;

    fn erase(&mut self, from: u32, to: u32) -> Result<(), MockError> {
        let mut board = self.0.borrow_mut();
        if let Some((Trap::Erase { after }, mode)) = board.trap
            && after < to.saturating_sub(from)
        {
            board.trap = None;
            board.hit = Some(Hit::Erase {
                from,
                to,
                at: from + after,
            });
            board.flash.cut_power_after(after as usize, mode);
        }
        board.flash.erase(from, to)
    }

    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), MockError> {
        let mut board = self.0.borrow_mut();
        let to = offset.saturating_add(bytes.len() as u32);
        if let Some((Trap::Program { at }, mode)) = board.trap
            && (offset..to).contains(&at)
        {
            board.trap = None;
            board.hit = Some(Hit::Program {
                from: offset,
                to,
                at,
            });
            board.flash.cut_power_after((at - offset) as usize, mode);
        }
        board.flash.write(offset, bytes)
    }
}
