//! `cargo xtask soak [--seconds N] [--seed S]`: the crash tests, for much longer than
//! `cargo test` runs them; not part of `cargo xtask ci`.
//!
//! Round after round, each with the next seed (`LOGFMT_CRASH_SEED`), until N seconds (default
//! 300) have passed: the `LogWriter` killed in a child process (`logfmt-std`'s `crash` test,
//! whose binary also holds its full-disk test), `logfmt write --append` killed
//! (`logfmt-cli`'s `crash` test), each with as many trials (`LOGFMT_CRASH_TRIALS`) as fit its
//! share of the time left, up to [`MAX_TRIALS`], and the CLI's full-disk tests. Without `--seed` the first seed
//! comes from the clock, so that every soak tries new ones.
//!
//! Bounded: no round starts once the time is up, each is sized to the time left (from the
//! time a trial took so far), and a test binary that runs far past its expected time is
//! killed (with its children) and counted as a failure. A failure does not stop the soak:
//! the summary lists each with the command that replays it, and its output is kept under
//! `target/soak/`.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::cmd::{Cmd, Error, Result, executables, fmt_duration, project_root};

/// Seconds of `cargo xtask soak` without `--seconds`.
const DEFAULT_SECONDS: u64 = 300;
/// Trials of each seeded test in the first round, which measures how long one takes.
const FIRST_TRIALS: u64 = 10;
/// The most trials of one run: every trial reads the whole log its run has written so far, so
/// that a run's time grows with the square of its trials; beyond this, new seeds find more.
const MAX_TRIALS: u64 = 100;
/// How many times its last run's trials a run may have at most.
const MAX_GROWTH: u64 = 4;
/// A run is killed once it has taken this many times its expected time (and at least
/// [`MIN_TIMEOUT`]).
const TIMEOUT_FACTOR: u32 = 5;
const MIN_TIMEOUT: Duration = Duration::from_secs(120);

/// A test binary the soak runs.
struct Soaked {
    /// What it checks, in the report.
    label: &'static str,
    package: &'static str,
    /// Its test target (`--test`).
    test: &'static str,
    /// libtest filters: only the tests whose names contain one of them (none: every test).
    filters: &'static [&'static str],
    /// Whether it runs `LOGFMT_CRASH_TRIALS` seeded trials; otherwise it is a fixed check,
    /// run once a round.
    seeded: bool,
}

const SOAKED: &[Soaked] = &[
    Soaked {
        label: "LogWriter killed, full disk",
        package: "logfmt-std",
        test: "crash",
        filters: &[],
        seeded: true,
    },
    Soaked {
        label: "write --append killed",
        package: "logfmt-cli",
        test: "crash",
        filters: &[],
        seeded: true,
    },
    Soaked {
        label: "CLI full disk",
        package: "logfmt-cli",
        test: "nothing_lost",
        filters: &["a_failed_", "a_full_device"],
        seeded: false,
    },
];

/// What the runs of one [`Soaked`] came to.
#[derive(Default)]
struct Tally {
    runs: u64,
    /// Trials of the runs that passed.
    trials: u64,
    /// Torn tails the passing runs report (`... N left a torn tail`).
    torn: u64,
    time: Duration,
    /// The trials and time of the last run that passed.
    last: Option<(u64, Duration)>,
    failures: Vec<String>,
}

impl Tally {
    /// The trials of the next run of a seeded test, to fit in `budget`, and the time they
    /// are expected to take (zero if unknown).
    fn plan(&self, budget: Duration) -> (u64, Duration) {
        let Some((last, took)) = self.last else {
            return (FIRST_TRIALS, Duration::ZERO);
        };
        let per_trial = took.as_secs_f64() / last as f64;
        let fit = (budget.as_secs_f64() / per_trial.max(1e-6)) as u64;
        let trials = fit.min(last * MAX_GROWTH).clamp(1, MAX_TRIALS);
        // Quadratic in the trials, growing; about linear, shrinking.
        let growth = (trials as f64 / last as f64).max(1.0);
        (
            trials,
            Duration::from_secs_f64(per_trial * trials as f64 * growth),
        )
    }
}

/// `cargo xtask soak [--seconds N] [--seed S]`.
pub(crate) fn run(args: &[String]) -> Result {
    let mut seconds = DEFAULT_SECONDS;
    let mut seed = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let (name, value) = match arg.split_once('=') {
            Some((name, value)) => (name, Some(value.to_owned())),
            None => (arg.as_str(), None),
        };
        if name != "--seconds" && name != "--seed" {
            return Err(Error::Usage(format!(
                "unexpected argument `{arg}` for `soak`"
            )));
        }
        let value = value
            .or_else(|| args.next().cloned())
            .ok_or_else(|| Error::Usage(format!("`{name}` needs a value")))?;
        let number: u64 = value
            .parse()
            .map_err(|_| Error::Usage(format!("`{name} {value}`: not a number")))?;
        if name == "--seconds" {
            seconds = Some(number)
                .filter(|&s| s > 0)
                .ok_or_else(|| Error::Usage("`--seconds` must be positive".to_owned()))?;
        } else {
            seed = Some(number);
        }
    }
    let seed = seed.unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |d| d.as_secs())
    });
    soak(Duration::from_secs(seconds), seed)
}

/// Builds the test binaries, then runs rounds until `time` has passed.
fn soak(time: Duration, first_seed: u64) -> Result {
    let binaries = SOAKED.iter().map(build).collect::<Result<Vec<PathBuf>>>()?;
    let out_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| project_root().join("target"), PathBuf::from)
        .join("soak");
    fs::create_dir_all(&out_dir)
        .map_err(|e| Error::Failed(format!("{}: {e}", out_dir.display())))?;

    let start = Instant::now();
    let deadline = start + time;
    let mut tallies: Vec<Tally> = SOAKED.iter().map(|_| Tally::default()).collect();
    let mut seed = first_seed;
    let mut last_seed = first_seed;
    'rounds: loop {
        for (i, (soaked, binary)) in SOAKED.iter().zip(&binaries).enumerate() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break 'rounds;
            }
            let (trials, expected) = if soaked.seeded {
                let seeded_left = SOAKED[i..].iter().filter(|s| s.seeded).count() as u32;
                let (trials, expected) = tallies[i].plan(left / seeded_left.max(1));
                (Some(trials), expected)
            } else {
                (
                    None,
                    tallies[i].last.map_or(Duration::ZERO, |(_, took)| took),
                )
            };
            last_seed = seed;
            let log = out_dir.join(format!("{}-{}-{seed}.log", soaked.package, soaked.test));
            let outcome = run_once(soaked, binary, seed, trials, expected, &log)?;
            let tally = &mut tallies[i];
            tally.runs += 1;
            let trials_text = trials.map_or_else(String::new, |n| format!("  {n:>6} trials"));
            match outcome {
                Ok((took, torn)) => {
                    tally.time += took;
                    tally.trials += trials.unwrap_or(1);
                    tally.torn += torn.unwrap_or(0);
                    tally.last = Some((trials.unwrap_or(1), took));
                    let torn = torn.map_or_else(String::new, |n| format!(", {n} torn tails"));
                    println!(
                        "  {:28} seed {seed}{trials_text}  ok {:>9}{torn}",
                        soaked.label,
                        fmt_duration(took)
                    );
                    let _ = fs::remove_file(&log);
                }
                Err(why) => {
                    println!(
                        "  {:28} seed {seed}{trials_text}  FAILED: {why}",
                        soaked.label
                    );
                    print_tail(&log);
                    tally.failures.push(format!(
                        "{why}: {}\n      (its output: {})",
                        replay(soaked, seed, trials),
                        log.display()
                    ));
                }
            }
        }
        seed += 1;
    }
    report(time, start.elapsed(), (first_seed, last_seed), &tallies)
}

/// Builds the test binary of `soaked` (as `cargo test` does) and returns its path.
fn build(soaked: &Soaked) -> Result<PathBuf> {
    let json = Cmd::cargo()
        .args([
            "test",
            "-p",
            soaked.package,
            "--test",
            soaked.test,
            "--no-run",
        ])
        .args(["--message-format=json-render-diagnostics"])
        .read()?;
    let prefix = format!("{}-", soaked.test);
    executables(&json)
        .into_iter()
        .find(|(name, _)| name.starts_with(&prefix))
        .map(|(_, path)| path)
        .ok_or_else(|| {
            Error::Failed(format!(
                "cargo built no test binary for `{}` of {}",
                soaked.test, soaked.package
            ))
        })
}

/// The time a passing run took and the torn tails it reports, or why it failed.
type Outcome = std::result::Result<(Duration, Option<u64>), String>;

/// Runs the test binary once (output to `log`), killing it once it has run far past
/// `expected`.
fn run_once(
    soaked: &Soaked,
    binary: &Path,
    seed: u64,
    trials: Option<u64>,
    expected: Duration,
    log: &Path,
) -> Result<Outcome> {
    let file = |log: &Path| {
        File::create(log).map_err(|e| Error::Failed(format!("{}: {e}", log.display())))
    };
    let out = file(log)?;
    let err = out
        .try_clone()
        .map_err(|e| Error::Failed(format!("{}: {e}", log.display())))?;
    let mut cmd = Command::new(binary);
    cmd.arg("--nocapture")
        .args(soaked.filters)
        .current_dir(project_root())
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    if let Some(trials) = trials {
        cmd.env("LOGFMT_CRASH_SEED", seed.to_string())
            .env("LOGFMT_CRASH_TRIALS", trials.to_string());
    }
    // Its own process group, so that a hung run is killed with the writers it started.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::Failed(format!("cannot run {}: {e}", binary.display())))?;
    let timeout = (expected * TIMEOUT_FACTOR).max(MIN_TIMEOUT);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > timeout => {
                kill_group(&mut child);
                return Ok(Err(format!(
                    "still running after {}",
                    fmt_duration(timeout)
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(Error::Failed(format!("waiting for a test: {e}"))),
        }
    };
    let took = start.elapsed();
    let output = fs::read_to_string(log).unwrap_or_default();
    if !status.success() {
        return Ok(Err(format!("exit {status}")));
    }
    // A filter that matches nothing passes with no test run.
    if output.contains("running 0 tests") {
        return Ok(Err("no test ran (have the tests been renamed?)".to_owned()));
    }
    Ok(Ok((took, torn_tails(&output))))
}

/// Kills the process group of `child` (it leads it), then `child` itself if that failed.
fn kill_group(child: &mut std::process::Child) {
    let group = format!("-{}", child.id());
    let killed = Command::new("kill")
        .args(["-KILL", "--", &group])
        .status()
        .is_ok_and(|s| s.success());
    if !killed {
        let _ = child.kill();
    }
    let _ = child.wait();
}

/// The sum of the `N` of the `... N left a torn tail` lines the crash tests print; `None` if
/// there are none.
fn torn_tails(output: &str) -> Option<u64> {
    output
        .lines()
        .filter_map(|line| line.split_once("left a torn tail").map(|(head, _)| head))
        .map(|head| {
            head.split_whitespace()
                .rev()
                .find_map(|word| word.parse::<u64>().ok())
                .unwrap_or(0)
        })
        .fold(None, |sum, n| Some(sum.unwrap_or(0) + n))
}

/// Prints the last lines of a failed run's output.
fn print_tail(log: &Path) {
    let output = fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = output.lines().collect();
    for line in &lines[lines.len().saturating_sub(30)..] {
        println!("    | {line}");
    }
}

/// The command that replays one run.
fn replay(soaked: &Soaked, seed: u64, trials: Option<u64>) -> String {
    let env = trials.map_or_else(String::new, |n| {
        format!("LOGFMT_CRASH_SEED={seed} LOGFMT_CRASH_TRIALS={n} ")
    });
    let filters: String = soaked.filters.iter().map(|f| format!(" {f}")).collect();
    format!(
        "{env}cargo test -p {} --test {} --{filters} --nocapture",
        soaked.package, soaked.test
    )
}

/// The summary; fails if any run failed.
fn report(
    asked: Duration,
    took: Duration,
    (first_seed, last_seed): (u64, u64),
    tallies: &[Tally],
) -> Result {
    println!(
        "\nsoak summary ({} asked, {} taken; seeds {first_seed} to {last_seed}):",
        fmt_duration(asked),
        fmt_duration(took),
    );
    let mut failed = 0;
    for (soaked, tally) in SOAKED.iter().zip(tallies) {
        let trials = if soaked.seeded {
            format!("{:>7} trials, {:>5} torn tails", tally.trials, tally.torn)
        } else {
            format!("{:>7} passes", tally.trials)
        };
        println!(
            "  {:28} {:>4} runs  {trials}  {:>2} failed  {:>9}",
            soaked.label,
            tally.runs,
            tally.failures.len(),
            fmt_duration(tally.time)
        );
        for failure in &tally.failures {
            println!("    FAILED {failure}");
        }
        failed += tally.failures.len();
    }
    if failed == 0 {
        Ok(())
    } else {
        Err(Error::Failed(format!(
            "{failed} soak run(s) failed (listed above)"
        )))
    }
}
