//! `logfmt stats`: what a log holds, in numbers.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;

use logfmt_core::parts::block::{BlockParser, Parsed};
use logfmt_std::{
    LogReaderOptions, RecoveryMode,
    advanced::{BlockSource, HEADER_SIZE, LogReader, StaleTail},
};

use crate::error::CliError;
use crate::format::FormatArgs;
use crate::image::{Input, Source};
use crate::layout::{Layout, View};
use crate::options::Erased;
use crate::output::write_json_line;
use crate::progress::Progress;
use crate::reports::DamageReports;
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
/// the stale bytes from the end of the log to the end of the file); and for a ring image only,
/// "ring" ({"blocks", "group", "newest", "lap", "oldest", "blocks_read", "erased",
/// "records_aged_out"}, with "disagreements" before "records_aged_out" when something in the
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
/// (null or [lowest, highest]), "counts" (by operation or field name), "column_families"}. With several
/// files, each object ends with "file" (its path).
#[derive(Debug, clap::Args)]
pub(crate) struct StatsArgs {
    /// One JSON object (keys above).
    #[arg(long)]
    json: bool,
    /// Read a flash image whose erased bytes are 0xFF (ff) or 0x00 (00).
    #[arg(long, value_enum, value_name = "BYTE")]
    erased: Option<Erased>,
    #[command(flatten)]
    format: FormatArgs,
    /// Also count what the records hold: auto (by the file's name: NNNNNN.log holds
    /// WriteBatches, MANIFEST-NNNNNN VersionEdits), raw (nothing), write-batch, version-edit.
    #[arg(long, value_enum, value_name = "WHAT", default_value_t)]
    decode: crate::decode::Decode,
    #[command(flatten)]
    threads: crate::parallel::ThreadsArg,
    /// The log files (`-`: standard input; a directory: a LevelDB or RocksDB database, its
    /// MANIFEST and live write-ahead logs).
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
}

/// A source that counts the physical layout of each block it loads.
struct Counted<'a> {
    source: Source<'a>,
    input: &'a Input,
    view: View,
    layout: Layout,
    /// Blocks loaded so far.
    place: u64,
    /// An old record ended the log: the rest of the file is stale.
    ended: bool,
}

impl BlockSource for Counted<'_> {
    type Error = io::Error;

    fn load_next(&mut self) -> io::Result<()> {
        self.source.load_next()?;
        let block = self.source.block();
        let block_start = self.input.block_offset(self.place);
        self.place += 1;
        count_block(
            &mut self.layout,
            &mut self.view,
            &mut self.ended,
            block_start,
            block,
        );
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

/// Record sizes, as a histogram: the exact median in memory that grows with the number of
/// distinct sizes, not of records (a log of n distinct sizes holds at least n²/2 bytes of
/// payload, so at most about the square root of twice the log's size).
/// Counts the chunks of the block at file offset `block_start` in `layout` (nothing but its
/// size once the log has `ended` at an old record), deciding the format in `view`.
fn count_block(
    layout: &mut Layout,
    view: &mut View,
    ended: &mut bool,
    block_start: u64,
    block: &[u8],
) {
    if block.is_empty() {
        return;
    }
    layout.blocks += 1;
    layout.bytes += block.len() as u64;
    if *ended {
        return;
    }
    for item in BlockParser::new(block).rules(view.rules) {
        view.decide(&item);
        layout.count(block_start, &item);
        *ended |= matches!(item, Parsed::OldRecord { .. });
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

/// Runs `stats`.
pub(crate) fn run(args: &StatsArgs) -> Result<(), CliError> {
    crate::targets::each(&args.files, args.json, |target, several| {
        run_one(args, target, several)
    })
}

/// Runs `stats` on one file; `several` when more are read.
fn run_one(
    args: &StatsArgs,
    target: &crate::targets::Target,
    several: bool,
) -> Result<(), CliError> {
    use crate::decode::{Content, Decode, Tally};
    let input = Input::open(&target.path, args.erased)?;
    // What the records hold, as `cat` decodes it: by name, confirmed by the first record.
    let mut content = args.decode.content(&target.path, target.kind);
    let mut confirmed = args.decode != Decode::Auto || content == Content::Raw;
    let log = &input.log;
    let (view, read) = View::new(&input, args.erased, &args.format)?;
    let options = LogReaderOptions::new()
        .read(read)
        .recovery(RecoveryMode::SkipAnyCorruptedRecords);
    let threads = args.threads.count();
    // A large clean log, on every core: its records by ranges, its chunks by runs of blocks.
    let in_parts = crate::parallel::scan_clean(
        &input,
        &options,
        threads,
        COUNTING,
        &Progress::bytes("stats", log.len_at_open()),
        |part: &mut Part, found| part.add(content, confirmed, found),
    )?;
    let layouts = match in_parts {
        Some(_) => crate::parallel::blocks(log, threads, |layout: &mut Layout, start, block| {
            let mut view = view;
            count_block(layout, &mut view, &mut false, start, block);
        })?,
        None => None,
    };
    let mut sizes = Sizes::default();
    let mut tally = Tally::default();
    // Records read from packs, and what they would cost as plain records.
    let mut packed = (0u64, 0u64);
    // Damage is only counted (its regions are not listed).
    let mut damage = DamageReports::new(0);
    let (outcome, stale, layout) = if let (Some(clean), Some(layouts)) = (in_parts, layouts) {
        // The first record decides the content, as below.
        let decodes = clean.ranges.iter().find_map(|part| part.first_decodes);
        if decodes == Some(false) {
            content = Content::Raw;
        }
        for part in clean.ranges {
            sizes.merge(part.sizes);
            if decodes != Some(false) {
                tally.merge(part.tally);
            }
            packed.0 += part.packed.0;
            packed.1 += part.packed.1;
        }
        let mut layout = Layout::default();
        for part in &layouts {
            layout.merge(part);
        }
        (clean.outcome, clean.stale, layout)
    } else {
        let source = Counted {
            source: input.source()?,
            input: &input,
            view,
            layout: Layout::default(),
            place: 0,
            ended: false,
        };
        let mut reader = LogReader::new(source, &options);
        let mut read_error = None;
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
                        sizes.add(data.len() as u64);
                        if !confirmed {
                            confirmed = true;
                            if !crate::decode::decodes(content, data) {
                                content = Content::Raw;
                            }
                        }
                        if content != Content::Raw {
                            tally.add(content, data);
                        }
                        if index.is_some() {
                            // What it would cost as a plain record: a header and its bytes.
                            packed.0 += 1;
                            packed.1 += HEADER_SIZE as u64 + data.len() as u64;
                        }
                    }
                    Found::Oversized(record) => sizes.add(record.len),
                    Found::Damage(d) => damage.push(d),
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
        let stale = if input.ring.is_none() {
            StaleTail::after(&mut reader, None).map_err(|e| log.read_error(e))?
        } else {
            None
        };
        (outcome, stale, reader.into_inner().layout)
    };
    let mut tail = outcome.tail.map(|t| input.damage(t));
    // Zeros to the end of the file: neither a torn tail nor damage (told as `verify` and `dump`
    // tell it).
    let zero_fill = match (tail, &input.ring) {
        (Some(t), None) => crate::story::classify(log, &t),
        _ => None,
    };
    if let (Some(t), Some(_)) = (tail, zero_fill) {
        damage.withdraw_tail(t.offset);
        tail = None;
    }
    let pebble_eof = stale.is_some_and(|s| crate::story::is_pebble_eof_trailer(log, &s));
    let record_size = sizes.min_median_max();
    let payload = sizes.total;
    let damaged: u64 = damage.bytes();
    let [full, first, middle, last] = layout.by_type;
    let mut out = io::stdout().lock();
    if args.json {
        use super::SpanJson;
        /// `--json`: the keys documented on [`StatsArgs`], in that order.
        #[derive(serde::Serialize)]
        struct Doc {
            bytes: u64,
            blocks: u64,
            records: u64,
            payload_bytes: u64,
            record_size: Option<RecordSize>,
            chunks: Chunks,
            header_bytes: u64,
            trailer_bytes: u64,
            skipped_bytes: u64,
            damage: DamageCount,
            tail: Option<SpanJson>,
            stale: Option<Stale>,
            #[serde(skip_serializing_if = "Option::is_none")]
            ring: Option<Ring>,
            #[serde(skip_serializing_if = "Option::is_none")]
            packs: Option<Packs>,
            #[serde(skip_serializing_if = "Option::is_none")]
            zero_fill: Option<SpanJson>,
            #[serde(skip_serializing_if = "Option::is_none")]
            content: Option<ContentJson>,
            #[serde(skip_serializing_if = "Option::is_none")]
            file: Option<String>,
        }
        /// What the records hold: "kind" (write_batch or version_edit), the records decoded
        /// and those that did not decode in full, the batches' lowest and highest sequence
        /// numbers, the operations (or fields) by name, the column families written to.
        #[derive(serde::Serialize)]
        struct ContentJson {
            kind: &'static str,
            records: u64,
            undecoded: u64,
            sequences: Option<[u64; 2]>,
            counts: std::collections::BTreeMap<&'static str, u64>,
            column_families: Vec<u32>,
        }
        /// Records read from packs: how many, the bytes of the pack chunks (headers
        /// included), what the same records would take as plain records (a header and the
        /// record each), and the difference.
        #[derive(serde::Serialize)]
        struct Packs {
            chunks: u64,
            records: u64,
            bytes: u64,
            plain_bytes: u64,
            bytes_saved: i64,
        }
        #[derive(serde::Serialize)]
        struct Ring {
            #[serde(flatten)]
            ring: super::RingJson,
            records_aged_out: u32,
        }
        #[derive(serde::Serialize)]
        struct RecordSize {
            min: u64,
            median: u64,
            max: u64,
        }
        #[derive(serde::Serialize)]
        struct Chunks {
            full: u64,
            first: u64,
            middle: u64,
            last: u64,
            unknown: u64,
        }
        #[derive(serde::Serialize)]
        struct DamageCount {
            regions: u64,
            bytes: u64,
        }
        #[derive(serde::Serialize)]
        struct Stale {
            offset: u64,
            bytes: u64,
            log_number: u32,
        }
        let doc = Doc {
            bytes: layout.bytes,
            blocks: layout.blocks,
            records: sizes.count,
            payload_bytes: payload,
            record_size: record_size.map(|(min, median, max)| RecordSize { min, median, max }),
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
                bytes: damaged,
            },
            tail: tail.map(|t| SpanJson {
                offset: t.offset,
                bytes: t.bytes,
            }),
            stale: stale.map(|s| Stale {
                offset: s.offset,
                bytes: s.bytes,
                log_number: s.log_number,
            }),
            ring: input.ring.as_ref().map(|ring| Ring {
                ring: ring.into(),
                records_aged_out: ring.records_aged_out(),
            }),
            packs: (layout.pack_chunks > 0).then(|| Packs {
                chunks: layout.pack_chunks,
                records: packed.0,
                bytes: layout.pack_bytes,
                plain_bytes: packed.1,
                bytes_saved: packed.1 as i64 - layout.pack_bytes as i64,
            }),
            zero_fill: zero_fill
                .map(|crate::story::Tail::ZeroFilled { offset, bytes }| SpanJson { offset, bytes }),
            content: (content != Content::Raw).then(|| ContentJson {
                kind: match content {
                    Content::VersionEdit => "version_edit",
                    _ => "write_batch",
                },
                records: tally.records,
                undecoded: tally.undecoded,
                sequences: tally.sequences.map(|(low, high)| [low, high]),
                counts: tally.kinds.clone(),
                column_families: tally.families.iter().copied().collect(),
            }),
            file: several.then(|| log.path().to_string_lossy().into_owned()),
        };
        write_json_line(&mut out, &doc)?;
        return Ok(());
    }
    use super::plural;
    let percent = |n: u64| {
        if layout.bytes == 0 {
            0.0
        } else {
            n as f64 * 100.0 / layout.bytes as f64
        }
    };
    // Exact bytes, and from 1 KiB on what a person reads (`12345 bytes (12.06 KiB)`).
    let human = |n: u64| {
        if n < 1024 {
            plural(n, "byte")
        } else {
            format!("{n} bytes ({})", indicatif::HumanBytes(n))
        }
    };
    let mut rows: Vec<(&str, String)> = vec![
        (
            "size",
            format!(
                "{} in {}",
                human(layout.bytes),
                plural(layout.blocks, "block")
            ),
        ),
        (
            "records",
            format!("{}, {} of payload", sizes.count, human(payload)),
        ),
        (
            "record sizes",
            record_size.map_or_else(
                || "-".to_owned(),
                |(min, median, max)| format!("min {min}, median {median}, max {max}"),
            ),
        ),
        (
            "chunks",
            format!(
                "{}: FULL {full}, FIRST {first}, MIDDLE {middle}, LAST {last}{}, other {}",
                layout.chunks(),
                layout.packs_note(),
                layout.unknown
            ),
        ),
        (
            "overhead",
            format!(
                "{} of headers ({:.2}%), {} of trailers ({:.2}%)",
                plural(layout.header_bytes, "byte"),
                percent(layout.header_bytes),
                plural(layout.trailer_bytes, "byte"),
                percent(layout.trailer_bytes)
            ),
        ),
        (
            "skipped",
            if layout.skipped_bytes == 0 {
                "none".to_owned()
            } else {
                format!(
                    "{} (zero headers or erased flash)",
                    plural(layout.skipped_bytes, "byte")
                )
            },
        ),
        (
            "damage",
            if damage.is_empty() {
                "none".to_owned()
            } else {
                format!(
                    "{}, {} (see `logfmt verify --recovery skip`)",
                    plural(damage.count(), "region"),
                    plural(damaged, "byte")
                )
            },
        ),
        (
            "end",
            match (tail, stale) {
                (None, _) if zero_fill.is_some() => match zero_fill {
                    Some(crate::story::Tail::ZeroFilled { offset, bytes }) => format!(
                        "clean, then a zero-filled tail: {} of zeros from offset {offset} \
                         (preallocated or mapped, never written; not torn, not damage)",
                        plural(bytes, "byte")
                    ),
                    None => String::new(),
                },
                (None, Some(stale)) if pebble_eof => format!(
                    "clean, at Pebble's EOF trailer (an empty chunk of log {}) at offset {}",
                    stale.log_number, stale.offset
                ),
                (Some(t), _) => format!(
                    "torn tail: {} at offset {}",
                    plural(t.bytes, "byte"),
                    t.offset
                ),
                (None, Some(stale)) => format!(
                    "clean, at an old record (log {}) at offset {}: {} left by an earlier use \
                     of the file",
                    stale.log_number,
                    stale.offset,
                    plural(stale.bytes, "byte")
                ),
                (None, None) => "clean".to_owned(),
            },
        ),
    ];
    if content != Content::Raw {
        let counts: Vec<String> = tally
            .kinds
            .iter()
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        let what = match (content, tally.records) {
            (Content::VersionEdit, 1) => "version edit",
            (Content::VersionEdit, _) => "version edits",
            (_, 1) => "write batch",
            _ => "write batches",
        };
        let mut text = format!("{} {what}", tally.records);
        if let Some((low, high)) = tally.sequences {
            text += &format!(", sequences {low}..{high}");
        }
        if !counts.is_empty() {
            text += &format!("; {}", counts.join(", "));
        }
        if !tally.families.is_empty() {
            let families: Vec<String> = tally.families.iter().map(u32::to_string).collect();
            text += &format!("; column families {}", families.join(", "));
        }
        if tally.undecoded > 0 {
            text += &format!("; {} that do not decode", plural(tally.undecoded, "record"));
        }
        rows.push(("content", text));
    }
    if layout.pack_chunks > 0 {
        rows.push((
            "packs",
            format!(
                "{} in {}: {} ({} as plain records, {} saved)",
                plural(packed.0, "record"),
                plural(layout.pack_chunks, "chunk"),
                plural(layout.pack_bytes, "byte"),
                plural(packed.1, "byte"),
                packed.1 as i64 - layout.pack_bytes as i64
            ),
        ));
    }
    if let Some(image) = &input.ring {
        let ring = image.ring();
        rows.push((
            "ring",
            format!(
                "{} in {} of {}, newest block {} in lap {}; read from block {} ({})",
                plural(u64::from(ring.blocks()), "block"),
                plural(
                    u64::from(ring.blocks().div_ceil(ring.group())),
                    "erase group"
                ),
                plural(u64::from(ring.group()), "block"),
                ring.head(),
                ring.lap(),
                image.oldest(),
                plural(image.order().count() as u64, "block"),
            ),
        ));
        rows.push((
            "aged out",
            format!(
                "{} (begun before the oldest block, by its ring header)",
                plural(u64::from(image.records_aged_out()), "record")
            ),
        ));
        for disagreement in image.disagreements() {
            rows.push(("disagrees", disagreement.to_string()));
        }
    }
    writeln!(
        out,
        "{}",
        logfmt_std::advanced::EscapedPath::new(log.path())
    )?;
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (key, value) in rows {
        writeln!(out, "  {key:<width$}  {value}")?;
    }
    Ok(())
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
