//! Packing records as they are written: when a pack ends ([`PackLimit`], [`Take`]) and a
//! writer that packs ([`PackWriter`]).

use core::borrow::BorrowMut;

use super::{PackBuffer, STORED_HEADER, entry_len};
use crate::error::WriteError;
use crate::format::BLOCK_SIZE;
use crate::writer::{Sink, Writer, Written};

/// When a pack ends: before a record that would take it past `bytes` bytes (the whole pack
/// record: header, lengths and records) or past `records` records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct PackLimit {
    /// The most bytes a pack's payload takes.
    pub bytes: usize,
    /// The most records a pack holds.
    pub records: u32,
}

impl PackLimit {
    /// Packs of at most `bytes` bytes, with no limit on their records.
    #[must_use]
    pub const fn bytes(bytes: usize) -> Self {
        Self {
            bytes,
            records: u32::MAX,
        }
    }

    /// The same, with at most `records` records a pack.
    #[must_use]
    pub const fn records(mut self, records: u32) -> Self {
        self.records = records;
        self
    }
}

impl Default for PackLimit {
    /// Packs of up to 4 KiB: damage to a pack loses at most that much, and a reader's buffer of
    /// that size holds any pack.
    fn default() -> Self {
        Self::bytes(4096)
    }
}

/// What to do with a record of a given length, given the pack in progress
/// ([`PackBuffer::take`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Take {
    /// Add it to the pack.
    Add,
    /// Write the pack first (it is full), then add it to a new one.
    EndFirst,
    /// Too large for a pack: write the pack first (if any), then the record, plain.
    Plain,
}

impl<const N: usize> PackBuffer<N> {
    /// What to do with a record of `len` bytes under `limit` (and this buffer's capacity).
    ///
    /// ```
    /// use logfmt_core::pack::PackBuffer;
    /// use logfmt_core::pack::{PackLimit, Take};
    ///
    /// let limit = PackLimit::bytes(64).records(2);
    /// let mut pack = PackBuffer::<256>::new();
    /// assert_eq!(pack.take(10, limit), Take::Add);
    /// pack.push(&[0; 10])?;
    /// assert_eq!(pack.take(100, limit), Take::Plain); // never fits in 64 bytes
    /// pack.push(&[0; 10])?;
    /// assert_eq!(pack.take(10, limit), Take::EndFirst); // two records already
    /// # Ok::<(), logfmt_core::pack::PackFull>(())
    /// ```
    #[must_use]
    pub fn take(&self, len: usize, limit: PackLimit) -> Take {
        let limit = PackLimit {
            bytes: limit.bytes.min(N),
            ..limit
        };
        take(self.len(), self.count(), len, limit)
    }
}

/// What to do with a record of `len` bytes under `limit`, given a pack in progress of
/// `pack_len` bytes (its header included) holding `count` records: the one decision every
/// packing writer makes (a writer with its own buffer calls it directly).
///
/// ```
/// use logfmt_core::pack::{take, PackLimit, Take};
///
/// let limit = PackLimit::bytes(100);
/// assert_eq!(take(5, 0, 90, limit), Take::Add); // 5 + 1 + 90 = 96
/// assert_eq!(take(96, 1, 10, limit), Take::EndFirst);
/// assert_eq!(take(96, 1, 95, limit), Take::Plain); // 5 + 1 + 95 > 100
/// ```
#[must_use]
pub fn take(pack_len: usize, count: u32, len: usize, limit: PackLimit) -> Take {
    if STORED_HEADER.saturating_add(entry_len(len)) > limit.bytes {
        return Take::Plain;
    }
    let room = pack_len.saturating_add(entry_len(len)) <= limit.bytes;
    if count == 0 || (room && count < limit.records) {
        Take::Add
    } else {
        Take::EndFirst
    }
}

/// A [`Writer`] that packs small records: records are gathered in a pack of up to `N` bytes (a
/// fixed-capacity buffer, no allocation) and written as one pack record when the pack is full,
/// on [`end_pack`](Self::end_pack) and on [`flush`](Self::flush).
///
/// ```
/// use logfmt_core::pack::{PackLimit, PackWriter};
/// use logfmt_core::{FnSink, parts::Item, Reader, Writer, BLOCK_SIZE};
///
/// let mut log = Vec::new();
/// let mut block = [0u8; BLOCK_SIZE];
/// let sink = FnSink(|b: &[u8]| { log.extend_from_slice(b); Ok::<_, core::convert::Infallible>(()) });
/// let mut writer = PackWriter::<_, _, 4096>::new(Writer::new(sink, &mut block), PackLimit::default());
/// for i in 0..100u32 {
///     writer.add_record(&i.to_le_bytes().repeat(4))?; // 16-byte samples
/// }
/// writer.flush()?;
/// drop(writer);
/// assert_eq!(log.len(), 7 + 5 + 100 * 17); // one pack: 17 bytes a sample
///
/// let mut scratch = [0u8; 4096];
/// let mut reader = Reader::from_slice(&log, &mut scratch);
/// let mut n = 0u32;
/// while let Some(Item::Record(r)) = reader.next()? {
///     assert_eq!((r.index, &r.data[..4]), (Some(n), &n.to_le_bytes()[..]));
///     n += 1;
/// }
/// assert_eq!(n, 100);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct PackWriter<S, B, const N: usize> {
    writer: Writer<S, B>,
    pack: PackBuffer<N>,
    limit: PackLimit,
}

impl<S: Sink, B: BorrowMut<[u8; BLOCK_SIZE]>, const N: usize> PackWriter<S, B, N> {
    /// Packs the records added to `writer`, in packs within `limit` (and `N` bytes).
    pub fn new(writer: Writer<S, B>, limit: PackLimit) -> Self {
        Self {
            writer,
            pack: PackBuffer::new(),
            limit,
        }
    }

    /// Adds a record: to the pack in progress, or plain if it is too large for one. It is in
    /// the log (at the writer's sink) once its pack is written.
    ///
    /// # Errors
    /// The writer's errors, when a pack or a plain record is written
    /// ([`WriteError::PackInRecyclableLog`] in a recyclable log).
    #[inline]
    pub fn add_record(&mut self, data: &[u8]) -> Result<(), WriteError<S::Error>> {
        // The common case, a small record with room for it, decided and added in one step.
        if self
            .pack
            .push_short(data, self.limit.bytes.min(N), self.limit.records)
        {
            return Ok(());
        }
        self.add_record_slow(data)
    }

    /// [`add_record`](Self::add_record) past its fast path: [`take`]'s decision in full.
    fn add_record_slow(&mut self, data: &[u8]) -> Result<(), WriteError<S::Error>> {
        match self.pack.take(data.len(), self.limit) {
            Take::Add => {}
            Take::EndFirst => {
                self.end_pack()?;
            }
            Take::Plain => {
                self.end_pack()?;
                self.writer.add_record(data)?;
                return Ok(());
            }
        }
        // `take` checked it fits (an empty pack takes any record it does not call plain).
        if self.pack.push(data).is_err() {
            self.end_pack()?;
            self.writer.add_record(data)?;
        }
        Ok(())
    }

    /// Writes the pack in progress, if any: as a pack record, or as a plain record if it holds
    /// one. Where it was written.
    ///
    /// # Errors
    /// The writer's errors (the pack is kept then).
    pub fn end_pack(&mut self) -> Result<Option<Written>, WriteError<S::Error>> {
        let written = match (self.pack.count(), self.pack.single()) {
            (0, _) => return Ok(None),
            (1, Some(record)) => self.writer.add_record(record)?,
            _ => self.writer.add_pack(self.pack.as_bytes())?,
        };
        self.pack.clear();
        Ok(Some(written))
    }

    /// Ends the pack in progress and flushes the writer: every record added is then at the
    /// sink.
    ///
    /// # Errors
    /// The writer's errors.
    pub fn flush(&mut self) -> Result<(), WriteError<S::Error>> {
        self.end_pack()?;
        self.writer.flush()
    }

    /// Records in the pack in progress, not yet written.
    #[must_use]
    pub fn pending(&self) -> u32 {
        self.pack.count()
    }

    /// The writer.
    #[must_use]
    pub fn writer(&self) -> &Writer<S, B> {
        &self.writer
    }

    /// Ends the pack in progress and gives back the writer (not flushed).
    ///
    /// # Errors
    /// The writer's errors (a sink error poisons the writer: nothing more can be written).
    pub fn into_writer(mut self) -> Result<Writer<S, B>, WriteError<S::Error>> {
        self.end_pack()?;
        Ok(self.writer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FnSink, Item, Reader};
    use std::vec::Vec;

    fn packed(records: &[Vec<u8>], limit: PackLimit) -> Vec<u8> {
        let mut log = Vec::new();
        let mut block = std::boxed::Box::new([0u8; BLOCK_SIZE]);
        let sink = FnSink(|b: &[u8]| {
            log.extend_from_slice(b);
            Ok::<_, core::convert::Infallible>(())
        });
        let mut writer = PackWriter::<_, _, 512>::new(Writer::new(sink, &mut *block), limit);
        for record in records {
            writer.add_record(record).unwrap();
        }
        writer.flush().unwrap();
        log
    }

    fn read(log: &[u8]) -> Vec<(Option<u32>, Vec<u8>)> {
        let mut scratch = std::vec![0u8; 1 << 17];
        let mut reader = Reader::from_slice(log, &mut scratch);
        let mut out = Vec::new();
        while let Some(item) = reader.next().unwrap_or_else(|e| match e {}) {
            let Item::Record(r) = item else {
                panic!("{item:?}")
            };
            out.push((r.index, r.data.to_vec()));
        }
        out
    }

    /// Record lengths: mostly small, some across blocks (under Miri, small only: it is slow).
    fn lengths() -> impl proptest::strategy::Strategy<Value = Vec<usize>> {
        use proptest::strategy::Strategy;
        if cfg!(miri) {
            proptest::collection::vec(0usize..100, 0..20).boxed()
        } else {
            proptest::collection::vec(
                proptest::prop_oneof![0usize..40, 0usize..600, 30_000usize..40_000],
                0..80,
            )
            .boxed()
        }
    }

    proptest::proptest! {
        /// Any records, any limits: the same records back, in order; packs never pass the
        /// limits; a record that fits no pack, and a pack of one, are plain records.
        #[test]
        fn the_same_records_come_back(lens in lengths(),
            bytes in 0usize..700,
            records in 1u32..20,
        ) {
            let records_in: Vec<Vec<u8>> = lens
                .iter()
                .enumerate()
                .map(|(i, &n)| (0..n).map(|j| (i + j * 3) as u8).collect())
                .collect();
            let limit = PackLimit::bytes(bytes).records(records);
            let log = packed(&records_in, limit);
            let back = read(&log);
            let data: Vec<&Vec<u8>> = back.iter().map(|(_, d)| d).collect();
            proptest::prop_assert_eq!(data, records_in.iter().collect::<Vec<_>>());
            // Indices: 0, 1, ... within a pack; a pack holds 2..=records of them.
            let mut run = 0u32;
            for (index, _) in &back {
                match index {
                    Some(0) => run = 1,
                    Some(i) => {
                        proptest::prop_assert_eq!(*i, run);
                        run += 1;
                    }
                    None => run = 0,
                }
                proptest::prop_assert!(run <= records);
            }
        }
    }

    #[test]
    fn a_flush_ends_the_pack() {
        let mut log = Vec::new();
        let mut block = std::boxed::Box::new([0u8; BLOCK_SIZE]);
        let sink = FnSink(|b: &[u8]| {
            log.extend_from_slice(b);
            Ok::<_, core::convert::Infallible>(())
        });
        let mut writer =
            PackWriter::<_, _, 512>::new(Writer::new(sink, &mut *block), PackLimit::default());
        writer.add_record(b"a").unwrap();
        writer.add_record(b"b").unwrap();
        assert_eq!(writer.pending(), 2);
        writer.flush().unwrap();
        assert_eq!(writer.pending(), 0);
        writer.add_record(b"c").unwrap();
        writer.flush().unwrap();
        // A pack of two, then "c" alone as a plain FULL record.
        assert_eq!(log.len(), (7 + 5 + 2 * 2) + (7 + 1));
        assert_eq!(log[6], 0x51);
        assert_eq!(log[16 + 6], 1);
    }
}
