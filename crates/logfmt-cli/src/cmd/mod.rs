//! The subcommands.

pub(crate) mod cat;
pub(crate) mod dump;
pub(crate) mod export;
pub(crate) mod map;
pub(crate) mod salvage;
pub(crate) mod split;
pub(crate) mod stats;
pub(crate) mod verify;
pub(crate) mod write;

use logfmt_std::{Damage, advanced::RingImage};

use std::io::Write;
use std::path::Path;

/// Prints a damage note to standard error: one line with the offset, the bytes concerned and
/// the reason (LevelDB's, for what LevelDB reports, with its gloss).
fn note(path: &Path, damage: &Damage) {
    say(
        path,
        &format!("{damage}{}", crate::gloss::Suffix(&damage.kind)),
    );
}

/// Prints `logfmt: FILE: message` on standard error.
pub(crate) fn say(path: &Path, message: &str) {
    let mut stderr = std::io::stderr().lock();
    // Nothing useful can be done if standard error is gone.
    let _ = writeln!(
        stderr,
        "logfmt: {}: {message}",
        logfmt_std::advanced::EscapedPath::new(path)
    );
}

/// `n word` or `n words`.
pub(crate) fn plural(n: u64, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// A damage in JSON: `{"offset": n, "bytes": n, "reason": "..."}`.
#[derive(Debug, serde::Serialize)]
struct DamageJson {
    offset: u64,
    bytes: u64,
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

/// A region of a file in JSON: `{"offset": n, "bytes": n}`.
#[derive(Debug, serde::Serialize)]
struct SpanJson {
    offset: u64,
    bytes: u64,
}

/// A ring image in JSON: `{"blocks", "group", "newest", "lap", "oldest", "blocks_read",
/// "erased"}` — the blocks in the ring, blocks per erase group, the newest block and its lap,
/// the oldest block (where reading starts), the blocks read from it to the newest, and the
/// erased value its headers give ("ff" or "00", as `--erased` names it); then, only when
/// there are some, "disagreements": what in the image disagrees with the ring (blocks of
/// another lap or geometry, an image cut short), one line each.
#[derive(Debug, serde::Serialize)]
struct RingJson {
    blocks: u32,
    group: u32,
    newest: u32,
    lap: u32,
    oldest: u32,
    blocks_read: u64,
    erased: String,
    /// What in the image disagrees with the ring, one line each (only when there is some).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    disagreements: Vec<String>,
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
