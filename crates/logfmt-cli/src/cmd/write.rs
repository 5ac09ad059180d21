//! `logfmt write`: records from standard input written to a log.

use std::io;
use std::path::PathBuf;

use logfmt_std::{AppendOptions, LogWriter, TornTailPolicy, WriterOptions};

use crate::error::CliError;
use crate::format::{WriteFormatName, write_format};
use crate::input::{InputFormat, Records};

/// Write records read from standard input to a log file.
///
/// Without --append, FILE is created; an existing non-empty FILE is refused (exit status 1,
/// FILE unchanged) unless --force is given. Records are laid out exactly as LevelDB's log
/// writer lays them out; the file is flushed and synced (fsync) at the end. If the framed
/// input is malformed, the complete records before the bad frame are written and the status
/// is 1.
///
/// With --append, FILE is read first and continued only where its last complete record ends:
/// if it ends in a torn tail (a record cut short by a crash), it is refused (exit status 1,
/// FILE unchanged) unless --truncate-torn-tail is given; a damaged log is always refused (use
/// `logfmt salvage`).
///
/// --format recyclable writes RocksDB's recyclable chunks, which carry the log number (the
/// number in FILE's name, as in 000042.log, unless --log-number is given). --append continues
/// a log in its own format and log number; in a recyclable log, the stale bytes an earlier
/// use of the file left after the log's end are refused like a torn tail.
#[derive(Debug, clap::Args)]
pub(crate) struct WriteArgs {
    /// Continue the log in FILE (created if missing) exactly as LevelDB's writer continues a
    /// log of that length: if fewer than 7 bytes are left in its last block, they are padded.
    #[arg(long)]
    append: bool,
    /// With --append: if FILE ends in a torn tail, cut exactly those bytes off (no complete
    /// record is among them) and append after the last complete record.
    #[arg(long, requires = "append")]
    truncate_torn_tail: bool,
    /// Overwrite FILE even if it is not empty.
    #[arg(long, conflicts_with = "append")]
    force: bool,
    /// How records are read from standard input.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t)]
    input: InputFormat,
    /// The chunk format: legacy (LevelDB) or recyclable (RocksDB's recyclable WAL). Default:
    /// legacy, or recyclable with --log-number; with --append, the existing log's.
    #[arg(long, value_enum, value_name = "FORMAT")]
    format: Option<WriteFormatName>,
    /// The log number recyclable chunks carry (the low 32 bits are written). Default: the
    /// number in FILE's name (000042.log is log 42); with --append, the existing log's.
    #[arg(long, value_name = "N")]
    log_number: Option<u64>,
    /// The log file to write.
    #[arg(value_name = "FILE")]
    file: PathBuf,
}

/// Refuses (as creating it would) a FILE that exists and is not empty, before any input is
/// read.
fn refuse_non_empty(path: &std::path::Path) -> Result<(), CliError> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() && meta.len() > 0 => Err(logfmt_std::Error::AlreadyExists {
            path: path.to_path_buf(),
            len: meta.len(),
        }
        .into()),
        _ => Ok(()),
    }
}

/// Runs `write`.
pub(crate) fn run(args: &WriteArgs) -> Result<(), CliError> {
    let format = write_format(&args.file, args.format, args.log_number, args.append)?;
    let options = WriterOptions::new().format(format);
    let mut records = Records::new(io::stdin().lock(), args.input);
    let mut record = Vec::new();
    // A new log (or one replacing FILE) is created only once the input has yielded a whole
    // record or ended cleanly: a command that fails on its input leaves FILE as it was.
    let first = if args.append {
        None
    } else {
        if !args.force {
            refuse_non_empty(&args.file)?;
        }
        Some(records.next_into(&mut record)?)
    };
    let mut writer = if args.append {
        let policy = if args.truncate_torn_tail {
            TornTailPolicy::Truncate
        } else {
            TornTailPolicy::Refuse
        };
        let append = AppendOptions::new().writer(options).torn_tail(policy);
        let (writer, report) = LogWriter::append(&args.file, &append)?;
        if let Some(torn) = report.truncated {
            super::say(
                &args.file,
                &format!(
                    "truncated {} torn bytes at offset {} (no complete record was among them)",
                    torn.bytes, torn.offset
                ),
            );
        }
        if let Some(stale) = report.stale {
            super::say(
                &args.file,
                &format!(
                    "truncated {} stale bytes at offset {} (left by an earlier use of the file; \
                     the log ended at a record of log {})",
                    stale.bytes, stale.offset, stale.log_number
                ),
            );
        }
        writer
    } else if args.force {
        LogWriter::overwrite(&args.file, &options)?
    } else {
        LogWriter::create(&args.file, &options)?
    };
    let write_error = |source| logfmt_std::Error::Write {
        path: args.file.clone(),
        source,
    };
    if first == Some(true) {
        writer.add_record(&record).map_err(write_error)?;
    }
    // A record is added only once it has been read completely.
    let read = loop {
        if first == Some(false) {
            break Ok(());
        }
        match records.next_into(&mut record) {
            Ok(true) => {
                writer.add_record(&record).map_err(write_error)?;
            }
            Ok(false) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    writer.close().map_err(write_error)?;
    Ok(read?)
}
