//! The firmware tasks, all on `tests/firmware` (its own cargo workspace, built from its own
//! directory so that its `.cargo/config.toml` applies):
//!
//! - `qemu`: the on-target test suite on an emulated Cortex-M3 (QEMU `mps2-an385`) and
//!   Cortex-M4F (`mps2-an386`), installing Debian's `qemu-system-arm` if it is missing;
//! - `size`: flash and RAM of a reference firmware (flash log writer + reader + CRC) against a
//!   baseline, for each CRC table size, with state sizes and stack high-water marks;
//! - `demo`: a sensor logger in NOR flash with a power cut and a reboot, under QEMU (or on the
//!   host without it), then the `logfmt` CLI dumps and verifies the flash image.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::cmd::{Cmd, Error, Result, executables, fmt_duration, project_root};
use crate::tasks::{THUMBV7EM, THUMBV7M, ensure_targets};

/// The firmware crate, relative to the project root.
const FIRMWARE: &str = "tests/firmware";

/// The QEMU machine of each target.
const MACHINES: &[Machine] = &[
    Machine {
        target: THUMBV7M,
        board: "mps2-an385",
        core: "Cortex-M3",
    },
    Machine {
        target: THUMBV7EM,
        board: "mps2-an386",
        core: "Cortex-M4F",
    },
];

struct Machine {
    target: &'static str,
    board: &'static str,
    core: &'static str,
}

/// Every binary of the firmware crate.
const BINS: &[&str] = &[
    "on-target",
    "demo",
    "size-probe",
    "size-writer",
    "size-reader",
    "size-baseline",
    "stack-probe",
];

/// How long one QEMU run may take before it is killed.
const QEMU_TIMEOUT: Duration = Duration::from_secs(120);

// ---------------------------------------------------------------- building

/// Builds `bins` of the firmware for `target` (release profile) with `features`; returns the
/// path of each executable, by name.
fn build(target: &str, bins: &[&str], features: &[&str]) -> Result<Vec<(String, PathBuf)>> {
    let mut cmd = Cmd::cargo().dir(FIRMWARE).args([
        "build",
        "--release",
        "--target",
        target,
        "--message-format=json-render-diagnostics",
    ]);
    for bin in bins {
        cmd = cmd.args(["--bin", bin]);
    }
    if !features.is_empty() {
        cmd = cmd.args(["--features".to_owned(), features.join(",")]);
    }
    let json = cmd.read()?;
    let executables = executables(&json);
    for bin in bins {
        if !executables.iter().any(|(name, _)| name == bin) {
            return Err(Error::Failed(format!(
                "cargo built no executable named `{bin}` for {target}"
            )));
        }
    }
    Ok(executables)
}

fn executable(built: &[(String, PathBuf)], name: &str) -> Result<PathBuf> {
    built
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, p)| p.clone())
        .ok_or_else(|| Error::Failed(format!("no executable `{name}` was built")))
}

// ---------------------------------------------------------------- QEMU

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
fn ensure_qemu() -> Result<String> {
    if let Some(version) = qemu_version() {
        println!("using {version}");
        return Ok(version);
    }
    println!("qemu-system-arm is not installed: installing Debian's `qemu-system-arm` package");
    install_qemu()?;
    qemu_version().ok_or_else(|| {
        Error::Failed(
            "qemu-system-arm still does not run after installing it; \
             install QEMU's Arm system emulator by hand"
                .to_owned(),
        )
    })
}

fn install_qemu() -> Result {
    let hint =
        "install QEMU's Arm system emulator (Debian/Ubuntu: `apt-get install qemu-system-arm`)";
    if !runs("apt-get", &["--version"]) {
        return Err(Error::Failed(format!(
            "qemu-system-arm is missing and apt-get is not available: {hint}"
        )));
    }
    // apt-get as root, or through passwordless sudo.
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let apt = |args: &[&str]| {
        let cmd = if root {
            Cmd::new("apt-get")
        } else {
            Cmd::new("sudo").args(["-n", "apt-get"])
        };
        cmd.args(args.iter().copied())
            .env("DEBIAN_FRONTEND", "noninteractive")
    };
    if !root && !runs("sudo", &["-n", "true"]) {
        return Err(Error::Failed(format!(
            "qemu-system-arm is missing, and installing it needs root (or passwordless sudo): {hint}"
        )));
    }
    // The package lists may be missing (fresh containers) or stale.
    if !runs("apt-cache", &["show", "qemu-system-arm"]) {
        apt(&["update"]).run()?;
    }
    let install = apt(&[
        "install",
        "-y",
        "--no-install-recommends",
        "qemu-system-arm",
    ]);
    if install.run().is_err() {
        apt(&["update"]).run()?;
        install.run()?;
    }
    Ok(())
}

/// Whether `program args` runs and succeeds (quietly).
fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A finished QEMU run.
struct QemuRun {
    /// `None` if it was killed at the timeout.
    status: Option<ExitStatus>,
    stdout: String,
    took: Duration,
}

/// Runs `elf` on `board` with semihosting, in `cwd` (semihosting files are relative to it),
/// echoing its output (indented by `indent`) and killing it after `timeout`.
fn run_qemu(
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

// ---------------------------------------------------------------- qemu

/// `cargo xtask qemu`.
pub(crate) fn qemu() -> Result {
    let targets: Vec<&str> = MACHINES.iter().map(|m| m.target).collect();
    ensure_targets(&targets)?;
    ensure_qemu()?;
    let mut results = Vec::new();
    for machine in MACHINES {
        println!(
            "\n-- on-target tests: {} ({}, {}) --",
            machine.board, machine.core, machine.target
        );
        // Every firmware binary, so that a change of the core that breaks the size probes or
        // the demo fails here too; only the test suite runs.
        let built = build(machine.target, BINS, &[])?;
        let elf = executable(&built, "on-target")?;
        let run = run_qemu(machine.board, &elf, &project_root(), QEMU_TIMEOUT, "  ")?;
        let summary = run.stdout.lines().rev().find_map(summary_line);
        let verdict = match (run.status, summary) {
            (None, _) => Err(format!(
                "timed out after {} (QEMU killed)",
                fmt_duration(run.took)
            )),
            (Some(status), Some((passed, 0))) if status.success() && passed > 0 => {
                Ok(format!("{passed} passed, 0 failed"))
            }
            (Some(status), Some((passed, failed))) => Err(format!(
                "{passed} passed, {failed} failed; QEMU {}",
                describe(status)
            )),
            (Some(status), None) => Err(format!(
                "no `N passed, M failed` line (a panic?); QEMU {}",
                describe(status)
            )),
        };
        results.push((machine, verdict, run.took));
    }
    // The demo's host build (`cargo xtask demo` without QEMU) must keep compiling too.
    println!("\n-- the demo's host build (used where QEMU is missing) --");
    Cmd::cargo()
        .dir(FIRMWARE)
        .args([
            "build",
            "--release",
            "-p",
            "logfmt-firmware-host",
            "--target",
        ])
        .args([host_triple()?])
        .run()?;
    println!("\n-- QEMU summary --");
    let mut failed = Vec::new();
    for (machine, verdict, took) in &results {
        let (mark, text) = match verdict {
            Ok(text) => ("ok    ", text.as_str()),
            Err(text) => ("FAILED", text.as_str()),
        };
        println!(
            "  {mark}  {:<11} {:<11} {:<22} {text}  ({} wall)",
            machine.board,
            machine.core,
            machine.target,
            fmt_duration(*took)
        );
        if verdict.is_err() {
            failed.push(machine.board);
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Error::Failed(format!(
            "on-target tests failed on {}",
            failed.join(", ")
        )))
    }
}

/// `(passed, failed)` from a line that is exactly `N passed, M failed`.
fn summary_line(line: &str) -> Option<(u32, u32)> {
    let (passed, failed) = line.trim().split_once(" passed, ")?;
    let failed = failed.strip_suffix(" failed")?;
    Some((passed.parse().ok()?, failed.parse().ok()?))
}

fn describe(status: ExitStatus) -> String {
    match status.code() {
        Some(0) => "exited with status 0".to_owned(),
        Some(code) => format!("exited with status {code}"),
        None => "was killed by a signal".to_owned(),
    }
}

// ---------------------------------------------------------------- size

/// The flash budget of the issue: reader + writer + CRC (1 KiB table).
const FLASH_BUDGET: u64 = 6 * 1024;
/// The RAM budget beyond the block buffer.
const RAM_BUDGET: u64 = 256;

/// Section sizes of an ELF image.
#[derive(Debug, Default, Clone, Copy)]
struct Sections {
    vector_table: u64,
    text: u64,
    rodata: u64,
    data: u64,
    bss: u64,
}

impl Sections {
    /// Flash: the vector table, code, constants and the initial values of `.data`.
    fn flash(&self) -> u64 {
        self.vector_table + self.text + self.rodata + self.data
    }

    /// Static RAM.
    fn ram(&self) -> u64 {
        self.data + self.bss
    }
}

/// Reads the section headers of a 32-bit little-endian ELF file.
fn elf_sections(path: &Path) -> Result<Sections> {
    let bytes = std::fs::read(path)
        .map_err(|e| Error::Failed(format!("cannot read {}: {e}", path.display())))?;
    parse_elf(&bytes).ok_or_else(|| {
        Error::Failed(format!(
            "{} is not a 32-bit little-endian ELF file",
            path.display()
        ))
    })
}

fn parse_elf(bytes: &[u8]) -> Option<Sections> {
    let u16_at = |at: usize| -> Option<u64> {
        Some(u64::from(u16::from_le_bytes(
            bytes.get(at..at + 2)?.try_into().ok()?,
        )))
    };
    let u32_at = |at: usize| -> Option<u64> {
        Some(u64::from(u32::from_le_bytes(
            bytes.get(at..at + 4)?.try_into().ok()?,
        )))
    };
    // \x7fELF, ELFCLASS32, ELFDATA2LSB.
    if bytes.get(..6)? != b"\x7fELF\x01\x01" {
        return None;
    }
    let shoff = usize::try_from(u32_at(0x20)?).ok()?;
    let shentsize = usize::try_from(u16_at(0x2e)?).ok()?;
    let shnum = usize::try_from(u16_at(0x30)?).ok()?;
    let shstrndx = usize::try_from(u16_at(0x32)?).ok()?;
    let header = |i: usize| shoff.checked_add(i.checked_mul(shentsize)?);
    let strtab = usize::try_from(u32_at(header(shstrndx)? + 16)?).ok()?;
    let mut sections = Sections::default();
    for i in 0..shnum {
        let h = header(i)?;
        let name_at = strtab.checked_add(usize::try_from(u32_at(h)?).ok()?)?;
        let name_len = bytes.get(name_at..)?.iter().position(|&b| b == 0)?;
        let name = bytes.get(name_at..name_at + name_len)?;
        let size = u32_at(h + 20)?;
        match name {
            b".vector_table" => sections.vector_table += size,
            b".text" => sections.text += size,
            b".rodata" => sections.rodata += size,
            b".data" => sections.data += size,
            b".bss" | b".uninit" => sections.bss += size,
            _ => {}
        }
    }
    Some(sections)
}

/// What the stack probe printed: `probe: KEY... VALUE` lines.
fn probe_value(output: &str, key: &str) -> Option<u64> {
    output.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("probe: ")?.strip_prefix(key)?;
        rest.trim().parse().ok()
    })
}

/// `cargo xtask size [--check]`.
pub(crate) fn size(check: bool) -> Result {
    ensure_targets(&[THUMBV7EM])?;
    let target = THUMBV7EM;
    // (row label, features, binaries)
    let probes = ["size-probe", "size-writer", "size-reader"];
    let variants: [(&str, &[&str]); 3] = [
        ("CRC 1 KiB table (default)", &[]),
        ("CRC without table (crc-no-table)", &["crc-no-table"]),
        ("CRC 16 KiB table (crc-table-16k)", &["crc-table-16k"]),
    ];
    // (label, sections); a row without sections is a group heading.
    let mut rows: Vec<(String, Option<Sections>)> = Vec::new();
    let mut baseline = None;
    let mut stack_elf = None;
    for (i, (label, features)) in variants.iter().enumerate() {
        let mut bins: Vec<&str> = probes.to_vec();
        if i == 0 {
            bins.extend(["size-baseline", "stack-probe"]);
        }
        let built = build(target, &bins, features)?;
        if i == 0 {
            baseline = Some(elf_sections(&executable(&built, "size-baseline")?)?);
            // Copy: the next builds overwrite it.
            let elf = executable(&built, "stack-probe")?;
            let copy = elf.with_file_name("stack-probe.size-task");
            std::fs::copy(&elf, &copy)
                .map_err(|e| Error::Failed(format!("copying {}: {e}", elf.display())))?;
            stack_elf = Some(copy);
        }
        rows.push(((*label).to_owned(), None));
        for (bin, what) in probes
            .iter()
            .zip(["writer + reader", "writer only", "reader only"])
        {
            let sections = elf_sections(&executable(&built, bin)?)?;
            rows.push((format!("  {what}"), Some(sections)));
        }
    }
    let built = build(target, &["size-probe"], &["probe-runtime-resume"])?;
    rows.push((
        "CRC 1 KiB table, Resume chosen at run time".to_owned(),
        None,
    ));
    rows.push((
        "  writer + reader (both resume scans)".to_owned(),
        Some(elf_sections(&executable(&built, "size-probe")?)?),
    ));
    let baseline = baseline.unwrap_or_default();

    // State sizes and stack high-water marks, from the stack probe under QEMU.
    let stack = match stack_elf {
        Some(elf) => match ensure_qemu() {
            Ok(_) => {
                println!("\n-- stack probe under QEMU (mps2-an386, Cortex-M4F) --");
                let run = run_qemu("mps2-an386", &elf, &project_root(), QEMU_TIMEOUT, "  ")?;
                if run.status.is_some_and(|s| s.success()) {
                    Some(run.stdout)
                } else {
                    return Err(Error::Failed(
                        "the stack probe failed under QEMU".to_owned(),
                    ));
                }
            }
            Err(e) => {
                println!("no stack figures: {e}");
                None
            }
        },
        None => None,
    };

    // The report.
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nReference firmware: {target}, opt-level \"s\", LTO, codegen-units 1, panic-halt; a \
         NOR-flash log (FlashWriter + Reader over FlashSource) over a memory-mapped flash driver.\n\
         The baseline is the same firmware without logfmt (it programs and reads the records raw, \
         and has memcpy/memset).\nIn both, the 32 KiB block buffer and the 1 KiB scratch are statics \
         (.bss), as a firmware's large buffers are.\nlogfmt's cost = flash (.vector_table + .text + .rodata + .data) \
         minus the baseline's.\n"
    );
    let _ = writeln!(
        out,
        "  {:<44} {:>6} {:>7} {:>5} {:>5} {:>6} {:>14}",
        "firmware", ".text", ".rodata", ".data", ".bss", "flash", "logfmt's cost"
    );
    let line = |out: &mut String, label: &str, s: &Sections, cost: Option<i64>| {
        let cost = cost.map_or_else(|| "-".to_owned(), |c| format!("{c} B"));
        let _ = writeln!(
            out,
            "  {label:<44} {:>6} {:>7} {:>5} {:>5} {:>6} {cost:>14}",
            s.text,
            s.rodata,
            s.data,
            s.bss,
            s.flash()
        );
    };
    line(&mut out, "baseline (no logfmt)", &baseline, None);
    let cost_of = |s: &Sections| s.flash() as i64 - baseline.flash() as i64;
    for (label, sections) in &rows {
        match sections {
            Some(sections) => line(&mut out, label, sections, Some(cost_of(sections))),
            None => {
                let _ = writeln!(out, "  {label}");
            }
        }
    }
    // The first probe row: writer + reader with the default 1 KiB table.
    let first = rows.iter().find_map(|(_, s)| *s).unwrap_or_default();
    let flash_cost = cost_of(&first);
    let static_ram = first.ram() as i64 - baseline.ram() as i64;

    let mut over = Vec::new();
    let _ = writeln!(out);
    let flash_ok = flash_cost <= FLASH_BUDGET as i64;
    let _ = writeln!(
        out,
        "  flash: writer + reader + CRC (1 KiB table) = {flash_cost} B ({:.2} KiB); budget {} B: {}",
        flash_cost as f64 / 1024.0,
        FLASH_BUDGET,
        if flash_ok {
            "ok".to_owned()
        } else {
            format!("OVER by {} B", flash_cost - FLASH_BUDGET as i64)
        }
    );
    if !flash_ok {
        over.push("flash");
        // Which CRC choice would fit.
        let mut group = "";
        for (label, sections) in &rows {
            match sections {
                None => group = label.as_str(),
                Some(s)
                    if label.trim() == "writer + reader" && cost_of(s) <= FLASH_BUDGET as i64 =>
                {
                    let _ = writeln!(out, "    within the budget with {group}: {} B", cost_of(s));
                }
                Some(_) => {}
            }
        }
    }
    let _ = writeln!(
        out,
        "  static RAM added by logfmt (.data + .bss): {static_ram} B"
    );
    match &stack {
        Some(text) => {
            let v = |key: &str| probe_value(text, key);
            let writer = v("size_of FlashWriter").unwrap_or(0);
            let reader = v("size_of Reader").unwrap_or(0);
            let buffer_ref = v("size_of buffer_ref").unwrap_or(0);
            let scratch_ref = v("size_of scratch_ref").unwrap_or(0);
            let statics = static_ram.max(0) as u64;
            let ram_ok = statics + writer.max(reader) <= RAM_BUDGET;
            let _ = writeln!(
                out,
                "  RAM besides the caller's buffers (each with its own 32 KiB block buffer; \
                 references to the buffers included):\n    \
                 FlashWriter {writer} B, Reader<FlashSource> {reader} B (block buffer ref {buffer_ref} B, \
                 scratch ref {scratch_ref} B); both open at once {} B\n    \
                 budget {RAM_BUDGET} B each: {}",
                writer + reader,
                if ram_ok { "ok" } else { "OVER" }
            );
            if !ram_ok {
                over.push("RAM");
            }
            let _ = writeln!(
                out,
                "  stack high-water marks (stack painting under QEMU mps2-an386, the size probe's code):"
            );
            for (key, what) in [
                (
                    "stack open",
                    "FlashWriter::open on an erased region (resume scan)",
                ),
                (
                    "stack reopen",
                    "FlashWriter::open on a written region, both resume policies",
                ),
                (
                    "stack append",
                    "open + add_record (records up to 40 000 B) + flush",
                ),
                ("stack read", "Reader::next over FlashSource, the whole log"),
                ("stack read_damaged", "Reader::next over a damaged log"),
            ] {
                let value = v(key).map_or_else(|| "?".to_owned(), |b| format!("{b} B"));
                let _ = writeln!(out, "    {what:<62} {value:>7}");
            }
        }
        None => {
            let _ = writeln!(
                out,
                "  RAM state and stack: not measured (the stack probe needs qemu-system-arm)"
            );
        }
    }
    print!("{out}");
    if check && !over.is_empty() {
        return Err(Error::Failed(format!(
            "over budget: {} (see the table above)",
            over.join(", ")
        )));
    }
    Ok(())
}

// ---------------------------------------------------------------- demo

/// `cargo xtask demo [--host]`: `host` runs the demo on the host even where QEMU is available.
pub(crate) fn demo(host: bool) -> Result {
    let root = project_root();
    let out_dir = root.join("target").join("demo");
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| Error::Failed(format!("cannot create {}: {e}", out_dir.display())))?;
    for name in ["flash.img", "acked.txt"] {
        let _ = std::fs::remove_file(out_dir.join(name));
    }

    // 1. The firmware, under QEMU if there is one.
    let machine = MACHINES.iter().find(|m| m.target == THUMBV7EM);
    let qemu = if host {
        None
    } else {
        match ensure_qemu() {
            Ok(version) => Some(version),
            Err(e) => {
                println!("{e}");
                None
            }
        }
    };
    match (qemu, machine) {
        (Some(_), Some(machine)) => {
            ensure_targets(&[machine.target])?;
            println!(
                "\n-- 1. the demo firmware on an emulated {} ({}) --",
                machine.core, machine.board
            );
            let built = build(machine.target, &["demo"], &[])?;
            let elf = executable(&built, "demo")?;
            let run = run_qemu(machine.board, &elf, &out_dir, QEMU_TIMEOUT, "  | ")?;
            match run.status {
                Some(status) if status.success() => {}
                Some(status) => {
                    return Err(Error::Failed(format!(
                        "the demo firmware failed: QEMU {}",
                        describe(status)
                    )));
                }
                None => return Err(Error::Failed("the demo firmware timed out".to_owned())),
            }
        }
        _ => {
            let why = if host {
                "--host"
            } else {
                "qemu-system-arm is not available"
            };
            println!(
                "\n-- 1. the demo on the HOST ({why}): the firmware's demo code runs here, \
                 against the same simulated NOR flash --"
            );
            let host = host_triple()?;
            Cmd::cargo()
                .dir(FIRMWARE)
                .args([
                    "run",
                    "--quiet",
                    "--release",
                    "-p",
                    "logfmt-firmware-host",
                    "--target",
                    &host,
                    "--",
                ])
                .args([out_dir.display().to_string()])
                .run()?;
        }
    }
    let image = out_dir.join("flash.img");
    let acked = std::fs::read_to_string(out_dir.join("acked.txt"))
        .map_err(|e| Error::Failed(format!("the demo saved no acked.txt: {e}")))?;
    let acked: Vec<(u64, String, String)> = acked
        .lines()
        .filter_map(|line| {
            let mut fields = line.splitn(3, '\t');
            let offset = fields.next()?.parse().ok()?;
            let sample = fields.next()?.to_owned();
            Some((offset, sample, fields.next()?.to_owned()))
        })
        .collect();
    if acked.is_empty() {
        return Err(Error::Failed(
            "acked.txt lists no acknowledged record".to_owned(),
        ));
    }
    let image_len = std::fs::metadata(&image)
        .map_err(|e| Error::Failed(format!("the demo saved no flash image: {e}")))?
        .len();

    // 2. The host tool on the image.
    println!(
        "\n-- 2. the logfmt CLI on the flash image ({}, {image_len} bytes) --",
        relative(&image)
    );
    let logfmt = crate::cmd::build_release_bin("logfmt-cli", "logfmt")?;
    let image_arg = relative(&image);
    let with_erased = |sub: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = sub.iter().map(|s| (*s).to_owned()).collect();
        args.splice(1..1, ["--erased".to_owned(), "ff".to_owned()]);
        args.push(image_arg.clone());
        args
    };
    show(&logfmt, &with_erased(&["dump"]), &[0, 1])?;
    let verify = show(&logfmt, &with_erased(&["verify"]), &[0, 1])?;
    if verify == 1 {
        println!(
            "(verify exits 1: it reports the chunk torn by the power cut -- bytes that were never \
             acknowledged)"
        );
    }
    let json = run_capture(&logfmt, &with_erased(&["cat", "--output", "json"]))?;

    // 3. Every acknowledged record must be in the image.
    let records: Vec<(u64, String)> = json
        .lines()
        .map(|line| {
            let (offset, data) = cat_json_record(line).ok_or_else(|| {
                Error::Failed(format!(
                    "unexpected `logfmt cat --output json` line: {line}"
                ))
            })?;
            Ok((offset, String::from_utf8_lossy(&data).into_owned()))
        })
        .collect::<Result<_>>()?;
    println!(
        "\n-- 3. `logfmt cat --output json` read {} records; the acknowledged ones: --",
        records.len()
    );
    let mut missing = 0;
    for (offset, sample, text) in &acked {
        let found = records.iter().any(|(o, t)| o == offset && t == text);
        if !found {
            missing += 1;
        }
        println!(
            "  {}  sample {sample:>2} @ {offset:>6}  {text}",
            if found { "found  " } else { "MISSING" }
        );
    }
    let extra: Vec<&(u64, String)> = records
        .iter()
        .filter(|(o, t)| !acked.iter().any(|(ao, _, at)| ao == o && at == t))
        .collect();
    for (offset, text) in &extra {
        println!("  extra    @ {offset:>6}  {text}  (in flight at the power cut, survived whole)");
    }
    if missing > 0 {
        return Err(Error::Failed(format!(
            "{missing} acknowledged record(s) missing from the flash image"
        )));
    }
    if extra.len() > 1 {
        return Err(Error::Failed(format!(
            "{} records in the image were never acknowledged (at most the one in flight may be)",
            extra.len()
        )));
    }
    println!(
        "\nall {} acknowledged records are in the flash image, in order.",
        acked.len()
    );
    Ok(())
}

/// Runs `logfmt ARGS`, echoing it and its output; returns its exit code, which must be in
/// `allowed`.
fn show(logfmt: &Path, args: &[String], allowed: &[i32]) -> Result<i32> {
    println!("\n$ logfmt {}", args.join(" "));
    let _ = std::io::stdout().flush();
    let status = Command::new(logfmt)
        .args(args)
        .current_dir(project_root())
        .stdin(Stdio::null())
        .status()
        .map_err(|e| Error::Failed(format!("could not run logfmt: {e}")))?;
    match status.code() {
        Some(code) if allowed.contains(&code) => Ok(code),
        _ => Err(Error::Failed(format!(
            "`logfmt {}` {}",
            args.join(" "),
            describe(status)
        ))),
    }
}

/// Runs `logfmt ARGS` and returns its standard output (its standard error is shown).
fn run_capture(logfmt: &Path, args: &[String]) -> Result<String> {
    println!("\n$ logfmt {}", args.join(" "));
    let output = Command::new(logfmt)
        .args(args)
        .current_dir(project_root())
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| Error::Failed(format!("could not run logfmt: {e}")))?;
    if !output.status.success() {
        return Err(Error::Failed(format!(
            "`logfmt {}` {}",
            args.join(" "),
            describe(output.status)
        )));
    }
    String::from_utf8(output.stdout)
        .map_err(|_| Error::Failed("logfmt printed non-UTF-8 JSON".to_owned()))
}

/// The offset and payload of a record line of `logfmt cat --output json`, which is exactly
/// `{"offset": N, "length": N, "hex": "HEX"}` (pinned by the CLI's tests/cat_json.rs).
fn cat_json_record(line: &str) -> Option<(u64, Vec<u8>)> {
    let rest = line.strip_prefix("{\"offset\": ")?;
    let (offset, rest) = rest.split_once(", \"length\": ")?;
    let (length, rest) = rest.split_once(", \"hex\": \"")?;
    let data = unhex(rest.strip_suffix("\"}")?)?;
    let digits = |n: &str| n.bytes().all(|b| b.is_ascii_digit());
    if !digits(offset) || !digits(length) || length.parse::<u64>().ok()? != data.len() as u64 {
        return None;
    }
    Some((offset.parse().ok()?, data))
}

fn unhex(hex: &str) -> Option<Vec<u8>> {
    let digits = hex.as_bytes();
    if !digits.len().is_multiple_of(2) {
        return None;
    }
    digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
        .collect()
}

/// `path` relative to the project root, for display and for commands run there.
fn relative(path: &Path) -> String {
    path.strip_prefix(project_root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The host's target triple, from `rustc -vV`.
fn host_triple() -> Result<String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let output = Command::new(rustc)
        .arg("-vV")
        .output()
        .map_err(|e| Error::Failed(format!("could not run rustc -vV: {e}")))?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .ok_or_else(|| Error::Failed("rustc -vV printed no host triple".to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_lines() {
        assert_eq!(summary_line("10 passed, 0 failed"), Some((10, 0)));
        assert_eq!(summary_line("3 passed, 2 failed\n"), Some((3, 2)));
        assert_eq!(summary_line("test x ... ok"), None);
        assert_eq!(summary_line("10 passed, 0 failed, oops"), None);
    }

    #[test]
    fn json_fields() {
        let line = r#"{"offset": 27, "length": 2, "hex": "01ab"}"#;
        assert_eq!(cat_json_record(line), Some((27, vec![1, 0xab])));
        let empty = r#"{"offset": 0, "length": 0, "hex": ""}"#;
        assert_eq!(cat_json_record(empty), Some((0, vec![])));
        for other in [
            r#"{"offset":27,"length":2,"hex":"01ab"}"#,
            r#"{"length": 2, "offset": 27, "hex": "01ab"}"#,
            r#"{"offset": 27, "length": 3, "hex": "01ab"}"#,
            r#"{"offset": +27, "length": 2, "hex": "01ab"}"#,
            r#"{"offset": 27, "length": 2, "hex": "01ab", "more": 1}"#,
        ] {
            assert_eq!(cat_json_record(other), None, "{other}");
        }
        let line = r#"{"reason":"compiler-artifact","executable":"/t/release/demo","fresh":true}"#;
        assert_eq!(
            crate::cmd::json_string(line, "executable"),
            Some("/t/release/demo")
        );
        assert_eq!(unhex("01ab"), Some(vec![1, 0xab]));
        assert_eq!(unhex("0"), None);
    }

    #[test]
    fn elf_of_nothing_is_refused() {
        assert!(parse_elf(b"not an elf").is_none());
    }
}
