//! The reader's state machine, free of I/O: LevelDB's `ReadPhysicalRecord` (the [`cursor`]
//! half) and `ReadRecord` (the logical half, here) turned into steps that a driver feeds with
//! blocks.
//!
//! With default options every branch mirrors `db/log_reader.cc`: which chunks are returned,
//! which drops are reported, with which byte counts, and the initial-offset filter. Where LevelDB
//! relies on unsigned wrap-around, the intent is implemented instead: read errors are always
//! reported, other drops are reported iff they start at or after the initial offset. What
//! LevelDB passes over silently is reported as a [`Skip`], which the LevelDB-faithful readers
//! ignore.
//!
//! The options add RocksDB's recyclable chunks and ignorable types, erased flash, and tailing.

mod cursor;

use core::ops::Range;

use self::cursor::{Cursor, Dropped, Phys};
use crate::block::{ChunkClass, ChunkRules};
use crate::error::{Corruption, CorruptionKind};
use crate::format::{
    BLOCK_SIZE, CHECKSUM_FIELD, ChunkFormat, Format, FragmentKind, HEADER_SIZE, HOT_PATHS,
    LENGTH_FIELD, RecordType, SET_COMPRESSION_TYPE, TYPE_FIELD,
};
use crate::options::{LogEnd, ReadOptions};
use crate::pack::{self, PackError};
use crate::skip::{Skip, SkipKind};

/// What the driver must do, or what the decoder found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// Load the next block and call [`Decoder::block_loaded`].
    NeedBlock,
    /// Skip this many bytes of input before the first block (the initial offset).
    SkipInput(u64),
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
    /// Bytes were passed over without a report.
    Skipped(Skip),
    /// The end of the log.
    Eof,
}

/// A fragment located in the current block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawFragment {
    pub(crate) kind: FragmentKind,
    /// A fragment of a [pack](crate::pack).
    pub(crate) pack: bool,
    /// A fragment of a record compressed after RocksDB's compression record: its codec.
    pub(crate) compressed: Option<u32>,
    pub(crate) record_offset: u64,
    pub(crate) chunk_offset: u64,
    pub(crate) end: u64,
    pub(crate) payload: Range<usize>,
}

/// A chunk a reader may verify while copying it ([`Decoder::fused_candidate`]).
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub(crate) kind: FragmentKind,
    pub(crate) payload: Range<usize>,
    /// The masked checksum in its header.
    pub(crate) stored: u32,
    /// The file offset of its header.
    pub(crate) chunk_offset: u64,
    /// A fragmented record is in progress.
    pub(crate) in_record: bool,
}

/// Where the logical reader stands (LevelDB's `resyncing_`, `in_fragmented_record` and the
/// initial-offset skip, as one state).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the first block: reading starts at the block holding the initial offset.
    Seeking,
    /// After an initial offset: `MIDDLE` and `LAST` chunks continue a record begun before it
    /// and are skipped, until another chunk arrives.
    Resyncing,
    /// Between records.
    Idle,
    /// A fragmented record is in progress.
    InRecord {
        /// File offset of its first chunk.
        offset: u64,
        /// Payload bytes delivered so far.
        len: u64,
        /// It is a [pack](crate::pack).
        pack: bool,
        /// The record count its first chunk declares, if it is a pack and the count is there:
        /// reported as lost if the pack is cut.
        count: Option<u32>,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct Decoder {
    cursor: Cursor,
    state: State,
    /// How chunks are parsed and classified, with the format decision.
    rules: ChunkRules,
    initial_offset: u64,
    /// A step found together with the one returned, for the next call.
    pending: Option<Step>,
    end: Option<LogEnd>,
    last_record_offset: u64,
    last_record_end: u64,
    /// Whether [`fast_full`](Self::fast_full) may run: idle, nothing pending, a legacy log, no
    /// erased-flash rules, no compression. Kept by [`Self::settle`] after every change.
    fast: bool,
    /// The codec of RocksDB's compression record, once read: the records after it are
    /// compressed.
    compression: Option<u32>,
}

impl Decoder {
    pub(crate) fn new(options: &ReadOptions) -> Self {
        let mut decoder = Self {
            cursor: Cursor::new(options),
            state: if options.initial_offset > 0 {
                State::Seeking
            } else if options.starts_mid_log {
                State::Resyncing
            } else {
                State::Idle
            },
            rules: ChunkRules::new(options),
            initial_offset: options.initial_offset,
            pending: None,
            end: None,
            last_record_offset: 0,
            last_record_end: 0,
            fast: false,
            compression: None,
        };
        decoder.settle();
        decoder
    }

    /// Recomputes [`Self::fast`] after a change of state (without hot paths, it stays false).
    #[inline(always)]
    fn settle(&mut self) {
        if !HOT_PATHS {
            return;
        }
        // Positions only grow: once the position is past the initial offset, every chunk the
        // hot path reads is too, so it need not check. Once the log has ended, nothing is read.
        self.fast = self.pending.is_none()
            && self.end.is_none()
            && self.compression.is_none()
            && self.state == State::Idle
            && self.rules.format == ChunkFormat::Decided(Format::Legacy)
            && self.rules.erased.is_none()
            && self.cursor.position() >= self.initial_offset;
    }

    /// The driver loaded the next block, or refilled the current one, and it now holds `len`
    /// bytes (fewer than a block: the end of the input so far).
    pub(crate) fn block_loaded(&mut self, len: usize, last: bool) {
        match self.cursor.block_loaded(len, last) {
            Some(Dropped::Reported(corruption)) => {
                self.pending = Some(Step::Corruption(corruption))
            }
            Some(Dropped::Skipped(skip)) => self.pending = Some(Step::Skipped(skip)),
            None => {}
        }
        self.settle();
    }

    /// The driver failed to read or skip: like LevelDB, the log ends here.
    pub(crate) fn read_failed(&mut self) {
        self.end.get_or_insert(LogEnd::ReadError {
            offset: self.cursor.end_of_buffer,
        });
        // Nothing found before the failure is pending but the skip of an initial offset,
        // which did not happen.
        self.pending = None;
        self.cursor.read_failed();
        self.settle();
    }

    /// Whether the current block is the last one read so far and short.
    pub(crate) fn at_short_block(&self) -> bool {
        self.cursor.eof
    }

    /// File offset just past the last chunk consumed.
    pub(crate) fn position(&self) -> u64 {
        self.cursor.position()
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

    /// The chunk format: as given, or as the first chunk decided it.
    pub(crate) fn format(&self) -> ChunkFormat {
        self.rules.format
    }

    /// Once the log has ended where the input stopped being readable before its end (a
    /// chunk cut short, a zero header): the well-formed chunks of `block` (the current one)
    /// after that point, as the file offset of the first and their count.
    pub(crate) fn chunks_after_end(&self, block: &[u8]) -> Option<(u64, u64)> {
        self.end?;
        let at = self.cursor.unreadable?;
        let block = block.get(..self.cursor.len)?;
        let (first, count) =
            crate::block::chunks_from(block, at + 1, self.cursor.eof, &self.rules)?;
        let block_start = self.cursor.end_of_buffer - self.cursor.len as u64;
        Some((block_start + first as u64, count as u64))
    }

    fn report(&self, offset: u64, bytes: u64, kind: CorruptionKind) -> Option<Corruption> {
        self.cursor.reportable(bytes).then_some(Corruption {
            offset,
            bytes,
            kind,
        })
    }

    /// Abandons the record in progress, if any, reporting it as `kind` if it had bytes.
    fn abort(&mut self, kind: Option<CorruptionKind>) -> Option<Step> {
        let State::InRecord {
            offset, len, count, ..
        } = self.state
        else {
            return None;
        };
        self.state = State::Idle;
        // A pack cut by damage or by a new record: lost with its records, if its count is known.
        let kind = match (kind, count) {
            (Some(_), Some(lost)) => Some(CorruptionKind::BadPack {
                error: PackError::Incomplete,
                lost,
            }),
            (kind, _) => kind,
        };
        // As LevelDB: a record cut by damage is reported even when empty (an empty FIRST, then
        // a bad chunk: "error in middle of record", 0 bytes); one cut by a new record only when
        // it had bytes (the tolerance for an old writer bug).
        // In flash images (`erased` set) an empty record in progress is write padding (empty
        // FIRST chunks), so its abort is not worth a 0-byte report.
        let report = match kind {
            Some(CorruptionKind::ErrorInMiddleOfRecord)
                if len > 0 || self.rules.erased.is_none() =>
            {
                self.report(offset, len, CorruptionKind::ErrorInMiddleOfRecord)
            }
            Some(kind) if len > 0 => self.report(offset, len, kind),
            _ => None,
        };
        Some(Step::Aborted {
            record_offset: offset,
            bytes: len,
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
        if self.state == State::Resyncing {
            self.state = State::Idle;
        }
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
        if self.state == State::Seeking {
            self.state = State::Resyncing;
            let in_block = self.initial_offset % BLOCK_SIZE as u64;
            let mut block_start = self.initial_offset - in_block;
            // As LevelDB: don't search a block if the offset is in its trailer.
            if in_block > (BLOCK_SIZE - (HEADER_SIZE - 1)) as u64 {
                block_start = block_start.saturating_add(BLOCK_SIZE as u64);
            }
            self.cursor.end_of_buffer = block_start;
            if block_start > 0 {
                self.pending = Some(Step::Skipped(Skip {
                    offset: 0,
                    len: block_start,
                    kind: SkipKind::BeforeInitialOffset,
                }));
                return Step::SkipInput(block_start);
            }
        }
        loop {
            let in_record = matches!(self.state, State::InRecord { .. });
            let phys = self.cursor.physical(block, &self.rules, in_record);
            if let Some(step) = self.on_physical(phys, block) {
                return step;
            }
        }
    }

    /// The logical reader's answer to one physical step; `None` means read on.
    #[cfg_attr(target_os = "none", inline(always))]
    fn on_physical(&mut self, phys: Phys, block: &[u8]) -> Option<Step> {
        Some(match phys {
            Phys::NeedBlock => Step::NeedBlock,
            Phys::Pending => Step::Pending,
            Phys::Eof { torn_at } => {
                let input_end = self.cursor.end_of_buffer;
                let end = match (self.state, torn_at) {
                    (State::InRecord { offset, .. }, _) | (_, Some(offset)) => LogEnd::Torn {
                        offset,
                        len: input_end - offset,
                    },
                    _ => LogEnd::Clean { offset: input_end },
                };
                self.finish(end)
            }
            Phys::Old { offset, log_number } => {
                let offset = match self.state {
                    State::InRecord { offset, .. } => offset,
                    _ => offset,
                };
                self.finish(LogEnd::OldRecord { offset, log_number })
            }
            Phys::Skipped(skip) => Step::Skipped(skip),
            Phys::Deferred => return None,
            Phys::Erased(skip) => {
                let aborted = self.abort(None);
                self.then(Step::Skipped(skip), aborted)
            }
            Phys::Bad(dropped) => {
                // LevelDB: any chunk ends resynchronisation, a bad one included.
                if self.state == State::Resyncing {
                    self.state = State::Idle;
                }
                let aborted = self.abort(Some(CorruptionKind::ErrorInMiddleOfRecord));
                let first = match dropped {
                    Some(Dropped::Reported(corruption)) => Step::Corruption(corruption),
                    Some(Dropped::Skipped(skip)) => Step::Skipped(skip),
                    None => return aborted,
                };
                self.then(first, aborted)
            }
            Phys::Chunk {
                record_type,
                log_number,
                header_offset,
                payload,
            } => {
                // A compression record's codec: its fixed32 payload.
                let codec = (record_type == SET_COMPRESSION_TYPE)
                    .then(|| block.get(payload.clone())?.first_chunk::<4>().copied())
                    .flatten()
                    .filter(|_| payload.len() == 4)
                    .map(u32::from_le_bytes);
                // A pack's record count, in its first chunk.
                let count = block.get(payload.clone()).and_then(pack::declared_count);
                // RocksDB's metadata records, read whole here (never fragmented).
                if let Some(step) = block
                    .get(payload.clone())
                    .and_then(|data| self.metadata(record_type, header_offset, data))
                {
                    return Some(step);
                }
                self.chunk(
                    record_type,
                    log_number,
                    header_offset,
                    payload,
                    codec,
                    count,
                )
            }
        })
    }

    /// The hot path of [`step`](Self::step): a well-formed legacy `FULL` chunk at the current
    /// position while no record is in progress and nothing else is pending. Returns its
    /// payload's range in `block` and its offset, with exactly the state changes `step` would
    /// make; `None` sends the caller to `step` (which handles every case, this one included).
    ///
    /// Per record: the header's length and type, the checksum, the position and the last
    /// record's offsets. Whatever else `step` checks holds while [`Self::fast`] does (kept by
    /// [`Self::settle`]): idle, nothing pending, a legacy log not ended, no erased-flash rules,
    /// no compression, past the initial offset.
    #[cfg_attr(not(target_os = "none"), inline(always))]
    pub(crate) fn fast_full(&mut self, block: &[u8]) -> Option<(Range<usize>, u64)> {
        if !self.fast {
            return None;
        }
        let cursor = &mut self.cursor;
        let rest = block.get(cursor.pos..cursor.len)?;
        let (header, body) = rest.split_first_chunk::<HEADER_SIZE>()?;
        let len = usize::from(u16::from_le_bytes([
            header[LENGTH_FIELD.start],
            header[LENGTH_FIELD.start + 1],
        ]));
        if header[TYPE_FIELD] != RecordType::Full as u8 {
            return None;
        }
        let payload = body.get(..len)?;
        if self.rules.verify {
            /// CRC-32C of the `FULL` type byte, which the checksum covers first.
            const FULL_TYPE_CRC: u32 = 0xa016_d052;
            let stored = u32::from_le_bytes([
                header[CHECKSUM_FIELD.start],
                header[CHECKSUM_FIELD.start + 1],
                header[CHECKSUM_FIELD.start + 2],
                header[CHECKSUM_FIELD.start + 3],
            ]);
            if crate::checksum::mask(crate::checksum::extend(FULL_TYPE_CRC, payload)) != stored {
                return None;
            }
        }
        let header_offset = cursor.position();
        let start = cursor.pos + HEADER_SIZE;
        cursor.pos = start + payload.len();
        self.last_record_offset = header_offset;
        self.last_record_end = header_offset + (HEADER_SIZE + len) as u64;
        Some((start..cursor.pos, header_offset))
    }

    /// The chunk at the current position if a reader may check its checksum while it copies
    /// its payload (the fused path of [`Reader`](crate::Reader)): a legacy `FIRST`, `MIDDLE`
    /// or `LAST` chunk whole in the block, checksums on, nothing pending. Its kind, payload
    /// range in the block, stored checksum and file offset. What the decoder then makes of the
    /// chunk is its own affair: the reader only saves it the checksum
    /// ([`verified`](Self::verified)).
    #[inline]
    pub(crate) fn fused_candidate(&self, block: &[u8]) -> Option<Candidate> {
        if !HOT_PATHS
            || !self.rules.verify
            || self.rules.format != ChunkFormat::Decided(Format::Legacy)
            || self.rules.erased.is_some()
            || self.pending.is_some()
        {
            return None;
        }
        let cursor = &self.cursor;
        let rest = block.get(cursor.pos..cursor.len)?;
        let (header, body) = rest.split_first_chunk::<HEADER_SIZE>()?;
        let kind = match header[TYPE_FIELD] {
            t if t == RecordType::First as u8 => FragmentKind::First,
            t if t == RecordType::Middle as u8 => FragmentKind::Middle,
            t if t == RecordType::Last as u8 => FragmentKind::Last,
            _ => return None,
        };
        let len = usize::from(u16::from_le_bytes([
            header[LENGTH_FIELD.start],
            header[LENGTH_FIELD.start + 1],
        ]));
        body.get(..len)?;
        let start = cursor.pos + HEADER_SIZE;
        Some(Candidate {
            kind,
            payload: start..start + len,
            stored: u32::from_le_bytes([
                header[CHECKSUM_FIELD.start],
                header[CHECKSUM_FIELD.start + 1],
                header[CHECKSUM_FIELD.start + 2],
                header[CHECKSUM_FIELD.start + 3],
            ]),
            chunk_offset: cursor.position(),
            in_record: matches!(self.state, State::InRecord { .. }),
        })
    }

    /// The reader checked the checksum of the [candidate](Self::fused_candidate) at the current
    /// position: it is parsed without checking it again.
    pub(crate) fn verified(&mut self) {
        self.cursor.verified = Some(self.cursor.pos);
    }

    /// RocksDB's metadata records (timestamp sizes, predecessor WAL) under a dialect that
    /// reads them: skipped with what they say, a record in progress cut and reported (RocksDB:
    /// "interspersed partial record"). `None` for every other chunk. A metadata record whose
    /// payload does not parse is of an unknown type.
    fn metadata(&mut self, record_type: u8, header_offset: u64, data: &[u8]) -> Option<Step> {
        let kind = match self.rules.classify(record_type) {
            ChunkClass::TimestampSizes => {
                let mut sizes = crate::dialect::TimestampSizes::parse(data)?;
                let first = sizes.next()?;
                SkipKind::TimestampSizes {
                    entries: u16::try_from(data.len() / 6).unwrap_or(u16::MAX),
                    first,
                }
            }
            ChunkClass::PredecessorWal => {
                SkipKind::PredecessorWal(crate::dialect::PredecessorWal::parse(data)?)
            }
            _ => return None,
        };
        if self.state == State::Resyncing {
            self.state = State::Idle;
        }
        let end = self.cursor.position();
        let aborted = self.abort(Some(CorruptionKind::ErrorInMiddleOfRecord));
        let step = Step::Skipped(Skip {
            offset: header_offset,
            len: end - header_offset,
            kind,
        });
        Some(self.then(step, aborted))
    }

    /// LevelDB's `ReadRecord` switch for one well-formed chunk.
    fn chunk(
        &mut self,
        record_type: u8,
        log_number: Option<u32>,
        header_offset: u64,
        payload: Range<usize>,
        codec: Option<u32>,
        count: Option<u32>,
    ) -> Step {
        self.rules.decide(record_type, log_number);
        let class = self.rules.classify(record_type);
        let len = payload.len() as u64;
        let end = self.cursor.position();
        let skip = |kind| {
            Step::Skipped(Skip {
                offset: header_offset,
                len: end - header_offset,
                kind,
            })
        };
        let (fragment_kind, pack) = match class {
            ChunkClass::Fragment(kind) => (Some(kind), false),
            ChunkClass::Pack(kind) => (Some(kind), true),
            _ => (None, false),
        };
        if self.state == State::Resyncing {
            match (fragment_kind, class) {
                (Some(FragmentKind::Middle), _) => {
                    return skip(SkipKind::Resync(FragmentKind::Middle));
                }
                (Some(FragmentKind::Last), _) => {
                    self.state = State::Idle;
                    return skip(SkipKind::Resync(FragmentKind::Last));
                }
                (_, ChunkClass::RingHeader) => return skip(SkipKind::RingHeader),
                _ => self.state = State::Idle,
            }
        }
        let compressed = self.compression.filter(|_| !pack);
        let fragment = |kind, record_offset| {
            Step::Fragment(RawFragment {
                kind,
                pack,
                compressed,
                record_offset,
                chunk_offset: header_offset,
                end,
                payload,
            })
        };
        let why = match (fragment_kind, class) {
            (Some(kind @ (FragmentKind::Full | FragmentKind::First)), _) => {
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
                    self.state = State::InRecord {
                        offset: header_offset,
                        len,
                        pack,
                        count: count.filter(|_| pack),
                    };
                }
                let step = fragment(kind, header_offset);
                return match aborted {
                    Some(aborted) => self.then(aborted, Some(step)),
                    None => step,
                };
            }
            (Some(kind), _) => {
                let without_start = |this: &Self| {
                    let why = if kind == FragmentKind::Middle {
                        CorruptionKind::MiddleWithoutStart
                    } else {
                        CorruptionKind::LastWithoutStart
                    };
                    match this.report(header_offset, len, why) {
                        Some(corruption) => Step::Corruption(corruption),
                        None => skip(SkipKind::BeforeInitialOffset),
                    }
                };
                let State::InRecord {
                    offset,
                    len: sofar,
                    pack: in_pack,
                    count,
                } = self.state
                else {
                    return without_start(self);
                };
                if in_pack != pack {
                    // A fragment of a pack in a plain record, or the other way round: the
                    // record in progress is cut, and the fragment has no start.
                    let aborted = self.abort(Some(CorruptionKind::ErrorInMiddleOfRecord));
                    let step = without_start(self);
                    return match aborted {
                        Some(aborted) => self.then(aborted, Some(step)),
                        None => step,
                    };
                }
                self.state = if kind == FragmentKind::Last {
                    self.last_record_offset = offset;
                    self.last_record_end = end;
                    State::Idle
                } else {
                    State::InRecord {
                        offset,
                        len: sofar + len,
                        pack,
                        count,
                    }
                };
                return fragment(kind, offset);
            }
            (None, ChunkClass::Ignorable) => {
                // RocksDB: skipped silently; a record in progress is dropped with it.
                let aborted = self.abort(None);
                return self.then(skip(SkipKind::Ignorable(record_type)), aborted);
            }
            // A ring log's block header: the record in progress runs on past it.
            (None, ChunkClass::RingHeader) => return skip(SkipKind::RingHeader),
            // RocksDB's compression record: the records after it are compressed.
            (None, ChunkClass::SetCompression) if codec.is_some() => {
                let codec = codec.unwrap_or_default();
                self.compression = Some(codec);
                let aborted = self.abort(None);
                return self.then(skip(SkipKind::Compression(codec)), aborted);
            }
            (None, ChunkClass::OtherFormat) => CorruptionKind::UnexpectedFormat(record_type),
            (None, _) => CorruptionKind::UnknownRecordType(record_type),
        };
        if let State::InRecord {
            offset,
            len: partial,
            ..
        } = self.state
        {
            self.state = State::Idle;
            let report = self.report(offset, partial + len, why);
            Step::Aborted {
                record_offset: offset,
                bytes: partial,
                report,
            }
        } else {
            match self.report(header_offset, len, why) {
                Some(corruption) => Step::Corruption(corruption),
                None => skip(SkipKind::BeforeInitialOffset),
            }
        }
    }
}
