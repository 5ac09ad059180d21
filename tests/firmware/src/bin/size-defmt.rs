//! `cargo xtask size`: the writer-only probe's log kept by the defmt flight recorder instead
//! (`logfmt-defmt`: the global logger, its staging buffer, the drain with packs, the panic
//! path): its cost over `size-writer` is what the recorder adds to a firmware that logs with
//! defmt (the logger, the drain, and defmt's encoding of these three messages).
#![no_std]
#![no_main]

use core::hint::black_box;

use cortex_m_rt::entry;
use logfmt_core::flash::WordWriter;
use logfmt_defmt::{FlushPolicy, Recorder};
use logfmt_firmware::probe;
use logfmt_firmware::stub_flash::StubFlash;
use panic_halt as _;

static NOW: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);
defmt::timestamp!(
    "{=u32:us}",
    NOW.fetch_add(100, core::sync::atomic::Ordering::Relaxed)
);

#[entry]
fn main() -> ! {
    probe::factory_erase();
    if let Ok(log) = WordWriter::open(StubFlash, probe::config()) {
        let mut recorder: Recorder<_> = Recorder::new(log, FlushPolicy::default());
        let count = black_box(64u32);
        for n in 0..count {
            defmt::info!("sample {=u32} value {=i16}", n, black_box(n as i16));
            if n % 16 == 0 {
                defmt::warn!("battery {=f32} V", black_box(3.3));
            }
            if n % 32 == 0 {
                defmt::error!("sensor {=u8} failed", black_box(n as u8));
            }
            black_box(recorder.drain().is_ok());
        }
        black_box(recorder.flush().is_ok());
    }
    loop {
        cortex_m::asm::wfi();
    }
}
