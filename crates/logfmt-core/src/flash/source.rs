//! Reading a flash log: blocks read from the region into a caller's buffer.

use core::borrow::BorrowMut;

use embedded_storage::nor_flash::ReadNorFlash;

use super::FlashConfig;
use crate::format::BLOCK_SIZE;
use crate::source::BlockSource;

/// A [`BlockSource`] over a flash region: read it with a [`Reader`](crate::Reader) or
/// [`FragmentReader`](crate::FragmentReader) and
/// [`ReadOptions::erased`](crate::ReadOptions::erased) set to the region's erased value.
#[derive(Debug)]
pub struct FlashSource<F, B> {
    flash: F,
    config: FlashConfig,
    buffer: B,
    next: u32,
    len: usize,
}

impl<F: ReadNorFlash, B: BorrowMut<[u8; BLOCK_SIZE]>> FlashSource<F, B> {
    /// A source over the region `config` of `flash`, reading blocks into `buffer`.
    pub fn new(flash: F, config: FlashConfig, buffer: B) -> Self {
        Self {
            flash,
            config,
            buffer,
            next: 0,
            len: 0,
        }
    }

    /// Gives back the flash and the buffer.
    pub fn into_inner(self) -> (F, B) {
        (self.flash, self.buffer)
    }
}

impl<F: ReadNorFlash, B: BorrowMut<[u8; BLOCK_SIZE]>> BlockSource for FlashSource<F, B> {
    type Error = F::Error;

    fn load_next(&mut self) -> Result<(), F::Error> {
        self.len = 0;
        if self.next >= self.config.len {
            return Ok(());
        }
        let buffer: &mut [u8; BLOCK_SIZE] = self.buffer.borrow_mut();
        self.flash.read(self.config.start + self.next, buffer)?;
        self.next += BLOCK_SIZE as u32;
        self.len = BLOCK_SIZE;
        Ok(())
    }

    fn block(&self) -> &[u8] {
        self.buffer.borrow().get(..self.len).unwrap_or_default()
    }

    fn skip(&mut self, bytes: u64) -> Result<(), F::Error> {
        let bytes = u32::try_from(bytes).unwrap_or(u32::MAX);
        self.next = self.next.saturating_add(bytes).min(self.config.len);
        Ok(())
    }
}
