//! Plain words after LevelDB's terse reasons, in the text output of `cat`, `verify`,
//! `salvage` and `export`: `missing start of fragmented record(2) (a record's first part was
//! lost, so its later parts are skipped)`, in the words of [`logfmt_std::layout::gloss`]. JSON
//! keeps the bare reason.

use std::fmt;

use logfmt_std::DamageKind;
use logfmt_std::layout::gloss;

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
        match gloss(self.0) {
            Some(words) => write!(f, " ({words})"),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use logfmt_std::advanced::CorruptionKind;

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
