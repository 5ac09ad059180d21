//! `cargo xtask bench`: the benchmark table. Builds `logfmt-bench` (release) and `leveldb-bench`
//! (LevelDB 1.23's own C++ `log::Writer`/`log::Reader`, `crates/logfmt-bench/cpp`), runs both
//! side by side in rounds, with the bounds (memcpy and CRC-32C over the same payloads), then the
//! file-backed passes and the parallel split scan, and prints medians: ns and MB/s, the paired
//! ratios to LevelDB, and logfmt's time as a multiple of the bounds. The first line names the
//! CPU. `logfmt-bench` is built as a crate depending on logfmt builds it: no CPU flags, the
//! CRC-32C paths chosen at run time; `--compare-flags` measures it against a build with
//! SSE 4.2 and PCLMULQDQ compiled in.
//!
//! Each round's load average is printed, and rounds run above 1 per core are left out of the
//! tables (all of them: no table, unless `--allow-load`, which prints it marked): see
//! [`crate::bench_load`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::bench_load::RoundLoad;
use crate::cmd::{Cmd, Error, Result, banner, project_root, runs};

/// LevelDB 1.23's C++ `log::Writer`/`log::Reader` (hardware CRC-32C, in-memory files), medians
/// measured on a machine of this project's kind (2 vCPU AMD EPYC Zen 4): size → (write ns,
/// read ns) per record. The pack table's reference, and the main table's when LevelDB cannot be
/// built here.
const LEVELDB_NS: [(u64, f64, f64); 5] = [
    (16, 25.0, 20.0),
    (100, 33.0, 30.0),
    (1024, 130.0, 135.0),
    (32_768, 5001.0, 4757.0),
    (1_048_576, 156_184.0, 165_171.0),
];

/// Rounds of the side-by-side run (the order of the two programs alternates), and passes of
/// every case in each program per round: a ratio is paired within its round.
const ROUNDS: usize = 7;
const PASSES: &str = "3";

const REPS: &str = "7";

pub(crate) fn run(args: &[String]) -> Result {
    let quick = args.iter().any(|a| a == "--quick");
    // `--baseline REV`: the commit to compare with.
    let baseline = args
        .iter()
        .position(|a| a == "--baseline")
        .map(|at| {
            args.get(at + 1)
                .filter(|rev| !rev.starts_with('-'))
                .ok_or_else(|| Error::Usage("`--baseline` needs a commit".into()))
        })
        .transpose()?;
    if let Some(bad) = args.iter().find(|a| {
        !matches!(
            a.as_str(),
            "--quick"
                | "--compare-flags"
                | "flash"
                | "pack"
                | "durable"
                | "wal"
                | "scan"
                | "--baseline"
                | crate::bench_load::ALLOW_LOAD
        ) && Some(*a) != baseline
    }) {
        return Err(Error::Usage(format!(
            "unexpected argument `{bad}` for `bench`"
        )));
    }
    let allow_load = args.iter().any(|a| a == crate::bench_load::ALLOW_LOAD);
    if args.iter().any(|a| a == "wal") {
        return crate::bench_wal::run(quick, baseline.map(String::as_str));
    }
    if let Some(rev) = baseline {
        return crate::bench_baseline::run(rev, quick, allow_load);
    }
    if args.iter().any(|a| a == "--compare-flags") {
        return compare_flags(quick, allow_load);
    }
    if args.iter().any(|a| a == "flash") {
        // logfmt and sequential-storage on the same simulated flash: `FLASH ...` lines, then
        // the read costs (bytes read to open a full region and to read it whole): `FLASH-READ ...`,
        // the seek costs (to a ring's middle record, its newest 10): `FLASH-SEEK ...`, then the
        // store-and-forward cycle (log, deliver, release): `QUEUE ...`.
        let exe = crate::cmd::build_release_bin("logfmt-bench", "logfmt-bench")?;
        let reps = if quick { "1" } else { "5" };
        let cmd = Cmd::new(&exe.to_string_lossy()).args(["flash", "--reps", reps]);
        print!("{}", cmd.read()?);
        return Ok(());
    }
    if args.iter().any(|a| a == "pack") {
        return pack(quick);
    }
    if args.iter().any(|a| a == "scan") {
        return crate::bench_scan::run(quick);
    }
    if args.iter().any(|a| a == "durable") {
        return crate::bench_durable::run(quick);
    }
    banner("bench: build logfmt-bench (release)");
    let exe = crate::cmd::build_release_bin("logfmt-bench", "logfmt-bench")?;
    let exe = exe.to_string_lossy().into_owned();
    banner("bench: build leveldb-bench (LevelDB 1.23's log::Writer and log::Reader)");
    let leveldb = match build_leveldb() {
        Ok(path) => Some(path.to_string_lossy().into_owned()),
        Err(e) => {
            println!(
                "xtask: warning: LevelDB not built ({e}); its columns are reference figures from \
                 another machine, not this run"
            );
            None
        }
    };
    let dir = if Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let cases: &[&str] = if quick {
        &[
            "16:200000",
            "100:100000",
            "1024:16384",
            "32768:512",
            "1048576:16",
        ]
    } else {
        &[]
    };
    let rounds = if quick { 3 } else { ROUNDS };
    banner("bench: run (all figures from this one run)");
    let mut outputs = Vec::new();
    let mut loads = Vec::new();
    for round in 0..rounds {
        let load = RoundLoad::start();
        let logfmt = || {
            Cmd::new(&exe)
                .args(["--name", "logfmt", "--reps", PASSES, "--limits"])
                .args(cases.iter().copied())
                .read()
        };
        let leveldb = || match &leveldb {
            Some(path) => Cmd::new(path)
                .args(["--name", "leveldb", "--reps", PASSES])
                .args(cases.iter().copied())
                .read(),
            None => Ok(String::new()),
        };
        let (a, b) = if round % 2 == 0 {
            let a = logfmt()?;
            (a, leveldb()?)
        } else {
            let b = leveldb()?;
            (logfmt()?, b)
        };
        let load = load.end();
        println!(
            "round {} of {rounds} done (load average {})",
            round + 1,
            load.text()
        );
        outputs.push(format!("{a}{b}"));
        loads.push(load);
    }
    let kept = crate::bench_load::keep(outputs, &loads, allow_load)?;
    let files = Cmd::new(&exe)
        .args([
            "--name",
            "logfmt",
            "--reps",
            if quick { "3" } else { REPS },
            "--scan",
        ])
        .args(["--files", &dir.to_string_lossy()])
        .args(cases.iter().copied())
        .read()?;
    print!("{}", table(&kept.rounds, &files, leveldb.is_some())?);
    println!("\n{}", kept.note);
    Ok(())
}

/// The CPU flags a build of this workspace once had in `.cargo/config.toml`, and that a crate
/// depending on logfmt does not get: what `--compare-flags` builds with, to compare.
const CPU_FLAGS: &str = "-C target-feature=+sse4.2,+pclmulqdq";

/// `cargo xtask bench --compare-flags`: `logfmt-bench` built as a dependent crate builds it (no
/// CPU flags: the CRC-32C paths chosen at run time) and built with [`CPU_FLAGS`] (in its own
/// target directory, so both builds stay), run side by side in rounds of alternating order;
/// medians and the paired ratios (flags' ns / run time's, so above 1.00 the run-time build is
/// faster).
fn compare_flags(quick: bool, allow_load: bool) -> Result {
    banner("bench --compare-flags: build logfmt-bench without CPU flags (as a dependent crate)");
    let runtime = crate::cmd::build_release_bin("logfmt-bench", "logfmt-bench")?;
    banner(&format!(
        "bench --compare-flags: build logfmt-bench with RUSTFLAGS=\"{CPU_FLAGS}\""
    ));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| project_root().join("target"), PathBuf::from)
        .join("bench-cpu-flags");
    Cmd::cargo()
        .args([
            "build",
            "--profile",
            "profiling",
            "-p",
            "logfmt-bench",
            "--bin",
            "logfmt-bench",
        ])
        .env("RUSTFLAGS", CPU_FLAGS)
        .env("CARGO_TARGET_DIR", &target.to_string_lossy())
        .run()?;
    let flags = target
        .join("profiling")
        .join(format!("logfmt-bench{}", std::env::consts::EXE_SUFFIX));
    let cases: &[&str] = if quick {
        &["16:200000", "100:100000", "1024:16384", "32768:512"]
    } else {
        &[
            "16:2000000",
            "100:1000000",
            "1024:131072",
            "32768:4096",
            "1048576:128",
        ]
    };
    let rounds = if quick { 3 } else { ROUNDS };
    banner("bench --compare-flags: run (all figures from this one run)");
    let run = |exe: &Path, name: &str| {
        Cmd::new(&exe.to_string_lossy())
            .args(["--name", name, "--reps", PASSES])
            .args(cases.iter().copied())
            .read()
    };
    let mut outputs = Vec::new();
    let mut loads = Vec::new();
    for round in 0..rounds {
        let load = RoundLoad::start();
        let (a, b) = if round % 2 == 0 {
            let a = run(&runtime, "runtime")?;
            (a, run(&flags, "flags")?)
        } else {
            let b = run(&flags, "flags")?;
            (run(&runtime, "runtime")?, b)
        };
        let load = load.end();
        println!(
            "round {} of {rounds} done (load average {})",
            round + 1,
            load.text()
        );
        outputs.push(format!("{a}{b}"));
        loads.push(load);
    }
    let kept = crate::bench_load::keep(outputs, &loads, allow_load)?;
    print!("{}", flags_table(&kept.rounds)?);
    println!("\n{}", kept.note);
    Ok(())
}

/// The table of `--compare-flags`: per size and operation, both builds' medians and the paired
/// ratio, with whether the two builds wrote the same log.
fn flags_table(rounds: &[String]) -> Result<String> {
    use std::fmt::Write;
    let all = rounds.concat();
    let (samples, sizes) = parse(&all)?;
    let per_round = rounds
        .iter()
        .map(|r| parse(r).map(|(s, _)| s))
        .collect::<Result<Vec<_>>>()?;
    let get = |samples: &Samples, size: u64, imp: &str, op: &str| {
        samples
            .get(&(size, imp.to_string(), op.to_string()))
            .map_or(f64::NAN, |v| median(v))
    };
    let digests = digests(&all);
    let identical = sizes.keys().all(|&size| {
        digests.get(&("runtime".to_string(), size)) == digests.get(&("flags".to_string(), size))
    });
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nCPU: {}\n{} rounds x {PASSES} passes; \"run time\": no CPU flags (the CRC-32C paths \
         detected once at run time, as a dependent crate gets them); \"flags\": built with \
         {CPU_FLAGS}; logs byte-identical: {}\nns/record: medians over every pass; flags / run \
         time: the flags build's ns / the run-time build's, paired within each round: median \
         [min-max] (1.00 = as fast; above, the run-time build is faster)\n",
        cpu(),
        rounds.len(),
        if identical { "yes" } else { "NO" }
    );
    let _ = writeln!(
        out,
        "{:>8} | {:>12} {:>10} {:>17} | {:>12} {:>10} {:>17}",
        "size",
        "write rt ns",
        "flags ns",
        "flags / run time",
        "read rt ns",
        "flags ns",
        "flags / run time"
    );
    for &size in sizes.keys() {
        let mut line = format!("{size:>8} |");
        for op in ["write", "read"] {
            let r: Vec<f64> = per_round
                .iter()
                .map(|s| get(s, size, "flags", op) / get(s, size, "runtime", op))
                .collect();
            let (m, lo, hi) = spread(&r);
            let _ = write!(
                line,
                " {:>12.1} {:>10.1} {:>17} |",
                get(&samples, size, "runtime", op),
                get(&samples, size, "flags", op),
                format!("{m:.2} [{lo:.2}-{hi:.2}]")
            );
        }
        let _ = writeln!(out, "{}", line.trim_end_matches(" |"));
    }
    Ok(out)
}

/// Builds `leveldb-bench` from `crates/logfmt-bench/cpp/leveldb_bench.cc` against Debian's
/// `libleveldb.a` (installing `libleveldb-dev` and `g++` if missing); returns its path.
pub(crate) fn build_leveldb() -> Result<PathBuf> {
    if !cfg!(target_arch = "x86_64") {
        return Err(Error::Failed(
            "leveldb-bench's CRC-32C needs SSE 4.2: x86-64 only".into(),
        ));
    }
    let archive = || {
        [
            "/usr/lib/x86_64-linux-gnu/libleveldb.a",
            "/usr/lib/libleveldb.a",
        ]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
    };
    let mut missing = Vec::new();
    if archive().is_none() || !Path::new("/usr/include/leveldb/env.h").exists() {
        missing.push("libleveldb-dev");
    }
    if !runs("c++", &["--version"]) {
        missing.push("g++");
    }
    if !missing.is_empty() {
        crate::apt::install(&missing)?;
    }
    let archive = archive().ok_or_else(|| Error::Failed("no libleveldb.a".into()))?;
    let root = project_root();
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    std::fs::create_dir_all(&target).map_err(|e| Error::Failed(e.to_string()))?;
    let out = target.join("leveldb-bench");
    let source = root.join("crates/logfmt-bench/cpp/leveldb_bench.cc");
    Cmd::new("c++")
        .args(["-O2", "-std=c++17", "-msse4.2", "-mpclmul", "-o"])
        .args([&*out.to_string_lossy(), &*source.to_string_lossy()])
        .args([&*archive.to_string_lossy(), "-lpthread"])
        .run()?;
    Ok(out)
}

/// The CPU's model, family and vector features, from `/proc/cpuinfo`.
pub(crate) fn cpu() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |key: &str| {
        info.lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
            .unwrap_or_else(|| "?".into())
    };
    let flags = field("flags");
    let has = |f: &str| flags.split(' ').any(|x| x == f);
    let features: Vec<&str> = [
        ("avx2", "AVX2"),
        ("vpclmulqdq", "VPCLMULQDQ"),
        ("avx512f", "AVX-512F"),
    ]
    .into_iter()
    .map(|(flag, name)| if has(flag) { name } else { "" })
    .filter(|n| !n.is_empty())
    .collect();
    format!(
        "{} (family {}, model {}; {}{})",
        field("model name"),
        field("cpu family"),
        field("model"),
        features.join(", "),
        if has("avx512f") { "" } else { "; no AVX-512" }
    )
}

/// Per (size, impl, op): every pass's ns per record.
pub(crate) type Samples = BTreeMap<(u64, String, String), Vec<f64>>;

pub(crate) fn parse(output: &str) -> Result<(Samples, BTreeMap<u64, u64>)> {
    let mut samples = Samples::new();
    let mut sizes = BTreeMap::new();
    for line in output.lines().filter(|l| l.starts_with("RESULT ")) {
        let field = |key: &str| {
            line.split(' ')
                .find_map(|f| f.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
                .ok_or_else(|| Error::Failed(format!("bench: no {key} in {line:?}")))
        };
        let number = |key: &str| -> Result<u64> {
            field(key)?
                .parse()
                .map_err(|_| Error::Failed(format!("bench: bad {key} in {line:?}")))
        };
        let (size, records, ns) = (number("size")?, number("records")?, number("ns")?);
        sizes.insert(size, records);
        samples
            .entry((size, field("impl")?.to_string(), field("op")?.to_string()))
            .or_default()
            .push(ns as f64 / records.max(1) as f64);
    }
    Ok((samples, sizes))
}

pub(crate) fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The `DIGEST` line of each (impl, size): what the round trip checked, to compare the logs.
pub(crate) fn digests(output: &str) -> BTreeMap<(String, u64), String> {
    output
        .lines()
        .filter_map(|l| l.strip_prefix("DIGEST "))
        .filter_map(|l| {
            let field = |key: &str| {
                l.split(' ')
                    .find_map(|f| f.strip_prefix(key)?.strip_prefix('='))
            };
            let size = field("size")?.parse().ok()?;
            let rest: Vec<&str> = l.split(' ').filter(|f| !f.starts_with("impl=")).collect();
            Some(((field("impl")?.to_string(), size), rest.join(" ")))
        })
        .collect()
}

/// Median, min and max.
pub(crate) fn spread(values: &[f64]) -> (f64, f64, f64) {
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (median(values), min, max)
}

fn table(rounds: &[String], files: &str, leveldb_built: bool) -> Result<String> {
    use std::fmt::Write;
    let all = rounds.concat();
    let (samples, sizes) = parse(&all)?;
    let per_round = rounds
        .iter()
        .map(|r| parse(r).map(|(s, _)| s))
        .collect::<Result<Vec<_>>>()?;
    let get = |samples: &Samples, size: u64, imp: &str, op: &str| {
        samples
            .get(&(size, imp.to_string(), op.to_string()))
            .map_or(f64::NAN, |v| median(v))
    };
    let reference = |size: u64, op: &str| {
        LEVELDB_NS
            .iter()
            .find(|r| r.0 == size)
            .map_or(f64::NAN, |r| if op == "write" { r.1 } else { r.2 })
    };
    // LevelDB's ns / logfmt's, paired within each round.
    let ratios = |size: u64, op: &str| -> (f64, f64, f64) {
        let r: Vec<f64> = per_round
            .iter()
            .map(|s| {
                let ldb = if leveldb_built {
                    get(s, size, "leveldb", op)
                } else {
                    reference(size, op)
                };
                ldb / get(s, size, "logfmt", op)
            })
            .collect();
        spread(&r)
    };
    let engine = all
        .lines()
        .find_map(|l| l.strip_prefix("ENGINE "))
        .unwrap_or("?")
        .to_string();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nCPU: {} -- logfmt's CRC-32C path: {}",
        cpu(),
        engine
            .replace("crc_16=", "16 B ")
            .replace(" crc_1m=", ", 1 MiB ")
    );
    let digests = digests(&all);
    let identical = sizes.keys().all(|&size| {
        digests.get(&("logfmt".to_string(), size)) == digests.get(&("leveldb".to_string(), size))
    });
    if leveldb_built {
        let _ = writeln!(
            out,
            "{} rounds x {PASSES} passes, logfmt and LevelDB 1.23's C++ side by side; logs \
             byte-identical: {}",
            rounds.len(),
            if identical { "yes" } else { "NO" }
        );
    } else {
        let _ = writeln!(
            out,
            "{} rounds x {PASSES} passes; LevelDB NOT run: its ns are reference figures from \
             another machine",
            rounds.len()
        );
    }
    let _ = writeln!(
        out,
        "ns/record: medians over every pass; vs LDB: LevelDB's ns / logfmt's, paired within each \
         round: median [min-max]\n"
    );
    let _ = writeln!(
        out,
        "{:>8} | {:>10} {:>6} {:>10} {:>17} | {:>10} {:>6} {:>10} {:>17}",
        "size", "write ns", "GB/s", "LevelDB", "vs LDB", "read ns", "GB/s", "LevelDB", "vs LDB"
    );
    for &size in sizes.keys() {
        let mut line = format!("{size:>8} |");
        for op in ["write", "read"] {
            let ns = get(&samples, size, "logfmt", op);
            let ldb = if leveldb_built {
                get(&samples, size, "leveldb", op)
            } else {
                reference(size, op)
            };
            let (m, lo, hi) = ratios(size, op);
            let _ = write!(
                line,
                " {ns:>10.1} {:>6.2} {ldb:>10.1} {:>17} |",
                size as f64 / ns,
                format!("{m:.2}x [{lo:.2}-{hi:.2}]")
            );
        }
        let _ = writeln!(out, "{}", line.trim_end_matches(" |"));
    }
    let _ = writeln!(
        out,
        "\nbounds, same run (ns/record): the copy bound (`memcpy` of every payload into a \
         log-sized buffer), checksum only (logfmt's own; the crc32c crate), and logfmt's time \
         as a multiple of each (1.00 = at the bound)\n"
    );
    let _ = writeln!(
        out,
        "{:>8} | {:>10} {:>10} {:>10} | {:>10} {:>10} | {:>10} {:>10}",
        "size", "copy", "crc (own)", "crc32c", "write/copy", "read/copy", "write/crc", "read/crc"
    );
    for &size in sizes.keys() {
        let (write, read) = (
            get(&samples, size, "logfmt", "write"),
            get(&samples, size, "logfmt", "read"),
        );
        let copy = get(&samples, size, "memcpy", "copy");
        let own = get(&samples, size, "logfmt-crc", "crc");
        let crate_crc = get(&samples, size, "crc32c", "crc");
        let _ = writeln!(
            out,
            "{size:>8} | {copy:>10.1} {own:>10.1} {crate_crc:>10.1} | {:>10.2} {:>10.2} | {:>10.2} {:>10.2}",
            write / copy,
            read / copy,
            write / own,
            read / own,
        );
    }
    let (files, _) = parse(files)?;
    let _ = writeln!(
        out,
        "\nthrough files (logfmt-std, tmpfs), and the parallel split scan (records/s):\n"
    );
    let _ = writeln!(
        out,
        "{:>8} | {:>12} {:>12} | {:>14} {:>14} {:>8}",
        "size", "file write", "file read", "scan 1 thread", "scan 2 threads", "speedup"
    );
    for &size in sizes.keys() {
        let per_s = |ns: f64| 1e9 / ns;
        let (fw, fr) = (
            get(&files, size, "logfmt-file", "write"),
            get(&files, size, "logfmt-file", "read"),
        );
        let (s1, s2) = (
            get(&files, size, "logfmt", "scan1"),
            get(&files, size, "logfmt", "scan2"),
        );
        let _ = writeln!(
            out,
            "{:>8} | {:>9.0} MB/s {:>7.0} MB/s | {:>14.0} {:>14.0} {:>7.2}x",
            size,
            size as f64 / fw * 1e3,
            size as f64 / fr * 1e3,
            per_s(s1),
            per_s(s2),
            s1 / s2,
        );
    }
    Ok(out)
}

/// `cargo xtask bench pack`: the same records plain and packed (`PACK ...` lines) and, in the
/// same run, LevelDB's C++ writer and reader on the same sizes (`RESULT ...` lines), the two
/// alternating; then a table of medians: bytes a record, ns a record, and records/s against
/// LevelDB's.
fn pack(quick: bool) -> Result {
    banner("bench pack: build logfmt-bench (release)");
    let exe = crate::cmd::build_release_bin("logfmt-bench", "logfmt-bench")?;
    banner("bench pack: build leveldb-bench (LevelDB 1.23's log::Writer and log::Reader)");
    let leveldb_bench = match build_leveldb() {
        Ok(path) => Some(path.to_string_lossy().into_owned()),
        Err(e) => {
            println!(
                "xtask: warning: LevelDB not built ({e}); its figures are reference figures \
                 from another machine, not this run"
            );
            None
        }
    };
    let cases: &[&str] = if quick {
        &["16:200000", "100:100000"]
    } else {
        &["16:2000000", "100:1000000"]
    };
    let reps = if quick { "3" } else { REPS };
    let rounds = if quick { 1 } else { 3 };
    banner("bench pack: run (all figures from this one run)");
    let mut output = String::new();
    let mut leveldb_output = String::new();
    for round in 0..rounds {
        let logfmt = || {
            Cmd::new(&exe.to_string_lossy())
                .args(["pack", "--reps", reps])
                .args(cases.iter().copied())
                .read()
        };
        let leveldb = || match &leveldb_bench {
            Some(path) => Cmd::new(path)
                .args(["--name", "leveldb", "--reps", reps])
                .args(cases.iter().copied())
                .read(),
            None => Ok(String::new()),
        };
        if round % 2 == 0 {
            output.push_str(&logfmt()?);
            leveldb_output.push_str(&leveldb()?);
        } else {
            leveldb_output.push_str(&leveldb()?);
            output.push_str(&logfmt()?);
        }
    }
    print!("{output}");
    let (leveldb_samples, _) = parse(&leveldb_output)?;
    /// A case's passes: records, log bytes, ns a record of each pass.
    type Passes = (u64, u64, Vec<f64>);
    // impl, size, op -> its passes.
    let mut passes: BTreeMap<(String, u64, String), Passes> = BTreeMap::new();
    for line in output.lines().filter(|l| l.starts_with("PACK ")) {
        let field = |key: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
                .map(str::to_owned)
        };
        let number = |key: &str| field(key).and_then(|v| v.parse::<u64>().ok());
        let (Some(imp), Some(op), Some(size), Some(records), Some(bytes), Some(ns)) = (
            field("impl"),
            field("op"),
            number("size"),
            number("records"),
            number("log_bytes"),
            number("ns"),
        ) else {
            return Err(Error::Failed(format!("unreadable line: {line}")));
        };
        let entry = passes
            .entry((imp, size, op))
            .or_insert((records, bytes, Vec::new()));
        entry.2.push(ns as f64 / records.max(1) as f64);
    }
    println!(
        "\n{:<14} {:>5} {:>6} {:>10} {:>12} {:>16}",
        "impl", "size", "op", "bytes/rec", "ns/rec", "vs LevelDB rec/s"
    );
    for ((imp, size, op), (records, bytes, mut ns)) in passes {
        ns.sort_by(f64::total_cmp);
        let median = ns.get(ns.len() / 2).copied().unwrap_or(f64::NAN);
        let measured = leveldb_samples
            .get(&(size, "leveldb".to_string(), op.clone()))
            .map(|v| self::median(v));
        let leveldb = measured.or_else(|| {
            LEVELDB_NS
                .iter()
                .find(|(s, ..)| *s == size)
                .map(|&(_, write, read)| if op == "write" { write } else { read })
        });
        let ratio = leveldb.map_or_else(|| "-".to_owned(), |l| format!("{:.2}x", l / median));
        println!(
            "{imp:<14} {size:>5} {op:>6} {:>10.2} {median:>12.2} {ratio:>16}",
            bytes as f64 / records.max(1) as f64
        );
    }
    for ((size, imp, op), ns) in &leveldb_samples {
        println!(
            "{imp:<14} {size:>5} {op:>6} {:>10} {:>12.2} {:>16}",
            "",
            self::median(ns),
            "1.00x"
        );
    }
    println!(
        "({}; the issue's targets: packed 16 B records <= 18 bytes each, >= 10x LevelDB's \
         records/s)",
        if leveldb_bench.is_some() {
            "LevelDB 1.23's C++ log::Writer and log::Reader, hardware CRC, in this run, \
             alternating with logfmt"
        } else {
            "LevelDB's ns a record: the reference figures of this file's LEVELDB_NS, from \
             another machine"
        }
    );
    wal_size(quick)
}

/// The write-ahead log size part of `cargo xtask bench pack`: the same single-put write
/// batches (keys and values of 16 to 100 bytes) written by logfmt plain, with RocksDB's WAL
/// compression and in compressed packs (`logfmt-bench wal-size`), and by RocksDB itself plain
/// and with `wal_compression = kZSTD` (`cpp/rocksdb_wal_size.cc`, built here against Debian's
/// RocksDB); a table of bytes, bytes a put, and each against RocksDB's compressed log.
fn wal_size(quick: bool) -> Result {
    let puts = if quick { "100000" } else { "1000000" };
    let root = crate::cmd::project_root();
    let dir = root.join("target").join("bench-wal-size");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::Failed(format!("cannot create {}: {e}", dir.display())))?;
    banner(&format!(
        "bench pack: write-ahead log size, {puts} single-put batches"
    ));
    let exe = crate::cmd::build_release_bin("logfmt-bench", "logfmt-bench")?;
    let mut lines = Cmd::new(&exe.to_string_lossy())
        .args(["wal-size", "--puts", puts, "--dir"])
        .args([dir.to_string_lossy()])
        .read()?;
    let rocksdb = crate::interop::ensure_libraries().and_then(|()| {
        let helper = dir.join("rocksdb_wal_size");
        Cmd::new("c++")
            .args(["-std=c++17", "-O2", "-o"])
            .args([helper.to_string_lossy()])
            .args([root
                .join("crates/logfmt-bench/cpp/rocksdb_wal_size.cc")
                .to_string_lossy()])
            .args(["-lrocksdb"])
            .run()?;
        let spec = dir.join("spec");
        let mut out = String::new();
        for kind in ["plain", "zstd"] {
            out.push_str(
                &Cmd::new(&helper.to_string_lossy())
                    .args([
                        spec.to_string_lossy(),
                        dir.join(format!("rocksdb-{kind}")).to_string_lossy(),
                    ])
                    .args([kind])
                    .read()?,
            );
        }
        Ok(out)
    });
    match rocksdb {
        Ok(out) => {
            lines.push_str(&out);
            same_plain_log(&dir)?;
        }
        Err(e) => println!("xtask: warning: RocksDB's side not run ({e}): logfmt's sizes only"),
    }
    print!("{lines}");
    let sizes: Vec<(String, u64, u64)> = lines
        .lines()
        .filter_map(|line| {
            let field = |key: &str| {
                line.split_whitespace()
                    .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
            };
            Some((
                field("impl")?.to_owned(),
                field("puts")?.parse().ok()?,
                field("bytes")?.parse().ok()?,
            ))
        })
        .collect();
    let reference = sizes
        .iter()
        .find(|(name, ..)| name == "rocksdb-zstd")
        .map(|&(_, _, bytes)| bytes);
    println!(
        "\n{:<22} {:>14} {:>10} {:>18}",
        "write-ahead log", "bytes", "bytes/put", "vs RocksDB zstd"
    );
    for (name, puts, bytes) in &sizes {
        let ratio = reference.map_or_else(
            || "-".to_owned(),
            |r| format!("{:.3}", *bytes as f64 / r as f64),
        );
        println!(
            "{name:<22} {bytes:>14} {:>10.2} {ratio:>18}",
            *bytes as f64 / (*puts).max(1) as f64
        );
    }
    println!(
        "(the same puts, each its own WriteBatch, sequence numbers from 1; RocksDB {} by \
         RocksDB itself in this run; the issue's target: logfmt's compressed log no larger than \
         RocksDB's)",
        if reference.is_some() {
            "7.8's logs written"
        } else {
            "not run"
        }
    );
    Ok(())
}

/// Checks that logfmt's plain log of the puts is byte for byte the log RocksDB wrote of them
/// (the same batches, the same sequence numbers: the same chunks).
fn same_plain_log(dir: &std::path::Path) -> Result {
    let rocksdb_dir = dir.join("rocksdb-plain");
    let rocksdb_log = std::fs::read_dir(&rocksdb_dir)
        .map_err(|e| Error::Failed(format!("{}: {e}", rocksdb_dir.display())))?
        .filter_map(|entry| Some(entry.ok()?.path()))
        .find(|path| path.extension().is_some_and(|e| e == "log"))
        .ok_or_else(|| Error::Failed(format!("no .log file in {}", rocksdb_dir.display())))?;
    let read = |path: &std::path::Path| {
        std::fs::read(path).map_err(|e| Error::Failed(format!("{}: {e}", path.display())))
    };
    if read(&rocksdb_log)? != read(&dir.join("logfmt-plain.log"))? {
        return Err(Error::Failed(format!(
            "logfmt's plain log differs from RocksDB's {}",
            rocksdb_log.display()
        )));
    }
    println!(
        "logfmt's plain log is byte for byte RocksDB's ({})",
        rocksdb_log.display()
    );
    Ok(())
}
