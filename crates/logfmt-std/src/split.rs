//! Splitting a log into byte ranges that are read independently, in parallel.
//!
//! The format's blocks make this possible: a reader can start at any block and find the next
//! record that starts there. A range's reader ([`ReaderOptions::range`]) starts at the block
//! holding the range's start, skips the records (and continuation chunks) that start before
//! it, returns every record whose first chunk starts in the range — reading past its end to
//! complete the last one — and stops at the first record that starts at or after its end.
//! So ranges that cover a log without overlapping return every record a sequential read
//! returns, exactly once, on damaged logs too.

use std::ops::Range;

use logfmt_core::SliceSource;
use rayon::prelude::{IntoParallelRefIterator, ParallelIterator};

use crate::reader::{LogReader, ReaderOptions};

/// Splits `0..len` into `parts` (at least one) consecutive ranges of nearly equal size. With
/// more parts than bytes, some ranges are empty.
///
/// ```
/// assert_eq!(logfmt_std::split(10, 3), [0..3, 3..6, 6..10]);
/// assert_eq!(logfmt_std::split(0, 2), [0..0, 0..0]);
/// ```
pub fn split(len: u64, parts: usize) -> Vec<Range<u64>> {
    let parts = parts.max(1) as u64;
    let cut = |i: u64| (u128::from(len) * u128::from(i) / u128::from(parts)) as u64;
    (0..parts).map(|i| cut(i)..cut(i + 1)).collect()
}

/// Reads `log` in `ranges` in parallel (rayon): calls `scan` with each range and a reader
/// limited to it (`options` with that [range](ReaderOptions::range)); returns the results in
/// the order of `ranges`.
///
/// ```
/// use logfmt_std::{Entry, LogWriter, ReaderOptions, WriterOptions, par_scan, split};
///
/// let mut writer = LogWriter::new(Vec::new(), &WriterOptions::new());
/// for i in 0..1000u32 {
///     writer.add_record(&i.to_le_bytes().repeat(i as usize % 50))?;
/// }
/// let log = writer.close()?;
/// let counts = par_scan(&log, &ReaderOptions::new(), &split(log.len() as u64, 4), |_, mut reader| {
///     let mut n = 0;
///     while let Ok(Some(entry)) = reader.next() {
///         n += u32::from(matches!(entry, Entry::Record(_)));
///     }
///     n
/// });
/// assert_eq!(counts.iter().sum::<u32>(), 1000);
/// # Ok::<(), logfmt_std::WriteError>(())
/// ```
pub fn par_scan<'a, T, F>(
    log: &'a [u8],
    options: &ReaderOptions,
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
