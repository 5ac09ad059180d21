//! The firmware's own defmt log, kept in flash by logfmt-defmt: the flight recorder.
//!
//! Every `defmt` frame the firmware logs (its `info!`s, the deliveries' lines, the warnings)
//! is staged in RAM by logfmt-defmt's global logger — from any context, never waiting for the
//! flash — and [`drain`] moves the staged frames into a ring log of their own
//! ([`FLIGHT_START`], [`FLIGHT_LEN`]), packed, flushed every 16 frames and after every
//! `warn!` or `error!`. On a panic, [`panic`] writes the staged frames and the panic message
//! synchronously, then resets the chip. Read it back with `logfmt defmt --elf FIRMWARE IMAGE`.
//!
//! The recorder lives in [`RECORDER`], where both the main loop and the panic handler reach
//! it, behind a critical-section mutex: a drain runs with interrupts masked. That costs little
//! here, because the nRF52840 halts the CPU during every NVMC program and erase anyway when it
//! runs from flash; interrupts that log meanwhile are taken when it ends.

use core::cell::RefCell;

use embassy_embedded_hal::flash::partition::BlockingPartition;
use embassy_nrf::nvmc::Nvmc;
use embassy_sync::blocking_mutex::Mutex;
use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use logfmt_core::flash::{FlashConfig, FlashError, WordWriter};
use logfmt_defmt::{FlushPolicy, Level, Recorder};
use static_cell::StaticCell;

/// Where the flight recorder's region starts in the flash: the 128 KiB below the samples' log.
pub(crate) const FLIGHT_START: u32 = 0x000C_0000;
/// The region's length: four 32 KiB blocks.
pub(crate) const FLIGHT_LEN: u32 = 128 * 1024;
/// The flight recorder's log, as offsets in its partition: a ring, the oldest frames ageing
/// out.
const CONFIG: FlashConfig = FlashConfig::new(0, FLIGHT_LEN).ring();
/// When the drain flushes: every 16 frames, and after every `warn!` or `error!`.
const POLICY: FlushPolicy = FlushPolicy::new().every_frames(16).at_level(Level::Warn);

/// The chip's flash, shared by the samples' log, its reader and the flight recorder: each
/// operation takes the mutex.
pub(crate) type SharedFlash = Mutex<CriticalSectionRawMutex, RefCell<Nvmc<'static>>>;
/// A region of [`SharedFlash`].
pub(crate) type Region = BlockingPartition<'static, CriticalSectionRawMutex, Nvmc<'static>>;
/// The error of a [`Region`]'s flash operations.
pub(crate) type RegionError =
    embassy_embedded_hal::flash::partition::Error<embassy_nrf::nvmc::Error>;

/// The flight recorder: made by the first [`start`] (at run time, so that its kilobyte of
/// buffers takes no flash for an initial value) and kept for the program's life.
static CELL: StaticCell<FlightRecorder> = StaticCell::new();
/// The flight recorder, where the main loop and the panic handler reach it.
static RECORDER: Mutex<CriticalSectionRawMutex, RefCell<Slot>> = Mutex::new(RefCell::new(Slot {
    recorder: None,
    open: false,
}));

/// A recorder of the firmware's frames into its region.
type FlightRecorder = Recorder<WordWriter<Region>>;

/// Where the flight recorder is, and whether its log is open.
struct Slot {
    /// The recorder, once [`start`] made it.
    recorder: Option<&'static mut FlightRecorder>,
    /// Whether its log is open: false before [`start`] and after a failed drain.
    open: bool,
}

impl Slot {
    /// The recorder, if its log is open.
    fn open(&mut self) -> Option<&mut FlightRecorder> {
        self.recorder.as_deref_mut().filter(|_| self.open)
    }
}

/// Opens the flight recorder's ring in `flash` (resuming after the last frame a flush kept)
/// and installs it for [`drain`] and [`panic`].
///
/// # Errors
/// A flash error while opening the log: the frames stay staged (the newest dropped and
/// counted when the staging buffer fills) until a later `start` succeeds.
pub(crate) fn start(flash: &'static SharedFlash) -> Result<(), FlashError<RegionError>> {
    let log = WordWriter::open(Region::new(flash, FLIGHT_START, FLIGHT_LEN), CONFIG)?;
    let recorder = Recorder::new(log, POLICY);
    RECORDER.lock(|slot| {
        let mut slot = slot.borrow_mut();
        match slot.recorder.as_deref_mut() {
            Some(kept) => *kept = recorder,
            None => slot.recorder = Some(CELL.init(recorder)),
        }
        slot.open = true;
    });
    Ok(())
}

/// Moves the staged frames into the flight recorder's log, flushing as [`POLICY`] says. A
/// failed drain closes the recorder (the writer gave up): [`start`] opens it again.
pub(crate) fn drain() {
    RECORDER.lock(|slot| {
        let mut slot = slot.borrow_mut();
        if let Some(recorder) = slot.open()
            && recorder.drain().is_err()
        {
            slot.open = false;
        }
    });
}

/// Whether the flight recorder is open.
pub(crate) fn is_open() -> bool {
    RECORDER.lock(|slot| slot.borrow().open)
}

/// The panic handler: the staged frames and the panic's message written to the flight
/// recorder, flushed, then a reset. A panic inside a drain (the recorder in use) writes
/// nothing more: the frames flushed before it are kept.
#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    RECORDER.lock(|slot| {
        if let Ok(mut slot) = slot.try_borrow_mut()
            && let Some(recorder) = slot.open()
        {
            let _ = recorder.panic(info);
        }
    });
    cortex_m::peripheral::SCB::sys_reset()
}
