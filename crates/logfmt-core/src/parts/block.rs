//! Zero-copy parsing of the chunks (physical records) of one block.
//!
//! [`BlockParser`] walks a block exactly as LevelDB's reader does: it yields each chunk as a
//! borrowed slice of the block, and stops at the first thing that ends the block — a trailer,
//! a zero header, a damaged chunk, or (in the last, short block of the input) a chunk cut short
//! by the end of the data.

use crate::checksum;
use crate::dialect::{Dialect, HeaderKind, Meaning, SYNCED_OFFSET_FIELD};
use crate::format::{
    BLOCK_SIZE, CHECKSUM_FIELD, CURSOR_TYPE, ChunkFormat, Format, FragmentKind, HEADER_SIZE,
    LENGTH_FIELD, LOG_NUMBER_FIELD, RECYCLABLE_HEADER_SIZE, RESUME_TYPE, RING_TYPE, RecordType,
    TYPE_FIELD,
};
use crate::options::ReadOptions;

/// One chunk: a header and the payload it frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Chunk<'a> {
    /// Offset of the chunk's header within the block.
    pub offset: usize,
    /// Size of the header: [`HEADER_SIZE`], [`RECYCLABLE_HEADER_SIZE`] for a recyclable chunk,
    /// or [`WAL_SYNC_HEADER_SIZE`](crate::dialect::WAL_SYNC_HEADER_SIZE) for a Pebble WAL-sync
    /// chunk.
    pub header_len: usize,
    /// The raw type byte (see [`RecordType`] and [`Dialect::meaning`]).
    pub record_type: u8,
    /// The log number of a recyclable (or WAL-sync) chunk.
    pub log_number: Option<u32>,
    /// The synced offset of a Pebble WAL-sync chunk: how far the log was known durable when
    /// the chunk was written.
    pub synced_offset: Option<u64>,
    /// The payload.
    pub payload: &'a [u8],
    /// The masked checksum stored in the header.
    pub stored_checksum: u32,
    /// Whether the checksum was verified and matched (`false` when verification is off).
    pub checksum_verified: bool,
}

impl Chunk<'_> {
    /// Offset just past the chunk within the block.
    #[must_use]
    pub const fn end(&self) -> usize {
        self.offset + self.header_len + self.payload.len()
    }
}

/// How a reader reads chunk headers and classifies chunk types: the one place where
/// [`ReadOptions`] become chunk rules ([`ChunkRules::new`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct ChunkRules {
    /// Verify checksums (LevelDB's `checksum` argument). Default `true`.
    pub verify: bool,
    /// The chunk format. Types 5–8 (and RocksDB's recyclable metadata types 11 and 131) are
    /// read with the 11-byte recyclable header unless the format is decided legacy; a
    /// recyclable chunk whose log number is not the format's is [`Parsed::OldRecord`].
    /// Default: decided legacy (LevelDB).
    pub format: ChunkFormat,
    /// The value of erased flash: a header made only of this byte is [`Parsed::Erased`]
    /// ("nothing written here") rather than damage. Default `None` (LevelDB).
    pub erased: Option<u8>,
    /// Chunks of unknown types with bit 7 set are [`ChunkClass::Ignorable`] (RocksDB) rather
    /// than [`ChunkClass::Unknown`]. Default `false` (LevelDB).
    pub skip_ignorable: bool,
    /// Read pack chunks as packs ([`ReadOptions::read_packs`]); else they are of an unknown
    /// type.
    pub packs: bool,
    /// RocksDB's compression record is [`ChunkClass::SetCompression`]
    /// ([`ReadOptions::wal_compression`]); else it is of an unknown type.
    pub wal_compression: bool,
    /// Whose log this is: what each type byte means, and the header it is read with
    /// ([`Dialect::meaning`]). Default [`Dialect::Logfmt`].
    pub dialect: Dialect,
}

impl Default for ChunkRules {
    fn default() -> Self {
        Self {
            verify: true,
            format: ChunkFormat::Decided(Format::Legacy),
            erased: None,
            skip_ignorable: false,
            packs: true,
            wal_compression: true,
            dialect: Dialect::Logfmt,
        }
    }
}

/// What a reader does with a well-formed chunk, by its type ([`ChunkRules::classify`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ChunkClass {
    /// A fragment of a logical record.
    Fragment(FragmentKind),
    /// A fragment of a [pack](crate::pack): a logical record holding many records.
    Pack(FragmentKind),
    /// RocksDB's compression record ([`SET_COMPRESSION_TYPE`]): the records after it are
    /// compressed.
    ///
    /// [`SET_COMPRESSION_TYPE`]: crate::format::SET_COMPRESSION_TYPE
    SetCompression,
    /// RocksDB's timestamp-size record (types 10 and 11, [`Dialect::RocksDb`]): the timestamp
    /// size of column families, for the write batches after it.
    TimestampSizes,
    /// RocksDB's predecessor-WAL record (types 130 and 131, [`Dialect::RocksDb`]): the log
    /// number, size and last sequence number of the WAL before this one.
    PredecessorWal,
    /// A legacy fragment type in a recyclable log: dropped and reported
    /// ([`CorruptionKind::UnexpectedFormat`](crate::CorruptionKind::UnexpectedFormat)).
    OtherFormat,
    /// An unknown type with bit 7 set, skipped without a report (RocksDB's rule, with
    /// [`ChunkRules::skip_ignorable`]).
    Ignorable,
    /// A ring log's block header ([`RING_TYPE`] in a flash image): skipped without a report,
    /// and without ending the record in progress (a record runs on past it).
    RingHeader,
    /// A type the reader does not know: dropped and reported
    /// ([`CorruptionKind::UnknownRecordType`](crate::CorruptionKind::UnknownRecordType)).
    /// A recyclable type in a legacy log is one, as LevelDB reads it.
    Unknown,
}

impl ChunkRules {
    /// The rules for reading with `options`.
    ///
    /// ```
    /// use logfmt_core::parts::block::ChunkRules;
    /// use logfmt_core::{ReadOptions, parts::{ChunkFormat, ReadFormat}};
    ///
    /// let options = ReadOptions::new().format(ReadFormat::Auto { log_number: None });
    /// let rules = ChunkRules::new(&options);
    /// assert_eq!(rules.format, ChunkFormat::Undecided { log_number: None });
    /// ```
    #[must_use]
    pub fn new(options: &ReadOptions) -> Self {
        Self {
            verify: options.verify_checksums,
            format: ChunkFormat::from(options.format),
            erased: options.erased,
            skip_ignorable: options.skip_ignorable_types || options.dialect.skips_ignorable_types(),
            packs: options.read_packs,
            wal_compression: options.wal_compression,
            dialect: options.dialect,
        }
    }

    /// The header a chunk of type `record_type` is read with: the dialect's
    /// ([`Dialect::header`]), recyclable headers only where the format allows them.
    #[must_use]
    #[inline]
    pub fn header(&self, record_type: u8) -> HeaderKind {
        self.dialect
            .header(record_type, self.format.reads_recyclable_headers())
    }

    /// The most bytes a writer of this log leaves unused at a block's end (a trailer): one
    /// less than its largest header — 6 in a legacy log, 10 in a recyclable one, 18 in
    /// Pebble's.
    #[must_use]
    pub fn trailer_limit(&self) -> usize {
        if !self.format.reads_recyclable_headers() {
            HEADER_SIZE
        } else if self.dialect == Dialect::Pebble {
            crate::dialect::WAL_SYNC_HEADER_SIZE
        } else {
            RECYCLABLE_HEADER_SIZE
        }
    }

    /// What a reader does with a well-formed chunk of type `record_type`. While the format is
    /// undecided, every fragment type is a fragment (the first one decides: see
    /// [`decide`](Self::decide)).
    ///
    /// ```
    /// use logfmt_core::parts::FragmentKind;
    /// use logfmt_core::parts::block::{ChunkClass, ChunkRules};
    ///
    /// let rules = ChunkRules::default(); // LevelDB's
    /// assert_eq!(rules.classify(2), ChunkClass::Fragment(FragmentKind::First));
    /// assert_eq!(rules.classify(5), ChunkClass::Unknown); // recyclable FULL
    /// assert_eq!(rules.classify(0x82), ChunkClass::Unknown);
    /// ```
    #[must_use]
    #[inline]
    pub fn classify(&self, record_type: u8) -> ChunkClass {
        if record_type == RESUME_TYPE && self.erased.is_some() {
            // A flash log's resume marker.
            return ChunkClass::Ignorable;
        }
        if record_type == CURSOR_TYPE && self.erased.is_some() {
            // A flash log's read cursor.
            return ChunkClass::Ignorable;
        }
        if record_type == RING_TYPE && self.erased.is_some() {
            return ChunkClass::RingHeader;
        }
        let unknown = if self.skip_ignorable && record_type & 0x80 != 0 {
            ChunkClass::Ignorable
        } else {
            ChunkClass::Unknown
        };
        match self.dialect.meaning(record_type) {
            Meaning::SetCompression if self.wal_compression => ChunkClass::SetCompression,
            Meaning::TimestampSizes { .. } => ChunkClass::TimestampSizes,
            Meaning::PredecessorWal { .. } => ChunkClass::PredecessorWal,
            // Packs live in legacy logs only: their 7-byte header carries no log number, so
            // in a recycled file a stale pack could not be told from a new one.
            Meaning::Logfmt => match RecordType::try_from(record_type)
                .ok()
                .filter(|t| t.is_pack())
                .and_then(RecordType::fragment_kind)
            {
                Some(_) if !self.packs => ChunkClass::Unknown,
                Some(kind) => match self.format {
                    ChunkFormat::Decided(Format::Recyclable { .. }) => ChunkClass::OtherFormat,
                    _ => ChunkClass::Pack(kind),
                },
                None => unknown,
            },
            Meaning::Fragment { kind, header } => match self.format {
                ChunkFormat::Undecided { .. } => ChunkClass::Fragment(kind),
                // Pebble reads each type it knows with its own header, in any log.
                ChunkFormat::Decided(_) if self.dialect == Dialect::Pebble => {
                    ChunkClass::Fragment(kind)
                }
                ChunkFormat::Decided(format) => {
                    let recyclable = format.log_number().is_some();
                    if (header != HeaderKind::Legacy) == recyclable {
                        ChunkClass::Fragment(kind)
                    } else if recyclable {
                        ChunkClass::OtherFormat
                    } else {
                        ChunkClass::Unknown
                    }
                }
            },
            Meaning::SetCompression | Meaning::Zero | Meaning::Unknown => unknown,
        }
    }

    /// Decides an undecided format on a well-formed chunk of a known fragment type: recyclable
    /// if the chunk is (with the log number given, or else the chunk's), legacy otherwise.
    /// Returns whether this chunk decided it.
    pub fn decide(&mut self, record_type: u8, log_number: Option<u32>) -> bool {
        let ChunkFormat::Undecided { log_number: given } = self.format else {
            return false;
        };
        let recyclable = match self.dialect.meaning(record_type) {
            Meaning::Fragment { header, .. } => header != HeaderKind::Legacy,
            Meaning::Logfmt if self.packs && matches!(record_type, 0x51..=0x54) => false,
            _ => return false,
        };
        self.format = ChunkFormat::Decided(if recyclable {
            Format::Recyclable {
                log_number: given.or(log_number).unwrap_or_default(),
            }
        } else {
            Format::Legacy
        });
        true
    }
}

/// What [`parse_chunk`] found at a position of a block.
///
/// Every variant but [`Chunk`](Self::Chunk), [`Padding`](Self::Padding) and [`Torn`](Self::Torn)
/// ends the block (reading resumes at the next block) — except that in a flash image damage
/// that a well-formed chunk of the same block follows ends there ([`flash_gap`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Parsed<'a> {
    /// A well-formed chunk.
    Chunk(Chunk<'a>),
    /// Too few bytes left in a complete block for a header: the trailer, skipped silently
    /// whatever its content (as LevelDB does).
    Trailer {
        /// Offset of the trailer within the block.
        offset: usize,
        /// Its length (0–6, or 0–10 in a recyclable log).
        len: usize,
    },
    /// A chunk cut short by the end of the input (a torn write): a partial header, or a length
    /// that runs past the end of the data in the last, short block. Not a corruption.
    Truncated {
        /// Offset of the partial chunk within the block.
        offset: usize,
        /// Bytes from the chunk start to the end of the input.
        len: usize,
    },
    /// Read as Pebble's ([`Dialect::Pebble`]): the bytes at the end of a complete block, too
    /// few for a WAL-sync header, that Pebble's reader does not skip — a chunk header whose
    /// type's header does not fit, or a zero header followed by bytes that are not zeros
    /// ([`pebble_block_end`]). Dropped with a report
    /// ([`CorruptionKind::BadTrailer`](crate::CorruptionKind::BadTrailer)).
    BadTrailer {
        /// Offset of the bytes within the block.
        offset: usize,
        /// Bytes dropped, to the end of the block.
        len: usize,
    },
    /// A header of type 0 and length 0 (a preallocated, zeroed region): the rest of the block is
    /// skipped silently, without a checksum check.
    ZeroHeader {
        /// Offset of the zero header within the block.
        offset: usize,
        /// Bytes skipped, to the end of the block.
        len: usize,
    },
    /// In a flash image ([`ChunkRules::erased`]): erased bytes up to a well-formed chunk — the
    /// rest of a flash word a flush left unprogrammed, or the words a writer skipped on
    /// reopening. Reading goes on after it.
    Padding {
        /// Offset of the first erased byte within the block.
        offset: usize,
        /// Bytes up to the chunk.
        len: usize,
    },
    /// In a flash image: bytes torn by a power cut, up to the resume marker
    /// ([`RESUME_TYPE`]) the writer wrote where it went on. Reading goes on at the marker.
    Torn {
        /// Offset of the torn bytes within the block.
        offset: usize,
        /// Bytes up to the marker.
        len: usize,
    },
    /// A header of erased flash bytes ([`ChunkRules::erased`]): nothing was written from here to
    /// the end of the block.
    Erased {
        /// Offset of the erased header within the block.
        offset: usize,
        /// Bytes skipped, to the end of the block.
        len: usize,
    },
    /// A recyclable chunk left from an earlier use of the file: its log number is not the one
    /// expected. This is the end of the log, not a corruption.
    OldRecord {
        /// Offset of the chunk within the block.
        offset: usize,
        /// Bytes from the chunk to the end of the block.
        len: usize,
        /// The log number the chunk carries.
        log_number: u32,
    },
    /// The length runs past the end of a complete block: the rest of the block is dropped.
    BadLength {
        /// Offset of the chunk within the block.
        offset: usize,
        /// Bytes dropped, to the end of the block.
        len: usize,
        /// The length the header declares.
        declared: u16,
    },
    /// The checksum does not match: the rest of the block is dropped (only the chunk, for a
    /// pack chunk damaged in place: [`damaged_pack_end`]).
    ChecksumMismatch {
        /// Offset of the chunk within the block.
        offset: usize,
        /// Bytes dropped, to the end of the block (or of the chunk).
        len: usize,
        /// The masked checksum in the header.
        stored: u32,
        /// The masked checksum of the chunk's type and payload.
        computed: u32,
    },
}

/// Pebble's rule for the bytes `rest` at the end of a complete block (at `offset`) when they
/// are too few for a WAL-sync header (fewer than 19, at least the 7 of a legacy header), as
/// Pebble's reader (`record/record.go`, `nextChunk`) reads them:
///
/// - a zero header (checksum, length and type all 0) with fewer than 11 bytes left (no room
///   for even a recyclable header) is padding, skipped whatever follows it: [`Parsed::Trailer`];
/// - a zero header with 11 to 18 bytes left is padding only if every byte left is zero;
///   otherwise Pebble reports a zeroed chunk: [`Parsed::BadTrailer`];
/// - another header whose type's header (11 bytes for a recyclable chunk, 19 for a WAL-sync
///   one) does not fit in what is left is an invalid chunk to Pebble: [`Parsed::BadTrailer`]
///   (LevelDB and RocksDB skip such bytes as the block's trailer).
///
/// `None` where none applies (a legacy chunk, read as usual). Fewer than 7 bytes are skipped
/// by every reader, Pebble's too (they are never looked at).
///
/// ```
/// use logfmt_core::parts::block::{ChunkRules, Parsed, pebble_block_end};
/// use logfmt_core::{ReadOptions, parts::Dialect};
///
/// let rules = ChunkRules::new(&ReadOptions::new().dialect(Dialect::Pebble));
/// // 12 bytes left: a zero header, then a byte that is not zero.
/// let mut rest = [0u8; 12];
/// assert_eq!(pebble_block_end(&rest, 100, &rules), Some(Parsed::Trailer { offset: 100, len: 12 }));
/// rest[11] = 1;
/// assert_eq!(pebble_block_end(&rest, 100, &rules), Some(Parsed::BadTrailer { offset: 100, len: 12 }));
/// ```
#[must_use]
pub fn pebble_block_end<'a>(rest: &[u8], offset: usize, rules: &ChunkRules) -> Option<Parsed<'a>> {
    let header = rest.first_chunk::<HEADER_SIZE>()?;
    if rest.len() >= crate::dialect::WAL_SYNC_HEADER_SIZE {
        return None;
    }
    let len = rest.len();
    if header.iter().all(|&b| b == 0) {
        let padding = len < RECYCLABLE_HEADER_SIZE || rest.iter().all(|&b| b == 0);
        return Some(if padding {
            Parsed::Trailer { offset, len }
        } else {
            Parsed::BadTrailer { offset, len }
        });
    }
    (rules.header(header[TYPE_FIELD]).len() > len).then_some(Parsed::BadTrailer { offset, len })
}

fn le_u32(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0u8; 4];
    if let Some(src) = bytes.get(at..at + 4) {
        word.copy_from_slice(src);
    }
    u32::from_le_bytes(word)
}

/// Parses the chunk at `offset` in `block`: LevelDB's (or, for recyclable logs, RocksDB's)
/// `ReadPhysicalRecord` step.
///
/// `is_last` tells whether `block` is the last, short block of the input (LevelDB's `eof_`); a
/// chunk cut short there is a torn write, while in a complete block it is a bad length.
#[must_use]
pub fn parse_chunk<'a>(
    block: &'a [u8],
    offset: usize,
    is_last: bool,
    rules: &ChunkRules,
) -> Parsed<'a> {
    let rest = block.get(offset..).unwrap_or_default();
    let short = |rest: &[u8]| {
        if is_last {
            Parsed::Truncated {
                offset,
                len: rest.len(),
            }
        } else {
            Parsed::Trailer {
                offset,
                len: rest.len(),
            }
        }
    };
    let Some(header) = rest.first_chunk::<HEADER_SIZE>() else {
        return short(rest);
    };
    if rules
        .erased
        .is_some_and(|erased| header.iter().all(|&b| b == erased))
    {
        return Parsed::Erased {
            offset,
            len: rest.len(),
        };
    }
    if rules.dialect == Dialect::Pebble
        && !is_last
        && let Some(parsed) = pebble_block_end(rest, offset, rules)
    {
        return parsed;
    }
    let declared = u16::from_le_bytes([header[LENGTH_FIELD.start], header[LENGTH_FIELD.start + 1]]);
    let record_type = header[TYPE_FIELD];
    // The dialect's header for the type: RocksDB's recyclable header for types 5–8 and its
    // recyclable metadata types 11 (timestamp sizes) and 131 (predecessor WAL info); Pebble's
    // for 5–8, and its WAL-sync header for 9–12.
    let header_kind = rules.header(record_type);
    let header_len = header_kind.len();
    if rest.len() < header_len {
        return short(rest);
    }
    let log_number = header_kind
        .has_log_number()
        .then(|| le_u32(rest, LOG_NUMBER_FIELD.start));
    let synced_offset = (header_kind == HeaderKind::WalSync).then(|| {
        let low = u64::from(le_u32(rest, SYNCED_OFFSET_FIELD.start));
        let high = u64::from(le_u32(rest, SYNCED_OFFSET_FIELD.start + 4));
        low | high << 32
    });
    if let (Some(found), Some(expected)) = (log_number, rules.format.log_number())
        && found != expected
    {
        return Parsed::OldRecord {
            offset,
            len: rest.len(),
            log_number: found,
        };
    }
    let Some(payload) = rest.get(header_len..header_len + usize::from(declared)) else {
        return if is_last {
            Parsed::Truncated {
                offset,
                len: rest.len(),
            }
        } else {
            Parsed::BadLength {
                offset,
                len: rest.len(),
                declared,
            }
        };
    };
    if record_type == 0 && declared == 0 {
        return Parsed::ZeroHeader {
            offset,
            len: rest.len(),
        };
    }
    let stored = le_u32(rest, CHECKSUM_FIELD.start);
    if rules.verify {
        let covered = rest
            .get(TYPE_FIELD..header_len + payload.len())
            .unwrap_or_default();
        let computed = checksum::mask(checksum::crc32c(covered));
        if computed != stored {
            return Parsed::ChecksumMismatch {
                offset,
                len: rest.len(),
                stored,
                computed,
            };
        }
    }
    Parsed::Chunk(Chunk {
        offset,
        header_len,
        record_type,
        log_number,
        synced_offset,
        payload,
        stored_checksum: stored,
        checksum_verified: rules.verify,
    })
}

/// The well-formed chunks of `block` at or after `from`: the offset of the first one whose
/// type `rules` reads as a fragment, and how many chunks follow back to back from there (it
/// included). `None` if there is none.
///
/// A reader stops at the first chunk it cannot read; this tells whether what follows holds
/// written chunks (damage) or nothing (a torn write). It tries every offset: the cost is a
/// checksum per candidate header.
///
/// ```
/// use logfmt_core::parts::block::{ChunkRules, chunks_from};
///
/// // Garbage, then "foo" as a FULL chunk.
/// let mut block = vec![0xee; 5];
/// block.extend_from_slice(&[0xdd, 0x5f, 0xb3, 0x7a, 0x03, 0x00, 0x01, b'f', b'o', b'o']);
/// assert_eq!(chunks_from(&block, 0, true, &ChunkRules::default()), Some((5, 1)));
/// ```
#[must_use]
pub fn chunks_from(
    block: &[u8],
    from: usize,
    is_last: bool,
    rules: &ChunkRules,
) -> Option<(usize, usize)> {
    let first = next_chunk(block, from, is_last, rules, |t| {
        matches!(
            rules.classify(t),
            ChunkClass::Fragment(_) | ChunkClass::Pack(_)
        )
    })?
    .offset;
    let (mut at, mut count) = (first, 0);
    while let Parsed::Chunk(chunk) = parse_chunk(block, at, is_last, rules) {
        count += 1;
        at = chunk.end();
    }
    Some((first, count))
}

/// The first well-formed chunk of `block` at or after `from` whose type `accept` takes.
pub(crate) fn next_chunk<'a>(
    block: &'a [u8],
    from: usize,
    is_last: bool,
    rules: &ChunkRules,
    accept: impl Fn(u8) -> bool,
) -> Option<Chunk<'a>> {
    (from..block.len()).find_map(|at| {
        if !block.get(at + TYPE_FIELD).is_some_and(|&t| accept(t)) {
            return None;
        }
        match parse_chunk(block, at, is_last, rules) {
            Parsed::Chunk(chunk) => Some(chunk),
            _ => None,
        }
    })
}

/// What the flash-image rules make of the bytes at an offset where no well-formed chunk starts
/// ([`flash_gap`]): where reading goes on, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum FlashGap {
    /// Erased bytes up to a well-formed chunk at this offset.
    Padding(usize),
    /// Bytes torn by a power cut, up to the resume marker at this offset.
    Torn(usize),
    /// Damage, up to a well-formed chunk at this offset.
    Damaged(usize),
}

/// The flash-image rules ([`ChunkRules::erased`] set), at `offset` in `block` where no
/// well-formed chunk starts: erased bytes up to a well-formed chunk are padding
/// ([`flash_padding`]); bytes up to the next well-formed chunk of the block are torn if that
/// chunk is a resume marker ([`RESUME_TYPE`]), damage otherwise. `None` if the rules are off or
/// nothing well-formed follows (LevelDB's rules apply). With `padding_only`, only padding is
/// looked for.
#[must_use]
pub fn flash_gap(
    block: &[u8],
    offset: usize,
    is_last: bool,
    rules: &ChunkRules,
    padding_only: bool,
) -> Option<FlashGap> {
    rules.erased?;
    match padding_end(block, offset, is_last, rules, padding_only) {
        PaddingEnd::At(to) if to > offset => return Some(FlashGap::Padding(to)),
        PaddingEnd::Wait => return None,
        _ => {}
    }
    if padding_only {
        return None;
    }
    let chunk = next_chunk(block, offset + 1, is_last, rules, |t| {
        t == RESUME_TYPE
            || matches!(
                rules.classify(t),
                ChunkClass::Fragment(_) | ChunkClass::Pack(_)
            )
    })?;
    Some(
        if chunk.record_type == RESUME_TYPE && chunk.payload.is_empty() {
            FlashGap::Torn(chunk.offset)
        } else {
            FlashGap::Damaged(chunk.offset)
        },
    )
}

/// The flash-image padding rule ([`ChunkRules::erased`] set), where the byte at `offset` in
/// `block` reads erased: where the chunk after the erased bytes starts — `offset` itself if
/// the chunk there, its checksum beginning with an erased byte, is the one. `None` if no
/// well-formed chunk ends the erased bytes (or the rules are off, or the byte is not erased).
///
/// Erased bytes are taken as padding first, before a chunk at `offset` is: the chunk after them
/// starts at the first byte not erased, or up to 6 bytes before it if its checksum begins with
/// bytes that read as erased (the first well-formed one from the first byte not erased
/// backwards, `offset` last). In a ring's block (one that begins with an intact
/// [ring header](crate::ring::RingHeader), which gives the flash's word size `W`), a header of
/// erased bytes at `offset` is the start of a flush's padding: if a well-formed chunk starts at
/// the next multiple of `W` after `offset`, the padding ends there, whatever the bytes between
/// hold (a reader need not read them).
///
/// ```
/// use logfmt_core::parts::block::{ChunkRules, flash_padding};
///
/// // Three erased bytes (a flush's padding at W = 4), then "foo" as a FULL chunk.
/// let mut block = vec![0xFF; 3];
/// block.extend_from_slice(&[0xdd, 0x5f, 0xb3, 0x7a, 0x03, 0x00, 0x01, b'f', b'o', b'o']);
/// let mut rules = ChunkRules::default();
/// rules.erased = Some(0xFF);
/// assert_eq!(flash_padding(&block, 0, true, &rules), Some(3));
/// // The chunk itself is no padding; without the flash rules there is none.
/// assert_eq!(flash_padding(&block, 3, true, &rules), None);
/// assert_eq!(flash_padding(&block, 0, true, &ChunkRules::default()), None);
/// ```
#[must_use]
pub fn flash_padding(
    block: &[u8],
    offset: usize,
    is_last: bool,
    rules: &ChunkRules,
) -> Option<usize> {
    match padding_end(block, offset, is_last, rules, false) {
        PaddingEnd::At(to) => Some(to),
        PaddingEnd::Wait | PaddingEnd::None => None,
    }
}

/// What [`padding_end`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PaddingEnd {
    /// The chunk after the erased bytes starts here.
    At(usize),
    /// While the block is still arriving: a chunk that may end the padding is not whole yet.
    Wait,
    /// No well-formed chunk ends the erased bytes.
    None,
}

/// [`flash_padding`]; while the block is still arriving (`arriving`), a chunk not whole yet
/// where one may end the padding is waited for.
pub(crate) fn padding_end(
    block: &[u8],
    offset: usize,
    is_last: bool,
    rules: &ChunkRules,
    arriving: bool,
) -> PaddingEnd {
    let Some(erased) = rules.erased else {
        return PaddingEnd::None;
    };
    let rest = block.get(offset..).unwrap_or_default();
    if rest.first() != Some(&erased) {
        return PaddingEnd::None;
    }
    let at = |to: usize| match parse_chunk(block, to, is_last, rules) {
        Parsed::Chunk(_) => Some(PaddingEnd::At(to)),
        Parsed::Truncated { .. } | Parsed::Trailer { .. } if arriving => Some(PaddingEnd::Wait),
        _ => None,
    };
    let header_erased = rest
        .get(..HEADER_SIZE)
        .is_some_and(|h| h.iter().all(|&b| b == erased));
    if header_erased
        && let Some(word) = ring_word(block, rules)
        && let Some(found) = padding_word_end(offset, word).and_then(at)
    {
        return found;
    }
    let Some(next) = rest.iter().position(|&b| b != erased) else {
        return PaddingEnd::None;
    };
    padding_chunk_starts(offset, offset + next)
        .find_map(at)
        .unwrap_or(PaddingEnd::None)
}

/// The flash padding rule, first part: where a flush's padding that begins at `at` (a header
/// of erased bytes, in a block whose flash word size `word` is known) ends if a well-formed
/// chunk starts there — the next word boundary after `at`. The slice readers
/// ([`padding_end`]) and the flash readers both ask here.
#[inline]
pub(crate) fn padding_word_end(at: usize, word: usize) -> Option<usize> {
    let to = at.next_multiple_of(word);
    (to > at).then_some(to)
}

/// The flash padding rule, second part: where the chunk after erased bytes, from `at` to the
/// first byte written (`written`), may start, in the order they are tried: `written` itself,
/// then up to 6 bytes before it (a chunk whose checksum begins with bytes that read as
/// erased), never before `at`. The slice readers ([`padding_end`]) and the flash readers both
/// ask here.
#[inline]
pub(crate) fn padding_chunk_starts(at: usize, written: usize) -> impl Iterator<Item = usize> {
    (0..=written.saturating_sub(at).min(HEADER_SIZE - 1)).map(move |back| written - back)
}

/// The flash's word size, from the ring header `block` begins with (flash rules only).
fn ring_word(block: &[u8], rules: &ChunkRules) -> Option<usize> {
    rules.erased?;
    crate::ring::RingHeader::parse(block).map(|h| usize::from(h.write_size))
}

/// Where a [pack](crate::pack) chunk whose checksum does not match ends, when its header is
/// borne out: the chunk at `offset` in `block` has a pack type (under `rules`), the length it
/// declares ends inside the block, and there the block goes on with a well-formed chunk, with
/// zeros to its end, or with a trailer of zeros too short for a header — or the input ends
/// there. A payload damaged in place leaves exactly this; a damaged type or length almost never
/// does (the next chunk's own checksum would have to hold at a wrong place).
///
/// Readers then drop only that chunk and go on reading after it, so that damage inside a pack
/// loses at most that pack. `None` otherwise, and for every type of LevelDB's: their damage
/// drops the rest of the block, as LevelDB's reader does.
///
/// ```
/// use logfmt_core::parts::block::{ChunkRules, damaged_pack_end};
/// use logfmt_core::ReadOptions;
///
/// // A PACK_FULL chunk ("stored", 1 record: "hi") with a bad checksum, then a FULL "foo".
/// let mut block = vec![0, 0, 0, 0, 8, 0, 0x51, 0, 1, 0, 0, 0, 2, b'h', b'i'];
/// block.extend_from_slice(&[0xdd, 0x5f, 0xb3, 0x7a, 0x03, 0x00, 0x01, b'f', b'o', b'o']);
/// let rules = ChunkRules::new(&ReadOptions::new().read_packs(true));
/// assert_eq!(damaged_pack_end(&block, 0, true, &rules), Some(15));
/// // Not where a plain chunk is damaged: LevelDB drops the rest of the block.
/// block[6] = 1;
/// assert_eq!(damaged_pack_end(&block, 0, true, &rules), None);
/// ```
#[must_use]
pub fn damaged_pack_end(
    block: &[u8],
    offset: usize,
    is_last: bool,
    rules: &ChunkRules,
) -> Option<usize> {
    let header = block.get(offset..offset.checked_add(HEADER_SIZE)?)?;
    if !matches!(rules.classify(header[TYPE_FIELD]), ChunkClass::Pack(_)) {
        return None;
    }
    let declared = usize::from(u16::from_le_bytes([header[4], header[5]]));
    let end = offset + HEADER_SIZE + declared;
    let rest = block.get(end..)?;
    let zeros = rest.iter().all(|&b| b == 0);
    let borne_out = (rest.is_empty() && (is_last || end == BLOCK_SIZE))
        || (zeros && (BLOCK_SIZE - end < HEADER_SIZE || is_last))
        || matches!(parse_chunk(block, end, is_last, rules), Parsed::Chunk(_));
    borne_out.then_some(end)
}

/// Iterates over the chunks of one block, zero-copy.
///
/// Yields [`Parsed::Chunk`] items, then at most one item that ends the block. A block shorter
/// than [`BLOCK_SIZE`] is taken to be the last block of the input.
///
/// ```
/// use logfmt_core::parts::block::{BlockParser, Parsed};
///
/// // "foo" as a FULL chunk, as LevelDB writes it.
/// let block = [0xdd, 0x5f, 0xb3, 0x7a, 0x03, 0x00, 0x01, b'f', b'o', b'o'];
/// let mut chunks = BlockParser::new(&block);
/// let Some(Parsed::Chunk(chunk)) = chunks.next() else { panic!() };
/// assert_eq!((chunk.offset, chunk.record_type, chunk.payload), (0, 1, &b"foo"[..]));
/// assert_eq!(chunks.next(), None);
/// ```
#[derive(Debug, Clone)]
pub struct BlockParser<'a> {
    block: &'a [u8],
    offset: usize,
    is_last: bool,
    rules: ChunkRules,
    done: bool,
}

impl<'a> BlockParser<'a> {
    /// A parser over `block` (at most [`BLOCK_SIZE`] bytes; longer input is cut there), with
    /// checksum verification on.
    #[must_use]
    pub fn new(block: &'a [u8]) -> Self {
        let block = block.get(..BLOCK_SIZE).unwrap_or(block);
        Self {
            block,
            offset: 0,
            is_last: block.len() < BLOCK_SIZE,
            rules: ChunkRules::default(),
            done: false,
        }
    }

    /// Turns checksum verification on or off.
    #[must_use]
    pub fn verify_checksums(mut self, verify: bool) -> Self {
        self.rules.verify = verify;
        self
    }

    /// Sets all the rules headers are read with.
    #[must_use]
    pub fn rules(mut self, rules: ChunkRules) -> Self {
        self.rules = rules;
        self
    }

    /// Declares whether this block is the last of the input (by default: whether it is short).
    #[must_use]
    pub fn last_block(mut self, is_last: bool) -> Self {
        self.is_last = is_last;
        self
    }
}

impl<'a> Iterator for BlockParser<'a> {
    type Item = Parsed<'a>;

    fn next(&mut self) -> Option<Parsed<'a>> {
        if self.done || (self.offset == self.block.len() && !self.is_last) {
            return None;
        }
        if self.offset == self.block.len() {
            // The end of the input at a chunk boundary: nothing more, nothing torn.
            self.done = true;
            return None;
        }
        // A flash image: erased bytes are padding first, before a chunk at their start is.
        if let PaddingEnd::At(to) =
            padding_end(self.block, self.offset, self.is_last, &self.rules, false)
            && to > self.offset
        {
            let offset = self.offset;
            self.offset = to;
            return Some(Parsed::Padding {
                offset,
                len: to - offset,
            });
        }
        let parsed = parse_chunk(self.block, self.offset, self.is_last, &self.rules);
        if let Parsed::Chunk(chunk) = parsed {
            self.offset = chunk.end();
            return Some(parsed);
        }
        // A flash image: damage or padding that a well-formed chunk follows ends there.
        let gap = match parsed {
            Parsed::Erased { .. }
            | Parsed::BadLength { .. }
            | Parsed::ChecksumMismatch { .. }
            | Parsed::Truncated { .. } => {
                flash_gap(self.block, self.offset, self.is_last, &self.rules, false)
            }
            _ => None,
        };
        let Some(gap) = gap else {
            // A pack chunk damaged in place: only that chunk is dropped.
            if let Parsed::ChecksumMismatch {
                offset,
                stored,
                computed,
                ..
            } = parsed
                && let Some(end) = damaged_pack_end(self.block, offset, self.is_last, &self.rules)
            {
                self.offset = end;
                return Some(Parsed::ChecksumMismatch {
                    offset,
                    len: end - offset,
                    stored,
                    computed,
                });
            }
            self.done = true;
            return Some(parsed);
        };
        let offset = self.offset;
        let (to, found) = match gap {
            FlashGap::Padding(to) => (
                to,
                Parsed::Padding {
                    offset,
                    len: to - offset,
                },
            ),
            FlashGap::Torn(to) => (
                to,
                Parsed::Torn {
                    offset,
                    len: to - offset,
                },
            ),
            FlashGap::Damaged(to) => {
                let len = to - offset;
                let found = match parsed {
                    Parsed::ChecksumMismatch {
                        stored, computed, ..
                    } => Parsed::ChecksumMismatch {
                        offset,
                        len,
                        stored,
                        computed,
                    },
                    _ => Parsed::BadLength {
                        offset,
                        len,
                        declared: self
                            .block
                            .get(offset + LENGTH_FIELD.start..offset + LENGTH_FIELD.end)
                            .map_or(0, |b| u16::from_le_bytes([b[0], b[1]])),
                    },
                };
                (to, found)
            }
        };
        self.offset = to;
        Some(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(payload: &[u8]) -> [u8; 64] {
        let mut out = [0u8; 64];
        out[4..6].copy_from_slice(&u16::try_from(payload.len()).unwrap_or(0).to_le_bytes());
        out[6] = 1;
        out[7..7 + payload.len()].copy_from_slice(payload);
        let crc = checksum::mask(checksum::crc32c(&out[6..7 + payload.len()]));
        out[..4].copy_from_slice(&crc.to_le_bytes());
        out
    }

    #[test]
    fn golden_foo() {
        let bytes = full(b"foo");
        assert_eq!(
            bytes[..10],
            [0xdd, 0x5f, 0xb3, 0x7a, 0x03, 0x00, 0x01, b'f', b'o', b'o']
        );
    }

    #[test]
    fn torn_chunk_at_end_of_input() {
        let bytes = full(b"foo");
        for cut in 1..10 {
            let mut p = BlockParser::new(&bytes[..cut]);
            assert_eq!(
                p.next(),
                Some(Parsed::Truncated {
                    offset: 0,
                    len: cut
                })
            );
            assert_eq!(p.next(), None);
        }
    }

    /// A complete block whose last `left` bytes are `tail`, the block before them zeros.
    fn block_ending(tail: &[u8]) -> [u8; BLOCK_SIZE] {
        let mut block = [0u8; BLOCK_SIZE];
        block[BLOCK_SIZE - tail.len()..].copy_from_slice(tail);
        block
    }

    #[test]
    fn pebbles_short_block_end_is_padding_only_where_pebble_skips_it() {
        let pebble = ChunkRules {
            dialect: Dialect::Pebble,
            format: ChunkFormat::Decided(Format::Recyclable { log_number: 7 }),
            ..ChunkRules::default()
        };
        let rocksdb = ChunkRules {
            dialect: Dialect::RocksDb,
            ..pebble
        };
        // A block ending in `tail` parses there as `expected` (each block its own: a chunk
        // borrows it).
        let parses_as = |tail: &[u8], rules: &ChunkRules, expected: Parsed<'static>| {
            let block = block_ending(tail);
            let parsed = parse_chunk(&block, BLOCK_SIZE - tail.len(), false, rules);
            assert_eq!(parsed, expected, "{tail:?}");
        };
        let at = |len: usize| BLOCK_SIZE - len;
        let trailer = |len: usize| Parsed::Trailer {
            offset: at(len),
            len,
        };
        let bad = |len: usize| Parsed::BadTrailer {
            offset: at(len),
            len,
        };
        // Zeros, however many of the 7..19 bytes: padding (Pebble's writer leaves them).
        for len in 7..19 {
            parses_as(&std::vec![0; len], &pebble, trailer(len));
        }
        // A zero header with fewer than 11 bytes left: skipped whatever follows it.
        parses_as(&[0, 0, 0, 0, 0, 0, 0, 1, 2, 3], &pebble, trailer(10));
        // 11 to 18 bytes: every byte after a zero header must be zero, else a zeroed chunk.
        for len in 11..19 {
            let mut tail = std::vec![0; len];
            tail[len - 1] = 1;
            parses_as(&tail, &pebble, bad(len));
            // RocksDB (and LevelDB) skip it: a zero header, too few bytes for a chunk.
            let skipped = Parsed::ZeroHeader {
                offset: at(len),
                len,
            };
            parses_as(&tail, &rocksdb, skipped);
        }
        // A recyclable header (11 bytes) in 9, a WAL-sync one (19) in 15: invalid to Pebble.
        let recyclable = [1, 2, 3, 4, 0, 0, 5, 7, 0];
        parses_as(&recyclable, &pebble, bad(9));
        parses_as(&recyclable, &rocksdb, trailer(9));
        let mut wal_sync = [0u8; 15];
        wal_sync[..7].copy_from_slice(&[1, 2, 3, 4, 0, 0, 9]);
        parses_as(&wal_sync, &pebble, bad(15));
        // Fewer than 7 bytes: never looked at, by any reader.
        parses_as(&[1; 6], &pebble, trailer(6));
        // In the last, short block of the input, a chunk cut short stays a torn write.
        let block = block_ending(&recyclable);
        assert_eq!(
            parse_chunk(&block[..BLOCK_SIZE - 2], at(9), true, &pebble),
            Parsed::Truncated {
                offset: at(9),
                len: 7
            }
        );
    }

    #[test]
    fn bad_length_in_full_block() {
        let mut block = [0u8; BLOCK_SIZE];
        block[..10].copy_from_slice(&full(b"foo")[..10]);
        block[4] = 0xff;
        block[5] = 0x7f;
        let mut p = BlockParser::new(&block);
        assert_eq!(
            p.next(),
            Some(Parsed::BadLength {
                offset: 0,
                len: BLOCK_SIZE,
                declared: 0x7fff
            })
        );
        assert_eq!(p.next(), None);
    }

    #[test]
    fn checksum_mismatch_drops_rest() {
        let mut bytes = full(b"foo");
        bytes[0] ^= 1;
        let mut p = BlockParser::new(&bytes[..10]);
        assert!(matches!(
            p.next(),
            Some(Parsed::ChecksumMismatch {
                offset: 0,
                len: 10,
                ..
            })
        ));
        let mut p = BlockParser::new(&bytes[..10]).verify_checksums(false);
        assert!(matches!(p.next(), Some(Parsed::Chunk(_))));
    }

    #[test]
    fn zero_header_and_trailer() {
        let mut block = [0u8; BLOCK_SIZE];
        let mut p = BlockParser::new(&block);
        assert_eq!(
            p.next(),
            Some(Parsed::ZeroHeader {
                offset: 0,
                len: BLOCK_SIZE
            })
        );
        assert_eq!(p.next(), None);
        // A record that leaves 3 bytes of trailer.
        let n = BLOCK_SIZE - HEADER_SIZE - 3;
        block[4..6].copy_from_slice(&u16::try_from(n).unwrap_or(0).to_le_bytes());
        block[6] = 1;
        let crc = checksum::mask(checksum::crc32c(&block[6..7 + n]));
        block[..4].copy_from_slice(&crc.to_le_bytes());
        let mut p = BlockParser::new(&block);
        assert!(matches!(p.next(), Some(Parsed::Chunk(c)) if c.payload.len() == n));
        assert_eq!(
            p.next(),
            Some(Parsed::Trailer {
                offset: BLOCK_SIZE - 3,
                len: 3
            })
        );
        assert_eq!(p.next(), None);
    }
}
