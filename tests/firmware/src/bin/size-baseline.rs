//! The baseline of `cargo xtask size`: `size-probe` without logfmt (records programmed and read
//! back raw through the same flash driver), so that the difference is the log's own cost.
#![no_std]
#![no_main]

use core::hint::black_box;

use cortex_m_rt::entry;
use logfmt_firmware::probe;
use panic_halt as _;

#[entry]
fn main() -> ! {
    // The buffer lives in `.bss`, as a firmware's large buffers do (cortex-m-rt hands out
    // `static mut` items of the entry function as `&'static mut`).
    static mut SCRATCH: [u8; 1024] = [0; 1024];
    let scratch: &'static mut _ = SCRATCH;
    probe::factory_erase();
    let count = black_box(64);
    black_box(probe::baseline(scratch, count));
    loop {
        cortex_m::asm::wfi();
    }
}
