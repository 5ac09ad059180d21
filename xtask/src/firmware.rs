//! The firmware tasks, all on `tests/firmware` (its own cargo workspace, built from its own
//! directory so that its `.cargo/config.toml` applies), one module each:
//!
//! - [`qemu`]: the on-target test suite on an emulated Cortex-M3 (QEMU `mps2-an385`) and
//!   Cortex-M4F (`mps2-an386`);
//! - [`size`]: flash and RAM of a reference firmware (flash log writer + reader + CRC) against a
//!   baseline, for each CRC table size, with state sizes and stack high-water marks;
//! - [`demo`]: a sensor logger's ring log in NOR flash that wraps and loses power again and
//!   again (mid-record, mid-flush, mid-erase), rebooting after each cut, under QEMU (or on the
//!   host without it); then the `logfmt` CLI reads the flash image back.
//!
//! This module builds the firmware; [`emulator`] installs and runs QEMU. [`example`] builds
//! the nRF52840 example (`crates/logfmt-example-nrf`, a workspace of its own too), whose size
//! [`size`] reports beside the reference firmware's.

pub(crate) mod demo;
mod emulator;
pub(crate) mod example;
pub(crate) mod flight;
pub(crate) mod qemu;
pub(crate) mod size;

use std::path::PathBuf;
use std::process::ExitStatus;

use crate::cmd::{Cmd, Error, Result, executables};
use crate::toolchain::{THUMBV7EM, THUMBV7M};

/// The firmware crate, relative to the project root.
pub(crate) const FIRMWARE: &str = "tests/firmware";

/// The QEMU machine of each target.
pub(crate) const MACHINES: &[Machine] = &[
    Machine {
        target: THUMBV7M,
        board: "mps2-an385",
        core: "Cortex-M3",
    },
    Machine {
        target: THUMBV7EM,
        board: "mps2-an386",
        core: "Cortex-M4F",
    },
];

/// A QEMU board that emulates a target.
pub(crate) struct Machine {
    pub(crate) target: &'static str,
    pub(crate) board: &'static str,
    pub(crate) core: &'static str,
}

/// Every binary of the firmware crate.
pub(crate) const BINS: &[&str] = &[
    "on-target",
    "demo",
    "size-probe",
    "size-writer",
    "size-reader",
    "size-baseline",
    "stack-probe",
    "defmt-recorder",
    "defmt-minimal",
];

/// Builds `bins` of the firmware for `target` (release profile) with `features`; returns the
/// path of each executable, by name.
pub(crate) fn build(
    target: &str,
    bins: &[&str],
    features: &[&str],
) -> Result<Vec<(String, PathBuf)>> {
    let mut cmd = Cmd::cargo().dir(FIRMWARE).args([
        "build",
        "--release",
        "--target",
        target,
        "--message-format=json-render-diagnostics",
    ]);
    for bin in bins {
        cmd = cmd.args(["--bin", bin]);
    }
    if !features.is_empty() {
        cmd = cmd.args(["--features".to_owned(), features.join(",")]);
    }
    let json = cmd.read()?;
    let executables = executables(&json);
    for bin in bins {
        if !executables.iter().any(|(name, _)| name == bin) {
            return Err(Error::Failed(format!(
                "cargo built no executable named `{bin}` for {target}"
            )));
        }
    }
    Ok(executables)
}

/// The path of the executable `name` among those `build` returned.
pub(crate) fn executable(built: &[(String, PathBuf)], name: &str) -> Result<PathBuf> {
    built
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, p)| p.clone())
        .ok_or_else(|| Error::Failed(format!("no executable `{name}` was built")))
}

/// How a finished process ended, for messages.
pub(crate) fn describe(status: ExitStatus) -> String {
    match status.code() {
        Some(0) => "exited with status 0".to_owned(),
        Some(code) => format!("exited with status {code}"),
        None => "was killed by a signal".to_owned(),
    }
}
