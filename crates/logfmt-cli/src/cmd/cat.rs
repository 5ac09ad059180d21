//! `logfmt cat`: the records of a log, in order.

use std::io::{self, BufWriter, Write};
use std::ops::Range;
use std::path::PathBuf;

use logfmt_std::{Ending, LogReader, RecordStream};

use crate::error::CliError;
use crate::image::Input;
use crate::options::{ReadArgs, parse_range};
use crate::output::OutputFormat;
use crate::progress::Progress;
use crate::scan::{Found, UNLIMITED, scan};

/// Records assembled from more bytes than this are not held in memory by default.
const BUFFER_LIMIT: usize = 4 << 20;

/// Print the logical records of a log, in order.
///
/// Records are read exactly as LevelDB's log reader reads them. Damaged parts are skipped; each
/// drop is noted on standard error (offset, bytes dropped, LevelDB's reason) without changing
/// the exit status. A record is printed only once it is complete. With --recovery
/// point-in-time, printing stops at the first damage (noted); with --recovery absolute, any
/// damage is an error (exit status 1).
///
/// Records of any size are printed in bounded memory: a record longer than --buffer-limit is
/// not held; once its last fragment has been read (so it is known to be complete), it is read
/// again from the file and streamed out. A log read from a pipe (standard input, a FIFO)
/// cannot be read twice: its records are held in memory whole, whatever their size.
///
/// A ring image (a dump of a flash region holding a ring log: its blocks begin with ring
/// headers) is read from its oldest block to its newest, with the erased value its headers
/// give; offsets are offsets in the image.
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
    /// Hold at most this many bytes of a record in memory; a longer record is read a second
    /// time from the file to print it (not from a pipe).
    #[arg(long, value_name = "BYTES", default_value_t = BUFFER_LIMIT)]
    buffer_limit: usize,
    #[command(flatten)]
    read: ReadArgs,
    /// The log file to read.
    #[arg(value_name = "FILE")]
    file: PathBuf,
}

/// Runs `cat`.
pub(crate) fn run(args: &CatArgs) -> Result<(), CliError> {
    let input = Input::open(&args.file, args.read.erased)?;
    let log = &input.log;
    let options = args.read.options(&input, args.offset, args.range.clone())?;
    let mut reader = LogReader::new(input.source()?, &options);
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let mut read_error = None;
    let progress = Progress::none();
    // Only a regular file read in file order can be read a second time from a record's offset.
    let limit = if log.is_regular() && input.ring.is_none() {
        args.buffer_limit
    } else {
        UNLIMITED
    };
    let outcome = scan(
        &mut reader,
        &progress,
        limit,
        |found| -> Result<(), CliError> {
            match found {
                Found::Record {
                    offset,
                    index,
                    data,
                } => args
                    .output
                    .write_record(&mut out, input.offset(offset), index, data)?,
                Found::Oversized(record) if record.coded => {
                    // A pack is read whole to read its records: not streamed.
                    out.flush()?;
                    super::say(
                        log.path(),
                        &format!(
                            "offset {}: a pack of {} bytes, more than --buffer-limit: its \
                             records were not printed",
                            input.offset(record.offset),
                            record.len
                        ),
                    );
                }
                Found::Oversized(record) => {
                    args.output.write_streamed(
                        &mut out,
                        record.offset,
                        None,
                        record.len,
                        |sink| {
                            let mut stream = RecordStream::new(log, &options.read, &record)?;
                            while let Some(piece) = stream.next()? {
                                sink(piece)?;
                            }
                            Ok::<(), CliError>(())
                        },
                    )?;
                }
                Found::Damage(damage) => {
                    // Keep the note in place relative to the records printed around it.
                    out.flush()?;
                    super::note(log.path(), &input.damage(damage));
                }
                Found::ReadError { error, corruption } => {
                    out.flush()?;
                    if let Some(corruption) = corruption {
                        super::note(log.path(), &input.damage(corruption.into()));
                    }
                    read_error = Some(error);
                }
            }
            Ok(())
        },
    )?;
    out.flush()?;
    if let Some(error) = read_error {
        return Err(log.read_error(error).into());
    }
    if let Some(first) = outcome.failed_on {
        let error = logfmt_std::Error::Damaged {
            path: log.path().into(),
            first: input.damage(first),
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
                input.offset(damage.offset)
            ),
        );
    }
    Ok(())
}
