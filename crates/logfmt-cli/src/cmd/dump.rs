//! `logfmt dump`: the physical layout of a log, chunk by chunk.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use logfmt_std::block::{BlockParser, ChunkClass, ChunkRules, Parsed};
use logfmt_std::{BLOCK_SIZE, BlockSource, LogFile, ReadOptions, RecordType};

use crate::error::CliError;
use crate::format::FormatArgs;
use crate::options::Erased;
use crate::output::Json;
use crate::progress::Progress;

/// Print every chunk of a log, and every region that is not a chunk.
///
/// Each block is walked as LevelDB's reader walks it: chunks with their file offset, type,
/// payload length and checksum state; block trailers; and the regions that end a block early,
/// with what LevelDB does with them (a zero header or erased flash: skipped silently; a bad
/// checksum or length: dropped and reported; a chunk cut short at the end of the file: a torn
/// write). A chunk of a type LevelDB does not know is listed and marked dropped. The last line
/// sums it up. Like `leveldbutil dump`, but physical, and precise about damage.
///
/// In a recyclable log (--format recyclable or auto), chunks show their log number, and a
/// chunk of another log number is an old record, left by an earlier use of a recycled file:
/// the end of this log. The rest of the file is listed as one stale region (read it with
/// --log-number set to the old number to list its chunks).
///
/// --json prints one JSON object per line. Each has "kind": "chunk" for a chunk, with
/// "offset", "block", "type" (FULL, FIRST, MIDDLE, LAST, RECYCLABLE_FULL, RECYCLABLE_FIRST,
/// RECYCLABLE_MIDDLE, RECYCLABLE_LAST, ZERO or "unknown"), "type_byte", "length" (of the
/// payload), "checksum" ("ok") and "stored_checksum", plus "log_number" for a recyclable
/// chunk; or a region ("trailer", "torn", "zero_header", "erased", "bad_length",
/// "checksum_mismatch", "old_record", "stale") with "offset", "block", "length" (to the end
/// of the block; for "stale", to the end of the file), plus "declared" for bad_length,
/// "stored_checksum", "computed_checksum" for checksum_mismatch and "log_number" for
/// old_record; the last line is {"kind": "summary", "bytes", "blocks", "chunks", "full",
/// "first", "middle", "last", "unknown", "trailer_bytes", "skipped_bytes", "damaged_bytes",
/// "torn_bytes", "stale_bytes"}.
#[derive(Debug, clap::Args)]
pub(crate) struct DumpArgs {
    /// One JSON object per line (keys above).
    #[arg(long)]
    json: bool,
    /// Read a flash image whose erased bytes are 0xFF (ff) or 0x00 (00).
    #[arg(long, value_enum, value_name = "BYTE")]
    erased: Option<Erased>,
    #[command(flatten)]
    format: FormatArgs,
    /// The log file to dump.
    #[arg(value_name = "FILE")]
    file: PathBuf,
}

/// Counts over the whole file.
#[derive(Debug, Default)]
pub(crate) struct Layout {
    pub(crate) bytes: u64,
    pub(crate) blocks: u64,
    /// Chunks of types FULL, FIRST, MIDDLE, LAST (legacy or recyclable).
    pub(crate) by_type: [u64; 4],
    /// Chunks of any other type (dropped by LevelDB).
    pub(crate) unknown: u64,
    pub(crate) header_bytes: u64,
    pub(crate) trailer_bytes: u64,
    /// Zero headers and erased regions: skipped without a report.
    pub(crate) skipped_bytes: u64,
    /// Bad checksums and lengths: dropped with a report.
    pub(crate) damaged_bytes: u64,
    pub(crate) damaged_regions: u64,
    pub(crate) torn_bytes: u64,
    /// From an old record (a chunk of another log number) to the end of the file.
    pub(crate) stale_bytes: u64,
    /// Where the log ended at an old record (the old record, or the garbage before it), and
    /// the old record's log number.
    pub(crate) old_record: Option<(u64, u32)>,
    /// The damaged region that ended the previous block, if any: file offset and length.
    last_damage: Option<(u64, u64)>,
    /// A damaged region found to be the bytes of a recycled file's earlier use: the garbage
    /// between where the new records end and the old record at the next block.
    pub(crate) stale_garbage: Option<(u64, u64)>,
}

impl Layout {
    pub(crate) fn chunks(&self) -> u64 {
        self.by_type.iter().sum::<u64>() + self.unknown
    }

    /// Counts one item of the block starting at file offset `block_start`.
    pub(crate) fn count(&mut self, block_start: u64, item: &Parsed<'_>) {
        let damage = self.last_damage.take();
        match item {
            Parsed::Chunk(chunk) => {
                self.header_bytes += chunk.header_len as u64;
                match RecordType::try_from(chunk.record_type)
                    .ok()
                    .and_then(RecordType::fragment_kind)
                {
                    Some(kind) => self.by_type[kind as usize] += 1,
                    None => self.unknown += 1,
                }
            }
            Parsed::Trailer { len, .. } => self.trailer_bytes += *len as u64,
            Parsed::Truncated { len, .. } => self.torn_bytes += *len as u64,
            Parsed::ZeroHeader { len, .. } | Parsed::Erased { len, .. } => {
                self.skipped_bytes += *len as u64;
            }
            Parsed::BadLength { offset, len, .. }
            | Parsed::ChecksumMismatch { offset, len, .. } => {
                self.damaged_bytes += *len as u64;
                self.damaged_regions += 1;
                if offset + len == BLOCK_SIZE {
                    self.last_damage = Some((block_start + *offset as u64, *len as u64));
                }
            }
            Parsed::OldRecord {
                offset,
                len,
                log_number,
            } => {
                let at = block_start + *offset as u64;
                self.stale_bytes += *len as u64;
                self.old_record = Some((at, *log_number));
                // The damage just before, up to this block: the earlier use's bytes too.
                if let Some((from, bytes)) = damage
                    && *offset == 0
                    && from + bytes == at
                {
                    self.damaged_bytes -= bytes;
                    self.damaged_regions -= 1;
                    self.stale_bytes += bytes;
                    self.stale_garbage = Some((from, bytes));
                    self.old_record = Some((from, *log_number));
                }
            }
        }
    }

    /// Counts a block read after the log ended at an old record: stale as a whole.
    pub(crate) fn count_stale(&mut self, len: usize) {
        self.stale_bytes += len as u64;
    }
}

/// How `dump` and `stats` read chunk headers: the reader's chunk rules, with its format
/// decision.
#[derive(Debug, Clone, Copy)]
pub(crate) struct View {
    pub(crate) rules: ChunkRules,
}

impl View {
    /// The view for `--erased` and the format flags on `log`.
    pub(crate) fn new(
        log: &LogFile,
        erased: Option<Erased>,
        format: &FormatArgs,
    ) -> Result<(Self, ReadOptions), CliError> {
        let erased = erased.map(Erased::byte);
        let read = format.read_options(log, ReadOptions::new().erased(erased))?;
        let view = Self {
            rules: ChunkRules::new(&read),
        };
        Ok((view, read))
    }

    /// Decides an `auto` format on the first chunk of a known type, as the reader does.
    pub(crate) fn decide(&mut self, item: &Parsed<'_>) {
        if let Parsed::Chunk(chunk) = item {
            self.rules.decide(chunk.record_type, chunk.log_number);
        }
    }

    /// What the reader does with a chunk of type `record_type`: `None` if it is read.
    fn verdict(&self, record_type: u8) -> Option<String> {
        match self.rules.classify(record_type) {
            ChunkClass::Fragment(_) => None,
            ChunkClass::OtherFormat => Some(format!(
                "dropped: unexpected legacy record type {record_type} in recyclable log"
            )),
            ChunkClass::Ignorable => {
                Some("ignorable type: skipped without a report (RocksDB)".into())
            }
            _ => Some(format!("dropped: unknown record type {record_type}")),
        }
    }
}

/// Walks every block of `log`, calling `visit` with each block's file offset and items (and
/// the counts so far). After an old record (the end of a recyclable log), the rest of the
/// file is counted as stale and visited as one [`Item::Stale`].
pub(crate) fn walk(
    log: &LogFile,
    mut view: View,
    progress: &Progress,
    mut visit: impl FnMut(Item<'_>, &View, &Layout) -> Result<(), CliError>,
) -> Result<Layout, CliError> {
    let mut source = log.source();
    let mut layout = Layout::default();
    let mut block_start = 0u64;
    let mut stale_from = None;
    loop {
        progress.set(block_start);
        source.load_next().map_err(|e| log.read_error(e))?;
        let block = source.block();
        if block.is_empty() {
            break;
        }
        layout.blocks += 1;
        layout.bytes += block.len() as u64;
        if stale_from.is_some() {
            layout.count_stale(block.len());
        } else {
            for item in BlockParser::new(block).rules(view.rules) {
                view.decide(&item);
                layout.count(block_start, &item);
                visit(Item::Parsed(block_start, &item), &view, &layout)?;
                if matches!(item, Parsed::OldRecord { .. }) {
                    stale_from = Some(block_start + block.len() as u64);
                }
            }
        }
        if block.len() < BLOCK_SIZE {
            break;
        }
        block_start += BLOCK_SIZE as u64;
    }
    if let Some(from) = stale_from
        && layout.bytes > from
    {
        visit(
            Item::Stale {
                offset: from,
                len: layout.bytes - from,
            },
            &view,
            &layout,
        )?;
    }
    Ok(layout)
}

/// What [`walk`] visits.
#[derive(Debug)]
pub(crate) enum Item<'a> {
    /// An item of the block at a file offset.
    Parsed(u64, &'a Parsed<'a>),
    /// The rest of the file after the block of an old record.
    Stale {
        /// Where it begins.
        offset: u64,
        /// Its length.
        len: u64,
    },
}

/// The name of a chunk type, or "unknown".
pub(crate) fn type_name(record_type: u8) -> &'static str {
    RecordType::try_from(record_type).map_or("unknown", RecordType::name)
}

/// One line of human output: offset, type, length, note.
struct Line {
    offset: u64,
    what: String,
    length: u64,
    note: String,
}

/// A region line: `kind` at `offset`, `len` bytes.
fn region(offset: u64, len: u64, kind: &'static str, note: String) -> (Line, Json) {
    (
        Line {
            offset,
            what: kind.replace('_', "-"),
            length: len,
            note,
        },
        Json::obj([
            ("kind", Json::str(kind)),
            ("offset", offset.into()),
            ("block", (offset / BLOCK_SIZE as u64).into()),
            ("length", len.into()),
        ]),
    )
}

fn describe(item: &Item<'_>, view: &View, layout: &Layout) -> (Line, Json) {
    let (block_start, item) = match *item {
        Item::Parsed(block_start, item) => (block_start, item),
        Item::Stale { offset, len } => {
            return region(
                offset,
                len,
                "stale",
                "left by an earlier use of the file: not part of this log".into(),
            );
        }
    };
    let block = block_start / BLOCK_SIZE as u64;
    let region = |offset: usize, len: usize, kind: &'static str, note: String| {
        region(block_start + offset as u64, len as u64, kind, note)
    };
    match *item {
        Parsed::Chunk(chunk) => {
            let offset = block_start + chunk.offset as u64;
            let name = type_name(chunk.record_type);
            let what = if name == "unknown" || name == "ZERO" {
                format!("type {}", chunk.record_type)
            } else {
                name.to_owned()
            };
            let mut note = match chunk.log_number {
                Some(n) => format!("log {n}; checksum ok ({:#010x})", chunk.stored_checksum),
                None => format!("checksum ok ({:#010x})", chunk.stored_checksum),
            };
            if let Some(verdict) = view.verdict(chunk.record_type) {
                note += &format!("; {verdict}");
            }
            let mut json = Json::obj([
                ("kind", Json::str("chunk")),
                ("offset", offset.into()),
                ("block", block.into()),
                ("type", Json::str(name)),
                ("type_byte", u64::from(chunk.record_type).into()),
                ("length", (chunk.payload.len() as u64).into()),
                ("checksum", Json::str("ok")),
                ("stored_checksum", u64::from(chunk.stored_checksum).into()),
            ]);
            if let Some(n) = chunk.log_number {
                json = with(json, [("log_number", u64::from(n).into())]);
            }
            let line = Line {
                offset,
                what,
                length: chunk.payload.len() as u64,
                note,
            };
            (line, json)
        }
        Parsed::Trailer { offset, len } => {
            region(offset, len, "trailer", "block trailer, skipped".into())
        }
        Parsed::Truncated { offset, len } => region(
            offset,
            len,
            "torn",
            "the file ends inside this chunk: a torn write, the end of the log".into(),
        ),
        Parsed::ZeroHeader { offset, len } => region(
            offset,
            len,
            "zero_header",
            "skipped to the end of the block WITHOUT a report (LevelDB)".into(),
        ),
        Parsed::Erased { offset, len } => region(
            offset,
            len,
            "erased",
            "erased flash: nothing written to the end of the block".into(),
        ),
        Parsed::BadLength {
            offset,
            len,
            declared,
        } => {
            let (line, json) = region(
                offset,
                len,
                "bad_length",
                format!("dropped: bad record length (declares {declared} bytes)"),
            );
            (line, with(json, [("declared", u64::from(declared).into())]))
        }
        Parsed::ChecksumMismatch {
            offset,
            len,
            stored,
            computed,
        } => {
            let (line, json) = region(
                offset,
                len,
                "checksum_mismatch",
                format!(
                    "dropped: checksum mismatch (stored {stored:#010x}, computed {computed:#010x})"
                ),
            );
            let extra = [
                ("stored_checksum", u64::from(stored).into()),
                ("computed_checksum", u64::from(computed).into()),
            ];
            (line, with(json, extra))
        }
        Parsed::OldRecord {
            offset,
            len,
            log_number,
        } => {
            let mut note = format!(
                "old record (log {log_number}): the end of this log; the rest of the file is \
                 left by an earlier use of it"
            );
            if let Some((from, bytes)) = layout.stale_garbage
                && from + bytes == block_start + offset as u64
            {
                note += &format!(
                    " (so are the {bytes} bytes before it from offset {from}, where this log's \
                     records end: not damage)"
                );
            }
            let (line, json) = region(offset, len, "old_record", note);
            (
                line,
                with(json, [("log_number", u64::from(log_number).into())]),
            )
        }
    }
}

/// `json` (an object) with more keys.
fn with<const N: usize>(json: Json, more: [(&'static str, Json); N]) -> Json {
    match json {
        Json::Obj(mut pairs) => {
            pairs.extend(more);
            Json::Obj(pairs)
        }
        other => other,
    }
}

/// Runs `dump`.
pub(crate) fn run(args: &DumpArgs) -> Result<(), CliError> {
    let log = LogFile::open(&args.file)?;
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let width = log.len_at_open().to_string().len().max("OFFSET".len());
    if !args.json {
        writeln!(
            out,
            "{:>width$}  {:<17} {:>6}  NOTE",
            "OFFSET", "TYPE", "LENGTH"
        )?;
    }
    let (view, _) = View::new(&log, args.erased, &args.format)?;
    let progress = Progress::bytes("dump", log.len_at_open());
    let layout = walk(&log, view, &progress, |item, view, layout| {
        let (line, json) = describe(&item, view, layout);
        if args.json {
            writeln!(out, "{json}")?;
        } else {
            writeln!(
                out,
                "{:>width$}  {:<17} {:>6}  {}",
                line.offset, line.what, line.length, line.note
            )?;
        }
        Ok(())
    })?;
    drop(progress);
    if args.json {
        let [full, first, middle, last] = layout.by_type;
        let summary = Json::obj([
            ("kind", Json::str("summary")),
            ("bytes", layout.bytes.into()),
            ("blocks", layout.blocks.into()),
            ("chunks", layout.chunks().into()),
            ("full", full.into()),
            ("first", first.into()),
            ("middle", middle.into()),
            ("last", last.into()),
            ("unknown", layout.unknown.into()),
            ("trailer_bytes", layout.trailer_bytes.into()),
            ("skipped_bytes", layout.skipped_bytes.into()),
            ("damaged_bytes", layout.damaged_bytes.into()),
            ("torn_bytes", layout.torn_bytes.into()),
            ("stale_bytes", layout.stale_bytes.into()),
        ]);
        writeln!(out, "{summary}")?;
    } else {
        use super::plural;
        let [full, first, middle, last] = layout.by_type;
        writeln!(
            out,
            "{}, {}, {} (FULL {full}, FIRST {first}, MIDDLE {middle}, LAST {last}, other {}), \
             {} of trailers, {} skipped, {} dropped in {}, {} torn{}",
            plural(layout.bytes, "byte"),
            plural(layout.blocks, "block"),
            plural(layout.chunks(), "chunk"),
            layout.unknown,
            plural(layout.trailer_bytes, "byte"),
            plural(layout.skipped_bytes, "byte"),
            plural(layout.damaged_bytes, "byte"),
            plural(layout.damaged_regions, "region"),
            plural(layout.torn_bytes, "byte"),
            match layout.old_record {
                Some((offset, log_number)) => format!(
                    "; the log ends at an old record (log {log_number}) at offset {offset}, {} \
                     stale",
                    plural(layout.stale_bytes, "byte")
                ),
                None => String::new(),
            },
        )?;
    }
    out.flush()?;
    Ok(())
}
