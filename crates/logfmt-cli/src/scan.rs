//! Reading a log as whole records, for `cat` and `verify`.

use std::io;

use logfmt_core::{
    BLOCK_SIZE, BlockSource, Corruption, CorruptionKind, Event, FragmentKind, FragmentReader,
};

/// What [`scan`] found.
#[derive(Debug)]
pub(crate) enum Found<'a> {
    /// A complete record.
    Record {
        /// File offset of its first chunk.
        offset: u64,
        /// Its length.
        len: u64,
        /// Its payload; empty unless the scan keeps data.
        data: &'a [u8],
    },
    /// Bytes dropped, as LevelDB reports them.
    Corruption(Corruption),
    /// Reading failed: the log ends here. LevelDB reports this as a drop of one block, which
    /// `corruption` is.
    ReadError {
        /// The error.
        error: io::Error,
        /// The drop LevelDB reports for it.
        corruption: Corruption,
    },
}

/// Reads the whole log, calling `visit` with each record and report in order. A record is
/// only handed over once it is complete: fragments of a record that is abandoned are dropped.
/// With `keep_data`, fragmented records are assembled in one growing buffer; without it, only
/// their lengths are counted.
pub(crate) fn scan<S, E>(
    reader: &mut FragmentReader<S>,
    keep_data: bool,
    mut visit: impl FnMut(Found<'_>) -> Result<(), E>,
) -> Result<(), E>
where
    S: BlockSource<Error = io::Error>,
{
    let mut assembled = Vec::new();
    let mut len = 0u64;
    loop {
        let event = match reader.next() {
            Ok(Some(event)) => event,
            Ok(None) => return Ok(()),
            Err(error) => {
                let corruption = Corruption {
                    offset: reader.position(),
                    bytes: BLOCK_SIZE as u64,
                    kind: CorruptionKind::ReadError,
                };
                visit(Found::ReadError { error, corruption })?;
                continue;
            }
        };
        match event {
            Event::Fragment(fragment) => {
                if fragment.kind.starts_record() {
                    assembled.clear();
                    len = 0;
                }
                len += fragment.data.len() as u64;
                let offset = fragment.record_offset;
                match fragment.kind {
                    FragmentKind::Full => {
                        let data = if keep_data { fragment.data } else { &[] };
                        visit(Found::Record { offset, len, data })?;
                    }
                    FragmentKind::First | FragmentKind::Middle => {
                        if keep_data {
                            assembled.extend_from_slice(fragment.data);
                        }
                    }
                    FragmentKind::Last => {
                        if keep_data {
                            assembled.extend_from_slice(fragment.data);
                        }
                        visit(Found::Record {
                            offset,
                            len,
                            data: &assembled,
                        })?;
                        assembled.clear();
                    }
                }
            }
            Event::Aborted(aborted) => {
                assembled.clear();
                len = 0;
                if let Some(corruption) = aborted.report {
                    visit(Found::Corruption(corruption))?;
                }
            }
            Event::Corruption(corruption) => visit(Found::Corruption(corruption))?,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use logfmt_core::{Item, ReadOptions, Reader, SliceSource};
    use logfmt_std::{StdSink, StdSource, Writer};
    use std::io::Read;

    #[derive(Debug, PartialEq, Eq)]
    enum Seen {
        Record(u64, Vec<u8>),
        Drop(Corruption),
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
                Item::Corruption(c) => seen.push(Seen::Drop(c)),
                Item::Oversized(o) => panic!("{o:?}"),
            }
        }
        seen
    }

    fn with_scan<R: Read>(log: R, offset: u64, keep_data: bool) -> io::Result<Vec<Seen>> {
        let options = ReadOptions::new().initial_offset(offset);
        let mut reader = FragmentReader::with_options(StdSource::new(log), &options);
        let mut seen = Vec::new();
        scan(&mut reader, keep_data, |found| {
            match found {
                Found::Record { offset, len, data } => {
                    assert_eq!(data.len() as u64, if keep_data { len } else { 0 });
                    seen.push(Seen::Record(offset, data.to_vec()));
                }
                Found::Corruption(c) => seen.push(Seen::Drop(c)),
                Found::ReadError { error, .. } => return Err(error),
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
                assert_eq!(
                    with_scan(&log[..], offset, true)?,
                    expected,
                    "{damage:?} {offset}"
                );
            }
        }
        Ok(())
    }

    #[test]
    fn without_data_only_lengths_are_counted() -> io::Result<()> {
        let log = log_of(&[10, 40_000]);
        let seen = with_scan(&log[..], 0, false)?;
        assert_eq!(seen, [Seen::Record(0, vec![]), Seen::Record(17, vec![])]);
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
        let mut reader = FragmentReader::new(StdSource::new(FailsAfter(&log[..BLOCK_SIZE])));
        let mut seen = Vec::new();
        let result: Result<(), ()> = scan(&mut reader, true, |found| {
            seen.push(match found {
                Found::Record { offset, data, .. } => Seen::Record(offset, data.to_vec()),
                Found::Corruption(c) | Found::ReadError { corruption: c, .. } => Seen::Drop(c),
            });
            Ok(())
        });
        assert_eq!(result, Ok(()));
        let read_error = Corruption {
            offset: 32_768,
            bytes: 32_768,
            kind: CorruptionKind::ReadError,
        };
        assert_eq!(seen, [Seen::Record(0, vec![0; 10]), Seen::Drop(read_error)]);
    }
}
