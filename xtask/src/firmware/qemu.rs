//! `cargo xtask qemu`: the on-target test suite of `tests/firmware` on each emulated board, and
//! the host build of the demo (where QEMU is missing, `cargo xtask demo` runs it).

use super::emulator::{QEMU_TIMEOUT, ensure_qemu, run_qemu};
use super::{BINS, FIRMWARE, MACHINES, build, describe, executable};
use crate::cmd::{Cmd, Error, Result, fmt_duration, project_root};
use crate::toolchain::{ensure_targets, host_triple};

/// `cargo xtask qemu`.
pub(crate) fn run() -> Result {
    let targets: Vec<&str> = MACHINES.iter().map(|m| m.target).collect();
    ensure_targets(&targets)?;
    ensure_qemu()?;
    // The flight recorder's image is decoded by the CLI.
    let logfmt = crate::cmd::build_release_bin("logfmt-cli", "logfmt")?;
    let mut results = Vec::new();
    for machine in MACHINES {
        println!(
            "\n-- on-target tests: {} ({}, {}) --",
            machine.board, machine.core, machine.target
        );
        // Every firmware binary, so that a change of the core that breaks the size probes or
        // the demo fails here too; only the test suite runs.
        let built = build(machine.target, BINS, &[])?;
        let elf = executable(&built, "on-target")?;
        let run = run_qemu(machine.board, &elf, &project_root(), QEMU_TIMEOUT, "  ")?;
        let summary = run.stdout.lines().rev().find_map(summary_line);
        let verdict = match (run.status, summary) {
            (None, _) => Err(format!(
                "timed out after {} (QEMU killed)",
                fmt_duration(run.took)
            )),
            (Some(status), Some((passed, 0))) if status.success() && passed > 0 => {
                Ok(format!("{passed} passed, 0 failed"))
            }
            (Some(status), Some((passed, failed))) => Err(format!(
                "{passed} passed, {failed} failed; QEMU {}",
                describe(status)
            )),
            (Some(status), None) => Err(format!(
                "no `N passed, M failed` line (a panic?); QEMU {}",
                describe(status)
            )),
        };
        results.push((machine, verdict, run.took));
        println!(
            "\n-- the defmt flight recorder: {} ({}) --",
            machine.board, machine.core
        );
        let elf = executable(&built, "defmt-recorder")?;
        let start = std::time::Instant::now();
        let verdict = super::flight::check(machine, &elf, &logfmt).map_err(|e| e.to_string());
        if let Ok(text) = &verdict {
            println!("  {text}");
        }
        results.push((machine, verdict, start.elapsed()));
    }
    // The demo's host build (`cargo xtask demo` without QEMU) must keep compiling too.
    println!("\n-- the demo's host build (used where QEMU is missing) --");
    Cmd::cargo()
        .dir(FIRMWARE)
        .args([
            "build",
            "--release",
            "-p",
            "logfmt-firmware-host",
            "--target",
        ])
        .args([host_triple()?])
        .run()?;
    println!("\n-- QEMU summary --");
    let mut failed = Vec::new();
    for (machine, verdict, took) in &results {
        let (mark, text) = match verdict {
            Ok(text) => ("ok    ", text.as_str()),
            Err(text) => ("FAILED", text.as_str()),
        };
        println!(
            "  {mark}  {:<11} {:<11} {:<22} {text}  ({} wall)",
            machine.board,
            machine.core,
            machine.target,
            fmt_duration(*took)
        );
        if verdict.is_err() {
            failed.push(machine.board);
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Error::Failed(format!(
            "on-target tests failed on {}",
            failed.join(", ")
        )))
    }
}

/// `(passed, failed)` from a line that is exactly `N passed, M failed`.
fn summary_line(line: &str) -> Option<(u32, u32)> {
    let (passed, failed) = line.trim().split_once(" passed, ")?;
    let failed = failed.strip_suffix(" failed")?;
    Some((passed.parse().ok()?, failed.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_lines() {
        assert_eq!(summary_line("10 passed, 0 failed"), Some((10, 0)));
        assert_eq!(summary_line("3 passed, 2 failed\n"), Some((3, 2)));
        assert_eq!(summary_line("test x ... ok"), None);
        assert_eq!(summary_line("10 passed, 0 failed, oops"), None);
    }
}
