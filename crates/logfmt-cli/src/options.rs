//! Options shared by the reading commands: the recovery mode, erased flash, the chunk format,
//! byte ranges.

use std::ops::Range;
use std::time::Duration;

use logfmt_std::{
    LogReaderOptions, RecoveryMode,
    advanced::{LockWait, ReadOptions},
};

use crate::error::CliError;
use crate::format::FormatArgs;
use crate::image::Input;

/// `--erased` is read by the commands from here, with the other reading options.
pub(crate) use crate::erased::Erased;

/// `--recovery`: what is done with damage (RocksDB's WAL recovery modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum Recovery {
    /// LevelDB's reader: a torn tail ends the log silently; other damage is reported and
    /// skipped.
    #[default]
    Tolerate,
    /// Any damage, a torn tail included, is an error (exit status 1).
    Absolute,
    /// Stop at the first damage and report where; a torn tail ends the log.
    PointInTime,
    /// Skip and report every damage, the torn tail and silently skipped regions included.
    Skip,
}

impl From<Recovery> for RecoveryMode {
    fn from(r: Recovery) -> Self {
        match r {
            Recovery::Tolerate => Self::TolerateCorruptedTailRecords,
            Recovery::Absolute => Self::AbsoluteConsistency,
            Recovery::PointInTime => Self::PointInTimeRecovery,
            Recovery::Skip => Self::SkipAnyCorruptedRecords,
        }
    }
}

/// How a log is read: the flags `cat` and `verify` share.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ReadArgs {
    /// What is done with damage: tolerate (LevelDB), absolute (any damage is an error),
    /// point-in-time (stop at the first damage), skip (report everything, read on). Read as
    /// Pebble's (--format pebble), tolerate stops at the first damage, as Pebble does.
    #[arg(long, value_enum, value_name = "MODE", default_value_t)]
    pub(crate) recovery: Recovery,
    /// Read a flash image whose erased bytes are 0xFF (ff) or 0x00 (00): a header of erased
    /// bytes means nothing was written from there to the end of its block. Not needed for a
    /// ring image (its blocks' ring headers tell, and it is read from its oldest block).
    #[arg(long, value_enum, value_name = "BYTE")]
    pub(crate) erased: Option<Erased>,
    #[command(flatten)]
    pub(crate) format: FormatArgs,
}

impl ReadArgs {
    /// The reader options for these flags on `input`, starting at `offset` and limited to
    /// `range`.
    pub(crate) fn options(
        &self,
        input: &Input,
        offset: u64,
        range: Option<Range<u64>>,
    ) -> Result<LogReaderOptions, CliError> {
        input.refuse_positions(offset, range.is_some())?;
        let read = ReadOptions::new().erased(input.erased(self.erased));
        let read = self
            .format
            .read_options(&input.log, read)?
            .initial_offset(offset);
        // Pebble reads no further than the first chunk it cannot read: read as Pebble's, the
        // default recovery stops there too.
        let recovery = logfmt_std::advanced::recovery_in(self.recovery.into(), read.dialect);
        let options = LogReaderOptions::new()
            .read(input.read_options(read))
            .recovery(recovery);
        Ok(match range {
            Some(range) => options.range(range),
            None => options,
        })
    }
}

/// What the commands that read whole logs with their records (`cat`, `verify`) share: how a
/// log is read, on how many threads, and the files.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct InputArgs {
    #[command(flatten)]
    pub(crate) read: ReadArgs,
    #[command(flatten)]
    pub(crate) threads: crate::parallel::ThreadsArg,
    #[command(flatten)]
    pub(crate) files: FilesArg,
}

/// What the commands that report on a log's chunks and blocks (`chunks`, `stats`, `split`,
/// `map`) share: `--json`, how the chunks are read, and the files.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ChunkArgs {
    /// Print JSON instead of text (its keys are listed above).
    #[arg(long)]
    pub(crate) json: bool,
    /// Read a flash image whose erased bytes are 0xFF (ff) or 0x00 (00).
    #[arg(long, value_enum, value_name = "BYTE")]
    pub(crate) erased: Option<Erased>,
    #[command(flatten)]
    pub(crate) format: FormatArgs,
    #[command(flatten)]
    pub(crate) files: FilesArg,
}

/// The files a reading command reads.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct FilesArg {
    /// The log files (`-`: standard input; a directory: a LevelDB or RocksDB database, its
    /// MANIFEST and live write-ahead logs).
    #[arg(value_name = "FILE", required = true)]
    pub(crate) files: Vec<std::path::PathBuf>,
}

/// `--wait[=SECONDS]`: what a writer does when another writer holds the log's lock.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct WaitArgs {
    /// If another writer holds the log's lock, wait for it (as long as it takes, or up to
    /// SECONDS) instead of failing at once (exit status 2).
    #[arg(
        long,
        value_name = "SECONDS",
        num_args = 0..=1,
        require_equals = true,
        value_parser = parse_seconds
    )]
    wait: Option<Option<Duration>>,
}

impl WaitArgs {
    /// The lock wait these flags ask for.
    pub(crate) fn lock_wait(&self) -> LockWait {
        match self.wait {
            None => LockWait::Refuse,
            Some(None) => LockWait::Forever,
            Some(Some(wait)) => LockWait::For(wait),
        }
    }
}

/// Parses a number of seconds (`2`, `0.5`).
pub(crate) fn parse_seconds(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("`{text}` is not a number of seconds"))
}

/// Parses a byte offset, in decimal or in hex with `0x` (`32768`, `0x8000`).
pub(crate) fn parse_offset(text: &str) -> Result<u64, String> {
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map_err(|_| format!("`{text}` is not a byte offset (decimal, or hex as in 0x8000)"))
}

/// Parses a byte range: `A..B`, `A..` (to the end) or `..B` (from the start); the offsets in
/// decimal or in hex (`0x8000..0x10000`).
pub(crate) fn parse_range(text: &str) -> Result<Range<u64>, String> {
    let (start, end) = text
        .split_once("..")
        .ok_or_else(|| format!("`{text}` is not a range: use A..B, A.. or ..B"))?;
    let number = |s: &str, default: u64| -> Result<u64, String> {
        if s.is_empty() {
            Ok(default)
        } else {
            parse_offset(s).map_err(|_| format!("`{s}` is not a byte offset in `{text}`"))
        }
    };
    let range = number(start, 0)?..number(end, u64::MAX)?;
    if range.start > range.end {
        return Err(format!("the range `{text}` ends before it starts"));
    }
    Ok(range)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds() {
        assert_eq!(parse_seconds("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_seconds("0.25"), Ok(Duration::from_millis(250)));
        for bad in ["-1", "x", "", "inf", "NaN"] {
            assert!(parse_seconds(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn offsets() {
        assert_eq!(parse_offset("32768"), Ok(32768));
        assert_eq!(parse_offset("0x8000"), Ok(32768));
        assert_eq!(parse_offset("0XfF"), Ok(255));
        for bad in ["", "0x", "-1", "8000h", "0x1g"] {
            assert!(parse_offset(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_range("0x8000..0x10000"), Ok(32768..65536));
    }

    #[test]
    fn ranges() {
        assert_eq!(parse_range("10..20"), Ok(10..20));
        assert_eq!(parse_range("10.."), Ok(10..u64::MAX));
        assert_eq!(parse_range("..20"), Ok(0..20));
        assert_eq!(parse_range(".."), Ok(0..u64::MAX));
        assert!(parse_range("20..10").is_err());
        assert!(parse_range("10").is_err());
        assert!(parse_range("a..b").is_err());
        assert!(parse_range("1..2..3").is_err());
    }
}
