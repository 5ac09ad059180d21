//! Running external commands: echo them, run them from the project root and
//! turn failures into readable errors.

use std::ffi::OsString;
use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

/// Why a task failed.
#[derive(Debug)]
pub(crate) enum Error {
    /// Bad command-line usage: reported together with the usage text, exit 2.
    Usage(String),
    /// A command failed or a precondition does not hold: exit 1.
    Failed(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(msg) | Error::Failed(msg) => f.write_str(msg),
        }
    }
}

pub(crate) type Result<T = ()> = std::result::Result<T, Error>;

/// The workspace root: the parent of this crate's manifest directory.
pub(crate) fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask/ has a parent directory")
        .to_path_buf()
}

/// Prints a step banner: `== xtask: <title> ==`.
pub(crate) fn banner(title: &str) {
    println!("\n== xtask: {title} ==");
    let _ = io::stdout().flush();
}

/// A command to run from the project root, with stdin closed.
pub(crate) struct Cmd {
    program: OsString,
    /// How `program` is shown in the echoed command line.
    display: String,
    args: Vec<String>,
    envs: Vec<(String, String)>,
    /// Where to run, relative to the project root (default: the root).
    dir: Option<String>,
}

impl Cmd {
    pub(crate) fn new(program: &str) -> Self {
        Cmd {
            program: program.into(),
            display: program.to_owned(),
            args: Vec::new(),
            envs: Vec::new(),
            dir: None,
        }
    }

    /// The cargo that runs us (`$CARGO`, so `cargo +toolchain xtask` stays
    /// on that toolchain), falling back to `cargo` on `PATH`.
    pub(crate) fn cargo() -> Self {
        let program = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        Cmd {
            program,
            display: "cargo".to_owned(),
            args: Vec::new(),
            envs: Vec::new(),
            dir: None,
        }
    }

    pub(crate) fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub(crate) fn env(mut self, key: &str, value: &str) -> Self {
        self.envs.push((key.to_owned(), value.to_owned()));
        self
    }

    /// Compiles the workspace's own crates through `clippy-driver` with warnings denied (what
    /// `cargo clippy -- -D warnings` does), in whatever cargo does — a build, a test — so that one
    /// build both lints and compiles them. `cargo clippy` only checks: its artifacts of every
    /// dependency are not a build's, and a later build would compile each dependency again.
    /// Dependencies are compiled by `rustc` as in any build, so their artifacts are shared.
    pub(crate) fn linted(self) -> Self {
        self.env("RUSTC_WORKSPACE_WRAPPER", "clippy-driver").env(
            "CLIPPY_ARGS",
            "-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__",
        )
    }

    /// Runs in `dir` (relative to the project root) instead of the root: cargo reads
    /// `.cargo/config.toml` from the current directory.
    pub(crate) fn dir(mut self, dir: &str) -> Self {
        self.dir = Some(dir.to_owned());
        self
    }

    /// Echoes the command, runs it with inherited stdout/stderr and fails
    /// unless it exits successfully.
    pub(crate) fn run(&self) -> Result {
        println!("$ {self}");
        let _ = io::stdout().flush();
        let status = self.command().status().map_err(|e| self.spawn_error(&e))?;
        self.check(status)
    }

    /// Echoes the command, runs it and returns its stdout (stderr is
    /// inherited); fails unless it exits successfully.
    pub(crate) fn read(&self) -> Result<String> {
        println!("$ {self}");
        let _ = io::stdout().flush();
        let output = self
            .command()
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| self.spawn_error(&e))?;
        self.check(output.status)?;
        String::from_utf8(output.stdout)
            .map_err(|_| Error::Failed(format!("`{self}` printed non-UTF-8 output")))
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args)
            .envs(self.envs.iter().map(|(k, v)| (k, v)))
            .current_dir(match &self.dir {
                Some(dir) => project_root().join(dir),
                None => project_root(),
            })
            .stdin(Stdio::null());
        cmd
    }

    fn spawn_error(&self, err: &io::Error) -> Error {
        if err.kind() == io::ErrorKind::NotFound {
            let tried = if self.program == *self.display {
                String::new()
            } else {
                format!(" (tried {:?})", self.program)
            };
            Error::Failed(format!(
                "`{}` not found{tried}; is it installed and on PATH?",
                self.display
            ))
        } else {
            Error::Failed(format!("could not start `{self}`: {err}"))
        }
    }

    fn check(&self, status: ExitStatus) -> Result {
        if status.success() {
            return Ok(());
        }
        let how = match status.code() {
            Some(code) => format!("exit code {code}"),
            None => "no exit code (killed by a signal?)".to_owned(),
        };
        Err(Error::Failed(format!("command failed with {how}: {self}")))
    }
}

/// The command line as a shell would need it, e.g.
/// `RUSTDOCFLAGS='-D warnings' cargo doc --workspace --no-deps`.
impl fmt::Display for Cmd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(dir) = &self.dir {
            write!(f, "cd {} && ", shell_quote(dir))?;
        }
        for (k, v) in &self.envs {
            write!(f, "{k}={} ", shell_quote(v))?;
        }
        f.write_str(&shell_quote(&self.display))?;
        for arg in &self.args {
            write!(f, " {}", shell_quote(arg))?;
        }
        Ok(())
    }
}

fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Whether `program args` starts and exits successfully (run quietly, from the current
/// directory).
pub(crate) fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `0.4s`, `12.3s`, `2m 05.1s`.
pub(crate) fn fmt_duration(d: Duration) -> String {
    let tenths = d.as_millis().div_ceil(100);
    let (mins, secs, frac) = (tenths / 600, tenths % 600 / 10, tenths % 10);
    if mins == 0 {
        format!("{secs}.{frac}s")
    } else {
        format!("{mins}m {secs:02}.{frac}s")
    }
}

/// `(name, path)` of every `"executable"` in cargo's JSON messages.
pub(crate) fn executables(json: &str) -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    for line in json.lines() {
        let Some(path) = json_string(line, "executable") else {
            continue;
        };
        let path = PathBuf::from(path);
        if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
            found.push((name.to_owned(), path.clone()));
        }
    }
    found
}

/// The string value of `"key": "..."` in a line of JSON (no escapes in the values we read).
pub(crate) fn json_string<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let pattern = format!("\"{key}\":");
    let start = line.find(&pattern)? + pattern.len();
    let value = line.get(start..)?.trim_start().strip_prefix('"')?;
    let end = value.find('"')?;
    value.get(..end)
}

/// Builds binary `bin` of package `package` (the `profiling` profile: release code with its
/// symbols, for the benchmarks and profilers) and returns its path, wherever cargo put it
/// (`CARGO_TARGET_DIR` included).
pub(crate) fn build_release_bin(package: &str, bin: &str) -> Result<PathBuf> {
    let json = Cmd::cargo()
        .args([
            "build",
            "--profile",
            "profiling",
            "-p",
            package,
            "--bin",
            bin,
            "--message-format=json-render-diagnostics",
        ])
        .read()?;
    let wanted = format!("{bin}{}", std::env::consts::EXE_SUFFIX);
    executables(&json)
        .into_iter()
        .find(|(name, _)| *name == wanted)
        .map(|(_, path)| path)
        .ok_or_else(|| Error::Failed(format!("cargo built no executable named `{bin}`")))
}

/// A new, empty scratch directory `name` for a benchmark's files: in `/dev/shm` where there is
/// one (memory, so that the disk is not what is timed), else in the temporary directory.
pub(crate) fn fresh_bench_dir(name: &str) -> Result<PathBuf> {
    let dir = if Path::new("/dev/shm").is_dir() {
        Path::new("/dev/shm").join(name)
    } else {
        std::env::temp_dir().join(name)
    };
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| Error::Failed(format!("{}: {e}", dir.display())))?;
    Ok(dir)
}

/// The median of `times` (sorted in place); `times` is not empty.
pub(crate) fn median_duration(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(fmt_duration(Duration::from_millis(0)), "0.0s");
        assert_eq!(fmt_duration(Duration::from_millis(1234)), "1.3s");
        assert_eq!(fmt_duration(Duration::from_millis(59_990)), "1m 00.0s");
        assert_eq!(fmt_duration(Duration::from_millis(125_100)), "2m 05.1s");
    }

    #[test]
    fn display_quotes_for_the_shell() {
        let cmd = Cmd::new("cargo")
            .args(["doc", "--no-deps", "it's"])
            .env("RUSTDOCFLAGS", "-D warnings");
        assert_eq!(
            cmd.to_string(),
            r"RUSTDOCFLAGS='-D warnings' cargo doc --no-deps 'it'\''s'"
        );
    }
}
