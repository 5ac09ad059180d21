//! The zstd encoder without the `zstd-c` feature: `ruzstd`'s (pure Rust). It has one
//! compressing level, close to zstd's level 1, used whatever level is asked for; every frame
//! it writes has a content checksum.

use std::io::Cursor;

use ruzstd::encoding::{CompressionLevel, FrameCompressor, MatchGeneratorDriver};

/// The compressor, reading an owned copy of what it codes and writing into a vector.
type Compressor = FrameCompressor<Cursor<Vec<u8>>, Vec<u8>, MatchGeneratorDriver>;

/// ruzstd's compressor, made on first use and used again for every record and pack: its
/// matcher's window is allocated once, as is the buffer its source is copied into.
#[derive(Default)]
pub(crate) struct Encoder {
    /// The compressor, and the buffer of its source between two frames.
    compressor: Option<(Compressor, Vec<u8>)>,
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoder")
            .field("made", &self.compressor.is_some())
            .finish()
    }
}

impl Encoder {
    /// `data` as one zstd frame with its content checksum, at ruzstd's one level (`level`
    /// and `checksum` are not used).
    pub(crate) fn frame(
        &mut self,
        data: &[u8],
        _level: i32,
        _checksum: bool,
    ) -> std::io::Result<Vec<u8>> {
        let (compressor, spare) = self
            .compressor
            .get_or_insert_with(|| (FrameCompressor::new(CompressionLevel::Fastest), Vec::new()));
        let mut source = std::mem::take(spare);
        source.clear();
        source.extend_from_slice(data);
        compressor.set_source(Cursor::new(source));
        compressor.set_drain(Vec::with_capacity(data.len() / 2 + 32));
        compressor.compress();
        if let Some(source) = compressor.take_source() {
            *spare = source.into_inner();
        }
        compressor
            .take_drain()
            .ok_or_else(|| std::io::Error::other("the zstd compressor lost its output"))
    }
}
