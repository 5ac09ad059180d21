//! `logfmt chunks` (formerly `logfmt dump`): the physical layout of a log, chunk by chunk.

use std::io::{self, BufWriter, Write};

use logfmt_core::pack::{self, Pack};
use logfmt_core::parts::ring::RingHeader;
use logfmt_std::advanced::{BLOCK_SIZE, BlockRole, BlockSource, FragmentKind, ReadOptions};
use logfmt_std::layout::{ChunkRole, Counts, Span, SpanKind, Walk};

use super::chunks_report::{ChunkEntry, Entry, Line, Region, RingBlockEntry, write_row};
use crate::error::CliError;
use crate::image::Input;
use crate::options::ChunkArgs;
use crate::output::write_json_line;
use crate::progress::Progress;
use crate::render::{Rendering, render};

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
/// chunk and "synced_offset" for a Pebble WAL-sync chunk (types are named as the log's writer
/// means them, with --format: WAL_SYNC_FULL, SET_COMPRESSION, TIMESTAMP_SIZE, ...); or a
/// region ("trailer", "torn", "padding", "zero_header", "erased", "bad_length",
/// "checksum_mismatch", "bad_trailer" (read as Pebble's), "old_record", "stale") with
/// "offset", "block", "length" (to the end of the block; for "stale", to the end of the
/// file), plus "declared" for bad_length,
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
pub(crate) struct ChunksArgs {
    #[command(flatten)]
    chunks: ChunkArgs,
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
fn verdict(role: ChunkRole, record_type: u8, payload: &[u8]) -> Option<String> {
    use logfmt_std::advanced::{PredecessorWal, TimestampSizes};
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
        ChunkRole::TimestampSizes => match TimestampSizes::parse(payload) {
            Some(sizes) => {
                let sizes: Vec<String> = sizes
                    .map(|(cf, size)| format!("column family {cf}: {size}-byte timestamps"))
                    .collect();
                format!("RocksDB's timestamp-size record: {}", sizes.join(", "))
            }
            None => {
                format!("dropped: a timestamp-size record (type {record_type}) that does not parse")
            }
        },
        ChunkRole::PredecessorWal => match PredecessorWal::parse(payload) {
            Some(p) => format!("RocksDB's predecessor-WAL record: {p}"),
            None => format!(
                "dropped: a predecessor-WAL record (type {record_type}) that does not parse"
            ),
        },
        _ => format!("dropped: unknown record type {record_type}"),
    })
}

/// The entry of what [`walk`] visits, with the counts so far.
fn describe(item: &Item<'_>, counts: &Counts) -> Entry {
    match *item {
        Item::Span(span, bytes) => describe_span(span, bytes, counts),
        Item::RingBlock {
            index,
            role,
            header,
        } => Entry::RingBlock(RingBlockEntry::new(index, role, header)),
        Item::Stale { offset, len } => Entry::Stale(Region::new(offset, len)),
    }
}

/// The entry of a span of a block (a chunk, or a region that is not one), with its bytes.
fn describe_span(span: &Span, bytes: &[u8], counts: &Counts) -> Entry {
    let region = Region::new(span.offset, span.len);
    match span.kind {
        SpanKind::Chunk {
            record_type,
            role,
            log_number,
            synced_offset,
            type_name: name,
            stored_checksum,
            ..
        } => {
            let payload = span.payload(bytes);
            let (pack_records, pack) = match role {
                ChunkRole::Pack(kind) => {
                    let (records, what) = pack_note(kind, payload);
                    (records, Some(what))
                }
                _ => (None, None),
            };
            Entry::Chunk(ChunkEntry {
                offset: span.offset,
                block: region.block,
                type_name: name,
                type_byte: record_type,
                length: payload.len() as u64,
                checksum: "ok",
                stored_checksum,
                log_number,
                synced_offset,
                pack_records,
                verdict: verdict(role, record_type, payload),
                ring_header: span.ring_header(bytes),
                pack,
            })
        }
        SpanKind::Trailer => Entry::Trailer(region),
        SpanKind::BadTrailer => Entry::BadTrailer(region),
        SpanKind::Torn { power_cut: false } => match lost_tail(bytes) {
            Some(after) => Entry::LostTail {
                region,
                chunks_after: after.count,
                next_chunk: span.offset + after.offset,
            },
            None => Entry::Torn {
                region,
                power_cut: false,
            },
        },
        SpanKind::Torn { power_cut } => Entry::Torn { region, power_cut },
        SpanKind::Padding => Entry::Padding(region),
        SpanKind::ZeroHeader => Entry::ZeroHeader(region),
        SpanKind::Erased => Entry::Erased(region),
        SpanKind::BadLength { declared } => Entry::BadLength { region, declared },
        SpanKind::ChecksumMismatch { stored, computed } => Entry::ChecksumMismatch {
            region,
            stored_checksum: stored,
            computed_checksum: computed,
        },
        SpanKind::OldRecord { log_number } => Entry::OldRecord {
            stale_before: counts
                .stale_garbage
                .filter(|(from, bytes)| from + bytes == span.offset),
            region,
            log_number,
        },
        other => Entry::Other {
            region,
            name: other.name(),
            note: other.note().unwrap_or_default().to_string(),
        },
    }
}

/// The well-formed chunks after a chunk cut short by the end of the file (`bytes`, its bytes
/// to the end), found as the reader finds them: if there are some, it is damage, not a torn
/// write ([`logfmt_std::DamageKind::LostTail`]). Offsets from the chunk's.
fn lost_tail(bytes: &[u8]) -> Option<logfmt_core::parts::ChunksAfter> {
    let mut reader = logfmt_core::parts::FragmentReader::from_slice(bytes);
    while let Ok(Some(_)) = reader.next() {}
    reader.chunks_after_end()
}

/// Runs `chunks`.
pub(crate) fn run(args: &ChunksArgs) -> Result<(), CliError> {
    crate::targets::each(
        &args.chunks.files.files,
        args.chunks.json,
        |target, several| run_one(args, &target.path, several),
    )
}

/// Runs `chunks` on one file; `several` when more are read: the lines before the chunks (the
/// file in JSON, the ring, the heading), an entry for each chunk and region, then how the log
/// ends and the summary.
fn run_one(args: &ChunksArgs, path: &std::path::Path, several: bool) -> Result<(), CliError> {
    let input = Input::open(path, args.chunks.erased)?;
    let log = &input.log;
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let rendering = Rendering::json(args.chunks.json);
    let width = log.len_at_open().to_string().len().max("OFFSET".len());
    if several && args.chunks.json {
        /// With several files, the line before each file's lines: `{"file": PATH}`.
        #[derive(serde::Serialize)]
        struct FileJson<'a> {
            file: &'a str,
        }
        let file = log.path().to_string_lossy();
        write_json_line(&mut out, &FileJson { file: &file })?;
    }
    if let Some(ring) = &input.ring {
        let entry = Entry::Ring(ring.into());
        render(
            &mut out,
            &Line {
                entry: &entry,
                width,
            },
            rendering,
        )?;
    }
    if rendering == Rendering::Text {
        write_row(&mut out, width, &"OFFSET", "TYPE", &"LENGTH", "NOTE")?;
    }
    let (counts, zeros_from) = print_entries(args, &input, &mut out, width, rendering)?;
    let zero_fill = match (zeros_from, &input.ring) {
        (Some(offset), None) => crate::story::zero_filled_from(log, offset),
        _ => None,
    };
    // The summary is the last JSON line; the text tells how the log ends after it.
    let mut last = vec![Entry::Summary((&counts).into())];
    if let Some(crate::story::Tail::ZeroFilled { offset, bytes }) = zero_fill {
        let at = if rendering == Rendering::Json { 0 } else { 1 };
        last.insert(at, Entry::ZeroFill { offset, bytes });
    }
    for entry in &last {
        render(&mut out, &Line { entry, width }, rendering)?;
    }
    out.flush()?;
    Ok(())
}

/// Walks `input`, printing an entry for each chunk and region as it is read; returns the
/// walk's counts and where a run of zero headers that may reach the end of the file began.
fn print_entries(
    args: &ChunksArgs,
    input: &Input,
    out: &mut impl Write,
    width: usize,
    rendering: Rendering,
) -> Result<(Counts, Option<u64>), CliError> {
    let read = input.chunk_read(args.chunks.erased, &args.chunks.format)?;
    args.chunks.format.say_dialect(&input.log)?;
    let progress = Progress::bytes("chunks", input.log.len_at_open());
    let mut zeros_from = None;
    let mut lost = 0;
    let mut first_damage = None;
    let mut counts = walk(input, &read, &progress, |item, counts| {
        if let Item::Span(span, _) = &item
            && (span.kind.is_damage() || matches!(span.kind, SpanKind::Torn { .. }))
        {
            first_damage = first_damage.or(Some(span.offset));
        }
        let entry = describe(&item, counts);
        if let Entry::LostTail { region, .. } = &entry {
            lost += region.length;
        }
        match &entry {
            Entry::ZeroHeader(region) => zeros_from = zeros_from.or(Some(region.offset)),
            Entry::Trailer(_) => {}
            _ => zeros_from = None,
        }
        render(
            out,
            &Line {
                entry: &entry,
                width,
            },
            rendering,
        )?;
        Ok(())
    })?;
    // Damage, not torn bytes, as `verify` counts them.
    if lost > 0 {
        counts.torn_bytes -= lost;
        counts.damaged_bytes += lost;
        counts.damaged_regions += 1;
    }
    // Read as Pebble's: the first damage ends the log, as corruption or as its torn end.
    if let Some(end) = crate::story::pebble_end(&input.log, &read, first_damage)? {
        counts.pebble_end(&end);
        crate::notes::hint(input.log.path(), &super::pebble_line(&end));
    }
    Ok((counts, zeros_from))
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
