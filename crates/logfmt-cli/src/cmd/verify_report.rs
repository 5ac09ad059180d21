//! What `logfmt verify` reports of a file: [`VerifyReport`], its `--json` object (the keys
//! documented on `VerifyArgs`, in that order: [`Doc`]) and its text, a line and the details.

use std::io::{self, Write};
use std::path::PathBuf;

use logfmt_std::{
    Damage, DamageKind, RecoveryMode,
    advanced::{RingImage, StaleTail},
};
use serde::{Serialize, Serializer};

use super::{DamageJson, RingJson, plural};
use crate::bounded_reports::{DamageReports, Reports};
use crate::decode::Undecoded;
use crate::story::{NotALog, Tail};

/// What `verify` found in one file.
#[derive(Debug)]
pub(crate) struct VerifyReport {
    /// The file, as the text names it.
    pub(crate) path: PathBuf,
    /// Its path in the JSON, when several files are read.
    pub(crate) file: Option<String>,
    /// Whether the text lists the damaged regions and undecoded records (not `--summary`).
    pub(crate) list: bool,
    /// The hint the text ends with, if any (not with `--quiet`).
    pub(crate) hint: Option<&'static str>,
    pub(crate) records: u64,
    pub(crate) payload_bytes: u64,
    /// The damage reported: the first ones, and a count.
    pub(crate) damage: DamageReports,
    pub(crate) recovery: RecoveryMode,
    pub(crate) tail: Option<Damage>,
    /// Damage that loses records the recovery mode does not report (the tail, where
    /// well-formed chunks follow it): a corruption in the status and the JSON.
    pub(crate) lost: Option<Damage>,
    pub(crate) stale: Option<StaleTail>,
    pub(crate) stopped_at: Option<Damage>,
    pub(crate) ring: Option<RingImage>,
    /// The tail is zeros to the end of the file: not torn, not damage.
    pub(crate) zero_fill: Option<Tail>,
    /// The stale bytes are Pebble's EOF trailer.
    pub(crate) pebble_eof: bool,
    /// No record, only damage or a torn tail, and no chunk header at offset 0: not a log at
    /// all (exit status 3).
    pub(crate) not_a_log: Option<NotALog>,
    /// Records whose content (a WriteBatch, a VersionEdit) could not be decoded: where, and
    /// why (the first ones, and a count).
    pub(crate) undecoded: Reports<(u64, Undecoded)>,
    /// Records intact but for a tag unknown to this version (a newer writer's), with the
    /// content decoded by the file's name: reported, not damage (the first ones, and a count).
    pub(crate) unknown: Reports<(u64, Undecoded)>,
    /// Records in logfmt's packs, which LevelDB and RocksDB drop.
    pub(crate) packed: Packed,
    /// The dialect read as, when `--format` named one or auto.
    pub(crate) dialect: Option<crate::format::DialectChoice>,
    /// Pebble's verdict on where its WAL ends, read as Pebble's.
    pub(crate) pebble: Option<logfmt_std::advanced::PebbleEnd>,
}

/// `--json`: the keys documented on `VerifyArgs`, in that order.
#[derive(Serialize)]
pub(crate) struct Doc<'a> {
    /// Records read.
    records: u64,
    /// Their bytes.
    payload_bytes: u64,
    /// The bytes of the corruptions.
    dropped_bytes: u64,
    /// The damage, as far as it is listed.
    corruptions: Vec<DamageJson>,
    /// All the damage, counted, when some is not listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    corruptions_total: Option<u64>,
    /// The damage not listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    corruptions_not_shown: Option<u64>,
    /// The recovery mode's name.
    recovery: &'static str,
    /// How the log ends, where it does not end cleanly at a record.
    tail: Option<TailJson>,
    /// Where point-in-time or absolute recovery stopped.
    stopped_at: Option<DamageJson>,
    /// The ring of a ring image.
    #[serde(skip_serializing_if = "Option::is_none")]
    ring: Option<RingJson>,
    /// Records whose content does not decode.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    undecoded: Vec<UndecodedJson>,
    /// Records intact but for a tag unknown to this version.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    unknown_tags: Vec<UndecodedJson>,
    /// All the records that do not decode, counted, when some are not listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    undecoded_total: Option<u64>,
    /// Those not listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    undecoded_not_shown: Option<u64>,
    /// Records in logfmt's packs.
    #[serde(skip_serializing_if = "Option::is_none")]
    logfmt_only: Option<Packed>,
    /// `text` or `other_bytes` for a file that is not a log.
    #[serde(skip_serializing_if = "Option::is_none")]
    not_a_log: Option<&'static str>,
    /// The dialect read as.
    #[serde(skip_serializing_if = "Option::is_none")]
    dialect: Option<super::DialectJson>,
    /// Read as Pebble's: the synced offset that proves the damage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pebble_synced: Option<super::PebbleSyncedJson>,
    /// The file's path, when several are read.
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
}

/// A record whose content does not decode.
#[derive(Serialize)]
struct UndecodedJson {
    /// Where it begins.
    offset: u64,
    /// Why it does not decode.
    reason: String,
}

/// The records of `list` that do not decode, in JSON.
fn listed(list: &[(u64, Undecoded)]) -> Vec<UndecodedJson> {
    list.iter()
        .map(|(offset, reason)| UndecodedJson {
            offset: *offset,
            reason: reason.to_string(),
        })
        .collect()
}

/// A torn or unwritten tail, or the stale bytes after a recycled log's end.
#[derive(Serialize)]
#[serde(untagged)]
enum TailJson {
    /// A torn write, or damage that is not one.
    End(super::EndJson),
    /// The bytes of an earlier use of a recycled file (or Pebble's EOF trailer).
    Stale {
        offset: u64,
        bytes: u64,
        kind: &'static str,
        log_number: u32,
    },
    /// Zeros to the end of the file: not torn, not damage.
    Zeros {
        offset: u64,
        bytes: u64,
        kind: &'static str,
    },
}

impl Serialize for VerifyReport {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.doc().serialize(serializer)
    }
}

impl VerifyReport {
    pub(crate) fn dropped_bytes(&self) -> u64 {
        self.damage.bytes() + self.lost.map_or(0, |lost| lost.bytes)
    }

    /// Whether records are known lost, or do not decode, or a ring image was not read as its
    /// writer left it (its headers disagree): the exit status is 1.
    pub(crate) fn damaged(&self) -> bool {
        let disagrees = self
            .ring
            .as_ref()
            .is_some_and(|ring| ring.disagreements().next().is_some());
        !self.damage.is_empty() || self.lost.is_some() || !self.undecoded.is_empty() || disagrees
    }

    /// The report as `--json` prints it.
    fn doc(&self) -> Doc<'_> {
        Doc {
            records: self.records,
            payload_bytes: self.payload_bytes,
            dropped_bytes: self.dropped_bytes(),
            corruptions: self
                .damage
                .kept()
                .iter()
                .chain(&self.lost)
                .map(DamageJson::from)
                .collect(),
            corruptions_total: (self.damage.left_out() > 0).then(|| self.damage.count()),
            corruptions_not_shown: Some(self.damage.left_out()).filter(|&n| n > 0),
            recovery: self.recovery.name(),
            tail: self.tail_json(),
            stopped_at: self.stopped_at.as_ref().map(DamageJson::from),
            ring: self.ring.as_ref().map(RingJson::from),
            undecoded: listed(self.undecoded.kept()),
            unknown_tags: listed(self.unknown.kept()),
            undecoded_total: (self.undecoded.left_out() > 0).then(|| self.undecoded.count()),
            undecoded_not_shown: Some(self.undecoded.left_out()).filter(|&n| n > 0),
            logfmt_only: (self.packed.records > 0).then_some(self.packed),
            not_a_log: self.not_a_log.map(NotALog::name),
            dialect: self.dialect.as_ref().and_then(super::DialectJson::of),
            pebble_synced: super::PebbleSyncedJson::of(self.pebble.as_ref()),
            file: self.file.as_deref(),
        }
    }

    /// How the log ends, in JSON: torn or lost, else stale, else zeros.
    fn tail_json(&self) -> Option<TailJson> {
        self.tail
            .map(|t| TailJson::End(t.into()))
            .or_else(|| {
                self.stale.map(|s| TailJson::Stale {
                    offset: s.offset,
                    bytes: s.bytes,
                    kind: if self.pebble_eof {
                        "pebble_eof_trailer"
                    } else {
                        "old_record"
                    },
                    log_number: s.log_number,
                })
            })
            .or_else(|| {
                self.zero_fill
                    .map(|Tail::ZeroFilled { offset, bytes }| TailJson::Zeros {
                        offset,
                        bytes,
                        kind: "zero_fill",
                    })
            })
    }
}

impl crate::render::Report for VerifyReport {
    /// The text report: a line, then the ring, packs, the damaged regions and undecoded
    /// records (unless `--summary`), and how the log ends.
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        let path = logfmt_std::advanced::EscapedPath::new(&self.path);
        if let Some(not) = self.not_a_log {
            // One line: the damage found reading it says nothing more.
            return writeln!(out, "{path}: {}", not.explain());
        }
        writeln!(out, "{path}: {}", self.headline())?;
        if let Some(line) = self.dialect.and_then(|d| d.line()) {
            writeln!(out, "  {line}")?;
        }
        self.write_ring_and_packs(out)?;
        if self.list {
            self.write_damage(out)?;
            self.write_undecoded(out)?;
        }
        self.write_counts(out)?;
        self.write_end(out)?;
        if let Some(hint) = self.hint {
            writeln!(out, "  hint: {hint}")?;
        }
        Ok(())
    }
}

impl VerifyReport {
    /// `N records, N bytes of payload, ` and what was dropped or lost.
    fn headline(&self) -> String {
        let read = format!(
            "{}, {} of payload",
            plural(self.records, "record"),
            plural(self.payload_bytes, "byte"),
        );
        if let (true, Some(lost)) = (self.damage.is_empty(), self.lost) {
            format!(
                "{read}, {} lost at offset {} (damage LevelDB's reader does not report)",
                plural(lost.bytes, "byte"),
                lost.offset
            )
        } else if self.damage.is_empty() {
            format!("{read}, no corruption")
        } else {
            let what = if self.damage.only_corruption() {
                "corruption"
            } else {
                "damaged region"
            };
            format!(
                "{read}, {} dropped in {}",
                plural(self.dropped_bytes(), "byte"),
                plural(self.damage.count(), what)
            )
        }
    }

    fn write_ring_and_packs(&self, out: &mut dyn Write) -> io::Result<()> {
        if let Some(ring) = &self.ring {
            writeln!(out, "  a ring image: {ring}")?;
            for disagreement in ring.disagreements() {
                writeln!(out, "  the ring image disagrees: {disagreement}")?;
            }
        }
        if let Some(first) = self.packed.offset {
            writeln!(
                out,
                "  {} in {} (from offset {first}): LevelDB and RocksDB report these \
                 chunks as unknown record types and drop their records",
                plural(self.packed.records, "record"),
                plural(self.packed.packs, "logfmt pack"),
            )?;
        }
        Ok(())
    }

    /// The damaged regions kept, one line each, their offsets aligned.
    fn write_damage(&self, out: &mut dyn Write) -> io::Result<()> {
        crate::render::write_damage_lines(out, self.damage.kept(), |kind| {
            Some(match kind {
                DamageKind::Corruption(_) => "dropped",
                DamageKind::TornTail => "torn",
                DamageKind::LostTail { .. } => "lost",
                _ => "skipped",
            })
        })
    }

    /// The records kept that do not decode, and those unknown to this version.
    fn write_undecoded(&self, out: &mut dyn Write) -> io::Result<()> {
        for (offset, reason) in self.undecoded.kept() {
            writeln!(
                out,
                "  offset {offset}: the record does not decode: {reason}"
            )?;
        }
        for (offset, reason) in self.unknown.kept() {
            writeln!(
                out,
                "  offset {offset}: unknown to this version (written by a newer LevelDB, RocksDB \
                 or Pebble?), not damage: {reason}; `--decode version-edit` counts it as \
                 undecoded"
            )?;
        }
        Ok(())
    }

    /// The counts of what is not listed, and where reading stopped.
    fn write_counts(&self, out: &mut dyn Write) -> io::Result<()> {
        if !self.undecoded.is_empty() {
            let listed = if self.list {
                self.undecoded.kept().len() as u64
            } else {
                0
            };
            writeln!(
                out,
                "  {} whose content does not decode{}",
                plural(self.undecoded.count(), "record"),
                match self.undecoded.count() - listed {
                    0 => String::new(),
                    hidden => format!(" ({hidden} not shown)"),
                }
            )?;
        }
        if let Some(hidden) = Some(self.damage.left_out()).filter(|&n| n > 0 && self.list) {
            writeln!(out, "  ... and {hidden} more not shown (--max-errors)")?;
        }
        if let Some(stop) = self.stopped_at {
            writeln!(
                out,
                "  reading stopped at offset {} ({} recovery)",
                stop.offset, self.recovery
            )?;
        }
        Ok(())
    }

    /// How the log ends, where that is worth a line: torn, lost, zeros, stale bytes.
    fn write_end(&self, out: &mut dyn Write) -> io::Result<()> {
        let tolerate = self.recovery == RecoveryMode::TolerateCorruptedTailRecords;
        match self.tail {
            Some(tail) if tolerate => match tail.kind {
                DamageKind::LostTail { chunks, next } => writeln!(
                    out,
                    "  the log ends in damage, not a torn write: {} at offset {} that LevelDB's \
                     reader stops at, with {} after it from offset {next} (`logfmt salvage` \
                     recovers their records)",
                    plural(tail.bytes, "byte"),
                    tail.offset,
                    plural(chunks, "well-formed chunk"),
                )?,
                _ => writeln!(
                    out,
                    "  the log ends in a torn tail: {} at offset {} (a crash while writing; \
                     LevelDB ignores it; `logfmt write --append --truncate-torn-tail` removes it)",
                    plural(tail.bytes, "byte"),
                    tail.offset
                )?,
            },
            _ => {}
        }
        if let Some(end) = &self.pebble {
            writeln!(out, "  {}", super::pebble_line(end))?;
        }
        if let Some(zeros) = self.zero_fill {
            writeln!(out, "  {}", zeros.explain())?;
        }
        match self.stale {
            Some(stale) if self.pebble_eof => writeln!(
                out,
                "  the log ends cleanly at offset {} with Pebble's EOF trailer: an empty chunk \
                 of log {} that Pebble writes when it closes a log (not corruption)",
                stale.offset, stale.log_number
            ),
            Some(stale) => writeln!(
                out,
                "  the log ends cleanly at offset {} at a record of log {} (not corruption): \
                 the {} after it are left by an earlier use of the file (RocksDB recycles log \
                 files)",
                stale.offset,
                stale.log_number,
                plural(stale.bytes, "byte")
            ),
            None => Ok(()),
        }
    }
}

/// Records read from logfmt's packs (compressed or not): chunks LevelDB's and RocksDB's
/// readers report as unknown record types, dropping their records.
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub(crate) struct Packed {
    /// Records in packs.
    pub(crate) records: u64,
    /// Packs.
    pub(crate) packs: u64,
    /// File offset of the first pack.
    pub(crate) offset: Option<u64>,
}

impl Packed {
    /// Counts a record at `offset` (its pack's, for a record from a pack), with its index in
    /// its pack.
    pub(crate) fn add(&mut self, offset: u64, index: Option<u32>) {
        let Some(index) = index else { return };
        self.records += 1;
        if index == 0 {
            self.packs += 1;
        }
        self.offset.get_or_insert(offset);
    }

    /// Adds what `other` counted (in a later part of the same log).
    pub(crate) fn merge(&mut self, other: Self) {
        self.records += other.records;
        self.packs += other.packs;
        self.offset = self.offset.or(other.offset);
    }
}
