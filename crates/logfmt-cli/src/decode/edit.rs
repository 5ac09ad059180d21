//! A MANIFEST record (a `VersionEdit`) in text and in JSON.

use std::borrow::Cow;
use std::io::{self, Write};

use logfmt_std::content::{EditError, Field, FileField, InternalKey, VersionEdit};
use serde::Serialize;

use super::shape::{Style, Undecoded};
use crate::escape::{Hex, hex_into, text_bytes};
use crate::output::write_json_line;

/// A decoded version edit in JSON: `offset`, `fields` (each with its name in `field`, as
/// logfmt-std's `serde` feature serializes a [`Field`]), then `error` if it could not be
/// decoded in full, and `file` for several files.
#[derive(Serialize)]
pub(crate) struct EditJson<'a> {
    /// The offset of the record's first chunk.
    offset: u64,
    /// The fields decoded, in order.
    fields: Vec<Field<'a>>,
    /// What kept the rest of the record from decoding, if anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// The file, when several are printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
}

/// The fields of the version edit `data`, and the error that ended them, if any.
fn decode_fields(data: &[u8]) -> (Vec<Field<'_>>, Option<EditError>) {
    let mut error = None;
    let mut fields = Vec::new();
    for field in VersionEdit::new(data).fields() {
        match field {
            Ok(field) => fields.push(field),
            Err(e) => error = Some(e),
        }
    }
    (fields, error)
}

#[cfg(test)]
/// The JSON document of the version edit `data` at `offset` (`file` names it when several
/// files are printed).
pub(crate) fn edit_document<'a>(
    offset: u64,
    data: &'a [u8],
    file: Option<&'a str>,
) -> EditJson<'a> {
    let (fields, error) = decode_fields(data);
    EditJson::new(offset, fields, error, file)
}

impl<'a> EditJson<'a> {
    /// The document of the `fields` at `offset`, ended by `error`.
    fn new(
        offset: u64,
        fields: Vec<Field<'a>>,
        error: Option<EditError>,
        file: Option<&'a str>,
    ) -> Self {
        Self {
            offset,
            fields,
            error: error.map(|e| e.to_string()),
            file,
        }
    }
}

/// Appends the version edit `data` at `offset` in `style`; returns what could not be decoded.
pub(super) fn write_edit(
    out: &mut Vec<u8>,
    style: Style,
    offset: u64,
    data: &[u8],
    file: Option<&str>,
) -> io::Result<Option<Undecoded>> {
    let (fields, error) = decode_fields(data);
    match style {
        Style::Text { hex } => {
            writeln!(out, "--- offset {offset}")?;
            for field in &fields {
                write_field_text(out, field, hex)?;
            }
            if let Some(e) = error {
                writeln!(out, "  error: {e}")?;
            }
            Ok(error.map(Undecoded::Edit))
        }
        Style::Json => {
            write_json_line(out, &EditJson::new(offset, fields, error, file))?;
            Ok(error.map(Undecoded::Edit))
        }
    }
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

/// A version edit's field in text, as LevelDB's `VersionEdit::DebugString` shows it.
// Long for a reason: one arm per kind of field LevelDB, RocksDB and Pebble write, each a line
// or two; split, the arms would only be scattered.
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
enum CustomValue<'a> {
    Number(u64),
    Flag(bool),
    Bytes(Hex<'a>),
    /// Pebble's blob references: the depth, and each blob file's id and value bytes.
    Blobs {
        depth: u64,
        files: Vec<BlobRef>,
    },
}

/// A blob file a Pebble table refers to: its id and the bytes of values it holds for the
/// table.
struct BlobRef {
    /// The blob file's id.
    id: u64,
    /// The bytes of values it holds for the table.
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
                    .map(|(id, value_size)| BlobRef { id, value_size })
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
