//! `cargo xtask bench --baseline REV`: today's `logfmt-bench` against the one of another commit,
//! in the same rounds, with LevelDB's reader beside both.
//!
//! The other commit is checked out in a git worktree under the target directory
//! (`bench-baseline/<commit>`, kept for the next run) and its `logfmt-bench` is built there as
//! that commit builds it (its own `.cargo/config.toml`; a target directory in the worktree).
//! Each round runs four programs, in an order that turns by one every round: today's
//! `logfmt-bench`, the baseline's, LevelDB 1.23's C++ writer and reader reading the log as a
//! file is read (each block copied into the reader's buffer; `leveldb`) and reading slices of it
//! without a copy (`leveldb-zc`); today's program measures the bounds too (a `memcpy` of the
//! payloads, the checksum alone). A ratio is paired within a round; the table gives each size's
//! median and [min–max] over the rounds, so a change shows against the rounds' own spread.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::bench::{Samples, cpu, digests, median, parse, spread};
use crate::bench_load::RoundLoad;
use crate::cmd::{Cmd, Error, Result, banner, project_root};

/// Names of the four programs' lines: today's, the baseline's, LevelDB copying, zero-copy.
const TODAY: &str = "logfmt";
const BASELINE: &str = "baseline";
const LEVELDB: &str = "leveldb";
const LEVELDB_ZC: &str = "leveldb-zc";

/// Passes of every case in each program per round.
const PASSES: &str = "3";

/// Runs the comparison with `rev` as the baseline.
pub(crate) fn run(rev: &str, quick: bool, allow_load: bool) -> Result {
    let commit = resolve(rev)?;
    banner("bench --baseline: build logfmt-bench (release), today's");
    let today = crate::cmd::build_release_bin("logfmt-bench", "logfmt-bench")?;
    banner(&format!(
        "bench --baseline: build logfmt-bench at {rev} ({})",
        &commit[..12]
    ));
    let baseline = build_baseline(&commit)?;
    banner("bench --baseline: build leveldb-bench (LevelDB 1.23's log::Writer and log::Reader)");
    let leveldb = crate::bench::build_leveldb()?;
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
    let rounds = if quick { 3 } else { 7 };
    let programs: [(&Path, &str, &[&str]); 4] = [
        (&today, TODAY, &["--limits"]),
        (&baseline, BASELINE, &[]),
        (&leveldb, LEVELDB, &["--copy"]),
        (&leveldb, LEVELDB_ZC, &[]),
    ];
    banner("bench --baseline: run (all figures from this one run)");
    let mut outputs = Vec::new();
    let mut loads = Vec::new();
    for round in 0..rounds {
        let load = RoundLoad::start();
        let mut output = String::new();
        for turn in 0..programs.len() {
            let (exe, name, extra) = programs[(round + turn) % programs.len()];
            output.push_str(
                &Cmd::new(&exe.to_string_lossy())
                    .args(["--name", name, "--reps", PASSES])
                    .args(extra.iter().copied())
                    .args(cases.iter().copied())
                    .read()?,
            );
        }
        let load = load.end();
        println!(
            "round {} of {rounds} done (load average {})",
            round + 1,
            load.text()
        );
        outputs.push(output);
        loads.push(load);
    }
    let kept = crate::bench_load::keep(outputs, &loads, allow_load)?;
    print!("{}", table(&kept.rounds, rev, &commit, &kept.note)?);
    Ok(())
}

/// The full hash of `rev`.
pub(crate) fn resolve(rev: &str) -> Result<String> {
    let out = Cmd::new("git")
        .args(["rev-parse", "--verify", "--quiet"])
        .args([format!("{rev}^{{commit}}")])
        .read()
        .map_err(|_| Error::Usage(format!("`{rev}` names no commit")))?;
    Ok(out.trim().to_owned())
}

/// Checks `commit` out in a worktree under the target directory (once) and builds its
/// `logfmt-bench` there; returns the executable's path.
pub(crate) fn build_baseline(commit: &str) -> Result<PathBuf> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| project_root().join("target"), PathBuf::from);
    let root = target.join("bench-baseline");
    let tree = root.join(&commit[..12]);
    let checked_out = Cmd::new("git")
        .dir(&tree.to_string_lossy())
        .args(["rev-parse", "HEAD"])
        .read()
        .is_ok_and(|head| head.trim() == commit);
    if !checked_out {
        // A directory left by an interrupted run is not a worktree of this commit: start over.
        let _ = std::fs::remove_dir_all(&tree);
        let _ = Cmd::new("git").args(["worktree", "prune"]).run();
        Cmd::new("git")
            .args(["worktree", "add", "--detach"])
            .args([tree.to_string_lossy().into_owned(), commit.to_owned()])
            .run()?;
    }
    // Built as the commit builds itself: its own `.cargo/config.toml` (the directory cargo
    // runs in), no flags of ours.
    let json = Cmd::cargo()
        .dir(&tree.to_string_lossy())
        // A target directory of its own: cargo does not hash a workspace's path into its
        // artifacts, so another baseline's, built later, would pass for this one's.
        .env("CARGO_TARGET_DIR", &tree.join("target").to_string_lossy())
        .args([
            "build",
            "--release",
            "-p",
            "logfmt-bench",
            "--bin",
            "logfmt-bench",
            "--message-format=json-render-diagnostics",
        ])
        .read()?;
    let wanted = format!("logfmt-bench{}", std::env::consts::EXE_SUFFIX);
    crate::cmd::executables(&json)
        .into_iter()
        .find(|(name, _)| *name == wanted)
        .map(|(_, path)| path)
        .ok_or_else(|| Error::Failed(format!("{commit}: cargo built no `logfmt-bench`")))
}

/// The table: per size, write and read, each program's median ns a record, and today's ratio
/// to each of the others (their ns / today's, paired within a round: above 1.00 today is
/// faster).
fn table(rounds: &[String], rev: &str, commit: &str, load: &str) -> Result<String> {
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
    let ratio = |size: u64, other: &str, op: &str| {
        let r: Vec<f64> = per_round
            .iter()
            .map(|s| get(s, size, other, op) / get(s, size, TODAY, op))
            .collect();
        let (m, lo, hi) = spread(&r);
        format!("{m:.2}x [{lo:.2}-{hi:.2}]")
    };
    let digests = digests(&all);
    let same = |other: &str| {
        sizes.keys().all(|&size| {
            digests.get(&(TODAY.to_string(), size)) == digests.get(&(other.to_string(), size))
        })
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nCPU: {}\n{} rounds x {PASSES} passes, four programs a round (the order turns by one \
         each round): logfmt today, logfmt at {rev} ({}), LevelDB 1.23's C++ reading as a file \
         is read (blocks copied into its buffer) and zero-copy (slices of the log); logs \
         byte-identical: baseline {}, LevelDB {}\nns/record: medians over every pass; ratios: \
         the other's ns / today's, paired within each round: median [min-max] (above 1.00 \
         today is faster)\n{load}",
        cpu(),
        rounds.len(),
        &commit[..12],
        if same(BASELINE) { "yes" } else { "NO" },
        if same(LEVELDB) && same(LEVELDB_ZC) {
            "yes"
        } else {
            "NO"
        },
    );
    for op in ["write", "read"] {
        let _ = writeln!(
            out,
            "\n{op}\n{:>8} | {:>9} {:>9} {:>9} {:>9} | {:>19} {:>19} {:>19}",
            "size",
            "today ns",
            "base ns",
            "LDB ns",
            "LDB-zc ns",
            "vs baseline",
            "vs LevelDB",
            "vs LevelDB zc"
        );
        for &size in sizes.keys() {
            let _ = writeln!(
                out,
                "{size:>8} | {:>9.1} {:>9.1} {:>9.1} {:>9.1} | {:>19} {:>19} {:>19}",
                get(&samples, size, TODAY, op),
                get(&samples, size, BASELINE, op),
                get(&samples, size, LEVELDB, op),
                get(&samples, size, LEVELDB_ZC, op),
                ratio(size, BASELINE, op),
                ratio(size, LEVELDB, op),
                ratio(size, LEVELDB_ZC, op),
            );
        }
    }
    let _ = writeln!(
        out,
        "\nbounds, today's program in the same rounds (ns/record): a `memcpy` of every payload, \
         logfmt's checksum alone over every payload, and today's write and read as multiples \
         of each (1.00 = at the bound; a multiple is paired within each round: median \
         [min-max])\n{:>8} | {:>10} {:>10} | {:>17} {:>17} | {:>10} {:>10}",
        "size", "copy", "checksum", "write/copy", "read/copy", "write/crc", "read/crc"
    );
    let bound = |size: u64, op: &str, imp: &str, bound_op: &str| {
        let r: Vec<f64> = per_round
            .iter()
            .map(|s| get(s, size, TODAY, op) / get(s, size, imp, bound_op))
            .collect();
        let (m, lo, hi) = spread(&r);
        format!("{m:.2} [{lo:.2}-{hi:.2}]")
    };
    for &size in sizes.keys() {
        let copy = get(&samples, size, "memcpy", "copy");
        let crc = get(&samples, size, "logfmt-crc", "crc");
        let _ = writeln!(
            out,
            "{size:>8} | {copy:>10.1} {crc:>10.1} | {:>17} {:>17} | {:>10.2} {:>10.2}",
            bound(size, "write", "memcpy", "copy"),
            bound(size, "read", "memcpy", "copy"),
            get(&samples, size, TODAY, "write") / crc,
            get(&samples, size, TODAY, "read") / crc,
        );
    }
    Ok(out)
}
