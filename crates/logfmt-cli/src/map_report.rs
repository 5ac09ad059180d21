//! What `logfmt map` found in one file: the report that the terminal map, its JSON and the
//! HTML picture are all rendered from.

use logfmt_std::layout::BlockState;

/// What `map` shows of one file.
#[derive(Debug, serde::Serialize)]
pub(crate) struct MapReport {
    pub(crate) file: String,
    pub(crate) bytes: u64,
    /// One letter per block.
    pub(crate) blocks: String,
    pub(crate) records: u64,
    pub(crate) payload_bytes: u64,
    pub(crate) corruptions: u64,
    pub(crate) dropped_bytes: u64,
    pub(crate) damage: Vec<DamageLine>,
    pub(crate) tail: Option<TailLine>,
    pub(crate) ring: Option<RingLine>,
    /// The states, one per block (for the picture).
    #[serde(skip)]
    pub(crate) states: Vec<BlockState>,
}

/// A corruption, with its reason in plain words.
#[derive(Debug, serde::Serialize)]
pub(crate) struct DamageLine {
    pub(crate) offset: u64,
    pub(crate) bytes: u64,
    pub(crate) reason: String,
    pub(crate) gloss: &'static str,
}

/// The torn or zero-filled end.
#[derive(Debug, serde::Serialize)]
pub(crate) struct TailLine {
    pub(crate) offset: u64,
    pub(crate) bytes: u64,
    pub(crate) kind: &'static str,
}

/// A ring image's geometry and position.
#[derive(Debug, serde::Serialize)]
pub(crate) struct RingLine {
    pub(crate) blocks: u32,
    pub(crate) group: u32,
    pub(crate) newest: u32,
    pub(crate) lap: u32,
    pub(crate) oldest: u32,
}
