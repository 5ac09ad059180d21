//! `logfmt verify`: read a whole log and report what was dropped.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use logfmt_std::{
    Damage, DamageKind, LogFile, RecoveryMode,
    advanced::{Ending, LogReader, ReadFormat, ReadOptions, RingImage, StaleTail},
};

use crate::decode::{Content, Decode, Undecoded};
use crate::error::{CliError, EXIT_BAD_DATA, EXIT_NOT_A_LOG, EXIT_OK};
use crate::image::Input;
use crate::options::ReadArgs;
use crate::output::write_json_line;
use crate::progress::Progress;
use crate::reports::{DEFAULT_SHOWN, DamageReports, Reports};
use crate::scan::{COUNTING, Found, scan};

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
/// the packs, the first one's offset).
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
    read: ReadArgs,
    #[command(flatten)]
    threads: crate::parallel::ThreadsArg,
    /// The log files (`-`: standard input; a directory: a LevelDB or RocksDB database, its
    /// MANIFEST and live write-ahead logs).
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
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

/// Records read from logfmt's packs (compressed or not): chunks LevelDB's and RocksDB's
/// readers report as unknown record types, dropping their records.
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
struct Packed {
    /// Records in packs.
    records: u64,
    /// Packs.
    packs: u64,
    /// File offset of the first pack.
    offset: Option<u64>,
}

impl Packed {
    /// Counts a record at `offset` (its pack's, for a record from a pack), with its index in
    /// its pack.
    fn add(&mut self, offset: u64, index: Option<u32>) {
        let Some(index) = index else { return };
        self.records += 1;
        if index == 0 {
            self.packs += 1;
        }
        self.offset.get_or_insert(offset);
    }

    fn merge(&mut self, other: Self) {
        self.records += other.records;
        self.packs += other.packs;
        self.offset = self.offset.or(other.offset);
    }
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

/// What `verify` found.
#[derive(Debug)]
struct Summary {
    records: u64,
    payload_bytes: u64,
    /// The damage reported: the first ones, and a count.
    damage: DamageReports,
    recovery: RecoveryMode,
    tail: Option<Damage>,
    /// Damage that loses records the recovery mode does not report (the tail, where
    /// well-formed chunks follow it): a corruption in the status and the JSON.
    lost: Option<Damage>,
    stale: Option<StaleTail>,
    stopped_at: Option<Damage>,
    ring: Option<RingImage>,
    /// The tail is zeros to the end of the file: not torn, not damage.
    zero_fill: Option<crate::story::Tail>,
    /// The stale bytes are Pebble's EOF trailer.
    pebble_eof: bool,
    /// No record, only damage or a torn tail, and no chunk header at offset 0: not a log at
    /// all (exit status 3).
    not_a_log: Option<crate::story::NotALog>,
    /// Records whose content (a WriteBatch, a VersionEdit) could not be decoded: where, and
    /// why (the first ones, and a count).
    undecoded: Reports<(u64, Undecoded)>,
    /// Records intact but for a tag unknown to this version (a newer writer's), with the
    /// content decoded by the file's name: reported, not damage (the first ones, and a count).
    unknown: Reports<(u64, Undecoded)>,
    /// Records in logfmt's packs, which LevelDB and RocksDB drop.
    packed: Packed,
}

impl Summary {
    fn dropped_bytes(&self) -> u64 {
        self.damage.bytes() + self.lost.map_or(0, |lost| lost.bytes)
    }

    /// Whether records are known lost, or do not decode, or a ring image was not read as its
    /// writer left it (its headers disagree): the exit status is 1.
    fn damaged(&self) -> bool {
        let disagrees = self
            .ring
            .as_ref()
            .is_some_and(|ring| ring.disagreements().next().is_some());
        !self.damage.is_empty() || self.lost.is_some() || !self.undecoded.is_empty() || disagrees
    }

    fn write_json(&self, out: &mut impl Write, file: Option<String>) -> io::Result<()> {
        use super::{DamageJson, SpanJson};
        /// `--json`: the keys documented on [`VerifyArgs`], in that order.
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
            recovery: &'static str,
            tail: Option<Tail>,
            stopped_at: Option<DamageJson>,
            #[serde(skip_serializing_if = "Option::is_none")]
            ring: Option<super::RingJson>,
            #[serde(skip_serializing_if = "Vec::is_empty")]
            undecoded: Vec<UndecodedJson>,
            #[serde(skip_serializing_if = "Vec::is_empty")]
            unknown_tags: Vec<UndecodedJson>,
            #[serde(skip_serializing_if = "Option::is_none")]
            undecoded_total: Option<u64>,
            #[serde(skip_serializing_if = "Option::is_none")]
            undecoded_not_shown: Option<u64>,
            #[serde(skip_serializing_if = "Option::is_none")]
            logfmt_only: Option<Packed>,
            #[serde(skip_serializing_if = "Option::is_none")]
            not_a_log: Option<&'static str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            file: Option<String>,
        }
        /// A record whose content does not decode.
        #[derive(serde::Serialize)]
        struct UndecodedJson {
            offset: u64,
            reason: String,
        }
        let listed = |list: &[(u64, Undecoded)]| -> Vec<UndecodedJson> {
            list.iter()
                .map(|(offset, reason)| UndecodedJson {
                    offset: *offset,
                    reason: reason.to_string(),
                })
                .collect()
        };
        /// A torn or unwritten tail, or the stale bytes after a recycled log's end.
        #[derive(serde::Serialize)]
        #[serde(untagged)]
        enum Tail {
            Torn(SpanJson),
            /// Damage, not a torn write: well-formed chunks follow it.
            Lost {
                offset: u64,
                bytes: u64,
                kind: &'static str,
                chunks_after: u64,
                next_chunk: u64,
            },
            Stale {
                offset: u64,
                bytes: u64,
                kind: &'static str,
                log_number: u32,
            },
            /// Zeros to the end of the file: not torn, not damage.
            Zeros {
                offset: u64,
                bytes: u64,
                kind: &'static str,
            },
        }
        let tail = self
            .tail
            .map(|t| match t.kind {
                DamageKind::LostTail { chunks, next } => Tail::Lost {
                    offset: t.offset,
                    bytes: t.bytes,
                    kind: "damage",
                    chunks_after: chunks,
                    next_chunk: next,
                },
                _ => Tail::Torn(SpanJson {
                    offset: t.offset,
                    bytes: t.bytes,
                }),
            })
            .or_else(|| {
                self.stale.map(|s| Tail::Stale {
                    offset: s.offset,
                    bytes: s.bytes,
                    kind: if self.pebble_eof {
                        "pebble_eof_trailer"
                    } else {
                        "old_record"
                    },
                    log_number: s.log_number,
                })
            })
            .or_else(|| {
                self.zero_fill.map(
                    |crate::story::Tail::ZeroFilled { offset, bytes }| Tail::Zeros {
                        offset,
                        bytes,
                        kind: "zero_fill",
                    },
                )
            });
        let doc = Doc {
            records: self.records,
            payload_bytes: self.payload_bytes,
            dropped_bytes: self.dropped_bytes(),
            corruptions: self
                .damage
                .kept()
                .iter()
                .chain(&self.lost)
                .map(DamageJson::from)
                .collect(),
            corruptions_total: (self.damage.left_out() > 0).then(|| self.damage.count()),
            corruptions_not_shown: Some(self.damage.left_out()).filter(|&n| n > 0),
            recovery: self.recovery.name(),
            tail,
            stopped_at: self.stopped_at.as_ref().map(DamageJson::from),
            ring: self.ring.as_ref().map(super::RingJson::from),
            undecoded: listed(self.undecoded.kept()),
            unknown_tags: listed(self.unknown.kept()),
            undecoded_total: (self.undecoded.left_out() > 0).then(|| self.undecoded.count()),
            undecoded_not_shown: Some(self.undecoded.left_out()).filter(|&n| n > 0),
            logfmt_only: (self.packed.records > 0).then_some(self.packed),
            not_a_log: self.not_a_log.map(crate::story::NotALog::name),
            file,
        };
        write_json_line(out, &doc)
    }

    /// The text report; the damaged regions kept are listed, unless `summary`.
    fn write_text(
        &self,
        out: &mut impl Write,
        file: &std::path::Path,
        summary: bool,
    ) -> io::Result<()> {
        use super::plural;
        if let Some(not) = self.not_a_log {
            // One line: the damage found reading it says nothing more.
            return writeln!(
                out,
                "{}: {}",
                logfmt_std::advanced::EscapedPath::new(file),
                not.explain()
            );
        }
        write!(
            out,
            "{}: {}, {} of payload, ",
            logfmt_std::advanced::EscapedPath::new(file),
            plural(self.records, "record"),
            plural(self.payload_bytes, "byte"),
        )?;
        if let (true, Some(lost)) = (self.damage.is_empty(), self.lost) {
            writeln!(
                out,
                "{} lost at offset {} (damage LevelDB's reader does not report)",
                plural(lost.bytes, "byte"),
                lost.offset
            )?;
        } else if self.damage.is_empty() {
            writeln!(out, "no corruption")?;
        } else {
            let what = if self.damage.only_corruption() {
                "corruption"
            } else {
                "damaged region"
            };
            writeln!(
                out,
                "{} dropped in {}",
                plural(self.dropped_bytes(), "byte"),
                plural(self.damage.count(), what)
            )?;
        }
        if let Some(ring) = &self.ring {
            writeln!(out, "  a ring image: {ring}")?;
            for disagreement in ring.disagreements() {
                writeln!(out, "  the ring image disagrees: {disagreement}")?;
            }
        }
        if let Some(first) = self.packed.offset {
            writeln!(
                out,
                "  {} in {} (from offset {first}): LevelDB and RocksDB report these \
                 chunks as unknown record types and drop their records",
                plural(self.packed.records, "record"),
                plural(self.packed.packs, "logfmt pack"),
            )?;
        }
        let shown = if summary { 0 } else { usize::MAX };
        let width = self
            .damage
            .kept()
            .iter()
            .map(|d| d.offset.to_string().len())
            .max()
            .unwrap_or(0);
        for d in self.damage.kept().iter().take(shown) {
            let verb = match d.kind {
                DamageKind::Corruption(_) => "dropped",
                DamageKind::TornTail => "torn",
                DamageKind::LostTail { .. } => "lost",
                _ => "skipped",
            };
            writeln!(
                out,
                "  offset {:>width$}: {} {verb}: {}",
                d.offset,
                plural(d.bytes, "byte"),
                crate::gloss::Glossed(&d.kind)
            )?;
        }
        let mut undecoded = self.undecoded.kept().iter();
        for (offset, reason) in undecoded.by_ref().take(shown) {
            writeln!(
                out,
                "  offset {offset}: the record does not decode: {reason}"
            )?;
        }
        for (offset, reason) in self.unknown.kept().iter().take(shown) {
            writeln!(
                out,
                "  offset {offset}: unknown to this version (written by a newer LevelDB, RocksDB \
                 or Pebble?), not damage: {reason}; `--decode version-edit` counts it as \
                 undecoded"
            )?;
        }
        if !self.undecoded.is_empty() {
            writeln!(
                out,
                "  {} whose content does not decode{}",
                plural(self.undecoded.count(), "record"),
                match undecoded.count() as u64 + self.undecoded.left_out() {
                    0 => String::new(),
                    hidden => format!(" ({hidden} not shown)"),
                }
            )?;
        }
        if let Some(hidden) = Some(self.damage.left_out()).filter(|&n| n > 0 && !summary) {
            writeln!(out, "  ... and {hidden} more not shown (--max-errors)")?;
        }
        if let Some(stop) = self.stopped_at {
            writeln!(
                out,
                "  reading stopped at offset {} ({} recovery)",
                stop.offset, self.recovery
            )?;
        }
        if let Some(tail) = self.tail
            && self.recovery == RecoveryMode::TolerateCorruptedTailRecords
            && let DamageKind::LostTail { chunks, next } = tail.kind
        {
            writeln!(
                out,
                "  the log ends in damage, not a torn write: {} at offset {} that LevelDB's \
                 reader stops at, with {} after it from offset {next} (`logfmt salvage` \
                 recovers their records)",
                plural(tail.bytes, "byte"),
                tail.offset,
                plural(chunks, "well-formed chunk"),
            )?;
        } else if let Some(tail) = self.tail
            && self.recovery == RecoveryMode::TolerateCorruptedTailRecords
        {
            writeln!(
                out,
                "  the log ends in a torn tail: {} at offset {} (a crash while writing; \
                 LevelDB ignores it; `logfmt write --append --truncate-torn-tail` removes it)",
                plural(tail.bytes, "byte"),
                tail.offset
            )?;
        }
        if let Some(zeros) = self.zero_fill {
            writeln!(out, "  {}", zeros.explain())?;
        }
        if let Some(stale) = self.stale
            && self.pebble_eof
        {
            writeln!(
                out,
                "  the log ends cleanly at offset {} with Pebble's EOF trailer: an empty chunk \
                 of log {} that Pebble writes when it closes a log (not corruption)",
                stale.offset, stale.log_number
            )?;
        } else if let Some(stale) = self.stale {
            writeln!(
                out,
                "  the log ends cleanly at offset {} at a record of log {} (not corruption): \
                 the {} after it are left by an earlier use of the file (RocksDB recycles log \
                 files)",
                stale.offset,
                stale.log_number,
                plural(stale.bytes, "byte")
            )?;
        }
        Ok(())
    }
}

/// Whether damage was found reading a log as LevelDB's that RocksDB wrote in its recyclable
/// format (no format given).
fn recyclable_hint(args: &VerifyArgs, input: &Input, summary: &Summary) -> bool {
    let format = &args.read.format;
    let log: &LogFile = &input.log;
    input.ring.is_none()
        && format.format.is_none()
        && format.log_number.is_none()
        && !summary.damage.is_empty()
        && log.is_regular()
        && matches!(
            crate::format::detect(log, &ReadOptions::new(), None),
            Ok(Some(ReadFormat::Recyclable { .. }))
        )
}

/// Runs `verify`. Its status depends on what was found, so it is returned even on success.
pub(crate) fn run(args: &VerifyArgs) -> Result<ExitCode, CliError> {
    let targets = crate::targets::expand(&args.files)?;
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

/// Verifies one file: its exit status.
fn run_one(
    args: &VerifyArgs,
    target: &crate::targets::Target,
    several: bool,
) -> Result<u8, CliError> {
    let read = target.read_args(&args.read);
    let input = Input::open(&target.path, read.erased)?;
    let log = &input.log;
    let options = read.options(&input, args.offset, None)?;
    let mut reader = LogReader::new(input.source()?, &options);
    // What is kept of the reports, to be shown; the rest are counted.
    let keep = match (args.summary, args.max_errors) {
        (true, _) => 0,
        (false, max) => max.unwrap_or(DEFAULT_SHOWN),
    };
    let mut summary = Summary {
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
    };
    // The records' content is checked as `cat` decodes it: by the file's name (or a
    // database's listing), confirmed by the first record.
    let mut content = args.decode.content(&target.path, target.kind);
    // A tag unknown to this version in an intact record is not damage unless the content was
    // asked for by name.
    let auto = args.decode == Decode::Auto;
    let mut confirmed = args.decode != Decode::Auto || content == Content::Raw;
    let mut read_error = None;
    let clean = crate::parallel::scan_clean(
        &input,
        &options,
        args.threads.count(),
        COUNTING,
        &Progress::bytes("verify", log.len_at_open()),
        |tally: &mut Tally, found| tally.add(content, confirmed, auto, keep, found),
    )?;
    let (outcome, stale) = if let Some(clean) = clean {
        // The first record decides the content, as below.
        let decodes = clean.ranges.iter().find_map(|t| t.first_decodes);
        for tally in clean.ranges {
            summary.records += tally.records;
            summary.payload_bytes += tally.payload_bytes;
            if decodes != Some(false) {
                summary.undecoded.append(tally.undecoded);
                summary.unknown.append(tally.unknown);
            }
            summary.packed.merge(tally.packed);
        }
        (clean.outcome, Some(clean.stale))
    } else {
        let progress = Progress::bytes("verify", log.len_at_open());
        // Records are only counted: held only up to the counting limit (packs are read).
        let outcome = scan(
            &mut reader,
            &progress,
            COUNTING,
            |found| -> Result<(), CliError> {
                match found {
                    Found::Record {
                        data,
                        offset,
                        index,
                    } => {
                        summary.packed.add(input.offset(offset), index);
                        summary.records += 1;
                        summary.payload_bytes += data.len() as u64;
                        if !confirmed {
                            confirmed = true;
                            if !crate::decode::decodes(content, data) {
                                content = Content::Raw;
                            }
                        }
                        if let Some(error) = crate::decode::first_error(content, data) {
                            undecodable(
                                &mut summary.undecoded,
                                &mut summary.unknown,
                                auto,
                                input.offset(offset),
                                error,
                            );
                        }
                    }
                    Found::Oversized(record) => {
                        summary.records += 1;
                        summary.payload_bytes += record.len;
                    }
                    Found::Damage(damage) => summary.damage.push(input.damage(damage)),
                    Found::ReadError { error, corruption } => {
                        if let Some(c) = corruption {
                            summary.damage.push(input.damage(c.into()));
                        }
                        read_error = Some(error);
                    }
                }
                Ok(())
            },
        )?;
        drop(progress);
        (outcome, None)
    };
    if let Some(d) = outcome.failed_on {
        summary.damage.push(input.damage(d));
    }
    summary.tail = outcome.tail.map(|d| input.damage(d));
    // Records known lost are damage, even where the mode (LevelDB's own reading) is silent.
    summary.lost = summary
        .tail
        .filter(|t| t.kind.loses_records() && !summary.damage.kept().contains(t));
    if input.ring.is_none() {
        summary.stale = match stale {
            Some(stale) => stale,
            None => StaleTail::in_file(log, &mut reader)?,
        };
        // Zeros to the end of the file are not a torn record, nor damage.
        if let Some(tail) = summary.tail
            && let Some(zeros) = crate::story::classify(log, &tail)
        {
            summary.zero_fill = Some(zeros);
            summary.tail = None;
            // Absolute consistency still fails on any end but a clean one.
            if summary.recovery != RecoveryMode::AbsoluteConsistency {
                summary.damage.withdraw_tail(tail.offset);
            }
        }
        summary.pebble_eof = summary
            .stale
            .is_some_and(|stale| crate::story::is_pebble_eof_trailer(log, &stale));
        summary.not_a_log = crate::story::not_a_log(
            log,
            summary.records,
            !summary.damage.is_empty() || summary.tail.is_some(),
        )
        .filter(|_| args.offset == 0);
    }
    summary.stopped_at = match outcome.ending {
        Some(Ending::Stopped(damage)) => Some(input.damage(damage)),
        _ => None,
    };
    let mut out = io::stdout().lock();
    let printed = if args.json {
        summary.write_json(
            &mut out,
            several.then(|| log.path().to_string_lossy().into_owned()),
        )
    } else {
        summary
            .write_text(&mut out, log.path(), args.summary)
            .and_then(|()| {
                if summary.not_a_log.is_none() && recyclable_hint(args, &input, &summary) {
                    writeln!(
                        out,
                        "  hint: the log starts with RocksDB recyclable chunks: read it with \
                     --format auto"
                    )?;
                }
                Ok(())
            })
    };
    let printed = printed.and_then(|()| out.flush());
    if let Some(error) = read_error {
        return Err(log.read_error(error).into());
    }
    match printed {
        // Nobody is reading the report; the status still tells.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
        Err(e) => return Err(e.into()),
        Ok(()) => {}
    }
    let status = if summary.not_a_log.is_some() {
        EXIT_NOT_A_LOG
    } else if summary.damaged() {
        EXIT_BAD_DATA
    } else {
        EXIT_OK
    };
    Ok(status)
}
