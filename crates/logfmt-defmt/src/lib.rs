//! A flight recorder for firmware: a [`defmt`] global logger whose frames are kept in a
//! logfmt flash log in NOR flash, through power cuts, and read back on the host with the
//! firmware's ELF (`logfmt cat --decode defmt --elf FIRMWARE`).
//!
//! - **Staging**: `#[defmt::global_logger]` puts each frame, under a critical section (the
//!   [`critical-section`](critical_section) crate), into a RAM ring of [`BUFFER_SIZE`] bytes.
//!   Callable from any context, interrupts included; it never waits for the flash. A frame
//!   that does not fit is dropped whole and counted; the count is logged (a `warn!` frame) as
//!   soon as there is room.
//! - **Draining**: a [`Recorder`] moves the staged frames into a flash log —
//!   [`drain`](Recorder::drain) from the main loop, `drain_async` from a task (feature
//!   `embedded-storage-async`) — packing them with logfmt's packs (one record header for many
//!   frames) and flushing on a [`FlushPolicy`] (every N frames or bytes, after a frame of a
//!   level, on demand with [`flush`](Recorder::flush)).
//! - **Panics and faults**: [`Recorder::panic`] (from a `#[panic_handler]`) and
//!   [`Recorder::fault`] (from a `HardFault` handler) log the panic message (or the faulting
//!   address) and write every staged frame synchronously.
//! - **Timestamps**: whatever the firmware declares with `defmt::timestamp!`.
//!
//! Each frame is one record (or one record of a pack) holding defmt's raw frame bytes — its
//! string index, its timestamp, its arguments — with no other framing: the log's chunks
//! delimit and check the frames.
//!
//! ```no_run
//! # use logfmt_core::flash::{FlashConfig, MockFlash, WordWriter};
//! # let (mut memory, mut programmed) = ([0u8; 65536], [false; 8192]);
//! # let flash = MockFlash::<8, 4096>::new(&mut memory, &mut programmed, 0xFF).unwrap();
//! use logfmt_defmt::{FlushPolicy, Recorder};
//!
//! let log = WordWriter::open(flash, FlashConfig::new(0, 65536).ring()).unwrap();
//! let mut recorder: Recorder<_> = Recorder::new(log, FlushPolicy::default());
//! defmt::info!("boot {=u32}", 7);
//! recorder.drain().unwrap(); // in the main loop
//! ```
#![no_std]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(test)]
extern crate std;

#[cfg(feature = "embedded-storage-async")]
mod asynch;
mod level;
mod logger;
mod recorder;
mod staging;
mod text;

#[cfg(test)]
mod tests;

pub use level::{Level, Levels};
pub use logger::{BUFFER_SIZE, MAX_FRAME, staging_stats};
pub use recorder::{DrainReport, FlushPolicy, FrameLog, Recorder, RecorderStats};
pub use staging::StagingStats;
