//! The Rust toolchains, targets and cargo tools the tasks need, and their installers. Each
//! `ensure_*` looks at what is there and installs only what is missing (rustup for targets,
//! toolchains and components; `cargo install --locked` at a pinned version for cargo tools),
//! failing loudly, with what to do, when it cannot.

use std::process::{Command, Stdio};

use crate::cmd::{Cmd, Error, Result, project_root};

/// The Cortex-M3 target (QEMU `mps2-an385`).
pub(crate) const THUMBV7M: &str = "thumbv7m-none-eabi";
/// The Cortex-M4F target (QEMU `mps2-an386`).
pub(crate) const THUMBV7EM: &str = "thumbv7em-none-eabihf";
/// Every bare-metal target `logfmt-core` must build for.
pub(crate) const THUMB_TARGETS: &[&str] = &[THUMBV7M, THUMBV7EM];

/// The toolchain cargo-fuzz and Miri run on.
pub(crate) const NIGHTLY: &str = "nightly";

/// A cargo subcommand installed from crates.io.
pub(crate) struct CargoTool {
    /// The crate, e.g. `cargo-fuzz`.
    pub(crate) krate: &'static str,
    /// The release known to work here (`cargo install --version`).
    pub(crate) version: &'static str,
    /// The subcommand it adds, e.g. `fuzz` for `cargo fuzz`.
    pub(crate) subcommand: &'static str,
    /// The toolchain it runs on (`rustup run TOOLCHAIN cargo ...`); `None`: the cargo that runs
    /// the xtask.
    pub(crate) toolchain: Option<&'static str>,
    /// What it is needed for, for the error message when it cannot be installed.
    pub(crate) needed_for: &'static str,
}

/// cargo-fuzz, on nightly (libFuzzer's instrumentation).
pub(crate) const CARGO_FUZZ: CargoTool = CargoTool {
    krate: "cargo-fuzz",
    version: "0.13.2",
    subcommand: "fuzz",
    toolchain: Some(NIGHTLY),
    needed_for: "to run the fuzz targets",
};

/// cargo-shear: dependencies that no target of their crate uses, and dependencies that only
/// tests use outside `[dev-dependencies]`. 1.13.0: the newest release whose locked dependencies
/// build on stable Rust 1.95.
pub(crate) const CARGO_SHEAR: CargoTool = CargoTool {
    krate: "cargo-shear",
    version: "1.13.0",
    subcommand: "shear",
    toolchain: None,
    needed_for: "to find unused dependencies",
};

/// Installs any of `wanted` that rustup does not list as installed.
pub(crate) fn ensure_targets(wanted: &[&str]) -> Result {
    let installed = Cmd::new("rustup")
        .args(["target", "list", "--installed"])
        .read()
        .map_err(|e| {
            Error::Failed(format!(
                "{e}\n  rustup is needed to check/install the targets {}; \
                 install it from https://rustup.rs",
                wanted.join(", ")
            ))
        })?;
    let missing: Vec<&str> = wanted
        .iter()
        .copied()
        .filter(|t| !installed.lines().any(|line| line.trim() == *t))
        .collect();
    if missing.is_empty() {
        println!("targets already installed: {}", wanted.join(", "));
        return Ok(());
    }
    Cmd::new("rustup")
        .args(["target", "add"])
        .args(missing.iter().copied())
        .run()
}

/// Installs the nightly toolchain (minimal profile) if rustup does not list it.
pub(crate) fn ensure_nightly() -> Result {
    let installed = Cmd::new("rustup")
        .args(["toolchain", "list"])
        .read()
        .map_err(|e| {
            Error::Failed(format!(
                "{e}\n  rustup is needed to install the nightly toolchain that cargo-fuzz and Miri \
                 run on; install it from https://rustup.rs"
            ))
        })?;
    if installed.lines().any(|l| l.starts_with(NIGHTLY)) {
        println!("toolchain already installed: {NIGHTLY}");
        return Ok(());
    }
    Cmd::new("rustup")
        .args(["toolchain", "install", NIGHTLY, "--profile", "minimal"])
        .run()
        .map_err(|e| {
            Error::Failed(format!(
                "{e}\n  fuzzing and Miri need the nightly toolchain and it could not be installed"
            ))
        })
}

/// Adds `components` to the nightly toolchain (rustup skips those already there).
pub(crate) fn ensure_nightly_components(components: &[&str]) -> Result {
    ensure_nightly()?;
    Cmd::new("rustup")
        .args(["component", "add", "--toolchain", NIGHTLY])
        .args(components.iter().copied())
        .run()
        .map_err(|e| {
            Error::Failed(format!(
                "{e}\n  the nightly components {} could not be installed",
                components.join(", ")
            ))
        })
}

/// Installs `tool` (`cargo install --locked` at its pinned version) if `cargo SUBCOMMAND
/// --version` does not answer.
pub(crate) fn ensure_cargo_tool(tool: &CargoTool) -> Result {
    if tool.toolchain == Some(NIGHTLY) {
        ensure_nightly()?;
    }
    let mut probe = match tool.toolchain {
        Some(toolchain) => {
            let mut cmd = Command::new("rustup");
            cmd.args(["run", toolchain, "cargo"]);
            cmd
        }
        None => Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())),
    };
    let present = probe
        .args([tool.subcommand, "--version"])
        .current_dir(project_root())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if present {
        println!("{} already installed", tool.krate);
        return Ok(());
    }
    Cmd::cargo()
        .args(["install", tool.krate, "--version", tool.version, "--locked"])
        .run()
        .map_err(|e| {
            Error::Failed(format!(
                "{e}\n  {} (from crates.io) is needed {} and could not be installed",
                tool.krate, tool.needed_for
            ))
        })
}

/// The host's target triple, from `rustc -vV`.
pub(crate) fn host_triple() -> Result<String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let output = Command::new(rustc)
        .arg("-vV")
        .output()
        .map_err(|e| Error::Failed(format!("could not run rustc -vV: {e}")))?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .ok_or_else(|| Error::Failed("rustc -vV printed no host triple".to_owned()))
}
