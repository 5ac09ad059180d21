//! logfmt's inspector in the browser.
//!
//! The same reader as the `logfmt` command, compiled to WebAssembly: a page (built by
//! `cargo xtask web`) opens local files — nothing is uploaded — and reads them in slices, so a
//! log of many gigabytes is never loaded whole. It shows the block map, the damage with
//! LevelDB's reasons and a plain-language gloss, the records with their `WriteBatch` or
//! `VersionEdit` decoded, a key search, and a ring image from its oldest record to its newest.
//!
//! Everything here is plain Rust over [`std::io::Read`] + [`std::io::Seek`], tested natively;
//! the WebAssembly exports (`wasm32` only) hand it a file that JavaScript reads slice by slice.
//!
//! ```
//! use std::io::Cursor;
//! use logfmt_core::{BLOCK_SIZE, FnSink, Writer};
//! use logfmt_web::{Options, inspect};
//!
//! let mut log = Vec::new();
//! let mut writer = Writer::new(
//!     FnSink(|bytes: &[u8]| Ok::<(), std::convert::Infallible>(log.extend_from_slice(bytes))),
//!     [0u8; BLOCK_SIZE],
//! );
//! writer.add_record(b"hello").unwrap();
//! writer.add_record(b"world").unwrap();
//! writer.flush().unwrap();
//! let _ = writer.into_parts();
//!
//! let report = inspect(Cursor::new(&log), log.len() as u64, &Options::default())?;
//! assert_eq!(report.records, 2);
//! assert!(report.corruptions.is_empty());
//! # Ok::<(), std::io::Error>(())
//! ```

mod content;
mod feed;
mod inspect;
mod report;
mod spans;
mod window;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use content::{ContentKind, describe};
pub use inspect::{FindDialect, Inspection, Options, inspect, search};
pub use logfmt_std::layout::gloss;
pub use report::{Corruption, Hit, PebbleSynced, RecordView, Report, RingView, Tail};
pub use spans::{Span, block_spans};
pub use window::{ReadAt, Window};
