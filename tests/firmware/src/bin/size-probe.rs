//! The reference firmware of `cargo xtask size`: a sensor log in NOR flash, written with
//! `FlashWriter` and read back with `Reader` over `FlashSource` (CRC included), over a
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
    let mut block = [0u8; BLOCK_SIZE];
    let mut scratch = [0u8; 1024];
    probe::factory_erase();
    let count = black_box(64);
    black_box(probe::append(&mut block, &mut scratch, count, false));
    black_box(probe::read(&mut block, &mut scratch));
    loop {
        cortex_m::asm::wfi();
    }
}
