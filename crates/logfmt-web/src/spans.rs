//! One block's bytes, span by span: what the map's detail view draws, from the layout model
//! of [`logfmt_std::layout`].

use logfmt_core::block::ChunkRules;
use logfmt_core::{BLOCK_SIZE, ReadOptions};
use logfmt_std::layout::{self, ChunkRole, SpanKind};
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
    /// `bad_length` or `checksum_mismatch`.
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
            ..
        } => (
            Some(layout::type_name(record_type)),
            Some(record_type),
            Some(checked),
        ),
        _ => (None, None, None),
    };
    Span {
        offset: span.offset,
        len: span.len,
        kind: span.kind.name(),
        chunk_type,
        type_byte,
        checksum_ok,
        note: note(&span.kind),
    }
}

/// What the reader does with a span, in plain words; `None` for a record's chunk.
fn note(kind: &SpanKind) -> Option<String> {
    Some(match *kind {
        SpanKind::Chunk { role, .. } => match role {
            ChunkRole::RingHeader => {
                "a ring header: the block's lap and the records begun before it".into()
            }
            ChunkRole::ResumeMarker => {
                "the flash writer's resume marker: it went on here after a power cut".into()
            }
            ChunkRole::SetCompression => {
                "RocksDB's compression record: the records after it are compressed".into()
            }
            ChunkRole::Ignorable => {
                "a type with bit 7 set: skipped without a report (RocksDB's rule)".into()
            }
            ChunkRole::Dropped => {
                "a type this reader does not know: dropped (LevelDB drops it too)".into()
            }
            _ => return None,
        },
        SpanKind::Trailer => "too few bytes for a header: skipped, as LevelDB does".into(),
        SpanKind::Padding => "erased flash up to the next chunk".into(),
        SpanKind::ZeroHeader => "zeros: the rest of the block is skipped without a report".into(),
        SpanKind::Erased => "erased flash: nothing written from here to the end of the block".into(),
        SpanKind::Torn => "a chunk cut short: a torn write (or bytes torn by a power cut)".into(),
        SpanKind::OldRecord { log_number } => format!(
            "a record of log number {log_number}, left by an earlier use of a recycled file: \
             the log ends here"
        ),
        SpanKind::BadLength { declared } => format!(
            "bad record length: the header says {declared} bytes, past the block's end; {}",
            gloss("bad record length")
        ),
        SpanKind::ChecksumMismatch { stored, computed } => format!(
            "checksum mismatch (stored {stored:#010x}, computed {computed:#010x}); {}",
            gloss("checksum mismatch")
        ),
        _ => return None,
    })
}

/// LevelDB's terse reason for a drop, in plain words.
///
/// ```
/// use logfmt_web::gloss;
/// assert_eq!(
///     gloss("missing start of fragmented record(2)"),
///     "a record's first part was lost, so its later parts are skipped"
/// );
/// ```
#[must_use]
pub fn gloss(reason: &str) -> &'static str {
    match reason {
        "checksum mismatch" => "the bytes changed after they were written; the rest of the block is dropped",
        "bad record length" => "a chunk's length runs past its block; the rest of the block is dropped",
        "partial record without end(1)" => {
            "a record was begun but never finished before a whole record came"
        }
        "partial record without end(2)" => {
            "a record was begun but never finished before another record began"
        }
        "missing start of fragmented record(1)" | "missing start of fragmented record(2)" => {
            "a record's first part was lost, so its later parts are skipped"
        }
        "error in middle of record" => "damage inside a record that spans blocks: the whole record is lost",
        "read error" => "the file could not be read here; one block is counted as lost",
        r if r.starts_with("unknown record type") => {
            "a chunk of a type this reader does not know (LevelDB drops it)"
        }
        r if r.starts_with("unexpected legacy record type") => {
            "a LevelDB-format chunk inside a RocksDB recyclable log (RocksDB drops it)"
        }
        r if r.starts_with("bad pack") => "a pack of small records is damaged: its records are lost",
        r if r.starts_with("compressed record does not decompress") => {
            "a compressed record's bytes do not decompress: its records are lost"
        }
        _ => "bytes the reader could not read",
    }
}
