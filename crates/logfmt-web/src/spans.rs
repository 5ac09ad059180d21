//! One block's bytes, span by span: what the map's detail view draws.

use logfmt_core::block::{BlockParser, ChunkRules, Parsed};
use logfmt_core::{BLOCK_SIZE, ReadOptions, RecordType};
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
    /// For damage: what the reader does, in plain words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Span {
    fn region(offset: u64, len: usize, kind: &'static str, note: Option<String>) -> Self {
        Self {
            offset,
            len: len as u64,
            kind,
            chunk_type: None,
            type_byte: None,
            checksum_ok: None,
            note,
        }
    }
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
    let at = |offset: usize| block_offset + offset as u64;
    let mut rules = ChunkRules::new(read);
    let mut spans = Vec::new();
    for item in BlockParser::new(block).rules(rules) {
        let span = match item {
            Parsed::Chunk(chunk) => {
                rules.decide(chunk.record_type, chunk.log_number);
                Span {
                    offset: at(chunk.offset),
                    len: (chunk.header_len + chunk.payload.len()) as u64,
                    kind: "chunk",
                    chunk_type: Some(
                        RecordType::try_from(chunk.record_type).map_or("unknown", RecordType::name),
                    ),
                    type_byte: Some(chunk.record_type),
                    checksum_ok: Some(chunk.checksum_verified),
                    note: None,
                }
            }
            Parsed::Trailer { offset, len } => Span::region(at(offset), len, "trailer", None),
            Parsed::Truncated { offset, len } => Span::region(
                at(offset),
                len,
                "torn",
                Some("a chunk cut short by the end of the file: a torn write".into()),
            ),
            Parsed::Torn { offset, len } => Span::region(
                at(offset),
                len,
                "torn",
                Some("bytes torn by a power cut, up to where the writer went on".into()),
            ),
            Parsed::Padding { offset, len } => Span::region(at(offset), len, "padding", None),
            Parsed::ZeroHeader { offset, len } => Span::region(
                at(offset),
                len,
                "zero_header",
                Some("zeros: the rest of the block is skipped without a report".into()),
            ),
            Parsed::Erased { offset, len } => Span::region(at(offset), len, "erased", None),
            Parsed::OldRecord {
                offset,
                len,
                log_number,
            } => Span::region(
                at(offset),
                len,
                "old_record",
                Some(format!(
                    "a record of log number {log_number}, left by an earlier use of a recycled file: the log ends here"
                )),
            ),
            Parsed::BadLength {
                offset,
                len,
                declared,
            } => Span::region(
                at(offset),
                len,
                "bad_length",
                Some(format!(
                    "bad record length: the header says {declared} bytes, past the block's end; {}",
                    gloss("bad record length")
                )),
            ),
            Parsed::ChecksumMismatch {
                offset,
                len,
                stored,
                computed,
            } => Span::region(
                at(offset),
                len,
                "checksum_mismatch",
                Some(format!(
                    "checksum mismatch (stored {stored:#010x}, computed {computed:#010x}); {}",
                    gloss("checksum mismatch")
                )),
            ),
        };
        spans.push(span);
    }
    spans
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
