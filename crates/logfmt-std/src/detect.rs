//! [`detect_format`]: the chunk format `ReadFormat::Auto` decides for a log, read from its start
//! — what every reader of the same log must then be given, so that ranges read apart agree.

use logfmt_core::{
    BlockSource, LogEnd, ReadOptions,
    parts::{ChunkFormat, Event, FragmentReader, ReadFormat},
};

/// The format `ReadFormat::Auto { log_number }` decides for the log `source` (positioned at its
/// start), with `base`'s other options: that of the first chunk of a known type — recyclable
/// with that chunk's log number, or legacy. `None` if no chunk decides (an empty log, or only
/// damage); with a log number, a file whose first chunk is of an earlier use of the file (a
/// recycled file with no new record yet) is recyclable with that number.
///
/// ```
/// use logfmt_std::{LogWriter, LogWriterOptions, advanced::{detect_format, ReadFormat, ReadOptions, SliceSource}};
///
/// let mut writer = LogWriter::new(Vec::new(), &LogWriterOptions::new());
/// writer.add_record(b"a record")?;
/// let log = writer.close()?;
/// let found = detect_format(SliceSource::new(&log), &ReadOptions::new(), None);
/// assert_eq!(found, Ok(Some(ReadFormat::Legacy)));
/// assert_eq!(detect_format(SliceSource::new(&[]), &ReadOptions::new(), None), Ok(None));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// The source's read errors.
pub fn detect_format<S: BlockSource>(
    source: S,
    base: &ReadOptions,
    log_number: Option<u32>,
) -> Result<Option<ReadFormat>, S::Error> {
    let options = base
        .clone()
        .initial_offset(0)
        .tailing(false)
        .format(ReadFormat::Auto { log_number });
    let mut reader = FragmentReader::with_options(source, &options);
    while let Some(event) = reader.next()? {
        // The first fragment is read once the format is decided (by its chunk, or an earlier
        // one).
        if let Event::Fragment(_) = event
            && let ChunkFormat::Decided(format) = reader.format()
        {
            return Ok(Some(ReadFormat::from(format)));
        }
    }
    // No chunk of this log: with a log number, a file whose first chunk is stale.
    Ok(match (reader.end(), log_number) {
        (Some(LogEnd::OldRecord { .. }), Some(log_number)) => {
            Some(ReadFormat::Recyclable { log_number })
        }
        _ => None,
    })
}
