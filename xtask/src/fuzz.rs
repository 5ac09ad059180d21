//! `cargo xtask fuzz [--seconds N | --runs N] [--seed N] [--miri] [TARGET]`: the cargo-fuzz
//! targets of `tests/fuzz/` (libFuzzer, nightly), each for N seconds (or N executions), with a
//! new random seed unless `--seed` names one; `--miri` also runs the core's unit tests under
//! Miri. `cargo xtask ci`'s `fuzz` step ([`ci`]) is the deterministic run.
//!
//! Installs what it needs, loudly failing if it cannot: a C++ compiler for libFuzzer (Debian's
//! `g++`), the pinned nightly toolchain with Miri and rust-src ([`NIGHTLY`]: `rustup toolchain
//! install nightly-YYYY-MM-DD --profile minimal --component miri --component rust-src`) and
//! `cargo-fuzz` (`cargo install cargo-fuzz --locked`).
//!
//! Exploration (`cargo xtask fuzz`): each target starts from the committed corpus
//! (`tests/fuzz/corpus/<target>/`) and a working corpus kept between runs in
//! `target/fuzz/corpus/<target>/` (new inputs go there, never into the repository). A crash
//! leaves its input in `tests/fuzz/artifacts/<target>/`: minimise it (`cargo +nightly fuzz tmin
//! --fuzz-dir tests/fuzz ...`) and commit it to the target's corpus, named for what it found
//! (`regression-...`), in the commit that fixes what it found (`tests/tests/fuzz_corpus.rs`
//! replays every corpus in `cargo test`, and CI's `fuzz` step replays it too). Every run is
//! appended to `target/fuzz/ledger.tsv` (date, target, seconds, executions, result, seed), from
//! which the README's "ran clean for" figures are summed; `xtask/README.md` says how long the
//! targets run before a release.
//!
//! CI ([`ci`]): the same tree runs the same inputs. Each target replays its committed corpus,
//! then runs a fixed number of executions ([`Target::ci_runs`], about 20 s of one core each)
//! from a fixed seed ([`CI_SEED`]), into a fresh corpus directory (`target/fuzz/ci/<target>/`,
//! emptied first), with libFuzzer's corpus reloading off.
//! A count of executions, not a time: under a time limit the inputs run would depend on the
//! machine's speed and load, and a finding could come and go between two runs of one tree. The
//! step prints each target's seed, executions, the committed inputs replayed and the inputs the
//! run added to its corpus, with a hash of each, and one fingerprint of them all: two runs that
//! print the same fingerprint ran the same inputs. libFuzzer is deterministic for one seed, one
//! binary and one starting corpus read in one order, given the same addresses: it records the
//! values the code compares (pointers among them) and the stack's depth, so the step runs it
//! under `setarch -R` (no address space layout randomisation; measured: without it two runs of
//! `writer` from one seed part after about 500 executions, with it they agree). What can still
//! change the inputs: a new toolchain, a CPU with other features (the CRC-32C code path is
//! chosen at run time, and its coverage is what libFuzzer follows), another environment (its
//! size moves the stack) or a file system that lists the corpus in another order.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::cmd::{Cmd, Error, Result, fmt_duration, project_root};
use crate::toolchain::{CARGO_FUZZ, NIGHTLY, ensure_cargo_tool, ensure_nightly_components};

/// A fuzz target.
pub(crate) struct Target {
    /// Its name: the binary in `tests/fuzz/fuzz_targets/` and its corpus directory.
    pub(crate) name: &'static str,
    /// The largest input it is given (`-max_len`).
    pub(crate) max_len: usize,
    /// Executions in `cargo xtask ci` (`-runs`): about 20 s of one core each, the committed
    /// corpus included (set from the executions per second of CPU time of runs from
    /// [`CI_SEED`] on the project's machine, 2 cores, on 2026-11-28).
    pub(crate) ci_runs: u64,
}

/// The fuzz targets.
pub(crate) const TARGETS: &[Target] = &[
    target("reader", 200_000, 20_000),
    target("block", 32_800, 50_000),
    target("writer", 4_096, 16_000),
    target("flash_reader", 140_000, 2_000),
    target("flash_writer", 4_096, 2_000),
    target("flash_ring", 2_048, 1_000),
    target("pack", 8_192, 500_000),
    target("content", 4_096, 1_500_000),
    target("decompress", 16_384, 700_000),
];

const fn target(name: &'static str, max_len: usize, ci_runs: u64) -> Target {
    Target {
        name,
        max_len,
        ci_runs,
    }
}

/// libFuzzer's seed in `cargo xtask ci`.
pub(crate) const CI_SEED: u32 = 1;
/// Seconds per target of `cargo xtask fuzz` without `--seconds` or `--runs`.
const DEFAULT_SECONDS: u64 = 60;

/// The cargo-fuzz project, relative to the workspace root.
const FUZZ_DIR: &str = "tests/fuzz";

/// How long each target runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Budget {
    /// For this many seconds (`-max_total_time`).
    Seconds(u64),
    /// For this many executions, the committed corpus's included (`-runs`).
    Runs(u64),
}

/// What `cargo xtask fuzz` was asked.
#[derive(Debug, PartialEq, Eq)]
struct Args<'a> {
    budget: Budget,
    seed: Option<u32>,
    miri: bool,
    only: Option<&'a str>,
}

/// Parses `cargo xtask fuzz`'s arguments.
fn parse(args: &[String]) -> Result<Args<'static>> {
    let mut seconds: Option<u64> = None;
    let mut runs: Option<u64> = None;
    let mut seed: Option<u32> = None;
    let mut miri = false;
    let mut only: Option<&'static str> = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| -> Result<Option<String>> {
            if let Some(v) = arg.strip_prefix(flag).and_then(|v| v.strip_prefix('=')) {
                Ok(Some(v.to_owned()))
            } else if arg == flag {
                args.next()
                    .cloned()
                    .map(Some)
                    .ok_or_else(|| Error::Usage(format!("`{flag}` needs a value")))
            } else {
                Ok(None)
            }
        };
        if let Some(v) = value("--seconds")? {
            seconds = Some(positive("--seconds", &v)?);
        } else if let Some(v) = value("--runs")? {
            runs = Some(positive("--runs", &v)?);
        } else if let Some(v) = value("--seed")? {
            let n = positive("--seed", &v)?;
            seed = Some(
                u32::try_from(n)
                    .map_err(|_| Error::Usage(format!("`--seed {v}`: at most {}", u32::MAX)))?,
            );
        } else if arg == "--miri" {
            miri = true;
        } else if let Some(t) = TARGETS.iter().find(|t| t.name == arg) {
            if only.replace(t.name).is_some() {
                return Err(Error::Usage("one TARGET at most".to_owned()));
            }
        } else {
            let names: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
            return Err(Error::Usage(format!(
                "unexpected argument `{arg}` for `fuzz` (targets: {})",
                names.join(", ")
            )));
        }
    }
    let budget = match (seconds, runs) {
        (Some(_), Some(_)) => {
            return Err(Error::Usage("`--seconds` or `--runs`, not both".to_owned()));
        }
        (_, Some(runs)) => Budget::Runs(runs),
        (seconds, None) => Budget::Seconds(seconds.unwrap_or(DEFAULT_SECONDS)),
    };
    Ok(Args {
        budget,
        seed,
        miri,
        only,
    })
}

/// `value` of `flag` as a positive number.
fn positive(flag: &str, value: &str) -> Result<u64> {
    value
        .parse()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| Error::Usage(format!("`{flag} {value}`: not a positive number")))
}

/// `cargo xtask fuzz [--seconds N | --runs N] [--seed N] [--miri] [TARGET]`: exploration, with
/// a new seed unless `--seed` is given, and the working corpus kept between runs.
pub(crate) fn run(args: &[String]) -> Result {
    let args = parse(args)?;
    let targets: Vec<&Target> = TARGETS
        .iter()
        .filter(|t| args.only.is_none_or(|o| o == t.name))
        .collect();
    prepare()?;
    let mut done = Vec::new();
    for target in targets {
        let corpus = PathBuf::from("target/fuzz/corpus").join(target.name);
        let run = Run {
            target,
            corpus: &corpus,
            budget: args.budget,
            seed: args.seed,
            reload: true,
            fixed_addresses: false,
        };
        done.push(run.logged()?);
    }
    let what = match args.budget {
        Budget::Seconds(s) => format!("{s} s per target"),
        Budget::Runs(n) => format!("{n} executions per target"),
    };
    println!("\nfuzz summary ({what}, libFuzzer, debug assertions on):");
    for d in &done {
        println!(
            "  {:14} clean  {:>9}  {:>10} runs  seed {}",
            d.target,
            fmt_duration(d.took),
            d.runs.map_or_else(|| "?".to_owned(), |r| r.to_string()),
            d.seed.map_or_else(|| "?".to_owned(), |s| s.to_string()),
        );
    }
    println!(
        "  (every run is added to target/fuzz/ledger.tsv; a seed repeats a run with `--seed`)"
    );
    if args.miri {
        self::miri()?;
    }
    Ok(())
}

/// The CI step: every target replays its committed corpus, then runs [`Target::ci_runs`]
/// executions from [`CI_SEED`] into a fresh corpus; prints what shows that two runs of one
/// tree ran the same inputs.
pub(crate) fn ci() -> Result {
    prepare()?;
    let fixed_addresses = Command::new("setarch")
        .args(["-R", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !fixed_addresses {
        eprintln!(
            "xtask: warning: `setarch -R` (util-linux) cannot run: addresses differ from run to \
             run, and so may the inputs run"
        );
    }
    let root = project_root();
    let mut done = Vec::new();
    for target in TARGETS {
        let corpus = PathBuf::from("target/fuzz/ci").join(target.name);
        fresh_dir(&root.join(&corpus))?;
        let run = Run {
            target,
            corpus: &corpus,
            budget: Budget::Runs(target.ci_runs),
            seed: Some(CI_SEED),
            reload: false,
            fixed_addresses,
        };
        let result = run.logged()?;
        let committed = Fingerprint::of_dir(&root.join(FUZZ_DIR).join("corpus").join(target.name))?;
        let grown = Fingerprint::of_dir(&root.join(&corpus))?;
        done.push((result, committed, grown));
    }
    println!(
        "\nfuzz summary (seed {CI_SEED}, a fixed count of executions per target, libFuzzer, \
         debug assertions on):"
    );
    println!(
        "  {:14} {:>6} {:>9}  {:>10}  {:>24}  {:>24}",
        "target", "", "time", "runs", "committed inputs, hash", "inputs added, hash"
    );
    let mut all = Fnv::new();
    for (d, committed, grown) in &done {
        let runs = d.runs.map_or_else(|| "?".to_owned(), |r| r.to_string());
        println!(
            "  {:14} {:>6} {:>9}  {runs:>10}  {:>7} {:016x}  {:>7} {:016x}",
            d.target,
            "clean",
            fmt_duration(d.took),
            committed.files,
            committed.hash,
            grown.files,
            grown.hash,
        );
        all.write(d.target.as_bytes());
        all.write(runs.as_bytes());
        all.write(&committed.hash.to_le_bytes());
        all.write(&grown.hash.to_le_bytes());
    }
    println!(
        "  fuzz fingerprint: {:016x} (seed, executions and corpora of every target: equal \
         fingerprints, the same inputs run)",
        all.finish()
    );
    println!("  (every run is added to target/fuzz/ledger.tsv)");
    Ok(())
}

/// Installs what the fuzz targets need.
fn prepare() -> Result {
    // libfuzzer-sys compiles libFuzzer, which is C++.
    crate::apt::ensure_commands(&[("c++", "g++")])?;
    ensure_cargo_tool(&CARGO_FUZZ)
}

/// Removes `dir` and whatever it holds, then creates it empty.
fn fresh_dir(dir: &Path) -> Result {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(Error::Failed(format!(
                "cannot empty {}: {e}",
                dir.display()
            )));
        }
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::Failed(format!("cannot create {}: {e}", dir.display())))
}

/// The files of a directory: how many, and a hash of their names and contents (in name order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fingerprint {
    files: usize,
    hash: u64,
}

impl Fingerprint {
    fn of_dir(dir: &Path) -> Result<Self> {
        let failed = |e: std::io::Error| Error::Failed(format!("{}: {e}", dir.display()));
        let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(failed)?
            .map(|entry| entry.map(|e| e.path()))
            .collect::<std::io::Result<_>>()
            .map_err(failed)?;
        paths.sort();
        let mut hash = Fnv::new();
        for path in &paths {
            let bytes = std::fs::read(path).map_err(failed)?;
            let name = path.file_name().unwrap_or_default();
            hash.write(name.as_encoded_bytes());
            hash.write(&(bytes.len() as u64).to_le_bytes());
            hash.write(&bytes);
        }
        Ok(Self {
            files: paths.len(),
            hash: hash.finish(),
        })
    }
}

/// 64-bit FNV-1a: a stable hash (the same bytes give the same value on every machine and
/// toolchain), enough to tell two corpora apart.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// One run of one target.
struct Run<'a> {
    target: &'a Target,
    /// The corpus libFuzzer adds its new inputs to (the committed corpus is read too),
    /// relative to the workspace root, where cargo-fuzz runs: the fuzzer's arguments, and so
    /// where its stack starts, are the same in every checkout.
    corpus: &'a Path,
    budget: Budget,
    /// libFuzzer's seed; `None`: a new one.
    seed: Option<u32>,
    /// libFuzzer rereads `corpus` every second (for inputs other processes add).
    reload: bool,
    /// Run with the address space laid out the same every time (`setarch -R`: no address
    /// space layout randomisation), so that addresses the code compares (which libFuzzer
    /// records and mutates inputs with) and its stack depth repeat from run to run.
    fixed_addresses: bool,
}

/// What a clean run reported.
struct Done {
    target: &'static str,
    took: Duration,
    /// Executions, as libFuzzer counted them.
    runs: Option<u64>,
    /// The seed libFuzzer used.
    seed: Option<u32>,
}

impl Run<'_> {
    /// Runs the target and adds the run to the ledger; fails on a crash.
    fn logged(&self) -> Result<Done> {
        let corpus = project_root().join(self.corpus);
        std::fs::create_dir_all(&corpus)
            .map_err(|e| Error::Failed(format!("cannot create {}: {e}", corpus.display())))?;
        let start = Instant::now();
        let result = self.fuzz();
        let took = start.elapsed();
        let (runs, seed, outcome) = match &result {
            Ok((runs, seed)) => (*runs, *seed, "clean"),
            Err(_) => (None, self.seed, "FAILED"),
        };
        ledger(self.target.name, took, runs, outcome, seed);
        result?;
        Ok(Done {
            target: self.target.name,
            took,
            runs,
            seed,
        })
    }

    /// libFuzzer's options after cargo-fuzz's `--`.
    fn options(&self) -> Vec<String> {
        let mut options = vec![
            match self.budget {
                Budget::Seconds(s) => format!("-max_total_time={s}"),
                Budget::Runs(n) => format!("-runs={n}"),
            },
            format!("-max_len={}", self.target.max_len),
            "-timeout=10".to_owned(),
            "-rss_limit_mb=2048".to_owned(),
            "-print_final_stats=1".to_owned(),
        ];
        if let Some(seed) = self.seed {
            options.push(format!("-seed={seed}"));
        }
        if !self.reload {
            options.push("-reload=0".to_owned());
        }
        options
    }

    /// Runs the target; returns the executions and the seed libFuzzer reported.
    fn fuzz(&self) -> Result<(Option<u64>, Option<u32>)> {
        let target = self.target.name;
        let root = project_root();
        let seeds = format!("{FUZZ_DIR}/corpus/{target}");
        let corpus = self.corpus.to_string_lossy().into_owned();
        // `--sanitizer none`: the code under test is safe Rust (memory errors cannot happen
        // there), so AddressSanitizer would only halve the executions; debug assertions stay
        // on to catch arithmetic overflow.
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
            &corpus,
            &seeds,
            "--",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .chain(self.options())
        .collect();
        let mut command = if self.fixed_addresses {
            let mut setarch = Command::new("setarch");
            setarch.args(["-R", "rustup"]);
            setarch
        } else {
            Command::new("rustup")
        };
        let shown = if self.fixed_addresses {
            "setarch -R rustup"
        } else {
            "rustup"
        };
        println!("$ {shown} {}", args.join(" "));
        let _ = std::io::stdout().flush();
        let mut child = command
            .args(&args)
            .current_dir(&root)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::Failed(format!("could not start rustup: {e}")))?;
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
        let mut log = FuzzLog::default();
        if let Some(err) = child.stderr.take() {
            for line in BufReader::new(err)
                .lines()
                .map_while(std::result::Result::ok)
            {
                log.line(line);
            }
        }
        let _ = echo_stdout.join();
        let status = child
            .wait()
            .map_err(|e| Error::Failed(format!("waiting for cargo fuzz: {e}")))?;
        if !status.success() {
            eprintln!("---- the last lines of the fuzzer's output ----");
            for line in &log.tail {
                eprintln!("{line}");
            }
            let mut what = String::new();
            for line in &log.failure {
                what.push_str("\n    ");
                what.push_str(line);
            }
            return Err(Error::Failed(format!(
                "fuzz target `{target}` failed ({status}); the input is in \
                 {FUZZ_DIR}/artifacts/{target}/{what}"
            )));
        }
        Ok((log.runs, log.seed))
    }
}

/// What libFuzzer's standard error says, read a line at a time. It reports a line per corpus
/// change: the log echoed is kept short (the build, the start, the end, anything that looks
/// like a failure), and all of its end is shown on failure.
#[derive(Default)]
struct FuzzLog {
    /// The last 200 lines.
    tail: Vec<String>,
    /// What a failure is known by, kept for the error itself: a CI log shown by its end alone
    /// still says which check failed and on what input.
    failure: Vec<String>,
    after_panic: bool,
    /// `Done N runs ...`.
    runs: Option<u64>,
    /// `INFO: Seed: N`.
    seed: Option<u32>,
}

impl FuzzLog {
    fn line(&mut self, line: String) {
        if let Some(n) = line
            .strip_prefix("Done ")
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
        {
            self.runs = Some(n);
        }
        if let Some(n) = line
            .strip_prefix("INFO: Seed: ")
            .and_then(|n| n.trim().parse().ok())
        {
            self.seed = Some(n);
        }
        // Progress lines (`#123 NEW ...`) and the recommended dictionary (`"..." # Uses`).
        let noise = (line.starts_with('#') && !line.contains("INITED") && !line.contains("DONE"))
            || line.starts_with('"');
        if !noise {
            eprintln!("{line}");
        }
        if self.after_panic {
            self.failure.push(line.clone());
            self.after_panic = false;
        }
        if line.contains("panicked at") {
            self.failure.push(line.clone());
            self.after_panic = true;
        } else if line.starts_with("SUMMARY:") || line.starts_with("0x") {
            // libFuzzer's summary, and a short input printed as bytes.
            self.failure.push(line.chars().take(800).collect());
        }
        self.tail.push(line);
        if self.tail.len() > 200 {
            self.tail.remove(0);
        }
    }
}

/// Appends a line to `target/fuzz/ledger.tsv`: unix time, target, seconds, runs, outcome, seed.
fn ledger(target: &str, took: Duration, runs: Option<u64>, outcome: &str, seed: Option<u32>) {
    let path = project_root().join("target/fuzz/ledger.tsv");
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let runs = runs.map_or_else(String::new, |r| r.to_string());
    let seed = seed.map_or_else(String::new, |s| s.to_string());
    let line = format!(
        "{now}\t{target}\t{}\t{runs}\t{outcome}\t{seed}\n",
        took.as_secs()
    );
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
/// to minutes each), safe code only — writing and reading many records, flash images — which
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
    "pack::writer::tests::the_same_records_come_back",
    "pack_tests::damage_inside_a_pack_loses_that_pack_only",
    "pack_tests::packs_and_records_round_trip",
    "writer::tests::a_record_filled_in_place_is_the_record_added_whole",
];

/// The CI step: the core's unit tests under Miri, in the first configuration, but for
/// [`MIRI_CI_SKIPS`]: safe code (the core's only `unsafe` is the x86 CRC, whose own tests
/// stay) that the test step runs natively; with them, the step took 14 min 51 s on two cores.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn exploration_defaults_to_seconds_and_a_new_seed() {
        let parsed = parse(&args(&[])).ok();
        assert_eq!(
            parsed,
            Some(Args {
                budget: Budget::Seconds(DEFAULT_SECONDS),
                seed: None,
                miri: false,
                only: None,
            })
        );
    }

    #[test]
    fn seed_runs_and_target_are_taken() {
        let parsed = parse(&args(&["--seed", "7", "--runs=500", "flash_reader"])).ok();
        assert_eq!(
            parsed,
            Some(Args {
                budget: Budget::Runs(500),
                seed: Some(7),
                miri: false,
                only: Some("flash_reader"),
            })
        );
    }

    #[test]
    fn bad_arguments_are_refused() {
        for bad in [
            &["--seconds", "10", "--runs", "5"][..],
            &["--seed", "0"],
            &["--seed", "4294967296"],
            &["--runs"],
            &["--seconds", "x"],
            &["reader", "block"],
            &["nope"],
        ] {
            assert!(matches!(parse(&args(bad)), Err(Error::Usage(_))), "{bad:?}");
        }
    }

    #[test]
    fn ci_runs_a_fixed_count_from_a_fixed_seed() {
        let corpus = PathBuf::from("corpus");
        let run = Run {
            target: &TARGETS[0],
            corpus: &corpus,
            budget: Budget::Runs(TARGETS[0].ci_runs),
            seed: Some(CI_SEED),
            reload: false,
            fixed_addresses: true,
        };
        let options = run.options();
        assert!(options.contains(&format!("-runs={}", TARGETS[0].ci_runs)));
        assert!(options.contains(&format!("-seed={CI_SEED}")));
        assert!(options.contains(&"-reload=0".to_owned()));
        assert!(!options.iter().any(|o| o.starts_with("-max_total_time")));
    }

    #[test]
    fn every_target_has_a_corpus_and_a_binary() {
        let root = project_root().join(FUZZ_DIR);
        for target in TARGETS {
            assert!(
                root.join("corpus").join(target.name).is_dir(),
                "{}",
                target.name
            );
            let binary = root
                .join("fuzz_targets")
                .join(format!("{}.rs", target.name));
            assert!(binary.is_file(), "{}", target.name);
            assert!(target.ci_runs > 0);
        }
    }

    #[test]
    fn fingerprints_tell_corpora_apart() {
        let dir = std::env::temp_dir().join(format!("xtask-fuzz-fp-{}", std::process::id()));
        fresh_dir(&dir).ok();
        let a = Fingerprint::of_dir(&dir).ok();
        std::fs::write(dir.join("one"), b"1").ok();
        let b = Fingerprint::of_dir(&dir).ok();
        std::fs::write(dir.join("one"), b"2").ok();
        let c = Fingerprint::of_dir(&dir).ok();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(a.map(|f| f.files), Some(0));
        assert_eq!(b.map(|f| f.files), Some(1));
        assert_ne!(a, b);
        assert_ne!(b, c);
        // FNV-1a's published value for "a".
        let mut fnv = Fnv::new();
        fnv.write(b"a");
        assert_eq!(fnv.finish(), 0xaf63_dc4c_8601_ec8c);
    }
}
