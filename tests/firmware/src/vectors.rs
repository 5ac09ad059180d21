//! The 27 LevelDB vectors of `tests/data/leveldb/`, embedded, with what LevelDB's own reader
//! returned for each (`EXPECTED.txt`, turned into this table by `build.rs` on the host).

/// A record LevelDB's reader returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expected {
    /// Payload length.
    pub len: u32,
    /// `LastRecordOffset` after reading it.
    pub offset: u64,
    /// CRC-32C of the payload.
    pub crc32c: u32,
}

/// A drop LevelDB's reader reported: `Reporter::Corruption(bytes, status)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drop {
    /// Bytes dropped.
    pub bytes: u64,
    /// The reason, without LevelDB's `Corruption: ` prefix.
    pub reason: &'static str,
}

/// One vector.
#[derive(Debug)]
pub struct Vector {
    /// File name without `.log`.
    pub name: &'static str,
    /// The file.
    pub data: &'static [u8],
    /// The records, in order.
    pub records: &'static [Expected],
    /// The drops, in order.
    pub drops: &'static [Drop],
}

include!(concat!(env!("OUT_DIR"), "/expected.rs"));

/// The vectors a writer produces byte for byte from their own records (the rest are damaged,
/// zero-filled or torn); the host test `tests/tests/writer_vectors.rs` asserts the same set.
pub const UNDAMAGED: [&str; 12] = [
    "readwrite",
    "empty_file",
    "fragmentation",
    "example_1000_97270_8000",
    "marginal_trailer",
    "marginal_trailer2",
    "short_trailer",
    "aligned_eof",
    "exact_block_fill",
    "multi_block_record_then_correct",
    "open_for_append",
    "initial_offset_log",
];
