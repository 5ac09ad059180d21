//! Format constants and the record type registry.
//!
//! ```text
//! +---------------------- block: BLOCK_SIZE (32768) bytes ----------------------+
//! | chunk | chunk | ... | chunk | trailer (0..HEADER_SIZE-1 zero bytes)         |
//! +-----------------------------------------------------------------------------+
//!
//! legacy chunk (LevelDB):
//! +----------------+--------------+----------+-----------------+
//! | masked CRC u32 | length u16   | type u8  | payload         |
//! | little-endian  | little-endian|          | `length` bytes  |
//! +----------------+--------------+----------+-----------------+
//!   CRC-32C over type ‖ payload, masked (see [`crate::checksum::mask`])
//!
//! recyclable chunk (RocksDB / Pebble, types 5..=8):
//! +----------------+--------------+----------+----------------+---------+
//! | masked CRC u32 | length u16   | type u8  | log number u32 | payload |
//! +----------------+--------------+----------+----------------+---------+
//!   CRC-32C over type ‖ log number ‖ payload
//! ```

use core::ops::Range;

/// Whether the reader's and writers' hot paths are compiled in: inlined repeats of the general
/// path's commonest case (a `FULL` chunk inside a block), for speed. Bare-metal targets, where
/// flash is scarcer than cycles, take the general path for every record: the host tests run
/// the hot paths, the on-target tests (QEMU) the general one, against the same LevelDB vectors,
/// and the property tests compare `Reader` (hot path) with `FragmentReader` (general path).
pub(crate) const HOT_PATHS: bool = cfg!(not(target_os = "none"));

/// Size of a block: every log file is a sequence of blocks of this size (the last may be partial).
pub const BLOCK_SIZE: usize = 32 * 1024;

/// Size of a legacy (LevelDB) chunk header: checksum, length and type.
pub const HEADER_SIZE: usize = 4 + 2 + 1;

/// Size of a recyclable (RocksDB / Pebble) chunk header: the legacy header plus a log number.
pub const RECYCLABLE_HEADER_SIZE: usize = HEADER_SIZE + 4;

/// Largest payload a single legacy chunk can carry (a chunk never crosses a block boundary).
pub const MAX_CHUNK_PAYLOAD: usize = BLOCK_SIZE - HEADER_SIZE;

/// Byte range of the masked checksum within a header.
pub const CHECKSUM_FIELD: Range<usize> = 0..4;
/// Byte range of the payload length within a header.
pub const LENGTH_FIELD: Range<usize> = 4..6;
/// Index of the record type byte within a header.
pub const TYPE_FIELD: usize = 6;
/// Byte range of the log number within a recyclable header.
pub const LOG_NUMBER_FIELD: Range<usize> = 7..11;

/// The type of a flash log's resume marker: an empty chunk (7-byte legacy header) that a writer
/// reopening a flash log after a power cut writes where it resumes, at a flash-word boundary
/// after the torn write. Its bit 7 is set, so RocksDB's rule skips it as an ignorable type; a
/// reader of a flash image ([`ReadOptions::erased`](crate::ReadOptions::erased)) takes the bytes
/// between a chunk that is not well-formed and the marker for a torn write, not damage.
pub const RESUME_TYPE: u8 = 0xB1;

/// The type of a ring log's block header: the first chunk of every block of a flash log kept
/// as a ring (see [`ring`](crate::ring)), carrying the lap the block was written in and the
/// ring's geometry. An ignorable type (bit 7 set, 7-byte legacy header); a reader of a flash
/// image passes over it without ending the record in progress.
pub const RING_TYPE: u8 = 0xB0;

/// The type of a flash log's read cursor: a 5-byte chunk (7-byte legacy header) holding a
/// cursor's id and the number of the first record it has not delivered (see the flash
/// module and `FORMAT.md`). An ignorable type (bit 7 set); a reader of a flash image passes
/// over it.
pub const CURSOR_TYPE: u8 = 0xB2;

/// RocksDB's `kSetCompressionType` record (a 7-byte header, in any format): written first in a
/// write-ahead log whose records are compressed, its payload the codec as a fixed32 (7:
/// zstd). Each record after it is one compressed stream (a zstd frame), cut into ordinary
/// chunks; the checksums cover the compressed bytes.
pub const SET_COMPRESSION_TYPE: u8 = 9;

/// RocksDB's codec number for zstd (`kZSTD`), the only one its WAL compression takes.
pub const ZSTD_CODEC: u32 = 7;

/// The chunk types of the format, as numbered by LevelDB's `log_format.h` (1–4) and RocksDB's
/// recyclable extension (5–8), and logfmt's packs (`0x51`–`0x54`, see [`pack`](crate::pack)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
#[non_exhaustive]
pub enum RecordType {
    /// Type 0: reserved for preallocated (zeroed) file regions; never written.
    Zero = 0,
    /// A whole logical record in one chunk.
    Full = 1,
    /// The first fragment of a logical record.
    First = 2,
    /// An interior fragment of a logical record.
    Middle = 3,
    /// The last fragment of a logical record.
    Last = 4,
    /// Recyclable [`Full`](Self::Full) (11-byte header with a log number).
    RecyclableFull = 5,
    /// Recyclable [`First`](Self::First).
    RecyclableFirst = 6,
    /// Recyclable [`Middle`](Self::Middle).
    RecyclableMiddle = 7,
    /// Recyclable [`Last`](Self::Last).
    RecyclableLast = 8,
    /// A whole [pack](crate::pack) of records in one chunk (logfmt's type: 7-byte header, bit
    /// 7 clear, so that LevelDB's and RocksDB's readers report it as an unknown type rather
    /// than drop it silently).
    PackFull = 0x51,
    /// The first fragment of a pack.
    PackFirst = 0x52,
    /// An interior fragment of a pack.
    PackMiddle = 0x53,
    /// The last fragment of a pack.
    PackLast = 0x54,
}

impl RecordType {
    /// The type for a fragment at `position`, in the legacy or the recyclable numbering.
    #[must_use]
    pub const fn for_fragment(position: FragmentKind, recyclable: bool) -> Self {
        match (position, recyclable) {
            (FragmentKind::Full, false) => Self::Full,
            (FragmentKind::First, false) => Self::First,
            (FragmentKind::Middle, false) => Self::Middle,
            (FragmentKind::Last, false) => Self::Last,
            (FragmentKind::Full, true) => Self::RecyclableFull,
            (FragmentKind::First, true) => Self::RecyclableFirst,
            (FragmentKind::Middle, true) => Self::RecyclableMiddle,
            (FragmentKind::Last, true) => Self::RecyclableLast,
        }
    }

    /// The pack type for a fragment at `position`: a pack record is cut into chunks exactly as
    /// types 1–4 cut a record.
    #[must_use]
    pub const fn for_pack(position: FragmentKind) -> Self {
        match position {
            FragmentKind::Full => Self::PackFull,
            FragmentKind::First => Self::PackFirst,
            FragmentKind::Middle => Self::PackMiddle,
            FragmentKind::Last => Self::PackLast,
        }
    }

    /// Where a chunk of this type sits in its logical record, or `None` for [`Zero`](Self::Zero).
    #[must_use]
    pub const fn fragment_kind(self) -> Option<FragmentKind> {
        match self {
            Self::Zero => None,
            Self::Full | Self::RecyclableFull | Self::PackFull => Some(FragmentKind::Full),
            Self::First | Self::RecyclableFirst | Self::PackFirst => Some(FragmentKind::First),
            Self::Middle | Self::RecyclableMiddle | Self::PackMiddle => Some(FragmentKind::Middle),
            Self::Last | Self::RecyclableLast | Self::PackLast => Some(FragmentKind::Last),
        }
    }

    /// Whether chunks of this type carry a [pack](crate::pack) of records.
    #[must_use]
    pub const fn is_pack(self) -> bool {
        matches!(
            self,
            Self::PackFull | Self::PackFirst | Self::PackMiddle | Self::PackLast
        )
    }

    /// The type's name as tools print it: `FULL`, `FIRST`, `MIDDLE`, `LAST`, `RECYCLABLE_FULL`,
    /// `RECYCLABLE_FIRST`, `RECYCLABLE_MIDDLE`, `RECYCLABLE_LAST`, `PACK_FULL`, `PACK_FIRST`,
    /// `PACK_MIDDLE`, `PACK_LAST`, `ZERO`.
    ///
    /// ```
    /// use logfmt_core::parts::RecordType;
    ///
    /// assert_eq!(RecordType::try_from(6).map(RecordType::name), Ok("RECYCLABLE_FIRST"));
    /// ```
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Zero => "ZERO",
            Self::Full => "FULL",
            Self::First => "FIRST",
            Self::Middle => "MIDDLE",
            Self::Last => "LAST",
            Self::RecyclableFull => "RECYCLABLE_FULL",
            Self::RecyclableFirst => "RECYCLABLE_FIRST",
            Self::RecyclableMiddle => "RECYCLABLE_MIDDLE",
            Self::RecyclableLast => "RECYCLABLE_LAST",
            Self::PackFull => "PACK_FULL",
            Self::PackFirst => "PACK_FIRST",
            Self::PackMiddle => "PACK_MIDDLE",
            Self::PackLast => "PACK_LAST",
        }
    }

    /// Whether chunks of this type carry the 11-byte recyclable header.
    #[must_use]
    pub const fn is_recyclable(self) -> bool {
        matches!(
            self,
            Self::RecyclableFull
                | Self::RecyclableFirst
                | Self::RecyclableMiddle
                | Self::RecyclableLast
        )
    }
}

impl TryFrom<u8> for RecordType {
    type Error = u8;

    /// Maps a type byte to a known type; hands the byte back if it is not one.
    fn try_from(value: u8) -> Result<Self, u8> {
        Ok(match value {
            0 => Self::Zero,
            1 => Self::Full,
            2 => Self::First,
            3 => Self::Middle,
            4 => Self::Last,
            5 => Self::RecyclableFull,
            6 => Self::RecyclableFirst,
            7 => Self::RecyclableMiddle,
            8 => Self::RecyclableLast,
            0x51 => Self::PackFull,
            0x52 => Self::PackFirst,
            0x53 => Self::PackMiddle,
            0x54 => Self::PackLast,
            other => return Err(other),
        })
    }
}

/// Where a fragment (one chunk's payload) sits in its logical record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum FragmentKind {
    /// The whole record.
    Full,
    /// The first fragment; more follow.
    First,
    /// An interior fragment.
    Middle,
    /// The last fragment; the record is complete.
    Last,
}

impl FragmentKind {
    /// Whether a record starts with this fragment.
    #[must_use]
    pub const fn starts_record(self) -> bool {
        matches!(self, Self::Full | Self::First)
    }

    /// Whether a record is complete after this fragment.
    #[must_use]
    pub const fn ends_record(self) -> bool {
        matches!(self, Self::Full | Self::Last)
    }
}

/// Which chunk header a log uses. Legacy and recyclable chunks never mix in one log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Format {
    /// LevelDB's 7-byte header, types 1–4.
    #[default]
    Legacy,
    /// RocksDB's and Pebble's 11-byte header, types 5–8, stamped with the low 32 bits of the log
    /// file's number so that chunks left over from an earlier use of the file are recognised.
    Recyclable {
        /// The log number written into (or expected in) every chunk.
        log_number: u32,
    },
}

impl Format {
    /// The header size of this format's chunks.
    #[must_use]
    pub const fn header_size(self) -> usize {
        match self {
            Self::Legacy => HEADER_SIZE,
            Self::Recyclable { .. } => RECYCLABLE_HEADER_SIZE,
        }
    }

    /// The largest payload one chunk of this format can carry.
    #[must_use]
    pub const fn max_chunk_payload(self) -> usize {
        BLOCK_SIZE - self.header_size()
    }

    /// The log number recyclable chunks carry, if this is the recyclable format.
    #[must_use]
    pub const fn log_number(self) -> Option<u32> {
        match self {
            Self::Legacy => None,
            Self::Recyclable { log_number } => Some(log_number),
        }
    }
}

/// The chunk format as a reader knows it: decided, or (reading with
/// [`ReadFormat::Auto`](crate::ReadFormat::Auto)) to be decided by the first chunk of a known
/// type. Readers expose it once they have read ([`FragmentReader::format`]).
///
/// [`FragmentReader::format`]: crate::FragmentReader::format
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ChunkFormat {
    /// Not known yet: the first chunk of a known fragment type decides. Until then, types 5–8
    /// are read with the recyclable header.
    Undecided {
        /// The log number recyclable chunks must carry, if known in advance.
        log_number: Option<u32>,
    },
    /// Known.
    Decided(Format),
}

impl ChunkFormat {
    /// The log number chunks must carry, if any: that of a recyclable format, or the one an
    /// undecided format was given.
    #[must_use]
    pub const fn log_number(self) -> Option<u32> {
        match self {
            Self::Undecided { log_number } => log_number,
            Self::Decided(format) => format.log_number(),
        }
    }

    /// Whether types 5–8 are read with the 11-byte recyclable header: in a recyclable log, and
    /// while the format is undecided.
    #[must_use]
    pub const fn reads_recyclable_headers(self) -> bool {
        !matches!(self, Self::Decided(Format::Legacy))
    }
}
