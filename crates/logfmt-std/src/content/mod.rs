//! What LevelDB, RocksDB and Pebble keep in their logs: the `WriteBatch` of every
//! write-ahead log record ([`WriteBatch`]), the `VersionEdit` of every MANIFEST record
//! ([`VersionEdit`]), and which files of a database directory hold them ([`Database`]).
//!
//! The decoders borrow keys and values from the record they read, never panic, and report
//! what they cannot read with its offset in the record ([`BatchError`], [`EditError`]) after
//! returning everything before it. With the `serde` feature, an operation ([`Op`]) and a
//! field ([`Field`], and its parts) are `serde::Serialize`, in the layout of `logfmt cat
//! --output json` (keys and values in hex, names as strings).
//!
//! ```
//! use logfmt_std::content::{Op, WriteBatch};
//!
//! // A RocksDB batch: sequence 1, two data operations, the second in column family 2.
//! let mut record = Vec::new();
//! record.extend_from_slice(&1u64.to_le_bytes());
//! record.extend_from_slice(&2u32.to_le_bytes());
//! record.extend_from_slice(b"\x01\x01a\x011"); // put a = 1
//! record.extend_from_slice(b"\x0e\x02\x01b\x01d"); // delete range [b, d) in cf 2
//!
//! let batch = WriteBatch::new(&record)?;
//! let names: Vec<_> = batch.ops().map(|op| op.map(|op| (op.name(), op.cf()))).collect::<Result<_, _>>()?;
//! assert_eq!(names, [("put", Some(0)), ("delete_range", Some(2))]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod coding;
mod database;
mod pebble_batch;
#[cfg(feature = "serde")]
mod serialize;
mod version_edit;
mod write_batch;

pub use database::{Database, DatabaseError, DbFile, DbFileKind};
pub use pebble_batch::{PEBBLE_KIND_MAX, PebbleOp, PebbleOps, kind_name as pebble_kind_name};
pub use version_edit::{
    BlobReferences, EditError, Field, Fields, FileField, InternalKey, NewFile, NewFileTag,
    RangeKeyBounds, TAG_SAFE_IGNORE_MASK, VersionEdit,
};
pub use write_batch::{BatchError, Op, Ops, Prepare, WRITE_BATCH_HEADER, WriteBatch};
