//! Reading the ring back, as a reboot would, with the library's ring reader — and checking it
//! against what the log was given: the newest acknowledged records, consecutive and in place,
//! and nothing else but records in flight at a cut.

use core::cell::RefCell;

use logfmt_core::flash::{FlashConfig, FlashSource};
use logfmt_core::{BLOCK_SIZE, ReadOptions, Reader, parts::Item};

use super::board::{Board, Shared};
use super::sample::sample_of;
use super::{Ack, DemoError, REGION};

/// `region` (a region offset, or `REGION` for the region's end) as an offset of the log
/// unrolled (laps counted): no smaller than `base`, less than a lap after it.
pub fn unroll(base: u64, region: u64) -> u64 {
    let lap = REGION as u64;
    base + (region % lap + lap - base % lap) % lap
}

/// The block holding the byte before region offset `end`: the block a log ending there ends
/// in.
pub fn block_of_end(end: u64) -> u64 {
    (end.max(1) - 1) / BLOCK_SIZE as u64 % (REGION / BLOCK_SIZE) as u64
}

/// The reader's buffers.
pub struct Tools<'b> {
    /// The block the ring source reads into.
    pub block: &'b mut [u8; BLOCK_SIZE],
    /// Where records that span chunks are assembled.
    pub scratch: &'b mut [u8],
}

/// What a check of the ring expects.
pub struct Expect<'a> {
    /// The acknowledged samples, in log order.
    pub acks: &'a [Ack],
    /// The samples in flight at the cuts.
    pub in_flight: &'a [Ack],
    /// The oldest acknowledged record (its index) the ring must still hold.
    pub must: usize,
    /// In-flight samples from this one on are the last cut's.
    pub since: u32,
    /// A torn write may be reported at the log's end (before the log goes on past it).
    pub tail_ok: bool,
}

impl<'a> Expect<'a> {
    /// What the ring must hold if the log ends at `end` (unrolled): every acknowledged record
    /// that starts in the newest `keep` bytes.
    pub fn new(acks: &'a [Ack], in_flight: &'a [Ack], end: u64, keep: u64) -> Self {
        Self {
            acks,
            in_flight,
            must: acks.partition_point(|a| u64::from(a.position) + keep < end),
            since: u32::MAX,
            tail_ok: false,
        }
    }
}

/// What reading the ring back found.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadBack {
    /// Records read.
    pub records: usize,
    /// Of those, samples in flight at a cut.
    pub in_flight: usize,
    /// In-flight records read from [`Expect::since`] on: the last cut's that survived.
    pub survived: u32,
    /// Index of the oldest acknowledged record read (if any).
    pub first_ack: Option<usize>,
    /// The oldest sample read.
    pub first_sample: Option<u32>,
    /// The newest.
    pub last_sample: Option<u32>,
    /// Unrolled end of the last record read.
    pub last_end: u64,
    /// A report at the log's end (a torn write not yet followed by a resume marker).
    pub tail_report: bool,
    /// The oldest block read.
    pub oldest: u32,
    /// The newest (the head).
    pub head: u32,
    /// The head's lap.
    pub lap: u32,
    /// Records begun before the oldest block, from its ring header.
    pub aged_out: u32,
}

/// Reads the ring in region `config` back with [`FlashSource::ring`] and a [`Reader`] (erased
/// value, `starts_mid_log`) and checks it against `expect`: the acknowledged records read are
/// consecutive, from [`Expect::must`] or earlier to the last one, each where it was written;
/// the other records only samples in flight at a cut; all in order; no damage reported (but
/// for a torn write at the log's end if [`Expect::tail_ok`]).
///
/// # Errors
/// [`DemoError`] says what differs.
pub fn read_back(
    board: &RefCell<Board<'_>>,
    config: FlashConfig,
    tools: &mut Tools<'_>,
    expect: &Expect<'_>,
) -> Result<ReadBack, DemoError> {
    let source = FlashSource::ring(Shared(board), config, &mut *tools.block)?;
    let mut found = ReadBack {
        aged_out: source.aged_out_records().unwrap_or(0),
        ..ReadBack::default()
    };
    if let Some(ring) = source.ring_order() {
        (found.head, found.lap) = (ring.head(), ring.lap());
    }
    found.oldest = (source.region_offset(0) / BLOCK_SIZE as u64) as u32;
    let options = ReadOptions::new()
        .erased(Some(config.erased))
        .starts_mid_log(true);
    let mut reader = Reader::with_options(source, &mut *tools.scratch, &options);
    let base = expect.acks.last().map_or(0, |a| u64::from(a.position));
    let mut next_ack = None;
    let mut report = None;
    while let Some(item) = reader.next()? {
        let (offset, end, sample) = match item {
            Item::Record(r) => (r.offset, r.end, sample_of(r.data)),
            Item::Corruption(c) => {
                report.get_or_insert(c.offset);
                continue;
            }
            Item::Oversized(o) => {
                report.get_or_insert(o.offset);
                continue;
            }
            Item::Coded(pack) => {
                report.get_or_insert(pack.offset);
                continue;
            }
            // An item of a later version: reported where the reader stands.
            _ => {
                report.get_or_insert(reader.position());
                continue;
            }
        };
        if let Some(at) = report {
            return Err(DemoError::Damage { offset: at });
        }
        let region = reader.get_ref().region_offset(offset);
        let unexpected = DemoError::Unexpected { offset: region };
        let Some(n) = sample else {
            return Err(unexpected);
        };
        if found.last_sample.is_some_and(|last| n <= last) {
            return Err(unexpected);
        }
        if let Ok(k) = expect.acks.binary_search_by_key(&n, |a| a.sample) {
            let ack = expect.acks.get(k).copied().unwrap_or_default();
            if let Some(want) = next_ack
                && k != want
            {
                let sample = expect.acks.get(want).map_or(n, |a| a.sample);
                return Err(DemoError::Missing { sample });
            }
            if u64::from(ack.offset) != region {
                return Err(DemoError::Moved {
                    sample: n,
                    written: ack.offset,
                    read: region,
                });
            }
            found.first_ack.get_or_insert(k);
            next_ack = Some(k + 1);
        } else if expect.in_flight.iter().any(|a| a.sample == n) {
            found.in_flight += 1;
            found.survived += u32::from(n >= expect.since);
        } else {
            return Err(unexpected);
        }
        found.records += 1;
        found.first_sample.get_or_insert(n);
        found.last_sample = Some(n);
        found.last_end = unroll(base, reader.get_ref().region_offset(end));
    }
    if let Some(at) = report {
        if !expect.tail_ok {
            return Err(DemoError::Damage { offset: at });
        }
        found.tail_report = true;
    }
    // Every acknowledged record from the first read to the newest.
    let missing = match next_ack {
        Some(k) => expect.acks.get(k),
        None => expect.acks.last(),
    };
    if let Some(missing) = missing {
        return Err(DemoError::Missing {
            sample: missing.sample,
        });
    }
    if let Some(must) = expect.acks.get(expect.must)
        && found.first_ack.is_none_or(|first| first > expect.must)
    {
        return Err(DemoError::NotKept {
            sample: must.sample,
            first: found.first_sample.unwrap_or(u32::MAX),
        });
    }
    Ok(found)
}
