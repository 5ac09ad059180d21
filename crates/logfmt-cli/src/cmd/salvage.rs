//! `logfmt salvage`: every recoverable record of a damaged log, copied into a new one.

use std::io::{self, Write};
use std::path::PathBuf;

use logfmt_std::{
    AtomicLog, AtomicOptions, LogReaderOptions, LogWriterOptions, RecoveryMode,
    advanced::{EscapedPath, Format, LogReader, ReadFormat, ReadOptions, WriteOptions},
};

use crate::error::CliError;
use crate::format::FormatArgs;
use crate::image::Input;
use crate::options::{Erased, WaitArgs};
use crate::output::write_json_line;
use crate::progress::Progress;
use crate::reports::{DEFAULT_SHOWN, DamageReports};
use crate::scan::{Found, scan};

/// Copy every record that can be recovered from a log into a new, clean log.
///
/// IN is read past every damaged region (LevelDB's resynchronisation, as `cat --recovery skip`
/// reads it); each complete record is written to a temporary file beside OUT, which is
/// synced and then renamed over OUT (and the directory synced): OUT is replaced whole, or
/// left as it was if anything fails, with no temporary file left behind. OUT is refused if
/// it exists and is not empty (exit status 1) unless --force is given, and always if it is
/// IN itself (the same file under any name: a hard link, a symbolic link, /proc/self/fd/N);
/// an OUT that is not a regular file (a FIFO, a device) is refused at once (exit status 2),
/// without opening it. An OUT that is a symbolic link is written through: the file it points
/// to is replaced.
/// Where LevelDB's reader takes damage in the last block for the end of the log but
/// well-formed chunks follow it, salvage reads on from the first of them. What was lost is
/// reported: each damaged region with its offset, size and reason. Exit
/// status 0 when the salvage is done, even if something was lost.
///
/// While it writes, salvage holds OUT's writer lock (if OUT exists), as `write` does:
/// another writer of OUT fails at once (exit status 2) unless --wait is given.
///
/// OUT is written in IN's format: a recyclable log (--format recyclable, or auto on a file
/// that is) is copied into a recyclable log with the same log number; otherwise OUT is a
/// LevelDB log. The stale bytes after the end of a recycled file's log are not copied, and
/// are not a loss.
///
/// A ring image (a dump of a flash region holding a ring log) is read from its oldest block
/// to its newest, as `logfmt export` reads it.
///
/// Records of any size are copied in bounded memory: a record longer than 16 MiB is not held;
/// it is read a second time from IN and streamed into OUT, a block at a time. A pack or a
/// compressed record longer than that once decoded is noted on standard error and not copied.
/// From a pipe or a ring image, which cannot be read a second time, records are held whole.
///
/// --json prints one JSON object: {"records": n, "payload_bytes": n, "lost_bytes": n,
/// "lost": [{"offset", "bytes", "reason"}]}. At most --max-errors damaged regions are listed
/// (1000 by default), so that memory stays bounded whatever the damage; when some are left
/// out, "lost_total" and "lost_not_shown" follow the list, counting them all and those not
/// listed.
#[derive(Debug, clap::Args)]
pub(crate) struct SalvageArgs {
    /// One JSON object (keys above).
    #[arg(long)]
    json: bool,
    /// Replace OUT even if it is not empty (once the new log is complete).
    #[arg(long)]
    force: bool,
    /// List at most N damaged regions (the summary counts them all). Default: 1000.
    #[arg(long, value_name = "N")]
    max_errors: Option<usize>,
    #[command(flatten)]
    wait: WaitArgs,
    /// Read a flash image whose erased bytes are 0xFF (ff) or 0x00 (00).
    #[arg(long, value_enum, value_name = "BYTE")]
    erased: Option<Erased>,
    #[command(flatten)]
    format: FormatArgs,
    /// The damaged log.
    #[arg(value_name = "IN")]
    input: PathBuf,
    /// The new log.
    #[arg(value_name = "OUT")]
    output: PathBuf,
}

/// Runs `salvage`.
pub(crate) fn run(args: &SalvageArgs) -> Result<(), CliError> {
    let input = Input::open(&args.input, args.erased)?;
    input.say_disagreements();
    let log = &input.log;
    if log.is_same_file(&args.output)? {
        return Err(CliError::SameFile {
            path: args.output.clone(),
        });
    }
    // Past damage in the last block too, where LevelDB's reader would stop.
    let read = ReadOptions::new()
        .erased(input.erased(args.erased))
        .resync_in_last_block(true);
    let read = input.read_options(args.format.read_options(log, read)?);
    let format = match read.format {
        ReadFormat::Recyclable { log_number } => Format::Recyclable { log_number },
        _ => Format::Legacy,
    };
    let options = LogReaderOptions::new()
        .read(read)
        .recovery(RecoveryMode::SkipAnyCorruptedRecords);
    let writer_options = LogWriterOptions::new()
        .write(WriteOptions::new().format(format))
        .lock_wait(args.wait.lock_wait());
    let atomic = AtomicOptions::new()
        .writer(writer_options)
        .replace(args.force);
    let mut writer = AtomicLog::create(&args.output, &atomic).map_err(|e| match e {
        logfmt_std::Error::AlreadyExists { .. } => CliError::Hinted(e, "use --force to replace it"),
        e => e.into(),
    })?;
    let mut reader = LogReader::new(input.source()?, &options);
    let (mut records, mut payload) = (0u64, 0u64);
    let mut lost = DamageReports::new(args.max_errors.unwrap_or(DEFAULT_SHOWN));
    let mut read_error = None;
    let progress = Progress::bytes("salvage", log.len_at_open());
    // A record is held up to a limit, and streamed from the file past it.
    scan(
        &mut reader,
        &progress,
        crate::copy::limit(&input),
        |found| -> Result<(), CliError> {
            match found {
                Found::Record { .. } | Found::Oversized(_) => {
                    let copied =
                        crate::copy::record(&mut writer, &input, &options.read, &found, "salvage")?;
                    if let Some(bytes) = copied {
                        records += 1;
                        payload += bytes;
                    }
                }
                Found::Damage(d) => lost.push(input.damage(d)),
                Found::ReadError { error, corruption } => {
                    if let Some(c) = corruption {
                        lost.push(input.damage(c.into()));
                    }
                    read_error = Some(error);
                }
            }
            Ok(())
        },
    )?;
    drop(progress);
    // A read error ends IN there: what was read before it is kept, as for damage.
    writer.commit().map_err(CliError::unchanged)?;
    let lost_bytes = lost.bytes();
    let mut out = io::stdout().lock();
    if args.json {
        use super::DamageJson;
        /// `--json`: the keys documented on [`SalvageArgs`], in that order.
        #[derive(serde::Serialize)]
        struct Doc {
            records: u64,
            payload_bytes: u64,
            lost_bytes: u64,
            lost: Vec<DamageJson>,
            #[serde(skip_serializing_if = "Option::is_none")]
            lost_total: Option<u64>,
            #[serde(skip_serializing_if = "Option::is_none")]
            lost_not_shown: Option<u64>,
        }
        let doc = Doc {
            records,
            payload_bytes: payload,
            lost_bytes,
            lost: lost.kept().iter().map(DamageJson::from).collect(),
            lost_total: (lost.left_out() > 0).then(|| lost.count()),
            lost_not_shown: Some(lost.left_out()).filter(|&n| n > 0),
        };
        write_json_line(&mut out, &doc)?;
    } else {
        use super::plural;
        writeln!(
            out,
            "{}: {} ({} of payload) copied to {}",
            EscapedPath::new(&args.input),
            plural(records, "record"),
            plural(payload, "byte"),
            EscapedPath::new(&args.output)
        )?;
        if lost.is_empty() {
            writeln!(out, "nothing was lost")?;
        } else {
            writeln!(
                out,
                "lost: {} in {}:",
                plural(lost_bytes, "byte"),
                plural(lost.count(), "damaged region")
            )?;
            let width = lost
                .kept()
                .iter()
                .map(|d| d.offset.to_string().len())
                .max()
                .unwrap_or(0);
            for d in lost.kept() {
                writeln!(
                    out,
                    "  offset {:>width$}: {}: {}",
                    d.offset,
                    plural(d.bytes, "byte"),
                    crate::gloss::Glossed(&d.kind)
                )?;
            }
            if lost.left_out() > 0 {
                writeln!(
                    out,
                    "  ... and {} more not shown (--max-errors)",
                    lost.left_out()
                )?;
            }
        }
    }
    if let Some(error) = read_error {
        return Err(log.read_error(error).into());
    }
    Ok(())
}
