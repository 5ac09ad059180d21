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
    /// The records as they are (see --output).
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
/// field).
pub(crate) fn decodes(content: Content, data: &[u8]) -> bool {
    match content {
        Content::Raw => true,
        Content::WriteBatch => {
            WriteBatch::new(data).is_ok_and(|batch| batch.ops().all(|op| op.is_ok()))
        }
        Content::VersionEdit => {
            !data.is_empty() && VersionEdit::new(data).fields().all(|field| field.is_ok())
        }
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

impl fmt::Display for Undecoded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Batch(e) => e.fmt(f),
            Self::Edit(e) => e.fmt(f),
        }
    }
}

/// Prints the record at `offset` holding `content` (not [`Content::Raw`]); returns what could
/// not be decoded, if anything (it is also printed, in place). `file` names the file in JSON
/// when several are printed.
pub(crate) fn write_record(
    out: &mut impl Write,
    content: Content,
    style: Style,
    offset: u64,
    data: &[u8],
    file: Option<&str>,
) -> io::Result<Option<Undecoded>> {
    match content {
        Content::WriteBatch | Content::Raw => write_batch(out, style, offset, data, file),
        Content::VersionEdit => write_edit(out, style, offset, data, file),
    }
}

fn write_batch(
    out: &mut impl Write,
    style: Style,
    offset: u64,
    data: &[u8],
    file: Option<&str>,
) -> io::Result<Option<Undecoded>> {
    let batch = WriteBatch::new(data);
    match style {
        Style::Text { hex } => {
            let mut error = None;
            match batch {
                Ok(batch) => {
                    writeln!(
                        out,
                        "--- offset {offset}; sequence {}; count {}",
                        batch.sequence(),
                        batch.count()
                    )?;
                    for op in batch.ops() {
                        match op {
                            Ok(op) => write_op_text(out, &op, hex)?,
                            Err(e) => error = Some(e),
                        }
                    }
                }
                Err(e) => {
                    writeln!(out, "--- offset {offset}")?;
                    error = Some(e);
                }
            }
            if let Some(e) = error {
                writeln!(out, "  error: {e}")?;
            }
            Ok(error.map(Undecoded::Batch))
        }
        Style::Json => {
            /// A decoded write batch: `offset`, `sequence`, `count`, `ops`, in this order;
            /// then `error` if it could not be decoded in full, and `file` for several files.
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
            let mut doc = BatchJson {
                offset,
                sequence: None,
                count: None,
                ops: Vec::new(),
                error: None,
                file,
            };
            let mut error = None;
            match batch {
                Ok(batch) => {
                    doc.sequence = Some(batch.sequence());
                    doc.count = Some(batch.count());
                    for op in batch.ops() {
                        match op {
                            Ok(op) => doc.ops.push(OpJson::from(&op)),
                            Err(e) => error = Some(e),
                        }
                    }
                }
                Err(e) => error = Some(e),
            }
            doc.error = error.map(|e| e.to_string());
            write_json_line(out, &doc)?;
            Ok(error.map(Undecoded::Batch))
        }
    }
}

/// One operation in text: `  put 'key' 'value'`, with `cf N` after the name for a column
/// family other than 0.
fn write_op_text(out: &mut impl Write, op: &Op<'_>, hex: bool) -> io::Result<()> {
    out.write_all(b"  ")?;
    out.write_all(op.name().as_bytes())?;
    if let Some(cf) = op.cf()
        && cf != 0
    {
        write!(out, " cf {cf}")?;
    }
    let bytes = |out: &mut dyn Write, label: &str, data: &[u8]| -> io::Result<()> {
        out.write_all(b" ")?;
        if !label.is_empty() {
            out.write_all(label.as_bytes())?;
            out.write_all(b" ")?;
        }
        write_bytes(out, data, hex)
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
            bytes(out, "", key)?;
            bytes(out, "", value)?;
        }
        Op::TimedPut {
            key,
            value,
            write_time,
            ..
        } => {
            bytes(out, "", key)?;
            bytes(out, "", value)?;
            write!(out, " write_time {write_time}")?;
        }
        Op::Delete { key, .. } | Op::SingleDelete { key, .. } => bytes(out, "", key)?,
        Op::DeleteRange { begin, end, .. } => {
            bytes(out, "", begin)?;
            bytes(out, "", end)?;
        }
        Op::LogData { blob } => bytes(out, "", blob)?,
        Op::EndPrepare { xid } | Op::Rollback { xid } => bytes(out, "xid", xid)?,
        Op::Commit { xid, timestamp } => {
            bytes(out, "xid", xid)?;
            if let Some(ts) = timestamp {
                bytes(out, "timestamp", ts)?;
            }
        }
        // Begin prepare, noop, and kinds added later: the name says it all.
        _ => {}
    }
    out.write_all(b"\n")
}

/// Bytes in text: quoted and escaped, or in hex.
fn write_bytes(out: &mut dyn Write, data: &[u8], hex: bool) -> io::Result<()> {
    if hex {
        write_hex(out, data)
    } else {
        out.write_all(b"'")?;
        write_escaped(out, data)?;
        out.write_all(b"'")
    }
}

/// `data` as `leveldbutil` escapes it: printable ASCII as it is, any other byte as `\xNN`;
/// and, so that the text reads back unambiguously, the quote `'` and the backslash too.
pub(crate) fn write_escaped(out: &mut dyn Write, data: &[u8]) -> io::Result<()> {
    let plain = |b: u8| (b' '..=b'~').contains(&b) && b != b'\\' && b != b'\'';
    let mut rest = data;
    while !rest.is_empty() {
        let run = rest.iter().position(|&b| !plain(b)).unwrap_or(rest.len());
        let (printable, tail) = rest.split_at(run);
        out.write_all(printable)?;
        if let Some((&byte, tail)) = tail.split_first() {
            const DIGITS: &[u8; 16] = b"0123456789abcdef";
            out.write_all(&[
                b'\\',
                b'x',
                DIGITS[usize::from(byte >> 4)],
                DIGITS[usize::from(byte & 0xf)],
            ])?;
            rest = tail;
        } else {
            rest = tail;
        }
    }
    Ok(())
}

/// `data` in lowercase hex.
fn write_hex(out: &mut dyn Write, data: &[u8]) -> io::Result<()> {
    write!(out, "{}", Hex(data))
}

/// Bytes shown (and serialized) as lowercase hex.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hex<'a>(pub(crate) &'a [u8]);

impl fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut text = [0u8; 512];
        for chunk in self.0.chunks(text.len() / 2) {
            for (pair, &byte) in text.chunks_exact_mut(2).zip(chunk) {
                pair[0] = DIGITS[usize::from(byte >> 4)];
                pair[1] = DIGITS[usize::from(byte & 0xf)];
            }
            let used = &text[..chunk.len() * 2];
            // Only ASCII digits were written.
            f.write_str(std::str::from_utf8(used).map_err(|_| fmt::Error)?)?;
        }
        Ok(())
    }
}

impl Serialize for Hex<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// One operation in JSON: `op`, then `cf`, `key` and `value` (or `end_key`) where the
/// operation has them; the markers' `xid`, a commit's `timestamp`, log data's `blob` and a
/// timed put's `write_time` after them.
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
    out: &mut impl Write,
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
        let mut record = 5u64.to_le_bytes().to_vec();
        record.extend_from_slice(&3u32.to_le_bytes());
        record.extend_from_slice(b"\x01\x02k\x1b\x01v\x04\x02\x01d\x0e\x01\x01a\x01z\x0d\x42");
        let mut text = Vec::new();
        let error = write_record(
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
        write_record(
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
        let mut key = b"k".to_vec();
        key.extend_from_slice(&(3u64 << 8 | 1).to_le_bytes());
        let mut record = vec![1, 3, b'c', b'm', b'p', 2, 12, 7, 0, 10, 200, 7, 9];
        record.extend_from_slice(&key);
        record.push(9);
        record.extend_from_slice(&key);
        let mut text = Vec::new();
        let error = write_record(
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
        write_record(
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
}
