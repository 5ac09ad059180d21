//! `logfmt-sql`: SQL over a directory of logs (or files), with DataFusion.
//!
//! ```text
//! logfmt-sql 'SELECT file, count(*), sum(length) FROM logs GROUP BY file' /var/db/wal
//! ```
//!
//! The tables are `logs` (a row per record), `damage` (a row per damaged region) and `ops` (a
//! row per `WriteBatch` operation); see the crate's documentation.
//!
//! With `--cluster df://HOST:PORT` the query runs on a Ballista cluster (`logfmt-cluster`),
//! whose scheduler and executors read the logs at the same paths.

use std::fmt;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use ballista::extension::SessionConfigExt;
use clap::{Parser, ValueEnum};
use datafusion::error::DataFusionError;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::errors::ParquetError;
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::StreamExt;
use logfmt_datafusion::cluster::remote_context;
use logfmt_datafusion::{ChunkFormatChoice, LogOptions, register_logs};
use logfmt_std::RecoveryMode;
use logfmt_std::wal::{Failover, WalOptions};

/// SQL over logs in LevelDB's log format (RocksDB's recyclable and compressed records, logfmt's
/// packs): tables `logs` (file, offset, length, index, payload), `damage` (file, offset, bytes,
/// kind, reason) and `ops` (file, offset, index, op_index, sequence, op, cf, key, value, error);
/// with --wal DIR, `wal` (log, file, offset, length, payload) and `wal_damage` (log, file,
/// offset, bytes, reason).
#[derive(Debug, Parser)]
#[command(name = "logfmt-sql", version)]
struct Args {
    /// The query, e.g. "SELECT file, count(*), sum(length) FROM logs GROUP BY file".
    query: String,
    /// Directories (read recursively) and files.
    #[arg(required_unless_present = "wal")]
    paths: Vec<PathBuf>,
    /// A WAL directory (numbered logs, NNNNNN.log) read as one log, in log-number order, as
    /// tables `wal` (log, file, offset, length, payload: a row per record, in order) and
    /// `wal_damage` (log, file, offset, bytes, reason), with --recovery deciding what damage
    /// and a gap between two logs mean (point-in-time stops there: no later log is read).
    /// Read here, once, and held in memory; nothing in it is locked or changed.
    #[arg(long, value_name = "DIR", conflicts_with = "cluster")]
    wal: Option<PathBuf>,
    /// The failover directory of the --wal directory (where its writer put a log's later
    /// files while the first directory's disk stalled, as logfmt's WAL failover and Pebble's
    /// do), read with it: each record once, in order.
    #[arg(long, value_name = "DIR", requires = "wal")]
    wal_secondary: Option<PathBuf>,
    /// How the result is printed.
    #[arg(long = "output", short = 'o', value_enum, default_value_t = Output::Table)]
    output: Output,
    /// Write the result to this file instead of standard output.
    #[arg(long = "out", value_name = "FILE")]
    out: Option<PathBuf>,
    /// What is done with damage: skip (a row of `damage` for each damaged region, the torn
    /// tail included), tolerate (LevelDB: torn tails and zero headers are not damage),
    /// absolute (any damage fails the query), point-in-time (each file ends at its first
    /// damage).
    #[arg(long, value_name = "MODE", default_value = "skip")]
    recovery: RecoveryMode,
    /// The chunk format: auto (recyclable if a file's first chunk is) or legacy.
    #[arg(long = "format", value_name = "FORMAT", default_value = "auto")]
    format: ChunkFormatChoice,
    /// Read flash images whose erased bytes are 0xFF (ff) or 0x00 (00).
    #[arg(long, value_enum, value_name = "BYTE")]
    erased: Option<Erased>,
    /// Only the files whose names end with this (e.g. ".log"); default every file.
    #[arg(long, value_name = "SUFFIX", default_value = "")]
    extension: String,
    /// Partitions the files are read in (byte ranges cut at block boundaries); default the
    /// number of CPUs.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    partitions: Option<u16>,
    /// Run the query on a Ballista cluster whose scheduler is at this URL
    /// (df://HOST:PORT; see logfmt-cluster). The paths are sent as they are, made absolute: the
    /// scheduler and every executor must see the logs there (they are not checked here).
    /// Default partitions: 16.
    #[arg(long, value_name = "URL")]
    cluster: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Output {
    /// A text table.
    Table,
    /// CSV with a header line (binary columns as hex).
    Csv,
    /// A JSON array of objects.
    Json,
    /// One JSON object per line.
    Ndjson,
    /// Parquet.
    Parquet,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Erased {
    /// 0xFF (NOR flash).
    Ff,
    /// 0x00.
    #[value(name = "00")]
    Zero,
}

/// Why `logfmt-sql` failed.
#[derive(Debug)]
enum SqlError {
    /// A path that does not exist.
    Missing(PathBuf),
    /// A path that is not valid UTF-8 (object-store paths are text).
    NotUtf8(PathBuf),
    /// `--wal` names no directory.
    NotADirectory(PathBuf),
    /// The query failed (planning or reading).
    Query(DataFusionError),
    /// Writing the result failed.
    Write(io::Error),
    /// Writing Parquet failed.
    Parquet(ParquetError),
    /// Formatting the result failed.
    Arrow(arrow::error::ArrowError),
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing(path) => write!(f, "{}: no such file or directory", path.display()),
            Self::NotUtf8(path) => write!(f, "{}: the path is not UTF-8", path.display()),
            Self::NotADirectory(path) => write!(
                f,
                "{}: not a directory (--wal and --wal-secondary read directories of \
                 numbered logs)",
                path.display()
            ),
            Self::Query(error) => write!(f, "{error}"),
            Self::Write(error) => write!(f, "writing the result failed: {error}"),
            Self::Parquet(error) => write!(f, "writing Parquet failed: {error}"),
            Self::Arrow(error) => write!(f, "formatting the result failed: {error}"),
        }
    }
}

impl From<DataFusionError> for SqlError {
    fn from(error: DataFusionError) -> Self {
        Self::Query(error)
    }
}

impl From<io::Error> for SqlError {
    fn from(error: io::Error) -> Self {
        Self::Write(error)
    }
}

impl From<arrow::error::ArrowError> for SqlError {
    fn from(error: arrow::error::ArrowError) -> Self {
        Self::Arrow(error)
    }
}

impl From<ParquetError> for SqlError {
    fn from(error: ParquetError) -> Self {
        Self::Parquet(error)
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("logfmt-sql: error: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(&args)) {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`| head`) is not an error.
        Err(SqlError::Write(error)) if error.kind() == io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("logfmt-sql: error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: &Args) -> Result<(), SqlError> {
    let mut paths = Vec::with_capacity(args.paths.len());
    for path in &args.paths {
        // On a cluster the files are read elsewhere.
        if args.cluster.is_none() && !path.exists() {
            return Err(SqlError::Missing(path.clone()));
        }
        let absolute = std::path::absolute(path).map_err(SqlError::Write)?;
        let text = absolute
            .to_str()
            .ok_or_else(|| SqlError::NotUtf8(path.clone()))?
            .to_owned();
        paths.push(text);
    }
    let base = match &args.cluster {
        Some(_) => SessionConfig::new_with_ballista(),
        None => SessionConfig::new(),
    };
    let mut config = base
        // Every file of a few blocks or more is cut into ranges.
        .set_usize("datafusion.optimizer.repartition_file_min_size", 1 << 20)
        // The generic dialect takes `, offset` for a trailing comma and an OFFSET clause:
        // PostgreSQL's reads `SELECT file, offset FROM logs` as it is meant.
        .set_str("datafusion.sql_parser.dialect", "PostgreSQL");
    if let Some(partitions) = args.partitions {
        config = config.with_target_partitions(usize::from(partitions));
    }
    let ctx = match &args.cluster {
        Some(url) => remote_context(url, config).await?,
        None => SessionContext::new_with_config(config),
    };
    let options = LogOptions::new()
        .recovery(args.recovery)
        .format(args.format)
        .erased(args.erased.map(|byte| match byte {
            Erased::Ff => 0xff,
            Erased::Zero => 0x00,
        }));
    let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
    if !paths.is_empty() {
        register_logs(&ctx, &paths, &args.extension, options).await?;
    }
    if let Some(dir) = &args.wal {
        for dir in std::iter::once(dir).chain(&args.wal_secondary) {
            if !dir.is_dir() {
                return Err(SqlError::NotADirectory(dir.clone()));
            }
        }
        // Reading never fails over: the threshold is the writer's.
        let failover = args
            .wal_secondary
            .as_ref()
            .map(|secondary| Failover::new(secondary, std::time::Duration::MAX));
        let options = WalOptions::new().recovery(args.recovery).failover(failover);
        logfmt_datafusion::register_wal(&ctx, dir, &options)?;
    }
    let frame = ctx.sql(&args.query).await?;
    let stream = frame.execute_stream().await?;
    match &args.out {
        Some(path) => {
            let file = std::fs::File::create(path)?;
            let mut out = io::BufWriter::new(file);
            write_result(args.output, stream, &mut out).await?;
            out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        }
        None => {
            let mut out = io::BufWriter::new(io::stdout());
            write_result(args.output, stream, &mut out).await?;
            out.flush()?;
        }
    }
    Ok(())
}

/// Writes the batches of `stream` to `out` as `output` says.
async fn write_result<W: Write + Send>(
    output: Output,
    mut stream: SendableRecordBatchStream,
    out: &mut W,
) -> Result<(), SqlError> {
    let schema: SchemaRef = stream.schema();
    match output {
        Output::Table => {
            let mut batches: Vec<RecordBatch> = Vec::new();
            while let Some(batch) = stream.next().await {
                batches.push(batch?);
            }
            let table = arrow::util::pretty::pretty_format_batches_with_schema(schema, &batches)?;
            writeln!(out, "{table}")?;
        }
        Output::Csv => {
            let mut writer = arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(out);
            let mut wrote = false;
            while let Some(batch) = stream.next().await {
                writer.write(&batch?)?;
                wrote = true;
            }
            if !wrote {
                // The header alone.
                writer.write(&RecordBatch::new_empty(schema))?;
            }
        }
        Output::Json => {
            let mut writer = arrow::json::ArrayWriter::new(out);
            while let Some(batch) = stream.next().await {
                writer.write(&batch?)?;
            }
            writer.finish()?;
            let out = writer.into_inner();
            // An empty result is `[]` too.
            writeln!(out)?;
        }
        Output::Ndjson => {
            let mut writer = arrow::json::LineDelimitedWriter::new(out);
            while let Some(batch) = stream.next().await {
                writer.write(&batch?)?;
            }
            writer.finish()?;
        }
        Output::Parquet => {
            let mut writer = ArrowWriter::try_new(out, schema, None)?;
            while let Some(batch) = stream.next().await {
                writer.write(&batch?)?;
            }
            writer.close()?;
        }
    }
    Ok(())
}
