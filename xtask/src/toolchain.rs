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

/// The toolchain cargo-fuzz and Miri run on: a dated nightly, so that a new nightly (one
/// without Miri, or with a change that breaks a build) cannot fail CI. This one has Miri and
/// rust-src for x86_64-unknown-linux-gnu; before moving it, check that the new date has both
/// (<https://rust-lang.github.io/rustup-components-history/>).
pub(crate) const NIGHTLY: &str = "nightly-2026-05-20";

/// The components installed with [`NIGHTLY`] (Miri's).
const NIGHTLY_COMPONENTS: &[&str] = &["miri", "rust-src"];

/// The workspace's `rust-version` as a rustup toolchain: `cargo xtask msrv` checks the crates
/// on it. A test keeps it equal to the `rust-version` of the workspace's `Cargo.toml`.
pub(crate) const MSRV: &str = "1.89.0";

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

/// Installs [`NIGHTLY`] with Miri and rust-src (minimal profile) if rustup does not list it.
pub(crate) fn ensure_nightly() -> Result {
    ensure_toolchain(
        NIGHTLY,
        NIGHTLY_COMPONENTS,
        &[],
        "the nightly toolchain that cargo-fuzz and Miri run on",
    )
}

/// Adds `components` to the nightly toolchain (rustup skips those already there).
pub(crate) fn ensure_nightly_components(components: &[&str]) -> Result {
    ensure_nightly()?;
    ensure_components(NIGHTLY, components)
}

/// Adds `components` to the installed `toolchain` (rustup skips those already there).
pub(crate) fn ensure_components(toolchain: &str, components: &[&str]) -> Result {
    Cmd::new("rustup")
        .args(["component", "add", "--toolchain", toolchain])
        .args(components.iter().copied())
        .run()
        .map_err(|e| {
            Error::Failed(format!(
                "{e}\n  the components {} of {toolchain} could not be installed",
                components.join(", ")
            ))
        })
}

/// Installs `toolchain` (minimal profile, with `components` and `targets`) if rustup does not
/// list it, and adds any of `targets` it lacks if it does. `what` says what it is for, in the
/// error message.
pub(crate) fn ensure_toolchain(
    toolchain: &str,
    components: &[&str],
    targets: &[&str],
    what: &str,
) -> Result {
    let failed = |e: Error| {
        Error::Failed(format!(
            "{e}\n  {what} ({toolchain}) could not be installed; rustup (https://rustup.rs) \
             installs it: `rustup toolchain install {toolchain} --profile minimal`"
        ))
    };
    let installed = Cmd::new("rustup")
        .args(["toolchain", "list"])
        .read()
        .map_err(failed)?;
    let present = installed.lines().any(|l| {
        l.split_whitespace()
            .next()
            .is_some_and(|name| is_toolchain(name, toolchain))
    });
    if !present {
        let mut install = Cmd::new("rustup").args(["toolchain", "install", toolchain]);
        install = install.args(["--profile", "minimal"]);
        for component in components {
            install = install.args(["--component", component]);
        }
        for target in targets {
            install = install.args(["--target", target]);
        }
        return install.run().map_err(failed);
    }
    println!("toolchain already installed: {toolchain}");
    let listed = Cmd::new("rustup")
        .args(["target", "list", "--installed", "--toolchain", toolchain])
        .read()
        .map_err(failed)?;
    let missing: Vec<&str> = targets
        .iter()
        .copied()
        .filter(|t| !listed.lines().any(|line| line.trim() == *t))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Cmd::new("rustup")
        .args(["target", "add", "--toolchain", toolchain])
        .args(missing.iter().copied())
        .run()
        .map_err(failed)
}

/// Whether rustup's name `listed` (e.g. `1.89.0-x86_64-unknown-linux-gnu`) is `toolchain`
/// (`1.89.0`) for some host.
fn is_toolchain(listed: &str, toolchain: &str) -> bool {
    listed == toolchain
        || listed
            .strip_prefix(toolchain)
            .and_then(|rest| rest.strip_prefix('-'))
            .is_some_and(|host| !host.starts_with(|c: char| c.is_ascii_digit()))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msrv_is_the_workspace_rust_version() {
        let manifest = std::fs::read_to_string(project_root().join("Cargo.toml"))
            .expect("the workspace's Cargo.toml");
        let declared = manifest
            .lines()
            .find_map(|l| l.strip_prefix("rust-version = "))
            .expect("a rust-version in [workspace.package]")
            .trim_matches('"');
        assert!(
            MSRV == declared || MSRV.strip_suffix(".0") == Some(declared),
            "MSRV {MSRV} but rust-version = {declared:?}"
        );
    }

    #[test]
    fn toolchain_names() {
        assert!(is_toolchain("1.89.0-x86_64-unknown-linux-gnu", "1.89.0"));
        assert!(is_toolchain("1.89.0", "1.89.0"));
        assert!(!is_toolchain("1.89.0-x86_64-unknown-linux-gnu", "1.89"));
        assert!(is_toolchain(
            "nightly-2026-05-20-x86_64-unknown-linux-gnu",
            "nightly-2026-05-20"
        ));
        assert!(!is_toolchain(
            "nightly-2026-05-20-x86_64-unknown-linux-gnu",
            "nightly"
        ));
    }
}
