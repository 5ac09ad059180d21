//! The tables a directory of logs is read as, and their columns.

use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, LazyLock};

use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};

/// Which table a scan reads from the logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TableKind {
    /// One row per record: [`records`] columns. The default.
    #[default]
    Records,
    /// One row per damaged region: [`damage`] columns.
    Damage,
    /// One row per operation of each record read as a `WriteBatch` (a LevelDB or RocksDB
    /// write-ahead log): [`ops`] columns.
    Operations,
}

impl TableKind {
    /// Every kind.
    pub const ALL: [Self; 3] = [Self::Records, Self::Damage, Self::Operations];

    /// The table's schema.
    ///
    /// ```
    /// use logfmt_datafusion::TableKind;
    ///
    /// let names: Vec<_> = TableKind::Records.schema().fields().iter().map(|f| f.name().clone()).collect();
    /// assert_eq!(names, ["file", "offset", "length", "index", "payload"]);
    /// ```
    pub fn schema(self) -> SchemaRef {
        static RECORDS: LazyLock<SchemaRef> = LazyLock::new(|| {
            Arc::new(Schema::new(vec![
                Field::new("file", DataType::Utf8, false),
                Field::new("offset", DataType::UInt64, false),
                Field::new("length", DataType::UInt64, false),
                Field::new("index", DataType::UInt32, true),
                Field::new("payload", DataType::Binary, false),
            ]))
        });
        static DAMAGE: LazyLock<SchemaRef> = LazyLock::new(|| {
            Arc::new(Schema::new(vec![
                Field::new("file", DataType::Utf8, false),
                Field::new("offset", DataType::UInt64, false),
                Field::new("bytes", DataType::UInt64, false),
                Field::new("kind", DataType::Utf8, false),
                Field::new("reason", DataType::Utf8, false),
            ]))
        });
        static OPS: LazyLock<SchemaRef> = LazyLock::new(|| {
            Arc::new(Schema::new(vec![
                Field::new("file", DataType::Utf8, false),
                Field::new("offset", DataType::UInt64, false),
                Field::new("index", DataType::UInt32, true),
                Field::new("op_index", DataType::UInt32, true),
                Field::new("sequence", DataType::UInt64, true),
                Field::new("op", DataType::Utf8, true),
                Field::new("cf", DataType::UInt32, true),
                Field::new("key", DataType::Binary, true),
                Field::new("value", DataType::Binary, true),
                Field::new("error", DataType::Utf8, true),
            ]))
        });
        match self {
            Self::Records => Arc::clone(&RECORDS),
            Self::Damage => Arc::clone(&DAMAGE),
            Self::Operations => Arc::clone(&OPS),
        }
    }

    /// The name used for the table by [`register_logs`](crate::register_logs) and
    /// `logfmt-sql`: `logs`, `damage`, `ops`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Records => "logs",
            Self::Damage => "damage",
            Self::Operations => "ops",
        }
    }
}

impl fmt::Display for TableKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a [`TableKind`]'s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTableKind;

impl fmt::Display for UnknownTableKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("expected one of: logs, damage, ops")
    }
}

impl std::error::Error for UnknownTableKind {}

impl FromStr for TableKind {
    type Err = UnknownTableKind;

    fn from_str(s: &str) -> Result<Self, UnknownTableKind> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.name() == s)
            .ok_or(UnknownTableKind)
    }
}

/// The columns of [`TableKind::Records`], by index.
///
/// - `file` (utf8): the file (its path, for a local file);
/// - `offset` (u64): where the record's first chunk starts (for a record of a pack, the
///   pack's);
/// - `length` (u64): the payload's length;
/// - `index` (u32, null for a plain record): the record's index in its pack;
/// - `payload` (binary): the record.
pub mod records {
    /// `file`.
    pub const FILE: usize = 0;
    /// `offset`.
    pub const OFFSET: usize = 1;
    /// `length`.
    pub const LENGTH: usize = 2;
    /// `index`.
    pub const INDEX: usize = 3;
    /// `payload`.
    pub const PAYLOAD: usize = 4;
}

/// The columns of [`TableKind::Damage`], by index.
///
/// - `file` (utf8);
/// - `offset` (u64): where the damage begins;
/// - `bytes` (u64): the bytes concerned ([`logfmt_std::Damage::bytes`]);
/// - `kind` (utf8): `corruption`, `torn_tail`, `skipped` or `lost_tail`; or `zero_fill`:
///   a torn tail of zeros to the end of a local file read as a log (space preallocated or
///   memory-mapped and never written, [`logfmt_std::advanced::zero_fill`]), which `logfmt verify`
///   reports as its tail and not as damage;
/// - `reason` (utf8): what it is, in words.
pub mod damage {
    /// `file`.
    pub const FILE: usize = 0;
    /// `offset`.
    pub const OFFSET: usize = 1;
    /// `bytes`.
    pub const BYTES: usize = 2;
    /// `kind`.
    pub const KIND: usize = 3;
    /// `reason`.
    pub const REASON: usize = 4;
}

/// The columns of [`TableKind::Operations`], by index: one row per operation of a record read
/// as a `WriteBatch` ([`logfmt_std::content::WriteBatch`]), and one row for an error that ends
/// a batch's operations (with `error` set; `op`, `cf`, `key`, `value` null).
///
/// - `file` (utf8), `offset` (u64), `index` (u32, nullable): the record, as in
///   [`records`];
/// - `op_index` (u32): the operation's position in its batch (null for a batch whose header
///   cannot be read);
/// - `sequence` (u64): the batch's sequence number (null likewise);
/// - `op` (utf8): `put`, `delete`, `merge`, `delete_range`, ... ([`logfmt_std::content::Op::name`]);
/// - `cf` (u32): the column family, where the operation has one;
/// - `key`, `value` (binary): where the operation has them;
/// - `error` (utf8): why the rest of the batch cannot be read.
pub mod ops {
    /// `file`.
    pub const FILE: usize = 0;
    /// `offset`.
    pub const OFFSET: usize = 1;
    /// `index`.
    pub const INDEX: usize = 2;
    /// `op_index`.
    pub const OP_INDEX: usize = 3;
    /// `sequence`.
    pub const SEQUENCE: usize = 4;
    /// `op`.
    pub const OP: usize = 5;
    /// `cf`.
    pub const CF: usize = 6;
    /// `key`.
    pub const KEY: usize = 7;
    /// `value`.
    pub const VALUE: usize = 8;
    /// `error`.
    pub const ERROR: usize = 9;
}
