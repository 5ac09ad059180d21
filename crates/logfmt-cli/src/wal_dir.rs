//! A WAL directory read as one log: a directory of numbered logs (`NNNNNN.log`) with no
//! `CURRENT` file — a WAL directory written by `logfmt_std::wal`, RocksDB's `archive`, a
//! directory of logs copied out of a database — read by `verify`, `cat` and `stats` with
//! `logfmt_std::wal`'s [`ReadOnlyWal`]: every log in log-number order, the recovery mode
//! deciding what a gap between two logs means. Nothing in the directory is locked, created or
//! changed.
//!
//! [`gather`] reads it into a [`WalDirReport`] (rendered by `cmd::wal_report`), handing each
//! record and damage to the caller as it goes (`cat` prints them).

use std::path::{Path, PathBuf};

use logfmt_std::wal::{Failover, ReadOnlyWal, WalEntry, WalError, WalLog, WalOptions, WalRecord};
use logfmt_std::{Damage, RecoveryMode};

use crate::error::CliError;

/// The other entries named in a report, at most (the rest are counted).
pub(crate) const OTHERS_SHOWN: usize = 20;

/// The options of `verify`, `cat` and `stats` that only a WAL directory takes.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct WalDirArgs {
    /// Read a LevelDB or RocksDB database directory's live write-ahead logs as one log, as a
    /// WAL directory is read (its MANIFEST is not read; the logs it no longer needs are listed,
    /// not read).
    #[arg(long)]
    pub(crate) wal: bool,
    /// The failover directory of the WAL directory read (where its writer put new logs while
    /// the directory's disk stalled, as logfmt's WAL failover and Pebble's do): the logs of
    /// both are read as one log, in order, each record once.
    #[arg(long, value_name = "DIR")]
    pub(crate) secondary: Option<PathBuf>,
}

/// A WAL directory to read, and its failover directory if given.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WalDirs<'a> {
    /// The directory.
    pub(crate) dir: &'a Path,
    /// Its failover directory (`--secondary`).
    pub(crate) secondary: Option<&'a Path>,
}

/// The directory `args` name if it is read as a WAL directory: a directory with no
/// `CURRENT` file, or with `--wal` a LevelDB or RocksDB database directory, its live
/// write-ahead logs read as one log (a database is otherwise read file by file), with the
/// failover directory `--secondary` names. A WAL directory is read alone: given with other
/// files, it is a usage error; so is `--secondary` without one, or naming no directory.
pub(crate) fn wal_dir<'a>(
    args: &'a [PathBuf],
    wal: &'a WalDirArgs,
) -> Result<Option<WalDirs<'a>>, CliError> {
    let database = wal.wal;
    let is_wal = |arg: &PathBuf| {
        arg.as_os_str() != "-"
            && arg.is_dir()
            && (database || std::fs::symlink_metadata(arg.join("CURRENT")).is_err())
    };
    let dir = match args {
        [dir] if is_wal(dir) => Some(dir.as_path()),
        several if several.iter().any(is_wal) => {
            return Err(CliError::Usage(
                "a WAL directory (a directory of numbered logs, without a CURRENT file) is \
                 read alone, as one log: give it without other files"
                    .into(),
            ));
        }
        _ if database => {
            return Err(CliError::Usage(
                "--wal reads one directory: a database's live write-ahead logs, as one log".into(),
            ));
        }
        _ => None,
    };
    let secondary = wal.secondary.as_deref();
    match (dir, secondary) {
        (None, Some(_)) => Err(CliError::Usage(
            "--secondary names the failover directory of a WAL directory: give the WAL \
             directory alone"
                .into(),
        )),
        (Some(_), Some(secondary)) if !secondary.is_dir() => Err(CliError::Usage(format!(
            "--secondary {}: not a directory",
            logfmt_std::advanced::EscapedPath::new(secondary)
        ))),
        (Some(dir), Some(secondary)) if same_dir(dir, secondary) => Err(CliError::Usage(format!(
            "--secondary {}: the WAL directory itself, not its failover directory",
            logfmt_std::advanced::EscapedPath::new(secondary)
        ))),
        (dir, _) => Ok(dir.map(|dir| WalDirs { dir, secondary })),
    }
}

/// Whether `a` and `b` are the same directory (by their canonical paths).
fn same_dir(a: &Path, b: &Path) -> bool {
    matches!(
        (std::fs::canonicalize(a), std::fs::canonicalize(b)),
        (Ok(a), Ok(b)) if a == b
    )
}

/// One log of the directory, as read.
#[derive(Debug, Clone)]
pub(crate) struct LogSummary {
    /// Its file.
    pub(crate) path: PathBuf,
    /// Its number.
    pub(crate) number: u64,
    /// Its length when listed.
    pub(crate) bytes: u64,
    /// Whether it was read (not after a point-in-time stop, or a failure).
    pub(crate) read: bool,
    /// Records read from it.
    pub(crate) records: u64,
    /// Their bytes.
    pub(crate) payload_bytes: u64,
    /// Damaged regions reported in it.
    pub(crate) damaged_regions: u64,
    /// Their bytes.
    pub(crate) dropped_bytes: u64,
    /// Read, not empty, without a record, and its first bytes no chunk header: not a log.
    pub(crate) not_a_log: Option<crate::story::NotALog>,
}

/// Damage in a log of the directory: which log, and the damage at its offset there.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LogDamage {
    /// The log's index in [`WalDirReport::logs`].
    pub(crate) log: usize,
    /// The damage, its offset in that log.
    pub(crate) damage: Damage,
}

/// An entry of the directory that is not one of its logs, and why it is not read.
#[derive(Debug, Clone)]
pub(crate) struct Other {
    /// Its path.
    pub(crate) path: PathBuf,
    /// Why it is not read.
    pub(crate) why: &'static str,
}

/// What reading a WAL directory found: each log, the damage (file, offset, bytes), where
/// reading stopped, and the entries not read.
#[derive(Debug)]
pub(crate) struct WalDirReport {
    /// The directory.
    pub(crate) dir: PathBuf,
    /// Its failover directory, read with it.
    pub(crate) secondary: Option<PathBuf>,
    /// The recovery mode read with.
    pub(crate) recovery: RecoveryMode,
    /// Every log, in log-number order.
    pub(crate) logs: Vec<LogSummary>,
    /// The damage, in reading order: the first [`keep`](Self::keep) (all are counted in
    /// [`logs`](Self::logs)).
    pub(crate) damage: Vec<LogDamage>,
    /// How many damaged regions are kept to be listed (`verify --max-errors`; none with
    /// `--summary`).
    pub(crate) keep: usize,
    /// Where point-in-time recovery stopped, or the damage absolute consistency failed on.
    pub(crate) stopped_at: Option<LogDamage>,
    /// The last log's torn tail.
    pub(crate) tail: Option<LogDamage>,
    /// The entries that are not logs (the first [`OTHERS_SHOWN`]).
    pub(crate) others: Vec<Other>,
    /// All of them, counted.
    pub(crate) others_total: u64,
}

impl WalDirReport {
    /// Records read.
    pub(crate) fn records(&self) -> u64 {
        self.logs.iter().map(|l| l.records).sum()
    }

    /// Their bytes.
    pub(crate) fn payload_bytes(&self) -> u64 {
        self.logs.iter().map(|l| l.payload_bytes).sum()
    }

    /// The bytes of the damage.
    pub(crate) fn dropped_bytes(&self) -> u64 {
        self.logs.iter().map(|l| l.dropped_bytes).sum()
    }

    /// Damaged regions.
    pub(crate) fn damaged_regions(&self) -> u64 {
        self.logs.iter().map(|l| l.damaged_regions).sum()
    }

    /// Whether damage was found, a log is not one, or reading stopped before the last log's
    /// end: `verify`'s exit status 1.
    pub(crate) fn damaged(&self) -> bool {
        self.damaged_regions() > 0
            || self.stopped_at.is_some()
            || self.logs.iter().any(|l| l.not_a_log.is_some())
    }

    /// The file of `damage`'s log.
    pub(crate) fn file_of(&self, damage: &LogDamage) -> Option<&LogSummary> {
        self.logs.get(damage.log)
    }
}

/// What [`gather`] hands the caller as it reads.
pub(crate) enum Seen<'a> {
    /// A log begins.
    Log(&'a LogSummary),
    /// A record of the log begun last.
    Record(&'a WalRecord),
    /// Damage in the log begun last.
    Damage(&'a Damage),
}

/// Whether reading goes on after what [`gather`] handed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Read on.
    Continue,
    /// Stop here (`cat --limit`): the report tells what was read so far.
    Stop,
}

/// Reads the WAL directory `dir` with `mode` into its report (listing the first `keep`
/// damaged regions), handing `seen` each log, record and damage in order, until it says
/// [`Flow::Stop`].
pub(crate) fn gather(
    dirs: WalDirs<'_>,
    mode: RecoveryMode,
    keep: usize,
    seen: impl FnMut(Seen<'_>) -> Result<Flow, CliError>,
) -> Result<WalDirReport, CliError> {
    let (mut wal, mut report) = list(dirs, mode, keep)?;
    read(&mut wal, &mut report, seen)?;
    Ok(report)
}

/// Lists the directory: its logs to read (a database's live ones only), and its report
/// before they are read.
///
/// Every log is checked before any is read: one that is not a regular file (a directory, a
/// FIFO, a device, a link to one) or whose file cannot be looked at (a link that leads
/// nowhere, or round in a loop) is an error naming it, and nothing is read.
fn list(
    dirs: WalDirs<'_>,
    mode: RecoveryMode,
    keep: usize,
) -> Result<(ReadOnlyWal, WalDirReport), CliError> {
    let dir = dirs.dir;
    // Reading never fails over: the threshold is the writer's.
    let failover = dirs
        .secondary
        .map(|secondary| Failover::new(secondary, std::time::Duration::MAX));
    let options = WalOptions::new().recovery(mode).failover(failover);
    let mut wal = ReadOnlyWal::open(dir, &options).map_err(CliError::Wal)?;
    // A database's logs that its MANIFEST no longer needs are not read, as its recovery
    // reads none of them.
    let mut obsolete = Vec::new();
    let database = std::fs::symlink_metadata(dir.join("CURRENT")).is_ok();
    if database {
        let db = logfmt_std::content::Database::open(dir)?;
        wal.retain(|log| {
            let live = db.wals().iter().any(|w| w.number == log.number);
            if !live {
                obsolete.push(log.path.clone());
            }
            live
        });
    }
    let mut report = WalDirReport {
        dir: dir.to_path_buf(),
        secondary: dirs.secondary.map(Path::to_path_buf),
        recovery: mode,
        logs: Vec::new(),
        damage: Vec::new(),
        stopped_at: None,
        tail: None,
        others: Vec::new(),
        others_total: 0,
        keep,
    };
    for log in wal.logs() {
        report.logs.push(summary(log)?);
    }
    let obsolete = obsolete.into_iter().map(|path| (path, OBSOLETE));
    let others = wal
        .others()
        .iter()
        .map(|path| (path.clone(), why_not_a_log(path)));
    for (path, why) in obsolete.chain(others) {
        report.others_total += 1;
        if report.others.len() < OTHERS_SHOWN {
            report.others.push(Other { path, why });
        }
    }
    let dir = logfmt_std::advanced::EscapedPath::new(dir);
    match (report.logs.is_empty(), database) {
        (false, _) => Ok((wal, report)),
        (true, true) => Err(CliError::Usage(format!(
            "{dir}: the database has no live write-ahead log (NNNNNN.log) to read"
        ))),
        (true, false) => Err(CliError::Usage(format!(
            "{dir} is a directory with neither a CURRENT file nor numbered logs (NNNNNN.log): \
             not a LevelDB or RocksDB database, nor a WAL directory (give the log files \
             themselves)"
        ))),
    }
}

/// The summary of `log` before it is read: an error if it is no regular file.
fn summary(log: WalLog) -> Result<LogSummary, CliError> {
    let path = logfmt_std::advanced::EscapedPath::new(&log.path);
    let meta = std::fs::metadata(&log.path).map_err(|e| {
        CliError::Usage(format!(
            "{path}: cannot read this log of the WAL directory: {e} (nothing was read)"
        ))
    })?;
    if !meta.is_file() {
        return Err(CliError::Usage(format!(
            "{path}: named as a log of the WAL directory, but not a regular file (a \
             directory, a FIFO, a device, ...; nothing was read)"
        )));
    }
    Ok(LogSummary {
        bytes: meta.len(),
        read: false,
        records: 0,
        payload_bytes: 0,
        damaged_regions: 0,
        dropped_bytes: 0,
        not_a_log: None,
        number: log.number,
        path: log.path,
    })
}

/// Reads the logs of `wal` in order into `report`, handing `seen` what is read.
fn read(
    wal: &mut ReadOnlyWal,
    report: &mut WalDirReport,
    mut seen: impl FnMut(Seen<'_>) -> Result<Flow, CliError>,
) -> Result<(), CliError> {
    let mut current = None;
    let mut recovery = wal.recover();
    let mut failure = None;
    for entry in recovery.by_ref() {
        let flow = match entry {
            Ok(WalEntry::Log { number, path }) => {
                // A log failed over to the secondary directory has a file in each.
                current = report
                    .logs
                    .iter()
                    .position(|l| l.path == path)
                    .or_else(|| index(report, number, None));
                if let Some(log) = current.and_then(|i| report.logs.get_mut(i)) {
                    log.read = true;
                    seen(Seen::Log(log))?
                } else {
                    Flow::Continue
                }
            }
            Ok(WalEntry::Record(record)) => {
                if let Some(log) = current.and_then(|i| report.logs.get_mut(i)) {
                    log.records += 1;
                    log.payload_bytes += record.data.len() as u64;
                }
                seen(Seen::Record(&record))?
            }
            Ok(WalEntry::Damage { log, damage }) => {
                add_damage(report, log, current, damage);
                seen(Seen::Damage(&damage))?
            }
            Ok(_) => Flow::Continue,
            Err(WalError::Damaged { log, damage }) => {
                add_damage(report, log, current, damage);
                report.stopped_at =
                    index(report, log, current).map(|log| LogDamage { log, damage });
                seen(Seen::Damage(&damage))?
            }
            Err(e) => {
                failure = Some(e);
                Flow::Stop
            }
        };
        if flow == Flow::Stop {
            break;
        }
    }
    if let Some((log, damage)) = recovery.stopped() {
        report.stopped_at = index(report, log, current).map(|log| LogDamage { log, damage });
    }
    if let Some((log, damage)) = recovery.torn_tail() {
        report.tail = index(report, log, current).map(|log| LogDamage { log, damage });
    }
    drop(recovery);
    for log in report.logs.iter_mut().filter(|l| l.read && l.records == 0) {
        if let Ok(file) = logfmt_std::LogFile::open(&log.path) {
            log.not_a_log = crate::story::not_a_log(&file, 0, log.bytes > 0);
        }
    }
    match failure {
        Some(error) => Err(CliError::Wal(error)),
        None => Ok(()),
    }
}

/// The index in the report of the file of log `number` being read: `current` if it is one of
/// that log's files (a log failed over has several), else the log's first.
fn index(report: &WalDirReport, number: u64, current: Option<usize>) -> Option<usize> {
    current
        .filter(|&i| report.logs.get(i).is_some_and(|l| l.number == number))
        .or_else(|| report.logs.iter().position(|l| l.number == number))
}

/// Counts `damage` in log `number` (in its file `current`, if that is one of the log's), and
/// keeps it to be listed.
fn add_damage(report: &mut WalDirReport, number: u64, current: Option<usize>, damage: Damage) {
    let Some(log) = index(report, number, current) else {
        return;
    };
    if let Some(summary) = report.logs.get_mut(log) {
        summary.damaged_regions += 1;
        summary.dropped_bytes += damage.bytes;
    }
    if report.damage.len() < report.keep {
        report.damage.push(LogDamage { log, damage });
    }
}

/// Why a database's log its MANIFEST no longer needs is not read.
const OBSOLETE: &str = "a write-ahead log the database's MANIFEST no longer needs";

/// Why an entry of a WAL directory is not read.
fn why_not_a_log(path: &Path) -> &'static str {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if name.strip_suffix(".log").is_some_and(digits) {
        "named as a log, but its number does not fit in 64 bits"
    } else if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        "a directory"
    } else {
        "not a numbered log (NNNNNN.log)"
    }
}
