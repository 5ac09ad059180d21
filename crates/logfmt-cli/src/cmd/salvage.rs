//! `logfmt salvage`: every recoverable record of a damaged log, copied into a new one.

use std::path::PathBuf;

use logfmt_std::{
    LogReaderOptions, LogWriterOptions, RecoveryMode,
    advanced::{Format, LogReader, ReadFormat, ReadOptions, WriteOptions},
};

use super::copy_report::{Copier, CopyArgs, CopyReport, copy_all};
use crate::error::CliError;
use crate::format::FormatArgs;
use crate::image::Input;
use crate::options::Erased;

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
    #[command(flatten)]
    copy: CopyArgs,
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
    let written = LogWriterOptions::new().write(WriteOptions::new().format(format));
    let mut writer = args.copy.create(&args.output, written)?;
    let mut reader = LogReader::new(input.source()?, &options);
    let mut report = CopyReport::new(
        Copier::Salvage,
        args.input.clone(),
        args.output.clone(),
        &args.copy,
    );
    let (_, read_error) = copy_all(&mut reader, &input, &options, &mut writer, &mut report)?;
    // A read error ends IN there: what was read before it is kept, as for damage.
    writer.commit().map_err(CliError::unchanged)?;
    crate::render::print(&report, args.copy.json)?;
    if let Some(error) = read_error {
        return Err(log.read_error(error).into());
    }
    Ok(())
}
