//! [`detect_format`]: the chunk format `ReadFormat::Auto` decides for a log, read from its start
//! — what every reader of the same log must then be given, so that ranges read apart agree.

use logfmt_core::{
    BLOCK_SIZE, BlockSource, LogEnd, ReadOptions,
    parts::dialect::{Dialect, DialectScan, Dialects, Evidence, PredecessorWal, synced_past},
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

/// What a log shows of its writer ([`scan_dialect`]): the dialect, if the chunks single one
/// out, and the evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DialectFound {
    /// The dialect the chunks single out (`Ok`), or the dialects they are consistent with
    /// (`Err`: ambiguous, every one of them reads the log alike; empty if the log has no
    /// chunk, or chunks no single writer wrote).
    pub verdict: Result<Dialect, Dialects>,
    /// What was seen.
    pub evidence: Evidence,
}

impl DialectFound {
    /// The dialect to read the log with: the one found, or logfmt's own reading where the
    /// evidence is ambiguous (it reads what LevelDB, RocksDB and Pebble write in common).
    #[must_use]
    pub fn dialect(&self) -> Dialect {
        self.verdict.unwrap_or(Dialect::Logfmt)
    }

    /// Why: the first chunk that told, as a sentence (`None` where nothing told).
    #[must_use]
    pub fn reason(&self) -> Option<String> {
        let e = &self.evidence;
        let told = [
            (
                e.wal_sync_chunk,
                "a Pebble WAL-sync chunk (type 9-12, 19-byte header)",
            ),
            (
                e.compression_record,
                "RocksDB's compression record (type 9, 7-byte header)",
            ),
            (
                e.timestamp_size_record,
                "RocksDB's timestamp-size record (type 10/11)",
            ),
            (
                e.predecessor_wal_record,
                "RocksDB's predecessor-WAL record (type 130/131)",
            ),
            (e.pebble_eof_trailer, "Pebble's EOF trailer"),
        ];
        told.into_iter()
            .find_map(|(at, what)| at.map(|at| format!("{what} at offset {at}")))
    }
}

/// Scans `source` (from its start) for what its chunks show of their writer: Pebble's WAL-sync
/// chunks or EOF trailer, RocksDB's metadata records, the chunk types present. Reads the
/// whole log (block by block), or its first `blocks` blocks.
///
/// ```
/// use logfmt_std::{LogWriter, LogWriterOptions, advanced::{scan_dialect, Dialect, SliceSource}};
///
/// let mut writer = LogWriter::new(Vec::new(), &LogWriterOptions::new());
/// writer.add_record(b"a record")?;
/// let log = writer.close()?;
/// // Types 1-4 alone: every writer's, read alike.
/// let found = scan_dialect(SliceSource::new(&log), None)?;
/// assert!(found.verdict.is_err());
/// assert_eq!(found.dialect(), Dialect::Logfmt);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// The source's read errors.
pub fn scan_dialect<S: BlockSource>(
    mut source: S,
    blocks: Option<u64>,
) -> Result<DialectFound, S::Error> {
    let mut scan = DialectScan::new();
    let mut offset = 0u64;
    let mut read = 0u64;
    while blocks.is_none_or(|limit| read < limit) {
        read += 1;
        source.load_next()?;
        let block = source.block();
        if block.is_empty() {
            break;
        }
        scan.observe(block, offset);
        offset += block.len() as u64;
        if block.len() < BLOCK_SIZE {
            break;
        }
    }
    Ok(DialectFound {
        verdict: scan.verdict(),
        evidence: scan.evidence(),
    })
}

/// The dialect of a log read with no dialect named: Pebble's for a log whose first chunk is a
/// Pebble WAL-sync chunk (its 19-byte header's checksum holds, which no other writer's chunk
/// can), with what told it; `None` for every other log, read with logfmt's own rules. Reads
/// the first block only: what `logfmt` and the browser inspector read a log as by default.
///
/// ```
/// use logfmt_std::{LogWriter, LogWriterOptions, advanced::{implied_dialect, SliceSource}};
///
/// let mut writer = LogWriter::new(Vec::new(), &LogWriterOptions::new());
/// writer.add_record(b"a record")?;
/// let log = writer.close()?;
/// assert_eq!(implied_dialect(SliceSource::new(&log))?, None);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// The source's read errors.
pub fn implied_dialect<S: BlockSource>(source: S) -> Result<Option<DialectFound>, S::Error> {
    let found = scan_dialect(source, Some(1))?;
    Ok((found.evidence.wal_sync_chunk == Some(0)).then_some(found))
}

/// Pebble's verdict on damage at `invalid_offset` of a Pebble WAL whose log number is
/// `log_number` (`source` positioned at the log's start): the first WAL-sync chunk in a later
/// block whose synced offset is past it — proof that the bytes there were once synced, so
/// that the log is damaged (Pebble reports corruption) — as (chunk offset, synced offset).
/// `None`: nothing proves it, and Pebble takes the damage for the log's torn end (an
/// unexpected EOF), as a crash leaves it.
///
/// ```
/// use logfmt_std::advanced::{pebble_sync_proof, SliceSource};
///
/// assert_eq!(pebble_sync_proof(SliceSource::new(&[]), 0, 1)?, None);
/// # Ok::<(), std::convert::Infallible>(())
/// ```
///
/// # Errors
/// The source's read errors.
pub fn pebble_sync_proof<S: BlockSource>(
    mut source: S,
    invalid_offset: u64,
    log_number: u32,
) -> Result<Option<(u64, u64)>, S::Error> {
    let first = (invalid_offset / BLOCK_SIZE as u64 + 1) * BLOCK_SIZE as u64;
    source.skip(first)?;
    let mut offset = first;
    loop {
        source.load_next()?;
        let block = source.block();
        if block.is_empty() {
            return Ok(None);
        }
        if let Some((at, synced)) = synced_past(block, invalid_offset, log_number) {
            return Ok(Some((offset + at as u64, synced)));
        }
        offset += block.len() as u64;
        if block.len() < BLOCK_SIZE {
            return Ok(None);
        }
    }
}

/// A RocksDB metadata record ([`metadata_records`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Metadata {
    /// A timestamp-size record: `(column family, timestamp size)` pairs. The write batches
    /// after it carry user keys ending in a timestamp of that size, in those column families.
    TimestampSizes(Vec<(u32, u16)>),
    /// A predecessor-WAL record: the WAL before this one.
    PredecessorWal(PredecessorWal),
}

/// RocksDB's metadata records in `source` (from its start), read with `options` (their
/// dialect must be [`Dialect::RocksDb`]; for another, none are found), each with its offset:
/// timestamp sizes (types 10, 11) and predecessor WALs (130, 131).
///
/// ```
/// use logfmt_std::advanced::{metadata_records, Dialect, Metadata, ReadOptions, SliceSource};
///
/// // Type 10, column family 0 with 8-byte timestamps.
/// let payload = [0, 0, 0, 0, 8, 0];
/// let mut chunk = vec![0, 0, 0, 0, 6, 0, 10];
/// chunk.extend_from_slice(&payload);
/// let crc = logfmt_std::advanced::masked_crc32c(&chunk[6..]);
/// chunk[..4].copy_from_slice(&crc.to_le_bytes());
/// let options = ReadOptions::new().dialect(Dialect::RocksDb);
/// let found = metadata_records(SliceSource::new(&chunk), &options)?;
/// assert_eq!(found, [(0, Metadata::TimestampSizes(vec![(0, 8)]))]);
/// # Ok::<(), std::convert::Infallible>(())
/// ```
///
/// # Errors
/// The source's read errors.
pub fn metadata_records<S: BlockSource>(
    mut source: S,
    options: &ReadOptions,
) -> Result<Vec<(u64, Metadata)>, S::Error> {
    use logfmt_core::parts::block::{BlockParser, ChunkClass, ChunkRules, Parsed};
    use logfmt_core::parts::dialect::TimestampSizes;
    let mut rules = ChunkRules::new(&options.clone().initial_offset(0));
    let mut found = Vec::new();
    let mut offset = 0u64;
    loop {
        source.load_next()?;
        let block = source.block();
        if block.is_empty() {
            break;
        }
        for parsed in BlockParser::new(block).rules(rules) {
            let Parsed::Chunk(chunk) = parsed else {
                continue;
            };
            rules.decide(chunk.record_type, chunk.log_number);
            let record = match rules.classify(chunk.record_type) {
                ChunkClass::TimestampSizes => TimestampSizes::parse(chunk.payload)
                    .map(|sizes| Metadata::TimestampSizes(sizes.collect())),
                ChunkClass::PredecessorWal => {
                    PredecessorWal::parse(chunk.payload).map(Metadata::PredecessorWal)
                }
                _ => None,
            };
            found.extend(record.map(|r| (offset + chunk.offset as u64, r)));
        }
        offset += block.len() as u64;
        if block.len() < BLOCK_SIZE {
            break;
        }
    }
    Ok(found)
}

/// LevelDB's masked CRC-32C of `bytes`: what a chunk header stores for the type and payload
/// it covers.
///
/// ```
/// assert_eq!(logfmt_std::advanced::masked_crc32c(b"\x01foo"), 0x7ab3_5fdd);
/// ```
#[must_use]
pub fn masked_crc32c(bytes: &[u8]) -> u32 {
    logfmt_core::parts::checksum::mask(logfmt_core::parts::checksum::crc32c(bytes))
}
