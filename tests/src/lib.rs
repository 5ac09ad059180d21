//! Shared helpers for logfmt's workspace-level tests: an independent model of the format
//! ([`model`]), LevelDB's test fixtures (its `Random`, `BigString`, the byte-damaging helpers),
//! and owned views of what the readers return.

use std::convert::Infallible;
use std::path::PathBuf;

use logfmt_core::{
    BLOCK_SIZE, BlockSource, FnSink, ReadOptions, Reader, SliceSource, WriteOptions, Writer,
    Written,
    parts::{Corruption, Event, FragmentKind, FragmentReader, Item, Oversized},
};

pub mod model;
pub mod write_batch;

/// Directory of the committed test data.
#[must_use]
pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data")
}

/// The LevelDB vector `data/leveldb/<name>.log`.
///
/// # Panics
/// If the file cannot be read.
#[must_use]
pub fn vector(name: &str) -> Vec<u8> {
    let path = data_dir().join(format!("leveldb/{name}.log"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// LevelDB's `BigString(partial, n)`: `partial` repeated and cut to `n` bytes.
#[must_use]
pub fn big_string(partial: &str, n: usize) -> Vec<u8> {
    partial.bytes().cycle().take(n).collect()
}

/// LevelDB's `NumberString(n)`: `"<n>."`.
#[must_use]
pub fn number_string(n: u64) -> String {
    format!("{n}.")
}

/// LevelDB's `util/random.h` `Random` (Park–Miller, multiplier 16807, modulus 2^31−1), so
/// that LevelDB's randomized tests can be replayed with the same records.
#[derive(Debug, Clone)]
pub struct LevelDbRandom {
    seed: u32,
}

impl LevelDbRandom {
    /// A generator seeded like LevelDB's.
    #[must_use]
    pub fn new(seed: u32) -> Self {
        let mut seed = seed & 0x7fff_ffff;
        if seed == 0 || seed == 0x7fff_ffff {
            seed = 1;
        }
        Self { seed }
    }

    /// The next value in 1..2^31−1.
    pub fn next_u32(&mut self) -> u32 {
        const M: u64 = 0x7fff_ffff;
        self.seed = ((u64::from(self.seed) * 16807) % M) as u32;
        self.seed
    }

    /// Uniform in `0..n`.
    pub fn uniform(&mut self, n: u32) -> u32 {
        self.next_u32() % n
    }

    /// LevelDB's `Skewed(max_log)`: uniform in `0..2^k` for `k` uniform in `0..=max_log`.
    pub fn skewed(&mut self, max_log: u32) -> u32 {
        let k = self.uniform(max_log + 1);
        self.uniform(1 << k)
    }
}

/// Deterministic pseudo-random content (splitmix64) of length `len`.
#[must_use]
pub fn content(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        out.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    out.truncate(len);
    out
}

/// Writes `records` with [`logfmt_core::Writer`] continuing a log of length `start`; returns
/// the bytes the sink received (after a final flush) and each record's [`Written`].
///
/// # Panics
/// Never for an in-memory sink.
#[must_use]
pub fn write_from<R: AsRef<[u8]>>(start: u64, records: &[R]) -> (Vec<u8>, Vec<Written>) {
    let mut out = Vec::new();
    let mut block = Box::new([0u8; BLOCK_SIZE]);
    let mut written = Vec::with_capacity(records.len());
    {
        let sink = FnSink(|bytes: &[u8]| {
            out.extend_from_slice(bytes);
            Ok::<(), Infallible>(())
        });
        let mut writer = Writer::with_options(sink, &mut *block, &WriteOptions::new().start(start));
        for record in records {
            written.push(writer.add_record(record.as_ref()).expect("in-memory sink"));
        }
        writer.flush().expect("in-memory sink");
        assert_eq!(writer.unsent(), 0);
    }
    (out, written)
}

/// Writes `records` as a new log with [`logfmt_core::Writer`].
#[must_use]
pub fn write_log<R: AsRef<[u8]>>(records: &[R]) -> Vec<u8> {
    write_from(0, records).0
}

/// What a reader returned, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// A record, with its offset (LevelDB's `LastRecordOffset`) and end.
    Record {
        /// File offset of the first chunk.
        offset: u64,
        /// File offset just past the last chunk.
        end: u64,
        /// The payload.
        data: Vec<u8>,
    },
    /// A drop report.
    Drop(Corruption),
    /// A record too large for the reader's buffer.
    Oversized(Oversized),
}

/// Everything a reader returned, and the read errors it passed on.
#[derive(Debug)]
pub struct Outcome<E> {
    /// Records and reports, in order.
    pub items: Vec<Seen>,
    /// Read errors, in order.
    pub errors: Vec<E>,
}

impl<E> Outcome<E> {
    /// The record payloads.
    #[must_use]
    pub fn records(&self) -> Vec<Vec<u8>> {
        self.items
            .iter()
            .filter_map(|s| match s {
                Seen::Record { data, .. } => Some(data.clone()),
                _ => None,
            })
            .collect()
    }

    /// The record offsets.
    #[must_use]
    pub fn offsets(&self) -> Vec<u64> {
        self.items
            .iter()
            .filter_map(|s| match s {
                Seen::Record { offset, .. } => Some(*offset),
                _ => None,
            })
            .collect()
    }

    /// The drop reports.
    #[must_use]
    pub fn drops(&self) -> Vec<Corruption> {
        self.items
            .iter()
            .filter_map(|s| match s {
                Seen::Drop(c) => Some(*c),
                _ => None,
            })
            .collect()
    }

    /// The total of dropped bytes (LevelDB's `ReportCollector::dropped_bytes_`).
    #[must_use]
    pub fn dropped_bytes(&self) -> u64 {
        self.drops().iter().map(|c| c.bytes).sum()
    }

    /// The reasons, concatenated (LevelDB's `ReportCollector::message_`).
    #[must_use]
    pub fn message(&self) -> String {
        self.drops()
            .iter()
            .map(|c| c.kind.to_string())
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Reads everything from `source` with a [`Reader`] assembling records in a buffer of
/// `buffer_len` bytes. Checks on the way that `last_record_offset()` follows each record.
///
/// # Panics
/// If the reader keeps failing (more than 8 errors) or `last_record_offset()` disagrees.
pub fn read_source<S: BlockSource>(
    source: S,
    options: &ReadOptions,
    buffer_len: usize,
) -> Outcome<S::Error> {
    let mut buffer = vec![0u8; buffer_len];
    // The model reads as LevelDB does: packs and RocksDB's compression record are chunks of
    // an unknown type.
    let options = options.clone().read_packs(false).wal_compression(false);
    let mut reader = Reader::with_options(source, &mut buffer, &options);
    let mut outcome = Outcome {
        items: Vec::new(),
        errors: Vec::new(),
    };
    loop {
        let seen = match reader.next() {
            Ok(None) => break,
            Ok(Some(Item::Record(r))) => Seen::Record {
                offset: r.offset,
                end: r.end,
                data: r.data.to_vec(),
            },
            Ok(Some(Item::Corruption(c))) => Seen::Drop(c),
            Ok(Some(Item::Oversized(o))) => Seen::Oversized(o),
            Ok(Some(Item::Coded(pack))) => panic!("a pack read at {}", pack.offset),
            Ok(Some(other)) => panic!("an item this harness does not know: {other:?}"),
            Err(e) => {
                outcome.errors.push(e);
                assert!(outcome.errors.len() <= 8, "the reader keeps failing");
                continue;
            }
        };
        match &seen {
            Seen::Record { offset, .. } => assert_eq!(reader.last_record_offset(), *offset),
            Seen::Oversized(o) => assert_eq!(reader.last_record_offset(), o.offset),
            Seen::Drop(_) => {}
        }
        outcome.items.push(seen);
    }
    // The end of the log is sticky.
    assert!(matches!(reader.next(), Ok(None)), "EOF, then EOF again");
    outcome
}

/// Reads a log in memory with `options`, assembling records in a buffer large enough for any
/// record of the tests (2 MiB).
#[must_use]
pub fn read_with(log: &[u8], options: &ReadOptions) -> Vec<Seen> {
    read_source(SliceSource::new(log), options, 2 << 20).items
}

/// Reads a log in memory with the default options.
#[must_use]
pub fn read_log(log: &[u8]) -> Outcome<Infallible> {
    read_source(SliceSource::new(log), &ReadOptions::default(), 2 << 20)
}

/// Reads everything from `source` with a [`FragmentReader`], assembling the fragments into the
/// same items a [`Reader`] returns. Checks the streaming protocol on the way: fragments of one
/// record share its offset, `Middle`/`Last` only follow `First`/`Middle`, `Aborted` only ends a
/// record in progress and counts exactly the bytes delivered for it, and no record is left
/// open at the end.
///
/// # Panics
/// On a protocol violation.
pub fn read_fragments<S: BlockSource>(source: S, options: &ReadOptions) -> Outcome<S::Error> {
    // As LevelDB reads: packs and the compression record are of an unknown type (as in
    // `read_source`).
    let options = options.clone().read_packs(false).wal_compression(false);
    let mut reader = FragmentReader::with_options(source, &options);
    let mut outcome = Outcome {
        items: Vec::new(),
        errors: Vec::new(),
    };
    let mut current: Option<(u64, Vec<u8>)> = None;
    loop {
        let before = outcome.items.len();
        match reader.next() {
            Ok(None) => break,
            Ok(Some(Event::Fragment(f))) => {
                assert!(f.chunk_offset < f.end, "{f:?}");
                match f.kind {
                    FragmentKind::Full => {
                        assert!(current.is_none(), "FULL delivered inside a record: {f:?}");
                        assert_eq!(f.chunk_offset, f.record_offset);
                        outcome.items.push(Seen::Record {
                            offset: f.record_offset,
                            end: f.end,
                            data: f.data.to_vec(),
                        });
                    }
                    FragmentKind::First => {
                        assert!(current.is_none(), "FIRST delivered inside a record: {f:?}");
                        assert_eq!(f.chunk_offset, f.record_offset);
                        current = Some((f.record_offset, f.data.to_vec()));
                    }
                    FragmentKind::Middle | FragmentKind::Last => {
                        let (offset, data) = current.as_mut().expect("fragment without FIRST");
                        assert_eq!(*offset, f.record_offset);
                        assert!(f.chunk_offset > f.record_offset);
                        data.extend_from_slice(f.data);
                        if f.kind == FragmentKind::Last {
                            let (offset, data) = current.take().expect("record in progress");
                            outcome.items.push(Seen::Record {
                                offset,
                                end: f.end,
                                data,
                            });
                        }
                    }
                }
            }
            Ok(Some(Event::Aborted(a))) => {
                let (offset, data) = current.take().expect("Aborted without a record");
                assert_eq!(a.record_offset, offset);
                assert_eq!(a.delivered, data.len() as u64);
                if let Some(report) = a.report {
                    outcome.items.push(Seen::Drop(report));
                }
            }
            Ok(Some(Event::Corruption(c))) => outcome.items.push(Seen::Drop(c)),
            Ok(Some(Event::Skipped(skip))) => {
                assert!(skip.len > 0, "an empty skip: {skip:?}");
                assert!(skip.end() <= reader.position(), "a skip ahead: {skip:?}");
            }
            Ok(Some(other)) => panic!("an event this harness does not know: {other:?}"),
            Err(e) => {
                outcome.errors.push(e);
                assert!(outcome.errors.len() <= 8, "the reader keeps failing");
            }
        }
        if let Some(Seen::Record { offset, .. }) = outcome.items.get(before) {
            assert_eq!(reader.last_record_offset(), *offset, "LastRecordOffset");
        }
    }
    assert!(
        current.is_none(),
        "a record left open at the end: {current:?}"
    );
    assert!(matches!(reader.next(), Ok(None)), "EOF, then EOF again");
    outcome
}

/// LevelDB's `log_test.cc` damage helpers, on a log in memory.
pub mod damage {
    /// `IncrementByte(offset, delta)`.
    pub fn increment_byte(log: &mut [u8], offset: usize, delta: u8) {
        log[offset] = log[offset].wrapping_add(delta);
    }

    /// `SetByte(offset, value)`.
    pub fn set_byte(log: &mut [u8], offset: usize, value: u8) {
        log[offset] = value;
    }

    /// `ShrinkSize(bytes)`.
    pub fn shrink_size(log: &mut Vec<u8>, bytes: usize) {
        log.truncate(log.len() - bytes);
    }

    /// `FixChecksum(header_offset, len)`: recomputes the masked CRC of
    /// `log[header_offset + 6 .. header_offset + 7 + len]` (with the model's own CRC).
    pub fn fix_checksum(log: &mut [u8], header_offset: usize, len: usize) {
        let covered = &log[header_offset + 6..header_offset + 7 + len];
        let crc = crate::model::mask(crate::model::crc32c(covered));
        log[header_offset..header_offset + 4].copy_from_slice(&crc.to_le_bytes());
    }
}

/// An [`embedded_io::Read`] over a slice that hands out at most a few bytes per call, its
/// sizes drawn from a seeded generator: short reads everywhere.
#[derive(Debug)]
pub struct Dribble<'a> {
    data: &'a [u8],
    max: usize,
    state: u64,
    /// Number of `read` calls so far.
    pub calls: usize,
}

impl<'a> Dribble<'a> {
    /// A reader returning 1..=`max` bytes per call.
    #[must_use]
    pub fn new(data: &'a [u8], max: usize, seed: u64) -> Self {
        Self {
            data,
            max: max.max(1),
            state: seed | 1,
            calls: 0,
        }
    }
}

impl embedded_io::ErrorType for Dribble<'_> {
    type Error = Infallible;
}

impl embedded_io::Read for Dribble<'_> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
        self.calls += 1;
        // xorshift64
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        let n = (1 + (self.state % self.max as u64) as usize)
            .min(buf.len())
            .min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// The project README's Rust examples, run as doc tests (the README's shell sessions are run
/// by `crates/logfmt-cli/tests/readme.rs`).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeExamples;
