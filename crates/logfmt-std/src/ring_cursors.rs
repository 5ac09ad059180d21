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
    /// Records the cursor names past the newest record the ring holds: 0, unless it was
    /// committed past the log's end (it then waits for records yet to come).
    pub ahead: u32,
}

/// Where a ring image's bytes are read from: `read` fills `into` with the bytes at `offset`
/// and says how many there were (fewer at the image's end).
trait ImageBytes {
    /// Fills `into` from `offset`; the bytes read (0 past the end).
    fn read(&mut self, offset: u64, into: &mut [u8]) -> std::io::Result<usize>;
}

impl ImageBytes for &[u8] {
    fn read(&mut self, offset: u64, into: &mut [u8]) -> std::io::Result<usize> {
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.len());
        let here = &self[start..];
        let n = here.len().min(into.len());
        into[..n].copy_from_slice(&here[..n]);
        Ok(n)
    }
}

impl ImageBytes for &std::fs::File {
    /// Positioned reads: the file's own offset does not move.
    fn read(&mut self, offset: u64, into: &mut [u8]) -> std::io::Result<usize> {
        let mut filled = 0;
        while filled < into.len() {
            match crate::split::read_at(self, &mut into[filled..], offset + filled as u64) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(filled)
    }
}

/// A ring image's bytes as a flash to read (bytes past the image's end read erased).
struct ImageFlash<B> {
    image: B,
    erased: u8,
    len: usize,
}

impl<B> ErrorType for ImageFlash<B> {
    type Error = NorFlashErrorKind;
}

impl<B: ImageBytes> ReadNorFlash for ImageFlash<B> {
    const READ_SIZE: usize = 1;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), Self::Error> {
        let start = offset as usize;
        if start + bytes.len() > self.len {
            return Err(NorFlashErrorKind::OutOfBounds);
        }
        let n = self
            .image
            .read(u64::from(offset), bytes)
            .map_err(|_| NorFlashErrorKind::Other)?;
        bytes[n..].fill(self.erased);
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
    // Reading memory cannot fail.
    cursors_in(image, ring).unwrap_or_default()
}

/// The cursors committed in the ring image `file` holding `ring`, as [`ring_cursors`] finds
/// them, read a block at a time with positioned reads (the file's own offset does not move):
/// the memory used does not grow with the image's size.
///
/// # Errors
/// Reading the file failed.
pub fn ring_cursors_in_file(
    file: &std::fs::File,
    ring: &RingImage,
) -> std::io::Result<Vec<RingCursor>> {
    cursors_in(file, ring)
}

/// The cursors of the ring image `image` holding `ring`.
fn cursors_in<B: ImageBytes + Copy>(
    image: B,
    ring: &RingImage,
) -> std::io::Result<Vec<RingCursor>> {
    let ids = cursor_ids(image)?;
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
        let end = reader.next_record();
        let ahead = cursor.next.wrapping_sub(end);
        cursors.push(RingCursor {
            cursor,
            undelivered,
            aged_out: reader.start().aged_out,
            // (Serial-number arithmetic: a cursor behind the end is not ahead of it.)
            ahead: if (ahead as i32) > 0 { ahead } else { 0 },
        });
    }
    Ok(cursors)
}

/// The ids of the well-formed cursor chunks anywhere in `image`, at any offset: read a block
/// at a time, each with the bytes of a cursor chunk that would begin in it.
fn cursor_ids<B: ImageBytes + Copy>(mut image: B) -> std::io::Result<[bool; 256]> {
    let mut ids = [false; 256];
    let mut window = vec![0u8; BLOCK_SIZE + CURSOR_CHUNK - 1];
    let mut start = 0u64;
    loop {
        let n = image.read(start, &mut window)?;
        let window = &window[..n];
        let starts = n.saturating_sub(CURSOR_CHUNK - 1).min(BLOCK_SIZE);
        for at in 0..starts {
            if window.get(at + 6) == Some(&CURSOR_TYPE)
                && let Some(cursor) = Cursor::parse(&window[at..])
            {
                ids[usize::from(cursor.id)] = true;
            }
        }
        if n < BLOCK_SIZE + CURSOR_CHUNK - 1 {
            return Ok(ids);
        }
        start += BLOCK_SIZE as u64;
    }
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
        let mut file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut file, &image).unwrap();
        assert_eq!(ring_cursors_in_file(&file, &ring).unwrap(), cursors);
        // An image cut short reads erased past its end, from memory and from a file alike.
        let cut = &image[..image.len() - BLOCK_SIZE / 2];
        file.set_len(cut.len() as u64).unwrap();
        assert_eq!(
            ring_cursors_in_file(&file, &ring).unwrap(),
            ring_cursors(cut, &ring)
        );
        assert_eq!(
            cursors,
            [
                RingCursor {
                    cursor: Cursor::new(0, 10),
                    undelivered: 30,
                    aged_out: 0,
                    ahead: 0,
                },
                RingCursor {
                    cursor: Cursor::new(3, 35),
                    undelivered: 5,
                    aged_out: 0,
                    ahead: 0,
                },
            ]
        );
    }

    #[test]
    fn a_cursor_past_the_newest_record_says_how_far() {
        let mut memory = vec![0xFFu8; 4 * BLOCK_SIZE];
        let mut programmed = vec![false; 4 * BLOCK_SIZE / 8];
        let mut flash = MockFlash::<8, 4096>::new(&mut memory, &mut programmed, 0xFF).unwrap();
        let config = FlashConfig::new(0, 4 * BLOCK_SIZE as u32).ring();
        let mut writer = WordWriter::open(&mut flash, config).unwrap();
        let mut last = 0;
        for i in 0..40u32 {
            last = writer.add_record(&[i as u8; 20]).unwrap().offset;
        }
        writer.commit(Cursor::new(7, 40)).unwrap();
        let mut image = flash.memory().to_vec();
        let ring = RingImage::find(&image).expect("a ring");
        assert_eq!(
            ring_cursors(&image, &ring)[0].ahead,
            0,
            "at the end: not past it"
        );
        // The last two records damaged: the ring's newest record is number 37, the cursor
        // names record 40.
        let at = last as usize - 27 + 10;
        image[at] ^= 1;
        image[last as usize + 10] ^= 1;
        let cursors = ring_cursors(&image, &ring);
        assert_eq!(
            (cursors[0].undelivered, cursors[0].ahead),
            (0, 2),
            "{cursors:?}"
        );
    }
}
