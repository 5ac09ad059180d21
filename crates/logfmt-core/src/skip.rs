//! Bytes a reader passes over without a corruption report, and why.
//!
//! LevelDB's reader skips some regions silently: block trailers, the rest of a block after a
//! zero header, chunks that begin before the initial offset and the fragments after it that
//! belong to an earlier record. The decoder reports each such region as a [`Skip`], so that a
//! layer above can tell a trailer from a gap without parsing the block again; the
//! LevelDB-faithful [`Reader`](crate::Reader) ignores them.

use core::fmt;

use crate::format::FragmentKind;

/// Why bytes were skipped without a corruption report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum SkipKind {
    /// A block trailer: fewer bytes than a header before the end of a block.
    Trailer,
    /// A zero header (type 0, length 0: preallocated space) and what LevelDB skips with it,
    /// to the end of its block — or, with
    /// [`ReadOptions::resync_after_zeros`](crate::ReadOptions::resync_after_zeros),
    /// the run of zeros up to the chunk after it.
    ZeroHeader,
    /// Erased flash ([`ReadOptions::erased`](crate::ReadOptions::erased)): nothing
    /// written from here to the end of the block.
    Erased,
    /// Erased bytes of a flash image up to the next chunk: the rest of a flash word left
    /// unprogrammed by a flush, or the words a writer skipped on reopening.
    Padding,
    /// Bytes of a flash image torn by a power cut: a chunk that is not well-formed, then the
    /// writer's resume marker ([`RESUME_TYPE`](crate::format::RESUME_TYPE)) where it went on.
    Torn,
    /// A chunk of an unknown type with bit 7 set, skipped under
    /// [`ReadOptions::skip_ignorable_types`](crate::ReadOptions::skip_ignorable_types).
    Ignorable(u8),
    /// A ring log's block header ([`RING_TYPE`](crate::format::RING_TYPE), in a flash image):
    /// the lap and geometry of the block, not a record.
    RingHeader,
    /// Bytes before the initial offset: whole blocks never read, chunks that begin before it,
    /// and damage there, which LevelDB does not report.
    BeforeInitialOffset,
    /// A `MIDDLE` or `LAST` chunk after the initial offset that continues a record begun
    /// before it (LevelDB's resynchronisation). A `LAST` chunk ends it.
    Resync(FragmentKind),
    /// RocksDB's compression record ([`SET_COMPRESSION_TYPE`](crate::format::SET_COMPRESSION_TYPE)),
    /// with its codec (7: zstd): the records after it are compressed.
    Compression(u32),
    /// RocksDB's timestamp-size record ([`Dialect::RocksDb`](crate::parts::Dialect)): the
    /// user keys of the write batches after it end in a timestamp of this size, per column
    /// family. `entries` pairs in all; the first is given (read them all from the chunk with
    /// [`TimestampSizes`](crate::parts::dialect::TimestampSizes)).
    TimestampSizes {
        /// How many (column family, size) pairs the record holds.
        entries: u16,
        /// The first: column family id and timestamp size in bytes.
        first: (u32, u16),
    },
    /// RocksDB's predecessor-WAL record: the WAL before this one.
    PredecessorWal(crate::parts::dialect::PredecessorWal),
}

impl fmt::Display for SkipKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Trailer => f.write_str("block trailer"),
            Self::ZeroHeader => f.write_str("zero header"),
            Self::Erased => f.write_str("erased flash"),
            Self::Padding => f.write_str("flash padding"),
            Self::Torn => f.write_str("torn by a power cut"),
            Self::Ignorable(t) => write!(f, "ignorable record type {t}"),
            Self::RingHeader => f.write_str("ring block header"),
            Self::Compression(codec) => write!(f, "compression record (codec {codec})"),
            Self::TimestampSizes { entries, first } => write!(
                f,
                "timestamp-size record ({entries} column famil{}; column family {} has \
                 {}-byte timestamps)",
                if *entries == 1 { "y" } else { "ies" },
                first.0,
                first.1
            ),
            Self::PredecessorWal(p) => write!(f, "predecessor WAL record ({p})"),
            Self::BeforeInitialOffset => f.write_str("before the initial offset"),
            Self::Resync(_) => {
                f.write_str("continuation of a record begun before the initial offset")
            }
        }
    }
}

/// A region the reader passed over without a corruption report.
///
/// ```
/// use logfmt_core::parts::{Event, FragmentReader, SkipKind};
///
/// // "foo" as a FULL chunk, then a zero header (preallocated space).
/// let mut log = vec![0xdd, 0x5f, 0xb3, 0x7a, 0x03, 0x00, 0x01, b'f', b'o', b'o'];
/// log.extend_from_slice(&[0u8; 20]);
/// let mut reader = FragmentReader::from_slice(&log);
/// assert!(matches!(reader.next()?, Some(Event::Fragment(_))));
/// let Some(Event::Skipped(skip)) = reader.next()? else { panic!() };
/// assert_eq!((skip.offset, skip.len, skip.kind), (10, 20, SkipKind::ZeroHeader));
/// assert_eq!(reader.next()?, None);
/// # Ok::<(), core::convert::Infallible>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Skip {
    /// File offset of the first byte skipped.
    pub offset: u64,
    /// Bytes skipped.
    pub len: u64,
    /// Why.
    pub kind: SkipKind,
}

impl Skip {
    /// File offset just past the bytes skipped.
    #[must_use]
    pub const fn end(&self) -> u64 {
        self.offset.saturating_add(self.len)
    }
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "skipped {} bytes at offset {}: {}",
            self.len, self.offset, self.kind
        )
    }
}
