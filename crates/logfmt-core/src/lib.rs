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

#[cfg(feature = "embedded-storage")]
#[cfg_attr(docsrs, doc(cfg(feature = "embedded-storage")))]
pub mod flash;
pub mod pack;
pub mod parts;

mod decoder;
mod error;
mod fragments;
mod options;
mod reader;
mod skip;
mod source;
mod writer;

// The parts, by their short paths inside the crate.
#[allow(unused_imports)]
use parts::*;

/// The on-disk promise: every byte logfmt writes beyond LevelDB's format, how each structure
/// and its version is recognised, and what every 1.x reader reads (`FORMAT.md`).
#[doc = include_str!("../FORMAT.md")]
pub mod on_disk {}

#[cfg(test)]
mod pack_tests;
#[cfg(test)]
mod tests;

// Writing.
pub use error::WriteError;
pub use format::{BLOCK_SIZE, Format};
pub use writer::{FnSink, IoSink, Sink, SliceWriter, WriteOptions, Writer, Written};
// Reading.
pub use options::{LogEnd, ReadOptions};
pub use reader::{Dropped, Reader, Record};
pub use source::{BlockSource, IoSource, SliceSource};
