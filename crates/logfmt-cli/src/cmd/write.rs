//! `logfmt write`: records from standard input appended to a log.

use std::io;
use std::path::PathBuf;

use logfmt_std::LogFile;

use crate::error::CliError;
use crate::input::{InputFormat, Records};

/// Write records read from standard input to a log file.
///
/// Without --append, FILE is created; an existing non-empty FILE is refused (exit status 1,
/// FILE unchanged) unless --force is given. Records are laid out exactly as LevelDB's log
/// writer lays them out; the file is flushed and synced (fsync) at the end. If the framed
/// input is malformed, the complete records before the bad frame are written and the status
/// is 1.
#[derive(Debug, clap::Args)]
pub(crate) struct WriteArgs {
    /// Continue the log in FILE (created if missing) exactly as LevelDB's writer continues a
    /// log of that length: if fewer than 7 bytes are left in its last block, they are padded.
    #[arg(long)]
    append: bool,
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
    let log = if args.append {
        LogFile::append(&args.file)?
    } else if args.force {
        LogFile::overwrite(&args.file)?
    } else {
        LogFile::create(&args.file)?
    };
    let mut writer = log.writer();
    let mut records = Records::new(io::stdin().lock(), args.input);
    let mut record = Vec::new();
    // A record is added only once it has been read completely.
    let read = loop {
        match records.next_into(&mut record) {
            Ok(true) => {
                writer.add_record(&record).map_err(|e| log.write_error(e))?;
            }
            Ok(false) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    writer.flush().map_err(|e| log.write_error(e))?;
    log.sync()?;
    Ok(read?)
}
