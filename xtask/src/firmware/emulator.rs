//! QEMU's Arm system emulator: installed (Debian's `qemu-system-arm`) if it is missing, and
//! run with semihosting, a timeout and its output echoed.

use std::io::{BufRead, BufReader, Read, Write as _};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::cmd::{Error, Result};

/// How long one QEMU run may take before it is killed.
pub(crate) const QEMU_TIMEOUT: Duration = Duration::from_secs(120);

/// `qemu-system-arm --version`'s first line, if it runs.
fn qemu_version() -> Option<String> {
    let output = Command::new("qemu-system-arm")
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

/// Makes sure `qemu-system-arm` runs, installing Debian's package with apt-get if it does not.
pub(crate) fn ensure_qemu() -> Result<String> {
    if let Some(version) = qemu_version() {
        println!("using {version}");
        return Ok(version);
    }
    println!("qemu-system-arm is not installed: installing Debian's `qemu-system-arm` package");
    crate::apt::install(&["qemu-system-arm"])?;
    qemu_version().ok_or_else(|| {
        Error::Failed(
            "qemu-system-arm still does not run after installing it; \
             install QEMU's Arm system emulator by hand"
                .to_owned(),
        )
    })
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
    let args = [
        "-machine",
        board,
        "-nographic",
        "-monitor",
        "none",
        "-semihosting-config",
        "enable=on,target=native",
        "-kernel",
    ];
    println!(
        "$ qemu-system-arm {} {}   (timeout {}s)",
        args.join(" "),
        elf.display(),
        timeout.as_secs()
    );
    let _ = std::io::stdout().flush();
    let start = Instant::now();
    let mut child = Command::new("qemu-system-arm")
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
