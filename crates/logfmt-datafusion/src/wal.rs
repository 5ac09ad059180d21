//! A WAL directory as two tables: every log of a directory of numbered logs (`NNNNNN.log`: a
//! WAL directory written by `logfmt_std::wal`, RocksDB's `archive`, a database's logs) read
//! in log-number order as one log, by [`logfmt_std::wal::ReadOnlyWal`] — the recovery mode
//! deciding, as for a WAL's own recovery, what damage and a gap between two logs mean
//! (point-in-time recovery stops there and reads no later log). A WAL written with failover
//! is read with its failover directory ([`WalOptions::failover`]): a log's files in either,
//! each record once. Nothing in the directory is locked or changed.
//!
//! - `wal` — a row per record, in order: `log`, `file`, `offset`, `length`, `payload`
//!   ([`wal_schema`]);
//! - `wal_damage` — a row per damaged region: `log`, `file`, `offset`, `bytes`, `reason`
//!   ([`wal_damage_schema`]).
//!
//! The directory is read once, in order, when the tables are made, and held in memory.
//!
//! ```
//! use datafusion::prelude::SessionContext;
//! use logfmt_datafusion::register_wal;
//! use logfmt_std::RecoveryMode;
//! use logfmt_std::wal::{Wal, WalOptions};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let writer = Wal::open(dir.path(), &WalOptions::new().create(true))?.start()?;
//! writer.append_durable(b"one")?;
//! writer.rotate()?;
//! writer.append_durable(b"two")?;
//! writer.close()?;
//!
//! let ctx = SessionContext::new();
//! let options = WalOptions::new().recovery(RecoveryMode::PointInTimeRecovery);
//! register_wal(&ctx, dir.path(), &options)?;
//! let batches = ctx
//!     .sql("SELECT log, count(*) AS records FROM wal GROUP BY log ORDER BY log")
//!     .await?
//!     .collect()
//!     .await?;
//! let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches)?.to_string();
//! assert!(text.contains("| 1   | 1       |"), "{text}");
//! assert!(text.contains("| 2   | 1       |"), "{text}");
//! # Ok(())
//! # }
//! ```

use std::path::Path;
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{ArrayRef, BinaryBuilder, StringBuilder, UInt64Builder};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::MemTable;
use datafusion::error::{DataFusionError, Result};
use datafusion::prelude::SessionContext;
use logfmt_std::wal::{ReadOnlyWal, WalEntry, WalError, WalOptions};

use crate::error::ScanError;

/// Rows per batch.
const BATCH_ROWS: usize = 8192;

/// The columns of the `wal` table: `log` (u64: the log's number), `file` (utf8: its path),
/// `offset` (u64: where the record starts in its log), `length` (u64: the payload's length),
/// `payload` (binary).
///
/// ```
/// let names: Vec<_> = logfmt_datafusion::wal_schema().fields().iter().map(|f| f.name().clone()).collect();
/// assert_eq!(names, ["log", "file", "offset", "length", "payload"]);
/// ```
pub fn wal_schema() -> SchemaRef {
    static SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
        Arc::new(Schema::new(vec![
            Field::new("log", DataType::UInt64, false),
            Field::new("file", DataType::Utf8, false),
            Field::new("offset", DataType::UInt64, false),
            Field::new("length", DataType::UInt64, false),
            Field::new("payload", DataType::Binary, false),
        ]))
    });
    Arc::clone(&SCHEMA)
}

/// The columns of the `wal_damage` table: `log` (u64), `file` (utf8), `offset` (u64: where
/// the damage begins in its log), `bytes` (u64), `reason` (utf8: LevelDB's).
pub fn wal_damage_schema() -> SchemaRef {
    static SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
        Arc::new(Schema::new(vec![
            Field::new("log", DataType::UInt64, false),
            Field::new("file", DataType::Utf8, false),
            Field::new("offset", DataType::UInt64, false),
            Field::new("bytes", DataType::UInt64, false),
            Field::new("reason", DataType::Utf8, false),
        ]))
    });
    Arc::clone(&SCHEMA)
}

/// The rows being built for one table.
struct Rows {
    log: UInt64Builder,
    file: StringBuilder,
    offset: UInt64Builder,
    /// `length` (records) or `bytes` (damage).
    size: UInt64Builder,
    /// Records only.
    payload: BinaryBuilder,
    /// Damage only.
    reason: StringBuilder,
    count: usize,
    batches: Vec<RecordBatch>,
}

impl Rows {
    fn new() -> Self {
        Self {
            log: UInt64Builder::new(),
            file: StringBuilder::new(),
            offset: UInt64Builder::new(),
            size: UInt64Builder::new(),
            payload: BinaryBuilder::new(),
            reason: StringBuilder::new(),
            count: 0,
            batches: Vec::new(),
        }
    }

    /// Ends the batch being built, if it has rows: a `wal` batch, or a `wal_damage` one.
    fn flush(&mut self, damage: bool) -> Result<()> {
        if self.count == 0 {
            return Ok(());
        }
        self.count = 0;
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(self.log.finish()),
            Arc::new(self.file.finish()),
            Arc::new(self.offset.finish()),
            Arc::new(self.size.finish()),
        ];
        let schema = if damage {
            columns.push(Arc::new(self.reason.finish()));
            wal_damage_schema()
        } else {
            columns.push(Arc::new(self.payload.finish()));
            wal_schema()
        };
        let batch = RecordBatch::try_new(schema, columns)
            .map_err(|e| DataFusionError::from(ScanError::Arrow(e.to_string())))?;
        self.batches.push(batch);
        Ok(())
    }
}

/// The records and the damage of the WAL directory `dir`, read with `options` (its recovery
/// mode, and its failover directory if any; nothing is created): the batches of `wal` and of
/// `wal_damage`.
///
/// # Errors
/// The directory cannot be listed or a log read; a record of 2 GiB or more;
/// [`RecoveryMode::AbsoluteConsistency`](logfmt_std::RecoveryMode::AbsoluteConsistency)
/// found damage.
pub fn read_wal(dir: &Path, options: &WalOptions) -> Result<(Vec<RecordBatch>, Vec<RecordBatch>)> {
    let external = |e: WalError| DataFusionError::External(Box::new(e));
    let mut wal = ReadOnlyWal::open(dir, options).map_err(external)?;
    let mut records = Rows::new();
    let mut damage = Rows::new();
    let mut file = String::new();
    for entry in wal.recover() {
        match entry.map_err(external)? {
            WalEntry::Log { path, .. } => file = path.to_string_lossy().into_owned(),
            WalEntry::Record(record) => {
                let len = record.data.len() as u64;
                if i32::try_from(len).is_err() {
                    return Err(ScanError::RecordTooLarge {
                        file,
                        offset: record.position.offset,
                        len,
                    }
                    .into());
                }
                records.log.append_value(record.position.log);
                records.file.append_value(&file);
                records.offset.append_value(record.position.offset);
                records.size.append_value(len);
                records.payload.append_value(&record.data);
                records.count += 1;
                if records.count == BATCH_ROWS {
                    records.flush(false)?;
                }
            }
            WalEntry::Damage { log, damage: found } => {
                damage.log.append_value(log);
                damage.file.append_value(&file);
                damage.offset.append_value(found.offset);
                damage.size.append_value(found.bytes);
                damage.reason.append_value(found.kind.to_string());
                damage.count += 1;
                if damage.count == BATCH_ROWS {
                    damage.flush(true)?;
                }
            }
            _ => {}
        }
    }
    records.flush(false)?;
    damage.flush(true)?;
    Ok((records.batches, damage.batches))
}

/// Registers the tables `wal` and `wal_damage` of the WAL directory `dir` in `ctx`, read with
/// `options` (see the [module](self)).
///
/// # Errors
/// As [`read_wal`]; a table of that name already registered.
pub fn register_wal(ctx: &SessionContext, dir: &Path, options: &WalOptions) -> Result<()> {
    let (records, damage) = read_wal(dir, options)?;
    let records = MemTable::try_new(wal_schema(), vec![records])?;
    let damage = MemTable::try_new(wal_damage_schema(), vec![damage])?;
    ctx.register_table("wal", Arc::new(records))?;
    ctx.register_table("wal_damage", Arc::new(damage))?;
    Ok(())
}
