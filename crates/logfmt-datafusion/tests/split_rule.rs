//! The split rule of `logfmt_std` itself (`par_scan`), on the logs of `table.rs`.

mod common;

use common::Rng;
use logfmt_std::{
    LogReaderOptions, RecoveryMode,
    advanced::{Entry, LogReader, par_scan},
};

fn damage(log: &[u8], ranges: Option<&[std::ops::Range<u64>]>) -> Vec<String> {
    let options = LogReaderOptions::new().recovery(RecoveryMode::SkipAnyCorruptedRecords);
    let read = |mut reader: LogReader<logfmt_std::advanced::SliceSource<'_>>| {
        let mut out = Vec::new();
        while let Some(entry) = reader.next().unwrap() {
            if let Entry::Damage(d) = entry {
                out.push(format!("{d} ({:?})", d.kind));
            }
        }
        out
    };
    match ranges {
        None => read(LogReader::from_slice(log, &options)),
        Some(ranges) => par_scan(log, &options, ranges, |_, r| read(r)).concat(),
    }
}

/// `logfmt_std`'s range readers report every drop exactly once — a damaged continuation
/// chunk at the start of a range's first block (a `LAST` whose start was dropped in the block
/// before) by the range before — in an order of their own: by offset, the two reads agree.
/// (The damage table still reads each file whole: its rows then come in the sequential
/// order.)
#[test]
fn damage_at_a_range_start() {
    let clean = common::write_vec(
        &logfmt_std::LogWriterOptions::new()
            .pack(Some(logfmt_std::advanced::PackLimit::bytes(2000))),
        &common::records(11, 600, 900),
    );
    let mut rng = Rng(5);
    for round in 0..24 {
        let mut log = clean.clone();
        for _ in 0..(1 + round % 6) {
            let at = rng.below(log.len() as u64) as usize;
            log[at] = rng.next() as u8;
        }
        if round % 4 == 1 {
            log.truncate(rng.below(log.len() as u64) as usize);
        }
        let len = log.len() as u64;
        let blocks: Vec<_> = (0..len.div_ceil(32768))
            .map(|b| b * 32768..((b + 1) * 32768).min(len))
            .collect();
        let mut whole = damage(&log, None);
        let mut split = damage(&log, Some(&blocks));
        let offset = |line: &String| {
            line.split(" at offset ")
                .nth(1)
                .and_then(|rest| rest.split(':').next())
                .and_then(|n| n.parse::<u64>().ok())
        };
        whole.sort_by_key(offset);
        split.sort_by_key(offset);
        assert_eq!(split, whole, "round {round}");
    }
}
