//! Reading a log as whole records with a recovery mode applied, for `cat`, `verify` and
//! `salvage`.

use std::io;

use logfmt_std::{
    Damage,
    advanced::{BlockSource, Bounded, Corruption, Ending, LogReader, Oversized, ReadError},
};

use crate::progress::Progress;

/// What [`scan`] found.
#[derive(Debug)]
pub(crate) enum Found<'a> {
    /// A complete record.
    Record {
        /// File offset of its first chunk (for a record from a pack, the pack's).
        offset: u64,
        /// For a record from a pack, its index in the pack.
        index: Option<u32>,
        /// Its payload.
        data: &'a [u8],
    },
    /// A complete record assembled from more bytes than the limit: not held in memory.
    Oversized(Oversized),
    /// Damage the recovery mode reports (not the damage absolute consistency fails on: see
    /// [`Outcome::failed_on`]).
    Damage(Damage),
    /// Reading failed: the log ends here. LevelDB reports this as a drop of one block, which
    /// `corruption` is (std decides it: [`Ending::read_error`]).
    ReadError {
        /// The error.
        error: io::Error,
        /// The drop LevelDB reports for it.
        corruption: Option<Corruption>,
    },
}

/// How a [`scan`] ended.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Outcome {
    /// How the reader stopped.
    pub(crate) ending: Option<Ending>,
    /// The log's torn or unwritten tail, whatever the mode reports.
    pub(crate) tail: Option<Damage>,
    /// The damage absolute consistency failed on.
    pub(crate) failed_on: Option<Damage>,
}

/// No limit: every record is held in memory whole.
pub(crate) const UNLIMITED: usize = usize::MAX;

/// The limit of the commands that only count records (`verify`, `stats`): records and packs up
/// to 16 MiB are held (a pack is read record by record only once it is held and decoded);
/// larger ones are counted without being held, a pack as one record.
pub(crate) const COUNTING: usize = 16 << 20;

/// Reads the whole log (or range), calling `visit` with each record and report in order. A
/// record is only handed over once it is complete; one assembled from more than `limit`
/// bytes is handed over as [`Found::Oversized`], without its data.
pub(crate) fn scan<S, E>(
    reader: &mut LogReader<S>,
    progress: &Progress,
    limit: usize,
    mut visit: impl FnMut(Found<'_>) -> Result<(), E>,
) -> Result<Outcome, E>
where
    S: BlockSource<Error = io::Error>,
{
    let mut failed_on = None;
    loop {
        progress.set(reader.position());
        match reader.next_bounded(limit) {
            Ok(Some(Bounded::Record(record))) => visit(Found::Record {
                offset: record.offset,
                index: record.index,
                data: record.data,
            })?,
            Ok(Some(Bounded::Oversized(record))) => visit(Found::Oversized(record))?,
            Ok(Some(Bounded::Damage(damage))) => visit(Found::Damage(damage))?,
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(ReadError::Damaged(damage)) => {
                failed_on = Some(damage);
                break;
            }
            Err(ReadError::Io(error)) => {
                let corruption = reader.ending().and_then(Ending::read_error);
                visit(Found::ReadError { error, corruption })?;
                break;
            }
            Err(_) => break,
        }
    }
    Ok(Outcome {
        ending: reader.ending(),
        tail: reader.tail(),
        failed_on,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use logfmt_core::Writer;
    use logfmt_std::{
        LogReaderOptions, RecoveryMode,
        advanced::{
            BLOCK_SIZE, CorruptionKind, Item, ReadOptions, Reader, SliceSource, StdSink, StdSource,
        },
    };
    use std::io::Read;

    #[derive(Debug, PartialEq, Eq)]
    enum Seen {
        Record(u64, Vec<u8>),
        Drop(Damage),
    }

    fn log_of(lens: &[usize]) -> Vec<u8> {
        let mut writer = Writer::new(StdSink::new(Vec::new()), Box::new([0u8; BLOCK_SIZE]));
        for (i, &len) in lens.iter().enumerate() {
            writer
                .add_record(&vec![i as u8; len])
                .expect("writing to memory");
        }
        writer.flush().expect("writing to memory");
        writer.into_parts().0.into_inner()
    }

    fn with_reader(log: &[u8], offset: u64) -> Vec<Seen> {
        let mut scratch = vec![0u8; 1 << 20];
        let options = ReadOptions::new().initial_offset(offset);
        let mut reader = Reader::with_options(SliceSource::new(log), &mut scratch, &options);
        let mut seen = Vec::new();
        while let Ok(Some(item)) = reader.next() {
            match item {
                Item::Record(r) => seen.push(Seen::Record(r.offset, r.data.to_vec())),
                Item::Corruption(c) => seen.push(Seen::Drop(c.into())),
                Item::Oversized(o) => panic!("{o:?}"),
                Item::Coded(pack) => panic!("{pack:?}"),
                other => panic!("{other:?}"),
            }
        }
        seen
    }

    fn with_scan<R: Read>(log: R, options: &LogReaderOptions) -> io::Result<Vec<Seen>> {
        let mut reader = LogReader::new(StdSource::new(log), options);
        let mut seen = Vec::new();
        scan(&mut reader, &Progress::none(), UNLIMITED, |found| {
            match found {
                Found::Record { offset, data, .. } => {
                    seen.push(Seen::Record(offset, data.to_vec()))
                }
                Found::Damage(d) => seen.push(Seen::Drop(d)),
                Found::ReadError { error, .. } => return Err(error),
                Found::Oversized(o) => panic!("{o:?}"),
            }
            Ok(())
        })?;
        Ok(seen)
    }

    #[test]
    fn scan_matches_the_record_reader_on_damaged_logs() -> io::Result<()> {
        let log = log_of(&[10, 40_000, 0, 32_758, 5, 70_000, 3]);
        for damage in [
            None,
            Some(3),
            Some(20),
            Some(33_000),
            Some(40_030),
            Some(80_000),
            Some(120_000),
        ] {
            let mut log = log.clone();
            if let Some(at) = damage {
                log[at] ^= 0x40;
            }
            for offset in [0, 1, 32_768, 40_060] {
                let expected = with_reader(&log, offset);
                let options =
                    LogReaderOptions::new().read(ReadOptions::new().initial_offset(offset));
                assert_eq!(
                    with_scan(&log[..], &options)?,
                    expected,
                    "{damage:?} {offset}"
                );
            }
        }
        Ok(())
    }

    #[test]
    fn absolute_consistency_ends_with_the_damage() -> io::Result<()> {
        let log = log_of(&[10, 40_000]);
        let options = LogReaderOptions::new().recovery(RecoveryMode::AbsoluteConsistency);
        let mut reader = LogReader::new(StdSource::new(&log[..30_000]), &options);
        let mut seen = 0;
        let outcome = scan(&mut reader, &Progress::none(), UNLIMITED, |_| {
            seen += 1;
            Ok::<(), ()>(())
        });
        let outcome = outcome.map_err(|()| io::Error::other("visit"))?;
        assert_eq!(seen, 1);
        assert_eq!(outcome.failed_on.map(|d| d.offset), Some(17));
        assert_eq!(outcome.tail, outcome.failed_on);
        Ok(())
    }

    #[test]
    fn a_read_error_is_a_one_block_drop_and_ends_the_log() {
        /// One good block, then an error.
        struct FailsAfter<'a>(&'a [u8]);
        impl Read for FailsAfter<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.0.is_empty() {
                    return Err(io::ErrorKind::PermissionDenied.into());
                }
                self.0.read(buf)
            }
        }
        let log = log_of(&[10, 40_000, 5]);
        let source = StdSource::new(FailsAfter(&log[..BLOCK_SIZE]));
        let mut reader = LogReader::new(source, &LogReaderOptions::new());
        let mut seen = Vec::new();
        let result: Result<Outcome, ()> =
            scan(&mut reader, &Progress::none(), UNLIMITED, |found| {
                seen.push(match found {
                    Found::Record { offset, data, .. } => Seen::Record(offset, data.to_vec()),
                    Found::Damage(d) => Seen::Drop(d),
                    Found::ReadError { corruption, .. } => {
                        Seen::Drop(corruption.map(Damage::from).ok_or(())?)
                    }
                    Found::Oversized(o) => panic!("{o:?}"),
                });
                Ok(())
            });
        assert!(result.is_ok());
        let read_error = Corruption::new(32_768, 32_768, CorruptionKind::ReadError);
        assert_eq!(
            seen,
            [Seen::Record(0, vec![0; 10]), Seen::Drop(read_error.into())]
        );
    }
}
