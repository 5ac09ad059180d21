//! `logfmt export`: an image (or any log) turned into a plain LevelDB log of its records.

use std::path::PathBuf;

use logfmt_std::{
    LogWriterOptions,
    advanced::{Ending, LogReader},
};

use super::copy_report::{Copier, CopyArgs, CopyReport, copy_all};
use crate::error::CliError;
use crate::image::Input;
use crate::options::ReadArgs;

/// Turn a flash image (a ring image, or one read with --erased) or any log into a plain
/// LevelDB log: its records, oldest to newest, in chunks of types 1-4 that LevelDB's and
/// RocksDB's log readers read.
///
/// IN is read as `logfmt cat` reads it, with the same flags: a ring image (a dump of a flash
/// region holding a ring log) from its oldest block to its newest, with the erased value its
/// ring headers give; another flash image with --erased; damage skipped and noted on standard
/// error as `cat` notes it (the first --max-errors, then one line for the rest; with --quiet,
/// one line for all) (--recovery point-in-time stops at the first, --recovery absolute
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
    #[command(flatten)]
    copy: CopyArgs,
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
    let mut writer = args.copy.create(&args.output, LogWriterOptions::new())?;
    let mut reader = LogReader::new(input.source()?, &options);
    let mut report = CopyReport::new(
        Copier::Export,
        log.path().to_path_buf(),
        args.output.clone(),
        &args.copy,
    );
    let (outcome, read_error) = copy_all(&mut reader, &input, &options, &mut writer, &mut report)?;
    if let Some(error) = read_error {
        // OUT is left as it was (the temporary file is removed).
        return Err(log.read_error(error).into());
    }
    if let Some(first) = outcome.failed_on {
        return Err(input.stopped_at_damage(
            first,
            "--recovery absolute stops at any damage; nothing was written",
        ));
    }
    writer.commit().map_err(CliError::unchanged)?;
    report.say_not_noted();
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
    crate::render::print(&report, args.copy.json)?;
    Ok(())
}
