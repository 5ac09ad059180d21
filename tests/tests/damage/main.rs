//! Damage sweeps: every single-bit flip, byte overwrite, truncation point and 7-byte zeroed
//! window of a set of multi-block logs (exhaustive where the log is small, at a fixed stride
//! elsewhere), 0x00 and 0xFF tails, garbage blocks, swapped and duplicated blocks.
//!
//! For every damaged copy:
//! - the core's `Reader` returns exactly what LevelDB's reader returns — records, offsets, drop
//!   offsets, byte counts and reasons — as the reference model `leveldb_reader.rs` computes it
//!   (the 0-byte "error in middle of record" after an empty `FIRST` included);
//! - with `resync_after_zeros`, exactly what the reference model of that option returns, and
//!   every record the default returns (the option never loses more);
//! - for damage in place (flips, overwrites, zeroed windows, garbage blocks, tails): every
//!   record returned is a written record, whole, at its own offset, in order (a subsequence:
//!   never invented, never joined — records carry unique ids), and every record that does not
//!   touch a damaged block is returned;
//! - truncations: exactly the model's records of the prefix (`tests/src/model.rs`), no report;
//! - inserted garbage blocks: every record not spanning the insertion point survives;
//! - swapped and duplicated blocks: the legacy format cannot see them (a chunk carries neither
//!   its position nor its record), so records may come back twice, out of order, or spliced
//!   from two records' fragments — as LevelDB returns them; the test checks the equality with
//!   LevelDB's semantics and counts those in the report.
//!
//! `damage_report` prints, for each class, how many records a damaged copy costs on average, in
//! the LevelDB-default mode and with `resync_after_zeros`.

#![allow(missing_docs)]

mod leveldb_reader;

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::OnceLock;

use leveldb_reader::Out;
use logfmt_core::parts::block::{ChunkRules, Parsed, parse_chunk};
use logfmt_core::{BLOCK_SIZE, ReadOptions, Reader, SliceSource, parts::Item};
use logfmt_tests::model;

const BLOCK: usize = BLOCK_SIZE;

// ---------------------------------------------------------------------------------------------
// The logs

/// A log and what was written to it.
struct Log {
    name: &'static str,
    bytes: Vec<u8>,
    records: Vec<Vec<u8>>,
    spans: Vec<Range<u64>>,
    /// Every chunk of the clean log (header to end), and its payload.
    chunks: Vec<Range<usize>>,
    payloads: Vec<Range<usize>>,
    /// Whether the clean log holds three zero bytes in a row (a trailer).
    zero_run: bool,
    /// Payload → index of the record (payloads are unique: each starts with a unique id).
    index: HashMap<Vec<u8>, usize>,
}

/// Record content: a unique 8-byte id, then pseudo-random bytes, with no zero byte anywhere (so
/// that a zero header can only come from damage).
fn record(id: u64, len: usize) -> Vec<u8> {
    let mut x = id.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5151_5151;
    let mut out: Vec<u8> = (0..8)
        .map(|k| ((id >> (7 * k)) & 0x7f) as u8 | 0x80)
        .collect();
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend(x.to_le_bytes().iter().map(|&b| b.max(1)));
    }
    out.truncate(len);
    out
}

fn make_log(name: &'static str, lens: &[usize]) -> Log {
    let records: Vec<Vec<u8>> = lens
        .iter()
        .enumerate()
        .map(|(i, &len)| record(i as u64 + 1, len))
        .collect();
    let (bytes, spans) = model::write_spans(&records, 0);
    assert_eq!(
        logfmt_tests::write_log(&records),
        bytes,
        "the core writes the model's bytes"
    );
    let mut index = HashMap::new();
    for (i, r) in records.iter().enumerate() {
        if !r.is_empty() {
            assert!(
                index.insert(r.clone(), i).is_none(),
                "{name}: payloads are unique"
            );
        }
    }
    let (mut chunks, mut payloads) = (Vec::new(), Vec::new());
    for piece in model::layout(&bytes) {
        if let model::Piece::Chunk { offset, len, .. } = piece {
            let (start, len) = (offset as usize, len as usize);
            chunks.push(start..start + 7 + len);
            payloads.push(start + 7..start + 7 + len);
        }
    }
    let zero_run = has_zero_run(&bytes);
    Log {
        name,
        bytes,
        records,
        spans,
        chunks,
        payloads,
        zero_run,
        index,
    }
}

fn has_zero_run(bytes: &[u8]) -> bool {
    bytes.windows(3).any(|w| w == [0, 0, 0])
}

impl Log {
    /// The chunk whose payload holds all of `range`, if any.
    fn payload_chunk(&self, range: &Range<usize>) -> Option<usize> {
        let i = self.payloads.partition_point(|p| p.end <= range.start);
        self.payloads
            .get(i)
            .filter(|p| p.start <= range.start && range.end <= p.end && !range.is_empty())
            .map(|_| i)
    }
}

fn logs() -> &'static [Log] {
    static LOGS: OnceLock<Vec<Log>> = OnceLock::new();
    LOGS.get_or_init(|| {
        // Small records only: ~2 blocks.
        let mut x = 7u64;
        let small: Vec<usize> = (0..290)
            .map(|_| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                9 + (x >> 33) as usize % 300
            })
            .collect();
        // Every layout case: FULL, an empty FIRST in the last 7 bytes of block 0, FIRST/LAST,
        // an empty record, FIRST/MIDDLE/LAST ending 3 bytes short of a block (a trailer), then
        // small records.
        let mut mixed = vec![100, 32_768 - 107 - 7 - 7, 300, 0, 32_447 + 32_761 + 32_758];
        mixed.extend((0..60).map(|i| 20 + i * 7 % 230));
        // Large records spanning blocks, some with MIDDLE chunks.
        let big = [45_000, 70_000, 10, 60_000, 30_000, 500];
        vec![
            make_log("small", &small),
            make_log("mixed", &mixed),
            make_log("big", &big),
        ]
    })
}

#[test]
fn the_logs_have_every_layout_case() {
    let logs = logs();
    let mixed = &logs[1];
    let pieces = model::layout(&mixed.bytes);
    let has = |kind: u8, len: Option<u64>| {
        pieces.iter().any(|p| {
            matches!(*p, model::Piece::Chunk { kind: k, len: l, .. } if k == kind && len.is_none_or(|n| n == l))
        })
    };
    assert!(has(model::FIRST, Some(0)), "an empty FIRST");
    assert!(has(model::FULL, Some(0)), "an empty record");
    assert!(has(model::MIDDLE, None) && has(model::LAST, None));
    assert!(
        pieces
            .iter()
            .any(|p| matches!(p, model::Piece::Trailer { len: 3, .. }))
    );
    for log in logs {
        assert!(
            log.bytes.len() > BLOCK + BLOCK / 3,
            "{} spans several blocks",
            log.name
        );
        assert_eq!(model::read(&log.bytes), log.records);
    }
}

/// The reference model itself reproduces what real LevelDB returned for its 27 vectors
/// (`data/leveldb/EXPECTED.txt`: records with offsets and checksums, drops with byte counts and
/// reasons).
#[test]
fn the_reference_reproduces_leveldb_on_its_vectors() {
    let text = std::fs::read_to_string(logfmt_tests::data_dir().join("leveldb/EXPECTED.txt"))
        .expect("EXPECTED.txt");
    let mut checked = 0;
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let name = line.split(' ').next().expect("a name");
        let (mut records, mut drops) = (Vec::new(), Vec::new());
        let mut rest = line;
        while let Some(i) = rest.find('[') {
            let end = rest[i..].find(']').expect("]") + i;
            let fields: Vec<&str> = rest[i + 1..end].split(' ').collect();
            let value = |k: &str| {
                fields
                    .iter()
                    .find_map(|f| f.strip_prefix(k))
                    .expect("a field")
                    .to_owned()
            };
            records.push((
                value("len=").parse::<usize>().expect("len"),
                value("off=").parse::<u64>().expect("off"),
                u32::from_str_radix(&value("crc32c="), 16).expect("crc"),
            ));
            rest = &rest[end + 1..];
        }
        let mut rest = line;
        while let Some(i) = rest.find("drop(") {
            let body = &rest[i + 5..];
            let mut depth = 0;
            let end = body
                .char_indices()
                .find(|&(_, c)| match c {
                    '(' => {
                        depth += 1;
                        false
                    }
                    ')' if depth == 0 => true,
                    ')' => {
                        depth -= 1;
                        false
                    }
                    _ => false,
                })
                .expect(")")
                .0;
            let (bytes, reason) = body[..end].split_once(',').expect("drop fields");
            let reason = reason.strip_prefix("Corruption: ").unwrap_or(reason);
            drops.push((bytes.parse::<u64>().expect("bytes"), reason.to_owned()));
            rest = &body[end..];
        }
        let out = leveldb_reader::read(&logfmt_tests::vector(name), false);
        let got_records: Vec<(usize, u64, u32)> = out
            .iter()
            .filter_map(|o| match o {
                Out::Record { offset, data } => Some((data.len(), *offset, crc32c::crc32c(data))),
                Out::Drop { .. } => None,
            })
            .collect();
        let got_drops: Vec<(u64, String)> = out
            .iter()
            .filter_map(|o| match o {
                Out::Drop { bytes, reason, .. } => Some((*bytes, reason.clone())),
                Out::Record { .. } => None,
            })
            .collect();
        assert_eq!(got_records, records, "{name}: records");
        assert_eq!(got_drops, drops, "{name}: drops");
        checked += 1;
    }
    assert_eq!(checked, 27);
}

// ---------------------------------------------------------------------------------------------
// Reading

thread_local! {
    static SCRATCH: RefCell<Vec<u8>> = RefCell::new(vec![0u8; 1 << 20]);
}

/// What the core's `Reader` returns, in the reference model's terms.
fn core_read(log: &[u8], resync: bool) -> Vec<Out> {
    SCRATCH.with(|scratch| {
        let mut scratch = scratch.borrow_mut();
        let options = ReadOptions::new().resync_after_zeros(resync);
        let mut reader = Reader::with_options(SliceSource::new(log), &mut scratch[..], &options);
        let mut out = Vec::new();
        while let Some(item) = reader.next().unwrap_or_else(|e| match e {}) {
            out.push(match item {
                Item::Record(r) => Out::Record {
                    offset: r.offset,
                    data: r.data.to_vec(),
                },
                Item::Corruption(c) => Out::Drop {
                    offset: c.offset,
                    bytes: c.bytes,
                    reason: c.kind.to_string(),
                },
                Item::Oversized(o) => panic!("buffer too small: {o:?}"),
                Item::Coded(pack) => panic!("no coded packs in these logs: {pack:?}"),
                other => panic!("not expected here: {other:?}"),
            });
        }
        out
    })
}

fn records(out: &[Out]) -> Vec<(u64, &[u8])> {
    out.iter()
        .filter_map(|o| match o {
            Out::Record { offset, data } => Some((*offset, data.as_slice())),
            Out::Drop { .. } => None,
        })
        .collect()
}

fn reports(out: &[Out]) -> usize {
    out.iter().filter(|o| matches!(o, Out::Drop { .. })).count()
}

// ---------------------------------------------------------------------------------------------
// Damage

/// The damage classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Class {
    BitFlip,
    ByteOverwrite,
    Truncation,
    ZeroWindow,
    ZeroedChunk,
    ZeroedSector,
    ZeroTail,
    FfTail,
    GarbageBlock,
    InsertedGarbageBlock,
    SwappedBlocks,
    DuplicatedBlock,
}

impl Class {
    const ALL: [Class; 12] = [
        Class::BitFlip,
        Class::ByteOverwrite,
        Class::Truncation,
        Class::ZeroWindow,
        Class::ZeroedChunk,
        Class::ZeroedSector,
        Class::ZeroTail,
        Class::FfTail,
        Class::GarbageBlock,
        Class::InsertedGarbageBlock,
        Class::SwappedBlocks,
        Class::DuplicatedBlock,
    ];

    fn describe(self) -> &'static str {
        match self {
            Class::BitFlip => "single-bit flip",
            Class::ByteOverwrite => "byte overwrite (00, FF, +1, ^80)",
            Class::Truncation => "truncation",
            Class::ZeroWindow => "7 zeroed bytes",
            Class::ZeroedChunk => "a whole chunk zeroed",
            Class::ZeroedSector => "a 512-byte sector zeroed",
            Class::ZeroTail => "0x00 tail (appended / overwritten)",
            Class::FfTail => "0xFF tail (appended / overwritten)",
            Class::GarbageBlock => "garbage block (overwritten)",
            Class::InsertedGarbageBlock => "garbage block (inserted)",
            Class::SwappedBlocks => "two blocks swapped",
            Class::DuplicatedBlock => "a block duplicated",
        }
    }
}

/// What may be asserted of a damaged copy beyond the equality with LevelDB's semantics.
#[derive(Debug, Clone)]
enum Expect {
    /// Bytes `range` were changed in place: a subsequence of the written records, and every
    /// record that does not touch a block of `range` survives.
    InPlace(Range<usize>),
    /// A prefix of `len` bytes: exactly the model's records of the prefix, no report.
    Prefix(usize),
    /// Bytes appended at the end of the log: every record survives, at its offset.
    Appended,
    /// A block inserted at `at` (a block boundary): records not spanning `at` survive.
    Inserted(usize),
    /// Blocks rearranged: only the equality with LevelDB.
    Rearranged,
}

/// One damaged copy of a log, described (applied to a working buffer when checked).
#[derive(Debug, Clone, Copy)]
enum Damage {
    Flip { at: usize, bit: u8 },
    Set { at: usize, value: u8 },
    Zero { at: usize, len: usize },
    Truncate(usize),
    Append { len: usize, fill: u8 },
    FillTail { len: usize, fill: u8 },
    Garbage { block: usize, seed: u64 },
    InsertGarbage { block: usize },
    Swap(usize, usize),
    DupAfter(usize),
    DupAtEnd(usize),
}

impl Damage {
    /// Writes the damaged copy of `clean` into `buf`.
    fn apply(self, clean: &[u8], buf: &mut Vec<u8>) {
        let n = clean.len();
        buf.clear();
        match self {
            Damage::Flip { at, bit } => {
                buf.extend_from_slice(clean);
                buf[at] ^= 1 << bit;
            }
            Damage::Set { at, value } => {
                buf.extend_from_slice(clean);
                buf[at] = value;
            }
            Damage::Zero { at, len } => {
                buf.extend_from_slice(clean);
                buf[at..(at + len).min(n)].fill(0);
            }
            Damage::Truncate(len) => buf.extend_from_slice(&clean[..len]),
            Damage::Append { len, fill } => {
                buf.extend_from_slice(clean);
                buf.resize(n + len, fill);
            }
            Damage::FillTail { len, fill } => {
                buf.extend_from_slice(clean);
                buf[n - len..].fill(fill);
            }
            Damage::Garbage { block, seed } => {
                buf.extend_from_slice(clean);
                let end = ((block + 1) * BLOCK).min(n);
                buf[block * BLOCK..end]
                    .copy_from_slice(&logfmt_tests::content(end - block * BLOCK, seed));
            }
            Damage::InsertGarbage { block } => {
                buf.extend_from_slice(&clean[..block * BLOCK]);
                buf.extend(logfmt_tests::content(BLOCK, 77 + block as u64));
                buf.extend_from_slice(&clean[block * BLOCK..]);
            }
            Damage::Swap(a, b) => {
                buf.extend_from_slice(clean);
                let (x, y) = (a * BLOCK, b * BLOCK);
                buf[x..x + BLOCK].copy_from_slice(&clean[y..y + BLOCK]);
                buf[y..y + BLOCK].copy_from_slice(&clean[x..x + BLOCK]);
            }
            Damage::DupAfter(b) => {
                buf.extend_from_slice(&clean[..(b + 1) * BLOCK]);
                buf.extend_from_slice(&clean[b * BLOCK..(b + 1) * BLOCK]);
                buf.extend_from_slice(&clean[(b + 1) * BLOCK..]);
            }
            Damage::DupAtEnd(b) => {
                let whole = n / BLOCK * BLOCK;
                buf.extend_from_slice(&clean[..whole]);
                buf.extend_from_slice(&clean[b * BLOCK..(b + 1) * BLOCK]);
                buf.extend_from_slice(&clean[whole..]);
            }
        }
    }

    /// The bytes changed in place, if the damage is in place.
    fn range(self, n: usize) -> Option<Range<usize>> {
        match self {
            Damage::Flip { at, .. } | Damage::Set { at, .. } => Some(at..at + 1),
            Damage::Zero { at, len } => Some(at..(at + len).min(n)),
            Damage::FillTail { len, .. } => Some(n - len..n),
            Damage::Garbage { block, .. } => Some(block * BLOCK..((block + 1) * BLOCK).min(n)),
            _ => None,
        }
    }

    fn expect(self, n: usize) -> Expect {
        match self {
            Damage::Truncate(len) => Expect::Prefix(len),
            Damage::Append { .. } => Expect::Appended,
            Damage::InsertGarbage { block } => Expect::Inserted(block * BLOCK),
            Damage::Swap(..) | Damage::DupAfter(_) | Damage::DupAtEnd(_) => Expect::Rearranged,
            other => Expect::InPlace(other.range(n).expect("in place")),
        }
    }
}

/// The damaged copies of `log` swept for `class`: exhaustive for the small log where the
/// class allows, at a stride (plus the first and last 64 bytes of every block: headers and
/// trailers) for the larger ones. `sample` keeps every n-th.
fn damages(class: Class, log: &Log, sample: usize) -> Vec<Damage> {
    let bytes = &log.bytes;
    let n = bytes.len();
    let blocks = n.div_ceil(BLOCK);
    let whole = n / BLOCK;
    let small = log.name == "small";
    let positions = |stride: usize| -> Vec<usize> {
        let mut p: Vec<usize> = (0..n).step_by(stride).collect();
        for b in 0..blocks {
            let s = b * BLOCK;
            p.extend(s..(s + 64).min(n));
            p.extend((s + BLOCK).saturating_sub(64).min(n)..(s + BLOCK).min(n));
        }
        // Every chunk header, and the bytes around it.
        for chunk in &log.chunks {
            p.extend(chunk.start.saturating_sub(3)..(chunk.start + 10).min(n));
        }
        p.sort_unstable();
        p.dedup();
        p
    };
    let mut out = Vec::new();
    match class {
        Class::BitFlip => {
            for at in positions(if small { 1 } else { 29 }) {
                out.extend((0..8).map(|bit| Damage::Flip { at, bit }));
            }
        }
        Class::ByteOverwrite => {
            for at in positions(if small { 1 } else { 11 }) {
                let b = bytes[at];
                for value in [0x00, 0xFF, b.wrapping_add(1), b ^ 0x80] {
                    if value != b {
                        out.push(Damage::Set { at, value });
                    }
                }
            }
        }
        Class::Truncation => {
            let mut cuts = if small {
                (0..=n).collect()
            } else {
                let mut cuts = positions(257);
                for chunk in &log.chunks {
                    cuts.extend(chunk.end.saturating_sub(8)..(chunk.end + 8).min(n));
                }
                cuts.push(n);
                cuts
            };
            cuts.sort_unstable();
            cuts.dedup();
            out.extend(cuts.into_iter().map(Damage::Truncate));
        }
        Class::ZeroWindow => {
            for at in positions(if small { 1 } else { 5 }) {
                out.push(Damage::Zero { at, len: 7 });
            }
        }
        Class::ZeroedChunk => {
            out.extend(log.chunks.iter().map(|c| Damage::Zero {
                at: c.start,
                len: c.len(),
            }));
        }
        Class::ZeroedSector => {
            out.extend((0..n).step_by(512).map(|at| Damage::Zero { at, len: 512 }));
        }
        Class::ZeroTail | Class::FfTail => {
            let fill = if class == Class::ZeroTail { 0x00 } else { 0xFF };
            let to_block_end = (BLOCK - n % BLOCK) % BLOCK;
            for len in [
                1,
                3,
                6,
                7,
                8,
                100,
                to_block_end,
                to_block_end + 1,
                to_block_end + BLOCK,
                to_block_end + 2 * BLOCK + 5,
            ] {
                out.push(Damage::Append { len, fill });
            }
            // The log's last bytes overwritten: a torn write into preallocated or erased space.
            for len in (1..(2 * BLOCK).min(n)).step_by(97) {
                out.push(Damage::FillTail { len, fill });
            }
        }
        Class::GarbageBlock => {
            for block in 0..blocks {
                out.extend([1, 2].map(|s| Damage::Garbage {
                    block,
                    seed: s * 1000 + block as u64,
                }));
            }
        }
        Class::InsertedGarbageBlock => {
            out.extend((0..blocks).map(|block| Damage::InsertGarbage { block }))
        }
        Class::SwappedBlocks => {
            for a in 0..whole {
                out.extend((a + 1..whole).map(|b| Damage::Swap(a, b)));
            }
        }
        Class::DuplicatedBlock => {
            for b in 0..whole {
                out.extend([Damage::DupAfter(b), Damage::DupAtEnd(b)]);
            }
        }
    }
    out.into_iter().step_by(sample).collect()
}

/// Totals for one class.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Stats {
    cases: u64,
    lost_default: u64,
    lost_resync: u64,
    /// Records lost over records written, in millionths, summed over the cases.
    share_default: u64,
    share_resync: u64,
    max_lost: u64,
    silent_default: u64,
    silent_resync: u64,
    reports_default: u64,
    spliced: u64,
    repeated: u64,
}

impl Stats {
    fn add(&mut self, o: &Stats) {
        self.cases += o.cases;
        self.lost_default += o.lost_default;
        self.lost_resync += o.lost_resync;
        self.share_default += o.share_default;
        self.share_resync += o.share_resync;
        self.max_lost = self.max_lost.max(o.max_lost);
        self.silent_default += o.silent_default;
        self.silent_resync += o.silent_resync;
        self.reports_default += o.reports_default;
        self.spliced += o.spliced;
        self.repeated += o.repeated;
    }
}

/// Blocks touched by `range`.
fn blocks_of(range: &Range<usize>) -> Range<u64> {
    (range.start / BLOCK) as u64..((range.end.max(range.start + 1) - 1) / BLOCK + 1) as u64
}

/// Checks one damaged copy; returns its statistics.
fn check_case(
    log: &Log,
    damaged: &[u8],
    expect: &Expect,
    zeros: bool,
    what: &dyn Fn() -> String,
) -> (Stats, Vec<Out>) {
    let core = core_read(damaged, false);
    // A prefix is checked against the model's records (below); everything else against
    // LevelDB's reader.
    let reference: Vec<Out> = if matches!(expect, Expect::Prefix(_)) {
        core.clone()
    } else {
        leveldb_reader::read(damaged, false)
    };
    if core != reference {
        panic!(
            "{}: the core differs from LevelDB's semantics\n core:      {:?}\n reference: {:?}",
            what(),
            summary(&core),
            summary(&reference)
        );
    }
    // resync_after_zeros matters only where a zero header can be (three zero bytes in a row).
    let resync = if zeros {
        core_read(damaged, true)
    } else {
        core.clone()
    };
    if zeros {
        let reference = leveldb_reader::read(damaged, true);
        assert!(
            resync == reference,
            "{}: resync_after_zeros differs from its model\n core:      {:?}\n reference: {:?}",
            what(),
            summary(&resync),
            summary(&reference)
        );
    }

    let default_records = records(&core);
    let resync_records = records(&resync);
    // The option never loses what the default returns.
    let mut from = resync_records.iter();
    for r in &default_records {
        assert!(
            from.any(|x| x == r),
            "{}: resync_after_zeros loses the record at {} that the default returns",
            what(),
            r.0
        );
    }

    let mut stats = Stats {
        cases: 1,
        reports_default: reports(&core) as u64,
        ..Stats::default()
    };
    for (mode, recs) in [(false, &default_records), (true, &resync_records)] {
        let (lost, spliced, repeated) = match expect {
            Expect::Rearranged => {
                let mut seen = vec![false; log.records.len()];
                let mut spliced = 0;
                let mut repeated = 0;
                for (_, data) in recs.iter() {
                    match log.index.get(*data) {
                        Some(&i) => {
                            repeated += u64::from(seen[i]);
                            seen[i] = true;
                        }
                        None if data.is_empty() => {}
                        None => spliced += 1,
                    }
                }
                let lost = log
                    .records
                    .iter()
                    .zip(&seen)
                    .filter(|(r, s)| !**s && !r.is_empty())
                    .count() as u64;
                (lost, spliced, repeated)
            }
            _ => {
                let returned = check_in_order(log, recs, expect, what);
                ((log.records.len() - returned) as u64, 0, 0)
            }
        };
        let silent = u64::from(lost > 0 && reports(if mode { &resync } else { &core }) == 0);
        let share = lost * 1_000_000 / log.records.len() as u64;
        if mode {
            stats.share_resync = share;
            stats.lost_resync = lost;
            stats.silent_resync = silent;
        } else {
            stats.lost_default = lost;
            stats.share_default = share;
            stats.silent_default = silent;
            stats.max_lost = lost;
            stats.spliced = spliced;
            stats.repeated = repeated;
        }
    }
    (stats, core)
}

/// For damage that keeps the blocks in place: the records are written records, at their own
/// offsets (shifted past an inserted block), in order; the survivors the damage cannot reach
/// are there. Returns how many written records were returned.
fn check_in_order(
    log: &Log,
    recs: &[(u64, &[u8])],
    expect: &Expect,
    what: &dyn Fn() -> String,
) -> usize {
    let shift = |i: usize| -> u64 {
        match expect {
            Expect::Inserted(at) if log.spans[i].start >= *at as u64 => BLOCK as u64,
            _ => 0,
        }
    };
    let mut next = 0;
    let mut returned = vec![false; log.records.len()];
    for (offset, data) in recs {
        let Some(i) = (next..log.records.len())
            .find(|&i| log.spans[i].start + shift(i) == *offset && log.records[i] == *data)
        else {
            panic!(
                "{}: a record that was not written, or out of order, at offset {offset} ({} bytes)",
                what(),
                data.len()
            );
        };
        returned[i] = true;
        next = i + 1;
    }
    match expect {
        Expect::InPlace(range) => {
            let touched = blocks_of(range);
            let damaged = touched.start * BLOCK as u64..touched.end * BLOCK as u64;
            for (i, span) in log.spans.iter().enumerate() {
                let touches = span.start < damaged.end && span.end > damaged.start;
                assert!(
                    touches || returned[i],
                    "{}: record {i} at {:?} lies outside the damaged blocks {touched:?} and was lost",
                    what(),
                    span
                );
            }
        }
        Expect::Prefix(len) => {
            let expected: Vec<u64> = log
                .spans
                .iter()
                .filter(|s| s.end <= *len as u64)
                .map(|s| s.start)
                .collect();
            let got: Vec<u64> = recs.iter().map(|r| r.0).collect();
            assert_eq!(
                got,
                expected,
                "{}: a prefix reads as the model's records",
                what()
            );
        }
        Expect::Appended => {
            assert!(
                returned.iter().all(|r| *r),
                "{}: a tail cost a record",
                what()
            );
        }
        Expect::Inserted(at) => {
            for (i, span) in log.spans.iter().enumerate() {
                let spans_it = span.start < *at as u64 && span.end > *at as u64;
                assert!(spans_it || returned[i], "{}: record {i} lost", what());
            }
        }
        Expect::Rearranged => unreachable!(),
    }
    returned.iter().filter(|r| **r).count()
}

fn summary(out: &[Out]) -> Vec<String> {
    out.iter()
        .map(|o| match o {
            Out::Record { offset, data } => format!("rec@{offset}+{}", data.len()),
            Out::Drop {
                offset,
                bytes,
                reason,
            } => format!("drop@{offset}:{bytes}:{reason}"),
        })
        .collect()
}

/// Runs the damages of `class` (every `sample`-th) over every log, split over two threads;
/// returns the totals.
///
/// Damage confined to one chunk's payload is decided by that chunk alone: it reads as a
/// checksum mismatch (checked here for every such case: CRC-32C catches every error of up to
/// 32 bits, so a flip or a byte; wider windows are checked all the same), and a reader cannot
/// tell two corruptions of one payload apart. So for each chunk the first such case is read
/// in full (against LevelDB's semantics and the structural checks), and so is every 61st
/// further one, whose outcome must be identical; the others count with the first one's
/// outcome.
fn sweep(class: Class, sample: usize) -> Stats {
    let mut total = Stats::default();
    for log in logs() {
        let damages = damages(class, log, sample);
        let n = log.bytes.len();
        let run = |part: usize| {
            let mut stats = Stats::default();
            let mut buf = Vec::with_capacity(n + 3 * BLOCK);
            let mut representative: HashMap<usize, (Stats, Vec<Out>)> = HashMap::new();
            for (i, damage) in damages.iter().enumerate().skip(part).step_by(2) {
                let what = || format!("{} log, {:?} #{i}: {damage:?}", log.name, class);
                damage.apply(&log.bytes, &mut buf);
                let expect = damage.expect(n);
                let range = damage.range(n);
                let zeros = match (damage, &range) {
                    (Damage::Append { fill: 0, .. }, _) => true,
                    (Damage::Truncate(_) | Damage::Append { .. }, _) => log.zero_run,
                    (_, Some(r)) => {
                        log.zero_run
                            || has_zero_run(
                                &buf[r.start.saturating_sub(2)..(r.end + 2).min(buf.len())],
                            )
                    }
                    (_, None) => true,
                };
                let chunk = range.as_ref().and_then(|r| log.payload_chunk(r));
                let Some(c) = chunk else {
                    stats.add(&check_case(log, &buf, &expect, zeros, &what).0);
                    continue;
                };
                // Damage inside one payload: the chunk must read as a checksum mismatch.
                let header = log.chunks[c].start;
                let block = header / BLOCK * BLOCK;
                let end = (block + BLOCK).min(buf.len());
                let parsed = parse_chunk(
                    &buf[block..end],
                    header - block,
                    end - block < BLOCK,
                    &ChunkRules::default(),
                );
                assert!(
                    matches!(parsed, Parsed::ChecksumMismatch { .. }),
                    "{}: a damaged payload passes its checksum: {parsed:?}",
                    what()
                );
                match representative.get(&c) {
                    Some((rep_stats, rep_out)) if i % 61 != 0 => stats.add(rep_stats),
                    Some((rep_stats, rep_out)) => {
                        let (s, out) = check_case(log, &buf, &expect, zeros, &what);
                        assert!(
                            out == *rep_out && s == *rep_stats,
                            "{}: two corruptions of one payload read differently",
                            what()
                        );
                        stats.add(&s);
                    }
                    None => {
                        let (s, out) = check_case(log, &buf, &expect, zeros, &what);
                        stats.add(&s);
                        representative.insert(c, (s, out));
                    }
                }
            }
            stats
        };
        let (a, b) = std::thread::scope(|scope| {
            let a = scope.spawn(|| run(0));
            let b = scope.spawn(|| run(1));
            (a.join(), b.join())
        });
        for part in [a, b] {
            match part {
                Ok(s) => total.add(&s),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    }
    total
}

fn row(class: Class, s: &Stats) -> String {
    let avg = |x: u64| x as f64 / s.cases.max(1) as f64;
    let pct = |x: u64| 100.0 * x as f64 / s.cases.max(1) as f64;
    let share = |x: u64| x as f64 / 10_000.0 / s.cases.max(1) as f64;
    format!(
        "| {:<34} | {:>6} | {:>7.2} ({:>4.1}%) | {:>7.2} ({:>4.1}%) | {:>4} | {:>5.1}% | {:>7.1}% | {:>7} | {:>8} |",
        class.describe(),
        s.cases,
        avg(s.lost_default),
        share(s.share_default),
        avg(s.lost_resync),
        share(s.share_resync),
        s.max_lost,
        pct(s.silent_default),
        pct(s.silent_resync),
        s.spliced,
        s.repeated,
    )
}

const HEADER_ROW: &str = "\
| damage                             |  cases | lost (default)  | lost (resync)   |  max | silent | silent r | spliced | repeated |
|------------------------------------|-------:|----------------:|----------------:|-----:|-------:|---------:|--------:|---------:|";

fn run_class(class: Class) {
    let stats = sweep(class, 1);
    eprintln!("{HEADER_ROW}\n{}", row(class, &stats));
}

#[test]
fn bit_flips() {
    run_class(Class::BitFlip);
}

#[test]
fn byte_overwrites() {
    run_class(Class::ByteOverwrite);
}

#[test]
fn truncations() {
    run_class(Class::Truncation);
}

#[test]
fn zeroed_windows() {
    run_class(Class::ZeroWindow);
}

#[test]
fn zeroed_chunks_and_sectors() {
    run_class(Class::ZeroedChunk);
    run_class(Class::ZeroedSector);
}

#[test]
fn zero_and_ff_tails() {
    run_class(Class::ZeroTail);
    run_class(Class::FfTail);
}

#[test]
fn garbage_blocks() {
    run_class(Class::GarbageBlock);
    run_class(Class::InsertedGarbageBlock);
}

#[test]
fn swapped_and_duplicated_blocks() {
    run_class(Class::SwappedBlocks);
    run_class(Class::DuplicatedBlock);
}

/// The report: records lost per damaged copy, on average, over a sample of every class (every
/// 7th case of the sweeps), in LevelDB's default mode and with `resync_after_zeros`. Shown with
/// `cargo test -p logfmt-tests --test damage damage_report -- --nocapture`.
#[test]
fn damage_report() {
    let logs = logs();
    let total: usize = logs.iter().map(|l| l.records.len()).sum();
    println!(
        "Damage report: {} logs ({}), {total} records in all; a sample of each class's cases.",
        logs.len(),
        logs.iter()
            .map(|l| format!(
                "{}: {} records, {} bytes",
                l.name,
                l.records.len(),
                l.bytes.len()
            ))
            .collect::<Vec<_>>()
            .join("; ")
    );
    println!(
        "lost: records lost per damaged copy, on average (and as a share of the log's records),\n  \
         in LevelDB's default mode and with resync_after_zeros; max: the most one copy cost;\n\
         silent: copies that lost records without any report (default; resync_after_zeros);\n\
         spliced: records returned that were never written (fragments of two records: only when\n  \
         blocks move); repeated: records returned twice (duplicated blocks).\n"
    );
    println!("{HEADER_ROW}");
    for class in Class::ALL {
        let stats = sweep(class, 7);
        println!("{}", row(class, &stats));
        assert!(stats.lost_resync <= stats.lost_default);
    }
}
