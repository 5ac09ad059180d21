//! The power cuts the demo makes: where each strikes, what it leaves behind, and the byte of
//! flash a cut aimed at a record strikes at.

use core::fmt;

use logfmt_core::BLOCK_SIZE;
use logfmt_core::flash::PowerCut;
use logfmt_core::parts::ring::RING_HEADER_SIZE;

use super::REGION;

/// Where a planned power cut strikes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strike {
    /// In the middle of a record's bytes, while the flush after it programs them.
    MidRecord,
    /// In a flush of several records, where the third one begins.
    MidFlush,
    /// In the first record the rebooted logger writes (after the resume marker).
    AfterReboot,
    /// In a record that runs across a block boundary, just after the next block's ring
    /// header.
    AcrossBlocks,
    /// In the ring header at the start of the next block; `wrap`: of block 0, as a new lap
    /// begins.
    RingHeader {
        /// Block 0, after the wrap.
        wrap: bool,
    },
    /// In the erase ahead of the next block, in erase unit `unit` of it.
    Erase {
        /// The erase unit (of the block's eight) the power fails in.
        unit: u32,
    },
}

impl fmt::Display for Strike {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MidRecord => f.pad("mid-record"),
            Self::MidFlush => f.pad("mid-flush, between two records"),
            Self::AfterReboot => f.pad("mid-record, right after a reboot"),
            Self::AcrossBlocks => f.pad("mid-record, across a block boundary"),
            Self::RingHeader { wrap: true } => f.pad("in the ring header, at the wrap"),
            Self::RingHeader { wrap: false } => f.pad("in a block's ring header"),
            Self::Erase { .. } => f.pad("mid-erase (the erase ahead)"),
        }
    }
}

/// One planned power cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    /// Where it strikes.
    pub strike: Strike,
    /// What it leaves of the word (or erase unit) in flight.
    pub mode: PowerCut,
}

/// The name of a power-cut mode.
pub fn mode_name(mode: PowerCut) -> &'static str {
    match mode {
        PowerCut::Untouched => "Untouched",
        PowerCut::Partial => "Partial",
        PowerCut::Complete => "Complete",
        PowerCut::Arbitrary { .. } => "Arbitrary",
        PowerCut::EccError => "EccError",
    }
}

const fn cut(strike: Strike, mode: PowerCut) -> Cut {
    Cut { strike, mode }
}

/// The power cuts, in order. They are spread over the run (one falls due every
/// `LAPS * REGION / (PLAN.len() + 1)` bytes of log), but [`Strike::AfterReboot`] strikes in
/// the first flush after the reboot before it; cuts in erases and ring headers wait for the
/// next one.
pub const PLAN: [Cut; 13] = [
    cut(Strike::MidRecord, PowerCut::Partial),
    cut(Strike::MidFlush, PowerCut::Untouched),
    cut(
        Strike::Erase { unit: 3 },
        PowerCut::Arbitrary { seed: 0x5eed_0003 },
    ),
    cut(Strike::MidRecord, PowerCut::Arbitrary { seed: 0x5eed_0004 }),
    cut(Strike::AfterReboot, PowerCut::Untouched),
    cut(Strike::RingHeader { wrap: true }, PowerCut::Partial),
    cut(
        Strike::AcrossBlocks,
        PowerCut::Arbitrary { seed: 0x5eed_0007 },
    ),
    cut(Strike::Erase { unit: 0 }, PowerCut::Untouched),
    cut(Strike::MidFlush, PowerCut::Complete),
    cut(Strike::Erase { unit: 7 }, PowerCut::Partial),
    cut(Strike::MidRecord, PowerCut::Complete),
    cut(Strike::RingHeader { wrap: false }, PowerCut::Untouched),
    cut(
        Strike::Erase { unit: 5 },
        PowerCut::Arbitrary { seed: 0x5eed_000d },
    ),
];

/// A record laid out by the flush in progress: its sample and its place in the log unrolled
/// (laps counted).
#[derive(Debug, Clone, Copy, Default)]
pub struct Laid {
    /// The sample.
    pub sample: u32,
    /// Unrolled offset of its first chunk.
    pub offset: u64,
    /// Unrolled offset just past its last chunk.
    pub end: u64,
}

impl Laid {
    /// Whether the record lies in one block.
    pub fn in_one_block(&self) -> bool {
        let block = BLOCK_SIZE as u64;
        self.offset / block == (self.end - 1) / block
    }
}

/// The region offset a cut aimed at records strikes at, in the flush of `laid`, if this flush
/// has what the cut needs; `None` for cuts that wait for an erase or a ring header.
pub fn record_target(strike: Strike, laid: &[Laid]) -> Option<u32> {
    let block = BLOCK_SIZE as u64;
    let at = match strike {
        // The middle of the longest record that lies in one block.
        Strike::MidRecord => laid
            .iter()
            .filter(|l| l.in_one_block())
            .max_by_key(|l| l.end - l.offset)
            .map(|l| (l.offset + l.end) / 2)?,
        Strike::AfterReboot => laid
            .first()
            .filter(|l| l.in_one_block())
            .map(|l| (l.offset + l.end) / 2)?,
        // Where the third record begins.
        Strike::MidFlush => laid.get(2)?.offset,
        // Past the next block's ring header, in the chunk that goes on there.
        Strike::AcrossBlocks => {
            let l = laid.iter().find(|l| !l.in_one_block())?;
            let at = (l.offset / block + 1) * block + RING_HEADER_SIZE as u64 + 10;
            (at < l.end).then_some(at)?
        }
        Strike::RingHeader { .. } | Strike::Erase { .. } => return None,
    };
    Some((at % REGION as u64) as u32)
}
