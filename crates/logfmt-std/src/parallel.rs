//! The ranges of [`split`](crate::split) read in parallel (rayon): [`par_scan`] over a log in
//! memory, [`par_scan_file`] over a file.

use std::fs::File;
use std::ops::Range;

use logfmt_core::SliceSource;
use rayon::prelude::{IntoParallelRefIterator, ParallelIterator};

use crate::reader::{LogReader, LogReaderOptions};
use crate::source::StdSource;
use crate::split::ReadAt;

/// Reads `log` in `ranges` in parallel (rayon): calls `scan` with each range and a reader
/// limited to it (`options` with that [range](LogReaderOptions::range)); returns the results in
/// the order of `ranges`.
///
/// ```
/// use logfmt_std::{LogWriter, LogReaderOptions, LogWriterOptions, advanced::{Entry, par_scan, split}};
///
/// let mut writer = LogWriter::new(Vec::new(), &LogWriterOptions::new());
/// for i in 0..1000u32 {
///     writer.add_record(&i.to_le_bytes().repeat(i as usize % 50))?;
/// }
/// let log = writer.close()?;
/// let counts = par_scan(&log, &LogReaderOptions::new(), &split(log.len() as u64, 4), |_, mut reader| {
///     let mut n = 0;
///     while let Ok(Some(entry)) = reader.next() {
///         n += u32::from(matches!(entry, Entry::Record(_)));
///     }
///     n
/// });
/// assert_eq!(counts.iter().sum::<u32>(), 1000);
/// # Ok::<(), logfmt_std::LogWriterError>(())
/// ```
pub fn par_scan<'a, T, F>(
    log: &'a [u8],
    options: &LogReaderOptions,
    ranges: &[Range<u64>],
    scan: F,
) -> Vec<T>
where
    T: Send,
    F: Fn(Range<u64>, LogReader<SliceSource<'a>>) -> T + Sync,
{
    ranges
        .par_iter()
        .map(|range| {
            let options = options.clone().range(range.clone());
            scan(range.clone(), LogReader::from_slice(log, &options))
        })
        .collect()
}

/// Reads the log in `file` in `ranges` in parallel (rayon), as [`par_scan`] reads a log in
/// memory: calls `scan` with each range and a reader limited to it; returns the results in
/// the order of `ranges`.
///
/// Each range is read with positioned reads (`pread`) of its own, so the file is neither
/// mapped nor held in memory: a file truncated while it is read ends early (the reader sees
/// a torn tail, or a read error), never a signal. The file is read up to the length it has
/// when the scan starts: what is appended to it meanwhile is not read (a record that a range
/// begins is completed with the bytes before that length only).
///
/// ```
/// use logfmt_std::{LogWriter, LogReaderOptions, LogWriterOptions, advanced::{Entry, par_scan_file, split}};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("000001.log");
/// let mut writer = LogWriter::create(&path, &LogWriterOptions::new())?;
/// for i in 0..1000u32 {
///     writer.add_record(&i.to_le_bytes().repeat(i as usize % 50))?;
/// }
/// writer.close()?;
/// let file = std::fs::File::open(&path)?;
/// let ranges = split(file.metadata()?.len(), 4);
/// let counts = par_scan_file(&file, &LogReaderOptions::new(), &ranges, |_, mut reader| {
///     let mut n = 0;
///     while let Ok(Some(entry)) = reader.next() {
///         n += u32::from(matches!(entry, Entry::Record(_)));
///     }
///     n
/// });
/// assert_eq!(counts.iter().sum::<u32>(), 1000);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn par_scan_file<'f, T, F>(
    file: &'f File,
    options: &LogReaderOptions,
    ranges: &[Range<u64>],
    scan: F,
) -> Vec<T>
where
    T: Send,
    F: Fn(Range<u64>, LogReader<StdSource<ReadAt<'f>>>) -> T + Sync,
{
    // A file that cannot be inspected is read to its end (reading it then fails, or not).
    let end = file.metadata().map_or(u64::MAX, |meta| meta.len());
    ranges
        .par_iter()
        .map(|range| {
            let options = options.clone().range(range.clone());
            let source = StdSource::seekable(ReadAt::up_to(file, end));
            scan(range.clone(), LogReader::new(source, &options))
        })
        .collect()
}
