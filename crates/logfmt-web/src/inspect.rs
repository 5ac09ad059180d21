//! One pass over a file with the `logfmt` reader: the counts, the damage, the map, the first
//! records; and the key search, a second pass.

use std::io::{self, Read, Seek, SeekFrom};

use logfmt_core::{
    BlockSource, ReadOptions,
    parts::{Dialect, ReadFormat},
};
use logfmt_std::layout::Survey;
use logfmt_std::{
    LogReaderOptions, RecoveryMode,
    advanced::{
        Bounded, LogReader, RingImage, StaleTail, StdSource, detect_format, implied_dialect,
        pebble_end, recovery_in, scan_dialect,
    },
};

use crate::content::{self, ContentKind, describe, holds_key};
use crate::feed::Feed;
use crate::report::{Corruption, Hit, PebbleSynced, RecordView, Report, RingView, Tail};
use crate::{ReadAt, Window};
use logfmt_std::layout::gloss;

/// What an inspection keeps and how it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// Records listed (the rest are counted). Default 200.
    pub max_records: usize,
    /// Corruptions listed (the rest are counted). Default 1000.
    pub max_damage: usize,
    /// Search hits returned. Default 100.
    pub max_hits: usize,
    /// The largest record assembled in memory; a larger one is counted, not kept. Default
    /// 4 MiB.
    pub record_limit: usize,
    /// What the records hold.
    pub content: ContentKind,
    /// How chunks are read: LevelDB's rules by default (a ring image's erased value is found
    /// from its headers).
    pub read: ReadOptions,
    /// How the dialect of a plain log is found, as `logfmt` finds it. Default
    /// [`FindDialect::FirstChunk`].
    pub find_dialect: FindDialect,
}

/// How an inspection finds whose log it reads (`read`'s dialect otherwise), as the `logfmt`
/// command line does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum FindDialect {
    /// The dialect of [`Options::read`], as given (`--format leveldb`, `rocksdb`, `pebble`).
    Given,
    /// With no dialect named: Pebble's for a log whose first chunk is a Pebble WAL-sync
    /// chunk ([`implied_dialect`]), else `read`'s (`logfmt` with no `--format`).
    #[default]
    FirstChunk,
    /// What the whole log shows ([`scan_dialect`]; `--format auto`).
    WholeLog,
}

impl Options {
    /// These options for the plain log `file` (positioned at its start, and put back there):
    /// the dialect found as [`find_dialect`](Self::find_dialect) says, and a Pebble log's
    /// chunk format decided by its first chunk.
    fn for_log<R: Read + Seek>(&self, file: &mut R) -> io::Result<Self> {
        let found = match self.find_dialect {
            FindDialect::Given => None,
            FindDialect::FirstChunk => {
                implied_dialect(StdSource::seekable(&mut *file))?.map(|found| found.dialect())
            }
            FindDialect::WholeLog => {
                Some(scan_dialect(StdSource::seekable(&mut *file), None)?.dialect())
            }
        };
        file.seek(SeekFrom::Start(0))?;
        let mut options = self.clone();
        if let Some(dialect) = found {
            options.read = options.read.dialect(dialect);
            if dialect == Dialect::Pebble {
                options.read = options.read.format(ReadFormat::Auto { log_number: None });
            }
        }
        // A format left to the log is decided by its first chunk, as `logfmt` decides it
        // before reading (the log number Pebble's synced offsets are read with).
        if let ReadFormat::Auto { log_number } = options.read.format {
            let decided =
                detect_format(StdSource::seekable(&mut *file), &options.read, log_number)?;
            file.seek(SeekFrom::Start(0))?;
            if let Some(format) = decided {
                options.read = options.read.format(format);
            }
        }
        Ok(options)
    }

    /// The dialect a plain log is read in, by name, where it is not logfmt's own reading.
    fn dialect_name(&self) -> Option<&'static str> {
        (self.read.dialect != Dialect::Logfmt).then(|| self.read.dialect.name())
    }
}

impl Default for Options {
    fn default() -> Self {
        Self {
            max_records: 200,
            max_damage: 1000,
            max_hits: 100,
            record_limit: 4 << 20,
            content: ContentKind::Raw,
            read: ReadOptions::default(),
            find_dialect: FindDialect::default(),
        }
    }
}

/// Reads `file` (of `len` bytes) as `logfmt verify` reads it — a ring image from its oldest
/// block to its newest — and reports what it holds. Memory is bounded by the options, not by
/// the file: a record is kept only up to [`Options::record_limit`], and the lists stop at
/// their maximum (their totals go on).
///
/// # Errors
/// Only an error seeking the file; a failed read ends the log with LevelDB's report of it, as
/// the command line does.
pub fn inspect<R: Read + Seek>(mut file: R, len: u64, options: &Options) -> io::Result<Report> {
    let ring = RingImage::read(&mut file, len)?;
    file.seek(SeekFrom::Start(0))?;
    if let Some(ring) = ring {
        return Ok(inspect_ring(file, len, ring, options));
    }
    let options = &options.for_log(&mut file)?;
    let mut scan = Scan::new(len, options, None);
    let mut reader = LogReader::new(StdSource::seekable(file), &log_options(options));
    scan.read_on(&mut reader, |_| false);
    scan.stale(&mut reader)?;
    let mut file = reader.into_inner().into_inner();
    scan.pebble_end(&mut file)?;
    scan.zero_fill(|offset, bytes| all_zero(&mut file, offset, bytes))?;
    Ok(scan.finish())
}

/// A ring image, read from its oldest block to its newest.
fn inspect_ring<R: Read + Seek>(file: R, len: u64, ring: RingImage, options: &Options) -> Report {
    let read = ring.read_options(options.read.clone());
    let mut reader = LogReader::new(ring.source(file), &LogReaderOptions::new().read(read));
    let mut scan = Scan::new(len, options, Some(ring));
    scan.read_on(&mut reader, |_| false);
    scan.finish()
}

/// How a plain log (not a ring image) is read: as `logfmt verify` reads it (read as Pebble's,
/// stopping at the first damage).
fn log_options(options: &Options) -> LogReaderOptions {
    let recovery = recovery_in(
        RecoveryMode::TolerateCorruptedTailRecords,
        options.read.dialect,
    );
    LogReaderOptions::new()
        .read(options.read.clone())
        .recovery(recovery)
}

/// Whether the `bytes` bytes of `file` at `offset` are all zero (reading them again).
fn all_zero<R: Read + Seek>(file: &mut R, offset: u64, bytes: u64) -> io::Result<bool> {
    file.seek(SeekFrom::Start(offset))?;
    let mut rest = file.take(bytes);
    let mut buffer = vec![0u8; 64 << 10];
    loop {
        let n = rest.read(&mut buffer)?;
        if n == 0 {
            return Ok(true);
        }
        if buffer[..n].iter().any(|&b| b != 0) {
            return Ok(false);
        }
    }
}

/// An inspection of a file handed over in slices, in order, as the page reads it: the report
/// of [`inspect`], with the reader pausing at the end of each slice instead of waiting for a
/// read, so that the next slice can be read while it scans this one. A ring image (read in
/// its ring's order, not the file's) is read whole through the source when the inspection is
/// made; so are the bytes a record longer than what is held needs before they are handed over.
///
/// ```
/// use logfmt_core::{BLOCK_SIZE, FnSink, Writer};
/// use logfmt_web::{Inspection, Options};
///
/// let mut log = Vec::new();
/// let mut writer = Writer::new(
///     FnSink(|bytes: &[u8]| Ok::<(), std::convert::Infallible>(log.extend_from_slice(bytes))),
///     [0u8; BLOCK_SIZE],
/// );
/// for i in 0..100u32 {
///     writer.add_record(format!("record {i}").repeat(100).as_bytes()).unwrap();
/// }
/// writer.flush().unwrap();
/// let _ = writer.into_parts();
///
/// let source = |at: u64, len: usize| Ok(log[at as usize..(at as usize + len).min(log.len())].to_vec());
/// let mut inspection = Inspection::new(source, log.len() as u64, &Options::default(), 1 << 20)?;
/// while let Some(at) = inspection.wants() {
///     let slice = &log[at as usize..(at as usize + 50_000).min(log.len())];
///     inspection.push(at, slice)?;
/// }
/// let report = inspection.finish()?;
/// assert_eq!(report.records, 100);
/// assert!(report.corruptions.is_empty());
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct Inspection<R> {
    scan: Scan,
    /// The reader of a plain log; `None` for a ring image, read when the inspection was made.
    reader: Option<LogReader<Feed<R>>>,
    ended: bool,
}

impl<R: ReadAt> Inspection<R> {
    /// An inspection of a file of `len` bytes; `source` reads bytes not handed over — the
    /// first bytes, to tell a ring image, a ring image whole (`slice` bytes a read), and what
    /// a long record needs before it is handed over.
    ///
    /// # Errors
    /// An error reading a ring image's headers.
    pub fn new(mut source: R, len: u64, options: &Options, slice: usize) -> io::Result<Self> {
        let mut file = Window::new(ByRef(&mut source), len, slice);
        if let Some(ring) = RingImage::read(&mut file, len)? {
            file.seek(SeekFrom::Start(0))?;
            return Ok(Self {
                scan: Scan::done(inspect_ring(file, len, ring, options)),
                reader: None,
                ended: true,
            });
        }
        file.seek(SeekFrom::Start(0))?;
        let options = &options.for_log(&mut file)?;
        Ok(Self {
            scan: Scan::new(len, options, None),
            reader: Some(LogReader::new(
                Feed::new(source, len),
                &log_options(options),
            )),
            ended: false,
        })
    }

    /// The file offset of the bytes it wants next; `None` once it has read the file.
    pub fn wants(&self) -> Option<u64> {
        match &self.reader {
            Some(reader) if !self.ended => Some(reader.get_ref().end()),
            _ => None,
        }
    }

    /// Hands over the bytes at `offset` (those that follow what it has, in order; others are
    /// ignored, and an empty slice where it wants bytes says the file ends there), and reads
    /// as far as they go. Returns whether it wants more ([`wants`](Self::wants)).
    ///
    /// # Errors
    /// A read through the source failed (a record needed bytes not handed over yet).
    pub fn push(&mut self, offset: u64, bytes: &[u8]) -> io::Result<bool> {
        self.push_with(offset, bytes.len(), |skip, into| {
            into.copy_from_slice(&bytes[skip..]);
            Ok(())
        })
    }

    /// As [`push`](Self::push), for bytes that are not in a slice: `fill(skip, into)` copies
    /// the `n` bytes at `offset` from `skip` on into `into` (those before `skip` are held
    /// already).
    ///
    /// # Errors
    /// The error of `fill`, or of a read through the source.
    pub fn push_with(
        &mut self,
        offset: u64,
        n: usize,
        fill: impl FnOnce(usize, &mut [u8]) -> io::Result<()>,
    ) -> io::Result<bool> {
        let Some(reader) = self.reader.as_mut().filter(|_| !self.ended) else {
            return Ok(false);
        };
        reader.get_mut().push_with(offset, n, fill)?;
        self.ended = self
            .scan
            .read_on(reader, |reader| reader.get_ref().wants_more());
        Ok(!self.ended)
    }

    /// Bytes read through the source because a record needed them before they were handed
    /// over (besides a ring image's).
    pub fn caught_up(&self) -> u64 {
        self.reader
            .as_ref()
            .map_or(0, |reader| reader.get_ref().caught_up())
    }

    /// Bytes of the file it holds in memory at most so far (what it keeps ahead of the reader
    /// and the slice handed over): the same whatever the file's size.
    pub fn held(&self) -> usize {
        self.reader
            .as_ref()
            .map_or(0, |reader| reader.get_ref().capacity())
    }

    /// The report; what was not handed over is read through the source.
    ///
    /// # Errors
    /// An error reading the end of the file again, to tell a zero-filled tail.
    pub fn finish(mut self) -> io::Result<Report> {
        if let Some(mut reader) = self.reader.take() {
            if !self.ended {
                self.scan.read_on(&mut reader, |_| false);
            }
            self.scan.stale(&mut reader)?;
            let mut feed = reader.into_inner();
            let len = self.scan.report.bytes;
            self.scan
                .pebble_end(&mut Window::new(ByRef(feed.source_mut()), len, 64 << 10))?;
            self.scan
                .zero_fill(|offset, bytes| match feed.zeros_from(offset) {
                    Some(zeros) => Ok(zeros),
                    None => all_zero(
                        &mut Window::new(feed.into_source(), len, 64 << 10),
                        offset,
                        bytes,
                    ),
                })?;
        }
        Ok(self.scan.finish())
    }
}

/// A [`ReadAt`] borrowed.
struct ByRef<'a, R>(&'a mut R);

impl<R: ReadAt> ReadAt for ByRef<'_, R> {
    fn read_at(&mut self, offset: u64, len: usize, into: &mut Vec<u8>) -> io::Result<()> {
        self.0.read_at(offset, len, into)
    }
}

/// The records of `file` that hold `key` (a key of a `WriteBatch`, or anywhere in the bytes of
/// another record), at most [`Options::max_hits`] of them, in log order.
///
/// # Errors
/// Only an error seeking the file.
pub fn search<R: Read + Seek>(
    mut file: R,
    len: u64,
    key: &[u8],
    options: &Options,
) -> io::Result<Vec<Hit>> {
    let ring = RingImage::read(&mut file, len)?;
    file.seek(SeekFrom::Start(0))?;
    let mut hits = Vec::new();
    match &ring {
        Some(ring) => {
            let read = ring.read_options(options.read.clone());
            let reader = LogReader::new(ring.source(file), &LogReaderOptions::new().read(read));
            find(reader, key, options, |at| ring.region_offset(at), &mut hits);
        }
        None => {
            let options = &options.for_log(&mut file)?;
            let reader = LogReader::new(StdSource::seekable(file), &log_options(options));
            find(reader, key, options, |at| at, &mut hits);
        }
    }
    Ok(hits)
}

fn find<S: BlockSource>(
    mut reader: LogReader<S>,
    key: &[u8],
    options: &Options,
    place: impl Fn(u64) -> u64,
    hits: &mut Vec<Hit>,
) {
    let mut index = 0u64;
    while hits.len() < options.max_hits {
        match reader.next_bounded(options.record_limit) {
            Ok(Some(Bounded::Record(record))) => {
                if holds_key(options.content, record.data, key) {
                    hits.push(Hit {
                        index,
                        offset: place(record.offset),
                        text: line(options.content, record.data),
                    });
                }
                index += 1;
            }
            Ok(Some(Bounded::Oversized(_))) => index += 1,
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
}

/// A record in one line: decoded, or its bytes with the decoder's reason.
fn line(kind: ContentKind, data: &[u8]) -> String {
    describe(kind, data)
        .unwrap_or_else(|reason| format!("does not decode ({reason}): {}", content::bytes(data)))
}

/// One inspection: the survey of the file, its first records, and the report made of them.
#[derive(Debug)]
struct Scan {
    options: Options,
    ring: Option<RingImage>,
    report: Report,
    survey: Option<Survey>,
    /// The stale bytes after a recyclable log's end.
    stale: Option<StaleTail>,
}

impl Scan {
    fn new(len: u64, options: &Options, ring: Option<RingImage>) -> Self {
        Self {
            options: options.clone(),
            ring,
            report: Report {
                bytes: len,
                content: options.content.name(),
                dialect: options.dialect_name(),
                ..Report::default()
            },
            survey: Some(Survey::new(len)),
            stale: None,
        }
    }

    /// An inspection already made.
    fn done(report: Report) -> Self {
        Self {
            options: Options::default(),
            ring: None,
            report,
            survey: None,
            stale: None,
        }
    }

    /// Reads entries of `reader` until `pause` says to stop (returns `false`) or the end
    /// (returns `true`).
    fn read_on<S: BlockSource>(
        &mut self,
        reader: &mut LogReader<S>,
        pause: impl FnMut(&LogReader<S>) -> bool,
    ) -> bool {
        let Self {
            options,
            ring,
            report,
            survey,
            ..
        } = self;
        let Some(survey) = survey else {
            return true;
        };
        let first = &mut report.first_records;
        survey.read_on(
            reader,
            ring.as_ref(),
            options.max_damage,
            options.record_limit,
            |index, offset, length, data| {
                if first.len() < options.max_records {
                    first.push(RecordView {
                        index,
                        offset,
                        length,
                        text: data.map_or_else(
                            || "(too large to show)".to_owned(),
                            |d| line(options.content, d),
                        ),
                    });
                }
            },
            pause,
        )
    }

    /// The bytes after a recyclable log's end that an earlier use of the file left (or
    /// Pebble's EOF trailer), once `reader` has read the log: the end `logfmt verify` gives
    /// as its `tail` where nothing is torn.
    fn stale<S: BlockSource<Error = io::Error>>(
        &mut self,
        reader: &mut LogReader<S>,
    ) -> io::Result<()> {
        self.stale = StaleTail::after(reader, Some(self.report.bytes))?;
        Ok(())
    }

    /// Read as Pebble's, Pebble's verdict on the first damage
    /// ([`pebble_end`](logfmt_std::advanced::pebble_end)), applied to the survey as `logfmt
    /// verify` applies it: a torn end, or corruption. `file` is the log, read ahead.
    fn pebble_end<R: Read + Seek>(&mut self, file: &mut R) -> io::Result<()> {
        let Some(survey) = &mut self.survey else {
            return Ok(());
        };
        let read = &self.options.read;
        let Some(first) = survey
            .first_damage()
            .filter(|_| read.dialect == Dialect::Pebble)
        else {
            return Ok(());
        };
        file.seek(SeekFrom::Start(0))?;
        let end = pebble_end(
            StdSource::seekable(&mut *file),
            read,
            first,
            self.report.bytes,
        )?;
        survey.pebble_end(&end);
        self.report.pebble_synced = end.proof().map(|(chunk, synced_offset)| PebbleSynced {
            damage_offset: first,
            chunk,
            synced_offset,
        });
        Ok(())
    }

    /// Calls a torn tail of zeros to the end of the file what it is: space preallocated or
    /// mapped and never written (`zero_fill`), as `logfmt verify` does. `all_zero(offset,
    /// bytes)` tells whether those bytes of the file are all zero.
    fn zero_fill(&mut self, all_zero: impl FnOnce(u64, u64) -> io::Result<bool>) -> io::Result<()> {
        let Some(survey) = &mut self.survey else {
            return Ok(());
        };
        let Some(tail) = survey.tail else {
            return Ok(());
        };
        if tail.bytes == 0 || tail.offset.saturating_add(tail.bytes) != self.report.bytes {
            return Ok(());
        }
        if !all_zero(tail.offset, tail.bytes)? {
            return Ok(());
        }
        survey.marks.zero_fill(tail.offset);
        self.report.tail = Some(Tail {
            offset: tail.offset,
            bytes: tail.bytes,
            kind: "zero_fill",
        });
        Ok(())
    }

    fn finish(mut self) -> Report {
        let Some(mut survey) = self.survey.take() else {
            return self.report;
        };
        let report = &mut self.report;
        report.records = survey.records;
        report.payload_bytes = survey.payload_bytes;
        report.corruption_count = survey.corruption_count;
        report.dropped_bytes = survey.dropped_bytes;
        report.corruptions = survey
            .corruptions
            .iter()
            .map(|damage| Corruption {
                offset: damage.offset,
                bytes: damage.bytes,
                reason: damage.kind.to_string(),
                gloss: gloss(&damage.kind).unwrap_or_default(),
            })
            .collect();
        if report.tail.is_none() {
            report.tail = survey.tail.map(|tail| Tail {
                offset: tail.offset,
                bytes: tail.bytes,
                kind: if matches!(tail.kind, logfmt_std::DamageKind::LostTail { .. }) {
                    "lost"
                } else {
                    "torn"
                },
            });
        }
        if report.tail.is_none() {
            report.tail = self.stale.map(|stale| Tail {
                offset: stale.offset,
                bytes: stale.bytes,
                kind: "old_record",
            });
        }
        if let Some(image) = &self.ring {
            survey.marks.ring(image);
            let ring = image.ring();
            report.ring = Some(RingView {
                blocks: ring.blocks(),
                group: ring.group(),
                newest: ring.head(),
                lap: ring.lap(),
                oldest: image.oldest(),
                order: image.order().collect(),
                erased: image.erased(),
            });
        }
        report.blocks = survey.marks.states().iter().map(|s| s.name()).collect();
        self.report
    }
}
