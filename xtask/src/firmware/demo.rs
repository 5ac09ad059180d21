//! `cargo xtask demo [--host]`: the sensor logger of `tests/firmware` writes to simulated NOR
//! flash, loses power mid-record and reboots, under QEMU (or on the host); then the `logfmt`
//! CLI dumps and verifies the flash image and every acknowledged record must be in it.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use super::emulator::{QEMU_TIMEOUT, ensure_qemu, run_qemu};
use super::{FIRMWARE, MACHINES, build, describe, executable};
use crate::cmd::{Cmd, Error, Result, project_root};
use crate::toolchain::{THUMBV7EM, ensure_targets, host_triple};

/// `cargo xtask demo [--host]`: `host` runs the demo on the host even where QEMU is available.
pub(crate) fn run(host: bool) -> Result {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
