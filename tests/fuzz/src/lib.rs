//! The properties behind logfmt's fuzz targets, one module per target.
//!
//! Each module has a `check(data: &[u8])` that decodes the fuzzer's bytes into an input and
//! panics if a property fails. The fuzz targets (`fuzz_targets/*.rs`) call them; the test
//! `tests/tests/fuzz_corpus.rs` of `logfmt-tests` replays the committed corpus of every target
//! through the same modules in a plain `cargo test`, without nightly or libFuzzer.
//!
//! | target | module | input |
//! |---|---|---|
//! | `reader` | [`reader`] | a 16-byte header of options, then a log |
//! | `block` | [`block`] | a 4-byte header of chunk rules, then one block |
//! | `writer` | [`writer`] | structured (`arbitrary`): a start offset, record specs, flushes, pads, a fault |
//! | `flash_reader` | [`flash_reader`] | a 4-byte header, then a flash image |
//! | `flash_writer` | [`flash_writer`] | structured: sessions of records, each maybe cut by a power failure |
//! | `flash_ring` | [`flash_ring`] | a 2-byte header of geometry, then operations: records, flushes, reopenings, power cuts |
//! | `pack` | [`pack`] | a pack's payload |
//! | `content` | [`content`] | a record, decoded as a WriteBatch and as a VersionEdit |
//! | `decompress` | [`decompress`] | a kind byte, then a zstd pack's payload or a RocksDB-compressed record |

#![allow(missing_docs)]

pub mod block;
pub mod common;
pub mod content;
pub mod decompress;
pub mod flash_read;
pub mod flash_reader;
pub mod flash_ring;
pub mod flash_writer;
pub mod pack;
pub mod reader;
pub mod writer;

/// The reference reader of flash log images (`logfmt-core`'s flash tests): the flash read
/// rules written out plainly (padding, torn writes before a resume marker).
#[path = "../../../crates/logfmt-core/src/flash/reference.rs"]
pub mod reference;

/// The workspace's independent model of the format (`tests/src/model.rs`).
#[path = "../../src/model.rs"]
#[allow(dead_code, unreachable_pub)]
pub mod model;
