//! What the interop tests share: the LevelDB and RocksDB helpers of `tests/interop/`,
//! compiled once per test run, the `logfmt` CLI built by cargo in the test's profile, and
//! scratch files. Included by each interop test (`mod interop_tools;`).

#![allow(dead_code, reason = "each test uses its own part")]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use logfmt_tests::write_batch::Op;

/// What the interop tests need.
pub(crate) const MISSING: &str = "the interop tests need a C++ compiler and Debian's libleveldb-dev, \
                           librocksdb-dev and rocksdb-tools (`cargo xtask interop` installs them)";

/// Compiles `interop/{source}.cc` against `library`, once per test run.
pub(crate) fn compiled(
    source: &str,
    library: &str,
    cell: &'static OnceLock<PathBuf>,
) -> &'static Path {
    cell.get_or_init(|| {
        let code = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("interop/{source}.cc"));
        let binary = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("interop_{source}"));
        let output = Command::new("c++")
            .args(["-std=c++17", "-O1", "-o"])
            .arg(&binary)
            .arg(&code)
            .arg(library)
            .output();
        match output {
            Err(e) => panic!("cannot run the C++ compiler `c++` ({e}): {MISSING}"),
            Ok(out) if !out.status.success() => panic!(
                "compiling {}: {MISSING}\n{}",
                code.display(),
                String::from_utf8_lossy(&out.stderr)
            ),
            Ok(_) => binary,
        }
    })
}

/// Runs a helper; panics with its message if it fails.
pub(crate) fn helper(binary: &Path, args: &[&Path]) {
    let out = Command::new(binary)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", binary.display()));
    assert!(
        out.status.success(),
        "{} {args:?} failed: {}",
        binary.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

pub(crate) fn leveldb(args: &[&Path]) {
    static HELPER: OnceLock<PathBuf> = OnceLock::new();
    helper(compiled("leveldb_helper", "-lleveldb", &HELPER), args);
}

pub(crate) fn rocksdb(args: &[&Path]) {
    static HELPER: OnceLock<PathBuf> = OnceLock::new();
    helper(compiled("rocksdb_wal_writer", "-lrocksdb", &HELPER), args);
}

/// The `logfmt` binary, built once per test run by cargo in this test's profile.
pub(crate) fn logfmt_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("tests/ is inside the workspace");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build.current_dir(root).args([
            "build",
            "-p",
            "logfmt-cli",
            "--bin",
            "logfmt",
            "--message-format=json-render-diagnostics",
        ]);
        if !cfg!(debug_assertions) {
            build.arg("--release");
        }
        let out = build
            .stderr(Stdio::inherit())
            .output()
            .unwrap_or_else(|e| panic!("running cargo to build the logfmt CLI: {e}"));
        assert!(out.status.success(), "building the logfmt CLI failed");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| line.split_once("\"executable\":\"").map(|(_, rest)| rest))
            .filter_map(|rest| rest.split_once('"').map(|(path, _)| PathBuf::from(path)))
            .find(|path| path.file_stem().is_some_and(|name| name == "logfmt"))
            .expect("cargo built no `logfmt` executable")
    })
}

/// Runs `logfmt args…`; panics unless it succeeds.
pub(crate) fn logfmt(args: &[&str]) -> Output {
    let out = Command::new(logfmt_bin())
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running logfmt: {e}"));
    assert!(
        out.status.success(),
        "logfmt {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub(crate) fn path_str(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 scratch path")
}

/// A fresh scratch directory, `test/name` in the tests' scratch space.
pub(crate) fn scratch(test: &str, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(test).join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// The only file of `dir` whose name ends in `.log`.
pub(crate) fn the_log(dir: &Path) -> PathBuf {
    let logs: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    logs[0].clone()
}

/// A database's contents as the helpers write them: per entry a u32 length and the key, a
/// u32 length and the value.
pub(crate) fn contents(path: &Path) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let data = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut rest = &data[..];
    let take = |rest: &mut &[u8]| {
        let (len, tail) = rest.split_first_chunk::<4>().expect("a length");
        let (item, tail) = tail.split_at(u32::from_le_bytes(*len) as usize);
        *rest = tail;
        item.to_vec()
    };
    let mut map = BTreeMap::new();
    while !rest.is_empty() {
        let key = take(&mut rest);
        map.insert(key, take(&mut rest));
    }
    map
}

/// The RocksDB helper's input: `phases` of batches (its SPEC format).
pub(crate) fn spec(phases: &[Vec<Vec<Op>>]) -> Vec<u8> {
    let mut out = Vec::new();
    let bytes = |out: &mut Vec<u8>, b: &[u8]| {
        out.extend_from_slice(&(b.len() as u32).to_le_bytes());
        out.extend_from_slice(b);
    };
    out.extend_from_slice(&(phases.len() as u32).to_le_bytes());
    for batches in phases {
        out.extend_from_slice(&(batches.len() as u32).to_le_bytes());
        for batch in batches {
            out.extend_from_slice(&(batch.len() as u32).to_le_bytes());
            for op in batch {
                match op {
                    Op::Put(k, v) => {
                        out.push(1);
                        bytes(&mut out, k);
                        bytes(&mut out, v);
                    }
                    Op::Delete(k) => {
                        out.push(0);
                        bytes(&mut out, k);
                    }
                }
            }
        }
    }
    out
}

/// RocksDB's `ldb dump_wal --walfile=LOG --header` on `log`: its output (rows on standard
/// output, reports on standard error).
pub(crate) fn ldb_dump_wal(log: &Path) -> Output {
    let mut walfile = std::ffi::OsString::from("--walfile=");
    walfile.push(log);
    Command::new("ldb")
        .arg("dump_wal")
        .arg(walfile)
        .arg("--header")
        .output()
        .unwrap_or_else(|e| panic!("cannot run RocksDB's `ldb` ({e}): {MISSING}"))
}

/// Runs `logfmt args…` with standard input from the file `input`; panics unless it succeeds.
pub(crate) fn logfmt_with_input(args: &[&str], input: &Path) -> Output {
    let file = fs::File::open(input).unwrap_or_else(|e| panic!("{}: {e}", input.display()));
    let out = Command::new(logfmt_bin())
        .args(args)
        .stdin(file)
        .output()
        .unwrap_or_else(|e| panic!("running logfmt: {e}"));
    assert!(
        out.status.success(),
        "logfmt {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
