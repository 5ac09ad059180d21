//! `cargo xtask package`: the publishable crates as crates.io would get them, tested the way a
//! distribution packager tests them. `cargo package` packs them (together, so that each is
//! resolved against the others' packages; `--no-verify`: the tests below build them), each
//! `.crate` is unpacked outside the workspace, and `cargo test` runs in each unpacked crate,
//! with the other unpacked crates standing in for crates.io (`[patch.crates-io]`, given with
//! `--config`). A file a test needs but the package lacks, or a path out of the crate, fails
//! here rather than for a packager. Neither the workspace's `.cargo/config.toml` nor its lock
//! file applies there: each package's own `Cargo.lock` does. (logfmt-std without its default
//! features is tested by `cargo xtask test`, not again here.)

use std::path::{Path, PathBuf};

use crate::cmd::{Cmd, Error, Result, project_root};

/// The crates published to crates.io, each after the crates it depends on.
pub(crate) const PUBLISHED: &[&str] = &["logfmt-core", "logfmt-std", "logfmt-cli"];

/// `cargo xtask package`.
pub(crate) fn run() -> Result {
    let mut pack = Cmd::cargo().args(["package", "--no-verify", "--allow-dirty"]);
    for krate in PUBLISHED {
        pack = pack.args(["-p", krate]);
    }
    pack.run()?;

    let target = target_dir();
    let unpacked = std::env::temp_dir().join(format!("logfmt-package-{}", std::process::id()));
    remove(&unpacked)?;
    std::fs::create_dir_all(&unpacked)
        .map_err(|e| Error::Failed(format!("cannot create {}: {e}", unpacked.display())))?;
    let mut dirs: Vec<(&str, PathBuf)> = Vec::new();
    for &krate in PUBLISHED {
        let version = version(krate)?;
        let file = target
            .join("package")
            .join(format!("{krate}-{version}.crate"));
        let size = std::fs::metadata(&file)
            .map_err(|e| Error::Failed(format!("{}: {e}", file.display())))?
            .len();
        println!("{}: {} KiB", file.display(), size.div_ceil(1024));
        Cmd::new("tar")
            // `m`: the files dated now, not as packed: the test target directory is kept between
            // runs, and sources dated as packed would look older than its artifacts (stale).
            .args(["-xzmf", &path_str(&file)?, "-C", &path_str(&unpacked)?])
            .run()?;
        dirs.push((krate, unpacked.join(format!("{krate}-{version}"))));
    }

    // One target directory for the three, kept between runs; not the workspace's own (other
    // flags, and `target/debug/logfmt` must stay the workspace's).
    let target_dir = path_str(&target.join("package-test"))?;
    for (i, (krate, dir)) in dirs.iter().enumerate() {
        let patches: Vec<String> = dirs[..i]
            .iter()
            .map(|(dep, dep_dir)| {
                Ok(format!(
                    "patch.crates-io.{dep}.path=\"{}\"",
                    path_str(dep_dir)?
                ))
            })
            .collect::<Result<_>>()?;
        // As in the workspace (its `[profile.test.package.logfmt-core]`, which a package
        // does not carry): the core's power-cut sweeps run an order of magnitude faster
        // optimised, debug assertions and overflow checks on.
        let mut test = Cmd::cargo()
            .dir(&path_str(dir)?)
            .env("CARGO_TARGET_DIR", &target_dir)
            .args([
                "test",
                "--config",
                "profile.test.package.logfmt-core.opt-level=2",
            ]);
        for patch in &patches {
            test = test.args(["--config", patch]);
        }
        println!("testing the package of {krate}");
        test.run()?;
    }
    remove(&unpacked)?;
    println!(
        "the packages of {} pass their tests unpacked",
        PUBLISHED.join(", ")
    );
    Ok(())
}

/// The version of workspace crate `krate`, from `cargo pkgid`.
fn version(krate: &str) -> Result<String> {
    let id = Cmd::cargo().args(["pkgid", "-p", krate]).read()?;
    id.trim()
        .rsplit(['#', '@'])
        .next()
        .filter(|v| v.starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_owned)
        .ok_or_else(|| Error::Failed(format!("no version in `cargo pkgid` output: {id}")))
}

/// Where cargo builds: `CARGO_TARGET_DIR` or the workspace's `target/`.
fn target_dir() -> PathBuf {
    let root = project_root();
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), |d| root.join(d))
}

fn path_str(path: &Path) -> Result<String> {
    path.to_str()
        .map(str::to_owned)
        .ok_or_else(|| Error::Failed(format!("not a UTF-8 path: {}", path.display())))
}

/// Removes `dir` and everything in it, if it is there.
fn remove(dir: &Path) -> Result {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::Failed(format!(
            "cannot remove {}: {e}",
            dir.display()
        ))),
        _ => Ok(()),
    }
}
