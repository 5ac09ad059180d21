//! `--decode`: records shown as what LevelDB and RocksDB keep in them — the `WriteBatch` of a
//! write-ahead log record, the `VersionEdit` of a MANIFEST record — in text escaped as
//! `leveldbutil dump` escapes it, or in JSON.

use std::borrow::Cow;
use std::fmt;
use std::io::{self, Write};
use std::path::Path;

use logfmt_std::content::{
    BatchError, DbFileKind, EditError, Field, FileField, InternalKey, Op, VersionEdit, WriteBatch,
};
use serde::{Serialize, Serializer};

use crate::output::write_json_line;

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
    /// `VersionEdit` records.
    VersionEdit,
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
            Content::WriteBatch => match WriteBatch::new(data) {
                Ok(batch) => {
                    for op in batch.ops() {
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

/// How decoded records are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// Text; byte strings escaped (`'key'`), or in hex with `hex`.
    Text {
        /// Byte strings in hex.
        hex: bool,
    },
    /// One JSON object per record.
    Json,
}

/// A record that could not be decoded in full: the error, in the record's own terms.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Undecoded {
    /// A write batch.
    Batch(BatchError),
    /// A version edit.
    Edit(EditError),
}

impl Undecoded {
    /// Whether the record is intact but for a tag this version does not know (a newer
    /// writer's): see [`EditError::is_unknown`].
    pub(crate) fn is_unknown(&self) -> bool {
        matches!(self, Self::Edit(e) if e.is_unknown())
    }
}

impl fmt::Display for Undecoded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Batch(e) => e.fmt(f),
            Self::Edit(e) => e.fmt(f),
        }
    }
}

/// Prints decoded records, each built whole in a line buffer reused from record to record and
/// written at once (decoding a write-ahead log is mostly formatting: this keeps it fast).
#[derive(Debug)]
pub(crate) struct Printer {
    line: Vec<u8>,
    scratch: Scratch,
}

impl Default for Printer {
    fn default() -> Self {
        Self {
            line: Vec::new(),
            scratch: [0; 260],
        }
    }
}

impl Printer {
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
            (_, Style::Text { hex }) => {
                batch_text(line, offset, data, hex, &mut self.scratch).map(Undecoded::Batch)
            }
            (_, Style::Json) => batch_json(line, offset, data, file).map(Undecoded::Batch),
        };
        out.write_all(&self.line)?;
        Ok(undecoded)
    }
}

/// Appends the decimal digits of `n`.
fn number(line: &mut Vec<u8>, n: impl itoa::Integer) {
    line.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// A write batch in text: `--- offset N; sequence S; count C`, then a line per operation,
/// then the error that ended them, if any.
fn batch_text(
    line: &mut Vec<u8>,
    offset: u64,
    data: &[u8],
    hex: bool,
    scratch: &mut Scratch,
) -> Option<BatchError> {
    line.extend_from_slice(b"--- offset ");
    number(line, offset);
    let mut error = None;
    match WriteBatch::new(data) {
        Ok(batch) => {
            line.extend_from_slice(b"; sequence ");
            number(line, batch.sequence());
            line.extend_from_slice(b"; count ");
            number(line, batch.count());
            line.push(b'\n');
            for op in batch.ops() {
                match op {
                    Ok(op) => op_text(line, &op, hex, scratch),
                    Err(e) => error = Some(e),
                }
            }
        }
        Err(e) => {
            line.push(b'\n');
            error = Some(e);
        }
    }
    if let Some(e) = error {
        line.extend_from_slice(b"  error: ");
        line.extend_from_slice(e.to_string().as_bytes());
        line.push(b'\n');
    }
    error
}

/// One operation in text: `  put 'key' 'value'`, with `cf N` after the name for a column
/// family other than 0.
fn op_text(line: &mut Vec<u8>, op: &Op<'_>, hex: bool, scratch: &mut Scratch) {
    line.extend_from_slice(b"  ");
    line.extend_from_slice(op.name().as_bytes());
    if let Some(cf) = op.cf()
        && cf != 0
    {
        line.extend_from_slice(b" cf ");
        number(line, cf);
    }
    let mut bytes = |line: &mut Vec<u8>, label: &[u8], data: &[u8]| {
        line.push(b' ');
        if !label.is_empty() {
            line.extend_from_slice(label);
            line.push(b' ');
        }
        text_bytes(line, data, hex, scratch);
    };
    match *op {
        Op::Put { key, value, .. }
        | Op::Merge { key, value, .. }
        | Op::BlobIndex {
            key, index: value, ..
        }
        | Op::PutEntity {
            key,
            columns: value,
            ..
        } => {
            bytes(line, b"", key);
            bytes(line, b"", value);
        }
        Op::TimedPut {
            key,
            value,
            write_time,
            ..
        } => {
            bytes(line, b"", key);
            bytes(line, b"", value);
            line.extend_from_slice(b" write_time ");
            number(line, write_time);
        }
        Op::Delete { key, .. } | Op::SingleDelete { key, .. } => bytes(line, b"", key),
        Op::DeleteRange { begin, end, .. } => {
            bytes(line, b"", begin);
            bytes(line, b"", end);
        }
        Op::LogData { blob } => bytes(line, b"", blob),
        Op::EndPrepare { xid } | Op::Rollback { xid } => bytes(line, b"xid", xid),
        Op::Commit { xid, timestamp } => {
            bytes(line, b"xid", xid);
            if let Some(ts) = timestamp {
                bytes(line, b"timestamp", ts);
            }
        }
        // Begin prepare, noop, and kinds added later: the name says it all.
        _ => {}
    }
    line.push(b'\n');
}

/// Bytes in text: quoted and escaped, or in hex.
fn text_bytes(line: &mut Vec<u8>, data: &[u8], hex: bool, scratch: &mut Scratch) {
    if hex {
        hex_into(line, data);
    } else {
        line.push(b'\'');
        escape_into(line, data, scratch);
        line.push(b'\'');
    }
}

/// Lowercase hex digits.
static DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Whether `byte` is shown as it is in text: printable ASCII but the quote and the backslash.
const fn plain(byte: u8) -> bool {
    byte >= b' ' && byte <= b'~' && byte != b'\\' && byte != b'\''
}

/// Each byte as text shows it, in 4 bytes (a plain byte is followed by 3 unused ones).
static ESCAPES: [[u8; 4]; 256] = {
    let mut table = [[0u8; 4]; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        table[byte] = if plain(b) {
            [b, 0, 0, 0]
        } else {
            [b'\\', b'x', DIGITS[byte >> 4], DIGITS[byte & 0xf]]
        };
        byte += 1;
    }
    table
};

/// How many bytes each byte takes in text: 1 as it is, 4 escaped.
static WIDTHS: [u8; 256] = {
    let mut table = [4u8; 256];
    let mut byte = 0;
    while byte < 256 {
        if plain(byte as u8) {
            table[byte] = 1;
        }
        byte += 1;
    }
    table
};

/// Where [`escape_into`] escapes 64 bytes at a time (kept from call to call: never zeroed
/// again).
type Scratch = [u8; 256 + 4];

/// Appends `data` as `leveldbutil` escapes it: printable ASCII as it is, any other byte as
/// `\xNN`; and, so that the text reads back unambiguously, the quote `'` and the backslash
/// too.
fn escape_into(line: &mut Vec<u8>, data: &[u8], buffer: &mut Scratch) {
    // Without branches: every byte's 4-byte form is stored, and the position moves on by its
    // length (1 or 4), in a buffer that 64 bytes cannot overflow (at most 63 * 4 + 4 = 256
    // bytes; the mask below tells the compiler so).
    for chunk in data.chunks(64) {
        // A fold with no early exit, so that it runs as vector compares (an `all` over the
        // table took about 4 instructions a byte).
        if chunk.iter().fold(true, |all, &byte| all & plain(byte)) {
            // Plain text (most keys): as it is.
            line.extend_from_slice(chunk);
            continue;
        }
        let mut at = 0;
        for &byte in chunk {
            let i = at & 0xff;
            buffer[i..i + 4].copy_from_slice(&ESCAPES[usize::from(byte)]);
            at = i + usize::from(WIDTHS[usize::from(byte)]);
        }
        line.extend_from_slice(&buffer[..at]);
    }
}

/// Each byte in lowercase hex.
static HEX: [[u8; 2]; 256] = {
    let mut table = [[0u8; 2]; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = [DIGITS[byte >> 4], DIGITS[byte & 0xf]];
        byte += 1;
    }
    table
};

/// Appends `data` in lowercase hex.
fn hex_into(line: &mut Vec<u8>, data: &[u8]) {
    let mut buffer = [0u8; 2 * 64];
    for chunk in data.chunks(64) {
        for (pair, &byte) in buffer.chunks_exact_mut(2).zip(chunk) {
            pair.copy_from_slice(&HEX[usize::from(byte)]);
        }
        line.extend_from_slice(&buffer[..2 * chunk.len()]);
    }
}

/// `data` escaped as [`escape_into`] escapes it, written to `out`.
pub(crate) fn write_escaped(out: &mut dyn Write, data: &[u8]) -> io::Result<()> {
    let mut line = Vec::with_capacity(data.len() + data.len() / 2);
    escape_into(&mut line, data, &mut [0; 260]);
    out.write_all(&line)
}

/// Appends `text` as a JSON string, escaped as serde_json escapes it.
fn json_string(line: &mut Vec<u8>, text: &str) {
    // Writing to memory cannot fail; a str always serializes.
    let _ = serde_json::to_writer(&mut *line, text);
}

/// Appends `"name": "HEX"` after a comma.
fn json_hex(line: &mut Vec<u8>, name: &[u8], data: &[u8]) {
    line.extend_from_slice(b", \"");
    line.extend_from_slice(name);
    line.extend_from_slice(b"\": \"");
    hex_into(line, data);
    line.push(b'"');
}

/// A write batch in JSON, one line, in the layout of every `--output json` line
/// (`write_json_line`): `offset`, `sequence`, `count`, `ops`, then `error` if it could not be
/// decoded in full and `file` for several files. Written by hand for speed; the tests check it
/// against the same document serialized by serde.
fn batch_json(
    line: &mut Vec<u8>,
    offset: u64,
    data: &[u8],
    file: Option<&str>,
) -> Option<BatchError> {
    line.extend_from_slice(b"{\"offset\": ");
    number(line, offset);
    let mut error = None;
    match WriteBatch::new(data) {
        Ok(batch) => {
            line.extend_from_slice(b", \"sequence\": ");
            number(line, batch.sequence());
            line.extend_from_slice(b", \"count\": ");
            number(line, batch.count());
            line.extend_from_slice(b", \"ops\": [");
            let mut first = true;
            for op in batch.ops() {
                match op {
                    Ok(op) => {
                        if !first {
                            line.extend_from_slice(b", ");
                        }
                        first = false;
                        op_json(line, &op);
                    }
                    Err(e) => error = Some(e),
                }
            }
            line.push(b']');
        }
        Err(e) => {
            line.extend_from_slice(b", \"sequence\": null, \"count\": null, \"ops\": []");
            error = Some(e);
        }
    }
    if let Some(e) = error {
        line.extend_from_slice(b", \"error\": ");
        json_string(line, &e.to_string());
    }
    if let Some(file) = file {
        line.extend_from_slice(b", \"file\": ");
        json_string(line, file);
    }
    line.extend_from_slice(b"}\n");
    error
}

/// One operation in JSON: `op`, then `cf`, `key` and `value` (or `end_key`) where the
/// operation has them; the markers' `xid`, a commit's `timestamp`, log data's `blob` and a
/// timed put's `write_time` after them (the order of the tests' `OpJson`).
fn op_json(line: &mut Vec<u8>, op: &Op<'_>) {
    line.extend_from_slice(b"{\"op\": \"");
    line.extend_from_slice(op.name().as_bytes());
    line.push(b'"');
    if let Some(cf) = op.cf() {
        line.extend_from_slice(b", \"cf\": ");
        number(line, cf);
    }
    if let Some(key) = op.key() {
        json_hex(line, b"key", key);
    }
    match *op {
        Op::DeleteRange { end, .. } => json_hex(line, b"end_key", end),
        Op::TimedPut {
            value, write_time, ..
        } => {
            json_hex(line, b"value", value);
            line.extend_from_slice(b", \"write_time\": ");
            number(line, write_time);
        }
        Op::LogData { blob } => json_hex(line, b"blob", blob),
        Op::EndPrepare { xid } | Op::Rollback { xid } => json_hex(line, b"xid", xid),
        Op::Commit { xid, timestamp } => {
            json_hex(line, b"xid", xid);
            if let Some(ts) = timestamp {
                json_hex(line, b"timestamp", ts);
            }
        }
        _ => {
            if let Some(value) = op.value() {
                json_hex(line, b"value", value);
            }
        }
    }
    line.push(b'}');
}

/// Bytes shown (and serialized) as lowercase hex.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hex<'a>(pub(crate) &'a [u8]);

impl fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = Vec::with_capacity(512);
        for chunk in self.0.chunks(256) {
            text.clear();
            hex_into(&mut text, chunk);
            // Only ASCII digits were written.
            f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)?;
        }
        Ok(())
    }
}

impl Serialize for Hex<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// One operation in JSON, as serde serializes it: the reference [`op_json`] is checked
/// against.
#[cfg(test)]
#[derive(Serialize)]
struct OpJson<'a> {
    op: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cf: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<Hex<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<Hex<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    end_key: Option<Hex<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    write_time: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    xid: Option<Hex<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timestamp: Option<Hex<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    blob: Option<Hex<'a>>,
}

#[cfg(test)]
impl<'a> From<&Op<'a>> for OpJson<'a> {
    fn from(op: &Op<'a>) -> Self {
        let mut json = OpJson {
            op: op.name(),
            cf: op.cf(),
            key: op.key().map(Hex),
            value: None,
            end_key: None,
            write_time: None,
            xid: None,
            timestamp: None,
            blob: None,
        };
        match *op {
            Op::DeleteRange { end, .. } => json.end_key = Some(Hex(end)),
            Op::TimedPut {
                value, write_time, ..
            } => {
                json.value = Some(Hex(value));
                json.write_time = Some(write_time);
            }
            Op::LogData { blob } => json.blob = Some(Hex(blob)),
            Op::EndPrepare { xid } | Op::Rollback { xid } => json.xid = Some(Hex(xid)),
            Op::Commit { xid, timestamp } => {
                json.xid = Some(Hex(xid));
                json.timestamp = timestamp.map(Hex);
            }
            _ => json.value = op.value().map(Hex),
        }
        json
    }
}

fn write_edit(
    out: &mut Vec<u8>,
    style: Style,
    offset: u64,
    data: &[u8],
    file: Option<&str>,
) -> io::Result<Option<Undecoded>> {
    let mut error = None;
    let mut fields = Vec::new();
    for field in VersionEdit::new(data).fields() {
        match field {
            Ok(field) => fields.push(field),
            Err(e) => error = Some(e),
        }
    }
    match style {
        Style::Text { hex } => {
            writeln!(out, "--- offset {offset}")?;
            for field in &fields {
                write_field_text(out, field, hex)?;
            }
            if let Some(e) = error {
                writeln!(out, "  error: {e}")?;
            }
        }
        Style::Json => {
            /// A decoded version edit: `offset`, `fields` (each with its name in `field`),
            /// then `error` if it could not be decoded in full, and `file` for several files.
            #[derive(Serialize)]
            struct EditJson<'a> {
                offset: u64,
                fields: Vec<FieldJson<'a>>,
                #[serde(skip_serializing_if = "Option::is_none")]
                error: Option<String>,
                #[serde(skip_serializing_if = "Option::is_none")]
                file: Option<&'a str>,
            }
            let doc = EditJson {
                offset,
                fields: fields.iter().map(FieldJson::from).collect(),
                error: error.map(|e| e.to_string()),
                file,
            };
            write_json_line(out, &doc)?;
        }
    }
    Ok(error.map(Undecoded::Edit))
}

/// Bytes in text, to a writer: quoted and escaped, or in hex.
fn write_bytes(out: &mut dyn Write, data: &[u8], hex: bool) -> io::Result<()> {
    let mut line = Vec::with_capacity(2 + 2 * data.len());
    text_bytes(&mut line, data, hex, &mut [0; 260]);
    out.write_all(&line)
}

/// `data` in lowercase hex, to a writer.
fn write_hex(out: &mut dyn Write, data: &[u8]) -> io::Result<()> {
    let mut line = Vec::with_capacity(2 * data.len());
    hex_into(&mut line, data);
    out.write_all(&line)
}

/// An internal key in text: `'key' @ sequence : type`, as LevelDB's `DebugString` shows it.
fn write_key_text(out: &mut dyn Write, key: &InternalKey<'_>, hex: bool) -> io::Result<()> {
    write_bytes(out, key.user_key, hex)?;
    write!(out, " @ {} : {}", key.sequence, key.kind)
}

fn write_field_text(out: &mut impl Write, field: &Field<'_>, hex: bool) -> io::Result<()> {
    write!(out, "  {}", field.name())?;
    match field {
        Field::Comparator(name)
        | Field::ColumnFamilyAdd(name)
        | Field::DbId(name)
        | Field::FullHistoryTsLow(name)
        | Field::SubcompactionProgress(name) => {
            out.write_all(b" ")?;
            write_bytes(out, name, hex)?;
        }
        Field::LogNumber(n)
        | Field::NextFileNumber(n)
        | Field::LastSequence(n)
        | Field::PrevLogNumber(n)
        | Field::MinLogNumberToKeep(n)
        | Field::WalDeletion(n)
        | Field::LastCompactedManifestFileSize(n) => write!(out, " {n}")?,
        Field::ColumnFamily(n) | Field::MaxColumnFamily(n) | Field::InAtomicGroup(n) => {
            write!(out, " {n}")?;
        }
        Field::PersistUserDefinedTimestamps(b) => write!(out, " {b}")?,
        Field::ColumnFamilyDrop => {}
        Field::CompactPointer { level, key } => {
            write!(out, " level {level} ")?;
            write_key_text(out, key, hex)?;
        }
        Field::DeletedFile { level, number } => write!(out, " level {level} file {number}")?,
        Field::NewFile(file) => {
            write!(
                out,
                " level {} file {} size {} ",
                file.level, file.number, file.size
            )?;
            write_key_text(out, &file.smallest, hex)?;
            out.write_all(b" .. ")?;
            write_key_text(out, &file.largest, hex)?;
            if let Some(bounds) = &file.range_keys {
                out.write_all(b" range_keys ")?;
                write_key_text(out, &bounds.smallest, hex)?;
                out.write_all(b" .. ")?;
                write_key_text(out, &bounds.largest, hex)?;
                if let Some((smallest, largest)) = &bounds.point {
                    out.write_all(b" point_keys ")?;
                    write_key_text(out, smallest, hex)?;
                    out.write_all(b" .. ")?;
                    write_key_text(out, largest, hex)?;
                }
            }
            if let Some((low, high)) = file.seqnos {
                write!(out, " seqnos {low}..{high}")?;
            }
            if file.path_id != 0 {
                write!(out, " path_id {}", file.path_id)?;
            }
            for custom in &file.custom {
                let (name, value) = custom_value(custom);
                match value {
                    CustomValue::Number(n) => write!(out, " {name} {n}")?,
                    CustomValue::Flag(b) => write!(out, " {name} {b}")?,
                    CustomValue::Bytes(data) => {
                        write!(out, " {name} ")?;
                        write_bytes(out, data.0, hex)?;
                    }
                    CustomValue::Blobs { depth, files } => {
                        write!(out, " {name} depth {depth}")?;
                        for file in files {
                            write!(out, " blob {} bytes {}", file.id, file.value_size)?;
                        }
                    }
                }
            }
        }
        Field::BlobFileAddition {
            number,
            blob_count,
            blob_bytes,
            checksum_method,
            checksum_value,
        } => {
            write!(
                out,
                " file {number} blobs {blob_count} bytes {blob_bytes} checksum "
            )?;
            write_bytes(out, checksum_method, hex)?;
            out.write_all(b" ")?;
            write_hex(out, checksum_value)?;
        }
        Field::BlobFileGarbage {
            number,
            blob_count,
            blob_bytes,
        } => write!(out, " file {number} blobs {blob_count} bytes {blob_bytes}")?,
        Field::WalAddition {
            number,
            synced_size,
        } => {
            write!(out, " log {number}")?;
            if let Some(size) = synced_size {
                write!(out, " synced_size {size}")?;
            }
        }
        Field::Ignorable { tag, data } => {
            write!(out, " tag {tag} ")?;
            write_bytes(out, data, hex)?;
        }
        Field::CreatedBackingTable { number, size } => write!(out, " file {number} size {size}")?,
        Field::RemovedBackingTable(number) => write!(out, " file {number}")?,
        Field::NewBlobFile {
            id,
            number,
            size,
            value_size,
            creation_time,
        } => write!(
            out,
            " id {id} file {number} size {size} value_size {value_size} creation_time \
             {creation_time}"
        )?,
        Field::DeletedBlobFile { id, number } => write!(out, " id {id} file {number}")?,
        // Fields added later: the name says what it is.
        _ => {}
    }
    out.write_all(b"\n")
}

/// The value of a new file's custom field.
#[derive(Serialize)]
#[serde(untagged)]
enum CustomValue<'a> {
    Number(u64),
    Flag(bool),
    Bytes(Hex<'a>),
    /// Pebble's blob references: the depth, and each blob file's id and value bytes.
    Blobs {
        depth: u64,
        files: Vec<BlobJson>,
    },
}

/// A blob file a Pebble table refers to: its id and the bytes of values it holds for the
/// table.
#[derive(Serialize)]
struct BlobJson {
    id: u64,
    value_size: u64,
}

/// A custom field's name (RocksDB's, lower case) and value.
fn custom_value<'a>(field: &FileField<'a>) -> (Cow<'static, str>, CustomValue<'a>) {
    use CustomValue::{Bytes, Flag, Number};
    let (name, value) = match *field {
        FileField::NeedCompaction(b) => ("need_compaction", Flag(b)),
        FileField::MinLogNumberToKeep(n) => ("min_log_number_to_keep", Number(n)),
        FileField::OldestBlobFileNumber(n) => ("oldest_blob_file_number", Number(n)),
        FileField::OldestAncesterTime(n) => ("oldest_ancester_time", Number(n)),
        FileField::FileCreationTime(n) => ("file_creation_time", Number(n)),
        FileField::FileChecksum(d) => ("file_checksum", Bytes(Hex(d))),
        FileField::FileChecksumFuncName(d) => ("file_checksum_func_name", Bytes(Hex(d))),
        FileField::Temperature(t) => ("temperature", Number(u64::from(t))),
        FileField::MinTimestamp(d) => ("min_timestamp", Bytes(Hex(d))),
        FileField::MaxTimestamp(d) => ("max_timestamp", Bytes(Hex(d))),
        FileField::UniqueId(d) => ("unique_id", Bytes(Hex(d))),
        FileField::EpochNumber(n) => ("epoch_number", Number(n)),
        FileField::CompensatedRangeDeletionSize(n) => {
            ("compensated_range_deletion_size", Number(n))
        }
        FileField::TailSize(n) => ("tail_size", Number(n)),
        FileField::UserDefinedTimestampsPersisted(b) => {
            ("user_defined_timestamps_persisted", Flag(b))
        }
        FileField::FileOpenMetadata(d) => ("file_open_metadata", Bytes(Hex(d))),
        FileField::PathId(id) => ("path_id", Number(u64::from(id))),
        FileField::Virtual { backing } => ("virtual_backing", Number(backing)),
        FileField::SyntheticPrefix(d) => ("synthetic_prefix", Bytes(Hex(d))),
        FileField::SyntheticSuffix(d) => ("synthetic_suffix", Bytes(Hex(d))),
        FileField::BlobReferences(refs) => (
            "blob_references",
            CustomValue::Blobs {
                depth: refs.depth(),
                files: refs
                    .iter()
                    .map(|(id, value_size)| BlobJson { id, value_size })
                    .collect(),
            },
        ),
        FileField::Unknown { tag, data } => {
            return (Cow::Owned(format!("tag_{tag}")), Bytes(Hex(data)));
        }
        // Fields added later.
        _ => ("unknown", Bytes(Hex(&[]))),
    };
    (Cow::Borrowed(name), value)
}

/// A key of a version edit in JSON: the user key in hex, the sequence number and the type.
#[derive(Serialize)]
struct KeyJson<'a> {
    key: Hex<'a>,
    sequence: u64,
    #[serde(rename = "type")]
    kind: u8,
}

impl<'a> From<&InternalKey<'a>> for KeyJson<'a> {
    fn from(key: &InternalKey<'a>) -> Self {
        Self {
            key: Hex(key.user_key),
            sequence: key.sequence,
            kind: key.kind,
        }
    }
}

/// Pebble's range key bounds of a new file in JSON: the bounds marker, the range key bounds,
/// and the point key bounds if the table has point keys.
#[derive(Serialize)]
struct RangeKeysJson<'a> {
    marker: u8,
    smallest: KeyJson<'a>,
    largest: KeyJson<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    point_smallest: Option<KeyJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    point_largest: Option<KeyJson<'a>>,
}

/// A custom field of a new file in JSON.
#[derive(Serialize)]
struct CustomJson<'a> {
    name: Cow<'static, str>,
    value: CustomValue<'a>,
}

/// A field of a version edit in JSON: `field` (its name), then its values. Names (the
/// comparator's, a column family's, the database id) are strings; keys and other byte
/// strings are hex.
#[derive(Serialize)]
#[serde(tag = "field", rename_all = "snake_case")]
enum FieldJson<'a> {
    Comparator {
        name: Cow<'a, str>,
    },
    LogNumber {
        value: u64,
    },
    NextFileNumber {
        value: u64,
    },
    LastSequence {
        value: u64,
    },
    CompactPointer {
        level: u32,
        key: KeyJson<'a>,
    },
    DeletedFile {
        level: u32,
        number: u64,
    },
    NewFile {
        tag: u32,
        level: u32,
        number: u64,
        path_id: u32,
        size: u64,
        smallest: KeyJson<'a>,
        largest: KeyJson<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        smallest_seqno: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        largest_seqno: Option<u64>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        custom: Vec<CustomJson<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        range_keys: Option<Box<RangeKeysJson<'a>>>,
    },
    CreatedBackingTable {
        number: u64,
        size: u64,
    },
    RemovedBackingTable {
        number: u64,
    },
    NewBlobFile {
        id: u64,
        number: u64,
        size: u64,
        value_size: u64,
        creation_time: u64,
    },
    DeletedBlobFile {
        id: u64,
        number: u64,
    },
    PrevLogNumber {
        value: u64,
    },
    MinLogNumberToKeep {
        value: u64,
    },
    ColumnFamily {
        value: u32,
    },
    ColumnFamilyAdd {
        name: Cow<'a, str>,
    },
    ColumnFamilyDrop,
    MaxColumnFamily {
        value: u32,
    },
    InAtomicGroup {
        remaining: u32,
    },
    BlobFileAddition {
        number: u64,
        blob_count: u64,
        blob_bytes: u64,
        checksum_method: Cow<'a, str>,
        checksum_value: Hex<'a>,
    },
    BlobFileGarbage {
        number: u64,
        blob_count: u64,
        blob_bytes: u64,
    },
    DbId {
        name: Cow<'a, str>,
    },
    WalAddition {
        number: u64,
        synced_size: Option<u64>,
    },
    WalDeletion {
        number: u64,
    },
    FullHistoryTsLow {
        hex: Hex<'a>,
    },
    PersistUserDefinedTimestamps {
        value: bool,
    },
    SubcompactionProgress {
        hex: Hex<'a>,
    },
    LastCompactedManifestFileSize {
        value: u64,
    },
    Ignorable {
        tag: u32,
        hex: Hex<'a>,
    },
    /// A field this version of logfmt cannot show.
    Unknown,
}

impl<'a> From<&Field<'a>> for FieldJson<'a> {
    fn from(field: &Field<'a>) -> Self {
        let text = |b: &'a [u8]| String::from_utf8_lossy(b);
        match field {
            Field::Comparator(n) => Self::Comparator { name: text(n) },
            Field::LogNumber(value) => Self::LogNumber { value: *value },
            Field::NextFileNumber(value) => Self::NextFileNumber { value: *value },
            Field::LastSequence(value) => Self::LastSequence { value: *value },
            Field::CompactPointer { level, key } => Self::CompactPointer {
                level: *level,
                key: key.into(),
            },
            Field::DeletedFile { level, number } => Self::DeletedFile {
                level: *level,
                number: *number,
            },
            Field::NewFile(f) => Self::NewFile {
                tag: f.tag.tag(),
                level: f.level,
                number: f.number,
                path_id: f.path_id,
                size: f.size,
                smallest: (&f.smallest).into(),
                largest: (&f.largest).into(),
                smallest_seqno: f.seqnos.map(|s| s.0),
                largest_seqno: f.seqnos.map(|s| s.1),
                custom: f
                    .custom
                    .iter()
                    .map(|c| {
                        let (name, value) = custom_value(c);
                        CustomJson { name, value }
                    })
                    .collect(),
                range_keys: f.range_keys.as_ref().map(|b| {
                    Box::new(RangeKeysJson {
                        marker: b.marker,
                        smallest: (&b.smallest).into(),
                        largest: (&b.largest).into(),
                        point_smallest: b.point.as_ref().map(|p| (&p.0).into()),
                        point_largest: b.point.as_ref().map(|p| (&p.1).into()),
                    })
                }),
            },
            Field::CreatedBackingTable { number, size } => Self::CreatedBackingTable {
                number: *number,
                size: *size,
            },
            Field::RemovedBackingTable(number) => Self::RemovedBackingTable { number: *number },
            Field::NewBlobFile {
                id,
                number,
                size,
                value_size,
                creation_time,
            } => Self::NewBlobFile {
                id: *id,
                number: *number,
                size: *size,
                value_size: *value_size,
                creation_time: *creation_time,
            },
            Field::DeletedBlobFile { id, number } => Self::DeletedBlobFile {
                id: *id,
                number: *number,
            },
            Field::PrevLogNumber(value) => Self::PrevLogNumber { value: *value },
            Field::MinLogNumberToKeep(value) => Self::MinLogNumberToKeep { value: *value },
            Field::ColumnFamily(value) => Self::ColumnFamily { value: *value },
            Field::ColumnFamilyAdd(n) => Self::ColumnFamilyAdd { name: text(n) },
            Field::ColumnFamilyDrop => Self::ColumnFamilyDrop,
            Field::MaxColumnFamily(value) => Self::MaxColumnFamily { value: *value },
            Field::InAtomicGroup(remaining) => Self::InAtomicGroup {
                remaining: *remaining,
            },
            Field::BlobFileAddition {
                number,
                blob_count,
                blob_bytes,
                checksum_method,
                checksum_value,
            } => Self::BlobFileAddition {
                number: *number,
                blob_count: *blob_count,
                blob_bytes: *blob_bytes,
                checksum_method: text(checksum_method),
                checksum_value: Hex(checksum_value),
            },
            Field::BlobFileGarbage {
                number,
                blob_count,
                blob_bytes,
            } => Self::BlobFileGarbage {
                number: *number,
                blob_count: *blob_count,
                blob_bytes: *blob_bytes,
            },
            Field::DbId(n) => Self::DbId { name: text(n) },
            Field::WalAddition {
                number,
                synced_size,
            } => Self::WalAddition {
                number: *number,
                synced_size: *synced_size,
            },
            Field::WalDeletion(number) => Self::WalDeletion { number: *number },
            Field::FullHistoryTsLow(d) => Self::FullHistoryTsLow { hex: Hex(d) },
            Field::PersistUserDefinedTimestamps(value) => {
                Self::PersistUserDefinedTimestamps { value: *value }
            }
            Field::SubcompactionProgress(d) => Self::SubcompactionProgress { hex: Hex(d) },
            Field::LastCompactedManifestFileSize(value) => {
                Self::LastCompactedManifestFileSize { value: *value }
            }
            Field::Ignorable { tag, data } => Self::Ignorable {
                tag: *tag,
                hex: Hex(data),
            },
            _ => Self::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(data: &[u8]) -> String {
        let mut out = Vec::new();
        write_escaped(&mut out, data).expect("writing to memory");
        String::from_utf8(out).expect("ASCII")
    }

    #[test]
    fn escaping_keeps_printable_ascii_only() {
        assert_eq!(escaped(b"key 1~"), "key 1~");
        assert_eq!(escaped(b"\x1b[2J"), r"\x1b[2J");
        assert_eq!(escaped(b"a\nb\x00\x7f\xff"), r"a\x0ab\x00\x7f\xff");
        assert_eq!(escaped(b"it's \\"), r"it\x27s \x5c");
        assert_eq!(escaped("é".as_bytes()), r"\xc3\xa9");
    }

    /// The table-driven escaping and hex, across chunk boundaries, against the plain rule.
    #[test]
    fn escaping_and_hex_match_the_rule_for_every_byte() {
        let naive_escape = |data: &[u8]| -> String {
            data.iter()
                .map(|&b| {
                    if (b' '..=b'~').contains(&b) && b != b'\\' && b != b'\'' {
                        char::from(b).to_string()
                    } else {
                        format!("\\x{b:02x}")
                    }
                })
                .collect()
        };
        let every: Vec<u8> = (0..=255).collect();
        let long: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 131) as u8).collect();
        let plain_long: Vec<u8> = (0..200u32).map(|i| b'a' + (i % 26) as u8).collect();
        for data in [&every[..], &long, &plain_long, b"", b"k"] {
            let mut line = b"prefix".to_vec();
            escape_into(&mut line, data, &mut [0; 260]);
            assert_eq!(String::from_utf8_lossy(&line[6..]), naive_escape(data));
            let mut line = Vec::new();
            hex_into(&mut line, data);
            let naive: String = data.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(String::from_utf8_lossy(&line), naive);
        }
    }

    #[test]
    fn content_by_name() {
        for (name, content) in [
            ("000003.log", Content::WriteBatch),
            ("/db/123456789.log", Content::WriteBatch),
            ("MANIFEST-000001", Content::VersionEdit),
            ("x.log", Content::Raw),
            ("000003.log.bak", Content::Raw),
            ("MANIFEST-", Content::Raw),
            ("MANIFEST-00001a", Content::Raw),
            ("log", Content::Raw),
        ] {
            assert_eq!(by_name(Path::new(name)), content, "{name}");
        }
        let manifest = Decode::Auto.content(Path::new("x"), Some(DbFileKind::Manifest));
        assert_eq!(manifest, Content::VersionEdit);
        let forced = Decode::Raw.content(Path::new("000001.log"), None);
        assert_eq!(forced, Content::Raw);
    }

    #[test]
    fn a_batch_in_text_and_json() {
        let mut printer = Printer::default();
        let mut record = 5u64.to_le_bytes().to_vec();
        record.extend_from_slice(&3u32.to_le_bytes());
        record.extend_from_slice(b"\x01\x02k\x1b\x01v\x04\x02\x01d\x0e\x01\x01a\x01z\x0d\x42");
        let mut text = Vec::new();
        let error = printer
            .write_record(
                &mut text,
                Content::WriteBatch,
                Style::Text { hex: false },
                9,
                &record,
                None,
            )
            .expect("memory");
        assert!(matches!(
            error,
            Some(Undecoded::Batch(BatchError::UnknownTag { tag: 0x42, .. }))
        ));
        assert_eq!(
            String::from_utf8(text).expect("ASCII"),
            "--- offset 9; sequence 5; count 3\n  put 'k\\x1b' 'v'\n  delete cf 2 'd'\n  \
             delete_range cf 1 'a' 'z'\n  noop\n  error: unknown WriteBatch tag 0x42 at byte 29\n"
        );
        let mut json = Vec::new();
        printer
            .write_record(
                &mut json,
                Content::WriteBatch,
                Style::Json,
                9,
                &record,
                Some("f"),
            )
            .expect("memory");
        assert_eq!(
            String::from_utf8(json).expect("UTF-8"),
            "{\"offset\": 9, \"sequence\": 5, \"count\": 3, \"ops\": [\
             {\"op\": \"put\", \"cf\": 0, \"key\": \"6b1b\", \"value\": \"76\"}, \
             {\"op\": \"delete\", \"cf\": 2, \"key\": \"64\"}, \
             {\"op\": \"delete_range\", \"cf\": 1, \"key\": \"61\", \"end_key\": \"7a\"}, \
             {\"op\": \"noop\"}], \
             \"error\": \"unknown WriteBatch tag 0x42 at byte 29\", \"file\": \"f\"}\n"
        );
    }

    #[test]
    fn an_edit_in_text_and_json() {
        let mut printer = Printer::default();
        let mut key = b"k".to_vec();
        key.extend_from_slice(&(3u64 << 8 | 1).to_le_bytes());
        let mut record = vec![1, 3, b'c', b'm', b'p', 2, 12, 7, 0, 10, 200, 7, 9];
        record.extend_from_slice(&key);
        record.push(9);
        record.extend_from_slice(&key);
        let mut text = Vec::new();
        let error = printer
            .write_record(
                &mut text,
                Content::VersionEdit,
                Style::Text { hex: false },
                0,
                &record,
                None,
            )
            .expect("memory");
        assert!(error.is_none());
        assert_eq!(
            String::from_utf8(text).expect("ASCII"),
            "--- offset 0\n  comparator 'cmp'\n  log_number 12\n  new_file level 0 file 10 size 968 \
             'k' @ 3 : 1 .. 'k' @ 3 : 1\n"
        );
        let mut json = Vec::new();
        printer
            .write_record(
                &mut json,
                Content::VersionEdit,
                Style::Json,
                0,
                &record,
                None,
            )
            .expect("memory");
        let parsed: serde_json::Value = serde_json::from_slice(&json).expect("JSON");
        assert_eq!(parsed["fields"][0]["field"], "comparator");
        assert_eq!(parsed["fields"][0]["name"], "cmp");
        assert_eq!(parsed["fields"][1]["value"], 12);
        assert_eq!(parsed["fields"][2]["field"], "new_file");
        assert_eq!(parsed["fields"][2]["smallest"]["key"], "6b");
        assert_eq!(parsed["fields"][2]["smallest"]["sequence"], 3);
    }

    /// The hand-written JSON of a batch is byte for byte what serde writes for the same
    /// document (`write_json_line`), for every kind of operation, errors and file names.
    #[test]
    fn hand_written_json_is_serdes() {
        /// The document, as serde serializes it.
        #[derive(Serialize)]
        struct BatchJson<'a> {
            offset: u64,
            sequence: Option<u64>,
            count: Option<u32>,
            ops: Vec<OpJson<'a>>,
            #[serde(skip_serializing_if = "Option::is_none")]
            error: Option<String>,
            #[serde(skip_serializing_if = "Option::is_none")]
            file: Option<&'a str>,
        }
        let header = |count: u32| {
            let mut out = u64::MAX.to_le_bytes().to_vec();
            out.extend_from_slice(&count.to_le_bytes());
            out
        };
        let bodies: [&[u8]; 6] = [
            b"\x01\x01k\x01v\x05\x81\x01\x01k\x00\x00\x01a\x04\x02\x01b\x07\x01c\x08\x03\x01d",
            b"\x02\x01m\x02+1\x06\x01\x01m\x00\x0f\x01a\x01z\x0e\x02\x01a\x01z\x11\x01k\x02\x00\xff",
            b"\x16\x01e\x01\x00\x18\x01t\x09v\x01\x00\x00\x00\x00\x00\x00\x00\x03\x03log\x09\x12\x13",
            b"\x0a\x02tx\x0b\x02tx\x15\x02ts\x02tx\x0c\x02tx\x0d",
            b"\x01\x01k\x01v\x7f",
            b"",
        ];
        let mut printer = Printer::default();
        for (i, body) in bodies.iter().enumerate() {
            for count in [0, 2, 11] {
                for file in [None, Some("dir/\u{1b}\"x\".log")] {
                    let mut record = header(count);
                    record.extend_from_slice(body);
                    let batch = WriteBatch::new(&record).expect("a header");
                    let mut doc = BatchJson {
                        offset: i as u64 * 1000,
                        sequence: Some(batch.sequence()),
                        count: Some(batch.count()),
                        ops: Vec::new(),
                        error: None,
                        file,
                    };
                    for op in batch.ops() {
                        match op {
                            Ok(op) => doc.ops.push(OpJson::from(&op)),
                            Err(e) => doc.error = Some(e.to_string()),
                        }
                    }
                    let mut expected = Vec::new();
                    write_json_line(&mut expected, &doc).expect("memory");
                    let mut ours = Vec::new();
                    printer
                        .write_record(
                            &mut ours,
                            Content::WriteBatch,
                            Style::Json,
                            doc.offset,
                            &record,
                            file,
                        )
                        .expect("memory");
                    assert_eq!(
                        String::from_utf8_lossy(&ours),
                        String::from_utf8_lossy(&expected),
                        "body {i}, count {count}"
                    );
                }
            }
        }
        // A record too short for a header.
        let mut ours = Vec::new();
        printer
            .write_record(&mut ours, Content::WriteBatch, Style::Json, 5, b"abc", None)
            .expect("memory");
        let expected = BatchJson {
            offset: 5,
            sequence: None,
            count: None,
            ops: Vec::new(),
            error: Some(BatchError::TooSmall { len: 3 }.to_string()),
            file: None,
        };
        let mut serde = Vec::new();
        write_json_line(&mut serde, &expected).expect("memory");
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&serde)
        );
    }
}
