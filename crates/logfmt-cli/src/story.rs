//! One story for how a log ends, told alike by `verify`, `dump` and `stats`: a torn tail, a
//! zero-filled tail (space a writer preallocated or mapped and never wrote: not a torn
//! record, nothing lost), Pebble's EOF trailer, and a file that is not a log at all.

use logfmt_std::{Damage, LogFile, RECYCLABLE_HEADER_SIZE, StaleTail, ZeroFill};

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
                crate::cmd::plural(bytes, "byte")
            ),
        }
    }
}

/// What the torn tail `tail` (as the reader reports it) is: zero fill, if every byte from its
/// offset to the end of the file is zero ([`logfmt_std::zero_fill`] decides).
pub(crate) fn classify(log: &LogFile, tail: &Damage) -> Option<Tail> {
    logfmt_std::zero_fill(log, tail).map(Tail::from)
}

/// Zero fill from `offset` to the end of `log` (a regular file), if every byte there is zero
/// ([`logfmt_std::zero_fill_from`] decides).
pub(crate) fn zero_filled_from(log: &LogFile, offset: u64) -> Option<Tail> {
    logfmt_std::zero_fill_from(log, offset).map(Tail::from)
}

impl From<ZeroFill> for Tail {
    fn from(ZeroFill { offset, bytes }: ZeroFill) -> Self {
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
    eof && logfmt_std::all_zero(
        log.file(),
        stale.offset + RECYCLABLE_HEADER_SIZE as u64,
        rest,
    )
    .unwrap_or(false)
}

/// A hint for a file whose reading found damage (or a torn tail) and no record, when it
/// holds text: not a log at all. A log's first chunk header has its type at byte 6 (1 to 8),
/// never a printable character; text has one there, and little else than text after it.
pub(crate) fn not_a_log(log: &LogFile, records: u64, damaged: bool) -> Option<&'static str> {
    if records > 0 || !damaged || !log.is_regular() {
        return None;
    }
    let mut start = vec![0u8; 4096];
    let read = {
        use std::os::unix::fs::FileExt;
        log.file().read_at(&mut start, 0).ok()?
    };
    let start = &start[..read];
    let printable = |b: u8| b.is_ascii_graphic() || b.is_ascii_whitespace() || b >= 0x80;
    let texty = start.iter().filter(|&&b| printable(b)).count();
    let typed = start.get(6).is_some_and(|&b| !printable(b));
    (read >= 16 && !typed && texty * 100 >= read * 95).then_some(
        "the file holds text, not a log in LevelDB's format: no record could be read from it",
    )
}
