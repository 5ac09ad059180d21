//! `cargo xtask size`: `size-probe` with the writer only (a log that is only ever read on the
//! host, from a flash dump): the small-RAM writer, no block buffer.
#![no_std]
#![no_main]

use core::hint::black_box;

use cortex_m_rt::entry;
use logfmt_firmware::probe;
use panic_halt as _;

#[entry]
fn main() -> ! {
    // The record buffer lives in `.bss`, as a firmware's buffers do (cortex-m-rt hands out
    // `static mut` items of the entry function as `&'static mut`).
    static mut SCRATCH: [u8; 1024] = [0; 1024];
    let scratch: &'static mut _ = SCRATCH;
    probe::factory_erase();
    let count = black_box(64);
    black_box(probe::append(scratch, count, false));
    loop {
        cortex_m::asm::wfi();
    }
}
