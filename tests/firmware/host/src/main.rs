//! `cargo xtask demo` where QEMU is not available: the firmware's demo logic
//! (`../src/demo_log/`, the very same files) on the host, against the same simulated NOR flash.
//!
//! Usage: `demo-host OUT_DIR`; writes `OUT_DIR/flash.img`, `OUT_DIR/acked.txt` and
//! `OUT_DIR/inflight.txt`.

use std::fmt;
use std::path::PathBuf;
use std::process::ExitCode;

#[path = "../../src/demo_log/mod.rs"]
#[allow(dead_code, unused_imports)]
mod demo_log;

use demo_log::{Ack, BLOCKS, Buffers, Console, MAX_ACKS, MAX_IN_FLIGHT, REGION, SCRATCH, WORDS};
use logfmt_core::BLOCK_SIZE;

struct Stdout;

impl Console for Stdout {
    fn line(&mut self, args: fmt::Arguments<'_>) {
        println!("{args}");
    }
}

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: demo-host OUT_DIR");
        return ExitCode::from(2);
    };
    let mut memory = vec![0u8; REGION];
    let mut words = vec![false; WORDS];
    let mut block = Box::new([0u8; BLOCK_SIZE]);
    let mut read_block = Box::new([0u8; BLOCK_SIZE]);
    let mut scratch = vec![0u8; SCRATCH];
    let mut acks = vec![Ack::default(); MAX_ACKS];
    let mut in_flight = vec![Ack::default(); MAX_IN_FLIGHT];
    let mut ram = Buffers {
        memory: &mut memory,
        words: &mut words,
        block: &mut block,
        read_block: &mut read_block,
        scratch: &mut scratch,
        acks: &mut acks,
        in_flight: &mut in_flight,
    };
    println!("demo on the host ({BLOCKS} simulated flash blocks in RAM): the firmware's demo code");
    let outcome = match demo_log::run(&mut ram, &mut Stdout) {
        Ok(outcome) => outcome,
        Err(e) => {
            println!("demo FAILED: {e}");
            return ExitCode::FAILURE;
        }
    };
    let lines = |list: &[Ack]| {
        let mut text = String::new();
        for ack in list {
            let _ = demo_log::ack_line(ack, &mut text);
        }
        text
    };
    let acked = lines(&acks[..outcome.acked]);
    let in_flight = lines(&in_flight[..outcome.in_flight]);
    for (name, data) in [
        ("flash.img", &memory[..]),
        ("acked.txt", acked.as_bytes()),
        ("inflight.txt", in_flight.as_bytes()),
    ] {
        let path = dir.join(name);
        if let Err(e) = std::fs::write(&path, data) {
            eprintln!("could not write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    println!(
        "saved the flash region ({} bytes) to flash.img, the acknowledged samples to acked.txt \
         and those in flight at a cut to inflight.txt",
        memory.len()
    );
    ExitCode::SUCCESS
}
