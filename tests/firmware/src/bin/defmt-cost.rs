//! `cargo xtask size`: what one `defmt::info!` costs through `logfmt-defmt`, and the drain a
//! frame, in guest instructions under QEMU with `-icount shift=0` (one instruction a
//! nanosecond of virtual time), counted with SysTick on the core clock (25 MHz on the MPS2
//! boards: one tick is 40 instructions), over 1000 frames; and the RAM of the recorder.
#![no_std]
#![no_main]

use core::hint::black_box;

use cortex_m::peripheral::{SYST, syst::SystClkSource};
use cortex_m_rt::entry;
use cortex_m_semihosting::hprintln;
use logfmt_core::BLOCK_SIZE;
use logfmt_core::flash::{FlashConfig, MockFlash, WordWriter};
use logfmt_defmt::{FlushPolicy, Recorder};
use logfmt_firmware::harness::exit;
use panic_semihosting as _;

static NOW: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);
defmt::timestamp!(
    "{=u32:us}",
    NOW.fetch_add(100, core::sync::atomic::Ordering::Relaxed)
);

/// Guest instructions a SysTick tick (25 MHz core clock, one instruction a nanosecond).
const INSTRUCTIONS_PER_TICK: u64 = 40;
const FRAMES: u32 = 1000;
const REGION: usize = 4 * BLOCK_SIZE;

/// Ticks `f` takes.
fn ticks(syst: &SYST, f: impl FnOnce()) -> u64 {
    let start = SYST::get_current();
    f();
    let end = SYST::get_current();
    let _ = syst;
    // SysTick counts down from its reload value (24 bits).
    u64::from(start.wrapping_sub(end) & 0x00FF_FFFF)
}

#[entry]
fn main() -> ! {
    let Some(mut p) = cortex_m::Peripherals::take() else {
        exit(false)
    };
    p.SYST.set_clock_source(SystClkSource::Core);
    p.SYST.set_reload(0x00FF_FFFF);
    p.SYST.clear_current();
    p.SYST.enable_counter();
    let memory = cortex_m::singleton!(: [u8; REGION] = [0; REGION]).unwrap_or_else(|| exit(false));
    let words = cortex_m::singleton!(: [bool; REGION / 8] = [false; REGION / 8])
        .unwrap_or_else(|| exit(false));
    let Ok(flash) = MockFlash::<8, 4096>::new(memory, words, 0xFF) else {
        exit(false)
    };
    let Ok(log) = WordWriter::open(flash, FlashConfig::new(0, REGION as u32).ring()) else {
        exit(false)
    };
    let mut recorder: Recorder<_> = Recorder::new(log, FlushPolicy::new().every_frames(16));
    // Staged in batches the 1 KiB buffer holds (12-byte frames: 40 a batch), then drained.
    let (mut log_ticks, mut drain_ticks) = (0u64, 0u64);
    for batch in 0..FRAMES / 40 {
        log_ticks += ticks(&p.SYST, || {
            for n in 0..40 {
                defmt::info!("sample {=u32} value {=i16}", black_box(batch * 40 + n), 7);
            }
        });
        drain_ticks += ticks(&p.SYST, || {
            black_box(recorder.drain().is_ok());
        });
    }
    let stats = logfmt_defmt::staging_stats();
    let per = |t: u64| t * INSTRUCTIONS_PER_TICK / u64::from(FRAMES);
    hprintln!(
        "info!: {} instructions; drain: {} instructions a frame (packs, a flush every 16 frames, \
         the simulated flash in RAM); {} frames, {} dropped",
        per(log_ticks),
        per(drain_ticks),
        stats.staged,
        stats.dropped
    );
    hprintln!(
        "RAM: staging buffer {} B; recorder {} B (its log, the WordWriter, {} B)",
        logfmt_defmt::BUFFER_SIZE,
        core::mem::size_of_val(&recorder),
        core::mem::size_of::<WordWriter<MockFlash<'static, 8, 4096>>>()
    );
    exit(stats.dropped == 0)
}
