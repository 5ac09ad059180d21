//! The reference firmware of `cargo xtask size`: a sensor log in NOR flash, written with
//! the small-RAM `WordWriter` and read back with `Reader` over `FlashSource` (CRC included), over a
//! memory-mapped flash driver. No printing, `panic-halt`: only the log's own code is added to
//! `size-baseline`.
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
    black_box(probe::append(scratch, count, false));
    black_box(probe::read(block, scratch));
    loop {
        cortex_m::asm::wfi();
    }
}
