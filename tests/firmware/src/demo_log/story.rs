//! What the demo prints: the setting, each lap, each power cut and the reboot after it, and the
//! summary at the end.

use super::board::Hit;
use super::check::{Expect, ReadBack};
use super::plan::{Laid, mode_name};
use super::{
    Ack, BLOCK_SIZE, BLOCKS, Console, CutReport, ERASE_SIZE, ERASED, FIRST_LAP, KEEP, MAX_BATCH,
    Outcome, PLAN, REGION, WRITE_SIZE,
};
use logfmt_core::parts::ring::RING_HEADER_SIZE;

/// The setting.
pub fn intro(out: &mut dyn Console) {
    say!(
        out,
        "NOR flash: {BLOCKS} blocks of 32 KiB ({} KiB), programmed in {WRITE_SIZE}-byte words, \
         erased in {} KiB units to 0x{ERASED:02X}",
        REGION / 1024,
        ERASE_SIZE / 1024
    );
    say!(
        out,
        "the log is a RING: FlashConfig::new(0, {REGION}).ring().first_lap({FIRST_LAP}) -- every \
         block begins with a 19-byte ring header (its lap, the records begun before it); \
         entering a block, the writer erases the next one ahead; the ring always keeps the \
         newest {} KiB of log",
        KEEP / 1024
    );
    say!(
        out,
        "a sensor logs a reading a second (~33 bytes) and a minute summary (~420 bytes) with \
         FlashWriter, and flushes after every 1 to {MAX_BATCH} samples: a sample is \
         acknowledged once that flush returns Ok"
    );
    say!(
        out,
        "{} power cuts are planned; after each the device reboots, reads the ring back \
         (FlashSource::ring + Reader) and reopens the log",
        PLAN.len()
    );
}

/// The first boot, the log beginning at region offset `position`.
pub fn first_boot(out: &mut dyn Console, position: u64) {
    say!(out, "");
    say!(
        out,
        "boot 1: FlashWriter::open finds an empty region: the log begins at offset {position}, \
         block 0, lap {FIRST_LAP}"
    );
}

/// A new lap began with sample `sample`.
pub fn new_lap(out: &mut dyn Console, lap: u32, sample: u32, acked: usize) {
    say!(
        out,
        "  lap {lap} begins{}: the log wraps to block 0 at sample {sample} ({acked} samples \
         acknowledged so far)",
        if lap == 0 {
            " (the 32-bit lap counter wrapped)"
        } else {
            ""
        }
    );
}

/// Cut number `number` struck.
pub fn power_cut(out: &mut dyn Console, number: usize, report: &CutReport, laid: &[Laid]) {
    say!(out, "");
    say!(
        out,
        "POWER CUT {number}: {} (PowerCut::{}), logging sample {}",
        report.cut.strike,
        mode_name(report.cut.mode),
        report.sample
    );
    let block = |at: u32| at / BLOCK_SIZE as u32;
    match report.hit {
        Hit::Program { from, to, at } => {
            let in_block = at % BLOCK_SIZE as u32;
            let record = laid.iter().find(|l| {
                let at = u64::from(at);
                let (o, e) = (l.offset % REGION as u64, l.end % REGION as u64);
                if o < e {
                    (o..e).contains(&at)
                } else {
                    at >= o || at < e
                }
            });
            let inside = if (in_block as usize) < RING_HEADER_SIZE {
                "the block's ring header"
            } else if record.is_some() {
                "a record"
            } else {
                "padding"
            };
            say!(
                out,
                "  a program of bytes {from}..{to} stops at byte {at} (block {}, +{in_block}), \
                 in {inside}{}",
                block(at),
                match record {
                    Some(l) if inside == "a record" => Sample(Some(*l)),
                    _ => Sample(None),
                }
            );
        }
        Hit::Erase { from, to, at } => say!(
            out,
            "  the erase ahead of block {} (bytes {from}..{to}) stops in its erase unit {} of {}: \
             the units before are erased, that one holds what the cut left, the rest the old \
             lap's bytes",
            block(from),
            (at - from) / ERASE_SIZE as u32,
            (to - from) / ERASE_SIZE as u32
        ),
    }
    say!(
        out,
        "  {} sample(s) in flight ({}..={}): not acknowledged",
        report.in_flight,
        report.sample + 1 - report.in_flight,
        report.sample
    );
}

/// The record a cut struck, for [`power_cut`].
struct Sample(Option<Laid>);

impl core::fmt::Display for Sample {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.0 {
            Some(l) => write!(
                f,
                " (sample {}, {} bytes of log at {})",
                l.sample,
                l.end - l.offset,
                l.offset % REGION as u64
            ),
            None => Ok(()),
        }
    }
}

/// Boot `boot` after a cut: the ring read back, and where the log goes on.
pub fn reboot(
    out: &mut dyn Console,
    boot: u32,
    read: &ReadBack,
    expect: &Expect<'_>,
    report: &CutReport,
    position: u64,
) {
    let sample_at = |k: usize| expect.acks.get(k).map_or(0, |a| a.sample);
    say!(
        out,
        "boot {boot}: the ring reads back from block {} to block {} (lap {}): {} records, samples \
         {}..={}; every acknowledged one from sample {} on (it had to keep those from {}); {} of \
         the {} in flight survived whole{}",
        read.oldest,
        read.head,
        read.lap,
        read.records,
        read.first_sample.unwrap_or(0),
        read.last_sample.unwrap_or(0),
        sample_at(read.first_ack.unwrap_or(0)),
        sample_at(expect.must),
        read.survived,
        report.in_flight,
        if read.tail_report {
            " (a torn chunk is reported at the log's end, until the log goes on past it)"
        } else {
            ""
        }
    );
    say!(
        out,
        "  FlashWriter::open goes on at offset {position} (block {}): {} bytes after the last \
         record on the flash, in {}",
        position / BLOCK_SIZE as u64 % BLOCKS as u64,
        report.lost,
        if report.same_block {
            "the same block"
        } else {
            "the next block"
        }
    );
}

/// The end of the story.
pub fn summary(out: &mut dyn Console, outcome: &Outcome, read: &ReadBack, acks: &[Ack]) {
    let sample_at = |k: usize| acks.get(k).map_or(0, |a| a.sample);
    let first = outcome.first_retained;
    say!(out, "");
    say!(out, "---- the story ----");
    say!(
        out,
        "{} samples logged, {} acknowledged; the ring wrapped {} times: lap {FIRST_LAP} -> {} \
         (the 32-bit lap counter went through 0)",
        outcome.samples,
        outcome.acked,
        outcome.laps,
        outcome.lap
    );
    say!(
        out,
        "{} power cuts, each followed by a reboot that read the ring back and reopened the log:",
        PLAN.len()
    );
    say!(
        out,
        "   #  where it hit                          mode        at byte  in flight  survived  \
         lost at reboot  went on in"
    );
    for (i, report) in outcome.cuts.iter().flatten().enumerate() {
        say!(
            out,
            "  {:>2}  {:<36}  {:<10}  {:>7}  {:>9}  {:>8}  {:>12} B  {}",
            i + 1,
            report.cut.strike,
            mode_name(report.cut.mode),
            report.hit.at(),
            report.in_flight,
            report.survived,
            report.lost,
            if report.same_block {
                "the same block"
            } else {
                "the next block"
            }
        );
    }
    let reports = || outcome.cuts.iter().flatten();
    say!(
        out,
        "  in all: {} samples in flight at the cuts ({} survived whole); {} bytes of flash left \
         unused by the {} reboots",
        reports().map(|r| r.in_flight).sum::<u32>(),
        reports().map(|r| r.survived).sum::<u32>(),
        reports().map(|r| r.lost).sum::<u32>(),
        PLAN.len()
    );
    say!(
        out,
        "flash work: {} erases ({} KiB), {} programs ({} KiB); {} KiB of log erased ahead (aged \
         out)",
        outcome.stats.erases,
        outcome.stats.erased_bytes / 1024,
        outcome.stats.programs,
        outcome.stats.programmed_bytes / 1024,
        outcome.stats.aged_out_bytes / 1024
    );
    say!(
        out,
        "aged out: the {first} oldest acknowledged samples (those before sample {}); the \
         oldest block's ring header counts {} records begun before it (in-flight ones that \
         reached the flash included)",
        sample_at(first),
        read.aged_out
    );
    say!(
        out,
        "retained (FlashSource::ring + Reader): {} records in blocks {} to {} (lap {}): the \
         newest {} acknowledged samples, {}..={}, in order, with {} sample(s) in flight at a cut \
         that survived whole among them; nothing else",
        read.records,
        read.oldest,
        read.head,
        read.lap,
        acks.len() - first,
        sample_at(first),
        sample_at(acks.len().saturating_sub(1)),
        read.in_flight
    );
    say!(
        out,
        "the ring had to keep the acknowledged samples from {} on (the newest {} KiB of log); \
         it keeps {} older ones too",
        sample_at(outcome.must_keep),
        KEEP / 1024,
        outcome.must_keep.saturating_sub(first)
    );
}
