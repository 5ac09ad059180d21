//! The errors of this crate.

use std::fmt;

use datafusion::error::DataFusionError;
use logfmt_std::{Damage, advanced::EscapedPath};

/// An error from scanning a log into a table.
#[derive(Debug)]
#[non_exhaustive]
pub enum ScanError {
    /// Reading the file failed.
    Io {
        /// The file, as the table's `file` column names it.
        file: String,
        /// What failed.
        source: std::io::Error,
    },
    /// [`RecoveryMode::AbsoluteConsistency`](logfmt_std::RecoveryMode::AbsoluteConsistency) found
    /// damage.
    Damaged {
        /// The file.
        file: String,
        /// The damage.
        damage: Damage,
    },
    /// A record whose payload does not fit in an Arrow binary array (2 GiB or more).
    RecordTooLarge {
        /// The file.
        file: String,
        /// The record's offset.
        offset: u64,
        /// Its length.
        len: u64,
    },
    /// A batch could not be built (a bug: Arrow refused it, or a projected column was not
    /// built).
    Arrow(String),
    /// The scan's thread stopped without a result (it panicked).
    Stopped,
}

impl fmt::Display for ScanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { file, .. } => write!(f, "reading {} failed", escape(file)),
            Self::Damaged { file, damage } => {
                write!(f, "{} is damaged: {damage}", escape(file))
            }
            Self::RecordTooLarge { file, offset, len } => write!(
                f,
                "{}: the record at offset {offset} has {len} bytes, more than an Arrow binary \
                 array holds",
                escape(file)
            ),
            Self::Arrow(error) => write!(f, "building a batch failed: {error}"),
            Self::Stopped => f.write_str("the scan stopped without a result"),
        }
    }
}

impl std::error::Error for ScanError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            Self::Damaged { damage, .. } => Some(damage),
            Self::RecordTooLarge { .. } | Self::Arrow(_) | Self::Stopped => None,
        }
    }
}

impl From<ScanError> for DataFusionError {
    fn from(error: ScanError) -> Self {
        DataFusionError::External(Box::new(error))
    }
}

fn escape(file: &str) -> EscapedPath<'_> {
    EscapedPath::new(std::path::Path::new(file))
}
