//! Compression: zstd for a [pack](logfmt_core::pack)'s body (kept only when it makes the pack
//! smaller) and RocksDB's WAL compression, both decoded within a bound.
//!
//! The codec is built with the `zstd` feature only (zstd is C code). Without it the
//! [`Contexts`] here code nothing: [`BUILT`] is false, a writer asked to compress refuses
//! ([`LogWriterError::NeedsFeature`](crate::LogWriterError::NeedsFeature)) and a reader meeting
//! a compressed record or pack says so ([`ReadError::NeedsFeature`](crate::ReadError::NeedsFeature)).

#[cfg(feature = "zstd")]
#[path = "compression/zstd.rs"]
mod codec;
#[cfg(not(feature = "zstd"))]
#[path = "compression/absent.rs"]
mod codec;

pub(crate) use codec::{BUILT, Contexts};

/// The crate feature that builds the codec, as errors name it.
pub(crate) const FEATURE: &str = "zstd";

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
