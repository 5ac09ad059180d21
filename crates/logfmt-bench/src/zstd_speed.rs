//! zstd decoding and encoding speed: `ruzstd` (pure Rust; what `logfmt-std` decodes every
//! compressed record with, and encodes with without `zstd-c`) against zstd's C library, on the
//! same frames. One line per codec, operation and case:
//!
//! ```text
//! ZSTDSPEED case=<records|packs> op=<decode|encode> impl=<ruzstd|zstd-c-1|zstd-c-3> frames=N
//!     plain=BYTES coded=BYTES seconds=S plain_mb_s=M
//! ```
//!
//! `records`: the `WriteBatch`es of `wal_size::puts` (one put each, 60 to 200 bytes), each one
//! frame with its content checksum, as RocksDB's WAL compression (and logfmt's) writes them;
//! `packs`: the same batches 40 to a frame (about 5 KiB: a pack's body). The frames decoded are
//! zstd's C library's at level 3 (RocksDB's default): both decoders decode the very same bytes,
//! each decoded frame compared with its plain bytes before any timing. `plain_mb_s` is plain
//! (decoded) bytes per second, in MB (10^6 bytes). The best of `reps` passes is printed.

use std::time::Instant;

use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};
use ruzstd::encoding::{CompressionLevel, FrameCompressor};

use crate::wal_size::puts;

/// Runs the comparison on `count` batches, `reps` passes each; one line per result.
///
/// # Errors
/// A frame that one of the codecs does not code or decode back to its bytes.
pub fn run(count: usize, reps: usize, emit: &mut dyn FnMut(String)) -> Result<(), String> {
    let batches: Vec<Vec<u8>> = puts(count)
        .iter()
        .enumerate()
        .map(|(i, (key, value))| {
            let mut out = Vec::new();
            out.extend_from_slice(&(i as u64 + 1).to_le_bytes());
            out.extend_from_slice(&1u32.to_le_bytes());
            logfmt_std::content::Op::Put { cf: 0, key, value }.encode(&mut out);
            out
        })
        .collect();
    let packs: Vec<Vec<u8>> = batches.chunks(40).map(<[Vec<u8>]>::concat).collect();
    for (case, plain) in [("records", &batches), ("packs", &packs)] {
        let plain_bytes: usize = plain.iter().map(Vec::len).sum();
        let line = |op: &str, name: &str, coded: usize, seconds: f64| {
            format!(
                "ZSTDSPEED case={case} op={op} impl={name} frames={} plain={plain_bytes} \
                 coded={coded} seconds={seconds:.4} plain_mb_s={:.1}",
                plain.len(),
                plain_bytes as f64 / seconds / 1e6
            )
        };
        // Encoders: the C library at levels 1 and 3, ruzstd's one level.
        let mut frames = Vec::new();
        for level in [1, 3] {
            let mut compressor = zstd::bulk::Compressor::new(level).map_err(|e| e.to_string())?;
            compressor
                .include_checksum(true)
                .map_err(|e| e.to_string())?;
            let (coded, seconds) = best(reps, || {
                plain
                    .iter()
                    .map(|p| compressor.compress(p).map_err(|e| e.to_string()))
                    .collect::<Result<Vec<_>, _>>()
            })?;
            emit(line(
                "encode",
                &format!("zstd-c-{level}"),
                size(&coded),
                seconds,
            ));
            if level == 3 {
                frames = coded;
            }
        }
        let mut rust = FrameCompressor::new(CompressionLevel::Fastest);
        let (coded, seconds) = best(reps, || {
            Ok(plain
                .iter()
                .map(|p| {
                    rust.set_source(p.as_slice());
                    rust.set_drain(Vec::new());
                    rust.compress();
                    rust.take_drain().unwrap_or_default()
                })
                .collect::<Vec<_>>())
        })?;
        // ruzstd's frames decode with the C library.
        for (frame, p) in coded.iter().zip(plain) {
            let back = zstd::bulk::decompress(frame, p.len()).map_err(|e| e.to_string())?;
            if &back != p {
                return Err(format!("{case}: ruzstd's frame does not decode back"));
            }
        }
        emit(line("encode", "ruzstd", size(&coded), seconds));

        // Decoders, on the C library's level-3 frames.
        let coded = size(&frames);
        let mut c = zstd::bulk::Decompressor::new().map_err(|e| e.to_string())?;
        let mut out = vec![0u8; plain.iter().map(Vec::len).max().unwrap_or(0)];
        let check = |decoded: &[Vec<u8>]| -> Result<(), String> {
            if decoded == plain.as_slice() {
                Ok(())
            } else {
                Err(format!("{case}: a frame does not decode back"))
            }
        };
        check(&decode_rust(&frames)?)?;
        let (_, seconds) = best(reps, || {
            let mut total = 0;
            for frame in &frames {
                total += c
                    .decompress_to_buffer(frame, &mut out)
                    .map_err(|e| e.to_string())?;
            }
            Ok(total)
        })?;
        emit(line("decode", "zstd-c", coded, seconds));
        let (_, seconds) = best(reps, || decode_rust(&frames))?;
        emit(line("decode", "ruzstd", coded, seconds));
    }
    Ok(())
}

/// Every frame decoded by one reused `ruzstd` decoder, its checksum checked, as `logfmt-std`
/// decodes a record.
fn decode_rust(frames: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, String> {
    let mut decoder = FrameDecoder::new();
    frames
        .iter()
        .map(|frame| {
            let mut source = frame.as_slice();
            decoder.reset(&mut source).map_err(|e| e.to_string())?;
            decoder
                .decode_blocks(&mut source, BlockDecodingStrategy::All)
                .map_err(|e| e.to_string())?;
            let decoded = decoder.collect().unwrap_or_default();
            if decoder.get_checksum_from_data() != decoder.get_calculated_checksum() {
                return Err("a checksum does not match".to_string());
            }
            Ok(decoded)
        })
        .collect()
}

/// The total length of `frames`.
fn size(frames: &[Vec<u8>]) -> usize {
    frames.iter().map(Vec::len).sum()
}

/// The result of `pass` and its fastest time over `reps` passes (at least one).
fn best<T>(reps: usize, mut pass: impl FnMut() -> Result<T, String>) -> Result<(T, f64), String> {
    let mut fastest = f64::INFINITY;
    let mut result = None;
    for _ in 0..reps.max(1) {
        let start = Instant::now();
        let value = pass()?;
        fastest = fastest.min(start.elapsed().as_secs_f64());
        result = Some(value);
    }
    result
        .map(|r| (r, fastest))
        .ok_or_else(|| "no pass".to_string())
}
