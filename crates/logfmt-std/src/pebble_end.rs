//! [`PebbleEnd`]: where Pebble's reader ends a WAL that does not end cleanly, and whether that
//! is corruption or the log's torn end — the one verdict `verify`, `cat`, `stats`, `map` and
//! `chunks` report for a log read as Pebble's.

use logfmt_core::{
    BlockSource, ReadOptions,
    parts::{Dialect, ReadFormat},
};

use crate::detect::pebble_sync_proof;
use crate::recovery::{Damage, DamageKind, RecoveryMode};

/// The recovery mode a log read in `dialect` is read with when `asked` is: Pebble's reader
/// reads no further than the first chunk it cannot read, so read as Pebble's, LevelDB's
/// default (tolerate) stops at the first damage ([`RecoveryMode::PointInTimeRecovery`]); any
/// other mode, or dialect, is read as asked.
///
/// ```
/// use logfmt_std::RecoveryMode;
/// use logfmt_std::advanced::{Dialect, recovery_in};
///
/// let tolerate = RecoveryMode::TolerateCorruptedTailRecords;
/// assert_eq!(recovery_in(tolerate, Dialect::Pebble), RecoveryMode::PointInTimeRecovery);
/// assert_eq!(recovery_in(tolerate, Dialect::RocksDb), tolerate);
/// ```
#[must_use]
pub const fn recovery_in(asked: RecoveryMode, dialect: Dialect) -> RecoveryMode {
    match (asked, dialect) {
        (RecoveryMode::TolerateCorruptedTailRecords, Dialect::Pebble) => {
            RecoveryMode::PointInTimeRecovery
        }
        _ => asked,
    }
}

/// Pebble's verdict on the first damage of a WAL read as Pebble's ([`pebble_end`]). Pebble's
/// reader stops there; then it reads ahead for a WAL-sync chunk of the same log whose synced
/// offset is past it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PebbleEnd {
    /// Nothing after the damage says the log was synced past it: the log ends there, a torn
    /// write (Pebble's unexpected EOF). Nothing is reported as corruption; the bytes from
    /// there to the end of the file are the torn tail ([`DamageKind::TornTail`]).
    Torn(Damage),
    /// A later WAL-sync chunk says the log was synced past the damage: the bytes there were
    /// once durable, and the log is damaged (Pebble reports corruption).
    Corruption {
        /// Where the damage begins.
        offset: u64,
        /// The file offset of the WAL-sync chunk that proves it.
        chunk: u64,
        /// The synced offset that chunk carries (past `offset`).
        synced: u64,
    },
}

impl PebbleEnd {
    /// Where Pebble's reader stops: the first damage.
    #[must_use]
    pub const fn offset(&self) -> u64 {
        match self {
            Self::Torn(tail) => tail.offset,
            Self::Corruption { offset, .. } => *offset,
        }
    }

    /// The proof of corruption: the WAL-sync chunk's offset and the synced offset it carries;
    /// `None` for a torn end.
    #[must_use]
    pub const fn proof(&self) -> Option<(u64, u64)> {
        match self {
            Self::Torn(_) => None,
            Self::Corruption { chunk, synced, .. } => Some((*chunk, *synced)),
        }
    }

    /// The torn tail, for a torn end.
    #[must_use]
    pub const fn torn(&self) -> Option<Damage> {
        match self {
            Self::Torn(tail) => Some(*tail),
            Self::Corruption { .. } => None,
        }
    }

    /// Whether damage found at `offset` is reported as Pebble reads the log: all of it where
    /// the log is proven damaged, none from a torn end on.
    ///
    /// ```
    /// use logfmt_std::advanced::PebbleEnd;
    /// use logfmt_std::{Damage, DamageKind};
    ///
    /// let torn = PebbleEnd::Torn(Damage::new(100, 50, DamageKind::TornTail));
    /// assert!(!torn.keeps(100));
    /// assert!(torn.keeps(99));
    /// ```
    #[must_use]
    pub const fn keeps(&self, offset: u64) -> bool {
        match self {
            Self::Torn(tail) => offset < tail.offset,
            Self::Corruption { .. } => true,
        }
    }
}

/// Pebble's verdict on a WAL read with `read` (its dialect Pebble's; `source` positioned at the
/// log's start, `len` its length) whose first damage is at `first_damage`: corruption if a
/// WAL-sync chunk of the log in a later block carries a synced offset past it
/// ([`pebble_sync_proof`]), else the log's torn end, from there to `len`. The log number the
/// WAL-sync chunks must carry is the format's: decide an `Auto` format first
/// ([`detect_format`](crate::advanced::detect_format)), as the reading did (with none, or a
/// legacy log, no chunk proves anything).
///
/// ```
/// use logfmt_std::advanced::{pebble_end, Dialect, PebbleEnd, ReadOptions, SliceSource};
///
/// // Damage at offset 7 with nothing after it: the log's torn end.
/// let log = [0u8; 20];
/// let read = ReadOptions::new().dialect(Dialect::Pebble);
/// let end = pebble_end(SliceSource::new(&log), &read, 7, log.len() as u64)?;
/// assert_eq!(end.offset(), 7);
/// assert_eq!(end.torn().map(|t| t.bytes), Some(13));
/// assert!(matches!(end, PebbleEnd::Torn(_)));
/// # Ok::<(), std::convert::Infallible>(())
/// ```
///
/// # Errors
/// The source's read errors.
pub fn pebble_end<S: BlockSource>(
    source: S,
    read: &ReadOptions,
    first_damage: u64,
    len: u64,
) -> Result<PebbleEnd, S::Error> {
    let log_number = match read.format {
        ReadFormat::Recyclable { log_number } => log_number,
        ReadFormat::Auto { log_number } => log_number.unwrap_or_default(),
        _ => 0,
    };
    Ok(match pebble_sync_proof(source, first_damage, log_number)? {
        Some((chunk, synced)) => PebbleEnd::Corruption {
            offset: first_damage,
            chunk,
            synced,
        },
        None => PebbleEnd::Torn(Damage::new(
            first_damage,
            len.saturating_sub(first_damage),
            DamageKind::TornTail,
        )),
    })
}
