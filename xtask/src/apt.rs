//! Debian packages the tasks need (QEMU's Arm emulator, LevelDB, RocksDB, a C++ compiler),
//! installed with apt-get, as root or through passwordless sudo (`sudo -n`, never a prompt).
//! The callers check what is there; this module installs what they found missing, and never
//! removes anything to do it (`--no-remove`: apt-get fails instead of resolving a conflict by
//! removing a package). Where it cannot install, the error says what to run by hand, and how
//! to run CI without the step.

use crate::cmd::{Cmd, Error, Result, runs};

/// Installs `packages` with `apt-get install -y --no-install-recommends --no-remove`, running
/// `apt-get update` first where the package lists lack one of them (fresh containers), and
/// again if the install fails (stale lists).
pub(crate) fn install(packages: &[&str]) -> Result {
    let list = packages.join(" ");
    let by_hand = format!(
        "install by hand: `sudo apt-get install --no-install-recommends {list}` \
         (another distribution: its packages of the same software); \
         or leave the step out: `cargo xtask ci --skip STEP`"
    );
    let failed = |why: &str| Error::Failed(format!("{why}\n  {by_hand}"));
    if !runs("apt-get", &["--version"]) {
        return Err(failed(&format!(
            "the Debian packages {list} are needed and apt-get is not available"
        )));
    }
    let root = is_root();
    if !root && !runs("sudo", &["-n", "true"]) {
        return Err(failed(&format!(
            "the Debian packages {list} are needed, and installing them needs root or \
             passwordless sudo (`sudo -n`)"
        )));
    }
    let apt = |args: &[&str]| {
        let cmd = if root {
            Cmd::new("apt-get")
        } else {
            Cmd::new("sudo").args(["-n", "apt-get"])
        };
        cmd.args(args.iter().copied())
            .env("DEBIAN_FRONTEND", "noninteractive")
    };
    let install = apt(&["install", "-y", "--no-install-recommends", "--no-remove"])
        .args(packages.iter().copied());
    let listed = packages
        .iter()
        .all(|package| runs("apt-cache", &["show", package]));
    let mut installed = listed && install.run().is_ok();
    if !installed {
        apt(&["update"])
            .run()
            .map_err(|e| failed(&format!("{e}\n  apt-get update failed")))?;
        installed = install.run().is_ok();
    }
    if installed {
        Ok(())
    } else {
        Err(failed(&format!(
            "apt-get could not install {list} (its messages are above; it removes no package, so \
             a conflict stops it)"
        )))
    }
}

/// Installs the Debian package of each `(command, package)` whose command does not run with
/// `--version`, e.g. `("c++", "g++")`.
pub(crate) fn ensure_commands(wanted: &[(&str, &str)]) -> Result {
    let missing: Vec<&str> = wanted
        .iter()
        .filter(|(command, _)| !runs(command, &["--version"]))
        .map(|&(command, package)| {
            println!("`{command}` not found: installing Debian's `{package}`");
            package
        })
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        install(&missing)
    }
}

/// Whether this process runs as root (`id -u` prints 0).
fn is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}
