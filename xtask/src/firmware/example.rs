//! The nRF52840 example, `crates/logfmt-example-nrf` (a cargo workspace of its own, built for
//! `thumbv7em-none-eabihf` only): its release build (`cargo xtask targets`), its lint
//! (`cargo xtask lint`), its formatting (`cargo xtask fmt`) and its executable for the size
//! report (`cargo xtask size`). Each runs cargo from the crate's directory, where its
//! `.cargo/config.toml` sets the target.

use std::path::PathBuf;

use crate::cmd::{Cmd, Error, Result, executables};
use crate::toolchain::{THUMBV7EM, ensure_targets};

/// The example crate, relative to the project root.
pub(crate) const EXAMPLE: &str = "crates/logfmt-example-nrf";
/// Its one binary.
const BIN: &str = "logfmt-example-nrf";

/// Builds the example (release profile) for the nRF52840, linted on the way (clippy with
/// warnings denied, in the build: `Cmd::linted`); returns its executable.
pub(crate) fn build() -> Result<PathBuf> {
    ensure_targets(&[THUMBV7EM])?;
    let json = Cmd::cargo()
        .dir(EXAMPLE)
        .linted()
        .args([
            "build",
            "--release",
            "--locked",
            "--target",
            THUMBV7EM,
            "--message-format=json-render-diagnostics",
        ])
        .read()?;
    executables(&json)
        .into_iter()
        .find(|(name, _)| name == BIN)
        .map(|(_, path)| path)
        .ok_or_else(|| Error::Failed(format!("cargo built no executable named `{BIN}`")))
}

/// clippy -D warnings on the example, for its target: its release build, which lints it (a
/// build already made by `targets` is fresh; a `cargo clippy` would check embassy again).
pub(crate) fn lint() -> Result {
    build().map(drop)
}

/// cargo fmt on the example (`--check`: fail if anything would change).
pub(crate) fn fmt(check: bool) -> Result {
    let mut cmd = Cmd::cargo().dir(EXAMPLE).args(["fmt"]);
    if check {
        cmd = cmd.args(["--", "--check"]);
    }
    cmd.run()
}
