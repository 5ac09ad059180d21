//! The `#[defmt::global_logger]`: each frame staged under a critical section, from any
//! context, never waiting for the flash.

use core::cell::RefCell;

use critical_section::{Mutex, RestoreState};

use crate::staging::{Staging, StagingStats};

/// Bytes of the staging buffer: `LOGFMT_DEFMT_BUFFER` at build time (decimal; a power of two
/// keeps the ring's index arithmetic a mask), 1024 by default.
pub const BUFFER_SIZE: usize = parse_or(option_env!("LOGFMT_DEFMT_BUFFER"), 1024);

/// The largest frame staged, in bytes (longer frames are dropped and counted):
/// `LOGFMT_DEFMT_MAX_FRAME` at build time, 256 by default. The drain keeps one frame of this
/// size in RAM.
pub const MAX_FRAME: usize = parse_or(option_env!("LOGFMT_DEFMT_MAX_FRAME"), 256);

/// A decimal number from a build-time variable, or `default`.
const fn parse_or(value: Option<&str>, default: usize) -> usize {
    let Some(value) = value else {
        return default;
    };
    let bytes = value.as_bytes();
    if bytes.is_empty() {
        return default;
    }
    let mut n = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let digit = bytes[i];
        if !digit.is_ascii_digit() {
            return default;
        }
        n = n * 10 + (digit - b'0') as usize;
        i += 1;
    }
    if n == 0 { default } else { n }
}

/// The staging buffer of the logger.
pub(crate) type Buffer = Staging<BUFFER_SIZE, MAX_FRAME>;

/// The logger's state: the staging buffer and the critical section a frame holds. All zeros at
/// start: the `static` goes in `.bss`.
struct State {
    staging: Buffer,
    /// Whether a frame holds the critical section, and what its release restores.
    held: bool,
    restore: RestoreState,
}

static STATE: Mutex<RefCell<State>> = Mutex::new(RefCell::new(State {
    staging: Staging::new(),
    held: false,
    restore: RestoreState::invalid(),
}));

/// Runs `f` on the staging buffer, in a critical section.
pub(crate) fn with_staging<R>(f: impl FnOnce(&mut Buffer) -> R) -> R {
    critical_section::with(|cs| f(&mut STATE.borrow_ref_mut(cs).staging))
}

/// The staging buffer's counts: frames staged and dropped, bytes in use.
///
/// ```
/// let stats = logfmt_defmt::staging_stats();
/// assert!(stats.used <= logfmt_defmt::BUFFER_SIZE);
/// ```
pub fn staging_stats() -> StagingStats {
    with_staging(|s| s.stats())
}

#[defmt::global_logger]
struct Logger;

// SAFETY (the `defmt::Logger` contract): `acquire` enters a critical section that `release`
// leaves, so frames never interleave, whatever the context (interrupts included); `write` and
// `release` only touch the state inside it. A nested `acquire` (a panic in the middle of a
// frame, whose handler logs) drops the frame in progress and goes on with the new one.
#[allow(unsafe_code)]
unsafe impl defmt::Logger for Logger {
    fn acquire() {
        // SAFETY: released in `release`, with the state it returned, in the same order.
        let restore = unsafe { critical_section::acquire() };
        critical_section::with(|cs| {
            let mut state = STATE.borrow_ref_mut(cs);
            if state.held {
                // A frame left open (a panic inside the logger): keep the outer state, the
                // one to restore at the end.
                // SAFETY: the nested acquire above is released at once; the outer one stays.
                unsafe { critical_section::release(restore) };
            } else {
                state.held = true;
                state.restore = restore;
            }
            state.staging.begin();
        });
    }

    unsafe fn flush() {}

    unsafe fn release() {
        let restore = critical_section::with(|cs| {
            let mut state = STATE.borrow_ref_mut(cs);
            state.staging.end();
            let held = core::mem::take(&mut state.held);
            held.then_some(state.restore)
        });
        if let Some(restore) = restore {
            // SAFETY: the state `acquire` got from its `critical_section::acquire`.
            unsafe { critical_section::release(restore) };
        }
    }

    unsafe fn write(bytes: &[u8]) {
        critical_section::with(|cs| STATE.borrow_ref_mut(cs).staging.write(bytes));
    }
}
