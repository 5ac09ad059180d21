//! The report of a WAL directory read as one log (`verify DIR`, `stats DIR`), as text and
//! `--json`: the directory's totals, a line per log (its file, number, size, records and
//! damage), every damaged region with its file and offset, where reading stopped, how the
//! last log ends, and the entries that are not logs.

use std::io::{self, Write};

use logfmt_std::DamageKind;
use logfmt_std::advanced::EscapedPath;
use serde::{Serialize, Serializer};

use crate::notes::plural;
use crate::wal_dir::{LogDamage, LogSummary, WalDirReport};

/// `--json` of a WAL directory: the keys JSON.md lists under "A WAL directory", in order.
#[derive(Serialize)]
struct Doc<'a> {
    /// The directory.
    wal_dir: String,
    /// Its failover directory, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    secondary: Option<String>,
    /// The recovery mode's name.
    recovery: &'static str,
    /// Records read, from every log.
    records: u64,
    /// Their bytes.
    payload_bytes: u64,
    /// The bytes of the damage.
    dropped_bytes: u64,
    /// The damage, as far as it is listed, each with its file and log.
    corruptions: Vec<DamageJson>,
    /// All the damage, counted, when some is not listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    corruptions_total: Option<u64>,
    /// Where point-in-time recovery stopped, or absolute consistency failed.
    stopped_at: Option<DamageJson>,
    /// The last log's torn tail.
    tail: Option<TailJson>,
    /// Each log, in log-number order.
    logs: Vec<LogJson<'a>>,
    /// The entries that are not logs, not read (only when there are some).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    other_files: Vec<OtherJson>,
    /// All of them, counted, when some are not listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    other_files_total: Option<u64>,
}

/// Damage in a log of the directory.
#[derive(Serialize)]
struct DamageJson {
    offset: u64,
    bytes: u64,
    reason: String,
    file: String,
    log: u64,
}

/// The last log's torn tail.
#[derive(Serialize)]
struct TailJson {
    offset: u64,
    bytes: u64,
    file: String,
    log: u64,
}

/// One log of the directory.
#[derive(Serialize)]
struct LogJson<'a> {
    file: std::borrow::Cow<'a, str>,
    log: u64,
    bytes: u64,
    read: bool,
    records: u64,
    payload_bytes: u64,
    damaged_regions: u64,
    dropped_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    not_a_log: Option<&'static str>,
}

/// An entry that is not a log.
#[derive(Serialize)]
struct OtherJson {
    file: String,
    reason: &'static str,
}

impl Serialize for WalDirReport {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.doc().serialize(serializer)
    }
}

impl WalDirReport {
    /// The file and log number of `damage`.
    fn located(&self, damage: &LogDamage) -> (String, u64) {
        self.file_of(damage).map_or((String::new(), 0), |log| {
            (log.path.to_string_lossy().into_owned(), log.number)
        })
    }

    fn damage_json(&self, damage: &LogDamage) -> DamageJson {
        let (file, log) = self.located(damage);
        DamageJson {
            offset: damage.damage.offset,
            bytes: damage.damage.bytes,
            reason: damage.damage.kind.to_string(),
            file,
            log,
        }
    }

    /// The report as `--json` prints it.
    fn doc(&self) -> Doc<'_> {
        let total = self.damaged_regions();
        Doc {
            wal_dir: self.dir.to_string_lossy().into_owned(),
            secondary: self
                .secondary
                .as_ref()
                .map(|dir| dir.to_string_lossy().into_owned()),
            recovery: self.recovery.name(),
            records: self.records(),
            payload_bytes: self.payload_bytes(),
            dropped_bytes: self.dropped_bytes(),
            corruptions: self.damage.iter().map(|d| self.damage_json(d)).collect(),
            corruptions_total: (total > self.damage.len() as u64).then_some(total),
            stopped_at: self.stopped_at.as_ref().map(|d| self.damage_json(d)),
            tail: self.tail.as_ref().map(|d| {
                let (file, log) = self.located(d);
                TailJson {
                    offset: d.damage.offset,
                    bytes: d.damage.bytes,
                    file,
                    log,
                }
            }),
            logs: self
                .logs
                .iter()
                .map(|l| LogJson {
                    file: l.path.to_string_lossy(),
                    log: l.number,
                    bytes: l.bytes,
                    read: l.read,
                    records: l.records,
                    payload_bytes: l.payload_bytes,
                    damaged_regions: l.damaged_regions,
                    dropped_bytes: l.dropped_bytes,
                    not_a_log: l.not_a_log.map(crate::story::NotALog::name),
                })
                .collect(),
            other_files: self
                .others
                .iter()
                .map(|o| OtherJson {
                    file: o.path.to_string_lossy().into_owned(),
                    reason: o.why,
                })
                .collect(),
            other_files_total: (self.others_total > self.others.len() as u64)
                .then_some(self.others_total),
        }
    }

    /// `N records, N bytes of payload, ` and the damage.
    /// "N logs" (of those read, or of all), and "in M files" when a log failed over has
    /// several.
    fn logs_in_files(&self, read: bool) -> String {
        let files: Vec<_> = self.logs.iter().filter(|l| l.read || !read).collect();
        let mut numbers: Vec<_> = files.iter().map(|l| l.number).collect();
        numbers.dedup();
        let logs = plural(numbers.len() as u64, "log");
        if numbers.len() == files.len() {
            logs
        } else {
            format!("{logs} in {}", plural(files.len() as u64, "file"))
        }
    }

    fn headline(&self) -> String {
        let read = format!(
            "{} in {}, {} of payload",
            plural(self.records(), "record"),
            self.logs_in_files(true),
            plural(self.payload_bytes(), "byte"),
        );
        match self.damaged_regions() {
            0 => format!("{read}, no corruption"),
            n => format!(
                "{read}, {} dropped in {}",
                plural(self.dropped_bytes(), "byte"),
                plural(n, "damaged region")
            ),
        }
    }

    /// The line of one log: its file, number, size, records and damage.
    fn write_log(&self, out: &mut dyn Write, index: usize, log: &LogSummary) -> io::Result<()> {
        // A file in the failover directory is named with it.
        let name = match log.path.parent() {
            Some(dir) if dir == self.dir => log.path.file_name().map(std::path::Path::new),
            _ => None,
        };
        let name = EscapedPath::new(name.unwrap_or(&log.path));
        let what = if !log.read {
            "not read (reading stopped before it)".to_string()
        } else if let Some(not) = log.not_a_log {
            not.explain().to_string()
        } else if log.damaged_regions == 0 {
            format!(
                "{}, {} of payload, no corruption",
                plural(log.records, "record"),
                plural(log.payload_bytes, "byte")
            )
        } else {
            format!(
                "{}, {} of payload, {} dropped in {}",
                plural(log.records, "record"),
                plural(log.payload_bytes, "byte"),
                plural(log.dropped_bytes, "byte"),
                plural(log.damaged_regions, "damaged region")
            )
        };
        writeln!(
            out,
            "  {name}: log {}, {}: {what}",
            log.number,
            plural(log.bytes, "byte")
        )?;
        let damage: Vec<_> = self
            .damage
            .iter()
            .filter(|d| d.log == index)
            .map(|d| d.damage)
            .collect();
        let mut lines = Vec::new();
        crate::render::write_damage_lines(&mut lines, &damage, |kind| {
            Some(match kind {
                DamageKind::Corruption(_) => "dropped",
                DamageKind::TornTail => "torn",
                DamageKind::LostTail { .. } => "lost",
                _ => "skipped",
            })
        })?;
        for line in String::from_utf8_lossy(&lines).lines() {
            writeln!(out, "  {line}")?;
        }
        Ok(())
    }
}

impl crate::render::Report for WalDirReport {
    /// A headline, a line per log with its damage under it, where reading stopped, how the
    /// last log ends, and the entries not read.
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        let dir = EscapedPath::new(&self.dir);
        let failover = self.secondary.as_ref().map_or(String::new(), |secondary| {
            format!(
                " (and its failover directory {})",
                EscapedPath::new(secondary)
            )
        });
        writeln!(
            out,
            "{dir}: a WAL directory{failover} of {} ({} recovery): {}",
            self.logs_in_files(false),
            self.recovery,
            self.headline()
        )?;
        for (index, log) in self.logs.iter().enumerate() {
            self.write_log(out, index, log)?;
        }
        let listed = self.damage.len() as u64;
        if self.damaged_regions() > listed && self.keep > 0 {
            writeln!(
                out,
                "  ... and {} more damaged regions not shown (--max-errors)",
                self.damaged_regions() - listed
            )?;
        }
        if let Some(stop) = &self.stopped_at
            && let Some(log) = self.file_of(stop)
        {
            let later = if self.logs.iter().any(|l| !l.read) {
                ": no later log read"
            } else {
                ""
            };
            writeln!(
                out,
                "  reading stopped in {} (log {}) at offset {} ({} recovery){later}",
                EscapedPath::new(&log.path),
                log.number,
                stop.damage.offset,
                self.recovery
            )?;
        }
        if let Some(tail) = &self.tail
            && let Some(log) = self.file_of(tail)
        {
            writeln!(
                out,
                "  the last log ends in a torn tail: {} at offset {} of {} (a crash while \
                 writing; never acknowledged, not damage)",
                plural(tail.damage.bytes, "byte"),
                tail.damage.offset,
                EscapedPath::new(&log.path),
            )?;
        }
        if self.others_total > 0 {
            writeln!(
                out,
                "  {} not read (not logs of the WAL):",
                plural(self.others_total, "other file")
            )?;
            for other in &self.others {
                writeln!(out, "    {}: {}", EscapedPath::new(&other.path), other.why)?;
            }
            let hidden = self.others_total - self.others.len() as u64;
            if hidden > 0 {
                writeln!(out, "    ... and {hidden} more")?;
            }
        }
        Ok(())
    }
}
