//! The zstd decoder (pure Rust, through `ruzstd`; always built): the frames of a coded pack and
//! of a record compressed by RocksDB's WAL compression, decoded within a bound.

use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};
use std::io::Read;

use super::MAX_DECODED;

/// How much a frame is decoded at a time before what it decoded is checked against the bound.
pub(super) const STEP: usize = 64 << 10;

/// The largest window a frame may ask for: a frame asking more is refused before anything is
/// allocated (zstd's own decoder refuses windows over 128 MiB by default).
const MAX_WINDOW: u64 = MAX_DECODED as u64;

/// A zstd decoder, made on first use and used again for every frame: its buffers are kept.
#[derive(Default)]
pub(crate) struct Decoder {
    /// The frame decoder (its window and tables).
    frame: Option<FrameDecoder>,
}

impl std::fmt::Debug for Decoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder")
            .field("made", &self.frame.is_some())
            .finish()
    }
}

impl Decoder {
    /// Decodes the zstd frames of `data`, one after the other as zstd's streaming decoder reads
    /// them, into `out`: `Ok(true)` once all are decoded (each frame's content checksum and
    /// declared size checked), `Ok(false)` if they decode to more than `limit` bytes (`out` is
    /// then cleared, and no more than `limit` and a step were put in it), `Err` if they do not
    /// decode. Every frame starts with a fresh window: no frame refers to another.
    pub(crate) fn frames(
        &mut self,
        data: &[u8],
        out: &mut Vec<u8>,
        limit: usize,
    ) -> Result<bool, ()> {
        out.clear();
        let limit = limit.min(MAX_DECODED);
        let decoder = self.frame.get_or_insert_with(|| {
            let mut decoder = FrameDecoder::new();
            decoder.set_max_window_size(MAX_WINDOW);
            decoder
        });
        let mut source = data;
        let result = loop {
            if source.is_empty() {
                break Ok(true);
            }
            match frame(decoder, &mut source, out, limit) {
                Ok(true) => {}
                other => break other,
            }
        };
        if result != Ok(true) {
            out.clear();
        }
        result
    }
}

/// Decodes the frame at the start of `source` onto `out` (advancing `source` past it): `Ok(true)`
/// when whole and sound, `Ok(false)` when `out` would pass `limit`.
fn frame(
    decoder: &mut FrameDecoder,
    source: &mut &[u8],
    out: &mut Vec<u8>,
    limit: usize,
) -> Result<bool, ()> {
    decoder.reset(&mut *source).map_err(drop)?;
    let start = out.len();
    loop {
        let finished = decoder
            .decode_blocks(&mut *source, BlockDecodingStrategy::UptoBytes(STEP))
            .map_err(drop)?;
        // What can be taken now (all of it once the frame is whole), to one byte past the limit.
        let ready = decoder.can_collect();
        let room = (limit + 1).saturating_sub(out.len());
        let take = ready.min(room);
        if take > 0 {
            let filled = out.len();
            out.reserve_exact(take);
            out.resize(filled + take, 0);
            let read = decoder
                .read(out.get_mut(filled..).unwrap_or_default())
                .map_err(drop)?;
            out.truncate(filled + read);
        }
        if out.len() > limit {
            return Ok(false);
        }
        if finished {
            // All of it taken: what was ready fitted in the room.
            break;
        }
    }
    let decoded = (out.len() - start) as u64;
    let declared = decoder.content_size();
    if declared != 0 && declared != decoded {
        return Err(());
    }
    match decoder.get_checksum_from_data() {
        Some(stored) if decoder.get_calculated_checksum() != Some(stored) => Err(()),
        _ => Ok(true),
    }
}
