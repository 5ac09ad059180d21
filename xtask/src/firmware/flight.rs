//! The flight recorder's check (`cargo xtask qemu`): the `defmt-recorder` firmware logs with
//! defmt through `logfmt-defmt` across power cuts and a brown-out loop, and panics; its flash
//! image, decoded by `logfmt defmt` with the firmware's ELF, must hold every acknowledged frame
//! in order with the text the firmware logged, the dropped-frame count the firmware counted, and
//! the panic message last.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::emulator::{QEMU_TIMEOUT, run_qemu};
use super::{Machine, describe};
use crate::cmd::{Error, Result, project_root};

/// What the firmware says the host must find (`defmt-expected.txt`).
#[derive(Debug, Default)]
struct Expected {
    logged: u32,
    acked: Vec<(u32, u32)>,
    irq_acked: Vec<(u32, u32)>,
    final_from: u32,
    dropped: Vec<u32>,
    dropped_count: u32,
    boots: u32,
    panic: String,
}

impl Expected {
    fn parse(text: &str) -> Result<Self> {
        let mut e = Self::default();
        let number = |v: &str| {
            v.trim()
                .parse::<u32>()
                .map_err(|_| Error::Failed(format!("defmt-expected.txt: bad number {v:?}")))
        };
        let ranges = |v: &str| -> Result<Vec<(u32, u32)>> {
            v.split_whitespace()
                .map(|r| {
                    let (a, b) = r.split_once('-').unwrap_or((r, r));
                    Ok((number(a)?, number(b)?))
                })
                .collect()
        };
        for line in text.lines() {
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            match key {
                "logged" => e.logged = number(value)?,
                "acked" => e.acked = ranges(value)?,
                "irq_acked" => e.irq_acked = ranges(value)?,
                "final_from" => e.final_from = number(value)?,
                "dropped" => {
                    e.dropped = value
                        .split_whitespace()
                        .map(number)
                        .collect::<Result<_>>()?
                }
                "dropped_count" => e.dropped_count = number(value)?,
                "boots" => e.boots = number(value)?,
                "panic" => e.panic = value.to_owned(),
                _ => {}
            }
        }
        Ok(e)
    }
}

/// One frame as `logfmt defmt` prints it: `TIMESTAMP LEVEL MESSAGE`, then `└─ MODULE @
/// FILE:LINE`.
#[derive(Debug)]
struct Frame {
    timestamp: f64,
    level: String,
    message: String,
    location: String,
}

fn parse_frames(text: &str) -> Result<Vec<Frame>> {
    let mut frames = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let bad = || Error::Failed(format!("`logfmt defmt` printed an unexpected line: {line}"));
        // The level is padded to five characters.
        let (ts, rest) = line.split_once(' ').ok_or_else(bad)?;
        let (level, message) = rest.trim_start().split_once(' ').ok_or_else(bad)?;
        let message = message.trim_start();
        let timestamp = ts.parse::<f64>().map_err(|_| bad())?;
        let location = lines
            .next()
            .and_then(|l| l.strip_prefix("└─ "))
            .ok_or_else(bad)?
            .trim_end()
            .to_owned();
        frames.push(Frame {
            timestamp,
            level: level.to_owned(),
            message: message.to_owned(),
            location,
        });
    }
    Ok(frames)
}

/// The level and text of main-loop frame `n` (the firmware's `log_frame`).
fn expected_frame(n: u32) -> (&'static str, String) {
    const NAMES: [&str; 3] = ["alpha", "beta", "gamma"];
    match n % 8 {
        0 => (
            "INFO",
            format!(
                "#{n} integers: u8={} i16={} u64={} i64={} usize={n}",
                n % 256,
                -(n as i16),
                u64::from(n) << 33,
                -i64::from(n) * 1_000_000_007
            ),
        ),
        1 => (
            "DEBUG",
            format!(
                "#{n} floats: f32={:?} f64={:?}",
                n as f32 * 0.5,
                -f64::from(n) * 0.25
            ),
        ),
        2 => (
            "WARN",
            format!(
                "#{n} strings: str={} istr=interned char=λ",
                NAMES[(n % 3) as usize]
            ),
        ),
        3 => (
            "INFO",
            format!(
                "#{n} slices: bytes=[{}, {}, {}] words=[{}, 7] array=[1, 2, 3, {}]",
                n as u8,
                (n + 1) as u8,
                (n + 2) as u8,
                n as u16,
                n % 256
            ),
        ),
        4 => {
            let state = match n % 3 {
                0 => "Idle".to_owned(),
                1 => format!("Running {{ rpm: {} }}", n % 5000),
                _ => format!("Fault({})", n % 7),
            };
            (
                "INFO",
                format!(
                    "#{n} derived: Reading {{ sensor: {}, celsius: {}, ok: {} }} {state}",
                    n % 4,
                    (n % 50) as i16 - 10,
                    n.is_multiple_of(2)
                ),
            )
        }
        5 => {
            let reg = (n as u16).wrapping_mul(40_503);
            (
                "INFO",
                format!(
                    "#{n} bitfields: low={} high={} top={}",
                    reg & 0xF,
                    (reg >> 4) & 0xF,
                    reg >> 15
                ),
            )
        }
        6 => (
            "ERROR",
            format!(
                "#{n} debug2format: Calibration {{ gain: {}, offset: -2, label: \"cal\" }}",
                n * 3
            ),
        ),
        _ => (
            "TRACE",
            format!(
                "#{n} hints: bool={} hex={:#x} tuple=({}, true)",
                n.is_multiple_of(3),
                n.wrapping_mul(2_654_435_761),
                n as u8
            ),
        ),
    }
}

/// Runs the flight recorder on `machine` and checks its image with `logfmt`; a one-line
/// verdict.
pub(crate) fn check(machine: &Machine, elf: &Path, logfmt: &Path) -> Result<String> {
    let dir = dir(machine.board);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::Failed(format!("cannot create {}: {e}", dir.display())))?;
    let run = run_qemu(machine.board, elf, &dir, QEMU_TIMEOUT, "  ")?;
    match run.status {
        Some(status) if status.success() => {}
        Some(status) => {
            return Err(Error::Failed(format!(
                "the flight recorder failed: QEMU {}",
                describe(status)
            )));
        }
        None => return Err(Error::Failed("the flight recorder timed out".to_owned())),
    }
    let read = |name: &str| {
        std::fs::read_to_string(dir.join(name))
            .map_err(|e| Error::Failed(format!("{}: {e}", dir.join(name).display())))
    };
    let expected = Expected::parse(&read("defmt-expected.txt")?)?;
    let image = dir.join("defmt-flash.img");
    let text = decode(logfmt, elf, &image, &dir, false)?;
    std::fs::write(dir.join("decoded.txt"), &text)
        .map_err(|e| Error::Failed(format!("cannot save decoded.txt: {e}")))?;
    let frames = parse_frames(&text)?;
    let json = decode(logfmt, elf, &image, &dir, true)?;
    let json_frames = json
        .lines()
        .filter(|l| l.starts_with("{\"offset\":"))
        .count();
    if json_frames != frames.len() || json.lines().count() != frames.len() {
        return Err(Error::Failed(format!(
            "`logfmt defmt --json` printed {} lines ({json_frames} frames), the text {} frames",
            json.lines().count(),
            frames.len()
        )));
    }
    let verdict = check_frames(&frames, &expected).map_err(Error::Failed)?;
    Ok(format!("{verdict}; {} boots", expected.boots))
}

/// `logfmt defmt --elf ELF [--json] IMAGE`, run in `dir` (file names relative to it).
fn decode(logfmt: &Path, elf: &Path, image: &Path, dir: &Path, json: bool) -> Result<String> {
    let mut cmd = Command::new(logfmt);
    cmd.arg("defmt").arg("--elf").arg(elf);
    if json {
        cmd.arg("--json");
    }
    let output = cmd
        .arg(image)
        .current_dir(dir)
        .output()
        .map_err(|e| Error::Failed(format!("could not run logfmt: {e}")))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        return Err(Error::Failed(format!(
            "`logfmt defmt` {}: {stderr}",
            describe(output.status)
        )));
    }
    if !stderr.trim().is_empty() {
        println!("  logfmt defmt said: {}", stderr.trim());
    }
    String::from_utf8(output.stdout)
        .map_err(|_| Error::Failed("`logfmt defmt` printed bytes that are not UTF-8".to_owned()))
}

/// The checks on the decoded frames; what they found.
fn check_frames(frames: &[Frame], expected: &Expected) -> std::result::Result<String, String> {
    let Some((last, frames)) = frames.split_last() else {
        return Err("no frame decoded".to_owned());
    };
    // The panic message, last.
    let panic_tail = format!(": {}", expected.panic);
    if last.level != "ERROR"
        || !last
            .message
            .starts_with("panicked at src/bin/defmt-recorder.rs:")
        || !last.message.ends_with(&panic_tail)
    {
        return Err(format!(
            "the last frame is not the panic ({:?}): {} {}",
            expected.panic, last.level, last.message
        ));
    }
    let mut main: BTreeMap<u32, usize> = BTreeMap::new();
    let mut irq = Vec::new();
    let mut reported_dropped = 0u32;
    let mut previous_ts = -1.0f64;
    for (i, frame) in frames.iter().enumerate() {
        if frame.timestamp <= previous_ts {
            return Err(format!(
                "frame {i}: timestamp {} after {previous_ts}",
                frame.timestamp
            ));
        }
        previous_ts = frame.timestamp;
        if let Some(rest) = frame.message.strip_prefix('#') {
            let n: u32 = rest
                .split(' ')
                .next()
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| format!("frame {i}: {}", frame.message))?;
            let (level, text) = expected_frame(n);
            if frame.level != level || frame.message != text {
                return Err(format!(
                    "frame #{n}: decoded `{} {}`, logged `{level} {text}`",
                    frame.level, frame.message
                ));
            }
            if !frame.location.contains("defmt-recorder.rs:") {
                return Err(format!("frame #{n}: location {}", frame.location));
            }
            if main.last_key_value().is_some_and(|(&m, _)| m >= n) {
                return Err(format!("frame #{n} out of order"));
            }
            main.insert(n, i);
        } else if let Some(rest) = frame.message.strip_prefix("irq #") {
            let k: u32 = rest
                .strip_suffix(" from PendSV")
                .and_then(|k| k.parse().ok())
                .ok_or_else(|| format!("frame {i}: {}", frame.message))?;
            if irq.last().is_some_and(|&m| m >= k) {
                return Err(format!("interrupt frame #{k} out of order"));
            }
            irq.push(k);
        } else if let Some(rest) = frame.message.strip_prefix("logfmt-defmt: ") {
            let count: u32 = rest
                .strip_suffix(" frames dropped (staging buffer full)")
                .and_then(|c| c.parse().ok())
                .ok_or_else(|| format!("frame {i}: {}", frame.message))?;
            reported_dropped += count;
        } else {
            return Err(format!("frame {i}: unexpected `{}`", frame.message));
        }
    }
    // Every acknowledged frame is there.
    let acked: Vec<u32> = expected
        .acked
        .iter()
        .flat_map(|&(from, to)| from..to)
        .chain(expected.final_from..expected.logged)
        .filter(|n| !expected.dropped.contains(n))
        .collect();
    let missing: Vec<u32> = acked
        .iter()
        .copied()
        .filter(|n| !main.contains_key(n))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "{} acknowledged frames missing: {:?}",
            missing.len(),
            &missing[..missing.len().min(20)]
        ));
    }
    if let Some(n) = expected.dropped.iter().find(|n| main.contains_key(n)) {
        return Err(format!("frame #{n} was counted dropped, yet it is there"));
    }
    let irq_acked: Vec<u32> = expected
        .irq_acked
        .iter()
        .flat_map(|&(from, to)| from..to)
        .collect();
    let irq_missing = irq_acked.iter().filter(|k| !irq.contains(k)).count();
    if irq_missing > 0 {
        return Err(format!(
            "{irq_missing} acknowledged interrupt frames missing"
        ));
    }
    if reported_dropped != expected.dropped_count
        || expected.dropped.len() as u32 != expected.dropped_count
        || expected.dropped_count == 0
    {
        return Err(format!(
            "dropped frames: the log reports {reported_dropped}, the firmware counted {} ({} \
             noted)",
            expected.dropped_count,
            expected.dropped.len()
        ));
    }
    Ok(format!(
        "{} frames decoded ({} of the main loop, {} from the interrupt; every one of the {} \
         acknowledged there, in order, as logged), {} dropped and reported, the panic last",
        frames.len() + 1,
        main.len(),
        irq.len(),
        acked.len() + irq_acked.len(),
        reported_dropped
    ))
}

/// `cargo xtask demo`'s opening: the flight recorder on `machine`, then its defmt log as
/// `logfmt defmt` decodes it from the flash image after the power cuts (its start and its end),
/// and the check's verdict.
pub(crate) fn show(machine: &Machine, elf: &Path, logfmt: &Path) -> Result {
    let verdict = check(machine, elf, logfmt)?;
    let dir = dir(machine.board);
    let decoded = std::fs::read_to_string(dir.join("decoded.txt"))
        .map_err(|e| Error::Failed(format!("decoded.txt: {e}")))?;
    let lines: Vec<&str> = decoded.lines().collect();
    println!(
        "\n$ logfmt defmt --elf {} {}",
        elf.display(),
        dir.join("defmt-flash.img").display()
    );
    let (head, tail) = (24.min(lines.len()), 8.min(lines.len()));
    for line in &lines[..head] {
        println!("  {line}");
    }
    if lines.len() > head + tail {
        println!("  ... ({} more lines) ...", lines.len() - head - tail);
        for line in &lines[lines.len() - tail..] {
            println!("  {line}");
        }
    }
    println!("\n  {verdict}");
    Ok(())
}

/// Where the flight recorder's files are kept for `board`.
pub(crate) fn dir(board: &str) -> PathBuf {
    project_root()
        .join("target")
        .join("defmt-recorder")
        .join(board)
}

#[cfg(test)]
mod tests {
    /// The README's "ten lines" are those `defmt-minimal` builds (between its `README`
    /// markers), line for line.
    #[test]
    fn the_readme_shows_the_lines_the_minimal_firmware_builds() {
        let root = crate::cmd::project_root();
        let firmware =
            std::fs::read_to_string(root.join("tests/firmware/src/bin/defmt-minimal.rs"))
                .expect("defmt-minimal.rs");
        let readme =
            std::fs::read_to_string(root.join("crates/logfmt-defmt/README.md")).expect("README.md");
        let lines: Vec<&str> = firmware
            .lines()
            .skip_while(|l| !l.contains("// README begin"))
            .skip(1)
            .take_while(|l| !l.contains("// README end"))
            .map(|l| l.strip_prefix("    ").unwrap_or(l))
            .collect();
        assert!(
            !lines.is_empty() && lines.len() <= 10,
            "{} lines",
            lines.len()
        );
        let block = format!("```rust\n{}\n```", lines.join("\n"));
        assert!(readme.contains(&block), "the README lacks:\n{block}");
    }
}
