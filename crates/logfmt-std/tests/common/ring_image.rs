//! Ring images made by the real flash writer: `WordWriter` keeping a ring log in a simulated
//! NOR flash (`MockFlash`), wrapping the ring several times, with power cuts in programs and
//! erases and reopenings after them. Shared by the tests of `logfmt-std`, `logfmt-cli` and the
//! interop tests (included with `#[path]`).

#![allow(dead_code, unreachable_pub)]

use logfmt_core::flash::{FlashConfig, FlashError, FlashSource, MockError, MockFlash, PowerCut};
use logfmt_core::{BLOCK_SIZE, ReadOptions, Reader, parts::Item};

/// The flash word of the simulated part.
pub const WRITE: usize = 8;

/// How a ring image is made.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// Blocks in the region.
    pub blocks: usize,
    /// The value erased flash reads as.
    pub erased: u8,
    /// The ring's first lap (near `u32::MAX` to wrap the counter).
    pub first_lap: u32,
    /// Records to write (each written at least once).
    pub records: usize,
    /// Sessions (opening the log, writing, closing) that end in a power cut, out of
    /// `sessions`; the last session always ends cleanly, with a flush.
    pub cuts: usize,
    /// Sessions in all.
    pub sessions: usize,
    /// Seed of the power cuts and flushes.
    pub seed: u64,
}

impl Spec {
    /// `records` records in a ring of `blocks` blocks erased to `0xFF`, 12 sessions of which
    /// 8 end in a power cut.
    pub fn new(blocks: usize, records: usize, seed: u64) -> Self {
        Self {
            blocks,
            erased: 0xFF,
            first_lap: 1,
            records,
            cuts: 8,
            sessions: 12,
            seed,
        }
    }
}

/// What a run left.
#[derive(Debug, Clone)]
pub struct Run {
    /// The flash region, as a dump of it.
    pub image: Vec<u8>,
    /// The records, by index: the log is these in order (a record a power cut took is
    /// written again under its index).
    pub written: Vec<Vec<u8>>,
    /// The ring keeps the records from this index to the last (they start in the newest bytes
    /// of the log the ring always keeps), and maybe some before.
    pub must: usize,
    /// Wraps from the region's end to its start.
    pub laps: u32,
    /// Power cuts that happened.
    pub cuts: usize,
    /// The records the core's reference way of reading a ring returns from the image.
    pub reference: Vec<Vec<u8>>,
}

/// xorshift64.
pub struct Random(u64);

impl Random {
    pub fn new(seed: u64) -> Self {
        Self(seed | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A record that names its index: `i` as 4 bytes, then bytes derived from it; mostly small,
/// some across blocks (up to 40 000 bytes).
pub fn sample(i: usize) -> Vec<u8> {
    let mut random = Random::new(i as u64 * 0x9e37_79b9 + 7);
    let len = match random.below(20) {
        0 => 4 + random.below(40_000),
        1..=3 => 4 + random.below(2_000),
        _ => 4 + random.below(60),
    } as usize;
    let mut data = (i as u32).to_le_bytes().to_vec();
    data.extend((4..len).map(|j| (i * 31 + j * 7) as u8));
    data
}

/// Reads the ring in `flash` with the core's reference way ([`FlashSource::ring`]): its
/// records, in order.
pub fn reference_records<const E: usize>(
    flash: &mut MockFlash<'_, WRITE, E>,
    config: FlashConfig,
) -> Vec<Vec<u8>> {
    let mut block = Box::new([0u8; BLOCK_SIZE]);
    let source = FlashSource::ring(&mut *flash, config, &mut *block).expect("reads");
    let options = ReadOptions::new()
        .erased(Some(config.erased))
        .starts_mid_log(true);
    let mut buffer = vec![0u8; 1 << 20];
    let mut reader = Reader::with_options(source, &mut buffer, &options);
    let mut records = Vec::new();
    while let Some(item) = reader.next().expect("reads") {
        if let Item::Record(record) = item {
            records.push(record.data.to_vec());
        }
    }
    records
}

/// The index of `record` among `written[..next]`, searched from the end.
fn index_of(written: &[Vec<u8>], next: usize, record: &[u8]) -> usize {
    (0..next)
        .rev()
        .find(|&i| written[i] == record)
        .expect("a record read is one written")
}

/// Writes `spec.records` records made by `record` into a ring in a simulated flash with
/// erase units of `E` bytes, with power cuts, and returns the flash's contents.
pub fn run<const E: usize>(spec: &Spec, record: impl Fn(usize) -> Vec<u8>) -> Run {
    let len = spec.blocks * BLOCK_SIZE;
    let mut memory = vec![spec.erased; len];
    let mut programmed = vec![false; len / WRITE];
    let mut flash = MockFlash::<WRITE, E>::new(&mut memory, &mut programmed, spec.erased)
        .expect("a flash of whole erase units");
    let config = FlashConfig::new(0, len as u32)
        .ring()
        .first_lap(spec.first_lap)
        .erased(spec.erased);
    let written: Vec<Vec<u8>> = (0..spec.records).map(&record).collect();
    let mut random = Random::new(spec.seed);
    let (mut next, mut acked, mut laps, mut cuts) = (0usize, 0usize, 0u32, 0usize);
    // Where each record starts in the log as if the ring were unrolled (laps counted).
    let mut starts = vec![0u64; written.len()];
    let (mut base, mut last) = (0u64, 0u64);
    let mut unroll = |offset: u64| {
        if offset < last {
            base += len as u64;
        }
        last = offset;
        base + offset
    };
    let per_session = spec.records.div_ceil(spec.sessions.max(1));
    for session in 0..spec.sessions.max(1) {
        let last_session = session + 1 == spec.sessions.max(1);
        flash.power_on();
        if !last_session && session < spec.cuts {
            let mode = match session % 4 {
                0 => PowerCut::Untouched,
                1 => PowerCut::Partial,
                2 => PowerCut::Complete,
                _ => PowerCut::Arbitrary {
                    seed: random.next(),
                },
            };
            flash.cut_power_after(random.below(4 * BLOCK_SIZE as u64) as usize, mode);
        }
        let flushes = 1 + random.below(8);
        let mut writer = logfmt_core::flash::WordWriter::open(&mut flash, config).expect("opens");
        unroll(writer.position());
        let until = if last_session {
            written.len()
        } else {
            (next + per_session).min(written.len())
        };
        let mut cut = false;
        while next < until {
            match writer.add_record(&written[next]) {
                Ok(w) => {
                    starts[next] = unroll(w.offset);
                    unroll(w.end);
                    next += 1;
                }
                Err(FlashError::Flash(MockError::PowerCut)) => {
                    next += 1;
                    cut = true;
                    break;
                }
                Err(e) => panic!("session {session}: add: {e:?}"),
            }
            if random.below(flushes) == 0 {
                match writer.flush() {
                    Ok(()) => acked = next,
                    Err(FlashError::Flash(MockError::PowerCut)) => {
                        cut = true;
                        break;
                    }
                    Err(e) => panic!("session {session}: flush: {e:?}"),
                }
            }
        }
        if !cut {
            match writer.flush() {
                Ok(()) => acked = next,
                Err(FlashError::Flash(MockError::PowerCut)) => cut = true,
                Err(e) => panic!("session {session}: flush: {e:?}"),
            }
        }
        laps += writer.stats().laps;
        cuts += usize::from(cut);
        flash.power_on();
        // What was read, and only that, is the log: records in flight and not read are
        // written again, so that the run's sequence stays the log's.
        let read = reference_records(&mut flash, config);
        // (If nothing is read, every record acknowledged aged out: the writer goes on from the
        // first one not acknowledged.)
        let read_end = read
            .last()
            .map_or(acked, |r| index_of(&written, next, r) + 1);
        assert!(
            read_end >= acked,
            "session {session}: {acked} records acknowledged, read up to {read_end}"
        );
        next = read_end;
    }
    assert_eq!(next, written.len(), "every record written");
    let end = {
        let writer = logfmt_core::flash::WordWriter::open(&mut flash, config).expect("opens");
        unroll(writer.position())
    };
    // What the ring keeps besides the group erased ahead and the group being written.
    let group = (E / BLOCK_SIZE).max(1);
    let keep = ((spec.blocks - 2 * group) * BLOCK_SIZE) as u64;
    let must = (0..written.len())
        .rev()
        .take_while(|&k| starts[k] + keep >= end)
        .last()
        .unwrap_or(written.len());
    let reference = reference_records(&mut flash, config);
    Run {
        image: memory,
        written,
        must,
        laps,
        cuts,
        reference,
    }
}

/// Checks that `read` (records in order) is what the ring must hold of `run`: records
/// written, in order, with no gap, ending with the last one written, and beginning no later
/// than the oldest one the ring must keep. Returns the index of the first.
pub fn check(run: &Run, read: &[Vec<u8>]) -> usize {
    let first = read.first().expect("the ring holds records");
    let start = index_of(&run.written, run.written.len(), first);
    assert_eq!(
        start + read.len(),
        run.written.len(),
        "the records read end with the last one written"
    );
    for (k, data) in read.iter().enumerate() {
        assert!(
            *data == run.written[start + k],
            "record {k} read is not record {} written",
            start + k
        );
    }
    assert!(
        start <= run.must,
        "read from record {start}, the ring keeps record {} on",
        run.must
    );
    start
}
