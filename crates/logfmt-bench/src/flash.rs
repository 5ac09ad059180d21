//! `logfmt-bench flash`: logfmt's flash log and `sequential-storage`'s queue side by side on
//! the same simulated NOR flash — a 256 KiB region of 4 KiB erase units, flash words of
//! `WRITE_SIZE` 4, 8, 16 and 32 bytes — logging samples of 16, 30 and 100 bytes, made durable
//! after every sample or every 16th.
//!
//! One line per case:
//!
//! ```text
//! FLASH impl=<logfmt|logfmt-buffered|logfmt-ring|logfmt-ring-packed|sequential-storage> write_size=W sample=<16|30|100> durable_every=<1|16> bytes_per_sample=F reboot_waste=B ram=B ns_per_sample=F reboot_loss=B
//! ```
//!
//! - `impl=logfmt` is the small-RAM [`WordWriter`], `impl=logfmt-buffered` the
//!   [`FlashWriter`] with its 32 KiB block (same flash bytes, so the same `bytes_per_sample`
//!   and `reboot_waste`), `impl=logfmt-ring` the small-RAM writer keeping the region as a ring
//!   (its fill is one lap of the region: a ring never fills), `impl=logfmt-ring-packed` the
//!   same ring with the samples between two flushes gathered in a pack
//!   (`WordWriter::pack_record`, a 512-byte pack buffer in the caller's RAM, counted in `ram`;
//!   its `reboot_*` figures are `n/a`: a packed sample has no place of its own to measure
//!   from); all continue in the same block after a reset, on a mock flash with
//!   per-word ECC (a word is never programmed twice). `sequential-storage` 8.0.2's
//!   `QueueStorage` runs on its own mock flash (feature `_test`, uncached, every push durable:
//!   it has no deferred durability, so both `durable_every` lines measure the same thing).
//! - `bytes_per_sample`: the region's size over the samples stored (and made durable) until it
//!   is full, from an empty region.
//! - `reboot_waste`: flash bytes lost per reboot beyond the samples torn by it, averaged over
//!   `--reboots` (default 100) reboots, each a power cut at a random byte of the flash work of
//!   a random batch (after 1 to 300 samples, so mid-record, mid-flush or mid-erase): after the
//!   reboot, the offset where the next sample goes minus the offset where the first sample
//!   whose flash work had not begun at the cut would have gone (as a run without the cut lays
//!   them out; 0 if the reboot reuses the place). A sample torn by the cut costs its own place
//!   (that is the data lost, not waste); what a reboot adds (logfmt: the rest of the last word
//!   and one more word, and the 7-byte resume marker after a torn write) is the waste. Both
//!   implementations are measured the same way.
//! - `reboot_loss`: the same, but from where the first sample that does not read back after
//!   the reboot started: the places of the torn samples count too (all the flash a reboot
//!   costs).
//! - `ram`: the writer's state (`size_of`, on this host, with a reference to the flash driver),
//!   plus the buffered writer's block; sequential-storage needs no buffer to push.
//! - `ns_per_sample`: wall time per stored sample over the fill, mock flash included (median
//!   of `--reps` fills).
//!
//! Then one line per word size and implementation (`logfmt`: the bounded log; `logfmt-ring`:
//! the ring, filled up to the sample before its wrap; `sequential-storage`: its queue), over a
//! region filled with 30-byte samples, each durable:
//!
//! ```text
//! FLASH-READ impl=I write_size=W sample=30 region=B open_read=B full_read=B records=N returned=B read_per_returned=F
//! ```
//!
//! - `open_read`: flash bytes read to open the full region for appending (`WordWriter::open`;
//!   sequential-storage's `QueueStorage::new` reads nothing, its first operation searches);
//! - `full_read`: flash bytes read to read every record (`WordReader`, no block buffer;
//!   sequential-storage's iterator), `records` of them;
//! - `returned`: the records' bytes and a 7-byte chunk header each; `read_per_returned`:
//!   `full_read` over it.
//!
//! Then one line per word size for seeking in a ring (logfmt's `WordReader`; sequential-storage's
//! queue has no seek), over the region filled for one and a half laps with 30-byte samples:
//!
//! ```text
//! FLASH-SEEK impl=logfmt-ring write_size=W sample=30 region=B blocks=N records=N seek_middle=B newest_10=B
//! ```
//!
//! - `records`: the records the ring holds; `seek_middle`: flash bytes read by
//!   `WordReader::seek_record` to the middle one of them (the record returned included);
//! - `newest_10`: flash bytes read by `WordReader::seek_newest` for the newest 10 and the
//!   9 `next` calls that return the rest of them.

use std::cell::Cell;
use std::fmt;
use std::time::Instant;

use embassy_futures::block_on;
use embedded_storage::nor_flash::{ErrorType, NorFlash, ReadNorFlash};
use logfmt_core::flash::{
    FlashConfig, FlashError, FlashItem, FlashStats, FlashWriter, MockError, MockFlash, PowerCut,
    WordReader, WordWriter,
};
use logfmt_core::pack::PackBuffer;
use logfmt_core::pack::PackLimit;
use logfmt_core::{BLOCK_SIZE, Written, parts::HEADER_SIZE};
use sequential_storage::Error as SeqError;
use sequential_storage::cache::{Cache, Uncached};
use sequential_storage::mock_flash::{MockFlashBase, WriteCountCheck};
use sequential_storage::queue::{QueueConfig, QueueStorage};

/// Erase unit of the simulated flash.
pub const ERASE: usize = 4096;
/// The log's region: the whole simulated flash.
pub const REGION: usize = 256 * 1024;
/// Erase units in the region.
const PAGES: usize = REGION / ERASE;
/// Sample sizes.
pub const SAMPLES: [usize; 3] = [16, 30, 100];
/// Samples per durable point.
pub const DURABLE_EVERY: [usize; 2] = [1, 16];
/// At most this many samples before a reboot.
const MAX_BEFORE: usize = 300;

/// How much to measure.
#[derive(Debug, Clone, Copy)]
pub struct FlashOptions {
    /// Timed fills per case (the median is reported).
    pub reps: usize,
    /// Reboots per case.
    pub reboots: usize,
}

/// One case's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct FlashResult {
    /// `logfmt`, `logfmt-buffered` or `sequential-storage`.
    pub implementation: &'static str,
    /// Flash word size.
    pub write_size: usize,
    /// Sample size.
    pub sample: usize,
    /// Samples per durable point.
    pub durable_every: usize,
    /// Flash bytes per stored sample.
    pub bytes_per_sample: f64,
    /// Flash bytes lost per reboot, beyond the samples it tore.
    pub reboot_waste: f64,
    /// Flash bytes lost per reboot, the torn samples' places included.
    pub reboot_loss: f64,
    /// Writer RAM.
    pub ram: usize,
    /// Time per sample.
    pub ns_per_sample: f64,
}

impl fmt::Display for FlashResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Not measured (packed samples): `n/a`.
        let bytes = |b: f64| {
            if b.is_nan() {
                "n/a".to_owned()
            } else {
                format!("{b:.0}")
            }
        };
        write!(
            f,
            "FLASH impl={} write_size={} sample={} durable_every={} bytes_per_sample={:.1} reboot_waste={} ram={} ns_per_sample={:.1} reboot_loss={}",
            self.implementation,
            self.write_size,
            self.sample,
            self.durable_every,
            self.bytes_per_sample,
            bytes(self.reboot_waste),
            self.ram,
            self.ns_per_sample,
            bytes(self.reboot_loss)
        )
    }
}

/// Runs every case, calling `emit` with each line's figures as they come.
///
/// # Errors
/// A message if an implementation misbehaves (loses an acknowledged sample, fails otherwise
/// than by a full region or the planned power cut).
pub fn run(options: FlashOptions, emit: &mut dyn FnMut(&FlashResult)) -> Result<(), String> {
    cases::<4, { ERASE / 4 }>(options, emit)?;
    cases::<8, { ERASE / 8 }>(options, emit)?;
    cases::<16, { ERASE / 16 }>(options, emit)?;
    cases::<32, { ERASE / 32 }>(options, emit)
}

fn cases<const W: usize, const PAGE_WORDS: usize>(
    options: FlashOptions,
    emit: &mut dyn FnMut(&FlashResult),
) -> Result<(), String> {
    for sample in SAMPLES {
        let samples = make_samples(sample);
        for durable_every in DURABLE_EVERY {
            let case = |implementation| FlashResult {
                implementation,
                write_size: W,
                sample,
                durable_every,
                bytes_per_sample: 0.0,
                reboot_waste: 0.0,
                reboot_loss: 0.0,
                ram: 0,
                ns_per_sample: 0.0,
            };
            for kind in [Kind::Word, Kind::Buffered, Kind::Ring, Kind::RingPacked] {
                let mut result = case(kind.name());
                let (stored, ns) = median_fill(options.reps, || {
                    logfmt_fill::<W>(kind, &samples, durable_every)
                })?;
                result.bytes_per_sample = REGION as f64 / stored as f64;
                result.ns_per_sample = ns;
                (result.reboot_waste, result.reboot_loss) =
                    logfmt_reboots::<W>(kind, &samples, durable_every, options.reboots)?;
                result.ram = kind.ram::<W>();
                emit(&result);
            }
            let mut result = case("sequential-storage");
            let (stored, ns) = median_fill(options.reps, || seq_fill::<W, PAGE_WORDS>(&samples))?;
            result.bytes_per_sample = REGION as f64 / stored as f64;
            result.ns_per_sample = ns;
            (result.reboot_waste, result.reboot_loss) =
                seq_reboots::<W, PAGE_WORDS>(&samples, options.reboots)?;
            result.ram = std::mem::size_of::<SeqQueue<'_, W, PAGE_WORDS>>();
            emit(&result);
        }
    }
    Ok(())
}

/// 64 distinct samples of `size` bytes (xorshift64).
fn make_samples(size: usize) -> Vec<Vec<u8>> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ size as u64);
    (0..64)
        .map(|_| (0..size).map(|_| rng.next() as u8).collect())
        .collect()
}

/// xorshift64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0 | 1;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// Uniform in `0..n` (n > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The fill `reps` times: samples stored, median ns per sample.
fn median_fill(
    reps: usize,
    mut fill: impl FnMut() -> Result<(usize, u128), String>,
) -> Result<(usize, f64), String> {
    let mut stored = 0;
    let mut ns = Vec::new();
    for _ in 0..reps.max(1) {
        let (count, elapsed) = fill()?;
        if count == 0 {
            return Err("no sample stored".into());
        }
        stored = count;
        ns.push(elapsed as f64 / count as f64);
    }
    ns.sort_by(f64::total_cmp);
    Ok((stored, ns[ns.len() / 2]))
}

/// Which logfmt writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Word,
    Buffered,
    /// The small-RAM writer keeping the region as a ring.
    Ring,
    /// The same, packing the samples between two flushes (a 512-byte pack buffer).
    RingPacked,
}

type Flash<'m, const W: usize> = MockFlash<'m, W, ERASE>;

/// The bytes of the packed ring's pack buffer (caller RAM).
const PACK_RAM: usize = 512;

/// Either logfmt writer over the mock (the small-RAM one packing samples, too).
enum Writer<'f, 'm, const W: usize> {
    Word(WordWriter<&'f mut Flash<'m, W>>),
    Buffered(FlashWriter<&'f mut Flash<'m, W>, &'f mut [u8; BLOCK_SIZE]>),
    Packed(WordWriter<&'f mut Flash<'m, W>>, Box<PackBuffer<PACK_RAM>>),
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Self::Word => "logfmt",
            Self::Buffered => "logfmt-buffered",
            Self::Ring => "logfmt-ring",
            Self::RingPacked => "logfmt-ring-packed",
        }
    }

    fn ram<const W: usize>(self) -> usize {
        match self {
            Self::Word | Self::Ring => std::mem::size_of::<WordWriter<&mut Flash<'_, W>>>(),
            Self::RingPacked => {
                std::mem::size_of::<WordWriter<&mut Flash<'_, W>>>()
                    + std::mem::size_of::<PackBuffer<PACK_RAM>>()
            }
            Self::Buffered => {
                std::mem::size_of::<FlashWriter<&mut Flash<'_, W>, &mut [u8; BLOCK_SIZE]>>()
                    + BLOCK_SIZE
            }
        }
    }

    fn open<'f, 'm, const W: usize>(
        self,
        flash: &'f mut Flash<'m, W>,
        block: &'f mut [u8; BLOCK_SIZE],
    ) -> Result<Writer<'f, 'm, W>, FlashError<MockError>> {
        let config = FlashConfig::new(0, REGION as u32);
        Ok(match self {
            Self::Word => Writer::Word(WordWriter::open(flash, config)?),
            Self::Ring => Writer::Word(WordWriter::open(flash, config.ring())?),
            Self::RingPacked => Writer::Packed(
                WordWriter::open(flash, config.ring())?,
                Box::new(PackBuffer::new()),
            ),
            Self::Buffered => Writer::Buffered(FlashWriter::open(flash, config, block)?),
        })
    }
}

impl<const W: usize> Writer<'_, '_, W> {
    /// Adds a sample: where it was written, or `None` for a packed one (in a pack not yet
    /// written).
    fn add(&mut self, data: &[u8]) -> Result<Option<Written>, FlashError<MockError>> {
        match self {
            Self::Word(w) => w.add_record(data).map(Some),
            Self::Buffered(w) => w.add_record(data).map(Some),
            Self::Packed(w, pack) => w
                .pack_record(pack, data, PackLimit::default())
                .map(|()| None),
        }
    }

    fn flush(&mut self) -> Result<(), FlashError<MockError>> {
        match self {
            Self::Word(w) => w.flush(),
            Self::Buffered(w) => w.flush(),
            Self::Packed(w, pack) => {
                w.end_pack(pack)?;
                w.flush()
            }
        }
    }

    fn stats(&self) -> FlashStats {
        match self {
            Self::Word(w) | Self::Packed(w, _) => w.stats(),
            Self::Buffered(w) => w.stats(),
        }
    }

    /// Bytes of flash work so far (erased and programmed, as the mock counts them).
    fn work(&self) -> u64 {
        let stats = self.stats();
        stats.erased_bytes + stats.programmed_bytes
    }
}

/// A fresh simulated flash's memory.
struct Memory {
    bytes: Vec<u8>,
    flags: Vec<bool>,
}

impl Memory {
    fn new<const W: usize>() -> Self {
        Self {
            bytes: vec![0xFF; REGION],
            flags: vec![false; REGION / W],
        }
    }

    fn flash<const W: usize>(&mut self) -> Result<Flash<'_, W>, String> {
        MockFlash::new(&mut self.bytes, &mut self.flags, 0xFF).map_err(|e| e.to_string())
    }
}

fn unexpected(what: &str, e: impl fmt::Debug) -> String {
    format!("{what}: {e:?}")
}

/// Logs samples into an empty region until it is full: samples made durable, elapsed ns.
fn logfmt_fill<const W: usize>(
    kind: Kind,
    samples: &[Vec<u8>],
    durable_every: usize,
) -> Result<(usize, u128), String> {
    let mut memory = Memory::new::<W>();
    let mut flash = memory.flash::<W>()?;
    let mut block = Box::new([0u8; BLOCK_SIZE]);
    let mut writer = kind
        .open(&mut flash, &mut block)
        .map_err(|e| unexpected("open", e))?;
    let start = Instant::now();
    let (mut added, mut durable) = (0, 0);
    // A bounded log until it is full; a ring for one lap of the region (it never fills).
    while writer.stats().laps == 0 {
        match writer.add(&samples[added % samples.len()]) {
            Ok(_) => added += 1,
            Err(FlashError::Full) => break,
            Err(e) => return Err(unexpected("add", e)),
        }
        if added % durable_every == 0 {
            writer.flush().map_err(|e| unexpected("flush", e))?;
            durable = added;
        }
    }
    writer.flush().map_err(|e| unexpected("flush", e))?;
    durable = durable.max(added);
    if writer.stats().laps > 0 {
        // The sample that began the ring's second lap is not part of the first.
        durable -= 1;
    }
    Ok((durable, start.elapsed().as_nanos()))
}

/// Reboots at random points: the average flash bytes lost per reboot, beyond the torn samples
/// and with them (not measured for packed samples, which have no place of their own: NaN).
fn logfmt_reboots<const W: usize>(
    kind: Kind,
    samples: &[Vec<u8>],
    durable_every: usize,
    reboots: usize,
) -> Result<(f64, f64), String> {
    if kind == Kind::RingPacked {
        return Ok((f64::NAN, f64::NAN));
    }
    let sample = |i: usize| &samples[i % samples.len()];
    let total = MAX_BEFORE + durable_every + 1;
    // A run without a cut: the flash work after each sample (and its flush), where each
    // sample starts and ends, and the flash at the end.
    let (work_after, starts, ends, reference) = {
        let mut memory = Memory::new::<W>();
        let mut flash = memory.flash::<W>()?;
        let mut block = Box::new([0u8; BLOCK_SIZE]);
        let mut writer = kind
            .open(&mut flash, &mut block)
            .map_err(|e| unexpected("open", e))?;
        let mut work = vec![0];
        let (mut starts, mut ends) = (Vec::new(), Vec::new());
        for i in 0..total {
            let written = writer
                .add(sample(i))
                .map_err(|e| unexpected("add", e))?
                .ok_or("a packed sample has no place")?;
            starts.push(written.offset);
            ends.push(written.end);
            if (i + 1) % durable_every == 0 {
                writer.flush().map_err(|e| unexpected("flush", e))?;
            }
            work.push(writer.work());
        }
        writer.flush().map_err(|e| unexpected("flush", e))?;
        (work, starts, ends, flash.memory().to_vec())
    };
    let mut rng = Rng(0x5EED ^ (W as u64) << 8 ^ durable_every as u64);
    let (mut wasted, mut lost) = (0u64, 0u64);
    let mut memory = Memory::new::<W>();
    let mut block = Box::new([0u8; BLOCK_SIZE]);
    for _ in 0..reboots {
        let before = 1 + rng.below(MAX_BEFORE);
        let (lo, hi) = (work_after[before], work_after[before + durable_every]);
        let cut = lo + rng.below((hi - lo) as usize + 1) as u64;
        memory.bytes.fill(0xFF);
        let mut flash = memory.flash::<W>()?;
        flash.cut_power_after(cut as usize, PowerCut::Partial);
        {
            let mut writer = kind
                .open(&mut flash, &mut block)
                .map_err(|e| unexpected("open", e))?;
            for i in 0..total {
                if writer.add(sample(i)).is_err() {
                    break;
                }
                if (i + 1) % durable_every == 0 && writer.flush().is_err() {
                    break;
                }
            }
        }
        if !flash.is_cut() {
            return Err(format!(
                "the power cut after {cut} bytes of work did not happen"
            ));
        }
        flash.power_on();
        // The first sample whose flash work had not begun: where it would have gone.
        let begun = work_after.iter().take(total).filter(|&&w| w < cut).count();
        let unbegun_start = starts.get(begun).copied().unwrap_or(u64::MAX);
        // The samples that read back: those whose bytes are all on the flash (a reader with the
        // flash rules reads exactly those), the first ones.
        let image = flash.memory();
        let intact = |i: usize| {
            let range = starts[i] as usize..ends[i] as usize;
            image.get(range.clone()) == reference.get(range)
        };
        let survivors = (0..total).take_while(|&i| intact(i)).count();
        let first_lost = starts.get(survivors).copied().unwrap_or(u64::MAX);
        let mut writer = kind
            .open(&mut flash, &mut block)
            .map_err(|e| unexpected("reopen", e))?;
        let resume = writer
            .add(sample(0))
            .map_err(|e| unexpected("add", e))?
            .ok_or("a packed sample has no place")?
            .offset;
        wasted += resume.saturating_sub(unbegun_start);
        lost += resume.saturating_sub(first_lost);
    }
    let per = |bytes: u64| bytes as f64 / reboots.max(1) as f64;
    Ok((per(wasted), per(lost)))
}

type SeqFlash<const W: usize, const PAGE_WORDS: usize> = MockFlashBase<PAGES, W, PAGE_WORDS>;

fn seq_flash<const W: usize, const PAGE_WORDS: usize>() -> SeqFlash<W, PAGE_WORDS> {
    MockFlashBase::new(WriteCountCheck::Twice, None, false)
}

/// sequential-storage's queue, uncached, over a reference to its flash.
type SeqQueue<'f, const W: usize, const PAGE_WORDS: usize> =
    QueueStorage<&'f mut SeqFlash<W, PAGE_WORDS>, Cache<Uncached, Uncached, Uncached>>;

fn seq_queue<const W: usize, const PAGE_WORDS: usize>(
    flash: &mut SeqFlash<W, PAGE_WORDS>,
) -> Result<SeqQueue<'_, W, PAGE_WORDS>, String> {
    let config =
        QueueConfig::try_new(0..REGION as u32).map_err(|e| unexpected("queue config", e))?;
    Ok(QueueStorage::new(flash, config, Cache::new_uncached()))
}

/// Pushes samples into an empty queue until it is full: samples stored, elapsed ns.
fn seq_fill<const W: usize, const PAGE_WORDS: usize>(
    samples: &[Vec<u8>],
) -> Result<(usize, u128), String> {
    let mut flash = seq_flash::<W, PAGE_WORDS>();
    let mut queue = seq_queue(&mut flash)?;
    let start = Instant::now();
    let mut stored = 0;
    loop {
        match block_on(queue.push(&samples[stored % samples.len()], false)) {
            Ok(()) => stored += 1,
            Err(SeqError::FullStorage) => break,
            Err(e) => return Err(unexpected("push", e)),
        }
    }
    Ok((stored, start.elapsed().as_nanos()))
}

/// The last item of the queue: its address and length, and the item count.
fn seq_last<const W: usize, const PAGE_WORDS: usize>(
    flash: &mut SeqFlash<W, PAGE_WORDS>,
) -> Result<(usize, Option<(u32, usize)>), String> {
    let mut queue = seq_queue(flash)?;
    let mut buffer = [0u8; 256];
    let mut iter = block_on(queue.iter()).map_err(|e| unexpected("iter", e))?;
    let (mut count, mut last) = (0, None);
    while let Some(entry) = block_on(iter.next(&mut buffer)).map_err(|e| unexpected("next", e))? {
        count += 1;
        last = Some((entry.address(), entry.len()));
    }
    Ok((count, last))
}

/// sequential-storage's reboots: as [`logfmt_reboots`], every push durable.
fn seq_reboots<const W: usize, const PAGE_WORDS: usize>(
    samples: &[Vec<u8>],
    reboots: usize,
) -> Result<(f64, f64), String> {
    let sample = |i: usize| &samples[i % samples.len()];
    let total = MAX_BEFORE + 2;
    let (work_after, starts) = {
        let mut flash = seq_flash::<W, PAGE_WORDS>();
        let origin = flash.stats_snapshot();
        // Bytes of flash work as the mock counts them for its shutoff (erases are of one page).
        let work = |flash: &SeqFlash<W, PAGE_WORDS>| {
            let stats = origin.compare_to(flash.stats_snapshot());
            stats.bytes_written + stats.erases * ERASE as u64
        };
        let mut after = vec![0];
        let mut starts = Vec::new();
        for i in 0..total {
            {
                let mut queue = seq_queue(&mut flash)?;
                block_on(queue.push(sample(i), false)).map_err(|e| unexpected("push", e))?;
            }
            after.push(work(&flash));
            let (_, last) = seq_last(&mut flash)?;
            starts.push(last.map_or(0, |(address, _)| u64::from(address)));
        }
        (after, starts)
    };
    let mut rng = Rng(0x5EED ^ (W as u64) << 8);
    let (mut wasted, mut lost) = (0u64, 0u64);
    for _ in 0..reboots {
        let before = 1 + rng.below(MAX_BEFORE);
        let (lo, hi) = (work_after[before], work_after[before + 1]);
        let cut = lo + rng.below((hi - lo) as usize + 1) as u64;
        let mut flash = seq_flash::<W, PAGE_WORDS>();
        flash.bytes_until_shutoff = Some(u32::try_from(cut).unwrap_or(u32::MAX));
        {
            let mut queue = seq_queue(&mut flash)?;
            for i in 0..total {
                if block_on(queue.push(sample(i), false)).is_err() {
                    break;
                }
            }
        }
        flash.bytes_until_shutoff = None;
        // The first item whose flash work had not begun: where it would have gone; and the
        // first one that does not read back.
        let begun = work_after.iter().take(total).filter(|&&w| w < cut).count();
        let unbegun_start = starts.get(begun).copied().unwrap_or(u64::MAX);
        let (survivors, _) = seq_last(&mut flash)?;
        let first_lost = starts.get(survivors).copied().unwrap_or(u64::MAX);
        {
            let mut queue = seq_queue(&mut flash)?;
            block_on(queue.push(sample(0), false))
                .map_err(|e| unexpected("push after reboot", e))?;
        }
        let (_, last) = seq_last(&mut flash)?;
        let resume = last.map_or(0, |(address, _)| u64::from(address));
        wasted += resume.saturating_sub(unbegun_start);
        lost += resume.saturating_sub(first_lost);
    }
    let per = |bytes: u64| bytes as f64 / reboots.max(1) as f64;
    Ok((per(wasted), per(lost)))
}

/// The sample size of the read-cost lines (the case the figures in the docs were first measured
/// on).
pub const READ_SAMPLE: usize = 30;

/// What opening a full region and reading it whole cost in flash reads, for one implementation
/// and word size: a `FLASH-READ` line.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadCost {
    /// `logfmt`, `logfmt-ring` or `sequential-storage`.
    pub implementation: &'static str,
    /// Flash word size.
    pub write_size: usize,
    /// Sample size.
    pub sample: usize,
    /// Flash bytes read to open the full region for appending (logfmt: `WordWriter::open`;
    /// sequential-storage: `QueueStorage::new`, which reads nothing until its first operation).
    pub open_read: u64,
    /// Flash bytes read to read every record (logfmt: `WordReader`, its caller's buffer the
    /// only RAM; sequential-storage: its queue's iterator).
    pub full_read: u64,
    /// Records the full read returned.
    pub records: u64,
    /// The bytes the full read returned as records, plus a 7-byte chunk header each (the
    /// yardstick of `full_read`).
    pub returned: u64,
}

impl fmt::Display for ReadCost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "FLASH-READ impl={} write_size={} sample={} region={} open_read={} full_read={} records={} returned={} read_per_returned={:.2}",
            self.implementation,
            self.write_size,
            self.sample,
            REGION,
            self.open_read,
            self.full_read,
            self.records,
            self.returned,
            self.full_read as f64 / self.returned.max(1) as f64
        )
    }
}

/// A flash that counts the bytes read through it (into a counter its user keeps).
struct Counting<'c, F> {
    flash: F,
    read: &'c Cell<u64>,
}

impl<F: ErrorType> ErrorType for Counting<'_, F> {
    type Error = F::Error;
}

impl<F: ReadNorFlash> ReadNorFlash for Counting<'_, F> {
    const READ_SIZE: usize = F::READ_SIZE;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), F::Error> {
        self.read.set(self.read.get() + bytes.len() as u64);
        self.flash.read(offset, bytes)
    }

    fn capacity(&self) -> usize {
        self.flash.capacity()
    }
}

impl<F: NorFlash> NorFlash for Counting<'_, F> {
    const WRITE_SIZE: usize = F::WRITE_SIZE;
    const ERASE_SIZE: usize = F::ERASE_SIZE;

    fn erase(&mut self, from: u32, to: u32) -> Result<(), F::Error> {
        self.flash.erase(from, to)
    }

    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), F::Error> {
        self.flash.write(offset, bytes)
    }
}

/// The read costs at every word size: logfmt's bounded log and ring and sequential-storage's
/// queue, each over a region filled with [`READ_SAMPLE`]-byte samples, each durable.
///
/// # Errors
/// A message if an implementation fails.
pub fn read_costs(emit: &mut dyn FnMut(&ReadCost)) -> Result<(), String> {
    read_costs_at::<4, { ERASE / 4 }>(emit)?;
    read_costs_at::<8, { ERASE / 8 }>(emit)?;
    read_costs_at::<16, { ERASE / 16 }>(emit)?;
    read_costs_at::<32, { ERASE / 32 }>(emit)
}

fn read_costs_at<const W: usize, const PAGE_WORDS: usize>(
    emit: &mut dyn FnMut(&ReadCost),
) -> Result<(), String> {
    let samples = make_samples(READ_SAMPLE);
    for kind in [Kind::Word, Kind::Ring] {
        emit(&logfmt_read_cost::<W>(kind, &samples)?);
    }
    emit(&seq_read_cost::<W, PAGE_WORDS>(&samples)?);
    Ok(())
}

/// logfmt: the region filled (a ring: for one lap, up to the sample before the one that begins
/// the next), then reopened and read whole through a counting flash.
fn logfmt_read_cost<const W: usize>(kind: Kind, samples: &[Vec<u8>]) -> Result<ReadCost, String> {
    // The reader is told the word size (a ring's headers tell it too).
    let config = FlashConfig::new(0, REGION as u32).write_size(W);
    let config = if kind == Kind::Ring {
        config.ring()
    } else {
        config
    };
    // A ring's lap: the samples up to the one that wraps, then a fresh region with one less.
    let lap = logfmt_fill_durable::<W>(config, samples, usize::MAX)?;
    let mut memory = Memory::new::<W>();
    let mut flash = memory.flash::<W>()?;
    {
        let mut flash = &mut flash;
        let count = lap.saturating_sub(usize::from(kind == Kind::Ring));
        fill_durable(&mut flash, config, samples, count)?;
    }
    let read = Cell::new(0);
    let mut counting = Counting {
        flash: &mut flash,
        read: &read,
    };
    WordWriter::open(&mut counting, config).map_err(|e| unexpected("reopen", e))?;
    let open_read = read.take();
    let mut reader = WordReader::open(&mut counting, config).map_err(|e| unexpected("read", e))?;
    let mut buffer = [0u8; 256];
    let (mut records, mut returned) = (0u64, 0u64);
    while let Some(item) = reader
        .next(&mut buffer)
        .map_err(|e| unexpected("next", e))?
    {
        match item {
            FlashItem::Record { len, .. } => {
                records += 1;
                returned += (len + HEADER_SIZE) as u64;
            }
            other => return Err(unexpected("full read", other)),
        }
    }
    Ok(ReadCost {
        implementation: kind.name(),
        write_size: W,
        sample: READ_SAMPLE,
        open_read,
        full_read: read.get(),
        records,
        returned,
    })
}

/// Fills a fresh region with up to `count` samples, each durable, stopping at a full region
/// or a ring's wrap: the samples added.
fn logfmt_fill_durable<const W: usize>(
    config: FlashConfig,
    samples: &[Vec<u8>],
    count: usize,
) -> Result<usize, String> {
    let mut memory = Memory::new::<W>();
    let mut flash = memory.flash::<W>()?;
    let mut flash = &mut flash;
    fill_durable(&mut flash, config, samples, count)
}

/// Adds up to `count` samples to the log in `flash`, each durable, stopping at a full region or
/// a ring's wrap: the samples added.
fn fill_durable<F: NorFlash>(
    flash: &mut F,
    config: FlashConfig,
    samples: &[Vec<u8>],
    count: usize,
) -> Result<usize, String>
where
    F::Error: fmt::Debug,
{
    let mut writer = WordWriter::open(flash, config).map_err(|e| unexpected("open", e))?;
    let mut added = 0;
    while added < count && writer.stats().laps == 0 {
        match writer.add_record(&samples[added % samples.len()]) {
            Ok(_) => added += 1,
            Err(FlashError::Full) => break,
            Err(e) => return Err(unexpected("add", e)),
        }
        writer.flush().map_err(|e| unexpected("flush", e))?;
    }
    Ok(added)
}

/// sequential-storage: the queue filled, then a new queue over it (a reboot) read whole.
fn seq_read_cost<const W: usize, const PAGE_WORDS: usize>(
    samples: &[Vec<u8>],
) -> Result<ReadCost, String> {
    let mut flash = seq_flash::<W, PAGE_WORDS>();
    {
        let mut queue = seq_queue(&mut flash)?;
        let mut stored = 0;
        loop {
            match block_on(queue.push(&samples[stored % samples.len()], false)) {
                Ok(()) => stored += 1,
                Err(SeqError::FullStorage) => break,
                Err(e) => return Err(unexpected("push", e)),
            }
        }
    }
    let before = flash.stats_snapshot();
    let mut queue = seq_queue(&mut flash)?;
    let mut buffer = [0u8; 256];
    let (mut records, mut returned) = (0u64, 0u64);
    {
        let mut iter = block_on(queue.iter()).map_err(|e| unexpected("iter", e))?;
        while let Some(entry) =
            block_on(iter.next(&mut buffer)).map_err(|e| unexpected("next", e))?
        {
            records += 1;
            returned += (entry.len() + HEADER_SIZE) as u64;
        }
    }
    let stats = before.compare_to(flash.stats_snapshot());
    Ok(ReadCost {
        implementation: "sequential-storage",
        write_size: W,
        sample: READ_SAMPLE,
        open_read: 0,
        full_read: stats.bytes_read,
        records,
        returned,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_format() {
        let result = FlashResult {
            implementation: "logfmt",
            write_size: 8,
            sample: 30,
            durable_every: 1,
            bytes_per_sample: 72.0,
            reboot_waste: 21488.4,
            reboot_loss: 21520.6,
            ram: 160,
            ns_per_sample: 484.46,
        };
        assert_eq!(
            result.to_string(),
            "FLASH impl=logfmt write_size=8 sample=30 durable_every=1 bytes_per_sample=72.0 \
             reboot_waste=21488 ram=160 ns_per_sample=484.5 reboot_loss=21521"
        );
    }

    #[test]
    fn both_logfmt_writers_store_the_same_count() {
        let samples = make_samples(30);
        let word = logfmt_fill::<8>(Kind::Word, &samples, 1).expect("fill");
        let buffered = logfmt_fill::<8>(Kind::Buffered, &samples, 1).expect("fill");
        assert_eq!(word.0, buffered.0);
        // 7 + 30 bytes to the 8-byte word: 40 bytes a sample (a record cut at a block's end
        // takes a header more, and a block trailer may stay empty).
        assert!((REGION / 41..=REGION / 40).contains(&word.0), "{}", word.0);
    }

    #[test]
    fn a_reboot_costs_at_most_two_words_beyond_what_it_tears() {
        let samples = make_samples(30);
        for kind in [Kind::Word, Kind::Buffered] {
            let (waste, loss) = logfmt_reboots::<8>(kind, &samples, 1, 20).expect("reboots");
            // Per reboot at most the rest of a word, a word and the 7-byte marker.
            assert!(waste <= (2 * 8 + 7) as f64, "{kind:?}: {waste}");
            // With the torn sample's place (a 37-byte chunk in 40 bytes): at most that more.
            assert!(loss >= waste && loss <= waste + 40.0, "{kind:?}: {loss}");
        }
    }

    #[test]
    fn read_cost_lines_count_every_record() {
        let samples = make_samples(READ_SAMPLE);
        let mut lines = Vec::new();
        read_costs_at::<16, { ERASE / 16 }>(&mut |cost| lines.push(cost.clone()))
            .expect("read costs");
        let names: Vec<_> = lines.iter().map(|c| c.implementation).collect();
        assert_eq!(names, ["logfmt", "logfmt-ring", "sequential-storage"]);
        // The bounded log holds as many samples as its fill stores.
        let (stored, _) = logfmt_fill::<16>(Kind::Word, &samples, 1).expect("fill");
        assert_eq!(lines[0].records, stored as u64);
        for cost in &lines {
            // A full region: thousands of samples (a ring keeps a group erased ahead).
            assert!(cost.records > 3000, "{cost}");
            assert_eq!(
                cost.returned,
                cost.records * (READ_SAMPLE + HEADER_SIZE) as u64
            );
            // A full read reads every returned byte at least once.
            assert!(
                cost.full_read >= cost.records * READ_SAMPLE as u64,
                "{cost}"
            );
        }
    }

    /// Seeking to the middle record of a wrapped 8-block ring reads 3 ring headers and at most
    /// the block where it begins; the newest 10 records, the newest block twice at most.
    #[test]
    fn seeking_reads_a_block_or_two() {
        let costs = [seek_cost::<4>(), seek_cost::<16>()];
        for cost in costs {
            let cost = cost.expect("seek cost");
            eprintln!("{cost}");
            assert!(cost.records > 3000, "{cost}");
            let headers = 4 * 19;
            assert!(
                cost.seek_middle <= (headers + BLOCK_SIZE + 64) as u64,
                "{cost}"
            );
            assert!(
                cost.newest_10 <= (headers + 3 * BLOCK_SIZE) as u64,
                "{cost}"
            );
        }
    }

    /// Opening a full region reads one block and the ring headers at most, and a full read
    /// at most 1.25 times what it returns, at every word size.
    #[test]
    fn reading_a_full_region_costs_little_more_than_what_it_returns() {
        let samples = make_samples(READ_SAMPLE);
        let mut costs = Vec::new();
        for kind in [Kind::Word, Kind::Ring] {
            costs.extend([
                logfmt_read_cost::<4>(kind, &samples),
                logfmt_read_cost::<8>(kind, &samples),
                logfmt_read_cost::<16>(kind, &samples),
                logfmt_read_cost::<32>(kind, &samples),
            ]);
        }
        let costs: Vec<_> = costs.into_iter().map(|c| c.expect("read cost")).collect();
        for cost in &costs {
            eprintln!("{cost}");
        }
        for cost in &costs {
            let headers = (REGION / BLOCK_SIZE * 19) as u64;
            assert!(cost.open_read <= BLOCK_SIZE as u64 + headers, "{cost}");
            assert!(cost.full_read * 4 <= cost.returned * 5, "{cost}");
        }
    }
}

/// What seeking in a full ring costs in flash reads, for one word size: a `FLASH-SEEK` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeekCost {
    /// Flash word size.
    pub write_size: usize,
    /// Blocks in the ring.
    pub blocks: usize,
    /// Records the ring holds.
    pub records: u64,
    /// Flash bytes read to seek to the middle record held (the record included).
    pub seek_middle: u64,
    /// Flash bytes read to read the newest 10 records (the seek included).
    pub newest_10: u64,
}

impl fmt::Display for SeekCost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "FLASH-SEEK impl=logfmt-ring write_size={} sample={} region={} blocks={} records={} seek_middle={} newest_10={}",
            self.write_size,
            READ_SAMPLE,
            REGION,
            self.blocks,
            self.records,
            self.seek_middle,
            self.newest_10
        )
    }
}

/// The seek costs at every word size, each over a ring filled for one and a half laps with
/// [`READ_SAMPLE`]-byte samples, each durable.
///
/// # Errors
/// A message if the log misbehaves (a seek returns another record than the one sought).
pub fn seek_costs(emit: &mut dyn FnMut(&SeekCost)) -> Result<(), String> {
    emit(&seek_cost::<4>()?);
    emit(&seek_cost::<8>()?);
    emit(&seek_cost::<16>()?);
    emit(&seek_cost::<32>()?);
    Ok(())
}

fn seek_cost<const W: usize>() -> Result<SeekCost, String> {
    // Each sample says which it is: its number in its first 4 bytes.
    let samples = make_samples(READ_SAMPLE);
    let sample = |i: u32| {
        let mut data = samples[i as usize % samples.len()].clone();
        data[..4].copy_from_slice(&i.to_le_bytes());
        data
    };
    let config = FlashConfig::new(0, REGION as u32).ring();
    let lap = logfmt_fill_durable::<W>(config, &samples, usize::MAX)?;
    let count = (lap + lap / 2) as u32;
    let mut memory = Memory::new::<W>();
    let mut flash = memory.flash::<W>()?;
    {
        let mut writer = WordWriter::open(&mut flash, config).map_err(|e| unexpected("open", e))?;
        for i in 0..count {
            writer
                .add_record(&sample(i))
                .and_then(|_| writer.flush())
                .map_err(|e| unexpected("add", e))?;
        }
    }
    let read = Cell::new(0);
    let counting = Counting {
        flash: &mut flash,
        read: &read,
    };
    let mut reader = WordReader::open(counting, config).map_err(|e| unexpected("open", e))?;
    let oldest = reader.aged_out_records().unwrap_or(0);
    let middle = oldest + (count - oldest) / 2;
    let mut buffer = [0u8; 256];
    let number = |item: Option<FlashItem>, buffer: &[u8]| match item {
        Some(FlashItem::Record { len, .. }) if len >= 4 => Some(u32::from_le_bytes([
            buffer[0], buffer[1], buffer[2], buffer[3],
        ])),
        _ => None,
    };
    read.take();
    let found = reader
        .seek_record(&mut buffer, middle)
        .map_err(|e| unexpected("seek", e))?;
    if number(found, &buffer) != Some(middle) {
        return Err(format!("seek to record {middle} found {found:?}"));
    }
    let seek_middle = read.take();
    let found = reader
        .seek_newest(&mut buffer, 10)
        .map_err(|e| unexpected("seek", e))?;
    if number(found, &buffer) != Some(count - 10) {
        return Err(format!("the newest 10 begin with {found:?}"));
    }
    for _ in 0..9 {
        reader
            .next(&mut buffer)
            .map_err(|e| unexpected("next", e))?;
    }
    let newest_10 = read.take();
    Ok(SeekCost {
        write_size: W,
        blocks: REGION / BLOCK_SIZE,
        records: u64::from(count - oldest),
        seek_middle,
        newest_10,
    })
}
