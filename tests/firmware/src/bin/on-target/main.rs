//! The on-target test suite: `logfmt-core` on an emulated Cortex-M3 (QEMU mps2-an385,
//! thumbv7m-none-eabi) and Cortex-M4F (mps2-an386, thumbv7em-none-eabihf).
//!
//! Prints `test NAME ... ok` per test and `N passed, M failed` at the end; QEMU exits with
//! status 0 only if every test passed (a panic exits with status 1 through panic-semihosting).
#![no_std]
#![no_main]
// Failures carry their message inline (there is no heap), so `Err` is a few hundred bytes.
#![allow(clippy::result_large_err)]

mod flash;
mod ring;

use core::convert::Infallible;

use cortex_m_rt::entry;
use logfmt_core::parts::checksum::{self, crc32c};
use logfmt_core::{
    BLOCK_SIZE, FnSink, ReadOptions, Reader, Writer,
    parts::{Event, FragmentKind, FragmentReader, Item},
};
use logfmt_firmware::demo_log::{self, Ack};
use logfmt_firmware::fmtbuf::FmtBuf;
use logfmt_firmware::harness::{Case, Fail, TestResult, run_all};
use logfmt_firmware::rng::XorShift;
use logfmt_firmware::vectors::{UNDAMAGED, VECTORS, Vector};
use logfmt_firmware::{ensure, fail};
use panic_semihosting as _;

/// The RAM the tests work in: the MPS2 boards have 4 MiB; these live in `main`'s frame (about
/// 1.7 MiB in all).
struct Ram<'a> {
    /// A writer's block buffer.
    block: &'a mut [u8; BLOCK_SIZE],
    /// A reader's block buffer (while a writer holds `block`).
    read_block: &'a mut [u8; BLOCK_SIZE],
    /// Where readers assemble fragmented records (and the round trip builds payloads).
    scratch: &'a mut [u8],
    /// A log in memory, or a damaged copy of a vector; payloads of the flash tests.
    log: &'a mut [u8],
    /// The simulated NOR flash (`FLASH` bytes: the largest ring tested) and its per-word
    /// "programmed" flags.
    flash: &'a mut [u8],
    words: &'a mut [bool],
    /// The demo's account of its samples.
    acks: &'a mut [Ack],
    in_flight: &'a mut [Ack],
}

const SCRATCH: usize = 128 * 1024;
const LOG: usize = 1024 * 1024;
/// The simulated flash: six blocks, a ring of three erase groups of 64 KiB (and room for the
/// demo's four blocks of 4 KiB units).
const FLASH: usize = 6 * BLOCK_SIZE;
/// Words of 8 bytes in it.
const FLASH_WORDS: usize = FLASH / 8;

/// The tests, in order.
fn cases<'a>() -> [Case<Ram<'a>>; 15] {
    [
        Case {
            name: "crc32c_check_values",
            run: crc32c_check_values,
        },
        Case {
            name: "writer_rewrites_undamaged_vectors_byte_for_byte",
            run: writer_rewrites_undamaged_vectors,
        },
        Case {
            name: "reader_matches_leveldb_on_all_27_vectors",
            run: reader_matches_leveldb,
        },
        Case {
            name: "fragment_reader_matches_leveldb_on_all_27_vectors",
            run: fragment_reader_matches_leveldb,
        },
        Case {
            name: "bit_flips_return_only_written_records",
            run: bit_flips,
        },
        Case {
            name: "truncations_return_exactly_the_complete_records",
            run: truncations,
        },
        Case {
            name: "overwritten_ranges_return_only_written_records",
            run: overwritten_ranges,
        },
        Case {
            name: "xorshift_round_trip_5000_records",
            run: round_trip,
        },
        Case {
            name: "flash_log_power_cut_and_reboot_buffered_small_ram_and_async",
            run: flash::flash_power_cuts,
        },
        Case {
            name: "flash_brownout_loops_cut_at_the_first_program_after_each_reopen",
            run: flash::flash_brownout_loops,
        },
        Case {
            name: "ring_wraps_3_laps_lap_counter_through_0_all_writers_and_64k_erase_units",
            run: ring::wraps,
        },
        Case {
            name: "ring_reboots_resume_in_the_same_block_records_survive",
            run: ring::reboots,
        },
        Case {
            name: "ring_power_cuts_small_ram_word_writer",
            run: ring::power_cuts_word,
        },
        Case {
            name: "ring_power_cuts_async_word_writer",
            run: ring::power_cuts_async,
        },
        Case {
            name: "flash_demo_scenario_ring_13_power_cuts",
            run: flash::flash_demo_scenario,
        },
    ]
}

#[entry]
fn main() -> ! {
    let mut block = [0u8; BLOCK_SIZE];
    let mut scratch = [0u8; SCRATCH];
    let mut log = [0u8; LOG];
    let mut read_block = [0u8; BLOCK_SIZE];
    let mut flash = [0u8; FLASH];
    let mut words = [false; FLASH_WORDS];
    let mut acks = [Ack::default(); demo_log::MAX_ACKS];
    let mut in_flight = [Ack::default(); demo_log::MAX_IN_FLIGHT];
    let mut ram = Ram {
        block: &mut block,
        read_block: &mut read_block,
        scratch: &mut scratch,
        log: &mut log,
        flash: &mut flash,
        words: &mut words,
        acks: &mut acks,
        in_flight: &mut in_flight,
    };
    run_all("logfmt-core", &mut ram, &cases())
}

// ------------------------------------------------------------------------------------------
// Helpers

/// A record as the tests compare them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Rec {
    offset: u64,
    end: u64,
    len: u32,
    crc: u32,
}

const MAX_RECS: usize = 8;

/// The records of an undamaged log, as `Rec`s.
fn summarize(log: &[u8], scratch: &mut [u8], out: &mut [Rec; MAX_RECS]) -> Result<usize, Fail> {
    let mut reader = Reader::from_slice(log, scratch);
    let mut n = 0;
    let Ok(mut item) = reader.next();
    while let Some(found) = item {
        match found {
            Item::Record(r) => {
                let Some(slot) = out.get_mut(n) else {
                    fail!("more than {MAX_RECS} records");
                };
                *slot = Rec {
                    offset: r.offset,
                    end: r.end,
                    len: r.data.len() as u32,
                    crc: crc32c(r.data),
                };
                n += 1;
            }
            other => fail!("undamaged log reads as {other:?}"),
        }
        let Ok(next) = reader.next();
        item = next;
    }
    Ok(n)
}

/// Reads `log` with `options`; every record must be one of `originals` (same offset, length and
/// CRC), in increasing offset order. Returns (records, reports).
fn read_subset(
    log: &[u8],
    scratch: &mut [u8],
    options: &ReadOptions,
    originals: &[Rec],
) -> Result<(usize, usize), Fail> {
    let mut reader = Reader::with_options(logfmt_core::SliceSource::new(log), scratch, options);
    let (mut records, mut reports) = (0, 0);
    let mut last: Option<u64> = None;
    loop {
        let Ok(item) = reader.next();
        let Some(item) = item else { break };
        match item {
            Item::Record(r) => {
                let rec = Rec {
                    offset: r.offset,
                    end: r.end,
                    len: r.data.len() as u32,
                    crc: crc32c(r.data),
                };
                let known = originals
                    .iter()
                    .any(|o| o.offset == rec.offset && o.len == rec.len && o.crc == rec.crc);
                ensure!(known, "returned a record never written: {rec:?}");
                ensure!(
                    last.is_none_or(|l| rec.offset > l),
                    "records out of order at {}",
                    rec.offset
                );
                last = Some(rec.offset);
                records += 1;
            }
            Item::Corruption(_) => reports += 1,
            Item::Oversized(o) => fail!("returned an oversized record never written: {o:?}"),
            Item::Coded(pack) => fail!("returned a pack never written: {pack:?}"),
            other => panic!("not expected here: {other:?}"),
        }
    }
    Ok((records, reports))
}

fn undamaged() -> impl Iterator<Item = &'static Vector> {
    VECTORS.iter().filter(|v| UNDAMAGED.contains(&v.name))
}

// ------------------------------------------------------------------------------------------
// The tests

fn crc32c_check_values(_: &mut Ram<'_>) -> TestResult {
    ensure!(crc32c(b"123456789") == 0xe306_9283, "check value");
    ensure!(crc32c(&[0u8; 32]) == 0x8a91_36aa, "32 zero bytes");
    ensure!(crc32c(&[0xffu8; 32]) == 0x62a8_ab43, "32 0xff bytes");
    let mut ascending = [0u8; 32];
    for (i, b) in ascending.iter_mut().enumerate() {
        *b = i as u8;
    }
    ensure!(crc32c(&ascending) == 0x46dd_794e, "0..32");
    let (a, b) = ascending.split_at(13);
    ensure!(checksum::extend(crc32c(a), b) == 0x46dd_794e, "extend");
    ensure!(checksum::mask(0xe306_9283) == 0xc78a_b0e5, "mask");
    ensure!(
        checksum::unmask(checksum::mask(0x1234_5678)) == 0x1234_5678,
        "unmask"
    );
    Ok(())
}

fn writer_rewrites_undamaged_vectors(ram: &mut Ram<'_>) -> TestResult {
    let mut identical = 0;
    for v in VECTORS.iter().filter(|v| v.drops.is_empty()) {
        // Read the records back and write them again, comparing the output with the file as it
        // arrives at the sink.
        let mut pos = 0usize;
        let mut first_difference = None;
        let sink = FnSink(|bytes: &[u8]| {
            for (i, &b) in bytes.iter().enumerate() {
                if first_difference.is_none() && v.data.get(pos + i) != Some(&b) {
                    first_difference = Some(pos + i);
                }
            }
            pos += bytes.len();
            Ok::<(), Infallible>(())
        });
        let mut writer = Writer::new(sink, &mut *ram.block);
        let mut reader = Reader::from_slice(v.data, &mut *ram.scratch);
        let mut index = 0;
        loop {
            let Ok(item) = reader.next();
            let Some(item) = item else { break };
            let Item::Record(r) = item else {
                fail!("{}: {item:?}", v.name);
            };
            let Ok(written) = writer.add_record(r.data) else {
                fail!("{}: writing failed", v.name);
            };
            if UNDAMAGED.contains(&v.name) {
                let expected = v.records.get(index).map(|e| e.offset);
                ensure!(
                    expected == Some(written.offset),
                    "{}: record {index} written at {}, LevelDB's at {expected:?}",
                    v.name,
                    written.offset
                );
            }
            index += 1;
        }
        if writer.flush().is_err() {
            fail!("{}: flush failed", v.name);
        }
        let same = first_difference.is_none() && pos == v.data.len();
        let expected_same = UNDAMAGED.contains(&v.name);
        ensure!(
            same == expected_same,
            "{}: rewritten {} bytes (file {}), first difference at {:?}; expected {}",
            v.name,
            pos,
            v.data.len(),
            first_difference,
            if expected_same {
                "identical"
            } else {
                "different (not writer output)"
            }
        );
        identical += usize::from(same);
    }
    ensure!(
        identical == UNDAMAGED.len(),
        "{identical} identical vectors, expected {}",
        UNDAMAGED.len()
    );
    Ok(())
}

fn reader_matches_leveldb(ram: &mut Ram<'_>) -> TestResult {
    ensure!(VECTORS.len() == 27, "{} vectors", VECTORS.len());
    for v in VECTORS {
        let mut reader = Reader::from_slice(v.data, &mut *ram.scratch);
        let (mut records, mut drops) = (0, 0);
        loop {
            let Ok(item) = reader.next();
            let Some(item) = item else { break };
            match item {
                Item::Record(r) => {
                    let got = (r.data.len() as u32, r.offset, crc32c(r.data));
                    let Some(e) = v.records.get(records) else {
                        fail!("{}: extra record {got:?}", v.name);
                    };
                    ensure!(
                        got == (e.len, e.offset, e.crc32c),
                        "{}: record {records} is {got:?}, LevelDB's {e:?}",
                        v.name
                    );
                    ensure!(
                        reader.last_record_offset() == e.offset,
                        "{}: LastRecordOffset {}, LevelDB's {}",
                        v.name,
                        reader.last_record_offset(),
                        e.offset
                    );
                    records += 1;
                }
                Item::Corruption(c) => {
                    let Some(d) = v.drops.get(drops) else {
                        fail!("{}: extra drop {c}", v.name);
                    };
                    let reason = FmtBuf::<80>::format(format_args!("{}", c.kind));
                    ensure!(
                        c.bytes == d.bytes && reason.as_str() == d.reason,
                        "{}: drop {drops} is ({}, {reason}), LevelDB's ({}, {})",
                        v.name,
                        c.bytes,
                        d.bytes,
                        d.reason
                    );
                    drops += 1;
                }
                Item::Oversized(o) => fail!("{}: oversized {o:?}", v.name),
                Item::Coded(pack) => fail!("{}: a pack {pack:?}", v.name),
                other => panic!("not expected here: {other:?}"),
            }
        }
        ensure!(
            records == v.records.len() && drops == v.drops.len(),
            "{}: {records} records and {drops} drops, LevelDB: {} and {}",
            v.name,
            v.records.len(),
            v.drops.len()
        );
    }
    Ok(())
}

fn fragment_reader_matches_leveldb(_: &mut Ram<'_>) -> TestResult {
    for v in VECTORS {
        let mut reader = FragmentReader::from_slice(v.data);
        let (mut records, mut drops) = (0, 0);
        let (mut crc, mut len) = (0u32, 0u64);
        loop {
            let Ok(event) = reader.next();
            let Some(event) = event else { break };
            let corruption = match event {
                Event::Fragment(f) => {
                    if matches!(f.kind, FragmentKind::Full | FragmentKind::First) {
                        (crc, len) = (0, 0);
                    }
                    crc = checksum::extend(crc, f.data);
                    len += f.data.len() as u64;
                    if matches!(f.kind, FragmentKind::Full | FragmentKind::Last) {
                        let Some(e) = v.records.get(records) else {
                            fail!("{}: extra record at {}", v.name, f.record_offset);
                        };
                        ensure!(
                            (len, f.record_offset, crc) == (u64::from(e.len), e.offset, e.crc32c),
                            "{}: record {records}: ({len}, {}, {crc:08x}), LevelDB's {e:?}",
                            v.name,
                            f.record_offset
                        );
                        records += 1;
                    }
                    None
                }
                Event::Aborted(a) => a.report,
                // Trailers and the like: nothing LevelDB reports.
                Event::Skipped(_) => None,
                Event::Corruption(c) => Some(c),
                other => panic!("not expected here: {other:?}"),
            };
            if let Some(c) = corruption {
                let Some(d) = v.drops.get(drops) else {
                    fail!("{}: extra drop {c}", v.name);
                };
                ensure!(c.bytes == d.bytes, "{}: drop {drops}: {c}", v.name);
                drops += 1;
            }
        }
        ensure!(
            records == v.records.len() && drops == v.drops.len(),
            "{}: {records} records and {drops} drops",
            v.name
        );
    }
    Ok(())
}

/// The two ways to read a damaged log: LevelDB's rules, and a flash image's (erased = 0xFF).
fn read_options() -> [ReadOptions; 2] {
    [ReadOptions::new(), ReadOptions::new().erased(Some(0xFF))]
}

fn bit_flips(ram: &mut Ram<'_>) -> TestResult {
    let mut rng = XorShift::new(0x0b17_f11b);
    let mut reads = 0;
    for v in undamaged().filter(|v| !v.data.is_empty()) {
        let mut originals = [Rec::default(); MAX_RECS];
        let n = summarize(v.data, ram.scratch, &mut originals)?;
        let len = v.data.len();
        let copy = &mut ram.log[..len];
        copy.copy_from_slice(v.data);
        // Every bit of the first header, then random bits.
        let targeted = (0..HEADER_BITS).map(|bit| bit as usize);
        let random = (0..48).map(|_| rng.below(len as u64 * 8) as usize);
        for bit in targeted.chain(random) {
            let (at, mask) = (bit / 8 % len, 1u8 << (bit % 8));
            copy[at] ^= mask;
            for options in &read_options() {
                read_subset(copy, ram.scratch, options, &originals[..n])
                    .map_err(|e| Fail::new(format_args!("{} bit {bit}: {}", v.name, e.0)))?;
                reads += 1;
            }
            copy[at] ^= mask;
        }
    }
    ensure!(reads > 1000, "only {reads} reads");
    Ok(())
}

const HEADER_BITS: u32 = 7 * 8;

fn truncations(ram: &mut Ram<'_>) -> TestResult {
    for v in undamaged() {
        let mut originals = [Rec::default(); MAX_RECS];
        let n = summarize(v.data, ram.scratch, &mut originals)?;
        let len = v.data.len();
        let stride = len / 48 + 1;
        let edges = originals[..n]
            .iter()
            .flat_map(|r| [r.offset as usize, r.end as usize])
            .chain((1..=len / BLOCK_SIZE).map(|b| b * BLOCK_SIZE));
        let mut check = |cut: usize| -> TestResult {
            if cut > len {
                return Ok(());
            }
            let log = &v.data[..cut];
            let mut reader = Reader::from_slice(log, &mut *ram.scratch);
            let mut k = 0;
            loop {
                let Ok(item) = reader.next();
                let Some(item) = item else { break };
                let Item::Record(r) = item else {
                    fail!("{} cut at {cut}: {item:?}", v.name);
                };
                let got = (r.offset, r.data.len() as u32, crc32c(r.data));
                let want = originals.get(k).map(|o| (o.offset, o.len, o.crc));
                ensure!(
                    k < n && Some(got) == want,
                    "{} cut at {cut}: record {k} is {got:?}, expected {want:?}",
                    v.name
                );
                k += 1;
            }
            let complete = originals[..n]
                .iter()
                .filter(|o| o.end as usize <= cut)
                .count();
            ensure!(
                k == complete,
                "{} cut at {cut}: {k} records, {complete} complete ones",
                v.name
            );
            Ok(())
        };
        for cut in (0..=len).step_by(stride) {
            check(cut)?;
        }
        for edge in edges {
            for cut in edge.saturating_sub(8)..=edge + 8 {
                check(cut)?;
            }
        }
    }
    Ok(())
}

fn overwritten_ranges(ram: &mut Ram<'_>) -> TestResult {
    let mut rng = XorShift::new(0x6a5b_a6e5);
    for v in undamaged().filter(|v| !v.data.is_empty()) {
        let mut originals = [Rec::default(); MAX_RECS];
        let n = summarize(v.data, ram.scratch, &mut originals)?;
        let len = v.data.len();
        for round in 0..24 {
            let copy = &mut ram.log[..len];
            copy.copy_from_slice(v.data);
            let at = rng.range(0..len);
            let span = rng.range(1..65).min(len - at);
            let fill = rng.below(3);
            for b in &mut copy[at..at + span] {
                *b = match fill {
                    0 => 0x00,
                    1 => 0xff,
                    _ => rng.next_u64() as u8,
                };
            }
            for options in &read_options() {
                read_subset(copy, ram.scratch, options, &originals[..n]).map_err(|e| {
                    Fail::new(format_args!(
                        "{} round {round} ({span} bytes at {at}): {}",
                        v.name, e.0
                    ))
                })?;
            }
        }
    }
    Ok(())
}

// ---- the pseudo-random round trip

/// The length of record `i` of the round trip: mostly small, some spanning blocks, some right
/// at block edges.
fn round_trip_len(i: u32) -> usize {
    let mut r = XorShift::new(u64::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let x = r.next_u64();
    let y = (x >> 16) as usize;
    match x % 100 {
        0..=59 => y % 100,
        60..=84 => 100 + y % 2_000,
        85..=94 => 2_100 + y % 31_000,
        95..=97 => {
            const EDGES: [usize; 8] = [0, 1, 6, 7, 8, 32_754, 32_761, 32_768];
            EDGES[y % EDGES.len()] + y % 3
        }
        _ => 33_000 + y % 70_000,
    }
}

/// Byte `j` of record `i`.
fn round_trip_byte(i: u32, j: usize) -> u8 {
    let x = i.wrapping_mul(0x9e37_79b1) ^ (j as u32).wrapping_mul(0x85eb_ca77);
    (x ^ (x >> 15)) as u8
}

fn round_trip(ram: &mut Ram<'_>) -> TestResult {
    const RECORDS: u32 = 5_000;
    const MAX_BATCH: usize = 1_024;
    let mut offsets = [0u64; MAX_BATCH];
    let mut rng = XorShift::new(0x5eed);
    let mut next = 0u32;
    let mut batches = 0;
    let mut bytes = 0u64;
    while next < RECORDS {
        // Write a batch into the log buffer.
        let first = next;
        let mut pos = 0usize;
        let log = &mut *ram.log;
        let sink = FnSink(|chunk: &[u8]| {
            let dst = log.get_mut(pos..pos + chunk.len()).ok_or(())?;
            dst.copy_from_slice(chunk);
            pos += chunk.len();
            Ok::<(), ()>(())
        });
        let mut writer = Writer::new(sink, &mut *ram.block);
        let mut count = 0;
        while next < RECORDS && count < MAX_BATCH {
            let len = round_trip_len(next);
            if writer.end_after(len) > LOG as u64 {
                break;
            }
            let payload = &mut ram.scratch[..len];
            for (j, b) in payload.iter_mut().enumerate() {
                *b = round_trip_byte(next, j);
            }
            let written = match writer.add_record(payload) {
                Ok(w) => w,
                Err(e) => fail!("record {next}: {e:?}"),
            };
            offsets[count] = written.offset;
            count += 1;
            next += 1;
            if rng.below(16) == 0 && writer.flush().is_err() {
                fail!("flush");
            }
        }
        if writer.flush().is_err() {
            fail!("flush");
        }
        let end = writer.position() as usize;
        ensure!(pos == end, "sink got {pos} bytes, position {end}");
        bytes += end as u64;
        // Read it back.
        let mut reader = Reader::from_slice(&ram.log[..end], &mut *ram.scratch);
        let mut k = 0;
        loop {
            let Ok(item) = reader.next();
            let Some(item) = item else { break };
            let Item::Record(r) = item else {
                fail!("batch {batches}: {item:?}");
            };
            let i = first + k as u32;
            ensure!(k < count, "batch {batches}: extra record at {}", r.offset);
            ensure!(
                r.offset == offsets[k] && r.data.len() == round_trip_len(i),
                "record {i}: {} bytes at {}, wrote {} at {}",
                r.data.len(),
                r.offset,
                round_trip_len(i),
                offsets[k]
            );
            let same = r
                .data
                .iter()
                .enumerate()
                .all(|(j, &b)| b == round_trip_byte(i, j));
            ensure!(same, "record {i}: payload differs");
            k += 1;
        }
        ensure!(k == count, "batch {batches}: read {k} of {count} records");
        batches += 1;
    }
    ensure!(bytes > 4 * LOG as u64, "only {bytes} bytes of log");
    Ok(())
}
