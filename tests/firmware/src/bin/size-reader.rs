//! `cargo xtask size`: `size-probe` with the reader only (a bootloader or a second core that
//! only reads the log).
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
    black_box(probe::read(scratch));
    loop {
        cortex_m::asm::wfi();
    }
}
