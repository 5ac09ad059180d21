//! Reading a flash log from a read cursor: the cursor's newest commit found from the newest
//! block back, then the log read from the block that holds the cursor's record on, the records
//! before it passed over. One implementation of the opening steps, written as `async` code,
//! from which `maybe-async-cfg` makes the blocking copy, as for the readers.

use embedded_storage::nor_flash::ReadNorFlash as ReadFlashSync;
use embedded_storage::nor_flash::{NorFlashError, NorFlashErrorKind, ReadNorFlash};
#[cfg(feature = "embedded-storage-async")]
use embedded_storage_async::nor_flash::ReadNorFlash as ReadFlashAsync;

use super::config::FlashConfig;
use super::reader::{FlashItem, Walk};
use crate::cursor::{CURSOR_PAYLOAD, Cursor};
use crate::format::{BLOCK_SIZE, HEADER_SIZE};
use crate::ring::newer;

/// Where a [`CursorReader`] starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CursorStart {
    /// The cursor's newest commit found in the log; `None` if it was never committed (or, in
    /// a ring, its last commit aged out: it then reads as never committed, from record 0).
    pub committed: Option<Cursor>,
    /// Records the cursor had not delivered that aged out of a ring before this reading: they
    /// are lost, and reading starts at the oldest record the ring holds.
    pub aged_out: u32,
}

/// What a reading from a cursor keeps besides the walk: which records it passes over, and how
/// far it has delivered.
#[derive(Debug, Clone, Copy)]
struct Consumer {
    id: u8,
    /// Records numbered below this one are passed over.
    from: u32,
    /// The number of the record after the last one returned.
    next: u32,
    start: CursorStart,
}

impl Consumer {
    /// `item`, found by `walk`, if the reader returns it: records numbered below the cursor
    /// (and damage met before the cursor's record began) are passed over.
    fn keep(&mut self, walk: &Walk, item: FlashItem) -> Option<FlashItem> {
        let numbering = walk.numbering;
        if let FlashItem::Damage { .. } = item {
            return (!newer(self.from, numbering.records)).then_some(item);
        }
        if newer(self.from, numbering.current) {
            return None;
        }
        self.next = numbering.current.wrapping_add(1);
        Some(item)
    }
}

/// The blocks the walk reads, in all.
fn blocks_of(walk: &Walk, config: &FlashConfig) -> u32 {
    let order = walk.order();
    let mut n = 0;
    while let Some((_, last)) = order.block(config, n) {
        n += 1;
        if last {
            break;
        }
    }
    n
}

/// The walk of the log in region `config` of `flash` from cursor `id`, and where it
/// starts.
#[maybe_async_cfg::maybe(
    idents(
        ReadFlash,
        open(fn),
        next_item(fn),
        start(fn),
        newest_commit(fn),
        block_of_record(fn),
        holds_log(fn),
    ),
    sync(),
    async(feature = "embedded-storage-async")
)]
async fn start<R: ReadFlash>(
    flash: &mut R,
    config: FlashConfig,
    id: u8,
) -> Result<(Walk, Consumer), R::Error> {
    let mut walk = Walk::open(flash, config).await?;
    let committed = newest_commit(flash, &walk, &config, id).await?;
    let from = committed.unwrap_or(0);
    let oldest = walk.order().aged_out().unwrap_or(from);
    let aged_out = if newer(oldest, from) {
        oldest.wrapping_sub(from)
    } else {
        0
    };
    let first = Walk::block_of_record(&mut walk, flash, from).await?;
    walk.skip_blocks(first);
    let start = CursorStart {
        committed: committed.map(|next| Cursor::new(id, next)),
        aged_out,
    };
    let next = if aged_out > 0 { oldest } else { from };
    Ok((
        walk,
        Consumer {
            id,
            from,
            next,
            start,
        },
    ))
}

/// The `next` of cursor `id`'s newest well-formed chunk: the blocks walked from the newest
/// back to the first that holds one.
#[maybe_async_cfg::maybe(
    idents(
        ReadFlash,
        open(fn),
        next_item(fn),
        start(fn),
        newest_commit(fn),
        block_of_record(fn),
        holds_log(fn),
    ),
    sync(),
    async(feature = "embedded-storage-async")
)]
async fn newest_commit<R: ReadFlash>(
    flash: &mut R,
    walk: &Walk,
    config: &FlashConfig,
    id: u8,
) -> Result<Option<u32>, R::Error> {
    let ring = walk.order().ring_of().is_some();
    // Records longer than a cursor's payload are not copied: only their checksums are read.
    let mut payload = [0u8; CURSOR_PAYLOAD];
    for n in (0..blocks_of(walk, config)).rev() {
        let Some((index, _)) = walk.order().block(config, n) else {
            continue;
        };
        if !ring && !holds_log(flash, config, index).await? {
            continue;
        }
        let mut scan = walk.clone();
        scan.skip_blocks(n);
        scan.numbering.end = Some(n + 1);
        scan.numbering.watch = Some(id);
        while Walk::next_item(&mut scan, flash, &mut payload)
            .await?
            .is_some()
        {}
        if scan.numbering.seen.is_some() {
            return Ok(scan.numbering.seen);
        }
    }
    Ok(None)
}

/// Whether block `index` of a bounded region begins with written bytes (a block of the
/// log begins with a chunk; one that reads erased there holds nothing of it).
#[maybe_async_cfg::maybe(
    idents(
        ReadFlash,
        open(fn),
        next_item(fn),
        start(fn),
        newest_commit(fn),
        block_of_record(fn),
        holds_log(fn),
    ),
    sync(),
    async(feature = "embedded-storage-async")
)]
async fn holds_log<R: ReadFlash>(
    flash: &mut R,
    config: &FlashConfig,
    index: u32,
) -> Result<bool, R::Error> {
    let mut bytes = [0u8; 32];
    let len = HEADER_SIZE.next_multiple_of(R::READ_SIZE.clamp(1, 32));
    let at = config.start + index * BLOCK_SIZE as u32;
    match flash
        .read(at, bytes.get_mut(..len).unwrap_or_default())
        .await
    {
        Ok(()) => Ok(bytes
            .get(..HEADER_SIZE)
            .unwrap_or_default()
            .iter()
            .any(|&b| b != config.erased)),
        // Unreadable bytes (an ECC error) are written bytes.
        Err(e) if e.kind() == NorFlashErrorKind::Other => Ok(true),
        Err(e) => Err(e),
    }
}

/// Reads a flash log from a read cursor: the records the cursor has not delivered, oldest
/// first, with the same items and rules as [`WordReader`](super::WordReader) (it is one,
/// started at the cursor). Commit how far the records it returned were delivered with
/// [`WordWriter::commit`](super::WordWriter::commit)`(reader.cursor())`: after any power cut,
/// the next reader opened at the cursor starts after the last record committed, and one
/// interrupted in a commit starts where the commit before left it.
///
/// Records of a ring that aged out before the cursor delivered them are counted in
/// [`start`](Self::start) (`aged_out`), never passed over silently; committing
/// [`cursor`](Self::cursor) acknowledges them.
///
/// Cost of [`open`](Self::open): the ring headers (as [`WordReader::open`](super::WordReader::open)),
/// the newest blocks' chunks back to the cursor's newest commit (one block when commits are
/// made at least once a block; all of them when the cursor was never committed), and
/// `⌈log2 N⌉` ring headers of 19 bytes for a ring of `N` blocks to find the block of the
/// cursor's record (a binary search, as [`WordReader::seek_record`](super::WordReader::seek_record));
/// reading then begins in that block.
///
/// ```
/// # #[cfg(not(feature = "mock-flash"))] fn main() {}
/// # #[cfg(feature = "mock-flash")]
/// # fn main() -> Result<(), logfmt_core::flash::FlashError<logfmt_core::flash::MockError>> {
/// use logfmt_core::flash::{CursorReader, FlashConfig, FlashError, FlashItem, MockFlash, WordWriter};
/// use logfmt_core::BLOCK_SIZE;
///
/// let (mut memory, mut programmed) = (vec![0xFFu8; 2 * BLOCK_SIZE], vec![false; BLOCK_SIZE / 4]);
/// let mut flash = MockFlash::<8, 4096>::new(&mut memory, &mut programmed, 0xFF).unwrap();
/// let config = FlashConfig::new(0, 2 * BLOCK_SIZE as u32).ring();
/// let mut writer = WordWriter::open(&mut flash, config)?;
/// for sample in [&b"t=21.5"[..], b"t=21.6", b"t=21.7"] {
///     writer.add_record(sample)?;
/// }
/// writer.flush()?;
/// let mut buffer = [0u8; 64];
/// // Deliver two records, then commit cursor 0 after them.
/// let mut reader = CursorReader::open(writer.flash_mut(), config, 0).map_err(FlashError::Flash)?;
/// for _ in 0..2 {
///     reader.next(&mut buffer).map_err(FlashError::Flash)?; // ... uploaded
/// }
/// let cursor = reader.cursor();
/// writer.commit(cursor)?;
/// // After a reboot, reading from cursor 0 starts at the third record.
/// let mut reader = CursorReader::open(&mut flash, config, 0).map_err(FlashError::Flash)?;
/// let Some(FlashItem::Record { len, .. }) = reader.next(&mut buffer).map_err(FlashError::Flash)? else { panic!() };
/// assert_eq!(&buffer[..len], b"t=21.7");
/// assert_eq!(reader.start().committed, Some(cursor));
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct CursorReader<F> {
    flash: F,
    walk: Walk,
    consumer: Consumer,
}

impl<F: ReadNorFlash> CursorReader<F> {
    /// A reader of the log in region `config` of `flash` from cursor `id`'s newest commit.
    ///
    /// # Errors
    /// A read error (as [`WordReader::open`](super::WordReader::open)).
    pub fn open(mut flash: F, config: FlashConfig, id: u8) -> Result<Self, F::Error> {
        let (walk, consumer) = start_sync(&mut flash, config, id)?;
        Ok(Self {
            flash,
            walk,
            consumer,
        })
    }

    /// The next record not delivered (copied into `buffer`), damage report or oversized
    /// record, as [`WordReader::next`](super::WordReader::next); `None` at the log's end.
    ///
    /// # Errors
    /// A read error; the next call reads again from where it failed.
    pub fn next(&mut self, buffer: &mut [u8]) -> Result<Option<FlashItem>, F::Error> {
        while let Some(item) = self.walk.next_item_sync(&mut self.flash, buffer)? {
            if let Some(item) = self.consumer.keep(&self.walk, item) {
                return Ok(Some(item));
            }
        }
        Ok(None)
    }

    /// Where the reading started: the cursor's commit, and the records aged out before it.
    pub fn start(&self) -> CursorStart {
        self.consumer.start
    }

    /// The cursor to commit once the records returned so far (an oversized record counts as
    /// returned) were delivered: after the last one, or where reading started.
    pub fn cursor(&self) -> Cursor {
        Cursor::new(self.consumer.id, self.consumer.next)
    }

    /// The number the next record begun in the log gets, as far as this reading has gone:
    /// once [`next`](Self::next) returned `None`, one past the newest record's. A cursor
    /// committed past it points past the log's end (a record numbered there is yet to come).
    pub fn next_record(&self) -> u32 {
        self.walk.numbering.records
    }

    /// Gives back the flash.
    pub fn into_inner(self) -> F {
        self.flash
    }
}

/// [`CursorReader`] over an async flash driver (feature `embedded-storage-async`): the same
/// reader, the same items. A future dropped before it completes is harmless, as for
/// `AsyncWordReader`.
#[cfg(feature = "embedded-storage-async")]
#[derive(Debug)]
pub struct AsyncCursorReader<F> {
    flash: F,
    walk: Walk,
    consumer: Consumer,
}

#[cfg(feature = "embedded-storage-async")]
impl<F: embedded_storage_async::nor_flash::ReadNorFlash> AsyncCursorReader<F> {
    /// A reader from cursor `id`, as [`CursorReader::open`].
    ///
    /// # Errors
    /// A read error.
    pub async fn open(mut flash: F, config: FlashConfig, id: u8) -> Result<Self, F::Error> {
        let (walk, consumer) = start_async(&mut flash, config, id).await?;
        Ok(Self {
            flash,
            walk,
            consumer,
        })
    }

    /// The next record not delivered, as [`CursorReader::next`].
    ///
    /// # Errors
    /// A read error; the next call reads again from where it failed.
    pub async fn next(&mut self, buffer: &mut [u8]) -> Result<Option<FlashItem>, F::Error> {
        while let Some(item) = self.walk.next_item_async(&mut self.flash, buffer).await? {
            if let Some(item) = self.consumer.keep(&self.walk, item) {
                return Ok(Some(item));
            }
        }
        Ok(None)
    }

    /// Where the reading started, as [`CursorReader::start`].
    pub fn start(&self) -> CursorStart {
        self.consumer.start
    }

    /// The cursor to commit, as [`CursorReader::cursor`].
    pub fn cursor(&self) -> Cursor {
        Cursor::new(self.consumer.id, self.consumer.next)
    }

    /// The number the next record begun in the log gets, as [`CursorReader::next_record`].
    pub fn next_record(&self) -> u32 {
        self.walk.numbering.records
    }

    /// Gives back the flash.
    pub fn into_inner(self) -> F {
        self.flash
    }
}
