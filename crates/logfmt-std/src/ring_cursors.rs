//! The read cursors of a ring image (a dump of a flash region holding a ring log): each
//! cursor's newest commit, found and read as a device's `CursorReader` finds and reads it.

use embedded_storage::nor_flash::{ErrorType, NorFlashErrorKind, ReadNorFlash};
use logfmt_core::flash::{CursorReader, FlashConfig, FlashItem};
use logfmt_core::parts::cursor::{CURSOR_CHUNK, Cursor};
use logfmt_core::parts::format::{BLOCK_SIZE, CURSOR_TYPE};

use crate::RingImage;

/// A read cursor of a ring image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingCursor {
    /// The cursor's newest commit: its id, and the number of the first record not delivered.
    pub cursor: Cursor,
    /// Records the ring holds that the cursor has not delivered.
    pub undelivered: u64,
    /// Records the cursor had not delivered that aged out of the ring.
    pub aged_out: u32,
}

/// The ring image's bytes as a flash to read (bytes past the image's end read erased).
struct ImageFlash<'a> {
    image: &'a [u8],
    erased: u8,
    len: usize,
}

impl ErrorType for ImageFlash<'_> {
    type Error = NorFlashErrorKind;
}

impl ReadNorFlash for ImageFlash<'_> {
    const READ_SIZE: usize = 1;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), Self::Error> {
        let start = offset as usize;
        if start + bytes.len() > self.len {
            return Err(NorFlashErrorKind::OutOfBounds);
        }
        for (i, byte) in bytes.iter_mut().enumerate() {
            *byte = self.image.get(start + i).copied().unwrap_or(self.erased);
        }
        Ok(())
    }

    fn capacity(&self) -> usize {
        self.len
    }
}

/// The cursors committed in `image`, a ring image holding `ring`, by id: for each id with a
/// well-formed cursor chunk anywhere in the image, the newest commit the ring holds (an id
/// whose chunks all aged out is left out), the records not delivered after it and those that
/// aged out before delivery.
#[must_use]
pub fn ring_cursors(image: &[u8], ring: &RingImage) -> Vec<RingCursor> {
    let mut ids = [false; 256];
    for at in 0..image.len().saturating_sub(CURSOR_CHUNK - 1) {
        if image.get(at + 6) == Some(&CURSOR_TYPE)
            && let Some(cursor) = Cursor::parse(&image[at..])
        {
            ids[usize::from(cursor.id)] = true;
        }
    }
    let len = ring.ring().blocks() as usize * BLOCK_SIZE;
    let config = FlashConfig::new(0, len as u32).ring().erased(ring.erased());
    let mut buffer = vec![0u8; 1 << 16];
    let mut cursors = Vec::new();
    for id in (0..=u8::MAX).filter(|&id| ids[usize::from(id)]) {
        let flash = ImageFlash {
            image,
            erased: ring.erased(),
            len,
        };
        let Ok(mut reader) = CursorReader::open(flash, config, id) else {
            continue;
        };
        let Some(cursor) = reader.start().committed else {
            continue;
        };
        let mut undelivered = 0;
        while let Ok(Some(item)) = reader.next(&mut buffer) {
            if !matches!(item, FlashItem::Damage { .. }) {
                undelivered += 1;
            }
        }
        cursors.push(RingCursor {
            cursor,
            undelivered,
            aged_out: reader.start().aged_out,
        });
    }
    cursors
}

#[cfg(test)]
mod tests {
    use logfmt_core::flash::{MockFlash, WordWriter};

    use super::*;

    #[test]
    fn the_cursors_of_a_ring_image() {
        let mut memory = vec![0xFFu8; 4 * BLOCK_SIZE];
        let mut programmed = vec![false; 4 * BLOCK_SIZE / 8];
        let mut flash = MockFlash::<8, 4096>::new(&mut memory, &mut programmed, 0xFF).unwrap();
        let config = FlashConfig::new(0, 4 * BLOCK_SIZE as u32).ring();
        let mut writer = WordWriter::open(&mut flash, config).unwrap();
        for i in 0..40u32 {
            writer.add_record(&i.to_le_bytes()).unwrap();
        }
        writer.commit(Cursor::new(3, 30)).unwrap();
        writer.commit(Cursor::new(0, 10)).unwrap();
        writer.commit(Cursor::new(3, 35)).unwrap();
        let image = flash.memory().to_vec();
        let ring = RingImage::find(&image).expect("a ring");
        let cursors = ring_cursors(&image, &ring);
        assert_eq!(
            cursors,
            [
                RingCursor {
                    cursor: Cursor::new(0, 10),
                    undelivered: 30,
                    aged_out: 0
                },
                RingCursor {
                    cursor: Cursor::new(3, 35),
                    undelivered: 5,
                    aged_out: 0
                },
            ]
        );
    }
}
