//! The baseline of `cargo xtask size`: `size-probe` without logfmt (records programmed and read
//! back raw through the same flash driver), so that the difference is the log's own cost.
#![no_std]
#![no_main]

use core::hint::black_box;

use cortex_m_rt::entry;
use logfmt_core::BLOCK_SIZE;
use logfmt_firmware::probe;
use panic_halt as _;

#[entry]
fn main() -> ! {
    // The buffers live in `.bss`, as a firmware's large buffers do (cortex-m-rt hands out
    // `static mut` items of the entry function as `&'static mut`).
    static mut BLOCK: [u8; BLOCK_SIZE] = [0; BLOCK_SIZE];
    static mut SCRATCH: [u8; 1024] = [0; 1024];
    let (block, scratch): (&'static mut _, &'static mut _) = (BLOCK, SCRATCH);
    probe::factory_erase();
    let count = black_box(64);
    black_box(probe::baseline(block, scratch, count));
    loop {
        cortex_m::asm::wfi();
    }
}
