//! A NOR flash driver for the size and stack probes: memory-mapped, like an MCU's internal flash,
//! at a fixed address of QEMU's MPS2 boards where the "flash" is really RAM (so the probes also
//! run). Kept small and opaque to the optimiser (volatile accesses), so that the probes measure
//! the log's code, not the driver's, and nothing is constant-folded away.

use embedded_storage::nor_flash::{
    ErrorType, NorFlash, NorFlashError, NorFlashErrorKind, ReadNorFlash,
};

/// Where the stub flash is mapped: 3 MiB into the MPS2's 4 MiB SSRAM at 0x0, well past the
/// probes' code (the linker script's FLASH region starts at 0x0).
pub const BASE: usize = 0x0030_0000;
/// The stub flash's size: 8 blocks of 32 KiB.
pub const CAPACITY: usize = 256 * 1024;

/// A memory-mapped NOR flash: erased to `0xFF`, programmed in 8-byte words, erased in 4 KiB
/// sectors.
#[derive(Debug, Default)]
pub struct StubFlash;

/// An out-of-bounds or misaligned operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StubError(pub NorFlashErrorKind);

impl NorFlashError for StubError {
    fn kind(&self) -> NorFlashErrorKind {
        self.0
    }
}

impl ErrorType for StubFlash {
    type Error = StubError;
}

fn check(offset: u32, len: usize, align: usize) -> Result<usize, StubError> {
    let start = offset as usize;
    if start.checked_add(len).is_none_or(|end| end > CAPACITY) {
        return Err(StubError(NorFlashErrorKind::OutOfBounds));
    }
    if !start.is_multiple_of(align) || !len.is_multiple_of(align) {
        return Err(StubError(NorFlashErrorKind::NotAligned));
    }
    Ok(BASE + start)
}

impl ReadNorFlash for StubFlash {
    const READ_SIZE: usize = 1;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), StubError> {
        let addr = check(offset, bytes.len(), 1)?;
        for (i, byte) in bytes.iter_mut().enumerate() {
            // SAFETY: `addr + i` is inside the stub flash's range, mapped RAM on MPS2.
            *byte = unsafe { core::ptr::read_volatile((addr + i) as *const u8) };
        }
        Ok(())
    }

    fn capacity(&self) -> usize {
        CAPACITY
    }
}

impl NorFlash for StubFlash {
    const WRITE_SIZE: usize = 8;
    const ERASE_SIZE: usize = 4096;

    fn erase(&mut self, from: u32, to: u32) -> Result<(), StubError> {
        let len = (to as usize)
            .checked_sub(from as usize)
            .ok_or(StubError(NorFlashErrorKind::OutOfBounds))?;
        let addr = check(from, len, Self::ERASE_SIZE)?;
        for i in (0..len).step_by(4) {
            // SAFETY: inside the stub flash's range, word-aligned (erase units are 4 KiB).
            unsafe { core::ptr::write_volatile((addr + i) as *mut u32, u32::MAX) };
        }
        Ok(())
    }

    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), StubError> {
        let addr = check(offset, bytes.len(), Self::WRITE_SIZE)?;
        for (i, &byte) in bytes.iter().enumerate() {
            let p = (addr + i) as *mut u8;
            // SAFETY: inside the stub flash's range. NOR programming only clears bits.
            unsafe { core::ptr::write_volatile(p, core::ptr::read_volatile(p) & byte) };
        }
        Ok(())
    }
}
