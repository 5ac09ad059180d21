//! Everything beyond the common case, in one place: the reader over any source with bounded
//! memory and the end of the log classified ([`LogReader`], [`Entry`], [`Bounded`],
//! [`Ending`], [`ReadError`]), streaming one large record ([`RecordStream`]), sources
//! ([`StdSource`], [`ReadAt`]), parallel reads ([`split`], [`par_scan`]), ring images of flash
//! logs ([`RingImage`], [`RingSource`]), torn tails of zeros ([`zero_fill`]), what an append
//! kept ([`AppendReport`], [`Kept`]), group commit's statistics and locks ([`GroupStats`],
//! [`LockWait`]), file names and log numbers ([`log_number_in_name`],
//! [`recyclable_log_number`], [`database_log`], [`detect_format`]), error details
//! ([`Operation`], [`EscapedPath`]) — and the types of [`logfmt_core`] this crate's API is made
//! of (options, formats, records, reports, the core readers), so that a host program needs
//! no other crate.
//!
//! ```
//! use logfmt_std::advanced::{Entry, LogReader, StdSource};
//! use logfmt_std::{LogReaderOptions, LogWriter, LogWriterOptions};
//!
//! let mut log = Vec::new();
//! let mut writer = LogWriter::new(&mut log, &LogWriterOptions::new());
//! writer.add_record(b"hello")?;
//! writer.close()?;
//!
//! // Any `std::io::Read`: a pipe, a socket, a slice.
//! let mut reader = LogReader::new(StdSource::new(&log[..]), &LogReaderOptions::new());
//! let Some(Entry::Record(record)) = reader.next()? else { panic!() };
//! assert_eq!(record.data, b"hello");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use crate::append::{AppendReport, Kept};
pub use crate::append_policy::AppendFormat;
pub use crate::compression::MAX_DECODED;
pub use crate::database_log::{DatabaseLog, database_log};
pub use crate::detect::{
    DialectFound, Metadata, detect_format, implied_dialect, masked_crc32c, metadata_records,
    pebble_sync_proof, scan_dialect,
};
pub use crate::entry::Records;
pub use crate::error::{Operation, WriteOperation};
pub use crate::escape::{Escaped, EscapedPath};
pub use crate::file::{LogBytes, Reread, log_number_in_name, recyclable_log_number};
pub use crate::group::{GroupStats, SyncHandle};
pub use crate::lock::{LockWait, is_same_file};
#[cfg(feature = "mmap")]
#[cfg_attr(docsrs, doc(cfg(feature = "mmap")))]
pub use crate::mmap::MappedRecords;
#[cfg(feature = "parallel")]
#[cfg_attr(docsrs, doc(cfg(feature = "parallel")))]
pub use crate::parallel::{par_scan, par_scan_file};
pub use crate::pebble_end::{PebbleEnd, pebble_end, recovery_in};
pub use crate::reader::{Bounded, Entry, LogReader};
pub use crate::record_stream::RecordStream;
pub use crate::recovery::{Action, Ending, ReadError, UnknownRecoveryMode};
pub use crate::ring::{BlockRole, RingDisagreement, RingImage, RingSource};
pub use crate::ring_cursors::{RingCursor, ring_cursors, ring_cursors_in_file};
pub use crate::sink::StdSink;
pub use crate::source::StdSource;
pub use crate::split::{ReadAt, split};
pub use crate::stale::StaleTail;
pub use crate::tail::{ZeroFill, all_zero, zero_fill, zero_fill_from};
pub use crate::writer::SyncWrite;

// The core's types this crate's API is made of.
pub use logfmt_core::pack::PackLimit;
pub use logfmt_core::parts::dialect::{Dialects, Evidence, PredecessorWal, TimestampSizes};
pub use logfmt_core::parts::{
    Aborted, ChunkFormat, Corruption, CorruptionKind, Dialect, Event, Fragment, FragmentKind,
    FragmentReader, HEADER_SIZE, Item, Oversized, RECYCLABLE_HEADER_SIZE, ReadFormat, RecordType,
    Skip, SkipKind,
};
pub use logfmt_core::{
    BLOCK_SIZE, BlockSource, Format, LogEnd, ReadOptions, Reader, Record, SliceSource,
    WriteOptions, Written,
};
