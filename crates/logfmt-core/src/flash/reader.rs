//! The small-RAM flash reader: records read straight from the flash into the caller's buffer,
//! a chunk at a time in small reads, with the flash-image rules of the block reader and no
//! block buffer. One implementation ([`Walk`]) serves the blocking [`WordReader`] and the async
//! `AsyncWordReader`: its reading steps are written once, as `async` code, and
//! `maybe-async-cfg` makes a blocking copy of them with no future machinery (`*_sync`) besides
//! the async one (`*_async`, with feature `embedded-storage-async`).
//!
//! Every step of a walk reads what it needs before it changes the walk's state: after a read
//! error — or an async read dropped before it completed — the next call reads again from the
//! same place, and nothing is lost or returned twice.

use embedded_storage::nor_flash::ReadNorFlash as ReadFlashSync;
use embedded_storage::nor_flash::ReadNorFlash;
#[cfg(feature = "embedded-storage-async")]
use embedded_storage_async::nor_flash::ReadNorFlash as ReadFlashAsync;

use super::config::FlashConfig;
use super::order::{self, Order};
use super::piece;
use super::resume::{Geometry, Resumed, Tail};
use crate::checksum;
use crate::format::{BLOCK_SIZE, CURSOR_TYPE, HEADER_SIZE, RESUME_TYPE};
use crate::parts::FragmentKind::{self, First, Full, Last, Middle};
use crate::parts::block::{ChunkClass, ChunkRules, padding_chunk_starts, padding_word_end};
use crate::ring::{RING_HEADER_SIZE, RingFinder, RingHeader};

mod seek;

/// Bytes read at a time (besides `READ_SIZE` alignment).
const PIECE: usize = 32;
/// A block's bytes.
const BLOCK: u32 = BLOCK_SIZE as u32;
/// A chunk header's bytes.
const HEADER: u32 = HEADER_SIZE as u32;

/// What [`WordReader::next`] found. Offsets are region offsets (a flash region is at most 4 GiB).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum FlashItem {
    /// A record: its first `len` bytes of the caller's buffer; `offset` is where its first
    /// chunk starts in the region.
    Record {
        /// Region offset of the record's first chunk.
        offset: u32,
        /// The record's length.
        len: usize,
    },
    /// Bytes that are neither a record nor a power cut's leftovers: damage, dropped (a record
    /// in progress there is dropped with them).
    Damage {
        /// Region offset of the first byte dropped.
        offset: u32,
        /// Bytes dropped (to the end of their block at most).
        bytes: u32,
    },
    /// A [pack](crate::pack) of records: its first `len` bytes of the caller's buffer (read
    /// its records with [`Pack::parse`](crate::pack::Pack::parse)); `offset` is where its
    /// first chunk starts in the region.
    Pack {
        /// Region offset of the pack's first chunk.
        offset: u32,
        /// The pack's length.
        len: usize,
    },
    /// A whole record (or pack) longer than the caller's buffer, skipped.
    Oversized {
        /// Region offset of the record's first chunk.
        offset: u32,
        /// The record's length.
        len: u32,
    },
}

/// Where the reader is between chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// At a ring's oldest block: `MIDDLE` and `LAST` chunks continue a record whose start was
    /// erased, and are skipped.
    Resync,
    /// Between records.
    Idle,
    /// A record in progress: the region offset of its first chunk, its bytes so far, and
    /// whether it is a pack.
    InRecord { offset: u32, len: u32, pack: bool },
}

/// A chunk at a position, as far as reading it tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// Well-formed: type and payload length.
    Good { kind: u8, len: u32 },
    /// A header of erased bytes: nothing written here.
    Erased,
    /// Not well-formed; `torn`: it looks cut short (its length runs past the block, or its
    /// last byte reads erased); `end`: where its header says it ends (just after the header
    /// if that is past the block).
    Bad { torn: bool, end: u32 },
}

/// Bad bytes at the end of the block before, waiting for the next block's verdict.
#[derive(Debug, Clone, Copy)]
struct Deferred {
    offset: u32,
    bytes: u32,
    torn: bool,
}

impl Deferred {
    fn damage(self) -> FlashItem {
        FlashItem::Damage {
            offset: self.offset,
            bytes: self.bytes,
        }
    }
}

/// What is after erased bytes at a chunk's place: see [`Walk::chunk_or_padding`].
#[derive(Debug, Clone, Copy, Default)]
struct Padding {
    /// The first byte after them that is not erased, in the block.
    written: Option<u32>,
    /// The well-formed chunk after them (or at their start): where, its type and its payload
    /// length (its payload read, and copied where a record's goes).
    chunk: Option<(u32, u8, u32)>,
    /// A chunk that may start there looks cut short.
    torn: bool,
    /// Where the chunk at the erased bytes' start ends, if it was tried and is not
    /// well-formed.
    own_end: Option<u32>,
}

/// A chunk header's bytes.
type Header = [u8; HEADER_SIZE];

/// The walk through a flash log's chunks: the reader's state and rules, over any
/// [`ReadFlash`].
#[derive(Debug, Clone)]
pub(super) struct Walk {
    config: FlashConfig,
    order: Order,
    /// Blocks begun so far; the current one's region index and whether it is the last.
    blocks: u32,
    index: u32,
    last: bool,
    /// Offset in the current block (`BLOCK_SIZE`: the next block is due).
    pos: u32,
    /// The flash's word size, where known (a ring's block tells it in its ring header, a
    /// bounded log's reader may be told it, [`FlashConfig::write_size`]; the writer's
    /// reopening walk knows it): a flush's padding is skipped to the next word boundary
    /// without reading it.
    word: Option<u32>,
    state: State,
    deferred: Option<Deferred>,
    /// An item found together with the one returned.
    pending: Option<FlashItem>,
    done: bool,
    /// Record numbering and read cursors (see [`Numbering`]).
    pub(super) numbering: Numbering,
}

/// What the walk counts for read cursors: the records begun (a ring's blocks set the count
/// from their headers), and the newest cursor of one id it met.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Numbering {
    /// The number of the next record to begin.
    pub(super) records: u32,
    /// The number of the record begun last.
    pub(super) current: u32,
    /// The blocks the walk reads end before the one it would begin as this one (counted as
    /// `blocks`).
    pub(super) end: Option<u32>,
    /// The cursor id whose chunks the walk notes, and the newest it met.
    pub(super) watch: Option<u8>,
    pub(super) seen: Option<u32>,
}

#[maybe_async_cfg::maybe(
    idents(
        ReadFlash,
        find_ring(fn),
        order_of(fn),
        open(fn),
        next_item(fn),
        chunk_or_padding(fn),
        next_block(fn),
        resumes(fn),
        not_a_chunk(fn),
        chunk_at(fn),
        read_header(fn),
        search_from(fn),
        find_written(fn),
        last_written(fn),
        read_at(fn),
        read(fn, sync = "read_outlined"),
        resume(fn),
        walk_tail(fn),
    ),
    keep_self,
    sync(),
    async(feature = "embedded-storage-async")
)]
impl Walk {
    /// The walk of the log in region `config`: a ring's from its oldest block, found by
    /// reading each block's ring header, if `config.ring`; else the region's, in order.
    pub(super) async fn open<R: ReadFlash>(
        flash: &mut R,
        config: FlashConfig,
    ) -> Result<Self, R::Error> {
        let order = Self::order_of(flash, &config).await?;
        Ok(Self::new(config, order))
    }

    /// The order the blocks of region `config` are read in: a ring's from its oldest block,
    /// found by reading each block's ring header, if `config.ring`; else the region's.
    pub(super) async fn order_of<R: ReadFlash>(
        flash: &mut R,
        config: &FlashConfig,
    ) -> Result<Order, R::Error> {
        if config.ring {
            order::find_ring(flash, config).await
        } else {
            Ok(Order::Region)
        }
    }

    /// The next record (copied into `buffer`), damage report or oversized record; `None` at
    /// the log's end.
    /// Where a writer continues the log in region `config` of `flash` (the rules are in
    /// [`resume`](super::resume)): the newest block found from the first bytes of every block,
    /// then its chunks walked by the reader's rules.
    pub(super) async fn resume<R: ReadFlash>(
        flash: &mut R,
        config: FlashConfig,
        geometry: Geometry,
    ) -> Result<Resumed, R::Error> {
        let mut walk = Self::new(config, Order::Region);
        (walk.pos, walk.word, walk.state) = (0, Some(geometry.write_size), State::Idle);
        let erased = config.erased;
        let head = if config.ring {
            RING_HEADER_SIZE
        } else {
            HEADER_SIZE
        };
        let mut first = [0u8; RING_HEADER_SIZE];
        let first = first.get_mut(..head).unwrap_or_default();
        let (mut finder, mut newest) = (RingFinder::default(), None);
        for index in 0..config.len / BLOCK {
            walk.index = index;
            Self::read_at(&walk, flash, 0, first).await?;
            if config.ring {
                finder.add(index, RingHeader::parse(first));
            } else if first.iter().any(|&b| b != erased) {
                newest = Some(index);
            }
        }
        let (mut lap, mut records) = (config.first_lap, 0);
        if let Some(ring) = finder.ring() {
            (newest, lap, records) = (Some(ring.head()), ring.lap(), ring.records_before_head());
        }
        let Some(newest) = newest else {
            let tail = Resumed {
                pos: 0,
                ready_to: 0,
                marker: false,
                lap,
                records,
            };
            return Ok(geometry.fresh(&config, 0, tail));
        };
        let mut skip_next = false;
        let group = FlashConfig::group_bytes(geometry.erase_size) / BLOCK;
        if config.ring && newest + 1 < config.len / BLOCK && (newest + 1) / group == newest / group
        {
            walk.index = newest + 1;
            Self::read_at(&walk, flash, 0, first).await?;
            skip_next = first.iter().any(|&b| b != erased);
        }
        walk.index = newest;
        // A ring's newest block begins with the ring header just read: the walk starts after it.
        let start = if config.ring {
            RING_HEADER_SIZE as u32
        } else {
            0
        };
        let tail = Self::walk_tail(
            &walk,
            flash,
            geometry.write_size,
            start,
            skip_next,
            &mut records,
        )
        .await?;
        Ok(geometry.resume(&config, &tail, lap, records))
    }

    /// The walk of the log's last block for [`resume`](Self::resume), from `start` (after its
    /// ring header, if any), counting the records begun in it into `records`. Each byte up to
    /// the last well-formed chunk is read once (but bad bytes, and the padding a header read
    /// takes in), then the bytes after it, once.
    async fn walk_tail<R: ReadFlash>(
        &self,
        flash: &mut R,
        word: u32,
        start: u32,
        skip_next: bool,
        records: &mut u32,
    ) -> Result<Tail, R::Error> {
        let mut tail = Tail {
            base: self.index * BLOCK,
            good_end: start,
            written_end: 0,
            reach: 0,
            torn: false,
            open: false,
            skip_next,
        };
        let mut at = start;
        // Erased from here to the block's end, as far as the walk read.
        let mut erased_from = BLOCK;
        while at + HEADER <= BLOCK {
            let padding = Self::chunk_or_padding(self, flash, at, None).await?;
            if let Some((chunk, kind, len)) = padding.chunk {
                // A well-formed chunk (after padding, if any), read already.
                at = chunk + HEADER + len;
                tail = after_chunk(tail, at, sort(kind, self.config.erased), records);
                continue;
            }
            let bad_end = match (padding.own_end, padding.written) {
                // Erased to the block's end.
                (None, None) => {
                    erased_from = at;
                    break;
                }
                (Some(end), None) => end,
                (_, Some(written)) => {
                    // Not a chunk after the padding: the one torn there starts at the word
                    // boundary (what a header read across the padding says is no chunk's).
                    let start = (written - written % word).max(at);
                    if start + HEADER > BLOCK {
                        // Written bytes in the block's trailer: no chunk's.
                        BLOCK
                    } else {
                        match Self::chunk_at(self, flash, start, &[], None, self.state).await? {
                            Chunk::Bad { end, .. } => end,
                            _ => start + HEADER,
                        }
                    }
                }
            };
            (tail.reach, tail.torn) = (tail.reach.max(bad_end), true);
            match Self::search_from(self, flash, at + 1).await? {
                Some((next, _)) => at = next,
                None => break,
            }
        }
        let written = Self::last_written(self, flash, tail.good_end, erased_from).await?;
        tail.written_end = written.unwrap_or(tail.good_end);
        Ok(tail)
    }

    /// The next record (copied into `buffer`), damage report or oversized record; `None` at
    /// the log's end.
    pub(super) async fn next_item<R: ReadFlash>(
        &mut self,
        flash: &mut R,
        buffer: &mut [u8],
    ) -> Result<Option<FlashItem>, R::Error> {
        if let Some(item) = self.pending.take() {
            return Ok(Some(item));
        }
        while !self.done {
            let at = self.pos;
            let item = if at + HEADER > BLOCK {
                // A trailer, or the block's end: the next block.
                Self::next_block(self, flash).await?
            } else {
                let padding = Self::chunk_or_padding(self, flash, at, Some(&mut *buffer)).await?;
                let in_record = matches!(self.state, State::InRecord { .. });
                match padding.chunk {
                    // After padding that cuts a record in progress, the chunk was checked,
                    // not copied (`chunk_or_padding`): it is read again, as the record's
                    // fragments are dropped.
                    Some((chunk, ..)) if chunk > at && in_record => {
                        self.drop_record();
                        self.pos = chunk;
                        None
                    }
                    Some((chunk, kind, len)) => {
                        self.pos = chunk + HEADER + len;
                        if kind == CURSOR_TYPE {
                            self.on_cursor(buffer.get(..len as usize));
                        }
                        self.on_chunk(kind, chunk, len, buffer.len())
                    }
                    None => Self::not_a_chunk(self, flash, at, padding).await?,
                }
            };
            if item.is_some() {
                return Ok(item);
            }
        }
        Ok(None)
    }

    /// Loads the next block (judging bad bytes at the end of the one before); at the log's
    /// end, marks it done. An item to return, if any.
    async fn next_block<R: ReadFlash>(
        &mut self,
        flash: &mut R,
    ) -> Result<Option<FlashItem>, R::Error> {
        let within = self.numbering.end.is_none_or(|end| self.blocks < end);
        let next = self
            .order
            .block(&self.config, self.blocks)
            .filter(|_| within);
        let Some((index, last)) = next else {
            // The log ends: bad bytes before are torn if they look it; a record in progress
            // was torn.
            (self.done, self.state) = (true, State::Idle);
            return Ok(self
                .deferred
                .take()
                .filter(|d| !d.torn)
                .map(Deferred::damage));
        };
        // The block's reads first (read again if they fail: `blocks` has not moved on).
        self.index = index;
        let mut first = [0u8; RING_HEADER_SIZE];
        Self::read_at(self, flash, 0, &mut first).await?;
        let holds = self.order.holds(index, &first);
        let header = RingHeader::parse(&first);
        let word = header.map(|h| u32::from(h.write_size));
        let deferred = self.deferred;
        let torn = match deferred {
            Some(deferred) if holds => Self::resumes(self, flash).await?.unwrap_or(deferred.torn),
            Some(deferred) => deferred.torn,
            None => true,
        };
        (self.blocks, self.last, self.deferred) = (self.blocks + 1, last, None);
        self.last |= self.numbering.end == Some(self.blocks);
        // A ring header tells the word size; a bounded log's reader may be told it.
        self.word = word.or(self.config.told_word());
        if let Some(header) = header.filter(|_| holds && self.order.ring_of().is_some()) {
            self.numbering.records = header.records;
        }
        // A block with nothing of this log reads as erased; a ring header read just now is
        // not read again (it is a chunk the walk passes over).
        self.pos = match (holds, header) {
            (false, _) => BLOCK,
            (true, Some(_)) => RING_HEADER_SIZE as u32,
            (true, None) => 0,
        };
        if deferred.is_some() || !holds {
            self.drop_record();
        }
        Ok(deferred.filter(|_| !torn).map(Deferred::damage))
    }

    /// Whether the current block goes on, after its ring header if any, with a resume marker
    /// (bad bytes before were torn) or another well-formed chunk (they were damage); `None`
    /// if neither.
    async fn resumes<R: ReadFlash>(&self, flash: &mut R) -> Result<Option<bool>, R::Error> {
        let erased = self.config.erased;
        let mut at = 0;
        if let Chunk::Good { kind, len } =
            Self::chunk_at(self, flash, 0, &[], None, self.state).await?
            && sort(kind, erased) == Sort::RingHeader
        {
            at = HEADER + len;
        }
        Ok(
            match Self::chunk_at(self, flash, at, &[], None, self.state).await? {
                Chunk::Good { kind, len } => Some(sort(kind, erased) == Sort::Marker && len == 0),
                _ => None,
            },
        )
    }

    /// The chunk at `at` (copied into `buffer` where a record's bytes go), or, if bytes
    /// there read erased, the chunk after them — the rest of a flash word a flush left
    /// unprogrammed, or the words a reopened writer skipped: what [`Padding`] tells. Where the
    /// word size is known, a header of erased bytes is a flush's padding if a well-formed chunk
    /// starts at the next word boundary (the bytes between are not read). Else the chunk
    /// starts at the first byte not erased, or up to 6 bytes before if its checksum begins
    /// with bytes that read as erased, `at` itself last: erased bytes are padding first, and a
    /// header read across padding is not checked over the length it declares before the
    /// chunk after the padding is. The block reader's rule
    /// ([`flash_padding`](crate::block::flash_padding)).
    async fn chunk_or_padding<R: ReadFlash>(
        &self,
        flash: &mut R,
        at: u32,
        mut buffer: Option<&mut [u8]>,
    ) -> Result<Padding, R::Error> {
        let header = Self::read_header(self, flash, at).await?;
        let erased = self.config.erased;
        let mut padding = Padding::default();
        // Chunks tried after erased bytes before the chunk at `at` is tried copy nothing while
        // a record is in progress: one that fails must not overwrite the fragments copied so
        // far, which the chunk at `at` may go on with; one that holds is read again, copied
        // ([`Self::next_item`]).
        let in_record = matches!(self.state, State::InRecord { .. });
        let in_header = header.iter().position(|&b| b != erased);
        if in_header.is_none()
            && let Some(word) = self.word
            && let Some(to) = padding_word_end(at as usize, word as usize)
        {
            // The rule's chunk must lie in this block (a slice reader's parse says so).
            let to = to as u32;
            if to + HEADER <= BLOCK {
                let known = header.get((to - at) as usize..).unwrap_or_default();
                // A header of erased bytes at `at`: a record in progress ends here whatever
                // is found, so a trial may copy.
                let chunk =
                    Self::chunk_at(self, flash, to, known, buffer.as_deref_mut(), State::Idle)
                        .await?;
                if let Chunk::Good { kind, len } = chunk {
                    padding.chunk = Some((to, kind, len));
                    return Ok(padding);
                }
            }
        }
        let written = match in_header {
            Some(i) => at + i as u32,
            None => match Self::find_written(self, flash, at + HEADER).await? {
                Some(written) => written,
                None => return Ok(padding),
            },
        };
        // Erased bytes before the first byte written, if any.
        padding.written = Some(written).filter(|&w| w > at);
        // (No chunk starts in a block's trailer: a header there would run past the block.)
        let starts = padding_chunk_starts(at as usize, written as usize)
            .map(|to| to as u32)
            .filter(|&to| to + HEADER <= BLOCK);
        for to in starts {
            let known = header.get((to - at) as usize..).unwrap_or_default();
            // Padding cuts a record in progress: a chunk after it is one that begins a record.
            let (state, copy) = if to == at {
                (self.state, buffer.as_deref_mut())
            } else {
                (State::Idle, buffer.as_deref_mut().filter(|_| !in_record))
            };
            match Self::chunk_at(self, flash, to, known, copy, state).await? {
                Chunk::Good { kind, len } => {
                    padding.chunk = Some((to, kind, len));
                    break;
                }
                Chunk::Bad { torn, end } => {
                    padding.torn |= torn;
                    if to == at {
                        padding.own_end = Some(end);
                    }
                }
                Chunk::Erased => {}
            }
        }
        Ok(padding)
    }

    /// No well-formed chunk at `at`, nor after erased bytes there (`padding`, from
    /// [`chunk_or_padding`](Self::chunk_or_padding)): bad bytes up to the next chunk in the
    /// block, or the end of what is written in it — after erased bytes, the rest of the block
    /// skipped; else bad bytes to the block's end, torn or damage (`padding.torn`: they look cut
    /// short), which the next block tells.
    async fn not_a_chunk<R: ReadFlash>(
        &mut self,
        flash: &mut R,
        at: u32,
        padding: Padding,
    ) -> Result<Option<FlashItem>, R::Error> {
        // Erased bytes with nothing written after them: no chunk to look for.
        let erased = padding.own_end.is_none();
        let found = match padding.written {
            None if erased => None,
            _ => Self::search_from(self, flash, at + 1).await?,
        };
        if !erased && self.state == State::Resync {
            // Any chunk ends the resynchronisation, a bad one included (LevelDB's rule).
            self.state = State::Idle;
        }
        if let Some((next, marker)) = found {
            return Ok(self.gap(at, next, marker));
        }
        self.pos = BLOCK;
        if erased {
            // Erased bytes, then nothing that is a chunk: the rest of the block is skipped.
            self.drop_record();
            return Ok(None);
        }
        let torn = padding.torn;
        let deferred = Deferred {
            offset: self.region(at),
            bytes: BLOCK - at,
            torn,
        };
        if self.last {
            // The log ends here: torn if it looks it, else damage.
            (self.done, self.state) = (true, State::Idle);
            return Ok((!torn).then_some(deferred.damage()));
        }
        // The next block tells.
        self.deferred = Some(deferred);
        Ok(None)
    }

    /// The 7 bytes at `at`: a chunk header, if one starts there.
    async fn read_header<R: ReadFlash>(&self, flash: &mut R, at: u32) -> Result<Header, R::Error> {
        let mut header = [0u8; HEADER_SIZE];
        Self::read_at(self, flash, at, &mut header).await?;
        Ok(header)
    }

    /// The chunk at `at`, `known` the first bytes of its header if they were read already
    /// (the rest are read): its payload checked, and copied into `buffer` if it is a fragment
    /// of the record being read in `state` (at the record's offset, where it fits).
    async fn chunk_at<R: ReadFlash>(
        &self,
        flash: &mut R,
        at: u32,
        known: &[u8],
        buffer: Option<&mut [u8]>,
        state: State,
    ) -> Result<Chunk, R::Error> {
        let mut header = [0u8; HEADER_SIZE];
        let n = known.len();
        if let Some(prefix) = header.get_mut(..n) {
            prefix.copy_from_slice(known);
        }
        if n < HEADER_SIZE {
            let rest = header.get_mut(n..).unwrap_or_default();
            Self::read_at(self, flash, at + n as u32, rest).await?;
        }
        let erased = self.config.erased;
        if header.iter().all(|&b| b == erased) {
            return Ok(Chunk::Erased);
        }
        let [c0, c1, c2, c3, l0, l1, kind] = header;
        let len = u32::from(u16::from_le_bytes([l0, l1]));
        let start = at + HEADER;
        if start + len > BLOCK {
            return Ok(Chunk::Bad {
                torn: true,
                end: start,
            });
        }
        // Where a fragment goes: a pack's as a record's; a cursor's payload at the start.
        let dest = match (state, sort(kind, erased)) {
            (_, Sort::Cursor | Sort::Fragment(Full | First, _)) => Some(0),
            (State::InRecord { len, .. }, Sort::Fragment(Middle | Last, _)) => Some(len as usize),
            _ => None,
        };
        let mut copy = buffer
            .zip(dest)
            .and_then(|(buffer, dest)| buffer.get_mut(dest..dest.checked_add(len as usize)?));
        let mut crc = checksum::crc32c(&[kind]);
        let mut done = 0;
        let mut last = erased;
        let mut scratch = [0u8; PIECE];
        while done < len {
            let n = (len - done).min(PIECE as u32);
            // Read into the record where it is copied, else into the scratch piece.
            let range = done as usize..(done + n) as usize;
            let piece = match copy.as_deref_mut().and_then(|c| c.get_mut(range)) {
                Some(slot) => slot,
                None => scratch.get_mut(..n as usize).unwrap_or_default(),
            };
            Self::read_at(self, flash, start + done, piece).await?;
            crc = checksum::extend(crc, piece);
            last = piece.last().copied().unwrap_or(erased);
            done += n;
        }
        if checksum::mask(crc) != u32::from_le_bytes([c0, c1, c2, c3]) {
            // Cut short if the chunk's last byte (its type byte, if empty) reads erased.
            let torn = if len == 0 { kind } else { last } == erased;
            return Ok(Chunk::Bad {
                torn,
                end: start + len,
            });
        }
        Ok(Chunk::Good { kind, len })
    }

    /// The first well-formed fragment, read cursor or resume marker from `from` on in the
    /// block: where, and whether it is a marker.
    async fn search_from<R: ReadFlash>(
        &self,
        flash: &mut R,
        from: u32,
    ) -> Result<Option<(u32, bool)>, R::Error> {
        let mut at = from;
        while at + HEADER <= BLOCK {
            let mut header = [0u8; HEADER_SIZE];
            Self::read_at(self, flash, at, &mut header).await?;
            let [.., l0, l1, kind] = header;
            let sorted = sort(kind, self.config.erased);
            let marker = sorted == Sort::Marker && l0 == 0 && l1 == 0;
            if (matches!(sorted, Sort::Fragment(..) | Sort::Cursor) || marker)
                && let Chunk::Good { .. } =
                    Self::chunk_at(self, flash, at, &header, None, self.state).await?
            {
                return Ok(Some((at, marker)));
            }
            at += 1;
        }
        Ok(None)
    }

    /// The first byte at or after `from` in the block that is not erased.
    async fn find_written<R: ReadFlash>(
        &self,
        flash: &mut R,
        from: u32,
    ) -> Result<Option<u32>, R::Error> {
        let mut at = from;
        while at < BLOCK {
            let n = (BLOCK - at).min(PIECE as u32);
            let mut piece = [0u8; PIECE];
            let piece = piece.get_mut(..n as usize).unwrap_or_default();
            Self::read_at(self, flash, at, piece).await?;
            if let Some(i) = piece.iter().position(|&b| b != self.config.erased) {
                return Ok(Some(at + i as u32));
            }
            at += n;
        }
        Ok(None)
    }

    /// One past the block's last byte that is not erased, at or after `from`, the bytes from
    /// `erased_from` on known erased (read from there backwards).
    async fn last_written<R: ReadFlash>(
        &self,
        flash: &mut R,
        from: u32,
        erased_from: u32,
    ) -> Result<Option<u32>, R::Error> {
        let mut end = erased_from;
        while end > from {
            let n = (end - from).min(PIECE as u32);
            let mut piece = [0u8; PIECE];
            let piece = piece.get_mut(..n as usize).unwrap_or_default();
            Self::read_at(self, flash, end - n, piece).await?;
            if let Some(i) = piece.iter().rposition(|&b| b != self.config.erased) {
                return Ok(Some(end - n + i as u32 + 1));
            }
            end -= n;
        }
        Ok(None)
    }

    /// Reads `out.len()` (at most 32) bytes at `at` in the current block
    /// ([`piece::read`](super::piece::read)).
    async fn read_at<R: ReadFlash>(
        &self,
        flash: &mut R,
        at: u32,
        out: &mut [u8],
    ) -> Result<(), R::Error> {
        piece::read(flash, &self.config, self.region(at), out).await
    }
}

/// The walk's rules: what the chunks read mean.
impl Walk {
    /// The walk of the log in region `config`, its blocks read in `order`, before its first
    /// block.
    pub(super) fn new(config: FlashConfig, order: Order) -> Self {
        Self {
            config,
            order,
            blocks: 0,
            index: 0,
            last: false,
            pos: BLOCK,
            word: None,
            state: if config.ring {
                State::Resync
            } else {
                State::Idle
            },
            deferred: None,
            pending: None,
            done: false,
            numbering: Numbering::default(),
        }
    }

    /// A well-formed chunk of type `kind` at `at`, `len` bytes of payload (copied into the
    /// buffer, of `room` bytes, if it is a fragment of a record that fits).
    fn on_chunk(&mut self, kind: u8, at: u32, len: u32, room: usize) -> Option<FlashItem> {
        let (fragment, pack) = match sort(kind, self.config.erased) {
            Sort::RingHeader => return None,
            // A read cursor: between records (a record in progress was not written whole).
            Sort::Cursor => return self.drop_record_reported(),
            // A pack's chunk: the same rules, in its own family.
            Sort::Fragment(fragment, pack) => (Some(fragment), pack),
            Sort::Marker | Sort::Other => (None, false),
        };
        if let Some(Full | First) = fragment {
            let numbering = &mut self.numbering;
            numbering.current = numbering.records;
            numbering.records = numbering.records.wrapping_add(1);
        }
        if self.state == State::Resync {
            if fragment == Some(Middle) {
                return None;
            }
            self.state = State::Idle;
            if fragment == Some(Last) {
                return None;
            }
        }
        let at = self.region(at);
        match (self.state, fragment) {
            (
                State::InRecord {
                    offset,
                    len: sofar,
                    pack: in_pack,
                },
                Some(kind @ (Middle | Last)),
            ) if in_pack == pack => {
                let len = sofar + len;
                if kind == Last {
                    self.state = State::Idle;
                    return Some(whole(offset, len, room, pack));
                }
                self.state = State::InRecord { offset, len, pack };
                None
            }
            (_, Some(Full)) => {
                let partial = self.drop_record_reported();
                self.both(partial, whole(at, len, room, pack))
            }
            (_, Some(First)) => {
                let partial = self.drop_record_reported();
                self.state = State::InRecord {
                    offset: at,
                    len,
                    pack,
                };
                partial
            }
            // A resume marker: a record in progress was torn by a power cut.
            (_, None) if kind == RESUME_TYPE && len == 0 => {
                self.drop_record();
                None
            }
            // A fragment with no record in progress (or of the other family), or a type this
            // log does not write.
            _ => {
                let partial = self.drop_record_reported();
                let damage = FlashItem::Damage {
                    offset: at,
                    bytes: len + HEADER,
                };
                self.both(partial, damage)
            }
        }
    }

    /// Begins the walk at the `n`-th block to read: the blocks before it are not read.
    pub(super) fn skip_blocks(&mut self, n: u32) {
        self.blocks = n;
    }

    /// The order the blocks are read in.
    pub(super) fn order(&self) -> Order {
        self.order
    }

    /// A well-formed cursor chunk whose payload is `payload` (if it was read into the
    /// buffer): noted if it is the watched cursor's.
    fn on_cursor(&mut self, payload: Option<&[u8]>) {
        let cursor = payload.and_then(crate::cursor::Cursor::from_payload);
        if let Some(cursor) = cursor.filter(|c| Some(c.id) == self.numbering.watch) {
            self.numbering.seen = Some(cursor.next);
        }
    }

    /// `first`, if any, with `then` after it; else `then`.
    fn both(&mut self, first: Option<FlashItem>, then: FlashItem) -> Option<FlashItem> {
        if first.is_some() {
            self.pending = Some(then);
            return first;
        }
        Some(then)
    }

    /// Bytes from `at` up to the well-formed chunk at `next`: padding or a write torn by a
    /// power cut if `silent` (the chunk is a resume marker, or the bytes are erased), damage
    /// otherwise.
    fn gap(&mut self, at: u32, next: u32, silent: bool) -> Option<FlashItem> {
        self.pos = next;
        self.drop_record();
        (!silent).then(|| FlashItem::Damage {
            offset: self.region(at),
            bytes: next - at,
        })
    }

    /// Drops a record in progress silently (a power cut).
    fn drop_record(&mut self) {
        if matches!(self.state, State::InRecord { .. }) {
            self.state = State::Idle;
        }
    }

    /// Drops a record in progress, reported as damage.
    fn drop_record_reported(&mut self) -> Option<FlashItem> {
        let State::InRecord { offset, len, .. } = self.state else {
            return None;
        };
        self.state = State::Idle;
        Some(FlashItem::Damage { offset, bytes: len })
    }

    /// The region offset of `at` in the current block.
    fn region(&self, at: u32) -> u32 {
        self.index * BLOCK + at
    }
}

/// `tail` after a well-formed chunk sorted `sorted` ending at `end`, its records counted into
/// `records`.
fn after_chunk(mut tail: Tail, end: u32, sorted: Sort, records: &mut u32) -> Tail {
    let fragment = match sorted {
        Sort::Fragment(fragment, _) => Some(fragment),
        _ => None,
    };
    if let Some(Full | First) = fragment {
        *records = records.wrapping_add(1);
    }
    (tail.good_end, tail.torn) = (end, false);
    tail.open = matches!(fragment, Some(First | Middle));
    tail
}

/// Whether record number `a` comes before `b` (serial-number arithmetic: the count wraps).
fn serial_before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// A whole record (a pack, if `pack`) of `len` bytes at `offset`, for a buffer of `room`
/// bytes.
fn whole(offset: u32, len: u32, room: usize, pack: bool) -> FlashItem {
    let fits = len as usize <= room;
    let len = len as usize;
    match (fits, pack) {
        (true, false) => FlashItem::Record { offset, len },
        (true, true) => FlashItem::Pack { offset, len },
        (false, _) => FlashItem::Oversized {
            offset,
            len: len as u32,
        },
    }
}

/// What the flash readers make of a well-formed chunk, by its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sort {
    /// A fragment of a record, or of a pack (`true`).
    Fragment(FragmentKind, bool),
    /// A ring's block header.
    RingHeader,
    /// The resume marker's type (a marker if its payload is empty).
    Marker,
    /// A read cursor.
    Cursor,
    /// Any other type: damage in a flash log.
    Other,
}

/// Sorts chunk type `kind` with the core's one chunk classifier
/// ([`ChunkRules::classify`]), under the rules of a flash image whose erased flash reads
/// `erased`, as the block reader reads one: LevelDB's types and packs, the flash's own types
/// (a flash log is never compressed: RocksDB's compression record is of an unknown type).
fn sort(kind: u8, erased: u8) -> Sort {
    let rules = ChunkRules {
        erased: Some(erased),
        wal_compression: false,
        ..ChunkRules::default()
    };
    match rules.classify(kind) {
        ChunkClass::Fragment(fragment) => Sort::Fragment(fragment, false),
        ChunkClass::Pack(fragment) => Sort::Fragment(fragment, true),
        ChunkClass::RingHeader => Sort::RingHeader,
        ChunkClass::Ignorable if kind == RESUME_TYPE => Sort::Marker,
        ChunkClass::Ignorable if kind == CURSOR_TYPE => Sort::Cursor,
        _ => Sort::Other,
    }
}

/// Reads the records of a flash log — a region in order, or a ring from its oldest block to
/// its newest — straight from the flash into the caller's buffer: no block buffer, about 140
/// bytes of state on a 32-bit target (see `cargo xtask size`). The rules are those of the
/// block reader ([`FlashSource`](super::FlashSource) with [`Reader`](crate::Reader), `erased`
/// set): erased padding skipped, a write torn by a power cut (up to a resume marker, or at the
/// log's end) dropped silently, damage reported and read past, a ring's records whose start was
/// erased skipped. Records are the same, byte for byte (a property test holds the two readers
/// to it).
///
/// ```
/// # #[cfg(not(feature = "mock-flash"))] fn main() {}
/// # #[cfg(feature = "mock-flash")]
/// # fn main() -> Result<(), logfmt_core::flash::FlashError<logfmt_core::flash::MockError>> {
/// use logfmt_core::flash::{FlashConfig, FlashItem, MockFlash, WordReader, WordWriter};
/// use logfmt_core::BLOCK_SIZE;
///
/// let (mut memory, mut programmed) = (vec![0xFFu8; 2 * BLOCK_SIZE], vec![false; BLOCK_SIZE / 4]);
/// let mut flash = MockFlash::<8, 4096>::new(&mut memory, &mut programmed, 0xFF).unwrap();
/// let config = FlashConfig::new(0, 2 * BLOCK_SIZE as u32).ring();
/// let mut writer = WordWriter::open(&mut flash, config)?;
/// writer.add_record(b"temperature=21.5")?;
/// writer.flush()?;
/// let mut reader = WordReader::open(&mut flash, config).map_err(logfmt_core::flash::FlashError::Flash)?;
/// let mut buffer = [0u8; 64];
/// let Some(FlashItem::Record { len, .. }) = reader.next(&mut buffer).unwrap() else { panic!() };
/// assert_eq!(&buffer[..len], b"temperature=21.5");
/// assert_eq!(reader.next(&mut buffer).unwrap(), None);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct WordReader<F> {
    flash: F,
    walk: Walk,
}

impl<F: ReadNorFlash> WordReader<F> {
    /// A reader of the log in region `config` of `flash`: a ring (read from its oldest block,
    /// found by reading each block's ring header) if `config.ring`, else the region in order.
    ///
    /// # Errors
    /// A read error (one of kind `Other` while reading a ring header: that header is taken as
    /// missing).
    pub fn open(mut flash: F, config: FlashConfig) -> Result<Self, F::Error> {
        let order = Walk::order_of_sync(&mut flash, &config)?;
        Ok(Self {
            flash,
            walk: Walk::new(config, order),
        })
    }

    /// The next record (copied into `buffer`), damage report or oversized record; `None` at
    /// the log's end.
    ///
    /// # Errors
    /// A read error; the next call reads again from where it failed. (A read that fails
    /// with an error of kind `Other`, an ECC error, is read again in smaller pieces, and the
    /// pieces that still fail read as unknown bytes: a torn write, or damage.)
    pub fn next(&mut self, buffer: &mut [u8]) -> Result<Option<FlashItem>, F::Error> {
        self.walk.next_item_sync(&mut self.flash, buffer)
    }

    /// For a ring: records aged out, begun before the oldest block the ring holds.
    pub fn aged_out_records(&self) -> Option<u32> {
        self.walk.order.aged_out()
    }

    /// Gives back the flash.
    pub fn into_inner(self) -> F {
        self.flash
    }
}

/// [`WordReader`] over an async flash driver (feature `embedded-storage-async`): the same
/// reader — one implementation, awaited here, run to completion there — returning the same
/// items.
///
/// A future of this reader dropped before it completes is harmless: the reader changes its
/// state only after the reads each step needs, so the next call reads again from the same
/// place.
///
/// ```
/// # #[cfg(not(feature = "mock-flash"))] fn main() {}
/// # #[cfg(feature = "mock-flash")]
/// # fn main() -> Result<(), logfmt_core::flash::FlashError<logfmt_core::flash::MockError>> {
/// use logfmt_core::flash::{AsyncWordReader, AsyncWordWriter, FlashConfig, FlashItem, MockFlash};
/// use logfmt_core::BLOCK_SIZE;
///
/// # embassy_futures::block_on(async {
/// let (mut memory, mut programmed) = (vec![0xFFu8; 2 * BLOCK_SIZE], vec![false; BLOCK_SIZE / 4]);
/// let mut flash = MockFlash::<8, 4096>::new(&mut memory, &mut programmed, 0xFF).unwrap();
/// let config = FlashConfig::new(0, 2 * BLOCK_SIZE as u32).ring();
/// let mut writer = AsyncWordWriter::open(&mut flash, config).await?;
/// writer.add_record(b"temperature=21.5").await?;
/// writer.flush().await?;
/// let mut reader = AsyncWordReader::open(&mut flash, config).await.map_err(logfmt_core::flash::FlashError::Flash)?;
/// let mut buffer = [0u8; 64];
/// let Some(FlashItem::Record { len, .. }) = reader.next(&mut buffer).await.unwrap() else { panic!() };
/// assert_eq!(&buffer[..len], b"temperature=21.5");
/// assert_eq!(reader.next(&mut buffer).await.unwrap(), None);
/// # Ok(())
/// # })
/// # }
/// ```
#[cfg(feature = "embedded-storage-async")]
#[derive(Debug)]
pub struct AsyncWordReader<F> {
    flash: F,
    walk: Walk,
}

#[cfg(feature = "embedded-storage-async")]
impl<F: embedded_storage_async::nor_flash::ReadNorFlash> AsyncWordReader<F> {
    /// A reader of the log in region `config` of `flash`, as [`WordReader::open`].
    ///
    /// # Errors
    /// A read error (one of kind `Other` while reading a ring header: that header is taken as
    /// missing).
    pub async fn open(mut flash: F, config: FlashConfig) -> Result<Self, F::Error> {
        let order = Walk::order_of_async(&mut flash, &config).await?;
        Ok(Self {
            flash,
            walk: Walk::new(config, order),
        })
    }

    /// The next record, damage report or oversized record, as [`WordReader::next`].
    ///
    /// # Errors
    /// A read error; the next call reads again from where it failed. (A read that fails
    /// with an error of kind `Other`, an ECC error, is read again in smaller pieces, and the
    /// pieces that still fail read as unknown bytes: a torn write, or damage.)
    pub async fn next(&mut self, buffer: &mut [u8]) -> Result<Option<FlashItem>, F::Error> {
        self.walk.next_item_async(&mut self.flash, buffer).await
    }

    /// For a ring: records aged out, as [`WordReader::aged_out_records`].
    pub fn aged_out_records(&self) -> Option<u32> {
        self.walk.order.aged_out()
    }

    /// Gives back the flash.
    pub fn into_inner(self) -> F {
        self.flash
    }
}
