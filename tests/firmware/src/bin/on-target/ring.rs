//! The ring log on target: wrapping for several laps with the lap counter near its maximum
//! (each writer, and erase units of two blocks), reboots that resume in the same block, and
//! power cuts in programs and erases with the small-RAM `WordWriter` and the async
//! `AsyncWordWriter` (run by `embassy-futures`). Every ring is read back with the library's
//! ring reader: `FlashSource::ring` under a `Reader` told the erased value and that the log
//! starts mid-way, and the small-RAM `WordReader` and `AsyncWordReader`, which must agree.

use embassy_futures::block_on;
use logfmt_core::flash::{
    AsyncWordReader, FlashConfig, FlashError, FlashItem, FlashSource, MockError, MockFlash,
    PowerCut, WordReader,
};
use logfmt_core::parts::ring::Ring;
use logfmt_core::{
    BLOCK_SIZE, ReadOptions, Reader,
    parts::{HEADER_SIZE, Item},
};
use logfmt_firmware::harness::TestResult;
use logfmt_firmware::rng::XorShift;
use logfmt_firmware::{ensure, fail};

use crate::flash::{AnyWriter, WRITERS, Which};
use crate::{Fail, Ram};

/// The flash's program unit.
const WRITE: usize = 8;
/// The lap of an empty ring's first block: the counter wraps to 0 two laps later.
const FIRST_LAP: u32 = u32::MAX - 1;
/// The most records a run writes.
const MAX_RECORDS: usize = 8_192;

/// Record lengths: mostly short samples, some longer, one in forty long — up to `long`
/// bytes, across a block boundary or two.
#[derive(Debug, Clone, Copy)]
struct Lengths {
    long: usize,
}

/// Records up to 42 KB: some span three blocks.
const HUGE: Lengths = Lengths { long: 42_000 };
/// Records up to 8 KB: a power cut's budget of flash work may hold several.
const LONG: Lengths = Lengths { long: 8_000 };

/// The length of record `i`.
fn record_len(i: u32, lengths: Lengths) -> usize {
    let mut r = XorShift::new(u64::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let x = r.next_u64();
    let y = (x >> 16) as usize;
    match x % 40 {
        0 => 2_000 + y % lengths.long.saturating_sub(2_000).max(1),
        1..=5 => 100 + y % 1_000,
        _ => 4 + y % 60,
    }
}

/// Byte `j` of record `i`: its first four bytes say which record it is.
fn record_byte(i: u32, j: usize) -> u8 {
    match i.to_le_bytes().get(j) {
        Some(&b) => b,
        None => (i.wrapping_mul(31) as usize + j * 7) as u8 ^ 0xa5,
    }
}

/// Record `i`, built in `buf`.
fn record(i: u32, lengths: Lengths, buf: &mut [u8]) -> Result<&[u8], Fail> {
    let Some(data) = buf.get_mut(..record_len(i, lengths)) else {
        fail!("record {i} does not fit the payload buffer");
    };
    for (j, b) in data.iter_mut().enumerate() {
        *b = record_byte(i, j);
    }
    Ok(data)
}

/// `region` (a region offset, or the region's end) as an offset of the log unrolled (laps
/// counted): no smaller than `base`, less than a lap after it.
fn unroll(base: u64, region: u64, len: u64) -> u64 {
    base + (region % len + len - base % len) % len
}

/// The oldest acknowledged record (before `acked`) that the ring must still hold if the log
/// ends at `end`: the first that starts in the newest `keep` bytes.
fn must_keep(starts: &[u64], acked: u32, end: u64, keep: u64) -> u32 {
    let acked = starts.get(..acked as usize).unwrap_or_default();
    acked.partition_point(|&s| s + keep < end) as u32
}

/// What reading a ring back gave.
#[derive(Debug)]
struct RingRead {
    /// The first record read (its index), if any.
    first: u32,
    /// Records read: `first`, `first + 1`, ...
    count: u32,
    /// Reports after the last record (a torn write at the log's end).
    tail_reports: u32,
    ring: Option<Ring>,
    aged_out: Option<u32>,
}

impl RingRead {
    /// Takes in a record read at `offset`: it must be the one after the last, as written (with
    /// `lengths`), and come before any damage report.
    fn record(&mut self, data: &[u8], offset: u64, lengths: Lengths) -> Result<(), Fail> {
        ensure!(
            self.tail_reports == 0,
            "damage reported before the record at {offset}"
        );
        let Some(i) = data
            .get(..4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_le_bytes)
        else {
            fail!("a {}-byte record at {offset} was never written", data.len());
        };
        if self.count == 0 {
            self.first = i;
        }
        ensure!(
            i == self.first.wrapping_add(self.count),
            "record {i} read after record {} (a gap, or out of order)",
            self.first.wrapping_add(self.count).wrapping_sub(1)
        );
        let same = data.len() == record_len(i, lengths)
            && data
                .iter()
                .enumerate()
                .all(|(j, &b)| b == record_byte(i, j));
        ensure!(same, "record {i} at {offset} is not the one written");
        self.count += 1;
        Ok(())
    }
}

/// Reads the ring in region `config` of `flash` back: the records must be consecutive ones,
/// each as written (with `lengths`); damage may be reported only after the last record. The
/// block reader's result, checked against the small-RAM readers': `WordReader` and
/// `AsyncWordReader` (run by `embassy-futures`) read the same records and report damage at
/// the end alike.
fn read_ring<const E: usize>(
    flash: &mut MockFlash<'_, WRITE, E>,
    config: FlashConfig,
    lengths: Lengths,
    block: &mut [u8; BLOCK_SIZE],
    scratch: &mut [u8],
) -> Result<RingRead, Fail> {
    let Ok(source) = FlashSource::ring(&mut *flash, config, block) else {
        fail!("the ring's headers cannot be read");
    };
    let mut read = RingRead {
        first: 0,
        count: 0,
        tail_reports: 0,
        ring: source.ring_order(),
        aged_out: source.aged_out_records(),
    };
    let options = ReadOptions::new()
        .erased(Some(config.erased))
        .starts_mid_log(true);
    let mut reader = Reader::with_options(source, &mut *scratch, &options);
    loop {
        match reader.next() {
            Ok(Some(Item::Record(r))) => read.record(r.data, r.offset, lengths)?,
            Ok(Some(_)) => read.tail_reports += 1,
            Ok(None) => break,
            Err(e) => fail!("read error {e:?}"),
        }
    }
    for asynchronous in [false, true] {
        let small = read_small(flash, config, lengths, scratch, asynchronous)?;
        ensure!(
            (
                small.first,
                small.count,
                small.tail_reports > 0,
                small.aged_out
            ) == (read.first, read.count, read.tail_reports > 0, read.aged_out),
            "the small-RAM reader (async: {asynchronous}) read records {}..{} ({} reports at \
             the end), the block reader {}..{} ({})",
            small.first,
            small.first + small.count,
            small.tail_reports,
            read.first,
            read.first + read.count,
            read.tail_reports
        );
    }
    Ok(read)
}

/// Reads the ring back with `WordReader`, or `AsyncWordReader`, into `scratch`.
fn read_small<const E: usize>(
    flash: &mut MockFlash<'_, WRITE, E>,
    config: FlashConfig,
    lengths: Lengths,
    scratch: &mut [u8],
    asynchronous: bool,
) -> Result<RingRead, Fail> {
    let mut read = RingRead {
        first: 0,
        count: 0,
        tail_reports: 0,
        ring: None,
        aged_out: None,
    };
    let take = |read: &mut RingRead, item: Option<FlashItem>, scratch: &[u8]| match item {
        Some(FlashItem::Record { offset, len }) => {
            let data = scratch.get(..len).unwrap_or_default();
            read.record(data, offset.into(), lengths)
        }
        Some(_) => {
            read.tail_reports += 1;
            Ok(())
        }
        None => Ok(()),
    };
    if asynchronous {
        let Ok(mut reader) = block_on(AsyncWordReader::open(&mut *flash, config)) else {
            fail!("AsyncWordReader: the ring's headers cannot be read");
        };
        read.aged_out = reader.aged_out_records();
        loop {
            match block_on(reader.next(scratch)) {
                Ok(None) => break,
                Ok(item) => take(&mut read, item, scratch)?,
                Err(e) => fail!("AsyncWordReader: read error {e:?}"),
            }
        }
    } else {
        let Ok(mut reader) = WordReader::open(&mut *flash, config) else {
            fail!("WordReader: the ring's headers cannot be read");
        };
        read.aged_out = reader.aged_out_records();
        loop {
            match reader.next(scratch) {
                Ok(None) => break,
                Ok(item) => take(&mut read, item, scratch)?,
                Err(e) => fail!("WordReader: read error {e:?}"),
            }
        }
    }
    Ok(read)
}

/// A simulated flash of `blocks` blocks over the test RAM, and a ring config over all of it.
fn ring_flash<'m, const E: usize>(
    flash: &'m mut [u8],
    words: &'m mut [bool],
    blocks: usize,
) -> Result<(MockFlash<'m, WRITE, E>, FlashConfig), Fail> {
    let len = blocks * BLOCK_SIZE;
    let (Some(memory), Some(words)) = (flash.get_mut(..len), words.get_mut(..len / WRITE)) else {
        fail!("{blocks} blocks do not fit the test RAM");
    };
    let Ok(flash) = MockFlash::new(memory, words, 0xFF) else {
        fail!("flash geometry");
    };
    let config = FlashConfig::new(0, len as u32).ring().first_lap(FIRST_LAP);
    Ok((flash, config))
}

/// The ring wraps three times and more, from lap `u32::MAX - 1` through 0, with each writer
/// and with 64 KiB erase units (two-block groups, three of them): it keeps the newest records,
/// every one the ring must keep, as written; the oldest block's count of records begun before
/// it is exactly the first one read; the newest block's lap is the wrapped counter.
pub(crate) fn wraps(ram: &mut Ram<'_>) -> TestResult {
    for which in WRITERS {
        wrap_run::<4096>(ram, which, 4)?;
    }
    wrap_run::<{ 2 * BLOCK_SIZE }>(ram, Which::Word, 6)
}

fn wrap_run<const E: usize>(ram: &mut Ram<'_>, which: Which, blocks: usize) -> TestResult {
    let lengths = HUGE;
    let (mut flash, config) = ring_flash::<E>(ram.flash, ram.words, blocks)?;
    let len = u64::from(config.len);
    let group = (E / BLOCK_SIZE).max(1);
    let keep = ((blocks - 2 * group) * BLOCK_SIZE) as u64;
    let mut starts = [0u64; MAX_RECORDS];
    let (written, laps, end) = {
        let mut writer = match AnyWriter::open(which, &mut flash, config, ram.block) {
            Ok(w) => w,
            Err(e) => fail!("{which:?}: open: {e:?}"),
        };
        let (mut i, mut end) = (0u32, 0u64);
        while writer.stats().laps < 3 {
            let data = record(i, lengths, ram.log)?;
            let w = match writer.add_record(data) {
                Ok(w) => w,
                Err(e) => fail!("{which:?}: record {i}: {e:?}"),
            };
            let Some(start) = starts.get_mut(i as usize) else {
                fail!("{which:?}: more than {MAX_RECORDS} records");
            };
            *start = unroll(end, w.offset, len);
            end = unroll(*start, w.end, len);
            if i % 3 == 0 && writer.flush().is_err() {
                fail!("{which:?}: flush");
            }
            i += 1;
        }
        if writer.flush().is_err() {
            fail!("{which:?}: flush");
        }
        (i, writer.stats().laps, end)
    };
    let read = read_ring(&mut flash, config, lengths, ram.block, ram.scratch)?;
    let what = Which2(which, E);
    ensure!(read.tail_reports == 0, "{what}: damage at the log's end");
    ensure!(
        read.count > 0 && read.first + read.count == written,
        "{what}: read records {}..{}, wrote {written}",
        read.first,
        read.first + read.count
    );
    let must = must_keep(&starts, written, end, keep);
    ensure!(
        read.first <= must,
        "{what}: read from record {}, the ring must keep record {must}",
        read.first
    );
    ensure!(
        read.aged_out == Some(read.first),
        "{what}: the oldest block counts {:?} records before it, the first read is {}",
        read.aged_out,
        read.first
    );
    let Some(ring) = read.ring else {
        fail!("{what}: no ring found");
    };
    ensure!(
        ring.lap() == FIRST_LAP.wrapping_add(laps) && ring.lap() < FIRST_LAP,
        "{what}: lap {} after {laps} laps from {FIRST_LAP}",
        ring.lap()
    );
    ensure!(
        (ring.blocks(), ring.group()) == (blocks as u32, group as u32),
        "{what}: {ring:?}"
    );
    Ok(())
}

/// A writer and an erase size, for messages.
struct Which2(Which, usize);

impl core::fmt::Display for Which2 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{:?} with {} KiB erase units", self.0, self.1 / 1024)
    }
}

/// Reboots: a few records and a flush, then the writer is dropped (a reset) and the log
/// reopened by the next writer in turn. Each reopening goes on in the same block, one word
/// past where the last flush left the log (in the next block only when fewer than 7 bytes are
/// left); every record survives, across two wraps of the ring.
pub(crate) fn reboots(ram: &mut Ram<'_>) -> TestResult {
    let lengths = HUGE;
    let (mut flash, config) = ring_flash::<4096>(ram.flash, ram.words, 4)?;
    let len = u64::from(config.len);
    let keep = (2 * BLOCK_SIZE) as u64;
    let block = BLOCK_SIZE as u64;
    let mut starts = [0u64; MAX_RECORDS];
    let mut rng = XorShift::new(0x2eb0_0075);
    let (mut i, mut laps, mut reboots, mut same_block) = (0u32, 0u32, 0usize, 0usize);
    // Where the last flush left the log: region offset, unrolled.
    let mut flushed: Option<(u64, u64)> = None;
    while laps < 2 || reboots < 40 {
        let which = WRITERS[reboots % WRITERS.len()];
        let mut writer = match AnyWriter::open(which, &mut flash, config, ram.block) {
            Ok(w) => w,
            Err(e) => fail!("reboot {reboots}: open: {e:?}"),
        };
        let position = writer.position();
        let mut end = match flushed {
            Some((at, unrolled)) => {
                let resume = at + WRITE as u64;
                let block_end = (at.max(1) - 1) / block * block + block;
                if resume + HEADER_SIZE as u64 <= block_end {
                    ensure!(
                        position == resume,
                        "reboot {reboots} ({which:?}): goes on at {position}, not {resume} (the \
                         last flush ended at {at})"
                    );
                    same_block += 1;
                } else {
                    ensure!(
                        position % len == block_end % len,
                        "reboot {reboots} ({which:?}): goes on at {position}, not at the next \
                         block ({block_end}; the last flush ended at {at})"
                    );
                }
                unroll(unrolled, position, len)
            }
            None => 0,
        };
        for _ in 0..1 + rng.below(60) {
            let data = record(i, lengths, ram.log)?;
            let w = match writer.add_record(data) {
                Ok(w) => w,
                Err(e) => fail!("reboot {reboots} ({which:?}): record {i}: {e:?}"),
            };
            let Some(start) = starts.get_mut(i as usize) else {
                fail!("more than {MAX_RECORDS} records");
            };
            *start = unroll(end, w.offset, len);
            end = unroll(*start, w.end, len);
            i += 1;
            if rng.below(4) == 0 && writer.flush().is_err() {
                fail!("reboot {reboots} ({which:?}): flush");
            }
        }
        if writer.flush().is_err() {
            fail!("reboot {reboots} ({which:?}): flush");
        }
        let at = writer.position();
        flushed = Some((at, unroll(end, at, len)));
        laps += writer.stats().laps;
        // The reset: the writer is not used again.
        reboots += 1;
        if reboots % 8 == 0 || laps >= 2 {
            let read = read_ring(&mut flash, config, lengths, ram.block, ram.scratch)?;
            ensure!(
                read.tail_reports == 0 && read.count > 0 && read.first + read.count == i,
                "after reboot {reboots}: read records {}..{} ({} reports at the end), wrote {i}",
                read.first,
                read.first + read.count,
                read.tail_reports
            );
            let must = must_keep(&starts, i, end, keep);
            ensure!(
                read.first <= must,
                "after reboot {reboots}: read from record {}, the ring must keep record {must}",
                read.first
            );
        }
    }
    ensure!(
        same_block * 10 >= reboots * 8,
        "only {same_block} of {reboots} reboots went on in the same block"
    );
    Ok(())
}

/// Power cuts with the small-RAM writer.
pub(crate) fn power_cuts_word(ram: &mut Ram<'_>) -> TestResult {
    power_cuts(ram, Which::Word, 0x0011_5eed)
}

/// Power cuts with the async writer.
pub(crate) fn power_cuts_async(ram: &mut Ram<'_>) -> TestResult {
    power_cuts(ram, Which::Async, 0x0023_5eed)
}

/// Power cuts after a pseudo-random amount of flash work, in every mode, over a run that wraps
/// the ring three times and more; every fourth cut is aimed at the erase ahead of the next block
/// (`PowerCut::Arbitrary`: the unit being erased is left with arbitrary bits), and must strike
/// there. After each cut and a reopen, the ring holds every acknowledged record it must keep,
/// in order, and nothing else but records in flight (with reported damage only at the log's
/// end); then logging goes on. Records in flight that did not survive are logged again, so that
/// the records written are the log's.
fn power_cuts(ram: &mut Ram<'_>, which: Which, seed: u64) -> TestResult {
    let lengths = LONG;
    let (mut flash, config) = ring_flash::<4096>(ram.flash, ram.words, 4)?;
    let len = u64::from(config.len);
    let block = BLOCK_SIZE as u64;
    let keep = 2 * block;
    let mut starts = [0u64; MAX_RECORDS];
    let mut rng = XorShift::new(seed);
    let (mut next, mut acked, mut laps) = (0u32, 0u32, 0u32);
    // The unrolled log end after the last reopen.
    let mut base = 0u64;
    let (mut cuts, mut in_erases) = (0u32, 0u32);
    while laps < 3 || cuts < 40 {
        let aimed = cuts % 4 == 3;
        let (budget, mode) = if aimed {
            // The small-RAM writers program every word up to the next block's ring header
            // (24 bytes), then erase the block after it: strike in that erase, in its unit 1
            // to 6 (of 8).
            let to_header = block - base % block + 24;
            let into_erase = 4096 * (1 + rng.below(6)) + 2048;
            let seed = rng.next_u64();
            (to_header + into_erase, PowerCut::Arbitrary { seed })
        } else {
            let modes = [PowerCut::Untouched, PowerCut::Partial, PowerCut::Complete];
            // Up to two blocks of work: a block's programs and the erase ahead of the next.
            let budget = rng.below(2 * block);
            (budget, modes[cuts as usize % 4 % 3])
        };
        flash.power_on();
        flash.cut_power_after(budget as usize, mode);
        let what = Cut(which, cuts, mode, budget);
        let mut end = base;
        {
            let mut writer = match AnyWriter::open(which, &mut flash, config, ram.block) {
                Ok(w) => w,
                Err(e) => fail!("{what}: open: {e:?}"),
            };
            let flushes = 1 + rng.below(8);
            loop {
                let data = record(next, lengths, ram.log)?;
                match writer.add_record(data) {
                    Ok(w) => {
                        let Some(start) = starts.get_mut(next as usize) else {
                            fail!("{what}: more than {MAX_RECORDS} records");
                        };
                        *start = unroll(end, w.offset, len);
                        end = unroll(*start, w.end, len);
                        next += 1;
                    }
                    Err(FlashError::Flash(MockError::PowerCut)) => {
                        next += 1;
                        break;
                    }
                    Err(e) => fail!("{what}: record {next}: {e:?}"),
                }
                if rng.below(flushes) == 0 {
                    match writer.flush() {
                        Ok(()) => acked = next,
                        Err(FlashError::Flash(MockError::PowerCut)) => break,
                        Err(e) => fail!("{what}: flush: {e:?}"),
                    }
                }
            }
            laps += writer.stats().laps;
        }
        cuts += 1;
        if aimed {
            // The erase ahead of the block after the one the log entered: its first unit
            // erased, the rest not all.
            let ahead = ((end - 1) / block + 1) % (len / block);
            let at = (ahead * block) as usize;
            let memory = flash.memory().get(at..at + BLOCK_SIZE).unwrap_or_default();
            let (first, rest) = memory.split_at(4096.min(memory.len()));
            let torn = first.iter().all(|&b| b == 0xFF) && rest.iter().any(|&b| b != 0xFF);
            ensure!(
                torn,
                "{what}: the cut missed the erase ahead of block {ahead}"
            );
            in_erases += 1;
        }
        flash.power_on();
        // Where the log goes on: past anything a torn write took.
        {
            let writer = match AnyWriter::open(which, &mut flash, config, ram.block) {
                Ok(w) => w,
                Err(e) => fail!("{what}: reopen: {e:?}"),
            };
            base = unroll(base, writer.position(), len);
            end = end.max(base);
        }
        let read = read_ring(&mut flash, config, lengths, ram.block, ram.scratch)?;
        ensure!(
            read.tail_reports <= 1,
            "{what}: {} reports at the log's end",
            read.tail_reports
        );
        let must = must_keep(&starts, acked, end, keep);
        let read_end = if read.count == 0 {
            // Every acknowledged record aged out (a long record in flight may push them all
            // out of the newest blocks).
            ensure!(
                must == acked,
                "{what}: nothing read, record {must} must be kept"
            );
            0
        } else {
            let read_end = read.first + read.count;
            ensure!(
                read_end >= acked && read_end <= next,
                "{what}: read up to record {read_end}, {acked} acknowledged, {next} written"
            );
            ensure!(
                must >= acked || read.first <= must,
                "{what}: read from record {}, the ring must keep record {must}",
                read.first
            );
            read_end
        };
        // What was read, and only that, is the log.
        next = read_end.max(acked);
    }
    ensure!(laps >= 3, "{which:?}: the ring wrapped {laps} times");
    ensure!(in_erases >= 10, "{which:?}: {in_erases} cuts in erases");
    ensure!(
        acked > 1_000,
        "{which:?}: only {acked} records acknowledged"
    );
    Ok(())
}

/// A cut, for messages.
struct Cut(Which, u32, PowerCut, u64);

impl core::fmt::Display for Cut {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{:?} cut {} ({:?} after {} bytes)",
            self.0, self.1, self.2, self.3
        )
    }
}
