//! Target `flash_ring`: the ring flash log driven by random operations — records of any size,
//! flushes, reopenings, power cuts in programs and erases — checked against a simple model of
//! what the ring must hold.
//!
//! Input: a header, then operations, one tag byte each (tag `t & 7`, parameter `p = t >> 3`)
//! and its arguments (little-endian); a truncated last operation is dropped. See [`Script`].
//!
//! | header byte | meaning |
//! |---|---|
//! | 0 | bits 0-1 `WRITE_SIZE` 4/8/16/32; bit 2 erase unit 64 KiB (else 4 KiB); bit 3 [`WordWriter`] (else [`FlashWriter`]); bit 4 erased value 0x00 (else 0xFF); bits 5-7 first lap: 0-2 → 1, 3 → 0, 4-6 → `u32::MAX - (n - 4)`, 7 → the next 4 bytes |
//! | 1 | erase groups: 2 + n mod 5 |
//!
//! | tag | operation | arguments |
//! |---|---|---|
//! | 0 | add a record of `p` bytes | |
//! | 1 | add a record of 32 + `a` bytes | `a`: u8 |
//! | 2 | add a record of `a` bytes | `a`: u16 |
//! | 3 | add a record of `p` × 8192 + `a` mod 8192 bytes (up to 256 KiB: longer than some rings keep) | `a`: u16 |
//! | 4 | `p` = 0: flush; else deliver up to `p >> 2` records (at least one) from read cursor `p & 3` with `CursorReader`, then commit the cursor after them | |
//! | 5 | reopen (drop the writer without flushing, open it again) | |
//! | 6 | cut the power after `a << (p >> 2)` bytes of flash work, mode `p & 3`: untouched, partial, complete, arbitrary | `a`: u16 |
//! | 7 | add `p + 1` records of random lengths (mostly small, some across blocks), flushing after each with probability 1 / (1 + `s` mod 8) | `s`: u8 |
//!
//! The next record written is the next of the run's sequence: a new one (record `i` begins
//! with `i` as u32 LE, or its first bytes if shorter), or one in flight at the last power cut
//! that the ring did not hold, written again, so that the sequence stays the log's.
//!
//! A power cut, a reopening, and the end of the operations each end a *session*: the writer is
//! dropped, the power is back, a writer is opened again (it must open), and the ring is read
//! with the library's reader over `FlashSource::ring` (the reference way to read a ring). The
//! model: the records acknowledged by a successful flush, and where each starts in the log
//! unrolled (region offsets plus laps, from what `add_record` returns). The read must give
//! records of the sequence in order with no gap, up to at least the newest acknowledged one and
//! at most the newest written; every acknowledged record starting in the newest
//! `(groups - 2) × group` bytes of the log must be there (the ring keeps them besides the group
//! being written and the group erased ahead); no damage is reported but after the last record
//! read, for one chunk (a write cut in a chunk's last word cannot be told from damage until a
//! reopened writer marks it torn): one report, or two if the chunk ended a record of several
//! chunks — the chunk's, then the record's fragments before it ("error in middle of record",
//! as LevelDB reports them). `add_record` fails with `Full` exactly for records longer
//! than the ring keeps (the region less a group, less a ring header, a chunk header and a
//! trailer per block); a flash error other than the power cut is a failure (a word programmed
//! twice, among others: the mock flash has per-word ECC). A reopened writer never goes on
//! before the end of the acknowledged records.
//!
//! The small-RAM reader: after each session, [`WordReader`] reads the region too, and must
//! return the records the library's reader returned, byte for byte, in order (the two
//! implement one set of rules; [`check_small_reader`]).
//!
//! Read cursors: after each session, every cursor committed is read from with `CursorReader`:
//! unless records aged out of the ring before the cursor delivered them (then it starts no
//! earlier), it starts at the record after the last one delivered before its newest
//! acknowledged commit — or, when a power cut interrupted a commit, after the old or the new
//! one — so nothing delivered before a commit is delivered again, and nothing skipped.
//!
//! Set `LOGFMT_FUZZ_TRACE=1` to print each operation as it runs and where each record went, and
//! to write the region's image after each session to `flash_ring-session-<n>.img` in the
//! working directory (to reproduce a failure).
#![allow(dead_code, unreachable_pub)]

use std::cell::RefCell;
use std::sync::OnceLock;

use embedded_storage::nor_flash::{ErrorType, NorFlash, ReadNorFlash};
use logfmt_core::flash::{
    CursorReader, FlashConfig, FlashError, FlashItem, FlashSource, FlashWriter, MockError,
    MockFlash, PowerCut, WordReader, WordWriter,
};
use logfmt_core::parts::cursor::Cursor;
use logfmt_core::parts::ring::{RING_HEADER_SIZE, Ring, RingHeader};
use logfmt_core::{
    BLOCK_SIZE, ReadOptions, Reader, Written,
    parts::{Corruption, CorruptionKind, Item},
};

use crate::common::Rng;

/// A chunk header (legacy), as the writer lays it out.
const HEADER_SIZE: usize = 7;
/// Operations run at most.
pub const MAX_OPS: usize = 512;
/// Bytes of records added at most, in regions: past it the remaining operations are skipped.
pub const MAX_REGIONS_WRITTEN: usize = 4;

/// The flash and the ring on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// The flash's `WRITE_SIZE`: 4, 8, 16 or 32.
    pub write: usize,
    /// Erase units of 64 KiB (groups of two blocks), else 4 KiB (groups of one block).
    pub erase_64k: bool,
    /// Erase groups in the ring: 2 to 6.
    pub groups: usize,
    /// [`FlashConfig::first_lap`].
    pub first_lap: u32,
    /// [`WordWriter`], else [`FlashWriter`].
    pub word_writer: bool,
    /// The value erased flash reads as.
    pub erased: u8,
}

/// One operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Add the next record; if it is a new one, of this many bytes.
    Add(usize),
    /// Flush.
    Flush,
    /// Deliver up to `deliver` records from read cursor `id`, then commit it.
    Commit {
        /// The cursor.
        id: u8,
        /// Records delivered at most.
        deliver: usize,
    },
    /// Drop the writer without flushing and open it again.
    Reopen,
    /// Cut the power after this many bytes of flash work.
    Cut(usize, PowerCut),
    /// Add `count` records of lengths drawn from `seed`, flushing at random.
    Burst {
        /// Records.
        count: usize,
        /// Seed of the lengths and flushes.
        seed: u8,
    },
}

/// A decoded input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    pub geometry: Geometry,
    pub ops: Vec<Op>,
}

/// Reads the input from the front.
struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let bytes = self.data.get(self.at..self.at + N)?.try_into().ok()?;
        self.at += N;
        Some(bytes)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|[b]| b)
    }

    fn u16(&mut self) -> Option<u16> {
        self.take().map(u16::from_le_bytes)
    }

    fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }
}

impl Script {
    /// Decodes an input (see the module docs); `None` if it has no header.
    pub fn decode(data: &[u8]) -> Option<Self> {
        let mut bytes = Bytes { data, at: 0 };
        let flags = bytes.u8()?;
        let groups = 2 + usize::from(bytes.u8()? % 5);
        let first_lap = match flags >> 5 {
            0..=2 => 1,
            3 => 0,
            n @ 4..=6 => u32::MAX - u32::from(n - 4),
            _ => bytes.u32()?,
        };
        let geometry = Geometry {
            write: 4 << (flags & 3),
            erase_64k: flags & 4 != 0,
            groups,
            first_lap,
            word_writer: flags & 8 != 0,
            erased: if flags & 16 != 0 { 0x00 } else { 0xFF },
        };
        let mut ops = Vec::new();
        while ops.len() < MAX_OPS {
            let Some(tag) = bytes.u8() else { break };
            let p = usize::from(tag >> 3);
            let op = match tag & 7 {
                0 => Some(Op::Add(p)),
                1 => bytes.u8().map(|a| Op::Add(32 + usize::from(a))),
                2 => bytes.u16().map(|a| Op::Add(usize::from(a))),
                3 => bytes
                    .u16()
                    .map(|a| Op::Add(p * 8192 + usize::from(a) % 8192)),
                4 if p == 0 => Some(Op::Flush),
                4 => Some(Op::Commit {
                    id: (p & 3) as u8,
                    deliver: (p >> 2).max(1),
                }),
                5 => Some(Op::Reopen),
                6 => bytes.u16().map(|a| {
                    let budget = usize::from(a) << (p >> 2);
                    let mode = match p & 3 {
                        0 => PowerCut::Untouched,
                        1 => PowerCut::Partial,
                        2 => PowerCut::Complete,
                        _ => PowerCut::Arbitrary {
                            seed: (bytes.at as u64)
                                .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                                .wrapping_add(u64::from(a)),
                        },
                    };
                    Op::Cut(budget, mode)
                }),
                _ => bytes.u8().map(|seed| Op::Burst { count: p + 1, seed }),
            };
            match op {
                Some(op) => ops.push(op),
                None => break,
            }
        }
        Some(Self { geometry, ops })
    }
}

/// Checks one input.
pub fn check(data: &[u8]) {
    let Some(script) = Script::decode(data) else {
        return;
    };
    if trace() {
        eprintln!("flash_ring: {:?}", script.geometry);
    }
    match (script.geometry.write, script.geometry.erase_64k) {
        (4, false) => run::<4, 4096>(&script),
        (8, false) => run::<8, 4096>(&script),
        (16, false) => run::<16, 4096>(&script),
        (32, false) => run::<32, 4096>(&script),
        (4, true) => run::<4, 65536>(&script),
        (8, true) => run::<8, 65536>(&script),
        (16, true) => run::<16, 65536>(&script),
        _ => run::<32, 65536>(&script),
    }
}

fn trace() -> bool {
    static TRACE: OnceLock<bool> = OnceLock::new();
    *TRACE.get_or_init(|| std::env::var_os("LOGFMT_FUZZ_TRACE").is_some())
}

/// The run's record `i`, `len` bytes: `i` as u32 LE (its first bytes if shorter), then a pattern.
pub fn record(i: usize, len: usize) -> Vec<u8> {
    let mut data = Vec::with_capacity(len + 8);
    data.extend_from_slice(&(i as u32).to_le_bytes());
    let mut x = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    // Eight bytes a step: the fuzzer's comparison tracing makes a loop per byte costly.
    while data.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        data.extend_from_slice(&x.to_le_bytes());
    }
    data.truncate(len);
    data
}

/// A mock flash shared between a writer and the harness (which schedules power cuts while
/// the writer holds it, and reads the ring).
struct Shared<'r, 'm, const W: usize, const E: usize>(&'r RefCell<MockFlash<'m, W, E>>);

impl<const W: usize, const E: usize> ErrorType for Shared<'_, '_, W, E> {
    type Error = MockError;
}

impl<const W: usize, const E: usize> ReadNorFlash for Shared<'_, '_, W, E> {
    const READ_SIZE: usize = 1;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), MockError> {
        self.0.borrow_mut().read(offset, bytes)
    }

    fn capacity(&self) -> usize {
        self.0.borrow().capacity()
    }
}

impl<const W: usize, const E: usize> NorFlash for Shared<'_, '_, W, E> {
    const WRITE_SIZE: usize = W;
    const ERASE_SIZE: usize = E;

    fn erase(&mut self, from: u32, to: u32) -> Result<(), MockError> {
        self.0.borrow_mut().erase(from, to)
    }

    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), MockError> {
        self.0.borrow_mut().write(offset, bytes)
    }
}

/// The two flash writers behind one interface.
trait LogWriter {
    fn add_record(&mut self, data: &[u8]) -> Result<Written, FlashError<MockError>>;
    fn flush(&mut self) -> Result<(), FlashError<MockError>>;
    fn commit(&mut self, cursor: Cursor) -> Result<(), FlashError<MockError>>;
    fn position(&self) -> u64;
}

impl<F: NorFlash<Error = MockError>> LogWriter for FlashWriter<F, &mut [u8; BLOCK_SIZE]> {
    fn add_record(&mut self, data: &[u8]) -> Result<Written, FlashError<MockError>> {
        FlashWriter::add_record(self, data)
    }
    fn flush(&mut self) -> Result<(), FlashError<MockError>> {
        FlashWriter::flush(self)
    }
    fn commit(&mut self, cursor: Cursor) -> Result<(), FlashError<MockError>> {
        FlashWriter::commit(self, cursor)
    }
    fn position(&self) -> u64 {
        FlashWriter::position(self)
    }
}

impl<F: NorFlash<Error = MockError>> LogWriter for WordWriter<F> {
    fn add_record(&mut self, data: &[u8]) -> Result<Written, FlashError<MockError>> {
        WordWriter::add_record(self, data)
    }
    fn flush(&mut self) -> Result<(), FlashError<MockError>> {
        WordWriter::flush(self)
    }
    fn commit(&mut self, cursor: Cursor) -> Result<(), FlashError<MockError>> {
        WordWriter::commit(self, cursor)
    }
    fn position(&self) -> u64 {
        WordWriter::position(self)
    }
}

/// Opens the ring with the writer the geometry names; it must open.
fn open<'a, F: NorFlash<Error = MockError> + 'a>(
    word_writer: bool,
    flash: F,
    config: FlashConfig,
    block: &'a mut [u8; BLOCK_SIZE],
    what: &str,
) -> Box<dyn LogWriter + 'a> {
    let opened: Result<Box<dyn LogWriter + 'a>, _> = if word_writer {
        WordWriter::open(flash, config).map(|w| Box::new(w) as Box<dyn LogWriter + 'a>)
    } else {
        FlashWriter::open(flash, config, block).map(|w| Box::new(w) as Box<dyn LogWriter + 'a>)
    };
    opened.unwrap_or_else(|e| panic!("{what}: open: {e:?}"))
}

/// What reading the ring gives: its records and damage reports (before the last record read,
/// and after it: the log's end).
#[derive(Debug, Default)]
struct Read {
    records: Vec<Vec<u8>>,
    damage: Vec<String>,
    tail_damage: Vec<String>,
    /// The reports after the last record read, if all are [`Corruption`]s.
    tail: Option<Vec<Corruption>>,
    ring: Option<Ring>,
}

impl Read {
    /// The index of the record after the last one read: the last that carries its index, and
    /// the records after it (shorter than an index: the sequence has no gaps).
    fn end(&self) -> Option<usize> {
        let (after, last) = self
            .records
            .iter()
            .rev()
            .enumerate()
            .find(|(_, r)| r.len() >= 4)?;
        let index = u32::from_le_bytes([last[0], last[1], last[2], last[3]]) as usize;
        Some(index + 1 + after)
    }

    /// Whether the reports after the last record read are those of one damaged chunk: a
    /// report of the chunk, and, if it ended a record of several chunks, one of that record's
    /// fragments before it (LevelDB's "error in middle of record").
    fn one_damaged_chunk(&self) -> bool {
        let middle = |c: &Corruption| c.kind == CorruptionKind::ErrorInMiddleOfRecord;
        match self.tail.as_deref() {
            Some([] | [_]) => true,
            Some([chunk, record]) => {
                !middle(chunk) && middle(record) && record.offset < chunk.offset
            }
            _ => false,
        }
    }
}

/// Reads the ring in region `config` of `flash` with the library's reader.
fn read_ring<F: ReadNorFlash>(flash: F, config: FlashConfig, block: &mut [u8; BLOCK_SIZE]) -> Read
where
    F::Error: std::fmt::Debug,
{
    let source = FlashSource::ring(flash, config, block).expect("reads");
    let ring = source.ring_order();
    let options = ReadOptions::new()
        .erased(Some(config.erased))
        .starts_mid_log(true);
    let mut buffer = vec![0u8; config.len as usize];
    let mut reader = Reader::with_options(source, &mut buffer, &options);
    let mut read = Read {
        ring,
        tail: Some(Vec::new()),
        ..Read::default()
    };
    while let Some(item) = reader.next().expect("reads") {
        match item {
            Item::Record(record) => {
                read.records.push(record.data.to_vec());
                read.damage.append(&mut read.tail_damage);
                read.tail = Some(Vec::new());
            }
            other => {
                read.tail_damage.push(format!("{other:?}"));
                match (other, &mut read.tail) {
                    (Item::Corruption(c), Some(tail)) => tail.push(c),
                    _ => read.tail = None,
                }
            }
        }
    }
    read
}

/// The small-RAM reader ([`WordReader`]) reads the records the library's reader read
/// (`read`), byte for byte and in order: the two implement one set of rules.
fn check_small_reader<F: ReadNorFlash>(flash: F, config: FlashConfig, read: &Read, what: &str)
where
    F::Error: std::fmt::Debug,
{
    let mut reader = WordReader::open(flash, config).expect("reads");
    let mut buffer = vec![0u8; config.len as usize];
    let mut records = 0;
    while let Some(item) = reader.next(&mut buffer).expect("reads") {
        if let FlashItem::Record { len, .. } = item {
            let expected = read.records.get(records);
            assert!(
                expected.is_some_and(|r| r[..] == buffer[..len]),
                "{what}: the small-RAM reader's record {records} ({len} bytes) is not the \
                 library reader's ({:?} bytes)",
                expected.map(Vec::len)
            );
            records += 1;
        }
    }
    assert_eq!(
        records,
        read.records.len(),
        "{what}: records read by the small-RAM reader and by the library's reader"
    );
}

/// Where each record starts in the log as if the ring were unrolled (laps counted), to tell
/// which ones the ring must still hold.
struct Unrolled {
    len: u64,
    base: u64,
    last: u64,
    starts: Vec<u64>,
    ends: Vec<u64>,
}

impl Unrolled {
    /// The unrolled offset of `region_offset`, the log having moved forward (by less than the
    /// region) since the last call.
    fn at(&mut self, region_offset: u64) -> u64 {
        if region_offset < self.last {
            self.base += self.len;
        }
        self.last = region_offset;
        self.base + region_offset
    }

    /// The unrolled offset of `region_offset` where a reopened writer goes on. It may be
    /// behind the last record added (by less than a block: the buffered writer's records not
    /// flushed are lost with its RAM block), or ahead (past a torn write, maybe in the next
    /// block, maybe across the wrap).
    ///
    /// `newest`: where the newest block with a ring header on the flash starts, unrolled (from
    /// its lap). In a ring of two blocks, going back by less than a block lands where going
    /// forward by a lap less would (a record in flight crosses into the other block, a torn
    /// write there sends the writer on into the next): the flash tells them apart, as a writer
    /// never goes back before a block that holds its ring header.
    fn reopened(&mut self, region_offset: u64, newest: Option<u64>) -> u64 {
        if region_offset < self.last && self.last - region_offset < BLOCK_SIZE as u64 {
            let back = self.base + region_offset;
            if newest.is_none_or(|start| start <= back) {
                self.last = region_offset;
            }
        }
        self.at(region_offset)
    }

    /// The oldest acknowledged record (before `acked`) that starts in the newest `keep` bytes
    /// of the log ending at `end`: the ring holds it and every one after it.
    fn must(&self, acked: usize, end: u64, keep: u64) -> usize {
        (0..acked)
            .rev()
            .take_while(|&k| self.starts[k] + keep >= end)
            .last()
            .unwrap_or(acked)
    }
}

/// The model: the run's sequence of records and what of it must be on the flash.
struct Model {
    /// Every record of the sequence so far (those from `next` on are to be written again).
    written: Vec<Vec<u8>>,
    /// The next record of the sequence to write.
    next: usize,
    /// Records before this one are acknowledged.
    acked: usize,
    unrolled: Unrolled,
    /// The longest record the ring takes.
    limit: usize,
    /// Bytes of the log the ring keeps for sure.
    keep: u64,
    /// Record bytes added so far.
    bytes: usize,
    /// The log's end (unrolled): past the last record added, or where a reopened writer goes on.
    end: u64,
    /// The end of the last record acknowledged (unrolled).
    durable: u64,
    /// Per read cursor: where reading from it must start (the index of the record after the
    /// last one delivered before its newest acknowledged commit; `None` if that record was
    /// too short to carry its index), and where a commit a power cut interrupted would put it.
    cursors: [Option<Option<usize>>; 4],
    cut_commits: [Option<Option<usize>>; 4],
}

/// Why a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    PowerCut,
    Reopen,
    Done,
}

impl Model {
    /// Adds the next record of the sequence (a new one of `len` bytes if none is due again).
    /// `Err` if the power was cut.
    fn add(&mut self, writer: &mut dyn LogWriter, len: usize, what: &str) -> Result<(), End> {
        if self.next == self.written.len() {
            if len > self.limit {
                // Longer than the ring keeps: refused, nothing written.
                match writer.add_record(&record(self.next, len)) {
                    Err(FlashError::Full) => return Ok(()),
                    other => panic!(
                        "{what}: a {len}-byte record (the ring takes {}): {other:?}",
                        self.limit
                    ),
                }
            }
            self.written.push(record(self.next, len));
        }
        let data = &self.written[self.next];
        self.bytes += data.len();
        match writer.add_record(data) {
            Ok(w) => {
                let region = self.unrolled.len;
                assert!(
                    w.offset < region && w.end <= region,
                    "{what}: record {} at {w:?}, region {region}",
                    self.next
                );
                self.unrolled.starts.resize(self.next + 1, 0);
                self.unrolled.ends.resize(self.next + 1, 0);
                self.unrolled.starts[self.next] = self.unrolled.at(w.offset);
                self.end = self.unrolled.at(w.end);
                self.unrolled.ends[self.next] = self.end;
                if trace() {
                    eprintln!(
                        "flash_ring:   record {} ({} bytes) at {w:?}, unrolled {}..{}",
                        self.next,
                        data.len(),
                        self.unrolled.starts[self.next],
                        self.end
                    );
                }
                self.next += 1;
                Ok(())
            }
            Err(FlashError::Flash(MockError::PowerCut)) => {
                // In flight: maybe on the flash.
                self.unrolled.starts.resize(self.next + 1, 0);
                self.unrolled.ends.resize(self.next + 1, 0);
                self.next += 1;
                Err(End::PowerCut)
            }
            Err(e) => panic!(
                "{what}: add record {} ({} bytes, the ring takes {}): {e:?}",
                self.next,
                data.len(),
                self.limit
            ),
        }
    }

    /// Delivers up to `deliver` records from cursor `id` (read from `flash`), then commits it.
    fn commit<F: ReadNorFlash<Error = MockError>>(
        &mut self,
        writer: &mut dyn LogWriter,
        flash: F,
        config: FlashConfig,
        (id, deliver): (u8, usize),
        what: &str,
    ) -> Result<(), End> {
        let mut reader = CursorReader::open(flash, config, id)
            .unwrap_or_else(|e| panic!("{what}: open cursor {id}: {e:?}"));
        let mut buffer = vec![0u8; config.len as usize];
        let mut delivered = 0;
        // The last record delivered that carries its index, and the records after it (shorter
        // than an index: the sequence has no gaps, so they are the next ones).
        let mut last_indexed = None;
        let mut after = 0;
        while delivered < deliver {
            match reader.next(&mut buffer) {
                Ok(Some(FlashItem::Record { len, .. })) => {
                    delivered += 1;
                    if len >= 4 {
                        let index =
                            u32::from_le_bytes([buffer[0], buffer[1], buffer[2], buffer[3]]);
                        (last_indexed, after) = (Some(index as usize), 0);
                    } else {
                        after += 1;
                    }
                }
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => panic!("{what}: read from cursor {id}: {e:?}"),
            }
        }
        if delivered == 0 {
            return Ok(());
        }
        let id = usize::from(id);
        // Where the cursor goes: after the records delivered; with none that carries its
        // index, counted on from where it was, if no record aged out before it.
        let expect = match last_indexed {
            Some(index) => Some(index + 1 + after),
            None if reader.start().aged_out == 0 => {
                self.cursors[id].flatten().map(|from| from + delivered)
            }
            None => None,
        };
        match writer.commit(reader.cursor()) {
            Ok(()) => {
                self.cursors[id] = Some(expect);
                self.cut_commits[id] = None;
                self.acknowledge();
                Ok(())
            }
            Err(FlashError::Flash(MockError::PowerCut)) => {
                self.cut_commits[id] = Some(expect);
                Err(End::PowerCut)
            }
            Err(e) => panic!("{what}: commit cursor {id}: {e:?}"),
        }
    }

    /// Every record added is acknowledged (a flush, or a commit, returned `Ok`).
    fn acknowledge(&mut self) {
        self.acked = self.next;
        if let Some(&end) = self
            .acked
            .checked_sub(1)
            .and_then(|k| self.unrolled.ends.get(k))
        {
            self.durable = end;
        }
    }

    /// Checks that reading from each cursor committed starts where it must.
    fn check_cursors<F: ReadNorFlash<Error = MockError>>(
        &mut self,
        mut flash: F,
        config: FlashConfig,
        read: &Read,
        what: &str,
    ) {
        let end = read.end();
        let mut buffer = vec![0u8; config.len as usize];
        for id in 0..4 {
            let Some(expect) = self.cursors[id] else {
                continue;
            };
            let cut = self.cut_commits[id].take();
            let mut reader = CursorReader::open(&mut flash, config, id as u8)
                .unwrap_or_else(|e| panic!("{what}: open cursor {id}: {e:?}"));
            let aged_out = reader.start().aged_out;
            // The first record read that carries its index, and the records before it.
            let mut before = 0;
            let first = loop {
                match reader.next(&mut buffer) {
                    Ok(Some(FlashItem::Record { len, .. })) if len >= 4 => {
                        let index =
                            u32::from_le_bytes([buffer[0], buffer[1], buffer[2], buffer[3]]);
                        break Some(index as usize);
                    }
                    Ok(Some(FlashItem::Record { .. })) => before += 1,
                    Ok(Some(_)) => {}
                    Ok(None) => break None,
                    Err(e) => panic!("{what}: read from cursor {id}: {e:?}"),
                }
            };
            // Nothing left to read from the cursor: it is at the end of what the ring holds.
            let Some(start) = first.or(end).and_then(|f| f.checked_sub(before)) else {
                if cut.is_some() {
                    // Which of the two commits holds cannot be told from records without an
                    // index: the cursor's place is not known here until its next commit.
                    self.cursors[id] = Some(None);
                }
                continue;
            };
            if cut == Some(Some(start)) {
                // The commit a power cut interrupted took.
                self.cursors[id] = Some(Some(start));
                continue;
            }
            if cut == Some(None) && expect.is_none_or(|expect| start >= expect) {
                // A commit a power cut interrupted, after records delivered that carry no
                // index once records had aged out: where it goes is not known here; either
                // it took, or the commit before holds (or aged out) — no earlier start.
                self.cursors[id] = Some(Some(start));
                continue;
            }
            let Some(expect) = expect else {
                continue;
            };
            if aged_out > 0 {
                assert!(
                    start >= expect,
                    "{what}: cursor {id} read from record {start}, {aged_out} aged out, \
                     committed after {expect}"
                );
            } else {
                assert_eq!(
                    start, expect,
                    "{what}: cursor {id} read from record {start}, committed after record {expect} \
                     (a commit cut: {cut:?})"
                );
            }
        }
    }

    fn flush(&mut self, writer: &mut dyn LogWriter, what: &str) -> Result<(), End> {
        match writer.flush() {
            Ok(()) => {
                self.acked = self.next;
                if let Some(&end) = self
                    .acked
                    .checked_sub(1)
                    .and_then(|k| self.unrolled.ends.get(k))
                {
                    self.durable = end;
                }
                Ok(())
            }
            Err(FlashError::Flash(MockError::PowerCut)) => Err(End::PowerCut),
            Err(e) => panic!("{what}: flush: {e:?}"),
        }
    }

    /// Checks a read of the ring against the model (the log's end at `end`), and makes what
    /// was read the log: records in flight that were not read are to be written again.
    fn check(&mut self, read: &Read, what: &str) {
        let (acked, next) = (self.acked, self.next);
        let must = self.unrolled.must(acked, self.end, self.keep);
        // A write cut in the last word of a chunk cannot be told from damage: reported at the
        // log's end (with the record it ended, if one of several chunks), until a reopened
        // writer marks it torn. Nowhere else.
        assert!(read.damage.is_empty(), "{what}: damage {:?}", read.damage);
        assert!(
            read.one_damaged_chunk(),
            "{what}: at the end {:?}",
            read.tail_damage
        );
        let n = read.records.len();
        if n == 0 {
            assert_eq!(
                must, acked,
                "{what}: nothing read, record {must} of {acked} acknowledged must be kept"
            );
            self.next = acked;
            return;
        }
        let start = self.start(read, what);
        for (k, data) in read.records.iter().enumerate() {
            assert!(
                Some(data) == self.written.get(start + k),
                "{what}: record {k} read ({} bytes) is not record {} written",
                data.len(),
                start + k
            );
        }
        let read_end = start + n;
        assert!(
            read_end >= acked,
            "{what}: read up to {read_end}, {acked} acknowledged"
        );
        assert!(
            read_end <= next,
            "{what}: read up to {read_end}, {next} written"
        );
        assert!(
            must >= acked || start <= must,
            "{what}: read from {start}, record {must} must be kept ({acked} acknowledged)"
        );
        if read_end < next {
            self.next = read_end.max(acked);
        }
    }

    /// Which record of the sequence the first record read is: told by the first record read
    /// long enough to hold its index, else (records of 0 to 3 bytes only: empty ones are all
    /// alike) the oldest place between the acknowledged and the written records where the
    /// records read fit, the most favourable to the checks.
    fn start(&self, read: &Read, what: &str) -> usize {
        let n = read.records.len();
        if let Some((k, data)) = read.records.iter().enumerate().find(|(_, d)| d.len() >= 4) {
            let index = u32::from_le_bytes([data[0], data[1], data[2], data[3]]) as usize;
            return index.checked_sub(k).unwrap_or_else(|| {
                panic!("{what}: record {k} read is record {index}, records before it too")
            });
        }
        (self.acked.saturating_sub(n)..=self.next.saturating_sub(n))
            .find(|&s| self.written.get(s..s + n) == Some(&read.records[..]))
            .unwrap_or_else(|| {
                panic!(
                    "{what}: {n} records of 0 to 3 bytes read, that are no run of the records \
                     written ending between {} (acknowledged) and {} (written)",
                    self.acked, self.next
                )
            })
    }
}

/// Runs `script` on a flash of `W`-byte words and `E`-byte erase units.
fn run<const W: usize, const E: usize>(script: &Script) {
    let g = script.geometry;
    let group = E.max(BLOCK_SIZE);
    let len = g.groups * group;
    let blocks = len / BLOCK_SIZE;
    let mut memory = vec![0u8; len];
    let mut programmed = vec![false; len / W];
    let flash = RefCell::new(
        MockFlash::<W, E>::new(&mut memory, &mut programmed, g.erased).expect("geometry"),
    );
    // A word whose programming a power cut stopped before any bit changed reads erased and
    // leaves no trace: a reopened writer cannot tell it from erased flash, and on a part with
    // per-word ECC may program it again after a second such cut at the same place (a known
    // limit, in the flash module's docs). Without ECC the mock still refuses to program a word
    // twice if it reads other than erased: every other double program is caught.
    flash.borrow_mut().set_ecc(false);
    let config = FlashConfig::new(0, len as u32)
        .ring()
        .first_lap(g.first_lap)
        .erased(g.erased);
    let mut model = Model {
        written: Vec::new(),
        next: 0,
        acked: 0,
        unrolled: Unrolled {
            len: len as u64,
            base: 0,
            last: 0,
            starts: Vec::new(),
            ends: Vec::new(),
        },
        limit: (len - group).saturating_sub(blocks * (RING_HEADER_SIZE + 2 * HEADER_SIZE)),
        keep: ((g.groups - 2) * group) as u64,
        bytes: 0,
        end: 0,
        durable: 0,
        cursors: [None; 4],
        cut_commits: [None; 4],
    };
    let mut block = boxed_block();
    let mut read_block = boxed_block();
    let mut ops = script.ops.iter().enumerate();
    let mut session = 0usize;
    let mut writer = open(
        g.word_writer,
        Shared(&flash),
        config,
        &mut block,
        "first open",
    );
    model.end = model.unrolled.at(writer.position());
    loop {
        let mut what = format!("{g:?} session {session}");
        let reason = loop {
            let Some((i, &op)) = ops.next() else {
                break End::Done;
            };
            if model.bytes > MAX_REGIONS_WRITTEN * len {
                break End::Done;
            }
            what = format!("{g:?} session {session}, op {i} {op:?}");
            if trace() {
                eprintln!(
                    "flash_ring: op {i} {op:?} (next {}, acked {})",
                    model.next, model.acked
                );
            }
            let done = match op {
                Op::Add(n) => model.add(&mut *writer, n, &what),
                Op::Flush => model.flush(&mut *writer, &what),
                Op::Commit { id, deliver } => {
                    model.commit(&mut *writer, Shared(&flash), config, (id, deliver), &what)
                }
                Op::Reopen => Err(End::Reopen),
                Op::Cut(budget, mode) => {
                    flash.borrow_mut().cut_power_after(budget, mode);
                    Ok(())
                }
                Op::Burst { count, seed } => burst(&mut model, &mut *writer, count, seed, &what),
            };
            if let Err(reason) = done {
                break reason;
            }
        };
        // The session ends: power off and on again, and the writer reopened.
        drop(writer);
        flash.borrow_mut().power_on();
        let what = format!("{what}: {reason:?}");
        writer = open(g.word_writer, Shared(&flash), config, &mut block, &what);
        // Where the log goes on: past anything a torn write took.
        let newest = {
            let flash = flash.borrow();
            Ring::find((0..blocks).map(|b| {
                let header = RingHeader::parse(&flash.memory()[b * BLOCK_SIZE..]);
                (b as u32, header)
            }))
            .map(|ring| {
                u64::from(ring.lap().wrapping_sub(g.first_lap)) * len as u64
                    + u64::from(ring.head()) * BLOCK_SIZE as u64
            })
        };
        let resumed = model.unrolled.reopened(writer.position(), newest);
        assert!(
            resumed >= model.durable,
            "{what}: reopened at {} (unrolled {resumed}), before the end of the acknowledged records ({})",
            writer.position(),
            model.durable
        );
        model.end = model.end.max(resumed);
        if trace() {
            let flash = flash.borrow();
            let headers: Vec<_> = (0..blocks)
                .map(|b| RingHeader::parse(&flash.memory()[b * BLOCK_SIZE..]))
                .collect();
            eprintln!(
                "flash_ring: reopened at {} (unrolled end {}), ring headers {headers:?}",
                writer.position(),
                model.end
            );
            let path = format!("flash_ring-session-{session}.img");
            if std::fs::write(&path, flash.memory()).is_ok() {
                eprintln!("flash_ring: image in {path}");
            }
        }
        let read = read_ring(Shared(&flash), config, &mut read_block);
        let what = format!(
            "{what}, next {}, acked {}, {:?}",
            model.next, model.acked, read.ring
        );
        if trace() {
            eprintln!(
                "flash_ring: read {} records, damage {:?} / {:?}",
                read.records.len(),
                read.damage,
                read.tail_damage
            );
        }
        model.check(&read, &what);
        check_small_reader(Shared(&flash), config, &read, &what);
        model.check_cursors(Shared(&flash), config, &read, &what);
        if reason == End::Done {
            break;
        }
        session += 1;
    }
}

/// Adds `count` records of lengths drawn from `seed` (mostly small, some across blocks),
/// flushing after each with probability 1 / (1 + `seed` mod 8).
fn burst(
    model: &mut Model,
    writer: &mut dyn LogWriter,
    count: usize,
    seed: u8,
    what: &str,
) -> Result<(), End> {
    let mut rng = Rng(u64::from(seed) << 8 | model.next as u64);
    let flushes = 1 + u64::from(seed % 8);
    for _ in 0..count {
        let x = rng.next_u64();
        let len = match x % 20 {
            0 => (x >> 8) as usize % 40_000,
            1..=3 => (x >> 8) as usize % 2_000,
            _ => (x >> 8) as usize % 60,
        };
        model.add(writer, len, what)?;
        if rng.below(flushes) == 0 {
            model.flush(writer, what)?;
        }
    }
    Ok(())
}

fn boxed_block() -> Box<[u8; BLOCK_SIZE]> {
    vec![0u8; BLOCK_SIZE]
        .into_boxed_slice()
        .try_into()
        .expect("a block")
}
