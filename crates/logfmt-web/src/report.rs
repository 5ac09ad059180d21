//! What the inspector reports about one file: the counts and damage `logfmt verify --json`
//! gives, a state per block for the map, and the first records.

use serde::Serialize;

/// The inspection of one file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Report {
    /// The file's length in bytes.
    pub bytes: u64,
    /// Complete records read (as LevelDB's reader returns them).
    pub records: u64,
    /// Their payload bytes.
    pub payload_bytes: u64,
    /// The sum of every corruption's bytes, kept or not.
    pub dropped_bytes: u64,
    /// Corruptions reported, kept or not.
    pub corruption_count: u64,
    /// The first corruptions, at most [`Options::max_damage`](crate::Options::max_damage).
    pub corruptions: Vec<Corruption>,
    /// The torn or unwritten end of the log, if any.
    pub tail: Option<Tail>,
    /// What the records hold: `raw`, `write-batch` or `version-edit`.
    pub content: &'static str,
    /// The first records, at most [`Options::max_records`](crate::Options::max_records).
    pub first_records: Vec<RecordView>,
    /// Records whose content did not decode.
    pub undecoded: u64,
    /// One state per 32 KiB block of the file, in file order: the map
    /// ([`BlockState::name`](logfmt_std::layout::BlockState::name)).
    pub blocks: Vec<&'static str>,
    /// A ring image's layout, if the file is one.
    pub ring: Option<RingView>,
    /// The dialect the log was read in (`leveldb`, `rocksdb`, `pebble`), where it is not
    /// logfmt's own reading: named, or found as `logfmt` finds it (a Pebble WAL by its first
    /// chunk). The page reads the log's blocks in it too.
    pub dialect: Option<&'static str>,
    /// Read as Pebble's: the WAL-sync chunk whose synced offset is past the first damage,
    /// which makes it corruption (without it, Pebble reads the damage as the torn end).
    pub pebble_synced: Option<PebbleSynced>,
}

/// The proof that a Pebble WAL's first damage is corruption, as `logfmt verify --json` gives
/// it (`pebble_synced`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PebbleSynced {
    /// Where the damage is.
    pub damage_offset: u64,
    /// The WAL-sync chunk that proves it.
    pub chunk: u64,
    /// The synced offset it carries (past the damage).
    pub synced_offset: u64,
}

/// A corruption: bytes LevelDB's reader drops, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Corruption {
    /// File offset of the report.
    pub offset: u64,
    /// Bytes dropped.
    pub bytes: u64,
    /// LevelDB's reason.
    pub reason: String,
    /// The reason in plain words.
    pub gloss: &'static str,
}

/// The end of the log where no complete record is: a torn write, or space never written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tail {
    /// Where it begins.
    pub offset: u64,
    /// Its bytes, to the end of the file.
    pub bytes: u64,
    /// `torn`; `zero_fill` for zeros to the end of the file; `lost` for damage with
    /// well-formed chunks after it (also listed as a corruption); `old_record` for the bytes
    /// after a recyclable log's end, left by an earlier use of the file (or Pebble's EOF
    /// trailer): not damage.
    pub kind: &'static str,
}

/// A record, as the records list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordView {
    /// Its index among the records read, from 0.
    pub index: u64,
    /// File offset of its first chunk.
    pub offset: u64,
    /// Its length.
    pub length: u64,
    /// Its content in one line: the decoded `WriteBatch` or `VersionEdit`, or its first bytes
    /// escaped.
    pub text: String,
}

/// A hit of a key search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hit {
    /// The record's index among the records read.
    pub index: u64,
    /// File offset of its first chunk.
    pub offset: u64,
    /// The record, described as in [`RecordView::text`].
    pub text: String,
}

/// A ring image's layout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RingView {
    /// Blocks in the image.
    pub blocks: u32,
    /// Blocks per erase group.
    pub group: u32,
    /// The newest block.
    pub newest: u32,
    /// Its lap.
    pub lap: u32,
    /// The oldest block read.
    pub oldest: u32,
    /// The blocks read, oldest to newest.
    pub order: Vec<u32>,
    /// The erased byte value.
    pub erased: u8,
}
