//! LevelDB's, RocksDB's and Pebble's `VersionEdit`: the payload of every record of a MANIFEST.
//!
//! An edit is a sequence of fields, each a varint32 tag and its value. The tags are
//! LevelDB's (`db/version_edit.cc`: 1–7 and 9), RocksDB's (`db/version_edit.h`: 10, the
//! new-file formats 100, 102 and 103, column families 200–203, atomic groups 300, blob files
//! 400–401, and the forward-compatible tags from 8193 on) and Pebble's
//! (`internal/manifest/version_edit.go`: the new-file format 104 with range keys, backing
//! tables 105–106, blob files 107–108, and the custom fields 66–69 of new files in formats
//! 103 and 104). A tag RocksDB does not know but
//! marks as safe to ignore (bit 13, `kTagSafeIgnoreMask`) is followed by a length-prefixed
//! value: it is returned as [`Field::Ignorable`], never skipped silently. Any other unknown
//! tag ends the edit with [`EditError::UnknownTag`]: what follows it cannot be read.

use std::fmt;

use super::coding::Cursor;

/// RocksDB's `kTagSafeIgnoreMask`: an unknown tag with this bit set may be skipped (its value
/// is length-prefixed).
///
/// ```
/// use logfmt_std::content::{Field, TAG_SAFE_IGNORE_MASK, VersionEdit};
///
/// // Tag 8300 (bit 13 set), a 2-byte value: reported, not skipped silently.
/// assert_ne!(8300 & TAG_SAFE_IGNORE_MASK, 0);
/// let record = [0xec, 0x40, 2, b'h', b'i'];
/// let fields: Vec<_> = VersionEdit::new(&record).fields().collect();
/// assert_eq!(fields, [Ok(Field::Ignorable { tag: 8300, data: b"hi" })]);
/// ```
pub const TAG_SAFE_IGNORE_MASK: u32 = 1 << 13;

/// A `VersionEdit` read from a MANIFEST record, to be read field by field
/// ([`fields`](Self::fields)); equivalent of `VersionEdit::DecodeFrom` in LevelDB and
/// RocksDB, with every field kept in its order.
///
/// ```
/// use logfmt_std::content::{Field, VersionEdit};
///
/// // Comparator "cmp", log number 5, next file number 7.
/// let record = [1, 3, b'c', b'm', b'p', 2, 5, 3, 7];
/// let fields = VersionEdit::new(&record).fields().collect::<Result<Vec<_>, _>>()?;
/// assert_eq!(
///     fields,
///     [Field::Comparator(b"cmp"), Field::LogNumber(5), Field::NextFileNumber(7)]
/// );
/// # Ok::<(), logfmt_std::content::EditError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionEdit<'a> {
    record: &'a [u8],
}

impl<'a> VersionEdit<'a> {
    /// The edit in `record` (a whole logical record of a MANIFEST).
    ///
    /// ```
    /// use logfmt_std::content::VersionEdit;
    ///
    /// assert_eq!(VersionEdit::new(&[]).fields().count(), 0);
    /// ```
    #[must_use]
    pub fn new(record: &'a [u8]) -> Self {
        Self { record }
    }

    /// The fields, in order. A field that cannot be read ends them with its error.
    ///
    /// ```
    /// use logfmt_std::content::{Field, VersionEdit};
    ///
    /// // Last sequence 300 (a two-byte varint), then a column family drop (202).
    /// let record = [4, 0xac, 0x02, 0xca, 0x01];
    /// let fields: Vec<_> = VersionEdit::new(&record).fields().collect();
    /// assert_eq!(fields, [Ok(Field::LastSequence(300)), Ok(Field::ColumnFamilyDrop)]);
    /// ```
    #[must_use]
    pub fn fields(&self) -> Fields<'a> {
        Fields {
            cursor: Cursor::new(self.record, 0),
            done: false,
        }
    }
}

/// The fields of a [`VersionEdit`], in order ([`VersionEdit::fields`]): an [`Iterator`] of
/// each field or the error that ends them.
///
/// ```
/// use logfmt_std::content::{EditError, Field, VersionEdit};
///
/// // Log number 5, then tag 8, which no one defines.
/// let record = [2, 5, 8];
/// let mut fields = VersionEdit::new(&record).fields();
/// assert_eq!(fields.next(), Some(Ok(Field::LogNumber(5))));
/// assert_eq!(fields.next(), Some(Err(EditError::UnknownTag { tag: 8, offset: 2 })));
/// assert_eq!(fields.next(), None);
/// ```
#[derive(Debug, Clone)]
pub struct Fields<'a> {
    cursor: Cursor<'a>,
    done: bool,
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<Field<'a>, EditError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.cursor.is_empty() {
            return None;
        }
        let result = read_field(&mut self.cursor);
        self.done = result.is_err();
        Some(result)
    }
}

impl std::iter::FusedIterator for Fields<'_> {}

/// An internal key: a user key with the sequence number and value type of the entry
/// (LevelDB's `ParsedInternalKey`), as a file's smallest and largest keys are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct InternalKey<'a> {
    /// The user's key.
    pub user_key: &'a [u8],
    /// The sequence number (56 bits).
    pub sequence: u64,
    /// The value type (the [`Op`](super::Op) tags: 1 value, 0 deletion, ...).
    pub kind: u8,
}

impl<'a> InternalKey<'a> {
    /// The internal key encoded in `encoded`: the user key, then a fixed64 of
    /// `sequence << 8 | kind`; `None` if it is shorter than 8 bytes.
    ///
    /// ```
    /// use logfmt_std::content::InternalKey;
    ///
    /// let mut encoded = b"key".to_vec();
    /// encoded.extend_from_slice(&(42u64 << 8 | 1).to_le_bytes());
    /// let key = InternalKey::decode(&encoded).unwrap();
    /// assert_eq!((key.user_key, key.sequence, key.kind), (&b"key"[..], 42, 1));
    /// ```
    #[must_use]
    pub fn decode(encoded: &'a [u8]) -> Option<Self> {
        let split = encoded.len().checked_sub(8)?;
        let (user_key, trailer) = encoded.split_at(split);
        let trailer = u64::from_le_bytes(trailer.try_into().ok()?);
        Some(Self {
            user_key,
            sequence: trailer >> 8,
            kind: (trailer & 0xff) as u8,
        })
    }
}

/// How a new file was recorded: which of the tags that add a file.
///
/// ```
/// use logfmt_std::content::NewFileTag;
///
/// let tags: Vec<u32> = [NewFileTag::NewFile, NewFileTag::NewFile2, NewFileTag::NewFile3]
///     .iter()
///     .map(|t| t.tag())
///     .collect();
/// assert_eq!(tags, [7, 100, 102]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NewFileTag {
    /// LevelDB's `kNewFile` (7): level, number, size, smallest and largest key.
    NewFile,
    /// RocksDB's `kNewFile2` (100): and the smallest and largest sequence numbers.
    NewFile2,
    /// RocksDB's `kNewFile3` (102): and a path id.
    NewFile3,
    /// RocksDB's `kNewFile4` (103): and custom fields (the path id among them). Pebble writes
    /// it too, with its own custom fields.
    NewFile4,
    /// Pebble's `tagNewFile5` (104): a table with range keys — a bounds marker, the point
    /// key bounds if it has point keys, the range key bounds, the sequence numbers and custom
    /// fields ([`NewFile::range_keys`]).
    NewFile5,
}

impl NewFileTag {
    /// The tag number.
    ///
    /// ```
    /// assert_eq!(logfmt_std::content::NewFileTag::NewFile4.tag(), 103);
    /// ```
    #[must_use]
    pub fn tag(self) -> u32 {
        match self {
            Self::NewFile => 7,
            Self::NewFile2 => 100,
            Self::NewFile3 => 102,
            Self::NewFile4 => 103,
            Self::NewFile5 => 104,
        }
    }
}

/// A table file added to a level.
///
/// ```
/// use logfmt_std::content::{Field, NewFileTag, VersionEdit};
///
/// // kNewFile: level 1, file 9, 300 bytes, keys "a" @ 1 (value) .. "b" @ 2 (deletion).
/// let mut record = vec![7, 1, 9, 0xac, 0x02, 9, b'a'];
/// record.extend_from_slice(&(1u64 << 8 | 1).to_le_bytes());
/// record.extend_from_slice(&[9, b'b']);
/// record.extend_from_slice(&(2u64 << 8).to_le_bytes());
/// let Some(Ok(Field::NewFile(file))) = VersionEdit::new(&record).fields().next() else {
///     panic!("a new file");
/// };
/// assert_eq!((file.tag, file.level, file.number, file.size), (NewFileTag::NewFile, 1, 9, 300));
/// assert_eq!((file.smallest.user_key, file.largest.kind), (&b"a"[..], 0));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct NewFile<'a> {
    /// The tag it was recorded with.
    pub tag: NewFileTag,
    /// The level.
    pub level: u32,
    /// The file number (`NNNNNN.ldb`/`.sst`).
    pub number: u64,
    /// The path id (RocksDB's `db_paths` index; 0 otherwise).
    pub path_id: u32,
    /// The file's size in bytes.
    pub size: u64,
    /// The smallest internal key in the file (of a table with range keys, the smaller of its
    /// point and range key bounds, as its bounds marker says).
    pub smallest: InternalKey<'a>,
    /// The largest internal key in the file (of a table with range keys, as its bounds marker
    /// says).
    pub largest: InternalKey<'a>,
    /// The smallest and largest sequence numbers in the file (formats 2–5).
    pub seqnos: Option<(u64, u64)>,
    /// The custom fields of `kNewFile4` and Pebble's `tagNewFile5`, in order (the path id
    /// among them).
    pub custom: Vec<FileField<'a>>,
    /// Pebble's range key bounds (`tagNewFile5` only).
    pub range_keys: Option<Box<RangeKeyBounds<'a>>>,
}

/// The bounds of a Pebble table with range keys, as `tagNewFile5` (104) records them: a
/// marker byte, the point key bounds if the table has point keys, then the range key bounds.
///
/// ```
/// use logfmt_std::content::{Field, NewFileTag, VersionEdit};
///
/// let key = |user: &[u8], seq: u64, kind: u8| {
///     let mut k = vec![user.len() as u8 + 8];
///     k.extend_from_slice(user);
///     k.extend_from_slice(&(seq << 8 | u64::from(kind)).to_le_bytes());
///     k
/// };
/// // Level 6, file 12, 900 bytes; marker 0: range keys only; range keys "a" .. "m"
/// // (RANGEKEYSET, 0x15); sequence numbers 3..4; no custom fields but the terminator.
/// let mut record = vec![104, 6, 12, 0x84, 0x07, 0];
/// record.extend(key(b"a", 3, 0x15));
/// record.extend(key(b"m", 4, 0x15));
/// record.extend_from_slice(&[3, 4, 1]);
/// let Some(Ok(Field::NewFile(file))) = VersionEdit::new(&record).fields().next() else {
///     panic!("a new file");
/// };
/// assert_eq!((file.tag, file.level, file.number, file.size), (NewFileTag::NewFile5, 6, 12, 900));
/// let bounds = file.range_keys.expect("range key bounds");
/// assert_eq!(bounds.point, None);
/// assert_eq!((bounds.smallest.user_key, bounds.largest.user_key), (&b"a"[..], &b"m"[..]));
/// assert_eq!(file.smallest, bounds.smallest);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct RangeKeyBounds<'a> {
    /// Pebble's bounds marker: bit 0 set if the table has point keys, bit 1 if its smallest
    /// key is a point key, bit 2 if its largest is.
    pub marker: u8,
    /// The smallest and largest point keys, if the table has point keys.
    pub point: Option<(InternalKey<'a>, InternalKey<'a>)>,
    /// The smallest range key.
    pub smallest: InternalKey<'a>,
    /// The largest range key.
    pub largest: InternalKey<'a>,
}

/// Pebble's blob references of a table (custom field 69): how deep the table's references
/// go, and for each blob file it references, the file's id and the bytes of values it holds
/// for the table.
///
/// ```
/// use logfmt_std::content::BlobReferences;
///
/// // Depth 1; two references: blob file 4 (300 bytes), blob file 9 (5 bytes).
/// let refs = BlobReferences::decode(&[1, 2, 4, 0xac, 0x02, 9, 5]).expect("well formed");
/// assert_eq!(refs.depth(), 1);
/// assert_eq!(refs.iter().collect::<Vec<_>>(), [(4, 300), (9, 5)]);
/// ```
///
/// Two are equal when they hold the same depth and references, however their varints were
/// written (a varint may take more bytes than it needs).
#[derive(Debug, Clone, Copy)]
pub struct BlobReferences<'a> {
    depth: u64,
    count: u64,
    /// The references' pairs of varints, exactly.
    pairs: &'a [u8],
}

impl<'a> BlobReferences<'a> {
    /// The references at the start of `data` (depth, count, then each file id and value
    /// size, all varints), if they are all there; the bytes after them are not looked at.
    #[must_use]
    pub fn decode(data: &'a [u8]) -> Option<Self> {
        Self::read(&mut Cursor::new(data, 0))
    }

    /// Takes the references off the front of `cursor`.
    fn read(cursor: &mut Cursor<'a>) -> Option<Self> {
        let depth = cursor.varint64()?;
        let count = cursor.varint64()?;
        let start = cursor.rest();
        let before = cursor.offset();
        // Each pair is at least two bytes: a count beyond what is left fails at once.
        for _ in 0..count {
            cursor.varint64()?;
            cursor.varint64()?;
        }
        let pairs = start.get(..cursor.offset() - before)?;
        Some(Self {
            depth,
            count,
            pairs,
        })
    }

    /// Pebble's blob reference depth of the table.
    #[must_use]
    pub fn depth(&self) -> u64 {
        self.depth
    }

    /// How many blob files are referenced.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.count
    }

    /// Whether no blob file is referenced.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Each reference: the blob file's id and the bytes of values the table keeps in it.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + use<'a> {
        let mut cursor = Cursor::new(self.pairs, 0);
        std::iter::from_fn(move || Some((cursor.varint64()?, cursor.varint64()?)))
    }
}

impl PartialEq for BlobReferences<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.depth == other.depth && self.count == other.count && self.iter().eq(other.iter())
    }
}

impl Eq for BlobReferences<'_> {}

impl std::hash::Hash for BlobReferences<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.depth.hash(state);
        self.count.hash(state);
        for pair in self.iter() {
            pair.hash(state);
        }
    }
}

/// A custom field of RocksDB's `kNewFile4` (`NewFileCustomTag`).
///
/// ```
/// use logfmt_std::content::{Field, FileField, VersionEdit};
///
/// let mut key = b"k".to_vec();
/// key.extend_from_slice(&(1u64 << 8 | 1).to_le_bytes());
/// // kNewFile4: level 0, file 5, size 10, keys, seqnos 1..1, then custom fields:
/// // need compaction (2) = 1, path id (65) = 0, terminate (1).
/// let mut record = vec![103, 0, 5, 10, 9];
/// record.extend_from_slice(&key);
/// record.push(9);
/// record.extend_from_slice(&key);
/// record.extend_from_slice(&[1, 1, 2, 1, 1, 65, 1, 0, 1]);
/// let Some(Ok(Field::NewFile(file))) = VersionEdit::new(&record).fields().next() else {
///     panic!("a new file");
/// };
/// assert_eq!(file.custom, [FileField::NeedCompaction(true), FileField::PathId(0)]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FileField<'a> {
    /// `kNeedCompaction` (2): marked for compaction.
    NeedCompaction(bool),
    /// `kMinLogNumberToKeepHack` (3): the oldest log still needed, kept here for older
    /// readers.
    MinLogNumberToKeep(u64),
    /// `kOldestBlobFileNumber` (4).
    OldestBlobFileNumber(u64),
    /// `kOldestAncesterTime` (5), Unix seconds.
    OldestAncesterTime(u64),
    /// `kFileCreationTime` (6), Unix seconds.
    FileCreationTime(u64),
    /// `kFileChecksum` (7).
    FileChecksum(&'a [u8]),
    /// `kFileChecksumFuncName` (8).
    FileChecksumFuncName(&'a [u8]),
    /// `kTemperature` (9).
    Temperature(u8),
    /// `kMinTimestamp` (10).
    MinTimestamp(&'a [u8]),
    /// `kMaxTimestamp` (11).
    MaxTimestamp(&'a [u8]),
    /// `kUniqueId` (12), as encoded.
    UniqueId(&'a [u8]),
    /// `kEpochNumber` (13).
    EpochNumber(u64),
    /// `kCompensatedRangeDeletionSize` (14).
    CompensatedRangeDeletionSize(u64),
    /// `kTailSize` (15).
    TailSize(u64),
    /// `kUserDefinedTimestampsPersisted` (16).
    UserDefinedTimestampsPersisted(bool),
    /// `kFileOpenMetadata` (17), as encoded.
    FileOpenMetadata(&'a [u8]),
    /// `kPathId` (65).
    PathId(u8),
    /// Pebble's `customTagVirtual` (66): a virtual table, a part of the backing table with
    /// this file number.
    Virtual {
        /// The backing table's file number.
        backing: u64,
    },
    /// Pebble's `customTagSyntheticPrefix` (67): a prefix added to every key of the table.
    SyntheticPrefix(&'a [u8]),
    /// Pebble's `customTagSyntheticSuffix` (68): a suffix that replaces every key's.
    SyntheticSuffix(&'a [u8]),
    /// Pebble's `customTagBlobReferences` (69): the blob files whose values the table refers
    /// to.
    BlobReferences(BlobReferences<'a>),
    /// A tag RocksDB may ignore (bit 6 clear) that this reader does not know.
    Unknown {
        /// The tag.
        tag: u32,
        /// Its value.
        data: &'a [u8],
    },
}

/// One field of a [`VersionEdit`]. Byte strings are borrowed from the record.
///
/// ```
/// use logfmt_std::content::{Field, VersionEdit};
///
/// // RocksDB: column family 1 is added with the name "cf1" (tags 200 and 201).
/// let record = [0xc8, 0x01, 1, 0xc9, 0x01, 3, b'c', b'f', b'1'];
/// let fields: Result<Vec<_>, _> = VersionEdit::new(&record).fields().collect();
/// assert_eq!(fields?, [Field::ColumnFamily(1), Field::ColumnFamilyAdd(b"cf1")]);
/// # Ok::<(), logfmt_std::content::EditError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Field<'a> {
    /// `kComparator` (1): the comparator's name.
    Comparator(&'a [u8]),
    /// `kLogNumber` (2): logs older than this are not needed.
    LogNumber(u64),
    /// `kNextFileNumber` (3).
    NextFileNumber(u64),
    /// `kLastSequence` (4).
    LastSequence(u64),
    /// `kCompactPointer` (5; RocksDB's `kCompactCursor`): where the next compaction of the
    /// level starts.
    CompactPointer {
        /// The level.
        level: u32,
        /// The key.
        key: InternalKey<'a>,
    },
    /// `kDeletedFile` (6): a table file removed from a level.
    DeletedFile {
        /// The level.
        level: u32,
        /// The file number.
        number: u64,
    },
    /// `kNewFile` (7), `kNewFile2` (100), `kNewFile3` (102), `kNewFile4` (103), Pebble's
    /// `tagNewFile5` (104).
    NewFile(NewFile<'a>),
    /// Pebble's `tagCreatedBackingTable` (105): a table kept as the backing of virtual
    /// tables.
    CreatedBackingTable {
        /// The backing table's file number.
        number: u64,
        /// Its size in bytes.
        size: u64,
    },
    /// Pebble's `tagRemovedBackingTable` (106): a backing table no virtual table uses any
    /// more.
    RemovedBackingTable(u64),
    /// Pebble's `tagNewBlobFile` (107): a blob file added.
    NewBlobFile {
        /// The blob file's id (what tables refer to).
        id: u64,
        /// The file number of the physical file.
        number: u64,
        /// Its size in bytes.
        size: u64,
        /// Bytes of values in it.
        value_size: u64,
        /// When it was created (seconds since the Unix epoch).
        creation_time: u64,
    },
    /// Pebble's `tagDeletedBlobFile` (108): a physical blob file no longer used.
    DeletedBlobFile {
        /// The blob file's id.
        id: u64,
        /// The file number of the physical file.
        number: u64,
    },
    /// `kPrevLogNumber` (9).
    PrevLogNumber(u64),
    /// `kMinLogNumberToKeep` (10).
    MinLogNumberToKeep(u64),
    /// `kColumnFamily` (200): the column family the edit is about.
    ColumnFamily(u32),
    /// `kColumnFamilyAdd` (201): a column family created, with its name.
    ColumnFamilyAdd(&'a [u8]),
    /// `kColumnFamilyDrop` (202): the column family dropped.
    ColumnFamilyDrop,
    /// `kMaxColumnFamily` (203).
    MaxColumnFamily(u32),
    /// `kInAtomicGroup` (300): part of an atomic group, with how many edits follow in it.
    InAtomicGroup(u32),
    /// `kBlobFileAddition` (400; 8194 deprecated): a blob file added.
    BlobFileAddition {
        /// The blob file's number.
        number: u64,
        /// Blobs in it.
        blob_count: u64,
        /// Bytes of blobs in it.
        blob_bytes: u64,
        /// The checksum method's name.
        checksum_method: &'a [u8],
        /// The checksum.
        checksum_value: &'a [u8],
    },
    /// `kBlobFileGarbage` (401; 8195 deprecated): garbage found in a blob file.
    BlobFileGarbage {
        /// The blob file's number.
        number: u64,
        /// Garbage blobs.
        blob_count: u64,
        /// Bytes of garbage blobs.
        blob_bytes: u64,
    },
    /// `kDbId` (8193): the database's identity.
    DbId(&'a [u8]),
    /// `kWalAddition` (8196), `kWalAddition2` (8199): a write-ahead log tracked.
    WalAddition {
        /// The log's number.
        number: u64,
        /// Its synced size, if recorded.
        synced_size: Option<u64>,
    },
    /// `kWalDeletion` (8197), `kWalDeletion2` (8200): logs below this number dropped.
    WalDeletion(u64),
    /// `kFullHistoryTsLow` (8198).
    FullHistoryTsLow(&'a [u8]),
    /// `kPersistUserDefinedTimestamps` (8201).
    PersistUserDefinedTimestamps(bool),
    /// `kSubcompactionProgress` (8202), as encoded.
    SubcompactionProgress(&'a [u8]),
    /// `kLastCompactedManifestFileSize` (8203).
    LastCompactedManifestFileSize(u64),
    /// A tag this reader does not know, marked safe to ignore ([`TAG_SAFE_IGNORE_MASK`]).
    Ignorable {
        /// The tag.
        tag: u32,
        /// Its value.
        data: &'a [u8],
    },
}

impl Field<'_> {
    /// The field's name, lower case with underscores (`log_number`, `new_file`, ...).
    ///
    /// ```
    /// assert_eq!(logfmt_std::content::Field::LastSequence(9).name(), "last_sequence");
    /// ```
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::Comparator(_) => "comparator",
            Self::LogNumber(_) => "log_number",
            Self::NextFileNumber(_) => "next_file_number",
            Self::LastSequence(_) => "last_sequence",
            Self::CompactPointer { .. } => "compact_pointer",
            Self::DeletedFile { .. } => "deleted_file",
            Self::NewFile(_) => "new_file",
            Self::CreatedBackingTable { .. } => "created_backing_table",
            Self::RemovedBackingTable(_) => "removed_backing_table",
            Self::NewBlobFile { .. } => "new_blob_file",
            Self::DeletedBlobFile { .. } => "deleted_blob_file",
            Self::PrevLogNumber(_) => "prev_log_number",
            Self::MinLogNumberToKeep(_) => "min_log_number_to_keep",
            Self::ColumnFamily(_) => "column_family",
            Self::ColumnFamilyAdd(_) => "column_family_add",
            Self::ColumnFamilyDrop => "column_family_drop",
            Self::MaxColumnFamily(_) => "max_column_family",
            Self::InAtomicGroup(_) => "in_atomic_group",
            Self::BlobFileAddition { .. } => "blob_file_addition",
            Self::BlobFileGarbage { .. } => "blob_file_garbage",
            Self::DbId(_) => "db_id",
            Self::WalAddition { .. } => "wal_addition",
            Self::WalDeletion(_) => "wal_deletion",
            Self::FullHistoryTsLow(_) => "full_history_ts_low",
            Self::PersistUserDefinedTimestamps(_) => "persist_user_defined_timestamps",
            Self::SubcompactionProgress(_) => "subcompaction_progress",
            Self::LastCompactedManifestFileSize(_) => "last_compacted_manifest_file_size",
            Self::Ignorable { .. } => "ignorable",
        }
    }
}

/// Why a [`VersionEdit`] could not be read in full. Offsets are in bytes from the start of
/// the record.
///
/// ```
/// use logfmt_std::content::{EditError, VersionEdit};
///
/// // A comparator name of 5 bytes, cut after 1.
/// let error = VersionEdit::new(&[1, 5, b'a']).fields().find_map(Result::err);
/// assert_eq!(error, Some(EditError::BadField { tag: 1, offset: 0, what: "comparator name" }));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EditError {
    /// A tag neither LevelDB nor RocksDB defines, not marked safe to ignore (their "unknown
    /// tag"). What follows cannot be read.
    UnknownTag {
        /// The tag.
        tag: u32,
        /// Where it is.
        offset: usize,
    },
    /// The bytes at `offset` are not a tag: a varint cut by the end of the record (their
    /// "invalid tag").
    InvalidTag {
        /// Where they are.
        offset: usize,
    },
    /// A custom field of a new file (format 103 or 104) that no one here defines and that is
    /// not safe to ignore (bit 6 set, RocksDB's and Pebble's "custom field not supported"):
    /// what follows it cannot be read.
    UnknownFileField {
        /// The new file's tag (103 or 104).
        tag: u32,
        /// The custom field's tag.
        field: u32,
        /// Where the new file starts (its tag).
        offset: usize,
    },
    /// A field whose value runs past the end of the record or is malformed.
    BadField {
        /// The field's tag.
        tag: u32,
        /// Where the field starts (its tag).
        offset: usize,
        /// What is wrong, in RocksDB's words ("new-file4 entry", "log number", ...).
        what: &'static str,
    },
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::UnknownTag { tag, offset } => {
                write!(f, "unknown VersionEdit tag {tag} at byte {offset}")
            }
            Self::InvalidTag { offset } => {
                write!(f, "invalid VersionEdit tag at byte {offset}")
            }
            Self::UnknownFileField { tag, field, offset } => write!(
                f,
                "unknown custom field {field} of a new file (tag {tag}) at byte {offset}"
            ),
            Self::BadField { tag, offset, what } => {
                write!(
                    f,
                    "bad VersionEdit field (tag {tag}) at byte {offset}: {what}"
                )
            }
        }
    }
}

impl EditError {
    /// Whether the edit uses a tag (or a new file's custom field) this reader does not know,
    /// in a record otherwise well formed so far: written by a newer version of LevelDB,
    /// RocksDB or Pebble, not damage.
    ///
    /// ```
    /// use logfmt_std::content::VersionEdit;
    ///
    /// let unknown = VersionEdit::new(&[2, 5, 110, 1]).fields().find_map(Result::err).unwrap();
    /// assert!(unknown.is_unknown());
    /// let cut = VersionEdit::new(&[2]).fields().find_map(Result::err).unwrap();
    /// assert!(!cut.is_unknown());
    /// ```
    #[must_use]
    pub fn is_unknown(&self) -> bool {
        matches!(
            self,
            Self::UnknownTag { .. } | Self::UnknownFileField { .. }
        )
    }
}

impl std::error::Error for EditError {}

/// Reads the field at the cursor.
fn read_field<'a>(cursor: &mut Cursor<'a>) -> Result<Field<'a>, EditError> {
    let offset = cursor.offset();
    let tag = cursor.varint32().ok_or(EditError::InvalidTag { offset })?;
    let bad = |what| EditError::BadField { tag, offset, what };
    let field = match tag {
        1 => Field::Comparator(cursor.slice().ok_or(bad("comparator name"))?),
        2 => Field::LogNumber(cursor.varint64().ok_or(bad("log number"))?),
        3 => Field::NextFileNumber(cursor.varint64().ok_or(bad("next file number"))?),
        4 => Field::LastSequence(cursor.varint64().ok_or(bad("last sequence number"))?),
        5 => {
            let level = cursor.varint32();
            let key = cursor.slice().and_then(InternalKey::decode);
            match (level, key) {
                (Some(level), Some(key)) => Field::CompactPointer { level, key },
                _ => return Err(bad("compaction pointer")),
            }
        }
        6 => match (cursor.varint32(), cursor.varint64()) {
            (Some(level), Some(number)) => Field::DeletedFile { level, number },
            _ => return Err(bad("deleted file")),
        },
        7 => Field::NewFile(
            new_file(cursor, NewFileTag::NewFile)
                .map_err(|e| bad(e.unwrap_or("new-file entry")))?,
        ),
        100 => Field::NewFile(
            new_file(cursor, NewFileTag::NewFile2)
                .map_err(|e| bad(e.unwrap_or("new-file2 entry")))?,
        ),
        102 => Field::NewFile(
            new_file(cursor, NewFileTag::NewFile3)
                .map_err(|e| bad(e.unwrap_or("new-file3 entry")))?,
        ),
        103 | 104 => {
            let (format, what) = if tag == 103 {
                (NewFileTag::NewFile4, "new-file4 entry")
            } else {
                (NewFileTag::NewFile5, "new-file5 entry")
            };
            let mut file = new_file(cursor, format).map_err(|e| bad(e.unwrap_or(what)))?;
            file.custom = file_fields(cursor, &mut file.path_id).map_err(|e| match e {
                CustomError::Bad(what) => bad(what),
                CustomError::Unknown(field) => EditError::UnknownFileField { tag, field, offset },
            })?;
            Field::NewFile(file)
        }
        105 => match (cursor.varint64(), cursor.varint64()) {
            (Some(number), Some(size)) => Field::CreatedBackingTable { number, size },
            _ => return Err(bad("created backing table")),
        },
        106 => Field::RemovedBackingTable(cursor.varint64().ok_or(bad("removed backing table"))?),
        107 => new_blob_file(cursor).ok_or(bad("new blob file"))?,
        108 => match (cursor.varint64(), cursor.varint64()) {
            (Some(id), Some(number)) => Field::DeletedBlobFile { id, number },
            _ => return Err(bad("deleted blob file")),
        },
        9 => Field::PrevLogNumber(cursor.varint64().ok_or(bad("previous log number"))?),
        10 => Field::MinLogNumberToKeep(cursor.varint64().ok_or(bad("min log number to keep"))?),
        200 => Field::ColumnFamily(cursor.varint32().ok_or(bad("set column family id"))?),
        201 => Field::ColumnFamilyAdd(cursor.slice().ok_or(bad("column family add"))?),
        202 => Field::ColumnFamilyDrop,
        203 => Field::MaxColumnFamily(cursor.varint32().ok_or(bad("max column family"))?),
        300 => Field::InAtomicGroup(cursor.varint32().ok_or(bad("remaining entries"))?),
        400 | 8194 => blob_file_addition(cursor).ok_or(bad("blob file addition"))?,
        401 | 8195 => blob_file_garbage(cursor).ok_or(bad("blob file garbage"))?,
        8193 => Field::DbId(cursor.slice().ok_or(bad("db id"))?),
        8196 => wal_addition(cursor).ok_or(bad("WAL addition"))?,
        8199 => {
            let mut inner = Cursor::new(cursor.slice().ok_or(bad("WAL addition"))?, 0);
            wal_addition(&mut inner).ok_or(bad("WAL addition"))?
        }
        8197 => Field::WalDeletion(cursor.varint64().ok_or(bad("WAL deletion"))?),
        8200 => {
            let mut inner = Cursor::new(cursor.slice().ok_or(bad("WAL deletion"))?, 0);
            Field::WalDeletion(inner.varint64().ok_or(bad("WAL deletion"))?)
        }
        8198 => match cursor.slice() {
            Some(ts) if !ts.is_empty() => Field::FullHistoryTsLow(ts),
            _ => return Err(bad("full_history_ts_low")),
        },
        8201 => match cursor.slice() {
            Some(&[flag]) => Field::PersistUserDefinedTimestamps(flag == 1),
            _ => return Err(bad("persist_user_defined_timestamps")),
        },
        8202 => Field::SubcompactionProgress(cursor.slice().ok_or(bad("subcompaction progress"))?),
        8203 => {
            let mut inner = Cursor::new(
                cursor
                    .slice()
                    .ok_or(bad("last compacted manifest file size"))?,
                0,
            );
            Field::LastCompactedManifestFileSize(
                inner
                    .varint64()
                    .ok_or(bad("last compacted manifest file size"))?,
            )
        }
        _ if tag & TAG_SAFE_IGNORE_MASK != 0 => Field::Ignorable {
            tag,
            data: cursor
                .slice()
                .ok_or(bad("safely ignorable tag length error"))?,
        },
        _ => return Err(EditError::UnknownTag { tag, offset }),
    };
    Ok(field)
}

/// The fixed part of a new file, as `tag` records it (custom fields not read). The error is
/// a message for what is wrong beyond a value cut short (`None`: cut short or malformed).
fn new_file<'a>(
    cursor: &mut Cursor<'a>,
    tag: NewFileTag,
) -> Result<NewFile<'a>, Option<&'static str>> {
    let level = cursor.varint32().ok_or(None)?;
    let number = cursor.varint64().ok_or(None)?;
    let path_id = match tag {
        NewFileTag::NewFile3 => cursor.varint32().ok_or(None)?,
        _ => 0,
    };
    let size = cursor.varint64().ok_or(None)?;
    let key = |cursor: &mut Cursor<'a>| cursor.slice().and_then(InternalKey::decode).ok_or(None);
    let (smallest, largest, range_keys) = if tag == NewFileTag::NewFile5 {
        let bounds = range_key_bounds(cursor)?;
        // The file's bounds: point keys where the marker says so, else range keys.
        let smallest = match bounds.point {
            Some((point, _)) if bounds.marker & MARKER_SMALLEST != 0 => point,
            _ => bounds.smallest,
        };
        let largest = match bounds.point {
            Some((_, point)) if bounds.marker & MARKER_LARGEST != 0 => point,
            _ => bounds.largest,
        };
        (smallest, largest, Some(Box::new(bounds)))
    } else {
        (key(cursor)?, key(cursor)?, None)
    };
    let seqnos = match tag {
        NewFileTag::NewFile => None,
        _ => Some((
            cursor.varint64().ok_or(None)?,
            cursor.varint64().ok_or(None)?,
        )),
    };
    Ok(NewFile {
        tag,
        level,
        number,
        path_id,
        size,
        smallest,
        largest,
        seqnos,
        custom: Vec::new(),
        range_keys,
    })
}

/// Pebble's bounds marker bit: the table has point keys.
const MARKER_POINT_KEYS: u8 = 1 << 0;
/// Pebble's bounds marker bit: the table's smallest key is a point key.
const MARKER_SMALLEST: u8 = 1 << 1;
/// Pebble's bounds marker bit: the table's largest key is a point key.
const MARKER_LARGEST: u8 = 1 << 2;

/// The bounds of `tagNewFile5`: the marker, the point key bounds if it says so, the range key
/// bounds.
fn range_key_bounds<'a>(
    cursor: &mut Cursor<'a>,
) -> Result<RangeKeyBounds<'a>, Option<&'static str>> {
    let key = |cursor: &mut Cursor<'a>| cursor.slice().and_then(InternalKey::decode).ok_or(None);
    let marker = cursor.u8().ok_or(None)?;
    let point = if marker & MARKER_POINT_KEYS != 0 {
        Some((key(cursor)?, key(cursor)?))
    } else if marker & (MARKER_SMALLEST | MARKER_LARGEST) != 0 {
        return Err(Some(
            "new-file5: a table without point keys has point key bounds",
        ));
    } else {
        None
    };
    Ok(RangeKeyBounds {
        marker,
        point,
        smallest: key(cursor)?,
        largest: key(cursor)?,
    })
}

/// Why the custom fields of a new file cannot be read.
enum CustomError {
    /// Cut short or malformed: RocksDB's or Pebble's message.
    Bad(&'static str),
    /// A field not safe to ignore that no one here defines: its tag.
    Unknown(u32),
}

/// The custom fields of `kNewFile4` and `tagNewFile5`, up to `kTerminate`; the path id is
/// also put in `path_id`. RocksDB's fields and Pebble's (66–69; Pebble's 66 and 69 are not
/// length-prefixed) share one numbering.
fn file_fields<'a>(
    cursor: &mut Cursor<'a>,
    path_id: &mut u32,
) -> Result<Vec<FileField<'a>>, CustomError> {
    /// `kCustomTagNonSafeIgnoreMask`: an unknown field with this bit cannot be ignored.
    const NON_SAFE_IGNORE: u32 = 1 << 6;
    use CustomError::Bad;
    let mut fields = Vec::new();
    loop {
        let tag = cursor.varint32().ok_or(Bad("new-file4 custom field"))?;
        match tag {
            1 => return Ok(fields),
            66 => {
                let backing = cursor.varint64().ok_or(Bad("new-file virtual backing"))?;
                fields.push(FileField::Virtual { backing });
                continue;
            }
            69 => {
                let refs = BlobReferences::read(cursor).ok_or(Bad("new-file blob references"))?;
                fields.push(FileField::BlobReferences(refs));
                continue;
            }
            _ if tag & NON_SAFE_IGNORE != 0 && !matches!(tag, 65 | 67 | 68) => {
                return Err(CustomError::Unknown(tag));
            }
            _ => {}
        }
        let data = cursor
            .slice()
            .ok_or(Bad("new-file4 custom field length prefixed slice error"))?;
        fields.push(custom_field(tag, data, path_id).map_err(Bad)?);
    }
}

/// The length-prefixed custom field `tag` with value `data`. The error is RocksDB's message.
fn custom_field<'a>(
    tag: u32,
    data: &'a [u8],
    path_id: &mut u32,
) -> Result<FileField<'a>, &'static str> {
    let varint = |what| Cursor::new(data, 0).varint64().ok_or(what);
    let byte = |what| match data {
        &[b] => Ok(b),
        _ => Err(what),
    };
    Ok(match tag {
        2 => FileField::NeedCompaction(byte("need_compaction field wrong size")? == 1),
        3 => FileField::MinLogNumberToKeep(
            Cursor::new(data, 0)
                .fixed64()
                .ok_or("deleted log number malformatted")?,
        ),
        4 => FileField::OldestBlobFileNumber(varint("invalid oldest blob file number")?),
        5 => FileField::OldestAncesterTime(varint("invalid oldest ancester time")?),
        6 => FileField::FileCreationTime(varint("invalid file creation time")?),
        7 => FileField::FileChecksum(data),
        8 => FileField::FileChecksumFuncName(data),
        9 => FileField::Temperature(byte("temperature field wrong size")?),
        10 => FileField::MinTimestamp(data),
        11 => FileField::MaxTimestamp(data),
        12 => FileField::UniqueId(data),
        13 => FileField::EpochNumber(varint("invalid epoch number")?),
        14 => FileField::CompensatedRangeDeletionSize(varint(
            "invalid compensated range deletion size",
        )?),
        15 => FileField::TailSize(varint("invalid tail start offset")?),
        16 => FileField::UserDefinedTimestampsPersisted(
            byte("user-defined timestamps persisted field wrong size")? == 1,
        ),
        17 => FileField::FileOpenMetadata(data),
        65 => {
            let id = byte("path_id field wrong size")?;
            if id > 3 {
                return Err("path_id wrong value");
            }
            *path_id = u32::from(id);
            FileField::PathId(id)
        }
        67 => FileField::SyntheticPrefix(data),
        68 => FileField::SyntheticSuffix(data),
        _ => FileField::Unknown { tag, data },
    })
}

/// Pebble's `tagNewBlobFile`: id, file number, size, value size, creation time.
fn new_blob_file<'a>(cursor: &mut Cursor<'a>) -> Option<Field<'a>> {
    Some(Field::NewBlobFile {
        id: cursor.varint64()?,
        number: cursor.varint64()?,
        size: cursor.varint64()?,
        value_size: cursor.varint64()?,
        creation_time: cursor.varint64()?,
    })
}

/// The custom fields of a blob file record, up to the end marker (0); RocksDB ignores those it
/// does not know unless they are forward incompatible (bit 6).
fn blob_custom_fields(cursor: &mut Cursor<'_>) -> Option<()> {
    loop {
        let tag = cursor.varint32()?;
        if tag == 0 {
            return Some(());
        }
        if tag & (1 << 6) != 0 {
            return None;
        }
        cursor.slice()?;
    }
}

fn blob_file_addition<'a>(cursor: &mut Cursor<'a>) -> Option<Field<'a>> {
    let field = Field::BlobFileAddition {
        number: cursor.varint64()?,
        blob_count: cursor.varint64()?,
        blob_bytes: cursor.varint64()?,
        checksum_method: cursor.slice()?,
        checksum_value: cursor.slice()?,
    };
    blob_custom_fields(cursor)?;
    Some(field)
}

fn blob_file_garbage<'a>(cursor: &mut Cursor<'a>) -> Option<Field<'a>> {
    let field = Field::BlobFileGarbage {
        number: cursor.varint64()?,
        blob_count: cursor.varint64()?,
        blob_bytes: cursor.varint64()?,
    };
    blob_custom_fields(cursor)?;
    Some(field)
}

/// A `WalAddition`: the log number, then tags up to `kTerminate` (1); `kSyncedSize` (2) is
/// the only other.
fn wal_addition<'a>(cursor: &mut Cursor<'a>) -> Option<Field<'a>> {
    let number = cursor.varint64()?;
    let mut synced_size = None;
    loop {
        match cursor.varint32()? {
            1 => {
                return Some(Field::WalAddition {
                    number,
                    synced_size,
                });
            }
            2 => synced_size = Some(cursor.varint64()?),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::coding::{put_slice, put_varint};
    use proptest::prelude::*;

    fn ikey(user: &[u8], sequence: u64, kind: u8) -> Vec<u8> {
        let mut out = user.to_vec();
        out.extend_from_slice(&(sequence << 8 | u64::from(kind)).to_le_bytes());
        out
    }

    fn all(record: &[u8]) -> Result<Vec<Field<'_>>, EditError> {
        VersionEdit::new(record).fields().collect()
    }

    fn one(record: &[u8]) -> Field<'_> {
        match all(record).as_deref() {
            Ok([field]) => field.clone(),
            other => panic!("{record:02x?}: {other:?}"),
        }
    }

    fn v(parts: &[&[u8]]) -> Vec<u8> {
        parts.concat()
    }

    /// Encodes `value` as a varint.
    fn vi(value: u64) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint(&mut out, value);
        out
    }

    fn sl(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        put_slice(&mut out, data);
        out
    }

    #[test]
    fn leveldb_tags() {
        assert_eq!(
            one(&v(&[&[1], &sl(b"leveldb.BytewiseComparator")])),
            Field::Comparator(b"leveldb.BytewiseComparator")
        );
        assert_eq!(one(&v(&[&[2], &vi(300)])), Field::LogNumber(300));
        assert_eq!(
            one(&v(&[&[3], &vi(u64::MAX)])),
            Field::NextFileNumber(u64::MAX)
        );
        assert_eq!(one(&v(&[&[4], &vi(1 << 40)])), Field::LastSequence(1 << 40));
        assert_eq!(one(&v(&[&[9], &vi(4)])), Field::PrevLogNumber(4));
        let key = ikey(b"k", 7, 1);
        assert_eq!(
            one(&v(&[&[5], &vi(2), &sl(&key)])),
            Field::CompactPointer {
                level: 2,
                key: InternalKey {
                    user_key: b"k",
                    sequence: 7,
                    kind: 1
                }
            }
        );
        assert_eq!(
            one(&v(&[&[6], &vi(3), &vi(12)])),
            Field::DeletedFile {
                level: 3,
                number: 12
            }
        );
        let small = ikey(b"a", 1, 1);
        let large = ikey(b"z", 9, 0);
        let record_file = v(&[&[7], &vi(0), &vi(5), &vi(1000), &sl(&small), &sl(&large)]);
        let Field::NewFile(file) = one(&record_file) else {
            panic!("not a new file");
        };
        assert_eq!(
            (file.tag, file.level, file.number, file.size),
            (NewFileTag::NewFile, 0, 5, 1000)
        );
        assert_eq!(
            (file.smallest.user_key, file.smallest.sequence),
            (&b"a"[..], 1)
        );
        assert_eq!(
            (
                file.largest.user_key,
                file.largest.sequence,
                file.largest.kind
            ),
            (&b"z"[..], 9, 0)
        );
        assert_eq!(file.seqnos, None);
    }

    #[test]
    fn rocksdb_tags() {
        assert_eq!(one(&v(&[&[10], &vi(17)])), Field::MinLogNumberToKeep(17));
        assert_eq!(one(&v(&[&vi(200), &vi(3)])), Field::ColumnFamily(3));
        assert_eq!(
            one(&v(&[&vi(201), &sl(b"cf1")])),
            Field::ColumnFamilyAdd(b"cf1")
        );
        assert_eq!(one(&vi(202)), Field::ColumnFamilyDrop);
        assert_eq!(one(&v(&[&vi(203), &vi(4)])), Field::MaxColumnFamily(4));
        assert_eq!(one(&v(&[&vi(300), &vi(2)])), Field::InAtomicGroup(2));
        let addition = Field::BlobFileAddition {
            number: 8,
            blob_count: 2,
            blob_bytes: 100,
            checksum_method: b"crc32c",
            checksum_value: b"\x01\x02\x03\x04",
        };
        // With an unknown custom field RocksDB ignores (tag 5), then the end marker.
        let body = v(&[
            &vi(8),
            &vi(2),
            &vi(100),
            &sl(b"crc32c"),
            &sl(b"\x01\x02\x03\x04"),
            &vi(5),
            &sl(b"x"),
            &[0],
        ]);
        assert_eq!(one(&v(&[&vi(400), &body])), addition);
        assert_eq!(one(&v(&[&vi(8194), &body])), addition);
        let garbage = v(&[&vi(8), &vi(1), &vi(50), &[0]]);
        let expected = Field::BlobFileGarbage {
            number: 8,
            blob_count: 1,
            blob_bytes: 50,
        };
        assert_eq!(one(&v(&[&vi(401), &garbage])), expected);
        assert_eq!(one(&v(&[&vi(8195), &garbage])), expected);
        assert_eq!(one(&v(&[&vi(8193), &sl(b"db-id")])), Field::DbId(b"db-id"));
        let wal = v(&[&vi(12), &[2], &vi(4096), &[1]]);
        let expected = Field::WalAddition {
            number: 12,
            synced_size: Some(4096),
        };
        assert_eq!(one(&v(&[&vi(8196), &wal])), expected);
        assert_eq!(one(&v(&[&vi(8199), &sl(&wal)])), expected);
        assert_eq!(
            one(&v(&[&vi(8196), &vi(3), &[1]])),
            Field::WalAddition {
                number: 3,
                synced_size: None
            }
        );
        assert_eq!(one(&v(&[&vi(8197), &vi(11)])), Field::WalDeletion(11));
        assert_eq!(one(&v(&[&vi(8200), &sl(&vi(11))])), Field::WalDeletion(11));
        assert_eq!(
            one(&v(&[&vi(8198), &sl(b"ts")])),
            Field::FullHistoryTsLow(b"ts")
        );
        assert_eq!(
            one(&v(&[&vi(8201), &sl(&[1])])),
            Field::PersistUserDefinedTimestamps(true)
        );
        assert_eq!(
            one(&v(&[&vi(8202), &sl(b"pp")])),
            Field::SubcompactionProgress(b"pp")
        );
        assert_eq!(
            one(&v(&[&vi(8203), &sl(&vi(999))])),
            Field::LastCompactedManifestFileSize(999)
        );
        // A future tag marked safe to ignore: reported with its value.
        assert_eq!(
            one(&v(&[&vi(8300), &sl(b"future")])),
            Field::Ignorable {
                tag: 8300,
                data: b"future"
            }
        );
    }

    #[test]
    fn new_file_formats() {
        let small = ikey(b"a", 1, 1);
        let large = ikey(b"b", 2, 1);
        let head = |tag: u64| v(&[&vi(tag), &vi(1), &vi(20)]);
        let keys = v(&[&sl(&small), &sl(&large)]);
        let seqnos = v(&[&vi(1), &vi(2)]);
        let record_f2 = v(&[&head(100), &vi(300), &keys, &seqnos]);
        let Field::NewFile(f2) = one(&record_f2) else {
            panic!()
        };
        assert_eq!(
            (f2.tag, f2.level, f2.number, f2.size, f2.seqnos),
            (NewFileTag::NewFile2, 1, 20, 300, Some((1, 2)))
        );
        let record_f3 = v(&[&head(102), &vi(2), &vi(300), &keys, &seqnos]);
        let Field::NewFile(f3) = one(&record_f3) else {
            panic!()
        };
        assert_eq!(
            (f3.tag, f3.path_id, f3.size),
            (NewFileTag::NewFile3, 2, 300)
        );
        // kNewFile4 with every custom field RocksDB 7.8 writes, and more.
        let custom = v(&[
            &[65],
            &sl(&[1]),
            &[2],
            &sl(&[1]),
            &[3],
            &sl(&17u64.to_le_bytes()),
            &[4],
            &sl(&vi(6)),
            &[5],
            &sl(&vi(1_700_000_000)),
            &[6],
            &sl(&vi(1_700_000_001)),
            &[7],
            &sl(b"sum"),
            &[8],
            &sl(b"crc32c"),
            &[9],
            &sl(&[2]),
            &[10],
            &sl(b"t0"),
            &[11],
            &sl(b"t1"),
            &[12],
            &sl(&[7; 16]),
            &[13],
            &sl(&vi(5)),
            &[14],
            &sl(&vi(77)),
            &[15],
            &sl(&vi(88)),
            &[16],
            &sl(&[0]),
            &[17],
            &sl(b"meta"),
            &[30],
            &sl(b"?"),
            &[1],
        ]);
        let record_f4 = v(&[&head(103), &vi(300), &keys, &seqnos, &custom]);
        let Field::NewFile(f4) = one(&record_f4) else {
            panic!()
        };
        assert_eq!(
            (f4.tag, f4.path_id, f4.seqnos),
            (NewFileTag::NewFile4, 1, Some((1, 2)))
        );
        assert_eq!(
            f4.custom,
            [
                FileField::PathId(1),
                FileField::NeedCompaction(true),
                FileField::MinLogNumberToKeep(17),
                FileField::OldestBlobFileNumber(6),
                FileField::OldestAncesterTime(1_700_000_000),
                FileField::FileCreationTime(1_700_000_001),
                FileField::FileChecksum(b"sum"),
                FileField::FileChecksumFuncName(b"crc32c"),
                FileField::Temperature(2),
                FileField::MinTimestamp(b"t0"),
                FileField::MaxTimestamp(b"t1"),
                FileField::UniqueId(&[7; 16]),
                FileField::EpochNumber(5),
                FileField::CompensatedRangeDeletionSize(77),
                FileField::TailSize(88),
                FileField::UserDefinedTimestampsPersisted(false),
                FileField::FileOpenMetadata(b"meta"),
                FileField::Unknown {
                    tag: 30,
                    data: b"?"
                },
            ]
        );
        // A forward-incompatible custom field no one defines: the edit cannot be read.
        let record = v(&[&head(103), &vi(300), &keys, &seqnos, &[70], &sl(b"x"), &[1]]);
        let error = EditError::UnknownFileField {
            tag: 103,
            field: 70,
            offset: 0,
        };
        assert_eq!(all(&record), Err(error));
        assert!(error.is_unknown());
        // No terminator.
        let record = v(&[&head(103), &vi(300), &keys, &seqnos]);
        assert_eq!(
            all(&record),
            Err(EditError::BadField {
                tag: 103,
                offset: 0,
                what: "new-file4 custom field"
            })
        );
    }

    #[test]
    fn errors_say_where() {
        // A good field, then a tag no one defines.
        let record = v(&[&[2], &vi(5), &vi(8), &vi(1)]);
        assert_eq!(
            VersionEdit::new(&record).fields().collect::<Vec<_>>(),
            [
                Ok(Field::LogNumber(5)),
                Err(EditError::UnknownTag { tag: 8, offset: 2 })
            ]
        );
        for unknown in [0, 8, 11, 99, 101, 109, 204, 301, 402, 8192 - 1] {
            let record = vi(unknown);
            assert_eq!(
                all(&record),
                Err(EditError::UnknownTag {
                    tag: unknown as u32,
                    offset: 0
                })
            );
        }
        // A tag cut by the end of the record.
        assert_eq!(all(&[2, 1, 0x80]), Err(EditError::InvalidTag { offset: 2 }));
        // Values cut short.
        for (record, what) in [
            (&[1, 5, b'a'][..], "comparator name"),
            (&[2], "log number"),
            (&[7, 0, 1, 1, 3, b'a', b'b', b'c'], "new-file entry"),
            (&[5, 0, 1, b'k'], "compaction pointer"),
        ] {
            let tag = u32::from(record[0]);
            assert_eq!(
                all(record),
                Err(EditError::BadField {
                    tag,
                    offset: 0,
                    what
                }),
                "{record:?}"
            );
        }
        assert_eq!(
            EditError::UnknownTag { tag: 8, offset: 2 }.to_string(),
            "unknown VersionEdit tag 8 at byte 2"
        );
    }

    /// An owned field, for proptest: the LevelDB tags and the common RocksDB ones.
    #[derive(Debug, Clone)]
    enum Owned {
        Comparator(Vec<u8>),
        LogNumber(u64),
        NextFile(u64),
        LastSequence(u64),
        Pointer(u32, Vec<u8>, u64, u8),
        Deleted(u32, u64),
        NewFile(u32, u64, u64, Vec<u8>, Vec<u8>, u64),
        Prev(u64),
        MinLog(u64),
        Cf(u32),
        CfAdd(Vec<u8>),
        CfDrop,
        MaxCf(u32),
    }

    impl Owned {
        fn encode(&self, out: &mut Vec<u8>) {
            let seq = |s: u64| s & ((1 << 56) - 1);
            match self {
                Self::Comparator(n) => {
                    out.push(1);
                    put_slice(out, n);
                }
                Self::LogNumber(n) => {
                    out.push(2);
                    put_varint(out, *n);
                }
                Self::NextFile(n) => {
                    out.push(3);
                    put_varint(out, *n);
                }
                Self::LastSequence(n) => {
                    out.push(4);
                    put_varint(out, *n);
                }
                Self::Pointer(level, key, s, k) => {
                    out.push(5);
                    put_varint(out, u64::from(*level));
                    put_slice(out, &ikey(key, seq(*s), *k));
                }
                Self::Deleted(level, n) => {
                    out.push(6);
                    put_varint(out, u64::from(*level));
                    put_varint(out, *n);
                }
                Self::NewFile(level, n, size, a, b, s) => {
                    out.push(7);
                    put_varint(out, u64::from(*level));
                    put_varint(out, *n);
                    put_varint(out, *size);
                    put_slice(out, &ikey(a, seq(*s), 1));
                    put_slice(out, &ikey(b, seq(*s), 0));
                }
                Self::Prev(n) => {
                    out.push(9);
                    put_varint(out, *n);
                }
                Self::MinLog(n) => {
                    out.push(10);
                    put_varint(out, *n);
                }
                Self::Cf(n) => {
                    put_varint(out, 200);
                    put_varint(out, u64::from(*n));
                }
                Self::CfAdd(n) => {
                    put_varint(out, 201);
                    put_slice(out, n);
                }
                Self::CfDrop => put_varint(out, 202),
                Self::MaxCf(n) => {
                    put_varint(out, 203);
                    put_varint(out, u64::from(*n));
                }
            }
        }

        fn check(&self, field: &Field<'_>) -> bool {
            let seq = |s: u64| s & ((1 << 56) - 1);
            match (self, field) {
                (Self::Comparator(a), Field::Comparator(b)) => a == b,
                (Self::LogNumber(a), Field::LogNumber(b))
                | (Self::NextFile(a), Field::NextFileNumber(b))
                | (Self::LastSequence(a), Field::LastSequence(b))
                | (Self::Prev(a), Field::PrevLogNumber(b))
                | (Self::MinLog(a), Field::MinLogNumberToKeep(b)) => a == b,
                (Self::Pointer(l, k, s, t), Field::CompactPointer { level, key }) => {
                    l == level && k == key.user_key && seq(*s) == key.sequence && *t == key.kind
                }
                (Self::Deleted(l, n), Field::DeletedFile { level, number }) => {
                    l == level && n == number
                }
                (Self::NewFile(l, n, size, a, b, s), Field::NewFile(f)) => {
                    *l == f.level
                        && *n == f.number
                        && *size == f.size
                        && a == f.smallest.user_key
                        && b == f.largest.user_key
                        && f.smallest.sequence == seq(*s)
                        && f.largest.kind == 0
                }
                (Self::Cf(a), Field::ColumnFamily(b))
                | (Self::MaxCf(a), Field::MaxColumnFamily(b)) => a == b,
                (Self::CfAdd(a), Field::ColumnFamilyAdd(b)) => a == b,
                (Self::CfDrop, Field::ColumnFamilyDrop) => true,
                _ => false,
            }
        }
    }

    fn owned() -> impl Strategy<Value = Owned> {
        let bytes = || proptest::collection::vec(any::<u8>(), 0..24);
        prop_oneof![
            bytes().prop_map(Owned::Comparator),
            any::<u64>().prop_map(Owned::LogNumber),
            any::<u64>().prop_map(Owned::NextFile),
            any::<u64>().prop_map(Owned::LastSequence),
            (any::<u32>(), bytes(), any::<u64>(), any::<u8>())
                .prop_map(|(l, k, s, t)| Owned::Pointer(l, k, s, t)),
            (any::<u32>(), any::<u64>()).prop_map(|(l, n)| Owned::Deleted(l, n)),
            (
                0..7u32,
                any::<u64>(),
                any::<u64>(),
                bytes(),
                bytes(),
                any::<u64>()
            )
                .prop_map(|(l, n, s, a, b, q)| Owned::NewFile(l, n, s, a, b, q)),
            any::<u64>().prop_map(Owned::Prev),
            any::<u64>().prop_map(Owned::MinLog),
            any::<u32>().prop_map(Owned::Cf),
            bytes().prop_map(Owned::CfAdd),
            Just(Owned::CfDrop),
            any::<u32>().prop_map(Owned::MaxCf),
        ]
    }

    proptest! {
        #[test]
        fn encode_then_decode(fields in proptest::collection::vec(owned(), 0..16)) {
            let mut record = Vec::new();
            for field in &fields {
                field.encode(&mut record);
            }
            let decoded = all(&record);
            prop_assert!(decoded.is_ok(), "{:?}", decoded);
            let decoded = decoded.unwrap();
            prop_assert_eq!(decoded.len(), fields.len());
            for (want, got) in fields.iter().zip(&decoded) {
                prop_assert!(want.check(got), "{:?} != {:?}", want, got);
            }
        }

        /// Any bytes: no panic, and the fields end at the first error.
        #[test]
        fn any_bytes(record in proptest::collection::vec(any::<u8>(), 0..200)) {
            let items: Vec<_> = VersionEdit::new(&record).fields().collect();
            let errors = items.iter().filter(|item| item.is_err()).count();
            prop_assert!(errors <= 1);
            if errors == 1 {
                prop_assert!(items.last().is_some_and(Result::is_err));
            }
        }
    }
}

#[cfg(test)]
mod blob_reference_tests {
    use super::BlobReferences;

    #[test]
    fn references_written_with_longer_varints_are_the_same_references() {
        // Depth 1, two references: (3, 0) with 0 written in two bytes, then (4, 7).
        let long = BlobReferences::decode(&[1, 2, 3, 0x80, 0x00, 4, 7]).expect("well formed");
        let short = BlobReferences::decode(&[1, 2, 3, 0, 4, 7]).expect("well formed");
        assert_eq!(long.iter().collect::<Vec<_>>(), [(3, 0), (4, 7)]);
        assert_eq!(long, short);
        let other = BlobReferences::decode(&[1, 2, 3, 1, 4, 7]).expect("well formed");
        assert_ne!(long, other);
    }
}
