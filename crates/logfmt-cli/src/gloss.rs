//! Plain words after LevelDB's terse reasons, in the text output of `cat`, `verify`,
//! `salvage` and `export`: `missing start of fragmented record(2) (a record's first part was
//! lost, so its later parts are skipped)`. JSON keeps the bare reason.

use std::fmt;

use logfmt_std::{CorruptionKind, DamageKind};

/// What LevelDB's reason for `kind` means, in plain words; `None` where the reason says it
/// plainly already.
pub(crate) fn gloss(kind: &CorruptionKind) -> Option<&'static str> {
    Some(match kind {
        CorruptionKind::ChecksumMismatch => {
            "a chunk's bytes do not match its checksum, so the rest of its 32 KiB block is skipped"
        }
        CorruptionKind::BadRecordLength => {
            "a chunk's length runs past the end of its block, so the rest of the block is skipped"
        }
        CorruptionKind::UnknownRecordType(_) => {
            "a chunk of a type this reader does not know is skipped"
        }
        CorruptionKind::PartialRecordBeforeFull | CorruptionKind::PartialRecordBeforeFirst => {
            "a record's last part was lost, so its first parts are skipped"
        }
        CorruptionKind::MiddleWithoutStart | CorruptionKind::LastWithoutStart => {
            "a record's first part was lost, so its later parts are skipped"
        }
        CorruptionKind::ErrorInMiddleOfRecord => {
            "damage cut a record in two, so its parts read so far are skipped"
        }
        _ => return None,
    })
}

/// A damage's reason, then its gloss in parentheses where it has one.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Glossed<'a>(pub(crate) &'a DamageKind);

impl fmt::Display for Glossed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        Suffix(self.0).fmt(f)
    }
}

/// Only the gloss of a damage's reason, ` (...)`, or nothing: to follow a text that ends
/// with the reason.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Suffix<'a>(pub(crate) &'a DamageKind);

impl fmt::Display for Suffix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            DamageKind::Corruption(kind) => match gloss(kind) {
                Some(words) => write!(f, " ({words})"),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leveldbs_reasons_get_plain_words_and_other_kinds_none() {
        let last = DamageKind::Corruption(CorruptionKind::LastWithoutStart);
        assert_eq!(
            Glossed(&last).to_string(),
            "missing start of fragmented record(2) (a record's first part was lost, so its \
             later parts are skipped)"
        );
        let read = DamageKind::Corruption(CorruptionKind::ReadError);
        assert_eq!(Glossed(&read).to_string(), "read error");
        assert_eq!(Suffix(&DamageKind::TornTail).to_string(), "");
    }
}
