//! One block's bytes, span by span: what the map's detail view draws, from the layout model
//! of [`logfmt_std::layout`].

use logfmt_core::parts::block::ChunkRules;
use logfmt_core::{BLOCK_SIZE, ReadOptions};
use logfmt_std::layout::{self, SpanKind};
use serde::Serialize;

/// A byte range of a block and what it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Span {
    /// File offset where it begins.
    pub offset: u64,
    /// Its length in bytes (a chunk's: header and payload).
    pub len: u64,
    /// `chunk`, `trailer`, `torn`, `padding`, `zero_header`, `erased`, `old_record`,
    /// `bad_length`, `bad_trailer` (read as Pebble's) or `checksum_mismatch`.
    pub kind: &'static str,
    /// For a chunk: its type's name (`FULL`, `FIRST`, … `unknown`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_type: Option<&'static str>,
    /// For a chunk: its type byte.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub type_byte: Option<u8>,
    /// For a chunk: whether its checksum was checked and matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checksum_ok: Option<bool>,
    /// What the reader does with it, in plain words (none for a record's chunk).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The spans of `block`, the block at file offset `block_offset`, read with `read`'s rules
/// (erased flash, format): every byte of the block in exactly one span, in order.
///
/// ```
/// use logfmt_core::ReadOptions;
/// use logfmt_web::block_spans;
///
/// // A FULL chunk of 3 bytes whose checksum does not match, in a block cut short.
/// let block = [0, 0, 0, 0, 3, 0, 1, b'a', b'b', b'c'];
/// let spans = block_spans(&block, 0, &ReadOptions::default());
/// assert_eq!(spans.len(), 1);
/// assert_eq!((spans[0].kind, spans[0].len), ("checksum_mismatch", 10));
/// ```
#[must_use]
pub fn block_spans(block: &[u8], block_offset: u64, read: &ReadOptions) -> Vec<Span> {
    let block = block.get(..BLOCK_SIZE).unwrap_or(block);
    let mut rules = ChunkRules::new(read);
    layout::block_spans(block, block_offset, &mut rules)
        .into_iter()
        .map(view)
        .collect()
}

fn view(span: layout::Span) -> Span {
    let (chunk_type, type_byte, checksum_ok) = match span.kind {
        SpanKind::Chunk {
            record_type,
            checked,
            type_name,
            ..
        } => (Some(type_name), Some(record_type), Some(checked)),
        _ => (None, None, None),
    };
    Span {
        offset: span.offset,
        len: span.len,
        kind: span.kind.name(),
        chunk_type,
        type_byte,
        checksum_ok,
        note: span.kind.note(),
    }
}
