//! The reference firmware's log with a read cursor: what `size-probe` does (append, read), then
//! the records cursor 0 has not delivered read with `CursorReader` and the cursor committed.
//! `cargo xtask size` reports what the cursor adds to the writer and reader.
#![no_std]
#![no_main]

use core::hint::black_box;

use cortex_m_rt::entry;
use logfmt_firmware::probe;
use panic_halt as _;

#[entry]
fn main() -> ! {
    static mut SCRATCH: [u8; 1024] = [0; 1024];
    let scratch: &'static mut _ = SCRATCH;
    probe::factory_erase();
    let count = black_box(64);
    black_box(probe::append(scratch, count, false));
    black_box(probe::read(scratch));
    black_box(probe::deliver(scratch));
    loop {
        cortex_m::asm::wfi();
    }
}
