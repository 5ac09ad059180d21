//! What `logfmt map` found in one file: the report that the terminal map, its JSON and the
//! HTML picture are all rendered from.

use logfmt_std::layout::BlockState;

/// What `map` shows of one file.
#[derive(Debug, serde::Serialize)]
pub(crate) struct MapReport {
    /// The file's path (control characters escaped).
    pub(crate) file: String,
    /// Its length.
    pub(crate) bytes: u64,
    /// One letter per block.
    pub(crate) blocks: String,
    /// Records read.
    pub(crate) records: u64,
    /// Their bytes.
    pub(crate) payload_bytes: u64,
    /// Damaged regions, counted (all of them; `damage` lists the first).
    pub(crate) corruptions: u64,
    /// The bytes of the damaged regions.
    pub(crate) dropped_bytes: u64,
    /// The first damaged regions (`--max-errors`), in file order.
    pub(crate) damage: Vec<DamageLine>,
    /// How the log ends, where it does not end cleanly at a record.
    pub(crate) tail: Option<TailLine>,
    /// Read as Pebble's: the synced offset that proves the first damage corruption.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) pebble_synced: Option<super::PebbleSyncedJson>,
    /// Read as Pebble's: its verdict on the log's end, as the text says it.
    #[serde(skip)]
    pub(crate) pebble: Option<String>,
    /// The ring of a ring image.
    pub(crate) ring: Option<RingLine>,
    /// The states, one per block (for the picture).
    #[serde(skip)]
    pub(crate) states: Vec<BlockState>,
}

/// A corruption, with its reason in plain words.
#[derive(Debug, serde::Serialize)]
pub(crate) struct DamageLine {
    /// Where it begins.
    pub(crate) offset: u64,
    /// How many bytes it spans.
    pub(crate) bytes: u64,
    /// LevelDB's reason.
    pub(crate) reason: String,
    /// The reason in plain words.
    pub(crate) gloss: &'static str,
}

/// The torn, damaged or zero-filled end.
#[derive(Debug, serde::Serialize)]
pub(crate) struct TailLine {
    /// Where it begins.
    pub(crate) offset: u64,
    /// How many bytes it spans, to the end of the file.
    pub(crate) bytes: u64,
    /// `torn`, `zero_fill`, or `damage` (LevelDB's reader ends the log there, but well-formed
    /// chunks follow: not a torn write, as `verify` tells it).
    pub(crate) kind: &'static str,
}

impl TailLine {
    /// The end in words, for the summaries of the map and the picture.
    pub(crate) fn describe(&self) -> String {
        let what = match self.kind {
            "zero_fill" => "zero-filled tail",
            "damage" => "the log ends in damage, not a torn write:",
            _ => "torn tail",
        };
        if self.kind == "damage" {
            format!("{what} {} bytes at offset {}", self.bytes, self.offset)
        } else {
            format!("{what} of {} bytes at offset {}", self.bytes, self.offset)
        }
    }
}

/// A ring image's geometry and position.
#[derive(Debug, serde::Serialize)]
pub(crate) struct RingLine {
    /// Blocks in the ring.
    pub(crate) blocks: u32,
    /// Blocks per erase group.
    pub(crate) group: u32,
    /// The newest block.
    pub(crate) newest: u32,
    /// The newest block's lap.
    pub(crate) lap: u32,
    /// The oldest block, where reading starts.
    pub(crate) oldest: u32,
}
