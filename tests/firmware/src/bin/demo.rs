//! `cargo xtask demo` on the device: runs [`logfmt_firmware::demo_log`] on the Cortex-M under
//! QEMU, then saves the flash region (`flash.img`) and the acknowledged samples (`acked.txt`) to
//! host files through semihosting, in QEMU's working directory.
#![no_std]
#![no_main]

use core::fmt;

use cortex_m_rt::entry;
use cortex_m_semihosting::hprintln;
use logfmt_core::BLOCK_SIZE;
use logfmt_firmware::demo_log::{self, Console, REGION, WORDS};
use logfmt_firmware::fmtbuf::FmtBuf;
use logfmt_firmware::harness::{core_name, exit};
use logfmt_firmware::semihosting_file::write_file;
use panic_semihosting as _;

struct Semihosting;

impl Console for Semihosting {
    fn line(&mut self, args: fmt::Arguments<'_>) {
        hprintln!("{}", args);
    }
}

#[entry]
fn main() -> ! {
    // The simulated flash, its per-word flags, the log's block buffer and a reading buffer.
    let mut memory = [0u8; REGION];
    let mut words = [false; WORDS];
    let mut block = [0u8; BLOCK_SIZE];
    let mut scratch = [0u8; 1024];
    hprintln!("demo firmware on {} (QEMU)", core_name());
    let outcome = match demo_log::run(
        &mut memory,
        &mut words,
        &mut block,
        &mut scratch,
        &mut Semihosting,
    ) {
        Ok(outcome) => outcome,
        Err(e) => {
            hprintln!("demo FAILED: {}", e);
            exit(false)
        }
    };
    let mut acked = FmtBuf::<4096>::new();
    for ack in outcome.acks() {
        let _ = demo_log::ack_line(ack, &mut acked);
    }
    for (name, data) in [
        ("flash.img\0", &memory[..]),
        ("acked.txt\0", acked.as_str().as_bytes()),
    ] {
        if let Err(e) = write_file(name, data) {
            hprintln!(
                "could not write {} on the host: {:?}",
                name.trim_end_matches('\0'),
                e
            );
            exit(false);
        }
    }
    hprintln!(
        "saved the flash region ({} bytes) to flash.img and the acknowledged samples to acked.txt",
        memory.len()
    );
    exit(true)
}
