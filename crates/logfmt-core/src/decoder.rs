//! The reader's state machine, free of I/O: LevelDB's `ReadPhysicalRecord` and `ReadRecord`
//! turned into steps that a driver feeds with blocks.
//!
//! With default options every branch mirrors `db/log_reader.cc`: which chunks are returned,
//! which drops are reported, with which byte counts, and the initial-offset filter. Where LevelDB
//! relies on unsigned wrap-around, the intent is implemented instead: read errors are always
//! reported, other drops are reported iff they start at or after the initial offset.
//!
//! The options add RocksDB's recyclable chunks and ignorable types, erased flash, and tailing.

use core::ops::Range;

use crate::block::{ChunkRules, Parsed, parse_chunk};
use crate::error::{Corruption, CorruptionKind};
use crate::format::{BLOCK_SIZE, FragmentKind, HEADER_SIZE, RecordType};
use crate::options::{LogEnd, ReadFormat, ReadOptions};

/// What the driver must do, or what the decoder found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// Load the next block and call [`Decoder::block_loaded`].
    NeedBlock,
    /// Skip this many bytes of input before the first block (the initial offset).
    Skip(u64),
    /// Tailing: the input is exhausted for now; refill the current block and call
    /// [`Decoder::block_loaded`] with its new length, or report "nothing yet".
    Pending,
    /// A fragment of a logical record, as a range of the current block.
    Fragment(RawFragment),
    /// The record in progress is abandoned; its fragments must be discarded.
    Aborted {
        record_offset: u64,
        bytes: u64,
        report: Option<Corruption>,
    },
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
    Pending,
    /// The end of the input; `torn_at` is where an incomplete chunk begins, if any.
    Eof {
        torn_at: Option<u64>,
    },
    /// A chunk from an earlier use of the file.
    Old {
        offset: u64,
        log_number: u32,
    },
    /// Erased flash: nothing written to the end of the block.
    Erased,
    /// LevelDB's `kBadRecord`, with the report it made (if any).
    Bad(Option<Corruption>),
    Chunk {
        record_type: u8,
        log_number: Option<u32>,
        header_offset: u64,
        payload: Range<usize>,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct Decoder {
    // The unread part of the current block is `pos..len`; `end_of_buffer` is the file offset
    // just past the current block (LevelDB's `end_of_buffer_offset_`).
    pos: usize,
    len: usize,
    eof: bool,
    failed: bool,
    /// Whether [`fast_full`](Self::fast_full) may run: nothing pending or in progress, a legacy
    /// log, no erased-flash rules. Kept by [`Self::settle`] after every change.
    fast: bool,
    end_of_buffer: u64,
    rules: ChunkRules,
    /// `None` while an `Auto` format is undecided; `Some(recyclable)` once known.
    recyclable: Option<bool>,
    skip_ignorable: bool,
    resync_after_zeros: bool,
    tailing: bool,
    initial_offset: u64,
    resyncing: bool,
    skip_pending: bool,
    last_record_offset: u64,
    last_record_end: u64,
    // The logical record in progress (LevelDB's `in_fragmented_record` and `scratch`).
    in_record: bool,
    record_offset: u64,
    record_len: u64,
    pending: Option<Step>,
    end: Option<LogEnd>,
    /// Tailing: the rest of the current (short) block was dropped, with this report kind (or
    /// silently); bytes that arrive in it later are dropped too.
    rest_dropped: Option<Option<CorruptionKind>>,
}

impl Decoder {
    pub(crate) fn new(options: &ReadOptions) -> Self {
        let (recyclable, log_number) = match options.format {
            ReadFormat::Legacy => (Some(false), None),
            ReadFormat::Recyclable { log_number } => (Some(true), Some(log_number)),
            ReadFormat::Auto { log_number } => (None, log_number),
        };
        let mut decoder = Self {
            pos: 0,
            len: 0,
            eof: false,
            failed: false,
            fast: false,
            end_of_buffer: 0,
            rules: ChunkRules {
                verify: options.verify_checksums,
                recyclable: recyclable != Some(false),
                log_number,
                erased: options.erased,
            },
            recyclable,
            skip_ignorable: options.skip_ignorable_types,
            resync_after_zeros: options.resync_after_zeros,
            tailing: options.tailing,
            initial_offset: options.initial_offset,
            resyncing: options.initial_offset > 0,
            skip_pending: options.initial_offset > 0,
            last_record_offset: 0,
            last_record_end: 0,
            in_record: false,
            record_offset: 0,
            record_len: 0,
            pending: None,
            end: None,
            rest_dropped: None,
        };
        decoder.settle();
        decoder
    }

    /// Recomputes [`Self::fast`] after a change of state (without hot paths, it stays false).
    #[inline(always)]
    fn settle(&mut self) {
        if !crate::HOT_PATHS {
            return;
        }
        self.fast = self.pending.is_none()
            && !self.skip_pending
            && !self.resyncing
            && !self.in_record
            && self.recyclable == Some(false)
            && self.rules.erased.is_none();
    }

    /// The driver loaded the next block, or refilled the current one, and it now holds `len`
    /// bytes (fewer than a block: the end of the input so far).
    pub(crate) fn block_loaded(&mut self, len: usize) {
        let len = len.min(BLOCK_SIZE);
        if self.eof && len >= self.len {
            // A refill of the current, short block (tailing).
            let added = len - self.len;
            let old_end = self.end_of_buffer;
            self.end_of_buffer = self.end_of_buffer.saturating_add(added as u64);
            self.len = len;
            if let Some(dropped) = self.rest_dropped {
                // The rest of this block was dropped when it was shorter: what arrives in it
                // now is dropped too, as a reader of the whole block drops it.
                self.pos = len;
                if let Some(kind) = dropped
                    && added > 0
                {
                    self.pending = self
                        .report(old_end, added as u64, kind)
                        .map(Step::Corruption);
                }
            }
        } else {
            self.pos = 0;
            self.rest_dropped = None;
            self.end_of_buffer = self.end_of_buffer.saturating_add(len as u64);
        }
        self.len = len;
        self.eof = len < BLOCK_SIZE;
        self.settle();
    }

    /// The driver failed to read or skip: like LevelDB, the log ends here.
    pub(crate) fn read_failed(&mut self) {
        self.end.get_or_insert(LogEnd::ReadError {
            offset: self.end_of_buffer,
        });
        self.pos = self.len;
        self.eof = true;
        self.failed = true;
    }

    /// Whether the current block is the last one read so far and short.
    pub(crate) fn at_short_block(&self) -> bool {
        self.eof
    }

    /// File offset just past the last chunk consumed.
    pub(crate) fn position(&self) -> u64 {
        self.end_of_buffer - (self.len - self.pos) as u64
    }

    /// Offset of the first chunk of the last record returned (LevelDB's `LastRecordOffset`).
    pub(crate) fn last_record_offset(&self) -> u64 {
        self.last_record_offset
    }

    /// Offset just past the last chunk of the last record returned.
    pub(crate) fn last_record_end(&self) -> u64 {
        self.last_record_end
    }

    /// How the log ended, once it has.
    pub(crate) fn end(&self) -> Option<LogEnd> {
        self.end
    }

    /// LevelDB's `ReportDrop` filter, evaluated with the current buffer state.
    fn reportable(&self, bytes: u64) -> bool {
        self.position()
            .checked_sub(bytes)
            .is_none_or(|start| start >= self.initial_offset)
    }

    fn report(&self, offset: u64, bytes: u64, kind: CorruptionKind) -> Option<Corruption> {
        self.reportable(bytes).then_some(Corruption {
            offset,
            bytes,
            kind,
        })
    }

    /// Abandons the record in progress, if any, reporting it as `kind` if it had bytes.
    fn abort(&mut self, kind: Option<CorruptionKind>) -> Option<Step> {
        if !self.in_record {
            return None;
        }
        let (record_offset, bytes) = (self.record_offset, self.record_len);
        self.in_record = false;
        self.record_len = 0;
        // As LevelDB: a record cut by damage is reported even when empty (an empty FIRST, then
        // a bad chunk: "error in middle of record", 0 bytes); one cut by a new record only when
        // it had bytes (the tolerance for an old writer bug).
        // In flash images (`erased` set) an empty record in progress is write padding (empty
        // FIRST chunks), so its abort is not worth a 0-byte report.
        let report = match kind {
            Some(CorruptionKind::ErrorInMiddleOfRecord)
                if bytes > 0 || self.rules.erased.is_none() =>
            {
                self.report(record_offset, bytes, CorruptionKind::ErrorInMiddleOfRecord)
            }
            Some(kind) if bytes > 0 => self.report(record_offset, bytes, kind),
            _ => None,
        };
        Some(Step::Aborted {
            record_offset,
            bytes,
            report,
        })
    }

    /// Returns `first`, queueing `second` (if any) for the next call.
    fn then(&mut self, first: Step, second: Option<Step>) -> Step {
        self.pending = second;
        first
    }

    /// Ends the log: abandons the record in progress silently, then `Eof`.
    fn finish(&mut self, end: LogEnd) -> Step {
        self.resyncing = false;
        self.end.get_or_insert(end);
        match self.abort(None) {
            Some(aborted) => self.then(aborted, Some(Step::Eof)),
            None => Step::Eof,
        }
    }

    /// The next step, given the current block (the one last passed to [`Self::block_loaded`]).
    pub(crate) fn step(&mut self, block: &[u8]) -> Step {
        let step = self.step_inner(block);
        self.settle();
        step
    }

    // One copy of the state machine on bare metal (measured: 64 B less flash).
    #[cfg_attr(target_os = "none", inline(always))]
    fn step_inner(&mut self, block: &[u8]) -> Step {
        if let Some(step) = self.pending.take() {
            return step;
        }
        if self.skip_pending {
            self.skip_pending = false;
            let in_block = self.initial_offset % BLOCK_SIZE as u64;
            let mut block_start = self.initial_offset - in_block;
            // As LevelDB: don't search a block if the offset is in its trailer.
            if in_block > (BLOCK_SIZE - (HEADER_SIZE - 1)) as u64 {
                block_start = block_start.saturating_add(BLOCK_SIZE as u64);
            }
            self.end_of_buffer = block_start;
            if block_start > 0 {
                return Step::Skip(block_start);
            }
        }
        loop {
            match self.physical(block) {
                Phys::NeedBlock => return Step::NeedBlock,
                Phys::Pending => return Step::Pending,
                Phys::Eof { torn_at } => {
                    let input_end = self.end_of_buffer;
                    let end = match (self.in_record.then_some(self.record_offset), torn_at) {
                        (Some(offset), _) | (None, Some(offset)) => LogEnd::Torn {
                            offset,
                            len: input_end - offset,
                        },
                        (None, None) => LogEnd::Clean { offset: input_end },
                    };
                    return self.finish(end);
                }
                Phys::Old { offset, log_number } => {
                    let offset = if self.in_record {
                        self.record_offset
                    } else {
                        offset
                    };
                    return self.finish(LogEnd::OldRecord { offset, log_number });
                }
                Phys::Erased => {
                    if let Some(aborted) = self.abort(None) {
                        return aborted;
                    }
                }
                Phys::Bad(report) => {
                    self.resyncing = false;
                    let aborted = self.abort(Some(CorruptionKind::ErrorInMiddleOfRecord));
                    match (report, aborted) {
                        (Some(c), aborted) => return self.then(Step::Corruption(c), aborted),
                        (None, Some(aborted)) => return aborted,
                        (None, None) => {}
                    }
                }
                Phys::Chunk {
                    record_type,
                    log_number,
                    header_offset,
                    payload,
                } => {
                    if let Some(step) = self.chunk(record_type, log_number, header_offset, payload)
                    {
                        return step;
                    }
                }
            }
        }
    }

    /// The hot path of [`step`](Self::step): a well-formed legacy `FULL` chunk at the current
    /// position while no record is in progress and nothing else is pending. Returns its
    /// payload's range in the block and its offset, with exactly the state changes `step` would
    /// make; `None` sends the caller to `step` (which handles every case, this one included).
    #[inline]
    pub(crate) fn fast_full(&mut self, block: &[u8]) -> Option<(Range<usize>, u64)> {
        if !self.fast {
            return None;
        }
        let rest = block.get(self.pos..self.len)?;
        let (header, body) = rest.split_first_chunk::<HEADER_SIZE>()?;
        let len = usize::from(u16::from_le_bytes([header[4], header[5]]));
        if header[6] != RecordType::Full as u8 || body.len() < len {
            return None;
        }
        if self.rules.verify {
            /// CRC-32C of the `FULL` type byte, which the checksum covers first.
            const FULL_TYPE_CRC: u32 = 0xa016_d052;
            let stored = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
            let payload = body.get(..len)?;
            if crate::checksum::mask(crate::checksum::extend(FULL_TYPE_CRC, payload)) != stored {
                return None;
            }
        }
        let header_offset = self.position();
        if header_offset < self.initial_offset {
            return None;
        }
        let start = self.pos + HEADER_SIZE;
        self.pos = start + len;
        self.last_record_offset = header_offset;
        self.last_record_end = self.position();
        Some((start..start + len, header_offset))
    }

    /// LevelDB's `ReadRecord` switch for one chunk; `None` means keep reading.
    fn chunk(
        &mut self,
        record_type: u8,
        log_number: Option<u32>,
        header_offset: u64,
        payload: Range<usize>,
    ) -> Option<Step> {
        let known = RecordType::try_from(record_type).ok();
        let recyclable = known.is_some_and(RecordType::is_recyclable);
        if self.recyclable.is_none() && known.and_then(RecordType::fragment_kind).is_some() {
            // `Auto`: the first chunk decides the format.
            self.recyclable = Some(recyclable);
            self.rules.recyclable = recyclable;
            if self.rules.log_number.is_none() {
                self.rules.log_number = log_number;
            }
        }
        let len = payload.len() as u64;
        let kind = match known {
            Some(t) if t.is_recyclable() == (self.recyclable == Some(true)) => t.fragment_kind(),
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
                    self.last_record_end = end;
                } else {
                    self.in_record = true;
                    self.record_offset = header_offset;
                    self.record_len = len;
                }
                let step = fragment(kind, header_offset);
                Some(match aborted {
                    Some(aborted) => self.then(aborted, Some(step)),
                    None => step,
                })
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
                    self.last_record_end = end;
                }
                Some(fragment(kind, self.record_offset))
            }
            None => {
                let why = match known {
                    Some(t) if t.fragment_kind().is_some() && !t.is_recyclable() => {
                        CorruptionKind::UnexpectedFormat(record_type)
                    }
                    _ if self.skip_ignorable && record_type & 0x80 != 0 => {
                        // RocksDB: skipped silently; a record in progress is dropped with it.
                        return self.abort(None);
                    }
                    _ => CorruptionKind::UnknownRecordType(record_type),
                };
                if self.in_record {
                    let (record_offset, partial) = (self.record_offset, self.record_len);
                    self.in_record = false;
                    self.record_len = 0;
                    let report = self.report(record_offset, partial + len, why);
                    Some(Step::Aborted {
                        record_offset,
                        bytes: partial,
                        report,
                    })
                } else {
                    self.report(header_offset, len, why).map(Step::Corruption)
                }
            }
        }
    }

    /// LevelDB's `ReadPhysicalRecord`.
    fn physical(&mut self, block: &[u8]) -> Phys {
        let block = block.get(..self.len).unwrap_or(block);
        let waiting = self.tailing && !self.failed;
        if self.len - self.pos < HEADER_SIZE {
            if !self.eof {
                return Phys::NeedBlock;
            }
            if waiting {
                return Phys::Pending;
            }
            // A truncated header at the end of the input: the writer died mid-header.
            let torn_at = (self.pos < self.len).then(|| self.position());
            self.pos = self.len;
            return Phys::Eof { torn_at };
        }
        let header_offset = self.position();
        match parse_chunk(block, self.pos, self.eof, &self.rules) {
            Parsed::Chunk(chunk) => {
                self.pos = chunk.end();
                if header_offset < self.initial_offset {
                    // A chunk that starts before the initial offset is skipped.
                    return Phys::Bad(None);
                }
                let start = chunk.offset + chunk.header_len;
                Phys::Chunk {
                    record_type: chunk.record_type,
                    log_number: chunk.log_number,
                    header_offset,
                    payload: start..start + chunk.payload.len(),
                }
            }
            Parsed::Trailer { .. } => Phys::NeedBlock,
            Parsed::Truncated { .. } if waiting => Phys::Pending,
            Parsed::Truncated { .. } => {
                self.pos = self.len;
                Phys::Eof {
                    torn_at: Some(header_offset),
                }
            }
            Parsed::ZeroHeader { offset, .. } => {
                if self.resync_after_zeros {
                    let next = block
                        .get(offset..)
                        .and_then(|rest| rest.iter().position(|&b| b != 0))
                        .map(|n| offset + n);
                    match next.map(|n| (n, parse_chunk(block, n, self.eof, &self.rules))) {
                        Some((next, Parsed::Chunk(_))) => {
                            self.pos = next;
                            return Phys::Bad(None);
                        }
                        // A chunk cut by the end of the input: the zeros before it are final
                        // (they cut the record in progress, reported now), the chunk is torn
                        // or, tailing, still arriving: whether reading goes on there is
                        // decided once it is whole.
                        Some((next, Parsed::Truncated { .. })) if self.eof => {
                            if !waiting {
                                self.pos = next;
                                return Phys::Bad(None);
                            }
                            return if self.in_record {
                                Phys::Bad(None)
                            } else {
                                Phys::Pending
                            };
                        }
                        // Zeros to the end of the input: preallocated space, where the log
                        // ends (a record in progress is torn). Tailing, they may yet be
                        // overwritten.
                        None if self.eof => {
                            if waiting {
                                return Phys::Pending;
                            }
                            self.pos = self.len;
                            return Phys::Eof { torn_at: None };
                        }
                        _ => {}
                    }
                }
                self.pos = self.len;
                self.rest_dropped = Some(None);
                Phys::Bad(None)
            }
            Parsed::Erased { .. } => {
                self.pos = self.len;
                self.rest_dropped = Some(None);
                Phys::Erased
            }
            Parsed::OldRecord { log_number, .. } => {
                self.pos = self.len;
                Phys::Old {
                    offset: header_offset,
                    log_number,
                }
            }
            Parsed::BadLength { len, .. } => {
                self.pos = self.len;
                self.rest_dropped = Some(Some(CorruptionKind::BadRecordLength));
                Phys::Bad(self.report(header_offset, len as u64, CorruptionKind::BadRecordLength))
            }
            Parsed::ChecksumMismatch { len, .. } => {
                self.pos = self.len;
                self.rest_dropped = Some(Some(CorruptionKind::ChecksumMismatch));
                Phys::Bad(self.report(header_offset, len as u64, CorruptionKind::ChecksumMismatch))
            }
        }
    }
}
