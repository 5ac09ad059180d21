//! What `logfmt salvage` and `logfmt export` report: [`CopyReport`], the records copied from
//! IN into OUT and the damage passed over, and the one reading loop that gathers it.

use std::io::{self, Write};
use std::path::PathBuf;

use logfmt_std::{
    AtomicLog, LogReaderOptions, LogWriterOptions,
    advanced::{BlockSource, EscapedPath, LogReader},
};
use serde::ser::{SerializeMap, Serializer};

use super::{DamageJson, plural};
use crate::bounded_reports::{DEFAULT_SHOWN, DamageReports};
use crate::error::CliError;
use crate::image::Input;
use crate::options::WaitArgs;
use crate::progress::Progress;
use crate::scan::{Found, Outcome, scan};

/// The flags `salvage` and `export` share: how OUT is written and how the copy is reported.
#[derive(Debug, clap::Args)]
pub(crate) struct CopyArgs {
    /// One JSON object (keys above).
    #[arg(long)]
    pub(crate) json: bool,
    /// Replace OUT even if it is not empty (once the new log is complete).
    #[arg(long)]
    pub(crate) force: bool,
    /// List at most N damaged regions (the summary counts them all; `export` also notes
    /// each on standard error as it is found). Default: 1000.
    #[arg(long, value_name = "N")]
    pub(crate) max_errors: Option<usize>,
    #[command(flatten)]
    pub(crate) wait: WaitArgs,
}

impl CopyArgs {
    /// Creates OUT's temporary file to copy into, written with `writer` and these flags'
    /// `--wait`; a non-empty OUT is refused unless `--force`, and OUT `-` always: the copy is
    /// put in place whole, by a rename, which standard output cannot take.
    pub(crate) fn create(
        &self,
        output: &std::path::Path,
        writer: LogWriterOptions,
    ) -> Result<AtomicLog, CliError> {
        if output.as_os_str() == "-" {
            return Err(CliError::Usage(
                "OUT `-`: the new log is written to a file and renamed into place, which \
                 standard output cannot be (`./-` names a file called -)"
                    .into(),
            ));
        }
        let atomic = writer.lock_wait(self.wait.lock_wait()).replace(self.force);
        AtomicLog::create(output, &atomic).map_err(|e| match e {
            logfmt_std::Error::AlreadyExists { .. } => {
                CliError::Hinted(e, "use --force to replace it")
            }
            e => e.into(),
        })
    }
}

/// Which command copies: the words of its text and the names of its JSON keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Copier {
    /// `salvage`: the damage is what was lost (`lost_bytes`, `lost`, `lost_total`,
    /// `lost_not_shown`), listed in the text.
    Salvage,
    /// `export`: the damage is what was dropped (`dropped_bytes`, `corruptions`,
    /// `corruptions_total`, `corruptions_not_shown`), noted on standard error as it is found.
    Export,
}

impl Copier {
    /// The command's name.
    fn name(self) -> &'static str {
        match self {
            Self::Salvage => "salvage",
            Self::Export => "export",
        }
    }

    /// The JSON keys of the damage: its bytes, the list, all of it counted, those not listed.
    fn keys(self) -> [&'static str; 4] {
        match self {
            Self::Salvage => ["lost_bytes", "lost", "lost_total", "lost_not_shown"],
            Self::Export => [
                "dropped_bytes",
                "corruptions",
                "corruptions_total",
                "corruptions_not_shown",
            ],
        }
    }
}

/// The records copied from IN into OUT, and the damage passed over.
#[derive(Debug)]
pub(crate) struct CopyReport {
    /// Which command copied.
    pub(crate) copier: Copier,
    /// IN, as the text names it.
    pub(crate) input: PathBuf,
    /// OUT, as the text names it.
    pub(crate) output: PathBuf,
    /// Records copied.
    pub(crate) records: u64,
    /// Their bytes.
    pub(crate) payload_bytes: u64,
    /// The damage passed over: the first ones, and a count.
    pub(crate) damage: DamageReports,
    /// How many of them `export` noted on standard error as it found them (the first
    /// `--max-errors`, none with `--quiet`).
    pub(crate) noted: u64,
}

/// `--json`: "records", "payload_bytes", then the damage's bytes, its list
/// ([{"offset", "bytes", "reason"}]), and when some are not listed, all of it counted and
/// those not listed, under the names [`Copier`] gives.
impl serde::Serialize for CopyReport {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let [bytes, list, total, not_shown] = self.copier.keys();
        let left_out = self.damage.left_out();
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("records", &self.records)?;
        map.serialize_entry("payload_bytes", &self.payload_bytes)?;
        map.serialize_entry(bytes, &self.damage.bytes())?;
        let listed: Vec<DamageJson> = self.damage.kept().iter().map(DamageJson::from).collect();
        map.serialize_entry(list, &listed)?;
        if left_out > 0 {
            map.serialize_entry(total, &self.damage.count())?;
            map.serialize_entry(not_shown, &left_out)?;
        }
        map.end()
    }
}

impl crate::render::Report for CopyReport {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        let copied = format!(
            "{}: {} ({} of payload)",
            EscapedPath::new(&self.input),
            plural(self.records, "record"),
            plural(self.payload_bytes, "byte"),
        );
        let output = EscapedPath::new(&self.output);
        match self.copier {
            Copier::Export => writeln!(
                out,
                "{copied} exported to {output}{}",
                if self.damage.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; {} dropped in {}{}",
                        plural(self.damage.bytes(), "byte"),
                        plural(self.damage.count(), "damaged region"),
                        match self.noted {
                            0 => String::new(),
                            n if n == self.damage.count() => " (noted above)".to_owned(),
                            n => format!(" (the first {n} noted above)"),
                        }
                    )
                }
            ),
            Copier::Salvage => {
                writeln!(out, "{copied} copied to {output}")?;
                self.write_lost(out)
            }
        }
    }
}

impl CopyReport {
    /// The report of a copy by `copier` from `input` to `output`, before anything is read.
    pub(crate) fn new(copier: Copier, input: PathBuf, output: PathBuf, args: &CopyArgs) -> Self {
        Self {
            copier,
            input,
            output,
            records: 0,
            payload_bytes: 0,
            damage: DamageReports::new(args.max_errors.unwrap_or(DEFAULT_SHOWN)),
            noted: 0,
        }
    }

    /// `salvage`'s list of what was lost.
    fn write_lost(&self, out: &mut dyn Write) -> io::Result<()> {
        let lost = &self.damage;
        if lost.is_empty() {
            return writeln!(out, "nothing was lost");
        }
        writeln!(
            out,
            "lost: {} in {}:",
            plural(lost.bytes(), "byte"),
            plural(lost.count(), "damaged region")
        )?;
        crate::render::write_damage_lines(out, lost.kept(), |_| None)?;
        if lost.left_out() > 0 {
            writeln!(
                out,
                "  ... and {} more not shown (--max-errors)",
                lost.left_out()
            )?;
        }
        Ok(())
    }
}

impl CopyReport {
    /// `export`: one warning for the damage not noted one by one (past `--max-errors`, or all
    /// of it with `--quiet`), on standard error.
    pub(crate) fn say_not_noted(&self) {
        let left = self.damage.count() - self.noted;
        if self.copier != Copier::Export || left == 0 {
            return;
        }
        let why = if self.noted == 0 {
            "--quiet"
        } else {
            "--max-errors"
        };
        crate::notes::say(
            &self.input,
            &format!(
                "{} not noted one by one ({why}); {} dropped in all",
                plural(
                    left,
                    if self.noted == 0 {
                        "damaged region"
                    } else {
                        "more damaged region"
                    }
                ),
                plural(self.damage.bytes(), "byte"),
            ),
        );
    }
}

/// Reads `reader` (over `input`) to its end, copying each record into `writer` (held up to a
/// limit, streamed from the file past it) and counting it in `report`, with the damage; `export`
/// notes each damage on standard error as it is found. Returns how reading ended and the read
/// error that ended it, if any (reported after what was copied).
pub(crate) fn copy_all(
    reader: &mut LogReader<impl BlockSource<Error = io::Error>>,
    input: &Input,
    options: &LogReaderOptions,
    writer: &mut AtomicLog,
    report: &mut CopyReport,
) -> Result<(Outcome, Option<io::Error>), CliError> {
    let command = report.copier.name();
    let progress = Progress::bytes(command, input.log.len_at_open());
    let mut read_error = None;
    let damaged = |damage: logfmt_std::Damage, report: &mut CopyReport| {
        let damage = input.damage(damage);
        if report.copier == Copier::Export
            && crate::notes::verbosity() > crate::notes::Verbosity::Quiet
            && report.noted < report.damage.keep() as u64
        {
            crate::notes::note(input.log.path(), &damage);
            report.noted += 1;
        }
        report.damage.push(damage);
    };
    let outcome = scan(
        reader,
        &progress,
        crate::copy::limit(input),
        |found| -> Result<(), CliError> {
            match found {
                Found::Record { .. } | Found::Oversized(_) => {
                    let copied =
                        crate::copy::record(writer, input, &options.read, &found, command)?;
                    if let Some(bytes) = copied {
                        report.records += 1;
                        report.payload_bytes += bytes;
                    }
                }
                Found::Damage(d) => damaged(d, report),
                Found::ReadError { error, corruption } => {
                    read_error = Some(error);
                    if let Some(c) = corruption {
                        damaged(c.into(), report);
                    }
                }
            }
            Ok(())
        },
    )?;
    Ok((outcome, read_error))
}
