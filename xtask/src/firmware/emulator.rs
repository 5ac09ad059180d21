//! QEMU's Arm system emulator: the one on PATH; else Debian's `qemu-system-arm` installed with
//! apt-get; else — where installing it would remove a package (this image's backported
//! `qemu-utils` breaks Debian 12's `qemu-system-common`) or cannot be done — Debian's packages
//! unpacked into the project's own `target/qemu-system-arm/`, which installs and removes
//! nothing. It runs with semihosting, a timeout and its output echoed.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::cmd::{Cmd, Error, Result, project_root};

/// How long one QEMU run may take before it is killed.
pub(crate) const QEMU_TIMEOUT: Duration = Duration::from_secs(120);

/// A QEMU Arm system emulator to run: its program and, for the project's unpacked copy, the
/// library path its shared libraries are on.
#[derive(Debug, Clone)]
struct Qemu {
    program: PathBuf,
    library_path: Option<OsString>,
}

/// The emulator [`ensure_qemu`] found.
static CHOSEN: OnceLock<Qemu> = OnceLock::new();

impl Qemu {
    /// `qemu-system-arm` on PATH.
    fn system() -> Self {
        Self {
            program: PathBuf::from("qemu-system-arm"),
            library_path: None,
        }
    }

    /// The copy of Debian's packages unpacked under `target/` by [`unpack`].
    fn local() -> Self {
        let root = local_dir().join("root");
        // The libraries' multiarch directories, e.g. `usr/lib/x86_64-linux-gnu`.
        let mut dirs = Vec::new();
        for base in ["usr/lib", "lib"] {
            if let Ok(entries) = std::fs::read_dir(root.join(base)) {
                dirs.extend(
                    entries
                        .filter_map(|e| Some(e.ok()?.path()))
                        .filter(|p| p.is_dir() && p.to_string_lossy().ends_with("-linux-gnu")),
                );
            }
        }
        Self {
            program: root.join("usr/bin/qemu-system-arm"),
            library_path: std::env::join_paths(dirs).ok(),
        }
    }

    /// A command that runs this emulator.
    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        if let Some(path) = &self.library_path {
            command.env("LD_LIBRARY_PATH", path);
        }
        command
    }

    /// `--version`'s first line, if it runs.
    fn version(&self) -> Option<String> {
        let output = self
            .command()
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .ok()?;
        if !output.status.success() {
            return None;
        }
        let text = String::from_utf8_lossy(&output.stdout);
        Some(
            text.lines()
                .next()
                .unwrap_or("qemu-system-arm")
                .trim()
                .to_owned(),
        )
    }

    /// Takes this emulator for the runs of this process; its version.
    fn choose(self, version: String, note: &str) -> String {
        println!("using {version}{note}");
        let _ = CHOSEN.set(self);
        version
    }
}

/// Where the project's copy of Debian's QEMU packages is unpacked.
fn local_dir() -> PathBuf {
    project_root().join("target").join("qemu-system-arm")
}

/// Makes sure a QEMU Arm system emulator runs (see the module's documentation); its version.
pub(crate) fn ensure_qemu() -> Result<String> {
    const LOCAL: &str = " (Debian's packages unpacked in target/qemu-system-arm)";
    if let Some(version) = Qemu::system().version() {
        return Ok(Qemu::system().choose(version, ""));
    }
    if let Some(version) = Qemu::local().version() {
        return Ok(Qemu::local().choose(version, LOCAL));
    }
    println!("qemu-system-arm is not installed: installing Debian's `qemu-system-arm` package");
    match crate::apt::install(&["qemu-system-arm"]) {
        Ok(()) => {
            if let Some(version) = Qemu::system().version() {
                return Ok(Qemu::system().choose(version, ""));
            }
        }
        Err(e) => println!(
            "{e}\nqemu-system-arm: unpacking Debian's packages into {} instead (nothing is \
             installed or removed)",
            local_dir().display()
        ),
    }
    unpack()?;
    match Qemu::local().version() {
        Some(version) => Ok(Qemu::local().choose(version, LOCAL)),
        None => Err(Error::Failed(
            "qemu-system-arm does not run, installed or unpacked; install QEMU's Arm system \
             emulator by hand, or leave the step out: `cargo xtask ci --skip qemu`"
                .to_owned(),
        )),
    }
}

/// Unpacks `qemu-system-arm` and the packages it needs that the machine lacks (as apt-get
/// would install them: `install -s` lists them) into [`local_dir`], with `apt-get download`
/// and `dpkg-deb -x`: no root needed once the package lists exist, nothing on the machine
/// changed.
fn unpack() -> Result {
    let dir = local_dir();
    let (debs, root) = (dir.join("debs"), dir.join("root"));
    let _ = std::fs::remove_dir_all(&dir);
    for d in [&debs, &root] {
        std::fs::create_dir_all(d)
            .map_err(|e| Error::Failed(format!("cannot create {}: {e}", d.display())))?;
    }
    let simulated = Cmd::new("apt-get")
        .args([
            "install",
            "-s",
            "--no-install-recommends",
            "qemu-system-arm",
        ])
        .read()?;
    let packages: Vec<&str> = simulated
        .lines()
        .filter_map(|line| line.strip_prefix("Inst ")?.split_whitespace().next())
        .collect();
    if !packages.contains(&"qemu-system-arm") {
        return Err(Error::Failed(format!(
            "apt-get install -s lists no qemu-system-arm to unpack:\n{simulated}"
        )));
    }
    Cmd::new("apt-get")
        .args(["download"])
        .args(packages.iter().copied())
        .dir(&debs.to_string_lossy())
        .run()?;
    let mut unpacked = 0;
    for entry in
        std::fs::read_dir(&debs).map_err(|e| Error::Failed(format!("{}: {e}", debs.display())))?
    {
        let deb = entry
            .map_err(|e| Error::Failed(format!("{}: {e}", debs.display())))?
            .path();
        if deb.extension().is_some_and(|e| e == "deb") {
            Cmd::new("dpkg-deb")
                .args(["-x"])
                .args([deb.to_string_lossy(), root.to_string_lossy()])
                .run()?;
            unpacked += 1;
        }
    }
    println!(
        "unpacked {unpacked} packages ({}) into {}",
        packages.join(" "),
        root.display()
    );
    Ok(())
}

/// A finished QEMU run.
pub(crate) struct QemuRun {
    /// `None` if it was killed at the timeout.
    pub(crate) status: Option<ExitStatus>,
    /// Everything it printed on standard output.
    pub(crate) stdout: String,
    /// Its wall-clock time.
    pub(crate) took: Duration,
}

/// Runs `elf` on `board` with semihosting, in `cwd` (semihosting files are relative to it),
/// echoing its output (indented by `indent`) and killing it after `timeout`.
pub(crate) fn run_qemu(
    board: &str,
    elf: &Path,
    cwd: &Path,
    timeout: Duration,
    indent: &str,
) -> Result<QemuRun> {
    run_qemu_with(board, elf, cwd, timeout, indent, &[])
}

/// [`run_qemu`] with more QEMU options (`-icount shift=0`: one guest instruction a
/// nanosecond of virtual time, for counting instructions with SysTick).
pub(crate) fn run_qemu_with(
    board: &str,
    elf: &Path,
    cwd: &Path,
    timeout: Duration,
    indent: &str,
    extra: &[&str],
) -> Result<QemuRun> {
    let mut args = vec![
        "-machine",
        board,
        "-nographic",
        "-monitor",
        "none",
        "-semihosting-config",
        "enable=on,target=native",
    ];
    args.extend_from_slice(extra);
    args.push("-kernel");
    let qemu = CHOSEN.get().cloned().unwrap_or_else(Qemu::system);
    println!(
        "$ {} {} {}   (timeout {}s)",
        qemu.program.display(),
        args.join(" "),
        elf.display(),
        timeout.as_secs()
    );
    let _ = std::io::stdout().flush();
    let start = Instant::now();
    let mut child = qemu
        .command()
        .args(args)
        .arg(elf)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Error::Failed(format!("could not start qemu-system-arm: {e}")))?;
    let stdout = child.stdout.take().map(|out| {
        let indent = indent.to_owned();
        std::thread::spawn(move || {
            let mut all = String::new();
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                println!("{indent}{line}");
                all.push_str(&line);
                all.push('\n');
            }
            all
        })
    });
    let stderr = child.stderr.take().map(|mut err| {
        std::thread::spawn(move || {
            let mut all = String::new();
            let _ = err.read_to_string(&mut all);
            all
        })
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(Error::Failed(format!("waiting for QEMU: {e}"))),
        }
    };
    let took = start.elapsed();
    let stdout = stdout.and_then(|t| t.join().ok()).unwrap_or_default();
    let stderr = stderr.and_then(|t| t.join().ok()).unwrap_or_default();
    for line in stderr.lines().filter(|l| !l.trim().is_empty()) {
        eprintln!("{indent}qemu: {line}");
    }
    Ok(QemuRun {
        status,
        stdout,
        took,
    })
}
