//! The reader's state machine, free of I/O: LevelDB's `ReadPhysicalRecord` and `ReadRecord`
//! turned into steps that a driver feeds with blocks.
//!
//! Every branch mirrors `db/log_reader.cc`: which chunks are returned, which drops are reported,
//! with which byte counts, and the initial-offset filter. Where LevelDB relies on unsigned
//! wrap-around, the intent is implemented instead: read errors are always reported, other drops
//! are reported iff they start at or after the initial offset.

use core::ops::Range;

use crate::block::{Parsed, parse_chunk};
use crate::error::{Corruption, CorruptionKind};
use crate::format::{BLOCK_SIZE, FragmentKind, HEADER_SIZE, RecordType};
use crate::options::ReadOptions;

/// What the driver must do, or what the decoder found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// Load the next block and call [`Decoder::block_loaded`].
    NeedBlock,
    /// Skip this many bytes of input before the first block (the initial offset).
    Skip(u64),
    /// A fragment of a logical record, as a range of the current block.
    Fragment(RawFragment),
    /// The record in progress is abandoned; its fragments must be discarded.
    Aborted { record_offset: u64, bytes: u64, report: Option<Corruption> },
    /// Bytes were dropped outside any record in progress.
    Corruption(Corruption),
    /// The end of the log.
    Eof,
}

/// A fragment located in the current block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawFragment {
    pub(crate) kind: FragmentKind,
    pub(crate) record_offset: u64,
    pub(crate) chunk_offset: u64,
    pub(crate) end: u64,
    pub(crate) payload: Range<usize>,
}

/// Result of one physical step.
enum Phys {
    NeedBlock,
    Eof,
    /// LevelDB's `kBadRecord`, with the report it made (if any).
    Bad(Option<Corruption>),
    Chunk { record_type: u8, header_offset: u64, payload: Range<usize> },
}

#[derive(Debug, Clone)]
pub(crate) struct Decoder {
    // The unread part of the current block is `pos..len`; `end_of_buffer` is the file offset
    // just past the current block (LevelDB's `end_of_buffer_offset_`).
    pos: usize,
    len: usize,
    eof: bool,
    end_of_buffer: u64,
    verify: bool,
    initial_offset: u64,
    resyncing: bool,
    skip_pending: bool,
    last_record_offset: u64,
    // The logical record in progress (LevelDB's `in_fragmented_record` and `scratch`).
    in_record: bool,
    record_offset: u64,
    record_len: u64,
    pending: Option<Step>,
}

impl Decoder {
    pub(crate) fn new(options: &ReadOptions) -> Self {
        Self {
            pos: 0,
            len: 0,
            eof: false,
            end_of_buffer: 0,
            verify: options.verify_checksums,
            initial_offset: options.initial_offset,
            resyncing: options.initial_offset > 0,
            skip_pending: options.initial_offset > 0,
            last_record_offset: 0,
            in_record: false,
            record_offset: 0,
            record_len: 0,
            pending: None,
        }
    }

    /// The driver loaded a block of `len` bytes (fewer than a block: the end of the input).
    pub(crate) fn block_loaded(&mut self, len: usize) {
        let len = len.min(BLOCK_SIZE);
        self.pos = 0;
        self.len = len;
        self.end_of_buffer += len as u64;
        self.eof = len < BLOCK_SIZE;
    }

    /// The driver failed to read or skip: like LevelDB, the log ends here.
    pub(crate) fn read_failed(&mut self) {
        self.pos = self.len;
        self.eof = true;
    }

    /// File offset just past the last chunk consumed.
    pub(crate) fn position(&self) -> u64 {
        self.end_of_buffer - (self.len - self.pos) as u64
    }

    /// Offset of the first chunk of the last record returned (LevelDB's `LastRecordOffset`).
    pub(crate) fn last_record_offset(&self) -> u64 {
        self.last_record_offset
    }

    /// LevelDB's `ReportDrop` filter, evaluated with the current buffer state.
    fn reportable(&self, bytes: u64) -> bool {
        self.position().checked_sub(bytes).is_none_or(|start| start >= self.initial_offset)
    }

    fn report(&self, offset: u64, bytes: u64, kind: CorruptionKind) -> Option<Corruption> {
        self.reportable(bytes).then_some(Corruption { offset, bytes, kind })
    }

    /// Abandons the record in progress, if any.
    fn abort(&mut self, kind: Option<CorruptionKind>) -> Option<Step> {
        if !self.in_record {
            return None;
        }
        let (record_offset, bytes) = (self.record_offset, self.record_len);
        self.in_record = false;
        self.record_len = 0;
        let report = match kind {
            Some(kind) if bytes > 0 => self.report(record_offset, bytes, kind),
            _ => None,
        };
        Some(Step::Aborted { record_offset, bytes, report })
    }

    /// The next step, given the current block (the one last passed to [`Self::block_loaded`]).
    pub(crate) fn step(&mut self, block: &[u8]) -> Step {
        if let Some(step) = self.pending.take() {
            return step;
        }
        if self.skip_pending {
            self.skip_pending = false;
            let in_block = self.initial_offset % BLOCK_SIZE as u64;
            let mut block_start = self.initial_offset - in_block;
            // As LevelDB: don't search a block if the offset is in its trailer.
            if in_block > (BLOCK_SIZE - (HEADER_SIZE - 1)) as u64 {
                block_start += BLOCK_SIZE as u64;
            }
            self.end_of_buffer = block_start;
            if block_start > 0 {
                return Step::Skip(block_start);
            }
        }
        loop {
            match self.physical(block) {
                Phys::NeedBlock => return Step::NeedBlock,
                Phys::Eof => {
                    self.resyncing = false;
                    return match self.abort(None) {
                        Some(aborted) => {
                            self.pending = Some(Step::Eof);
                            aborted
                        }
                        None => Step::Eof,
                    };
                }
                Phys::Bad(report) => {
                    self.resyncing = false;
                    let aborted = self.abort(Some(CorruptionKind::ErrorInMiddleOfRecord));
                    match (report, aborted) {
                        (Some(c), Some(a)) => {
                            self.pending = Some(a);
                            return Step::Corruption(c);
                        }
                        (Some(c), None) => return Step::Corruption(c),
                        (None, Some(a)) => return a,
                        (None, None) => {}
                    }
                }
                Phys::Chunk { record_type, header_offset, payload } => {
                    if let Some(step) = self.chunk(record_type, header_offset, payload) {
                        return step;
                    }
                }
            }
        }
    }

    /// LevelDB's `ReadRecord` switch for one chunk; `None` means keep reading.
    fn chunk(&mut self, record_type: u8, header_offset: u64, payload: Range<usize>) -> Option<Step> {
        let kind = match RecordType::try_from(record_type) {
            Ok(RecordType::Full) => Some(FragmentKind::Full),
            Ok(RecordType::First) => Some(FragmentKind::First),
            Ok(RecordType::Middle) => Some(FragmentKind::Middle),
            Ok(RecordType::Last) => Some(FragmentKind::Last),
            _ => None,
        };
        if self.resyncing {
            match kind {
                Some(FragmentKind::Middle) => return None,
                Some(FragmentKind::Last) => {
                    self.resyncing = false;
                    return None;
                }
                _ => self.resyncing = false,
            }
        }
        let len = payload.len() as u64;
        let end = self.position();
        let fragment = |kind, record_offset| {
            Step::Fragment(RawFragment {
                kind,
                record_offset,
                chunk_offset: header_offset,
                end,
                payload: payload.clone(),
            })
        };
        match kind {
            Some(kind @ (FragmentKind::Full | FragmentKind::First)) => {
                let why = if kind == FragmentKind::Full {
                    CorruptionKind::PartialRecordBeforeFull
                } else {
                    CorruptionKind::PartialRecordBeforeFirst
                };
                let aborted = self.abort(Some(why));
                if kind == FragmentKind::Full {
                    self.last_record_offset = header_offset;
                } else {
                    self.in_record = true;
                    self.record_offset = header_offset;
                    self.record_len = len;
                }
                let step = fragment(kind, header_offset);
                match aborted {
                    Some(aborted) => {
                        self.pending = Some(step);
                        Some(aborted)
                    }
                    None => Some(step),
                }
            }
            Some(kind @ (FragmentKind::Middle | FragmentKind::Last)) => {
                if !self.in_record {
                    let why = if kind == FragmentKind::Middle {
                        CorruptionKind::MiddleWithoutStart
                    } else {
                        CorruptionKind::LastWithoutStart
                    };
                    return self.report(header_offset, len, why).map(Step::Corruption);
                }
                self.record_len += len;
                if kind == FragmentKind::Last {
                    self.in_record = false;
                    self.last_record_offset = self.record_offset;
                }
                Some(fragment(kind, self.record_offset))
            }
            None => {
                let why = CorruptionKind::UnknownRecordType(record_type);
                if self.in_record {
                    let (record_offset, partial) = (self.record_offset, self.record_len);
                    self.in_record = false;
                    self.record_len = 0;
                    let report = self.report(record_offset, partial + len, why);
                    Some(Step::Aborted { record_offset, bytes: partial, report })
                } else {
                    self.report(header_offset, len, why).map(Step::Corruption)
                }
            }
        }
    }

    /// LevelDB's `ReadPhysicalRecord`.
    fn physical(&mut self, block: &[u8]) -> Phys {
        let block = block.get(..self.len).unwrap_or(block);
        if self.len - self.pos < HEADER_SIZE {
            if !self.eof {
                return Phys::NeedBlock;
            }
            // A truncated header at the end of the input: the writer died mid-header.
            self.pos = self.len;
            return Phys::Eof;
        }
        let header_offset = self.position();
        match parse_chunk(block, self.pos, self.eof, self.verify) {
            Parsed::Chunk(chunk) => {
                self.pos = chunk.end();
                if header_offset < self.initial_offset {
                    // A chunk that starts before the initial offset is skipped.
                    return Phys::Bad(None);
                }
                let start = chunk.offset + HEADER_SIZE;
                Phys::Chunk {
                    record_type: chunk.record_type,
                    header_offset,
                    payload: start..start + chunk.payload.len(),
                }
            }
            Parsed::Trailer { .. } => Phys::NeedBlock,
            Parsed::Truncated { .. } => {
                self.pos = self.len;
                Phys::Eof
            }
            Parsed::ZeroHeader { .. } => {
                self.pos = self.len;
                Phys::Bad(None)
            }
            Parsed::BadLength { len, .. } => {
                self.pos = self.len;
                Phys::Bad(self.report(header_offset, len as u64, CorruptionKind::BadRecordLength))
            }
            Parsed::ChecksumMismatch { len, .. } => {
                self.pos = self.len;
                Phys::Bad(self.report(header_offset, len as u64, CorruptionKind::ChecksumMismatch))
            }
        }
    }
}
