//! Debian packages the tasks need (QEMU's Arm emulator, LevelDB, RocksDB, a C++ compiler),
//! installed with apt-get, as root or through passwordless sudo. The callers check what is
//! there; this module installs what they found missing.

use crate::cmd::{Cmd, Error, Result, runs};

/// Installs `packages` with `apt-get install -y --no-install-recommends`, running `apt-get
/// update` first where the package lists lack one of them (fresh containers), and again if the
/// install fails (stale lists).
pub(crate) fn install(packages: &[&str]) -> Result {
    let hint = format!(
        "install them (`apt-get install -y {}`, as root)",
        packages.join(" ")
    );
    if !runs("apt-get", &["--version"]) {
        return Err(Error::Failed(format!(
            "{} missing and apt-get is not available: {hint}",
            packages.join(", ")
        )));
    }
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if !root && !runs("sudo", &["-n", "true"]) {
        return Err(Error::Failed(format!(
            "{} missing, and installing needs root (or passwordless sudo): {hint}",
            packages.join(", ")
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
    let install = apt(&["install", "-y", "--no-install-recommends"]).args(packages.iter().copied());
    let listed = packages
        .iter()
        .all(|package| runs("apt-cache", &["show", package]));
    let mut installed = listed && install.run().is_ok();
    if !installed {
        apt(&["update"]).run()?;
        installed = install.run().is_ok();
    }
    if installed {
        Ok(())
    } else {
        Err(Error::Failed(format!(
            "apt-get could not install {}: {hint}",
            packages.join(", ")
        )))
    }
}
