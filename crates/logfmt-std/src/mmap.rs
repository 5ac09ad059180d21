//! [`MappedLog`]: a log file mapped into memory, read without copying.

use std::borrow::Cow;
use std::fs::File;
use std::path::{Path, PathBuf};

use logfmt_core::SliceSource;
use memmap2::Mmap;

use crate::entry::{LogEntry, Step, step};
use crate::error::{Error, Operation};
use crate::file::{check_kind, inspect};
use crate::reader::{LogReader, LogReaderOptions};
use crate::recovery::Damage;

/// A log file mapped into memory (`mmap`). Blocks are slices of the map, and a record in one
/// chunk is a slice of the map too: reading copies only fragmented records.
///
/// The map is read-only and private. If another process truncates the file while it is
/// mapped, reading the lost pages raises `SIGBUS`: map only logs that are not being
/// truncated (appending is harmless; the map keeps the length it had when opened).
///
/// ```
/// use logfmt_std::{LogWriter, LogEntry, MappedLog, LogReaderOptions, LogWriterOptions};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("000001.log");
/// let mut writer = LogWriter::create(&path, &LogWriterOptions::new())?;
/// writer.add_record(b"small")?;
/// writer.add_record(&[1u8; 100_000])?;
/// writer.close()?;
///
/// let log = MappedLog::open(&path)?;
/// let records: Vec<_> = log.records(&LogReaderOptions::new()).collect::<Result<_, _>>()?;
/// let [LogEntry::Record(small), LogEntry::Record(big)] = &records[..] else { panic!() };
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
    pub fn reader(&self, options: &LogReaderOptions) -> LogReader<SliceSource<'_>> {
        LogReader::from_slice(self.bytes(), options)
    }

    /// The records and reported damage, as an [`Iterator`] whose items borrow the map (not
    /// the iterator): records in one chunk are slices of the map.
    pub fn records(&self, options: &LogReaderOptions) -> MappedRecords<'_> {
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
    pub fn par_scan<T, F>(&self, options: &LogReaderOptions, parts: usize, scan: F) -> Vec<T>
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
    type Item = Result<LogEntry<'m>, Damage>;

    fn next(&mut self) -> Option<Self::Item> {
        let map = self.map;
        let borrowed = |data: &[u8]| {
            // A record in one chunk (or in a pack in one chunk) lies in the map.
            let start = (data.as_ptr() as usize).checked_sub(map.as_ptr() as usize);
            let in_map = start
                .and_then(|start| map.get(start..start.checked_add(data.len())?))
                .filter(|slice| std::ptr::eq(slice.as_ptr(), data.as_ptr()));
            match in_map {
                Some(slice) => Cow::Borrowed(slice),
                None => Cow::Owned(data.to_vec()),
            }
        };
        match step(self.reader.next(), borrowed) {
            Step::Entry(entry) => Some(Ok(entry)),
            Step::Damaged(damage) => Some(Err(damage)),
            Step::Failed(never) => match never {},
            Step::End => None,
        }
    }
}
