//! `logfmt dump`: the physical layout of a log, chunk by chunk.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use logfmt_std::block::{BlockParser, ChunkRules, Parsed};
use logfmt_std::{BLOCK_SIZE, BlockSource, LogFile, RecordType};

use crate::error::CliError;
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
/// --json prints one JSON object per line. Each has "kind": "chunk" for a chunk, with
/// "offset", "block", "type" (FULL, FIRST, MIDDLE, LAST, ZERO or "unknown"), "type_byte",
/// "length" (of the payload), "checksum" ("ok") and "stored_checksum"; or a region
/// ("trailer", "torn", "zero_header", "erased", "bad_length", "checksum_mismatch") with
/// "offset", "block", "length" (to the end of the block), plus "declared" for bad_length and
/// "stored_checksum", "computed_checksum" for checksum_mismatch; the last line is
/// {"kind": "summary", "bytes", "blocks", "chunks", "full", "first", "middle", "last",
/// "unknown", "trailer_bytes", "skipped_bytes", "damaged_bytes", "torn_bytes"}.
#[derive(Debug, clap::Args)]
pub(crate) struct DumpArgs {
    /// One JSON object per line (keys above).
    #[arg(long)]
    json: bool,
    /// Read a flash image whose erased bytes are 0xFF (ff) or 0x00 (00).
    #[arg(long, value_enum, value_name = "BYTE")]
    erased: Option<Erased>,
    /// The log file to dump.
    #[arg(value_name = "FILE")]
    file: PathBuf,
}

/// Counts over the whole file.
#[derive(Debug, Default)]
pub(crate) struct Layout {
    pub(crate) bytes: u64,
    pub(crate) blocks: u64,
    /// Chunks of types FULL, FIRST, MIDDLE, LAST.
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
}

impl Layout {
    pub(crate) fn chunks(&self) -> u64 {
        self.by_type.iter().sum::<u64>() + self.unknown
    }

    /// Counts one item of the block starting at `block_start`.
    pub(crate) fn count(&mut self, item: &Parsed<'_>) {
        match item {
            Parsed::Chunk(chunk) => {
                self.header_bytes += chunk.header_len as u64;
                match chunk.record_type {
                    t @ 1..=4 => self.by_type[usize::from(t - 1)] += 1,
                    _ => self.unknown += 1,
                }
            }
            Parsed::Trailer { len, .. } => self.trailer_bytes += *len as u64,
            Parsed::Truncated { len, .. } => self.torn_bytes += *len as u64,
            Parsed::ZeroHeader { len, .. } | Parsed::Erased { len, .. } => {
                self.skipped_bytes += *len as u64;
            }
            Parsed::BadLength { len, .. }
            | Parsed::ChecksumMismatch { len, .. }
            | Parsed::OldRecord { len, .. } => {
                self.damaged_bytes += *len as u64;
                self.damaged_regions += 1;
            }
        }
    }
}

/// Walks every block of `log`, calling `visit` with each block's file offset and items.
pub(crate) fn walk(
    log: &LogFile,
    erased: Option<Erased>,
    progress: &Progress,
    mut visit: impl FnMut(u64, &Parsed<'_>) -> Result<(), CliError>,
) -> Result<Layout, CliError> {
    let mut source = log.source();
    let mut rules = ChunkRules::default();
    rules.erased = erased.map(Erased::byte);
    let mut layout = Layout::default();
    let mut block_start = 0u64;
    loop {
        progress.set(block_start);
        source.load_next().map_err(|e| log.read_error(e))?;
        let block = source.block();
        if block.is_empty() {
            break;
        }
        layout.blocks += 1;
        layout.bytes += block.len() as u64;
        for item in BlockParser::new(block).rules(rules) {
            layout.count(&item);
            visit(block_start, &item)?;
        }
        if block.len() < BLOCK_SIZE {
            break;
        }
        block_start += BLOCK_SIZE as u64;
    }
    Ok(layout)
}

/// The name of a chunk type.
pub(crate) fn type_name(record_type: u8) -> &'static str {
    match RecordType::try_from(record_type) {
        Ok(RecordType::Full) => "FULL",
        Ok(RecordType::First) => "FIRST",
        Ok(RecordType::Middle) => "MIDDLE",
        Ok(RecordType::Last) => "LAST",
        Ok(RecordType::Zero) => "ZERO",
        _ => "unknown",
    }
}

/// One line of human output: offset, type, length, note.
struct Line {
    offset: u64,
    what: String,
    length: u64,
    note: String,
}

fn describe(block_start: u64, item: &Parsed<'_>) -> (Line, Json) {
    let block = block_start / BLOCK_SIZE as u64;
    let region = |offset: usize, len: usize, kind: &'static str, note: String| {
        let offset = block_start + offset as u64;
        (
            Line {
                offset,
                what: kind.replace('_', "-"),
                length: len as u64,
                note,
            },
            Json::obj([
                ("kind", Json::str(kind)),
                ("offset", offset.into()),
                ("block", block.into()),
                ("length", (len as u64).into()),
            ]),
        )
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
            let mut note = format!("checksum ok ({:#010x})", chunk.stored_checksum);
            if !(1..=4).contains(&chunk.record_type) {
                note += &format!("; dropped: unknown record type {}", chunk.record_type);
            }
            let json = Json::obj([
                ("kind", Json::str("chunk")),
                ("offset", offset.into()),
                ("block", block.into()),
                ("type", Json::str(name)),
                ("type_byte", u64::from(chunk.record_type).into()),
                ("length", (chunk.payload.len() as u64).into()),
                ("checksum", Json::str("ok")),
                ("stored_checksum", u64::from(chunk.stored_checksum).into()),
            ]);
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
            let (line, json) = region(
                offset,
                len,
                "old_record",
                format!("a chunk of an earlier log (number {log_number}): the end of the log"),
            );
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
    let progress = Progress::bytes("dump", log.len_at_open());
    let layout = walk(&log, args.erased, &progress, |block_start, item| {
        let (line, json) = describe(block_start, item);
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
        ]);
        writeln!(out, "{summary}")?;
    } else {
        use super::plural;
        let [full, first, middle, last] = layout.by_type;
        writeln!(
            out,
            "{}, {}, {} (FULL {full}, FIRST {first}, MIDDLE {middle}, LAST {last}, other {}), \
             {} of trailers, {} skipped, {} dropped in {}, {} torn",
            plural(layout.bytes, "byte"),
            plural(layout.blocks, "block"),
            plural(layout.chunks(), "chunk"),
            layout.unknown,
            plural(layout.trailer_bytes, "byte"),
            plural(layout.skipped_bytes, "byte"),
            plural(layout.damaged_bytes, "byte"),
            plural(layout.damaged_regions, "region"),
            plural(layout.torn_bytes, "byte"),
        )?;
    }
    out.flush()?;
    Ok(())
}
