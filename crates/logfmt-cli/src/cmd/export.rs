//! `logfmt export`: an image (or any log) turned into a plain LevelDB log of its records.

use std::io::{self, Write};
use std::path::PathBuf;

use logfmt_std::{
    AtomicLog, AtomicOptions, LogWriterOptions,
    advanced::{Ending, EscapedPath, LogReader},
};

use crate::error::CliError;
use crate::image::Input;
use crate::options::{ReadArgs, WaitArgs};
use crate::output::write_json_line;
use crate::progress::Progress;
use crate::reports::{DEFAULT_SHOWN, DamageReports};
use crate::scan::{Found, scan};

/// Turn a flash image (a ring image, or one read with --erased) or any log into a plain
/// LevelDB log: its records, oldest to newest, in chunks of types 1-4 that LevelDB's and
/// RocksDB's log readers read.
///
/// IN is read as `logfmt cat` reads it, with the same flags: a ring image (a dump of a flash
/// region holding a ring log) from its oldest block to its newest, with the erased value its
/// ring headers give; another flash image with --erased; damage skipped and noted on standard
/// error as `cat` notes it (--recovery point-in-time stops at the first, --recovery absolute
/// fails on it, exit status 1, and OUT is left as it was). The records read are written to a
/// temporary file beside OUT, which is synced and renamed over OUT (and the directory synced):
/// OUT is replaced whole, or left as it was if anything fails. OUT is refused if it exists and
/// is not empty (exit status 1) unless --force is given, and always if it is IN itself (the
/// same file under any name); an OUT that is not a regular file (a FIFO, a device) is refused
/// at once (exit status 2), without opening it. While it writes, export holds OUT's writer lock (if OUT
/// exists), as `write` does.
///
/// Records of any size are copied in bounded memory: a record longer than 16 MiB is not held;
/// it is read a second time from IN and streamed into OUT, a block at a time. A pack or a
/// compressed record longer than that once decoded is noted on standard error and not copied.
/// From a pipe or a ring image, which cannot be read a second time, records are held whole.
///
/// --json prints one JSON object: {"records": n, "payload_bytes": n, "dropped_bytes": n,
/// "corruptions": [{"offset", "bytes", "reason"}]} (what was dropped, at IN's offsets). At
/// most --max-errors are listed (1000 by default), so that memory stays bounded whatever the
/// damage; when some are left out, "corruptions_total" and "corruptions_not_shown" follow the
/// list, counting them all and those not listed.
#[derive(Debug, clap::Args)]
pub(crate) struct ExportArgs {
    /// One JSON object (keys above).
    #[arg(long)]
    json: bool,
    /// Replace OUT even if it is not empty (once the new log is complete).
    #[arg(long)]
    force: bool,
    /// List at most N damaged regions in --json (each is noted on standard error as it is
    /// found). Default: 1000.
    #[arg(long, value_name = "N")]
    max_errors: Option<usize>,
    #[command(flatten)]
    wait: WaitArgs,
    #[command(flatten)]
    read: ReadArgs,
    /// The image (or log) to read.
    #[arg(value_name = "IN")]
    input: PathBuf,
    /// The LevelDB log to write.
    #[arg(value_name = "OUT")]
    output: PathBuf,
}

/// Runs `export`.
pub(crate) fn run(args: &ExportArgs) -> Result<(), CliError> {
    let input = Input::open(&args.input, args.read.erased)?;
    input.say_disagreements();
    let log = &input.log;
    if log.is_same_file(&args.output)? {
        return Err(CliError::SameFile {
            path: args.output.clone(),
        });
    }
    let options = args.read.options(&input, 0, None)?;
    let atomic = AtomicOptions::new()
        .writer(LogWriterOptions::new().lock_wait(args.wait.lock_wait()))
        .replace(args.force);
    let mut writer = AtomicLog::create(&args.output, &atomic).map_err(|e| match e {
        logfmt_std::Error::AlreadyExists { .. } => CliError::Hinted(e, "use --force to replace it"),
        e => e.into(),
    })?;
    let mut reader = LogReader::new(input.source()?, &options);
    let (mut records, mut payload) = (0u64, 0u64);
    let mut dropped = DamageReports::new(args.max_errors.unwrap_or(DEFAULT_SHOWN));
    let mut read_error = None;
    let progress = Progress::bytes("export", log.len_at_open());
    // A record is held up to a limit, and streamed from the file past it.
    let outcome = scan(
        &mut reader,
        &progress,
        crate::copy::limit(&input),
        |found| -> Result<(), CliError> {
            match found {
                Found::Record { .. } | Found::Oversized(_) => {
                    let copied =
                        crate::copy::record(&mut writer, &input, &options.read, &found, "export")?;
                    if let Some(bytes) = copied {
                        records += 1;
                        payload += bytes;
                    }
                }
                Found::Damage(damage) => {
                    let damage = input.damage(damage);
                    super::note(log.path(), &damage);
                    dropped.push(damage);
                }
                Found::ReadError { error, corruption } => {
                    read_error = Some(error);
                    if let Some(corruption) = corruption {
                        let damage = input.damage(corruption.into());
                        super::note(log.path(), &damage);
                        dropped.push(damage);
                    }
                }
            }
            Ok(())
        },
    )?;
    drop(progress);
    if let Some(error) = read_error {
        // OUT is left as it was (the temporary file is removed).
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
            "--recovery absolute stops at any damage; nothing was written",
        ));
    }
    writer.commit().map_err(CliError::unchanged)?;
    if let Some(Ending::Stopped(damage)) = outcome.ending {
        super::say(
            log.path(),
            &format!(
                "stopped at offset {} (point-in-time recovery): the records before it were \
                 exported",
                input.offset(damage.offset)
            ),
        );
    }
    let dropped_bytes = dropped.bytes();
    let mut out = io::stdout().lock();
    if args.json {
        use super::DamageJson;
        /// `--json`: the keys documented on [`ExportArgs`], in that order.
        #[derive(serde::Serialize)]
        struct Doc {
            records: u64,
            payload_bytes: u64,
            dropped_bytes: u64,
            corruptions: Vec<DamageJson>,
            #[serde(skip_serializing_if = "Option::is_none")]
            corruptions_total: Option<u64>,
            #[serde(skip_serializing_if = "Option::is_none")]
            corruptions_not_shown: Option<u64>,
        }
        let doc = Doc {
            records,
            payload_bytes: payload,
            dropped_bytes,
            corruptions: dropped.kept().iter().map(DamageJson::from).collect(),
            corruptions_total: (dropped.left_out() > 0).then(|| dropped.count()),
            corruptions_not_shown: Some(dropped.left_out()).filter(|&n| n > 0),
        };
        write_json_line(&mut out, &doc)?;
    } else {
        use super::plural;
        writeln!(
            out,
            "{}: {} ({} of payload) exported to {}{}",
            EscapedPath::new(log.path()),
            plural(records, "record"),
            plural(payload, "byte"),
            EscapedPath::new(&args.output),
            if dropped.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} dropped in {} (noted above)",
                    plural(dropped_bytes, "byte"),
                    plural(dropped.count(), "damaged region")
                )
            }
        )?;
    }
    Ok(())
}
