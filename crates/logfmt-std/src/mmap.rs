//! [`MappedLog`]: a log file mapped into memory, read without copying.

use std::borrow::Cow;
use std::fs::File;
use std::path::{Path, PathBuf};

use logfmt_core::SliceSource;
use memmap2::Mmap;

use crate::error::{Error, Operation};
use crate::file::{check_kind, inspect};
use crate::reader::{Entry, LogReader, ReaderOptions};
use crate::recovery::{Damage, ReadError};

/// A log file mapped into memory (`mmap`). Blocks are slices of the map, and a record in one
/// chunk is a slice of the map too: reading copies only fragmented records.
///
/// The map is read-only and private. If another process truncates the file while it is
/// mapped, reading the lost pages raises `SIGBUS`: map only logs that are not being
/// truncated (appending is harmless; the map keeps the length it had when opened).
///
/// ```
/// use logfmt_std::{LogWriter, MappedEntry, MappedLog, ReaderOptions, WriterOptions};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("000001.log");
/// let mut writer = LogWriter::create(&path, &WriterOptions::new())?;
/// writer.add_record(b"small")?;
/// writer.add_record(&[1u8; 100_000])?;
/// writer.close()?;
///
/// let log = MappedLog::open(&path)?;
/// let records: Vec<_> = log.records(&ReaderOptions::new()).collect::<Result<_, _>>()?;
/// let [MappedEntry::Record(small), MappedEntry::Record(big)] = &records[..] else { panic!() };
/// assert!(small.is_borrowed() && small.data == &b"small"[..]);
/// assert!(!big.is_borrowed() && big.data.len() == 100_000);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct MappedLog {
    /// `None` for an empty file, which cannot be mapped.
    map: Option<Mmap>,
    path: PathBuf,
}

impl MappedLog {
    /// Maps the log at `path`.
    ///
    /// # Errors
    /// [`Error::IsADirectory`], [`Error::NotAFile`] (a pipe or a device cannot be mapped), or
    /// [`Error::Io`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| Error::io(Operation::Open, path, e))?;
        let meta = inspect(&file, path)?;
        check_kind(&meta, path)?;
        let map = if meta.len() == 0 {
            None
        } else {
            Some(map(&file).map_err(|e| Error::io(Operation::Read, path, e))?)
        };
        Ok(Self {
            map,
            path: path.into(),
        })
    }

    /// The path the log was opened with.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The bytes of the log.
    pub fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or_default()
    }

    /// The log's length.
    pub fn len(&self) -> u64 {
        self.bytes().len() as u64
    }

    /// Whether the log is empty.
    pub fn is_empty(&self) -> bool {
        self.bytes().is_empty()
    }

    /// A [`LogReader`] over the map.
    pub fn reader(&self, options: &ReaderOptions) -> LogReader<SliceSource<'_>> {
        LogReader::from_slice(self.bytes(), options)
    }

    /// The records and reported damage, as an [`Iterator`] whose items borrow the map (not
    /// the iterator): records in one chunk are slices of the map.
    pub fn records(&self, options: &ReaderOptions) -> MappedRecords<'_> {
        MappedRecords {
            map: self.bytes(),
            reader: self.reader(options),
        }
    }

    /// Splits the log into `parts` byte ranges and calls `scan` on a reader for each, in
    /// parallel; returns the results in range order. See [`split`](crate::split) for what each
    /// range's reader returns.
    #[cfg(feature = "parallel")]
    #[cfg_attr(docsrs, doc(cfg(feature = "parallel")))]
    pub fn par_scan<T, F>(&self, options: &ReaderOptions, parts: usize, scan: F) -> Vec<T>
    where
        T: Send,
        F: Fn(std::ops::Range<u64>, LogReader<SliceSource<'_>>) -> T + Sync,
    {
        crate::par_scan(
            self.bytes(),
            options,
            &crate::split(self.len(), parts),
            scan,
        )
    }
}

/// Maps `file` read-only.
#[expect(
    unsafe_code,
    reason = "memmap2 cannot promise the file is not truncated while mapped (SIGBUS); \
              MappedLog documents that logs being truncated must not be mapped"
)]
fn map(file: &File) -> std::io::Result<Mmap> {
    // SAFETY: the map is read-only and private; it lives as long as the `MappedLog` that owns
    // it, and every slice handed out borrows that `MappedLog`. The file being truncated by
    // another process is the documented caveat.
    unsafe { Mmap::map(file) }
}

/// A record read from a [`MappedLog`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MappedRecord<'m> {
    /// File offset of the record's first chunk.
    pub offset: u64,
    /// File offset just past its last chunk.
    pub end: u64,
    /// For a record from a [pack](logfmt_core::pack), its index in the pack (the offsets are
    /// the pack's); `None` for a plain record.
    pub index: Option<u32>,
    /// The payload: a slice of the map for a record in one chunk (or in a pack in one chunk),
    /// a copy for a fragmented one.
    pub data: Cow<'m, [u8]>,
}

impl MappedRecord<'_> {
    /// Whether the payload is a slice of the map.
    pub fn is_borrowed(&self) -> bool {
        matches!(self.data, Cow::Borrowed(_))
    }
}

/// What [`MappedRecords`] yields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MappedEntry<'m> {
    /// A record.
    Record(MappedRecord<'m>),
    /// Damage the recovery mode reports.
    Damage(Damage),
    /// A compressed record or pack this build cannot decode (as
    /// [`ReadError::NeedsFeature`]): it is not returned as a record; the records after it are.
    NeedsFeature {
        /// Where it starts.
        offset: u64,
        /// Where it ends.
        end: u64,
        /// The crate feature that decodes it (`zstd`).
        feature: &'static str,
    },
}

/// The records of a [`MappedLog`], as an [`Iterator`]; made by [`MappedLog::records`].
///
/// Yields `Err` once, for damage in
/// [`AbsoluteConsistency`](crate::RecoveryMode::AbsoluteConsistency), then ends.
#[derive(Debug)]
pub struct MappedRecords<'m> {
    map: &'m [u8],
    reader: LogReader<SliceSource<'m>>,
}

impl<'m> MappedRecords<'m> {
    /// The reader, for [`ending`](LogReader::ending) and [`tail`](LogReader::tail).
    pub fn reader(&self) -> &LogReader<SliceSource<'m>> {
        &self.reader
    }
}

impl<'m> Iterator for MappedRecords<'m> {
    type Item = Result<MappedEntry<'m>, Damage>;

    fn next(&mut self) -> Option<Self::Item> {
        let map = self.map;
        match self.reader.next() {
            Ok(None) => None,
            Ok(Some(Entry::Damage(damage))) => Some(Ok(MappedEntry::Damage(damage))),
            Ok(Some(Entry::Record(record))) => {
                // A record in one chunk (or in a pack in one chunk) lies in the map.
                let start = (record.data.as_ptr() as usize).checked_sub(map.as_ptr() as usize);
                let in_map = start
                    .and_then(|start| map.get(start..start.checked_add(record.data.len())?))
                    .filter(|slice| std::ptr::eq(slice.as_ptr(), record.data.as_ptr()));
                let data = match in_map {
                    Some(slice) => Cow::Borrowed(slice),
                    None => Cow::Owned(record.data.to_vec()),
                };
                Some(Ok(MappedEntry::Record(MappedRecord {
                    offset: record.offset,
                    end: record.end,
                    index: record.index,
                    data,
                })))
            }
            Err(ReadError::Damaged(damage)) => Some(Err(damage)),
            Err(ReadError::Io(never)) => match never {},
            // Only `next_bounded` leaves records unassembled, and it is never called here.
            Err(ReadError::NotAssembled(_)) => None,
            Err(ReadError::NeedsFeature {
                offset,
                end,
                feature,
            }) => Some(Ok(MappedEntry::NeedsFeature {
                offset,
                end,
                feature,
            })),
        }
    }
}
