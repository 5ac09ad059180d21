//! `--decode`: records shown as what LevelDB and RocksDB keep in them — the `WriteBatch` of a
//! write-ahead log record, the `VersionEdit` of a MANIFEST record — in text escaped as
//! `leveldbutil dump` escapes it, or in JSON.

mod batch;
mod edit;
mod shape;
#[cfg(test)]
mod tests;

use std::io::{self, Write};
use std::path::Path;

use logfmt_std::content::{DbFileKind, VersionEdit, WriteBatch};

use crate::escape::Scratch;
#[cfg(test)]
pub(crate) use batch::batch_document;
use batch::{batch_json, batch_text, pebble_json, pebble_text};
#[cfg(test)]
pub(crate) use edit::edit_document;
use edit::write_edit;
pub(crate) use shape::{Style, Undecoded};

/// `--decode`: what the records of a log hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum Decode {
    /// By the file's name: NNNNNN.log is a write-ahead log (write-batch), MANIFEST-NNNNNN a
    /// MANIFEST (version-edit), anything else raw. A database directory's files are known.
    #[default]
    Auto,
    /// The records as they are (printed by `cat` as its --output says).
    Raw,
    /// LevelDB's and RocksDB's WriteBatch: sequence number, count and every operation.
    WriteBatch,
    /// LevelDB's and RocksDB's VersionEdit: the fields of every MANIFEST record.
    VersionEdit,
}

/// What a log's records are decoded as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Content {
    /// Not decoded.
    Raw,
    /// `WriteBatch` records.
    WriteBatch,
    /// Pebble's batches: the same header, Pebble's key kinds (read as Pebble's WAL).
    PebbleBatch,
    /// `VersionEdit` records.
    VersionEdit,
}

impl Content {
    /// What the records hold read as `dialect`'s log: a Pebble WAL holds Pebble's batches.
    pub(crate) fn in_dialect(self, dialect: logfmt_std::advanced::Dialect) -> Self {
        match (self, dialect) {
            (Self::WriteBatch, logfmt_std::advanced::Dialect::Pebble) => Self::PebbleBatch,
            (content, _) => content,
        }
    }
}

impl Decode {
    /// What the records of `path` are decoded as; `kind` is what a database directory says
    /// the file is.
    pub(crate) fn content(self, path: &Path, kind: Option<DbFileKind>) -> Content {
        match self {
            Self::Raw => Content::Raw,
            Self::WriteBatch => Content::WriteBatch,
            Self::VersionEdit => Content::VersionEdit,
            Self::Auto => match kind {
                Some(DbFileKind::Manifest) => Content::VersionEdit,
                Some(_) => Content::WriteBatch,
                None => by_name(path),
            },
        }
    }
}

/// `NNNNNN.log` holds write batches, `MANIFEST-NNNNNN` version edits; other names are raw.
pub(crate) fn by_name(path: &Path) -> Content {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match path.file_name().and_then(|n| n.to_str()) {
        Some(name) if name.strip_suffix(".log").is_some_and(digits) => Content::WriteBatch,
        Some(name) if name.strip_prefix("MANIFEST-").is_some_and(digits) => Content::VersionEdit,
        _ => Content::Raw,
    }
}

/// Whether `data` decodes as `content` without an error (a MANIFEST record holds at least one
/// field it knows, and maybe a tag unknown to this version after it).
pub(crate) fn decodes(content: Content, data: &[u8]) -> bool {
    match content {
        Content::Raw => true,
        Content::WriteBatch => {
            WriteBatch::new(data).is_ok_and(|batch| batch.ops().all(|op| op.is_ok()))
        }
        Content::PebbleBatch => {
            WriteBatch::new(data).is_ok_and(|batch| batch.pebble_ops().all(|op| op.is_ok()))
        }
        Content::VersionEdit => {
            // A tag unknown to this version after known fields: a newer writer's edit.
            let mut known = false;
            for field in VersionEdit::new(data).fields() {
                match field {
                    Ok(_) => known = true,
                    Err(e) => return known && e.is_unknown(),
                }
            }
            known
        }
    }
}

/// What keeps `data` from decoding as `content`, if anything: the first error.
pub(crate) fn first_error(content: Content, data: &[u8]) -> Option<Undecoded> {
    match content {
        Content::Raw => None,
        Content::WriteBatch => match WriteBatch::new(data) {
            Ok(batch) => batch.ops().find_map(Result::err).map(Undecoded::Batch),
            Err(e) => Some(Undecoded::Batch(e)),
        },
        Content::PebbleBatch => match WriteBatch::new(data) {
            Ok(batch) => batch
                .pebble_ops()
                .find_map(Result::err)
                .map(Undecoded::Batch),
            Err(e) => Some(Undecoded::Batch(e)),
        },
        Content::VersionEdit => VersionEdit::new(data)
            .fields()
            .find_map(Result::err)
            .map(Undecoded::Edit),
    }
}

/// What the records of a log hold, counted (`stats`): write batches, their sequence numbers,
/// operations by kind and column families; or version edits' fields by name.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// Records decoded.
    pub(crate) records: u64,
    /// Records that did not decode in full.
    pub(crate) undecoded: u64,
    /// The lowest and highest sequence numbers the batches' data operations take.
    pub(crate) sequences: Option<(u64, u64)>,
    /// Operations (or fields) by name.
    pub(crate) kinds: std::collections::BTreeMap<&'static str, u64>,
    /// Column families written to.
    pub(crate) families: std::collections::BTreeSet<u32>,
}

impl Tally {
    /// Counts the record `data` holding `content` (not [`Content::Raw`]).
    pub(crate) fn add(&mut self, content: Content, data: &[u8]) {
        self.records += 1;
        let mut whole = true;
        match content {
            Content::Raw => {}
            Content::WriteBatch | Content::PebbleBatch => match WriteBatch::new(data) {
                Ok(batch) => {
                    if content == Content::PebbleBatch {
                        for op in batch.pebble_ops() {
                            match op {
                                Ok(op) => *self.kinds.entry(op.name()).or_default() += 1,
                                Err(_) => whole = false,
                            }
                        }
                    }
                    for op in batch.ops().filter(|_| content == Content::WriteBatch) {
                        match op {
                            Ok(op) => {
                                *self.kinds.entry(op.name()).or_default() += 1;
                                self.families.extend(op.cf());
                            }
                            Err(_) => whole = false,
                        }
                    }
                    if batch.count() > 0 {
                        let last = batch
                            .sequence()
                            .saturating_add(u64::from(batch.count()) - 1);
                        self.sequences = Some(match self.sequences {
                            None => (batch.sequence(), last),
                            Some((low, high)) => (low.min(batch.sequence()), high.max(last)),
                        });
                    }
                }
                Err(_) => whole = false,
            },
            Content::VersionEdit => {
                for field in VersionEdit::new(data).fields() {
                    match field {
                        Ok(field) => *self.kinds.entry(field.name()).or_default() += 1,
                        Err(_) => whole = false,
                    }
                }
            }
        }
        if !whole {
            self.undecoded += 1;
        }
    }

    /// Adds what `other` counted (in a later part of the same log).
    pub(crate) fn merge(&mut self, other: Self) {
        self.records += other.records;
        self.undecoded += other.undecoded;
        self.sequences = match (self.sequences, other.sequences) {
            (Some((low, high)), Some((l, h))) => Some((low.min(l), high.max(h))),
            (one, other) => one.or(other),
        };
        for (kind, n) in other.kinds {
            *self.kinds.entry(kind).or_default() += n;
        }
        self.families.extend(other.families);
    }
}

/// Prints decoded records, each built whole in a line buffer reused from record to record and
/// written at once (decoding a write-ahead log is mostly formatting: this keeps it fast).
#[derive(Debug)]
pub(crate) struct Printer {
    line: Vec<u8>,
    scratch: Scratch,
    timestamps: Timestamps,
}

impl Default for Printer {
    fn default() -> Self {
        Self {
            line: Vec::new(),
            scratch: [0; 260],
            timestamps: Timestamps::default(),
        }
    }
}

/// The timestamp sizes RocksDB's timestamp-size records give, by column family, from each
/// record's offset on (each record adds to those before it, as RocksDB's reader keeps them).
#[derive(Debug, Default, Clone)]
pub(crate) struct Timestamps {
    from: Vec<(u64, std::collections::BTreeMap<u32, u16>)>,
}

impl Timestamps {
    /// From the records found in a log (offset, sizes), in file order.
    pub(crate) fn new(records: &[(u64, Vec<(u32, u16)>)]) -> Self {
        let mut sizes = std::collections::BTreeMap::new();
        let from = records
            .iter()
            .map(|(offset, pairs)| {
                sizes.extend(pairs.iter().copied());
                (*offset, sizes.clone())
            })
            .collect();
        Self { from }
    }

    /// The sizes in force for a record at `offset`: those of the records before it.
    #[inline]
    pub(crate) fn at(&self, offset: u64) -> Option<&std::collections::BTreeMap<u32, u16>> {
        if self.from.is_empty() {
            // No timestamp-size record (most logs): nothing to search.
            return None;
        }
        let before = self.from.partition_point(|(at, _)| *at < offset);
        before.checked_sub(1).map(|i| &self.from[i].1)
    }
}

impl Printer {
    /// Sets the timestamp sizes applied to the user keys of the write batches printed.
    pub(crate) fn set_timestamps(&mut self, timestamps: Timestamps) {
        self.timestamps = timestamps;
    }

    /// Prints the record at `offset` holding `content` (not [`Content::Raw`]); returns what
    /// could not be decoded, if anything (it is also printed, in place). `file` names the file
    /// in JSON when several are printed.
    pub(crate) fn write_record(
        &mut self,
        out: &mut impl Write,
        content: Content,
        style: Style,
        offset: u64,
        data: &[u8],
        file: Option<&str>,
    ) -> io::Result<Option<Undecoded>> {
        self.line.clear();
        let line = &mut self.line;
        let undecoded = match (content, style) {
            (Content::VersionEdit, _) => write_edit(line, style, offset, data, file)?,
            (Content::PebbleBatch, Style::Text { hex }) => {
                pebble_text(line, offset, data, hex, &mut self.scratch).map(Undecoded::Batch)
            }
            (Content::PebbleBatch, Style::Json) => {
                pebble_json(line, offset, data, file).map(Undecoded::Batch)
            }
            (_, Style::Text { hex }) => {
                let ts = self.timestamps.at(offset);
                batch_text(line, offset, data, hex, ts, &mut self.scratch).map(Undecoded::Batch)
            }
            (_, Style::Json) => {
                let ts = self.timestamps.at(offset);
                batch_json(line, offset, data, ts, file).map(Undecoded::Batch)
            }
        };
        out.write_all(&self.line)?;
        Ok(undecoded)
    }
}
