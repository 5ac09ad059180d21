//! The `std` layer of logfmt: LevelDB-format logs in files and over any [`std::io`] stream.
//!
//! Reading a log file — its records, and the damage LevelDB's reader would report (a torn
//! tail is the end of the log):
//!
//! ```
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("000001.log");
//! # let mut writer = logfmt_std::LogWriter::create(&path, &Default::default())?;
//! # writer.add_record(b"hello")?;
//! # writer.close()?;
//! use logfmt_std::{LogEntry, LogFile};
//!
//! for entry in LogFile::open(&path)?.records() {
//!     match entry? {
//!         LogEntry::Record(record) => println!("{}: {:?}", record.offset, record.data),
//!         LogEntry::Damage(damage) => eprintln!("{damage}"),
//!         other => eprintln!("{other}"), // a compressed record this build cannot decode
//!     }
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Writing one, safely appended to, synced every 64 records:
//!
//! ```
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("000001.log");
//! use logfmt_std::{LogWriter, LogWriterOptions, SyncPolicy};
//!
//! let writing = LogWriterOptions::new().sync(SyncPolicy::EveryRecords(64));
//! let (mut writer, _report) = LogWriter::append(&path, &writing)?;
//! writer.add_record(b"hello")?;
//! writer.close()?; // flush and sync
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The top level holds these common cases: [`LogFile`] and its records ([`LogEntry`],
//! [`LogRecord`], [`Damage`], [`RecoveryMode`], [`LogReaderOptions`]), [`MappedLog`], the
//! writers ([`LogWriter`], [`AtomicLog`], [`GroupWriter`]) with their options and errors, and
//! the contents of LevelDB's and RocksDB's logs ([`content`]). Everything else — the reader
//! over any source ([`advanced::LogReader`]), bounded-memory reads, parallel scans, ring
//! images, and the types of [`logfmt_core`] this crate's API is made of — is in [`advanced`].
//!
//! **`#[non_exhaustive]`, the rule** (the same as `logfmt-core`'s): every public enum is
//! `#[non_exhaustive]` — a later version may report a new kind of entry, damage or error — and
//! so is every struct with public fields — a later version may add a field — so such values
//! are read, and made by this crate (or a constructor), not by a struct literal. There is no
//! exception.
//!
//! In detail — writing:
//!
//! - [`LogWriter`] — records to a file (or any [`SyncWrite`]) with buffering, flushing and
//!   syncing kept apart ([`FlushPolicy`], [`SyncPolicy`]: never a sync per fragment), errors
//!   that stick ([`LogWriterError::Poisoned`] carries the original error), and a `close` that
//!   flushes and syncs.
//! - [`LogWriter::append`] — **safe append**: the log is read first and continued only where
//!   its last complete record ends. A torn tail is refused ([`Error::TornTail`], file
//!   unchanged) or, with [`TornTailPolicy::Truncate`], cut off exactly; any other damage is
//!   refused ([`Error::Damaged`]). LevelDB appends after the torn bytes instead and loses the
//!   new records (google/leveldb#1287). A recyclable log (RocksDB's) is continued with its log
//!   number; the stale bytes of a recycled file's earlier use after it are refused
//!   ([`Error::StaleTail`]) or cut off like a torn tail.
//!
//! Reading:
//!
//! - [`LogReader`] — whole records with a [`RecoveryMode`] applied (RocksDB's WAL recovery
//!   modes: LevelDB's tolerance by default, absolute consistency, point-in-time, skip any
//!   corruption), the end of the log classified ([`LogReader::tail`], [`Ending`]), regions
//!   LevelDB skips silently found, and optionally limited to a byte range.
//!   [`LogReader::next_bounded`] reads records of any size in bounded memory: a record
//!   assembled from more bytes than a limit is returned as [`Bounded::Oversized`] (where it
//!   is and how long) once it is complete, to be streamed by a second read from its offset
//!   ([`RecordStream`], which notices a log that changed meanwhile). A failed read ends the
//!   log with the drop LevelDB reports for it ([`Ending::read_error`]).
//!   In a recyclable log, the end of a recycled file's new records is the end of the log,
//!   even where the earlier use's bytes resume in the middle of a chunk, as RocksDB reads it;
//!   [`StaleTail`] says where the stale bytes after it begin and how many there are.
//!   A torn tail of zeros to the end of a regular file is told apart from damage by
//!   [`zero_fill`]: space preallocated or memory-mapped and never written ([`ZeroFill`]).
//! - [`split`], [`par_scan`] and [`par_scan_file`] — a log cut into byte ranges read in
//!   parallel (rayon, feature `parallel`); the ranges return every record of a sequential read
//!   exactly once, damaged logs included. A file is read with positioned reads, never mapped.
//! - [`MappedLog`] — a memory-mapped log (memmap2, feature `mmap`) whose records in one chunk
//!   are slices of the map ([`MappedLog::records`] is an [`Iterator`]).
//! - [`StdSource`] — a [`BlockSource`] over any [`std::io::Read`], with an owned 32 KiB block
//!   buffer. Short reads and [`Interrupted`](std::io::ErrorKind::Interrupted) are retried, so
//!   a partial read is never taken for the end of the log (google/leveldb#1285); an initial
//!   offset is reached by one seek when the reader is [`Seek`](std::io::Seek)
//!   ([`StdSource::seekable`]). With [`ReadOptions::tailing`] it follows a file that another
//!   process appends to: a reader returns `None` for "nothing more yet" and reads on later.
//! - Flash images: [`ReadOptions::erased`] (`0xFF` or `0x00`) reads an erased region as
//!   "nothing written here" rather than damage. A ring image (a flash log kept as a ring,
//!   [`logfmt_core::parts::ring`]) is found from its blocks' ring headers ([`RingImage`],
//!   [`LogFile::ring`]) and read from its oldest block to its newest ([`RingSource`]), with
//!   offsets mapped back to the image.
//!
//! Content: [`content`] — what LevelDB and RocksDB keep in their logs, decoded without
//! copying: the `WriteBatch` of a write-ahead log record ([`content::WriteBatch`]: sequence
//! number, count, every operation with its column family, key and value, and the
//! two-phase-commit markers), the `VersionEdit` of a MANIFEST record
//! ([`content::VersionEdit`]), and the files of a database directory ([`content::Database`]:
//! `CURRENT`, its MANIFEST, the live write-ahead logs in log-number order).
//!
//! A write-ahead log kept as a directory of numbered logs: [`wal`] — recovered across its logs
//! in log-number order with a recovery mode, appended to with group commit, rotated, released
//! or reused, crash-proven through a storage seam ([`wal::CrashableStorage`]).
//!
//! Files: [`LogFile`] — opening a log to read it (and, for a regular file, to read it again
//! while it is read: [`LogFile::reread`]), with an [`Error`] that names the file (escaped:
//! [`EscapedPath`]); [`StdSink`] — a [`Sink`](logfmt_core::Sink) over any
//! [`std::io::Write`], for the core [`Writer`](logfmt_core::Writer).
//!
//! # Nothing lost
//!
//! - **One writer at a time.** Every way of writing a log file — [`LogWriter::create`],
//!   [`LogWriter::overwrite`], [`LogWriter::append`] and [`AtomicLog`] — takes an exclusive
//!   advisory lock on the log ([`File::try_lock`](std::fs::File::try_lock): `flock` on Unix)
//!   before it reads or changes anything, and holds it for as long as it
//!   has the file open. A second writer is refused at once ([`Error::Locked`]) or waits
//!   ([`LogWriterOptions::lock_wait`], [`LockWait`]). Readers never take it and are never
//!   blocked: a log being appended to reads as a prefix, possibly ending in a torn tail (the
//!   record being written), which a tailing reader waits out. An advisory lock cannot stop a
//!   writer that does not take it (LevelDB's own writer, `cat >>`), and on network file
//!   systems (NFS) it may only be seen on one machine: keep one writer by other means there.
//! - **Outputs never destroy inputs.** [`AtomicLog`] writes a new log to a temporary file
//!   beside its destination, syncs it, renames it over the destination and syncs the
//!   directory; a failure leaves the destination as it was and no temporary file behind.
//!   [`LogFile::is_same_file`] tells whether a destination is an input (same device and
//!   inode: hard links, symbolic links, `/proc/self/fd/N`).
//! - **Appends survive crashes.** A record [`LogWriter`] has synced ([`SyncPolicy`]) is in
//!   the log after a crash; one it had only flushed survives a killed process but not a power
//!   cut. A crash leaves at most a torn tail, which [`LogWriter::append`] refuses to write
//!   after, or cuts off exactly when asked ([`TornTailPolicy::Truncate`]).
//!
//! The types of [`logfmt_core`] this crate's API is made of (formats and options, records,
//! reports, [`BlockSource`]) are re-exported in [`advanced`], and so are the core readers, which read
//! the sources made here ([`LogFile::source`], [`StdSource`]): for reading and writing log
//! files, this crate is all a host program needs. The rest of the core — its
//! [`Writer`](logfmt_core::Writer) and sinks (with its own
//! [`WriteError`](logfmt_core::WriteError); this crate's [`LogWriter`] fails with a
//! [`LogWriterError`]), the [block parser](logfmt_core::parts::block), the
//! [checksum](logfmt_core::parts::checksum) and the flash log — is used from `logfmt_core`.
//!
//! Depending on this crate turns on `logfmt-core`'s `std` feature: checksums use the CPU's
//! instructions, detected once at run time — on x86-64 the core's own engine (SSE 4.2 `crc32`,
//! PCLMULQDQ / VPCLMULQDQ folding), on ARMv8 the `crc32c` crate's — with a software fallback.
//! No byte on disk changes.
//!
//! # Crate features
//!
//! `parallel` and `mmap` are on by default, `zstd-c` is not; with `default-features = false` the
//! crate has everything above except what they add, does not depend on rayon or memmap2, and
//! compiles no C. Compressed packs and RocksDB's WAL compression ([`Compression`]) are read by
//! every build (zstd decoded in Rust) and written by every build too.
//!
//! - `parallel` — [`par_scan`], [`par_scan_file`] and [`MappedLog::par_scan`]: ranges of a
//!   log read in parallel on rayon's thread pool.
//! - `mmap` — [`MappedLog`]: a log file read through a memory map.
//! - `zstd-c` — compressed records written with zstd's C library, at the level asked for
//!   (smaller and faster to write than without it, where the Rust encoder has one level, close
//!   to zstd's level 1). Reading is the same with or without it.
//!
//! No feature changes a byte on disk but `zstd-c`, which codes compressed records with
//! another encoder (they decode to the same records).
//!
//! # Examples
//!
//! A write-ahead log: append safely, sync every 64 records, read back with a recovery mode.
//!
//! ```
//! use logfmt_std::advanced::{Entry, LogReader, StdSource};
//! use logfmt_std::{
//!     LogReaderOptions, LogWriter, LogWriterOptions, RecoveryMode, SyncPolicy,
//! };
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("000005.log");
//! let writing = LogWriterOptions::new().sync(SyncPolicy::EveryRecords(64));
//! for session in 0..2 {
//!     let (mut writer, report) = LogWriter::append(&path, &writing)?;
//!     assert_eq!(report.records, 100 * session);
//!     for i in 0..100u32 {
//!         writer.add_record(&i.to_le_bytes())?;
//!     }
//!     writer.close()?; // flush and sync
//! }
//!
//! let file = std::fs::File::open(&path)?;
//! let options = LogReaderOptions::new().recovery(RecoveryMode::AbsoluteConsistency);
//! let mut reader = LogReader::new(StdSource::seekable(file), &options);
//! let mut count = 0;
//! while let Some(entry) = reader.next()? {
//!     assert!(matches!(entry, Entry::Record(r) if r.data.len() == 4));
//!     count += 1;
//! }
//! assert_eq!(count, 200);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The core readers, over a file:
//!
//! ```
//! use logfmt_std::advanced::{Event, FragmentReader, ReadOptions, Reader};
//! use logfmt_std::{LogFile, LogWriter, LogWriterOptions};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("000003.log");
//!
//! // Write two records; the second spans two blocks.
//! let mut writer = LogWriter::create(&path, &LogWriterOptions::new())?;
//! for record in [&b"hello"[..], &[7u8; 40_000]] {
//!     writer.add_record(record)?;
//! }
//! writer.close()?;
//!
//! // Read whole records back, assembling fragmented ones in a buffer.
//! let log = LogFile::open(&path)?;
//! let mut buffer = vec![0u8; 64 * 1024];
//! let mut reader = Reader::new(log.source(), &mut buffer);
//! let mut records = Vec::new();
//! while let Some(read) = reader.next_record().map_err(|e| log.read_error(e))? {
//!     match read {
//!         Ok(record) => records.push((record.offset, record.data.len())),
//!         Err(dropped) => eprintln!("{dropped}"), // damage, a record too large, …
//!     }
//! }
//! assert_eq!(records, [(0, 5), (12, 40_000)]);
//!
//! // Or stream them fragment by fragment, starting at an offset.
//! let log = LogFile::open(&path)?;
//! let options = ReadOptions::new().initial_offset(1);
//! let mut reader = FragmentReader::with_options(log.source(), &options);
//! let mut streamed = 0;
//! while let Some(event) = reader.next()? {
//!     if let Event::Fragment(fragment) = event {
//!         streamed += fragment.data.len();
//!     }
//! }
//! assert_eq!(streamed, 40_000);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod advanced;
mod append;
mod append_policy;
mod atomic;
mod compression;
pub mod content;
mod create;
mod database_log;
mod detect;
mod entry;
mod error;
mod escape;
mod file;
mod group;
pub mod layout;
mod lock;
#[cfg(feature = "mmap")]
mod mmap;
mod packing;
#[cfg(feature = "parallel")]
mod parallel;
mod pebble_end;
mod reader;
mod record_stream;
mod recovery;
mod ring;
mod ring_cursors;
mod sink;
mod source;
mod split;
mod stale;
mod tail;
pub mod wal;
mod writer;

// Reading a log file.
pub use entry::{LogEntry, LogRecord};
pub use error::Error;
pub use file::LogFile;
#[cfg(feature = "mmap")]
#[cfg_attr(docsrs, doc(cfg(feature = "mmap")))]
pub use mmap::MappedLog;
pub use reader::LogReaderOptions;
pub use recovery::{Damage, DamageKind, RecoveryMode};
// Writing one.
pub use append_policy::TornTailPolicy;
pub use atomic::AtomicLog;
pub use compression::Compression;
pub use error::LogWriterError;
pub use group::{GroupPolicy, GroupWriter};
pub use writer::{FlushPolicy, LogWriter, LogWriterOptions, SyncPolicy};

// Every other item, by its short path inside the crate.
#[allow(unused_imports)]
use advanced::*;

/// The README's example, run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
