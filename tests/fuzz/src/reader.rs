//! Target `reader`: the core reader over arbitrary bytes, at arbitrary initial offsets, buffer
//! sizes and option combinations.
//!
//! Input: a [`HEADER`]-byte header, then the log.
//!
//! | byte | meaning |
//! |---|---|
//! | 0 | flags: bit 0 checksums off, 1 skip ignorable types, 2 resync after zeros, 3–4 erased (`01` 0xFF, `10` 0x00), 5–6 format (`00` legacy, `01` recyclable, `10` auto, `11` auto with the log number), 7 tailing check |
//! | 1–8 | initial offset, u64 LE: below 2^63 taken modulo (log length + 2 blocks + 1), else as is |
//! | 9–10 | buffer size, u16 LE: 0 = as large as the log, n = 8·(n−1) bytes |
//! | 11 | the expected log number (recyclable / auto formats) |
//! | 12 | 0, or the largest read (bytes) of a short-reading `IoSource` pass |
//! | 13 | seed of the tailing pass's growth steps |
//! | 14–15 | reserved |
//!
//! Properties (any input): no panic, no hang; the output is sane ([`assert_sane`]: offsets
//! strictly increase from the initial offset, records inside the input, no byte returned or
//! dropped twice); `last_record_offset`/`last_record_end` follow every record; the end is
//! sticky and [`Reader::end`](logfmt_core::Reader::end) tells it; the [`Reader`](logfmt_core::Reader)
//! and the streaming [`FragmentReader`](logfmt_core::parts::FragmentReader) agree item for item (so a
//! record's data is exactly the concatenation of its fragments); a source that reads
//! 1..=k bytes at a time changes nothing; and a tailing reader fed the log in arbitrary steps
//! returns a prefix of what the plain reader returns — all of it when the log ends cleanly (for
//! damaged logs, with [`TAILING_DAMAGED_LOGS`]: the same records and dropped bytes).
#![allow(dead_code, unreachable_pub)]

use logfmt_core::parts::block::{BlockParser, ChunkRules, Parsed};
use logfmt_core::{BLOCK_SIZE, IoSource, LogEnd, ReadOptions, SliceSource, parts::ReadFormat};

use crate::common::{
    Dribble, Growing, Outcome, Rng, Seen, assert_sane, le, read_fragments, read_records,
};

/// Bytes of the input header.
pub const HEADER: usize = 16;

/// Whether the tailing pass also runs on damaged logs (a block cut short by damage, a zero or
/// an erased header). On since `tests/tests/regressions.rs::tailing_resumes_inside_a_dropped_block`
/// was fixed.
pub const TAILING_DAMAGED_LOGS: bool = true;

/// The decoded header.
#[derive(Debug, Clone)]
pub struct Params {
    pub options: ReadOptions,
    pub scratch: usize,
    pub dribble: usize,
    pub tail_seed: u8,
    pub tailing_check: bool,
}

/// Decodes the header for a log of `len` bytes.
pub fn params(header: &[u8], len: usize) -> Params {
    let flags = header.first().copied().unwrap_or(0);
    let raw_offset = u64::from_le_bytes(le(header, 1));
    let initial_offset = if raw_offset >> 63 == 0 {
        raw_offset % (len as u64 + 2 * BLOCK_SIZE as u64 + 1)
    } else {
        raw_offset
    };
    let raw_scratch = u16::from_le_bytes(le(header, 9));
    let scratch = match raw_scratch {
        0 => len,
        n => 8 * (usize::from(n) - 1),
    };
    let log_number = u32::from(header.get(11).copied().unwrap_or(0));
    let erased = match (flags >> 3) & 3 {
        1 => Some(0xFF),
        2 => Some(0x00),
        _ => None,
    };
    let format = match (flags >> 5) & 3 {
        0 => ReadFormat::Legacy,
        1 => ReadFormat::Recyclable { log_number },
        2 => ReadFormat::Auto { log_number: None },
        _ => ReadFormat::Auto {
            log_number: Some(log_number),
        },
    };
    let options = ReadOptions::new()
        .verify_checksums(flags & 1 == 0)
        .skip_ignorable_types(flags & 2 != 0)
        .resync_after_zeros(flags & 4 != 0)
        .erased(erased)
        .format(format)
        .initial_offset(initial_offset);
    Params {
        options,
        scratch,
        dribble: usize::from(header.get(12).copied().unwrap_or(0)),
        tail_seed: header.get(13).copied().unwrap_or(0),
        tailing_check: flags & 0x80 != 0,
    }
}

/// Checks one input.
pub fn check(data: &[u8]) {
    let (header, log) = data.split_at(data.len().min(HEADER));
    let p = params(header, log.len());
    check_log(log, &p);
}

/// Checks `log` read with `p`.
pub fn check_log(log: &[u8], p: &Params) {
    let len = log.len() as u64;
    let records = read_records(SliceSource::new(log), &p.options, p.scratch);
    assert_eq!(records.errors, 0);
    assert_sane(&records.items, len, p.options.initial_offset);
    check_end(&records, len);

    // The streaming reader: the same items, a record's data the concatenation of its fragments.
    let fragments = read_fragments(SliceSource::new(log), &p.options, p.scratch);
    assert_eq!(
        fragments.items, records.items,
        "FragmentReader and Reader differ"
    );
    assert_eq!(
        fragments.end, records.end,
        "FragmentReader and Reader end differently"
    );

    // Short reads change nothing.
    if p.dribble > 0 {
        let source = IoSource::new(
            Dribble::new(log, p.dribble, u64::from(p.tail_seed)),
            Box::new([0u8; BLOCK_SIZE]),
        );
        let dribbled = read_records(source, &p.options, p.scratch);
        assert_eq!(
            dribbled.items, records.items,
            "short reads change the items"
        );
        assert_eq!(dribbled.end, records.end, "short reads change the end");
    }

    if p.tailing_check {
        check_tailing(log, p, &records);
    }
}

/// The end of a log read to its end: `Reader::end` is set, and where it points is inside the
/// input (or at its end).
fn check_end(outcome: &Outcome, len: u64) {
    let end = outcome
        .end
        .expect("end() is known once next() returned None");
    match end {
        LogEnd::Clean { .. } | LogEnd::ReadError { .. } => {}
        LogEnd::Torn { offset, len: torn } => {
            assert!(offset < len, "{end:?} for a {len}-byte input");
            assert_eq!(offset + torn, len, "{end:?} for a {len}-byte input");
        }
        LogEnd::OldRecord { offset, .. } => assert!(offset < len, "{end:?}"),
        other => panic!("not expected here: {other:?}"),
    }
}

/// A tailing reader fed the log in steps returns a prefix of the plain reader's items; all of
/// them when the log ends cleanly.
fn check_tailing(log: &[u8], p: &Params, plain: &Outcome) {
    let mut rng = Rng(u64::from(p.tail_seed) << 8 | 0x5a);
    let options = p
        .options
        .clone()
        .tailing(true)
        .read_packs(false)
        .wal_compression(false);
    let step = |rng: &mut Rng| {
        let max = if rng.below(4) == 0 { 40_000 } else { 300 };
        1 + rng.below(max) as usize
    };
    // Damaged: a drop when read from the start, or a block cut short by a zero or erased
    // header or damage (which readers skip silently).
    let from_start = p.options.clone().initial_offset(0);
    let damaged = read_records(SliceSource::new(log), &from_start, p.scratch)
        .items
        .iter()
        .any(|s| matches!(s, Seen::Drop(_)))
        || !blocks_whole(log, &p.options);
    if damaged && !TAILING_DAMAGED_LOGS {
        return;
    }
    let first = step(&mut rng).min(log.len());
    let source = IoSource::new(Growing::new(log, first), Box::new([0u8; BLOCK_SIZE]));
    let mut buffer = vec![0u8; p.scratch];
    let mut reader = logfmt_core::Reader::with_options(source, &mut buffer, &options);
    let mut items = Vec::new();
    let mut rounds = 0;
    loop {
        while let Some(item) = reader.next().unwrap_or_else(|e| match e {}) {
            items.push(match item {
                logfmt_core::parts::Item::Record(r) => Seen::Record {
                    offset: r.offset,
                    end: r.end,
                    data: r.data.to_vec(),
                },
                logfmt_core::parts::Item::Corruption(c) => Seen::Drop(c),
                logfmt_core::parts::Item::Oversized(o) => Seen::Oversized(o),
                logfmt_core::parts::Item::Coded(pack) => panic!("a pack read at {}", pack.offset),
                other => panic!("not expected here: {other:?}"),
            });
            assert!(
                items.len() <= 2 * log.len() + 2,
                "tailing returns items without end"
            );
        }
        let growing = reader.get_mut().get_mut();
        if growing.visible >= log.len() {
            break;
        }
        growing.visible = (growing.visible + step(&mut rng)).min(log.len());
        rounds += 1;
        assert!(rounds <= log.len() + 1);
    }
    assert_sane(&items, log.len() as u64, p.options.initial_offset);
    if damaged {
        // The same records; the bytes of a block dropped while it was partly read are dropped
        // in more than one report (a tailing reader cannot take back a report it made).
        let records = |items: &[Seen]| -> Vec<Seen> {
            items
                .iter()
                .filter(|s| !matches!(s, Seen::Drop(_)))
                .cloned()
                .collect()
        };
        let (tail, full) = (records(&items), records(&plain.items));
        assert!(
            full.starts_with(&tail),
            "tailing records differ:\n tailing {tail:?}\n plain {full:?}"
        );
        // A flash image's rules decide at damage in a block only once the block is whole (what
        // follows may prove the bytes torn, padding or damage): a tailing reader waits there, and
        // at the end of the input it is still waiting.
        let waits_at_damage = p.options.erased.is_some();
        if matches!(plain.end, Some(LogEnd::Clean { .. })) && !waits_at_damage {
            assert_eq!(tail.len(), full.len(), "a tailing reader misses records");
            if p.options.initial_offset == 0 {
                let dropped = |items: &[Seen]| -> u64 {
                    items
                        .iter()
                        .map(|s| if let Seen::Drop(c) = s { c.bytes } else { 0 })
                        .sum()
                };
                assert_eq!(
                    dropped(&items),
                    dropped(&plain.items),
                    "dropped bytes differ"
                );
            }
        }
        return;
    }
    assert!(
        plain.items.starts_with(&items),
        "tailing items are not a prefix of the plain reader's:\n tailing {items:?}\n plain {:?}",
        plain.items
    );
    if matches!(plain.end, Some(LogEnd::Clean { .. })) {
        assert_eq!(
            items.len(),
            plain.items.len(),
            "a tailing reader misses items of a log that ends cleanly"
        );
    }
}

/// Whether every block of `log` parses to its end (or its trailer, or a torn chunk at the very
/// end of the input) under the legacy rules of `options`: nothing in it is skipped silently.
fn blocks_whole(log: &[u8], options: &ReadOptions) -> bool {
    if options.format != ReadFormat::Legacy {
        return false;
    }
    let mut rules = ChunkRules::default();
    rules.verify = options.verify_checksums;
    rules.erased = options.erased;
    log.chunks(BLOCK_SIZE).all(|block| {
        BlockParser::new(block).rules(rules).all(|parsed| {
            matches!(
                parsed,
                Parsed::Chunk(_) | Parsed::Trailer { .. } | Parsed::Truncated { .. }
            )
        })
    })
}
