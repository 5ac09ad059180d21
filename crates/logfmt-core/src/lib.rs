#![doc = include_str!("../README.md")]
#![no_std]
// No `unsafe` at all but on x86-64, where one module has it: the CRC-32C engine's vector
// intrinsics (`checksum::x86`, with the measured need and a `SAFETY` note on every block).
#![cfg_attr(not(target_arch = "x86_64"), forbid(unsafe_code))]
#![cfg_attr(target_arch = "x86_64", deny(unsafe_code))]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(any(test, feature = "std"))]
extern crate std;

pub mod assembler;
pub mod block;
pub mod checksum;
pub mod cursor;
mod decoder;
mod error;
#[cfg(feature = "embedded-storage")]
#[cfg_attr(docsrs, doc(cfg(feature = "embedded-storage")))]
pub mod flash;
pub mod format;
mod fragments;
mod options;
pub mod pack;
pub mod packing;
mod reader;
pub mod ring;
mod skip;
mod source;
mod writer;

/// The on-disk promise: every byte logfmt writes beyond LevelDB's format, how each structure
/// and its version is recognised, and what every 1.x reader reads (`FORMAT.md`).
#[doc = include_str!("../FORMAT.md")]
pub mod on_disk {}

#[cfg(test)]
mod pack_tests;
#[cfg(test)]
mod tests;

pub use error::{Corruption, CorruptionKind, WriteError};
pub use format::{
    BLOCK_SIZE, ChunkFormat, Format, FragmentKind, HEADER_SIZE, RECYCLABLE_HEADER_SIZE, RecordType,
};
pub use fragments::{Aborted, ChunksAfter, Event, Fragment, FragmentReader};
pub use options::{LogEnd, ReadFormat, ReadOptions};
pub use reader::{Item, Oversized, Reader, Record};
pub use skip::{Skip, SkipKind};
pub use source::{BlockSource, IoSource, SliceSource};
pub use writer::{BufferFull, FnSink, IoSink, Sink, SliceWriter, WriteOptions, Writer, Written};
