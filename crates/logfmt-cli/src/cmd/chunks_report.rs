//! What `logfmt chunks` reports, line by line: each [`Entry`] (a chunk, a region that is not
//! a chunk, a ring block, the summary) is one typed value, printed by the one renderer
//! ([`crate::render::render`]) as a JSON line (`--json`: JSON Lines, the keys documented on
//! `ChunksArgs`, in that order) or as a text line of the listing's columns. Text and JSON come
//! from the same value.

use std::borrow::Cow;
use std::io::{self, Write};

use logfmt_core::parts::ring::RingHeader;
use logfmt_std::advanced::{BLOCK_SIZE, BlockRole, RingImage};
use logfmt_std::layout::Counts;
use serde::{Serialize, Serializer};

use super::{RingJson, plural};
use crate::render::Report;

/// One line of `chunks`: its JSON object is tagged by "kind" (`chunk`, `trailer`, ...,
/// `ring`, `ring_block`, `zero_fill`, `summary`); its text is a row of the listing (offset,
/// type, length, note), or the ring's, the zero fill's or the summary's sentence.
#[derive(Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Entry {
    /// A chunk whose checksum holds.
    Chunk(ChunkEntry),
    /// A block trailer (fewer than 7 bytes left in a block), skipped.
    Trailer(Region),
    /// Read as Pebble's: bytes at a block's end too few for a WAL-sync header that Pebble
    /// does not skip (a header that does not fit, or a zero header and bytes that are not
    /// zeros): dropped.
    BadTrailer(Region),
    /// A chunk cut short: the end of the file, or a power cut before a resume marker.
    Torn {
        /// Where it lies.
        #[serde(flatten)]
        region: Region,
        /// Torn by a power cut (the writer went on after it), not by the file's end.
        #[serde(skip)]
        power_cut: bool,
    },
    /// A chunk cut short by the end of the file, with well-formed chunks after it in its
    /// block: damage LevelDB's reader takes for the end of the log, not a torn write (as
    /// `verify` tells it). JSON: `{"kind": "lost_tail", "offset", "block", "length",
    /// "chunks_after", "next_chunk"}`.
    LostTail {
        /// Where it lies.
        #[serde(flatten)]
        region: Region,
        /// Well-formed chunks after it.
        chunks_after: u64,
        /// The offset of the first of them.
        next_chunk: u64,
    },
    /// Erased flash up to the next chunk.
    Padding(Region),
    /// A zero header: the rest of the block skipped without a report (LevelDB).
    ZeroHeader(Region),
    /// Erased flash to the end of the block.
    Erased(Region),
    /// A header whose length runs past the block: dropped.
    BadLength {
        /// Where it lies.
        #[serde(flatten)]
        region: Region,
        /// The length the header declares.
        declared: u16,
    },
    /// A chunk whose checksum does not hold: dropped.
    ChecksumMismatch {
        /// Where it lies.
        #[serde(flatten)]
        region: Region,
        /// The checksum the header holds.
        stored_checksum: u32,
        /// The checksum of the bytes.
        computed_checksum: u32,
    },
    /// A chunk of another log number: the end of a recycled log.
    OldRecord {
        /// Where it lies.
        #[serde(flatten)]
        region: Region,
        /// The old chunk's log number.
        log_number: u32,
        /// The stale bytes just before it (from where this log's records end), if any.
        #[serde(skip)]
        stale_before: Option<(u64, u64)>,
    },
    /// The rest of the file after the block of an old record.
    Stale(Region),
    /// A kind of region this listing does not name yet.
    Other {
        /// Where it lies.
        #[serde(flatten)]
        region: Region,
        /// Its name, in the text.
        #[serde(skip)]
        name: &'static str,
        /// What it is, in the text.
        #[serde(skip)]
        note: String,
    },
    /// A ring image's ring: the first line.
    Ring(RingEntry),
    /// A block of a ring image: what it is to the log.
    RingBlock(RingBlockEntry),
    /// Zeros from `offset` to the end of the file: the end of the log, told as `verify` and
    /// `stats` tell it.
    ZeroFill {
        /// Where the zeros begin.
        offset: u64,
        /// How many there are.
        bytes: u64,
    },
    /// The last line: the walk's counts.
    Summary(SummaryEntry),
}

/// A chunk whose checksum holds.
#[derive(Debug, Serialize)]
pub(crate) struct ChunkEntry {
    /// Its file offset.
    pub(crate) offset: u64,
    /// Its block.
    pub(crate) block: u64,
    /// Its type's name (FULL, ..., ZERO or "unknown").
    #[serde(rename = "type")]
    pub(crate) type_name: &'static str,
    /// Its type byte.
    pub(crate) type_byte: u8,
    /// Its payload's length.
    pub(crate) length: u64,
    /// Always "ok": a chunk whose checksum fails is a region.
    pub(crate) checksum: &'static str,
    /// The checksum its header holds.
    pub(crate) stored_checksum: u32,
    /// A recyclable chunk's log number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) log_number: Option<u32>,
    /// A Pebble WAL-sync chunk's synced offset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) synced_offset: Option<u64>,
    /// A whole pack in this chunk: the records it holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) pack_records: Option<u32>,
    /// What the reader does with it, when it is not read as a record (text only).
    #[serde(skip)]
    pub(crate) verdict: Option<String>,
    /// The ring header it holds (text only).
    #[serde(skip)]
    pub(crate) ring_header: Option<RingHeader>,
    /// What the pack in it holds (text only).
    #[serde(skip)]
    pub(crate) pack: Option<String>,
}

/// Where a region that is not a chunk lies.
#[derive(Debug, Serialize)]
pub(crate) struct Region {
    /// Its file offset.
    pub(crate) offset: u64,
    /// Its block.
    pub(crate) block: u64,
    /// To the end of the block (of the file, for a stale region).
    pub(crate) length: u64,
}

impl Region {
    /// The region of `length` bytes at `offset`.
    pub(crate) fn new(offset: u64, length: u64) -> Self {
        Self {
            offset,
            block: offset / BLOCK_SIZE as u64,
            length,
        }
    }
}

/// A ring image's ring ([`RingJson`]'s keys), and in the text its reading order.
#[derive(Debug, Serialize)]
pub(crate) struct RingEntry {
    /// The ring.
    #[serde(flatten)]
    pub(crate) ring: RingJson,
    /// The ring described (text only).
    #[serde(skip)]
    pub(crate) described: String,
    /// The blocks in reading order (text only).
    #[serde(skip)]
    pub(crate) order: Vec<u32>,
}

impl From<&RingImage> for RingEntry {
    fn from(ring: &RingImage) -> Self {
        Self {
            ring: ring.into(),
            described: ring.to_string(),
            order: ring.order().collect(),
        }
    }
}

/// A block of a ring image.
#[derive(Debug, Serialize)]
pub(crate) struct RingBlockEntry {
    /// Its offset in the image.
    pub(crate) offset: u64,
    /// Its index in the image.
    pub(crate) block: u64,
    /// What it is to the log: read, read_as_erased, ahead, not_in_log or outside.
    #[serde(serialize_with = "role_name")]
    pub(crate) role: BlockRole,
    /// Its place in the reading order (0: the oldest), if it is read.
    pub(crate) place: Option<u32>,
    /// Its ring header's lap, if it has an intact header.
    pub(crate) lap: Option<u32>,
    /// The records begun before it, from its ring header.
    pub(crate) records: Option<u32>,
}

impl RingBlockEntry {
    /// Block `index` of an image, its `role` and its intact ring `header`.
    pub(crate) fn new(index: u32, role: BlockRole, header: Option<RingHeader>) -> Self {
        let place = match role {
            BlockRole::Read { place } | BlockRole::ReadAsErased { place } => Some(place),
            _ => None,
        };
        Self {
            offset: u64::from(index) * BLOCK_SIZE as u64,
            block: u64::from(index),
            role,
            place,
            lap: header.map(|h| h.lap),
            records: header.map(|h| h.records),
        }
    }
}

/// A block role's name in JSON.
fn role_name<S: Serializer>(role: &BlockRole, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(match role {
        BlockRole::Read { .. } => "read",
        BlockRole::ReadAsErased { .. } => "read_as_erased",
        BlockRole::Ahead => "ahead",
        BlockRole::NotInLog => "not_in_log",
        _ => "outside",
    })
}

/// The walk's counts.
#[derive(Debug, Serialize)]
pub(crate) struct SummaryEntry {
    /// The file's bytes walked.
    bytes: u64,
    /// Its blocks.
    blocks: u64,
    /// Every chunk counted.
    chunks: u64,
    /// FULL chunks (legacy or recyclable).
    full: u64,
    /// FIRST chunks.
    first: u64,
    /// MIDDLE chunks.
    middle: u64,
    /// LAST chunks.
    last: u64,
    /// Pack chunks (only in a log that has them).
    #[serde(skip_serializing_if = "is_zero")]
    pack: u64,
    /// Chunks of any other type.
    unknown: u64,
    /// Bytes of block trailers.
    trailer_bytes: u64,
    /// Bytes skipped without a report (zero headers, erased flash, padding).
    skipped_bytes: u64,
    /// Bad checksums and lengths: bytes dropped with a report.
    damaged_bytes: u64,
    /// Bytes of chunks cut short, and bytes torn by a power cut.
    torn_bytes: u64,
    /// Bytes after the end of a recycled log, left by its earlier use.
    stale_bytes: u64,
    /// The damaged regions (text only).
    #[serde(skip)]
    damaged_regions: u64,
    /// Where the log ends at an old record: its log number and offset (text only).
    #[serde(skip)]
    stale: Option<(u32, u64)>,
}

impl From<&Counts> for SummaryEntry {
    fn from(counts: &Counts) -> Self {
        let [full, first, middle, last] = counts.by_type;
        let stale = counts.stale();
        Self {
            bytes: counts.bytes,
            blocks: counts.blocks,
            chunks: counts.chunks(),
            full,
            first,
            middle,
            last,
            pack: counts.pack_chunks,
            unknown: counts.unknown,
            trailer_bytes: counts.trailer_bytes,
            skipped_bytes: counts.skipped_bytes,
            damaged_bytes: counts.damaged_bytes,
            torn_bytes: counts.torn_bytes,
            stale_bytes: stale.map_or(0, |s| s.bytes),
            damaged_regions: counts.damaged_regions,
            stale: stale.map(|s| (s.log_number, s.offset)),
        }
    }
}

impl SummaryEntry {
    /// The summary's sentence.
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        let (full, first, middle, last) = (self.full, self.first, self.middle, self.last);
        writeln!(
            out,
            "{}, {}, {} (FULL {full}, FIRST {first}, MIDDLE {middle}, LAST {last}{}, other {}), \
             {} of trailers, {} skipped, {} dropped in {}, {} torn{}",
            plural(self.bytes, "byte"),
            plural(self.blocks, "block"),
            plural(self.chunks, "chunk"),
            packs_note(self.pack),
            self.unknown,
            plural(self.trailer_bytes, "byte"),
            plural(self.skipped_bytes, "byte"),
            plural(self.damaged_bytes, "byte"),
            plural(self.damaged_regions, "region"),
            plural(self.torn_bytes, "byte"),
            match self.stale {
                Some((log_number, offset)) => format!(
                    "; the log ends at an old record (log {log_number}) at offset {offset}, {} \
                     stale",
                    plural(self.stale_bytes, "byte")
                ),
                None => String::new(),
            },
        )
    }
}

/// ", PACK N" for a log with `pack_chunks` pack chunks, for the chunk counts' line.
pub(crate) fn packs_note(pack_chunks: u64) -> String {
    if pack_chunks == 0 {
        String::new()
    } else {
        format!(", PACK {pack_chunks}")
    }
}

/// For `skip_serializing_if`: a count of 0.
#[expect(clippy::trivially_copy_pass_by_ref, reason = "serde's signature")]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A row of the text listing: offset, type, length, note.
struct Row<'a> {
    offset: u64,
    what: Cow<'a, str>,
    length: u64,
    note: Cow<'a, str>,
}

impl Row<'_> {
    /// A row for `region`, named `what`.
    fn region<'a>(region: &Region, what: &'a str, note: impl Into<Cow<'a, str>>) -> Row<'a> {
        Row {
            offset: region.offset,
            what: Cow::Borrowed(what),
            length: region.length,
            note: note.into(),
        }
    }
}

impl Entry {
    /// The entry's row of the listing; `None` for the lines that are sentences (the ring,
    /// the zero fill, the summary).
    fn row(&self) -> Option<Row<'_>> {
        Some(match self {
            Self::Chunk(chunk) => chunk.row(),
            Self::RingBlock(block) => block.row(),
            Self::Trailer(r) => Row::region(r, "trailer", "block trailer, skipped"),
            Self::BadTrailer(r) => Row::region(
                r,
                "bad-trailer",
                "dropped: bad block trailer (not the zeros Pebble's writer pads a block with)",
            ),
            Self::Torn { region, power_cut } => Row::region(region, "torn", torn_note(*power_cut)),
            Self::LostTail {
                region,
                chunks_after,
                next_chunk,
            } => Row::region(
                region,
                "lost-tail",
                format!(
                    "damage, not a torn write: LevelDB's reader ends the log here, but {} \
                     from offset {next_chunk} (`logfmt salvage` recovers their records)",
                    if *chunks_after == 1 {
                        "1 well-formed chunk follows".to_owned()
                    } else {
                        format!("{chunks_after} well-formed chunks follow")
                    }
                ),
            ),
            Self::Padding(r) => Row::region(
                r,
                "padding",
                "erased flash up to the next chunk (a flush's unprogrammed word, or the words \
                 a reopening writer skipped)",
            ),
            Self::ZeroHeader(r) => Row::region(
                r,
                "zero-header",
                "skipped to the end of the block WITHOUT a report (LevelDB)",
            ),
            Self::Erased(r) => Row::region(
                r,
                "erased",
                "erased flash: nothing written to the end of the block",
            ),
            Self::BadLength { region, declared } => Row::region(
                region,
                "bad-length",
                format!("dropped: bad record length (declares {declared} bytes)"),
            ),
            Self::ChecksumMismatch {
                region,
                stored_checksum,
                computed_checksum,
            } => Row::region(
                region,
                "checksum-mismatch",
                format!(
                    "dropped: checksum mismatch (stored {stored_checksum:#010x}, computed \
                     {computed_checksum:#010x})"
                ),
            ),
            Self::OldRecord {
                region,
                log_number,
                stale_before,
            } => Row::region(
                region,
                "old-record",
                old_record_note(*log_number, *stale_before),
            ),
            Self::Stale(r) => Row::region(
                r,
                "stale",
                "left by an earlier use of the file: not part of this log",
            ),
            Self::Other { region, name, note } => Row {
                offset: region.offset,
                what: name.replace('_', "-").into(),
                length: region.length,
                note: note.as_str().into(),
            },
            Self::Ring(_) | Self::ZeroFill { .. } | Self::Summary(_) => return None,
        })
    }
}

/// What a torn chunk is.
fn torn_note(power_cut: bool) -> &'static str {
    if power_cut {
        "torn by a power cut: the writer went on at the resume marker after it"
    } else {
        "the file ends inside this chunk: a torn write, the end of the log"
    }
}

/// What an old record is, and the stale bytes just before it, if any.
fn old_record_note(log_number: u32, stale_before: Option<(u64, u64)>) -> String {
    let mut note = format!(
        "old record (log {log_number}): the end of this log; the rest of the file is left by \
         an earlier use of it"
    );
    if let Some((from, bytes)) = stale_before {
        note += &format!(
            " (so are the {bytes} bytes before it from offset {from}, where this log's records \
             end: not damage)"
        );
    }
    note
}

impl ChunkEntry {
    /// The chunk's row: its type (by name, or `type N`), length, log number, checksum, and
    /// what the reader does with it.
    fn row(&self) -> Row<'_> {
        let what = if self.type_name == "unknown" || self.type_name == "ZERO" {
            Cow::Owned(format!("type {}", self.type_byte))
        } else {
            Cow::Borrowed(self.type_name)
        };
        let stored = self.stored_checksum;
        let mut note = match (self.log_number, self.synced_offset) {
            (Some(n), Some(synced)) => {
                format!("log {n}, synced to {synced}; checksum ok ({stored:#010x})")
            }
            (Some(n), None) => format!("log {n}; checksum ok ({stored:#010x})"),
            (None, _) => format!("checksum ok ({stored:#010x})"),
        };
        if let Some(verdict) = &self.verdict {
            note += &format!("; {verdict}");
        }
        if let Some(h) = self.ring_header {
            note += &format!(
                " (lap {}, {} records begun before this block; ring of {} blocks, {} per erase \
                 group)",
                h.lap, h.records, h.blocks, h.group
            );
        }
        if let Some(pack) = &self.pack {
            note += &format!("; {pack}");
        }
        Row {
            offset: self.offset,
            what,
            length: self.length,
            note: note.into(),
        }
    }
}

impl RingBlockEntry {
    /// The block's row: its role, and its ring header.
    fn row(&self) -> Row<'_> {
        let mut note = format!("block {} {}", self.block, self.role);
        if self.place == Some(0) {
            note += " (the oldest)";
        }
        note += &match (self.lap, self.records) {
            (Some(lap), Some(records)) => {
                format!("; ring header: lap {lap}, {records} records begun before it")
            }
            _ => "; no ring header".to_owned(),
        };
        Row {
            offset: self.offset,
            what: "ring-block".into(),
            length: BLOCK_SIZE as u64,
            note: note.into(),
        }
    }
}

/// An entry as a line of the listing, whose offsets are `width` wide.
#[derive(Debug)]
pub(crate) struct Line<'a> {
    /// The entry.
    pub(crate) entry: &'a Entry,
    /// The width of the offset column.
    pub(crate) width: usize,
}

impl Serialize for Line<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.entry.serialize(serializer)
    }
}

impl Report for Line<'_> {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        if let Some(row) = self.entry.row() {
            return write_row(
                out,
                self.width,
                &row.offset,
                &row.what,
                &row.length,
                &row.note,
            );
        }
        match self.entry {
            Entry::Ring(ring) => {
                let order: Vec<String> = ring.order.iter().map(u32::to_string).collect();
                writeln!(out, "a ring image: {}", ring.described)?;
                writeln!(out, "reading order: blocks {}", order.join(", "))?;
                for disagreement in &ring.ring.disagreements {
                    writeln!(out, "the ring image disagrees: {disagreement}")?;
                }
                Ok(())
            }
            Entry::ZeroFill { offset, bytes } => {
                let tail = crate::story::Tail::ZeroFilled {
                    offset: *offset,
                    bytes: *bytes,
                };
                writeln!(out, "{}", tail.explain())
            }
            Entry::Summary(summary) => summary.write_text(out),
            _ => Ok(()),
        }
    }
}

/// One row of the listing, its columns aligned: the heading's or an entry's.
pub(crate) fn write_row(
    out: &mut dyn Write,
    width: usize,
    offset: &dyn std::fmt::Display,
    what: &str,
    length: &dyn std::fmt::Display,
    note: &str,
) -> io::Result<()> {
    writeln!(out, "{offset:>width$}  {what:<17} {length:>6}  {note}")
}
