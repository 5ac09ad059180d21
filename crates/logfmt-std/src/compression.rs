//! Compression: zstd for a [pack](logfmt_core::pack)'s body (kept only when it makes the pack
//! smaller) and RocksDB's WAL compression, both decoded within a bound.
//!
//! Decoding is pure Rust (`ruzstd`) and always built: every compressed record and pack is read
//! by every build. Writing uses `ruzstd`'s encoder (one level, close to zstd's level 1), or
//! zstd's C library at the level asked for with the `zstd-c` feature; either writes what the
//! other, and RocksDB, read.

mod decode;
#[cfg(feature = "zstd-c")]
#[path = "compression/encode_c.rs"]
mod encode;
#[cfg(not(feature = "zstd-c"))]
#[path = "compression/encode_rust.rs"]
mod encode;

use logfmt_core::pack::{
    CODED_HEADER, Pack, PackError, STORED_HEADER, ZSTD, coded_header, length_prefix,
};

/// How a [`LogWriter`](crate::LogWriter) compresses what it writes
/// ([`LogWriterOptions::compress`](crate::LogWriterOptions::compress)).
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

/// The coder of a writer or reader, made on first use and used again record after record.
#[derive(Debug, Default)]
pub(crate) struct Contexts {
    /// The encoder (the writer's).
    encoder: encode::Encoder,
    /// The decoder (the reader's).
    decoder: decode::Decoder,
}

impl Contexts {
    /// The stored pack `stored` (header and body, `count` records) coded with zstd at
    /// `level`, if that makes it smaller.
    pub(crate) fn encode_pack(&mut self, stored: &[u8], count: u32, level: i32) -> Option<Vec<u8>> {
        let body = stored.get(STORED_HEADER..)?;
        self.coded(body, count, level)
            .filter(|coded| coded.len() < stored.len())
    }

    /// `record` as a pack of one coded with zstd at `level`, if that is smaller than the
    /// record.
    pub(crate) fn encode_record(&mut self, record: &[u8], level: i32) -> Option<Vec<u8>> {
        let (prefix, used) = length_prefix(u32::try_from(record.len()).ok()?);
        let mut body = Vec::with_capacity(used + record.len());
        body.extend_from_slice(prefix.get(..used)?);
        body.extend_from_slice(record);
        self.coded(&body, 1, level)
            .filter(|coded| coded.len() < record.len())
    }

    /// A coded pack of `count` records whose stored body is `body`.
    fn coded(&mut self, body: &[u8], count: u32, level: i32) -> Option<Vec<u8>> {
        let decoded_len = u32::try_from(body.len()).ok()?;
        let compressed = self.encoder.frame(body, level, false).ok()?;
        let mut pack = Vec::with_capacity(CODED_HEADER + compressed.len());
        pack.extend_from_slice(&coded_header(ZSTD, count, decoded_len));
        pack.extend_from_slice(&compressed);
        Some(pack)
    }

    /// Decodes the body of `pack` (codec [`ZSTD`]) into `out`, which then holds exactly the
    /// declared decoded length: at most `limit` bytes are allocated, whatever the pack
    /// declares.
    ///
    /// # Errors
    /// [`PackError::UnknownCodec`] for another codec, [`PackError::TooLarge`] if the declared
    /// length is over `limit` (nothing is allocated), [`PackError::Decode`] if the body does
    /// not decode to exactly the declared length.
    pub(crate) fn decode(
        &mut self,
        pack: &Pack<'_>,
        out: &mut Vec<u8>,
        limit: usize,
    ) -> Result<(), PackError> {
        if pack.codec() != ZSTD {
            return Err(PackError::UnknownCodec(pack.codec()));
        }
        let declared = pack.decoded_len().unwrap_or(0);
        let len = usize::try_from(declared).unwrap_or(usize::MAX);
        if len > limit.min(MAX_DECODED) {
            return Err(PackError::TooLarge { len: declared });
        }
        // Decoded within the declared length: a body that decodes to more, or to less, fails.
        match self.decoder.frames(pack.body(), out, len) {
            Ok(true) if out.len() == len => Ok(()),
            _ => {
                out.clear();
                Err(PackError::Decode)
            }
        }
    }

    /// `record` as RocksDB's WAL compression writes it: one zstd frame with its content
    /// checksum (an empty record stays empty: no frame).
    pub(crate) fn encode_stream(&mut self, record: &[u8], level: i32) -> std::io::Result<Vec<u8>> {
        if record.is_empty() {
            return Ok(Vec::new());
        }
        self.encoder.frame(record, level, true)
    }

    /// Decodes a record compressed by RocksDB's WAL compression (`codec` 7, zstd) into `out`:
    /// `Ok(true)` once whole, `Ok(false)` if it decodes to more than `limit` bytes (it is then
    /// not kept, and no more than `limit` and a step were allocated for it), `Err` if it does
    /// not decode (or the codec is not zstd).
    ///
    /// As RocksDB's reader does, the decoder starts afresh at every record (RocksDB's writer
    /// ends a frame at the end of every record, and its reader resets its stream there): a
    /// record's frames never refer to an earlier record.
    pub(crate) fn decode_stream(
        &mut self,
        data: &[u8],
        codec: u32,
        out: &mut Vec<u8>,
        limit: usize,
    ) -> Result<bool, ()> {
        out.clear();
        if codec != logfmt_core::parts::format::ZSTD_CODEC {
            return Err(());
        }
        // An empty record is an empty chunk (no frame): decoded, empty.
        self.decoder.frames(data, out, limit)
    }
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
        let coded = Contexts::default()
            .encode_pack(pack.as_bytes(), pack.count(), 3)
            .expect("it shrinks");
        assert!(
            coded.len() * 4 < pack.len(),
            "{} of {}",
            coded.len(),
            pack.len()
        );
        let parsed = Pack::parse(&coded).unwrap();
        let mut out = Vec::new();
        Contexts::default()
            .decode(&parsed, &mut out, usize::MAX)
            .unwrap();
        assert_eq!(out, pack.as_bytes()[STORED_HEADER..]);
        // Refused before allocating: a limit under the declared length.
        assert_eq!(
            Contexts::default().decode(&parsed, &mut out, 10),
            Err(PackError::TooLarge {
                len: (pack.len() - STORED_HEADER) as u32
            })
        );
    }

    /// RocksDB-style records through one set of contexts: each decodes on its own, within its
    /// limit, and a damaged or cut record leaves the next one whole.
    #[test]
    fn records_decode_one_by_one_with_the_same_contexts() {
        let mut contexts = Contexts::default();
        let records: Vec<Vec<u8>> = (0..5u8)
            .map(|i| {
                format!("record {i} ")
                    .repeat(100 + 5_000 * usize::from(i))
                    .into_bytes()
            })
            .collect();
        let frames: Vec<Vec<u8>> = records
            .iter()
            .map(|r| contexts.encode_stream(r, 3).unwrap())
            .collect();
        let codec = logfmt_core::parts::format::ZSTD_CODEC;
        let mut out = Vec::new();
        for (record, frame) in records.iter().zip(&frames) {
            // Cut short, then damaged: refused; then the record itself: whole.
            let cut = &frame[..frame.len() - 3];
            assert_eq!(
                contexts.decode_stream(cut, codec, &mut out, usize::MAX),
                Err(())
            );
            let mut damaged = frame.clone();
            let middle = damaged.len() / 2;
            damaged[middle] ^= 0x55;
            assert_eq!(
                contexts.decode_stream(&damaged, codec, &mut out, usize::MAX),
                Err(())
            );
            assert_eq!(
                contexts.decode_stream(frame, codec, &mut out, record.len()),
                Ok(true)
            );
            assert_eq!(&out, record);
            // One byte over the limit: oversized, and not kept.
            let over = contexts.decode_stream(frame, codec, &mut out, record.len() - 1);
            assert_eq!((over, out.len()), (Ok(false), 0));
            assert!(
                out.capacity() <= record.len() + decode::STEP,
                "{}",
                out.capacity()
            );
        }
        // Another codec is not decoded; an empty record is an empty chunk.
        assert_eq!(
            contexts.decode_stream(&frames[0], 1, &mut out, usize::MAX),
            Err(())
        );
        assert_eq!(contexts.decode_stream(&[], codec, &mut out, 0), Ok(true));
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
        assert_eq!(Contexts::default().encode_record(&noise, 3), None);
        let text = b"abc".repeat(400);
        let coded = Contexts::default()
            .encode_record(&text, 3)
            .expect("text shrinks");
        let parsed = Pack::parse(&coded).unwrap();
        let mut out = Vec::new();
        Contexts::default()
            .decode(&parsed, &mut out, usize::MAX)
            .unwrap();
        let records: Vec<&[u8]> = logfmt_core::pack::records_in(&out, 1)
            .map(|r| r.unwrap().1)
            .collect();
        assert_eq!(records, [&text[..]]);
    }

    #[test]
    fn a_body_that_lies_about_its_length_is_refused() {
        let text = b"xyz".repeat(100);
        let mut coded = Contexts::default().encode_record(&text, 3).unwrap();
        // Declared one byte shorter, then one longer.
        for declared in [301u32, 303] {
            coded[5..9].copy_from_slice(&declared.to_le_bytes());
            let parsed = Pack::parse(&coded).unwrap();
            let mut out = Vec::new();
            assert_eq!(
                Contexts::default().decode(&parsed, &mut out, usize::MAX),
                Err(PackError::Decode)
            );
        }
        // Garbage.
        let garbage = [ZSTD, 1, 0, 0, 0, 10, 0, 0, 0, 1, 2, 3];
        let mut out = Vec::new();
        assert_eq!(
            Contexts::default().decode(&Pack::parse(&garbage).unwrap(), &mut out, usize::MAX),
            Err(PackError::Decode)
        );
    }

    /// A frame whose content checksum (its last 4 bytes) is wrong does not decode; neither does
    /// one asking for a window over the bound (refused before its window is allocated).
    #[test]
    fn a_wrong_checksum_and_a_huge_window_are_refused() {
        let mut contexts = Contexts::default();
        let codec = logfmt_core::parts::format::ZSTD_CODEC;
        let record = b"checksummed ".repeat(50);
        let mut frame = contexts.encode_stream(&record, 3).unwrap();
        let mut out = Vec::new();
        assert_eq!(
            contexts.decode_stream(&frame, codec, &mut out, usize::MAX),
            Ok(true)
        );
        let last = frame.len() - 1;
        frame[last] ^= 1;
        assert_eq!(
            contexts.decode_stream(&frame, codec, &mut out, usize::MAX),
            Err(())
        );
        assert!(out.is_empty());
        // Magic, a descriptor with no size and no checksum, a window of 2^41 bytes, then one
        // empty raw block.
        let huge = [0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xf8, 0x01, 0x00, 0x00];
        assert_eq!(
            contexts.decode_stream(&huge, codec, &mut out, usize::MAX),
            Err(())
        );
        let fine = [0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x00, 0x01, 0x00, 0x00];
        assert_eq!(
            contexts.decode_stream(&fine, codec, &mut out, usize::MAX),
            Ok(true)
        );
    }

    /// Two frames one after the other in one record decode as zstd's streaming decoder (and so
    /// RocksDB's reader) decodes them: one after the other, into one record.
    #[test]
    fn frames_one_after_the_other_make_one_record() {
        let mut contexts = Contexts::default();
        let codec = logfmt_core::parts::format::ZSTD_CODEC;
        let (a, b) = (b"first half, ".repeat(30), b"second half".repeat(40));
        let mut data = contexts.encode_stream(&a, 3).unwrap();
        data.extend(contexts.encode_stream(&b, 3).unwrap());
        let mut out = Vec::new();
        assert_eq!(
            contexts.decode_stream(&data, codec, &mut out, usize::MAX),
            Ok(true)
        );
        assert_eq!(out, [a, b].concat());
        // Followed by bytes that are no frame: refused, nothing kept.
        data.extend_from_slice(b"junk");
        assert_eq!(
            contexts.decode_stream(&data, codec, &mut out, usize::MAX),
            Err(())
        );
        assert!(out.is_empty());
    }
}
