//! One story for how a log ends, told alike by `verify`, `dump` and `stats`: a torn tail, a
//! zero-filled tail (space a writer preallocated or mapped and never wrote: not a torn
//! record, nothing lost), Pebble's EOF trailer, and a file that is not a log at all.

use logfmt_std::{
    Damage, LogFile,
    advanced::{RECYCLABLE_HEADER_SIZE, StaleTail, ZeroFill},
};

/// How a log's end reads, beyond what the reader reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tail {
    /// Zeros from `offset` to the end of the file: space preallocated or memory-mapped and
    /// never written (a writer that used mmap and exited without truncating its file). Not a
    /// torn record: no record was being written there.
    ZeroFilled {
        /// Where the zeros begin.
        offset: u64,
        /// How many there are (to the end of the file).
        bytes: u64,
    },
}

impl Tail {
    /// The sentence that explains it.
    pub(crate) fn explain(&self) -> String {
        match *self {
            Self::ZeroFilled { offset, bytes } => format!(
                "the log ends in a zero-filled tail: {} of zeros from offset {offset} to the end \
                 of the file (space preallocated or memory-mapped and never written, as a \
                 writer that used mmap leaves it; not a torn record: nothing was lost)",
                crate::notes::plural(bytes, "byte")
            ),
        }
    }
}

/// What the torn tail `tail` (as the reader reports it) is: zero fill, if every byte from its
/// offset to the end of the file is zero ([`logfmt_std::advanced::zero_fill`] decides).
pub(crate) fn classify(log: &LogFile, tail: &Damage) -> Option<Tail> {
    logfmt_std::advanced::zero_fill(log, tail).map(Tail::from)
}

/// Zero fill from `offset` to the end of `log` (a regular file), if every byte there is zero
/// ([`logfmt_std::advanced::zero_fill_from`] decides).
pub(crate) fn zero_filled_from(log: &LogFile, offset: u64) -> Option<Tail> {
    logfmt_std::advanced::zero_fill_from(log, offset).map(Tail::from)
}

impl From<ZeroFill> for Tail {
    fn from(ZeroFill { offset, bytes, .. }: ZeroFill) -> Self {
        Self::ZeroFilled { offset, bytes }
    }
}

/// Whether the stale bytes after a recyclable log's end are Pebble's EOF trailer: the empty
/// recyclable FULL chunk that Pebble writes when it closes a log (checksum 0, length 0, type
/// 5, the log number after the log's own), followed by nothing but zeros. A chunk of an
/// earlier use of the file never has a zero checksum: its checksum covers its type and log
/// number.
pub(crate) fn is_pebble_eof_trailer(log: &LogFile, stale: &StaleTail) -> bool {
    if !log.is_regular() || stale.bytes < RECYCLABLE_HEADER_SIZE as u64 {
        return false;
    }
    let mut header = [0u8; RECYCLABLE_HEADER_SIZE];
    {
        use std::os::unix::fs::FileExt;
        if log.file().read_exact_at(&mut header, stale.offset).is_err() {
            return false;
        }
    }
    let number = u32::from_le_bytes([header[7], header[8], header[9], header[10]]);
    let eof = header[..6] == [0; 6] && header[6] == 5 && number == stale.log_number;
    let rest = stale.bytes - RECYCLABLE_HEADER_SIZE as u64;
    // The stale bytes need not run to the length the log had when it was opened.
    eof && logfmt_std::advanced::all_zero(
        log.file(),
        stale.offset + RECYCLABLE_HEADER_SIZE as u64,
        rest,
    )
    .unwrap_or(false)
}

/// Why a file is not a log at all: its reading found damage (or a torn tail) and no record,
/// and its first bytes are no chunk header a writer of the format leaves at offset 0.
///
/// A log's first chunk header has a type at byte 6 that a writer uses (1 to 9, logfmt's packs
/// 0x51 to 0x54, a flash log's ring or resume marker 0xB0 and 0xB1), or zeros (space never
/// written), or a checksum that holds for its chunk (a log whose first type byte is damaged).
/// Text, random data and files of other formats have other bytes there. An empty file, a
/// file of zeros (read as a zero-filled tail, no damage), a file shorter than a header (7
/// bytes: a torn header) and a log whose only record is torn (a well-formed header) are logs.
pub(crate) fn not_a_log(log: &LogFile, records: u64, damaged: bool) -> Option<NotALog> {
    if records > 0 || !damaged || !log.is_regular() {
        return None;
    }
    // The first block: the first chunk is in it, whole.
    let mut start = vec![0u8; logfmt_core::parts::format::BLOCK_SIZE];
    let read = {
        use std::os::unix::fs::FileExt;
        log.file().read_at(&mut start, 0).ok()?
    };
    let start = &start[..read];
    let header = start.get(..logfmt_core::parts::format::HEADER_SIZE)?;
    if is_chunk_header(header) || checksum_holds(start) {
        return None;
    }
    let printable = |b: u8| b.is_ascii_graphic() || b.is_ascii_whitespace() || b >= 0x80;
    let texty = start.iter().filter(|&&b| printable(b)).count();
    Some(if texty * 100 >= read * 95 {
        NotALog::Text
    } else {
        NotALog::OtherBytes
    })
}

/// Whether `header` (the first 7 bytes of a file) can be a chunk header a writer left, or
/// space never written (zeros, or an erased flash region's 0xFF). Its length is not judged:
/// a log whose first length is damaged is a log with damage.
fn is_chunk_header(header: &[u8]) -> bool {
    use logfmt_core::parts::format::{
        LENGTH_FIELD, RESUME_TYPE, RING_TYPE, SET_COMPRESSION_TYPE, TYPE_FIELD,
    };
    if header.iter().all(|&b| b == 0) || header.iter().all(|&b| b == 0xFF) {
        return true;
    }
    let length = header.get(LENGTH_FIELD).map_or(0, |field| {
        field.iter().rev().fold(0u16, |n, &b| n << 8 | u16::from(b))
    });
    match header.get(TYPE_FIELD).copied() {
        // RocksDB's compression record: a fixed32 (a tab in text is not one).
        Some(SET_COMPRESSION_TYPE) => length == 4,
        Some(kind) => matches!(kind, 1..=8 | 0x51..=0x54 | RING_TYPE | RESUME_TYPE),
        None => false,
    }
}

/// Whether the first chunk of `block` (a file's first bytes) has a checksum that holds over its
/// type and payload, in the legacy or the recyclable layout.
fn checksum_holds(block: &[u8]) -> bool {
    use logfmt_core::parts::checksum::{crc32c, unmask};
    use logfmt_core::parts::format::{HEADER_SIZE, LENGTH_FIELD, TYPE_FIELD};
    let Some(&[a, b, c, d]) = block.get(..4) else {
        return false;
    };
    let Some(&[low, high]) = block.get(LENGTH_FIELD) else {
        return false;
    };
    let stored = unmask(u32::from_le_bytes([a, b, c, d]));
    let length = usize::from(u16::from_le_bytes([low, high]));
    [HEADER_SIZE, RECYCLABLE_HEADER_SIZE]
        .into_iter()
        .any(|size| {
            block
                .get(TYPE_FIELD..size + length)
                .is_some_and(|covered| crc32c(covered) == stored)
        })
}

/// A file that is not a log: what its bytes look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotALog {
    /// Text (at least 95% printable bytes).
    Text,
    /// Other bytes: random data, a file of another format.
    OtherBytes,
}

impl NotALog {
    /// One line saying so.
    pub(crate) fn explain(self) -> &'static str {
        match self {
            Self::Text => {
                "not a log: the file holds text, not a log in LevelDB's format (no record \
                 could be read from it)"
            }
            Self::OtherBytes => {
                "not a log: its first bytes are no chunk header of LevelDB's format (no \
                 record could be read from it)"
            }
        }
    }

    /// Its name in JSON.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::OtherBytes => "other_bytes",
        }
    }
}

/// Pebble's verdict on a log read with `read` whose first damage is at `first`
/// ([`logfmt_std::advanced::pebble_end`] decides): `None` unless the log is read as Pebble's
/// and is a regular file (a pipe cannot be read ahead).
pub(crate) fn pebble_end(
    log: &LogFile,
    read: &logfmt_std::advanced::ReadOptions,
    first: Option<u64>,
) -> Result<Option<logfmt_std::advanced::PebbleEnd>, crate::error::CliError> {
    let Some(first) = first else {
        return Ok(None);
    };
    if read.dialect != logfmt_std::advanced::Dialect::Pebble || !log.is_regular() {
        return Ok(None);
    }
    Ok(Some(
        logfmt_std::advanced::pebble_end(log.reread()?, read, first, log.len_at_open())
            .map_err(|e| log.read_error(e))?,
    ))
}
