//! A reference reader of flash log images, for tests: the read rules of the flash log written
//! out plainly, independent of the library's decoder. `no_std` and allocation-free, and it uses
//! nothing of the crate (the checksum comes in as a function), so the on-target tests can
//! include this very file.
//!
//! The rules (`W` the flash word, `e` the erased value; positions are image offsets):
//! - LevelDB's: 32 KiB blocks; a chunk never starts in a block's last 6 bytes (the trailer,
//!   skipped whatever it holds); `FULL`, or `FIRST` `MIDDLE`* `LAST`, make a record; a chunk is
//!   *well-formed* if its length fits in the block and its masked CRC-32C (over the type byte
//!   and the payload) matches, and its type is not 0.
//! - R1 (padding): where no well-formed chunk starts at `p`, `p` holds `e`, and the bytes from
//!   `p` up to a word boundary `n` are all `e` with a well-formed chunk at `n`, they are
//!   skipped silently. Only `e` from `p` to the block's end: nothing more written in the block.
//! - R2 (torn write): otherwise the bytes from `p` on are not a chunk. The first word boundary
//!   `q > p` in the block where a well-formed chunk starts: if that chunk is a resume marker
//!   (type `0xB1`, empty payload), the bytes `p..q` and the record in progress were cut off by
//!   a power cut: dropped silently. Any other chunk: damage, reported; reading goes on at `q`.
//! - Two more, needed by what power cuts leave (see [`walk`]): with no well-formed chunk after
//!   `p` in its block, the decision waits for the next chunk met (in a later block): a marker
//!   makes it silent. And a marker always ends the record in progress silently (a power cut
//!   during the erase of the next block leaves a `FIRST` chunk whose record never continues).

// Public for the crates that include this file; private in the library's tests.
#![allow(unreachable_pub, dead_code)]

/// Block size of the format.
const BLOCK: usize = 32 * 1024;
/// Chunk header size.
const HEADER: usize = 7;
/// The resume marker's type.
const MARKER: u8 = 0xB1;

/// What the reader met.
#[derive(Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// A whole record, its first chunk at `offset`.
    Record {
        /// Image offset of its first chunk.
        offset: usize,
        /// Its bytes.
        data: &'a [u8],
    },
    /// Bytes at `offset` that are not a chunk, or a record's chunks out of order: reported.
    Damage {
        /// Where.
        offset: usize,
    },
    /// Bytes (and the record in progress) cut off by a power cut, dropped silently.
    Torn {
        /// Where.
        offset: usize,
    },
    /// The image ends in bytes that are not a chunk, or in the middle of a record.
    TornTail {
        /// Where.
        offset: usize,
    },
    /// A record longer than the scratch buffer.
    Oversized {
        /// Where.
        offset: usize,
    },
}

/// A chunk's masked CRC-32C, over its type byte and payload.
pub type ChunkCrc = fn(u8, &[u8]) -> u32;

/// Reads `image` by the rules above, calling `visit` with each event; `scratch` assembles
/// fragmented records.
pub fn walk(
    image: &[u8],
    erased: u8,
    word: usize,
    crc: ChunkCrc,
    scratch: &mut [u8],
    mut visit: impl FnMut(Event<'_>),
) {
    // The record in progress: its first offset and bytes so far (`None` if too long).
    let mut record: Option<(usize, Option<usize>)> = None;
    // Bytes that are not a chunk, with no chunk after them in their block yet.
    let mut pending: Option<usize> = None;
    let mut base = 0;
    while base < image.len() {
        let block = &image[base..(base + BLOCK).min(image.len())];
        let mut p = 0;
        while block.len() - p >= HEADER {
            if let Some((kind, payload)) = chunk(block, p, crc) {
                let at = base + p;
                if let Some(torn) = pending.take() {
                    if kind == MARKER {
                        visit(Event::Torn { offset: torn });
                    } else {
                        visit(Event::Damage { offset: torn });
                    }
                }
                match kind {
                    1 | 2 => {
                        if let Some((start, _)) = record.take() {
                            visit(Event::Damage { offset: start });
                        }
                        if kind == 1 {
                            visit(Event::Record {
                                offset: at,
                                data: payload,
                            });
                        } else {
                            record = Some((at, append(scratch, 0, payload)));
                        }
                    }
                    3 | 4 => match record.take() {
                        None => visit(Event::Damage { offset: at }),
                        Some((start, None)) if kind == 4 => {
                            visit(Event::Oversized { offset: start });
                        }
                        Some((start, None)) => record = Some((start, None)),
                        Some((start, Some(len))) => {
                            let len = append(scratch, len, payload);
                            match (kind, len) {
                                (4, Some(len)) => visit(Event::Record {
                                    offset: start,
                                    data: &scratch[..len],
                                }),
                                (4, None) => visit(Event::Oversized { offset: start }),
                                _ => record = Some((start, len)),
                            }
                        }
                    },
                    // The marker: a power cut ended the record in progress.
                    MARKER => {
                        if let Some((start, _)) = record.take() {
                            visit(Event::Torn { offset: start });
                        }
                    }
                    kind if kind & 0x80 != 0 => {}
                    _ => visit(Event::Damage { offset: at }),
                }
                p += HEADER + payload.len();
                continue;
            }
            let rest = &block[p..];
            let Some(first) = rest.iter().position(|&b| b != erased) else {
                break; // nothing more written in the block
            };
            // R1: erased bytes up to a word boundary where a chunk starts.
            let boundaries = ((base + p + 1).next_multiple_of(word) - base..).step_by(word);
            if rest[0] == erased {
                let padding = boundaries
                    .clone()
                    .take_while(|&n| n <= p + first)
                    .find(|&n| chunk(block, n, crc).is_some());
                if let Some(n) = padding {
                    p = n;
                    continue;
                }
            }
            // R2: the first word boundary after `p` where a chunk starts. The record in
            // progress ends here, torn or damaged with the bytes.
            let next = boundaries
                .take_while(|&q| q + HEADER <= block.len())
                .find(|&q| chunk(block, q, crc).is_some());
            record = None;
            match next {
                Some(q) => {
                    let marker = chunk(block, q, crc).is_some_and(|(kind, _)| kind == MARKER);
                    if marker {
                        visit(Event::Torn { offset: base + p });
                    } else {
                        visit(Event::Damage { offset: base + p });
                    }
                    p = q;
                }
                None => {
                    pending = Some(base + p);
                    break;
                }
            }
        }
        base += BLOCK;
    }
    if let Some(offset) = pending.or(record.map(|(start, _)| start)) {
        visit(Event::TornTail { offset });
    }
}

/// The well-formed chunk at `at` of `block`: its type and payload.
fn chunk(block: &[u8], at: usize, crc: ChunkCrc) -> Option<(u8, &[u8])> {
    let header = block.get(at..at + HEADER)?;
    let len = usize::from(u16::from_le_bytes([header[4], header[5]]));
    let kind = header[6];
    let payload = block.get(at + HEADER..at + HEADER + len)?;
    let stored = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
    (kind != 0 && crc(kind, payload) == stored).then_some((kind, payload))
}

/// Appends `payload` to the `len` bytes of `scratch`; `None` if it does not fit.
fn append(scratch: &mut [u8], len: usize, payload: &[u8]) -> Option<usize> {
    let end = len + payload.len();
    scratch.get_mut(len..end)?.copy_from_slice(payload);
    Some(end)
}
