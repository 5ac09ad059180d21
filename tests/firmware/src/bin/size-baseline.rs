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
    let mut block = [0u8; BLOCK_SIZE];
    let mut scratch = [0u8; 1024];
    probe::factory_erase();
    let count = black_box(64);
    black_box(probe::baseline(&mut block, &mut scratch, count));
    loop {
        cortex_m::asm::wfi();
    }
}
