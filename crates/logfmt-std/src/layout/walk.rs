//! A log walked block by block with its chunks counted: what `logfmt chunks` lists and
//! `logfmt stats` sums up.

use logfmt_core::parts::block::ChunkRules;
use logfmt_core::{BLOCK_SIZE, LogEnd, ReadOptions, parts::RecordType};

use super::{ChunkRole, Span, SpanKind, each_span};
use crate::StaleTail;

/// The chunks and the regions that are not chunks of a log, counted over the blocks walked.
///
/// ```
/// use logfmt_std::advanced::ReadOptions;
/// use logfmt_std::layout::Walk;
///
/// // A FULL chunk of "hi" whose checksum does not match: it and the rest of its block are
/// // dropped; then a block of zeros, skipped.
/// let mut block = vec![0, 0, 0, 0, 2, 0, 1, b'h', b'i'];
/// block.resize(40, 0);
/// let mut walk = Walk::new(&ReadOptions::default());
/// walk.block(0, &block, |_, _, _| {});
/// walk.block(32_768, &[0; 20], |_, _, _| {});
/// let counts = walk.counts();
/// assert_eq!((counts.blocks, counts.bytes), (2, 60));
/// assert_eq!((counts.damaged_regions, counts.damaged_bytes, counts.skipped_bytes), (1, 40, 20));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Counts {
    /// Bytes walked.
    pub bytes: u64,
    /// Blocks walked.
    pub blocks: u64,
    /// Chunks of types FULL, FIRST, MIDDLE, LAST (legacy or recyclable), in that order.
    pub by_type: [u64; 4],
    /// Chunks of packs (types 0x51–0x54).
    pub pack_chunks: u64,
    /// The bytes of the pack chunks, headers included.
    pub pack_bytes: u64,
    /// Chunks of any other type.
    pub unknown: u64,
    /// The bytes of chunk headers.
    pub header_bytes: u64,
    /// The bytes of block trailers.
    pub trailer_bytes: u64,
    /// Zero headers, erased flash and padding: skipped without a report.
    pub skipped_bytes: u64,
    /// Bad checksums and lengths: dropped with a report.
    pub damaged_bytes: u64,
    /// The regions of `damaged_bytes`.
    pub damaged_regions: u64,
    /// Chunks cut short, and bytes torn by a power cut.
    pub torn_bytes: u64,
    /// A damaged region found to be the bytes of a recycled file's earlier use, not damage:
    /// the bytes between where the log's records end and the old record that begins the next
    /// block (file offset and length).
    pub stale_garbage: Option<(u64, u64)>,
    /// Where the log ended at an old record (the old record, or the garbage before it), and
    /// the old record's log number.
    old_record: Option<(u64, u32)>,
    /// The damaged region that ended the previous block, if any: file offset and length.
    last_damage: Option<(u64, u64)>,
}

impl Counts {
    /// Every chunk counted.
    #[must_use]
    pub fn chunks(&self) -> u64 {
        self.by_type.iter().sum::<u64>() + self.pack_chunks + self.unknown
    }

    /// The stale bytes after an old record (a chunk of another log number), or after the
    /// garbage before it, to the end of what was walked.
    #[must_use]
    pub fn stale(&self) -> Option<StaleTail> {
        let (offset, log_number) = self.old_record?;
        StaleTail::new(LogEnd::OldRecord { offset, log_number }, self.bytes)
    }

    /// Adds the counts of `other`, later blocks of the same log walked on their own (a log
    /// walked in parts): right where no part begins after a block that ends in damage or
    /// holds an old record (what a count carries from one block to the next).
    pub fn merge(&mut self, other: &Self) {
        self.bytes += other.bytes;
        self.blocks += other.blocks;
        for (mine, theirs) in self.by_type.iter_mut().zip(other.by_type) {
            *mine += theirs;
        }
        self.pack_chunks += other.pack_chunks;
        self.pack_bytes += other.pack_bytes;
        self.unknown += other.unknown;
        self.header_bytes += other.header_bytes;
        self.trailer_bytes += other.trailer_bytes;
        self.skipped_bytes += other.skipped_bytes;
        self.damaged_bytes += other.damaged_bytes;
        self.damaged_regions += other.damaged_regions;
        self.torn_bytes += other.torn_bytes;
    }

    /// Applies Pebble's verdict on the log's end ([`PebbleEnd`](crate::advanced::PebbleEnd)):
    /// at a torn end, the damaged regions (all at or after it: the reader stops at the first)
    /// are counted torn; a proven corruption leaves the counts as they are.
    ///
    /// ```
    /// use logfmt_std::advanced::{PebbleEnd, ReadOptions};
    /// use logfmt_std::layout::Walk;
    /// use logfmt_std::{Damage, DamageKind};
    ///
    /// let mut walk = Walk::new(&ReadOptions::default());
    /// walk.block(0, &[0, 0, 0, 0, 2, 0, 1, b'h', b'i', 0, 0], |_, _, _| {});
    /// let mut counts = walk.into_counts();
    /// counts.pebble_end(&PebbleEnd::Torn(Damage::new(0, 11, DamageKind::TornTail)));
    /// assert_eq!((counts.damaged_regions, counts.damaged_bytes, counts.torn_bytes), (0, 0, 11));
    /// ```
    pub fn pebble_end(&mut self, end: &crate::advanced::PebbleEnd) {
        if end.torn().is_some() {
            self.torn_bytes += self.damaged_bytes;
            self.damaged_bytes = 0;
            self.damaged_regions = 0;
        }
    }

    /// Counts `span` of the block at file offset `block_offset`.
    #[inline]
    fn count(&mut self, block_offset: u64, span: &Span) {
        let damage = self.last_damage.take();
        match span.kind {
            SpanKind::Chunk {
                record_type,
                header_len,
                role,
                ..
            } => {
                self.header_bytes += u64::from(header_len);
                // By the type byte, whether the reader reads the chunk or drops it: a role
                // that reads it says the type at once.
                match role {
                    ChunkRole::Fragment(kind) => {
                        self.by_type[kind as usize] += 1;
                        return;
                    }
                    ChunkRole::Pack(_) => {
                        self.pack_chunks += 1;
                        self.pack_bytes += span.len;
                        return;
                    }
                    _ => {}
                }
                let known = RecordType::try_from(record_type).ok();
                match known.and_then(|t| Some((t.is_pack(), t.fragment_kind()?))) {
                    Some((true, _)) => {
                        self.pack_chunks += 1;
                        self.pack_bytes += span.len;
                    }
                    Some((false, kind)) => self.by_type[kind as usize] += 1,
                    None => self.unknown += 1,
                }
            }
            SpanKind::Trailer => self.trailer_bytes += span.len,
            SpanKind::Torn { .. } => self.torn_bytes += span.len,
            SpanKind::Padding | SpanKind::ZeroHeader | SpanKind::Erased => {
                self.skipped_bytes += span.len;
            }
            SpanKind::BadLength { .. }
            | SpanKind::BadTrailer
            | SpanKind::ChecksumMismatch { .. } => {
                self.damaged_bytes += span.len;
                self.damaged_regions += 1;
                if span.offset + span.len == block_offset + BLOCK_SIZE as u64 {
                    self.last_damage = Some((span.offset, span.len));
                }
            }
            SpanKind::OldRecord { log_number } => {
                self.old_record = Some((span.offset, log_number));
                // The damage just before, up to this block: the earlier use's bytes too.
                if let Some((from, bytes)) = damage
                    && span.offset == block_offset
                    && from + bytes == span.offset
                {
                    self.damaged_bytes -= bytes;
                    self.damaged_regions -= 1;
                    self.stale_garbage = Some((from, bytes));
                    self.old_record = Some((from, log_number));
                }
            }
        }
    }
}

/// A log walked block by block, in the order its blocks are handed over (a ring image's in its
/// reading order): each block's spans, parsed as the reader parses them, and their [`Counts`].
/// An old record (a chunk of an earlier use of a recycled file) ends the log: the blocks after
/// its block are only counted in `bytes` and `blocks`. Memory: nothing that grows.
///
/// ```
/// use logfmt_std::advanced::ReadOptions;
/// use logfmt_std::layout::{SpanKind, Walk};
///
/// let mut walk = Walk::new(&ReadOptions::default());
/// let mut kinds = Vec::new();
/// walk.block(0, &[0u8; 40], |span, _, _| kinds.push(span.kind.name()));
/// assert_eq!(kinds, ["zero_header"]);
/// assert_eq!(walk.counts().skipped_bytes, 40);
/// ```
#[derive(Debug, Clone)]
pub struct Walk {
    rules: ChunkRules,
    counts: Counts,
    ended: bool,
}

impl Walk {
    /// A walk with `read`'s rules (a ring image's erased value included).
    #[must_use]
    pub fn new(read: &ReadOptions) -> Self {
        Self {
            rules: ChunkRules::new(read),
            counts: Counts::default(),
            ended: false,
        }
    }

    /// Walks `block`, the block at file offset `block_offset`: counts its spans and calls
    /// `visit` with each, its bytes and the counts with it counted (none once an old record
    /// has ended the log).
    pub fn block(
        &mut self,
        block_offset: u64,
        block: &[u8],
        mut visit: impl FnMut(&Span, &[u8], &Counts),
    ) {
        if block.is_empty() {
            return;
        }
        self.counts.blocks += 1;
        self.counts.bytes += block.len() as u64;
        if self.ended {
            return;
        }
        let (counts, ended) = (&mut self.counts, &mut self.ended);
        each_span(block, block_offset, &mut self.rules, |span, bytes| {
            counts.count(block_offset, span);
            *ended |= matches!(span.kind, SpanKind::OldRecord { .. });
            visit(span, bytes, counts);
        });
    }

    /// The counts so far.
    #[must_use]
    pub fn counts(&self) -> &Counts {
        &self.counts
    }

    /// The counts.
    #[must_use]
    pub fn into_counts(self) -> Counts {
        self.counts
    }

    /// Whether an old record has ended the log.
    #[must_use]
    pub fn ended(&self) -> bool {
        self.ended
    }
}
