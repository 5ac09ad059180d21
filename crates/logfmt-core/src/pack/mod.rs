//! Packs: many small records in one logical record — logfmt's fix for the first downside the
//! format's description names ("no packing of tiny records").
//!
//! A pack is a logical record of the pack types, cut into chunks exactly as types 1–4 cut a
//! record: `PACK_FULL` (`0x51`), `PACK_FIRST` (`0x52`), `PACK_MIDDLE` (`0x53`), `PACK_LAST`
//! (`0x54`), each with the 7-byte legacy header and the usual masked CRC-32C over type and
//! payload. Its payload, once reassembled:
//!
//! ```text
//! offset  bytes  field
//! 0       1      codec: 0 = stored (the body as it is); 1 = zstd (the body compressed, logfmt-std)
//! 1       4      count: the records in the pack, u32 little-endian, at least 1
//! 5       4      the body's length once decoded, u32 little-endian (codecs other than 0 only)
//! 5 or 9  ...    body: for each record, its length (LEB128 varint, at most 5 bytes), then its bytes
//! ```
//!
//! A 16-byte record costs 17 bytes in a pack (its length and its bytes), against 23 as a `FULL`
//! chunk; the pack's own 12 bytes (header, codec, count) are shared by all its records.
//!
//! A record in a pack is known by the pack's offset (that of its first chunk) and its index
//! in the pack, from 0.
//!
//! **Old readers.** The pack types have bit 7 clear on purpose. LevelDB's reader and RocksDB's
//! report a chunk of a type they do not know ("unknown record type") with its bytes, and keep
//! framing the log: the plain records around a pack read as before, and a pack is never
//! mistaken for a record. A type with bit 7 set would have made RocksDB drop the pack's records
//! without a word. Packs are written in legacy logs only: their header carries no log number, so
//! in a recycled file a stale pack could not be told from a new one (readers report a pack chunk
//! in a recyclable log as a legacy type there).
//!
//! ```
//! use logfmt_core::pack::{Pack, PackBuffer};
//!
//! let mut buffer = PackBuffer::<64>::new();
//! buffer.push(b"t=21.5")?;
//! buffer.push(b"t=21.6")?;
//! let pack = Pack::parse(buffer.as_bytes())?;
//! assert_eq!(pack.count(), 2);
//! let records: Vec<_> = pack.records().collect::<Result<_, _>>()?;
//! assert_eq!(records, [(0, &b"t=21.5"[..]), (1, &b"t=21.6"[..])]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Writing packs: [`PackWriter`] packs the records given to a [`Writer`](crate::Writer), and
//! [`PackLimit`] and [`take`] say when a pack ends. A pack ends when the next record would take
//! it past its byte or record limit, and at every flush: packing never delays a record's
//! durability. A record too large for any pack is written as a plain record (after the pack in
//! progress, so that records keep their order), and so is a pack of one record (6 bytes
//! smaller, and readable by LevelDB).

use core::fmt;
use core::ops::Range;

use crate::error::{Corruption, CorruptionKind};
// Defined with the other read errors (error.rs), which need it.
pub use crate::error::PackError;

mod writer;

pub use writer::{PackLimit, PackWriter, Take, take};

/// The codec byte of a pack whose body is stored as it is.
pub const STORED: u8 = 0;
/// The codec byte of a pack whose body is compressed with zstd (one frame).
pub const ZSTD: u8 = 1;

/// Bytes of a stored pack's header: codec and count.
pub const STORED_HEADER: usize = 5;
/// Bytes of a compressed pack's header: codec, count and decoded length.
pub const CODED_HEADER: usize = 9;
/// The most bytes a record's length takes in a pack.
pub const MAX_LENGTH_BYTES: usize = 5;

/// The record count in the header at the start of a pack's payload (or of its first chunk),
/// if it is there and not 0: what a reader reports as lost when the rest of the pack is not
/// readable.
///
/// ```
/// use logfmt_core::pack::declared_count;
///
/// assert_eq!(declared_count(&[0, 3, 0, 0, 0, b'x']), Some(3));
/// assert_eq!(declared_count(&[0, 3, 0]), None); // cut before its count
/// ```
#[must_use]
pub fn declared_count(payload: &[u8]) -> Option<u32> {
    let count = u32::from_le_bytes(*payload.get(1..STORED_HEADER)?.first_chunk::<4>()?);
    (count > 0).then_some(count)
}

/// A pack's payload, its header parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pack<'a> {
    codec: u8,
    count: u32,
    decoded_len: Option<u32>,
    body: &'a [u8],
}

impl<'a> Pack<'a> {
    /// Parses a pack record's payload: its header (the body is checked as its records are
    /// read).
    ///
    /// # Errors
    /// [`PackError::Truncated`] if the payload is shorter than its header, [`PackError::Empty`]
    /// if its count is 0.
    pub fn parse(payload: &'a [u8]) -> Result<Self, PackError> {
        let field = |at: usize| -> Option<u32> {
            let bytes = payload.get(at..at + 4)?;
            Some(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
        };
        let (&codec, _) = payload.split_first().ok_or(PackError::Truncated)?;
        let count = field(1).ok_or(PackError::Truncated)?;
        let (decoded_len, header) = if codec == STORED {
            (None, STORED_HEADER)
        } else {
            (Some(field(5).ok_or(PackError::Truncated)?), CODED_HEADER)
        };
        if count == 0 {
            return Err(PackError::Empty);
        }
        Ok(Self {
            codec,
            count,
            decoded_len,
            body: payload.get(header..).unwrap_or_default(),
        })
    }

    /// The codec byte: [`STORED`], [`ZSTD`], or another a reader may not know.
    #[must_use]
    pub const fn codec(&self) -> u8 {
        self.codec
    }

    /// The records the pack holds.
    #[must_use]
    pub const fn count(&self) -> u32 {
        self.count
    }

    /// A compressed pack's body length once decoded (`None` for a stored pack): a bound for the
    /// decoder's output.
    #[must_use]
    pub const fn decoded_len(&self) -> Option<u32> {
        self.decoded_len
    }

    /// The body: the records of a stored pack, or the compressed bytes.
    #[must_use]
    pub const fn body(&self) -> &'a [u8] {
        self.body
    }

    /// The records of a stored pack, each with its index. (For a compressed one, decode the
    /// body and read it with [`records_in`].)
    #[must_use]
    pub fn records(&self) -> Records<'a> {
        records_in(self.body, self.count)
    }
}

/// The records of a pack's decoded `body` that holds `count` of them.
#[must_use]
pub fn records_in(body: &[u8], count: u32) -> Records<'_> {
    records_from(body, count, 0)
}

/// The records of what is left of a pack's body, from record `index` on.
pub(crate) fn records_from(body: &[u8], count: u32, index: u32) -> Records<'_> {
    Records {
        body,
        count,
        index: index.min(count),
        failed: false,
    }
}

/// The records of a stored (or decoded) pack being returned one at a time by a reader that
/// keeps the pack's body where it can (in its block, in its buffer...): `P` names that place,
/// and each call gets the place's bytes, so that the reader lends its records from there. The
/// one walk of a pack's records for every reader.
///
/// ```
/// use logfmt_core::pack::{PackBuffer, Pack, Unpacker};
///
/// let mut buffer = PackBuffer::<64>::new();
/// buffer.push(b"a")?;
/// buffer.push(b"bc")?;
/// let bytes = buffer.as_bytes();
/// let pack = Pack::parse(bytes)?;
/// let body = bytes.len() - pack.body().len()..bytes.len();
/// let mut records = Unpacker::new(0, 64, (), body, pack.count());
/// assert_eq!(records.next(bytes), Some(Ok((0, 6..7))));
/// assert_eq!(records.next(bytes), Some(Ok((1, 8..10))));
/// assert_eq!(records.next(bytes), None);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Unpacker<P> {
    offset: u64,
    end: u64,
    place: P,
    /// What is left of the body, in the place's bytes.
    body: Range<usize>,
    count: u32,
    /// The index of the next record.
    index: u32,
}

impl<P: Copy> Unpacker<P> {
    /// The records of the pack at file offset `offset` (ending at `end`), whose `count` records
    /// are at `body` of `place`.
    #[must_use]
    pub const fn new(offset: u64, end: u64, place: P, body: Range<usize>, count: u32) -> Self {
        Self {
            offset,
            end,
            place,
            body,
            count,
            index: 0,
        }
    }

    /// Where the pack's body is.
    #[must_use]
    pub const fn place(&self) -> P {
        self.place
    }

    /// The pack's file offset: the identity of its records, with their index.
    #[must_use]
    pub const fn offset(&self) -> u64 {
        self.offset
    }

    /// The file offset just past the pack's last chunk.
    #[must_use]
    pub const fn end(&self) -> u64 {
        self.end
    }

    /// The next record, as its index and its range in `bytes` (the place's bytes); or the report
    /// of a body that does not hold together, the records not read lost (and nothing after
    /// it); `None` once every record is read.
    #[inline]
    pub fn next(&mut self, bytes: &[u8]) -> Option<Result<(u32, Range<usize>), Corruption>> {
        if self.index >= self.count {
            return None;
        }
        let body = bytes.get(self.body.clone()).unwrap_or_default();
        // Records under 128 bytes (a length of one byte): the common case, inline.
        if let Some((&len, rest)) = body.split_first()
            && len < 0x80
            && usize::from(len) <= rest.len()
        {
            let start = self.body.start + 1;
            return Some(Ok(self.take(start..start + usize::from(len))));
        }
        let mut records = records_from(body, self.count, self.index);
        let next = records.next()?;
        let rest = records.rest().len();
        match next {
            Ok((_, data)) => {
                let start = self.body.end - rest - data.len();
                Some(Ok(self.take(start..start + data.len())))
            }
            Err(error) => {
                let lost = self.count - self.index;
                self.index = self.count;
                Some(Err(Corruption {
                    offset: self.offset,
                    bytes: body.len() as u64,
                    kind: CorruptionKind::BadPack { error, lost },
                }))
            }
        }
    }

    /// Takes the record at `data`: the body goes on after it.
    fn take(&mut self, data: Range<usize>) -> (u32, Range<usize>) {
        let index = self.index;
        self.index += 1;
        self.body.start = data.end;
        (index, data)
    }
}

/// The records of a pack's body, in order, each with its index; an error ends them (the
/// records before it are whole and checked).
#[derive(Debug, Clone)]
pub struct Records<'a> {
    body: &'a [u8],
    count: u32,
    index: u32,
    failed: bool,
}

impl<'a> Records<'a> {
    /// The index of the next record.
    #[must_use]
    pub const fn index(&self) -> u32 {
        self.index
    }

    /// The records not read yet, by the count.
    #[must_use]
    pub const fn remaining(&self) -> u32 {
        self.count - self.index
    }

    /// What is left of the body.
    #[must_use]
    pub const fn rest(&self) -> &'a [u8] {
        self.body
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<(u32, &'a [u8]), PackError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        if self.index == self.count {
            if self.body.is_empty() {
                return None;
            }
            self.failed = true;
            return Some(Err(PackError::Trailing));
        }
        let index = self.index;
        let record = read_varint(self.body).and_then(|(len, used)| {
            let rest = self.body.get(used..)?;
            let len = usize::try_from(len).ok()?;
            Some((rest.get(..len)?, rest.get(len..)?))
        });
        let Some((record, rest)) = record else {
            self.failed = true;
            return Some(Err(if self.body.is_empty() {
                PackError::Short { found: index }
            } else {
                PackError::BadLength { index }
            }));
        };
        self.body = rest;
        self.index += 1;
        Some(Ok((index, record)))
    }
}

/// A LEB128 varint of at most 5 bytes (a `u32`) at the start of `bytes`: its value and length.
fn read_varint(bytes: &[u8]) -> Option<(u32, usize)> {
    let mut value = 0u32;
    for (i, &byte) in bytes.iter().take(MAX_LENGTH_BYTES).enumerate() {
        let bits = u32::from(byte & 0x7F);
        // The fifth byte holds the top 4 bits only.
        if i == 4 && bits > 0x0F {
            return None;
        }
        value |= bits << (7 * i);
        if byte & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

/// The length prefix of a record of `len` bytes in a pack (a LEB128 varint): its bytes, and how
/// many of them. A writer that builds packs in its own buffer lays out each record as this
/// prefix and the record, after a [`stored_header`].
///
/// ```
/// use logfmt_core::pack::length_prefix;
///
/// assert_eq!(length_prefix(300), ([0xAC, 0x02, 0, 0, 0], 2));
/// ```
#[must_use]
pub fn length_prefix(len: u32) -> ([u8; MAX_LENGTH_BYTES], usize) {
    write_varint(len)
}

/// The header of a stored pack of `count` records: the codec byte and the count.
#[must_use]
pub const fn stored_header(count: u32) -> [u8; STORED_HEADER] {
    let [c0, c1, c2, c3] = count.to_le_bytes();
    [STORED, c0, c1, c2, c3]
}

/// The header of a pack of `count` records whose body, `decoded_len` bytes, is coded with
/// `codec`: the codec byte, the count and the decoded length.
///
/// ```
/// use logfmt_core::pack::{coded_header, Pack, ZSTD};
///
/// let header = coded_header(ZSTD, 3, 100);
/// let pack = Pack::parse(&header).unwrap();
/// assert_eq!((pack.codec(), pack.count(), pack.decoded_len()), (ZSTD, 3, Some(100)));
/// ```
#[must_use]
pub const fn coded_header(codec: u8, count: u32, decoded_len: u32) -> [u8; CODED_HEADER] {
    let [c0, c1, c2, c3] = count.to_le_bytes();
    let [d0, d1, d2, d3] = decoded_len.to_le_bytes();
    [codec, c0, c1, c2, c3, d0, d1, d2, d3]
}

/// `value` as a LEB128 varint: the bytes, and how many of them.
fn write_varint(mut value: u32) -> ([u8; MAX_LENGTH_BYTES], usize) {
    let mut bytes = [0u8; MAX_LENGTH_BYTES];
    let mut n = 0;
    while let Some(slot) = bytes.get_mut(n) {
        let low = (value & 0x7F) as u8;
        value >>= 7;
        n += 1;
        if value == 0 {
            *slot = low;
            break;
        }
        *slot = low | 0x80;
    }
    (bytes, n)
}

/// Copies `src` into `dst` (of the same length): records of 8 to 64 bytes as two overlapping
/// fixed-size copies, inlined, where a slice copy of unknown length calls `memcpy` (about 25
/// instructions for 16 bytes, most of a packed record's cost; callgrind, `logfmt-bench pack`).
#[inline]
fn copy_short(dst: &mut [u8], src: &[u8]) {
    /// Two copies of `K` bytes: the first and the last `K` (overlapping when `n` < 2K).
    #[inline(always)]
    fn two<const K: usize>(dst: &mut [u8], src: &[u8]) {
        let n = src.len();
        let tail = n.saturating_sub(K);
        if let (Some(d), Some(s)) = (dst.get_mut(..K), src.get(..K)) {
            d.copy_from_slice(s);
        }
        if let (Some(d), Some(s)) = (dst.get_mut(tail..tail + K), src.get(tail..tail + K)) {
            d.copy_from_slice(s);
        }
    }
    if dst.len() != src.len() {
        return;
    }
    match src.len() {
        8..=15 => two::<8>(dst, src),
        16..=31 => two::<16>(dst, src),
        32..=64 => two::<32>(dst, src),
        _ => dst.copy_from_slice(src),
    }
}

/// Bytes a record of `len` bytes takes in a pack: its length's varint and its bytes.
#[must_use]
pub const fn entry_len(len: usize) -> usize {
    let mut bytes = 1;
    let mut rest = len >> 7;
    while rest > 0 {
        bytes += 1;
        rest >>= 7;
    }
    bytes + len
}

/// A record did not fit in a [`PackBuffer`]: nothing was added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct PackFull;

impl fmt::Display for PackFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the record does not fit in the pack")
    }
}

impl core::error::Error for PackFull {}

/// A stored pack being filled, in a fixed-capacity buffer of `N` bytes the caller sizes (no
/// allocation): its bytes are at every moment a complete pack payload, ready to be written
/// as a pack record ([`Writer::add_pack`](crate::Writer::add_pack)).
///
/// ```
/// use logfmt_core::pack::{PackBuffer, PackFull};
///
/// let mut pack = PackBuffer::<16>::new();
/// pack.push(b"abcdef")?; // 5 header bytes, 1 length byte, 6 bytes
/// assert_eq!((pack.count(), pack.len()), (1, 12));
/// assert_eq!(pack.push(b"wxyz"), Err(PackFull)); // 5 more bytes: 17 > 16
/// pack.push(b"xyz")?; // 4 more: full to the byte
/// assert_eq!((pack.count(), pack.len()), (2, 16));
/// # Ok::<(), PackFull>(())
/// ```
///
/// The buffer is a plain array with a length, not a `heapless::Vec`: heapless 0.9's
/// `extend_from_slice` copies element by element, about 95 instructions to add a 16-byte
/// record (callgrind, `logfmt-bench pack`), where a slice copy is a few.
#[derive(Debug, Clone)]
pub struct PackBuffer<const N: usize> {
    bytes: [u8; N],
    /// The payload's length: `bytes[..len]` is the pack (0 if `N` cannot hold its header).
    len: usize,
    count: u32,
}

impl<const N: usize> Default for PackBuffer<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> PackBuffer<N> {
    /// An empty pack. (`N` must leave room for the 5-byte header and a record; a smaller buffer
    /// takes none.)
    #[must_use]
    pub const fn new() -> Self {
        // Codec (`STORED`, 0) and count 0: zeros. A buffer too small for them stays empty and
        // takes no record.
        Self {
            bytes: [0; N],
            len: if N >= STORED_HEADER { STORED_HEADER } else { 0 },
            count: 0,
        }
    }

    /// Adds a record.
    ///
    /// # Errors
    /// [`PackFull`] if it does not fit in the rest of the buffer (or the pack holds `u32::MAX`
    /// records).
    #[inline]
    pub fn push(&mut self, record: &[u8]) -> Result<(), PackFull> {
        if !self.fits(record.len()) {
            return Err(PackFull);
        }
        let len = u32::try_from(record.len()).map_err(|_| PackFull)?;
        let (varint, used) = write_varint(len);
        let start = self.len;
        let (Some(length), Some(data)) =
            (self.bytes.get_mut(start..start + used), varint.get(..used))
        else {
            return Err(PackFull);
        };
        length.copy_from_slice(data);
        let at = start + used;
        let Some(slot) = self.bytes.get_mut(at..at + record.len()) else {
            return Err(PackFull);
        };
        slot.copy_from_slice(record);
        self.len = at + record.len();
        self.count += 1;
        if let Some(field) = self.bytes.get_mut(1..STORED_HEADER) {
            field.copy_from_slice(&self.count.to_le_bytes());
        }
        Ok(())
    }

    /// Adds a record of fewer than 128 bytes (a one-byte length) if the pack then takes at most
    /// `bytes` bytes and held fewer than `records` records: a packing writer's fast path, the
    /// case of [`take`](crate::pack::take) that is `Add` with room to spare. Whether it was
    /// added.
    #[inline]
    pub(crate) fn push_short(&mut self, record: &[u8], bytes: usize, records: u32) -> bool {
        let len = record.len();
        let at = self.len;
        if len >= 0x80 || self.count >= records || at < STORED_HEADER {
            return false;
        }
        let end = at + 1 + len;
        if end > bytes {
            return false;
        }
        let Some((length, slot)) = self
            .bytes
            .get_mut(at..end)
            .and_then(|entry| entry.split_first_mut())
        else {
            return false;
        };
        // `len` < 128: its varint is the byte itself.
        *length = len as u8;
        copy_short(slot, record);
        self.len = end;
        self.count += 1;
        if let Some(field) = self.bytes.get_mut(1..STORED_HEADER) {
            field.copy_from_slice(&self.count.to_le_bytes());
        }
        true
    }

    /// Whether a record of `len` bytes fits in the rest of the buffer.
    #[must_use]
    #[inline]
    pub fn fits(&self, len: usize) -> bool {
        self.len >= STORED_HEADER
            && self.count < u32::MAX
            && u32::try_from(len).is_ok()
            && entry_len(len) <= N - self.len
    }

    /// The records added since the pack was last cleared.
    #[must_use]
    pub const fn count(&self) -> u32 {
        self.count
    }

    /// Whether the pack holds no record.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The pack payload's length so far.
    #[must_use]
    pub const fn len(&self) -> usize {
        self.len
    }

    /// The pack payload: a stored pack of the records added.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or_default()
    }

    /// The only record of a pack of one (which a writer may write as a plain record instead:
    /// a pack of one costs 6 bytes more).
    #[must_use]
    pub fn single(&self) -> Option<&[u8]> {
        if self.count != 1 {
            return None;
        }
        let body = self.as_bytes().get(STORED_HEADER..)?;
        let (_, used) = read_varint(body)?;
        body.get(used..)
    }

    /// Empties the pack.
    pub fn clear(&mut self) {
        self.len = self.len.min(STORED_HEADER);
        if let Some(field) = self.bytes.get_mut(1..STORED_HEADER) {
            field.fill(0);
        }
        self.count = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn short_copies_copy_every_byte() {
        let src: Vec<u8> = (1..=200u8).collect();
        for n in 0..=130 {
            let mut dst = [0u8; 130];
            copy_short(&mut dst[..n], &src[..n]);
            assert_eq!(&dst[..n], &src[..n], "{n} bytes");
            assert!(dst[n..].iter().all(|&b| b == 0), "{n} bytes: past the end");
        }
    }

    #[test]
    fn varints_round_trip() {
        for value in [0, 1, 127, 128, 16_383, 16_384, u32::MAX >> 1, u32::MAX] {
            let (bytes, n) = write_varint(value);
            assert_eq!(read_varint(&bytes[..n]), Some((value, n)));
            assert_eq!(entry_len(value as usize) - value as usize, n);
        }
        // Too long, or bits past 32.
        assert_eq!(read_varint(&[0x80; 6]), None);
        assert_eq!(read_varint(&[0xFF, 0xFF, 0xFF, 0xFF, 0x1F]), None);
    }

    #[test]
    fn a_body_that_disagrees_with_its_count_is_an_error() {
        let mut pack = PackBuffer::<64>::new();
        pack.push(b"ab").unwrap();
        pack.push(b"c").unwrap();
        let mut bytes = pack.as_bytes().to_vec();
        bytes[1] = 3; // count 3, two records
        let records: Vec<_> = Pack::parse(&bytes).unwrap().records().collect();
        assert_eq!(records[2], Err(PackError::Short { found: 2 }));
        bytes[1] = 1; // count 1, two records
        let records: Vec<_> = Pack::parse(&bytes).unwrap().records().collect();
        assert_eq!(records[1], Err(PackError::Trailing));
        bytes[1] = 2;
        bytes[5] = 9; // a length past the body
        let records: Vec<_> = Pack::parse(&bytes).unwrap().records().collect();
        assert_eq!(records, [Err(PackError::BadLength { index: 0 })]);
        assert_eq!(Pack::parse(&[STORED, 0, 0, 0, 0]), Err(PackError::Empty));
        assert_eq!(Pack::parse(&[ZSTD, 1, 0, 0, 0]), Err(PackError::Truncated));
    }

    #[test]
    fn a_single_record_comes_back_whole() {
        let mut pack = PackBuffer::<300>::new();
        pack.push(&[7u8; 200]).unwrap();
        assert_eq!(pack.single(), Some(&[7u8; 200][..]));
        pack.push(b"x").unwrap();
        assert_eq!(pack.single(), None);
        pack.clear();
        assert_eq!(
            (pack.count(), pack.len(), pack.as_bytes()),
            (0, 5, &[0u8; 5][..])
        );
    }

    proptest::proptest! {
        /// Any records that fit come back, in order, with their indices.
        #[test]
        fn records_round_trip(records in proptest::collection::vec(
            proptest::collection::vec(proptest::num::u8::ANY, 0..300), 0..40)) {
            let mut pack = PackBuffer::<4096>::new();
            let mut kept = Vec::new();
            for record in &records {
                let fits = pack.fits(record.len());
                proptest::prop_assert_eq!(pack.push(record).is_ok(), fits);
                if fits {
                    kept.push(record.clone());
                }
            }
            proptest::prop_assert!(pack.len() <= 4096);
            if kept.is_empty() {
                proptest::prop_assert_eq!(Pack::parse(pack.as_bytes()), Err(PackError::Empty));
            } else {
                let parsed = Pack::parse(pack.as_bytes()).unwrap();
                let back: Vec<(u32, Vec<u8>)> = parsed
                    .records()
                    .map(|r| r.map(|(i, d)| (i, d.to_vec())))
                    .collect::<Result<_, _>>()
                    .unwrap();
                let expected: Vec<(u32, Vec<u8>)> =
                    kept.into_iter().enumerate().map(|(i, d)| (i as u32, d)).collect();
                proptest::prop_assert_eq!(back, expected);
            }
        }

        /// Parsing never panics, and every record it returns lies in the payload.
        #[test]
        fn parsing_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            if let Ok(pack) = Pack::parse(&bytes) {
                for (_, data) in pack.records().take(300).flatten() {
                    proptest::prop_assert!(data.len() <= bytes.len());
                }
            }
        }
    }
}
