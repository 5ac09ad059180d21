//! `logfmt chunks` (formerly `logfmt dump`): the physical layout of a log, chunk by chunk.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use logfmt_core::pack::{self, Pack};
use logfmt_core::parts::ring::RingHeader;
use logfmt_std::advanced::{BLOCK_SIZE, BlockRole, BlockSource, FragmentKind, ReadOptions};
use logfmt_std::layout::{ChunkRole, Counts, Span, SpanKind, Walk, type_name};

use crate::error::CliError;
use crate::format::FormatArgs;
use crate::image::Input;
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
    /// A kind of span this listing does not name yet.
    Other(Region),
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

/// What [`walk`] visits.
#[derive(Debug)]
enum Item<'a> {
    /// A span of a block, and its bytes.
    Span(&'a Span, &'a [u8]),
    /// The rest of the file after the block of an old record.
    Stale {
        /// Where it begins.
        offset: u64,
        /// Its length.
        len: u64,
    },
    /// A block of a ring image: what it is to the log, and its ring header.
    RingBlock {
        /// The block's index in the image.
        index: u32,
        /// What it is to the log.
        role: BlockRole,
        /// Its intact ring header, if it has one.
        header: Option<RingHeader>,
    },
}

/// Walks every block of `input` (a ring image's in the ring's order) with logfmt-std's
/// [`Walk`], calling `visit` with each span (and the counts so far). After an old record (the
/// end of a recyclable log), the rest of the file is counted as stale and visited as one
/// [`Item::Stale`]. A ring image's blocks are each visited first as an [`Item::RingBlock`]:
/// those not read before the others, in the image's order, then each block read before its
/// spans.
fn walk(
    input: &Input,
    read: &ReadOptions,
    progress: &Progress,
    mut visit: impl FnMut(Item<'_>, &Counts) -> Result<(), CliError>,
) -> Result<Counts, CliError> {
    let log = &input.log;
    let mut source = input.source()?;
    let mut walk = Walk::new(read);
    let mut place = 0u64;
    let mut stale_from = None;
    if let Some(ring) = &input.ring {
        for index in 0..ring.image_blocks() {
            if !matches!(
                ring.role(index),
                BlockRole::Read { .. } | BlockRole::ReadAsErased { .. }
            ) {
                visit(ring_item(ring, index), walk.counts())?;
            }
        }
    }
    loop {
        // The first error `visit` returns: the walk's callback cannot return one.
        let mut failed = Ok(());
        let block_start = input.block_offset(place);
        progress.set(place * BLOCK_SIZE as u64);
        source.load_next().map_err(|e| log.read_error(e))?;
        let block = source.block();
        if block.is_empty() {
            break;
        }
        if let Some(ring) = &input.ring {
            let index = u32::try_from(block_start / BLOCK_SIZE as u64).unwrap_or(u32::MAX);
            visit(ring_item(ring, index), walk.counts())?;
        }
        let was_ended = walk.ended();
        walk.block(block_start, block, |span, bytes, counts| {
            if failed.is_ok() {
                failed = visit(Item::Span(span, bytes), counts);
            }
        });
        failed?;
        if !was_ended && walk.ended() {
            stale_from = Some(block_start + block.len() as u64);
        }
        if block.len() < BLOCK_SIZE {
            break;
        }
        place += 1;
    }
    let counts = walk.into_counts();
    if let Some(from) = stale_from
        && counts.bytes > from
    {
        visit(
            Item::Stale {
                offset: from,
                len: counts.bytes - from,
            },
            &counts,
        )?;
    }
    Ok(counts)
}

/// The item of block `index` of a ring image: its role and ring header.
fn ring_item<'a>(ring: &logfmt_std::advanced::RingImage, index: u32) -> Item<'a> {
    Item::RingBlock {
        index,
        role: ring.role(index),
        header: ring.header(index),
    }
}

/// What the reader does with a chunk of this role and `record_type`: `None` if it is read.
fn verdict(role: ChunkRole, record_type: u8) -> Option<String> {
    Some(match role {
        ChunkRole::Fragment(_) | ChunkRole::Pack(_) => return None,
        ChunkRole::OtherFormat => {
            format!("dropped: unexpected legacy record type {record_type} in recyclable log")
        }
        ChunkRole::ResumeMarker => {
            "resume marker: the flash writer went on here after a power cut".into()
        }
        ChunkRole::Cursor => "read cursor, not a record: how far a consumer delivered the \
                              records (see `logfmt stats`)"
            .into(),
        ChunkRole::Ignorable => "ignorable type: skipped without a report (RocksDB)".into(),
        ChunkRole::RingHeader => "ring header, not a record".into(),
        ChunkRole::SetCompression => {
            "RocksDB's compression record: the records after it are compressed".into()
        }
        _ => format!("dropped: unknown record type {record_type}"),
    })
}

fn describe(item: &Item<'_>, counts: &Counts) -> (Line, Entry) {
    let (span, bytes) = match *item {
        Item::Span(span, bytes) => (span, bytes),
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
    let offset = span.offset;
    let block = offset / BLOCK_SIZE as u64;
    let region = |kind: &'static str, note: String| region(offset, span.len, kind, note);
    match span.kind {
        SpanKind::Chunk {
            record_type,
            role,
            log_number,
            stored_checksum,
            ..
        } => {
            let payload = span.payload(bytes);
            let name = type_name(record_type);
            let what = if name == "unknown" || name == "ZERO" {
                format!("type {record_type}")
            } else {
                name.to_owned()
            };
            let mut note = match log_number {
                Some(n) => format!("log {n}; checksum ok ({stored_checksum:#010x})"),
                None => format!("checksum ok ({stored_checksum:#010x})"),
            };
            if let Some(verdict) = verdict(role, record_type) {
                note += &format!("; {verdict}");
            }
            if let Some(h) = span.ring_header(bytes) {
                note += &format!(
                    " (lap {}, {} records begun before this block; ring of {} blocks, {} per \
                     erase group)",
                    h.lap, h.records, h.blocks, h.group
                );
            }
            let mut pack_records = None;
            if let ChunkRole::Pack(kind) = role {
                let (records, what) = pack_note(kind, payload);
                pack_records = records;
                note += &format!("; {what}");
            }
            let json = Entry::Chunk {
                offset,
                block,
                type_name: name,
                type_byte: record_type,
                length: payload.len() as u64,
                checksum: "ok",
                stored_checksum,
                log_number,
                pack_records,
            };
            let line = Line {
                offset,
                what,
                length: payload.len() as u64,
                note,
            };
            (line, json)
        }
        SpanKind::Trailer => {
            let (line, region) = region("trailer", "block trailer, skipped".into());
            (line, Entry::Trailer(region))
        }
        SpanKind::Torn { power_cut: false } => {
            let (line, region) = region(
                "torn",
                "the file ends inside this chunk: a torn write, the end of the log".into(),
            );
            (line, Entry::Torn(region))
        }
        SpanKind::Torn { power_cut: true } => {
            let (line, region) = region(
                "torn",
                "torn by a power cut: the writer went on at the resume marker after it".into(),
            );
            (line, Entry::Torn(region))
        }
        SpanKind::Padding => {
            let (line, region) = region(
                "padding",
                "erased flash up to the next chunk (a flush's unprogrammed word, or the words \
                 a reopening writer skipped)"
                    .into(),
            );
            (line, Entry::Padding(region))
        }
        SpanKind::ZeroHeader => {
            let (line, region) = region(
                "zero_header",
                "skipped to the end of the block WITHOUT a report (LevelDB)".into(),
            );
            (line, Entry::ZeroHeader(region))
        }
        SpanKind::Erased => {
            let (line, region) = region(
                "erased",
                "erased flash: nothing written to the end of the block".into(),
            );
            (line, Entry::Erased(region))
        }
        SpanKind::BadLength { declared } => {
            let (line, region) = region(
                "bad_length",
                format!("dropped: bad record length (declares {declared} bytes)"),
            );
            (line, Entry::BadLength { region, declared })
        }
        SpanKind::ChecksumMismatch { stored, computed } => {
            let (line, region) = region(
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
        SpanKind::OldRecord { log_number } => {
            let mut note = format!(
                "old record (log {log_number}): the end of this log; the rest of the file is \
                 left by an earlier use of it"
            );
            if let Some((from, bytes)) = counts.stale_garbage
                && from + bytes == offset
            {
                note += &format!(
                    " (so are the {bytes} bytes before it from offset {from}, where this log's \
                     records end: not damage)"
                );
            }
            let (line, region) = region("old_record", note);
            (line, Entry::OldRecord { region, log_number })
        }
        other => {
            let (line, region) = region(other.name(), other.note().unwrap_or_default());
            (line, Entry::Other(region))
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
    let read = input.chunk_read(args.erased, &args.format)?;
    let progress = Progress::bytes("chunks", log.len_at_open());
    // Where a run of zero headers that may reach the end of the file began.
    let mut zeros_from = None;
    let layout = walk(&input, &read, &progress, |item, counts| {
        let (line, json) = describe(&item, counts);
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
            packs_note(&layout),
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

/// ", PACK N" for a log with pack chunks, for the chunk counts' line.
pub(crate) fn packs_note(counts: &Counts) -> String {
    if counts.pack_chunks == 0 {
        String::new()
    } else {
        format!(", PACK {}", counts.pack_chunks)
    }
}

/// For `skip_serializing_if`: a count of 0.
#[expect(clippy::trivially_copy_pass_by_ref, reason = "serde's signature")]
fn is_zero(n: &u64) -> bool {
    *n == 0
}
