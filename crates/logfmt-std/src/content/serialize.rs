//! `serde::Serialize` for what the logs hold (feature `serde`): a [`WriteBatch`]'s
//! operations ([`Op`]) and a [`VersionEdit`]'s fields ([`Field`] and its parts), in the layout
//! `logfmt cat --output json` prints.
//!
//! Keys, values and other byte strings are lowercase hex strings; names (a comparator's, a
//! column family's, a database id, a checksum method) are strings, their bytes read as UTF-8
//! (invalid sequences replaced). A field is an object whose first key, `field`, is its name
//! ([`Field::name`]); an operation's first key, `op`, is its name ([`Op::name`]). Optional
//! values are left out when absent.
//!
//! ```
//! use logfmt_std::content::VersionEdit;
//!
//! // A comparator name, then a log number.
//! let record = b"\x01\x03cmp\x02\x0c";
//! let fields = VersionEdit::new(record).fields().collect::<Result<Vec<_>, _>>()?;
//! let json = serde_json::to_string(&fields)?;
//! assert_eq!(json, r#"[{"field":"comparator","name":"cmp"},{"field":"log_number","value":12}]"#);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`WriteBatch`]: super::WriteBatch
//! [`VersionEdit`]: super::VersionEdit

use std::fmt;

use serde::ser::{Serialize, SerializeMap, Serializer};

use super::{BlobReferences, Field, FileField, InternalKey, NewFile, Op, RangeKeyBounds};

/// Bytes serialized as a lowercase hex string.
struct Hex<'a>(&'a [u8]);

impl fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut text = [0u8; 512];
        for chunk in self.0.chunks(text.len() / 2) {
            for (pair, byte) in text.chunks_exact_mut(2).zip(chunk) {
                pair.copy_from_slice(&[
                    DIGITS[usize::from(byte >> 4)],
                    DIGITS[usize::from(byte & 0x0f)],
                ]);
            }
            let digits = text.get(..chunk.len() * 2).unwrap_or_default();
            // Hex digits are ASCII.
            f.write_str(std::str::from_utf8(digits).unwrap_or_default())?;
        }
        Ok(())
    }
}

impl Serialize for Hex<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Bytes serialized as a string: a name, read as UTF-8 (invalid sequences replaced).
struct Text<'a>(&'a [u8]);

impl Serialize for Text<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&String::from_utf8_lossy(self.0))
    }
}

/// `{"key": hex, "sequence": n, "type": n}`: the user key, the sequence number and the value
/// type (LevelDB's 0 deletion, 1 value, ...).
impl Serialize for InternalKey<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("key", &Hex(self.user_key))?;
        map.serialize_entry("sequence", &self.sequence)?;
        map.serialize_entry("type", &self.kind)?;
        map.end()
    }
}

/// Pebble's range key bounds of a new file: `{"marker", "smallest", "largest"}`, then
/// `"point_smallest"` and `"point_largest"` if the table has point keys.
impl Serialize for RangeKeyBounds<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("marker", &self.marker)?;
        map.serialize_entry("smallest", &self.smallest)?;
        map.serialize_entry("largest", &self.largest)?;
        if let Some((smallest, largest)) = &self.point {
            map.serialize_entry("point_smallest", smallest)?;
            map.serialize_entry("point_largest", largest)?;
        }
        map.end()
    }
}

/// Pebble's blob references: `{"depth", "files": [{"id", "value_size"}]}`.
impl Serialize for BlobReferences<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        /// One blob file a table refers to.
        struct Blob(u64, u64);
        impl Serialize for Blob {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("id", &self.0)?;
                map.serialize_entry("value_size", &self.1)?;
                map.end()
            }
        }
        let files: Vec<Blob> = self.iter().map(|(id, size)| Blob(id, size)).collect();
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("depth", &self.depth())?;
        map.serialize_entry("files", &files)?;
        map.end()
    }
}

/// A new file's custom field: `{"name", "value"}`, its name RocksDB's in lower case
/// (`tag_N` for a tag unknown to this version), its value a number, a flag, bytes in hex, or
/// blob references.
impl Serialize for FileField<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        let number = |name: &'static str, n: u64| (name, Value::Number(n));
        let (name, value) = match *self {
            Self::NeedCompaction(b) => ("need_compaction", Value::Flag(b)),
            Self::MinLogNumberToKeep(n) => number("min_log_number_to_keep", n),
            Self::OldestBlobFileNumber(n) => number("oldest_blob_file_number", n),
            Self::OldestAncesterTime(n) => number("oldest_ancester_time", n),
            Self::FileCreationTime(n) => number("file_creation_time", n),
            Self::FileChecksum(d) => ("file_checksum", Value::Bytes(d)),
            Self::FileChecksumFuncName(d) => ("file_checksum_func_name", Value::Bytes(d)),
            Self::Temperature(t) => number("temperature", u64::from(t)),
            Self::MinTimestamp(d) => ("min_timestamp", Value::Bytes(d)),
            Self::MaxTimestamp(d) => ("max_timestamp", Value::Bytes(d)),
            Self::UniqueId(d) => ("unique_id", Value::Bytes(d)),
            Self::EpochNumber(n) => number("epoch_number", n),
            Self::CompensatedRangeDeletionSize(n) => number("compensated_range_deletion_size", n),
            Self::TailSize(n) => number("tail_size", n),
            Self::UserDefinedTimestampsPersisted(b) => {
                ("user_defined_timestamps_persisted", Value::Flag(b))
            }
            Self::FileOpenMetadata(d) => ("file_open_metadata", Value::Bytes(d)),
            Self::PathId(id) => number("path_id", u64::from(id)),
            Self::Virtual { backing } => number("virtual_backing", backing),
            Self::SyntheticPrefix(d) => ("synthetic_prefix", Value::Bytes(d)),
            Self::SyntheticSuffix(d) => ("synthetic_suffix", Value::Bytes(d)),
            Self::BlobReferences(ref refs) => ("blob_references", Value::Blobs(refs)),
            Self::Unknown { tag, data } => {
                map.serialize_entry("name", &format!("tag_{tag}"))?;
                map.serialize_entry("value", &Hex(data))?;
                return map.end();
            }
        };
        map.serialize_entry("name", name)?;
        match value {
            Value::Number(n) => map.serialize_entry("value", &n)?,
            Value::Flag(b) => map.serialize_entry("value", &b)?,
            Value::Bytes(d) => map.serialize_entry("value", &Hex(d))?,
            Value::Blobs(refs) => map.serialize_entry("value", refs)?,
        }
        map.end()
    }
}

/// The value of a new file's custom field.
enum Value<'r, 'a> {
    Number(u64),
    Flag(bool),
    Bytes(&'a [u8]),
    Blobs(&'r BlobReferences<'a>),
}

/// A new file's entries after `"field"`: `tag`, `level`, `number`, `path_id`, `size`,
/// `smallest`, `largest`, then if present `smallest_seqno`, `largest_seqno`, `custom` (its
/// custom fields) and `range_keys`.
fn new_file_entries<M: SerializeMap>(map: &mut M, file: &NewFile<'_>) -> Result<(), M::Error> {
    map.serialize_entry("tag", &file.tag.tag())?;
    map.serialize_entry("level", &file.level)?;
    map.serialize_entry("number", &file.number)?;
    map.serialize_entry("path_id", &file.path_id)?;
    map.serialize_entry("size", &file.size)?;
    map.serialize_entry("smallest", &file.smallest)?;
    map.serialize_entry("largest", &file.largest)?;
    if let Some((low, high)) = file.seqnos {
        map.serialize_entry("smallest_seqno", &low)?;
        map.serialize_entry("largest_seqno", &high)?;
    }
    if !file.custom.is_empty() {
        map.serialize_entry("custom", &file.custom)?;
    }
    if let Some(bounds) = &file.range_keys {
        map.serialize_entry("range_keys", bounds)?;
    }
    Ok(())
}

/// A version edit's field: `{"field": name, ...}`, its values after it, named as LevelDB's,
/// RocksDB's and Pebble's sources name them (`value` for a lone number or flag, `name` for a
/// lone name, `hex` for lone bytes).
impl Serialize for Field<'_> {
    // Long for a reason: one arm per kind of field, each its entries.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("field", self.name())?;
        match self {
            Self::Comparator(n) | Self::ColumnFamilyAdd(n) | Self::DbId(n) => {
                map.serialize_entry("name", &Text(n))?;
            }
            Self::LogNumber(n)
            | Self::NextFileNumber(n)
            | Self::LastSequence(n)
            | Self::PrevLogNumber(n)
            | Self::MinLogNumberToKeep(n)
            | Self::LastCompactedManifestFileSize(n) => map.serialize_entry("value", n)?,
            Self::ColumnFamily(n) | Self::MaxColumnFamily(n) => map.serialize_entry("value", n)?,
            Self::PersistUserDefinedTimestamps(b) => map.serialize_entry("value", b)?,
            Self::InAtomicGroup(n) => map.serialize_entry("remaining", n)?,
            Self::CompactPointer { level, key } => {
                map.serialize_entry("level", level)?;
                map.serialize_entry("key", key)?;
            }
            Self::DeletedFile { level, number } => {
                map.serialize_entry("level", level)?;
                map.serialize_entry("number", number)?;
            }
            Self::NewFile(file) => new_file_entries(&mut map, file)?,
            Self::CreatedBackingTable { number, size } => {
                map.serialize_entry("number", number)?;
                map.serialize_entry("size", size)?;
            }
            Self::RemovedBackingTable(number) | Self::WalDeletion(number) => {
                map.serialize_entry("number", number)?;
            }
            Self::NewBlobFile {
                id,
                number,
                size,
                value_size,
                creation_time,
            } => {
                map.serialize_entry("id", id)?;
                map.serialize_entry("number", number)?;
                map.serialize_entry("size", size)?;
                map.serialize_entry("value_size", value_size)?;
                map.serialize_entry("creation_time", creation_time)?;
            }
            Self::DeletedBlobFile { id, number } => {
                map.serialize_entry("id", id)?;
                map.serialize_entry("number", number)?;
            }
            Self::ColumnFamilyDrop => {}
            Self::BlobFileAddition {
                number,
                blob_count,
                blob_bytes,
                checksum_method,
                checksum_value,
            } => {
                map.serialize_entry("number", number)?;
                map.serialize_entry("blob_count", blob_count)?;
                map.serialize_entry("blob_bytes", blob_bytes)?;
                map.serialize_entry("checksum_method", &Text(checksum_method))?;
                map.serialize_entry("checksum_value", &Hex(checksum_value))?;
            }
            Self::BlobFileGarbage {
                number,
                blob_count,
                blob_bytes,
            } => {
                map.serialize_entry("number", number)?;
                map.serialize_entry("blob_count", blob_count)?;
                map.serialize_entry("blob_bytes", blob_bytes)?;
            }
            Self::WalAddition {
                number,
                synced_size,
            } => {
                map.serialize_entry("number", number)?;
                map.serialize_entry("synced_size", synced_size)?;
            }
            Self::FullHistoryTsLow(d) | Self::SubcompactionProgress(d) => {
                map.serialize_entry("hex", &Hex(d))?;
            }
            Self::Ignorable { tag, data } => {
                map.serialize_entry("tag", tag)?;
                map.serialize_entry("hex", &Hex(data))?;
            }
        }
        map.end()
    }
}

/// A write batch's operation: `{"op": name}`, then if present `cf` (its column family),
/// `key`, `value`, `end_key` (a range deletion's end), `write_time` (a timed put's), `xid` (a
/// transaction's id), `timestamp` (a commit's) and `blob` (log data), bytes in hex.
impl Serialize for Op<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("op", self.name())?;
        if let Some(cf) = self.cf() {
            map.serialize_entry("cf", &cf)?;
        }
        if let Some(key) = self.key() {
            map.serialize_entry("key", &Hex(key))?;
        }
        match *self {
            Self::DeleteRange { end, .. } => map.serialize_entry("end_key", &Hex(end))?,
            Self::TimedPut {
                value, write_time, ..
            } => {
                map.serialize_entry("value", &Hex(value))?;
                map.serialize_entry("write_time", &write_time)?;
            }
            Self::LogData { blob } => map.serialize_entry("blob", &Hex(blob))?,
            Self::EndPrepare { xid } | Self::Rollback { xid } => {
                map.serialize_entry("xid", &Hex(xid))?;
            }
            Self::Commit { xid, timestamp } => {
                map.serialize_entry("xid", &Hex(xid))?;
                if let Some(timestamp) = timestamp {
                    map.serialize_entry("timestamp", &Hex(timestamp))?;
                }
            }
            _ => {
                if let Some(value) = self.value() {
                    map.serialize_entry("value", &Hex(value))?;
                }
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::{VersionEdit, WriteBatch};

    #[test]
    fn an_operation_is_its_name_then_its_bytes_in_hex() {
        let mut record = 7u64.to_le_bytes().to_vec();
        record.extend_from_slice(&2u32.to_le_bytes());
        record.extend_from_slice(b"\x01\x01a\x011\x0e\x02\x01b\x01d");
        let batch = WriteBatch::new(&record).expect("a header");
        let ops: Vec<Op<'_>> = batch.ops().collect::<Result<_, _>>().expect("ops");
        let json = serde_json::to_string(&ops).expect("JSON");
        assert_eq!(
            json,
            r#"[{"op":"put","cf":0,"key":"61","value":"31"},{"op":"delete_range","cf":2,"key":"62","end_key":"64"}]"#
        );
    }

    #[test]
    fn a_deleted_file_and_a_compact_pointer() {
        // deleted file: level 1, number 9; compact pointer: level 2, key "k" seq 3 type 1.
        let mut record = b"\x06\x01\x09\x05\x02\x09".to_vec();
        record.extend_from_slice(b"k");
        record.extend_from_slice(&((3u64 << 8) | 1).to_le_bytes());
        let fields: Vec<Field<'_>> = VersionEdit::new(&record)
            .fields()
            .collect::<Result<_, _>>()
            .expect("fields");
        let json = serde_json::to_string(&fields).expect("JSON");
        assert_eq!(
            json,
            r#"[{"field":"deleted_file","level":1,"number":9},{"field":"compact_pointer","level":2,"key":{"key":"6b","sequence":3,"type":1}}]"#
        );
    }
}
