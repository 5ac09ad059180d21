//! How logs are read into a table.

use std::fmt;
use std::str::FromStr;

use logfmt_std::RecoveryMode;

/// The chunk format logs are read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ChunkFormatChoice {
    /// Decided for each file from its start, as `logfmt --format auto` does: recyclable
    /// (RocksDB's) if its first chunk is, with the log number of that chunk (or of the file's
    /// name, `000042.log`); legacy otherwise. The default.
    #[default]
    Auto,
    /// LevelDB's chunks only: a recyclable chunk is damage.
    Legacy,
}

impl FromStr for ChunkFormatChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Self::Auto),
            "legacy" => Ok(Self::Legacy),
            _ => Err(format!(
                "unknown chunk format {s:?}: expected auto or legacy"
            )),
        }
    }
}

impl fmt::Display for ChunkFormatChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Auto => "auto",
            Self::Legacy => "legacy",
        })
    }
}

/// How the files of a table are read.
///
/// ```
/// use logfmt_datafusion::{ChunkFormatChoice, LogOptions};
/// use logfmt_std::RecoveryMode;
///
/// let options = LogOptions::new().recovery(RecoveryMode::TolerateCorruptedTailRecords).erased(Some(0xff));
/// assert_eq!(options.format, ChunkFormatChoice::Auto);
/// assert!(options.splittable());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct LogOptions {
    /// What is done with damage. Default [`RecoveryMode::SkipAnyCorruptedRecords`]: every
    /// damaged region is a row of the damage table, the torn tail included, and reading goes
    /// on after it. [`RecoveryMode::AbsoluteConsistency`] makes any damage an error of the
    /// query; [`RecoveryMode::PointInTimeRecovery`] stops each file at its first damage, and
    /// so reads each file whole, in one partition.
    pub recovery: RecoveryMode,
    /// The chunk format. Default [`ChunkFormatChoice::Auto`].
    pub format: ChunkFormatChoice,
    /// For flash images: the value of erased bytes (`0xff` or `0x00`), read as "nothing
    /// written here" rather than damage. Default `None`.
    pub erased: Option<u8>,
}

impl Default for LogOptions {
    fn default() -> Self {
        Self {
            recovery: RecoveryMode::SkipAnyCorruptedRecords,
            format: ChunkFormatChoice::Auto,
            erased: None,
        }
    }
}

impl LogOptions {
    /// The defaults.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`recovery`](Self::recovery).
    #[must_use]
    pub fn recovery(mut self, recovery: RecoveryMode) -> Self {
        self.recovery = recovery;
        self
    }

    /// Sets [`format`](Self::format).
    #[must_use]
    pub fn format(mut self, format: ChunkFormatChoice) -> Self {
        self.format = format;
        self
    }

    /// Sets [`erased`](Self::erased).
    #[must_use]
    pub fn erased(mut self, erased: Option<u8>) -> Self {
        self.erased = erased;
        self
    }

    /// Whether a file may be read in byte ranges (in parallel) with the same result as a
    /// sequential read: every recovery mode but point-in-time, whose stop at a file's first
    /// damage only a sequential read can see.
    pub fn splittable(&self) -> bool {
        self.recovery != RecoveryMode::PointInTimeRecovery
    }
}
