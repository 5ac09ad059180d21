//! `cargo xtask interop`: the LevelDB and RocksDB interop tests (`tests/tests/leveldb_interop.rs`,
//! `tests/tests/rocksdb_interop.rs`, and `tests/tests/ring_interop.rs`: a ring flash image made
//! by the real flash writer, turned into a plain log by `logfmt export` and read by both; all
//! ignored by a plain `cargo test`), after installing Debian's LevelDB, RocksDB and a C++
//! compiler if they are missing. The ring test prints what it proved (its image, what the ring
//! kept, what LevelDB and RocksDB read), and `tests/tests/pack_interop.rs`: what LevelDB's and
//! RocksDB's readers make of a log with packs, and `tests/tests/wal_compression_interop.rs`:
//! a write-ahead log RocksDB compressed (`wal_compression = kZSTD`), read by logfmt; and
//! `tests/tests/inspect_interop.rs`: `logfmt cat --decode` agrees with LevelDB's `DumpFile`
//! and with RocksDB's `ldb dump_wal --print_value` and `ldb manifest_dump`. And
//! `tests/tests/rocksdb9_interop.rs`: RocksDB 9 — the one PyPI's `rocksdict` bundles, installed
//! with pip into a virtual environment under `target/` — writes logs with WAL compression, WAL
//! tracking and recycled logs that logfmt reads, and recovers logs that logfmt writes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::cmd::{Cmd, Error, Result, project_root, runs};

/// The interop test files of `logfmt-tests`, and whether their output is shown.
const TESTS: &[(&str, bool)] = &[
    ("leveldb_interop", false),
    ("rocksdb_interop", false),
    ("ring_interop", true),
    ("pack_interop", true),
    ("wal_compression_interop", true),
    ("inspect_interop", false),
    ("rocksdb9_interop", true),
];

/// The `rocksdict` release of the RocksDB 9 checks: it bundles RocksDB 9.8.4.
const ROCKSDICT: &str = "0.3.29";

/// `cargo xtask interop`.
pub(crate) fn run() -> Result {
    ensure_libraries()?;
    let python = ensure_rocksdb9()?;
    let python = python
        .to_str()
        .ok_or_else(|| Error::Failed(format!("not a UTF-8 path: {}", python.display())))?;
    for &(test, show) in TESTS {
        let mut cmd = Cmd::cargo()
            .env("LOGFMT_ROCKSDB9_PYTHON", python)
            .args(["test", "-p", "logfmt-tests", "--test", test])
            .args(["--", "--ignored"]);
        if show {
            cmd = cmd.args(["--show-output"]);
        }
        cmd.run()?;
    }
    Ok(())
}

/// Installs `libleveldb-dev`, `librocksdb-dev`, `rocksdb-tools` (RocksDB's `ldb`) and `g++`
/// (if there is no `c++`), those that are missing.
pub(crate) fn ensure_libraries() -> Result {
    // `ldb --help` exits non-zero: that it starts is enough.
    let have_ldb = Command::new("ldb")
        .arg("--help")
        .stdin(Stdio::null())
        .output()
        .is_ok();
    let missing: Vec<&str> = [
        (
            "libleveldb-dev",
            Path::new("/usr/include/leveldb/db.h").exists(),
        ),
        (
            "librocksdb-dev",
            Path::new("/usr/include/rocksdb/db.h").exists(),
        ),
        ("rocksdb-tools", have_ldb),
        ("g++", runs("c++", &["--version"])),
    ]
    .into_iter()
    .filter(|&(_, present)| !present)
    .map(|(package, _)| package)
    .collect();
    if missing.is_empty() {
        println!("LevelDB, RocksDB (with ldb) and a C++ compiler are installed");
        return Ok(());
    }
    crate::apt::install(&missing)
}

/// The Python of `target/rocksdb9-venv`, a virtual environment with `rocksdict` (RocksDB 9)
/// installed by pip, made or brought to [`ROCKSDICT`] if it is not there yet (Debian's
/// `python3-venv` installed first if Python has no `venv`).
fn ensure_rocksdb9() -> Result<PathBuf> {
    let venv = target_dir().join("rocksdb9-venv");
    let python = venv.join("bin").join("python");
    let python_str = python
        .to_str()
        .ok_or_else(|| Error::Failed(format!("not a UTF-8 path: {}", python.display())))?;
    let check = format!(
        "import importlib.metadata as m, rocksdict; assert m.version('rocksdict') == '{ROCKSDICT}'"
    );
    if runs(python_str, &["-c", &check]) {
        println!(
            "rocksdict {ROCKSDICT} (RocksDB 9) is installed in {}",
            venv.display()
        );
        return Ok(python);
    }
    if !python.exists() {
        if !runs("python3", &["-m", "venv", "--help"]) {
            crate::apt::install(&["python3", "python3-venv"])?;
        }
        let venv_str = venv
            .to_str()
            .ok_or_else(|| Error::Failed(format!("not a UTF-8 path: {}", venv.display())))?;
        Cmd::new("python3").args(["-m", "venv", venv_str]).run()?;
    }
    Cmd::new(python_str)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args([format!("rocksdict=={ROCKSDICT}")])
        .run()?;
    Ok(python)
}

/// The workspace's target directory.
fn target_dir() -> PathBuf {
    let root = project_root();
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), |d| root.join(d))
}
