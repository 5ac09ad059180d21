//! Reading the log event by event: each chunk, fragment, damage or skipped region the core's
//! [`FragmentReader`](logfmt_core::parts::FragmentReader) reports becomes a [`Step`] of the
//! [`LogReader`] — a record in one chunk, one assembled, damage under the recovery mode —
//! with the range's bounds and the next range's resynchronisation followed.

use std::ops::Range;

use logfmt_core::parts::assembler::Assembly;
use logfmt_core::parts::{
    Aborted, Corruption, CorruptionKind, Event, FragmentKind, Oversized, Skip, SkipKind,
};
use logfmt_core::{BLOCK_SIZE, BlockSource, Record};

use super::{Current, Entry, Form, LogReader, Step};
use crate::recovery::{Damage, DamageKind, Ending, ReadError};

impl<S: BlockSource> LogReader<S> {
    pub(super) fn single(&mut self, offset: u64, end: u64, payload: Range<usize>) -> Entry<'_> {
        let data = self
            .inner
            .get_ref()
            .block()
            .get(payload)
            .unwrap_or_default();
        Entry::Record(Record::new(offset, end, None, data))
    }

    /// The hot path of [`next_bounded`](Self::next_bounded): a whole `FULL` record next in a
    /// clean legacy log ([`FragmentReader::next_full`]), with nothing held back, no gap before
    /// it, within the range — returned as [`step`](Self::step) and
    /// [`fragment`](Self::fragment) would return it, leaving the state they would leave.
    #[inline]
    pub(super) fn next_full(&mut self) -> Option<(Range<usize>, u64, u64)> {
        let at = self.inner.position();
        if self.unpacking.is_some()
            || self.held.is_some()
            || self.ending.is_some()
            || self.compression.is_some()
            || self.gap_end.is_some()
            || !self.pending.is_empty()
            || !self.suspects.is_empty()
            || at < self.start
            || self.end.is_some_and(|end| at >= end)
        {
            return None;
        }
        let (payload, offset, end) = self.inner.next_full()?;
        // A FULL chunk ends the next range's resynchronisation, as the general path notes.
        next_range_skips(self.end, &mut self.next_leading, offset, Seen::Other);
        self.current = Current::None;
        self.clean_at(end);
        self.records += 1;
        self.settled = Some(end);
        Some((payload, offset, end))
    }

    /// Reads one event and acts on it.
    pub(super) fn step(&mut self) -> Result<Step, ReadError<S::Error>> {
        if self.ending.is_some() {
            return Ok(Step::Done);
        }
        let event = match self.inner.next() {
            Ok(Some(event)) => event,
            Ok(None) => return self.at_end(),
            Err(e) => {
                self.ending = Some(Ending::Failed {
                    offset: self.position(),
                });
                return Err(ReadError::Io(e));
            }
        };
        let step = match event {
            Event::Fragment(fragment) => {
                let seen = match fragment.kind {
                    FragmentKind::Middle => Seen::Middle,
                    FragmentKind::Last => Seen::Last,
                    FragmentKind::First | FragmentKind::Full => Seen::Other,
                };
                next_range_skips(
                    self.end,
                    &mut self.next_leading,
                    fragment.chunk_offset,
                    seen,
                );
                let form = match (fragment.pack, fragment.compressed) {
                    (true, _) => Form::Pack,
                    (false, Some(codec)) => Form::Compressed(codec),
                    (false, None) => Form::Plain,
                };
                let (kind, record_offset, chunk_offset, end) = (
                    fragment.kind,
                    fragment.record_offset,
                    fragment.chunk_offset,
                    fragment.end,
                );
                self.written_since_clean = true;
                if kind.starts_record() {
                    self.current = if record_offset < self.start {
                        self.assembler.abort();
                        Current::Ignored
                    } else {
                        Current::Kept
                    };
                }
                let assembly = (self.current == Current::Kept)
                    .then(|| self.assembler.push(kind, fragment.data));
                let len = fragment.data.len();
                self.fragment(kind, form, record_offset, chunk_offset, end, len, assembly)?
            }
            Event::Aborted(aborted) => self.aborted(aborted)?,
            Event::Corruption(corruption) => self.corrupted(corruption)?,
            Event::Skipped(skip) => match self.skipped(skip) {
                Some(step) => step,
                None => return Ok(Step::Continue),
            },
            // An event of a later core: nothing to do here.
            _ => return Ok(Step::Continue),
        };
        Ok(self.settle(step))
    }

    /// A record cut short (by a new record, or damage): abandoned, with the zero header that
    /// cut it, if any, and the drop the core reports.
    fn aborted(&mut self, aborted: Aborted) -> Result<Step, ReadError<S::Error>> {
        self.current = Current::None;
        self.assembler.abort();
        // A zero header that cut the record: its bytes after the record's.
        let gap = self.gap_end.zip(self.settled).map(|(end, from)| Damage {
            offset: from,
            bytes: end.saturating_sub(from),
            kind: DamageKind::Skipped,
        });
        let gap = gap.filter(|gap| gap.bytes > 0 && !self.erased);
        let report = aborted.report.map(Damage::from);
        if report.is_some() {
            self.clean_at(self.position());
        }
        self.damages(report, gap)
    }

    /// Damage the core reports, after the gap before it, if any.
    fn corrupted(&mut self, corruption: Corruption) -> Result<Step, ReadError<S::Error>> {
        let seen = match corruption.kind {
            CorruptionKind::MiddleWithoutStart => Seen::Middle,
            CorruptionKind::LastWithoutStart => Seen::Last,
            _ => Seen::Other,
        };
        if next_range_skips(self.end, &mut self.next_leading, corruption.offset, seen) {
            self.owned = Some(corruption.offset);
        }
        let gap = self.gap(corruption.offset);
        self.clean_at(self.position());
        self.damages(gap, Some(corruption.into()))
    }

    /// Bytes the core skipped: the step to settle (a range reader's resynchronisation), or
    /// `None` for what is passed over without a trace (trailers, padding, a zero header's
    /// hidden bytes, noted as a gap for what comes next).
    fn skipped(&mut self, skip: Skip) -> Option<Step> {
        // Chunks that end the next range's resynchronisation as they end LevelDB's: a zero
        // header (a bad chunk there) and chunks of other types.
        if matches!(
            skip.kind,
            SkipKind::ZeroHeader
                | SkipKind::Compression(_)
                | SkipKind::Ignorable(_)
                | SkipKind::TimestampSizes { .. }
                | SkipKind::PredecessorWal(_)
        ) {
            next_range_skips(self.end, &mut self.next_leading, skip.offset, Seen::Other);
        }
        match skip.kind {
            // What LevelDB skips from an initial offset (a range reader's first block): a
            // record's continuation, read, not lost. Its last chunk ends where a record ends.
            SkipKind::Resync(FragmentKind::Last) => {
                self.clean_at(skip.end());
                Some(Step::Continue)
            }
            SkipKind::Resync(_) => {
                self.written_since_clean = true;
                Some(Step::Continue)
            }
            // Not damage: block trailers, ignorable chunks, a flash image's padding, writes
            // torn by a power cut (proved by the writer's resume marker), a ring's block
            // headers and RocksDB's compression record and other metadata records.
            SkipKind::Compression(codec) => {
                self.compression = Some(codec);
                None
            }
            SkipKind::Trailer
            | SkipKind::Ignorable(_)
            | SkipKind::Padding
            | SkipKind::Torn
            | SkipKind::TimestampSizes { .. }
            | SkipKind::PredecessorWal(_)
            | SkipKind::RingHeader => None,
            // A zero header: bytes hidden without a report.
            _ => {
                self.gap_end = Some(skip.end());
                self.written_since_clean = true;
                None
            }
        }
    }

    /// After an event: where reading has settled; past the range's end, outside a record of
    /// the range, with no tail that could start in the range, the range is done.
    fn settle(&mut self, step: Step) -> Step {
        self.settled = Some(self.position());
        self.gap_end = None;
        if matches!(step, Step::Continue)
            && let Some(end) = self.end
            && self.current != Current::Kept
            && self.position() >= end
            && self.last_clean.is_none_or(|clean| clean >= end)
        {
            self.ending = Some(Ending::RangeEnd { offset: end });
            return Step::Done;
        }
        step
    }

    /// A complete record or a reported drop ends at `offset`.
    pub(super) fn clean_at(&mut self, offset: u64) {
        self.last_clean = Some(offset);
        self.written_since_clean = false;
    }

    /// Acts on a fragment (whose data, for a kept record, is already in the buffer).
    #[expect(
        clippy::too_many_arguments,
        reason = "one fragment's facts, taken apart"
    )]
    pub(super) fn fragment(
        &mut self,
        kind: FragmentKind,
        form: Form,
        record_offset: u64,
        chunk_offset: u64,
        end: u64,
        len: usize,
        assembly: Option<Assembly>,
    ) -> Result<Step, ReadError<S::Error>> {
        let mut before = None;
        if kind.starts_record() {
            // A gap before the record belongs to the range it starts in.
            if let Some(gap) = self.gap(chunk_offset) {
                let step = self.damage(gap)?;
                if self.ending.is_some() {
                    // Stopped before this record.
                    self.current = Current::None;
                    return Ok(step);
                }
                if matches!(step, Step::Damage(_)) {
                    before = Some(step);
                }
            }
            if let Some(range_end) = self.end
                && record_offset >= range_end
            {
                self.current = Current::None;
                self.ending = Some(Ending::RangeEnd { offset: range_end });
                return Ok(before.unwrap_or(Step::Done));
            }
        }
        if !kind.ends_record() {
            return Ok(before.unwrap_or(Step::Continue));
        }
        self.clean_at(end);
        self.current = Current::None;
        let record = match assembly {
            // A chunk never crosses a block, and blocks start at multiples of BLOCK_SIZE: the
            // payload's place in the current block follows from its end.
            Some(Assembly::Whole) => {
                let payload_start = ((end - len as u64) % BLOCK_SIZE as u64) as usize;
                Step::Single {
                    offset: record_offset,
                    end,
                    payload: payload_start..payload_start + len,
                    form,
                }
            }
            Some(Assembly::Complete) => Step::Assembled {
                offset: record_offset,
                end,
                form,
            },
            Some(Assembly::Overflowed { len }) => {
                Step::Oversized(Oversized::new(record_offset, end, len, form != Form::Plain))
            }
            // Not kept (it starts before the range).
            Some(Assembly::Pending) | None => return Ok(before.unwrap_or(Step::Continue)),
        };
        // A pack's records are counted as they are returned.
        if form != Form::Pack {
            self.records += 1;
        }
        Ok(match (before, record) {
            (None, record) => record,
            (
                Some(damage),
                Step::Single {
                    offset,
                    end,
                    payload,
                    form,
                },
            ) => {
                self.held = Some((offset, end, payload, form));
                damage
            }
            // A fragmented record ends in a later chunk than the one the gap is before.
            (Some(damage), _) => damage,
        })
    }

    /// Bytes skipped as damage (a zero header) between the last event and a record starting
    /// at `chunk_offset`: from the last event to the record, as a gap.
    pub(super) fn gap(&self, chunk_offset: u64) -> Option<Damage> {
        let from = self.settled?;
        if chunk_offset <= from || self.erased || self.gap_end.is_none() {
            return None;
        }
        Some(Damage {
            offset: from,
            bytes: chunk_offset - from,
            kind: DamageKind::Skipped,
        })
    }
}

/// Follows, past a range's `end`, what the next range's reader skips at its start (see
/// `LogReader::next_leading`, which `leading` is): whether the chunk at `offset`, of the kind
/// `seen`, is one it skips.
fn next_range_skips(end: Option<u64>, leading: &mut bool, offset: u64, seen: Seen) -> bool {
    let Some(end) = end else {
        return false;
    };
    if !*leading || offset < end - end % BLOCK_SIZE as u64 {
        return false;
    }
    match seen {
        Seen::Middle => true,
        Seen::Last => {
            *leading = false;
            true
        }
        Seen::Other => {
            *leading = false;
            false
        }
    }
}

/// A chunk as the next range's resynchronisation sees it ([`next_range_skips`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Seen {
    Middle,
    Last,
    /// Any other chunk: it ends the resynchronisation.
    Other,
}

#[cfg(test)]
mod tests {
    use super::{Seen, next_range_skips};
    use crate::advanced::{Entry, LogReader};
    use crate::recovery::{DamageKind, RecoveryMode};
    use crate::{LogReaderOptions, LogWriter, LogWriterOptions};

    #[test]
    fn the_next_range_skips_middles_and_one_last_in_its_first_block() {
        let end = Some(32_768 + 100);
        let mut leading = true;
        // Before the next range's first block: not its business.
        assert!(!next_range_skips(end, &mut leading, 100, Seen::Middle));
        assert!(next_range_skips(end, &mut leading, 32_768, Seen::Middle));
        assert!(next_range_skips(end, &mut leading, 32_800, Seen::Last));
        // Its resynchronisation is over: nothing more is skipped.
        assert!(!leading);
        assert!(!next_range_skips(end, &mut leading, 32_900, Seen::Middle));
        // Without a range, nothing is skipped.
        assert!(!next_range_skips(None, &mut true, 32_768, Seen::Middle));
    }

    #[test]
    fn a_range_returns_the_records_that_start_in_it() {
        let mut writer = LogWriter::new(Vec::new(), &LogWriterOptions::new());
        for i in 0..10u8 {
            writer.add_record(&[i; 10]).expect("memory");
        }
        let log = writer.close().expect("memory");
        // Chunks of 17 bytes: records 2, 3 and 4 start in 34..85.
        let options = LogReaderOptions::new().range(34..85);
        let mut reader = LogReader::from_slice(&log, &options);
        let mut firsts = Vec::new();
        while let Ok(Some(Entry::Record(record))) = reader.next() {
            firsts.push(record.data[0]);
        }
        assert_eq!(firsts, [2, 3, 4]);
    }

    #[test]
    fn a_zero_header_mid_log_is_reported_as_skipped_bytes() {
        let mut writer = LogWriter::new(Vec::new(), &LogWriterOptions::new());
        for record in [&b"one"[..], b"two", &[3; 40_000], b"four"] {
            writer.add_record(record).expect("memory");
        }
        let mut log = writer.close().expect("memory");
        // The second chunk's header zeroed: LevelDB skips the rest of the first block
        // silently; the second block is read.
        log[10..17].fill(0);
        let options = LogReaderOptions::new().recovery(RecoveryMode::SkipAnyCorruptedRecords);
        let mut reader = LogReader::from_slice(&log, &options);
        let mut kinds = Vec::new();
        while let Ok(Some(entry)) = reader.next() {
            kinds.push(match entry {
                Entry::Damage(damage) => Some(damage.kind),
                _ => None,
            });
        }
        assert!(kinds.contains(&Some(DamageKind::Skipped)), "{kinds:?}");
        // "one", and "four" after the skipped bytes.
        assert_eq!(kinds.iter().filter(|k| k.is_none()).count(), 2, "{kinds:?}");
    }
}
