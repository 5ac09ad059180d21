//! `logfmt cat`: the records of a log, in order.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use logfmt_core::{FragmentReader, ReadOptions};
use logfmt_std::LogFile;

use crate::error::CliError;
use crate::output::OutputFormat;
use crate::scan::{Found, scan};

/// Print the logical records of a log, in order.
///
/// Records are read exactly as LevelDB's log reader reads them. Damaged parts are skipped; each
/// drop is noted on standard error (offset, bytes dropped, LevelDB's reason) without changing
/// the exit status. A record is printed only once it is complete.
#[derive(Debug, clap::Args)]
pub(crate) struct CatArgs {
    /// How each record is printed.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t)]
    output: OutputFormat,
    /// Start at the first record that begins at or after this file offset (LevelDB's
    /// initial_offset).
    #[arg(long, value_name = "N", default_value_t = 0)]
    offset: u64,
    /// The log file to read.
    #[arg(value_name = "FILE")]
    file: PathBuf,
}

/// Runs `cat`.
pub(crate) fn run(args: &CatArgs) -> Result<(), CliError> {
    let log = LogFile::open(&args.file)?;
    let options = ReadOptions::new().initial_offset(args.offset);
    let mut reader = FragmentReader::with_options(log.source(), &options);
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let mut read_error = None;
    scan(&mut reader, true, |found| -> Result<(), CliError> {
        match found {
            Found::Record { offset, data, .. } => {
                args.output.write_record(&mut out, offset, data)?
            }
            Found::Corruption(corruption) => {
                // Keep the note in place relative to the records printed around it.
                out.flush()?;
                super::note(log.path(), &corruption);
            }
            Found::ReadError { error, corruption } => {
                out.flush()?;
                super::note(log.path(), &corruption);
                read_error = Some(error);
            }
        }
        Ok(())
    })?;
    out.flush()?;
    match read_error {
        Some(error) => Err(log.read_error(error).into()),
        None => Ok(()),
    }
}
