//! How a decoded record is printed, and what keeps a record from decoding: shared by the
//! decoders of write batches and version edits and by the commands.

use std::fmt;

use logfmt_std::content::{BatchError, EditError};

/// How decoded records are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// Text; byte strings escaped (`'key'`), or in hex with `hex`.
    Text {
        /// Byte strings in hex.
        hex: bool,
    },
    /// One JSON object per record.
    Json,
}

/// A record that could not be decoded in full: the error, in the record's own terms.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Undecoded {
    /// A write batch.
    Batch(BatchError),
    /// A version edit.
    Edit(EditError),
}

impl Undecoded {
    /// Whether the record is intact but for a tag this version does not know (a newer
    /// writer's): see [`EditError::is_unknown`].
    pub(crate) fn is_unknown(&self) -> bool {
        matches!(self, Self::Edit(e) if e.is_unknown())
    }
}

impl fmt::Display for Undecoded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Batch(e) => e.fmt(f),
            Self::Edit(e) => e.fmt(f),
        }
    }
}
