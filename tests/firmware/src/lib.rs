//! Shared parts of the firmware binaries (`src/bin/*`): the test harness, the LevelDB vectors, a
//! memory-mapped flash driver for the size and stack probes, stack painting, and the demo.
//!
//! Everything here runs on bare metal (QEMU's MPS2 boards); only [`demo_log`] is also compiled
//! for the host (by `host/`, when QEMU is not available).
#![no_std]

pub mod demo_log;
pub mod fmtbuf;
pub mod harness;
pub mod probe;
/// The reference reader of the flash log's images, shared with `logfmt-core`'s own flash tests:
/// the read rules written out plainly (R1 padding, R2 torn writes and the resume marker), to
/// check on target what the writers put on the flash.
#[path = "../../../crates/logfmt-core/src/flash/reference.rs"]
pub mod reference;
pub mod rng;
pub mod semihosting_file;
pub mod stack;
pub mod stub_flash;
pub mod vectors;
