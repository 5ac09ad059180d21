//! `logfmt stats`: what a log holds, in numbers.

use std::collections::BTreeMap;
use std::io;

use logfmt_std::layout::{Counts as ChunkCounts, Walk};
use logfmt_std::{
    Damage, LogReaderOptions, RecoveryMode,
    advanced::{BlockSource, HEADER_SIZE, LogReader, StaleTail},
};

use super::SpanJson;
use super::stats_report::{
    Chunks, ContentCount, DamageCount, Packs, RecordSize, Ring, Stale, StatsReport,
};
use crate::bounded_reports::DamageReports;
use crate::decode::{Content, Decode};
use crate::error::CliError;
use crate::image::{Input, Source};
use crate::options::ChunkArgs;
use crate::progress::Progress;
use crate::scan::{COUNTING, Found, scan};

/// Print statistics about a log: records and their sizes, chunks per type, blocks, the space
/// taken by headers and trailers, and damage.
///
/// Records are read as LevelDB reads them; damage is everything `cat --recovery skip` reports (what
/// LevelDB reports, plus a torn tail and silently skipped regions).
///
/// --json prints one JSON object with these keys, in this order: "bytes", "blocks",
/// "records", "payload_bytes", "record_size" (null without records, else {"min", "median",
/// "max"}), "chunks" ({"full", "first", "middle", "last", "unknown"}), "header_bytes",
/// "trailer_bytes", "skipped_bytes" (zero headers, erased flash), "damage" ({"regions",
/// "bytes"}), "tail" (null or {"offset", "bytes"}), "stale" (null, or for a recyclable log
/// that ends at a record of an earlier use of the file, {"offset", "bytes", "log_number"}:
/// the stale bytes from the end of the log to the end of the file, then "kind":
/// "pebble_eof_trailer" when they are Pebble's EOF trailer); and for a ring image only,
/// "ring" ({"blocks", "group", "newest", "lap", "oldest", "blocks_read", "erased",
/// "records_aged_out"}, then "cursors" when read cursors are committed in the image: a list of
/// {"id", "next", "undelivered", "aged_out"}, each cursor's id, the number of the first
/// record it has not delivered, the records the ring holds after it and those that aged out
/// before it delivered them; with "disagreements" before "records_aged_out" when something in the
/// image disagrees with its ring, one line each: see `logfmt verify`; the blocks in the
/// ring, blocks per erase group, the newest block and its lap, the oldest block, the blocks
/// read from it to the newest, the erased value its headers give, and the records begun
/// before the oldest block, from its ring header: the records that aged out, the one whose
/// start was erased and whose end the oldest block begins with included).
///
/// A ring image (a dump of a flash region holding a ring log) is read from its oldest block
/// to its newest; "bytes" and "blocks" count the blocks read. A log that ends in zeros to
/// the end of the file (space preallocated or mapped and never written) has "zero_fill":
/// {"offset", "bytes"} after "packs", its "tail" null and no damage for it. When the records
/// are decoded (--decode), "content" follows: {"kind", "records", "undecoded", "sequences"
/// (null or [lowest, highest]), "counts" (by operation or field name), "column_families"}; with
/// --format leveldb, rocksdb, pebble or auto, "dialect" (as in `logfmt verify`). With several
/// files, each object ends with "file" (its path).
///
/// A directory of numbered logs (NNNNNN.log) without a CURRENT file is a WAL directory, read
/// alone as one log (with --recovery tolerate, as LevelDB reads): the report `verify` gives
/// of it, a line per log with its number, size, records and damage (in JSON, the object
/// `verify --json` prints for it).
#[derive(Debug, clap::Args)]
pub(crate) struct StatsArgs {
    #[command(flatten)]
    chunks: ChunkArgs,
    /// Also count what the records hold: auto (by the file's name: NNNNNN.log holds
    /// WriteBatches, MANIFEST-NNNNNN VersionEdits), raw (nothing), write-batch, version-edit.
    #[arg(long, value_enum, value_name = "WHAT", default_value_t)]
    decode: crate::decode::Decode,
    #[command(flatten)]
    threads: crate::parallel::ThreadsArg,
    #[command(flatten)]
    wal: crate::wal_dir::WalDirArgs,
}

/// A source that walks each block it loads with logfmt-std's [`Walk`]: the chunks counted as
/// the reader reads the records.
struct Counted<'a> {
    source: Source<'a>,
    input: &'a Input,
    walk: Walk,
    /// Blocks loaded so far.
    place: u64,
}

impl BlockSource for Counted<'_> {
    type Error = io::Error;

    fn load_next(&mut self) -> io::Result<()> {
        self.source.load_next()?;
        let block = self.source.block();
        let block_start = self.input.block_offset(self.place);
        self.place += 1;
        self.walk.block(block_start, block, |_, _, _| {});
        Ok(())
    }

    fn block(&self) -> &[u8] {
        self.source.block()
    }

    fn skip(&mut self, bytes: u64) -> io::Result<()> {
        self.source.skip(bytes)
    }

    fn is_last(&self) -> bool {
        self.source.is_last()
    }
}

/// What `stats` counts of the records of one part of a log read on several threads
/// ([`crate::parallel`]).
#[derive(Debug, Default)]
struct Part {
    sizes: Sizes,
    tally: crate::decode::Tally,
    packed: (u64, u64),
    /// Whether the part's first record decodes as the content named (see `verify`).
    first_decodes: Option<bool>,
}

impl Part {
    fn add(&mut self, content: crate::decode::Content, confirmed: bool, found: Found<'_>) {
        use crate::decode::Content;
        match found {
            Found::Record { data, index, .. } => {
                self.sizes.add(data.len() as u64);
                if !confirmed && self.first_decodes.is_none() {
                    self.first_decodes = Some(crate::decode::decodes(content, data));
                }
                if content != Content::Raw {
                    self.tally.add(content, data);
                }
                if index.is_some() {
                    self.packed.0 += 1;
                    self.packed.1 += HEADER_SIZE as u64 + data.len() as u64;
                }
            }
            Found::Oversized(record) => self.sizes.add(record.len),
            Found::Damage(_) | Found::ReadError { .. } => {}
        }
    }
}

#[derive(Debug, Default)]
struct Sizes {
    /// How many records have each size.
    counts: BTreeMap<u64, u64>,
    count: u64,
    total: u64,
}

impl Sizes {
    fn add(&mut self, size: u64) {
        *self.counts.entry(size).or_insert(0) += 1;
        self.count += 1;
        self.total = self.total.saturating_add(size);
    }

    /// The smallest, the median (the lower one of an even count) and the largest size.
    /// Adds the sizes `other` counted.
    fn merge(&mut self, other: Self) {
        for (size, n) in other.counts {
            *self.counts.entry(size).or_insert(0) += n;
        }
        self.count += other.count;
        self.total = self.total.saturating_add(other.total);
    }

    fn min_median_max(&self) -> Option<(u64, u64, u64)> {
        let min = *self.counts.keys().next()?;
        let max = *self.counts.keys().next_back()?;
        let at = (self.count - 1) / 2;
        let mut seen = 0;
        let median = self
            .counts
            .iter()
            .find(|&(_, &n)| {
                seen += n;
                seen > at
            })
            .map_or(max, |(&size, _)| size);
        Some((min, median, max))
    }
}

/// The read cursors committed in the ring image `log` (none if it cannot be read again, as a
/// pipe cannot), read a block at a time: memory does not grow with the image.
fn cursors_of(
    log: &logfmt_std::LogFile,
    ring: &logfmt_std::advanced::RingImage,
) -> Vec<super::stats_report::Cursor> {
    logfmt_std::advanced::ring_cursors_in_file(log.file(), ring)
        .unwrap_or_default()
        .into_iter()
        .map(|c| super::stats_report::Cursor {
            id: c.cursor.id,
            next: c.cursor.next,
            undelivered: c.undelivered,
            aged_out: c.aged_out,
            ahead: c.ahead,
        })
        .collect()
}

/// Runs `stats`.
pub(crate) fn run(args: &StatsArgs) -> Result<(), CliError> {
    if let Some(dir) = crate::wal_dir::wal_dir(&args.chunks.files.files, &args.wal)? {
        let format = &args.chunks.format;
        super::wal::refuse(&[
            (args.chunks.erased.is_some(), "--erased"),
            (format.format.is_some(), "--format"),
            (format.log_number.is_some(), "--log-number"),
        ])?;
        return super::wal::stats(dir, args.chunks.json);
    }
    crate::targets::each(
        &args.chunks.files.files,
        args.chunks.json,
        |target, several| run_one(args, target, several),
    )
}

/// Runs `stats` on one file; `several` when more are read.
fn run_one(
    args: &StatsArgs,
    target: &crate::targets::Target,
    several: bool,
) -> Result<(), CliError> {
    let report = gather(args, target, several)?;
    crate::render::print(&report, args.chunks.json)?;
    Ok(())
}

/// What was counted of a log's records and chunks, on one thread or several.
#[derive(Debug, Default)]
struct Counts {
    sizes: Sizes,
    tally: crate::decode::Tally,
    /// Records read from packs, and what they would cost as plain records.
    packed: (u64, u64),
    /// Damage is only counted (its regions are not listed).
    damage: DamageReports,
    layout: ChunkCounts,
    /// The torn tail, as the reader ended the log.
    tail: Option<Damage>,
    stale: Option<StaleTail>,
}

/// Reads `target` and gathers what `stats` reports of it.
fn gather(
    args: &StatsArgs,
    target: &crate::targets::Target,
    several: bool,
) -> Result<StatsReport, CliError> {
    let input = Input::open(&target.path, args.chunks.erased)?;
    // What the records hold, as `cat` decodes it: by name, confirmed by the first record.
    let read = input.chunk_read(args.chunks.erased, &args.chunks.format)?;
    let mut content = args
        .decode
        .content(&target.path, target.kind)
        .in_dialect(read.dialect);
    let confirmed = args.decode != Decode::Auto || content == Content::Raw;
    let options = LogReaderOptions::new()
        .read(read.clone())
        .recovery(RecoveryMode::SkipAnyCorruptedRecords);
    let counts = match count_in_parts(args, &input, &options, &read, &mut content, confirmed)? {
        Some(counts) => counts,
        None => count_in_order(&input, &options, &read, &mut content, confirmed)?,
    };
    // Read as Pebble's: the first damage ends the log, as damage or as its torn end.
    let mut counts = counts;
    let first = counts
        .damage
        .kept()
        .iter()
        .map(|d| d.offset)
        .chain(counts.tail.map(|t| t.offset))
        .min();
    let pebble = crate::story::pebble_end(&input.log, &read, first)?;
    if let Some(end) = &pebble
        && let Some(tail) = end.torn()
    {
        counts.damage = DamageReports::new(counts.damage.keep());
        counts.tail = Some(tail);
        counts.layout.pebble_end(end);
    }
    let mut report = report(&input, counts, content, several);
    report.pebble_synced = super::PebbleSyncedJson::of(pebble.as_ref());
    report.pebble_row = pebble.as_ref().map(super::pebble_line);
    let dialect = args.chunks.format.dialect(&input.log)?;
    report.dialect_line = dialect.line();
    report.dialect = super::DialectJson::of(&dialect);
    Ok(report)
}

/// Counts a large clean log on every core: its records by ranges, its chunks by runs of
/// blocks; `None` for a log that is not (it is then read in order).
fn count_in_parts(
    args: &StatsArgs,
    input: &Input,
    options: &LogReaderOptions,
    read: &logfmt_std::advanced::ReadOptions,
    content: &mut Content,
    confirmed: bool,
) -> Result<Option<Counts>, CliError> {
    let log = &input.log;
    let threads = args.threads.count();
    let decoding = *content;
    let in_parts = crate::parallel::scan_clean(
        input,
        options,
        threads,
        COUNTING,
        &Progress::bytes("stats", log.len_at_open()),
        |part: &mut Part, found| part.add(decoding, confirmed, found),
    )?;
    let layouts = match in_parts {
        Some(_) => {
            crate::parallel::blocks(log, threads, |part: &mut Option<Walk>, start, block| {
                part.get_or_insert_with(|| Walk::new(read))
                    .block(start, block, |_, _, _| {});
            })?
        }
        None => None,
    };
    let (Some(clean), Some(layouts)) = (in_parts, layouts) else {
        return Ok(None);
    };
    let mut counts = Counts::default();
    // The first record decides the content, as in order.
    let decodes = clean.ranges.iter().find_map(|part| part.first_decodes);
    if decodes == Some(false) {
        *content = Content::Raw;
    }
    for part in clean.ranges {
        counts.sizes.merge(part.sizes);
        if decodes != Some(false) {
            counts.tally.merge(part.tally);
        }
        counts.packed.0 += part.packed.0;
        counts.packed.1 += part.packed.1;
    }
    for part in layouts.iter().flatten() {
        counts.layout.merge(part.counts());
    }
    counts.tail = clean.outcome.tail;
    counts.stale = clean.stale;
    Ok(Some(counts))
}

/// Counts a log read in order, its chunks as its blocks are loaded.
fn count_in_order(
    input: &Input,
    options: &LogReaderOptions,
    read: &logfmt_std::advanced::ReadOptions,
    content: &mut Content,
    mut confirmed: bool,
) -> Result<Counts, CliError> {
    let log = &input.log;
    let source = Counted {
        source: input.source()?,
        input,
        walk: Walk::new(read),
        place: 0,
    };
    let mut reader = LogReader::new(source, options);
    let mut read_error = None;
    let mut counts = Counts::default();
    let progress = Progress::bytes("stats", log.len_at_open());
    // Only sizes are needed: records are held only up to the counting limit (packs are
    // read).
    let outcome = scan(
        &mut reader,
        &progress,
        COUNTING,
        |found| -> Result<(), CliError> {
            match found {
                Found::Record { data, index, .. } => {
                    counts.sizes.add(data.len() as u64);
                    if !confirmed {
                        confirmed = true;
                        if !crate::decode::decodes(*content, data) {
                            *content = Content::Raw;
                        }
                    }
                    if *content != Content::Raw {
                        counts.tally.add(*content, data);
                    }
                    if index.is_some() {
                        // What it would cost as a plain record: a header and its bytes.
                        counts.packed.0 += 1;
                        counts.packed.1 += HEADER_SIZE as u64 + data.len() as u64;
                    }
                }
                Found::Oversized(record) => counts.sizes.add(record.len),
                Found::Damage(d) => counts.damage.push(d),
                Found::ReadError { error, .. } => read_error = Some(error),
            }
            Ok(())
        },
    )?;
    drop(progress);
    if let Some(error) = read_error {
        return Err(log.read_error(error).into());
    }
    // The reader stops at an old record: the rest of the file is read (and its layout
    // counted) to count the stale bytes.
    counts.stale = if input.ring.is_none() {
        StaleTail::after(&mut reader, None).map_err(|e| log.read_error(e))?
    } else {
        None
    };
    counts.tail = outcome.tail;
    counts.layout = reader.into_inner().walk.into_counts();
    Ok(counts)
}

/// The report of what was counted in `input`, its records holding `content`.
fn report(input: &Input, mut counts: Counts, content: Content, several: bool) -> StatsReport {
    let log = &input.log;
    let mut tail = counts.tail.map(|t| input.damage(t));
    // Zeros to the end of the file: neither a torn tail nor damage (told as `verify` and
    // `dump` tell it).
    let zero_fill = match (tail, &input.ring) {
        (Some(t), None) => crate::story::classify(log, &t),
        _ => None,
    };
    if let (Some(t), Some(_)) = (tail, zero_fill) {
        counts.damage.withdraw_tail(t.offset);
        tail = None;
    }
    let Counts {
        sizes,
        tally,
        packed,
        damage,
        layout,
        stale,
        ..
    } = counts;
    let pebble_eof = stale.is_some_and(|s| crate::story::is_pebble_eof_trailer(log, &s));
    let [full, first, middle, last] = layout.by_type;
    StatsReport {
        path: log.path().to_path_buf(),
        bytes: layout.bytes,
        blocks: layout.blocks,
        records: sizes.count,
        payload_bytes: sizes.total,
        record_size: sizes.min_median_max().map(|(min, median, max)| RecordSize {
            min,
            median,
            max,
        }),
        chunks: Chunks {
            full,
            first,
            middle,
            last,
            unknown: layout.unknown,
        },
        header_bytes: layout.header_bytes,
        trailer_bytes: layout.trailer_bytes,
        skipped_bytes: layout.skipped_bytes,
        damage: DamageCount {
            regions: damage.count(),
            bytes: damage.bytes(),
        },
        tail: tail.map(super::EndJson::from),
        stale: stale.map(|s| Stale {
            offset: s.offset,
            bytes: s.bytes,
            log_number: s.log_number,
            kind: pebble_eof.then_some("pebble_eof_trailer"),
        }),
        ring: input.ring.as_ref().map(|ring| Ring {
            ring: ring.into(),
            image_bytes: log.len_at_open(),
            records_aged_out: ring.records_aged_out(),
            cursors: cursors_of(log, ring),
        }),
        dialect: None,
        dialect_line: None,
        pebble_synced: None,
        pebble_row: None,
        packs: (layout.pack_chunks > 0).then(|| Packs {
            chunks: layout.pack_chunks,
            records: packed.0,
            bytes: layout.pack_bytes,
            plain_bytes: packed.1,
            bytes_saved: packed.1 as i64 - layout.pack_bytes as i64,
        }),
        zero_fill: zero_fill
            .map(|crate::story::Tail::ZeroFilled { offset, bytes }| SpanJson { offset, bytes }),
        content: content_count(content, tally),
        file: several.then(|| log.path().to_string_lossy().into_owned()),
    }
}

/// What the records hold, counted, where they are decoded.
fn content_count(content: Content, tally: crate::decode::Tally) -> Option<ContentCount> {
    let kind = match content {
        Content::Raw => return None,
        Content::VersionEdit => "version_edit",
        Content::WriteBatch => "write_batch",
        Content::PebbleBatch => "pebble_batch",
    };
    Some(ContentCount {
        kind,
        records: tally.records,
        undecoded: tally.undecoded,
        sequences: tally.sequences.map(|(low, high)| [low, high]),
        counts: tally.kinds,
        column_families: tally.families.into_iter().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sizes as the sorted list of every record's gave them.
    fn by_sorting(sizes: &[u64]) -> Option<(u64, u64, u64)> {
        let mut sorted = sizes.to_vec();
        sorted.sort_unstable();
        let n = sorted.len();
        (n > 0).then(|| (sorted[0], sorted[(n - 1) / 2], sorted[n - 1]))
    }

    #[test]
    fn the_histogram_median_is_the_sorted_lists() {
        let cases: [&[u64]; 7] = [
            &[],
            &[5],
            &[5, 1],
            &[0, 0, 0, 9],
            &[3, 1, 2],
            &[7, 7, 1, 1, 1, 9, 9, 9, 9],
            &[100, 0, 100, 0],
        ];
        for case in cases {
            let mut sizes = Sizes::default();
            for &size in case {
                sizes.add(size);
            }
            assert_eq!(sizes.min_median_max(), by_sorting(case), "{case:?}");
            assert_eq!(sizes.count, case.len() as u64);
            assert_eq!(sizes.total, case.iter().sum::<u64>());
        }
    }

    #[test]
    fn many_records_of_few_sizes_take_few_entries() {
        let mut sizes = Sizes::default();
        for i in 0..1_000_000u64 {
            sizes.add(i % 3);
        }
        assert_eq!(sizes.counts.len(), 3);
        assert_eq!(sizes.min_median_max(), Some((0, 1, 2)));
    }
}
