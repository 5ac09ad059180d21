//! `cargo xtask demo` on the device: runs [`logfmt_firmware::demo_log`] on the Cortex-M under
//! QEMU, then saves the flash region (`flash.img`), the acknowledged samples (`acked.txt`) and
//! the samples in flight at a power cut (`inflight.txt`) to host files through semihosting, in
//! QEMU's working directory.
#![no_std]
#![no_main]

use core::fmt;

use cortex_m_rt::entry;
use cortex_m_semihosting::hprintln;
use logfmt_core::BLOCK_SIZE;
use logfmt_firmware::demo_log::{
    self, Ack, Buffers, Console, MAX_ACKS, MAX_IN_FLIGHT, REGION, SCRATCH, WORDS,
};
use logfmt_firmware::harness::{core_name, exit};
use logfmt_firmware::semihosting_file::{HostFile, HostFileError, write_file};
use panic_semihosting as _;

struct Semihosting;

impl Console for Semihosting {
    fn line(&mut self, args: fmt::Arguments<'_>) {
        hprintln!("{}", args);
    }
}

/// Writes one `acked.txt` line per sample to the host file `name`.
fn save_samples(name: &str, samples: &[Ack]) -> Result<(), HostFileError> {
    let mut file = HostFile::create(name)?;
    for ack in samples {
        let _ = demo_log::ack_line(ack, &mut file);
    }
    file.close()
}

#[entry]
fn main() -> ! {
    // The simulated flash and its per-word flags, the writer's and the reader's block buffers,
    // the reader's record buffer, and the demo's own account of the samples.
    let mut memory = [0u8; REGION];
    let mut words = [false; WORDS];
    let mut block = [0u8; BLOCK_SIZE];
    let mut read_block = [0u8; BLOCK_SIZE];
    let mut scratch = [0u8; SCRATCH];
    let mut acks = [Ack::default(); MAX_ACKS];
    let mut in_flight = [Ack::default(); MAX_IN_FLIGHT];
    hprintln!("demo firmware on {} (QEMU)", core_name());
    let mut ram = Buffers {
        memory: &mut memory,
        words: &mut words,
        block: &mut block,
        read_block: &mut read_block,
        scratch: &mut scratch,
        acks: &mut acks,
        in_flight: &mut in_flight,
    };
    let outcome = match demo_log::run(&mut ram, &mut Semihosting) {
        Ok(outcome) => outcome,
        Err(e) => {
            hprintln!("demo FAILED: {}", e);
            exit(false)
        }
    };
    let saved = write_file("flash.img\0", &memory)
        .map_err(|e| ("flash.img", e))
        .and_then(|()| {
            save_samples("acked.txt\0", &acks[..outcome.acked]).map_err(|e| ("acked.txt", e))
        })
        .and_then(|()| {
            save_samples("inflight.txt\0", &in_flight[..outcome.in_flight])
                .map_err(|e| ("inflight.txt", e))
        });
    if let Err((name, e)) = saved {
        hprintln!("could not write {} on the host: {:?}", name, e);
        exit(false);
    }
    hprintln!(
        "saved the flash region ({} bytes) to flash.img, the acknowledged samples to acked.txt \
         and those in flight at a cut to inflight.txt",
        memory.len()
    );
    exit(true)
}
