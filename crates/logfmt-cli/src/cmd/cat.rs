//! `logfmt cat`: the records of a log, in order.

use std::io::{self, BufWriter, Write};
use std::ops::Range;
use std::path::PathBuf;

use logfmt_std::{Ending, LogFile, LogReader};

use crate::error::CliError;
use crate::options::{ReadArgs, parse_range};
use crate::output::OutputFormat;
use crate::progress::Progress;
use crate::scan::{Found, scan};

/// Print the logical records of a log, in order.
///
/// Records are read exactly as LevelDB's log reader reads them. Damaged parts are skipped; each
/// drop is noted on standard error (offset, bytes dropped, LevelDB's reason) without changing
/// the exit status. A record is printed only once it is complete. With --recovery
/// point-in-time, printing stops at the first damage (noted); with --recovery absolute, any
/// damage is an error (exit status 1).
#[derive(Debug, clap::Args)]
pub(crate) struct CatArgs {
    /// How each record is printed.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t)]
    output: OutputFormat,
    /// Start at the first record that begins at or after this file offset (LevelDB's
    /// initial_offset).
    #[arg(long, value_name = "N", default_value_t = 0, conflicts_with = "range")]
    offset: u64,
    /// Only the records whose first chunk starts in this byte range: A..B, A.. or ..B (the
    /// ranges of `logfmt split` print every record exactly once between them).
    #[arg(long, value_name = "A..B", value_parser = parse_range)]
    range: Option<Range<u64>>,
    #[command(flatten)]
    read: ReadArgs,
    /// The log file to read.
    #[arg(value_name = "FILE")]
    file: PathBuf,
}

/// Runs `cat`.
pub(crate) fn run(args: &CatArgs) -> Result<(), CliError> {
    let log = LogFile::open(&args.file)?;
    let options = args.read.options(args.offset, args.range.clone());
    let mut reader = LogReader::new(log.source(), &options);
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let mut read_error = None;
    let progress = Progress::none();
    let outcome = scan(&mut reader, &progress, |found| -> Result<(), CliError> {
        match found {
            Found::Record { offset, data } => args.output.write_record(&mut out, offset, data)?,
            Found::Damage(damage) => {
                // Keep the note in place relative to the records printed around it.
                out.flush()?;
                super::note(log.path(), &damage);
            }
            Found::ReadError { error, corruption } => {
                out.flush()?;
                super::note(log.path(), &corruption.into());
                read_error = Some(error);
            }
        }
        Ok(())
    })?;
    out.flush()?;
    if let Some(error) = read_error {
        return Err(log.read_error(error).into());
    }
    if let Some(first) = outcome.failed_on {
        let error = logfmt_std::Error::Damaged {
            path: log.path().into(),
            first,
            count: 1,
        };
        return Err(CliError::Hinted(
            error,
            "--recovery absolute stops at any damage; the records before it were printed",
        ));
    }
    if let Some(Ending::Stopped(damage)) = outcome.ending {
        super::say(
            log.path(),
            &format!(
                "stopped at offset {} (point-in-time recovery)",
                damage.offset
            ),
        );
    }
    Ok(())
}
