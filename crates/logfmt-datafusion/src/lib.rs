//! Logs in LevelDB's log format (and RocksDB's recyclable and compressed records, logfmt's
//! packs) as [DataFusion](datafusion) tables: a directory of logs or flash images queried with
//! SQL, its files cut into block-aligned byte ranges read in parallel.
//!
//! Three tables ([`TableKind`]) are read from the same files:
//!
//! - `logs` — one row per record: `file`, `offset`, `length`, `index` (in its pack),
//!   `payload` ([`table::records`]);
//! - `damage` — one row per damaged region: `file`, `offset`, `bytes`, `kind`, `reason`
//!   ([`table::damage`]);
//! - `ops` — one row per operation of each record read as a `WriteBatch` (a write-ahead log):
//!   `file`, `offset`, `index`, `op_index`, `sequence`, `op`, `cf`, `key`, `value`, `error`
//!   ([`table::ops`]).
//!
//! A WAL directory (numbered logs read in log-number order as one log, by
//! `logfmt_std::wal`) is two more tables, `wal` and `wal_damage`, with each record's `log`
//! number and `file` ([`wal`]).
//!
//! The extension points are DataFusion's, as for its CSV and Parquet sources: [`LogFormat`]
//! (a [`FileFormat`](datafusion::datasource::file_format::FileFormat)), [`LogSource`] (a
//! [`FileSource`](datafusion::datasource::physical_plan::FileSource)) and [`LogOpener`] (a
//! [`FileOpener`](datafusion::datasource::physical_plan::FileOpener)).
//!
//! # Ranges
//!
//! DataFusion reads a large file in byte ranges, one per partition; [`LogSource`] cuts them at
//! block boundaries (32 KiB). Each range is read by a [`logfmt_std::advanced::LogReader`] limited to it
//! ([`logfmt_std::LogReaderOptions::range`], the rule of [`logfmt_std::advanced::split`] and
//! [`logfmt_std::advanced::par_scan_file`]): it returns the records whose first chunk starts in the
//! range, reading past its end to complete the last one, and the damage that starts in it. So
//! the partitions together return every record and every damaged region of a sequential read
//! exactly once, damaged logs included.
//!
//! # More than one machine
//!
//! [`LogCodec`] serializes the tables and their scans (DataFusion's `datafusion-proto`);
//! [`cluster`] runs them on a [Ballista](https://datafusion.apache.org/ballista/) cluster (a
//! scheduler and executors, with [`ClusterCodec`]), as the `logfmt-cluster` and `logfmt-sql
//! --cluster` commands do.
//!
//! # Example
//!
//! ```
//! use datafusion::prelude::SessionContext;
//! use logfmt_datafusion::{LogOptions, register_logs};
//! use logfmt_std::{LogWriter, LogWriterOptions};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let mut writer = LogWriter::create(&dir.path().join("000001.log"), &LogWriterOptions::new())?;
//! for i in 0..100u32 {
//!     writer.add_record(&vec![7; i as usize])?;
//! }
//! writer.close()?;
//!
//! let ctx = SessionContext::new();
//! register_logs(&ctx, &[dir.path().to_str().unwrap()], "", LogOptions::new()).await?;
//! let batches = ctx
//!     .sql("SELECT count(*) AS records, sum(length) AS bytes FROM logs")
//!     .await?
//!     .collect()
//!     .await?;
//! let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches)?.to_string();
//! assert!(text.contains("| 100     | 4950  |"), "{text}");
//! # Ok(())
//! # }
//! ```

pub mod cluster;
mod codec;
mod error;
mod format;
mod options;
mod scan;
mod source;
pub mod table;
pub mod wal;

use std::sync::Arc;

use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::error::Result;
use datafusion::prelude::SessionContext;

pub use cluster::ClusterCodec;
pub use codec::{LogCodec, LogTable};
pub use error::ScanError;
pub use format::LogFormat;
pub use options::{ChunkFormatChoice, LogOptions};
pub use source::{LogOpener, LogSource};
pub use table::{TableKind, UnknownTableKind};
pub use wal::{read_wal, register_wal, wal_damage_schema, wal_schema};

/// The table `kind` over the files at `paths` (directories, listed recursively, or files; local
/// paths or URLs of a registered object store) whose names end with `extension` (`""`: every
/// file), read with `options`.
///
/// # Errors
/// A path that is not a valid URL or path.
pub fn log_table(
    paths: &[&str],
    extension: &str,
    kind: TableKind,
    options: LogOptions,
) -> Result<ListingTable> {
    let urls = paths
        .iter()
        .map(ListingTableUrl::parse)
        .collect::<Result<Vec<_>>>()?;
    let listing =
        ListingOptions::new(Arc::new(LogFormat::new(kind, options))).with_file_extension(extension);
    let config = ListingTableConfig::new_with_multi_paths(urls)
        .with_listing_options(listing)
        .with_schema(kind.schema());
    ListingTable::try_new(config)
}

/// Registers the three tables ([`TableKind`]: `logs`, `damage`, `ops`) over the files at
/// `paths` whose names end with `extension` (`""`: every file) in `ctx`, read with `options`,
/// as [`LogTable`]s (which [`LogCodec`] serializes).
///
/// # Errors
/// A path that is not a valid URL or path; a table of that name already registered.
pub async fn register_logs(
    ctx: &SessionContext,
    paths: &[&str],
    extension: &str,
    options: LogOptions,
) -> Result<()> {
    for kind in TableKind::ALL {
        let table = LogTable::try_new(paths, extension, kind, options)?;
        ctx.register_table(kind.name(), Arc::new(table))?;
    }
    Ok(())
}

/// The README's example, compiled as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
