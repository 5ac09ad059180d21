//! What `logfmt stats` reports of a file: [`StatsReport`], its `--json` object (the keys
//! documented on `StatsArgs`, in that order) and its text, a table of rows.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;

use super::{RingJson, SpanJson, plural};
use crate::render::{Report, human_bytes};

/// `logfmt stats` of one file.
#[derive(Debug, serde::Serialize)]
pub(crate) struct StatsReport {
    /// The file, heading the text.
    #[serde(skip)]
    pub(crate) path: PathBuf,
    /// Bytes read (of a ring image: of the blocks read).
    pub(crate) bytes: u64,
    /// Blocks read.
    pub(crate) blocks: u64,
    /// Records read.
    pub(crate) records: u64,
    /// Their bytes.
    pub(crate) payload_bytes: u64,
    /// The smallest, median and largest record (none without records).
    pub(crate) record_size: Option<RecordSize>,
    /// Chunks by type.
    pub(crate) chunks: Chunks,
    /// Bytes of chunk headers.
    pub(crate) header_bytes: u64,
    /// Bytes of block trailers (the zeros after a block's last chunk).
    pub(crate) trailer_bytes: u64,
    /// Bytes skipped: zero headers, erased flash.
    pub(crate) skipped_bytes: u64,
    /// The damage, counted (`logfmt verify --recovery skip` lists it).
    pub(crate) damage: DamageCount,
    /// The torn tail (or the damage LevelDB's reader takes for the end), reported or not.
    pub(crate) tail: Option<super::EndJson>,
    /// The stale bytes after a recyclable log's end at a record of an earlier use of the file.
    pub(crate) stale: Option<Stale>,
    /// The ring of a ring image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ring: Option<Ring>,
    /// logfmt's packs, where there are some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) packs: Option<Packs>,
    /// Zeros to the end of the file: space preallocated or mapped and never written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) zero_fill: Option<SpanJson>,
    /// What the records hold, when they are decoded (`--decode`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) content: Option<ContentCount>,
    /// The dialect read as, with `--format` naming one or auto.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) dialect: Option<super::DialectJson>,
    /// The same, as the text says it.
    #[serde(skip)]
    pub(crate) dialect_line: Option<String>,
    /// Read as Pebble's: the synced offset that proves the first damage corruption (else
    /// Pebble takes it for the torn end, the "tail").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) pebble_synced: Option<super::PebbleSyncedJson>,
    /// Read as Pebble's, where reading stopped and Pebble's verdict on it, as the text says it.
    #[serde(skip)]
    pub(crate) pebble_row: Option<String>,
    /// The file's path, when several are read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) file: Option<String>,
}

/// What the records hold: "kind" (write_batch or version_edit), the records decoded and
/// those that did not decode in full, the batches' lowest and highest sequence numbers, the
/// operations (or fields) by name, the column families written to.
#[derive(Debug, serde::Serialize)]
pub(crate) struct ContentCount {
    /// `write_batch` or `version_edit`.
    pub(crate) kind: &'static str,
    /// Records decoded.
    pub(crate) records: u64,
    /// Records that did not decode in full.
    pub(crate) undecoded: u64,
    /// The lowest and highest sequence numbers of the batches.
    pub(crate) sequences: Option<[u64; 2]>,
    /// Operations (or fields) by name.
    pub(crate) counts: BTreeMap<&'static str, u64>,
    /// Column families written to.
    pub(crate) column_families: Vec<u32>,
}

/// Records read from packs: how many, the bytes of the pack chunks (headers included), what
/// the same records would take as plain records (a header and the record each), and the
/// difference.
#[derive(Debug, serde::Serialize)]
pub(crate) struct Packs {
    /// Pack chunks.
    pub(crate) chunks: u64,
    /// Records in them.
    pub(crate) records: u64,
    /// Bytes of the pack chunks, headers included.
    pub(crate) bytes: u64,
    /// What the records would take as plain records.
    pub(crate) plain_bytes: u64,
    /// `plain_bytes - bytes`.
    pub(crate) bytes_saved: i64,
}

/// A ring image's ring (as `verify` reports it), and the records begun before its oldest
/// block.
#[derive(Debug, serde::Serialize)]
pub(crate) struct Ring {
    /// The ring.
    #[serde(flatten)]
    pub(crate) ring: RingJson,
    /// The image's size, in bytes (the blocks read are its ring's, from the oldest).
    pub(crate) image_bytes: u64,
    /// Records begun before the oldest block, by its ring header.
    pub(crate) records_aged_out: u32,
    /// The read cursors committed in the image (only when there are some).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) cursors: Vec<Cursor>,
}

/// A read cursor committed in a ring image.
#[derive(Debug, serde::Serialize)]
pub(crate) struct Cursor {
    /// Its id.
    pub(crate) id: u8,
    /// The number of the first record it has not delivered.
    pub(crate) next: u32,
    /// The records the ring holds after it.
    pub(crate) undelivered: u64,
    /// The records that aged out before it delivered them.
    pub(crate) aged_out: u32,
    /// How many records past the newest one the ring holds it names (0 unless it was
    /// committed past the log's end).
    pub(crate) ahead: u32,
}

/// The smallest, the median (the lower one of an even count) and the largest record.
#[derive(Debug, serde::Serialize)]
pub(crate) struct RecordSize {
    /// The smallest.
    pub(crate) min: u64,
    /// The median.
    pub(crate) median: u64,
    /// The largest.
    pub(crate) max: u64,
}

/// Chunks by type.
#[derive(Debug, serde::Serialize)]
pub(crate) struct Chunks {
    /// FULL chunks.
    pub(crate) full: u64,
    /// FIRST chunks.
    pub(crate) first: u64,
    /// MIDDLE chunks.
    pub(crate) middle: u64,
    /// LAST chunks.
    pub(crate) last: u64,
    /// Chunks of other types (packs aside).
    pub(crate) unknown: u64,
}

/// Damage, counted.
#[derive(Debug, serde::Serialize)]
pub(crate) struct DamageCount {
    /// Damaged regions.
    pub(crate) regions: u64,
    /// Their bytes.
    pub(crate) bytes: u64,
}

/// The stale bytes of a recyclable log after its end at an old record.
#[derive(Debug, serde::Serialize)]
pub(crate) struct Stale {
    /// Where they begin.
    pub(crate) offset: u64,
    /// How many there are, to the end of the file.
    pub(crate) bytes: u64,
    /// The old record's log number.
    pub(crate) log_number: u32,
    /// `pebble_eof_trailer` when they are Pebble's EOF trailer (as `verify` says it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) kind: Option<&'static str>,
}

impl Report for StatsReport {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut rows = vec![
            (
                "size",
                format!(
                    "{} in {}",
                    human_bytes(self.bytes),
                    plural(self.blocks, "block")
                ),
            ),
            (
                "records",
                format!(
                    "{}, {} of payload",
                    self.records,
                    human_bytes(self.payload_bytes)
                ),
            ),
            ("record sizes", self.sizes_row()),
            ("chunks", self.chunks_row()),
            ("overhead", self.overhead_row()),
            ("skipped", self.skipped_row()),
            ("damage", self.damage_row()),
            ("end", self.end_row()),
        ];
        if let Some(content) = &self.content {
            rows.push(("content", content.row()));
        }
        if let Some(line) = &self.dialect_line {
            let said = line.strip_prefix("dialect: ").unwrap_or(line);
            rows.push(("dialect", said.to_string()));
        }
        if let Some(row) = &self.pebble_row {
            rows.push(("pebble", row.clone()));
        }
        if let Some(packs) = &self.packs {
            rows.push(("packs", packs.row()));
        }
        if let Some(ring) = &self.ring {
            ring.rows(&mut rows);
        }
        writeln!(
            out,
            "{}",
            logfmt_std::advanced::EscapedPath::new(&self.path)
        )?;
        let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        for (key, value) in rows {
            writeln!(out, "  {key:<width$}  {value}")?;
        }
        Ok(())
    }
}

impl StatsReport {
    /// `n` as a percentage of the bytes read.
    fn percent(&self, n: u64) -> f64 {
        if self.bytes == 0 {
            0.0
        } else {
            n as f64 * 100.0 / self.bytes as f64
        }
    }

    fn sizes_row(&self) -> String {
        self.record_size.as_ref().map_or_else(
            || "-".to_owned(),
            |RecordSize { min, median, max }| format!("min {min}, median {median}, max {max}"),
        )
    }

    fn chunks_row(&self) -> String {
        let Chunks {
            full,
            first,
            middle,
            last,
            unknown,
        } = self.chunks;
        let packs = self.packs.as_ref().map_or(0, |packs| packs.chunks);
        let note = if packs == 0 {
            String::new()
        } else {
            format!(", PACK {packs}")
        };
        format!(
            "{}: FULL {full}, FIRST {first}, MIDDLE {middle}, LAST {last}{note}, other {unknown}",
            full + first + middle + last + packs + unknown,
        )
    }

    fn overhead_row(&self) -> String {
        format!(
            "{} of headers ({:.2}%), {} of trailers ({:.2}%)",
            plural(self.header_bytes, "byte"),
            self.percent(self.header_bytes),
            plural(self.trailer_bytes, "byte"),
            self.percent(self.trailer_bytes)
        )
    }

    fn skipped_row(&self) -> String {
        if self.skipped_bytes == 0 {
            "none".to_owned()
        } else {
            format!(
                "{} (zero headers or erased flash)",
                plural(self.skipped_bytes, "byte")
            )
        }
    }

    fn damage_row(&self) -> String {
        if self.damage.regions == 0 {
            "none".to_owned()
        } else {
            format!(
                "{}, {} (see `logfmt verify --recovery skip`)",
                plural(self.damage.regions, "region"),
                plural(self.damage.bytes, "byte")
            )
        }
    }

    /// How the log ends: clean, torn, at zeros, at Pebble's trailer or at an old record.
    fn end_row(&self) -> String {
        match (&self.tail, &self.stale, &self.zero_fill) {
            (None, _, Some(SpanJson { offset, bytes })) => format!(
                "clean, then a zero-filled tail: {} of zeros from offset {offset} \
                 (preallocated or mapped, never written; not torn, not damage)",
                plural(*bytes, "byte")
            ),
            (None, Some(stale), None) if stale.kind.is_some() => format!(
                "clean, at Pebble's EOF trailer (an empty chunk of log {}) at offset {}",
                stale.log_number, stale.offset
            ),
            (Some(t), _, _) => t.describe(),
            (None, Some(stale), None) => format!(
                "clean, at an old record (log {}) at offset {}: {} left by an earlier use of \
                 the file",
                stale.log_number,
                stale.offset,
                plural(stale.bytes, "byte")
            ),
            (None, None, None) => "clean".to_owned(),
        }
    }
}

impl ContentCount {
    fn row(&self) -> String {
        let what = match (self.kind, self.records) {
            ("version_edit", 1) => "version edit",
            ("version_edit", _) => "version edits",
            (_, 1) => "write batch",
            _ => "write batches",
        };
        let mut text = format!("{} {what}", self.records);
        if let Some([low, high]) = self.sequences {
            text += &format!(", sequences {low}..{high}");
        }
        let counts: Vec<String> = self
            .counts
            .iter()
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        if !counts.is_empty() {
            text += &format!("; {}", counts.join(", "));
        }
        if !self.column_families.is_empty() {
            let families: Vec<String> = self.column_families.iter().map(u32::to_string).collect();
            text += &format!("; column families {}", families.join(", "));
        }
        if self.undecoded > 0 {
            text += &format!("; {} that do not decode", plural(self.undecoded, "record"));
        }
        text
    }
}

impl Packs {
    fn row(&self) -> String {
        format!(
            "{} in {}: {} ({} as plain records, {} saved)",
            plural(self.records, "record"),
            plural(self.chunks, "chunk"),
            plural(self.bytes, "byte"),
            plural(self.plain_bytes, "byte"),
            self.bytes_saved
        )
    }
}

impl Ring {
    /// The rows of a ring image: its ring, the records aged out, what disagrees.
    fn rows(&self, rows: &mut Vec<(&'static str, String)>) {
        let ring = &self.ring;
        rows.push((
            "image",
            format!(
                "{}, read in its ring's order",
                crate::render::human_bytes(self.image_bytes)
            ),
        ));
        rows.push((
            "ring",
            format!(
                "{} in {} of {}, newest block {} in lap {}; read from block {} ({})",
                plural(u64::from(ring.blocks), "block"),
                plural(u64::from(ring.blocks.div_ceil(ring.group)), "erase group"),
                plural(u64::from(ring.group), "block"),
                ring.newest,
                ring.lap,
                ring.oldest,
                plural(ring.blocks_read, "block"),
            ),
        ));
        rows.push((
            "aged out",
            format!(
                "{} (begun before the oldest block, by its ring header)",
                plural(u64::from(self.records_aged_out), "record")
            ),
        ));
        for cursor in &self.cursors {
            let aged = match cursor.aged_out {
                0 => String::new(),
                n => format!(
                    ", {} aged out before delivery",
                    plural(u64::from(n), "record")
                ),
            };
            let state = match cursor.ahead {
                0 => format!("{} not delivered", plural(cursor.undelivered, "record")),
                n => format!(
                    "past the newest record by {} (nothing to deliver until more are written)",
                    plural(u64::from(n), "record")
                ),
            };
            rows.push((
                "cursor",
                format!("{} at record {}: {state}{aged}", cursor.id, cursor.next),
            ));
        }
        for disagreement in &ring.disagreements {
            rows.push(("disagrees", disagreement.clone()));
        }
    }
}
