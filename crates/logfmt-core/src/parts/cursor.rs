//! A flash log's read cursor, byte by byte: a small chunk of type [`CURSOR_TYPE`] (`0xB2`,
//! ignorable: bit 7 set) that a writer appends to record how far a consumer of the log has
//! delivered its records (`WordWriter::commit` in the flash module, feature
//! `embedded-storage`).
//!
//! ```text
//! 0..4    mask(crc(b2 ‖ payload))
//! 4..6    5 (the payload's length)           6   0xB2
//! 7       id, u8: which cursor (a log may keep up to 256, each committed on its own)
//! 8..12   next, u32: the number of the first record not delivered (wrapping)
//! ```
//!
//! Records are numbered as a ring's headers count them: the first record begun in the log is
//! number 0, and each record (or pack) begun after it is one more, wrapping after
//! `0xFFFF_FFFF`. A cursor whose `next` is `n` says that every record numbered below `n` was
//! delivered. The newest well-formed cursor chunk of an id is that cursor's position; a chunk
//! torn by a power cut is not well-formed, so a commit that a power cut interrupts leaves the
//! cursor where the commit before put it.
//!
//! ```
//! use logfmt_core::parts::cursor::Cursor;
//!
//! let cursor = Cursor::new(1, 585);
//! let chunk = cursor.encode();
//! assert_eq!(chunk, [0xf7, 0x2f, 0xeb, 0x6e, 5, 0, 0xB2, 1, 0x49, 0x02, 0, 0]);
//! assert_eq!(Cursor::parse(&chunk), Some(cursor));
//! assert_eq!(Cursor::from_payload(&chunk[7..]), Some(cursor));
//! ```

use crate::checksum;
use crate::format::{CURSOR_TYPE, HEADER_SIZE};

/// Bytes of a cursor chunk's payload.
pub const CURSOR_PAYLOAD: usize = 5;

/// Bytes of a whole cursor chunk: a 7-byte header and the payload.
pub const CURSOR_CHUNK: usize = HEADER_SIZE + CURSOR_PAYLOAD;

/// A read cursor: which one, and the number of the first record it has not delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Cursor {
    /// Which cursor.
    pub id: u8,
    /// The number of the first record not delivered: every record numbered below it was.
    pub next: u32,
}

impl Cursor {
    /// Cursor `id` at record number `next`.
    #[must_use]
    pub const fn new(id: u8, next: u32) -> Self {
        Self { id, next }
    }

    /// The cursor's payload: its id, then `next` (little-endian).
    #[must_use]
    pub fn payload(&self) -> [u8; CURSOR_PAYLOAD] {
        let [n0, n1, n2, n3] = self.next.to_le_bytes();
        [self.id, n0, n1, n2, n3]
    }

    /// The whole chunk: header (masked CRC-32C of the type and payload, length 5, type
    /// `0xB2`) and payload.
    #[must_use]
    pub fn encode(&self) -> [u8; CURSOR_CHUNK] {
        let payload = self.payload();
        let crc = checksum::mask(checksum::extend(checksum::crc32c(&[CURSOR_TYPE]), &payload));
        let [c0, c1, c2, c3] = crc.to_le_bytes();
        let [p0, p1, p2, p3, p4] = payload;
        [
            c0,
            c1,
            c2,
            c3,
            CURSOR_PAYLOAD as u8,
            0,
            CURSOR_TYPE,
            p0,
            p1,
            p2,
            p3,
            p4,
        ]
    }

    /// The cursor in a well-formed chunk's payload (exactly 5 bytes), if it is one.
    #[must_use]
    pub fn from_payload(payload: &[u8]) -> Option<Self> {
        let &[id, n0, n1, n2, n3] = payload else {
            return None;
        };
        Some(Self::new(id, u32::from_le_bytes([n0, n1, n2, n3])))
    }

    /// The cursor whose chunk starts `bytes`, if it is one: type `0xB2`, length 5, checksum
    /// right.
    #[must_use]
    pub fn parse(bytes: &[u8]) -> Option<Self> {
        let chunk = bytes.get(..CURSOR_CHUNK)?;
        let (header, payload) = chunk.split_at(HEADER_SIZE);
        let &[c0, c1, c2, c3, l0, l1, kind] = header else {
            return None;
        };
        if kind != CURSOR_TYPE || usize::from(u16::from_le_bytes([l0, l1])) != CURSOR_PAYLOAD {
            return None;
        }
        let crc = checksum::mask(checksum::extend(checksum::crc32c(&[kind]), payload));
        if crc != u32::from_le_bytes([c0, c1, c2, c3]) {
            return None;
        }
        Self::from_payload(payload)
    }

    /// Records not delivered when the log has begun `records` records in all (the writer's
    /// count, or a ring header's plus those begun after it): `records - next`, wrapping; 0 if
    /// the cursor is ahead of them.
    ///
    /// ```
    /// use logfmt_core::parts::cursor::Cursor;
    /// assert_eq!(Cursor::new(0, 10).undelivered(15), 5);
    /// assert_eq!(Cursor::new(0, u32::MAX).undelivered(2), 3); // across the wrap
    /// assert_eq!(Cursor::new(0, 10).undelivered(9), 0);
    /// ```
    #[must_use]
    pub const fn undelivered(&self, records: u32) -> u32 {
        let ahead = records.wrapping_sub(self.next) as i32;
        if ahead > 0 { ahead as u32 } else { 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_or_altered_chunk_is_no_cursor() {
        let chunk = Cursor::new(3, 0x0102_0304).encode();
        assert_eq!(Cursor::parse(&chunk), Some(Cursor::new(3, 0x0102_0304)));
        for cut in 0..CURSOR_CHUNK {
            let mut torn = chunk;
            torn[cut..].fill(0xFF);
            assert_eq!(Cursor::parse(&torn), None, "cut at {cut}");
        }
        for byte in 0..CURSOR_CHUNK {
            let mut flipped = chunk;
            flipped[byte] ^= 0x10;
            assert_eq!(Cursor::parse(&flipped), None, "byte {byte} altered");
        }
        assert_eq!(Cursor::parse(&chunk[..CURSOR_CHUNK - 1]), None);
    }
}
