//! Recovery policies, named after RocksDB's WAL recovery modes, and the damage they act on.

use std::fmt;
use std::str::FromStr;

use logfmt_core::{
    BLOCK_SIZE, LogEnd,
    parts::{Corruption, CorruptionKind, Oversized},
};

/// What a [`LogReader`](crate::LogReader) does with damage. Named after RocksDB's
/// `WALRecoveryMode`s.
///
/// | damage | `Tolerate…` | `PointInTime…` | `SkipAny…` | `Absolute…` |
/// |---|---|---|---|---|
/// | a drop LevelDB's reader reports | reported, skipped | reported, reading stops | reported, skipped | error |
/// | a torn or unwritten tail | silent | silent | reported | error |
/// | bytes LevelDB skips silently | silent | reported, reading stops | reported | error |
///
/// A torn tail is the end of a log cut short by a crash: a record (or a chunk header) whose
/// rest was never written, or a zero-filled region after the last record (a file whose
/// length reached the disk before its data). "Bytes LevelDB skips silently" are a zero header
/// in the middle of the log (LevelDB skips the rest of its block without a report, hiding any
/// records there: google/leveldb#203). With an [`erased`](logfmt_core::ReadOptions::erased)
/// value set (a flash image), unwritten regions are expected and neither is damage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum RecoveryMode {
    /// LevelDB's reader, exactly: a torn tail is the end of the log, silently; every other
    /// drop is reported and skipped. RocksDB's legacy mode. The default.
    #[default]
    TolerateCorruptedTailRecords,
    /// Any damage, a torn tail included, is an error: for logs that must be intact (e.g. after
    /// a clean shutdown). As RocksDB warns, a crash can leave a torn tail, so this mode is
    /// not for crash recovery (facebook/rocksdb#1351).
    AbsoluteConsistency,
    /// Stop at the first damage and report where: the records returned are exactly those
    /// before it, with no hole. A torn tail is the end of the log.
    PointInTimeRecovery,
    /// Salvage: skip every damaged region (LevelDB's resynchronisation) and report each one,
    /// the torn tail included.
    SkipAnyCorruptedRecords,
}

impl RecoveryMode {
    /// Every mode, in the order of the table above.
    pub const ALL: [Self; 4] = [
        Self::TolerateCorruptedTailRecords,
        Self::PointInTimeRecovery,
        Self::SkipAnyCorruptedRecords,
        Self::AbsoluteConsistency,
    ];

    /// The short name used on command lines: `tolerate`, `absolute`, `point-in-time`,
    /// `skip`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::TolerateCorruptedTailRecords => "tolerate",
            Self::AbsoluteConsistency => "absolute",
            Self::PointInTimeRecovery => "point-in-time",
            Self::SkipAnyCorruptedRecords => "skip",
        }
    }

    /// What the mode does with `damage`.
    pub const fn action(self, damage: DamageKind) -> Action {
        let silent_in_leveldb = !matches!(damage, DamageKind::Corruption(_));
        match self {
            Self::TolerateCorruptedTailRecords if silent_in_leveldb => Action::Ignore,
            Self::TolerateCorruptedTailRecords | Self::SkipAnyCorruptedRecords => Action::Report,
            Self::PointInTimeRecovery if matches!(damage, DamageKind::TornTail) => Action::Ignore,
            Self::PointInTimeRecovery => Action::Stop,
            Self::AbsoluteConsistency => Action::Fail,
        }
    }
}

impl fmt::Display for RecoveryMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a [`RecoveryMode`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownRecoveryMode;

impl fmt::Display for UnknownRecoveryMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("expected one of: tolerate, absolute, point-in-time, skip")
    }
}

impl std::error::Error for UnknownRecoveryMode {}

impl FromStr for RecoveryMode {
    type Err = UnknownRecoveryMode;

    /// Parses a [`name`](Self::name).
    fn from_str(s: &str) -> Result<Self, UnknownRecoveryMode> {
        Self::ALL
            .into_iter()
            .find(|mode| mode.name() == s)
            .ok_or(UnknownRecoveryMode)
    }
}

/// What a [`RecoveryMode`] does with a piece of damage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Action {
    /// Nothing: it is read as LevelDB reads it, without a report.
    Ignore,
    /// Report it and read on.
    Report,
    /// Report it and stop reading.
    Stop,
    /// Fail with an error.
    Fail,
}

/// What kind of damage a [`Damage`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DamageKind {
    /// Bytes LevelDB's reader drops and reports, for this reason.
    Corruption(CorruptionKind),
    /// The end of the log holds no complete record: a record or chunk header cut short, or an
    /// unwritten (zero-filled) region. Truncating the log at the damage's offset removes
    /// exactly these bytes.
    TornTail,
    /// Bytes LevelDB skips without a report: a zero header in the middle of the log, which
    /// hides the rest of its block.
    Skipped,
    /// The end of the log as LevelDB's reader sees it (a chunk cut short, or a zero header, in
    /// the last block) is damage, not a torn write: `chunks` well-formed chunks are written
    /// after it, from offset `next`, which LevelDB's reader never reads. The damage covers
    /// everything from where the last complete record ends to the end of the input.
    LostTail {
        /// Well-formed chunks after the damage, back to back.
        chunks: u64,
        /// File offset of the first of them.
        next: u64,
    },
}

impl DamageKind {
    /// Whether records are known to be lost to damage of this kind, whatever a recovery mode
    /// reports: bytes LevelDB drops and reports, and the end of a log where well-formed chunks
    /// follow the damage ([`LostTail`](Self::LostTail): LevelDB's reader ends the log there
    /// silently, and every record after it is lost to it). Not a torn tail (it holds no
    /// complete record) nor bytes skipped without a report (zeros, which may hide nothing).
    ///
    /// ```
    /// use logfmt_std::{advanced::CorruptionKind, DamageKind};
    ///
    /// assert!(DamageKind::LostTail { chunks: 49, next: 32_768 }.loses_records());
    /// assert!(DamageKind::Corruption(CorruptionKind::BadRecordLength).loses_records());
    /// assert!(!DamageKind::TornTail.loses_records());
    /// ```
    pub const fn loses_records(self) -> bool {
        matches!(self, Self::Corruption(_) | Self::LostTail { .. })
    }
}

impl fmt::Display for DamageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Corruption(kind) => kind.fmt(f),
            Self::TornTail => f.write_str("torn or unwritten tail (no complete record)"),
            Self::Skipped => f.write_str("bytes skipped without a report (zero header)"),
            Self::LostTail { chunks, next } => write!(
                f,
                "damage, not a torn write: LevelDB's reader ends the log here, but {chunks} \
                 well-formed {} from offset {next}",
                if *chunks == 1 {
                    "chunk follows"
                } else {
                    "chunks follow"
                }
            ),
        }
    }
}

/// A damaged region of a log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Damage {
    /// File offset where it begins. For a [`DamageKind::Corruption`], the offset of LevelDB's
    /// report (see [`Corruption`]).
    pub offset: u64,
    /// Bytes concerned: LevelDB's count for a corruption; bytes to the end of the log for a
    /// torn tail; bytes skipped for [`DamageKind::Skipped`].
    pub bytes: u64,
    /// What it is.
    pub kind: DamageKind,
}

impl Damage {
    /// `bytes` bytes of damage of `kind` at `offset`: for a reader built on this crate's
    /// parts, and for tests.
    pub const fn new(offset: u64, bytes: u64, kind: DamageKind) -> Self {
        Self {
            offset,
            bytes,
            kind,
        }
    }
}

impl From<Corruption> for Damage {
    fn from(c: Corruption) -> Self {
        Self {
            offset: c.offset,
            bytes: c.bytes,
            kind: DamageKind::Corruption(c.kind),
        }
    }
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verb = match self.kind {
            DamageKind::Corruption(_) => "dropped",
            DamageKind::TornTail => "torn",
            DamageKind::Skipped => "skipped",
            DamageKind::LostTail { .. } => "lost",
        };
        write!(
            f,
            "{verb} {} bytes at offset {}: {}",
            self.bytes, self.offset, self.kind
        )
    }
}

impl std::error::Error for Damage {}

/// An error from a [`LogReader`](crate::LogReader).
#[derive(Debug)]
#[non_exhaustive]
pub enum ReadError<E> {
    /// Reading failed: the log ends there ([`Ending::Failed`]). LevelDB counts this as a
    /// drop of one block ([`Ending::read_error`]).
    Io(E),
    /// [`RecoveryMode::AbsoluteConsistency`] found damage.
    Damaged(Damage),
    /// [`LogReader::next`](crate::LogReader::next) completed a record that an earlier
    /// [`next_bounded`](crate::LogReader::next_bounded) call stopped assembling (it outgrew
    /// that call's limit): its data was not kept. Reading goes on after it.
    NotAssembled(Oversized),
}

impl<E: fmt::Display> fmt::Display for ReadError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(_) => f.write_str("reading the log failed"),
            Self::Damaged(damage) => write!(f, "the log is damaged: {damage}"),
            Self::NotAssembled(record) => write!(
                f,
                "the record at offset {} ({} bytes) was not assembled: it outgrew an earlier limit",
                record.offset, record.len
            ),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for ReadError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(e) => Some(e),
            Self::Damaged(d) => Some(d),
            Self::NotAssembled(_) => None,
        }
    }
}

/// How a [`LogReader`](crate::LogReader) stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Ending {
    /// It read to the end of the log, which ended so.
    Log(LogEnd),
    /// It read to the end of its [range](crate::LogReaderOptions::range): no later record starts
    /// before `offset`.
    RangeEnd {
        /// The range's end.
        offset: u64,
    },
    /// The recovery mode stopped it at this damage.
    Stopped(Damage),
    /// Reading failed: the log ends there. LevelDB reports it as a drop
    /// ([`read_error`](Self::read_error)).
    Failed {
        /// Where: the reader's [`position`](crate::LogReader::position) when it failed.
        offset: u64,
    },
}

impl Ending {
    /// The drop LevelDB reports for a failed read ([`Failed`](Self::Failed)): one block,
    /// [`BLOCK_SIZE`] bytes from where reading failed, for [`CorruptionKind::ReadError`]
    /// ("read error"). `None` for every other ending.
    ///
    /// ```
    /// use logfmt_std::advanced::{Corruption, CorruptionKind, Ending};
    ///
    /// let failed = Ending::Failed { offset: 65_536 };
    /// let dropped = Corruption::new(65_536, 32_768, CorruptionKind::ReadError);
    /// assert_eq!(failed.read_error(), Some(dropped));
    /// assert_eq!(Ending::RangeEnd { offset: 65_536 }.read_error(), None);
    /// ```
    pub const fn read_error(self) -> Option<Corruption> {
        match self {
            Self::Failed { offset } => Some(Corruption::new(
                offset,
                BLOCK_SIZE as u64,
                CorruptionKind::ReadError,
            )),
            _ => None,
        }
    }
}
