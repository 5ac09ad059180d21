//! Write-ahead log dialects: which chunk types a writer writes and what it means by them.
//!
//! LevelDB, RocksDB and Pebble agree on types 1–4 and (RocksDB and Pebble) on 5–8, and
//! disagree above: type 9 is RocksDB's compression record but a Pebble WAL-sync `FULL` chunk
//! (19-byte header), 10 and 11 RocksDB's timestamp-size records but Pebble's WAL-sync `FIRST`
//! and `MIDDLE`. A reader must know whose log it reads ([`Dialect`]); [`Dialect::meaning`] is
//! the one table of what each type byte means to each writer, and [`DialectScan`] weighs what
//! a log shows to tell the dialect from the file.
//!
//! ```text
//! WAL-sync chunk (Pebble, types 9..=12):
//! +----------------+------------+---------+----------------+--------------------+---------+
//! | masked CRC u32 | length u16 | type u8 | log number u32 | synced offset u64  | payload |
//! +----------------+------------+---------+----------------+--------------------+---------+
//!   CRC-32C over type ‖ log number ‖ synced offset ‖ payload
//! ```

use crate::checksum;
use crate::format::{
    BLOCK_SIZE, CHECKSUM_FIELD, FragmentKind, HEADER_SIZE, LENGTH_FIELD, LOG_NUMBER_FIELD,
    RECYCLABLE_HEADER_SIZE, TYPE_FIELD,
};

/// Size of a Pebble WAL-sync chunk header: the recyclable header plus the synced offset.
pub const WAL_SYNC_HEADER_SIZE: usize = RECYCLABLE_HEADER_SIZE + 8;

/// Byte range of the synced offset within a WAL-sync header.
pub const SYNCED_OFFSET_FIELD: core::ops::Range<usize> = 11..19;

/// RocksDB's `kUserDefinedTimestampSizeType` (7-byte header): the timestamp size of each
/// column family whose user keys end in a timestamp, for the write batches after it.
pub const TIMESTAMP_SIZE_TYPE: u8 = 10;
/// RocksDB's `kRecyclableUserDefinedTimestampSizeType` (11-byte header).
pub const RECYCLABLE_TIMESTAMP_SIZE_TYPE: u8 = 11;
/// RocksDB's `kPredecessorWALInfoType` (7-byte header): the log number, size and last
/// sequence number of the WAL before this one.
pub const PREDECESSOR_WAL_TYPE: u8 = 130;
/// RocksDB's `kRecyclePredecessorWALInfoType` (11-byte header).
pub const RECYCLABLE_PREDECESSOR_WAL_TYPE: u8 = 131;
/// RocksDB's `kRecordTypeSafeIgnoreMask`: a type with this bit set that a reader does not
/// know may be skipped without a report.
pub const SAFE_IGNORE_MASK: u8 = 0x80;

/// Whose write-ahead log a reader reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Dialect {
    /// logfmt's own reading, the default: LevelDB's types 1–4, RocksDB's recyclable 5–8 and
    /// compression record 9, logfmt's packs (`0x51`–`0x54`) and flash types (`0xB0`–`0xB2`);
    /// RocksDB's other metadata types are unknown types.
    #[default]
    Logfmt,
    /// Google's LevelDB: types 1–4; every other type is unknown (reported).
    LevelDb,
    /// RocksDB (up to 10): 1–4, recyclable 5–8, compression record 9, timestamp-size records
    /// 10 and 11, predecessor-WAL records 130 and 131; an unknown type with bit 7 set is
    /// skipped without a report.
    RocksDb,
    /// CockroachDB's Pebble: 1–4, recyclable 5–8, WAL-sync chunks 9–12 (19-byte header with
    /// the offset known synced when the chunk was written); every other type is invalid.
    Pebble,
}

/// Which header a chunk of some type carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum HeaderKind {
    /// LevelDB's 7 bytes: checksum, length, type.
    Legacy,
    /// 11 bytes: the legacy header and a log number (RocksDB and Pebble).
    Recyclable,
    /// 19 bytes: the recyclable header and a synced offset (Pebble's WAL-sync chunks).
    WalSync,
}

impl HeaderKind {
    /// The header's size in bytes.
    ///
    /// ```
    /// use logfmt_core::parts::dialect::HeaderKind;
    /// assert_eq!(HeaderKind::WalSync.len(), 19);
    /// ```
    #[must_use]
    #[allow(clippy::len_without_is_empty)]
    pub const fn len(self) -> usize {
        match self {
            Self::Legacy => HEADER_SIZE,
            Self::Recyclable => RECYCLABLE_HEADER_SIZE,
            Self::WalSync => WAL_SYNC_HEADER_SIZE,
        }
    }

    /// Whether the header carries a log number.
    #[must_use]
    pub const fn has_log_number(self) -> bool {
        !matches!(self, Self::Legacy)
    }
}

/// What a type byte means to a dialect's writer ([`Dialect::meaning`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Meaning {
    /// Type 0: preallocated, zeroed space; never written.
    Zero,
    /// A fragment of a logical record.
    Fragment {
        /// Where it sits in its record.
        kind: FragmentKind,
        /// Its header.
        header: HeaderKind,
    },
    /// RocksDB's compression record (type 9).
    SetCompression,
    /// RocksDB's timestamp-size record (types 10 and 11).
    TimestampSizes {
        /// Its header.
        header: HeaderKind,
    },
    /// RocksDB's predecessor-WAL record (types 130 and 131).
    PredecessorWal {
        /// Its header.
        header: HeaderKind,
    },
    /// logfmt's own types (packs, flash types): left to the reader's options.
    Logfmt,
    /// A type this dialect's writer never writes.
    Unknown,
}

impl Meaning {
    /// The header a chunk of this meaning carries (legacy for every type a dialect does not
    /// know: its readers frame them so).
    #[must_use]
    pub const fn header(self) -> HeaderKind {
        match self {
            Self::Fragment { header, .. }
            | Self::TimestampSizes { header }
            | Self::PredecessorWal { header } => header,
            _ => HeaderKind::Legacy,
        }
    }
}

const fn position(t: u8) -> FragmentKind {
    match t % 4 {
        1 => FragmentKind::Full,
        2 => FragmentKind::First,
        3 => FragmentKind::Middle,
        _ => FragmentKind::Last,
    }
}

impl Dialect {
    /// Every dialect, in the order tools list them.
    pub const ALL: [Self; 4] = [Self::LevelDb, Self::RocksDb, Self::Pebble, Self::Logfmt];

    /// The dialect's name as tools print it: `leveldb`, `rocksdb`, `pebble`, `logfmt`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Logfmt => "logfmt",
            Self::LevelDb => "leveldb",
            Self::RocksDb => "rocksdb",
            Self::Pebble => "pebble",
        }
    }

    /// What type byte `t` means to this dialect's writer.
    ///
    /// ```
    /// use logfmt_core::parts::FragmentKind;
    /// use logfmt_core::parts::dialect::{Dialect, HeaderKind, Meaning};
    ///
    /// assert_eq!(Dialect::RocksDb.meaning(9), Meaning::SetCompression);
    /// assert_eq!(
    ///     Dialect::Pebble.meaning(9),
    ///     Meaning::Fragment { kind: FragmentKind::Full, header: HeaderKind::WalSync }
    /// );
    /// assert_eq!(Dialect::LevelDb.meaning(5), Meaning::Unknown);
    /// ```
    #[must_use]
    pub const fn meaning(self, t: u8) -> Meaning {
        let legacy = HeaderKind::Legacy;
        let recyclable = HeaderKind::Recyclable;
        match (self, t) {
            (_, 0) => Meaning::Zero,
            (_, 1..=4) => Meaning::Fragment {
                kind: position(t),
                header: legacy,
            },
            (Self::LevelDb, _) => Meaning::Unknown,
            (_, 5..=8) => Meaning::Fragment {
                kind: position(t),
                header: recyclable,
            },
            (Self::Pebble, 9..=12) => Meaning::Fragment {
                kind: position(t),
                header: HeaderKind::WalSync,
            },
            (Self::Pebble, _) => Meaning::Unknown,
            (_, 9) => Meaning::SetCompression,
            (Self::RocksDb, TIMESTAMP_SIZE_TYPE) => Meaning::TimestampSizes { header: legacy },
            (Self::RocksDb, PREDECESSOR_WAL_TYPE) => Meaning::PredecessorWal { header: legacy },
            (Self::RocksDb, RECYCLABLE_TIMESTAMP_SIZE_TYPE) => {
                Meaning::TimestampSizes { header: recyclable }
            }
            (Self::RocksDb, RECYCLABLE_PREDECESSOR_WAL_TYPE) => {
                Meaning::PredecessorWal { header: recyclable }
            }
            (Self::Logfmt, 0x51..=0x54 | 0xB0..=0xB2) => Meaning::Logfmt,
            _ => Meaning::Unknown,
        }
    }

    /// The header a chunk of type `t` is read with, when recyclable headers are read at all
    /// (`recyclable`: not in a log known to be legacy). LevelDB reads every chunk with 7
    /// bytes; RocksDB (and logfmt) read types 5–8, 11 and 131 with 11 in a recyclable log;
    /// Pebble reads each type with its own header, always.
    ///
    /// ```
    /// use logfmt_core::parts::dialect::{Dialect, HeaderKind};
    ///
    /// assert_eq!(Dialect::RocksDb.header(11, true), HeaderKind::Recyclable);
    /// assert_eq!(Dialect::RocksDb.header(6, false), HeaderKind::Legacy);
    /// assert_eq!(Dialect::Pebble.header(11, false), HeaderKind::WalSync);
    /// assert_eq!(Dialect::Logfmt.header(131, true), HeaderKind::Recyclable);
    /// ```
    #[must_use]
    pub const fn header(self, t: u8, recyclable: bool) -> HeaderKind {
        match self {
            Self::LevelDb => HeaderKind::Legacy,
            Self::Pebble => self.meaning(t).header(),
            Self::RocksDb | Self::Logfmt => {
                if recyclable
                    && matches!(
                        t,
                        5..=8 | RECYCLABLE_TIMESTAMP_SIZE_TYPE | RECYCLABLE_PREDECESSOR_WAL_TYPE
                    )
                {
                    HeaderKind::Recyclable
                } else {
                    HeaderKind::Legacy
                }
            }
        }
    }

    /// The name of type `t` as this dialect's writer means it, as tools print it: `FULL`,
    /// `RECYCLABLE_FIRST`, `WAL_SYNC_LAST`, `SET_COMPRESSION`, `TIMESTAMP_SIZE`,
    /// `RECYCLABLE_PREDECESSOR_WAL`, `PACK_FULL`, `ZERO`, or `unknown`.
    ///
    /// ```
    /// use logfmt_core::parts::Dialect;
    ///
    /// assert_eq!(Dialect::Pebble.type_name(9), "WAL_SYNC_FULL");
    /// assert_eq!(Dialect::RocksDb.type_name(9), "SET_COMPRESSION");
    /// assert_eq!(Dialect::LevelDb.type_name(9), "unknown");
    /// ```
    #[must_use]
    pub fn type_name(self, t: u8) -> &'static str {
        const FRAGMENTS: [[&str; 4]; 3] = [
            ["FULL", "FIRST", "MIDDLE", "LAST"],
            [
                "RECYCLABLE_FULL",
                "RECYCLABLE_FIRST",
                "RECYCLABLE_MIDDLE",
                "RECYCLABLE_LAST",
            ],
            [
                "WAL_SYNC_FULL",
                "WAL_SYNC_FIRST",
                "WAL_SYNC_MIDDLE",
                "WAL_SYNC_LAST",
            ],
        ];
        let recyclable = |h: HeaderKind| h != HeaderKind::Legacy;
        match self.meaning(t) {
            Meaning::Zero => "ZERO",
            Meaning::Fragment { kind, header } => {
                let row = match header {
                    HeaderKind::Legacy => 0,
                    HeaderKind::Recyclable => 1,
                    HeaderKind::WalSync => 2,
                };
                let column = match kind {
                    FragmentKind::Full => 0,
                    FragmentKind::First => 1,
                    FragmentKind::Middle => 2,
                    FragmentKind::Last => 3,
                };
                FRAGMENTS[row][column]
            }
            Meaning::SetCompression => "SET_COMPRESSION",
            Meaning::TimestampSizes { header } if recyclable(header) => "RECYCLABLE_TIMESTAMP_SIZE",
            Meaning::TimestampSizes { .. } => "TIMESTAMP_SIZE",
            Meaning::PredecessorWal { header } if recyclable(header) => {
                "RECYCLABLE_PREDECESSOR_WAL"
            }
            Meaning::PredecessorWal { .. } => "PREDECESSOR_WAL",
            Meaning::Logfmt => {
                crate::format::RecordType::try_from(t).map_or("unknown", |r| r.name())
            }
            Meaning::Unknown => "unknown",
        }
    }

    /// Whether an unknown type with bit 7 set is skipped without a report (RocksDB's rule).
    #[must_use]
    pub const fn skips_ignorable_types(self) -> bool {
        matches!(self, Self::RocksDb)
    }
}

impl core::fmt::Display for Dialect {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// The pairs of a RocksDB timestamp-size record's payload: `(column family id, timestamp
/// size)`, each a fixed32 and a fixed16, little-endian.
///
/// ```
/// use logfmt_core::parts::dialect::TimestampSizes;
///
/// let payload = [0, 0, 0, 0, 8, 0, 3, 0, 0, 0, 16, 0];
/// let sizes: Vec<_> = TimestampSizes::parse(&payload).expect("well-formed").collect();
/// assert_eq!(sizes, [(0, 8), (3, 16)]);
/// // RocksDB's rules: a whole number of pairs, at least one, no size 0.
/// assert!(TimestampSizes::parse(&payload[..7]).is_none());
/// assert!(TimestampSizes::parse(&[0, 0, 0, 0, 0, 0]).is_none());
/// ```
#[derive(Debug, Clone)]
pub struct TimestampSizes<'a> {
    rest: &'a [u8],
}

impl<'a> TimestampSizes<'a> {
    /// The pairs of `payload`, if it is well-formed as RocksDB requires (a non-empty multiple
    /// of 6 bytes, no size 0).
    #[must_use]
    pub fn parse(payload: &'a [u8]) -> Option<Self> {
        let ok = !payload.is_empty()
            && payload.len().is_multiple_of(6)
            && payload.chunks_exact(6).all(|p| p[4] != 0 || p[5] != 0);
        ok.then_some(Self { rest: payload })
    }
}

impl Iterator for TimestampSizes<'_> {
    type Item = (u32, u16);

    fn next(&mut self) -> Option<(u32, u16)> {
        let (pair, rest) = self.rest.split_first_chunk::<6>()?;
        self.rest = rest;
        Some((
            u32::from_le_bytes([pair[0], pair[1], pair[2], pair[3]]),
            u16::from_le_bytes([pair[4], pair[5]]),
        ))
    }
}

/// A RocksDB predecessor-WAL record: the WAL this one follows, as RocksDB recorded it (three
/// fixed64 little-endian).
///
/// ```
/// use logfmt_core::parts::dialect::PredecessorWal;
///
/// let mut payload = [0u8; 24];
/// payload[0] = 41;
/// payload[8] = 200;
/// payload[16] = 99;
/// let p = PredecessorWal::parse(&payload).expect("24 bytes");
/// assert_eq!((p.log_number, p.size, p.last_sequence), (41, 200, 99));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct PredecessorWal {
    /// The predecessor's log number.
    pub log_number: u64,
    /// Its size in bytes.
    pub size: u64,
    /// The last sequence number written to it.
    pub last_sequence: u64,
}

impl PredecessorWal {
    /// Parses a 24-byte payload.
    #[must_use]
    pub fn parse(payload: &[u8]) -> Option<Self> {
        let bytes: &[u8; 24] = payload.try_into().ok()?;
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[i * 8..i * 8 + 8]);
            u64::from_le_bytes(w)
        };
        Some(Self {
            log_number: word(0),
            size: word(1),
            last_sequence: word(2),
        })
    }
}

impl core::fmt::Display for PredecessorWal {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "log {}, {} bytes, last sequence number {}",
            self.log_number, self.size, self.last_sequence
        )
    }
}

/// A set of dialects (the ones a log's chunks are consistent with).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Dialects(u8);

impl Dialects {
    /// No dialect.
    pub const NONE: Self = Self(0);
    /// LevelDB, RocksDB and Pebble (logfmt reads what they all read).
    pub const WRITERS: Self = Self(0b0111);

    const fn bit(d: Dialect) -> u8 {
        match d {
            Dialect::LevelDb => 1,
            Dialect::RocksDb => 2,
            Dialect::Pebble => 4,
            Dialect::Logfmt => 8,
        }
    }

    /// The set holding only `d`.
    #[must_use]
    pub const fn only(d: Dialect) -> Self {
        Self(Self::bit(d))
    }

    /// Whether `d` is in the set.
    #[must_use]
    pub const fn contains(self, d: Dialect) -> bool {
        self.0 & Self::bit(d) != 0
    }

    /// The dialects in both sets.
    #[must_use]
    pub const fn and(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }

    /// The set with `d` added.
    #[must_use]
    pub const fn with(self, d: Dialect) -> Self {
        Self(self.0 | Self::bit(d))
    }

    /// How many dialects the set holds.
    #[must_use]
    pub const fn len(self) -> u32 {
        self.0.count_ones()
    }

    /// Whether the set is empty.
    #[must_use]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The dialects of the set, in [`Dialect::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = Dialect> {
        Dialect::ALL.into_iter().filter(move |d| self.contains(*d))
    }
}

/// A chunk seen by [`DialectScan`]: a well-formed chunk under some dialect's framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Seen {
    /// File offset of its header.
    pub offset: u64,
    /// Its type byte.
    pub record_type: u8,
    /// The header it was read with (the one its checksum holds for).
    pub header: HeaderKind,
    /// The log number of a recyclable or WAL-sync chunk.
    pub log_number: Option<u32>,
    /// The synced offset of a WAL-sync chunk.
    pub synced_offset: Option<u64>,
    /// Payload length.
    pub len: usize,
}

/// Reads a chunk header at `at` of `block` as the header `kind`: the chunk if the header fits,
/// the payload fits in the block and (for a nonzero checksum) the checksum holds.
fn framed(block: &[u8], at: usize, kind: HeaderKind) -> Option<(Seen, usize)> {
    let header_len = kind.len();
    let rest = block.get(at..)?;
    let header = rest.get(..header_len)?;
    let len = usize::from(u16::from_le_bytes([
        header[LENGTH_FIELD.start],
        header[LENGTH_FIELD.start + 1],
    ]));
    let end = header_len.checked_add(len)?;
    let covered = rest.get(TYPE_FIELD..end)?;
    let mut stored = [0u8; 4];
    stored.copy_from_slice(&header[CHECKSUM_FIELD]);
    if checksum::mask(checksum::crc32c(covered)) != u32::from_le_bytes(stored) {
        return None;
    }
    let word = |r: core::ops::Range<usize>| header.get(r);
    let log_number = kind
        .has_log_number()
        .then(|| word(LOG_NUMBER_FIELD))
        .flatten()
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let synced_offset = matches!(kind, HeaderKind::WalSync)
        .then(|| word(SYNCED_OFFSET_FIELD))
        .flatten()
        .map(|b| u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]));
    Some((
        Seen {
            offset: at as u64,
            record_type: header[TYPE_FIELD],
            header: kind,
            log_number,
            synced_offset,
            len,
        },
        at + end,
    ))
}

/// Which dialects read chunk `seen` as its writer meant it: those whose meaning of its type
/// has the header its checksum holds for.
fn readers_of(seen: &Seen) -> Dialects {
    let mut set = Dialects::NONE;
    for d in [Dialect::LevelDb, Dialect::RocksDb, Dialect::Pebble] {
        let meaning = d.meaning(seen.record_type);
        let known = !matches!(meaning, Meaning::Unknown | Meaning::Zero);
        if known && meaning.header() == seen.header {
            set = set.with(d);
        }
    }
    set
}

/// What a log's chunks show about its writer, gathered block by block
/// ([`observe`](Self::observe)) and weighed by [`verdict`](Self::verdict).
///
/// Each block is walked from its start: at each chunk the headers of the three writers are
/// tried (7, 11 and 19 bytes) and the one whose checksum holds frames the chunk; the walk stops
/// at the first place none does (a trailer, zeros, damage).
///
/// ```
/// use logfmt_core::parts::dialect::{Dialect, DialectScan, Evidence};
///
/// // RocksDB's compression record, as RocksDB writes it first in a compressed WAL.
/// let block = [0xe1, 0x2c, 0x08, 0xf8, 0x04, 0x00, 0x09, 0x07, 0x00, 0x00, 0x00];
/// let mut scan = DialectScan::new();
/// scan.observe(&block, 0);
/// assert_eq!(scan.verdict(), Ok(Dialect::RocksDb));
/// assert_eq!(scan.evidence().compression_record, Some(0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DialectScan {
    evidence: Evidence,
}

/// What [`DialectScan`] saw: the chunks that tell one writer from another, by the offset of
/// the first of each kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Evidence {
    /// The dialects every chunk seen is read by as its writer meant it.
    pub consistent: Dialects,
    /// Whether any chunk was seen.
    pub chunks: u64,
    /// The first legacy fragment (types 1–4).
    pub legacy_chunk: Option<u64>,
    /// The first recyclable fragment (types 5–8), and its log number.
    pub recyclable_chunk: Option<(u64, u32)>,
    /// The first Pebble WAL-sync chunk (types 9–12, 19-byte header).
    pub wal_sync_chunk: Option<u64>,
    /// RocksDB's compression record (type 9, 7-byte header).
    pub compression_record: Option<u64>,
    /// RocksDB's timestamp-size record (types 10, 11).
    pub timestamp_size_record: Option<u64>,
    /// RocksDB's predecessor-WAL record (types 130, 131).
    pub predecessor_wal_record: Option<u64>,
    /// Pebble's EOF trailer: an empty recyclable `FULL` chunk with a zero checksum and the log
    /// number after the log's own, which Pebble writes when it closes a log.
    pub pebble_eof_trailer: Option<u64>,
    /// The first chunk of a type no writer's framing reads (its checksum holds with a 7-byte
    /// header, as an unknown type).
    pub unknown_type: Option<(u64, u8)>,
}

impl DialectScan {
    /// An empty scan.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            evidence: Evidence {
                consistent: Dialects::WRITERS,
                chunks: 0,
                legacy_chunk: None,
                recyclable_chunk: None,
                wal_sync_chunk: None,
                compression_record: None,
                timestamp_size_record: None,
                predecessor_wal_record: None,
                pebble_eof_trailer: None,
                unknown_type: None,
            },
        }
    }

    /// Walks the chunks of `block` (at most [`BLOCK_SIZE`] bytes), which begins at file offset
    /// `block_offset`.
    pub fn observe(&mut self, block: &[u8], block_offset: u64) {
        let block = block.get(..BLOCK_SIZE).unwrap_or(block);
        let e = &mut self.evidence;
        let mut at = 0;
        while let Some(header) = block.get(at..at + HEADER_SIZE) {
            let t = header[TYPE_FIELD];
            let file = block_offset + at as u64;
            // Pebble's EOF trailer: checksum 0, length 0, type 5, the next log number.
            if header[..6] == [0; 6] && t == 5 {
                let number = block
                    .get(at + 7..at + 11)
                    .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                let expected = e.recyclable_chunk.map(|(_, n)| n.wrapping_add(1));
                if number.is_some() && (expected.is_none() || number == expected) {
                    e.pebble_eof_trailer.get_or_insert(file);
                }
                break;
            }
            let found = [
                HeaderKind::WalSync,
                HeaderKind::Recyclable,
                HeaderKind::Legacy,
            ]
            .into_iter()
            .find_map(|kind| framed(block, at, kind));
            let Some((mut seen, next)) = found else {
                break;
            };
            if t == 0 {
                break;
            }
            seen.offset = file;
            e.chunks += 1;
            let readers = readers_of(&seen);
            match (t, seen.header) {
                (1..=4, _) => {
                    e.legacy_chunk.get_or_insert(file);
                }
                (5..=8, HeaderKind::Recyclable) => {
                    e.recyclable_chunk
                        .get_or_insert((file, seen.log_number.unwrap_or_default()));
                }
                (9..=12, HeaderKind::WalSync) => {
                    e.wal_sync_chunk.get_or_insert(file);
                }
                (9, HeaderKind::Legacy) => {
                    e.compression_record.get_or_insert(file);
                }
                (10 | 11, _) => {
                    e.timestamp_size_record.get_or_insert(file);
                }
                (130 | 131, _) => {
                    e.predecessor_wal_record.get_or_insert(file);
                }
                _ => {
                    e.unknown_type.get_or_insert((file, t));
                }
            }
            // A type no writer reads tells nothing of the writer (logfmt's own types, RocksDB's
            // ignorable ones, damage that happens to checksum).
            if !readers.is_empty() {
                e.consistent = e.consistent.and(readers);
            }
            at = next;
        }
    }

    /// What was seen.
    #[must_use]
    pub const fn evidence(&self) -> Evidence {
        self.evidence
    }

    /// The dialect the log shows, if exactly one reads it as its writer meant it and the
    /// chunks tell: Pebble's WAL-sync chunks or EOF trailer make it Pebble's; RocksDB's
    /// metadata records (compression, timestamp sizes, predecessor WAL) RocksDB's. Otherwise
    /// the dialects it is consistent with (`Err`): every writer for a log of types 1–4,
    /// RocksDB and Pebble for one of recyclable chunks alone (read alike), none for a log whose
    /// chunks contradict each other (or no chunk at all).
    ///
    /// # Errors
    /// The candidates, when the evidence does not single out one dialect.
    pub fn verdict(&self) -> Result<Dialect, Dialects> {
        let e = &self.evidence;
        let mut set = e.consistent;
        if e.chunks == 0 && e.pebble_eof_trailer.is_none() {
            return Err(Dialects::NONE);
        }
        if e.pebble_eof_trailer.is_some() && set.contains(Dialect::Pebble) {
            set = Dialects::only(Dialect::Pebble);
        }
        let told = e.wal_sync_chunk.is_some()
            || e.compression_record.is_some()
            || e.timestamp_size_record.is_some()
            || e.predecessor_wal_record.is_some()
            || e.pebble_eof_trailer.is_some();
        match set.iter().next() {
            Some(d) if set.len() == 1 && told => Ok(d),
            _ => Err(set),
        }
    }
}

/// Pebble's read-ahead for corruption, in one block: the first WAL-sync chunk of `block`
/// (a block of the same log after the one where reading stopped) whose synced offset is past
/// `invalid_offset`, walking the block's chunks from its start as Pebble does and stopping at
/// the first that is not well-formed (or carries another log number than `log_number`).
/// `Some((chunk offset in the block, synced offset))` proves that the bytes at
/// `invalid_offset` were once synced: the log is damaged there, not torn.
///
/// ```
/// use logfmt_core::parts::dialect::synced_past;
///
/// // No chunk: nothing proves anything.
/// assert_eq!(synced_past(&[0u8; 40], 100, 1), None);
/// ```
#[must_use]
pub fn synced_past(block: &[u8], invalid_offset: u64, log_number: u32) -> Option<(usize, u64)> {
    let block = block.get(..BLOCK_SIZE).unwrap_or(block);
    let mut at = 0;
    while let Some(header) = block.get(at..at + HEADER_SIZE) {
        let t = header[TYPE_FIELD];
        let kind = match Dialect::Pebble.meaning(t) {
            Meaning::Fragment { header, .. } => header,
            _ => return None,
        };
        let (seen, next) = framed(block, at, kind)?;
        if seen.log_number.is_some_and(|n| n != log_number) {
            return None;
        }
        if let Some(synced) = seen.synced_offset
            && synced > invalid_offset
        {
            return Some((at, synced));
        }
        at = next;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(t: u8, log: u32, synced: Option<u64>, payload: &[u8]) -> std::vec::Vec<u8> {
        let mut out = std::vec![0u8; 7];
        out[4..6].copy_from_slice(&(payload.len() as u16).to_le_bytes());
        out[6] = t;
        if (5..=12).contains(&t) {
            out.extend_from_slice(&log.to_le_bytes());
        }
        if let Some(s) = synced {
            out.extend_from_slice(&s.to_le_bytes());
        }
        out.extend_from_slice(payload);
        let crc = checksum::mask(checksum::crc32c(&out[6..]));
        out[..4].copy_from_slice(&crc.to_le_bytes());
        out
    }

    #[test]
    fn every_type_means_one_thing_per_dialect() {
        for t in 0..=255u8 {
            for d in Dialect::ALL {
                let m = d.meaning(t);
                if let Meaning::Fragment { header, .. } = m {
                    assert!((1..=12).contains(&t), "{d} {t}");
                    assert_eq!(
                        header == HeaderKind::WalSync,
                        d == Dialect::Pebble && t >= 9
                    );
                }
            }
            assert!(matches!(
                Dialect::LevelDb.meaning(t),
                Meaning::Zero | Meaning::Fragment { .. } | Meaning::Unknown
            ));
        }
    }

    #[test]
    fn scan_tells_pebble_by_wal_sync_chunks() {
        let mut log = chunk(9, 7, Some(0), b"hello");
        let second = log.len() as u64;
        log.extend(chunk(9, 7, Some(second), b"world"));
        let mut scan = DialectScan::new();
        scan.observe(&log, 0);
        assert_eq!(scan.verdict(), Ok(Dialect::Pebble));
        assert_eq!(scan.evidence().wal_sync_chunk, Some(0));
        assert_eq!(scan.evidence().chunks, 2);
    }

    #[test]
    fn recyclable_chunks_alone_are_ambiguous_until_an_eof_trailer() {
        let mut log = chunk(5, 3, None, b"x");
        let mut scan = DialectScan::new();
        scan.observe(&log, 0);
        assert_eq!(
            scan.verdict(),
            Err(Dialects::only(Dialect::RocksDb).with(Dialect::Pebble))
        );
        log.extend_from_slice(&[0, 0, 0, 0, 0, 0, 5, 4, 0, 0, 0]);
        let mut scan = DialectScan::new();
        scan.observe(&log, 0);
        assert_eq!(scan.verdict(), Ok(Dialect::Pebble));
    }

    #[test]
    fn legacy_chunks_alone_do_not_tell() {
        let log = chunk(1, 0, None, b"foo");
        assert_eq!(log[..4], [0xdd, 0x5f, 0xb3, 0x7a]);
        let mut scan = DialectScan::new();
        scan.observe(&log, 0);
        assert_eq!(scan.verdict(), Err(Dialects::WRITERS));
    }

    #[test]
    fn synced_offsets_past_the_damage_prove_it() {
        let mut block = chunk(9, 7, Some(10), b"a");
        block.extend(chunk(9, 7, Some(500), b"b"));
        assert_eq!(synced_past(&block, 400, 7), Some((20, 500)));
        assert_eq!(synced_past(&block, 500, 7), None);
        // Another log's chunks prove nothing.
        assert_eq!(synced_past(&block, 400, 8), None);
    }
}
