//! Records that hold records: a logfmt [pack](logfmt_core::pack), returned record by
//! record, and a record compressed by RocksDB's WAL compression, decoded — each bounded by the
//! caller's limit, damage when it does not hold together.

use std::ops::Range;

use logfmt_core::pack::{self, Pack, PackError, Unpacker};
use logfmt_core::parts::{CorruptionKind, Oversized};
use logfmt_core::{BlockSource, Record};

use super::{Bounded, LogReader, Place, Step};
use crate::compression::MAX_DECODED;
use crate::recovery::{Damage, DamageKind, ReadError};

/// What [`LogReader::unpack`] took from the pack being read.
pub(super) enum Unpacked {
    /// Its next record, at `data` of `place`.
    Record {
        offset: u64,
        end: u64,
        index: u32,
        place: Place,
        data: Range<usize>,
    },
    /// What the damage that ends it comes to under the recovery mode.
    Step(Step),
}

impl<S: BlockSource> LogReader<S> {
    /// A record compressed by RocksDB's WAL compression, at `range` of `place`: decoded into
    /// the decoded buffer (`true`), or — if it does not decode — damage, or — if it decodes to
    /// more than the limit — oversized, held in `pending` (`false`).
    pub(super) fn decompress(
        &mut self,
        offset: u64,
        end: u64,
        place: Place,
        range: Range<usize>,
        codec: u32,
    ) -> Result<bool, ReadError<S::Error>> {
        let mut decoded = std::mem::take(&mut self.decoded);
        let bytes = match place {
            Place::Block => self.inner.get_ref().block(),
            Place::Buffer => self.assembler.record(),
            Place::Decoded => &[],
        };
        let data = bytes.get(range).unwrap_or_default();
        let limit = self.assembler.room().limit;
        let result = self
            .contexts
            .decode_stream(data, codec, &mut decoded, limit);
        let stored = data.len() as u64;
        self.decoded = decoded;
        match result {
            Ok(true) => Ok(true),
            Ok(false) => {
                // Decoded as far as the limit: longer than that, by one byte at least.
                let len = (limit.min(MAX_DECODED) as u64).saturating_add(1);
                self.pending
                    .push_front(Step::Oversized(Oversized::new(offset, end, len, true)));
                Ok(false)
            }
            Err(()) => {
                let damage = Damage {
                    offset,
                    bytes: stored,
                    kind: DamageKind::Corruption(CorruptionKind::BadCompressedRecord { codec }),
                };
                let step = self.damage(damage)?;
                self.pending.push_front(step);
                Ok(false)
            }
        }
    }

    /// The record just decompressed.
    pub(super) fn decompressed(&self, offset: u64, end: u64) -> Bounded<'_> {
        Bounded::Record(Record::new(offset, end, None, &self.decoded))
    }

    /// A whole pack at `range` of `place`: its records are returned from the next step on (a
    /// pack that does not parse, or whose codec is not read here, is damage, held in
    /// `pending`).
    pub(super) fn open_pack(
        &mut self,
        offset: u64,
        end: u64,
        place: Place,
        range: Range<usize>,
    ) -> Result<(), ReadError<S::Error>> {
        // A decoded pack is decoded into a buffer of its own (a pack is never in one).
        let mut decoded = std::mem::take(&mut self.decoded);
        let bytes = match place {
            Place::Block => self.inner.get_ref().block(),
            Place::Buffer => self.assembler.record(),
            Place::Decoded => &[],
        };
        let data = bytes.get(range.clone()).unwrap_or_default();
        let limit = self.assembler.room().limit;
        let error = match Pack::parse(data) {
            Ok(parsed) if parsed.codec() == pack::ZSTD => {
                let count = parsed.count();
                let declared = parsed.decoded_len().unwrap_or(0);
                if usize::try_from(declared).is_ok_and(|len| len > limit && len <= MAX_DECODED) {
                    // More than the caller's limit (not damage): not decoded, as a record
                    // longer than the limit is not assembled.
                    self.decoded = decoded;
                    self.pending.push_front(Step::Oversized(Oversized::new(
                        offset,
                        end,
                        u64::from(declared),
                        true,
                    )));
                    return Ok(());
                }
                let result = self.contexts.decode(&parsed, &mut decoded, limit);
                let len = decoded.len();
                self.decoded = decoded;
                match result {
                    Ok(()) => {
                        self.unpacking =
                            Some(Unpacker::new(offset, end, Place::Decoded, 0..len, count));
                        return Ok(());
                    }
                    Err(error) => (error, count),
                }
            }
            Ok(parsed) if parsed.codec() == pack::STORED => {
                let body = range.end - parsed.body().len()..range.end;
                self.unpacking = Some(Unpacker::new(offset, end, place, body, parsed.count()));
                return Ok(());
            }
            Ok(parsed) => (PackError::UnknownCodec(parsed.codec()), parsed.count()),
            Err(error) => (error, 0),
        };
        let damage = bad_pack(offset, data.len(), error.0, error.1);
        let step = self.damage(damage)?;
        self.pending.push_front(step);
        Ok(())
    }

    /// Takes the next record of the pack being read, located, or the damage (under the
    /// recovery mode) that ends it; `None` once it is read to its end.
    pub(super) fn unpack(&mut self) -> Result<Option<Unpacked>, ReadError<S::Error>> {
        let Some(unpacking) = self.unpacking.as_mut() else {
            return Ok(None);
        };
        let place = unpacking.place();
        let bytes = match place {
            Place::Block => self.inner.get_ref().block(),
            Place::Buffer => self.assembler.record(),
            Place::Decoded => &self.decoded,
        };
        let (offset, end) = (unpacking.offset(), unpacking.end());
        match unpacking.next(bytes) {
            None => {
                self.unpacking = None;
                Ok(None)
            }
            Some(Ok((index, data))) => {
                self.records += 1;
                Ok(Some(Unpacked::Record {
                    offset,
                    end,
                    index,
                    place,
                    data,
                }))
            }
            Some(Err(corruption)) => {
                self.unpacking = None;
                self.damage(corruption.into())
                    .map(|step| Some(Unpacked::Step(step)))
            }
        }
    }
}

/// The damage of a pack that does not hold together: `bytes` of it dropped, `lost` records.
fn bad_pack(offset: u64, bytes: usize, error: PackError, lost: u32) -> Damage {
    Damage {
        offset,
        bytes: bytes as u64,
        kind: DamageKind::Corruption(CorruptionKind::BadPack { error, lost }),
    }
}

#[cfg(test)]
mod tests {
    use logfmt_core::parts::CorruptionKind;

    use super::bad_pack;
    use crate::advanced::{Entry, LogReader, PackLimit};
    use crate::recovery::{DamageKind, RecoveryMode};
    use crate::{LogReaderOptions, LogWriter, LogWriterOptions};

    /// A log of one pack of `n` small records.
    fn packed(n: u8) -> Vec<u8> {
        let options = LogWriterOptions::new().pack(Some(PackLimit::bytes(4096)));
        let mut writer = LogWriter::new(Vec::new(), &options);
        for i in 0..n {
            writer.add_record(&[i; 5]).expect("memory");
        }
        writer.close().expect("memory")
    }

    #[test]
    fn a_packs_records_come_one_by_one_with_their_index() {
        let log = packed(4);
        let mut reader = LogReader::from_slice(&log, &LogReaderOptions::new());
        let mut read = Vec::new();
        while let Ok(Some(Entry::Record(record))) = reader.next() {
            read.push((record.index, record.data.to_vec()));
        }
        let expected: Vec<_> = (0..4u8).map(|i| (Some(u32::from(i)), vec![i; 5])).collect();
        assert_eq!(read, expected);
        assert_eq!(reader.records(), 4);
    }

    #[test]
    fn a_pack_that_does_not_hold_together_is_damage_with_its_records() {
        let damage = bad_pack(7, 30, logfmt_core::pack::PackError::Incomplete, 3);
        assert_eq!((damage.offset, damage.bytes), (7, 30));
        assert!(matches!(
            damage.kind,
            DamageKind::Corruption(CorruptionKind::BadPack { lost: 3, .. })
        ));
        // A pack whose count claims more records than it holds, its checksum made to match.
        let log = packed(4);
        let mut chunk = log[..log.len()].to_vec();
        let len = usize::from(u16::from_le_bytes([chunk[4], chunk[5]]));
        // The pack's header: codec, then its record count (a varint): claim 100.
        assert_eq!(chunk[8], 4, "the count byte");
        chunk[8] = 100;
        let crc = logfmt_core::parts::checksum::crc32c(&chunk[6..7 + len]);
        chunk[..4].copy_from_slice(&logfmt_core::parts::checksum::mask(crc).to_le_bytes());
        let options = LogReaderOptions::new().recovery(RecoveryMode::SkipAnyCorruptedRecords);
        let mut reader = LogReader::from_slice(&chunk, &options);
        let mut damaged = false;
        while let Ok(Some(entry)) = reader.next() {
            if let Entry::Damage(d) = entry {
                damaged |= matches!(
                    d.kind,
                    DamageKind::Corruption(CorruptionKind::BadPack { .. })
                );
            }
        }
        assert!(damaged, "a bad pack is reported");
    }
}
