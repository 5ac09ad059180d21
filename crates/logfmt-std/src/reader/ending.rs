//! How reading ends, and what damage comes to: the recovery mode applied to each damage, the
//! end of the log classified (a torn tail, or damage with well-formed chunks after it), and
//! the end of a recycled file's new records told apart from damage.

use logfmt_core::parts::{CorruptionKind, ReadFormat};
use logfmt_core::{BLOCK_SIZE, BlockSource, LogEnd};

use super::{Current, LogReader, Step};
use crate::recovery::{Action, Damage, DamageKind, Ending, ReadError};

impl<S: BlockSource> LogReader<S> {
    /// The recycled-file check on each step: holds back the damage that may be the garbage
    /// where a recycled file's new records end, and drops it if an old record follows at the
    /// next block. Returns the step to act on now, or `None` to read on.
    pub(super) fn recycled_end(&mut self, step: Step) -> Option<Step> {
        if let Step::Damage(damage) = &step {
            let suspect = match damage.kind {
                DamageKind::Corruption(
                    CorruptionKind::ChecksumMismatch | CorruptionKind::BadRecordLength,
                ) => {
                    self.suspects.is_empty()
                        && self.ending.is_none()
                        && self.format != ReadFormat::Legacy
                        && (damage.offset + damage.bytes).is_multiple_of(BLOCK_SIZE as u64)
                }
                // The record in progress the garbage cut off.
                DamageKind::Corruption(CorruptionKind::ErrorInMiddleOfRecord) => {
                    !self.suspects.is_empty()
                }
                _ => false,
            };
            if suspect {
                self.suspects.push(*damage);
                return None;
            }
        }
        let Some(&first) = self.suspects.first() else {
            return Some(step);
        };
        if let Step::Done = step {
            match self.ending {
                Some(Ending::Log(LogEnd::OldRecord { offset, log_number }))
                    if offset == first.offset + first.bytes =>
                {
                    // The end of this use of the file: where its last complete record ends.
                    let offset = self
                        .suspects
                        .iter()
                        .map(|d| d.offset)
                        .min()
                        .unwrap_or(first.offset);
                    self.suspects.clear();
                    self.ending = Some(Ending::Log(LogEnd::OldRecord { offset, log_number }));
                    self.last_clean = Some(offset);
                    return Some(Step::Done);
                }
                // Tailing, nothing more yet: undecided.
                None => return Some(Step::Done),
                Some(_) => {}
            }
        }
        // Damage after all: report it in order, then act on the step.
        let mut suspects = std::mem::take(&mut self.suspects).into_iter();
        let damage = suspects.next().unwrap_or(first);
        self.pending.extend(suspects.map(Step::Damage));
        self.pending.push_back(step);
        Some(Step::Damage(damage))
    }

    /// The log has ended (or, tailing, has nothing more yet).
    pub(super) fn at_end(&mut self) -> Result<Step, ReadError<S::Error>> {
        let Some(end) = self.inner.end() else {
            return Ok(Step::Done);
        };
        self.ending = Some(Ending::Log(end));
        self.current = Current::None;
        let (input_end, torn_at) = match end {
            LogEnd::Clean { offset } => (offset, None),
            LogEnd::Torn { offset, len } => (offset + len, Some(offset)),
            // An ending of a later core: nothing more to read.
            LogEnd::OldRecord { .. } | LogEnd::ReadError { .. } | _ => return Ok(Step::Done),
        };
        // A range reader that saw nothing from its first block on: a tail began before it,
        // and belongs to an earlier range.
        let unseen = if self.end.is_some() { None } else { torn_at };
        let Some(from) = self.last_clean.or(unseen) else {
            return Ok(Step::Done);
        };
        // Only block trailers and ignorable chunks since the last clean point: nothing torn.
        let silent = torn_at.is_none() && !self.written_since_clean;
        let benign = input_end <= from || silent || (self.erased && torn_at.is_none());
        if benign {
            return Ok(Step::Done);
        }
        // A torn write is never followed by written chunks: if some follow, this is damage.
        let kind = match self.inner.chunks_after_end() {
            Some(after) => DamageKind::LostTail {
                chunks: after.count,
                next: after.offset,
            },
            None => DamageKind::TornTail,
        };
        let tail = Damage {
            offset: from,
            bytes: input_end - from,
            kind,
        };
        self.tail = Some(tail);
        let step = self.damage(tail)?;
        // Reading has ended whatever the mode says.
        self.ending = Some(Ending::Log(end));
        Ok(step)
    }

    /// Applies the recovery mode to two damages in file order: the step for the first one
    /// reported, the other's queued behind it (unless the mode stopped at the first).
    pub(super) fn damages(
        &mut self,
        first: Option<Damage>,
        second: Option<Damage>,
    ) -> Result<Step, ReadError<S::Error>> {
        let mut reported = None;
        for damage in [first, second].into_iter().flatten() {
            if self.ending.is_some() {
                break;
            }
            match self.damage(damage)? {
                Step::Continue => {}
                step if reported.is_none() => reported = Some(step),
                step => self.pending.push_back(step),
            }
        }
        Ok(reported.unwrap_or(Step::Continue))
    }

    /// Applies the recovery mode to `damage`.
    pub(super) fn damage(&mut self, damage: Damage) -> Result<Step, ReadError<S::Error>> {
        let owned = self.owned.take() == Some(damage.offset);
        let in_range =
            owned || damage.offset >= self.start && self.end.is_none_or(|end| damage.offset < end);
        if !in_range {
            return Ok(Step::Continue);
        }
        match self.mode.action(damage.kind) {
            Action::Ignore => Ok(Step::Continue),
            Action::Report => Ok(Step::Damage(damage)),
            Action::Stop => {
                self.ending = Some(Ending::Stopped(damage));
                Ok(Step::Damage(damage))
            }
            Action::Fail => {
                self.ending = Some(Ending::Stopped(damage));
                Err(ReadError::Damaged(damage))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::advanced::{Entry, LogReader};
    use crate::recovery::{DamageKind, Ending, RecoveryMode};
    use crate::{LogReaderOptions, LogWriter, LogWriterOptions};

    /// A log of `records`, as the writer lays it out.
    fn log(records: &[&[u8]]) -> Vec<u8> {
        let mut writer = LogWriter::new(Vec::new(), &LogWriterOptions::new());
        for record in records {
            writer.add_record(record).expect("memory");
        }
        writer.close().expect("memory")
    }

    /// Every record read with `mode`, and the reader's tail and ending.
    fn read(log: &[u8], mode: RecoveryMode) -> (usize, Option<DamageKind>, Option<Ending>) {
        let options = LogReaderOptions::new().recovery(mode);
        let mut reader = LogReader::from_slice(log, &options);
        let mut records = 0;
        while let Ok(Some(entry)) = reader.next() {
            if matches!(entry, Entry::Record(_)) {
                records += 1;
            }
        }
        (records, reader.tail().map(|t| t.kind), reader.ending())
    }

    #[test]
    fn a_record_cut_short_is_a_torn_tail() {
        let mut bytes = log(&[b"one", &[7; 100]]);
        bytes.truncate(bytes.len() - 10);
        let (records, tail, ending) = read(&bytes, RecoveryMode::TolerateCorruptedTailRecords);
        assert_eq!((records, tail), (1, Some(DamageKind::TornTail)));
        assert!(matches!(ending, Some(Ending::Log(_))), "{ending:?}");
    }

    #[test]
    fn a_length_past_the_end_with_chunks_after_it_is_damage() {
        let mut bytes = log(&[b"one", b"two", b"three"]);
        // The second chunk's length runs past the end of the file; the third is well-formed.
        bytes[10 + 4] = 0xff;
        bytes[10 + 5] = 0x7f;
        let (records, tail, _) = read(&bytes, RecoveryMode::TolerateCorruptedTailRecords);
        assert_eq!(records, 1);
        assert_eq!(
            tail,
            Some(DamageKind::LostTail {
                chunks: 1,
                next: 20
            })
        );
    }

    #[test]
    fn the_recovery_mode_decides_what_damage_comes_to() {
        let mut bytes = log(&[b"one", b"two", b"three"]);
        bytes[10 + 7] ^= 1; // the second record's payload: its checksum fails
        let (records, _, ending) = read(&bytes, RecoveryMode::TolerateCorruptedTailRecords);
        // LevelDB drops the rest of the block: the third record too.
        assert_eq!(records, 1);
        assert!(matches!(ending, Some(Ending::Log(_))), "{ending:?}");
        let (records, _, ending) = read(&bytes, RecoveryMode::PointInTimeRecovery);
        assert_eq!(records, 1);
        assert!(
            matches!(ending, Some(Ending::Stopped(d)) if d.offset == 10),
            "{ending:?}"
        );
        let options = LogReaderOptions::new().recovery(RecoveryMode::AbsoluteConsistency);
        let mut reader = LogReader::from_slice(&bytes, &options);
        assert!(matches!(reader.next(), Ok(Some(Entry::Record(_)))));
        assert!(
            reader.next().is_err(),
            "absolute consistency fails on damage"
        );
    }
}
