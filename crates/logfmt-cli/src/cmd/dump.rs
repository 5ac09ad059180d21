//! `logfmt chunks` (formerly `logfmt dump`): the physical layout of a log, chunk by chunk.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use logfmt_core::pack::{self, Pack};
use logfmt_core::parts::block::{ChunkClass, Parsed};
use logfmt_core::parts::ring::RingHeader;
use logfmt_std::advanced::FragmentKind;
use logfmt_std::advanced::{BLOCK_SIZE, BlockRole};

use crate::error::CliError;
use crate::format::FormatArgs;
use crate::image::Input;
use crate::layout::{Item, Layout, View, ring_header, type_name, walk};
use crate::options::Erased;
use crate::output::write_json_line;
use crate::progress::Progress;

/// Print every chunk of a log, and every region that is not a chunk.
///
/// The physical view. For the decoded records, as `leveldbutil dump` prints them, use
/// `logfmt cat`. `logfmt dump` is a deprecated alias of this command (it says so on standard
/// error).
///
/// Each block is walked as LevelDB's reader walks it: chunks with their file offset, type,
/// payload length and checksum state; block trailers; and the regions that end a block early,
/// with what LevelDB does with them (a zero header or erased flash: skipped silently; a bad
/// checksum or length: dropped and reported; a chunk cut short at the end of the file: a torn
/// write). In a flash image (--erased), the flash rules apply: erased padding up to a chunk,
/// bytes torn by a power cut up to the writer's resume marker, and damage that a well-formed
/// chunk of the block follows end there, and the walk goes on. A chunk of a type LevelDB does
/// not know is listed and marked dropped. The last line
/// sums it up. Like `leveldbutil dump`, but physical, and precise about damage.
///
/// A ring image (a dump of a flash region holding a ring log: its blocks begin with ring
/// headers) is walked in the order it is read: from its oldest block to its newest, with the
/// erased value its headers give. The first lines say which block is the newest, its lap, and
/// where reading starts; each block is introduced by a line with its ring header (its lap and
/// the records begun before it) and what it is to the log; the blocks that are not read (after
/// the newest: not written in this lap, or the erase group erased ahead; before the oldest:
/// not part of the log) are listed first. Offsets are offsets in the image.
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
/// chunk; or a region ("trailer", "torn", "padding", "zero_header", "erased", "bad_length",
/// "checksum_mismatch", "old_record", "stale") with "offset", "block", "length" (to the end
/// of the block; for "stale", to the end of the file), plus "declared" for bad_length,
/// "stored_checksum", "computed_checksum" for checksum_mismatch and "log_number" for
/// old_record; the last line is {"kind": "summary", "bytes", "blocks", "chunks", "full",
/// "first", "middle", "last", "unknown", "trailer_bytes", "skipped_bytes", "damaged_bytes",
/// "torn_bytes", "stale_bytes"}. A ring image's first line is {"kind": "ring", "blocks",
/// "group", "newest", "lap", "oldest", "blocks_read", "erased"}, and each block has a line
/// {"kind": "ring_block", "offset", "block", "role" ("read", "read_as_erased", "ahead",
/// "not_in_log", "outside"), "place" (its place in the reading order, 0 for the oldest, or
/// null), "lap", "records" (from its ring header, or null)}; the summary counts the blocks
/// read.
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
    /// The log files (`-`: standard input; a directory: a LevelDB or RocksDB database, its
    /// MANIFEST and live write-ahead logs).
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
}

/// One line of human output: offset, type, length, note.
struct Line {
    offset: u64,
    what: String,
    length: u64,
    note: String,
}

/// One line of `--json`: the keys documented on [`DumpArgs`], in that order, after "kind".
#[derive(Debug, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Entry {
    Chunk {
        offset: u64,
        block: u64,
        #[serde(rename = "type")]
        type_name: &'static str,
        type_byte: u8,
        length: u64,
        checksum: &'static str,
        stored_checksum: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        log_number: Option<u32>,
        /// A whole pack in this chunk: the records it holds.
        #[serde(skip_serializing_if = "Option::is_none")]
        pack_records: Option<u32>,
    },
    Trailer(Region),
    Torn(Region),
    Padding(Region),
    ZeroHeader(Region),
    Erased(Region),
    BadLength {
        #[serde(flatten)]
        region: Region,
        declared: u16,
    },
    ChecksumMismatch {
        #[serde(flatten)]
        region: Region,
        stored_checksum: u32,
        computed_checksum: u32,
    },
    OldRecord {
        #[serde(flatten)]
        region: Region,
        log_number: u32,
    },
    Stale(Region),
    Ring(super::RingJson),
    RingBlock {
        offset: u64,
        block: u64,
        role: &'static str,
        place: Option<u32>,
        lap: Option<u32>,
        records: Option<u32>,
    },
    Summary {
        bytes: u64,
        blocks: u64,
        chunks: u64,
        full: u64,
        first: u64,
        middle: u64,
        last: u64,
        /// Pack chunks (only in a log that has them).
        #[serde(skip_serializing_if = "is_zero")]
        pack: u64,
        unknown: u64,
        trailer_bytes: u64,
        skipped_bytes: u64,
        damaged_bytes: u64,
        torn_bytes: u64,
        stale_bytes: u64,
    },
}

/// Where a region that is not a chunk lies.
#[derive(Debug, serde::Serialize)]
struct Region {
    offset: u64,
    block: u64,
    /// To the end of the block (of the file, for a stale region).
    length: u64,
}

/// A region line: `kind` at `offset`, `len` bytes.
fn region(offset: u64, len: u64, kind: &'static str, note: String) -> (Line, Region) {
    (
        Line {
            offset,
            what: kind.replace('_', "-"),
            length: len,
            note,
        },
        Region {
            offset,
            block: offset / BLOCK_SIZE as u64,
            length: len,
        },
    )
}

/// The line of a ring image's block.
fn ring_block(index: u32, role: BlockRole, header: Option<RingHeader>) -> (Line, Entry) {
    let offset = u64::from(index) * BLOCK_SIZE as u64;
    let (name, place) = match role {
        BlockRole::Read { place } => ("read", Some(place)),
        BlockRole::ReadAsErased { place } => ("read_as_erased", Some(place)),
        BlockRole::Ahead => ("ahead", None),
        BlockRole::NotInLog => ("not_in_log", None),
        _ => ("outside", None),
    };
    let mut note = format!("block {index} {role}");
    if place == Some(0) {
        note += " (the oldest)";
    }
    note += &match header {
        Some(h) => format!(
            "; ring header: lap {}, {} records begun before it",
            h.lap, h.records
        ),
        None => "; no ring header".to_owned(),
    };
    let line = Line {
        offset,
        what: "ring-block".to_owned(),
        length: BLOCK_SIZE as u64,
        note,
    };
    let json = Entry::RingBlock {
        offset,
        block: u64::from(index),
        role: name,
        place,
        lap: header.map(|h| h.lap),
        records: header.map(|h| h.records),
    };
    (line, json)
}

fn describe(item: &Item<'_>, view: &View, layout: &Layout) -> (Line, Entry) {
    let (block_start, item) = match *item {
        Item::Parsed(block_start, item) => (block_start, item),
        Item::RingBlock {
            index,
            role,
            header,
        } => return ring_block(index, role, header),
        Item::Stale { offset, len } => {
            let (line, region) = region(
                offset,
                len,
                "stale",
                "left by an earlier use of the file: not part of this log".into(),
            );
            return (line, Entry::Stale(region));
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
            if let Some(verdict) = view.verdict(chunk.record_type, chunk.payload.len()) {
                note += &format!("; {verdict}");
            }
            if view.rules.classify(chunk.record_type) == ChunkClass::RingHeader
                && let Some(h) = ring_header(&chunk)
            {
                note += &format!(
                    " (lap {}, {} records begun before this block; ring of {} blocks, {} per \
                     erase group)",
                    h.lap, h.records, h.blocks, h.group
                );
            }
            let mut pack_records = None;
            if let ChunkClass::Pack(kind) = view.rules.classify(chunk.record_type) {
                let (records, what) = pack_note(kind, chunk.payload);
                pack_records = records;
                note += &format!("; {what}");
            }
            let json = Entry::Chunk {
                offset,
                block,
                type_name: name,
                type_byte: chunk.record_type,
                length: chunk.payload.len() as u64,
                checksum: "ok",
                stored_checksum: chunk.stored_checksum,
                log_number: chunk.log_number,
                pack_records,
            };
            let line = Line {
                offset,
                what,
                length: chunk.payload.len() as u64,
                note,
            };
            (line, json)
        }
        Parsed::Trailer { offset, len } => {
            let (line, region) = region(offset, len, "trailer", "block trailer, skipped".into());
            (line, Entry::Trailer(region))
        }
        Parsed::Truncated { offset, len } => {
            let (line, region) = region(
                offset,
                len,
                "torn",
                "the file ends inside this chunk: a torn write, the end of the log".into(),
            );
            (line, Entry::Torn(region))
        }
        Parsed::Torn { offset, len } => {
            let (line, region) = region(
                offset,
                len,
                "torn",
                "torn by a power cut: the writer went on at the resume marker after it".into(),
            );
            (line, Entry::Torn(region))
        }
        Parsed::Padding { offset, len } => {
            let (line, region) = region(
                offset,
                len,
                "padding",
                "erased flash up to the next chunk (a flush's unprogrammed word, or the words \
                 a reopening writer skipped)"
                    .into(),
            );
            (line, Entry::Padding(region))
        }
        Parsed::ZeroHeader { offset, len } => {
            let (line, region) = region(
                offset,
                len,
                "zero_header",
                "skipped to the end of the block WITHOUT a report (LevelDB)".into(),
            );
            (line, Entry::ZeroHeader(region))
        }
        Parsed::Erased { offset, len } => {
            let (line, region) = region(
                offset,
                len,
                "erased",
                "erased flash: nothing written to the end of the block".into(),
            );
            (line, Entry::Erased(region))
        }
        Parsed::BadLength {
            offset,
            len,
            declared,
        } => {
            let (line, region) = region(
                offset,
                len,
                "bad_length",
                format!("dropped: bad record length (declares {declared} bytes)"),
            );
            (line, Entry::BadLength { region, declared })
        }
        Parsed::ChecksumMismatch {
            offset,
            len,
            stored,
            computed,
        } => {
            let (line, region) = region(
                offset,
                len,
                "checksum_mismatch",
                format!(
                    "dropped: checksum mismatch (stored {stored:#010x}, computed {computed:#010x})"
                ),
            );
            let json = Entry::ChecksumMismatch {
                region,
                stored_checksum: stored,
                computed_checksum: computed,
            };
            (line, json)
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
            let (line, region) = region(offset, len, "old_record", note);
            (line, Entry::OldRecord { region, log_number })
        }
    }
}

/// Runs `dump`.
pub(crate) fn run(args: &DumpArgs) -> Result<(), CliError> {
    crate::targets::each(&args.files, args.json, |target, several| {
        run_one(args, &target.path, several)
    })
}

/// Runs `dump` on one file; `several` when more are read.
fn run_one(args: &DumpArgs, path: &std::path::Path, several: bool) -> Result<(), CliError> {
    let input = Input::open(path, args.erased)?;
    let log = &input.log;
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    if several && args.json {
        /// With several files, the line before each file's lines: `{"file": PATH}`.
        #[derive(serde::Serialize)]
        struct FileJson<'a> {
            file: &'a str,
        }
        let file = log.path().to_string_lossy();
        write_json_line(&mut out, &FileJson { file: &file })?;
    }
    let width = log.len_at_open().to_string().len().max("OFFSET".len());
    if let Some(ring) = &input.ring {
        if args.json {
            write_json_line(&mut out, &Entry::Ring(ring.into()))?;
        } else {
            let order: Vec<String> = ring.order().map(|b| b.to_string()).collect();
            writeln!(out, "a ring image: {ring}")?;
            writeln!(out, "reading order: blocks {}", order.join(", "))?;
            for disagreement in ring.disagreements() {
                writeln!(out, "the ring image disagrees: {disagreement}")?;
            }
        }
    }
    if !args.json {
        writeln!(
            out,
            "{:>width$}  {:<17} {:>6}  NOTE",
            "OFFSET", "TYPE", "LENGTH"
        )?;
    }
    let (view, _) = View::new(&input, args.erased, &args.format)?;
    let progress = Progress::bytes("chunks", log.len_at_open());
    // Where a run of zero headers that may reach the end of the file began.
    let mut zeros_from = None;
    let layout = walk(&input, view, &progress, |item, view, layout| {
        let (line, json) = describe(&item, view, layout);
        match line.what.as_ref() {
            "zero-header" => zeros_from = zeros_from.or(Some(line.offset)),
            "trailer" => {}
            _ => zeros_from = None,
        }
        if args.json {
            write_json_line(&mut out, &json)?;
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
    let zero_fill = match (zeros_from, &input.ring) {
        (Some(offset), None) => crate::story::zero_filled_from(log, offset),
        _ => None,
    };
    if args.json {
        let [full, first, middle, last] = layout.by_type;
        let summary = Entry::Summary {
            bytes: layout.bytes,
            blocks: layout.blocks,
            chunks: layout.chunks(),
            full,
            first,
            middle,
            last,
            pack: layout.pack_chunks,
            unknown: layout.unknown,
            trailer_bytes: layout.trailer_bytes,
            skipped_bytes: layout.skipped_bytes,
            damaged_bytes: layout.damaged_bytes,
            torn_bytes: layout.torn_bytes,
            stale_bytes: layout.stale().map_or(0, |s| s.bytes),
        };
        if let Some(crate::story::Tail::ZeroFilled { offset, bytes }) = zero_fill {
            /// The end of the log told as `verify` and `stats` tell it.
            #[derive(serde::Serialize)]
            struct ZeroFill {
                kind: &'static str,
                offset: u64,
                bytes: u64,
            }
            write_json_line(
                &mut out,
                &ZeroFill {
                    kind: "zero_fill",
                    offset,
                    bytes,
                },
            )?;
        }
        write_json_line(&mut out, &summary)?;
    } else {
        use super::plural;
        let [full, first, middle, last] = layout.by_type;
        writeln!(
            out,
            "{}, {}, {} (FULL {full}, FIRST {first}, MIDDLE {middle}, LAST {last}{}, other {}), \
             {} of trailers, {} skipped, {} dropped in {}, {} torn{}",
            plural(layout.bytes, "byte"),
            plural(layout.blocks, "block"),
            plural(layout.chunks(), "chunk"),
            layout.packs_note(),
            layout.unknown,
            plural(layout.trailer_bytes, "byte"),
            plural(layout.skipped_bytes, "byte"),
            plural(layout.damaged_bytes, "byte"),
            plural(layout.damaged_regions, "region"),
            plural(layout.torn_bytes, "byte"),
            match layout.stale() {
                Some(stale) => format!(
                    "; the log ends at an old record (log {}) at offset {}, {} stale",
                    stale.log_number,
                    stale.offset,
                    plural(stale.bytes, "byte")
                ),
                None => String::new(),
            },
        )?;
        if let Some(zeros) = zero_fill {
            writeln!(out, "{}", zeros.explain())?;
        }
    }
    out.flush()?;
    Ok(())
}

/// What a pack chunk holds, for its note: the records of a whole pack (and their count), or
/// the chunk's place in a pack cut into chunks.
fn pack_note(kind: FragmentKind, payload: &[u8]) -> (Option<u32>, String) {
    if kind != FragmentKind::Full {
        return (None, "part of a pack cut into chunks".into());
    }
    match Pack::parse(payload) {
        Ok(parsed) if parsed.codec() == pack::STORED => {
            let sizes: Vec<String> = parsed
                .records()
                .take(8)
                .map_while(Result::ok)
                .map(|(_, data)| data.len().to_string())
                .collect();
            let more = if parsed.count() > 8 { ", ..." } else { "" };
            let what = format!(
                "a pack of {} records of {}{more} bytes",
                parsed.count(),
                sizes.join(", ")
            );
            (Some(parsed.count()), what)
        }
        Ok(parsed) => {
            let what = format!(
                "a pack of {} records, coded (codec {}, {} bytes decoded)",
                parsed.count(),
                parsed.codec(),
                parsed.decoded_len().unwrap_or(0)
            );
            (Some(parsed.count()), what)
        }
        Err(error) => (None, format!("a pack that does not hold together: {error}")),
    }
}

/// For `skip_serializing_if`: a count of 0.
#[expect(clippy::trivially_copy_pass_by_ref, reason = "serde's signature")]
fn is_zero(n: &u64) -> bool {
    *n == 0
}
