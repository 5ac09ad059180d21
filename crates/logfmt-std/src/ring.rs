//! Ring images: a dump of a flash region that holds a ring log ([`logfmt_core::parts::ring`]), found
//! from its blocks' ring headers and read from its oldest block to its newest.
//!
//! The core decides everything here: which block is the newest and the oldest, the order the
//! blocks are read in, which of them hold part of the log ([`Ring`]); this module reads the
//! headers from an image, serves its blocks in that order ([`RingSource`]) and maps what a
//! reader reports back to image offsets ([`RingImage::region_offset`]).

use std::fmt;
use std::io::{self, ErrorKind, Read, Seek, SeekFrom};

use logfmt_core::parts::block::{BlockParser, ChunkRules, Parsed};
use logfmt_core::parts::format::{HEADER_SIZE, RING_TYPE};
use logfmt_core::parts::ring::{RING_HEADER_SIZE, Ring, RingHeader};
use logfmt_core::{BLOCK_SIZE, BlockSource, ReadOptions};

use crate::recovery::{Damage, DamageKind};

/// A ring log found in an image: the intact ring headers of its blocks, the ring they make
/// (geometry, newest block, lap), its oldest block and the value erased flash reads as (from
/// the newest block's header).
///
/// An image is a ring image when at least one of its blocks begins with an intact ring header
/// ([`RingHeader::parse`]). An image cut short of a whole number of 32 KiB blocks is one too
/// if it begins as a ring image does (with a ring header or erased flash): it is read in the
/// ring's order, the bytes it lacks read as erased flash, and the shortfall is reported
/// ([`disagreements`](Self::disagreements)), as is every header that disagrees with the ring
/// the newest block's header describes. Read it with the reader options
/// of [`read_options`](Self::read_options) over a [`RingSource`]: records and damage come in
/// the ring's order, at offsets counted from the oldest block, which
/// [`region_offset`](Self::region_offset) turns into image offsets.
///
/// ```
/// use logfmt_core::parts::ring::RingHeader;
/// use logfmt_std::advanced::{BLOCK_SIZE, BlockRole, RingImage};
///
/// // Four blocks: the writer is in block 0 (lap 2), block 1 was erased ahead, blocks 2 and 3
/// // hold lap 1.
/// let mut image = vec![0xFF; 4 * BLOCK_SIZE];
/// for (block, lap, records) in [(0, 2, 90), (2, 1, 30), (3, 1, 60)] {
///     let header = RingHeader { lap, records, blocks: 4, group: 1, write_size: 8, erased: 0xFF };
///     image[block * BLOCK_SIZE..][..19].copy_from_slice(&header.encode());
/// }
/// let ring = RingImage::find(&image).expect("a ring image");
/// assert_eq!((ring.ring().head(), ring.oldest()), (0, 2));
/// assert_eq!(ring.order().collect::<Vec<_>>(), [2, 3, 0]);
/// assert_eq!(ring.role(1), BlockRole::Ahead);
/// assert_eq!(ring.records_aged_out(), 30);
/// // Byte 10 of the third block read (block 0) is at image offset 10.
/// assert_eq!(ring.region_offset(2 * BLOCK_SIZE as u64 + 10), 10);
/// assert_eq!(RingImage::find(&vec![0xFF; 4 * BLOCK_SIZE]), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingImage {
    ring: Ring,
    oldest: u32,
    /// The intact ring headers, by block index (ascending).
    headers: Vec<(u32, RingHeader)>,
    /// Blocks in the image (a last block cut short counted).
    blocks: u32,
    /// Bytes in the image.
    len: u64,
    erased: u8,
    /// Blocks not read, without an intact ring header, that hold well-formed chunks all the
    /// same: (block, chunks).
    unread: Vec<(u32, u32)>,
}

/// What in a ring image disagrees with the ring its newest block's header describes: reported
/// (one line each, [`Display`](fmt::Display)), never resolved silently
/// ([`RingImage::disagreements`]).
///
/// ```
/// use logfmt_core::parts::ring::RingHeader;
/// use logfmt_std::advanced::{BLOCK_SIZE, RingDisagreement, RingImage};
///
/// // Four blocks; block 1 holds lap 5 among blocks of lap 9.
/// let mut image = vec![0xFF; 4 * BLOCK_SIZE];
/// for (block, lap) in [(0, 9), (1, 5), (2, 9)] {
///     let header = RingHeader { lap, records: 0, blocks: 4, group: 1, write_size: 8, erased: 0xFF };
///     image[block * BLOCK_SIZE..][..19].copy_from_slice(&header.encode());
/// }
/// let ring = RingImage::find(&image).expect("a ring image");
/// let found: Vec<_> = ring.disagreements().collect();
/// assert_eq!(found, [RingDisagreement::Lap { index: 1, lap: 5, expected: 9, read: true }]);
/// assert_eq!(
///     found[0].to_string(),
///     "block 1 holds lap 5 where the ring's order needs lap 9: not part of the log, its \
///      records are not read (read as erased flash)"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RingDisagreement {
    /// Block `index`'s ring header describes another ring than the newest block's: another
    /// number of blocks, blocks per erase group, write size or erased value.
    Geometry {
        /// The block.
        index: u32,
        /// Its header.
        header: RingHeader,
        /// The newest block's header.
        newest: RingHeader,
    },
    /// Block `index` holds a lap other than the one the ring's order gives it: what it holds
    /// is not part of the log and is not read.
    Lap {
        /// The block.
        index: u32,
        /// The lap its header gives.
        lap: u32,
        /// The lap the ring's order gives it.
        expected: u32,
        /// Whether it is on the way from the oldest block to the newest (read as erased
        /// flash), rather than not read at all.
        read: bool,
    },
    /// Block `index`, beyond the ring's blocks, begins with a ring header.
    Outside {
        /// The block.
        index: u32,
        /// The blocks in the ring.
        blocks: u32,
    },
    /// Block `index` has no intact ring header, so it is not part of the log, yet it holds
    /// well-formed chunks: records that are not read.
    Unread {
        /// The block.
        index: u32,
        /// Well-formed chunks in it.
        chunks: u32,
        /// Whether it is on the way from the oldest block to the newest (read as erased
        /// flash), rather than not read at all.
        read: bool,
    },
    /// The image ends before the ring its headers describe does: the bytes it lacks are read
    /// as erased flash.
    Short {
        /// Bytes in the image.
        len: u64,
        /// Bytes in the ring.
        ring_len: u64,
    },
}

impl fmt::Display for RingDisagreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let geometry = |h: &RingHeader| {
            format!(
                "{} blocks, {} per erase group, write size {}, erased {:#04x}",
                h.blocks, h.group, h.write_size, h.erased
            )
        };
        match self {
            Self::Geometry {
                index,
                header,
                newest,
            } => write!(
                f,
                "block {index}'s ring header disagrees with the newest block's: {} there, {} \
                 in the newest",
                geometry(header),
                geometry(newest)
            ),
            Self::Lap {
                index,
                lap,
                expected,
                read,
            } => write!(
                f,
                "block {index} holds lap {lap} where the ring's order needs lap {expected}: not \
                 part of the log, its records are not read{}",
                if *read { " (read as erased flash)" } else { "" }
            ),
            Self::Unread {
                index,
                chunks,
                read,
            } => write!(
                f,
                "block {index} has no intact ring header yet holds {chunks} well-formed \
                 chunk{}: not part of the log, its records are not read{}",
                if *chunks == 1 { "" } else { "s" },
                if *read { " (read as erased flash)" } else { "" }
            ),
            Self::Outside { index, blocks } => write!(
                f,
                "block {index} begins with a ring header but lies beyond the ring's {blocks} \
                 blocks: not read"
            ),
            Self::Short { len, ring_len } => write!(
                f,
                "the image is {len} bytes, {} short of the {ring_len} bytes of the ring its \
                 headers describe: the missing bytes are read as erased flash",
                ring_len.saturating_sub(*len)
            ),
        }
    }
}

/// What a block of a ring image is to the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BlockRole {
    /// Read, and holds part of the log: the `place`-th block read (0 for the oldest).
    Read {
        /// Its place in the reading order.
        place: u32,
    },
    /// On the way from the oldest block to the newest, but holds nothing of this log (its
    /// ring header is missing or of another lap): read as erased flash.
    ReadAsErased {
        /// Its place in the reading order.
        place: u32,
    },
    /// After the newest block, up to the end of the erase group after it (the group the
    /// writer erases ahead): not written in this lap, or being erased. Not read.
    Ahead,
    /// Before the oldest block, and holds nothing of this log (erased, or left from an older
    /// lap). Not read.
    NotInLog,
    /// Beyond the ring's blocks (the image is larger than the ring its headers describe). Not
    /// read.
    Outside,
}

impl fmt::Display for BlockRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Read { place } => write!(f, "read {}", ordinal(*place)),
            Self::ReadAsErased { place } => write!(
                f,
                "read {} as erased flash: holds nothing of this log",
                ordinal(*place)
            ),
            Self::Ahead => f.write_str(
                "not read: after the newest block (not written in this lap, or erased ahead)",
            ),
            Self::NotInLog => f.write_str("not read: before the oldest block, not part of the log"),
            Self::Outside => f.write_str("not read: beyond the ring's blocks"),
        }
    }
}

/// `0` is "1st", `1` is "2nd" and so on.
fn ordinal(place: u32) -> String {
    let n = u64::from(place) + 1;
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

impl RingImage {
    /// The ring log in `image` (a whole flash region in memory), if it is a ring image.
    pub fn find(image: &[u8]) -> Option<Self> {
        if !begins_as_a_ring(image.len() as u64, image) {
            return None;
        }
        let headers = image
            .chunks(BLOCK_SIZE)
            .zip(0u32..)
            .filter_map(|(block, index)| RingHeader::parse(block).map(|h| (index, h)))
            .collect();
        let mut ring = Self::from_headers(image.len() as u64, headers)?;
        let load = |at: u64, buffer: &mut [u8]| {
            let from = usize::try_from(at).unwrap_or(usize::MAX);
            let bytes = image.get(from..).unwrap_or_default();
            let n = buffer.len().min(bytes.len());
            buffer[..n].copy_from_slice(&bytes[..n]);
            Ok::<(), io::Error>(())
        };
        ring.find_unread(load).ok()?;
        Some(ring)
    }

    /// The ring log in the image `image` of `len` bytes, if it is a ring image: reads the
    /// first bytes of each block (19 bytes a block, with one seek each; 26 of a block not read
    /// that has no intact ring header, and all of it if a chunk may begin after where its
    /// header would end), leaving the reader's position anywhere.
    ///
    /// # Errors
    /// A read or seek error; [`ErrorKind::UnexpectedEof`] if the image is shorter than `len`.
    pub fn read<R: Read + Seek>(image: &mut R, len: u64) -> io::Result<Option<Self>> {
        let block = BLOCK_SIZE as u64;
        let Ok(blocks) = u32::try_from(len.div_ceil(block)) else {
            return Ok(None);
        };
        let mut headers = Vec::new();
        let mut bytes = [0u8; RING_HEADER_SIZE];
        for index in 0..blocks {
            let at = u64::from(index) * block;
            if len - at < RING_HEADER_SIZE as u64 {
                break;
            }
            image.seek(SeekFrom::Start(at))?;
            image.read_exact(&mut bytes)?;
            if index == 0 && !begins_as_a_ring(len, &bytes) {
                return Ok(None);
            }
            if let Some(header) = RingHeader::parse(&bytes) {
                headers.push((index, header));
            }
        }
        let Some(mut ring) = Self::from_headers(len, headers) else {
            return Ok(None);
        };
        ring.find_unread(|at, buffer| {
            image.seek(SeekFrom::Start(at))?;
            image.read_exact(buffer)
        })?;
        Ok(Some(ring))
    }

    /// Looks at the blocks not read that have no intact ring header for well-formed chunks
    /// (records the ring does not read), `load` filling a buffer from an image offset. Reads
    /// 26 bytes of each such block, and the whole block only if a chunk header may follow
    /// where the ring header would end.
    fn find_unread<E>(
        &mut self,
        mut load: impl FnMut(u64, &mut [u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let rules = ChunkRules::new(&ReadOptions::new().erased(Some(self.erased)));
        let mut buffer = vec![0u8; BLOCK_SIZE];
        let peek = RING_HEADER_SIZE + HEADER_SIZE;
        for index in 0..self.blocks {
            // A block with an intact header is read, or reported by its header.
            if self.header(index).is_some() {
                continue;
            }
            // Only blocks read as erased, before the oldest or beyond the ring: the group
            // ahead of the newest block is being erased and may hold anything.
            let read = self.place(index).is_some();
            let outside = index >= self.ring.blocks();
            if !read && !outside && !self.is_candidate(index) {
                continue;
            }
            let at = u64::from(index) * BLOCK_SIZE as u64;
            let held = usize::try_from(self.len.saturating_sub(at))
                .unwrap_or(BLOCK_SIZE)
                .min(BLOCK_SIZE);
            if held < peek {
                continue;
            }
            load(at, &mut buffer[..peek])?;
            if buffer[RING_HEADER_SIZE..peek]
                .iter()
                .all(|&b| b == self.erased)
            {
                continue;
            }
            load(at, &mut buffer[..held])?;
            let chunks = BlockParser::new(&buffer[..held])
                .rules(rules)
                .last_block(held < BLOCK_SIZE)
                .filter(|item| matches!(item, Parsed::Chunk(c) if c.record_type != RING_TYPE))
                .count();
            if chunks > 0 {
                let chunks = u32::try_from(chunks).unwrap_or(u32::MAX);
                self.unread.push((index, chunks));
            }
        }
        Ok(())
    }

    /// The place of block `index` in the reading order, if it is on the way from the oldest
    /// block to the newest.
    fn place(&self, index: u32) -> Option<u32> {
        let blocks = self.ring.blocks();
        if index >= blocks {
            return None;
        }
        let place = (index + blocks - self.oldest % blocks) % blocks;
        let last = (self.ring.head() + blocks - self.oldest % blocks) % blocks;
        (place <= last).then_some(place)
    }

    /// Whether block `index` may be the oldest: after the group erased ahead of the newest
    /// block, up to the newest ([`Ring::candidates`]).
    fn is_candidate(&self, index: u32) -> bool {
        let blocks = self.ring.blocks();
        let Some(first) = self.ring.candidates().next() else {
            return false;
        };
        index < blocks
            && (index + blocks - first) % blocks <= (self.ring.head() + blocks - first) % blocks
    }

    /// Whether block `index` holds part of the log (by its header).
    fn holds(&self, index: u32) -> bool {
        self.ring.holds(index, self.header(index))
    }

    /// The ring these headers make, in an image of `len` bytes.
    fn from_headers(len: u64, headers: Vec<(u32, RingHeader)>) -> Option<Self> {
        let ring = Ring::find(headers.iter().map(|&(index, header)| (index, Some(header))))?;
        let blocks = u32::try_from(len.div_ceil(BLOCK_SIZE as u64)).ok()?;
        let mut image = Self {
            ring,
            oldest: ring.head(),
            headers,
            blocks,
            len,
            erased: 0xFF,
            unread: Vec::new(),
        };
        image.oldest = ring
            .candidates()
            .find(|&index| ring.holds(index, image.header(index)))?;
        image.erased = image.header(ring.head())?.erased;
        Some(image)
    }

    /// The ring: geometry, newest block and lap.
    pub fn ring(&self) -> Ring {
        self.ring
    }

    /// The oldest block: where reading starts.
    pub fn oldest(&self) -> u32 {
        self.oldest
    }

    /// The value erased flash reads as, from the newest block's ring header.
    pub fn erased(&self) -> u8 {
        self.erased
    }

    /// Blocks in the image (a last block cut short counted).
    pub fn image_blocks(&self) -> u32 {
        self.blocks
    }

    /// Bytes in the image.
    pub fn image_len(&self) -> u64 {
        self.len
    }

    /// What in the image disagrees with the ring its newest block's header describes: headers
    /// of another geometry, blocks of a lap the ring's order has no place for and ring headers
    /// beyond the ring (in block order), then blocks not read that hold well-formed chunks
    /// without an intact ring header, then the shortfall of an image cut short. An image the
    /// ring's writer left (power cuts included) has none.
    pub fn disagreements(&self) -> impl Iterator<Item = RingDisagreement> + '_ {
        let newest = self.header(self.ring.head());
        let in_headers = self.headers.iter().filter_map(move |&(index, header)| {
            let newest = newest?;
            let geometry = |h: &RingHeader| (h.blocks, h.group, h.write_size, h.erased);
            if geometry(&header) != geometry(&newest) {
                return Some(RingDisagreement::Geometry {
                    index,
                    header,
                    newest,
                });
            }
            if index >= self.ring.blocks() {
                return Some(RingDisagreement::Outside {
                    index,
                    blocks: self.ring.blocks(),
                });
            }
            let expected = self.ring.expected_lap(index);
            (header.lap != expected).then(|| RingDisagreement::Lap {
                index,
                lap: header.lap,
                expected,
                read: self.place(index).is_some(),
            })
        });
        let unread = self
            .unread
            .iter()
            .map(|&(index, chunks)| RingDisagreement::Unread {
                index,
                chunks,
                read: self.place(index).is_some(),
            });
        let ring_len = u64::from(self.ring.blocks()) * BLOCK_SIZE as u64;
        let short = (self.len < ring_len).then_some(RingDisagreement::Short {
            len: self.len,
            ring_len,
        });
        in_headers.chain(unread).chain(short)
    }

    /// The intact ring header of block `index`, if it has one.
    pub fn header(&self, index: u32) -> Option<RingHeader> {
        let at = self
            .headers
            .binary_search_by_key(&index, |&(i, _)| i)
            .ok()?;
        self.headers.get(at).map(|&(_, header)| header)
    }

    /// The blocks read, in order: from the oldest to the newest.
    pub fn order(&self) -> impl Iterator<Item = u32> + use<> {
        self.ring.order(self.oldest)
    }

    /// What block `index` is to the log.
    pub fn role(&self, index: u32) -> BlockRole {
        if index >= self.ring.blocks() {
            return BlockRole::Outside;
        }
        if let Some(place) = self.place(index) {
            return if self.holds(index) {
                BlockRole::Read { place }
            } else {
                BlockRole::ReadAsErased { place }
            };
        }
        if self.is_candidate(index) {
            BlockRole::NotInLog
        } else {
            BlockRole::Ahead
        }
    }

    /// Records that aged out of the ring: those begun before its oldest block (the count in
    /// that block's ring header), the record whose start was erased and whose end the oldest
    /// block begins with included. (A record in flight at a power cut and written again after
    /// it may be counted twice.)
    pub fn records_aged_out(&self) -> u32 {
        self.header(self.oldest).map_or(0, |h| h.records)
    }

    /// Image offset of byte `offset` of the ring read in order (an offset a reader of a
    /// [`RingSource`] reports).
    pub fn region_offset(&self, offset: u64) -> u64 {
        self.ring.region_offset(self.oldest, offset)
    }

    /// `damage` a reader of a [`RingSource`] reported, at image offsets (its start, and for
    /// [`DamageKind::LostTail`] the chunk after it). Its byte count is kept: a region that runs
    /// across the wrap goes on at the image's start.
    pub fn region_damage(&self, damage: Damage) -> Damage {
        let kind = match damage.kind {
            DamageKind::LostTail { chunks, next } => DamageKind::LostTail {
                chunks,
                next: self.region_offset(next),
            },
            kind => kind,
        };
        Damage {
            offset: self.region_offset(damage.offset),
            kind,
            ..damage
        }
    }

    /// `read` with what a ring is read with: the erased value of its headers, and a log that
    /// starts in the middle (the continuation of a record whose start aged out is skipped
    /// without a report).
    pub fn read_options(&self, read: ReadOptions) -> ReadOptions {
        read.erased(Some(self.erased)).starts_mid_log(true)
    }

    /// A source of the blocks of `image` (this ring's image) in the ring's order.
    pub fn source<R: Read + Seek>(&self, image: R) -> RingSource<R> {
        RingSource {
            image,
            ring: self.ring,
            oldest: self.oldest,
            count: u32::try_from(self.order().count()).unwrap_or(u32::MAX),
            image_len: self.len,
            erased: self.erased,
            buffer: Box::new([0; BLOCK_SIZE]),
            next: 0,
            len: 0,
        }
    }
}

impl fmt::Display for RingImage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, read from block {}", self.ring, self.oldest)
    }
}

/// A [`BlockSource`] over a ring image: its blocks from the oldest to the newest, those that
/// hold nothing of the log as erased flash, and the newest reported as the input's last
/// ([`is_last`](BlockSource::is_last)): a write torn at the log's end is the end of the log.
/// Made by [`RingImage::source`]. Offsets a reader reports are counted from the oldest block
/// ([`RingImage::region_offset`] maps them); an initial offset skips whole blocks of that
/// order, and the reader the rest.
///
/// ```
/// use logfmt_core::parts::ring::RingHeader;
/// use logfmt_std::advanced::{BLOCK_SIZE, BlockSource, RingImage};
///
/// let header = RingHeader { lap: 1, records: 0, blocks: 2, group: 1, write_size: 8, erased: 0xFF };
/// let mut image = vec![0xFF; 2 * BLOCK_SIZE];
/// image[..19].copy_from_slice(&header.encode());
/// let ring = RingImage::find(&image).expect("a ring image");
/// let mut source = ring.source(std::io::Cursor::new(&image));
/// source.load_next()?;
/// assert_eq!(source.block(), &image[..BLOCK_SIZE]);
/// assert!(source.is_last()); // one block written: the oldest is the newest
/// source.load_next()?;
/// assert!(source.block().is_empty());
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct RingSource<R> {
    image: R,
    ring: Ring,
    oldest: u32,
    /// Blocks in the reading order.
    count: u32,
    /// Bytes in the image.
    image_len: u64,
    erased: u8,
    buffer: Box<[u8; BLOCK_SIZE]>,
    /// Blocks of the order loaded so far.
    next: u32,
    len: usize,
}

impl<R> RingSource<R> {
    /// The image.
    pub fn get_ref(&self) -> &R {
        &self.image
    }

    /// Gives back the image.
    pub fn into_inner(self) -> R {
        self.image
    }
}

impl<R: Read + Seek> BlockSource for RingSource<R> {
    type Error = io::Error;

    fn load_next(&mut self) -> io::Result<()> {
        self.len = 0;
        if self.next >= self.count {
            return Ok(());
        }
        let Some(index) = self.ring.order(self.oldest).nth(self.next as usize) else {
            return Ok(());
        };
        let buffer = &mut *self.buffer;
        let at = u64::from(index) * BLOCK_SIZE as u64;
        // What the image holds of the block (all of it unless the image is cut short).
        let held = usize::try_from(self.image_len.saturating_sub(at))
            .unwrap_or(BLOCK_SIZE)
            .min(BLOCK_SIZE);
        buffer.fill(self.erased);
        if held > 0 {
            self.image.seek(SeekFrom::Start(at))?;
            read_full(&mut self.image, &mut buffer[..held])?;
        }
        // Nothing of this log (or beyond the image): read as erased.
        if !self.ring.holds(index, RingHeader::parse(&buffer[..])) {
            buffer.fill(self.erased);
        }
        self.next += 1;
        self.len = BLOCK_SIZE;
        Ok(())
    }

    fn block(&self) -> &[u8] {
        self.buffer.get(..self.len).unwrap_or_default()
    }

    fn skip(&mut self, bytes: u64) -> io::Result<()> {
        let blocks = u32::try_from(bytes / BLOCK_SIZE as u64).unwrap_or(u32::MAX);
        self.next = self.next.saturating_add(blocks);
        Ok(())
    }

    fn is_last(&self) -> bool {
        self.len > 0 && self.next == self.count
    }
}

/// Whether an image of `len` bytes that begins with `first` (its first bytes) may be a ring
/// image: one of whole blocks may (any block may hold the ring's headers); one cut short must
/// begin with a ring header or with erased flash, as every block of a ring does.
fn begins_as_a_ring(len: u64, first: &[u8]) -> bool {
    let Some(first) = first.get(..RING_HEADER_SIZE) else {
        return false;
    };
    if len.is_multiple_of(BLOCK_SIZE as u64) {
        return true;
    }
    RingHeader::parse(first).is_some()
        || first.iter().all(|&b| b == 0xFF)
        || first.iter().all(|&b| b == 0x00)
}

/// Fills `buffer` from `reader`, retrying interrupted reads.
///
/// # Errors
/// A read error; [`ErrorKind::UnexpectedEof`] if the image ends first (it shrank).
fn read_full(reader: &mut impl Read, buffer: &mut [u8]) -> io::Result<()> {
    match reader.read_exact(buffer) {
        Err(e) if e.kind() == ErrorKind::UnexpectedEof => Err(io::Error::new(
            ErrorKind::UnexpectedEof,
            "the ring image ends inside a block (it changed while it was read)",
        )),
        other => other,
    }
}
