//! `logfmt write`: records from standard input written to a log.

use std::io;
use std::path::PathBuf;

use logfmt_std::{AppendOptions, LogWriter, TornTailPolicy, WriterOptions};

use crate::error::CliError;
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
    /// The log file to write.
    #[arg(value_name = "FILE")]
    file: PathBuf,
}

/// Runs `write`.
pub(crate) fn run(args: &WriteArgs) -> Result<(), CliError> {
    let options = WriterOptions::new();
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
    let mut records = Records::new(io::stdin().lock(), args.input);
    let mut record = Vec::new();
    // A record is added only once it has been read completely.
    let read = loop {
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
