//! One pass over a file with the `logfmt` reader: the counts, the damage, the map, the first
//! records; and the key search, a second pass.

use std::io::{self, Read, Seek, SeekFrom};

use logfmt_core::{BlockSource, ReadOptions};
use logfmt_std::layout::{BlockState, Marks};
use logfmt_std::{
    Bounded, Damage, DamageKind, Ending, LogReader, ReadError, ReaderOptions, RingImage, StdSource,
};

use crate::content::{self, ContentKind, describe, holds_key};
use crate::report::{Corruption, Hit, RecordView, Report, RingView, Tail};
use crate::spans::gloss;

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
    let mut scan = Scan::new(len, options, ring.as_ref());
    match &ring {
        Some(ring) => {
            let read = ring.read_options(options.read.clone());
            let reader = LogReader::new(ring.source(file), &ReaderOptions::new().read(read));
            scan.run(reader);
        }
        None => {
            let reader = LogReader::new(
                StdSource::seekable(file),
                &ReaderOptions::new().read(options.read.clone()),
            );
            let mut file = scan.run(reader).into_inner();
            scan.zero_fill(&mut file)?;
        }
    }
    Ok(scan.finish())
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
            let reader = LogReader::new(ring.source(file), &ReaderOptions::new().read(read));
            find(reader, key, options, |at| ring.region_offset(at), &mut hits);
        }
        None => {
            let reader = LogReader::new(
                StdSource::seekable(file),
                &ReaderOptions::new().read(options.read.clone()),
            );
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

/// The state of one inspection as it reads.
struct Scan<'a> {
    options: &'a Options,
    ring: Option<&'a RingImage>,
    report: Report,
    /// Each block's state so far.
    marks: Marks,
}

impl<'a> Scan<'a> {
    fn new(len: u64, options: &'a Options, ring: Option<&'a RingImage>) -> Self {
        Self {
            options,
            ring,
            report: Report {
                bytes: len,
                content: options.content.name(),
                ..Report::default()
            },
            marks: Marks::new(len),
        }
    }

    /// Reads every entry of `reader`; returns its source.
    fn run<S: BlockSource>(&mut self, mut reader: LogReader<S>) -> S {
        loop {
            match reader.next_bounded(self.options.record_limit) {
                Ok(Some(Bounded::Record(record))) => {
                    self.record(record.offset, record.end, Some(record.data));
                }
                Ok(Some(Bounded::Oversized(record))) => {
                    self.record(record.offset, record.end, None);
                    self.report.payload_bytes += record.len;
                }
                Ok(Some(Bounded::Damage(damage))) => self.damage(damage),
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(ReadError::Io(_)) => {
                    if let Some(Ending::Failed { offset }) = reader.ending()
                        && let Some(dropped) = (Ending::Failed { offset }).read_error()
                    {
                        self.damage(dropped.into());
                    }
                    break;
                }
                Err(ReadError::Damaged(damage)) => {
                    self.damage(damage);
                    break;
                }
                Err(_) => break,
            }
        }
        if let Some(tail) = reader.tail() {
            self.tail(tail);
        }
        reader.into_inner()
    }

    /// Calls a torn tail of zeros to the end of the file what it is: space preallocated or
    /// mapped and never written (`zero_fill`), as `logfmt verify` does.
    fn zero_fill<R: Read + Seek>(&mut self, file: &mut R) -> io::Result<()> {
        let Some(tail) = &mut self.report.tail else {
            return Ok(());
        };
        if tail.bytes == 0 || tail.offset.saturating_add(tail.bytes) != self.report.bytes {
            return Ok(());
        }
        file.seek(SeekFrom::Start(tail.offset))?;
        let mut rest = file.take(tail.bytes);
        let mut buffer = vec![0u8; 64 << 10];
        loop {
            let n = rest.read(&mut buffer)?;
            if n == 0 {
                break;
            }
            if buffer[..n].iter().any(|&b| b != 0) {
                return Ok(());
            }
        }
        tail.kind = "zero_fill";
        let from = tail.offset;
        self.marks.zero_fill(from);
        Ok(())
    }

    fn place(&self, offset: u64) -> u64 {
        self.ring.map_or(offset, |ring| ring.region_offset(offset))
    }

    fn record(&mut self, offset: u64, end: u64, data: Option<&[u8]>) {
        let index = self.report.records;
        self.report.records += 1;
        if let Some(data) = data {
            self.report.payload_bytes += data.len() as u64;
        }
        let (start, stop) = (self.place(offset), self.place(end.saturating_sub(1)));
        self.mark(start, stop.saturating_add(1).max(start + 1), BlockState::Clean);
        if self.report.first_records.len() < self.options.max_records {
            let length = data.map_or(end - offset, |d| d.len() as u64);
            let text = data.map_or_else(
                || format!("({} bytes: too large to show)", end - offset),
                |d| line(self.options.content, d),
            );
            self.report.first_records.push(RecordView {
                index,
                offset: start,
                length,
                text,
            });
        }
    }

    fn damage(&mut self, damage: Damage) {
        let damage = self.ring.map_or(damage, |ring| ring.region_damage(damage));
        let end = damage.offset.saturating_add(damage.bytes.max(1));
        match damage.kind {
            DamageKind::Corruption(_) | DamageKind::LostTail { .. } => {
                self.report.corruption_count += 1;
                self.report.dropped_bytes += damage.bytes;
                self.mark(damage.offset, end, BlockState::Damaged);
                if self.report.corruptions.len() < self.options.max_damage {
                    let reason = damage.kind.to_string();
                    self.report.corruptions.push(Corruption {
                        offset: damage.offset,
                        bytes: damage.bytes,
                        gloss: gloss(&reason),
                        reason,
                    });
                }
            }
            DamageKind::Skipped => self.mark(damage.offset, end, BlockState::Zero),
            DamageKind::TornTail => self.tail(damage),
            _ => {}
        }
    }

    fn tail(&mut self, tail: Damage) {
        if self.report.tail.is_some() || tail.kind != DamageKind::TornTail {
            return;
        }
        let tail = self.ring.map_or(tail, |ring| ring.region_damage(tail));
        self.mark(
            tail.offset,
            tail.offset.saturating_add(tail.bytes.max(1)),
            BlockState::Torn,
        );
        self.report.tail = Some(Tail {
            offset: tail.offset,
            bytes: tail.bytes,
            kind: "torn",
        });
    }

    fn mark(&mut self, from: u64, to: u64, state: BlockState) {
        self.marks.mark(from, to, state);
    }

    fn finish(mut self) -> Report {
        if let Some(image) = self.ring {
            self.marks.ring(image);
            let ring = image.ring();
            self.report.ring = Some(RingView {
                blocks: ring.blocks(),
                group: ring.group(),
                newest: ring.head(),
                lap: ring.lap(),
                oldest: image.oldest(),
                order: image.order().collect(),
                erased: image.erased(),
            });
        }
        self.report.blocks = self.marks.states().iter().map(|s| s.name()).collect();
        self.report
    }
}
