//! What the reading commands read: a log file, in file order, or a ring image (a dump of a
//! flash region holding a ring log), from its oldest block to its newest.
//!
//! A file is a ring image when its blocks carry ring headers (std finds the ring:
//! [`LogFile::ring`]); then the erased value comes from the headers, the blocks are read in
//! the ring's order, and every offset shown is an offset in the image.

use std::io;
use std::path::Path;

use logfmt_std::{
    Damage, LogFile,
    advanced::{
        BlockSource, EscapedPath, LogBytes, ReadOptions, Reread, RingImage, RingSource, StdSource,
    },
};

use crate::error::CliError;
use crate::options::Erased;

/// A log opened to read it, and the ring it holds if it is a ring image.
#[derive(Debug)]
pub(crate) struct Input {
    pub(crate) log: LogFile,
    pub(crate) ring: Option<RingImage>,
}

impl Input {
    /// Opens `path` and looks for a ring in it. `--erased` must agree with a ring's headers.
    pub(crate) fn open(path: &Path, erased: Option<Erased>) -> Result<Self, CliError> {
        let log = LogFile::open(path)?;
        let ring = log.ring()?;
        if let (Some(ring), Some(flag)) = (&ring, erased)
            && flag.byte() != ring.erased()
        {
            return Err(CliError::Usage(format!(
                "{}: its ring headers say erased flash reads {:#04x}, not {:#04x} (--erased)",
                EscapedPath::new(path),
                ring.erased(),
                flag.byte()
            )));
        }
        Ok(Self { log, ring })
    }

    /// What in a ring image disagrees with its ring ([`RingImage::disagreements`]), one line
    /// each on standard error: what reads it in the ring's order says so, never resolving it
    /// silently.
    pub(crate) fn say_disagreements(&self) {
        for disagreement in self.ring.iter().flat_map(RingImage::disagreements) {
            crate::cmd::say(self.log.path(), &format!("ring image: {disagreement}"));
        }
    }

    /// The erased value to read with: a ring's, or `--erased`.
    pub(crate) fn erased(&self, flag: Option<Erased>) -> Option<u8> {
        match &self.ring {
            Some(ring) => Some(ring.erased()),
            None => flag.map(Erased::byte),
        }
    }

    /// `read` for this input: a ring is read from the middle of its log (see
    /// [`RingImage::read_options`]).
    pub(crate) fn read_options(&self, read: ReadOptions) -> ReadOptions {
        match &self.ring {
            Some(ring) => ring.read_options(read),
            None => read,
        }
    }

    /// Refuses file positions (`--offset`, `--range`) for a ring image: it is read from its
    /// oldest block, not from a position in the file.
    pub(crate) fn refuse_positions(&self, offset: u64, range: bool) -> Result<(), CliError> {
        if self.ring.is_some() && (offset != 0 || range) {
            return Err(CliError::Usage(format!(
                "{} is a ring image, read from its oldest block to its newest: --offset and \
                 --range do not apply (`logfmt export` turns it into a plain log)",
                EscapedPath::new(self.log.path())
            )));
        }
        Ok(())
    }

    /// The blocks to read: the file's (up to its length when it was opened), or the ring's in
    /// order.
    pub(crate) fn source(&self) -> Result<Source<'_>, CliError> {
        Ok(match &self.ring {
            Some(ring) => Source::Ring(self.log.ring_source(ring)?),
            None => Source::Log(self.log.source()),
        })
    }

    /// The blocks of a log that a writer appends to, read to its end as it grows (`cat
    /// --follow`); a ring's as [`source`](Self::source).
    pub(crate) fn growing_source(&self) -> Result<Source<'_>, CliError> {
        Ok(match &self.ring {
            Some(ring) => Source::Ring(self.log.ring_source(ring)?),
            None => Source::Log(self.log.growing_source()),
        })
    }

    /// File offset of `offset` as a reader of [`source`](Self::source) reports it.
    pub(crate) fn offset(&self, offset: u64) -> u64 {
        self.ring
            .as_ref()
            .map_or(offset, |ring| ring.region_offset(offset))
    }

    /// `damage` a reader of [`source`](Self::source) reported, at file offsets.
    pub(crate) fn damage(&self, damage: Damage) -> Damage {
        self.ring
            .as_ref()
            .map_or(damage, |ring| ring.region_damage(damage))
    }

    /// File offset of the `place`-th block read (from 0).
    pub(crate) fn block_offset(&self, place: u64) -> u64 {
        self.offset(place * logfmt_std::advanced::BLOCK_SIZE as u64)
    }
}

/// The blocks of an [`Input`].
#[derive(Debug)]
pub(crate) enum Source<'a> {
    /// A log file, in file order.
    Log(StdSource<LogBytes<'a>>),
    /// A ring image, in the ring's order.
    Ring(RingSource<Reread<'a>>),
}

impl BlockSource for Source<'_> {
    type Error = io::Error;

    fn load_next(&mut self) -> io::Result<()> {
        match self {
            Self::Log(source) => source.load_next(),
            Self::Ring(source) => source.load_next(),
        }
    }

    fn block(&self) -> &[u8] {
        match self {
            Self::Log(source) => source.block(),
            Self::Ring(source) => source.block(),
        }
    }

    fn skip(&mut self, bytes: u64) -> io::Result<()> {
        match self {
            Self::Log(source) => source.skip(bytes),
            Self::Ring(source) => source.skip(bytes),
        }
    }

    fn refill(&mut self) -> io::Result<bool> {
        match self {
            Self::Log(source) => source.refill(),
            Self::Ring(source) => source.refill(),
        }
    }

    fn is_last(&self) -> bool {
        match self {
            Self::Log(source) => source.is_last(),
            Self::Ring(source) => source.is_last(),
        }
    }
}
