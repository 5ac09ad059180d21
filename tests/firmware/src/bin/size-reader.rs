//! `cargo xtask size`: `size-probe` with the reader only (a bootloader or a second core that
//! only reads the log).
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
    black_box(probe::read(&mut block, &mut scratch));
    loop {
        cortex_m::asm::wfi();
    }
}
