//! The layout of a log, block by block: every byte range of every block and what it is — the
//! model the block map (`logfmt map`), its picture and the browser inspector draw from.
//!
//! [`block_spans`] parses one block as the reader does (LevelDB's rules, or a flash image's
//! with [`ReadOptions::erased`]); [`BlockMap`] walks a whole file, a ring image included,
//! block by block in file order, with each block's [`BlockState`] and, for a ring image, its
//! [`BlockRole`] and place in the reading order. Memory is one block at a time.
//!
//! ```
//! use std::io::Cursor;
//! use logfmt_std::layout::{BlockMap, BlockState, SpanKind};
//! use logfmt_std::advanced::ReadOptions;
//!
//! // One FULL chunk of "hi" (its checksum is not LevelDB's: a damaged block).
//! let log = [0, 0, 0, 0, 2, 0, 1, b'h', b'i'];
//! let mut map = BlockMap::new(Cursor::new(&log[..]), log.len() as u64, &ReadOptions::default())?;
//! let block = map.next_block()?.expect("one block");
//! assert_eq!(block.state, BlockState::Damaged);
//! assert!(matches!(block.spans[0].kind, SpanKind::ChecksumMismatch { .. }));
//! assert!(map.next_block()?.is_none());
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io::{self, Read, Seek, SeekFrom};

use logfmt_core::parts::block::{BlockParser, ChunkClass, ChunkRules, Parsed};
use logfmt_core::parts::format::{CURSOR_TYPE, HEADER_SIZE, RESUME_TYPE};
use logfmt_core::parts::ring::RingHeader;
use logfmt_core::{
    BLOCK_SIZE, ReadOptions,
    parts::{CorruptionKind, FragmentKind},
};

use crate::reader::Bounded;
use crate::recovery::{Damage, DamageKind, Ending, ReadError};
use crate::ring::{BlockRole, RingImage};

mod walk;

pub use walk::{Counts, Walk};

/// A byte range of a block and what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Span {
    /// File offset where it begins.
    pub offset: u64,
    /// Its length in bytes (a chunk's: header and payload).
    pub len: u64,
    /// What it is.
    pub kind: SpanKind,
}

/// What a [`Span`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpanKind {
    /// A well-formed chunk.
    Chunk {
        /// Its type byte.
        record_type: u8,
        /// What the reader makes of it.
        role: ChunkRole,
        /// Its log number, in a recyclable log.
        log_number: Option<u32>,
        /// The synced offset of a Pebble WAL-sync chunk.
        synced_offset: Option<u64>,
        /// Its type's name, as the log's writer means the type
        /// ([`Dialect::type_name`](logfmt_core::parts::Dialect::type_name)).
        type_name: &'static str,
        /// Whether its checksum was checked (and matched).
        checked: bool,
        /// The masked checksum its header stores.
        stored_checksum: u32,
        /// Its header's length: [`HEADER_SIZE`], or more in a
        /// recyclable log; its payload is the rest of the span.
        header_len: u8,
    },
    /// Too few bytes for a header at the end of a block: skipped.
    Trailer,
    /// Erased flash up to a chunk (a flash image).
    Padding,
    /// A zero header: the rest of the block is skipped without a report.
    ZeroHeader,
    /// Erased flash to the end of the block: nothing written there.
    Erased,
    /// A chunk cut short by the end of the file, or bytes torn by a power cut up to where
    /// the flash writer went on.
    Torn {
        /// Torn by a power cut (a flash image's bytes up to a resume marker), not cut short by
        /// the end of the file.
        power_cut: bool,
    },
    /// A recyclable chunk of another log number: an earlier use's bytes, the end of the log.
    OldRecord {
        /// The log number it carries.
        log_number: u32,
    },
    /// A length that runs past the block's end: dropped.
    BadLength {
        /// The length the header declares.
        declared: u16,
    },
    /// Read as Pebble's: bytes at a block's end too few for a WAL-sync header that Pebble
    /// does not skip (a header that does not fit, or a zero header followed by bytes that are
    /// not zeros): dropped.
    BadTrailer,
    /// A checksum that does not match: dropped.
    ChecksumMismatch {
        /// The masked checksum stored.
        stored: u32,
        /// The masked checksum of the bytes.
        computed: u32,
    },
}

impl SpanKind {
    /// A short name: `chunk`, `trailer`, `padding`, `zero_header`, `erased`, `torn`,
    /// `old_record`, `bad_length`, `bad_trailer`, `checksum_mismatch`.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::Chunk { .. } => "chunk",
            Self::Trailer => "trailer",
            Self::Padding => "padding",
            Self::ZeroHeader => "zero_header",
            Self::Erased => "erased",
            Self::Torn { .. } => "torn",
            Self::OldRecord { .. } => "old_record",
            Self::BadLength { .. } => "bad_length",
            Self::BadTrailer => "bad_trailer",
            Self::ChecksumMismatch { .. } => "checksum_mismatch",
        }
    }

    /// What the reader does with these bytes, in plain words; `None` for a record's chunk.
    #[must_use]
    pub fn note(&self) -> Option<String> {
        Some(match *self {
            SpanKind::Chunk { role, .. } => match role {
                ChunkRole::RingHeader => {
                    "a ring header: the block's lap and the records begun before it".into()
                }
                ChunkRole::ResumeMarker => {
                    "the flash writer's resume marker: it went on here after a power cut".into()
                }
                ChunkRole::Cursor => {
                    "a read cursor: how far a consumer of the log delivered its records".into()
                }
                ChunkRole::SetCompression => {
                    "RocksDB's compression record: the records after it are compressed".into()
                }
                ChunkRole::TimestampSizes => {
                    "RocksDB's timestamp-size record: the user keys of the write batches after \
                     it end in a timestamp"
                        .into()
                }
                ChunkRole::PredecessorWal => {
                    "RocksDB's predecessor-WAL record: the log number, size and last sequence \
                     number of the WAL before this one"
                        .into()
                }
                ChunkRole::Ignorable => {
                    "a type with bit 7 set: skipped without a report (RocksDB's rule)".into()
                }
                ChunkRole::Dropped => {
                    "a type this reader does not know: dropped (LevelDB drops it too)".into()
                }
                ChunkRole::OtherFormat => {
                    "a legacy type in a recyclable log: dropped with a report".into()
                }
                _ => return None,
            },
            SpanKind::Trailer => "too few bytes for a header: skipped, as LevelDB does".into(),
            SpanKind::Padding => "erased flash up to the next chunk".into(),
            SpanKind::ZeroHeader => {
                "zeros: the rest of the block is skipped without a report".into()
            }
            SpanKind::Erased => {
                "erased flash: nothing written from here to the end of the block".into()
            }
            SpanKind::Torn { power_cut: false } => {
                "a chunk cut short by the end of the file: a torn write".into()
            }
            SpanKind::Torn { power_cut: true } => {
                "torn by a power cut: the flash writer went on after it".into()
            }
            SpanKind::OldRecord { log_number } => format!(
                "a record of log number {log_number}, left by an earlier use of a recycled file: \
                 the log ends here"
            ),
            SpanKind::BadLength { declared } => format!(
                "bad record length: the header says {declared} bytes, past the block's end; {}",
                gloss(&DamageKind::Corruption(CorruptionKind::BadRecordLength)).unwrap_or_default()
            ),
            SpanKind::BadTrailer => format!(
                "bad block trailer: {}",
                gloss(&DamageKind::Corruption(CorruptionKind::BadTrailer)).unwrap_or_default()
            ),
            SpanKind::ChecksumMismatch { stored, computed } => format!(
                "checksum mismatch (stored {stored:#010x}, computed {computed:#010x}); {}",
                gloss(&DamageKind::Corruption(CorruptionKind::ChecksumMismatch))
                    .unwrap_or_default()
            ),
        })
    }

    /// Whether the reader drops these bytes with a report (LevelDB's corruption).
    #[must_use]
    pub fn is_damage(&self) -> bool {
        matches!(
            self,
            Self::BadLength { .. }
                | Self::BadTrailer
                | Self::ChecksumMismatch { .. }
                | Self::Chunk {
                    role: ChunkRole::Dropped | ChunkRole::OtherFormat,
                    ..
                }
        )
    }
}

/// What the reader makes of a well-formed chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChunkRole {
    /// A fragment of a record (FULL, FIRST, MIDDLE, LAST).
    Fragment(FragmentKind),
    /// A fragment of a pack of small records.
    Pack(FragmentKind),
    /// A ring header (a flash ring's block header), not a record.
    RingHeader,
    /// The flash writer's resume marker, not a record.
    ResumeMarker,
    /// A flash log's read cursor, not a record.
    Cursor,
    /// RocksDB's compression record.
    SetCompression,
    /// RocksDB's timestamp-size record (types 10 and 11).
    TimestampSizes,
    /// RocksDB's predecessor-WAL record (types 130 and 131).
    PredecessorWal,
    /// A type with bit 7 set, skipped without a report.
    Ignorable,
    /// Dropped with a report: a type the reader does not know (or RocksDB's compression
    /// record of a length other than 4).
    Dropped,
    /// Dropped with a report: a legacy type in a recyclable log.
    OtherFormat,
}

impl ChunkRole {
    /// What the reader makes of a chunk of `record_type` classed `class`, with
    /// `payload_len` bytes of payload.
    #[inline]
    fn of(class: ChunkClass, record_type: u8, payload_len: usize) -> Self {
        match class {
            ChunkClass::Fragment(kind) => Self::Fragment(kind),
            ChunkClass::Pack(kind) => Self::Pack(kind),
            ChunkClass::RingHeader => Self::RingHeader,
            // The record holds a 4-byte codec; the reader drops another.
            ChunkClass::SetCompression if payload_len == 4 => Self::SetCompression,
            ChunkClass::TimestampSizes => Self::TimestampSizes,
            ChunkClass::PredecessorWal if payload_len == 24 => Self::PredecessorWal,
            ChunkClass::OtherFormat => Self::OtherFormat,
            ChunkClass::Ignorable if record_type == RESUME_TYPE => Self::ResumeMarker,
            ChunkClass::Ignorable if record_type == CURSOR_TYPE => Self::Cursor,
            ChunkClass::Ignorable => Self::Ignorable,
            _ => Self::Dropped,
        }
    }
}

/// The name of a chunk type: `FULL`, `FIRST`, …, `RECYCLABLE_LAST`, `PACK_…`, or `unknown`.
#[must_use]
pub fn type_name(record_type: u8) -> &'static str {
    logfmt_core::parts::Dialect::Logfmt.type_name(record_type)
}

/// The spans of `block`, the block at file offset `block_offset`, parsed with `rules` (which
/// an `auto` format's first chunk decides): every byte of the block in exactly one span, in
/// order.
///
/// ```
/// use logfmt_core::parts::block::ChunkRules;
/// use logfmt_std::advanced::ReadOptions;
/// use logfmt_std::layout::{SpanKind, block_spans};
///
/// let block = [0u8; 40];
/// let spans = block_spans(&block, 0, &mut ChunkRules::new(&ReadOptions::default()));
/// assert_eq!(spans.len(), 1);
/// assert_eq!((spans[0].kind, spans[0].len), (SpanKind::ZeroHeader, 40));
/// ```
#[must_use]
pub fn block_spans(block: &[u8], block_offset: u64, rules: &mut ChunkRules) -> Vec<Span> {
    let mut spans = Vec::new();
    each_span(block, block_offset, rules, |span, _| spans.push(*span));
    spans
}

/// Calls `visit` with each span of `block`, the block at file offset `block_offset`, and the
/// span's bytes, in order, parsed with `rules` (an `auto` format is decided on the way): the
/// one parse of a block that [`block_spans`], [`BlockMap`] and [`Walk`] make; nothing is
/// allocated.
///
/// ```
/// use logfmt_core::parts::block::ChunkRules;
/// use logfmt_std::advanced::ReadOptions;
/// use logfmt_std::layout::{SpanKind, each_span};
///
/// let mut kinds = Vec::new();
/// each_span(&[0u8; 40], 0, &mut ChunkRules::new(&ReadOptions::default()), |span, bytes| {
///     kinds.push((span.kind.name(), bytes.len()));
/// });
/// assert_eq!(kinds, [("zero_header", 40)]);
/// ```
pub fn each_span(
    block: &[u8],
    block_offset: u64,
    rules: &mut ChunkRules,
    mut visit: impl FnMut(&Span, &[u8]),
) {
    // The class of the last type seen, until the format is decided anew: a log's chunks are
    // mostly of one or two types, and classifying each is a good part of a walk's time.
    let mut last: Option<(u8, ChunkClass)> = None;
    for item in BlockParser::new(block).rules(*rules) {
        let (offset, len, kind) = match item {
            Parsed::Chunk(chunk) => {
                if rules.decide(chunk.record_type, chunk.log_number) {
                    last = None;
                }
                let class = match last {
                    Some((seen, class)) if seen == chunk.record_type => class,
                    _ => {
                        let class = rules.classify(chunk.record_type);
                        last = Some((chunk.record_type, class));
                        class
                    }
                };
                let kind = SpanKind::Chunk {
                    record_type: chunk.record_type,
                    role: ChunkRole::of(class, chunk.record_type, chunk.payload.len()),
                    log_number: chunk.log_number,
                    synced_offset: chunk.synced_offset,
                    type_name: rules.dialect.type_name(chunk.record_type),
                    checked: chunk.checksum_verified,
                    stored_checksum: chunk.stored_checksum,
                    header_len: u8::try_from(chunk.header_len).unwrap_or(u8::MAX),
                };
                (chunk.offset, chunk.header_len + chunk.payload.len(), kind)
            }
            Parsed::Trailer { offset, len } => (offset, len, SpanKind::Trailer),
            // Fewer bytes than a header left in the block: a trailer the file ends inside
            // (the reader reads none there either), not a torn chunk.
            Parsed::Truncated { offset, len } if BLOCK_SIZE - offset % BLOCK_SIZE < HEADER_SIZE => {
                (offset, len, SpanKind::Trailer)
            }
            Parsed::Truncated { offset, len } => (offset, len, SpanKind::Torn { power_cut: false }),
            Parsed::Torn { offset, len } => (offset, len, SpanKind::Torn { power_cut: true }),
            Parsed::Padding { offset, len } => (offset, len, SpanKind::Padding),
            Parsed::ZeroHeader { offset, len } => (offset, len, SpanKind::ZeroHeader),
            Parsed::Erased { offset, len } => (offset, len, SpanKind::Erased),
            Parsed::OldRecord {
                offset,
                len,
                log_number,
            } => (offset, len, SpanKind::OldRecord { log_number }),
            Parsed::BadLength {
                offset,
                len,
                declared,
            } => (offset, len, SpanKind::BadLength { declared }),
            Parsed::BadTrailer { offset, len } => (offset, len, SpanKind::BadTrailer),
            Parsed::ChecksumMismatch {
                offset,
                len,
                stored,
                computed,
            } => (offset, len, SpanKind::ChecksumMismatch { stored, computed }),
        };
        let span = Span {
            offset: block_offset + offset as u64,
            len: len as u64,
            kind,
        };
        visit(&span, block.get(offset..offset + len).unwrap_or_default());
    }
}

impl Span {
    /// A chunk's payload, given the span's bytes (as [`each_span`] hands them over); empty
    /// for a span that is not a chunk.
    #[must_use]
    pub fn payload<'a>(&self, bytes: &'a [u8]) -> &'a [u8] {
        match self.kind {
            SpanKind::Chunk { header_len, .. } => {
                bytes.get(usize::from(header_len)..).unwrap_or_default()
            }
            _ => &[],
        }
    }

    /// The ring header a chunk is, given the span's bytes, if it is one intact.
    #[must_use]
    pub fn ring_header(&self, bytes: &[u8]) -> Option<RingHeader> {
        let SpanKind::Chunk {
            role: ChunkRole::RingHeader,
            stored_checksum,
            record_type,
            ..
        } = self.kind
        else {
            return None;
        };
        // A ring header is a legacy chunk: its header, then its payload.
        let payload = self.payload(bytes);
        let len = u16::try_from(payload.len()).ok()?;
        let mut chunk = stored_checksum.to_le_bytes().to_vec();
        chunk.extend_from_slice(&len.to_le_bytes());
        chunk.push(record_type);
        chunk.extend_from_slice(payload);
        RingHeader::parse(&chunk)
    }
}

/// What LevelDB's terse reason for a drop means, in plain words; `None` where the reason says
/// it plainly already (or the damage is not a drop LevelDB reports).
///
/// ```
/// use logfmt_std::layout::gloss;
/// use logfmt_std::{advanced::CorruptionKind, DamageKind};
///
/// let last = DamageKind::Corruption(CorruptionKind::LastWithoutStart);
/// assert_eq!(last.to_string(), "missing start of fragmented record(2)");
/// assert_eq!(gloss(&last), Some("a record's first part was lost, so its later parts are skipped"));
/// assert_eq!(gloss(&DamageKind::TornTail), None);
/// ```
#[must_use]
pub fn gloss(kind: &DamageKind) -> Option<&'static str> {
    let DamageKind::Corruption(kind) = kind else {
        return None;
    };
    Some(match kind {
        CorruptionKind::ChecksumMismatch => {
            "a chunk's bytes do not match its checksum, so the rest of its 32 KiB block is skipped"
        }
        CorruptionKind::BadRecordLength => {
            "a chunk's length runs past the end of its block, so the rest of the block is skipped"
        }
        CorruptionKind::UnknownRecordType(logfmt_core::parts::format::RING_TYPE) => {
            "a flash ring's block header: this is a ring image, read from its oldest block only \
             from a file; give its path rather than a pipe"
        }
        CorruptionKind::UnknownRecordType(
            logfmt_core::parts::format::RESUME_TYPE | logfmt_core::parts::format::CURSOR_TYPE,
        ) => "a flash log's own chunk: this is a flash image; read it with --erased",
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
        CorruptionKind::BadTrailer => {
            "the bytes at a block's end, too few for a chunk, are not the zeros Pebble's writer \
             pads a block with, so Pebble's reader stops there"
        }
        _ => return None,
    })
}

/// What a block is, for a map: the most telling of what was found in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BlockState {
    /// Records (or chunks), nothing dropped.
    Clean,
    /// Nothing here: erased flash, or no chunk at all.
    Empty,
    /// Zeros: a zero header, or space preallocated and never written.
    Zero,
    /// A torn end: a chunk cut short by the end of the file, or torn by a power cut.
    Torn,
    /// Bytes dropped with a report.
    Damaged,
    /// A ring image's newest block, where the writer is.
    RingHead,
    /// A ring image's oldest block, where reading starts.
    RingTail,
    /// A ring image's block that is not read: erased ahead of the writer, not part of the
    /// log, or beyond the ring.
    NotRead,
}

impl BlockState {
    /// Every state, in the order a legend lists them.
    pub const ALL: [Self; 8] = [
        Self::Clean,
        Self::Damaged,
        Self::Torn,
        Self::Zero,
        Self::Empty,
        Self::RingHead,
        Self::RingTail,
        Self::NotRead,
    ];

    /// The state of a block of these spans, as its bytes alone tell it.
    #[must_use]
    pub fn of(spans: &[Span]) -> Self {
        let any = |f: fn(&SpanKind) -> bool| spans.iter().any(|s| f(&s.kind));
        if any(SpanKind::is_damage) {
            Self::Damaged
        } else if any(|k| matches!(k, SpanKind::Torn { .. } | SpanKind::OldRecord { .. })) {
            Self::Torn
        } else if any(|k| matches!(k, SpanKind::Chunk { .. })) {
            Self::Clean
        } else if any(|k| matches!(k, SpanKind::ZeroHeader)) {
            Self::Zero
        } else {
            Self::Empty
        }
    }

    /// A short name: `clean`, `damaged`, `torn`, `zero`, `empty`, `ring_head`, `ring_tail`,
    /// `not_read`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Clean => "clean",
            Self::Empty => "empty",
            Self::Zero => "zero",
            Self::Torn { .. } => "torn",
            Self::Damaged => "damaged",
            Self::RingHead => "ring_head",
            Self::RingTail => "ring_tail",
            Self::NotRead => "not_read",
        }
    }

    /// One letter for a map without colour: `.` clean, `X` damaged, `T` torn, `0` zero,
    /// ` ` empty, `H` ring head, `O` ring tail (oldest), `-` not read.
    #[must_use]
    pub fn letter(self) -> char {
        match self {
            Self::Clean => '.',
            Self::Damaged => 'X',
            Self::Torn => 'T',
            Self::Zero => '0',
            Self::Empty => ' ',
            Self::RingHead => 'H',
            Self::RingTail => 'O',
            Self::NotRead => '-',
        }
    }

    /// What it means, for a legend.
    #[must_use]
    pub fn meaning(self) -> &'static str {
        match self {
            Self::Clean => "records, nothing dropped",
            Self::Damaged => "damaged: bytes dropped",
            Self::Torn => "torn end of the log",
            Self::Zero => "zeros (preallocated, or a zero header)",
            Self::Empty => "nothing read here (erased, or past the end)",
            Self::RingHead => "ring: newest block",
            Self::RingTail => "ring: oldest block",
            Self::NotRead => "ring: not read (erased ahead, not in the log)",
        }
    }

    /// How much it says: a block (or a cell of several) shows the highest of what was found.
    #[must_use]
    pub fn rank(self) -> u8 {
        match self {
            Self::Empty => 0,
            Self::Clean => 1,
            Self::Zero => 2,
            Self::Torn => 3,
            Self::Damaged => 4,
            Self::RingHead | Self::RingTail | Self::NotRead => 5,
        }
    }
}

/// The state of every block of a file as a reader reads it: records, damage and the torn end,
/// marked where they lie (offsets in the file, a ring image's too), the highest of them kept
/// per block; then a ring image's roles. Memory: one byte a block.
///
/// ```
/// use logfmt_std::layout::{BlockState, Marks};
///
/// let mut marks = Marks::new(3 * 32_768);
/// marks.mark(0, 40_000, BlockState::Clean);
/// marks.mark(70_000, 70_010, BlockState::Damaged);
/// assert_eq!(marks.states(), [BlockState::Clean, BlockState::Clean, BlockState::Damaged]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marks {
    states: Vec<BlockState>,
    /// The input's length is not known (a pipe): the blocks are those marked.
    growing: bool,
}

impl Marks {
    /// Every block of a file of `len` bytes, nothing found yet.
    #[must_use]
    pub fn new(len: u64) -> Self {
        let count = usize::try_from(len.div_ceil(BLOCK_SIZE as u64)).unwrap_or(0);
        Self {
            states: vec![BlockState::Empty; count],
            growing: false,
        }
    }

    /// The blocks of an input whose length is not known (a pipe): as many as are marked, up
    /// to the last block marked.
    ///
    /// ```
    /// use logfmt_std::layout::{BlockState, Marks};
    ///
    /// let mut marks = Marks::growing();
    /// marks.mark(70_000, 70_010, BlockState::Damaged);
    /// assert_eq!(marks.states(), [BlockState::Empty, BlockState::Empty, BlockState::Damaged]);
    /// ```
    #[must_use]
    pub fn growing() -> Self {
        Self {
            states: Vec::new(),
            growing: true,
        }
    }

    /// Raises every block of `[from, to)` (at least the block of `from`) to `state` where it
    /// ranks higher.
    pub fn mark(&mut self, from: u64, to: u64, state: BlockState) {
        let block = BLOCK_SIZE as u64;
        let Ok(first) = usize::try_from(from / block) else {
            return;
        };
        let last =
            usize::try_from(to.max(from + 1).saturating_sub(1) / block).unwrap_or(usize::MAX);
        if self.growing && last >= self.states.len() && last < usize::MAX {
            self.states.resize(last + 1, BlockState::Empty);
        }
        let end = last.saturating_add(1).min(self.states.len());
        for slot in self.states.iter_mut().take(end).skip(first) {
            if state.rank() > slot.rank() {
                *slot = state;
            }
        }
    }

    /// Marks every block from `from` on as the torn end (whatever was found there before):
    /// the log ends at `from`.
    pub fn torn_from(&mut self, from: u64) {
        let first = usize::try_from(from / BLOCK_SIZE as u64).unwrap_or(usize::MAX);
        for slot in self.states.iter_mut().skip(first) {
            if !matches!(slot, BlockState::NotRead) {
                *slot = BlockState::Torn;
            }
        }
    }

    /// Marks the torn blocks from `from` on as zeros: a torn end found to be all zeros.
    pub fn zero_fill(&mut self, from: u64) {
        let first = usize::try_from(from / BLOCK_SIZE as u64).unwrap_or(usize::MAX);
        for slot in self.states.iter_mut().skip(first) {
            if *slot == BlockState::Torn {
                *slot = BlockState::Zero;
            }
        }
    }

    /// A ring image's roles: its blocks that are not read, its newest and its oldest (where
    /// nothing worse was found).
    pub fn ring(&mut self, image: &RingImage) {
        let ring = image.ring();
        for (index, slot) in (0u32..).zip(self.states.iter_mut()) {
            let read = matches!(
                image.role(index),
                BlockRole::Read { .. } | BlockRole::ReadAsErased { .. }
            );
            if !read {
                *slot = BlockState::NotRead;
            } else if matches!(slot, BlockState::Clean | BlockState::Empty) {
                if index == ring.head() {
                    *slot = BlockState::RingHead;
                } else if index == image.oldest() {
                    *slot = BlockState::RingTail;
                }
            }
        }
    }

    /// The states, one a block, in file order.
    #[must_use]
    pub fn states(&self) -> &[BlockState] {
        &self.states
    }

    /// The states, one a block.
    #[must_use]
    pub fn into_states(self) -> Vec<BlockState> {
        self.states
    }
}

/// One block of a file, as [`BlockMap`] walks it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Block {
    /// Its index in the file (from 0).
    pub index: u64,
    /// Its file offset.
    pub offset: u64,
    /// Its length (the last block may be short).
    pub len: u64,
    /// What it is, in one word.
    pub state: BlockState,
    /// In a ring image: what the block is to the log.
    pub role: Option<BlockRole>,
    /// Its spans (none for a ring image's block that is not read).
    pub spans: Vec<Span>,
}

/// A file walked block by block, in file order: a plain log, a flash image, or a ring image
/// (found from its ring headers; its blocks that are read are parsed with the erased value
/// its headers give, and carry their [`BlockRole`]).
#[derive(Debug)]
pub struct BlockMap<R> {
    file: R,
    len: u64,
    next: u64,
    rules: ChunkRules,
    ring: Option<RingImage>,
    buffer: Vec<u8>,
}

impl<R: Read + Seek> BlockMap<R> {
    /// The walk of `file`, `len` bytes long, read with `read`'s rules.
    ///
    /// # Errors
    /// Reading the ring headers failed.
    pub fn new(mut file: R, len: u64, read: &ReadOptions) -> io::Result<Self> {
        let ring = RingImage::read(&mut file, len)?;
        let read = match &ring {
            Some(ring) => ring.read_options(read.clone()),
            None => read.clone(),
        };
        Ok(Self {
            file,
            len,
            next: 0,
            rules: ChunkRules::new(&read),
            ring,
            buffer: vec![0; BLOCK_SIZE],
        })
    }

    /// The ring image the file is, if it is one.
    pub fn ring(&self) -> Option<&RingImage> {
        self.ring.as_ref()
    }

    /// The file's length.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Blocks in the file.
    pub fn blocks(&self) -> u64 {
        self.len.div_ceil(BLOCK_SIZE as u64)
    }

    /// The next block, or `None` after the last.
    ///
    /// # Errors
    /// Reading the file failed.
    pub fn next_block(&mut self) -> io::Result<Option<Block>> {
        let offset = self.next * BLOCK_SIZE as u64;
        if offset >= self.len {
            return Ok(None);
        }
        let index = self.next;
        self.next += 1;
        let len = (self.len - offset).min(BLOCK_SIZE as u64);
        let role = self
            .ring
            .as_ref()
            .map(|ring| ring.role(u32::try_from(index).unwrap_or(u32::MAX)));
        if matches!(
            role,
            Some(BlockRole::Ahead | BlockRole::NotInLog | BlockRole::Outside)
        ) {
            return Ok(Some(Block {
                index,
                offset,
                len,
                state: BlockState::NotRead,
                role,
                spans: Vec::new(),
            }));
        }
        let block = &mut self.buffer[..usize::try_from(len).unwrap_or(BLOCK_SIZE)];
        self.file.seek(SeekFrom::Start(offset))?;
        self.file.read_exact(block)?;
        let spans = block_spans(block, offset, &mut self.rules);
        Ok(Some(Block {
            index,
            offset,
            len,
            state: BlockState::of(&spans),
            role,
            spans,
        }))
    }
}

impl<R: Read + Seek> Iterator for BlockMap<R> {
    type Item = io::Result<Block>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_block().transpose()
    }
}

/// What a reader found in a whole file, with each block's state: the counts and damage
/// `logfmt verify` reports and the [`Marks`] a map draws. Memory: one byte a block, the
/// corruptions kept (at most `keep`), and a record of at most `limit` bytes assembled at a time.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Survey {
    /// Complete records read.
    pub records: u64,
    /// Their payload bytes.
    pub payload_bytes: u64,
    /// Corruptions reported, kept or not.
    pub corruption_count: u64,
    /// The bytes of every corruption.
    pub dropped_bytes: u64,
    /// The first corruptions (offsets in the file), at most the number asked for.
    pub corruptions: Vec<Damage>,
    /// The torn or unwritten end of the log, if any (offsets in the file); a damaged end with
    /// well-formed chunks after it is also a corruption.
    pub tail: Option<Damage>,
    /// Each block's state.
    pub marks: Marks,
}

impl Survey {
    /// Reads every entry of `reader` over a file of `len` bytes (a ring image's, when `ring`
    /// is given: offsets are mapped back to the image), keeping the first `keep` corruptions and
    /// assembling records of at most `limit` bytes; `on_record` sees each record's index, file
    /// offset, length and data (`None` for one larger than `limit`).
    ///
    /// ```
    /// use logfmt_std::layout::{BlockState, Survey};
    /// use logfmt_std::{advanced::LogReader, LogReaderOptions};
    ///
    /// let log = [0, 0, 0, 0, 2, 0, 1, b'h', b'i']; // a checksum that does not match
    /// let mut reader = LogReader::from_slice(&log, &LogReaderOptions::new());
    /// let survey = Survey::read(&mut reader, log.len() as u64, None, 10, 1 << 20, |_, _, _, _| {});
    /// assert_eq!((survey.records, survey.corruption_count, survey.dropped_bytes), (0, 1, 9));
    /// assert_eq!(survey.marks.states(), [BlockState::Damaged]);
    /// ```
    pub fn read<S: logfmt_core::BlockSource>(
        reader: &mut crate::LogReader<S>,
        len: u64,
        ring: Option<&RingImage>,
        keep: usize,
        limit: usize,
        on_record: impl FnMut(u64, u64, u64, Option<&[u8]>),
    ) -> Self {
        let mut survey = Self::new(len);
        survey.read_on(reader, ring, keep, limit, on_record, |_| false);
        survey
    }

    /// Nothing read yet of a file of `len` bytes: for [`read_on`](Self::read_on).
    pub fn new(len: u64) -> Self {
        Self::with_marks(Marks::new(len))
    }

    /// Nothing read yet of an input whose length is not known (a pipe): its blocks are those
    /// its records and damage lie in ([`Marks::growing`]). For [`read_on`](Self::read_on).
    ///
    /// ```
    /// use logfmt_std::layout::{BlockState, Survey};
    /// use logfmt_std::{advanced::LogReader, LogReaderOptions};
    ///
    /// let log = [0, 0, 0, 0, 2, 0, 1, b'h', b'i']; // a checksum that does not match
    /// let mut reader = LogReader::from_slice(&log, &LogReaderOptions::new());
    /// let mut survey = Survey::growing();
    /// survey.read_on(&mut reader, None, 10, 1 << 20, |_, _, _, _| {}, |_| false);
    /// assert_eq!(survey.marks.states(), [BlockState::Damaged]);
    /// ```
    pub fn growing() -> Self {
        Self::with_marks(Marks::growing())
    }

    fn with_marks(marks: Marks) -> Self {
        Self {
            records: 0,
            payload_bytes: 0,
            corruption_count: 0,
            dropped_bytes: 0,
            corruptions: Vec::new(),
            tail: None,
            marks,
        }
    }

    /// As [`read`](Self::read), in steps: reads entries of `reader` until `pause(reader)`,
    /// asked before each entry, says to stop (returns `false`: call again to read on, with the
    /// same reader and arguments), or until the end (returns `true`: the survey is complete).
    /// For input that arrives in parts, read as far as it has arrived.
    ///
    /// ```
    /// use logfmt_std::layout::Survey;
    /// use logfmt_std::{advanced::LogReader, LogReaderOptions};
    ///
    /// let log = [0, 0, 0, 0, 2, 0, 1, b'h', b'i']; // a checksum that does not match
    /// let mut reader = LogReader::from_slice(&log, &LogReaderOptions::new());
    /// let mut survey = Survey::new(log.len() as u64);
    /// let mut asked = 0;
    /// // Paused once, before the first entry; then read to the end.
    /// while !survey.read_on(&mut reader, None, 10, 1 << 20, |_, _, _, _| {}, |_| {
    ///     asked += 1;
    ///     asked == 1
    /// }) {}
    /// assert_eq!((survey.records, survey.corruption_count, survey.dropped_bytes), (0, 1, 9));
    /// ```
    pub fn read_on<S: logfmt_core::BlockSource>(
        &mut self,
        reader: &mut crate::LogReader<S>,
        ring: Option<&RingImage>,
        keep: usize,
        limit: usize,
        mut on_record: impl FnMut(u64, u64, u64, Option<&[u8]>),
        mut pause: impl FnMut(&crate::LogReader<S>) -> bool,
    ) -> bool {
        let place = |offset: u64| ring.map_or(offset, |ring| ring.region_offset(offset));
        loop {
            if pause(reader) {
                return false;
            }
            let (offset, end, data, bytes) = match reader.next_bounded(limit) {
                Ok(Some(Bounded::Record(record))) => (
                    record.offset,
                    record.end,
                    Some(record.data),
                    record.data.len() as u64,
                ),
                Ok(Some(Bounded::Oversized(record))) => {
                    (record.offset, record.end, None, record.len)
                }
                Ok(Some(Bounded::Damage(damage))) => {
                    self.damage(ring, damage, keep);
                    continue;
                }
                Ok(None) => break,
                Err(ReadError::Damaged(damage)) => {
                    self.damage(ring, damage, keep);
                    break;
                }
                Err(_) => {
                    if let Some(dropped) = reader.ending().and_then(Ending::read_error) {
                        self.damage(ring, dropped.into(), keep);
                    }
                    break;
                }
            };
            let (start, stop) = (place(offset), place(end.saturating_sub(1)));
            self.marks.mark(
                start,
                stop.saturating_add(1).max(start + 1),
                BlockState::Clean,
            );
            on_record(self.records, start, bytes, data);
            self.records += 1;
            self.payload_bytes += bytes;
        }
        if let Some(tail) = reader.tail() {
            self.damage(ring, tail, keep);
        }
        true
    }

    /// The first damage the survey found (a corruption or the torn end), where a reader of
    /// Pebble's stops: what [`pebble_end`](crate::advanced::pebble_end) is asked about.
    #[must_use]
    pub fn first_damage(&self) -> Option<u64> {
        self.corruptions
            .first()
            .map(|d| d.offset)
            .into_iter()
            .chain(self.tail.map(|t| t.offset))
            .min()
    }

    /// Applies Pebble's verdict on the log's end ([`PebbleEnd`](crate::advanced::PebbleEnd)):
    /// a torn end leaves no corruption, and the blocks from it on are the torn tail; a proven
    /// corruption leaves the survey as it is.
    ///
    /// ```
    /// use logfmt_std::layout::{BlockState, Survey};
    /// use logfmt_std::advanced::{LogReader, PebbleEnd};
    /// use logfmt_std::{Damage, DamageKind, LogReaderOptions};
    ///
    /// let log = [0, 0, 0, 0, 2, 0, 1, b'h', b'i']; // a checksum that does not match
    /// let mut reader = LogReader::from_slice(&log, &LogReaderOptions::new());
    /// let mut survey = Survey::read(&mut reader, 9, None, 10, 1 << 20, |_, _, _, _| {});
    /// assert_eq!(survey.first_damage(), Some(0));
    /// survey.pebble_end(&PebbleEnd::Torn(Damage::new(0, 9, DamageKind::TornTail)));
    /// assert_eq!((survey.corruption_count, survey.dropped_bytes), (0, 0));
    /// assert_eq!(survey.marks.states(), [BlockState::Torn]);
    /// ```
    pub fn pebble_end(&mut self, end: &crate::advanced::PebbleEnd) {
        let Some(tail) = end.torn() else {
            return;
        };
        let before: Vec<Damage> = self
            .corruptions
            .iter()
            .copied()
            .filter(|d| end.keeps(d.offset))
            .collect();
        self.corruption_count = before.len() as u64;
        self.dropped_bytes = before.iter().map(|d| d.bytes).sum();
        self.corruptions = before;
        self.tail = Some(tail);
        self.marks.torn_from(tail.offset);
    }

    fn damage(&mut self, ring: Option<&RingImage>, damage: Damage, keep: usize) {
        let damage = ring.map_or(damage, |ring| ring.region_damage(damage));
        let end = damage.offset.saturating_add(damage.bytes.max(1));
        match damage.kind {
            DamageKind::Skipped => self.marks.mark(damage.offset, end, BlockState::Zero),
            DamageKind::TornTail => {
                if self.tail.is_none() {
                    self.marks.mark(damage.offset, end, BlockState::Torn);
                    self.tail = Some(damage);
                }
            }
            _ => {
                // A damaged end with well-formed chunks after it is the log's end, and records
                // lost there: both.
                if matches!(damage.kind, DamageKind::LostTail { .. }) && self.tail.is_none() {
                    self.tail = Some(damage);
                }
                self.corruption_count += 1;
                self.dropped_bytes += damage.bytes;
                self.marks.mark(damage.offset, end, BlockState::Damaged);
                if self.corruptions.len() < keep {
                    self.corruptions.push(damage);
                }
            }
        }
    }
}
