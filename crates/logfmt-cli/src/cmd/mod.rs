//! The subcommands.

pub(crate) mod cat;
pub(crate) mod cat_printer;
pub(crate) mod cat_report;
pub(crate) mod chunks;
pub(crate) mod chunks_report;
pub(crate) mod copy_report;
pub(crate) mod defmt;
pub(crate) mod defmt_report;
pub(crate) mod export;
pub(crate) mod map;
pub(crate) mod map_report;
pub(crate) mod salvage;
pub(crate) mod split;
pub(crate) mod stats;
pub(crate) mod stats_report;
pub(crate) mod verify;
pub(crate) mod verify_report;
pub(crate) mod wal;
pub(crate) mod wal_report;
pub(crate) mod write;

use logfmt_std::{
    Damage,
    advanced::{PebbleEnd, RingImage},
};

use crate::notes::{plural, say};

/// A damage in JSON: `{"offset": n, "bytes": n, "reason": "..."}`.
#[derive(Debug, serde::Serialize)]
struct DamageJson {
    /// Where it begins.
    offset: u64,
    /// How many bytes it spans.
    bytes: u64,
    /// LevelDB's reason.
    reason: String,
}

impl From<&Damage> for DamageJson {
    fn from(damage: &Damage) -> Self {
        Self {
            offset: damage.offset,
            bytes: damage.bytes,
            reason: damage.kind.to_string(),
        }
    }
}

/// The dialect a log was read as, in JSON: `{"name", "candidates", "evidence"}` (`--format`
/// naming a dialect, or auto).
#[derive(Debug, serde::Serialize)]
pub(crate) struct DialectJson {
    /// `leveldb`, `rocksdb`, `pebble`, `logfmt`, or `ambiguous` where auto could not tell.
    name: &'static str,
    /// Where ambiguous: the dialects that read the log alike.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    candidates: Vec<&'static str>,
    /// What decided auto: the first chunk that told, as a sentence.
    #[serde(skip_serializing_if = "Option::is_none")]
    evidence: Option<String>,
}

impl DialectJson {
    /// The JSON of `choice`, if `--format` asked for a dialect or auto.
    pub(crate) fn of(choice: &crate::format::DialectChoice) -> Option<Self> {
        choice.asked.then(|| Self {
            name: choice.name(),
            candidates: choice.candidates(),
            evidence: choice.found.and_then(|f| f.reason()),
        })
    }
}

/// `pebble_synced`, read as Pebble's: the proof that the log's first damage is corruption
/// (`{"damage_offset", "chunk", "synced_offset"}`), told alike by `verify`, `stats`, `map` and
/// `cat`; absent where Pebble takes the damage for the torn end.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub(crate) struct PebbleSyncedJson {
    /// Where the damage is.
    damage_offset: u64,
    /// The WAL-sync chunk that proves it.
    chunk: u64,
    /// The synced offset it carries (past the damage).
    synced_offset: u64,
}

impl PebbleSyncedJson {
    /// The proof in `end`, if it is one.
    pub(crate) fn of(end: Option<&PebbleEnd>) -> Option<Self> {
        let end = end?;
        end.proof().map(|(chunk, synced_offset)| Self {
            damage_offset: end.offset(),
            chunk,
            synced_offset,
        })
    }
}

/// Pebble's verdict on where its WAL ends, in words: the line `verify`, `stats`, `map` and
/// `cat` print.
pub(crate) fn pebble_line(end: &PebbleEnd) -> String {
    let offset = end.offset();
    match end.proof() {
        Some((chunk, synced)) => format!(
            "damage at offset {offset}, as Pebble reads it: the WAL-sync chunk at offset \
             {chunk} says the log was synced to offset {synced}, past it (corruption, not a \
             torn write)"
        ),
        None => format!(
            "the log ends at offset {offset}, as Pebble reads it: no WAL-sync chunk after \
             it says the log was synced past it, so the bytes there are a torn write, not \
             corruption (Pebble's unexpected EOF)"
        ),
    }
}

/// A region of a file in JSON: `{"offset": n, "bytes": n}`.
#[derive(Debug, serde::Serialize)]
pub(crate) struct SpanJson {
    /// Where it begins.
    pub(crate) offset: u64,
    /// How many bytes it spans.
    pub(crate) bytes: u64,
}

/// The end of a log the reader reported, in JSON, told alike by `verify` and `stats`: a torn
/// write as `{"offset", "bytes"}`; damage that LevelDB's reader takes for the end although
/// well-formed chunks follow it as `{"offset", "bytes", "kind": "damage", "chunks_after",
/// "next_chunk"}`.
#[derive(Debug, serde::Serialize)]
#[serde(untagged)]
pub(crate) enum EndJson {
    /// A torn write.
    Torn(SpanJson),
    /// Damage, not a torn write: well-formed chunks follow it.
    Lost {
        /// Where it begins.
        offset: u64,
        /// How many bytes it spans, to the end of the input.
        bytes: u64,
        /// `damage`.
        kind: &'static str,
        /// Well-formed chunks after it.
        chunks_after: u64,
        /// The offset of the first of them.
        next_chunk: u64,
    },
}

impl From<logfmt_std::Damage> for EndJson {
    fn from(tail: logfmt_std::Damage) -> Self {
        match tail.kind {
            logfmt_std::DamageKind::LostTail { chunks, next } => Self::Lost {
                offset: tail.offset,
                bytes: tail.bytes,
                kind: "damage",
                chunks_after: chunks,
                next_chunk: next,
            },
            _ => Self::Torn(SpanJson {
                offset: tail.offset,
                bytes: tail.bytes,
            }),
        }
    }
}

impl EndJson {
    /// The end in words: `torn tail: N bytes at offset O`, or for damage, that it is not a
    /// torn write and what follows it.
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Torn(SpanJson { offset, bytes }) => {
                format!("torn tail: {} at offset {offset}", plural(*bytes, "byte"))
            }
            Self::Lost {
                offset,
                bytes,
                chunks_after,
                next_chunk,
                ..
            } => format!(
                "damage, not a torn write: {} at offset {offset} that LevelDB's reader stops \
                 at, with {} after it from offset {next_chunk}",
                plural(*bytes, "byte"),
                plural(*chunks_after, "well-formed chunk"),
            ),
        }
    }
}

/// A ring image in JSON: `{"blocks", "group", "newest", "lap", "oldest", "blocks_read",
/// "erased"}` — the blocks in the ring, blocks per erase group, the newest block and its lap,
/// the oldest block (where reading starts), the blocks read from it to the newest, and the
/// erased value its headers give ("ff" or "00", as `--erased` names it); then, only when
/// there are some, "disagreements": what in the image disagrees with the ring (blocks of
/// another lap or geometry, an image cut short), one line each.
#[derive(Debug, serde::Serialize)]
pub(crate) struct RingJson {
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
    /// Blocks read, from the oldest to the newest.
    pub(crate) blocks_read: u64,
    /// The erased value the headers give: `ff` or `00`.
    pub(crate) erased: String,
    /// What in the image disagrees with the ring, one line each (only when there is some).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) disagreements: Vec<String>,
}

impl From<&RingImage> for RingJson {
    fn from(image: &RingImage) -> Self {
        let ring = image.ring();
        Self {
            blocks: ring.blocks(),
            group: ring.group(),
            newest: ring.head(),
            lap: ring.lap(),
            oldest: image.oldest(),
            blocks_read: image.order().count() as u64,
            erased: format!("{:02x}", image.erased()),
            disagreements: image.disagreements().map(|d| d.to_string()).collect(),
        }
    }
}
