//! The chunk format of a log: `--format`, `--log-number`, `--ignorable-types`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use logfmt_std::{
    LogFile,
    advanced::{
        Dialect, DialectFound, ReadFormat, ReadOptions, implied_dialect, log_number_in_name,
        recyclable_log_number, scan_dialect,
    },
};

use crate::error::CliError;

/// `--format` of the reading commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FormatName {
    /// LevelDB's chunks: 7-byte headers, types 1-4.
    Legacy,
    /// RocksDB's recyclable chunks: 11-byte headers carrying a log number, types 5-8.
    Recyclable,
    /// Decided by what the log shows: its writer (Pebble's WAL-sync chunks or EOF trailer,
    /// RocksDB's metadata records), and recyclable chunks or legacy ones.
    Auto,
    /// Google's LevelDB: types 1-4; every other type is unknown.
    Leveldb,
    /// RocksDB (up to 10): legacy or recyclable chunks (the first decides), the compression
    /// record (9), timestamp sizes (10, 11), predecessor WAL (130, 131); unknown types from
    /// 0x80 skipped.
    Rocksdb,
    /// Pebble: legacy, recyclable or WAL-sync chunks (9-12, with the synced offset that tells
    /// a torn end from damage).
    Pebble,
}

/// `--format` of `write`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum WriteFormatName {
    /// LevelDB's chunks: 7-byte headers, types 1-4.
    Legacy,
    /// RocksDB's recyclable chunks: 11-byte headers carrying the log number, types 5-8.
    Recyclable,
    /// What LevelDB writes and reads: legacy chunks (no logfmt packs).
    Leveldb,
    /// What RocksDB writes and reads: legacy chunks, or recyclable ones with --log-number (as
    /// with its `recycle_log_file_num`); `--compress rocksdb` for its WAL compression (no
    /// logfmt packs).
    Rocksdb,
}

impl WriteFormatName {
    /// The chunks this name writes: legacy, recyclable, or `None` where the log number
    /// decides (recyclable with one, legacy without).
    pub(crate) fn chunks(self) -> Option<Self> {
        match self {
            Self::Legacy | Self::Leveldb => Some(Self::Legacy),
            Self::Recyclable => Some(Self::Recyclable),
            Self::Rocksdb => None,
        }
    }

    /// Whether the log is for LevelDB's or RocksDB's own readers, which read no logfmt pack.
    pub(crate) fn foreign(self) -> bool {
        matches!(self, Self::Leveldb | Self::Rocksdb)
    }
}

/// `--ignorable-types`: chunks of unknown types with bit 7 set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum Ignorable {
    /// Report them as corruption, as LevelDB does.
    #[default]
    Report,
    /// Skip them without a report, as RocksDB does (its rule for forward-compatible record
    /// types).
    Skip,
}

/// How the reading commands read chunks.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct FormatArgs {
    /// The chunk format or the writer: legacy (LevelDB's chunks), recyclable (RocksDB's
    /// recyclable WAL: chunks carry a log number, and a chunk of another number is stale, left
    /// by an earlier use of the file: the end of the log), leveldb, rocksdb or pebble (whose
    /// log it is: what chunk types above 4 mean), or auto (what the log shows decides, and is
    /// said). Default: legacy, or recyclable if --log-number is given.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub(crate) format: Option<FormatName>,
    /// The log number of a recyclable log (the low 32 bits of RocksDB's file number).
    /// Default: the number in the file's name (RocksDB's 000042.log is log 42); with auto
    /// and no number in the name, the first chunk's.
    #[arg(long, value_name = "N")]
    pub(crate) log_number: Option<u64>,
    /// What to do with chunks of unknown types 0x80-0xff: report them as corruption
    /// (LevelDB), or skip them silently (RocksDB's rule for types it may add).
    #[arg(long, value_enum, value_name = "WHAT", default_value_t)]
    pub(crate) ignorable_types: Ignorable,
    /// `auto` was not asked for but implied (a database directory's write-ahead log): what
    /// it decides is not said.
    #[arg(skip)]
    pub(crate) implied: bool,
    /// What `auto`'s scan of the last file found: a file is scanned once, however often a
    /// command asks whose log it is.
    #[arg(skip)]
    pub(crate) scanned: Scanned,
}

/// The last file `--format auto` scanned, and what it found ([`FormatArgs::dialect`]): its
/// path and length at open.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scanned(Arc<Mutex<Option<(PathBuf, u64, DialectFound)>>>);

impl Scanned {
    /// What `log` shows of its writer: scanned once, then remembered.
    fn of(&self, log: &LogFile) -> Result<DialectFound, CliError> {
        let key = (log.path().to_path_buf(), log.len_at_open());
        let mut last = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((path, len, found)) = last.as_ref()
            && (path, *len) == (&key.0, key.1)
        {
            return Ok(*found);
        }
        let found = scan_dialect(log.reread()?, None).map_err(|e| log.read_error(e))?;
        *last = Some((key.0, key.1, found));
        Ok(found)
    }
}

impl FormatArgs {
    /// The chunk format of `log` for these flags. A regular file read as `auto` is decided
    /// here, from its start (so that reading from an offset, a range or in parallel decides
    /// the same way); a pipe is decided by the reader.
    ///
    /// `base` holds the other read options (checksums, erased flash), used to find the first
    /// chunk.
    pub(crate) fn resolve(
        &self,
        log: &LogFile,
        base: &ReadOptions,
    ) -> Result<ReadFormat, CliError> {
        let named = self.log_number.or_else(|| log_number_in_name(log.path()));
        // A log found to be Pebble's with no format given: its chunks decide, as with auto.
        let pebble = self.format.is_none() && base.dialect == Dialect::Pebble;
        let format = match (self.format, self.log_number) {
            (None, None) if pebble => FormatName::Auto,
            (Some(FormatName::Legacy | FormatName::Leveldb), Some(_)) => {
                return Err(CliError::Usage(
                    "--log-number needs --format recyclable, rocksdb, pebble or auto".into(),
                ));
            }
            (None, Some(_)) => FormatName::Recyclable,
            (None, None) => FormatName::Legacy,
            (Some(format), _) => format,
        };
        // A number only from the file's name gives way to the log's own (its first chunk's): a
        // copied or renamed log is read as what it is, never as stale bytes of itself.
        let named = match (self.log_number, format) {
            (
                None,
                FormatName::Recyclable
                | FormatName::Auto
                | FormatName::Rocksdb
                | FormatName::Pebble,
            ) if log.is_regular() => match detect(log, base, None)? {
                Some(ReadFormat::Recyclable { log_number }) => Some(u64::from(log_number)),
                _ => named,
            },
            _ => named,
        };
        match format {
            FormatName::Legacy | FormatName::Leveldb => Ok(ReadFormat::Legacy),
            FormatName::Recyclable => match named {
                Some(number) => Ok(ReadFormat::Recyclable {
                    log_number: recyclable_log_number(number),
                }),
                None => Err(CliError::NoLogNumber {
                    path: log.path().into(),
                }),
            },
            FormatName::Auto | FormatName::Rocksdb | FormatName::Pebble => {
                let log_number = named.map(recyclable_log_number);
                if !log.is_regular() {
                    return Ok(ReadFormat::Auto { log_number });
                }
                let found = detect(log, base, log_number)?;
                Ok(found.unwrap_or(ReadFormat::Auto { log_number }))
            }
        }
    }

    /// Whose log `log` is read as: the dialect `--format` names; for auto, what the log
    /// shows (a regular file is scanned whole; a pipe is read with logfmt's rules); else
    /// logfmt's own reading.
    pub(crate) fn dialect(&self, log: &LogFile) -> Result<DialectChoice, CliError> {
        let named = |dialect| DialectChoice {
            dialect,
            found: None,
            asked: true,
        };
        Ok(match self.format {
            Some(FormatName::Leveldb) => named(Dialect::LevelDb),
            Some(FormatName::Rocksdb) => named(Dialect::RocksDb),
            Some(FormatName::Pebble) => named(Dialect::Pebble),
            Some(FormatName::Auto) if log.is_regular() => {
                let found = self.scanned.of(log)?;
                DialectChoice {
                    dialect: found.dialect(),
                    found: Some(found),
                    asked: !self.implied,
                }
            }
            Some(FormatName::Auto) => named(Dialect::Logfmt),
            // No format given: logfmt's reading, but for a log whose first chunk is Pebble's
            // WAL-sync chunk (its 19-byte header's checksum holds), which no other writer
            // writes: that is read as Pebble's, and said.
            None if self.log_number.is_none() && log.is_regular() => {
                let found = implied_dialect(log.reread()?).map_err(|e| log.read_error(e))?;
                match found {
                    Some(found) => DialectChoice {
                        dialect: Dialect::Pebble,
                        found: Some(found),
                        asked: true,
                    },
                    None => DialectChoice::default_reading(),
                }
            }
            _ => DialectChoice::default_reading(),
        })
    }

    /// Says on standard error (unless `--quiet`) what `--format auto` decided for `log`: the
    /// commands whose output is records or chunks (`cat`, `chunks`, `map`) say it there.
    /// Only a dialect found is said there; that the log does not tell is said by `verify`
    /// and `stats`.
    pub(crate) fn say_dialect(&self, log: &LogFile) -> Result<(), CliError> {
        if self.format != Some(FormatName::Auto) {
            return Ok(());
        }
        let choice = self.dialect(log)?;
        if choice.found.is_some_and(|f| f.verdict.is_ok())
            && let Some(line) = choice.line()
        {
            crate::notes::hint(log.path(), &line);
        }
        Ok(())
    }

    /// The read options of `base` with this format, dialect and `--ignorable-types`.
    pub(crate) fn read_options(
        &self,
        log: &LogFile,
        base: ReadOptions,
    ) -> Result<ReadOptions, CliError> {
        let dialect = self.dialect(log)?.dialect;
        let base = base.dialect(dialect);
        let format = self.resolve(log, &base)?;
        Ok(base
            .format(format)
            .skip_ignorable_types(self.ignorable_types == Ignorable::Skip))
    }
}

/// What `ReadFormat::Auto` decides for `log` (a regular file), read from its start: `None` if
/// no chunk decides (an empty log, or only damage). See [`logfmt_std::advanced::detect_format`].
pub(crate) fn detect(
    log: &LogFile,
    base: &ReadOptions,
    log_number: Option<u32>,
) -> Result<Option<ReadFormat>, logfmt_std::Error> {
    logfmt_std::advanced::detect_format(log.reread()?, base, log_number)
        .map_err(|e| log.read_error(e))
}

/// The dialect a log is read as, and how it was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DialectChoice {
    /// The dialect read with.
    pub(crate) dialect: Dialect,
    /// What `--format auto` found, if it scanned the log.
    pub(crate) found: Option<DialectFound>,
    /// Whether `--format` named a dialect or auto (else logfmt's default reading: nothing to
    /// say).
    pub(crate) asked: bool,
}

impl DialectChoice {
    /// logfmt's own reading, not asked for: nothing to say.
    fn default_reading() -> Self {
        Self {
            dialect: Dialect::Logfmt,
            found: None,
            asked: false,
        }
    }

    /// The dialect's name as reports give it: `leveldb`, `rocksdb`, `pebble`, or for auto
    /// where the log does not tell, `ambiguous`.
    pub(crate) fn name(&self) -> &'static str {
        match self.found.map(|f| f.verdict) {
            Some(Err(_)) => "ambiguous",
            _ => self.dialect.name(),
        }
    }

    /// The dialects the log is consistent with, where auto found it ambiguous.
    pub(crate) fn candidates(&self) -> Vec<&'static str> {
        match self.found.map(|f| f.verdict) {
            Some(Err(set)) => set.iter().map(Dialect::name).collect(),
            _ => Vec::new(),
        }
    }

    /// The line text output prints: what was decided and why (`None` for the default reading).
    pub(crate) fn line(&self) -> Option<String> {
        if !self.asked {
            return None;
        }
        let Some(found) = self.found else {
            return Some(format!("dialect: {}", self.dialect.name()));
        };
        Some(match found.verdict {
            Ok(dialect) => format!(
                "dialect: {} (auto: {})",
                dialect.name(),
                found.reason().unwrap_or_else(|| "its chunks".into())
            ),
            Err(set) if set.is_empty() => "dialect: ambiguous (auto: no chunk tells whose \
                 log this is, or its chunks disagree; read with logfmt's rules)"
                .to_string(),
            Err(set) => {
                let names: Vec<_> = set.iter().map(Dialect::name).collect();
                format!(
                    "dialect: ambiguous (auto: {} read this log alike; nothing in it tells \
                     which wrote it)",
                    names.join(", ")
                )
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auto() -> FormatArgs {
        FormatArgs {
            format: Some(FormatName::Auto),
            log_number: None,
            ignorable_types: Ignorable::Report,
            implied: false,
            scanned: Scanned::default(),
        }
    }

    #[test]
    fn auto_scans_a_file_once_however_often_it_is_asked() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("000007.log");
        let data = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/pebble/find-val-sep-db/000007.log"
        );
        // A published package holds no tests/data: there is nothing to check there.
        let Ok(wal) = std::fs::read(data) else {
            assert!(
                !std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../.git")).exists(),
                "{data}: missing from the repository"
            );
            eprintln!("{data} not found (a published package): nothing checked");
            return;
        };
        std::fs::write(&path, &wal).expect("write");
        let log = LogFile::open(&path).expect("open");
        let args = auto();
        let first = args.dialect(&log).expect("dialect");
        assert_eq!(first.dialect, Dialect::Pebble);
        // The file changed since (same length): asked again, the scan made is what answers.
        std::fs::write(&path, vec![0u8; wal.len()]).expect("write");
        assert_eq!(args.dialect(&log).expect("dialect"), first);
        // A new scan sees the zeros: no chunk tells.
        let fresh = auto().dialect(&log).expect("dialect");
        assert_eq!(fresh.name(), "ambiguous");
    }
}
