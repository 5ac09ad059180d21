//! Pebble's batches: the same 12-byte header as LevelDB's and RocksDB's [`WriteBatch`], then
//! operations whose kind byte is Pebble's `InternalKeyKind` (`internal/base/internal.go`),
//! which agrees with RocksDB's tags for 0–3, 7 and 15 and means other things above:
//! 18 `SetWithDelete`, 19–21 range keys, 22 `IngestSST`, 23 `DeleteSized`, 24 `Excise`, 26
//! `IngestSSTWithBlobs`. Each is the kind, the key as a varint-prefixed string, and for the
//! kinds that carry one (`batchrepr.Reader.Next`) a value as a varint-prefixed string; no column
//! family.

use super::coding::Cursor;
use super::write_batch::{BatchError, WRITE_BATCH_HEADER, WriteBatch};

/// The largest kind Pebble's batch reader takes (`InternalKeyKindMax`).
pub const PEBBLE_KIND_MAX: u8 = 30;

/// One operation of a Pebble batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PebbleOp<'a> {
    /// Pebble's `InternalKeyKind`.
    pub kind: u8,
    /// The key (for `LogData`, the data; for `IngestSST`, the table's number).
    pub key: &'a [u8],
    /// The value, for the kinds that carry one.
    pub value: Option<&'a [u8]>,
}

impl PebbleOp<'_> {
    /// The kind's name as logfmt prints it: RocksDB's names where the kinds agree (`put`,
    /// `delete`, `merge`, `log_data`, `single_delete`, `delete_range`), Pebble's otherwise
    /// (`range_key_set`, `delete_sized`, `excise`, ...), `kind_N` for one Pebble reserves.
    ///
    /// ```
    /// use logfmt_std::content::PebbleOp;
    /// # use logfmt_std::content::WriteBatch;
    /// # let mut record = 1u64.to_le_bytes().to_vec();
    /// # record.extend_from_slice(&1u32.to_le_bytes());
    /// # record.extend_from_slice(&[21, 1, b'a', 1, b'b']);
    /// # let batch = WriteBatch::new(&record)?;
    /// let op = batch.pebble_ops().next().expect("one")?;
    /// assert_eq!(op.name(), "range_key_set");
    /// # Ok::<(), logfmt_std::content::BatchError>(())
    /// ```
    #[must_use]
    pub fn name(&self) -> &'static str {
        kind_name(self.kind)
    }

    /// Whether the operation counts in the batch's count (every kind but `LogData`).
    #[must_use]
    pub fn is_data(&self) -> bool {
        self.kind != 3
    }
}

/// The name of Pebble's key kind `kind` ([`PebbleOp::name`]).
#[must_use]
pub fn kind_name(kind: u8) -> &'static str {
    match kind {
        0 => "delete",
        1 => "put",
        2 => "merge",
        3 => "log_data",
        7 => "single_delete",
        15 => "delete_range",
        17 => "separator",
        18 => "set_with_delete",
        19 => "range_key_delete",
        20 => "range_key_unset",
        21 => "range_key_set",
        22 => "ingest_sst",
        23 => "delete_sized",
        24 => "excise",
        25 => "synthetic_key",
        26 => "ingest_sst_with_blobs",
        30 => "span_boundary",
        _ => "reserved",
    }
}

/// Whether Pebble's batch reader reads a value after the key of `kind`.
const fn has_value(kind: u8) -> bool {
    matches!(kind, 1 | 2 | 15 | 19 | 20 | 21 | 23 | 24 | 26)
}

/// The operations of a Pebble batch ([`WriteBatch::pebble_ops`]).
#[derive(Debug, Clone)]
pub struct PebbleOps<'a> {
    cursor: Cursor<'a>,
    declared: u32,
    found: u32,
    done: bool,
}

impl<'a> Iterator for PebbleOps<'a> {
    type Item = Result<PebbleOp<'a>, BatchError>;

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
        let kind = self.cursor.u8()?;
        if kind > PEBBLE_KIND_MAX {
            self.done = true;
            return Some(Err(BatchError::UnknownTag { tag: kind, offset }));
        }
        let key = self.cursor.slice();
        let value = match key {
            Some(_) if has_value(kind) => self.cursor.slice().map(Some),
            Some(_) => Some(None),
            None => None,
        };
        let (Some(key), Some(value)) = (key, value) else {
            self.done = true;
            return Some(Err(BatchError::BadOp { tag: kind, offset }));
        };
        let op = PebbleOp { kind, key, value };
        if op.is_data() {
            self.found = self.found.saturating_add(1);
        }
        Some(Ok(op))
    }
}

impl<'a> WriteBatch<'a> {
    /// The operations, read as Pebble reads them ([`PebbleOp`]). An operation that cannot be
    /// read ends them with its error; a count that does not match the operations read (`LogData`
    /// aside) ends them with [`BatchError::WrongCount`].
    ///
    /// ```
    /// use logfmt_std::content::WriteBatch;
    ///
    /// // Pebble's DeleteSized (23): key "k", value the varint 9.
    /// let mut record = 3u64.to_le_bytes().to_vec();
    /// record.extend_from_slice(&1u32.to_le_bytes());
    /// record.extend_from_slice(&[23, 1, b'k', 1, 9]);
    /// let op = WriteBatch::new(&record)?.pebble_ops().next().expect("one")?;
    /// assert_eq!((op.name(), op.key, op.value), ("delete_sized", &b"k"[..], Some(&[9u8][..])));
    /// # Ok::<(), logfmt_std::content::BatchError>(())
    /// ```
    #[must_use]
    pub fn pebble_ops(&self) -> PebbleOps<'a> {
        PebbleOps {
            cursor: Cursor::new(self.body(), WRITE_BATCH_HEADER),
            declared: self.count(),
            found: 0,
            done: false,
        }
    }
}
