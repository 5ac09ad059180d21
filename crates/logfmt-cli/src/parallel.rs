//! Reading a large log on every core: the format's split scan (`logfmt_std::advanced::par_scan_file`),
//! for the commands that read a whole log (`verify`, `stats`, `cat`).
//!
//! The ranges of a split scan return exactly the records of a sequential read, but damage at a
//! range's edge can be told differently (a chunk that continues a record is a "missing start"
//! to a reader that did not see the record begin). So the split scan answers only for a clean
//! log: if any range meets damage or a read error, or ends other than at its range's end (the
//! last: at the log's end), the scan stops early and the command reads the log again with one
//! reader, which reports the damage exactly as LevelDB's reader does. What a command prints is
//! the same either way; only its speed differs.

use std::io::{self, Read, Seek, SeekFrom};
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, Ordering};

use logfmt_std::{
    LogFile, LogReaderOptions,
    advanced::{
        BLOCK_SIZE, Bounded, ChunkFormat, Ending, Format, LogReader, ReadAt, ReadFormat, StaleTail,
        par_scan_file, split,
    },
};
use rayon::prelude::{IntoParallelRefIterator, ParallelIterator};

use crate::error::CliError;
use crate::image::Input;
use crate::progress::Progress;
use crate::scan::{Found, Outcome, scan};

/// Logs shorter than this are read by one thread: starting the others costs more than they
/// save.
pub(crate) const PARALLEL_MIN: u64 = 32 << 20;

/// `--threads`: how many threads read a log (default: one per core).
#[derive(Debug, Clone, Copy, clap::Args)]
pub(crate) struct ThreadsArg {
    /// Read a large log (32 MiB or more) with N threads, each a part of it (the format's split
    /// scan; the output is the same as with one). Default: the number of cores. A damaged log
    /// is read again by one thread, so that its damage is reported exactly as LevelDB's reader
    /// reports it. At most 256.
    #[arg(short = 'j', long, value_name = "N")]
    pub(crate) threads: Option<NonZeroUsize>,
}

/// The most threads `--threads` starts.
const MAX_THREADS: usize = 256;

impl ThreadsArg {
    /// The number of threads.
    pub(crate) fn count(self) -> usize {
        self.threads
            .or_else(|| std::thread::available_parallelism().ok())
            .map_or(1, NonZeroUsize::get)
            .min(MAX_THREADS)
    }
}

/// What a split scan of a clean log found: each range's tally, in order, and how the log ended.
#[derive(Debug)]
pub(crate) struct Clean<T> {
    /// What `visit` gathered in each range, in the order of the ranges.
    pub(crate) ranges: Vec<T>,
    /// How the last range ended: how the log ended.
    pub(crate) outcome: Outcome,
    /// The stale bytes after the log (as [`StaleTail::in_file`] counts them).
    pub(crate) stale: Option<StaleTail>,
}

/// Reads `input` on `threads` threads with `options`, calling `visit` with each range's tally
/// and each of its records ([`Found::Record`] and [`Found::Oversized`], in order within the
/// range); records are held up to `limit` bytes, as [`scan`] holds them.
///
/// `None` where the split scan does not answer for a sequential read: one thread asked for, a
/// log under [`PARALLEL_MIN`], a ring image, a pipe, an initial offset or a range, a log that
/// is not (or may not be) in the legacy format — or damage, a read error, or an end anywhere
/// but at the end of the log. The caller then reads the log with one reader.
// A little over 80 lines: the refusals above, one each, then the scan; they read best in order.
pub(crate) fn scan_clean<T, V>(
    input: &Input,
    options: &LogReaderOptions,
    threads: usize,
    limit: usize,
    progress: &Progress,
    visit: V,
) -> Result<Option<Clean<T>>, CliError>
where
    T: Default + Send,
    V: Fn(&mut T, Found<'_>) + Sync,
{
    let log = &input.log;
    let len = log.len_at_open();
    if threads < 2
        || len < PARALLEL_MIN
        || input.ring.is_some()
        || !log.is_regular()
        || options.read.initial_offset != 0
        || options.read.tailing
        || options.range.is_some()
    {
        return Ok(None);
    }
    let Some(options) = legacy(input, options)? else {
        return Ok(None);
    };
    let Some(pool) = pool(threads) else {
        return Ok(None);
    };
    let ranges = split(len, threads);
    let dirty = AtomicBool::new(false);
    let results = pool.install(|| {
        par_scan_file(log.file(), &options, &ranges, |range, mut reader| {
            let mut tally = T::default();
            let part = progress.part(range.start);
            let scanned = scan(&mut reader, &part, limit, |found| {
                if dirty.load(Ordering::Relaxed) {
                    return Err(());
                }
                match found {
                    Found::Record { .. } | Found::Oversized(_) => {
                        visit(&mut tally, found);
                        Ok(())
                    }
                    Found::Damage(_) | Found::ReadError { .. } => Err(()),
                }
            });
            let is_last = range.end == len;
            let clean = scanned.is_ok_and(|outcome| {
                outcome.failed_on.is_none()
                    && match outcome.ending {
                        Some(Ending::RangeEnd { .. }) => !is_last && outcome.tail.is_none(),
                        Some(Ending::Log(_)) => is_last,
                        _ => false,
                    }
            });
            if !clean {
                dirty.store(true, Ordering::Relaxed);
                return None;
            }
            let outcome = scanned.ok()?;
            let stale = if is_last {
                StaleTail::in_file(log, &mut reader).ok()?
            } else {
                None
            };
            Some((tally, outcome, stale))
        })
    });
    if dirty.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let mut tallies = Vec::with_capacity(results.len());
    let mut end = None;
    for result in results {
        let Some((tally, outcome, stale)) = result else {
            return Ok(None);
        };
        tallies.push(tally);
        end = Some((outcome, stale));
    }
    Ok(end.map(|(outcome, stale)| Clean {
        ranges: tallies,
        outcome,
        stale,
    }))
}

/// Prints the records of a large clean log (`cat`), read on `threads` threads: `print` formats
/// each record (its offset, its index in a pack, its bytes) into the buffer of its part of the
/// log, with a `State` of its own for the part (a line buffer...), and the parts are written
/// to `out` in order, a few at a time (parts of about [`PART`] bytes of log, as many at once
/// as there are threads), so that the output takes no more memory than those parts print.
///
/// The log is first checked with [`scan_clean`] (records held up to `limit` bytes), each
/// record by `check` too: `false` where that does not answer, where a record is larger than
/// `limit` (one reader streams it) or where `check` refuses one (a record that does not decode,
/// which one reader notes in its place): nothing is printed then, and the caller prints the
/// log with one reader. A log that changes between the check and the printing is an error
/// (what was printed is the log as it was).
pub(crate) fn print_clean<C, P, State>(
    input: &Input,
    options: &LogReaderOptions,
    threads: usize,
    limit: usize,
    out: &mut impl std::io::Write,
    check: C,
    print: P,
) -> Result<bool, CliError>
where
    C: Fn(&[u8]) -> bool + Sync,
    State: Default,
    P: Fn(&mut State, &mut Vec<u8>, u64, Option<u32>, &[u8]) -> Result<(), CliError> + Sync,
{
    let checked = scan_clean(
        input,
        options,
        threads,
        limit,
        &Progress::bytes("cat", input.log.len_at_open()),
        |refused: &mut bool, found| {
            *refused |= match found {
                Found::Record { data, .. } => !check(data),
                _ => true,
            };
        },
    )?;
    let Some(clean) = checked else {
        return Ok(false);
    };
    if clean.ranges.iter().any(|&refused| refused) {
        return Ok(false);
    }
    let Some(pool) = pool(threads) else {
        return Ok(false);
    };
    let log = &input.log;
    let len = log.len_at_open();
    let options = legacy(input, options)?.unwrap_or_else(|| options.clone());
    let parts = split(len, (len / PART).max(threads as u64) as usize);
    // The parts' buffers, used again from wave to wave: fresh ones would cost a page fault a
    // page and the copies of their growth (about as much as printing on one thread).
    let spare = std::sync::Mutex::new(Vec::<Vec<u8>>::new());
    for wave in parts.chunks(threads) {
        let printed = pool.install(|| {
            par_scan_file(log.file(), &options, wave, |range, mut reader| {
                let mut buffer = spare
                    .lock()
                    .ok()
                    .and_then(|mut spare| spare.pop())
                    .unwrap_or_default();
                buffer.clear();
                let mut state = State::default();
                let scanned = scan(&mut reader, &Progress::none(), limit, |found| match found {
                    Found::Record {
                        offset,
                        index,
                        data,
                    } => print(&mut state, &mut buffer, offset, index, data),
                    _ => Err(changed(input, range.start)),
                });
                scanned.map(|_| buffer)
            })
        });
        for part in printed {
            let part = part?;
            out.write_all(&part)?;
            if let Ok(mut spare) = spare.lock() {
                spare.push(part);
            }
        }
    }
    Ok(true)
}

/// The first record of `input` read with `options` (by a reader of its own), if the log has
/// one before any damage.
pub(crate) fn first_record(
    input: &Input,
    options: &LogReaderOptions,
) -> Result<Option<Vec<u8>>, CliError> {
    let mut reader = LogReader::new(input.log.reread()?, options);
    Ok(match reader.next_bounded(PART as usize) {
        Ok(Some(Bounded::Record(record))) => Some(record.data.to_vec()),
        _ => None,
    })
}

/// The bytes of log a part printed by [`print_clean`] covers.
pub(crate) const PART: u64 = 1 << 20;

/// The error of a log that changed while it was printed (in the part from `offset`).
fn changed(input: &Input, offset: u64) -> CliError {
    logfmt_std::Error::Changed {
        path: input.log.path().into(),
        offset,
    }
    .into()
}

/// Calls `visit` with each block of `log` (its file offset and its bytes) on `threads`
/// threads, each a run of consecutive blocks with a tally of its own; returns the tallies in
/// the order of the runs (`None` if no thread pool can be had).
pub(crate) fn blocks<T, V>(
    log: &LogFile,
    threads: usize,
    visit: V,
) -> Result<Option<Vec<T>>, CliError>
where
    T: Default + Send,
    V: Fn(&mut T, u64, &[u8]) + Sync,
{
    let Some(pool) = pool(threads) else {
        return Ok(None);
    };
    let len = log.len_at_open();
    let runs = split(len.div_ceil(BLOCK_SIZE as u64), threads);
    let tallies = pool.install(|| {
        runs.par_iter()
            .map(|run| {
                let mut tally = T::default();
                let mut file = ReadAt::new(log.file());
                let mut block = vec![0u8; BLOCK_SIZE];
                for index in run.clone() {
                    let start = index * BLOCK_SIZE as u64;
                    let size = (len - start).min(BLOCK_SIZE as u64) as usize;
                    file.seek(SeekFrom::Start(start))?;
                    file.read_exact(&mut block[..size])?;
                    visit(&mut tally, start, &block[..size]);
                }
                Ok(tally)
            })
            .collect::<io::Result<Vec<T>>>()
    });
    tallies.map(Some).map_err(|e| log.read_error(e).into())
}

/// A pool of `threads` threads for one command.
fn pool(threads: usize) -> Option<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .ok()
}

/// `options` for the ranges: the legacy format, decided. A log the options read as legacy
/// stays so; one whose format the first chunk decides is legacy if its first record is.
/// `None` for a recyclable log (a range reader would take its log number from its own first
/// chunk, which in a recycled file may be an earlier use's) and for a RocksDB-compressed one
/// (the compression record that switches it on is only at the start).
fn legacy(input: &Input, options: &LogReaderOptions) -> Result<Option<LogReaderOptions>, CliError> {
    if matches!(options.read.format, ReadFormat::Recyclable { .. }) {
        return Ok(None);
    }
    let mut first = LogReader::new(input.log.reread()?, options);
    match first.next_bounded(0) {
        Ok(Some(Bounded::Record(_) | Bounded::Oversized(_))) => {}
        _ => return Ok(None),
    }
    if first.compression().is_some() {
        return Ok(None);
    }
    Ok(match first.format() {
        ChunkFormat::Decided(Format::Legacy) => {
            let mut options = options.clone();
            options.read = options.read.format(ReadFormat::Legacy);
            Some(options)
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use logfmt_std::{LogWriter, LogWriterOptions};

    /// A log of at least [`PARALLEL_MIN`] bytes: records of 0 to 70 000 bytes, so that some
    /// span blocks and cross the ranges' edges.
    fn big_log(path: &std::path::Path) -> u64 {
        let mut writer = LogWriter::create(path, &LogWriterOptions::new()).expect("create");
        let mut records = 0;
        let mut len = 0u64;
        while len < PARALLEL_MIN + 1_000_000 {
            let size = (records * 7_919) % 70_000;
            writer
                .add_record(&vec![records as u8; size])
                .expect("write");
            len += size as u64 + 7;
            records += 1;
        }
        writer.close().expect("close");
        records as u64
    }

    fn count(input: &Input, threads: usize) -> Option<u64> {
        let options = LogReaderOptions::new().read(
            logfmt_std::advanced::ReadOptions::new().format(ReadFormat::Auto { log_number: None }),
        );
        let none = Progress::none();
        let clean = scan_clean(
            input,
            &options,
            threads,
            1 << 20,
            &none,
            |n: &mut u64, _| *n += 1,
        )
        .expect("no I/O error")?;
        assert!(clean.outcome.tail.is_none());
        Some(clean.ranges.iter().sum())
    }

    #[test]
    fn a_clean_log_is_read_on_several_threads_a_damaged_one_is_not() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("big.log");
        let records = big_log(&path);
        let input = Input::open(&path, None).expect("open");
        assert_eq!(count(&input, 2), Some(records));
        assert_eq!(count(&input, 5), Some(records));
        // One thread: the caller's own reader.
        assert_eq!(count(&input, 1), None);
        drop(input);
        // Damage in the middle: every range is given up, for one reader to report it.
        let mut bytes = std::fs::read(&path).expect("read");
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x40;
        std::fs::write(&path, &bytes).expect("write");
        let input = Input::open(&path, None).expect("open");
        assert_eq!(count(&input, 2), None);
    }
}
