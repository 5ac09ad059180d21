//! Target `writer`: the core writer with arbitrary record lists, resume offsets, flushes,
//! padding and sink failures, checked by reading back and against the model.
//!
//! Input: structured, decoded with `arbitrary` into a [`Script`].
//!
//! Properties:
//! - the bytes equal the independent model's (`tests/src/model.rs`) for the legacy format without
//!   padding, at any resume offset, whatever the flushes, and every `Written` span is the
//!   model's; `end_after` predicts each record's end;
//! - reading the bytes back (behind a prefix that puts them at their offset) returns exactly
//!   the records, at their offsets, with no report — for both formats, with padding too;
//! - a sink that fails after N bytes (having written part of the failing call): the error
//!   surfaces once as `WriteError::Sink`, every later call is `Poisoned`, and reading what
//!   reached the sink returns, with no report, the records in order: every acknowledged one
//!   (`add_record` Ok and a later `flush` Ok), possibly followed by records whose chunks all
//!   got through before the failure, never a part of one.
#![allow(dead_code, unreachable_pub)]

use std::convert::Infallible;

use arbitrary::{Arbitrary, Unstructured};
use logfmt_core::{
    BLOCK_SIZE, FnSink, Format, ReadOptions, Reader, SliceSource, WriteError, WriteOptions, Writer,
    parts::{Item, ReadFormat},
};

use crate::common::record_content;
use crate::model;

const BLOCK: u64 = BLOCK_SIZE as u64;

/// Where the writer starts.
#[derive(Debug, Clone, Arbitrary)]
pub enum Start {
    /// A new log.
    Zero,
    /// `blocks` whole blocks, then `offset % BLOCK` bytes.
    At { blocks: u8, offset: u16 },
    /// Near a block's end: `back` (mod 16) bytes before the end of block `blocks`.
    NearEnd { blocks: u8, back: u8 },
    /// Anywhere (a log of up to 2^48 bytes).
    Far(u64),
}

impl Start {
    fn offset(&self) -> u64 {
        match *self {
            Self::Zero => 0,
            Self::At { blocks, offset } => u64::from(blocks) * BLOCK + u64::from(offset) % BLOCK,
            Self::NearEnd { blocks, back } => {
                (u64::from(blocks) + 1) * BLOCK - u64::from(back % 16)
            }
            Self::Far(x) => x % (1 << 48),
        }
    }
}

/// How long a record is.
#[derive(Debug, Clone, Arbitrary)]
pub enum Len {
    /// 0..=255 bytes.
    Small(u8),
    /// 0..=65535 bytes.
    Medium(u16),
    /// Whatever leaves exactly `n % 12` bytes in the block after it (the trailer and empty
    /// `FIRST` cases).
    Leave(u8),
    /// Exactly `k % 4 + 1` blocks' worth of payload, give or take `delta % 16` bytes.
    Blocks { k: u8, delta: i8 },
}

/// One writer call.
#[derive(Debug, Clone, Arbitrary)]
pub enum Op {
    Record(Len),
    Flush,
    /// `pad_to(1 << (log2 % 16))`; 16..: a bad alignment.
    Pad(u8),
}

/// What the target runs.
#[derive(Debug, Clone, Arbitrary)]
pub struct Script {
    pub start: Start,
    /// `Some(n)`: recyclable chunks with log number `n`.
    pub recyclable: Option<u32>,
    pub ops: Vec<Op>,
    /// `Some(n)`: the sink fails once `n` bytes have reached it (`n` mod the log's length + 1).
    pub fail_after: Option<u32>,
}

/// Checks one input.
pub fn check(data: &[u8]) {
    let mut u = Unstructured::new(data);
    if let Ok(script) = Script::arbitrary(&mut u) {
        check_script(&script);
    }
}

/// The records of `ops` (resolving `Leave` lengths against a log at `start`) with their ids.
fn lay_out(script: &Script, header: u64) -> Vec<Vec<u8>> {
    let mut pos = script.start.offset();
    let mut records = Vec::new();
    for op in &script.ops {
        match op {
            Op::Record(len) => {
                let len = resolve(len, pos, header);
                let record = record_content(records.len() as u64, len);
                pos = end_after(pos, len as u64, header);
                records.push(record);
            }
            Op::Pad(log2) if *log2 < 16 => {
                // Padding moves the position; `Leave` lengths are resolved approximately after it.
                pos = pos.next_multiple_of(1 << log2);
            }
            _ => {}
        }
        if records.iter().map(Vec::len).sum::<usize>() > 600_000 {
            break;
        }
    }
    records
}

fn resolve(len: &Len, pos: u64, header: u64) -> usize {
    match *len {
        Len::Small(n) => usize::from(n),
        Len::Medium(n) => usize::from(n),
        Len::Leave(n) => {
            let n = u64::from(n % 12);
            let mut at = pos;
            if BLOCK - at % BLOCK < header {
                at += BLOCK - at % BLOCK;
            }
            let room = BLOCK - at % BLOCK;
            let len = if room >= header + n {
                room - header - n
            } else {
                room - header + (BLOCK - header - n.min(BLOCK - header))
            };
            len as usize
        }
        Len::Blocks { k, delta } => {
            let base = (u64::from(k % 4) + 1) * (BLOCK - header);
            (base as i64 + i64::from(delta % 16)).max(0) as usize
        }
    }
}

/// Where a record of `len` bytes written at `pos` ends.
fn end_after(mut pos: u64, len: u64, header: u64) -> u64 {
    let mut left = len;
    loop {
        if BLOCK - pos % BLOCK < header {
            pos += BLOCK - pos % BLOCK;
        }
        let fragment = left.min(BLOCK - pos % BLOCK - header);
        pos += header + fragment;
        left -= fragment;
        if left == 0 {
            return pos;
        }
    }
}

/// A sink collecting bytes, failing once `budget` bytes have reached it (after taking the part
/// of the failing call that fits).
struct Collect {
    bytes: Vec<u8>,
    budget: Option<usize>,
    failed: bool,
}

impl Collect {
    fn write(&mut self, bytes: &[u8]) -> Result<(), ()> {
        assert!(!self.failed, "the writer used its sink after it failed");
        if let Some(budget) = self.budget {
            let room = budget.saturating_sub(self.bytes.len());
            if bytes.len() > room {
                self.bytes.extend_from_slice(&bytes[..room]);
                self.failed = true;
                return Err(());
            }
        }
        self.bytes.extend_from_slice(bytes);
        Ok(())
    }
}

/// What a run of the script produced.
struct Run {
    bytes: Vec<u8>,
    /// Spans of the records `add_record` accepted, in order.
    written: Vec<(u64, u64)>,
    /// How many of them a later `flush` acknowledged.
    acknowledged: usize,
    /// How many records were passed to `add_record` (the accepted ones and a failing one).
    attempted: usize,
    /// Whether the sink failed.
    failed: bool,
}

/// Runs `ops` against a writer at `start`; `pads` and `flushes` say whether those ops are
/// honoured.
fn run(
    script: &Script,
    records: &[Vec<u8>],
    pads: bool,
    flushes: bool,
    budget: Option<usize>,
) -> Run {
    let start = script.start.offset();
    let format = match script.recyclable {
        Some(log_number) => Format::Recyclable { log_number },
        None => Format::Legacy,
    };
    let mut sink = Collect {
        bytes: Vec::new(),
        budget,
        failed: false,
    };
    let mut block = Box::new([0u8; BLOCK_SIZE]);
    let mut written = Vec::new();
    let mut acknowledged = 0;
    let mut failure = None;
    let mut attempted = 0;
    let final_position;
    {
        let options = WriteOptions::new().start(start).format(format);
        let mut writer =
            Writer::with_options(FnSink(|b: &[u8]| sink.write(b)), &mut *block, &options);
        let mut next = records.iter();
        for op in &script.ops {
            let result = match op {
                Op::Record(_) => {
                    let Some(record) = next.next() else { break };
                    let predicted = writer.end_after(record.len());
                    attempted += 1;
                    writer.add_record(record).map(|w| {
                        assert_eq!(w.end, predicted, "end_after mispredicts");
                        assert_eq!(writer.position(), w.end);
                        written.push((w.offset, w.end));
                    })
                }
                Op::Flush if flushes => writer.flush().map(|()| {
                    assert_eq!(writer.unsent(), 0);
                    acknowledged = written.len();
                }),
                Op::Pad(log2) if pads => {
                    match writer.pad_to(1usize.checked_shl(u32::from(*log2)).unwrap_or(0)) {
                        Err(WriteError::BadAlignment) => {
                            assert!(*log2 > 15, "pad_to({log2}) refused");
                            Ok(())
                        }
                        other => other.map(|padding| {
                            assert!(padding < BLOCK_SIZE);
                            assert_eq!(
                                writer.position() % (1 << log2),
                                0,
                                "pad_to missed its alignment"
                            );
                        }),
                    }
                }
                _ => Ok(()),
            };
            if let Err(e) = result {
                assert!(matches!(e, WriteError::Sink(())), "first error: {e:?}");
                failure = Some(());
                break;
            }
        }
        if failure.is_none() {
            match writer.flush() {
                Ok(()) => acknowledged = written.len(),
                Err(e) => {
                    assert!(matches!(e, WriteError::Sink(())), "first error: {e:?}");
                    failure = Some(());
                }
            }
        }
        if failure.is_some() {
            // Sticky: every later call fails, and nothing more reaches the sink.
            assert!(writer.is_poisoned());
            assert_eq!(writer.add_record(b"x"), Err(WriteError::Poisoned));
            assert_eq!(writer.flush(), Err(WriteError::Poisoned));
            assert_eq!(writer.pad_to(8), Err(WriteError::Poisoned));
        }
        final_position = writer.position();
    }
    if failure.is_none() {
        assert_eq!(
            start + sink.bytes.len() as u64,
            final_position,
            "flushed bytes != position"
        );
    }
    Run {
        bytes: sink.bytes,
        written,
        acknowledged,
        attempted,
        failed: failure.is_some(),
    }
}

/// Checks one script.
pub fn check_script(script: &Script) {
    let header = if script.recyclable.is_some() { 11 } else { 7 };
    let records = lay_out(script, header);
    let start = script.start.offset();

    // No padding: the model's bytes and spans (legacy), with or without the flushes.
    let plain = run(script, &records, false, true, None);
    assert!(!plain.failed);
    assert_eq!(plain.written.len(), records.len());
    if script.recyclable.is_none() {
        let (expected, spans) = model::write_spans(&records, start);
        assert!(
            plain.bytes == expected,
            "the writer's bytes differ from the model's"
        );
        let spans: Vec<(u64, u64)> = spans.iter().map(|s| (s.start, s.end)).collect();
        assert_eq!(plain.written, spans, "record spans differ from the model's");
        let unflushed = run(script, &records, false, false, None);
        assert!(unflushed.bytes == plain.bytes, "flushes change the bytes");
    }
    read_back(script, &records, &plain, start, false);

    // With padding: still exactly the records, with no report.
    let padded = run(script, &records, true, true, None);
    assert!(!padded.failed);
    read_back(script, &records, &padded, start, true);

    // A sink failing after N bytes.
    if let Some(n) = script.fail_after {
        let budget = n as usize % (padded.bytes.len() + 1);
        let faulty = run(script, &records, true, true, Some(budget));
        assert!(faulty.bytes.len() <= budget);
        assert_eq!(
            faulty.bytes[..],
            padded.bytes[..faulty.bytes.len()],
            "a failing sink changes the bytes before the failure"
        );
        read_back(script, &records, &faulty, start, true);
    }
}

/// Reads what reached the sink, placed at its offset behind a prefix that readers pass over
/// silently, and checks it returns the records of `run` as promised.
///
/// `padded`: the run used `pad_to`. Two `pad_to` calls in a row can leave empty `FIRST`
/// chunks (the first call) followed by zeros to the end of the block (the second): LevelDB's
/// reader reports that as a 0-byte "error in middle of record", which is tolerated here
/// (`tests/tests/regressions.rs::pad_to_after_pad_to_is_not_silent`).
fn read_back(script: &Script, records: &[Vec<u8>], run: &Run, start: u64, padded: bool) {
    let header = if script.recyclable.is_some() { 11 } else { 7 };
    let in_block = start % BLOCK;
    if in_block != 0 && in_block < header {
        // No chunk fits before `start` in its block; the model comparison covers this case.
        return;
    }
    // Keep the block alignment, drop whole blocks before `start`: the log read is the partial
    // block before `start` (one chunk, a record of its own), then the bytes.
    let base = start - in_block;
    let mut log = Vec::with_capacity(run.bytes.len() + in_block as usize);
    let filler = in_block > 0;
    if filler {
        let payload = vec![0xEEu8; (in_block - header) as usize];
        let options = WriteOptions::new().format(match script.recyclable {
            Some(log_number) => Format::Recyclable { log_number },
            None => Format::Legacy,
        });
        let mut block = Box::new([0u8; BLOCK_SIZE]);
        let mut writer = Writer::with_options(
            FnSink(|b: &[u8]| {
                log.extend_from_slice(b);
                Ok::<(), Infallible>(())
            }),
            &mut *block,
            &options,
        );
        writer.add_record(&payload).unwrap_or_else(|e| match e {
            WriteError::Sink(e) => match e {},
            _ => unreachable!(),
        });
        writer.flush().unwrap_or_else(|_| unreachable!());
    }
    assert_eq!(log.len() as u64, in_block);
    log.extend_from_slice(&run.bytes);
    let format = match script.recyclable {
        Some(log_number) => ReadFormat::Recyclable { log_number },
        None => ReadFormat::Legacy,
    };
    let mut scratch = vec![0u8; records.iter().map(Vec::len).max().unwrap_or(0)];
    let mut reader = Reader::with_options(
        SliceSource::new(&log),
        &mut scratch,
        &ReadOptions::new().format(format),
    );
    let mut got = 0usize;
    let mut skip_filler = filler;
    while let Some(item) = reader.next().unwrap_or_else(|e| match e {}) {
        if let Item::Corruption(c) = item
            && padded
            && c.bytes == 0
            && c.kind == logfmt_core::parts::CorruptionKind::ErrorInMiddleOfRecord
        {
            continue;
        }
        let Item::Record(r) = item else {
            panic!("reading back: {item:?}");
        };
        if skip_filler {
            skip_filler = false;
            assert_eq!(r.offset, 0);
            continue;
        }
        let (offset, end) = (r.offset + base, r.end + base);
        assert!(
            got < run.attempted,
            "read back a record that was never added"
        );
        if let Some(&span) = run.written.get(got) {
            assert_eq!((offset, end), span, "record {got} at the wrong place");
        } else {
            // The record whose add_record failed: all its chunks got through before the failure.
            assert!(run.failed);
        }
        assert!(r.data == records[got].as_slice(), "record {got} differs");
        got += 1;
    }
    assert!(
        got >= run.acknowledged,
        "acknowledged records lost: read {got}, acknowledged {}",
        run.acknowledged
    );
    if !run.failed {
        assert_eq!(got, run.written.len(), "records lost without a failure");
    }
}
