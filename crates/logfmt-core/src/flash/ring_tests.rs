//! Tests of the ring log: it wraps for ever, keeps the newest records, drops what the ring
//! erased silently, and survives power cuts anywhere — in programs and in erases — with the
//! lap counter wrapping too. Images are read back with the library's reader over
//! [`FlashSource::ring`].

use std::string::String;
use std::vec::Vec;

use super::tests::{KINDS, Kind, Memory, open};
use super::{
    FlashConfig, FlashError, FlashItem, FlashSource, MockError, MockFlash, PowerCut, WordReader,
};
use crate::format::BLOCK_SIZE;
use crate::ring::{Ring, RingHeader};
use crate::{Item, ReadOptions, Reader};

const WRITE: usize = 8;

/// What reading a ring gives: its records and damage reports (before the last record read,
/// and after it: the log's end).
#[derive(Debug, Default)]
struct Read {
    records: Vec<Vec<u8>>,
    damage: Vec<String>,
    tail_damage: Vec<String>,
    aged_out: Option<u32>,
    ring: Option<Ring>,
}

/// Reads the ring in region `config` of `flash` with the library's reader.
fn read_ring<const W: usize, const E: usize>(
    flash: &mut MockFlash<'_, W, E>,
    config: FlashConfig,
) -> Read {
    let mut block = std::boxed::Box::new([0u8; BLOCK_SIZE]);
    let source = FlashSource::ring(&mut *flash, config, &mut *block).expect("reads");
    let ring = source.ring_order();
    let aged_out = source.aged_out_records();
    let options = ReadOptions::new()
        .erased(Some(config.erased))
        .starts_mid_log(true);
    let mut buffer = std::vec![0u8; 1 << 20];
    let mut reader = Reader::with_options(source, &mut buffer, &options);
    let mut read = Read {
        ring,
        aged_out,
        ..Read::default()
    };
    while let Some(item) = reader.next().expect("reads") {
        match item {
            Item::Record(record) => {
                read.records.push(record.data.to_vec());
            }
            other => read.tail_damage.push(std::format!("{other:?}")),
        }
        if matches!(item, Item::Record(_)) {
            read.damage.append(&mut read.tail_damage);
        }
    }
    let _ = reader;
    // The small-RAM reader reads the same records.
    let mut small = WordReader::open(&mut *flash, config).expect("reads");
    let mut records = Vec::new();
    while let Some(item) = small.next(&mut buffer).expect("reads") {
        if let FlashItem::Record { len, .. } = item {
            records.push(buffer[..len].to_vec());
        }
    }
    assert!(
        records == read.records,
        "the small-RAM reader reads other records"
    );
    read
}

/// A record that says which one it is: index `i`, `len` bytes (at least 4).
fn record(i: u32, len: usize) -> Vec<u8> {
    let mut data = i.to_le_bytes().to_vec();
    data.extend((4..len.max(4)).map(|j| (i as usize * 31 + j * 7) as u8));
    data
}

/// Lengths of a run: mostly small samples, some records across blocks.
fn lengths(count: usize, seed: u64) -> Vec<usize> {
    let mut x = seed | 1;
    (0..count)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match x % 20 {
                0 => 4 + (x >> 8) as usize % 40_000,
                1..=3 => 4 + (x >> 8) as usize % 2_000,
                _ => 4 + (x >> 8) as usize % 60,
            }
        })
        .collect()
}

/// Checks a ring read against the records written: the records read are written ones, in
/// order, with no gap — a suffix of those written before `next`, all acknowledged ones (before
/// `acked`) kept at their end, possibly followed by ones in flight — and the oldest read is no
/// newer than `must`, the oldest acknowledged record the ring must still hold.
fn check(read: &Read, written: &[Vec<u8>], (acked, next, must): (usize, usize, usize), what: &str) {
    // A write cut in the last word of a chunk cannot be told from damage: reported at the
    // log's end, until a reopened writer marks it torn. Nowhere else.
    assert!(read.damage.is_empty(), "{what}: damage {:?}", read.damage);
    assert!(
        read.tail_damage.len() <= 1,
        "{what}: at the end {:?}",
        read.tail_damage
    );
    let Some(first) = read.records.first() else {
        assert_eq!(
            must, acked,
            "{what}: nothing read, record {must} of {acked} acknowledged kept"
        );
        return;
    };
    let start = u32::from_le_bytes(first[..4].try_into().unwrap()) as usize;
    for (k, data) in read.records.iter().enumerate() {
        assert_eq!(
            Some(data),
            written.get(start + k),
            "{what}: record {k} read is not record {} written",
            start + k
        );
    }
    let end = start + read.records.len();
    assert!(
        end >= acked,
        "{what}: read up to {end}, {acked} acknowledged"
    );
    assert!(end <= next, "{what}: read up to {end}, {next} written");
    assert!(
        must >= acked || start <= must,
        "{what}: read from {start}, record {must} must be kept"
    );
}

/// Where each record starts in the log as if the ring were unrolled (laps counted), to tell
/// which ones the ring must still hold.
struct Unrolled {
    len: u64,
    base: u64,
    last: u64,
    starts: Vec<u64>,
}

impl Unrolled {
    fn at(&mut self, region_offset: u64) -> u64 {
        if region_offset < self.last {
            self.base += self.len;
        }
        self.last = region_offset;
        self.base + region_offset
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

#[test]
fn a_ring_wraps_for_ever_and_keeps_the_newest_records() {
    for kind in KINDS {
        for first_lap in [1, u32::MAX - 1] {
            let mut memory = Memory::<WRITE>::new(4);
            let config = FlashConfig::new(0, 4 * BLOCK_SIZE as u32)
                .ring()
                .first_lap(first_lap);
            let mut block = [0u8; BLOCK_SIZE];
            let lengths = lengths(6_000, 7);
            let written: Vec<Vec<u8>> =
                (0u32..).zip(&lengths).map(|(i, &n)| record(i, n)).collect();
            let mut flash = memory.flash::<4096>();
            {
                let mut writer = open(kind, &mut flash, config, &mut block).expect("opens");
                for (i, data) in written.iter().enumerate() {
                    writer.add_record(data).expect("appends");
                    if i % 3 == 0 {
                        writer.flush().expect("flushes");
                    }
                }
                writer.flush().expect("flushes");
                let stats = writer.stats();
                assert!(stats.laps >= 3, "{kind:?}: {stats:?}");
                assert!(stats.aged_out_bytes > 0, "{kind:?}: {stats:?}");
            }
            let read = read_ring(&mut flash, config);
            let what = std::format!("{kind:?} from lap {first_lap}");
            check(
                &read,
                &written,
                (written.len(), written.len(), written.len()),
                &what,
            );
            assert!(
                read.records.len() > 40,
                "{what}: kept {} records",
                read.records.len()
            );
            let ring = read.ring.expect("a ring");
            // Every record was written once: the records aged out are exactly those before the
            // first read (a record the oldest block continues began before it).
            let first = u32::from_le_bytes(read.records[0][..4].try_into().unwrap());
            assert_eq!(read.aged_out, Some(first), "{what}");
            assert_eq!(ring.blocks(), 4, "{what}");
            assert_ne!(ring.lap(), first_lap, "{what}: wrapped");
        }
    }
}

#[test]
fn every_block_begins_with_its_ring_header() {
    let mut memory = Memory::<WRITE>::new(4);
    let config = FlashConfig::new(0, 4 * BLOCK_SIZE as u32).ring();
    let mut block = [0u8; BLOCK_SIZE];
    let mut flash = memory.flash::<4096>();
    {
        let mut writer = open(Kind::Word, &mut flash, config, &mut block).expect("opens");
        // Four and a half blocks' worth of 1007-byte chunks: block 0 is written again, in lap 2.
        for i in 0..145u32 {
            writer.add_record(&record(i, 1000)).expect("appends");
        }
        writer.flush().expect("flushes");
    }
    let image = flash.memory();
    let header = |b: usize| RingHeader::parse(&image[b * BLOCK_SIZE..]).expect("a ring header");
    assert_eq!(header(0).lap, 2);
    // Block 1 was erased ahead, when block 0 began its second lap.
    assert!(image[BLOCK_SIZE..2 * BLOCK_SIZE].iter().all(|&b| b == 0xFF));
    for b in 2..4 {
        assert_eq!(header(b).lap, 1, "block {b}");
        assert_eq!((header(b).blocks, header(b).group), (4, 1));
        assert_eq!(header(b).write_size, WRITE as u8);
    }
    // Records begun before each block: about 32 KiB / 1007 B a block.
    assert!(header(2).records > 60 && header(2).records < 68);
    assert!(header(0).records > 4 * 30);
}

/// Power cuts at many points of a run that wraps the ring several times, reboots often and
/// flushes at random, with cuts in erases too: after each cut and a reopen, the ring holds
/// every acknowledged record not aged out, in order, and nothing else; then the run goes on.
fn power_cuts<const E: usize>(kind: Kind, blocks: usize, cuts: usize, seed: u64) {
    let group = (E / BLOCK_SIZE).max(1);
    let mut memory = Memory::<WRITE>::new(blocks);
    let config = FlashConfig::new(0, (blocks * BLOCK_SIZE) as u32)
        .ring()
        .first_lap(u32::MAX - 2);
    let mut block = [0u8; BLOCK_SIZE];
    let lengths = lengths(100_000, seed);
    let written: Vec<Vec<u8>> = (0u32..).zip(&lengths).map(|(i, &n)| record(i, n)).collect();
    let mut flash = memory.flash::<E>();
    let (mut next, mut acked, mut laps) = (0usize, 0usize, 0u32);
    let region = (blocks * BLOCK_SIZE) as u64;
    let mut unrolled = Unrolled {
        len: region,
        base: 0,
        last: 0,
        starts: std::vec![0; written.len()],
    };
    // What the ring keeps besides the group erased ahead and the group being written.
    let keep = ((blocks - 2 * group) * BLOCK_SIZE) as u64;
    let mut x = seed | 1;
    let mut random = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for cut in 0..cuts {
        // The budget: bytes of programming and erasing before the power fails.
        let budget = (random() % (3 * BLOCK_SIZE as u64)) as usize;
        let mode = match cut % 4 {
            0 => PowerCut::Untouched,
            1 => PowerCut::Partial,
            2 => PowerCut::Complete,
            _ => PowerCut::Arbitrary { seed: random() },
        };
        flash.power_on();
        flash.cut_power_after(budget, mode);
        let flushes = 1 + random() % 8;
        let mut writer = match open(kind, &mut flash, config, &mut block) {
            Ok(writer) => writer,
            Err(FlashError::Flash(MockError::PowerCut)) => continue,
            Err(e) => panic!("cut {cut}: open: {e:?}"),
        };
        let mut end = unrolled.at(writer.position());
        while let Some(data) = written.get(next) {
            match writer.add_record(data) {
                Ok(w) => {
                    unrolled.starts[next] = unrolled.at(w.offset);
                    end = unrolled.at(w.end);
                    next += 1;
                }
                Err(FlashError::Flash(MockError::PowerCut)) => {
                    next += 1;
                    break;
                }
                Err(e) => panic!("cut {cut}: add: {e:?}"),
            }
            if random() % flushes == 0 {
                match writer.flush() {
                    Ok(()) => acked = next,
                    Err(FlashError::Flash(MockError::PowerCut)) => break,
                    Err(e) => panic!("cut {cut}: flush: {e:?}"),
                }
            }
        }
        laps += writer.stats().laps;
        drop(writer);
        flash.power_on();
        // Where the log goes on: past anything a torn write took.
        if let Ok(writer) = open(kind, &mut flash, config, &mut block) {
            end = end.max(unrolled.at(writer.position()));
        }
        let read = read_ring(&mut flash, config);
        let what = std::format!(
            "{kind:?} E={E} cut {cut} ({mode:?} after {budget} bytes), {:?}",
            read.ring
        );
        let must = unrolled.must(acked, end, keep);
        check(&read, &written, (acked, next, must), &what);
        // What was read, and only that, is the log: records in flight and not read are
        // written again, so that the run's sequence stays the log's.
        let read_end = read.records.last().map_or(0, |r| {
            u32::from_le_bytes(r[..4].try_into().unwrap()) as usize + 1
        });
        if read_end < next {
            next = read_end.max(acked);
        }
        if next >= written.len() {
            break;
        }
    }
    assert!(laps >= 3, "{kind:?} E={E}: wrapped {laps} times");
}

#[test]
fn power_cuts_in_a_ring_of_blocks_lose_no_acknowledged_record() {
    for kind in KINDS {
        power_cuts::<4096>(kind, 4, 120, 11);
    }
}

#[test]
fn power_cuts_in_a_ring_of_large_erase_units_lose_no_acknowledged_record() {
    for kind in KINDS {
        power_cuts::<{ 2 * BLOCK_SIZE }>(kind, 6, 120, 23);
    }
}
