//! The integer and slice encodings of LevelDB's `util/coding.h`, read off the front of a
//! byte slice without panicking: varint32, varint64, fixed32, fixed64 (little-endian) and
//! varint32-length-prefixed slices.

/// Reads LevelDB's encodings from a byte slice, keeping the offset of the next byte so that
/// a failure can say where it happened.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    rest: &'a [u8],
    offset: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `data`, whose first byte is at `offset` of what is reported.
    pub(crate) fn new(data: &'a [u8], offset: usize) -> Self {
        Self { rest: data, offset }
    }

    /// The offset of the next byte.
    pub(crate) fn offset(&self) -> usize {
        self.offset
    }

    /// Whether every byte has been read.
    pub(crate) fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// The bytes not read yet.
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.rest
    }

    /// Takes `n` bytes, or nothing if fewer are left.
    pub(crate) fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let taken = self.rest.get(..n)?;
        self.rest = self.rest.get(n..)?;
        self.offset = self.offset.checked_add(n)?;
        Some(taken)
    }

    /// Takes one byte.
    pub(crate) fn u8(&mut self) -> Option<u8> {
        self.bytes(1)?.first().copied()
    }

    /// Takes a fixed32 (little-endian).
    pub(crate) fn fixed32(&mut self) -> Option<u32> {
        let bytes = self.bytes(4)?;
        Some(u32::from_le_bytes(bytes.try_into().ok()?))
    }

    /// Takes a fixed64 (little-endian).
    pub(crate) fn fixed64(&mut self) -> Option<u64> {
        let bytes = self.bytes(8)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    }

    /// Takes a varint of at most `max_bytes` bytes. As LevelDB's `GetVarint32`/`GetVarint64`,
    /// the bits beyond the integer's width in its last byte are dropped, and a varint still
    /// continuing after `max_bytes` bytes (or at the end of the data) is malformed.
    fn varint(&mut self, max_bytes: usize) -> Option<u64> {
        let mut value = 0u64;
        for (i, &byte) in self.rest.iter().take(max_bytes).enumerate() {
            let shift = 7 * i as u32;
            value |= u64::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
            if byte & 0x80 == 0 {
                self.bytes(i + 1)?;
                return Some(value);
            }
        }
        None
    }

    /// Takes a varint32 (at most 5 bytes).
    pub(crate) fn varint32(&mut self) -> Option<u32> {
        // LevelDB shifts each byte into a u32: bits past 32 are lost.
        self.varint(5).map(|v| (v & u64::from(u32::MAX)) as u32)
    }

    /// Takes a varint64 (at most 10 bytes).
    pub(crate) fn varint64(&mut self) -> Option<u64> {
        self.varint(10)
    }

    /// Takes a varint32-length-prefixed slice; takes nothing if it is cut short.
    #[inline]
    pub(crate) fn slice(&mut self) -> Option<&'a [u8]> {
        let mut probe = self.clone();
        let len = usize::try_from(probe.varint32()?).ok()?;
        let slice = probe.bytes(len)?;
        *self = probe;
        Some(slice)
    }
}

/// Appends `value` as a varint.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Appends a varint32-length-prefixed slice.
pub(crate) fn put_slice(out: &mut Vec<u8>, data: &[u8]) {
    put_varint(out, data.len() as u64);
    out.extend_from_slice(data);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_as_leveldb_reads_them() {
        let mut c = Cursor::new(&[0x00, 0x7f, 0x80, 0x01, 0xff, 0xff, 0xff, 0xff, 0x0f], 10);
        assert_eq!(c.varint32(), Some(0));
        assert_eq!(c.varint32(), Some(127));
        assert_eq!(c.offset(), 12);
        assert_eq!(c.varint32(), Some(128));
        assert_eq!(c.varint32(), Some(u32::MAX));
        assert!(c.is_empty());
        // Five bytes that still continue: malformed, nothing taken.
        let data = [0x80; 6];
        let mut c = Cursor::new(&data, 0);
        assert_eq!(c.varint32(), None);
        assert_eq!(c.offset(), 0);
        // A varint cut by the end of the data.
        assert_eq!(Cursor::new(&[0x80], 0).varint64(), None);
        // The largest varint64.
        let mut max = Vec::new();
        put_varint(&mut max, u64::MAX);
        assert_eq!(max.len(), 10);
        assert_eq!(Cursor::new(&max, 0).varint64(), Some(u64::MAX));
    }

    #[test]
    fn slices_and_fixed() {
        let mut data = Vec::new();
        put_slice(&mut data, b"key");
        data.extend_from_slice(&7u32.to_le_bytes());
        data.extend_from_slice(&9u64.to_le_bytes());
        data.push(3);
        let mut c = Cursor::new(&data, 0);
        assert_eq!(c.slice(), Some(&b"key"[..]));
        assert_eq!(c.fixed32(), Some(7));
        assert_eq!(c.fixed64(), Some(9));
        // A length beyond the data takes nothing.
        let before = c.offset();
        assert_eq!(c.slice(), None);
        assert_eq!(c.offset(), before);
        assert_eq!(c.rest(), [3]);
        assert_eq!(c.u8(), Some(3));
        assert_eq!(c.u8(), None);
    }
}
