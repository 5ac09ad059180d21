//! A reference model of LevelDB's `log::Reader` (`db/log_reader.cc`: `ReadRecord` and
//! `ReadPhysicalRecord`, checksums on, initial offset 0) for *damaged* logs, written from
//! LevelDB's code paths, independently of `logfmt-core`'s
//! decoder: a buffer of the current block, `end_of_buffer_offset_`, `in_fragmented_record`,
//! a scratch string, and the reports with LevelDB's byte counts and reasons.
//!
//! The model's own addition: where each drop begins (the core's `Corruption::offset`): the
//! damaged chunk's header for chunk-level damage, the record's first chunk when a record in
//! progress is dropped.
//!
//! `resync_after_zeros` models the core's option of that name: at a zero header, skip only the
//! zero bytes and go on at the first non-zero byte if a whole chunk with a valid checksum starts
//! exactly there; otherwise skip the rest of the block as LevelDB does.

use logfmt_tests::model::{self, BLOCK, HEADER};

/// What the reader returned, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Out {
    /// A record: `LastRecordOffset` and the payload.
    Record { offset: u64, data: Vec<u8> },
    /// A report: where the dropped bytes begin, LevelDB's count and reason.
    Drop {
        offset: u64,
        bytes: u64,
        reason: String,
    },
}

const FULL: u8 = 1;
const FIRST: u8 = 2;
const MIDDLE: u8 = 3;
const LAST: u8 = 4;

enum Phys {
    Eof,
    Bad,
    Chunk {
        kind: u8,
        offset: u64,
        payload: Vec<u8>,
    },
}

struct Reader<'a> {
    log: &'a [u8],
    /// Next byte of the file to read into the buffer.
    next: usize,
    /// The unread part of the current block: `log[buf_start..buf_end]`.
    buf_start: usize,
    buf_end: usize,
    eof: bool,
    end_of_buffer_offset: u64,
    resync_after_zeros: bool,
    out: Vec<Out>,
}

impl Reader<'_> {
    fn buffer(&self) -> &[u8] {
        &self.log[self.buf_start..self.buf_end]
    }

    fn report(&mut self, offset: u64, bytes: u64, reason: &str) {
        self.out.push(Out::Drop {
            offset,
            bytes,
            reason: reason.to_owned(),
        });
    }

    /// `ReadPhysicalRecord`.
    fn physical(&mut self) -> Phys {
        loop {
            if self.buffer().len() < HEADER as usize {
                if !self.eof {
                    // Read the next block (a short read is the end of the file).
                    let start = self.next;
                    let end = (start + BLOCK as usize).min(self.log.len());
                    self.buf_start = start;
                    self.buf_end = end;
                    self.next = end;
                    self.end_of_buffer_offset += (end - start) as u64;
                    if end - start < BLOCK as usize {
                        self.eof = true;
                    }
                    continue;
                }
                self.buf_start = self.buf_end;
                return Phys::Eof;
            }
            let header_offset = self.end_of_buffer_offset - self.buffer().len() as u64;
            let header = &self.buffer()[..HEADER as usize];
            let length = u64::from(u16::from_le_bytes([header[4], header[5]]));
            let kind = header[6];
            let stored = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
            if HEADER + length > self.buffer().len() as u64 {
                let drop = self.buffer().len() as u64;
                self.buf_start = self.buf_end;
                if !self.eof {
                    self.report(header_offset, drop, "bad record length");
                    return Phys::Bad;
                }
                // A torn write at the end of the file: not reported.
                return Phys::Eof;
            }
            if kind == 0 && length == 0 {
                // A zero header (preallocated space): LevelDB skips the rest of the block
                // silently.
                if self.resync_after_zeros
                    && let Some(skip) = self.buffer().iter().position(|&b| b != 0)
                    && whole_chunk(&self.buffer()[skip..])
                {
                    self.buf_start += skip;
                    return Phys::Bad;
                }
                self.buf_start = self.buf_end;
                return Phys::Bad;
            }
            let covered = &self.buffer()[6..(HEADER + length) as usize];
            if model::mask(crc32c::crc32c(covered)) != stored {
                let drop = self.buffer().len() as u64;
                self.buf_start = self.buf_end;
                self.report(header_offset, drop, "checksum mismatch");
                return Phys::Bad;
            }
            let payload = self.buffer()[HEADER as usize..(HEADER + length) as usize].to_vec();
            self.buf_start += (HEADER + length) as usize;
            return Phys::Chunk {
                kind,
                offset: header_offset,
                payload,
            };
        }
    }

    /// `ReadRecord`, until the end of the log.
    fn run(&mut self) {
        let mut in_fragmented_record = false;
        let mut scratch: Vec<u8> = Vec::new();
        let mut prospective_record_offset = 0u64;
        loop {
            match self.physical() {
                Phys::Eof => return,
                Phys::Bad => {
                    if in_fragmented_record {
                        // Reported even for an empty scratch (an empty FIRST, then damage):
                        // unlike the FULL/FIRST cases, LevelDB does not test for it here.
                        self.report(
                            prospective_record_offset,
                            scratch.len() as u64,
                            "error in middle of record",
                        );
                        in_fragmented_record = false;
                        scratch.clear();
                    }
                }
                Phys::Chunk {
                    kind,
                    offset,
                    payload,
                } => match kind {
                    FULL => {
                        if in_fragmented_record && !scratch.is_empty() {
                            self.report(
                                prospective_record_offset,
                                scratch.len() as u64,
                                "partial record without end(1)",
                            );
                        }
                        in_fragmented_record = false;
                        scratch.clear();
                        self.out.push(Out::Record {
                            offset,
                            data: payload,
                        });
                    }
                    FIRST => {
                        if in_fragmented_record && !scratch.is_empty() {
                            self.report(
                                prospective_record_offset,
                                scratch.len() as u64,
                                "partial record without end(2)",
                            );
                        }
                        prospective_record_offset = offset;
                        scratch = payload;
                        in_fragmented_record = true;
                    }
                    MIDDLE => {
                        if in_fragmented_record {
                            scratch.extend_from_slice(&payload);
                        } else {
                            self.report(
                                offset,
                                payload.len() as u64,
                                "missing start of fragmented record(1)",
                            );
                        }
                    }
                    LAST => {
                        if in_fragmented_record {
                            scratch.extend_from_slice(&payload);
                            in_fragmented_record = false;
                            self.out.push(Out::Record {
                                offset: prospective_record_offset,
                                data: std::mem::take(&mut scratch),
                            });
                        } else {
                            self.report(
                                offset,
                                payload.len() as u64,
                                "missing start of fragmented record(2)",
                            );
                        }
                    }
                    other => {
                        let (at, bytes) = if in_fragmented_record {
                            (prospective_record_offset, payload.len() + scratch.len())
                        } else {
                            (offset, payload.len())
                        };
                        self.report(at, bytes as u64, &format!("unknown record type {other}"));
                        in_fragmented_record = false;
                        scratch.clear();
                    }
                },
            }
        }
    }
}

/// Whether a whole chunk with a valid checksum (and not a zero header) starts at `rest[0]`.
fn whole_chunk(rest: &[u8]) -> bool {
    let Some(header) = rest.get(..HEADER as usize) else {
        return false;
    };
    let length = usize::from(u16::from_le_bytes([header[4], header[5]]));
    let Some(covered) = rest.get(6..HEADER as usize + length) else {
        return false;
    };
    if header[6] == 0 && length == 0 {
        return false;
    }
    let stored = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
    model::mask(crc32c::crc32c(covered)) == stored
}

/// What LevelDB's reader returns for `log` (from offset 0, checksums on).
pub(crate) fn read(log: &[u8], resync_after_zeros: bool) -> Vec<Out> {
    let mut reader = Reader {
        log,
        next: 0,
        buf_start: 0,
        buf_end: 0,
        eof: false,
        end_of_buffer_offset: 0,
        resync_after_zeros,
        out: Vec::new(),
    };
    reader.run();
    reader.out
}
