//! Target `content`: the WriteBatch and VersionEdit decoders of `logfmt-std`
//! (`logfmt_std::content`).
//!
//! Input: arbitrary bytes, decoded both as a write-ahead log record (`WriteBatch`) and as a
//! MANIFEST record (`VersionEdit`).
//!
//! Properties: no panic; each decoder stops at its first error (the error is the last item,
//! and its offset lies in the record); every key, value and name it returns is a slice of the
//! input, in order and not overlapping; a batch read without error holds exactly the data
//! operations its header counts; and what was read, encoded again (canonically: shortest
//! varints, the plain tag for column family 0), decodes to the same operations and fields.

#![allow(dead_code, unreachable_pub)]

use logfmt_std::content::{BatchError, EditError, Field, FileField, Op, VersionEdit, WriteBatch};

/// Checks one input.
pub fn check(data: &[u8]) {
    check_batch(data);
    check_edit(data);
}

/// Asserts that `slice` lies in `data` after `at`, and returns where it ends.
fn inside(data: &[u8], slice: &[u8], at: usize) -> usize {
    if slice.is_empty() {
        return at;
    }
    let start = slice.as_ptr() as usize - data.as_ptr() as usize;
    assert!(start >= at, "slices out of order");
    assert!(start + slice.len() <= data.len(), "a slice past the record");
    start + slice.len()
}

fn check_batch(data: &[u8]) {
    let batch = match WriteBatch::new(data) {
        Ok(batch) => batch,
        Err(BatchError::TooSmall { len }) => {
            assert!(data.len() < 12 && len == data.len());
            return;
        }
        Err(other) => panic!("WriteBatch::new failed with {other:?}"),
    };
    let items: Vec<Result<Op<'_>, BatchError>> = batch.ops().collect();
    let mut ops = Vec::new();
    let mut at = 12;
    for (i, item) in items.iter().enumerate() {
        match item {
            Ok(op) => {
                assert!(ops.len() == i, "an operation after an error");
                for slice in slices(op) {
                    at = inside(data, slice, at);
                }
                ops.push(*op);
            }
            Err(error) => {
                assert_eq!(i + 1, items.len(), "the error is the last item");
                match *error {
                    BatchError::UnknownTag { offset, .. } | BatchError::BadOp { offset, .. } => {
                        assert!((12..data.len()).contains(&offset), "{error:?}");
                    }
                    BatchError::WrongCount { declared, found } => {
                        assert_eq!(declared, batch.count());
                        assert_eq!(found as usize, ops.iter().filter(|op| op.is_data()).count());
                        assert_ne!(declared, found);
                    }
                    other => panic!("unexpected {other:?}"),
                }
            }
        }
    }
    if items.iter().all(Result::is_ok) {
        let data_ops = ops.iter().filter(|op| op.is_data()).count();
        assert_eq!(
            data_ops,
            batch.count() as usize,
            "a whole batch has its count"
        );
    }
    // Encoded again, canonically: the same operations.
    let mut again = batch.sequence().to_le_bytes().to_vec();
    let count = ops.iter().filter(|op| op.is_data()).count() as u32;
    again.extend_from_slice(&count.to_le_bytes());
    for op in &ops {
        op.encode(&mut again);
    }
    let decoded = WriteBatch::new(&again).expect("a header");
    let reread: Result<Vec<Op<'_>>, _> = decoded.ops().collect();
    assert_eq!(
        reread.as_deref(),
        Ok(&ops[..]),
        "re-encoded operations differ"
    );
}

fn check_edit(data: &[u8]) {
    let items: Vec<Result<Field<'_>, EditError>> = VersionEdit::new(data).fields().collect();
    let mut fields = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item {
            Ok(field) => fields.push(field.clone()),
            Err(error) => {
                assert_eq!(i + 1, items.len(), "the error is the last item");
                let offset = match *error {
                    EditError::UnknownTag { offset, .. }
                    | EditError::InvalidTag { offset }
                    | EditError::UnknownFileField { offset, .. }
                    | EditError::BadField { offset, .. } => offset,
                    other => panic!("unexpected {other:?}"),
                };
                assert!(offset < data.len(), "{error:?}");
            }
        }
    }
    // The fields that can be encoded again (not the opaque RocksDB records whose inner
    // layout this check does not rebuild), encoded canonically, read back the same.
    let simple: Vec<Field<'_>> = fields.into_iter().filter(|f| encodable(f)).collect();
    let mut again = Vec::new();
    for field in &simple {
        encode_field(field, &mut again);
    }
    let reread: Result<Vec<Field<'_>>, _> = VersionEdit::new(&again).fields().collect();
    assert_eq!(
        reread.as_deref(),
        Ok(&simple[..]),
        "re-encoded fields differ"
    );
}

/// The byte strings an operation borrows, in record order.
fn slices<'a>(op: &Op<'a>) -> Vec<&'a [u8]> {
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
        }
        | Op::TimedPut { key, value, .. } => vec![key, value],
        Op::Delete { key, .. } | Op::SingleDelete { key, .. } => vec![key],
        Op::DeleteRange { begin, end, .. } => vec![begin, end],
        Op::LogData { blob } => vec![blob],
        Op::EndPrepare { xid } | Op::Rollback { xid } => vec![xid],
        Op::Commit { xid, timestamp } => timestamp.into_iter().chain([xid]).collect(),
        _ => Vec::new(),
    }
}

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn bytes(out: &mut Vec<u8>, data: &[u8]) {
    varint(out, data.len() as u64);
    out.extend_from_slice(data);
}

/// Whether [`encode_field`] encodes `field`.
fn encodable(field: &Field<'_>) -> bool {
    !matches!(
        field,
        Field::BlobFileAddition { .. }
            | Field::BlobFileGarbage { .. }
            | Field::WalAddition { .. }
            | Field::Ignorable { .. }
    )
}

fn internal_key(out: &mut Vec<u8>, key: &logfmt_std::content::InternalKey<'_>) {
    let mut encoded = key.user_key.to_vec();
    encoded.extend_from_slice(&(key.sequence << 8 | u64::from(key.kind)).to_le_bytes());
    bytes(out, &encoded);
}

fn encode_field(field: &Field<'_>, out: &mut Vec<u8>) {
    let number = |out: &mut Vec<u8>, tag: u64, value: u64| {
        varint(out, tag);
        varint(out, value);
    };
    match field {
        Field::Comparator(name) => {
            varint(out, 1);
            bytes(out, name);
        }
        Field::LogNumber(n) => number(out, 2, *n),
        Field::NextFileNumber(n) => number(out, 3, *n),
        Field::LastSequence(n) => number(out, 4, *n),
        Field::CompactPointer { level, key } => {
            number(out, 5, u64::from(*level));
            internal_key(out, key);
        }
        Field::DeletedFile {
            level,
            number: file,
        } => {
            number(out, 6, u64::from(*level));
            varint(out, *file);
        }
        Field::NewFile(file) => {
            use logfmt_std::content::NewFileTag;
            varint(out, u64::from(file.tag.tag()));
            varint(out, u64::from(file.level));
            varint(out, file.number);
            if file.tag == NewFileTag::NewFile3 {
                varint(out, u64::from(file.path_id));
            }
            varint(out, file.size);
            match &file.range_keys {
                // Pebble's 104: the marker, point bounds if it says so, range bounds.
                Some(bounds) => {
                    out.push(bounds.marker);
                    if let Some((smallest, largest)) = &bounds.point {
                        internal_key(out, smallest);
                        internal_key(out, largest);
                    }
                    internal_key(out, &bounds.smallest);
                    internal_key(out, &bounds.largest);
                }
                None => {
                    internal_key(out, &file.smallest);
                    internal_key(out, &file.largest);
                }
            }
            if let Some((low, high)) = file.seqnos {
                varint(out, low);
                varint(out, high);
            }
            if matches!(file.tag, NewFileTag::NewFile4 | NewFileTag::NewFile5) {
                for custom in &file.custom {
                    let mut value = Vec::new();
                    let tag = match *custom {
                        // Pebble's fields that are not length-prefixed.
                        FileField::Virtual { backing } => {
                            varint(out, 66);
                            varint(out, backing);
                            continue;
                        }
                        FileField::BlobReferences(refs) => {
                            varint(out, 69);
                            varint(out, refs.depth());
                            varint(out, refs.len());
                            for (id, size) in refs.iter() {
                                varint(out, id);
                                varint(out, size);
                            }
                            continue;
                        }
                        FileField::SyntheticPrefix(d) => {
                            value.extend_from_slice(d);
                            67
                        }
                        FileField::SyntheticSuffix(d) => {
                            value.extend_from_slice(d);
                            68
                        }
                        FileField::NeedCompaction(b) => {
                            value.push(u8::from(b));
                            2
                        }
                        FileField::MinLogNumberToKeep(n) => {
                            value.extend_from_slice(&n.to_le_bytes());
                            3
                        }
                        FileField::OldestBlobFileNumber(n) => {
                            varint(&mut value, n);
                            4
                        }
                        FileField::OldestAncesterTime(n) => {
                            varint(&mut value, n);
                            5
                        }
                        FileField::FileCreationTime(n) => {
                            varint(&mut value, n);
                            6
                        }
                        FileField::FileChecksum(d) => {
                            value.extend_from_slice(d);
                            7
                        }
                        FileField::FileChecksumFuncName(d) => {
                            value.extend_from_slice(d);
                            8
                        }
                        FileField::Temperature(t) => {
                            value.push(t);
                            9
                        }
                        FileField::MinTimestamp(d) => {
                            value.extend_from_slice(d);
                            10
                        }
                        FileField::MaxTimestamp(d) => {
                            value.extend_from_slice(d);
                            11
                        }
                        FileField::UniqueId(d) => {
                            value.extend_from_slice(d);
                            12
                        }
                        FileField::EpochNumber(n) => {
                            varint(&mut value, n);
                            13
                        }
                        FileField::CompensatedRangeDeletionSize(n) => {
                            varint(&mut value, n);
                            14
                        }
                        FileField::TailSize(n) => {
                            varint(&mut value, n);
                            15
                        }
                        FileField::UserDefinedTimestampsPersisted(b) => {
                            value.push(u8::from(b));
                            16
                        }
                        FileField::FileOpenMetadata(d) => {
                            value.extend_from_slice(d);
                            17
                        }
                        FileField::PathId(id) => {
                            value.push(id);
                            65
                        }
                        FileField::Unknown { tag, data } => {
                            value.extend_from_slice(data);
                            u64::from(tag)
                        }
                        other => panic!("no encoding for {other:?}"),
                    };
                    varint(out, tag);
                    bytes(out, &value);
                }
                varint(out, 1);
            }
        }
        Field::CreatedBackingTable { number: n, size } => {
            number(out, 105, *n);
            varint(out, *size);
        }
        Field::RemovedBackingTable(n) => number(out, 106, *n),
        Field::NewBlobFile {
            id,
            number: n,
            size,
            value_size,
            creation_time,
        } => {
            for value in [107, *id, *n, *size, *value_size, *creation_time] {
                varint(out, value);
            }
        }
        Field::DeletedBlobFile { id, number: n } => {
            for value in [108, *id, *n] {
                varint(out, value);
            }
        }
        Field::PrevLogNumber(n) => number(out, 9, *n),
        Field::MinLogNumberToKeep(n) => number(out, 10, *n),
        Field::ColumnFamily(n) => number(out, 200, u64::from(*n)),
        Field::ColumnFamilyAdd(name) => {
            varint(out, 201);
            bytes(out, name);
        }
        Field::ColumnFamilyDrop => varint(out, 202),
        Field::MaxColumnFamily(n) => number(out, 203, u64::from(*n)),
        Field::InAtomicGroup(n) => number(out, 300, u64::from(*n)),
        Field::DbId(name) => {
            varint(out, 8193);
            bytes(out, name);
        }
        Field::WalDeletion(n) => number(out, 8197, *n),
        Field::FullHistoryTsLow(ts) => {
            varint(out, 8198);
            bytes(out, ts);
        }
        Field::PersistUserDefinedTimestamps(b) => {
            varint(out, 8201);
            bytes(out, &[u8::from(*b)]);
        }
        Field::SubcompactionProgress(d) => {
            varint(out, 8202);
            bytes(out, d);
        }
        Field::LastCompactedManifestFileSize(n) => {
            varint(out, 8203);
            let mut value = Vec::new();
            varint(&mut value, *n);
            bytes(out, &value);
        }
        other => panic!("no encoding for {other:?}"),
    }
}
