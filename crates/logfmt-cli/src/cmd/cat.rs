//! `logfmt cat`: the records of a log, in order.

use std::io::{self, BufWriter, IsTerminal, Write};
use std::ops::Range;

use logfmt_std::{
    LogReaderOptions,
    advanced::{Dialect, Ending, LogReader, Metadata, PebbleEnd, RecordStream, metadata_records},
};

use super::cat_printer::RecordPrinter;
use super::cat_report::{
    CatDamage, CatOversized, CatPrintedRaw, CatRestarted, CatStopped, CatUndecoded, FileHeader,
    Restart,
};
use crate::decode::{Content, Decode, Style, Timestamps};
use crate::error::CliError;
use crate::image::Input;
use crate::options::{InputArgs, parse_offset, parse_range};
use crate::output::OutputFormat;
use crate::progress::Progress;
use crate::render::{Rendering, hint, render, warn};
use crate::scan::{Found, UNLIMITED, scan};
use crate::targets::Target;

/// Records assembled from more bytes than this are not held in memory by default.
const BUFFER_LIMIT: usize = 4 << 20;

/// A record to decode (a WriteBatch, a VersionEdit) is held whole, up to this many bytes (or
/// --buffer-limit, if more); a longer one is noted on standard error and not printed.
const DECODE_LIMIT: usize = 16 << 20;

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
/// cannot be read twice: its records are held in memory whole, whatever their size. A record
/// that is decoded (see --decode) is held whole, up to 16 MiB or --buffer-limit if that is
/// more: a longer one is noted on standard error (its offset and length) and not printed;
/// --decode raw prints it.
///
/// A ring image (a dump of a flash region holding a ring log: its blocks begin with ring
/// headers) is read from its oldest block to its newest, with the erased value its headers
/// give; offsets are offsets in the image.
///
/// --decode shows what LevelDB and RocksDB keep in the records: a write-ahead log's
/// WriteBatches (sequence number, count, and every operation with its column family, key and
/// value) and a MANIFEST's VersionEdits. By default (auto) a file named NNNNNN.log is decoded
/// as write batches and MANIFEST-NNNNNN as version edits; other files are printed raw. Text
/// escapes keys and values as `leveldbutil dump` does ('key', bytes other than printable
/// ASCII as \xNN; --hex, or --output hex, for hex: --decode raw --output hex prints the raw
/// payloads in hex); --output json prints one object per record:
/// {"offset", "sequence", "count", "ops": [{"op", "cf", "key", "value" or "end_key"}]} for a
/// write batch, {"offset", "fields": [{"field", ...}]} for a version edit, followed by
/// "error" if the record could not be decoded in full and "file" when several files are read.
///
/// FILE may be given several times, `-` for standard input, and a LevelDB or RocksDB database
/// directory: its MANIFEST (named by CURRENT), then its live write-ahead logs in log-number
/// order.
///
/// A directory of numbered logs (NNNNNN.log) without a CURRENT file is a WAL directory, read
/// alone as one log: every log in log-number order, --recovery deciding what a gap between two
/// logs means (point-in-time stops there). Decoded text has a heading per log (`==> FILE (log
/// N) <==`); each JSON record carries the "file" of its log. Its records are held whole.
#[derive(Debug, clap::Args)]
pub(crate) struct CatArgs {
    /// How each record is printed.
    #[arg(short = 'o', long, value_enum, value_name = "FORMAT", default_value_t)]
    output: OutputFormat,
    /// One JSON object per record: the same as --output json.
    #[arg(long, conflicts_with = "output")]
    json: bool,
    /// Print at most N records (of all the files), then stop, as `head -n N` does.
    #[arg(short = 'n', long, value_name = "N")]
    limit: Option<u64>,
    /// Start at the first record that begins at or after this file offset (LevelDB's
    /// initial_offset).
    #[arg(long, value_name = "N", default_value_t = 0, conflicts_with = "range", value_parser = parse_offset)]
    offset: u64,
    /// Only the records whose first chunk starts in this byte range: A..B, A.. or ..B (the
    /// ranges of `logfmt split` print every record exactly once between them).
    #[arg(long, value_name = "A..B", value_parser = parse_range)]
    range: Option<Range<u64>>,
    /// Hold at most this many bytes of a record in memory; a longer record is read a second
    /// time from the file to print it (not from a pipe).
    #[arg(long, value_name = "BYTES", default_value_t = BUFFER_LIMIT)]
    buffer_limit: usize,
    /// What the records hold: auto (by the file's name), raw, write-batch or version-edit.
    #[arg(long, value_enum, value_name = "WHAT", default_value_t)]
    decode: Decode,
    /// Show decoded keys and values in hex rather than escaped.
    #[arg(long)]
    hex: bool,
    /// After the last record, wait for more, as `tail -f` does: the records a writer appends
    /// are printed as each is completed. Runs until interrupted. With several files, the last
    /// one is followed; standard input and pipes end with their writer. A file that shrinks
    /// ("file truncated"), or whose name is given to a new file (a log rotated or replaced), is
    /// noted on standard error and read again from its start (the new file's). Without it, a
    /// file is read up to the length it had when it was opened.
    #[arg(short = 'f', long)]
    follow: bool,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    wal: crate::wal_dir::WalDirArgs,
}

impl CatArgs {
    /// How each record is printed: --output, or json with --json.
    fn format(&self) -> OutputFormat {
        if self.json {
            OutputFormat::Json
        } else {
            self.output
        }
    }
}

/// Why printing a file stopped before its end.
#[derive(Debug)]
enum Stop {
    /// --limit records were printed: the command is done.
    Limit,
    /// A failure.
    Failed(CliError),
}

impl<E: Into<CliError>> From<E> for Stop {
    fn from(error: E) -> Self {
        Self::Failed(error.into())
    }
}

/// Whether standard output is a file (or a device that is not a terminal, as /dev/null):
/// the only outputs a parallel pass (which prints nothing until its check of the whole log is
/// done) cannot delay. A pipe or a terminal gets the first record as soon as it is read.
fn output_is_a_file() -> bool {
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileTypeExt;
    let stdout = io::stdout();
    !stdout.is_terminal()
        && stdout
            .as_fd()
            .try_clone_to_owned()
            .map(std::fs::File::from)
            .and_then(|file| file.metadata())
            .is_ok_and(|meta| meta.is_file() || meta.file_type().is_char_device())
}

/// Runs `cat`.
pub(crate) fn run(args: &CatArgs) -> Result<(), CliError> {
    if let Some(dir) = crate::wal_dir::wal_dir(&args.input.files.files, &args.wal)? {
        return cat_wal(args, dir);
    }
    let targets = crate::targets::expand(&args.input.files.files)?;
    let several = targets.len() > 1;
    let stdout = io::stdout();
    let terminal = stdout.is_terminal();
    if terminal && args.format() == OutputFormat::Framed {
        return Err(CliError::Usage(
            "--output framed is binary: redirect standard output to a file or a pipe".into(),
        ));
    }
    let mut out = BufWriter::with_capacity(64 * 1024, stdout.lock());
    let mut left = args.limit;
    let parallel = output_is_a_file();
    for (i, target) in targets.iter().enumerate() {
        let follow = args.follow && i + 1 == targets.len();
        let mut print = Print {
            several,
            terminal,
            follow,
            parallel,
            left: &mut left,
        };
        loop {
            match cat(args, target, &mut print, &mut out)? {
                Followed::Again => {}
                Followed::Done => break,
                Followed::Limit => {
                    out.flush()?;
                    return Ok(());
                }
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// Runs `cat` on a WAL directory.
fn cat_wal(args: &CatArgs, dir: crate::wal_dir::WalDirs<'_>) -> Result<(), CliError> {
    let read = &args.input.read;
    super::wal::refuse(&[
        (args.offset != 0, "--offset"),
        (args.range.is_some(), "--range"),
        (args.follow, "--follow"),
        (read.erased.is_some(), "--erased"),
        (read.format.format.is_some(), "--format"),
        (read.format.log_number.is_some(), "--log-number"),
    ])?;
    if io::stdout().is_terminal() && args.format() == OutputFormat::Framed {
        return Err(CliError::Usage(
            "--output framed is binary: redirect standard output to a file or a pipe".into(),
        ));
    }
    let output = match args.format() {
        OutputFormat::Lines if io::stdout().is_terminal() => OutputFormat::Escaped,
        other => other,
    };
    super::wal::cat(
        dir,
        &super::wal::CatPlan {
            mode: read.recovery.into(),
            output,
            decode: args.decode,
            hex: args.hex,
            limit: args.limit,
        },
    )
}

/// How printing a file ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Followed {
    /// At its end (or, followed, with its writer gone: a pipe).
    Done,
    /// Followed, it was truncated or replaced: it is to be read again from its start.
    Again,
    /// --limit records were printed.
    Limit,
}

/// How the files are printed, and how many records are still to be printed.
struct Print<'a> {
    /// More than one file is printed.
    several: bool,
    /// Standard output is a terminal.
    terminal: bool,
    /// This file is followed after its last record.
    follow: bool,
    /// A parallel pass may print a large clean log (standard output is a file).
    parallel: bool,
    /// Records still to be printed (--limit).
    left: &'a mut Option<u64>,
}

/// Whether the followed `log` was truncated (it is shorter than the `seen` length) or its
/// name now belongs to another file, as `tail -f` notices it. Updates `seen` to the length
/// now.
fn follow_change(log: &logfmt_std::LogFile, seen: &mut u64) -> Option<Restart> {
    // A name that does not resolve (the log deleted, not yet replaced) is waited on.
    if log.is_same_file(log.path()).ok() == Some(false) && log.path().exists() {
        return Some(Restart::Replaced);
    }
    let len = log.file().metadata().ok()?.len();
    if len < *seen {
        return Some(Restart::Truncated);
    }
    *seen = len;
    None
}

/// How one file's records are printed, decided before the first is read.
#[derive(Debug)]
struct Plan {
    options: LogReaderOptions,
    /// The file is followed after its last record.
    follow: bool,
    /// What the records are decoded as.
    content: Content,
    /// Whether `content` is known (else the first record confirms it, or makes it raw).
    confirmed: bool,
    /// How a raw record is printed.
    output: OutputFormat,
    /// How a decoded record is printed.
    style: Style,
    /// The most bytes of a record held.
    limit: usize,
    /// RocksDB's timestamp sizes, applied to the user keys of the batches after each record
    /// that gives them (read as RocksDB's log).
    timestamps: Timestamps,
}

impl Plan {
    /// The plan for `input`, as `args` ask and `print` allows.
    fn new(
        args: &CatArgs,
        target: &Target,
        input: &Input,
        print: &Print<'_>,
    ) -> Result<Self, CliError> {
        let read = target.read_args(&args.input.read);
        let log = &input.log;
        let mut options = read.options(input, args.offset, args.range.clone())?;
        read.format.say_dialect(log)?;
        // A pipe ends when its writer is done: only a file is waited on.
        let follow = print.follow && log.is_regular() && input.ring.is_none();
        if follow {
            options.read = options.read.clone().tailing(true);
        }
        let content = match args.format() {
            OutputFormat::Framed => Content::Raw,
            _ => args
                .decode
                .content(&target.path, target.kind)
                .in_dialect(options.read.dialect),
        };
        let style = match args.format() {
            OutputFormat::Json => Style::Json,
            OutputFormat::Hex => Style::Text { hex: true },
            _ => Style::Text { hex: args.hex },
        };
        // Only a regular file read in file order can be read a second time from a record's
        // offset; a record is decoded whole, up to its own limit.
        let limit = if content != Content::Raw {
            DECODE_LIMIT.max(args.buffer_limit)
        } else if log.is_regular() && input.ring.is_none() {
            args.buffer_limit
        } else {
            UNLIMITED
        };
        // Read as RocksDB's: its metadata records, said (the predecessor WAL) and applied
        // (the timestamp sizes).
        let metadata =
            if options.read.dialect == Dialect::RocksDb && log.is_regular() && input.ring.is_none()
            {
                metadata_records(log.reread()?, &options.read).map_err(|e| log.read_error(e))?
            } else {
                Vec::new()
            };
        let mut sizes = Vec::new();
        for (offset, record) in &metadata {
            match record {
                Metadata::TimestampSizes(pairs) => sizes.push((*offset, pairs.clone())),
                Metadata::PredecessorWal(p) => crate::notes::hint(
                    log.path(),
                    &format!(
                        "offset {offset}: RocksDB's predecessor-WAL record: the WAL before this \
                         one is {p}"
                    ),
                ),
                _ => {}
            }
        }
        let timestamps = if content == Content::WriteBatch {
            Timestamps::new(&sizes)
        } else {
            Timestamps::default()
        };
        Ok(Self {
            options,
            follow,
            timestamps,
            content,
            // Chosen by the name alone, decoding is confirmed by the first record: a log
            // named like a write-ahead log that holds something else is printed raw.
            confirmed: args.decode != Decode::Auto || content == Content::Raw,
            output: match args.format() {
                OutputFormat::Lines if print.terminal => OutputFormat::Escaped,
                other => other,
            },
            style,
            limit,
        })
    }

    /// Whether a file's header (`==> FILE <==`) goes before its decoded records.
    fn heads(&self) -> bool {
        self.content != Content::Raw && self.style != Style::Json
    }
}

/// Prints a large clean log on every core, where that cannot delay the first line (into a
/// file, without a limit, not followed) and the first record confirms what it holds:
/// `Some(true)` if it was printed, `Some(false)` if it was tried (its header printed) and
/// given up, `None` if not tried. Unless printed, one reader prints it (and notes its damage
/// in its place).
fn print_in_parallel(
    args: &CatArgs,
    input: &Input,
    plan: &Plan,
    print: &Print<'_>,
    label: Option<&str>,
    out: &mut impl Write,
) -> Result<Option<bool>, CliError> {
    let log = &input.log;
    if !print.parallel
        || print.left.is_some()
        || plan.follow
        || !log.is_regular()
        || input.ring.is_some()
    {
        return Ok(None);
    }
    let content = plan.content;
    let confirms = plan.confirmed
        || crate::parallel::first_record(input, &plan.options)?
            .is_some_and(|first| crate::decode::decodes(content, &first));
    if !confirms {
        return Ok(None);
    }
    let (style, output) = (plan.style, plan.output);
    let timestamps = &plan.timestamps;
    if print.several && plan.heads() {
        let header = FileHeader { file: log.path() };
        render(out, &header, Rendering::Text)?;
    }
    let printed = crate::parallel::print_clean(
        input,
        &plan.options,
        args.input.threads.count(),
        plan.limit,
        out,
        |data| crate::decode::first_error(content, data).is_none(),
        // The same printer as one reader's, one per worker.
        |printer: &mut Option<RecordPrinter<'_>>, buffer, offset, index, data| {
            printer
                .get_or_insert_with(|| {
                    RecordPrinter::new(output, content, style, label).timestamps(timestamps.clone())
                })
                .record(buffer, offset, index, data)?;
            Ok(())
        },
    )?;
    Ok(Some(printed))
}

/// Prints the records of one file: a parallel pass where it cannot delay the first line,
/// else one reader, each item printed as it is read (then, followed, the records a writer
/// appends).
fn cat(
    args: &CatArgs,
    target: &Target,
    print: &mut Print<'_>,
    out: &mut impl Write,
) -> Result<Followed, CliError> {
    let read = target.read_args(&args.input.read);
    let input = Input::open(&target.path, read.erased)?;
    input.say_disagreements();
    let log = &input.log;
    let plan = Plan::new(args, target, &input, print)?;
    let name = log.path().to_string_lossy();
    let label = print.several.then_some(name.as_ref());
    let mut header = print.several;
    match print_in_parallel(args, &input, &plan, print, label, out)? {
        Some(true) => return Ok(Followed::Done),
        // Printed by the parallel pass that gave up: not printed again.
        Some(false) if plan.heads() => header = false,
        _ => {}
    }
    // Read up to its length at open, unless followed.
    let source = if plan.follow {
        input.growing_source()?
    } else {
        input.source()?
    };
    let mut reader = LogReader::new(source, &plan.options);
    let mut file = FileOut {
        args,
        target,
        input: &input,
        plan: &plan,
        content: plan.content,
        confirmed: plan.confirmed,
        header,
        left: &mut *print.left,
        printer: RecordPrinter::new(plan.output, plan.content, plan.style, label)
            .timestamps(plan.timestamps.clone()),
        read_error: None,
        pebble: None,
        out,
    };
    file.read_all(&mut reader)
}

/// One file being printed by one reader: what its printing has decided so far, and where it
/// goes.
struct FileOut<'a, 'p, W> {
    args: &'a CatArgs,
    target: &'a Target,
    input: &'a Input,
    plan: &'a Plan,
    /// What the records are decoded as (raw once the first record does not decode).
    content: Content,
    /// Whether `content` is confirmed (by the flags, or by the first record).
    confirmed: bool,
    /// Whether the file's header (`==> FILE <==`) is still to be printed.
    header: bool,
    /// Records still to be printed (--limit).
    left: &'p mut Option<u64>,
    /// Prints the records.
    printer: RecordPrinter<'a>,
    /// The read error the log ended with, if any.
    read_error: Option<io::Error>,
    /// Read as Pebble's: its verdict on the first damage, once met (said once).
    pebble: Option<PebbleEnd>,
    out: &'a mut W,
}

impl<W: Write> FileOut<'_, '_, W> {
    /// Reads the file to its end, printing as it goes; followed, waits for more and reads on
    /// until it is truncated or replaced (or interrupted).
    fn read_all<S>(&mut self, reader: &mut LogReader<S>) -> Result<Followed, CliError>
    where
        S: logfmt_std::advanced::BlockSource<Error = io::Error>,
    {
        let progress = Progress::none();
        let log = &self.input.log;
        let limit = self.plan.limit;
        let mut outcome = match scan(reader, &progress, limit, |found| self.found(found)) {
            Ok(outcome) => outcome,
            Err(stop) => return stopped(stop),
        };
        let mut seen = log.len_at_open();
        while self.plan.follow && self.read_error.is_none() && outcome.failed_on.is_none() {
            // Nothing more yet: print what was read, wait, read on.
            self.out.flush()?;
            std::thread::sleep(std::time::Duration::from_millis(200));
            if let Some(why) = follow_change(log, &mut seen) {
                warn(&CatRestarted {
                    file: log.path(),
                    why,
                });
                return Ok(Followed::Again);
            }
            outcome = match scan(reader, &progress, limit, |found| self.found(found)) {
                Ok(outcome) => outcome,
                Err(stop) => return stopped(stop),
            };
        }
        self.out.flush()?;
        // Pebble's verdict, where the reader's first damage was not handed over (the tail, or
        // where absolute or point-in-time recovery stopped).
        if self.pebble.is_none() {
            let first = outcome
                .failed_on
                .into_iter()
                .chain(outcome.tail)
                .chain(match outcome.ending {
                    Some(Ending::Stopped(damage)) => Some(damage),
                    _ => None,
                })
                .map(|d| self.input.damage(d).offset)
                .min();
            self.pebble_verdict(first)?;
        }
        ended(self.input, outcome, self.read_error.take(), self.pebble)
    }

    /// Pebble's verdict on the first damage, at `first`, read as Pebble's: said once.
    fn pebble_verdict(&mut self, first: Option<u64>) -> Result<(), CliError> {
        let log = &self.input.log;
        self.pebble = crate::story::pebble_end(log, &self.plan.options.read, first)?;
        if let Some(end) = &self.pebble {
            self.out.flush()?;
            crate::notes::hint(log.path(), &super::pebble_line(end));
        }
        Ok(())
    }

    /// Whether `found` is past where Pebble's reader ends the log (its torn end, once met):
    /// not printed.
    fn past_pebble_end(&self, found: &Found<'_>) -> bool {
        let Some(tail) = self.pebble.and_then(|end| end.torn()) else {
            return false;
        };
        match found {
            Found::Record { offset, .. } => self.input.offset(*offset) >= tail.offset,
            Found::Oversized(record) => self.input.offset(record.offset) >= tail.offset,
            Found::Damage(_) => true,
            Found::ReadError { .. } => false,
        }
    }

    /// Prints what the reader found, in its place: a record, or a note of damage.
    fn found(&mut self, found: Found<'_>) -> Result<(), Stop> {
        if let Found::Damage(damage) = &found
            && self.pebble.is_none()
        {
            let first = self.input.damage(*damage).offset;
            self.pebble_verdict(Some(first))?;
        }
        if self.past_pebble_end(&found) {
            return Ok(());
        }
        let record = matches!(found, Found::Record { .. } | Found::Oversized(_));
        if record {
            match self.left {
                Some(0) => return Err(Stop::Limit),
                Some(n) => *n -= 1,
                None => {}
            }
        }
        match found {
            Found::Record {
                offset,
                index,
                data,
            } => self.record(offset, index, data)?,
            Found::Oversized(record) => self.oversized(&record)?,
            Found::Damage(damage) => {
                // Keep the note in place relative to the records printed around it.
                self.out.flush()?;
                self.damaged(damage);
            }
            Found::ReadError { error, corruption } => {
                self.out.flush()?;
                if let Some(corruption) = corruption {
                    self.damaged(corruption.into());
                }
                self.read_error = Some(error);
            }
        }
        if record && *self.left == Some(0) {
            // The last record asked for: nothing more is read.
            return Err(Stop::Limit);
        }
        Ok(())
    }

    /// Prints a complete record: decoded, or as --output says. The first record confirms
    /// what the log holds, or has it printed raw.
    fn record(&mut self, offset: u64, index: Option<u32>, data: &[u8]) -> Result<(), Stop> {
        if !self.confirmed {
            self.confirmed = true;
            if !crate::decode::decodes(self.content, data) {
                self.content = Content::Raw;
                self.printer.set_content(Content::Raw);
                self.out.flush()?;
                let named = self
                    .args
                    .decode
                    .content(&self.target.path, self.target.kind);
                hint(&CatPrintedRaw {
                    file: self.input.log.path(),
                    offset: self.input.offset(offset),
                    named,
                });
            }
        }
        let at = self.input.offset(offset);
        if self.content == Content::Raw {
            self.printer.record(self.out, at, index, data)?;
            return Ok(());
        }
        let log = &self.input.log;
        if self.header && self.plan.style != Style::Json {
            render(self.out, &FileHeader { file: log.path() }, Rendering::Text)?;
        }
        self.header = false;
        let undecoded = self.printer.record(self.out, at, index, data)?;
        if let Some(error) = undecoded {
            self.out.flush()?;
            warn(&CatUndecoded {
                file: log.path(),
                offset: at,
                error,
            });
        }
        Ok(())
    }

    /// Prints a record too long to hold, streamed from the file; one to decode (or a pack or
    /// compressed record) is noted and not printed.
    fn oversized(&mut self, record: &logfmt_std::advanced::Oversized) -> Result<(), Stop> {
        if record.coded || self.content != Content::Raw {
            self.out.flush()?;
            warn(&CatOversized {
                file: self.input.log.path(),
                offset: self.input.offset(record.offset),
                length: record.len,
                coded: record.coded,
                limit: self.plan.limit,
            });
            return Ok(());
        }
        let (log, read) = (&self.input.log, &self.plan.options.read);
        self.printer
            .streamed(self.out, record.offset, record.len, |sink| {
                let mut stream = RecordStream::new(log, read, record)?;
                while let Some(piece) = stream.next()? {
                    sink(piece)?;
                }
                Ok(())
            })
            .map_err(Stop::Failed)
    }

    /// Notes `damage` (read at offsets in the reader's order) on standard error.
    fn damaged(&self, damage: logfmt_std::Damage) {
        let damage = self.input.damage(damage);
        warn(&CatDamage {
            file: self.input.log.path(),
            damage: &damage,
        });
    }
}

/// How printing ended at a [`Stop`]: --limit records printed, or a failure.
fn stopped(stop: Stop) -> Result<Followed, CliError> {
    match stop {
        Stop::Limit => Ok(Followed::Limit),
        Stop::Failed(error) => Err(error),
    }
}

/// How reading a file ended: a read error, damage that absolute consistency fails on, a stop
/// at damage (point-in-time), or its end.
fn ended(
    input: &Input,
    outcome: crate::scan::Outcome,
    read_error: Option<io::Error>,
    pebble: Option<PebbleEnd>,
) -> Result<Followed, CliError> {
    let log = &input.log;
    if let Some(error) = read_error {
        return Err(log.read_error(error).into());
    }
    // Read as Pebble's, a torn end is the log's end, not damage (said already).
    if pebble.is_some_and(|end| end.torn().is_some()) {
        return Ok(Followed::Done);
    }
    if let Some(first) = outcome.failed_on {
        return Err(input.stopped_at_damage(
            first,
            "--recovery absolute stops at any damage; the records before it were printed",
        ));
    }
    if let Some(Ending::Stopped(damage)) = outcome.ending {
        warn(&CatStopped {
            file: log.path(),
            offset: input.offset(damage.offset),
        });
    }
    Ok(Followed::Done)
}
