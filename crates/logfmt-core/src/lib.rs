#![doc = include_str!("../README.md")]
#![no_std]
// No `unsafe` at all without `std`; with `std`, one audited call into the SSE 4.2 checksum
// (see `checksum`).
#![cfg_attr(not(feature = "std"), forbid(unsafe_code))]
#![cfg_attr(feature = "std", deny(unsafe_code))]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(any(test, feature = "std"))]
extern crate std;

pub mod block;
pub mod checksum;
mod decoder;
mod error;
#[cfg(feature = "embedded-storage")]
#[cfg_attr(docsrs, doc(cfg(feature = "embedded-storage")))]
pub mod flash;
pub mod format;
mod fragments;
mod options;
mod reader;
mod source;
mod writer;

#[cfg(test)]
mod tests;

/// Whether the reader's and writers' hot paths are compiled in: inlined repeats of the general
/// path's commonest case (a `FULL` chunk inside a block), for speed. Bare-metal targets, where
/// flash is scarcer than cycles, take the general path for every record: the host tests run
/// the hot paths, the on-target tests (QEMU) the general one, against the same LevelDB vectors,
/// and the property tests compare `Reader` (hot path) with `FragmentReader` (general path).
const HOT_PATHS: bool = cfg!(not(target_os = "none"));

pub use error::{Corruption, CorruptionKind, WriteError};
pub use format::{
    BLOCK_SIZE, Format, FragmentKind, HEADER_SIZE, RECYCLABLE_HEADER_SIZE, RecordType,
};
pub use fragments::{Aborted, Event, Fragment, FragmentReader};
pub use options::{LogEnd, ReadFormat, ReadOptions};
pub use reader::{Item, Oversized, Reader, Record};
pub use source::{BlockSource, IoSource, SliceSource};
pub use writer::{BufferFull, FnSink, IoSink, Sink, SliceWriter, WriteOptions, Writer, Written};
