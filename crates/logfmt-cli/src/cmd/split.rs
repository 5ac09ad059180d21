//! `logfmt split`: a log cut into byte ranges that can be read independently.

use std::io::{self, Write};

use logfmt_std::{
    LogFile, LogReaderOptions,
    advanced::{Bounded, ReadOptions, par_scan_file},
};

use crate::error::CliError;
use crate::options::{ChunkArgs, Erased};
use crate::render::Report;

/// Split a log into byte ranges and read them in parallel; print each range and its records.
///
/// Each range's reader returns exactly the records whose first chunk starts in it (`logfmt cat
/// --range A..B` prints them), so together the ranges return every record once, as a
/// sequential read does, damaged logs included. Damage is counted by the range it starts in
/// (with LevelDB's rules, as `verify` reports it by default).
///
/// Each range is read with positioned reads of its own: the files are regular files (or a
/// database directory's).
///
/// --json prints one JSON object: {"bytes": n, "records": n, "ranges": [{"start", "end",
/// "records", "payload_bytes", "damage"}]}; with several files, one per file, each ending
/// with "file" (its path).
#[derive(Debug, clap::Args)]
pub(crate) struct SplitArgs {
    /// How many ranges: at most 64 per 32 KiB block of the file (each range's reader reads
    /// the whole block its range starts in, so ranges past that would read the same blocks
    /// over and over); a smaller file is split into fewer.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    parts: u32,
    #[command(flatten)]
    chunks: ChunkArgs,
}

/// What one range holds.
#[derive(Debug, Default)]
struct Part {
    records: u64,
    payload: u64,
    damage: u64,
    /// Reading the range failed.
    error: Option<std::io::Error>,
}

/// The most ranges `split` makes per block of the file: reading them all reads the file at
/// most this many times over.
const PARTS_PER_BLOCK: u64 = 64;

/// How many ranges `asked` for comes to on a file of `len` bytes: at most
/// [`PARTS_PER_BLOCK`] per block (a file of less than a block counts as one).
fn parts(asked: u32, len: u64) -> usize {
    let blocks = len.div_ceil(logfmt_std::advanced::BLOCK_SIZE as u64).max(1);
    let most = blocks.saturating_mul(PARTS_PER_BLOCK);
    usize::try_from(u64::from(asked).min(most)).unwrap_or(usize::MAX)
}

/// Runs `split`.
pub(crate) fn run(args: &SplitArgs) -> Result<(), CliError> {
    crate::targets::each(
        &args.chunks.files.files,
        args.chunks.json,
        |target, several| run_one(args, &target.path, several),
    )
}

/// Splits one file; `several` when more are split.
fn run_one(args: &SplitArgs, path: &std::path::Path, several: bool) -> Result<(), CliError> {
    let report = gather(args, path, several)?;
    crate::render::print(&report, args.chunks.json)?;
    Ok(())
}

/// `logfmt split` of one file: the keys documented on [`SplitArgs`], in that order.
#[derive(Debug, serde::Serialize)]
struct SplitReport {
    /// The file's size.
    bytes: u64,
    /// Records in all the ranges.
    records: u64,
    /// The ranges, in order.
    ranges: Vec<Range>,
    /// The file's path, when several are split.
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
}

/// One range and what its reader returns.
#[derive(Debug, serde::Serialize)]
struct Range {
    /// Its first byte.
    start: u64,
    /// The byte after its last.
    end: u64,
    /// Records whose first chunk starts in it.
    records: u64,
    /// Their bytes.
    payload_bytes: u64,
    /// Damaged regions that start in it.
    damage: u64,
}

/// Opens `path` as `split` reads it: a regular file, not a ring image.
fn open(path: &std::path::Path) -> Result<LogFile, CliError> {
    // Opening a FIFO waits for a writer: what is not a regular file is refused before it is
    // opened (and again after, in case the name was given to another file meanwhile).
    if std::fs::metadata(path).is_ok_and(|meta| !meta.is_file() && !meta.is_dir()) {
        return Err(logfmt_std::Error::NotAFile { path: path.into() }.into());
    }
    let log = LogFile::open(path)?;
    if !log.is_regular() {
        return Err(logfmt_std::Error::NotAFile { path: path.into() }.into());
    }
    if log.ring()?.is_some() {
        return Err(CliError::Usage(format!(
            "{} is a ring image, read from its oldest block to its newest, not in byte ranges \
             (`logfmt cat` reads it; `logfmt export` turns it into a plain log)",
            logfmt_std::advanced::EscapedPath::new(log.path())
        )));
    }
    Ok(log)
}

/// Reads the ranges of `path` in parallel and reports what each holds.
fn gather(
    args: &SplitArgs,
    path: &std::path::Path,
    several: bool,
) -> Result<SplitReport, CliError> {
    let log = open(path)?;
    // Every range reads with the format decided from the start of the file.
    let read = ReadOptions::new().erased(args.chunks.erased.map(Erased::byte));
    let read = args.chunks.format.read_options(&log, read)?;
    let options = LogReaderOptions::new().read(read);
    let len = log.len_at_open();
    let ranges = logfmt_std::advanced::split(len, parts(args.parts, len));
    let mut results = par_scan_file(log.file(), &options, &ranges, |range, reader| {
        (range, count(reader))
    });
    if let Some(error) = results.iter_mut().find_map(|(_, part)| part.error.take()) {
        return Err(log.read_error(error).into());
    }
    Ok(SplitReport {
        bytes: len,
        records: results.iter().map(|(_, p)| p.records).sum(),
        ranges: results
            .iter()
            .map(|(range, part)| Range {
                start: range.start,
                end: range.end,
                records: part.records,
                payload_bytes: part.payload,
                damage: part.damage,
            })
            .collect(),
        file: several.then(|| log.path().to_string_lossy().into_owned()),
    })
}

/// Counts what one range's reader returns.
fn count<S>(mut reader: logfmt_std::advanced::LogReader<S>) -> Part
where
    S: logfmt_std::advanced::BlockSource<Error = io::Error>,
{
    let mut part = Part::default();
    // Records are only counted: none is assembled.
    loop {
        let entry = match reader.next_bounded(0) {
            Ok(Some(entry)) => entry,
            Ok(None) => break,
            Err(logfmt_std::advanced::ReadError::Io(e)) => {
                part.error = Some(e);
                break;
            }
            Err(_) => break,
        };
        match entry {
            Bounded::Record(record) => {
                part.records += 1;
                part.payload += record.data.len() as u64;
            }
            Bounded::Oversized(record) => {
                part.records += 1;
                part.payload += record.len;
            }
            Bounded::Damage(_) => part.damage += 1,
            _ => {}
        }
    }
    part
}

impl Report for SplitReport {
    /// A table: a row per range, then the total.
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        let names: Vec<String> = self
            .ranges
            .iter()
            .map(|r| format!("{}..{}", r.start, r.end))
            .collect();
        let width = names.iter().map(String::len).max().unwrap_or(0).max(5);
        let number = |n: u64| n.to_string().len();
        let records_width = self
            .ranges
            .iter()
            .map(|r| number(r.records))
            .max()
            .unwrap_or(0)
            .max(7);
        let bytes_width = self
            .ranges
            .iter()
            .map(|r| number(r.payload_bytes))
            .max()
            .unwrap_or(0)
            .max(7);
        writeln!(
            out,
            "{:<width$}  {:>records_width$}  {:>bytes_width$}  DAMAGE",
            "RANGE", "RECORDS", "PAYLOAD"
        )?;
        for (name, range) in names.iter().zip(&self.ranges) {
            writeln!(
                out,
                "{name:<width$}  {:>records_width$}  {:>bytes_width$}  {}",
                range.records, range.payload_bytes, range.damage
            )?;
        }
        writeln!(out, "{:<width$}  {:>records_width$}", "total", self.records)
    }
}

#[cfg(test)]
mod tests {
    use super::parts;

    #[test]
    fn at_most_64_parts_per_block() {
        assert_eq!(parts(4, 0), 4);
        assert_eq!(parts(100, 1), 64);
        assert_eq!(parts(1_000_000, 108_000), 256);
        assert_eq!(parts(3, 108_000), 3);
        assert_eq!(parts(1_000_000, 1 << 40), 1_000_000);
        assert_eq!(parts(320, 5 * 32_768), 320);
        assert_eq!(parts(321, 5 * 32_768), 320);
        assert_eq!(parts(330, 5 * 32_768 + 1), 330);
    }
}
