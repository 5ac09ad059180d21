//! The small-RAM flash reader: records read straight from a `ReadNorFlash` into the caller's
//! buffer, a chunk at a time in small reads, with the flash-image rules of the block reader
//! and no block buffer.

use embedded_storage::nor_flash::ReadNorFlash;

use super::FlashConfig;
use super::order::Order;
use crate::checksum;
use crate::format::{BLOCK_SIZE, HEADER_SIZE, RESUME_TYPE, RING_TYPE, RecordType};

/// Bytes read at a time (besides `READ_SIZE` alignment).
const PIECE: usize = 32;
/// Room for a piece read at `READ_SIZE` alignment (at most 32).
const WINDOW: usize = PIECE + 2 * 32;

/// What [`WordReader::next`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum FlashItem {
    /// A record: its first `len` bytes of the caller's buffer; `offset` is where its first
    /// chunk starts in the region.
    Record {
        /// Region offset of the record's first chunk.
        offset: u64,
        /// The record's length.
        len: usize,
    },
    /// Bytes that are neither a record nor a power cut's leftovers: damage, dropped (a record
    /// in progress there is dropped with them).
    Damage {
        /// Region offset of the first byte dropped.
        offset: u64,
        /// Bytes dropped (to the end of their block at most).
        bytes: u64,
    },
    /// A whole record longer than the caller's buffer, skipped.
    Oversized {
        /// Region offset of the record's first chunk.
        offset: u64,
        /// The record's length.
        len: u64,
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
    /// A record in progress: where it starts (a logical offset), its bytes so far.
    InRecord { offset: u64, len: u64 },
}

/// A chunk at a position, as far as reading it tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// Well-formed: type and payload length.
    Good { kind: u8, len: u32 },
    /// A header of erased bytes: nothing written here.
    Erased,
    /// Not well-formed; `torn`: it looks cut short (its length runs past the block, or its
    /// last byte reads erased).
    Bad { torn: bool },
}

/// Bad bytes at the end of the block before, waiting for the next block's verdict.
#[derive(Debug, Clone, Copy)]
struct Deferred {
    offset: u64,
    bytes: u64,
    torn: bool,
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
    config: FlashConfig,
    order: Order,
    /// Blocks begun so far; the current one's region index and whether it is the last.
    blocks: u32,
    index: u32,
    last: bool,
    /// Offset in the current block (`BLOCK_SIZE`: the next block is due).
    pos: u32,
    state: State,
    deferred: Option<Deferred>,
    /// An item found together with the one returned.
    pending: Option<FlashItem>,
    done: bool,
}

impl<F: ReadNorFlash> WordReader<F> {
    /// A reader of the log in region `config` of `flash`: a ring (read from its oldest block,
    /// found by reading each block's ring header) if `config.ring`, else the region in order.
    ///
    /// # Errors
    /// A read error.
    pub fn open(mut flash: F, config: FlashConfig) -> Result<Self, F::Error> {
        let order = if config.ring {
            Order::ring(&mut flash, &config)?
        } else {
            Order::Region
        };
        Ok(Self {
            flash,
            config,
            order,
            blocks: 0,
            index: 0,
            last: false,
            pos: BLOCK_SIZE as u32,
            state: if config.ring {
                State::Resync
            } else {
                State::Idle
            },
            deferred: None,
            pending: None,
            done: false,
        })
    }

    /// For a ring: records aged out, begun before the oldest block the ring holds.
    pub fn aged_out_records(&self) -> Option<u32> {
        self.order.aged_out()
    }

    /// Gives back the flash.
    pub fn into_inner(self) -> F {
        self.flash
    }

    /// The next record (copied into `buffer`), damage report or oversized record; `None` at
    /// the log's end.
    ///
    /// # Errors
    /// A read error; reading may go on after it.
    pub fn next(&mut self, buffer: &mut [u8]) -> Result<Option<FlashItem>, F::Error> {
        if let Some(item) = self.pending.take() {
            return Ok(Some(item));
        }
        loop {
            if self.done {
                return Ok(None);
            }
            if self.pos as usize + HEADER_SIZE > BLOCK_SIZE {
                // A trailer, or the block's end: the next block.
                if let Some(item) = self.next_block()? {
                    return Ok(Some(item));
                }
                continue;
            }
            let at = self.pos;
            let dest = match (self.state, self.peek_kind(at)?) {
                (_, Some(k)) if k == RecordType::Full as u8 || k == RecordType::First as u8 => {
                    Some(0)
                }
                (State::InRecord { len, .. }, Some(k))
                    if k == RecordType::Middle as u8 || k == RecordType::Last as u8 =>
                {
                    Some(len)
                }
                _ => None,
            };
            let chunk = self.chunk(at, dest.map(|d| (&mut *buffer, d)))?;
            let item = match chunk {
                Chunk::Good { kind, len } => {
                    self.pos = at + HEADER_SIZE as u32 + len;
                    self.on_chunk(kind, at, len, buffer.len())
                }
                Chunk::Erased => self.after_erased(at)?,
                Chunk::Bad { torn } => self.bad(at, torn)?,
            };
            if let Some(item) = item {
                return Ok(Some(item));
            }
        }
    }

    /// Loads the next block (judging bad bytes at the end of the one before); at the log's
    /// end, marks it done. An item to return, if any.
    fn next_block(&mut self) -> Result<Option<FlashItem>, F::Error> {
        let Some((index, last)) = self.order.block(&self.config, self.blocks) else {
            self.done = true;
            // The log ends: bad bytes before are torn if they look it; a record in progress
            // was torn.
            self.state = State::Idle;
            return Ok(self
                .deferred
                .take()
                .and_then(|d| (!d.torn).then_some(d.damage())));
        };
        (self.blocks, self.index, self.last, self.pos) = (self.blocks + 1, index, last, 0);
        let mut first = [0u8; crate::ring::RING_HEADER_SIZE];
        self.read(0, &mut first)?;
        if !self.order.holds(index, &first) {
            // Nothing of this log: as if erased.
            self.pos = BLOCK_SIZE as u32;
        }
        let Some(deferred) = self.deferred.take() else {
            if self.pos != 0 {
                return Ok(self.drop_record());
            }
            return Ok(None);
        };
        // After a ring header, if any: a resume marker says the bad bytes were torn.
        let mut at = 0;
        if self.pos == 0
            && let Chunk::Good {
                kind: RING_TYPE,
                len,
            } = self.chunk(0, None)?
        {
            at = HEADER_SIZE as u32 + len;
        }
        let torn = if self.pos == 0 {
            match self.chunk(at, None)? {
                Chunk::Good { kind, len } => kind == RESUME_TYPE && len == 0,
                _ => deferred.torn,
            }
        } else {
            deferred.torn
        };
        let dropped = self.drop_record();
        Ok(if torn {
            dropped
        } else {
            Some(deferred.damage())
        })
    }

    /// A well-formed chunk of type `kind` at `at`, `len` bytes of payload (copied into the
    /// buffer, of `room` bytes, if it is a fragment of a record that fits).
    fn on_chunk(&mut self, kind: u8, at: u32, len: u32, room: usize) -> Option<FlashItem> {
        let offset = self.logical(at);
        let chunk_bytes = u64::from(len) + HEADER_SIZE as u64;
        let len = u64::from(len);
        if kind == RING_TYPE {
            return None;
        }
        if self.state == State::Resync {
            if kind == RecordType::Middle as u8 {
                return None;
            }
            self.state = State::Idle;
            if kind == RecordType::Last as u8 {
                return None;
            }
        }
        let order = self.order;
        let whole = |offset: u64, len: u64| {
            let offset = order.region_offset(offset);
            if len as usize <= room {
                FlashItem::Record {
                    offset,
                    len: len as usize,
                }
            } else {
                FlashItem::Oversized { offset, len }
            }
        };
        match (self.state, kind) {
            (State::InRecord { offset, len: sofar }, k)
                if k == RecordType::Middle as u8 || k == RecordType::Last as u8 =>
            {
                let total = sofar + len;
                if k == RecordType::Last as u8 {
                    self.state = State::Idle;
                    return Some(whole(offset, total));
                }
                self.state = State::InRecord { offset, len: total };
                None
            }
            (_, k) if k == RecordType::Full as u8 || k == RecordType::First as u8 => {
                let partial = self.drop_record_reported();
                if k == RecordType::Full as u8 {
                    let record = whole(offset, len);
                    return match partial {
                        Some(damage) => {
                            self.pending = Some(record);
                            Some(damage)
                        }
                        None => Some(record),
                    };
                }
                self.state = State::InRecord { offset, len };
                partial
            }
            // A resume marker: a record in progress was torn by a power cut.
            (_, RESUME_TYPE) if len == 0 => self.drop_record(),
            // A fragment with no record in progress, or a type this log does not write.
            _ => {
                let partial = self.drop_record_reported();
                let damage = FlashItem::Damage {
                    offset: self.order.region_offset(offset),
                    bytes: chunk_bytes,
                };
                match partial {
                    Some(first) => {
                        self.pending = Some(damage);
                        Some(first)
                    }
                    None => Some(damage),
                }
            }
        }
    }

    /// Erased bytes where a chunk would start at `at`: padding before the next chunk, or the
    /// end of what is written in the block.
    fn after_erased(&mut self, at: u32) -> Result<Option<FlashItem>, F::Error> {
        if let Some(next) = self.padding(at)? {
            self.pos = next;
            return Ok(self.drop_record());
        }
        let found = match self.find_written(at)? {
            Some(_) => self.search(at + 1)?,
            None => None,
        };
        match found {
            Some((next, marker)) => Ok(self.gap(at, next, marker)),
            None => {
                // Erased bytes, then nothing that is a chunk: the rest of the block is skipped.
                self.pos = BLOCK_SIZE as u32;
                Ok(self.drop_record())
            }
        }
    }

    /// Erased bytes from `at` up to a well-formed chunk — the rest of a flash word a flush left
    /// unprogrammed, or the words a reopened writer skipped: where that chunk starts. It
    /// starts at the first byte not erased, or a few bytes before if its checksum begins with
    /// bytes that read as erased.
    fn padding(&mut self, at: u32) -> Result<Option<u32>, F::Error> {
        let mut first = [0u8; 1];
        self.read(at, &mut first)?;
        if first[0] != self.config.erased {
            return Ok(None);
        }
        let Some(written) = self.find_written(at)? else {
            return Ok(None);
        };
        for back in 0..(written - at).min(HEADER_SIZE as u32) {
            if let Chunk::Good { .. } = self.chunk(written - back, None)? {
                return Ok(Some(written - back));
            }
        }
        Ok(None)
    }

    /// A chunk at `at` that is not well-formed (`torn`: it looks cut short).
    fn bad(&mut self, at: u32, torn: bool) -> Result<Option<FlashItem>, F::Error> {
        if let Some(next) = self.padding(at)? {
            self.pos = next;
            return Ok(self.drop_record());
        }
        let torn = torn || self.torn_after_padding(at)?;
        if self.state == State::Resync {
            // Any chunk ends the resynchronisation, a bad one included (LevelDB's rule).
            self.state = State::Idle;
        }
        if let Some((next, marker)) = self.search(at + 1)? {
            return Ok(self.gap(at, next, marker));
        }
        let bytes = (BLOCK_SIZE as u32 - at).into();
        let deferred = Deferred {
            offset: self.order.region_offset(self.logical(at)),
            bytes,
            torn,
        };
        self.pos = BLOCK_SIZE as u32;
        if self.last {
            // The log ends here: torn if it looks it, else damage.
            self.done = true;
            self.state = State::Idle;
            return Ok((!torn).then_some(deferred.damage()));
        }
        // The next block tells.
        self.deferred = Some(deferred);
        Ok(None)
    }

    /// Bad bytes from `at` up to the well-formed chunk at `next`: torn if that is a resume
    /// marker, damage otherwise.
    fn gap(&mut self, at: u32, next: u32, marker: bool) -> Option<FlashItem> {
        self.pos = next;
        let dropped = self.drop_record();
        if marker {
            return dropped;
        }
        Some(FlashItem::Damage {
            offset: self.order.region_offset(self.logical(at)),
            bytes: u64::from(next - at),
        })
    }

    /// Whether, after erased padding at `at`, the chunk there looks cut short: it starts at the
    /// first byte not erased, or up to 6 bytes before (the block reader's rule).
    fn torn_after_padding(&mut self, at: u32) -> Result<bool, F::Error> {
        let mut first = [0u8; 1];
        self.read(at, &mut first)?;
        if first[0] != self.config.erased {
            return Ok(false);
        }
        let Some(written) = self.find_written(at)? else {
            return Ok(false);
        };
        for back in 0..=(written - at).min(HEADER_SIZE as u32 - 1) {
            if let Chunk::Bad { torn: true } = self.chunk(written - back, None)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Drops a record in progress silently (a power cut).
    fn drop_record(&mut self) -> Option<FlashItem> {
        if matches!(self.state, State::InRecord { .. }) {
            self.state = State::Idle;
        }
        None
    }

    /// Drops a record in progress, reported as damage.
    fn drop_record_reported(&mut self) -> Option<FlashItem> {
        let State::InRecord { offset, len } = self.state else {
            return None;
        };
        self.state = State::Idle;
        Some(FlashItem::Damage {
            offset: self.order.region_offset(offset),
            bytes: len,
        })
    }

    /// The logical offset of `at` in the current block.
    fn logical(&self, at: u32) -> u64 {
        u64::from(self.blocks.saturating_sub(1)) * BLOCK_SIZE as u64 + u64::from(at)
    }

    /// The type byte of the header at `at`, if one can be read there.
    fn peek_kind(&mut self, at: u32) -> Result<Option<u8>, F::Error> {
        let mut header = [0u8; HEADER_SIZE];
        self.read(at, &mut header)?;
        Ok(Some(header[HEADER_SIZE - 1]))
    }

    /// The chunk at `at`: its payload checked (and copied into `copy`'s buffer at its offset,
    /// where it fits).
    fn chunk(&mut self, at: u32, copy: Option<(&mut [u8], u64)>) -> Result<Chunk, F::Error> {
        let erased = self.config.erased;
        let mut header = [0u8; HEADER_SIZE];
        self.read(at, &mut header)?;
        if header.iter().all(|&b| b == erased) {
            return Ok(Chunk::Erased);
        }
        let [c0, c1, c2, c3, l0, l1, kind] = header;
        let len = u32::from(u16::from_le_bytes([l0, l1]));
        let start = at + HEADER_SIZE as u32;
        if (start + len) as usize > BLOCK_SIZE {
            return Ok(Chunk::Bad { torn: true });
        }
        let mut copy = copy.and_then(|(buffer, offset)| {
            let offset = usize::try_from(offset).ok()?;
            buffer.get_mut(offset..offset.checked_add(len as usize)?)
        });
        let mut crc = checksum::crc32c(&[kind]);
        let mut done = 0;
        let mut last = erased;
        while done < len {
            let n = (len - done).min(PIECE as u32);
            let mut piece = [0u8; PIECE];
            let piece = piece.get_mut(..n as usize).unwrap_or_default();
            self.read(start + done, piece)?;
            crc = checksum::extend(crc, piece);
            if let Some(slot) = copy
                .as_deref_mut()
                .and_then(|c| c.get_mut(done as usize..(done + n) as usize))
            {
                slot.copy_from_slice(piece);
            }
            last = piece.last().copied().unwrap_or(erased);
            done += n;
        }
        if checksum::mask(crc) != u32::from_le_bytes([c0, c1, c2, c3]) {
            // Cut short if the chunk's last byte (its type byte, if empty) reads erased.
            let torn = if len == 0 {
                kind == erased
            } else {
                last == erased
            };
            return Ok(Chunk::Bad { torn });
        }
        Ok(Chunk::Good { kind, len })
    }

    /// The first well-formed fragment or resume marker from `from` on in the block: where,
    /// and whether it is a marker.
    fn search(&mut self, from: u32) -> Result<Option<(u32, bool)>, F::Error> {
        let mut at = from;
        while at as usize + HEADER_SIZE <= BLOCK_SIZE {
            let mut header = [0u8; HEADER_SIZE];
            self.read(at, &mut header)?;
            let kind = header[HEADER_SIZE - 1];
            let fragment = (RecordType::Full as u8..=RecordType::Last as u8).contains(&kind);
            let marker = kind == RESUME_TYPE && header[4] == 0 && header[5] == 0;
            if (fragment || marker)
                && let Chunk::Good { .. } = self.chunk(at, None)?
            {
                return Ok(Some((at, marker)));
            }
            at += 1;
        }
        Ok(None)
    }

    /// The first byte at or after `from` in the block that is not erased.
    fn find_written(&mut self, from: u32) -> Result<Option<u32>, F::Error> {
        let mut at = from;
        while (at as usize) < BLOCK_SIZE {
            let n = (BLOCK_SIZE as u32 - at).min(PIECE as u32);
            let mut piece = [0u8; PIECE];
            let piece = piece.get_mut(..n as usize).unwrap_or_default();
            self.read(at, piece)?;
            if let Some(i) = piece.iter().position(|&b| b != self.config.erased) {
                return Ok(Some(at + i as u32));
            }
            at += n;
        }
        Ok(None)
    }

    /// Reads `out.len()` (at most 32) bytes at `at` in the current block, aligned to the
    /// flash's `READ_SIZE`.
    fn read(&mut self, at: u32, out: &mut [u8]) -> Result<(), F::Error> {
        let size = F::READ_SIZE.clamp(1, 32) as u32;
        let abs = self.config.start + self.index * BLOCK_SIZE as u32 + at;
        let from = abs - abs % size;
        let to = (abs + out.len() as u32).next_multiple_of(size);
        let mut window = [0u8; WINDOW];
        let window = window.get_mut(..(to - from) as usize).unwrap_or_default();
        self.flash.read(from, window)?;
        let skip = (abs - from) as usize;
        if let Some(bytes) = window.get(skip..skip + out.len()) {
            out.copy_from_slice(bytes);
        }
        Ok(())
    }
}

impl Deferred {
    fn damage(self) -> FlashItem {
        FlashItem::Damage {
            offset: self.offset,
            bytes: self.bytes,
        }
    }
}
