//! The subcommands. To add one (e.g. `qemu`, `fuzz`, `bench`, `size`,
//! `demo`, `interop`): write a `fn() -> Result` below, add a [`Task`] entry
//! to [`TASKS`] (its `run` parses the arguments and calls the function) and,
//! if CI should run it, a step to [`CI_STEPS`].

use std::time::{Duration, Instant};

use crate::cmd::{Cmd, Error, Result, banner, fmt_duration};
use crate::firmware::example;
use crate::toolchain::{
    CARGO_SHEAR, MSRV, THUMB_TARGETS, THUMBV7EM, THUMBV7M, ensure_cargo_tool, ensure_targets,
    ensure_toolchain,
};
use crate::{firmware, fuzz, interop, package, soak};

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
        flags: &[
            "--quick",
            "--baseline REV",
            "--compare-flags",
            "--allow-load",
            "flash",
            "pack",
            "durable",
            "wal",
            "scan",
        ],
        about: "benchmarks: write/read per record size, files, split scan, vs memcpy/CRC bounds; \
                `--baseline REV`: today against commit REV's benchmark and LevelDB (copying and \
                zero-copy reads) in the same rounds; `--compare-flags`: this build against one \
                with SSE 4.2 and PCLMULQDQ compiled in. Each round prints the load average (1 \
                min, before/after); rounds above 1 per core are left out of the table, and if \
                every round was, no figure is reported (`--allow-load` prints them, marked as \
                not a measurement); \
                `flash`: logfmt vs sequential-storage on simulated NOR flash; `pack`: records \
                plain and packed; `durable`: group commit vs RocksDB; `wal`: a WAL directory's durable appends \
                vs RocksDB's WAL, fresh and recycled log files (with `--baseline REV`: and REV's in the same rounds); `scan`: SQL over 1 GiB of logs \
                (1 and 2 partitions) vs `logfmt verify`",
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
        name: "bench-zstd",
        aliases: &[],
        flags: &["--quick"],
        about: "zstd decoding and encoding speed: the Rust coder (ruzstd, which reads every \
                compressed record) against zstd's C library on the same frames",
        run: crate::bench_zstd::run,
    },
    Task {
        name: "bench-defmt",
        aliases: &[],
        flags: &["--quick"],
        about: "decoding 1 M defmt frames with the firmware's ELF: `logfmt defmt` vs \
                `defmt-print` (installed if missing) in the same run",
        run: crate::bench_defmt::run,
    },
    Task {
        name: "bench-first-line",
        aliases: &[],
        flags: &["--quick"],
        about: "time to the first line of `logfmt cat` on a 1 GiB log, into a pipe, cache \
                dropped and cached: the default against `--threads 1` and `ldb dump_wal`",
        run: crate::bench_first_line::run,
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
        name: "datafusion",
        aliases: &[],
        flags: &[],
        about: "crates/logfmt-datafusion (not a workspace member: DataFusion, Rust 1.94): fmt \
                --check, clippy -D warnings, tests",
        run: crate::datafusion::run,
    },
    Task {
        name: "fmt",
        aliases: &[],
        flags: &["--check"],
        about: "cargo fmt --all, and of the nRF52840 example (with --check: fail if anything \
                would change)",
        run: |flags| fmt(flags.iter().any(|f| f == "--check")),
    },
    Task {
        name: "lint",
        aliases: &["clippy"],
        flags: &[],
        about: "clippy -D warnings: the workspace on the host, logfmt-core and the nRF52840 \
                example on thumbv7em",
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
        about: "cargo test --workspace, then logfmt-core and logfmt-std with --no-default-features",
        run: |_| test(),
    },
    Task {
        name: "api-count",
        aliases: &[],
        flags: &[],
        about: "public names at the top level of logfmt-core and logfmt-std (each name a user can \
                write as `crate::NAME`), read from their lib.rs",
        run: crate::api_count::run,
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
        about: "install the thumbv7 targets if needed; build logfmt-core for them, and the \
                nRF52840 example (crates/logfmt-example-nrf, release)",
        run: |_| targets(),
    },
    Task {
        name: "msrv",
        aliases: &[],
        flags: &[],
        about: "cargo check of logfmt-core, -std and -cli on the MSRV toolchain (installed if \
                missing), and of logfmt-core for the thumbv7 targets",
        run: |_| msrv(),
    },
    Task {
        name: "no-c",
        aliases: &[],
        flags: &[],
        about: "cargo install --path crates/logfmt-cli with no C compiler (a PATH of cargo, \
                rustc and a cc that only links; CC/CXX refuse), then the installed logfmt \
                writes and reads compressed logs; and the same install with --features zstd-c \
                must fail",
        run: |_| crate::no_c::run(),
    },
    Task {
        name: "package",
        aliases: &[],
        flags: &[],
        about: "cargo package of logfmt-core, -std and -cli, then cargo test in each unpacked \
                package against the others",
        run: |_| package::run(),
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
        about: "flash/RAM/stack of a reference firmware, and flash/RAM of the nRF52840 example \
                (with --check: fail over budget)",
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
        flags: &["--seconds N", "--seed N", "--miri", "TARGET"],
        about: "each cargo-fuzz target for N s (default 60; or --runs N executions), from a new seed or --seed's (installs nightly, cargo-fuzz); --miri: also Miri",
        run: fuzz::run,
    },
    Task {
        name: "interop",
        aliases: &[],
        flags: &[],
        about: "install LevelDB and RocksDB (libleveldb-dev, librocksdb-dev, rocksdb-tools) and \
                RocksDB 9 (rocksdict, with pip into target/rocksdb9-venv) if missing; run the \
                tests against them",
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
        name: "web",
        aliases: &[],
        flags: &["--test", "--bench", "--size MIB"],
        about: "the inspector page (logfmt-web in WebAssembly) in target/web/index.html; --test: \
                drive it in headless Chromium against `logfmt verify`/`cat`; --bench: logs of \
                256 MiB and 1 GiB (--size: others) read in the page against `logfmt verify \
                --threads 1`",
        run: crate::web::run,
    },
    Task {
        name: "ci",
        aliases: &[],
        flags: &["--skip STEP,..."],
        about: "everything CI runs: fmt --check, deps, targets, msrv, lint, test, interop, qemu, \
                size, doc, web, package, datafusion, fuzz, miri; --skip leaves steps out (a \
                PARTIAL run, and said so)",
        run: ci,
    },
];

/// A CI step.
pub(crate) struct Step {
    /// Its title; the first word is its name for `--skip`.
    pub(crate) title: &'static str,
    pub(crate) run: fn() -> Result,
    /// What it installs when it is missing, if anything (for the failure message).
    pub(crate) installs: &'static str,
}

impl Step {
    /// Its name for `--skip`: the first word of the title.
    fn name(&self) -> &'static str {
        self.title.split(' ').next().unwrap_or(self.title)
    }
}

/// What `cargo xtask ci` runs, in order; it stops at the first failure.
pub(crate) const CI_STEPS: &[Step] = &[
    step("fmt --check", || fmt(true), ""),
    step("deps", deps, "cargo-shear (cargo install)"),
    step("targets", targets, "the thumbv7 targets (rustup)"),
    step(
        "msrv",
        msrv,
        "the MSRV toolchain, its thumbv7 targets or its rust-src (rustup)",
    ),
    step("lint", lint, "the thumbv7em target (rustup)"),
    step("test", test, ""),
    step(
        "interop",
        interop::run,
        "libleveldb-dev, librocksdb-dev, rocksdb-tools, g++ (apt-get), rocksdict (pip, in a \
         virtual environment under target/)",
    ),
    step("qemu", firmware::qemu::run, "qemu-system-arm (apt-get)"),
    step("size --check", || firmware::size::run(true), ""),
    step("doc", doc, ""),
    step(
        "web",
        crate::web::ci,
        "the wasm32 target (rustup), wasm-bindgen-cli (cargo install), chromium (apt-get)",
    ),
    step("package", package::run, ""),
    step("no-c", crate::no_c::run, ""),
    step("datafusion", || crate::datafusion::run(&[]), ""),
    step(
        "fuzz",
        fuzz::ci,
        "g++ (apt-get), the pinned nightly (rustup), cargo-fuzz (cargo install)",
    ),
    step(
        "miri",
        fuzz::miri_ci,
        "the pinned nightly with Miri (rustup)",
    ),
];

const fn step(title: &'static str, run: fn() -> Result, installs: &'static str) -> Step {
    Step {
        title,
        run,
        installs,
    }
}

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
/// The defmt flight recorder, also built for the thumb targets (no_std, no alloc).
const DEFMT: &str = "logfmt-defmt";
/// The std layer, whose `parallel` and `mmap` features are on by default.
const STD: &str = "logfmt-std";

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
    cmd.run().and_then(|()| example::fmt(check)).map_err(|e| {
        if check {
            Error::Failed(format!("{e}\n  (run `cargo xtask fmt` to fix formatting)"))
        } else {
            e
        }
    })
}

// ---------------------------------------------------------------- lint

fn lint() -> Result {
    // On the host, clippy checks (it does not build through `Cmd::linted` as the example and
    // the DataFusion crate do): `cargo doc` needs the same check artifacts of every dependency,
    // so this check is shared with the `doc` step, where a linted build would not be.
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
    Cmd::cargo()
        .args([
            "clippy",
            "-p",
            STD,
            "--all-targets",
            "--no-default-features",
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
    Cmd::cargo()
        .args(["clippy", "-p", DEFMT, "--target", THUMBV7EM, "--lib"])
        .args(["--", "-D", "warnings"])
        .run()?;
    example::lint()
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
    no_c_without_features()
}

/// `logfmt-std` with `default-features = false` compiles no C: no `*-sys` crate and no `cc` in
/// its normal and build dependencies (zstd, the one C library, is behind its `zstd` feature).
fn no_c_without_features() -> Result {
    let tree = Cmd::cargo()
        .args([
            "tree",
            "-p",
            STD,
            "--no-default-features",
            "-e",
            "normal,build",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .read()?;
    let c: Vec<&str> = tree
        .lines()
        .filter(|line| {
            let name = line.split_whitespace().next().unwrap_or_default();
            name == "cc" || (name.ends_with("-sys") && !PURE_RUST_SYS.contains(&name))
        })
        .collect();
    if c.is_empty() {
        return Ok(());
    }
    Err(Error::Failed(format!(
        "{STD} with default-features = false depends on crates that compile C:\n  {}\n  \
         put them behind a feature",
        c.join("\n  ")
    )))
}

/// Crates named `*-sys` that compile no C: `linux-raw-sys` (rustix's Linux system-call
/// bindings, generated Rust, no build script).
const PURE_RUST_SYS: &[&str] = &["linux-raw-sys"];

/// What `cargo xtask deps` checks: the root workspace and the crates it excludes (each a
/// workspace of its own).
const DEPS_DIRS: &[&str] = &[
    ".",
    "tests/firmware",
    "tests/fuzz",
    "crates/logfmt-datafusion",
    example::EXAMPLE,
];

// ---------------------------------------------------------------- test

fn test() -> Result {
    // Never `--all-features`: `defmt` needs a defmt global logger and
    // linker script, so it does not link in host test binaries. The workspace's members
    // enable the core's `embedded-storage` and `mock-flash`, so this runs the flash log's
    // power-cut tests too (once: they are the core's slowest).
    Cmd::cargo().args(["test", "--workspace"]).run()?;
    Cmd::cargo()
        .args(["test", "-p", CORE, "--no-default-features"])
        .run()?;
    // Without rayon and memmap2: every writer and reader but `par_scan` and `MappedLog`.
    Cmd::cargo()
        .args(["test", "-p", STD, "--no-default-features"])
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
    // The defmt flight recorder: no_std, for both thumb targets (its async drain is a default
    // feature).
    for target in THUMB_TARGETS {
        Cmd::cargo()
            .args(["build", "-p", DEFMT, "--target", target])
            .run()?;
    }
    // The firmware example on a real chip's HAL (its own workspace and lockfile).
    example::build().map(drop)
}

// ---------------------------------------------------------------- msrv

/// `cargo check` on the MSRV toolchain (the workspace's `rust-version`, installed if
/// missing): the published crates on the host (libraries and the `logfmt` binary), and
/// logfmt-core for each thumb target, without features and with every dependency-bearing
/// one. A dependency that needs a newer Rust fails here: then raise `rust-version` to what
/// holds. Where rustup has no prebuilt `core` of the MSRV for the thumb targets (a mirror
/// may lack them), `core` is built from source for the check (rust-src, `-Zbuild-std=core`
/// with `RUSTC_BOOTSTRAP=1`), and the step says so.
fn msrv() -> Result {
    ensure_toolchain(MSRV, &[], &[], "the MSRV toolchain")?;
    let check = || Cmd::new("rustup").args(["run", MSRV, "cargo", "check"]);
    let mut host = check();
    for krate in package::PUBLISHED {
        host = host.args(["-p", krate]);
    }
    host.run()?;
    let build_std = match ensure_toolchain(MSRV, &[], THUMB_TARGETS, "the thumb targets") {
        Ok(()) => false,
        Err(e) => {
            println!(
                "msrv: {e}\nmsrv: so the thumb targets are checked with `core` built from \
                 source (rust-src of {MSRV}, -Zbuild-std=core)"
            );
            crate::toolchain::ensure_components(MSRV, &["rust-src"])?;
            true
        }
    };
    for target in THUMB_TARGETS {
        for features in ["", "defmt,embedded-storage-async,crc-table-16k"] {
            let mut cmd = check().args(["-p", CORE, "--target", target]);
            if !features.is_empty() {
                cmd = cmd.args(["--features", features]);
            }
            if build_std {
                cmd = cmd.args(["-Zbuild-std=core"]).env("RUSTC_BOOTSTRAP", "1");
            }
            cmd.run()?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- ci

/// `cargo xtask ci [--skip STEP,...]`: every step of [`CI_STEPS`] but the skipped ones; a run
/// with skipped steps passes if the others do, and says loudly that it was partial.
fn ci(args: &[String]) -> Result {
    let skip = skipped(args)?;
    let start = Instant::now();
    let mut done: Vec<(&str, Duration)> = Vec::new();
    let mut failure = None;
    if !skip.is_empty() {
        println!("ci: a PARTIAL run: skipping {}", skip.join(", "));
    }
    let steps: Vec<&Step> = CI_STEPS
        .iter()
        .filter(|step| !skip.contains(&step.name()))
        .collect();
    for step in &steps {
        let step_start = Instant::now();
        match run_step(step.title, step.run) {
            Ok(took) => done.push((step.title, took)),
            Err(e) => {
                failure = Some((step, step_start.elapsed(), e));
                break;
            }
        }
    }
    let total = fmt_duration(start.elapsed());

    banner("ci summary");
    let width = CI_STEPS.iter().map(|s| s.title.len()).max().unwrap_or(0);
    for (name, took) in &done {
        println!("  ok       {name:width$}  {:>9}", fmt_duration(*took));
    }
    let Some((step, took, err)) = failure else {
        for name in &skip {
            println!("  SKIPPED  {name:width$}  (--skip)");
        }
        if skip.is_empty() {
            println!("ci: {} steps passed in {total}", done.len());
        } else {
            let line = "!".repeat(78);
            println!("{line}");
            println!(
                "!! ci: PARTIAL RUN: {} steps passed in {total}; NOT RUN (--skip): {}",
                done.len(),
                skip.join(", ")
            );
            println!("!! This is not a CI pass: a full `cargo xtask ci` must still pass.");
            println!("{line}");
        }
        return Ok(());
    };
    println!(
        "  FAILED   {:width$}  {:>9}",
        step.title,
        fmt_duration(took)
    );
    for later in &steps[done.len() + 1..] {
        println!("  not run  {}", later.title);
    }
    for name in &skip {
        println!("  SKIPPED  {name:width$}  (--skip)");
    }
    println!("ci: FAILED at step `{}` after {total}", step.title);
    if !step.installs.is_empty() {
        println!(
            "ci: this step installs what it lacks ({}); where that cannot be done, \
             `cargo xtask ci --skip {}` runs the other steps (a partial run)",
            step.installs,
            step.name()
        );
    }
    Err(Error::Failed(format!(
        "ci step `{}` failed: {err}",
        step.title
    )))
}

/// The step names of `--skip a,b` / `--skip=a,b` (repeatable), checked against [`CI_STEPS`].
fn skipped(args: &[String]) -> Result<Vec<&'static str>> {
    let mut skip = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let list = if let Some(list) = arg.strip_prefix("--skip=") {
            list
        } else if arg == "--skip" {
            args.next()
                .ok_or_else(|| Error::Usage("`--skip` needs a list of steps".to_owned()))?
        } else {
            return Err(Error::Usage(format!(
                "unexpected argument `{arg}` for `ci`"
            )));
        };
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let step = CI_STEPS.iter().find(|s| s.name() == name).ok_or_else(|| {
                let names: Vec<&str> = CI_STEPS.iter().map(Step::name).collect();
                Error::Usage(format!("no CI step `{name}` (steps: {})", names.join(", ")))
            })?;
            if !skip.contains(&step.name()) {
                skip.push(step.name());
            }
        }
    }
    Ok(skip)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|&a| a.to_owned()).collect()
    }

    #[test]
    fn skip_lists() {
        let skip = skipped(&args(&["--skip", "interop,qemu", "--skip=fuzz,miri,qemu"]));
        assert_eq!(skip.ok(), Some(vec!["interop", "qemu", "fuzz", "miri"]));
        assert_eq!(skipped(&args(&["--skip=size"])).ok(), Some(vec!["size"]));
        assert!(matches!(
            skipped(&args(&["--skip", "nope"])),
            Err(Error::Usage(_))
        ));
        assert!(matches!(skipped(&args(&["--skip"])), Err(Error::Usage(_))));
        assert!(matches!(skipped(&args(&["--fast"])), Err(Error::Usage(_))));
    }

    #[test]
    fn step_names_are_unique() {
        for (i, step) in CI_STEPS.iter().enumerate() {
            assert!(CI_STEPS[..i].iter().all(|s| s.name() != step.name()));
        }
    }
}
