//! The zstd codec (the `zstd` feature): compressing and decoding packs and RocksDB's records.

use logfmt_core::pack::{
    CODED_HEADER, Pack, PackError, STORED_HEADER, ZSTD, coded_header, length_prefix,
};

use super::MAX_DECODED;

/// Whether this build decodes and writes compressed records: yes.
pub(crate) const BUILT: bool = true;

/// zstd's contexts, made on first use and used again for every record and pack a writer or
/// reader codes: making one allocates its tables, which costs far more than coding a record of
/// 100 bytes (`logfmt-bench wal-size`, a million write batches written and read back four
/// ways, two of them compressed: 44 s with a context a record, 8.3 s with these).
#[derive(Default)]
pub(crate) struct Contexts {
    /// The compressor, with the level and the content-checksum flag it was made with.
    compressor: Option<(i32, bool, zstd::bulk::Compressor<'static>)>,
    /// The decompressor of coded packs (whole frames of a declared length).
    decompressor: Option<zstd::bulk::Decompressor<'static>>,
    /// The decoder of RocksDB's records (frames of unknown length, decoded within a bound).
    stream: Option<zstd::stream::raw::Decoder<'static>>,
}

impl std::fmt::Debug for Contexts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Contexts")
            .field(
                "compressor",
                &self.compressor.as_ref().map(|(l, c, _)| (l, c)),
            )
            .field("decompressor", &self.decompressor.is_some())
            .field("stream", &self.stream.is_some())
            .finish()
    }
}

/// How much more room a RocksDB record's decoding asks for at a time.
const STREAM_STEP: usize = 64 << 10;

impl Contexts {
    /// The compressor at `level`, with or without content checksums.
    fn compressor(
        &mut self,
        level: i32,
        checksum: bool,
    ) -> std::io::Result<&mut zstd::bulk::Compressor<'static>> {
        let reusable = matches!(&self.compressor, Some((l, c, _)) if *l == level && *c == checksum);
        if !reusable {
            let mut compressor = zstd::bulk::Compressor::new(level)?;
            compressor.include_checksum(checksum)?;
            self.compressor = Some((level, checksum, compressor));
        }
        match &mut self.compressor {
            Some((_, _, compressor)) => Ok(compressor),
            None => Err(std::io::Error::other("no zstd compressor")),
        }
    }

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
        let compressed = self.compressor(level, false).ok()?.compress(body).ok()?;
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
        out.clear();
        out.resize(len, 0);
        let decompressor = match &mut self.decompressor {
            Some(decompressor) => decompressor,
            slot @ None => match zstd::bulk::Decompressor::new() {
                Ok(decompressor) => slot.insert(decompressor),
                Err(_) => {
                    out.clear();
                    return Err(PackError::Decode);
                }
            },
        };
        // The destination has exactly the declared length: a frame that decodes to more
        // fails.
        match decompressor.decompress_to_buffer(pack.body(), out.as_mut_slice()) {
            Ok(decoded) if decoded == len => Ok(()),
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
        self.compressor(level, true)?.compress(record)
    }

    /// Decodes a record compressed by RocksDB's WAL compression (`codec` 7: one zstd frame)
    /// into `out`: `Ok(true)` once whole, `Ok(false)` if it decodes to more than `limit` bytes
    /// (it is then not kept, and no more than `limit` and a step were allocated), `Err` if it
    /// does not decode (or the codec is not zstd). The decoder starts afresh at every record.
    pub(crate) fn decode_stream(
        &mut self,
        data: &[u8],
        codec: u32,
        out: &mut Vec<u8>,
        limit: usize,
    ) -> Result<bool, ()> {
        use zstd::stream::raw::{Decoder, InBuffer, Operation, OutBuffer};

        out.clear();
        if codec != logfmt_core::parts::format::ZSTD_CODEC {
            return Err(());
        }
        if data.is_empty() {
            // RocksDB writes an empty record as an empty chunk: no frame.
            return Ok(true);
        }
        let limit = limit.min(MAX_DECODED);
        let decoder = match &mut self.stream {
            Some(decoder) => {
                decoder.reinit().map_err(|_| ())?;
                decoder
            }
            slot @ None => slot.insert(Decoder::new().map_err(|_| ())?),
        };
        let mut input = InBuffer::around(data);
        loop {
            // Room for one more byte than the limit, at most: a record that fills it is longer.
            let room = (limit + 1).saturating_sub(out.len()).min(STREAM_STEP);
            if out.capacity() - out.len() < room {
                out.reserve_exact(room);
            }
            let (read, filled) = (input.pos(), out.len());
            let remaining = decoder.run(&mut input, &mut OutBuffer::around_pos(out, filled));
            let remaining = match remaining {
                Ok(remaining) => remaining,
                Err(_) => {
                    out.clear();
                    return Err(());
                }
            };
            if out.len() > limit {
                out.clear();
                return Ok(false);
            }
            if remaining == 0 {
                // The frame is whole (and its checksum checked).
                return Ok(true);
            }
            if input.pos() == read && out.len() == filled {
                // No progress: the frame is cut short.
                out.clear();
                return Err(());
            }
        }
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
                out.capacity() <= record.len() + STREAM_STEP,
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
}
