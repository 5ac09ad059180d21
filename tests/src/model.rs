//! An independent reference model of the LevelDB log format.
//!
//! Written from the format's rules (LevelDB's `doc/log_format.md`), not translated from
//! `logfmt-core` nor from LevelDB's code: it plans each record as "FULL if it fits, else FIRST / MIDDLE* / LAST", keeps its own
//! table-driven CRC-32C, and favours obviousness over speed. Its reader understands only
//! undamaged logs (and prefixes of them, which end in a torn write); it panics on anything else.

use std::ops::Range;

/// Size of a block.
pub const BLOCK: u64 = 32 * 1024;
/// Size of a chunk header: masked CRC (4), length (2), type (1).
pub const HEADER: u64 = 7;
/// Largest payload of one chunk.
pub const MAX_PAYLOAD: u64 = BLOCK - HEADER;

/// Chunk type: a whole record.
pub const FULL: u8 = 1;
/// Chunk type: the first fragment of a record.
pub const FIRST: u8 = 2;
/// Chunk type: an interior fragment.
pub const MIDDLE: u8 = 3;
/// Chunk type: the last fragment.
pub const LAST: u8 = 4;

/// The CRC-32C (Castagnoli) lookup table, reflected polynomial 0x82F63B78.
const TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut n = 0;
    while n < 256 {
        let mut c = n as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 == 1 {
                (c >> 1) ^ 0x82F6_3B78
            } else {
                c >> 1
            };
            k += 1;
        }
        table[n] = c;
        n += 1;
    }
    table
};

/// CRC-32C of `data`: initial value and final xor 0xFFFFFFFF.
#[must_use]
pub fn crc32c(data: &[u8]) -> u32 {
    !data.iter().fold(!0u32, |c, &b| {
        TABLE[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8)
    })
}

/// LevelDB's checksum mask: rotate right by 15, add 0xa282ead8.
#[must_use]
#[expect(
    clippy::manual_rotate,
    reason = "spelled as util/crc32c.h documents it"
)]
pub fn mask(crc: u32) -> u32 {
    ((crc >> 15) | (crc << 17)).wrapping_add(0xa282_ead8)
}

/// The bytes of one chunk: `LE32(mask(crc32c(type ‖ payload))) ‖ LE16(len) ‖ type ‖ payload`.
///
/// # Panics
/// If the payload is longer than a chunk can carry.
#[must_use]
pub fn chunk(kind: u8, payload: &[u8]) -> Vec<u8> {
    let len = u16::try_from(payload.len()).expect("payload fits a u16 length");
    let mut covered = vec![kind];
    covered.extend_from_slice(payload);
    let mut out = mask(crc32c(&covered)).to_le_bytes().to_vec();
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&covered);
    out
}

/// The model writer's state: the bytes appended so far, and the log length they end at.
struct Log {
    bytes: Vec<u8>,
    end: u64,
}

impl Log {
    /// Bytes left in the current block.
    fn room(&self) -> u64 {
        BLOCK - self.end % BLOCK
    }

    fn put(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
        self.end += bytes.len() as u64;
    }

    /// Appends one record by the layout rules; returns the span of its chunks.
    fn append(&mut self, record: &[u8]) -> Range<u64> {
        // A header never starts in the last HEADER-1 bytes of a block: they become zeros.
        if self.room() < HEADER {
            let pad = vec![0u8; self.room() as usize];
            self.put(&pad);
        }
        let start = self.end;
        let capacity = (self.room() - HEADER) as usize;
        if record.len() <= capacity {
            // It fits: one FULL chunk (an empty record too).
            self.put(&chunk(FULL, record));
        } else {
            // A FIRST chunk fills the block (empty if exactly a header's worth is left), each
            // further block is filled by a MIDDLE, and the LAST chunk carries what remains.
            let (first, mut rest) = record.split_at(capacity);
            self.put(&chunk(FIRST, first));
            while rest.len() as u64 > MAX_PAYLOAD {
                assert_eq!(self.end % BLOCK, 0, "FIRST/MIDDLE fill their block");
                let (middle, tail) = rest.split_at(MAX_PAYLOAD as usize);
                self.put(&chunk(MIDDLE, middle));
                rest = tail;
            }
            self.put(&chunk(LAST, rest));
        }
        start..self.end
    }
}

/// The bytes a writer appends to a log of length `start` for `records`, and the span
/// (first chunk's offset .. end of last chunk) of each record.
#[must_use]
pub fn write_spans(records: &[Vec<u8>], start: u64) -> (Vec<u8>, Vec<Range<u64>>) {
    let mut log = Log {
        bytes: Vec::new(),
        end: start,
    };
    let spans = records.iter().map(|r| log.append(r)).collect();
    (log.bytes, spans)
}

/// The bytes a writer appends to a log of length `start` for `records` (for `start == 0`, the
/// whole log). Nothing is padded after the last record.
#[must_use]
pub fn write(records: &[Vec<u8>], start: u64) -> Vec<u8> {
    write_spans(records, start).0
}

/// One piece of an undamaged log, as [`layout`] finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    /// A chunk with a valid checksum.
    Chunk {
        /// File offset of its header.
        offset: u64,
        /// Its type byte.
        kind: u8,
        /// Its payload length.
        len: u64,
    },
    /// The zero bytes at the end of a complete block that are too few for a header.
    Trailer {
        /// File offset of the first trailer byte.
        offset: u64,
        /// Its length, 1..=6.
        len: u64,
    },
}

/// Splits an undamaged log into chunks and trailers, stopping at a torn write (a header or
/// payload cut short by the end of the data).
///
/// # Panics
/// On damage: a chunk crossing a block, a zero header, a checksum mismatch, an unknown type,
/// non-zero trailer bytes.
#[must_use]
pub fn layout(log: &[u8]) -> Vec<Piece> {
    layout_at(log, 0)
}

/// [`layout`] for the part of a log from file offset `start` on (`bytes` holds the log's bytes
/// from there), as a writer continuing a log at `start` produces it. Offsets are file offsets.
///
/// # Panics
/// As [`layout`].
#[must_use]
pub fn layout_at(bytes: &[u8], start: u64) -> Vec<Piece> {
    let at = |offset: u64| (offset - start) as usize;
    let mut pieces = Vec::new();
    let mut pos = start;
    let len = start + bytes.len() as u64;
    while pos < len {
        let block_end = (pos / BLOCK + 1) * BLOCK;
        let data_end = block_end.min(len);
        let left = data_end - pos;
        if left < HEADER {
            if data_end < block_end {
                break; // a header cut short by the end of the data
            }
            let trailer = &bytes[at(pos)..at(data_end)];
            assert!(trailer.iter().all(|&b| b == 0), "non-zero trailer at {pos}");
            pieces.push(Piece::Trailer {
                offset: pos,
                len: left,
            });
            pos = data_end;
            continue;
        }
        let p = at(pos);
        let stored = u32::from_le_bytes(bytes[p..p + 4].try_into().expect("4 bytes"));
        let payload_len = u64::from(u16::from_le_bytes([bytes[p + 4], bytes[p + 5]]));
        let kind = bytes[p + 6];
        let chunk_end = pos + HEADER + payload_len;
        if chunk_end > len {
            break; // a payload cut short by the end of the data
        }
        assert!(chunk_end <= block_end, "chunk at {pos} crosses a block");
        assert!((FULL..=LAST).contains(&kind), "type {kind} at {pos}");
        let covered = &bytes[p + 6..at(chunk_end)];
        assert_eq!(
            mask(crc32c(covered)),
            stored,
            "checksum of the chunk at {pos}"
        );
        pieces.push(Piece::Chunk {
            offset: pos,
            kind,
            len: payload_len,
        });
        pos = chunk_end;
    }
    pieces
}

/// The records of an undamaged log (or of a prefix of one: an incomplete last record is not
/// returned), with their spans.
///
/// # Panics
/// On damage (see [`layout`]) and on fragments out of order.
#[must_use]
pub fn read_spans(log: &[u8]) -> Vec<(Range<u64>, Vec<u8>)> {
    let mut records = Vec::new();
    let mut partial: Option<(u64, Vec<u8>)> = None;
    for piece in layout(log) {
        let Piece::Chunk { offset, kind, len } = piece else {
            continue;
        };
        let payload = &log[(offset + HEADER) as usize..(offset + HEADER + len) as usize];
        let end = offset + HEADER + len;
        match kind {
            FULL => {
                assert!(partial.is_none(), "FULL at {offset} inside a record");
                records.push((offset..end, payload.to_vec()));
            }
            FIRST => {
                assert!(partial.is_none(), "FIRST at {offset} inside a record");
                partial = Some((offset, payload.to_vec()));
            }
            MIDDLE => {
                let (_, data) = partial.as_mut().expect("MIDDLE without FIRST");
                data.extend_from_slice(payload);
            }
            _ => {
                let (start, mut data) = partial.take().expect("LAST without FIRST");
                data.extend_from_slice(payload);
                records.push((start..end, data));
            }
        }
    }
    records
}

/// The records of an undamaged log (or of a prefix of one).
///
/// # Panics
/// As [`read_spans`].
#[must_use]
pub fn read(log: &[u8]) -> Vec<Vec<u8>> {
    read_spans(log).into_iter().map(|(_, data)| data).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_check_value_and_mask() {
        assert_eq!(crc32c(b"123456789"), 0xe306_9283);
        assert_eq!(crc32c(&[0u8; 32]), 0x8a91_36aa);
        assert_eq!(mask(0), 0xa282_ead8);
        assert_eq!(mask(0xe306_9283), 0xc78a_b0e5);
    }

    #[test]
    fn golden_chunks() {
        assert_eq!(
            chunk(FULL, b"foo"),
            [0xdd, 0x5f, 0xb3, 0x7a, 3, 0, 1, b'f', b'o', b'o']
        );
        assert_eq!(chunk(FULL, b""), [0x05, 0x2b, 0x28, 0x43, 0, 0, 1]);
    }

    #[test]
    fn example_layout() {
        let records = vec![vec![b'a'; 1000], vec![b'b'; 97270], vec![b'c'; 8000]];
        let (log, spans) = write_spans(&records, 0);
        assert_eq!(log.len(), 106_311);
        assert_eq!(spans, [0..1007, 1007..98298, 98304..106_311]);
        assert_eq!(read(&log), records);
    }
}
