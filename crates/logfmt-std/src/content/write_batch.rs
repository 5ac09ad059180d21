//! LevelDB's and RocksDB's `WriteBatch`: the payload of every record of a write-ahead log.
//!
//! ```text
//! sequence: fixed64 | count: fixed32 | operation*
//! operation: tag: u8, then by tag (varint32 cf only in the column-family variants)
//!   0x01 put / 0x05 cf put              [cf] key value
//!   0x00 delete / 0x04 cf delete        [cf] key
//!   0x07 single delete / 0x08 cf        [cf] key
//!   0x02 merge / 0x06 cf merge          [cf] key value
//!   0x0f delete range / 0x0e cf         [cf] begin end
//!   0x11 blob index / 0x10 cf           [cf] key index
//!   0x16 put entity / 0x17 cf           [cf] key columns
//!   0x18 timed put / 0x19 cf            [cf] key (value ‖ fixed64 write time)
//!   0x03 log data                       blob
//!   0x09 / 0x12 / 0x13 begin prepare (write-committed / persisted / unprepared)
//!   0x0a end prepare                    xid
//!   0x0b commit                         xid
//!   0x15 commit with timestamp          timestamp xid
//!   0x0c rollback                       xid
//!   0x0d noop
//! key, value, ...: varint32 length, then the bytes
//! ```
//!
//! LevelDB writes only put and delete, and always in column family 0. The tag numbers are
//! RocksDB's `ValueType` (`db/dbformat.h`); an operation is read as RocksDB's
//! `ReadRecordFromWriteBatch` reads it, and the header's count is checked as its
//! `WriteBatchInternal::Iterate` checks it: against the data operations only (put, delete,
//! single delete, merge, delete range, blob index, put entity, timed put), not the markers.

use std::fmt;

use super::coding::{Cursor, put_slice, put_varint};

/// The bytes of a `WriteBatch` header: the sequence number (fixed64) and the count (fixed32).
///
/// ```
/// use logfmt_std::content::{BatchError, WRITE_BATCH_HEADER, WriteBatch};
///
/// let empty = [0u8; WRITE_BATCH_HEADER];
/// assert_eq!(WriteBatch::new(&empty)?.ops().count(), 0);
/// assert_eq!(WriteBatch::new(&empty[1..]), Err(BatchError::TooSmall { len: 11 }));
/// # Ok::<(), BatchError>(())
/// ```
pub const WRITE_BATCH_HEADER: usize = 12;

/// A `WriteBatch` read from a log record: its header, and its operations still encoded, to be
/// read by [`ops`](Self::ops) (equivalent of LevelDB's `WriteBatch` with
/// `WriteBatchInternal::SetContents`).
///
/// ```
/// use logfmt_std::content::{Op, WriteBatch};
///
/// // Sequence 7, one operation: put "k" = "v".
/// let mut record = Vec::new();
/// record.extend_from_slice(&7u64.to_le_bytes());
/// record.extend_from_slice(&1u32.to_le_bytes());
/// record.extend_from_slice(&[0x01, 1, b'k', 1, b'v']);
///
/// let batch = WriteBatch::new(&record)?;
/// assert_eq!((batch.sequence(), batch.count()), (7, 1));
/// let ops = batch.ops().collect::<Result<Vec<_>, _>>()?;
/// assert_eq!(ops, [Op::Put { cf: 0, key: b"k", value: b"v" }]);
/// # Ok::<(), logfmt_std::content::BatchError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteBatch<'a> {
    sequence: u64,
    count: u32,
    body: &'a [u8],
}

impl<'a> WriteBatch<'a> {
    /// The batch in `record` (a whole logical record of a write-ahead log).
    ///
    /// ```
    /// use logfmt_std::content::WriteBatch;
    ///
    /// let mut record = 5u64.to_le_bytes().to_vec();
    /// record.extend_from_slice(&0u32.to_le_bytes());
    /// assert_eq!(WriteBatch::new(&record)?.count(), 0);
    /// # Ok::<(), logfmt_std::content::BatchError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`BatchError::TooSmall`] if the record is shorter than its 12-byte header.
    pub fn new(record: &'a [u8]) -> Result<Self, BatchError> {
        let mut cursor = Cursor::new(record, 0);
        match (cursor.fixed64(), cursor.fixed32()) {
            (Some(sequence), Some(count)) => Ok(Self {
                sequence,
                count,
                body: cursor.rest(),
            }),
            _ => Err(BatchError::TooSmall { len: record.len() }),
        }
    }

    /// The sequence number of the batch's first data operation; the others follow one by
    /// one.
    ///
    /// ```
    /// use logfmt_std::content::WriteBatch;
    ///
    /// let mut record = 42u64.to_le_bytes().to_vec();
    /// record.extend_from_slice(&0u32.to_le_bytes());
    /// assert_eq!(WriteBatch::new(&record)?.sequence(), 42);
    /// # Ok::<(), logfmt_std::content::BatchError>(())
    /// ```
    #[must_use]
    pub fn sequence(&self) -> u64 {
        self.sequence
    }

    /// The number of data operations the header declares.
    ///
    /// ```
    /// use logfmt_std::content::WriteBatch;
    ///
    /// let mut record = 1u64.to_le_bytes().to_vec();
    /// record.extend_from_slice(&3u32.to_le_bytes());
    /// assert_eq!(WriteBatch::new(&record)?.count(), 3);
    /// # Ok::<(), logfmt_std::content::BatchError>(())
    /// ```
    #[must_use]
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The operations' bytes, after the header.
    pub(crate) fn body(&self) -> &'a [u8] {
        self.body
    }

    /// The operations, in order. An operation that cannot be read ends them with its error;
    /// a count that does not match the data operations read ends them with
    /// [`BatchError::WrongCount`].
    ///
    /// ```
    /// use logfmt_std::content::{BatchError, Op, WriteBatch};
    ///
    /// // Declares 2 operations; holds a delete, then a tag no one defines.
    /// let mut record = vec![0; 8];
    /// record.extend_from_slice(&2u32.to_le_bytes());
    /// record.extend_from_slice(&[0x00, 1, b'k', 0x7e]);
    ///
    /// let mut ops = WriteBatch::new(&record)?.ops();
    /// assert_eq!(ops.next(), Some(Ok(Op::Delete { cf: 0, key: b"k" })));
    /// assert_eq!(ops.next(), Some(Err(BatchError::UnknownTag { tag: 0x7e, offset: 15 })));
    /// assert_eq!(ops.next(), None);
    /// # Ok::<(), BatchError>(())
    /// ```
    #[must_use]
    pub fn ops(&self) -> Ops<'a> {
        Ops {
            cursor: Cursor::new(self.body, WRITE_BATCH_HEADER),
            declared: self.count,
            found: 0,
            done: false,
        }
    }
}

/// The operations of a [`WriteBatch`], in order ([`WriteBatch::ops`]): an [`Iterator`] of
/// each operation or the error that ends them.
///
/// ```
/// use logfmt_std::content::{Op, WriteBatch};
///
/// let mut record = vec![0; 8];
/// record.extend_from_slice(&1u32.to_le_bytes());
/// record.extend_from_slice(b"\x0d\x00\x01k"); // noop, delete "k"
/// let deleted: Vec<&[u8]> = WriteBatch::new(&record)?
///     .ops()
///     .filter_map(|op| match op {
///         Ok(Op::Delete { key, .. }) => Some(key),
///         _ => None,
///     })
///     .collect();
/// assert_eq!(deleted, [b"k"]);
/// # Ok::<(), logfmt_std::content::BatchError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Ops<'a> {
    cursor: Cursor<'a>,
    declared: u32,
    found: u32,
    done: bool,
}

impl<'a> Iterator for Ops<'a> {
    type Item = Result<Op<'a>, BatchError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.cursor.is_empty() {
            self.done = true;
            return (self.found != self.declared).then_some(Err(BatchError::WrongCount {
                declared: self.declared,
                found: self.found,
            }));
        }
        let offset = self.cursor.offset();
        let result = read_op(&mut self.cursor, offset);
        match &result {
            Ok(op) if op.is_data() => self.found = self.found.saturating_add(1),
            Ok(_) => {}
            Err(_) => self.done = true,
        }
        Some(result)
    }
}

impl std::iter::FusedIterator for Ops<'_> {}

/// Which begin-prepare marker of a two-phase commit a batch holds (RocksDB's transaction
/// write policies).
///
/// ```
/// use logfmt_std::content::{Op, Prepare, WriteBatch};
///
/// let mut record = vec![0; 12];
/// record.push(0x12); // kTypeBeginPersistedPrepareXID
/// let op = WriteBatch::new(&record)?.ops().next();
/// assert_eq!(op, Some(Ok(Op::BeginPrepare { kind: Prepare::Persisted })));
/// # Ok::<(), logfmt_std::content::BatchError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Prepare {
    /// `kTypeBeginPrepareXID` (0x09): write-committed transactions (the default policy).
    Committed,
    /// `kTypeBeginPersistedPrepareXID` (0x12): write-prepared transactions.
    Persisted,
    /// `kTypeBeginUnprepareXID` (0x13): write-unprepared transactions.
    Unprepared,
}

/// One operation of a [`WriteBatch`], its keys and values borrowed from the record.
///
/// `cf` is the column family (RocksDB); LevelDB's operations, and RocksDB's without a
/// column-family tag, are in column family 0.
///
/// ```
/// use logfmt_std::content::Op;
///
/// let op = Op::Merge { cf: 2, key: b"counter", value: b"+1" };
/// assert_eq!((op.name(), op.cf(), op.key(), op.value()), ("merge", Some(2), Some(&b"counter"[..]), Some(&b"+1"[..])));
/// assert!(op.is_data());
/// assert!(!Op::Commit { xid: b"tx", timestamp: None }.is_data());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Op<'a> {
    /// Put (`kTypeValue` 0x01, `kTypeColumnFamilyValue` 0x05).
    Put {
        /// Column family.
        cf: u32,
        /// Key.
        key: &'a [u8],
        /// Value.
        value: &'a [u8],
    },
    /// Delete (`kTypeDeletion` 0x00, `kTypeColumnFamilyDeletion` 0x04).
    Delete {
        /// Column family.
        cf: u32,
        /// Key.
        key: &'a [u8],
    },
    /// Single delete (`kTypeSingleDeletion` 0x07, `kTypeColumnFamilySingleDeletion` 0x08).
    SingleDelete {
        /// Column family.
        cf: u32,
        /// Key.
        key: &'a [u8],
    },
    /// Merge operand (`kTypeMerge` 0x02, `kTypeColumnFamilyMerge` 0x06).
    Merge {
        /// Column family.
        cf: u32,
        /// Key.
        key: &'a [u8],
        /// The operand.
        value: &'a [u8],
    },
    /// Delete of the keys from `begin` (inclusive) to `end` (exclusive)
    /// (`kTypeRangeDeletion` 0x0f, `kTypeColumnFamilyRangeDeletion` 0x0e).
    DeleteRange {
        /// Column family.
        cf: u32,
        /// First key deleted.
        begin: &'a [u8],
        /// First key not deleted.
        end: &'a [u8],
    },
    /// A value kept in a blob file: the key and the encoded blob index
    /// (`kTypeBlobIndex` 0x11, `kTypeColumnFamilyBlobIndex` 0x10).
    BlobIndex {
        /// Column family.
        cf: u32,
        /// Key.
        key: &'a [u8],
        /// The blob index, as RocksDB encodes it.
        index: &'a [u8],
    },
    /// A wide-column entity: the key and its encoded columns
    /// (`kTypeWideColumnEntity` 0x16, `kTypeColumnFamilyWideColumnEntity` 0x17).
    PutEntity {
        /// Column family.
        cf: u32,
        /// Key.
        key: &'a [u8],
        /// The columns, as RocksDB's `WideColumnSerialization` encodes them.
        columns: &'a [u8],
    },
    /// A put with its write time (`kTypeValuePreferredSeqno` 0x18,
    /// `kTypeColumnFamilyValuePreferredSeqno` 0x19).
    TimedPut {
        /// Column family.
        cf: u32,
        /// Key.
        key: &'a [u8],
        /// Value.
        value: &'a [u8],
        /// Unix write time, in seconds.
        write_time: u64,
    },
    /// A blob for the log's readers only, not a database change (`kTypeLogData` 0x03).
    LogData {
        /// The blob.
        blob: &'a [u8],
    },
    /// Begin of a prepared transaction's operations (0x09, 0x12, 0x13).
    BeginPrepare {
        /// Which marker.
        kind: Prepare,
    },
    /// End of a prepared transaction's operations (`kTypeEndPrepareXID` 0x0a).
    EndPrepare {
        /// The transaction's name.
        xid: &'a [u8],
    },
    /// Commit of a prepared transaction (`kTypeCommitXID` 0x0b,
    /// `kTypeCommitXIDAndTimestamp` 0x15).
    Commit {
        /// The transaction's name.
        xid: &'a [u8],
        /// The commit timestamp (0x15 only).
        timestamp: Option<&'a [u8]>,
    },
    /// Rollback of a prepared transaction (`kTypeRollbackXID` 0x0c).
    Rollback {
        /// The transaction's name.
        xid: &'a [u8],
    },
    /// A no-op marker (`kTypeNoop` 0x0d).
    Noop,
}

impl<'a> Op<'a> {
    /// The operation's name, lower case with underscores (`put`, `single_delete`,
    /// `delete_range`, `begin_prepare`, ...): the `op` of `logfmt cat --output json`.
    ///
    /// ```
    /// use logfmt_std::content::Op;
    ///
    /// assert_eq!(Op::SingleDelete { cf: 0, key: b"k" }.name(), "single_delete");
    /// ```
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::Put { .. } => "put",
            Self::Delete { .. } => "delete",
            Self::SingleDelete { .. } => "single_delete",
            Self::Merge { .. } => "merge",
            Self::DeleteRange { .. } => "delete_range",
            Self::BlobIndex { .. } => "blob_index",
            Self::PutEntity { .. } => "put_entity",
            Self::TimedPut { .. } => "timed_put",
            Self::LogData { .. } => "log_data",
            Self::BeginPrepare {
                kind: Prepare::Committed,
            } => "begin_prepare",
            Self::BeginPrepare {
                kind: Prepare::Persisted,
            } => "begin_persisted_prepare",
            Self::BeginPrepare {
                kind: Prepare::Unprepared,
            } => "begin_unprepare",
            Self::EndPrepare { .. } => "end_prepare",
            Self::Commit {
                timestamp: None, ..
            } => "commit",
            Self::Commit {
                timestamp: Some(_), ..
            } => "commit_with_timestamp",
            Self::Rollback { .. } => "rollback",
            Self::Noop => "noop",
        }
    }

    /// The column family of a data operation; `None` for log data and the markers.
    ///
    /// ```
    /// use logfmt_std::content::Op;
    ///
    /// assert_eq!(Op::Delete { cf: 4, key: b"k" }.cf(), Some(4));
    /// assert_eq!(Op::Noop.cf(), None);
    /// ```
    #[must_use]
    pub fn cf(&self) -> Option<u32> {
        match *self {
            Self::Put { cf, .. }
            | Self::Delete { cf, .. }
            | Self::SingleDelete { cf, .. }
            | Self::Merge { cf, .. }
            | Self::DeleteRange { cf, .. }
            | Self::BlobIndex { cf, .. }
            | Self::PutEntity { cf, .. }
            | Self::TimedPut { cf, .. } => Some(cf),
            _ => None,
        }
    }

    /// The key of a data operation (the first key of a range); `None` for log data and the
    /// markers.
    ///
    /// ```
    /// use logfmt_std::content::Op;
    ///
    /// let range = Op::DeleteRange { cf: 0, begin: b"a", end: b"z" };
    /// assert_eq!(range.key(), Some(&b"a"[..]));
    /// assert_eq!(Op::LogData { blob: b"x" }.key(), None);
    /// ```
    #[must_use]
    pub fn key(&self) -> Option<&'a [u8]> {
        match *self {
            Self::Put { key, .. }
            | Self::Delete { key, .. }
            | Self::SingleDelete { key, .. }
            | Self::Merge { key, .. }
            | Self::BlobIndex { key, .. }
            | Self::PutEntity { key, .. }
            | Self::TimedPut { key, .. } => Some(key),
            Self::DeleteRange { begin, .. } => Some(begin),
            _ => None,
        }
    }

    /// The value of a put, a merge operand, a blob index, an entity's columns; `None` for
    /// the others.
    ///
    /// ```
    /// use logfmt_std::content::Op;
    ///
    /// assert_eq!(Op::Put { cf: 0, key: b"k", value: b"v" }.value(), Some(&b"v"[..]));
    /// assert_eq!(Op::Delete { cf: 0, key: b"k" }.value(), None);
    /// ```
    #[must_use]
    pub fn value(&self) -> Option<&'a [u8]> {
        match *self {
            Self::Put { value, .. }
            | Self::Merge { value, .. }
            | Self::TimedPut { value, .. }
            | Self::BlobIndex { index: value, .. }
            | Self::PutEntity { columns: value, .. } => Some(value),
            _ => None,
        }
    }

    /// Whether the operation is a data operation: one the header's count counts, and that
    /// takes a sequence number.
    ///
    /// ```
    /// use logfmt_std::content::{Op, Prepare};
    ///
    /// assert!(Op::SingleDelete { cf: 0, key: b"k" }.is_data());
    /// assert!(!Op::BeginPrepare { kind: Prepare::Committed }.is_data());
    /// ```
    #[must_use]
    pub fn is_data(&self) -> bool {
        self.cf().is_some()
    }

    /// Appends the operation's bytes as RocksDB's `WriteBatch` encodes it (LevelDB's, for the
    /// operations LevelDB has, in column family 0): the tag, with the column family after the
    /// family tag when `cf` is not 0, then each field (length-prefixed byte strings, a
    /// `TimedPut`'s write time after its value).
    ///
    /// ```
    /// use logfmt_std::content::Op;
    ///
    /// let mut out = Vec::new();
    /// Op::Put { cf: 0, key: b"k", value: b"v" }.encode(&mut out);
    /// Op::Delete { cf: 2, key: b"k" }.encode(&mut out);
    /// assert_eq!(out, b"\x01\x01k\x01v\x04\x02\x01k");
    /// ```
    pub fn encode(&self, out: &mut Vec<u8>) {
        let tagged = |out: &mut Vec<u8>, plain: u8, with_cf: u8, cf: u32| {
            if cf == 0 {
                out.push(plain);
            } else {
                out.push(with_cf);
                put_varint(out, u64::from(cf));
            }
        };
        match *self {
            Op::Put { cf, key, value } => {
                tagged(out, 0x01, 0x05, cf);
                put_slice(out, key);
                put_slice(out, value);
            }
            Op::Delete { cf, key } => {
                tagged(out, 0x00, 0x04, cf);
                put_slice(out, key);
            }
            Op::SingleDelete { cf, key } => {
                tagged(out, 0x07, 0x08, cf);
                put_slice(out, key);
            }
            Op::Merge { cf, key, value } => {
                tagged(out, 0x02, 0x06, cf);
                put_slice(out, key);
                put_slice(out, value);
            }
            Op::DeleteRange { cf, begin, end } => {
                tagged(out, 0x0f, 0x0e, cf);
                put_slice(out, begin);
                put_slice(out, end);
            }
            Op::BlobIndex { cf, key, index } => {
                tagged(out, 0x11, 0x10, cf);
                put_slice(out, key);
                put_slice(out, index);
            }
            Op::PutEntity { cf, key, columns } => {
                tagged(out, 0x16, 0x17, cf);
                put_slice(out, key);
                put_slice(out, columns);
            }
            Op::TimedPut {
                cf,
                key,
                value,
                write_time,
            } => {
                tagged(out, 0x18, 0x19, cf);
                put_slice(out, key);
                let mut packed = value.to_vec();
                packed.extend_from_slice(&write_time.to_le_bytes());
                put_slice(out, &packed);
            }
            Op::LogData { blob } => {
                out.push(0x03);
                put_slice(out, blob);
            }
            Op::BeginPrepare { kind } => out.push(match kind {
                Prepare::Committed => 0x09,
                Prepare::Persisted => 0x12,
                Prepare::Unprepared => 0x13,
            }),
            Op::EndPrepare { xid } => {
                out.push(0x0a);
                put_slice(out, xid);
            }
            Op::Commit {
                xid,
                timestamp: None,
            } => {
                out.push(0x0b);
                put_slice(out, xid);
            }
            Op::Commit {
                xid,
                timestamp: Some(ts),
            } => {
                out.push(0x15);
                put_slice(out, ts);
                put_slice(out, xid);
            }
            Op::Rollback { xid } => {
                out.push(0x0c);
                put_slice(out, xid);
            }
            Op::Noop => out.push(0x0d),
        }
    }
}

/// Why a [`WriteBatch`] could not be read in full. Offsets are in bytes from the start of the
/// record (the batch's header is at 0).
///
/// ```
/// use logfmt_std::content::{BatchError, WriteBatch};
///
/// // Declares one operation; its put is cut short after the key.
/// let mut record = vec![0; 8];
/// record.extend_from_slice(&1u32.to_le_bytes());
/// record.extend_from_slice(b"\x01\x01k\x05v");
/// let error = WriteBatch::new(&record)?.ops().find_map(Result::err);
/// assert_eq!(error, Some(BatchError::BadOp { tag: 0x01, offset: 12 }));
/// assert_eq!(
///     error.map(|e| e.to_string()).as_deref(),
///     Some("bad WriteBatch Put at byte 12: it runs past the end of the batch")
/// );
/// # Ok::<(), BatchError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BatchError {
    /// The record is shorter than the 12-byte header (LevelDB's "malformed WriteBatch (too
    /// small)").
    TooSmall {
        /// The record's length.
        len: usize,
    },
    /// A tag no version of LevelDB or RocksDB writes in a batch (RocksDB's "unknown
    /// WriteBatch tag"). What follows cannot be read: its layout is unknown.
    UnknownTag {
        /// The tag.
        tag: u8,
        /// Where it is.
        offset: usize,
    },
    /// An operation whose fields run past the end of the record, or hold a malformed varint
    /// (RocksDB's "bad WriteBatch Put", ...).
    BadOp {
        /// The operation's tag.
        tag: u8,
        /// Where the operation starts (its tag).
        offset: usize,
    },
    /// The header's count is not the number of data operations the batch holds (LevelDB's
    /// "WriteBatch has wrong count").
    WrongCount {
        /// The count in the header.
        declared: u32,
        /// The data operations read.
        found: u32,
    },
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::TooSmall { len } => write!(
                f,
                "malformed WriteBatch (too small): {len} bytes, the header alone is \
                 {WRITE_BATCH_HEADER}"
            ),
            Self::UnknownTag { tag, offset } => {
                write!(f, "unknown WriteBatch tag {tag:#04x} at byte {offset}")
            }
            Self::BadOp { tag, offset } => write!(
                f,
                "bad WriteBatch {} at byte {offset}: it runs past the end of the batch",
                tag_name(tag)
            ),
            Self::WrongCount { declared, found } => write!(
                f,
                "WriteBatch has wrong count: the header says {declared}, the batch holds \
                 {found}"
            ),
        }
    }
}

impl std::error::Error for BatchError {}

/// RocksDB's name for what a tag holds, as its corruption messages name it.
fn tag_name(tag: u8) -> &'static str {
    match tag {
        0x01 | 0x05 => "Put",
        0x00 | 0x04 | 0x07 | 0x08 => "Delete",
        0x02 | 0x06 => "Merge",
        0x0e | 0x0f => "DeleteRange",
        0x10 | 0x11 => "BlobIndex",
        0x16 | 0x17 => "PutEntity",
        0x18 | 0x19 => "TimedPut",
        0x03 => "Blob",
        0x0a => "EndPrepare XID",
        0x0b | 0x15 => "Commit XID",
        0x0c => "Rollback XID",
        _ => "operation",
    }
}

/// Reads the operation at `offset` (its tag).
fn read_op<'a>(cursor: &mut Cursor<'a>, offset: usize) -> Result<Op<'a>, BatchError> {
    let tag = cursor.u8().ok_or(BatchError::BadOp { tag: 0, offset })?;
    let bad = BatchError::BadOp { tag, offset };
    // The column-family variants carry the family before the rest.
    let cf = match tag {
        0x04 | 0x05 | 0x06 | 0x08 | 0x0e | 0x10 | 0x17 | 0x19 => cursor.varint32().ok_or(bad)?,
        _ => 0,
    };
    let mut slice = || cursor.slice().ok_or(bad);
    Ok(match tag {
        0x01 | 0x05 => Op::Put {
            cf,
            key: slice()?,
            value: slice()?,
        },
        0x00 | 0x04 => Op::Delete { cf, key: slice()? },
        0x07 | 0x08 => Op::SingleDelete { cf, key: slice()? },
        0x02 | 0x06 => Op::Merge {
            cf,
            key: slice()?,
            value: slice()?,
        },
        0x0f | 0x0e => Op::DeleteRange {
            cf,
            begin: slice()?,
            end: slice()?,
        },
        0x11 | 0x10 => Op::BlobIndex {
            cf,
            key: slice()?,
            index: slice()?,
        },
        0x16 | 0x17 => Op::PutEntity {
            cf,
            key: slice()?,
            columns: slice()?,
        },
        0x18 | 0x19 => {
            let key = slice()?;
            let packed = slice()?;
            let split = packed.len().checked_sub(8).ok_or(bad)?;
            let (value, time) = packed.split_at(split);
            let write_time = u64::from_le_bytes(time.try_into().map_err(|_| bad)?);
            Op::TimedPut {
                cf,
                key,
                value,
                write_time,
            }
        }
        0x03 => Op::LogData { blob: slice()? },
        0x09 => Op::BeginPrepare {
            kind: Prepare::Committed,
        },
        0x12 => Op::BeginPrepare {
            kind: Prepare::Persisted,
        },
        0x13 => Op::BeginPrepare {
            kind: Prepare::Unprepared,
        },
        0x0a => Op::EndPrepare { xid: slice()? },
        0x0b => Op::Commit {
            xid: slice()?,
            timestamp: None,
        },
        0x15 => {
            let timestamp = slice()?;
            Op::Commit {
                xid: slice()?,
                timestamp: Some(timestamp),
            }
        }
        0x0c => Op::Rollback { xid: slice()? },
        0x0d => Op::Noop,
        _ => return Err(BatchError::UnknownTag { tag, offset }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A batch of `count` declared operations whose encoded operations are `body`.
    fn batch(sequence: u64, count: u32, body: &[u8]) -> Vec<u8> {
        let mut out = sequence.to_le_bytes().to_vec();
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(body);
        out
    }

    /// Every operation of `record`, or the first error.
    fn all(record: &[u8]) -> Result<Vec<Op<'_>>, BatchError> {
        WriteBatch::new(record)?.ops().collect()
    }

    /// Each tag alone, as bytes written out by hand from RocksDB's `WriteBatch` encoding.
    #[test]
    fn every_tag() {
        let cases: &[(&[u8], Op<'static>)] = &[
            (
                b"\x01\x01k\x01v",
                Op::Put {
                    cf: 0,
                    key: b"k",
                    value: b"v",
                },
            ),
            (
                b"\x05\x03\x01k\x02vv",
                Op::Put {
                    cf: 3,
                    key: b"k",
                    value: b"vv",
                },
            ),
            (b"\x00\x01k", Op::Delete { cf: 0, key: b"k" }),
            (b"\x04\x81\x01\x01k", Op::Delete { cf: 129, key: b"k" }),
            (b"\x07\x01k", Op::SingleDelete { cf: 0, key: b"k" }),
            (b"\x08\x02\x01k", Op::SingleDelete { cf: 2, key: b"k" }),
            (
                b"\x02\x01k\x01+",
                Op::Merge {
                    cf: 0,
                    key: b"k",
                    value: b"+",
                },
            ),
            (
                b"\x06\x01\x01k\x01+",
                Op::Merge {
                    cf: 1,
                    key: b"k",
                    value: b"+",
                },
            ),
            (
                b"\x0f\x01a\x01z",
                Op::DeleteRange {
                    cf: 0,
                    begin: b"a",
                    end: b"z",
                },
            ),
            (
                b"\x0e\x04\x01a\x01z",
                Op::DeleteRange {
                    cf: 4,
                    begin: b"a",
                    end: b"z",
                },
            ),
            (
                b"\x11\x01k\x02\x01\x02",
                Op::BlobIndex {
                    cf: 0,
                    key: b"k",
                    index: b"\x01\x02",
                },
            ),
            (
                b"\x10\x05\x01k\x00",
                Op::BlobIndex {
                    cf: 5,
                    key: b"k",
                    index: b"",
                },
            ),
            (
                b"\x16\x01k\x01\x00",
                Op::PutEntity {
                    cf: 0,
                    key: b"k",
                    columns: b"\x00",
                },
            ),
            (
                b"\x17\x06\x01k\x00",
                Op::PutEntity {
                    cf: 6,
                    key: b"k",
                    columns: b"",
                },
            ),
            (
                b"\x18\x01k\x09v\x2a\x00\x00\x00\x00\x00\x00\x00",
                Op::TimedPut {
                    cf: 0,
                    key: b"k",
                    value: b"v",
                    write_time: 42,
                },
            ),
            (
                b"\x19\x07\x01k\x08\x01\x00\x00\x00\x00\x00\x00\x00",
                Op::TimedPut {
                    cf: 7,
                    key: b"k",
                    value: b"",
                    write_time: 1,
                },
            ),
            (b"\x03\x04blob", Op::LogData { blob: b"blob" }),
            (
                b"\x09",
                Op::BeginPrepare {
                    kind: Prepare::Committed,
                },
            ),
            (
                b"\x12",
                Op::BeginPrepare {
                    kind: Prepare::Persisted,
                },
            ),
            (
                b"\x13",
                Op::BeginPrepare {
                    kind: Prepare::Unprepared,
                },
            ),
            (b"\x0a\x03tx1", Op::EndPrepare { xid: b"tx1" }),
            (
                b"\x0b\x03tx1",
                Op::Commit {
                    xid: b"tx1",
                    timestamp: None,
                },
            ),
            (
                b"\x15\x02ts\x03tx1",
                Op::Commit {
                    xid: b"tx1",
                    timestamp: Some(b"ts"),
                },
            ),
            (b"\x0c\x03tx1", Op::Rollback { xid: b"tx1" }),
            (b"\x0d", Op::Noop),
        ];
        for (bytes, op) in cases {
            let count = u32::from(op.is_data());
            let record = batch(9, count, bytes);
            assert_eq!(all(&record), Ok(vec![*op]), "{bytes:02x?}");
            let mut encoded = Vec::new();
            op.encode(&mut encoded);
            assert_eq!(&encoded, bytes, "{op:?}");
        }
    }

    #[test]
    fn the_count_covers_data_operations_only() {
        // Begin prepare, put, delete, end prepare: 2 data operations.
        let body = b"\x09\x01\x01k\x01v\x00\x01k\x0a\x01x";
        assert_eq!(all(&batch(1, 2, body)).map(|ops| ops.len()), Ok(4));
        assert_eq!(
            all(&batch(1, 3, body)),
            Err(BatchError::WrongCount {
                declared: 3,
                found: 2
            })
        );
        assert_eq!(
            all(&batch(1, 1, b"")),
            Err(BatchError::WrongCount {
                declared: 1,
                found: 0
            })
        );
        // An empty batch with a count of 0 is whole.
        assert_eq!(all(&batch(1, 0, b"")), Ok(vec![]));
    }

    #[test]
    fn errors_say_where() {
        assert_eq!(all(b"0123456789a"), Err(BatchError::TooSmall { len: 11 }));
        // The ops read before an unknown tag are returned, then the tag with its offset.
        let record = batch(1, 2, b"\x00\x01k\x14\x01k");
        let items: Vec<_> = WriteBatch::new(&record).unwrap().ops().collect();
        assert_eq!(
            items,
            [
                Ok(Op::Delete { cf: 0, key: b"k" }),
                Err(BatchError::UnknownTag {
                    tag: 0x14,
                    offset: 15
                })
            ]
        );
        // Cut in the value, in the key length, in the column family.
        for (body, tag) in [
            (&b"\x01\x01k\x05vv"[..], 0x01),
            (b"\x01\x80", 0x01),
            (b"\x05\x80", 0x05),
            (b"\x0b", 0x0b),
            (b"\x18\x01k\x07\x00\x00\x00\x00\x00\x00\x00", 0x18),
        ] {
            assert_eq!(
                all(&batch(1, 1, body)),
                Err(BatchError::BadOp { tag, offset: 12 }),
                "{body:02x?}"
            );
        }
        for tag in [0x14, 0x1a, 0x7f, 0xff] {
            assert_eq!(
                all(&batch(1, 1, &[tag])),
                Err(BatchError::UnknownTag { tag, offset: 12 })
            );
        }
        assert_eq!(
            BatchError::UnknownTag {
                tag: 0x14,
                offset: 15
            }
            .to_string(),
            "unknown WriteBatch tag 0x14 at byte 15"
        );
    }

    /// A LevelDB batch written as LevelDB's `WriteBatch::Put`/`Delete` write it (bytes from
    /// `db/write_batch_test.cc`'s layout: sequence 100, count 3).
    #[test]
    fn a_leveldb_batch() {
        let record = batch(100, 3, b"\x01\x03foo\x03bar\x00\x03box\x01\x03baz\x03boo");
        let batch = WriteBatch::new(&record).unwrap();
        assert_eq!(batch.sequence(), 100);
        let ops: Vec<_> = batch.ops().map(Result::unwrap).collect();
        assert_eq!(
            ops,
            [
                Op::Put {
                    cf: 0,
                    key: b"foo",
                    value: b"bar"
                },
                Op::Delete { cf: 0, key: b"box" },
                Op::Put {
                    cf: 0,
                    key: b"baz",
                    value: b"boo"
                },
            ]
        );
    }

    /// An owned operation, for proptest.
    #[derive(Debug, Clone)]
    enum Owned {
        Put(u32, Vec<u8>, Vec<u8>),
        Delete(u32, Vec<u8>),
        SingleDelete(u32, Vec<u8>),
        Merge(u32, Vec<u8>, Vec<u8>),
        Range(u32, Vec<u8>, Vec<u8>),
        Blob(u32, Vec<u8>, Vec<u8>),
        Entity(u32, Vec<u8>, Vec<u8>),
        Timed(u32, Vec<u8>, Vec<u8>, u64),
        LogData(Vec<u8>),
        Begin(u8),
        End(Vec<u8>),
        Commit(Vec<u8>, Option<Vec<u8>>),
        Rollback(Vec<u8>),
        Noop,
    }

    impl Owned {
        fn op(&self) -> Op<'_> {
            match self {
                Self::Put(cf, k, v) => Op::Put {
                    cf: *cf,
                    key: k,
                    value: v,
                },
                Self::Delete(cf, k) => Op::Delete { cf: *cf, key: k },
                Self::SingleDelete(cf, k) => Op::SingleDelete { cf: *cf, key: k },
                Self::Merge(cf, k, v) => Op::Merge {
                    cf: *cf,
                    key: k,
                    value: v,
                },
                Self::Range(cf, b, e) => Op::DeleteRange {
                    cf: *cf,
                    begin: b,
                    end: e,
                },
                Self::Blob(cf, k, i) => Op::BlobIndex {
                    cf: *cf,
                    key: k,
                    index: i,
                },
                Self::Entity(cf, k, c) => Op::PutEntity {
                    cf: *cf,
                    key: k,
                    columns: c,
                },
                Self::Timed(cf, k, v, t) => Op::TimedPut {
                    cf: *cf,
                    key: k,
                    value: v,
                    write_time: *t,
                },
                Self::LogData(b) => Op::LogData { blob: b },
                Self::Begin(n) => Op::BeginPrepare {
                    kind: match n % 3 {
                        0 => Prepare::Committed,
                        1 => Prepare::Persisted,
                        _ => Prepare::Unprepared,
                    },
                },
                Self::End(x) => Op::EndPrepare { xid: x },
                Self::Commit(x, ts) => Op::Commit {
                    xid: x,
                    timestamp: ts.as_deref(),
                },
                Self::Rollback(x) => Op::Rollback { xid: x },
                Self::Noop => Op::Noop,
            }
        }
    }

    fn owned() -> impl Strategy<Value = Owned> {
        let bytes = || proptest::collection::vec(any::<u8>(), 0..40);
        let cf = || prop_oneof![Just(0u32), any::<u32>()];
        prop_oneof![
            (cf(), bytes(), bytes()).prop_map(|(c, k, v)| Owned::Put(c, k, v)),
            (cf(), bytes()).prop_map(|(c, k)| Owned::Delete(c, k)),
            (cf(), bytes()).prop_map(|(c, k)| Owned::SingleDelete(c, k)),
            (cf(), bytes(), bytes()).prop_map(|(c, k, v)| Owned::Merge(c, k, v)),
            (cf(), bytes(), bytes()).prop_map(|(c, k, v)| Owned::Range(c, k, v)),
            (cf(), bytes(), bytes()).prop_map(|(c, k, v)| Owned::Blob(c, k, v)),
            (cf(), bytes(), bytes()).prop_map(|(c, k, v)| Owned::Entity(c, k, v)),
            (cf(), bytes(), bytes(), any::<u64>())
                .prop_map(|(c, k, v, t)| Owned::Timed(c, k, v, t)),
            bytes().prop_map(Owned::LogData),
            any::<u8>().prop_map(Owned::Begin),
            bytes().prop_map(Owned::End),
            (bytes(), proptest::option::of(bytes())).prop_map(|(x, t)| Owned::Commit(x, t)),
            bytes().prop_map(Owned::Rollback),
            Just(Owned::Noop),
        ]
    }

    proptest! {
        #[test]
        fn encode_then_decode(sequence in any::<u64>(), ops in proptest::collection::vec(owned(), 0..20)) {
            let ops: Vec<Op<'_>> = ops.iter().map(Owned::op).collect();
            let mut body = Vec::new();
            for op in &ops {
                op.encode(&mut body);
            }
            let count = ops.iter().filter(|op| op.is_data()).count() as u32;
            let record = batch(sequence, count, &body);
            let decoded = WriteBatch::new(&record).unwrap();
            prop_assert_eq!(decoded.sequence(), sequence);
            prop_assert_eq!(decoded.count(), count);
            prop_assert_eq!(decoded.ops().collect::<Result<Vec<_>, _>>(), Ok(ops));
        }

        /// Any bytes: no panic, and the operations end at the first error.
        #[test]
        fn any_bytes(record in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Ok(batch) = WriteBatch::new(&record) {
                let items: Vec<_> = batch.ops().collect();
                let errors = items.iter().filter(|item| item.is_err()).count();
                prop_assert!(errors <= 1);
                if errors == 1 {
                    prop_assert!(items.last().is_some_and(Result::is_err));
                }
            }
        }
    }
}
