//! The subcommands. To add one (e.g. `qemu`, `fuzz`, `bench`, `size`,
//! `demo`, `interop`): write a `fn() -> Result` below, add a [`Task`] entry
//! to [`TASKS`] (its `run` parses the arguments and calls the function) and,
//! if CI should run it, a step to [`CI_STEPS`].

use std::time::{Duration, Instant};

use crate::cmd::{Cmd, Error, Result, banner, fmt_duration};
use crate::toolchain::{
    CARGO_SHEAR, THUMB_TARGETS, THUMBV7EM, THUMBV7M, ensure_cargo_tool, ensure_targets,
};
use crate::{firmware, fuzz, interop, soak};

/// One `cargo xtask <name>` subcommand.
pub(crate) struct Task {
    pub(crate) name: &'static str,
    pub(crate) aliases: &'static [&'static str],
    /// The optional flags it accepts, e.g. `--check`; anything else is a
    /// usage error.
    pub(crate) flags: &'static [&'static str],
    pub(crate) about: &'static str,
    /// Runs the task, given the (already validated) flags that follow its
    /// name.
    pub(crate) run: fn(&[String]) -> Result,
}

pub(crate) const TASKS: &[Task] = &[
    Task {
        name: "bench",
        aliases: &[],
        flags: &["--quick", "flash", "pack"],
        about: "benchmarks: write/read per record size, files, split scan, vs memcpy/CRC bounds; \
                `flash`: logfmt vs sequential-storage on simulated NOR flash; `pack`: records \
                plain and packed",
        run: crate::bench::run,
    },
    Task {
        name: "bench-decode",
        aliases: &[],
        flags: &["--quick"],
        about: "decoding a WAL of 2 M single-put batches: `logfmt cat` (text, JSON) vs RocksDB's \
                `ldb dump_wal --print_value` in the same run",
        run: crate::bench_decode::run,
    },
    Task {
        name: "bench-threads",
        aliases: &[],
        flags: &["--quick"],
        about: "`logfmt verify`, `stats` and `cat --output json` on a 1 GiB log, one thread \
                against one per core (`--threads`), alternating in the same run",
        run: crate::bench_threads::run,
    },
    Task {
        name: "fmt",
        aliases: &[],
        flags: &["--check"],
        about: "cargo fmt --all (with --check: fail if anything would change)",
        run: |flags| fmt(flags.iter().any(|f| f == "--check")),
    },
    Task {
        name: "lint",
        aliases: &["clippy"],
        flags: &[],
        about: "clippy -D warnings: the workspace on the host, logfmt-core on thumbv7em",
        run: |_| lint(),
    },
    Task {
        name: "deps",
        aliases: &["shear"],
        flags: &[],
        about: "unused or misplaced dependencies (cargo-shear) of every crate, tests/firmware and tests/fuzz included",
        run: |_| deps(),
    },
    Task {
        name: "test",
        aliases: &[],
        flags: &[],
        about: "cargo test --workspace, then logfmt-core with --no-default-features",
        run: |_| test(),
    },
    Task {
        name: "doc",
        aliases: &["docs"],
        flags: &[],
        about: "cargo doc --workspace --no-deps with RUSTDOCFLAGS=-D warnings",
        run: |_| doc(),
    },
    Task {
        name: "targets",
        aliases: &["check-targets"],
        flags: &[],
        about: "install the thumbv7 targets if needed; build logfmt-core for them",
        run: |_| targets(),
    },
    Task {
        name: "qemu",
        aliases: &[],
        flags: &[],
        about: "on-target tests under QEMU: mps2-an385 (Cortex-M3), mps2-an386 (Cortex-M4F)",
        run: |_| firmware::qemu::run(),
    },
    Task {
        name: "size",
        aliases: &[],
        flags: &["--check"],
        about: "flash/RAM/stack of a reference firmware (with --check: fail over budget)",
        run: |flags| firmware::size::run(flags.iter().any(|f| f == "--check")),
    },
    Task {
        name: "demo",
        aliases: &[],
        flags: &["--host"],
        about: "sensor ring log in NOR flash: 4 laps, 13 power cuts, reboots (QEMU; --host: no QEMU); logfmt reads it back",
        run: |flags| firmware::demo::run(flags.iter().any(|f| f == "--host")),
    },
    Task {
        name: "fuzz",
        aliases: &[],
        flags: &["--seconds N", "--miri", "TARGET"],
        about: "each cargo-fuzz target for N s (default 60; installs nightly, cargo-fuzz); --miri: also Miri",
        run: fuzz::run,
    },
    Task {
        name: "interop",
        aliases: &[],
        flags: &[],
        about: "install LevelDB and RocksDB (libleveldb-dev, librocksdb-dev, rocksdb-tools) if missing; run the tests against them",
        run: |_| interop::run(),
    },
    Task {
        name: "man",
        aliases: &[],
        flags: &[],
        about: "logfmt's man pages (target/man) and bash, zsh and fish completions \
                (target/completions), from its clap definitions",
        run: crate::man::run,
    },
    Task {
        name: "soak",
        aliases: &[],
        flags: &["--seconds N", "--seed S"],
        about: "the crash (SIGKILL) and full-disk tests, round after round with new seeds, for N s \
                (default 300; not part of ci)",
        run: soak::run,
    },
    Task {
        name: "ci",
        aliases: &[],
        flags: &[],
        about: "everything CI runs: fmt --check, deps, targets, lint, test, interop, qemu, size, doc, fuzz, miri",
        run: |_| ci(),
    },
];

/// A CI step: its title and what it runs.
pub(crate) type Step = (&'static str, fn() -> Result);

/// What `cargo xtask ci` runs, in order; it stops at the first failure.
pub(crate) const CI_STEPS: &[Step] = &[
    ("fmt --check", || fmt(true)),
    ("deps", deps),
    ("targets", targets),
    ("lint", lint),
    ("test", test),
    ("interop", interop::run),
    ("qemu", firmware::qemu::run),
    ("size --check", || firmware::size::run(true)),
    ("doc", doc),
    ("fuzz", fuzz::ci),
    ("miri", fuzz::miri_ci),
];

/// `cargo xtask targets` builds `logfmt-core` for each (target, features).
const TARGET_BUILDS: &[(&str, Option<&str>)] = &[
    (THUMBV7M, None),
    (THUMBV7M, Some("defmt")),
    (THUMBV7M, Some("crc-no-table")),
    (THUMBV7M, Some("crc-no-table,crc-table-16k")),
    (THUMBV7M, Some("embedded-storage")),
    (THUMBV7EM, None),
    (THUMBV7EM, Some("defmt")),
    (THUMBV7EM, Some("defmt,embedded-storage")),
];

/// The only crate that is built for bare-metal targets. Never use
/// `--workspace` with a thumb target: the other crates need std.
const CORE: &str = "logfmt-core";

pub(crate) fn find(name: &str) -> Option<&'static Task> {
    TASKS
        .iter()
        .find(|t| t.name == name || t.aliases.contains(&name))
}

pub(crate) fn usage() -> String {
    let mut s = String::from("Usage: cargo xtask <SUBCOMMAND> [ARGS]\n\nSubcommands:\n");
    let rows: Vec<(String, &Task)> = TASKS
        .iter()
        .map(|t| {
            let flags = t.flags.iter().map(|f| format!(" [{f}]"));
            (std::iter::once(t.name.to_owned()).chain(flags).collect(), t)
        })
        .collect();
    let width = rows.iter().map(|(head, _)| head.len()).max().unwrap_or(0);
    for (head, task) in &rows {
        s += &format!("  {head:width$}  {}", task.about);
        if !task.aliases.is_empty() {
            s += &format!(" (alias: {})", task.aliases.join(", "));
        }
        s.push('\n');
    }
    s += &format!("  {:width$}  print this help\n", "help");
    s
}

/// Checks `args` against `task.flags`, then runs `task` between banners.
pub(crate) fn run(task: &Task, args: &[String]) -> Result {
    let mut seen: Vec<&str> = Vec::new();
    // A task whose flags name a value (`--seconds N`) or a positional (`TARGET`) checks its
    // own arguments.
    let checks_own = task
        .flags
        .iter()
        .any(|f| f.contains(' ') || !f.starts_with('-'));
    for arg in args.iter().filter(|_| !checks_own) {
        if !task.flags.contains(&arg.as_str()) {
            return Err(Error::Usage(format!(
                "unexpected argument `{arg}` for `{}`",
                task.name
            )));
        }
        if seen.contains(&arg.as_str()) {
            return Err(Error::Usage(format!("`{arg}` given twice")));
        }
        seen.push(arg);
    }
    let title = std::iter::once(task.name)
        .chain(args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    run_step(&title, || (task.run)(args)).map(drop)
}

/// Prints the banner for `name`, runs `f` and reports how long it took.
fn run_step(name: &str, f: impl FnOnce() -> Result) -> Result<Duration> {
    banner(name);
    let start = Instant::now();
    f()?;
    let took = start.elapsed();
    println!("== xtask: {name}: ok ({}) ==", fmt_duration(took));
    Ok(took)
}

// ---------------------------------------------------------------- fmt

fn fmt(check: bool) -> Result {
    let mut cmd = Cmd::cargo().args(["fmt", "--all"]);
    if check {
        cmd = cmd.args(["--", "--check"]);
    }
    cmd.run().map_err(|e| {
        if check {
            Error::Failed(format!("{e}\n  (run `cargo xtask fmt` to fix formatting)"))
        } else {
            e
        }
    })
}

// ---------------------------------------------------------------- lint

fn lint() -> Result {
    Cmd::cargo()
        .args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ])
        .run()?;
    Cmd::cargo()
        .args([
            "clippy",
            "-p",
            CORE,
            "--all-targets",
            "--features",
            "embedded-storage",
        ])
        .args(["--", "-D", "warnings"])
        .run()?;
    ensure_targets(&[THUMBV7EM])?;
    for features in [&[][..], &["--features", "defmt,embedded-storage"]] {
        Cmd::cargo()
            .args(["clippy", "-p", CORE, "--target", THUMBV7EM, "--lib"])
            .args(features.iter().copied())
            .args(["--", "-D", "warnings"])
            .run()?;
    }
    Ok(())
}

// ---------------------------------------------------------------- deps

/// Fails on a dependency that no target of its crate uses, or that only tests use outside
/// `[dev-dependencies]`: cargo-shear (installed if missing) on the workspace and on each crate
/// the workspace excludes. A dependency it cannot see being used (one named only in a file
/// included with `#[path]` from outside the crate's tree) goes into that crate's
/// `[package.metadata.cargo-shear] ignored` list, with a comment saying where it is used.
fn deps() -> Result {
    ensure_cargo_tool(&CARGO_SHEAR)?;
    for dir in DEPS_DIRS {
        Cmd::cargo()
            .args(["shear", "--deny-warnings", dir])
            .run()
            .map_err(|e| {
                Error::Failed(format!(
                    "{e}\n  remove (or move to [dev-dependencies]) what it lists in {dir}"
                ))
            })?;
    }
    Ok(())
}

/// What `cargo xtask deps` checks: the root workspace and the crates it excludes (each a
/// workspace of its own).
const DEPS_DIRS: &[&str] = &[".", "tests/firmware", "tests/fuzz"];

// ---------------------------------------------------------------- test

fn test() -> Result {
    // Never `--all-features`: `defmt` needs a defmt global logger and
    // linker script, so it does not link in host test binaries.
    Cmd::cargo().args(["test", "--workspace"]).run()?;
    Cmd::cargo()
        .args(["test", "-p", CORE, "--no-default-features"])
        .run()?;
    // The flash log and its power-cut tests.
    Cmd::cargo()
        .args([
            "test",
            "-p",
            CORE,
            "--features",
            "embedded-storage",
            "--lib",
        ])
        .run()?;
    // The software CRC with each table, both table features together included (the 16 KiB
    // table), against the `crc32c` crate.
    for features in CRC_TABLE_FEATURES {
        Cmd::cargo()
            .args(["test", "-p", CORE, "--lib", "--features", features])
            .args(["checksum::"])
            .run()?;
    }
    Ok(())
}

/// The CRC table features, alone and together.
const CRC_TABLE_FEATURES: &[&str] = &[
    "crc-no-table",
    "crc-table-16k",
    "crc-no-table,crc-table-16k",
];

// ---------------------------------------------------------------- doc

fn doc() -> Result {
    Cmd::cargo()
        .args(["doc", "--workspace", "--no-deps"])
        .env("RUSTDOCFLAGS", "-D warnings")
        .run()
}

// ---------------------------------------------------------------- targets

fn targets() -> Result {
    ensure_targets(THUMB_TARGETS)?;
    for &(target, features) in TARGET_BUILDS {
        let mut cmd = Cmd::cargo().args(["build", "-p", CORE, "--target", target]);
        if let Some(features) = features {
            cmd = cmd.args(["--features", features]);
        }
        cmd.run()?;
    }
    Ok(())
}

// ---------------------------------------------------------------- ci

fn ci() -> Result {
    let start = Instant::now();
    let mut done: Vec<(&str, Duration)> = Vec::new();
    let mut failure = None;
    for &(name, step) in CI_STEPS {
        let step_start = Instant::now();
        match run_step(name, step) {
            Ok(took) => done.push((name, took)),
            Err(e) => {
                failure = Some((name, step_start.elapsed(), e));
                break;
            }
        }
    }
    let total = fmt_duration(start.elapsed());

    banner("ci summary");
    let width = CI_STEPS.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    for (name, took) in &done {
        println!("  ok       {name:width$}  {:>9}", fmt_duration(*took));
    }
    match failure {
        None => {
            println!("ci: {} steps passed in {total}", done.len());
            Ok(())
        }
        Some((name, took, err)) => {
            println!("  FAILED   {name:width$}  {:>9}", fmt_duration(took));
            for (skipped, _) in &CI_STEPS[done.len() + 1..] {
                println!("  skipped  {skipped}");
            }
            println!("ci: FAILED at step `{name}` after {total}");
            Err(Error::Failed(format!("ci step `{name}` failed: {err}")))
        }
    }
}
