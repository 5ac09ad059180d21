//! Pebble's MANIFEST records, built by the rules of Pebble's own encoder
//! (`internal/manifest/version_edit.go`, `VersionEdit.Encode`): its fields in its order, its
//! choice of new-file tag (104 for a table with range keys, 103 for one with custom fields,
//! 100 otherwise), its custom fields (creation time 6, needs compaction 2, virtual backing
//! 66, synthetic prefix 67 and suffix 68, blob references 69, then terminate 1), backing
//! tables (105, 106) and blob files (107, 108) — every field read back by [`VersionEdit`].

use logfmt_std::content::{EditError, Field, FileField, InternalKey, NewFileTag, VersionEdit};
use proptest::prelude::*;

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn put_bytes(out: &mut Vec<u8>, data: &[u8]) {
    put_varint(out, data.len() as u64);
    out.extend_from_slice(data);
}

/// An internal key: user key, sequence number (56 bits), kind.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key(Vec<u8>, u64, u8);

impl Key {
    /// Pebble's `writeKey`: the length of key and trailer, the user key, the trailer.
    fn put(&self, out: &mut Vec<u8>) {
        put_varint(out, self.0.len() as u64 + 8);
        out.extend_from_slice(&self.0);
        out.extend_from_slice(&(self.1 << 8 | u64::from(self.2)).to_le_bytes());
    }

    fn matches(&self, key: &InternalKey<'_>) -> bool {
        key.user_key == self.0 && key.sequence == self.1 && key.kind == self.2
    }
}

/// A table Pebble adds to a level (`NewTableEntry` and the fields of its `TableMetadata` that
/// the encoder writes).
#[derive(Debug, Clone)]
struct Table {
    level: u32,
    number: u64,
    size: u64,
    point: Option<(Key, Key)>,
    /// Range key bounds, and whether the table's smallest and largest bounds are its point
    /// keys' (the marker's bits 1 and 2; only with point keys).
    range: Option<(Key, Key, bool, bool)>,
    seqnos: (u64, u64),
    creation_time: u64,
    marked_for_compaction: bool,
    virtual_backing: Option<u64>,
    prefix: Option<Vec<u8>>,
    suffix: Option<Vec<u8>>,
    blob_depth: u64,
    blob_references: Vec<(u64, u64)>,
}

impl Table {
    fn custom_fields(&self) -> bool {
        self.marked_for_compaction
            || self.creation_time != 0
            || self.virtual_backing.is_some()
            || !self.blob_references.is_empty()
    }

    /// Pebble's `Encode` of one new table.
    fn put(&self, out: &mut Vec<u8>) {
        let tag = match (&self.range, self.custom_fields()) {
            (Some(_), _) => 104,
            (None, true) => 103,
            (None, false) => 100,
        };
        put_varint(out, tag);
        put_varint(out, u64::from(self.level));
        put_varint(out, self.number);
        put_varint(out, self.size);
        match &self.range {
            None => {
                let (smallest, largest) = self.point.as_ref().expect("a table has keys");
                smallest.put(out);
                largest.put(out);
            }
            Some((smallest, largest, point_smallest, point_largest)) => {
                let mut marker = 0u8;
                if self.point.is_some() {
                    marker |= 1;
                    marker |= u8::from(*point_smallest) << 1;
                    marker |= u8::from(*point_largest) << 2;
                }
                out.push(marker);
                if let Some((s, l)) = &self.point {
                    s.put(out);
                    l.put(out);
                }
                smallest.put(out);
                largest.put(out);
            }
        }
        put_varint(out, self.seqnos.0);
        put_varint(out, self.seqnos.1);
        if !self.custom_fields() {
            return;
        }
        if self.creation_time != 0 {
            put_varint(out, 6);
            let mut value = Vec::new();
            put_varint(&mut value, self.creation_time);
            put_bytes(out, &value);
        }
        if self.marked_for_compaction {
            put_varint(out, 2);
            put_bytes(out, &[1]);
        }
        if let Some(backing) = self.virtual_backing {
            put_varint(out, 66);
            put_varint(out, backing);
        }
        if let Some(prefix) = &self.prefix {
            put_varint(out, 67);
            put_bytes(out, prefix);
        }
        if let Some(suffix) = &self.suffix {
            put_varint(out, 68);
            put_bytes(out, suffix);
        }
        if !self.blob_references.is_empty() {
            put_varint(out, 69);
            put_varint(out, self.blob_depth);
            put_varint(out, self.blob_references.len() as u64);
            for &(id, value_size) in &self.blob_references {
                put_varint(out, id);
                put_varint(out, value_size);
            }
        }
        put_varint(out, 1);
    }

    /// Whether `file` is this table read back.
    fn check(&self, file: &logfmt_std::content::NewFile<'_>) -> Result<(), TestCaseError> {
        let tag = match (&self.range, self.custom_fields()) {
            (Some(_), _) => NewFileTag::NewFile5,
            (None, true) => NewFileTag::NewFile4,
            (None, false) => NewFileTag::NewFile2,
        };
        prop_assert_eq!(file.tag, tag);
        prop_assert_eq!(
            (file.level, file.number, file.size, file.seqnos),
            (self.level, self.number, self.size, Some(self.seqnos))
        );
        match (&self.range, &file.range_keys) {
            (None, None) => {
                let (s, l) = self.point.as_ref().expect("keys");
                prop_assert!(s.matches(&file.smallest) && l.matches(&file.largest));
            }
            (Some((s, l, ps, pl)), Some(bounds)) => {
                prop_assert!(s.matches(&bounds.smallest) && l.matches(&bounds.largest));
                match (&self.point, &bounds.point) {
                    (None, None) => {
                        prop_assert!(s.matches(&file.smallest) && l.matches(&file.largest));
                    }
                    (Some((a, b)), Some((x, y))) => {
                        prop_assert!(a.matches(x) && b.matches(y));
                        let smallest = if *ps { a } else { s };
                        let largest = if *pl { b } else { l };
                        prop_assert!(smallest.matches(&file.smallest));
                        prop_assert!(largest.matches(&file.largest));
                    }
                    other => prop_assert!(false, "point bounds {:?}", other),
                }
            }
            other => prop_assert!(false, "range bounds {:?}", other),
        }
        let mut want = Vec::new();
        if self.custom_fields() {
            if self.creation_time != 0 {
                want.push(format!(
                    "{:?}",
                    FileField::FileCreationTime(self.creation_time)
                ));
            }
            if self.marked_for_compaction {
                want.push(format!("{:?}", FileField::NeedCompaction(true)));
            }
            if let Some(backing) = self.virtual_backing {
                want.push(format!("{:?}", FileField::Virtual { backing }));
            }
            if let Some(prefix) = &self.prefix {
                want.push(format!("{:?}", FileField::SyntheticPrefix(prefix)));
            }
            if let Some(suffix) = &self.suffix {
                want.push(format!("{:?}", FileField::SyntheticSuffix(suffix)));
            }
            if !self.blob_references.is_empty() {
                want.push(format!(
                    "blob references depth {} {:?}",
                    self.blob_depth, self.blob_references
                ));
            }
        }
        let got: Vec<String> = file
            .custom
            .iter()
            .map(|field| match field {
                FileField::BlobReferences(refs) => format!(
                    "blob references depth {} {:?}",
                    refs.depth(),
                    refs.iter().collect::<Vec<_>>()
                ),
                other => format!("{other:?}"),
            })
            .collect();
        prop_assert_eq!(got, want);
        Ok(())
    }
}

/// A Pebble `VersionEdit`: the fields its encoder writes.
#[derive(Debug, Clone, Default)]
struct Edit {
    comparator: Option<Vec<u8>>,
    log_number: u64,
    prev_log_number: u64,
    next_file_number: u64,
    removed_backing: Vec<u64>,
    created_backing: Vec<(u64, u64)>,
    last_sequence: u64,
    deleted: Vec<(u32, u64)>,
    tables: Vec<Table>,
    new_blob_files: Vec<(u64, u64, u64, u64, u64)>,
    deleted_blob_files: Vec<(u64, u64)>,
}

impl Edit {
    /// Pebble's `VersionEdit.Encode`, field by field in its order.
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if let Some(name) = &self.comparator {
            put_varint(&mut out, 1);
            put_bytes(&mut out, name);
        }
        if self.log_number != 0 {
            put_varint(&mut out, 2);
            put_varint(&mut out, self.log_number);
        }
        if self.prev_log_number != 0 {
            put_varint(&mut out, 9);
            put_varint(&mut out, self.prev_log_number);
        }
        if self.next_file_number != 0 {
            put_varint(&mut out, 3);
            put_varint(&mut out, self.next_file_number);
        }
        for &n in &self.removed_backing {
            put_varint(&mut out, 106);
            put_varint(&mut out, n);
        }
        for &(n, size) in &self.created_backing {
            put_varint(&mut out, 105);
            put_varint(&mut out, n);
            put_varint(&mut out, size);
        }
        if self.last_sequence != 0 || self.comparator.is_some() {
            put_varint(&mut out, 4);
            put_varint(&mut out, self.last_sequence);
        }
        for &(level, n) in &self.deleted {
            put_varint(&mut out, 6);
            put_varint(&mut out, u64::from(level));
            put_varint(&mut out, n);
        }
        for table in &self.tables {
            table.put(&mut out);
        }
        for &(id, n, size, value_size, time) in &self.new_blob_files {
            for value in [107, id, n, size, value_size, time] {
                put_varint(&mut out, value);
            }
        }
        for &(id, n) in &self.deleted_blob_files {
            for value in [108, id, n] {
                put_varint(&mut out, value);
            }
        }
        out
    }

    /// Whether `fields` are this edit read back, in the encoder's order.
    fn check(&self, fields: &[Field<'_>]) -> Result<(), TestCaseError> {
        let mut fields = fields.iter();
        let mut next = || fields.next().cloned();
        if let Some(name) = &self.comparator {
            prop_assert_eq!(next(), Some(Field::Comparator(name)));
        }
        if self.log_number != 0 {
            prop_assert_eq!(next(), Some(Field::LogNumber(self.log_number)));
        }
        if self.prev_log_number != 0 {
            prop_assert_eq!(next(), Some(Field::PrevLogNumber(self.prev_log_number)));
        }
        if self.next_file_number != 0 {
            prop_assert_eq!(next(), Some(Field::NextFileNumber(self.next_file_number)));
        }
        for &n in &self.removed_backing {
            prop_assert_eq!(next(), Some(Field::RemovedBackingTable(n)));
        }
        for &(number, size) in &self.created_backing {
            prop_assert_eq!(next(), Some(Field::CreatedBackingTable { number, size }));
        }
        if self.last_sequence != 0 || self.comparator.is_some() {
            prop_assert_eq!(next(), Some(Field::LastSequence(self.last_sequence)));
        }
        for &(level, number) in &self.deleted {
            prop_assert_eq!(next(), Some(Field::DeletedFile { level, number }));
        }
        for table in &self.tables {
            match next() {
                Some(Field::NewFile(file)) => table.check(&file)?,
                other => prop_assert!(false, "a new file, not {:?}", other),
            }
        }
        for &(id, number, size, value_size, creation_time) in &self.new_blob_files {
            prop_assert_eq!(
                next(),
                Some(Field::NewBlobFile {
                    id,
                    number,
                    size,
                    value_size,
                    creation_time
                })
            );
        }
        for &(id, number) in &self.deleted_blob_files {
            prop_assert_eq!(next(), Some(Field::DeletedBlobFile { id, number }));
        }
        prop_assert_eq!(next(), None);
        Ok(())
    }
}

fn key() -> impl Strategy<Value = Key> {
    (
        proptest::collection::vec(any::<u8>(), 0..12),
        0..(1u64 << 56),
        any::<u8>(),
    )
        .prop_map(|(k, s, t)| Key(k, s, t))
}

fn table() -> impl Strategy<Value = Table> {
    let bytes = || proptest::option::of(proptest::collection::vec(any::<u8>(), 0..8));
    (
        (0..7u32, any::<u64>(), any::<u64>()),
        (
            proptest::option::of((key(), key())),
            proptest::option::of((key(), key(), any::<bool>(), any::<bool>())),
        ),
        (
            any::<u64>(),
            any::<u64>(),
            prop_oneof![Just(0u64), any::<u64>()],
            any::<bool>(),
        ),
        (proptest::option::of(any::<u64>()), bytes(), bytes()),
        (
            any::<u64>(),
            proptest::collection::vec((any::<u64>(), any::<u64>()), 0..4),
        ),
    )
        .prop_map(
            |(
                (level, number, size),
                (point, range),
                (s0, s1, time, marked),
                (virt, prefix, suffix),
                (depth, refs),
            )| {
                // A table has point keys, range keys or both; the marker's point bits only with
                // point keys.
                let (point, range) = match (point, range) {
                    (None, None) => (
                        Some((Key(b"a".to_vec(), 1, 1), Key(b"b".to_vec(), 2, 1))),
                        None,
                    ),
                    (None, Some((s, l, _, _))) => (None, Some((s, l, false, false))),
                    other => other,
                };
                // Pebble's decoder reads custom fields after every 104; its encoder writes them
                // when a table has any, and every table it adds has a creation time.
                let time =
                    if range.is_some() && time == 0 && !marked && virt.is_none() && refs.is_empty()
                    {
                        1
                    } else {
                        time
                    };
                Table {
                    level,
                    number,
                    size,
                    point,
                    range,
                    seqnos: (s0, s1),
                    creation_time: time,
                    marked_for_compaction: marked,
                    virtual_backing: virt,
                    prefix,
                    suffix,
                    blob_depth: depth,
                    blob_references: refs,
                }
            },
        )
}

fn edit() -> impl Strategy<Value = Edit> {
    (
        (
            proptest::option::of(proptest::collection::vec(any::<u8>(), 0..20)),
            prop_oneof![Just(0u64), any::<u64>()],
            prop_oneof![Just(0u64), any::<u64>()],
            prop_oneof![Just(0u64), any::<u64>()],
        ),
        (
            proptest::collection::vec(any::<u64>(), 0..3),
            proptest::collection::vec((any::<u64>(), any::<u64>()), 0..3),
            prop_oneof![Just(0u64), any::<u64>()],
            proptest::collection::vec((0..7u32, any::<u64>()), 0..3),
        ),
        proptest::collection::vec(table(), 0..4),
        (
            proptest::collection::vec(any::<(u64, u64, u64, u64, u64)>(), 0..3),
            proptest::collection::vec((any::<u64>(), any::<u64>()), 0..3),
        ),
    )
        .prop_map(
            |(
                (comparator, log, prev, next),
                (removed, created, last, deleted),
                tables,
                (blobs, gone),
            )| Edit {
                comparator,
                log_number: log,
                prev_log_number: prev,
                next_file_number: next,
                removed_backing: removed,
                created_backing: created,
                last_sequence: last,
                deleted,
                tables,
                new_blob_files: blobs,
                deleted_blob_files: gone,
            },
        )
}

proptest! {
    /// Every edit Pebble's encoder writes is read back whole, field by field.
    #[test]
    fn pebble_edits_read_back(edit in edit()) {
        let record = edit.encode();
        let fields: Result<Vec<_>, EditError> = VersionEdit::new(&record).fields().collect();
        prop_assert!(fields.is_ok(), "{:?}", fields);
        edit.check(&fields.unwrap_or_default())?;
    }

    /// Pebble's edits cut anywhere: an error at the end, never a panic, and the fields before
    /// the cut as they were.
    #[test]
    fn pebble_edits_cut_short(edit in edit(), cut in any::<prop::sample::Index>()) {
        let record = edit.encode();
        if record.is_empty() {
            return Ok(());
        }
        let cut = cut.index(record.len());
        let whole: Vec<_> = VersionEdit::new(&record).fields().collect();
        let part: Vec<_> = VersionEdit::new(&record[..cut]).fields().collect();
        let good = part.iter().take_while(|f| f.is_ok()).count();
        prop_assert_eq!(&part[..good], &whole[..good]);
        prop_assert!(part.len() <= good + 1);
    }
}

/// A CockroachDB-shaped MANIFEST edit: a virtual table of an ingested (external) table with a
/// synthetic prefix and suffix, its backing created in the same edit, a blob file and a table
/// with range keys only.
#[test]
fn a_pebble_edit_with_every_tag() {
    let edit = Edit {
        comparator: Some(b"cockroach_comparator".to_vec()),
        log_number: 8,
        next_file_number: 30,
        created_backing: vec![(21, 4096)],
        removed_backing: vec![17],
        last_sequence: 900,
        deleted: vec![(5, 21)],
        tables: vec![
            Table {
                level: 5,
                number: 22,
                size: 2048,
                point: Some((Key(b"/a".to_vec(), 10, 1), Key(b"/m".to_vec(), 20, 1))),
                range: None,
                seqnos: (10, 20),
                creation_time: 1_700_000_000,
                marked_for_compaction: true,
                virtual_backing: Some(21),
                prefix: Some(b"/t1".to_vec()),
                suffix: Some(vec![0x09, 0x01]),
                blob_depth: 1,
                blob_references: vec![(3, 512), (4, 7)],
            },
            Table {
                level: 6,
                number: 23,
                size: 100,
                point: None,
                range: Some((
                    Key(b"r".to_vec(), 30, 0x15),
                    Key(b"s".to_vec(), 31, 0x15),
                    false,
                    false,
                )),
                seqnos: (30, 31),
                creation_time: 1_700_000_002,
                marked_for_compaction: false,
                virtual_backing: None,
                prefix: None,
                suffix: None,
                blob_depth: 0,
                blob_references: Vec::new(),
            },
        ],
        new_blob_files: vec![(3, 24, 10_000, 9_000, 1_700_000_001)],
        deleted_blob_files: vec![(2, 19)],
        ..Edit::default()
    };
    let record = edit.encode();
    let fields: Vec<_> = VersionEdit::new(&record)
        .fields()
        .collect::<Result<_, _>>()
        .expect("Pebble's edit reads");
    edit.check(&fields).expect("every field as written");
    let tags: Vec<_> = fields
        .iter()
        .filter_map(|f| match f {
            Field::NewFile(file) => Some(file.tag.tag()),
            _ => None,
        })
        .collect();
    assert_eq!(tags, [103, 104]);
}

/// A table with range keys whose marker claims point bounds without point keys: Pebble's
/// corruption error, at the field.
#[test]
fn a_marker_with_point_bounds_but_no_point_keys_is_bad() {
    let mut record = vec![104, 6, 12, 100, 0b110];
    Key(b"a".to_vec(), 1, 0x15).put(&mut record);
    Key(b"b".to_vec(), 2, 0x15).put(&mut record);
    record.extend_from_slice(&[1, 2, 1]);
    let error = VersionEdit::new(&record).fields().find_map(Result::err);
    assert_eq!(
        error,
        Some(EditError::BadField {
            tag: 104,
            offset: 0,
            what: "new-file5: a table without point keys has point key bounds"
        })
    );
}

/// Tags past Pebble's (109 on) and custom fields past Pebble's (70 on, not safe to ignore)
/// are unknown to this version: errors that say so, distinct from damage.
#[test]
fn tags_past_pebbles_are_unknown_not_damage() {
    let error = VersionEdit::new(&[2, 5, 109, 1])
        .fields()
        .find_map(Result::err)
        .expect("an error");
    assert_eq!(
        error,
        EditError::UnknownTag {
            tag: 109,
            offset: 2
        }
    );
    assert!(error.is_unknown());
    let mut record = vec![103, 0, 5, 10];
    Key(b"k".to_vec(), 1, 1).put(&mut record);
    Key(b"k".to_vec(), 1, 1).put(&mut record);
    record.extend_from_slice(&[1, 1, 70, 0, 1]);
    let error = VersionEdit::new(&record).fields().find_map(Result::err);
    assert_eq!(
        error,
        Some(EditError::UnknownFileField {
            tag: 103,
            field: 70,
            offset: 0
        })
    );
    // A custom field below 64 that no one defines is safe to ignore: reported, not an error.
    let mut record = vec![103, 0, 5, 10];
    Key(b"k".to_vec(), 1, 1).put(&mut record);
    Key(b"k".to_vec(), 1, 1).put(&mut record);
    record.extend_from_slice(&[1, 1, 40, 2, b'h', b'i', 1]);
    let Some(Ok(Field::NewFile(file))) = VersionEdit::new(&record).fields().next() else {
        panic!("a new file");
    };
    assert_eq!(
        file.custom,
        [FileField::Unknown {
            tag: 40,
            data: b"hi"
        }]
    );
    // Cut short: damage, not unknown.
    let error = VersionEdit::new(&[105, 3])
        .fields()
        .find_map(Result::err)
        .expect("an error");
    assert!(!error.is_unknown());
}
