//! `cargo xtask demo` where QEMU is not available: the firmware's demo logic
//! (`../src/demo_log.rs`, the very same file) on the host, against the same simulated NOR flash.
//!
//! Usage: `demo-host OUT_DIR`; writes `OUT_DIR/flash.img` and `OUT_DIR/acked.txt`.

use std::fmt;
use std::path::PathBuf;
use std::process::ExitCode;

#[path = "../../src/demo_log.rs"]
#[allow(dead_code)]
mod demo_log;
/// The reference reader the demo reads the flash back with (as in the firmware's library).
#[path = "../../../../crates/logfmt-core/src/flash/reference.rs"]
mod reference;

use demo_log::{BLOCKS, Console, REGION, WORDS};
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
    let mut scratch = vec![0u8; 1024];
    println!("demo on the host ({BLOCKS} simulated flash blocks in RAM): the firmware's demo code");
    let outcome = match demo_log::run(
        &mut memory,
        &mut words,
        &mut block,
        &mut scratch,
        &mut Stdout,
    ) {
        Ok(outcome) => outcome,
        Err(e) => {
            println!("demo FAILED: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut acked = String::new();
    for ack in outcome.acks() {
        let _ = demo_log::ack_line(ack, &mut acked);
    }
    for (name, data) in [("flash.img", &memory[..]), ("acked.txt", acked.as_bytes())] {
        let path = dir.join(name);
        if let Err(e) = std::fs::write(&path, data) {
            eprintln!("could not write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    println!(
        "saved the flash region ({} bytes) to flash.img and the acknowledged samples to acked.txt",
        memory.len()
    );
    ExitCode::SUCCESS
}
