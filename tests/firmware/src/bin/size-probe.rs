//! The reference firmware of `cargo xtask size`: a sensor log kept as a ring in NOR flash,
//! written with the small-RAM `WordWriter` and read back with the small-RAM `WordReader` (CRC
//! included, no block buffer), over a memory-mapped flash driver. No printing, `panic-halt`: only the log's own code is added to
//! `size-baseline`.
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
    black_box(probe::append(scratch, count, false));
    black_box(probe::read(scratch));
    loop {
        cortex_m::asm::wfi();
    }
}
