//! `cargo xtask fuzz [--seconds N] [--miri] [TARGET]`: the cargo-fuzz targets of
//! `tests/fuzz/` (libFuzzer, nightly), each for N seconds; `--miri` also runs the core's unit
//! tests under Miri.
//!
//! Installs what it needs, loudly failing if it cannot: a C++ compiler for libFuzzer (Debian's
//! `g++`), the pinned nightly toolchain with Miri and rust-src ([`NIGHTLY`]: `rustup toolchain
//! install nightly-YYYY-MM-DD --profile minimal --component miri --component rust-src`) and
//! `cargo-fuzz` (`cargo install cargo-fuzz --locked`).
//!
//! Each target starts from the committed seeds (`tests/fuzz/corpus/<target>/`) and a working
//! corpus kept between runs in `target/fuzz/corpus/<target>/` (new inputs go there, never into
//! the repository). A crash leaves its input in `tests/fuzz/artifacts/<target>/`: minimise it
//! (`cargo +nightly fuzz tmin --fuzz-dir tests/fuzz ...`) and commit it to the target's corpus
//! as a regression input once fixed (`tests/tests/fuzz_corpus.rs` replays the corpus in
//! `cargo test`). Every run is appended to `target/fuzz/ledger.tsv` (date, target, seconds,
//! executions, result), from which the README's "ran clean for" figures are summed.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::cmd::{Cmd, Error, Result, fmt_duration, project_root};
use crate::toolchain::{CARGO_FUZZ, NIGHTLY, ensure_cargo_tool, ensure_nightly_components};

/// The fuzz targets, with the largest input each is given (`-max_len`).
pub(crate) const TARGETS: &[(&str, usize)] = &[
    ("reader", 200_000),
    ("block", 32_800),
    ("writer", 4_096),
    ("flash_reader", 140_000),
    ("flash_writer", 4_096),
    ("flash_ring", 2_048),
    ("pack", 8_192),
    ("content", 4_096),
    ("decompress", 16_384),
];

/// Seconds per target in `cargo xtask ci`.
pub(crate) const CI_SECONDS: u64 = 20;
/// Seconds per target of `cargo xtask fuzz` without `--seconds`.
const DEFAULT_SECONDS: u64 = 60;

/// The cargo-fuzz project, relative to the workspace root.
const FUZZ_DIR: &str = "tests/fuzz";

/// `cargo xtask fuzz [--seconds N] [--miri] [TARGET]`.
pub(crate) fn run(args: &[String]) -> Result {
    let mut seconds = DEFAULT_SECONDS;
    let mut miri = false;
    let mut only: Option<&str> = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let value = if let Some(v) = arg.strip_prefix("--seconds=") {
            Some(v.to_owned())
        } else if arg == "--seconds" {
            Some(
                args.next()
                    .cloned()
                    .ok_or_else(|| Error::Usage("`--seconds` needs a value".to_owned()))?,
            )
        } else {
            None
        };
        if let Some(v) = value {
            seconds =
                v.parse().ok().filter(|&s| s > 0).ok_or_else(|| {
                    Error::Usage(format!("`--seconds {v}`: not a positive number"))
                })?;
        } else if arg == "--miri" {
            miri = true;
        } else if let Some((name, _)) = TARGETS.iter().find(|(name, _)| name == arg) {
            if only.replace(name).is_some() {
                return Err(Error::Usage("one TARGET at most".to_owned()));
            }
        } else {
            let names: Vec<&str> = TARGETS.iter().map(|(name, _)| *name).collect();
            return Err(Error::Usage(format!(
                "unexpected argument `{arg}` for `fuzz` (targets: {})",
                names.join(", ")
            )));
        }
    }
    let targets: Vec<&str> = TARGETS
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| only.is_none_or(|o| o == *name))
        .collect();
    fuzz(&targets, seconds)?;
    if miri {
        self::miri()?;
    }
    Ok(())
}

/// The CI step: every target for [`CI_SECONDS`].
pub(crate) fn ci() -> Result {
    let targets: Vec<&str> = TARGETS.iter().map(|(name, _)| *name).collect();
    fuzz(&targets, CI_SECONDS)
}

/// Runs each of `targets` for `seconds`, then prints a summary; fails at the first crash.
fn fuzz(targets: &[&str], seconds: u64) -> Result {
    // libfuzzer-sys compiles libFuzzer, which is C++.
    crate::apt::ensure_commands(&[("c++", "g++")])?;
    ensure_cargo_tool(&CARGO_FUZZ)?;
    let mut done: Vec<(&str, Duration, Option<u64>)> = Vec::new();
    for &target in targets {
        let start = Instant::now();
        let result = run_target(target, seconds);
        let took = start.elapsed();
        let (runs, outcome) = match &result {
            Ok(runs) => (*runs, "clean"),
            Err(_) => (None, "FAILED"),
        };
        ledger(target, took, runs, outcome);
        result?;
        done.push((target, took, runs));
    }
    println!("\nfuzz summary ({seconds} s per target, libFuzzer, debug assertions on):");
    for (target, took, runs) in &done {
        let runs = runs.map_or_else(|| "?".to_owned(), |r| r.to_string());
        println!(
            "  {target:14} clean  {:>9}  {runs:>10} runs",
            fmt_duration(*took)
        );
    }
    println!("  (every run is added to target/fuzz/ledger.tsv)");
    Ok(())
}

/// Runs one target; returns the number of executions libFuzzer reported.
fn run_target(target: &str, seconds: u64) -> Result<Option<u64>> {
    let max_len = TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .map_or(4096, |(_, len)| *len);
    let root = project_root();
    let work = root.join("target/fuzz/corpus").join(target);
    std::fs::create_dir_all(&work)
        .map_err(|e| Error::Failed(format!("cannot create {}: {e}", work.display())))?;
    let seeds = format!("{FUZZ_DIR}/corpus/{target}");
    let work = work.to_string_lossy().into_owned();
    // `--sanitizer none`: the code under test is safe Rust (memory errors cannot happen
    // there), so AddressSanitizer would only halve the executions; debug assertions stay on
    // to catch arithmetic overflow.
    let args: Vec<String> = [
        "run",
        NIGHTLY,
        "cargo",
        "fuzz",
        "run",
        "--fuzz-dir",
        FUZZ_DIR,
        "--sanitizer",
        "none",
        "--debug-assertions",
        target,
        &work,
        &seeds,
        "--",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .chain([
        format!("-max_total_time={seconds}"),
        format!("-max_len={max_len}"),
        "-timeout=10".to_owned(),
        "-rss_limit_mb=2048".to_owned(),
        "-print_final_stats=1".to_owned(),
    ])
    .collect();
    println!("$ rustup {}", args.join(" "));
    let _ = std::io::stdout().flush();
    let mut child = Command::new("rustup")
        .args(&args)
        .current_dir(&root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Error::Failed(format!("could not start rustup: {e}")))?;
    // libFuzzer reports on stderr, a line per corpus change: keep the log short (the build,
    // the start, the end, anything that looks like a failure), and all of it on failure.
    let stdout = child.stdout.take();
    let echo_stdout = std::thread::spawn(move || {
        if let Some(out) = stdout {
            for line in BufReader::new(out)
                .lines()
                .map_while(std::result::Result::ok)
            {
                println!("{line}");
            }
        }
    });
    let mut tail: Vec<String> = Vec::new();
    // What a failure is known by, kept for the error itself: a CI log shown by its end alone
    // still says which check failed and on what input.
    let mut failure: Vec<String> = Vec::new();
    let mut after_panic = false;
    let mut runs = None;
    if let Some(err) = child.stderr.take() {
        for line in BufReader::new(err)
            .lines()
            .map_while(std::result::Result::ok)
        {
            if let Some(n) = line
                .strip_prefix("Done ")
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|n| n.parse().ok())
            {
                runs = Some(n);
            }
            // Progress lines (`#123 NEW ...`) and the recommended dictionary (`"..." # Uses`).
            let noise =
                (line.starts_with('#') && !line.contains("INITED") && !line.contains("DONE"))
                    || line.starts_with('"');
            if !noise {
                eprintln!("{line}");
            }
            if after_panic {
                failure.push(line.clone());
                after_panic = false;
            }
            if line.contains("panicked at") {
                failure.push(line.clone());
                after_panic = true;
            } else if line.starts_with("SUMMARY:") || line.starts_with("0x") {
                // libFuzzer's summary, and a short input printed as bytes.
                failure.push(line.chars().take(800).collect());
            }
            tail.push(line);
            if tail.len() > 200 {
                tail.remove(0);
            }
        }
    }
    let _ = echo_stdout.join();
    let status = child
        .wait()
        .map_err(|e| Error::Failed(format!("waiting for cargo fuzz: {e}")))?;
    if !status.success() {
        eprintln!("---- the last lines of the fuzzer's output ----");
        for line in &tail {
            eprintln!("{line}");
        }
        let mut what = String::new();
        for line in &failure {
            what.push_str("\n    ");
            what.push_str(line);
        }
        return Err(Error::Failed(format!(
            "fuzz target `{target}` failed ({status}); the input is in \
             {FUZZ_DIR}/artifacts/{target}/{what}"
        )));
    }
    Ok(runs)
}

/// Appends a line to `target/fuzz/ledger.tsv`: unix time, target, seconds, runs, outcome.
fn ledger(target: &str, took: Duration, runs: Option<u64>, outcome: &str) {
    let path = project_root().join("target/fuzz/ledger.tsv");
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let runs = runs.map_or_else(String::new, |r| r.to_string());
    let line = format!("{now}\t{target}\t{}\t{runs}\t{outcome}\n", took.as_secs());
    let written = std::fs::create_dir_all(path.parent().unwrap_or(&path)).and_then(|()| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(line.as_bytes()))
    });
    if let Err(e) = written {
        eprintln!(
            "xtask: warning: cannot record the run in {}: {e}",
            path.display()
        );
    }
}

/// Miri runs the core's unit tests in these configurations: `(features, RUSTFLAGS, skipped
/// tests)`. The first is the CI step: `std` with SSE 4.2 and PCLMULQDQ enabled at compile time
/// (Miri cannot detect CPU features at run time), so that the core's `unsafe` block (the
/// hardware CRC of short inputs) runs under Miri, with every other unit test. `--miri` runs all three: also the software CRC (no features) and the flash
/// log (`embedded-storage`, without the power-cut sweeps and the 60-record reopen test, which
/// take hours there).
/// Everywhere `slice_writer_matches_writer` and `hot_path_matches_the_general_path` are skipped
/// (64 proptest cases of records up to 70 KB each) and the other proptests run 4 cases
/// (`PROPTEST_CASES`).
const MIRI_CONFIGS: &[(&str, &str, &[&str])] = &[
    (
        "std",
        "-Ctarget-feature=+sse4.2,+pclmulqdq",
        &[
            "slice_writer_matches_writer",
            "hot_path_matches_the_general_path",
        ],
    ),
    (
        "",
        "",
        &[
            "slice_writer_matches_writer",
            "hot_path_matches_the_general_path",
        ],
    ),
    (
        "embedded-storage",
        "",
        &[
            "slice_writer_matches_writer",
            "hot_path_matches_the_general_path",
            "power_cut",
            "open_empty_write_read_reopen",
        ],
    ),
];

/// Tests the CI step leaves to `cargo xtask fuzz --miri`: the slowest under Miri (half a minute
/// to a minute each), safe code only — writing and reading many records, flash images — which
/// the plain test step runs as they are. The unsafe code Miri can run — the SSE 4.2 CRC-32C
/// path and its dispatch; the vector folds are not built under Miri — is checked by the tests
/// that stay.
const MIRI_CI_SKIPS: &[&str] = &[
    "tests::erased_flash_is_not_corruption",
    "tests::recyclable_round_trip_and_block_switch",
    "tests::flash_torn_write_then_resume_marker_is_not_damage",
    "tests::flash_padding_to_a_word_is_skipped",
    "tests::how_logs_end",
    "tests::tailing_a_growing_log",
    "pack::tests::records_round_trip",
];

/// The CI step: the core's unit tests under Miri, in the first configuration, but for
/// [`MIRI_CI_SKIPS`] (about 3 minutes, where all of them take 15 on two cores).
pub(crate) fn miri_ci() -> Result {
    let (features, rustflags, skips) = MIRI_CONFIGS[0];
    let skips: Vec<&str> = skips.iter().chain(MIRI_CI_SKIPS).copied().collect();
    miri_run(&[(features, rustflags, &skips)])
}

/// `--miri`: every configuration.
fn miri() -> Result {
    miri_run(MIRI_CONFIGS)
}

fn miri_run(configs: &[(&str, &str, &[&str])]) -> Result {
    ensure_nightly_components(&["miri", "rust-src"])?;
    for &(features, rustflags, skips) in configs {
        let mut args = vec![
            "run",
            NIGHTLY,
            "cargo",
            "miri",
            "test",
            "-p",
            "logfmt-core",
            "--lib",
        ];
        if !features.is_empty() {
            args.extend(["--features", features]);
        }
        args.push("--");
        for skip in skips {
            args.extend(["--skip", skip]);
        }
        let start = Instant::now();
        let mut cmd = Cmd::new("rustup")
            .args(args)
            // proptest reads the working directory for its regression files.
            .env("MIRIFLAGS", "-Zmiri-disable-isolation")
            .env("PROPTEST_CASES", "4");
        if !rustflags.is_empty() {
            cmd = cmd.env("RUSTFLAGS", rustflags);
        }
        cmd.run()?;
        let name = if features.is_empty() {
            "no features"
        } else {
            features
        };
        println!("miri ({name}): ok in {}", fmt_duration(start.elapsed()));
    }
    Ok(())
}
