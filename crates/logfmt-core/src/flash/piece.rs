//! Small reads of the flash, shared by the readers, the reopening walk and the ring finder:
//! aligned to the flash's `READ_SIZE`, and a word whose reads fail (an ECC error) read as
//! unknown bytes.

use embedded_storage::nor_flash::ReadNorFlash as ReadFlashSync;
use embedded_storage::nor_flash::{NorFlashError, NorFlashErrorKind};
#[cfg(feature = "embedded-storage-async")]
use embedded_storage_async::nor_flash::ReadNorFlash as ReadFlashAsync;

use super::config::{FlashConfig, unreadable};

/// Room for a read of up to 32 bytes at `READ_SIZE` alignment (at most 32).
const WINDOW: usize = 32 + 2 * 32;

/// Reads `out.len()` (at most 32) bytes at region offset `at` of region `config`. A read
/// that fails with an error of kind `Other` (an ECC error: a word whose program a power cut
/// interrupted, on parts with per-word ECC) is read again a `READ_SIZE` piece at a time; a
/// piece that still fails holds unknown bytes, taken as written bytes that are no chunk's
/// ([`unreadable`]). Other errors are returned.
#[maybe_async_cfg::maybe(
    idents(ReadFlash, read_aligned(fn)),
    sync(),
    async(feature = "embedded-storage-async")
)]
pub(super) async fn read<R: ReadFlash>(
    flash: &mut R,
    config: &FlashConfig,
    at: u32,
    out: &mut [u8],
) -> Result<(), R::Error> {
    match read_aligned(flash, config.start + at, out).await {
        Err(e) if e.kind() == NorFlashErrorKind::Other => {}
        done => return done,
    }
    let size = R::READ_SIZE.clamp(1, 32) as u32;
    let end = at + out.len() as u32;
    let mut pos = at;
    while pos < end {
        let abs = config.start + pos;
        let piece_end = end.min(pos + size - abs % size);
        let range = (pos - at) as usize..(piece_end - at) as usize;
        let piece = out.get_mut(range).unwrap_or_default();
        match read_aligned(flash, abs, piece).await {
            Err(e) if e.kind() == NorFlashErrorKind::Other => {
                piece.fill(unreadable(config.erased));
            }
            done => done?,
        }
        pos = piece_end;
    }
    Ok(())
}

/// [`read_sync`], kept out of line: one copy of the blocking read path in a firmware's code
/// for every step that reads. (The async one is left to the compiler: out of line, its
/// futures take more stack.)
#[inline(never)]
pub(super) fn read_outlined<R: ReadFlashSync>(
    flash: &mut R,
    config: &FlashConfig,
    at: u32,
    out: &mut [u8],
) -> Result<(), R::Error> {
    read_sync(flash, config, at, out)
}

/// Reads `out.len()` (at most 32) bytes at flash offset `abs`, aligned to the flash's
/// `READ_SIZE`.
#[maybe_async_cfg::maybe(idents(ReadFlash), sync(), async(feature = "embedded-storage-async"))]
pub(super) async fn read_aligned<R: ReadFlash>(
    flash: &mut R,
    abs: u32,
    out: &mut [u8],
) -> Result<(), R::Error> {
    if R::READ_SIZE <= 1 {
        return flash.read(abs, out).await;
    }
    let size = R::READ_SIZE.min(32) as u32;
    let from = abs - abs % size;
    let to = (abs + out.len() as u32).next_multiple_of(size);
    let mut window = [0u8; WINDOW];
    let window = window.get_mut(..(to - from) as usize).unwrap_or_default();
    flash.read(from, window).await?;
    let skip = (abs - from) as usize;
    if let Some(bytes) = window.get(skip..skip + out.len()) {
        out.copy_from_slice(bytes);
    }
    Ok(())
}
