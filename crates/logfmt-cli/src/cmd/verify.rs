//! `logfmt verify`: read a whole log and report what was dropped.

use std::io::{self, Write};
use std::process::ExitCode;

use logfmt_std::{
    LogFile, LogReaderOptions, RecoveryMode,
    advanced::{BlockSource, Dialect, Ending, LogReader, ReadFormat, ReadOptions, StaleTail},
};

use super::verify_report::{Packed, VerifyReport};
use crate::bounded_reports::{DEFAULT_SHOWN, DamageReports, Reports};
use crate::decode::{Content, Decode, Undecoded};
use crate::error::{CliError, EXIT_BAD_DATA, EXIT_NOT_A_LOG, EXIT_OK};
use crate::image::Input;
use crate::options::InputArgs;
use crate::progress::Progress;
use crate::render::{Rendering, render};
use crate::scan::{COUNTING, Found, Outcome, scan};

/// Read a whole log and report its records and every drop.
///
/// With the default --recovery tolerate, the records and drops are exactly those LevelDB's log
/// reader returns and reports; a torn tail is mentioned but is not a corruption. A recyclable
/// log (--format recyclable or auto) that ends at a record of an earlier use of a recycled
/// file ends there cleanly: the stale bytes after it are mentioned, and are not corruption.
/// Exit status:
/// 0 if nothing was reported, 1 if damage was found or records are known lost, 2 on a usage
/// or I/O error (a read error is also reported as LevelDB reports it: a drop of 32768 bytes).
/// 3 if the file is not a log: no record could be read from it, and its first 7 bytes are no
/// chunk header (text, random data, a file of another format); one line says so, and --json
/// adds "not_a_log": "text" or "other_bytes". An empty file, a file of zeros and a log whose
/// only record is torn are logs (status 0).
/// A log that ends in damage with well-formed chunks after it has lost records even where
/// LevelDB's reader ends the log there without a report: the status is 1, and --json lists
/// the damage among the "corruptions".
///
/// --json prints one JSON object with these keys, always in this order:
/// "records" (count), "payload_bytes", "dropped_bytes" (sum of the reports' bytes),
/// "corruptions" (the reports: [{"offset", "bytes", "reason"}]), "recovery" (the mode's
/// name), "tail" (the torn or unwritten tail, reported or not: null or {"offset", "bytes"};
/// for a recyclable log that ends at a stale record of an earlier use of the file,
/// {"offset", "bytes", "kind": "old_record", "log_number"}: the stale bytes from the end of
/// the log to the end of the file; "kind": "pebble_eof_trailer" when they are Pebble's EOF
/// trailer, the empty chunk of the next log number Pebble writes when it closes a log; for a
/// log that ends in zeros to the end of the file — space preallocated or memory-mapped and
/// never written, not a torn record and not damage — {"offset", "bytes", "kind": "zero_fill"}),
/// "stopped_at" (where point-in-time or absolute stopped: null or {"offset", "bytes",
/// "reason"}); then, only when there are some, "undecoded" (the records whose content does
/// not decode, see --decode: [{"offset", "reason"}]) and "unknown_tags" (with --decode auto,
/// the records intact but for a VersionEdit tag unknown to this version: [{"offset",
/// "reason"}], not damage); for a ring image only, "ring" ({"blocks", "group", "newest",
/// "lap", "oldest", "blocks_read", "erased"}: see `logfmt stats`); and for a log that holds
/// logfmt's packs only, "logfmt_only" ({"records", "packs", "offset"}: the records in packs,
/// the packs, the first one's offset); with --format leveldb, rocksdb, pebble or auto,
/// "dialect" ({"name", "candidates", "evidence"}: whose log it was read as, the candidates
/// where auto could not tell, what told it); read as Pebble's, "pebble_synced"
/// ({"damage_offset", "chunk", "synced_offset"}: the WAL-sync chunk that proves the damage was
/// once synced; without one, Pebble reads the damage as the log's torn end, the "tail").
///
/// Records in logfmt's packs (`logfmt write --pack`, `--compress zstd`) are read here, but
/// LevelDB's and RocksDB's readers report a pack as a chunk of an unknown record type and
/// drop its records: the report says how many records that is (not damage: the status is
/// unchanged).
///
/// "corruptions" and "undecoded" list at most --max-errors reports each (1000 by default,
/// none with --summary), so that memory stays bounded whatever the damage; when some are
/// left out, "corruptions_total" and "corruptions_not_shown" (or "undecoded_total" and
/// "undecoded_not_shown") follow the list, counting them all and those not listed.
///
/// A ring image (a dump of a flash region holding a ring log) is read from its oldest block
/// to its newest; offsets are offsets in the image. What in it disagrees with the ring its
/// newest block's header describes (a block of another lap or geometry, an image cut short)
/// is reported, one line each, and sets exit status 1.
///
/// Several files are checked one after the other, each reported on its own (in JSON, one
/// object per file, ending with "file": its path), then a line counting the files with
/// damage; the exit status is 1 if any has damage, else 3 if any is not a log. A LevelDB or RocksDB database directory
/// stands for its MANIFEST and its live write-ahead logs, so that the report says which file
/// holds which damage.
///
/// A directory of numbered logs (NNNNNN.log) without a CURRENT file — a WAL directory, RocksDB's
/// archive, logs copied out of a database — is read as one log: every log in log-number order,
/// --recovery deciding what damage and a gap between two logs (a log's torn tail before the
/// next) mean (point-in-time stops there and reads no later log). The report has a line per
/// log (its name, number, size, records, damage with offsets and bytes), where reading
/// stopped, and the entries that are not logs; --json prints one object for the directory
/// ("wal_dir", "logs", each damage with its "file" and "log": see JSON.md). Exit status 1 if
/// damage was found, a log is not one, or reading stopped before the last log's end. Nothing
/// in the directory is locked or changed.
#[derive(Debug, clap::Args)]
pub(crate) struct VerifyArgs {
    /// Print one JSON object (keys above).
    #[arg(long)]
    json: bool,
    /// Start at the first record that begins at or after this file offset (LevelDB's
    /// initial_offset); drops before it are not reported.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = crate::options::parse_offset)]
    offset: u64,
    /// Also check what the records hold: auto (by the file's name: NNNNNN.log holds
    /// WriteBatches, MANIFEST-NNNNNN VersionEdits), raw (nothing), write-batch, version-edit.
    /// A record that does not decode is reported (exit status 1); with auto, a record intact
    /// but for a VersionEdit tag unknown to this version (a newer writer's) is reported and
    /// is not damage.
    #[arg(long, value_enum, value_name = "WHAT", default_value_t)]
    decode: Decode,
    /// Show at most N damaged regions, and N records that do not decode, per file (the
    /// summary line counts them all). Default: 1000.
    #[arg(long, value_name = "N")]
    max_errors: Option<usize>,
    /// Show only the summary line of each file, no damaged regions.
    #[arg(long, conflicts_with = "max_errors")]
    summary: bool,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    wal: crate::wal_dir::WalDirArgs,
}

/// What `verify` counts in one range of a log read on several threads
/// ([`crate::parallel`]; no ring image there, so offsets are file offsets).
#[derive(Debug, Default)]
struct Tally {
    records: u64,
    payload_bytes: u64,
    /// Records whose content does not decode, as `content` (the first record may yet turn
    /// it to raw: [`first_decodes`](Self::first_decodes)): the first ones, and a count.
    undecoded: Reports<(u64, Undecoded)>,
    /// Records intact but for a tag unknown to this version: the first ones, and a count.
    unknown: Reports<(u64, Undecoded)>,
    /// Whether the range's first record decodes as `content`, where the content is not
    /// confirmed yet: the first range with a record tells it for the log.
    first_decodes: Option<bool>,
    /// Records in logfmt's packs.
    packed: Packed,
}

impl Tally {
    fn add(
        &mut self,
        content: Content,
        confirmed: bool,
        auto: bool,
        keep: usize,
        found: Found<'_>,
    ) {
        let (offset, data) = match found {
            Found::Record {
                offset,
                data,
                index,
            } => {
                self.packed.add(offset, index);
                (offset, data)
            }
            Found::Oversized(record) => {
                self.records += 1;
                self.payload_bytes += record.len;
                return;
            }
            Found::Damage(_) | Found::ReadError { .. } => return,
        };
        self.records += 1;
        self.payload_bytes += data.len() as u64;
        if !confirmed && self.first_decodes.is_none() {
            self.first_decodes = Some(crate::decode::decodes(content, data));
        }
        if let Some(error) = crate::decode::first_error(content, data) {
            if self.undecoded.is_empty() && self.unknown.is_empty() {
                self.undecoded = Reports::new(keep);
                self.unknown = Reports::new(keep);
            }
            undecodable(&mut self.undecoded, &mut self.unknown, auto, offset, error);
        }
    }
}

/// Files a record whose content does not decode: as unknown to this version (not damage)
/// where `auto` and the only fault is a tag this version does not know, else as undecoded.
fn undecodable(
    undecoded: &mut Reports<(u64, Undecoded)>,
    unknown: &mut Reports<(u64, Undecoded)>,
    auto: bool,
    offset: u64,
    error: Undecoded,
) {
    if auto && error.is_unknown() {
        unknown.push((offset, error));
    } else {
        undecoded.push((offset, error));
    }
}

/// Pebble's reading of where its WAL ends ([`logfmt_std::advanced::PebbleEnd`]): at the
/// first damage (Pebble reads no further), which is damage if a later WAL-sync chunk's synced
/// offset is past it, else the log's torn end — then no damage is reported.
fn pebble_end(
    input: &Input,
    options: &LogReaderOptions,
    report: &mut VerifyReport,
) -> Result<(), CliError> {
    let first = report
        .damage
        .kept()
        .first()
        .copied()
        .into_iter()
        .chain(report.stopped_at)
        .chain(report.lost)
        .chain(report.tail)
        .map(|d| d.offset)
        .min();
    let Some(end) = crate::story::pebble_end(&input.log, &options.read, first)? else {
        return Ok(());
    };
    report.pebble = Some(end);
    if let Some(tail) = end.torn() {
        // The log's torn end: nothing lost that was ever synced.
        report.damage = DamageReports::new(report.damage.keep());
        report.stopped_at = None;
        report.lost = None;
        report.tail = Some(tail);
    }
    Ok(())
}

/// Whether damage was found reading a log as LevelDB's that RocksDB wrote in its recyclable
/// format (no format given).
fn recyclable_hint(args: &VerifyArgs, input: &Input, report: &VerifyReport) -> bool {
    let format = &args.input.read.format;
    let log: &LogFile = &input.log;
    input.ring.is_none()
        && format.format.is_none()
        && format.log_number.is_none()
        && !report.damage.is_empty()
        && log.is_regular()
        && matches!(
            crate::format::detect(log, &ReadOptions::new(), None),
            Ok(Some(ReadFormat::Recyclable { .. }))
        )
}

/// Runs `verify`. Its status depends on what was found, so it is returned even on success.
pub(crate) fn run(args: &VerifyArgs) -> Result<ExitCode, CliError> {
    if let Some(dir) = crate::wal_dir::wal_dir(&args.input.files.files, &args.wal)? {
        super::wal::refuse(&wal_flags(args))?;
        return super::wal::verify(dir, args.input.read.recovery.into(), kept(args), args.json);
    }
    let targets = crate::targets::expand(&args.input.files.files)?;
    let several = targets.len() > 1;
    let mut damaged = 0u64;
    let mut not_logs = 0u64;
    for target in &targets {
        match run_one(args, target, several)? {
            EXIT_OK => {}
            EXIT_NOT_A_LOG => not_logs += 1,
            _ => damaged += 1,
        }
    }
    if several && !args.json {
        let mut out = io::stdout().lock();
        let _ = writeln!(
            out,
            "{} read: {}",
            super::plural(targets.len() as u64, "file"),
            match (damaged, not_logs) {
                (0, 0) => "no damage".to_string(),
                (damaged, 0) => format!("{} with damage", super::plural(damaged, "file")),
                (0, not) => format!("{} not a log", super::plural(not, "file")),
                (damaged, not) => format!(
                    "{} with damage, {} not a log",
                    super::plural(damaged, "file"),
                    super::plural(not, "file")
                ),
            }
        );
    }
    Ok(ExitCode::from(if damaged > 0 {
        EXIT_BAD_DATA
    } else if not_logs > 0 {
        EXIT_NOT_A_LOG
    } else {
        EXIT_OK
    }))
}

/// The flags given that do not apply to a WAL directory.
fn wal_flags(args: &VerifyArgs) -> [(bool, &'static str); 4] {
    let read = &args.input.read;
    [
        (args.offset != 0, "--offset"),
        (read.erased.is_some(), "--erased"),
        (read.format.format.is_some(), "--format"),
        (read.format.log_number.is_some(), "--log-number"),
    ]
}

/// Verifies one file: its exit status.
fn run_one(
    args: &VerifyArgs,
    target: &crate::targets::Target,
    several: bool,
) -> Result<u8, CliError> {
    let read = target.read_args(&args.input.read);
    let input = Input::open(&target.path, read.erased)?;
    let log = &input.log;
    let options = read.options(&input, args.offset, None)?;
    let mut report = empty_report(args, &input, &options, several);
    report.dialect = Some(read.format.dialect(log)?);
    let read_error = read_all(args, target, &input, &options, &mut report)?;
    if options.read.dialect == Dialect::Pebble && read_error.is_none() {
        pebble_end(&input, &options, &mut report)?;
    }
    if report.not_a_log.is_none()
        && crate::notes::verbosity() > crate::notes::Verbosity::Quiet
        && recyclable_hint(args, &input, &report)
    {
        report.hint =
            Some("the log starts with RocksDB recyclable chunks: read it with --format auto");
    }
    let mut out = io::stdout().lock();
    let printed = render(&mut out, &report, Rendering::json(args.json)).and_then(|()| out.flush());
    if let Some(error) = read_error {
        return Err(log.read_error(error).into());
    }
    match printed {
        // Nobody is reading the report; the status still tells.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
        Err(e) => return Err(e.into()),
        Ok(()) => {}
    }
    let status = if report.not_a_log.is_some() {
        EXIT_NOT_A_LOG
    } else if report.damaged() {
        EXIT_BAD_DATA
    } else {
        EXIT_OK
    };
    Ok(status)
}

/// How many of the reports are kept, to be shown; the rest are counted.
fn kept(args: &VerifyArgs) -> usize {
    match (args.summary, args.max_errors) {
        (true, _) => 0,
        (false, max) => max.unwrap_or(DEFAULT_SHOWN),
    }
}

/// The report of `input` before it is read.
fn empty_report(
    args: &VerifyArgs,
    input: &Input,
    options: &LogReaderOptions,
    several: bool,
) -> VerifyReport {
    let keep = kept(args);
    let path = input.log.path();
    VerifyReport {
        path: path.to_path_buf(),
        file: several.then(|| path.to_string_lossy().into_owned()),
        list: !args.summary,
        hint: None,
        records: 0,
        payload_bytes: 0,
        damage: DamageReports::new(keep),
        recovery: options.recovery,
        tail: None,
        lost: None,
        stale: None,
        stopped_at: None,
        ring: input.ring.clone(),
        zero_fill: None,
        pebble_eof: false,
        not_a_log: None,
        undecoded: Reports::new(keep),
        unknown: Reports::new(keep),
        packed: Packed::default(),
        dialect: None,
        pebble: None,
    }
}

/// Reads `input` whole into `report`: on every core where the log is large and clean, else
/// in order. A read error is returned to be reported after the report.
fn read_all(
    args: &VerifyArgs,
    target: &crate::targets::Target,
    input: &Input,
    options: &LogReaderOptions,
    report: &mut VerifyReport,
) -> Result<Option<io::Error>, CliError> {
    let log = &input.log;
    let mut reader = LogReader::new(input.source()?, options);
    // The records' content is checked as `cat` decodes it: by the file's name (or a
    // database's listing), confirmed by the first record.
    let content = args
        .decode
        .content(&target.path, target.kind)
        .in_dialect(options.read.dialect);
    let check = Check {
        content,
        // A tag unknown to this version in an intact record is not damage unless the content
        // was asked for by name.
        auto: args.decode == Decode::Auto,
        confirmed: args.decode != Decode::Auto || content == Content::Raw,
    };
    let keep = kept(args);
    let clean = crate::parallel::scan_clean(
        input,
        options,
        args.input.threads.count(),
        COUNTING,
        &Progress::bytes("verify", log.len_at_open()),
        |tally: &mut Tally, found| {
            tally.add(check.content, check.confirmed, check.auto, keep, found)
        },
    )?;
    let mut read_error = None;
    let (outcome, stale) = if let Some(clean) = clean {
        // The first record decides the content, as in order.
        let decodes = clean.ranges.iter().find_map(|t| t.first_decodes);
        for tally in clean.ranges {
            report.records += tally.records;
            report.payload_bytes += tally.payload_bytes;
            if decodes != Some(false) {
                report.undecoded.append(tally.undecoded);
                report.unknown.append(tally.unknown);
            }
            report.packed.merge(tally.packed);
        }
        (clean.outcome, Some(clean.stale))
    } else {
        let outcome = read_in_order(input, &mut reader, check, report, &mut read_error)?;
        (outcome, None)
    };
    let stale = match stale {
        Some(stale) => stale,
        None if input.ring.is_none() => StaleTail::in_file(log, &mut reader)?,
        None => None,
    };
    finish(args, input, outcome, stale, report);
    Ok(read_error)
}

/// How records' contents are checked.
#[derive(Debug, Clone, Copy)]
struct Check {
    /// What they are decoded as.
    content: Content,
    /// Whether a tag unknown to this version is not damage (`--decode auto`).
    auto: bool,
    /// Whether the content is known (else the first record confirms it, or makes it raw).
    confirmed: bool,
}

/// Reads the log with one reader, in order, into `report`; a read error is kept in
/// `read_error` (it is reported after the report).
fn read_in_order(
    input: &Input,
    reader: &mut LogReader<impl BlockSource<Error = io::Error>>,
    mut check: Check,
    report: &mut VerifyReport,
    read_error: &mut Option<io::Error>,
) -> Result<Outcome, CliError> {
    let progress = Progress::bytes("verify", input.log.len_at_open());
    // Records are only counted: held only up to the counting limit (packs are read).
    scan(
        reader,
        &progress,
        COUNTING,
        |found| -> Result<(), CliError> {
            match found {
                Found::Record {
                    data,
                    offset,
                    index,
                } => {
                    report.packed.add(input.offset(offset), index);
                    report.records += 1;
                    report.payload_bytes += data.len() as u64;
                    if !check.confirmed {
                        check.confirmed = true;
                        if !crate::decode::decodes(check.content, data) {
                            check.content = Content::Raw;
                        }
                    }
                    if let Some(error) = crate::decode::first_error(check.content, data) {
                        undecodable(
                            &mut report.undecoded,
                            &mut report.unknown,
                            check.auto,
                            input.offset(offset),
                            error,
                        );
                    }
                }
                Found::Oversized(record) => {
                    report.records += 1;
                    report.payload_bytes += record.len;
                }
                Found::Damage(damage) => report.damage.push(input.damage(damage)),
                Found::ReadError { error, corruption } => {
                    if let Some(c) = corruption {
                        report.damage.push(input.damage(c.into()));
                    }
                    *read_error = Some(error);
                }
            }
            Ok(())
        },
    )
}

/// Tells how the log ended in `report`: its tail (torn, lost, zeros), stale bytes, where
/// reading stopped, and whether it is a log at all.
fn finish(
    args: &VerifyArgs,
    input: &Input,
    outcome: Outcome,
    stale: Option<StaleTail>,
    report: &mut VerifyReport,
) {
    let log = &input.log;
    if let Some(d) = outcome.failed_on {
        report.damage.push(input.damage(d));
    }
    report.tail = outcome.tail.map(|d| input.damage(d));
    // Records known lost are damage, even where the mode (LevelDB's own reading) is silent.
    report.lost = report
        .tail
        .filter(|t| t.kind.loses_records() && !report.damage.kept().contains(t));
    if input.ring.is_none() {
        report.stale = stale;
        // Zeros to the end of the file are not a torn record, nor damage.
        if let Some(tail) = report.tail
            && let Some(zeros) = crate::story::classify(log, &tail)
        {
            report.zero_fill = Some(zeros);
            report.tail = None;
            // Absolute consistency still fails on any end but a clean one.
            if report.recovery != RecoveryMode::AbsoluteConsistency {
                report.damage.withdraw_tail(tail.offset);
            }
        }
        report.pebble_eof = report
            .stale
            .is_some_and(|stale| crate::story::is_pebble_eof_trailer(log, &stale));
        report.not_a_log = crate::story::not_a_log(
            log,
            report.records,
            !report.damage.is_empty() || report.tail.is_some(),
        )
        .filter(|_| args.offset == 0);
    }
    report.stopped_at = match outcome.ending {
        Some(Ending::Stopped(damage)) => Some(input.damage(damage)),
        _ => None,
    };
}
