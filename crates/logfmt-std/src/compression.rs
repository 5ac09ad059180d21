//! Compressed packs: the codec `logfmt-std` applies to a [pack](logfmt_core::pack)'s body
//! (zstd), kept only when it makes the pack smaller, and decoded within a bound.

use logfmt_core::pack::{
    CODED_HEADER, Pack, PackError, STORED_HEADER, ZSTD, coded_header, length_prefix,
};

/// How a [`LogWriter`](crate::LogWriter) compresses what it writes
/// ([`WriterOptions::compress`](crate::WriterOptions::compress)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Compression {
    /// Nothing is compressed (the default).
    #[default]
    None,
    /// Packs, and records too large for a pack, are compressed with zstd at this level (1 to
    /// 22; 3 is zstd's default), each kept plain when compression does not make it smaller.
    Zstd {
        /// zstd's compression level.
        level: i32,
    },
    /// RocksDB's WAL compression (`DBOptions::wal_compression = kZSTD`): the log starts with
    /// RocksDB's compression record and every record is one zstd frame (with its content
    /// checksum), cut into ordinary chunks — what RocksDB ≥ 7.4 reads. Only a new log starts
    /// compressed: a log continued ([`LogWriter::append`](crate::LogWriter::append)) keeps
    /// its own compression.
    Rocksdb {
        /// zstd's compression level.
        level: i32,
    },
}

impl Compression {
    /// zstd at its default level (3).
    #[must_use]
    pub const fn zstd() -> Self {
        Self::Zstd { level: 3 }
    }

    /// RocksDB's WAL compression at zstd's default level (3).
    #[must_use]
    pub const fn rocksdb() -> Self {
        Self::Rocksdb { level: 3 }
    }
}

/// The most bytes a reader decodes one pack into: a pack declaring more is refused before
/// anything is allocated.
pub const MAX_DECODED: usize = 64 << 20;

/// The stored pack `stored` (header and body, `count` records) coded with zstd at `level`, if
/// that makes it smaller.
pub(crate) fn encode_pack(stored: &[u8], count: u32, level: i32) -> Option<Vec<u8>> {
    let body = stored.get(STORED_HEADER..)?;
    coded(body, count, level).filter(|coded| coded.len() < stored.len())
}

/// `record` as a pack of one coded with zstd at `level`, if that is smaller than the record.
pub(crate) fn encode_record(record: &[u8], level: i32) -> Option<Vec<u8>> {
    let (prefix, used) = length_prefix(u32::try_from(record.len()).ok()?);
    let mut body = Vec::with_capacity(used + record.len());
    body.extend_from_slice(prefix.get(..used)?);
    body.extend_from_slice(record);
    coded(&body, 1, level).filter(|coded| coded.len() < record.len())
}

/// A coded pack of `count` records whose stored body is `body`.
fn coded(body: &[u8], count: u32, level: i32) -> Option<Vec<u8>> {
    let decoded_len = u32::try_from(body.len()).ok()?;
    let compressed = zstd::bulk::compress(body, level).ok()?;
    let mut pack = Vec::with_capacity(CODED_HEADER + compressed.len());
    pack.extend_from_slice(&coded_header(ZSTD, count, decoded_len));
    pack.extend_from_slice(&compressed);
    Some(pack)
}

/// Decodes the body of `pack` (codec [`ZSTD`]) into `out`, which then holds exactly the
/// declared decoded length: at most `limit` bytes are allocated, whatever the pack declares.
///
/// # Errors
/// [`PackError::UnknownCodec`] for another codec, [`PackError::TooLarge`] if the declared
/// length is over `limit` (nothing is allocated), [`PackError::Decode`] if the body does not
/// decode to exactly the declared length.
pub(crate) fn decode(pack: &Pack<'_>, out: &mut Vec<u8>, limit: usize) -> Result<(), PackError> {
    if pack.codec() != ZSTD {
        return Err(PackError::UnknownCodec(pack.codec()));
    }
    let declared = pack.decoded_len().unwrap_or(0);
    let len = usize::try_from(declared).unwrap_or(usize::MAX);
    if len > limit.min(MAX_DECODED) {
        return Err(PackError::TooLarge { len: declared });
    }
    out.clear();
    out.resize(len, 0);
    // The destination has exactly the declared length: a frame that decodes to more fails.
    match zstd::bulk::decompress_to_buffer(pack.body(), out.as_mut_slice()) {
        Ok(decoded) if decoded == len => Ok(()),
        _ => {
            out.clear();
            Err(PackError::Decode)
        }
    }
}

/// `record` as RocksDB's WAL compression writes it: one zstd frame with its content checksum
/// (an empty record stays empty: no frame).
pub(crate) fn encode_stream(record: &[u8], level: i32) -> std::io::Result<Vec<u8>> {
    if record.is_empty() {
        return Ok(Vec::new());
    }
    let mut compressor = zstd::bulk::Compressor::new(level)?;
    compressor.include_checksum(true)?;
    compressor.compress(record)
}

/// Decodes a record compressed by RocksDB's WAL compression (`codec` 7: one zstd frame) into
/// `out`: `Ok(true)` once whole, `Ok(false)` if it decodes to more than `limit` bytes (it is
/// then not kept), `Err` if it does not decode (or the codec is not zstd).
pub(crate) fn decode_stream(
    data: &[u8],
    codec: u32,
    out: &mut Vec<u8>,
    limit: usize,
) -> Result<bool, ()> {
    use std::io::Read;

    out.clear();
    if codec != logfmt_core::format::ZSTD_CODEC {
        return Err(());
    }
    if data.is_empty() {
        // RocksDB writes an empty record as an empty chunk: no frame.
        return Ok(true);
    }
    let limit = limit.min(MAX_DECODED);
    let mut decoder = zstd::stream::read::Decoder::with_buffer(data)
        .map_err(|_| ())?
        .single_frame();
    let read = decoder
        .by_ref()
        .take(limit as u64 + 1)
        .read_to_end(out)
        .map_err(|_| ())?;
    if read > limit {
        out.clear();
        return Ok(false);
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use logfmt_core::pack::PackBuffer;

    #[test]
    fn a_pack_is_coded_when_it_shrinks_and_decodes_back() {
        let mut pack = PackBuffer::<4096>::new();
        for i in 0..100u32 {
            pack.push(format!("temperature={}", 20 + i % 3).as_bytes())
                .unwrap();
        }
        let coded = encode_pack(pack.as_bytes(), pack.count(), 3).expect("it shrinks");
        assert!(
            coded.len() * 4 < pack.len(),
            "{} of {}",
            coded.len(),
            pack.len()
        );
        let parsed = Pack::parse(&coded).unwrap();
        let mut out = Vec::new();
        decode(&parsed, &mut out, usize::MAX).unwrap();
        assert_eq!(out, pack.as_bytes()[STORED_HEADER..]);
        // Refused before allocating: a limit under the declared length.
        assert_eq!(
            decode(&parsed, &mut out, 10),
            Err(PackError::TooLarge {
                len: (pack.len() - STORED_HEADER) as u32
            })
        );
    }

    #[test]
    fn incompressible_data_stays_plain() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let noise: Vec<u8> = (0..1000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        assert_eq!(encode_record(&noise, 3), None);
        let text = b"abc".repeat(400);
        let coded = encode_record(&text, 3).expect("text shrinks");
        let parsed = Pack::parse(&coded).unwrap();
        let mut out = Vec::new();
        decode(&parsed, &mut out, usize::MAX).unwrap();
        let records: Vec<&[u8]> = logfmt_core::pack::records_in(&out, 1)
            .map(|r| r.unwrap().1)
            .collect();
        assert_eq!(records, [&text[..]]);
    }

    #[test]
    fn a_body_that_lies_about_its_length_is_refused() {
        let text = b"xyz".repeat(100);
        let mut coded = encode_record(&text, 3).unwrap();
        // Declared one byte shorter, then one longer.
        for declared in [301u32, 303] {
            coded[5..9].copy_from_slice(&declared.to_le_bytes());
            let parsed = Pack::parse(&coded).unwrap();
            let mut out = Vec::new();
            assert_eq!(
                decode(&parsed, &mut out, usize::MAX),
                Err(PackError::Decode)
            );
        }
        // Garbage.
        let garbage = [ZSTD, 1, 0, 0, 0, 10, 0, 0, 0, 1, 2, 3];
        let mut out = Vec::new();
        assert_eq!(
            decode(&Pack::parse(&garbage).unwrap(), &mut out, usize::MAX),
            Err(PackError::Decode)
        );
    }
}
