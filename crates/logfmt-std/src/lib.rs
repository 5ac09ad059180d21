//! The `std` layer of logfmt: LevelDB-format logs in files and over any [`std::io`] stream.
//!
//! - [`StdSource`] — a [`BlockSource`] over any [`std::io::Read`], with an owned 32 KiB block
//!   buffer. Short reads and [`Interrupted`](std::io::ErrorKind::Interrupted) are retried, so
//!   a partial read is never taken for the end of the log; an initial offset is reached by
//!   one seek when the reader is [`Seek`](std::io::Seek) ([`StdSource::seekable`]).
//! - [`StdSink`] — a [`Sink`] over any [`std::io::Write`].
//! - [`LogFile`] — opening a log to read it, creating one (refusing to overwrite a non-empty
//!   file unless asked to), and continuing one at its length, with an [`Error`] that names the
//!   file.
//!
//! The whole public API of [`logfmt_core`] is re-exported here, so this crate is all a host
//! program needs.
//!
//! Depending on this crate turns on `logfmt-core`'s `std` feature: checksums use the `crc32c`
//! crate's hardware path (SSE 4.2 on x86-64, the CRC instructions on ARMv8), detected at run
//! time, with a software fallback. No byte on disk changes.
//!
//! # Example
//!
//! ```
//! use logfmt_std::{Event, FragmentReader, Item, LogFile, ReadOptions, Reader};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("000003.log");
//!
//! // Write two records; the second spans two blocks.
//! let log = LogFile::create(&path)?;
//! let mut writer = log.writer();
//! for record in [&b"hello"[..], &[7u8; 40_000]] {
//!     writer.add_record(record).map_err(|e| log.write_error(e))?;
//! }
//! writer.flush().map_err(|e| log.write_error(e))?;
//! log.sync()?;
//! drop(writer);
//!
//! // Read whole records back, assembling fragmented ones in a buffer.
//! let log = LogFile::open(&path)?;
//! let mut buffer = vec![0u8; 64 * 1024];
//! let mut reader = Reader::new(log.source(), &mut buffer);
//! let mut records = Vec::new();
//! while let Some(item) = reader.next().map_err(|e| log.read_error(e))? {
//!     match item {
//!         Item::Record(record) => records.push((record.offset, record.data.len())),
//!         Item::Corruption(corruption) => eprintln!("{corruption}"),
//!         Item::Oversized(oversized) => eprintln!("skipped {} bytes", oversized.len),
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

#![forbid(unsafe_code)]

mod error;
mod file;
mod sink;
mod source;

pub use error::{Error, Operation};
pub use file::{FileWriter, LogFile};
pub use logfmt_core::*;
pub use sink::StdSink;
pub use source::StdSource;
