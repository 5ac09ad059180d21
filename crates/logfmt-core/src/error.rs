//! Corruption reports and errors.

use core::fmt;

/// Why bytes were dropped while reading a log.
///
/// The [`Display`](fmt::Display) text of each kind is the reason LevelDB's `log::Reader` reports
/// (`db/log_reader.cc`), so reports can be compared with LevelDB's word for word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum CorruptionKind {
    /// A chunk's checksum does not match its contents; the rest of the block is dropped
    /// ("checksum mismatch").
    ChecksumMismatch,
    /// A chunk's length runs past the end of a complete block; the rest of the block is dropped
    /// ("bad record length").
    BadRecordLength,
    /// A chunk with a valid checksum but a type this reader does not know
    /// ("unknown record type N"). Type 0 with a non-zero length is reported this way too.
    UnknownRecordType(u8),
    /// A record was in progress when a `FULL` chunk arrived ("partial record without end(1)").
    PartialRecordBeforeFull,
    /// A record was in progress when a `FIRST` chunk arrived ("partial record without end(2)").
    PartialRecordBeforeFirst,
    /// A `MIDDLE` chunk without a record in progress ("missing start of fragmented record(1)").
    MiddleWithoutStart,
    /// A `LAST` chunk without a record in progress ("missing start of fragmented record(2)").
    LastWithoutStart,
    /// A damaged chunk interrupted a record in progress; its fragments so far are dropped
    /// ("error in middle of record").
    ErrorInMiddleOfRecord,
    /// Reading the log failed; LevelDB counts a whole block as dropped ("read error").
    ReadError,
    /// A chunk of the other format: a legacy chunk in a recyclable log ("unexpected legacy
    /// record type N in recyclable log").
    UnexpectedFormat(u8),
    /// A [pack](crate::pack) whose checksums hold but whose body does not (a writer's bug, or
    /// a forged pack): the records not read from it are lost ("bad pack (why): N records
    /// lost"). logfmt's own kind: LevelDB has no packs.
    BadPack {
        /// What is wrong with it.
        error: PackError,
        /// Its records not returned.
        lost: u32,
    },
    /// A record compressed after RocksDB's compression record that does not decompress, or
    /// whose codec the reader does not know ("compressed record does not decompress (codec
    /// N)"): dropped.
    BadCompressedRecord {
        /// The codec of the compression record.
        codec: u32,
    },
    /// Read as Pebble's, the bytes at a complete block's end too few for a WAL-sync header
    /// (19) that Pebble's reader does not skip: a chunk header whose type's header does not
    /// fit, or a zero header followed by bytes that are not zeros ("bad block trailer").
    /// Pebble reports an invalid or zeroed chunk there; LevelDB and RocksDB skip the bytes.
    BadTrailer,
}

impl fmt::Display for CorruptionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ChecksumMismatch => f.write_str("checksum mismatch"),
            Self::BadRecordLength => f.write_str("bad record length"),
            Self::UnknownRecordType(t) => write!(f, "unknown record type {t}"),
            Self::PartialRecordBeforeFull => f.write_str("partial record without end(1)"),
            Self::PartialRecordBeforeFirst => f.write_str("partial record without end(2)"),
            Self::MiddleWithoutStart => f.write_str("missing start of fragmented record(1)"),
            Self::LastWithoutStart => f.write_str("missing start of fragmented record(2)"),
            Self::ErrorInMiddleOfRecord => f.write_str("error in middle of record"),
            Self::ReadError => f.write_str("read error"),
            Self::UnexpectedFormat(t) => {
                write!(f, "unexpected legacy record type {t} in recyclable log")
            }
            Self::BadPack { error, lost } => write!(f, "bad pack ({error}): {lost} records lost"),
            Self::BadCompressedRecord { codec } => {
                write!(f, "compressed record does not decompress (codec {codec})")
            }
            Self::BadTrailer => f.write_str("bad block trailer"),
        }
    }
}

/// Why a pack's payload cannot be read: the pack is lost with its records (when the count is
/// readable, the report says how many).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum PackError {
    /// The payload is shorter than its header.
    Truncated,
    /// The count is 0.
    Empty,
    /// Record `index`'s length runs past the body (or its varint does).
    BadLength {
        /// The record's index.
        index: u32,
    },
    /// The body ends before the count's last record.
    Short {
        /// The records the body holds.
        found: u32,
    },
    /// The body holds bytes after the count's last record.
    Trailing,
    /// The body is coded with a codec this reader does not decode.
    UnknownCodec(u8),
    /// The coded body does not decode to its declared length.
    Decode,
    /// The decoded body would be larger than the reader allows itself: `len` bytes declared.
    TooLarge {
        /// The decoded length the pack declares.
        len: u32,
    },
    /// A chunk of the pack does not match its checksum (its count as the damaged chunk
    /// reads it).
    Checksum,
    /// The pack was cut before its last chunk (by damage, or by the end of the readable log).
    Incomplete,
}

impl fmt::Display for PackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated => f.write_str("pack shorter than its header"),
            Self::Empty => f.write_str("pack of 0 records"),
            Self::BadLength { index } => write!(f, "pack record {index} runs past the pack"),
            Self::Short { found } => write!(f, "pack body ends after {found} records"),
            Self::Trailing => f.write_str("pack body goes on after its last record"),
            Self::UnknownCodec(codec) => write!(f, "pack codec {codec} not read here"),
            Self::Decode => f.write_str("pack body does not decode to its declared length"),
            Self::Checksum => f.write_str("checksum mismatch"),
            Self::Incomplete => f.write_str("pack cut before its last chunk"),
            Self::TooLarge { len } => {
                write!(
                    f,
                    "pack body of {len} bytes decoded, more than this reader takes"
                )
            }
        }
    }
}

impl core::error::Error for PackError {}

/// A report of bytes the reader dropped: LevelDB's `Reporter::Corruption(bytes, status)`, plus
/// where the dropped bytes begin.
///
/// `offset` is the file offset of the header of the first chunk concerned: the damaged chunk for
/// chunk-level damage, the record's first chunk when a record in progress is dropped, the block
/// start for a read error. `bytes` is exactly the count LevelDB's reader reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Corruption {
    /// File offset where the dropped bytes begin.
    pub offset: u64,
    /// Number of bytes dropped, as LevelDB counts them.
    pub bytes: u64,
    /// Why they were dropped.
    pub kind: CorruptionKind,
}

impl Corruption {
    /// `bytes` bytes dropped at `offset` for `kind`: for a reader built on this crate's parts.
    pub const fn new(offset: u64, bytes: u64, kind: CorruptionKind) -> Self {
        Self {
            offset,
            bytes,
            kind,
        }
    }
}

impl fmt::Display for Corruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "dropped {} bytes at offset {}: {}",
            self.bytes, self.offset, self.kind
        )
    }
}

impl core::error::Error for Corruption {}

/// Errors from [`Writer`](crate::Writer).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum WriteError<E> {
    /// The sink failed. The writer is now poisoned: the record being added is not acknowledged
    /// and every later call fails with [`Poisoned`](Self::Poisoned).
    Sink(E),
    /// An earlier sink error left the log in an unknown state; nothing more is written.
    Poisoned,
    /// [`Writer::pad_to`](crate::Writer::pad_to) was given an alignment that is not a power of
    /// two up to the block size.
    BadAlignment,
    /// [`Writer::add_pack`](crate::Writer::add_pack) in a recyclable log: packs are written in
    /// legacy logs only (see [`pack`](crate::pack)).
    PackInRecyclableLog,
}

impl<E: fmt::Display> fmt::Display for WriteError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sink(e) => write!(f, "writing the log failed: {e}"),
            Self::Poisoned => {
                f.write_str("the log writer failed earlier and accepts no more records")
            }
            Self::BadAlignment => {
                f.write_str("padding alignment must be a power of two no larger than a block")
            }
            Self::PackInRecyclableLog => f.write_str("packs are written in legacy logs only"),
        }
    }
}

impl<E: core::error::Error + 'static> core::error::Error for WriteError<E> {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Sink(e) => Some(e),
            Self::Poisoned | Self::BadAlignment | Self::PackInRecyclableLog => None,
        }
    }
}

impl<E> From<E> for WriteError<E> {
    fn from(e: E) -> Self {
        Self::Sink(e)
    }
}

impl<E: embedded_io::Error + 'static> embedded_io::Error for WriteError<E> {
    fn kind(&self) -> embedded_io::ErrorKind {
        match self {
            Self::Sink(e) => e.kind(),
            Self::Poisoned => embedded_io::ErrorKind::Other,
            Self::BadAlignment | Self::PackInRecyclableLog => embedded_io::ErrorKind::InvalidInput,
        }
    }
}
