//! `cargo xtask interop`: the LevelDB and RocksDB interop tests (`tests/tests/leveldb_interop.rs`,
//! `tests/tests/rocksdb_interop.rs`, and `tests/tests/ring_interop.rs`: a ring flash image made
//! by the real flash writer, turned into a plain log by `logfmt export` and read by both; all
//! ignored by a plain `cargo test`), after installing Debian's LevelDB, RocksDB and a C++
//! compiler if they are missing. The ring test prints what it proved (its image, what the ring
//! kept, what LevelDB and RocksDB read), and `tests/tests/pack_interop.rs`: what LevelDB's and
//! RocksDB's readers make of a log with packs, and `tests/tests/wal_compression_interop.rs`:
//! a write-ahead log RocksDB compressed (`wal_compression = kZSTD`), read by logfmt; and
//! `tests/tests/inspect_interop.rs`: `logfmt cat --decode` agrees with LevelDB's `DumpFile`
//! and with RocksDB's `ldb dump_wal --print_value` and `ldb manifest_dump`.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::cmd::{Cmd, Result, runs};

/// The interop test files of `logfmt-tests`, and whether their output is shown.
const TESTS: &[(&str, bool)] = &[
    ("leveldb_interop", false),
    ("rocksdb_interop", false),
    ("ring_interop", true),
    ("pack_interop", true),
    ("wal_compression_interop", true),
    ("inspect_interop", false),
];

/// `cargo xtask interop`.
pub(crate) fn run() -> Result {
    ensure_libraries()?;
    for &(test, show) in TESTS {
        let mut cmd = Cmd::cargo()
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
