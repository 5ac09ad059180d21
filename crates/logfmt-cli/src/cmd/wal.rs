//! `verify`, `stats` and `cat` on a WAL directory ([`crate::wal_dir`]): gather its report,
//! then render it (`verify`, `stats`), or print its records as they are read with a heading
//! per log (`cat`).

use std::io::{self, Write};
use std::process::ExitCode;

use logfmt_std::RecoveryMode;
use logfmt_std::content::DbFileKind;

use super::cat_printer::RecordPrinter;
use super::cat_report::{CatDamage, CatPrintedRaw, CatStopped, CatUndecoded};
use crate::bounded_reports::DEFAULT_SHOWN;
use crate::decode::{Content, Decode, Style};
use crate::error::{CliError, EXIT_BAD_DATA, EXIT_OK};
use crate::output::OutputFormat;
use crate::render::{Rendering, hint, render, warn};
use crate::wal_dir::{Flow, Seen, WalDirs, gather};

/// Refuses the flags that do not apply to a WAL directory, whose logs are read whole, each
/// in its own format (LevelDB's, or RocksDB's recyclable one: the first chunk tells).
pub(crate) fn refuse(flags: &[(bool, &str)]) -> Result<(), CliError> {
    match flags.iter().find(|(given, _)| *given) {
        Some((_, flag)) => Err(CliError::Usage(format!(
            "{flag} does not apply to a WAL directory: its logs are read whole, in log-number \
             order, each in its own format"
        ))),
        None => Ok(()),
    }
}

/// `verify DIR`: the report (the first `keep` damaged regions listed), and exit status 1 if damage was found or reading stopped
/// before the last log's end.
pub(crate) fn verify(
    dir: WalDirs<'_>,
    mode: RecoveryMode,
    keep: usize,
    json: bool,
) -> Result<ExitCode, CliError> {
    let report = gather(dir, mode, keep, |_| Ok(Flow::Continue))?;
    print(&report, json)?;
    Ok(ExitCode::from(if report.damaged() {
        EXIT_BAD_DATA
    } else {
        EXIT_OK
    }))
}

/// `stats DIR`: the report (read as LevelDB reads, with `--recovery tolerate`).
pub(crate) fn stats(dir: WalDirs<'_>, json: bool) -> Result<(), CliError> {
    let report = gather(
        dir,
        RecoveryMode::TolerateCorruptedTailRecords,
        DEFAULT_SHOWN,
        |_| Ok(Flow::Continue),
    )?;
    print(&report, json)
}

/// Prints `report`; a reader gone (a closed pipe) is not an error.
fn print(report: &crate::wal_dir::WalDirReport, json: bool) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    match render(&mut out, report, Rendering::json(json)).and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// How `cat DIR` prints.
pub(crate) struct CatPlan {
    /// The recovery mode.
    pub(crate) mode: RecoveryMode,
    /// How a raw record is printed.
    pub(crate) output: OutputFormat,
    /// What the records are decoded as (`--decode`).
    pub(crate) decode: Decode,
    /// Keys and values in hex.
    pub(crate) hex: bool,
    /// Print at most this many records.
    pub(crate) limit: Option<u64>,
}

/// `cat DIR`: every record of every log, in order, each JSON record with its log's `file`;
/// in text, decoded records go under a heading per log (`==> FILE (log N) <==`). Damage and
/// where reading stopped are noted on standard error, as for one log; with --recovery
/// absolute, damage is an error (exit status 1) after the records before it.
pub(crate) fn cat(dir: WalDirs<'_>, plan: &CatPlan) -> Result<(), CliError> {
    let mut content = match plan.output {
        OutputFormat::Framed => Content::Raw,
        _ => plan.decode.content(dir.dir, Some(DbFileKind::Wal)),
    };
    // Chosen by the logs' names alone, decoding is confirmed by the first record: logs that
    // hold something else are printed raw.
    let mut confirmed = plan.decode != Decode::Auto || content == Content::Raw;
    let style = match plan.output {
        OutputFormat::Json => Style::Json,
        OutputFormat::Hex => Style::Text { hex: true },
        _ => Style::Text { hex: plan.hex },
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    let mut left = plan.limit;
    let mut file = String::new();
    let mut path = std::path::PathBuf::new();
    // The log whose heading is still to be printed, before its first decoded record.
    let mut heading = None;
    let report = gather(dir, plan.mode, 1, |seen| {
        match seen {
            Seen::Log(log) => {
                file = log.path.to_string_lossy().into_owned();
                path.clone_from(&log.path);
                heading = Some(log.number);
            }
            Seen::Record(record) => {
                if left == Some(0) {
                    return Ok(Flow::Stop);
                }
                left = left.map(|n| n - 1);
                let offset = record.position.offset;
                if !confirmed {
                    confirmed = true;
                    if !crate::decode::decodes(content, &record.data) {
                        out.flush()?;
                        hint(&CatPrintedRaw {
                            file: &path,
                            offset,
                            named: content,
                        });
                        content = Content::Raw;
                    }
                }
                if let Some(number) = heading.take()
                    && content != Content::Raw
                    && style != Style::Json
                {
                    writeln!(
                        out,
                        "==> {} (log {number}) <==",
                        logfmt_std::advanced::EscapedPath::new(&path),
                    )?;
                }
                let mut printer = RecordPrinter::new(plan.output, content, style, Some(&file));
                if let Some(error) = printer.record(&mut out, offset, None, &record.data)? {
                    out.flush()?;
                    warn(&CatUndecoded {
                        file: &path,
                        offset,
                        error,
                    });
                }
            }
            Seen::Damage(damage) => {
                out.flush()?;
                warn(&CatDamage {
                    file: &path,
                    damage,
                });
            }
        }
        // The last record asked for: nothing more is read.
        Ok(if left == Some(0) {
            Flow::Stop
        } else {
            Flow::Continue
        })
    });
    // What was printed goes out before the error, if any.
    out.flush()?;
    let report = report?;
    if let Some(stop) = &report.stopped_at
        && let Some(log) = report.file_of(stop)
    {
        if report.recovery == RecoveryMode::AbsoluteConsistency {
            let error = logfmt_std::Error::Damaged {
                path: log.path.clone(),
                first: stop.damage,
                count: 1,
            };
            return Err(CliError::Hinted(
                error,
                "--recovery absolute stops at any damage; the records before it were printed",
            ));
        }
        warn(&CatStopped {
            file: &log.path,
            offset: stop.damage.offset,
        });
    }
    Ok(())
}
