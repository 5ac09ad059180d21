//! The ten lines of `crates/logfmt-defmt/README.md` ("Adding it to a firmware"), built as a
//! firmware by `cargo xtask qemu` and checked to be the README's own by xtask's tests: between
//! the `README` markers, the README's code block, line for line.
#![no_std]
#![no_main]

use cortex_m_rt::entry;
use logfmt_core::flash::{FlashConfig, MockFlash, WordWriter};
use panic_halt as _;

static NOW: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);

fn now_us() -> u32 {
    NOW.fetch_add(100, core::sync::atomic::Ordering::Relaxed)
}

fn read_temperature() -> f32 {
    21.5
}

#[entry]
fn main() -> ! {
    let memory = cortex_m::singleton!(: [u8; 65536] = [0; 65536]).unwrap();
    let words = cortex_m::singleton!(: [bool; 8192] = [false; 8192]).unwrap();
    let flash = MockFlash::<8, 4096>::new(memory, words, 0xFF).unwrap();
    const REGION: u32 = 65536;
    // README begin
    use logfmt_defmt::{FlushPolicy, Recorder};
    defmt::timestamp!("{=u32:us}", now_us());

    let log = WordWriter::open(flash, FlashConfig::new(0, REGION).ring()).unwrap();
    let mut recorder: Recorder<_> = Recorder::new(log, FlushPolicy::default());
    loop {
        defmt::info!("temperature {=f32}", read_temperature());
        recorder.drain().unwrap(); // staged frames into the flash, flushed as the policy says
    }
    // README end
}
