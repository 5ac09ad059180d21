//! `cargo xtask no-c`: `cargo install --path crates/logfmt-cli` works where there is no C
//! compiler, and the `logfmt` it installs reads and writes compressed logs.
//!
//! The install runs with a `PATH` of one directory holding `cargo`, `rustc` and a `cc` that
//! only links: any call that compiles (`-c`, `-S`, `-E`) fails, naming itself, and so do `CC`
//! and `CXX`, set to a compiler that always fails. A crate whose build compiles C (a `*-sys`
//! crate through the `cc` crate, or a build script calling a compiler by name) fails the
//! install. Linking stays possible: Rust links through the system's `cc` on Linux, as any
//! `cargo install` does. The check checks itself: the same install with `--features zstd-c`
//! (zstd's C library) must fail, and fail on the refused compiler.
//!
//! The install is the one a user runs (release code: about 11 minutes cold on two shared
//! cores). Its target directory is `target/no-c`, kept between runs (every artifact in it was
//! built without a C compiler), and `logfmt` is installed into `target/no-c/root`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::cmd::{Error, Result, project_root};

/// What the refusing compiler prints, so that a failure is known to be it.
const REFUSED: &str = "no-c: a C compiler was called to compile";

/// The install command, less its directories.
const INSTALL: &[&str] = &[
    "install",
    "--locked",
    "--force",
    "--path",
    "crates/logfmt-cli",
];

/// `cargo xtask no-c`.
pub(crate) fn run() -> Result {
    let target = target_dir().join("no-c");
    let bin = target.join("path");
    let root = target.join("root");
    std::fs::create_dir_all(&bin).map_err(|e| failed(&bin, &e))?;
    lay_out_path(&bin)?;

    install(&bin, &target, &root, &[]).map_err(|(why, stderr)| {
        Error::Failed(format!(
            "`cargo install --path crates/logfmt-cli` needs a C compiler ({why}):\n{stderr}"
        ))
    })?;
    let logfmt = root.join("bin").join("logfmt");
    compressed_round_trip(&logfmt, &target)?;
    println!("installed {} without a C compiler", logfmt.display());

    // The check of the check: zstd's C library cannot be built here.
    match install(&bin, &target, &root, &["--features", "zstd-c"]) {
        Ok(()) => Err(Error::Failed(
            "`cargo install --features zstd-c` built zstd's C library with the C compiler \
             refused: this check proves nothing"
                .into(),
        )),
        Err((_, stderr)) if stderr.contains(REFUSED) => {
            println!("with --features zstd-c the same install fails, as it must: {REFUSED}");
            Ok(())
        }
        Err((why, stderr)) => Err(Error::Failed(format!(
            "`cargo install --features zstd-c` failed, but not on the refused C compiler \
             ({why}):\n{stderr}"
        ))),
    }
}

/// `cargo install --path crates/logfmt-cli` with `extra` arguments, `bin` the only `PATH`:
/// `Err((why, stderr))` if it fails.
fn install(
    bin: &Path,
    target: &Path,
    root: &Path,
    extra: &[&str],
) -> std::result::Result<(), (String, String)> {
    let refuse = bin.join("refuse-c");
    let mut cmd = Command::new(bin.join("cargo"));
    cmd.args([
        "install",
        "--locked",
        "--force",
        "--path",
        "crates/logfmt-cli",
    ])
    .arg("--root")
    .arg(root)
    .arg("--target-dir")
    .arg(target)
    .args(extra)
    .current_dir(project_root())
    .env("PATH", bin)
    .env("RUSTC", bin.join("rustc"))
    .env("CC", &refuse)
    .env("CXX", &refuse)
    .env_remove("RUSTC_WRAPPER")
    .env_remove("RUSTC_WORKSPACE_WRAPPER")
    .stdin(Stdio::null())
    .stdout(Stdio::inherit())
    .stderr(Stdio::piped());
    println!(
        "$ PATH={} CC={} CXX={} cargo {} {}",
        bin.display(),
        refuse.display(),
        refuse.display(),
        INSTALL.join(" "),
        extra.join(" ")
    );
    let output = cmd
        .output()
        .map_err(|e| (format!("cargo did not start: {e}"), String::new()))?;
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if output.status.success() {
        eprint!("{}", tail(&stderr, 5));
        Ok(())
    } else {
        Err((format!("{}", output.status), tail(&stderr, 40)))
    }
}

/// The directory of the install's `PATH`: `cargo` and `rustc` (links to the toolchain's),
/// `cc` (links with the system's `cc`, compiles nothing) and `refuse-c` (`CC` and `CXX`).
fn lay_out_path(bin: &Path) -> Result {
    let cargo = PathBuf::from(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    let cargo = which(&cargo)?;
    let toolchain = cargo
        .parent()
        .ok_or_else(|| Error::Failed(format!("{} has no directory", cargo.display())))?;
    let system_cc = which(Path::new("cc"))?;
    for (name, to) in [("cargo", cargo.clone()), ("rustc", toolchain.join("rustc"))] {
        let link = bin.join(name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&to, &link).map_err(|e| failed(&link, &e))?;
    }
    let cc = format!(
        "#!/bin/sh\n# Links (as rustc calls it); refuses to compile.\nfor arg in \"$@\"; do\n  \
         case \"$arg\" in -c|-S|-E) echo \"{REFUSED}: cc $*\" >&2; exit 1;; esac\ndone\n\
         exec {} \"$@\"\n",
        system_cc.display()
    );
    let refuse = format!("#!/bin/sh\necho \"{REFUSED}: $0 $*\" >&2\nexit 1\n");
    for (name, script) in [("cc", cc), ("refuse-c", refuse)] {
        let path = bin.join(name);
        std::fs::write(&path, script).map_err(|e| failed(&path, &e))?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| failed(&path, &e))?;
    }
    Ok(())
}

/// The installed `logfmt` writes a log with RocksDB's WAL compression and logfmt's compressed
/// packs, and reads both back: the same records.
fn compressed_round_trip(logfmt: &Path, target: &Path) -> Result {
    let lines: String = (0..500)
        .map(|i| format!("record {i}: temperature={} humidity=40\n", 20 + i % 7))
        .collect();
    for (name, flags) in [
        ("rocksdb.log", &["--compress", "rocksdb"][..]),
        ("packs.log", &["--pack", "--compress", "zstd"][..]),
    ] {
        let log = target.join(name);
        let _ = std::fs::remove_file(&log);
        let mut write = Command::new(logfmt)
            .arg("write")
            .args(flags)
            .arg(&log)
            .stdin(Stdio::piped())
            .spawn()
            .map_err(|e| failed(logfmt, &e))?;
        if let Some(mut stdin) = write.stdin.take() {
            use std::io::Write;
            stdin
                .write_all(lines.as_bytes())
                .map_err(|e| failed(logfmt, &e))?;
        }
        let status = write.wait().map_err(|e| failed(logfmt, &e))?;
        let cat = Command::new(logfmt)
            .arg("cat")
            .arg(&log)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| failed(logfmt, &e))?;
        let plain = std::fs::metadata(&log).map_or(0, |m| m.len());
        if !status.success() || !cat.status.success() || cat.stdout != lines.as_bytes() {
            return Err(Error::Failed(format!(
                "the installed logfmt does not read back what it wrote with {flags:?}: {}",
                String::from_utf8_lossy(&cat.stderr)
            )));
        }
        println!(
            "logfmt write {} and logfmt cat: 500 records ({} bytes) back, {plain} bytes on disk",
            flags.join(" "),
            lines.len()
        );
    }
    Ok(())
}

/// `program` as an absolute path: itself if it has a directory, else found on `PATH`.
fn which(program: &Path) -> Result<PathBuf> {
    if program.components().count() > 1 {
        return Ok(program.to_path_buf());
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
        .ok_or_else(|| Error::Failed(format!("`{}` not found on PATH", program.display())))
}

/// The last `lines` lines of `text`.
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    let mut out = all[all.len().saturating_sub(lines)..].join("\n");
    out.push('\n');
    out
}

/// The workspace's target directory.
fn target_dir() -> PathBuf {
    let root = project_root();
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), |d| root.join(d))
}

fn failed(path: &Path, e: &std::io::Error) -> Error {
    Error::Failed(format!("{}: {e}", path.display()))
}
