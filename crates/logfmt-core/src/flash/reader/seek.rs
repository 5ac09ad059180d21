//! Seeking in a flash log: to a record number, to a key the records carry, and to the newest
//! records, by a binary search over a ring's blocks (every ring header counts the records
//! begun before its block). One implementation for the blocking and the async reader, as the
//! walk's other steps.

use embedded_storage::nor_flash::ReadNorFlash as ReadFlashSync;
#[cfg(feature = "embedded-storage-async")]
use embedded_storage_async::nor_flash::ReadNorFlash as ReadFlashAsync;

use super::{BLOCK, FlashItem, State, Walk, serial_before};
use crate::flash::order::Order;
use crate::ring::{RING_HEADER_SIZE, RingHeader};

#[maybe_async_cfg::maybe(
    idents(
        ReadFlash,
        seek_record(fn),
        block_of_record(fn),
        seek_newest(fn),
        seek_key(fn),
        first_key(fn),
        records_before(fn),
        next_item(fn),
        read_at(fn),
    ),
    keep_self,
    sync(),
    async(feature = "embedded-storage-async")
)]
impl Walk {
    /// Goes to record number `record` (records begun in the log, as the ring headers count
    /// them) and returns it (read into `buffer`), or the first after it: the block that holds
    /// its start, found by a binary search over the ring's blocks (a ring header read per
    /// step), then the records before it in that block passed over as they are read, and
    /// damage with them. A bounded log is walked from its start.
    pub(super) async fn seek_record<R: ReadFlash>(
        &mut self,
        flash: &mut R,
        buffer: &mut [u8],
        record: u32,
    ) -> Result<Option<FlashItem>, R::Error> {
        let start = Self::block_of_record(self, flash, record).await?;
        self.start_at(start);
        while let Some(item) = Self::next_item(self, flash, buffer).await? {
            // A whole record is the newest begun.
            if !matches!(item, FlashItem::Damage { .. })
                && !serial_before(self.numbering.records.wrapping_sub(1), record)
            {
                return Ok(Some(item));
            }
        }
        Ok(None)
    }

    /// The block (its place in the reading order) where record number `record` begins, or
    /// the first block if it aged out or the log is not a ring: the last block whose ring
    /// header counts no more records begun before it than `record`, found by a binary search
    /// over the ring's blocks, `⌈log2 N⌉` ring headers read for `N` blocks (a block whose
    /// header is missing or not of the ring counts as after `record`).
    pub(in crate::flash) async fn block_of_record<R: ReadFlash>(
        &mut self,
        flash: &mut R,
        record: u32,
    ) -> Result<u32, R::Error> {
        let Order::Ring(ring, oldest, aged) = self.order else {
            return Ok(0);
        };
        if serial_before(record, aged) {
            return Ok(0);
        }
        let count = ring.order(oldest).count() as u32;
        // Block 0 (the oldest) counts no more records before it than `record`.
        let (mut lo, mut hi) = (0, count);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            match Self::records_before(self, flash, mid).await? {
                Some(before) if !serial_before(record, before) => lo = mid,
                _ => hi = mid,
            }
        }
        Ok(lo)
    }

    /// Goes to the newest `count` records and returns the first of them: the newest block is
    /// read to count the records, then [`seek_record`](Self::seek_record) to the first of them
    /// (the oldest if fewer are held).
    pub(super) async fn seek_newest<R: ReadFlash>(
        &mut self,
        flash: &mut R,
        buffer: &mut [u8],
        count: u32,
    ) -> Result<Option<FlashItem>, R::Error> {
        let newest = match self.order {
            Order::Ring(ring, oldest, _) => ring.order(oldest).count() as u32 - 1,
            _ => 0,
        };
        self.start_at(newest);
        while Self::next_item(self, flash, &mut []).await?.is_some() {}
        let total = self.numbering.records;
        Self::seek_record(self, flash, buffer, total.wrapping_sub(count)).await
    }

    /// Goes to the first record whose key (`extract` of its bytes) is not below `key`, the keys
    /// taken to grow with the records: a binary search over a ring's blocks by the key of the
    /// first record that begins in each, then the records from there. That record (read into
    /// `buffer`) is returned, or `None` if there is none; reading goes on after it. Records
    /// whose key `extract` cannot tell, packs, oversized records and damage are passed over.
    pub(super) async fn seek_key<R: ReadFlash, K: Ord>(
        &mut self,
        flash: &mut R,
        buffer: &mut [u8],
        key: &K,
        extract: &mut dyn FnMut(&[u8]) -> Option<K>,
    ) -> Result<Option<FlashItem>, R::Error> {
        let start = match self.order {
            Order::Ring(ring, oldest, _) => {
                let count = ring.order(oldest).count() as u32;
                // The last block whose first record's key is below `key` (block 0 if none).
                let (mut lo, mut hi) = (0, count);
                while hi - lo > 1 {
                    let mid = lo + (hi - lo) / 2;
                    match Self::first_key(self, flash, mid, buffer, extract).await? {
                        Some(found) if found < *key => lo = mid,
                        _ => hi = mid,
                    }
                }
                lo
            }
            _ => 0,
        };
        self.start_at(start);
        while let Some(item) = Self::next_item(self, flash, buffer).await? {
            if let FlashItem::Record { len, .. } = item
                && let Some(found) = buffer.get(..len).and_then(&mut *extract)
                && found >= *key
            {
                return Ok(Some(item));
            }
        }
        Ok(None)
    }

    /// The key of the first record that begins in the ring's `n`-th block (or after it), read
    /// into `buffer`; `None` if no record from there has one.
    async fn first_key<R: ReadFlash, K>(
        &mut self,
        flash: &mut R,
        n: u32,
        buffer: &mut [u8],
        extract: &mut dyn FnMut(&[u8]) -> Option<K>,
    ) -> Result<Option<K>, R::Error> {
        self.start_at(n);
        while let Some(item) = Self::next_item(self, flash, buffer).await? {
            if let FlashItem::Record { len, .. } = item
                && let Some(found) = buffer.get(..len).and_then(&mut *extract)
            {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    /// The records begun before the ring's `n`-th block, from its ring header; `None` if the
    /// block holds no intact header of the ring.
    async fn records_before<R: ReadFlash>(
        &mut self,
        flash: &mut R,
        n: u32,
    ) -> Result<Option<u32>, R::Error> {
        let (Some((index, _)), Some(ring)) =
            (self.order.block(&self.config, n), self.order.ring_of())
        else {
            return Ok(None);
        };
        self.index = index;
        let mut first = [0u8; RING_HEADER_SIZE];
        Self::read_at(self, flash, 0, &mut first).await?;
        let header = RingHeader::parse(&first);
        Ok(header
            .filter(|_| ring.holds(index, header))
            .map(|h| h.records))
    }
}

impl Walk {
    /// Starts the walk again at the `n`-th block of its order: a record in progress there
    /// (begun in the block before) is skipped as a ring's oldest block's is.
    fn start_at(&mut self, n: u32) {
        self.blocks = n;
        self.pos = BLOCK;
        self.state = if n > 0 || self.order.ring_of().is_some() {
            State::Resync
        } else {
            State::Idle
        };
        self.numbering.records = 0;
        self.deferred = None;
        self.pending = None;
        self.done = false;
    }
}

impl<F: embedded_storage::nor_flash::ReadNorFlash> super::WordReader<F> {
    /// Goes to record number `record` and returns it (read into `buffer`, as
    /// [`next`](Self::next) returns it), or the first record after it; `None` if there is
    /// none. [`next`](Self::next) goes on after it. Damage before it is passed over. Records are numbered as the ring headers count them:
    /// every record begun in the log, from 0 in an empty region (wrapping at `2^32`); the
    /// oldest a ring holds is [`aged_out_records`](Self::aged_out_records). A record aged out
    /// starts the reader at the oldest one held; a number past the newest, at the log's end.
    ///
    /// Cost, in a ring of `N` blocks: `⌈log2 N⌉` ring headers of 19 bytes (a binary search
    /// over the blocks, oldest to newest), then the block where the record begins read from
    /// its start up to the record (at most one block, as [`next`](Self::next) reads it). A
    /// bounded log has no ring headers: it is read from its start up to the record.
    ///
    /// Numbers follow the writer's count: a record whose first chunk was lost to damage still
    /// has its number, so after damage the numbers of the rest of that block's records are
    /// one higher than the reader counts (the next block's header sets them right).
    ///
    /// ```
    /// # #[cfg(not(feature = "mock-flash"))] fn main() {}
    /// # #[cfg(feature = "mock-flash")]
    /// # fn main() -> Result<(), logfmt_core::flash::FlashError<logfmt_core::flash::MockError>> {
    /// use logfmt_core::flash::{FlashConfig, FlashError, FlashItem, MockFlash, WordReader, WordWriter};
    /// use logfmt_core::BLOCK_SIZE;
    ///
    /// let (mut memory, mut programmed) = (vec![0xFFu8; 4 * BLOCK_SIZE], vec![false; BLOCK_SIZE / 2]);
    /// let mut flash = MockFlash::<8, 4096>::new(&mut memory, &mut programmed, 0xFF).unwrap();
    /// let config = FlashConfig::new(0, 4 * BLOCK_SIZE as u32).ring();
    /// let mut writer = WordWriter::open(&mut flash, config)?;
    /// for i in 0..3000u32 {
    ///     writer.add_record(&i.to_le_bytes())?;
    /// }
    /// writer.flush()?;
    /// let mut reader = WordReader::open(&mut flash, config).map_err(FlashError::Flash)?;
    /// let mut buffer = [0u8; 16];
    /// let found = reader.seek_record(&mut buffer, 2500).map_err(FlashError::Flash)?;
    /// let Some(FlashItem::Record { len, .. }) = found else { panic!() };
    /// assert_eq!(&buffer[..len], &2500u32.to_le_bytes());
    /// // The newest 10 records: from record 2990.
    /// let found = reader.seek_newest(&mut buffer, 10).map_err(FlashError::Flash)?;
    /// let Some(FlashItem::Record { len, .. }) = found else { panic!() };
    /// assert_eq!(&buffer[..len], &2990u32.to_le_bytes());
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// A read error; the reader's place is then unknown: seek again.
    pub fn seek_record(
        &mut self,
        buffer: &mut [u8],
        record: u32,
    ) -> Result<Option<FlashItem>, F::Error> {
        self.walk.seek_record_sync(&mut self.flash, buffer, record)
    }

    /// Goes to the newest `count` records (all of them if fewer are held) and returns the
    /// first of them (read into `buffer`); [`next`](Self::next) returns the others. A record
    /// torn by a power cut at the log's end counts among them if its first chunk is whole.
    ///
    /// Cost: the newest block read once (to count its records: a ring header counts only the
    /// records before its block), then [`seek_record`](Self::seek_record): `⌈log2 N⌉` ring
    /// headers and the block where the first of them begins, up to it. A bounded log is read
    /// whole to count its records.
    ///
    /// # Errors
    /// A read error; the reader's place is then unknown: seek again.
    pub fn seek_newest(
        &mut self,
        buffer: &mut [u8],
        count: u32,
    ) -> Result<Option<FlashItem>, F::Error> {
        self.walk.seek_newest_sync(&mut self.flash, buffer, count)
    }

    /// Goes to the first record whose key is not below `key` and returns it (read into
    /// `buffer`), or `None` if there is none; [`next`](Self::next) goes on after it.
    /// `extract` tells a record's key from its bytes (a timestamp, say), `None` if it has none;
    /// keys must not decrease from one record to the next (records written in time order).
    /// Records with no key, packs, oversized records and damage are passed over.
    ///
    /// Cost, in a ring of `N` blocks: a binary search over the blocks by the key of the first
    /// record that begins in each — `⌈log2 N⌉` steps, each a ring header and the chunks from the
    /// block's start to the end of that record — then the block found read from its start up to
    /// the record sought (at most one block if the keys grow). A bounded log is read from its
    /// start.
    ///
    /// # Errors
    /// A read error; the reader's place is then unknown: seek again.
    pub fn seek_key<K: Ord>(
        &mut self,
        buffer: &mut [u8],
        key: &K,
        mut extract: impl FnMut(&[u8]) -> Option<K>,
    ) -> Result<Option<FlashItem>, F::Error> {
        self.walk
            .seek_key_sync(&mut self.flash, buffer, key, &mut extract)
    }
}

#[cfg(feature = "embedded-storage-async")]
impl<F: embedded_storage_async::nor_flash::ReadNorFlash> super::AsyncWordReader<F> {
    /// Goes to record number `record` and returns it, as
    /// [`WordReader::seek_record`](super::WordReader::seek_record) (the same implementation,
    /// and cost).
    ///
    /// # Errors
    /// A read error; the reader's place is then unknown: seek again.
    pub async fn seek_record(
        &mut self,
        buffer: &mut [u8],
        record: u32,
    ) -> Result<Option<FlashItem>, F::Error> {
        self.walk
            .seek_record_async(&mut self.flash, buffer, record)
            .await
    }

    /// Goes to the newest `count` records and returns the first, as
    /// [`WordReader::seek_newest`](super::WordReader::seek_newest).
    ///
    /// # Errors
    /// A read error; the reader's place is then unknown: seek again.
    pub async fn seek_newest(
        &mut self,
        buffer: &mut [u8],
        count: u32,
    ) -> Result<Option<FlashItem>, F::Error> {
        self.walk
            .seek_newest_async(&mut self.flash, buffer, count)
            .await
    }

    /// Goes to the first record whose key is not below `key` and returns it, as
    /// [`WordReader::seek_key`](super::WordReader::seek_key).
    ///
    /// # Errors
    /// A read error; the reader's place is then unknown: seek again.
    pub async fn seek_key<K: Ord>(
        &mut self,
        buffer: &mut [u8],
        key: &K,
        mut extract: impl FnMut(&[u8]) -> Option<K>,
    ) -> Result<Option<FlashItem>, F::Error> {
        self.walk
            .seek_key_async(&mut self.flash, buffer, key, &mut extract)
            .await
    }
}
