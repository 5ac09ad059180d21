//! One pass over a file with the `logfmt` reader: the counts, the damage, the map, the first
//! records; and the key search, a second pass.

use std::io::{self, Read, Seek, SeekFrom};

use logfmt_core::{BlockSource, ReadOptions};
use logfmt_std::layout::Survey;
use logfmt_std::{
    LogReaderOptions,
    advanced::{Bounded, LogReader, RingImage, StdSource},
};

use crate::content::{self, ContentKind, describe, holds_key};
use crate::report::{Corruption, Hit, RecordView, Report, RingView, Tail};
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
            let reader = LogReader::new(ring.source(file), &LogReaderOptions::new().read(read));
            scan.run(reader);
        }
        None => {
            let reader = LogReader::new(
                StdSource::seekable(file),
                &LogReaderOptions::new().read(options.read.clone()),
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
            let reader = LogReader::new(ring.source(file), &LogReaderOptions::new().read(read));
            find(reader, key, options, |at| ring.region_offset(at), &mut hits);
        }
        None => {
            let reader = LogReader::new(
                StdSource::seekable(file),
                &LogReaderOptions::new().read(options.read.clone()),
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

/// One inspection: the survey of the file, its first records, and the report made of them.
struct Scan<'a> {
    options: &'a Options,
    ring: Option<&'a RingImage>,
    report: Report,
    survey: Option<Survey>,
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
            survey: None,
        }
    }

    /// Reads every entry of `reader`; returns its source.
    fn run<S: BlockSource>(&mut self, mut reader: LogReader<S>) -> S {
        let (options, first) = (self.options, &mut self.report.first_records);
        let survey = Survey::read(
            &mut reader,
            self.report.bytes,
            self.ring,
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
        );
        self.survey = Some(survey);
        reader.into_inner()
    }

    /// Calls a torn tail of zeros to the end of the file what it is: space preallocated or
    /// mapped and never written (`zero_fill`), as `logfmt verify` does.
    fn zero_fill<R: Read + Seek>(&mut self, file: &mut R) -> io::Result<()> {
        let Some(survey) = &mut self.survey else {
            return Ok(());
        };
        let Some(tail) = survey.tail else {
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
        if let Some(image) = self.ring {
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
