//! The physical layout of a log, as `dump` and `stats` walk it: every block's chunks and the
//! regions that are not chunks, counted over the whole file.

use logfmt_core::parts::block::{BlockParser, Chunk, ChunkClass, ChunkRules, Parsed};
use logfmt_core::parts::ring::RingHeader;
use logfmt_std::advanced::{
    BLOCK_SIZE, BlockRole, BlockSource, LogEnd, ReadOptions, RecordType, StaleTail,
};

use crate::error::CliError;
use crate::format::FormatArgs;
use crate::image::Input;
use crate::options::Erased;
use crate::progress::Progress;

/// Counts over the whole file.
#[derive(Debug, Default)]
pub(crate) struct Layout {
    pub(crate) bytes: u64,
    pub(crate) blocks: u64,
    /// Chunks of types FULL, FIRST, MIDDLE, LAST (legacy or recyclable).
    pub(crate) by_type: [u64; 4],
    /// Chunks of packs (types 0x51–0x54), and their bytes, headers included.
    pub(crate) pack_chunks: u64,
    pub(crate) pack_bytes: u64,
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
    /// Where the log ended at an old record (the old record, or the garbage before it), and
    /// the old record's log number.
    old_record: Option<(u64, u32)>,
    /// The damaged region that ended the previous block, if any: file offset and length.
    last_damage: Option<(u64, u64)>,
    /// A damaged region found to be the bytes of a recycled file's earlier use: the garbage
    /// between where the new records end and the old record at the next block.
    pub(crate) stale_garbage: Option<(u64, u64)>,
}

impl Layout {
    pub(crate) fn chunks(&self) -> u64 {
        self.by_type.iter().sum::<u64>() + self.pack_chunks + self.unknown
    }

    /// ", packs N" for a log with pack chunks, for the chunk counts' line.
    pub(crate) fn packs_note(&self) -> String {
        if self.pack_chunks == 0 {
            String::new()
        } else {
            format!(", PACK {}", self.pack_chunks)
        }
    }

    /// The stale bytes after an old record (a chunk of another log number), or the garbage
    /// before it, to the end of the file (as far as it was counted).
    pub(crate) fn stale(&self) -> Option<StaleTail> {
        let (offset, log_number) = self.old_record?;
        StaleTail::new(LogEnd::OldRecord { offset, log_number }, self.bytes)
    }

    /// Adds the counts of `other`, the layout of later blocks of the same log, counted on their
    /// own: for a log read in parts ([`crate::parallel`]), which is only done where no block
    /// ends in damage or holds an old record (what a count carries from one block to the next).
    pub(crate) fn merge(&mut self, other: &Self) {
        self.bytes += other.bytes;
        self.blocks += other.blocks;
        for (mine, theirs) in self.by_type.iter_mut().zip(other.by_type) {
            *mine += theirs;
        }
        self.pack_chunks += other.pack_chunks;
        self.pack_bytes += other.pack_bytes;
        self.unknown += other.unknown;
        self.header_bytes += other.header_bytes;
        self.trailer_bytes += other.trailer_bytes;
        self.skipped_bytes += other.skipped_bytes;
        self.damaged_bytes += other.damaged_bytes;
        self.damaged_regions += other.damaged_regions;
        self.torn_bytes += other.torn_bytes;
    }

    /// Counts one item of the block starting at file offset `block_start`.
    pub(crate) fn count(&mut self, block_start: u64, item: &Parsed<'_>) {
        let damage = self.last_damage.take();
        match item {
            Parsed::Chunk(chunk) => {
                self.header_bytes += chunk.header_len as u64;
                let known = RecordType::try_from(chunk.record_type).ok();
                match known.and_then(|t| Some((t.is_pack(), t.fragment_kind()?))) {
                    Some((true, _)) => {
                        self.pack_chunks += 1;
                        self.pack_bytes += (chunk.header_len + chunk.payload.len()) as u64;
                    }
                    Some((false, kind)) => self.by_type[kind as usize] += 1,
                    None => self.unknown += 1,
                }
            }
            Parsed::Trailer { len, .. } => self.trailer_bytes += *len as u64,
            Parsed::Truncated { len, .. } | Parsed::Torn { len, .. } => {
                self.torn_bytes += *len as u64;
            }
            Parsed::Padding { len, .. } => self.skipped_bytes += *len as u64,
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
                offset, log_number, ..
            } => {
                let at = block_start + *offset as u64;
                self.old_record = Some((at, *log_number));
                // The damage just before, up to this block: the earlier use's bytes too.
                if let Some((from, bytes)) = damage
                    && *offset == 0
                    && from + bytes == at
                {
                    self.damaged_bytes -= bytes;
                    self.damaged_regions -= 1;
                    self.stale_garbage = Some((from, bytes));
                    self.old_record = Some((from, *log_number));
                }
            }
        }
    }
}

/// How `dump` and `stats` read chunk headers: the reader's chunk rules, with its format
/// decision.
#[derive(Debug, Clone, Copy)]
pub(crate) struct View {
    pub(crate) rules: ChunkRules,
}

impl View {
    /// The view for `--erased` and the format flags on `input` (a ring image is read with the
    /// erased value of its headers).
    pub(crate) fn new(
        input: &Input,
        erased: Option<Erased>,
        format: &FormatArgs,
    ) -> Result<(Self, ReadOptions), CliError> {
        let read = ReadOptions::new().erased(input.erased(erased));
        let read = input.read_options(format.read_options(&input.log, read)?);
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

    /// What the reader does with a chunk of type `record_type` and `len` payload bytes: `None`
    /// if it is read.
    pub(crate) fn verdict(&self, record_type: u8, len: usize) -> Option<String> {
        match self.rules.classify(record_type) {
            // RocksDB's compression record holds a 4-byte codec; the reader drops another.
            ChunkClass::SetCompression if len != 4 => {
                Some(format!("dropped: unknown record type {record_type}"))
            }
            ChunkClass::Fragment(_) | ChunkClass::Pack(_) => None,
            ChunkClass::OtherFormat => Some(format!(
                "dropped: unexpected legacy record type {record_type} in recyclable log"
            )),
            ChunkClass::Ignorable if record_type == logfmt_core::parts::format::RESUME_TYPE => {
                Some("resume marker: the flash writer went on here after a power cut".into())
            }
            ChunkClass::Ignorable => {
                Some("ignorable type: skipped without a report (RocksDB)".into())
            }
            ChunkClass::RingHeader => Some("ring header, not a record".into()),
            ChunkClass::SetCompression => {
                Some("RocksDB's compression record: the records after it are compressed".into())
            }
            _ => Some(format!("dropped: unknown record type {record_type}")),
        }
    }
}

/// Walks every block of `input` (a ring image's in the ring's order), calling `visit` with each
/// block's file offset and items (and the counts so far). After an old record (the end of a
/// recyclable log), the rest of the file is counted as stale and visited as one
/// [`Item::Stale`]. A ring image's blocks are each visited first as an [`Item::RingBlock`]:
/// those not read before the others, in the image's order, then each block read before its
/// items.
pub(crate) fn walk(
    input: &Input,
    mut view: View,
    progress: &Progress,
    mut visit: impl FnMut(Item<'_>, &View, &Layout) -> Result<(), CliError>,
) -> Result<Layout, CliError> {
    let log = &input.log;
    let mut source = input.source()?;
    let mut layout = Layout::default();
    let mut place = 0u64;
    let mut stale_from = None;
    if let Some(ring) = &input.ring {
        for index in 0..ring.image_blocks() {
            let role = ring.role(index);
            if !matches!(
                role,
                BlockRole::Read { .. } | BlockRole::ReadAsErased { .. }
            ) {
                visit(ring_block(ring, index), &view, &layout)?;
            }
        }
    }
    loop {
        let block_start = input.block_offset(place);
        progress.set(place * BLOCK_SIZE as u64);
        source.load_next().map_err(|e| log.read_error(e))?;
        let block = source.block();
        if block.is_empty() {
            break;
        }
        if let Some(ring) = &input.ring {
            let index = u32::try_from(block_start / BLOCK_SIZE as u64).unwrap_or(u32::MAX);
            visit(ring_block(ring, index), &view, &layout)?;
        }
        layout.blocks += 1;
        layout.bytes += block.len() as u64;
        if stale_from.is_none() {
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
        place += 1;
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

/// The ring header a well-formed chunk of type [`RING_TYPE`](logfmt_core::parts::format::RING_TYPE)
/// is (its header and payload, as the core parses them), if it is one.
pub(crate) fn ring_header(chunk: &Chunk<'_>) -> Option<RingHeader> {
    let len = u16::try_from(chunk.payload.len()).ok()?;
    let mut bytes = chunk.stored_checksum.to_le_bytes().to_vec();
    bytes.extend_from_slice(&len.to_le_bytes());
    bytes.push(chunk.record_type);
    bytes.extend_from_slice(chunk.payload);
    RingHeader::parse(&bytes)
}

/// The name of a chunk type, or "unknown".
pub(crate) fn type_name(record_type: u8) -> &'static str {
    if record_type == logfmt_core::parts::format::SET_COMPRESSION_TYPE {
        return "SET_COMPRESSION";
    }
    RecordType::try_from(record_type).map_or("unknown", RecordType::name)
}

/// The dump's line for block `index` of a ring image: its role and ring header.
fn ring_block<'a>(ring: &logfmt_std::advanced::RingImage, index: u32) -> Item<'a> {
    Item::RingBlock {
        index,
        role: ring.role(index),
        header: ring.header(index),
    }
}
