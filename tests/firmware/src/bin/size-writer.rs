//! `cargo xtask size`: `size-probe` with the writer only (a log that is only ever read on the
//! host, from a flash dump).
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
    loop {
        cortex_m::asm::wfi();
    }
}
