//! What the reading commands read: a log file, in file order, or a ring image (a dump of a
//! flash region holding a ring log), from its oldest block to its newest.
//!
//! A file is a ring image when its blocks carry ring headers (std finds the ring:
//! [`LogFile::ring`]); then the erased value comes from the headers, the blocks are read in
//! the ring's order, and every offset shown is an offset in the image.

use std::io::{self, Write};
use std::path::Path;
use std::time::Instant;

use logfmt_std::{
    Damage, LogFile,
    advanced::{
        BlockSource, EscapedPath, LogBytes, ReadOptions, Reread, RingDisagreement, RingImage,
        RingSource, StdSource,
    },
};
use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::erased::Erased;
use crate::error::CliError;
use crate::render::Report;

/// Something in a ring image that disagrees with its ring, told on standard error whatever
/// the verbosity: `logfmt: FILE: ring image: what`. In JSON: {"file", "disagreement"}, the
/// second the text after "ring image: ".
pub(crate) struct Disagreement<'a> {
    /// The image.
    pub(crate) file: &'a Path,
    /// What disagrees.
    pub(crate) disagreement: RingDisagreement,
}

impl Serialize for Disagreement<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut doc = serializer.serialize_struct("Disagreement", 2)?;
        doc.serialize_field("file", &self.file.to_string_lossy())?;
        doc.serialize_field("disagreement", &self.disagreement.to_string())?;
        doc.end()
    }
}

impl Report for Disagreement<'_> {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        let path = EscapedPath::new(self.file);
        writeln!(out, "logfmt: {path}: ring image: {}", self.disagreement)
    }
}

/// A log opened to read it, and the ring it holds if it is a ring image.
#[derive(Debug)]
pub(crate) struct Input {
    pub(crate) log: LogFile,
    pub(crate) ring: Option<RingImage>,
    /// When it was opened: with `--verbose`, the time it took is said when it is closed.
    opened: Instant,
}

/// With `--verbose`, says how long the file was open and how fast it was read: the
/// command's whole work on it, from opening it to closing it.
impl Drop for Input {
    fn drop(&mut self) {
        if crate::notes::verbose() {
            let seconds = self.opened.elapsed().as_secs_f64();
            let bytes = self.log.len_at_open();
            // Bytes per second, in MiB, for a file of a MiB or more (a smaller one's rate
            // says nothing).
            let rate = (seconds > 0.0 && bytes >= 1 << 20)
                .then(|| bytes as f64 / seconds / f64::from(1 << 20));
            let rate = rate.map_or(String::new(), |rate| format!(" ({rate:.1} MiB/s)"));
            crate::notes::detail(self.log.path(), &format!("done in {seconds:.3} s{rate}"));
        }
    }
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
        crate::notes::detail(path, &describe(&log, ring.as_ref()));
        Ok(Self {
            log,
            ring,
            opened: Instant::now(),
        })
    }

    /// What in a ring image disagrees with its ring ([`RingImage::disagreements`]), one line
    /// each on standard error: what reads it in the ring's order says so, never resolving it
    /// silently.
    pub(crate) fn say_disagreements(&self) {
        for disagreement in self.ring.iter().flat_map(RingImage::disagreements) {
            crate::render::warn(&Disagreement {
                file: self.log.path(),
                disagreement,
            });
        }
    }

    /// The error of `--recovery absolute` stopping at the damage `first` (a reader's offset);
    /// `after` says what became of the output.
    pub(crate) fn stopped_at_damage(&self, first: Damage, after: &'static str) -> CliError {
        let error = logfmt_std::Error::Damaged {
            path: self.log.path().into(),
            first: self.damage(first),
            count: 1,
        };
        CliError::Hinted(error, after)
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

    /// How `chunks` and `stats` read this input's chunk headers: `--erased` (a ring image's
    /// erased value) and the format flags, decided as the reader decides them.
    pub(crate) fn chunk_read(
        &self,
        erased: Option<Erased>,
        format: &crate::format::FormatArgs,
    ) -> Result<ReadOptions, CliError> {
        let read = ReadOptions::new().erased(self.erased(erased));
        Ok(self.read_options(format.read_options(&self.log, read)?))
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

/// What `--verbose` says of a file it opens: its size, and the ring a ring image holds.
fn describe(log: &LogFile, ring: Option<&RingImage>) -> String {
    let bytes = crate::notes::plural(log.len_at_open(), "byte");
    match ring {
        None => format!("{bytes}, a log file (no ring headers)"),
        Some(image) => format!(
            "{bytes}, a ring image of {} ({} per erase group), erased flash {:#04x}, \
             read from its oldest block {} to its newest {}",
            crate::notes::plural(u64::from(image.ring().blocks()), "block"),
            image.ring().group(),
            image.erased(),
            image.oldest(),
            image.ring().head(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::{Rendering, render};

    #[test]
    fn a_disagreement_is_one_warning_line_and_one_json_object() {
        let note = Disagreement {
            file: Path::new("flash.bin"),
            disagreement: RingDisagreement::Outside {
                index: 9,
                blocks: 8,
            },
        };
        let what = note.disagreement.to_string();
        let mut text = Vec::new();
        render(&mut text, &note, Rendering::Text).expect("memory");
        assert_eq!(
            String::from_utf8(text).expect("UTF-8"),
            format!("logfmt: flash.bin: ring image: {what}\n")
        );
        let mut json = Vec::new();
        render(&mut json, &note, Rendering::Json).expect("memory");
        assert_eq!(
            String::from_utf8(json).expect("UTF-8"),
            format!("{{\"file\": \"flash.bin\", \"disagreement\": \"{what}\"}}\n")
        );
    }
}
