//! The parts the record loop is built of, for programs that need more than
//! [`Reader::next_record`](crate::Reader::next_record) and [`Writer`](crate::Writer): every
//! reader item and report ([`Item`], [`Corruption`], [`Oversized`], [`Coded`]), the fragment
//! reader for records of any size ([`FragmentReader`]), the regions LevelDB skips silently
//! ([`Skip`]), the read formats ([`ReadFormat`], [`ChunkFormat`]), the chunk parser and its
//! rules ([`block`]), record assembly ([`assembler`]), the checksum ([`checksum`]), the format's
//! constants and record types ([`format`]) and the flash ring's block header ([`ring`]).
//!
//! ```
//! use logfmt_core::parts::{Event, FragmentReader};
//! use logfmt_core::SliceWriter;
//!
//! let mut log = [0u8; 64];
//! let mut writer = SliceWriter::new(&mut log);
//! writer.add_record(b"hello")?;
//! let len = writer.len();
//!
//! // A record fragment by fragment, with no buffer but the block.
//! let mut reader = FragmentReader::from_slice(&log[..len]);
//! let mut bytes = 0;
//! while let Some(event) = reader.next()? {
//!     if let Event::Fragment(fragment) = event {
//!         bytes += fragment.data.len();
//!     }
//! }
//! assert_eq!(bytes, 5);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod assembler;
pub mod block;
pub mod checksum;
pub mod cursor;
pub mod dialect;
pub mod format;
pub mod ring;

pub use crate::error::{Corruption, CorruptionKind};
pub use crate::fragments::{Aborted, ChunksAfter, Event, Fragment, FragmentReader};
pub use crate::options::ReadFormat;
pub use crate::reader::{Coded, CodedKind, DropReason, Item, Oversized};
pub use crate::skip::{Skip, SkipKind};
pub use crate::writer::BufferFull;
pub use dialect::Dialect;
pub use format::{ChunkFormat, FragmentKind, HEADER_SIZE, RECYCLABLE_HEADER_SIZE, RecordType};
