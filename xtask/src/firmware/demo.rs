//! `cargo xtask demo [--host]`: first (under QEMU) a firmware's own defmt log, kept in flash by
//! `logfmt-defmt` through power cuts and a panic and decoded with its ELF; then the sensor logger of `tests/firmware` keeps a ring log in
//! simulated NOR flash that wraps four times and loses power thirteen times (mid-record,
//! mid-flush, in ring headers, mid-erase), rebooting after each, under QEMU (or on the host);
//! then the `logfmt` CLI reads the flash image, and the records it reads must be exactly the
//! newest acknowledged ones, in order (and samples in flight at a cut, nothing else). The story
//! ends with an upload cycle: samples delivered from a read cursor, the cursor committed, a power
//! cut in the next commit, a reboot, and the upload resumed at the cursor.

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
    for name in ["flash.img", "acked.txt", "inflight.txt"] {
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
    // First, the firmware's own kind of log: its defmt frames, kept through power cuts and a
    // panic by logfmt-defmt, decoded with its ELF.
    if let (Some(_), Some(machine)) = (&qemu, machine) {
        ensure_targets(&[machine.target])?;
        println!(
            "\n-- 0. a firmware's own defmt log, kept in NOR flash through 18 power cuts and a \
             panic (logfmt-defmt), decoded with its ELF --"
        );
        let built = build(machine.target, &["defmt-recorder"], &[])?;
        let elf = executable(&built, "defmt-recorder")?;
        let logfmt = crate::cmd::build_release_bin("logfmt-cli", "logfmt")?;
        super::flight::show(machine, &elf, &logfmt)?;
    }
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
    let acked = read_samples(&out_dir.join("acked.txt"))?;
    let in_flight = read_samples(&out_dir.join("inflight.txt"))?;
    if acked.is_empty() {
        return Err(Error::Failed(
            "acked.txt lists no acknowledged record".to_owned(),
        ));
    }
    let bytes = std::fs::read(&image)
        .map_err(|e| Error::Failed(format!("the demo saved no flash image: {e}")))?;
    let ring = RingShape::of(&bytes)?;

    // 2. The host tool on the image.
    println!(
        "\n-- 2. the logfmt CLI on the flash image ({}, {} bytes: a ring of {} blocks) --",
        relative(&image),
        bytes.len(),
        ring.blocks
    );
    let logfmt = crate::cmd::build_release_bin("logfmt-cli", "logfmt")?;
    let image_arg = relative(&image);
    let with_erased = |sub: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = sub.iter().map(|s| (*s).to_owned()).collect();
        args.splice(1..1, ["--erased".to_owned(), "ff".to_owned()]);
        args.push(image_arg.clone());
        args
    };
    show(&logfmt, &with_erased(&["stats"]), &[0, 1])?;
    let verify = show(&logfmt, &with_erased(&["verify"]), &[0, 1])?;
    if verify == 1 {
        println!("(verify exits 1: it reports damage)");
    }
    // The block map, in the terminal and as a picture beside the image.
    let picture = out_dir.join("flash-map.html");
    let picture_arg = relative(&picture);
    show(
        &logfmt,
        &with_erased(&["map", "--force", "--html", &picture_arg]),
        &[0],
    )?;
    let json = run_capture(&logfmt, &with_erased(&["cat", "--output", "json"]))?;
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

    // 3. The records read are the newest acknowledged ones.
    println!(
        "\n-- 3. `logfmt cat --output json` read {} records: they must be the newest \
         acknowledged samples (acked.txt), in order, with nothing else but samples in flight \
         at a power cut (inflight.txt) --",
        records.len()
    );
    let retained = check_retained(&records, &acked, &in_flight, &ring)?;
    let show_record = |(offset, text): &(u64, String), what: &str| {
        println!("  @ {offset:>6}  {what:<12} {}", abbreviate(text));
    };
    for (i, record) in records.iter().enumerate() {
        if i < 3 || i + 3 >= records.len() {
            let what = if acked.iter().any(|a| a.text == record.1) {
                "acknowledged"
            } else {
                "in flight"
            };
            show_record(record, what);
        } else if i == 3 {
            println!("  ...");
        }
    }
    println!(
        "\nthe ring holds the newest {} of the {} acknowledged samples (samples {}..={}), in \
         order{}; it had to keep those from sample {} on (the newest {} KiB of log). \
         {} older acknowledged samples aged out.",
        retained.acked,
        acked.len(),
        retained.first_sample,
        retained.last_sample,
        match retained.in_flight {
            0 => String::new(),
            n => format!(", with {n} sample(s) in flight at a power cut that survived whole"),
        },
        retained.must_sample,
        ring.keep / 1024,
        acked.len() - retained.acked
    );
    println!(
        "\nthe picture of the flash image, every block and its byte spans: {}",
        relative(&picture)
    );
    Ok(())
}

/// A sample line of `acked.txt` or `inflight.txt`: `offset<TAB>sample<TAB>text`, the offset
/// `-` if not known (a sample in flight whose record's place was never returned).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Sample {
    offset: Option<u64>,
    sample: u64,
    text: String,
}

fn parse_sample(line: &str) -> Option<Sample> {
    let mut fields = line.splitn(3, '\t');
    let offset = match fields.next()? {
        "-" => None,
        n => Some(n.parse().ok()?),
    };
    let sample = fields.next()?.parse().ok()?;
    let text = fields.next()?.to_owned();
    Some(Sample {
        offset,
        sample,
        text,
    })
}

fn read_samples(path: &Path) -> Result<Vec<Sample>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Failed(format!("the demo saved no {}: {e}", relative(path))))?;
    text.lines()
        .map(|line| {
            parse_sample(line).ok_or_else(|| {
                Error::Failed(format!("{}: unexpected line {line:?}", relative(path)))
            })
        })
        .collect()
}

/// The ring's geometry, from the image: its blocks and the bytes of log it always keeps (all
/// but the erase group being written and the one erased ahead of it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RingShape {
    len: u64,
    blocks: u64,
    keep: u64,
}

impl RingShape {
    const BLOCK: usize = 32 * 1024;

    /// The geometry the ring headers of `image` give (blocks per erase group: byte 17 of a
    /// block's 19-byte ring header, type 0xB0).
    fn of(image: &[u8]) -> Result<Self> {
        let blocks = image.len() / Self::BLOCK;
        let group = image
            .chunks(Self::BLOCK)
            .find_map(|b| match b.get(..19)? {
                [_, _, _, _, 12, 0, 0xB0, rest @ ..] => Some(usize::from(rest[10])),
                _ => None,
            })
            .ok_or_else(|| Error::Failed("the flash image has no ring header".to_owned()))?;
        if blocks < 2 * group || group == 0 {
            return Err(Error::Failed(format!(
                "a ring of {blocks} blocks in groups of {group}?"
            )));
        }
        Ok(Self {
            len: image.len() as u64,
            blocks: blocks as u64,
            keep: ((blocks - 2 * group) * Self::BLOCK) as u64,
        })
    }
}

/// What the check of the records read found.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Retained {
    acked: usize,
    in_flight: usize,
    first_sample: u64,
    last_sample: u64,
    must_sample: u64,
}

/// Checks `records` (offset, text), as `logfmt cat` read them from the ring image, against the
/// samples the demo logged: each is an acknowledged sample where it was written, or a sample in
/// flight at a power cut; all in order; the acknowledged ones consecutive, up to the newest,
/// and from the oldest the ring had to keep (those that start in the newest `keep` bytes of
/// log) or earlier.
fn check_retained(
    records: &[(u64, String)],
    acked: &[Sample],
    in_flight: &[Sample],
    ring: &RingShape,
) -> Result<Retained> {
    let fail = |why: String| Err(Error::Failed(why));
    let mut first_ack: Option<usize> = None;
    let mut next_ack: Option<usize> = None;
    let mut last_sample = None;
    let mut in_flight_read = 0;
    for (offset, text) in records {
        let ack = acked
            .iter()
            .position(|a| a.offset == Some(*offset) && a.text == *text);
        let sample = match ack {
            Some(k) => {
                if next_ack.is_some_and(|next| next != k) {
                    return fail(format!(
                        "acknowledged sample {} is missing from the image (the record at \
                         {offset} follows)",
                        next_ack.and_then(|n| acked.get(n)).map_or(0, |a| a.sample)
                    ));
                }
                first_ack.get_or_insert(k);
                next_ack = Some(k + 1);
                acked[k].sample
            }
            None => match in_flight
                .iter()
                .find(|s| s.text == *text && s.offset.is_none_or(|o| o == *offset))
            {
                Some(s) => {
                    in_flight_read += 1;
                    s.sample
                }
                None => {
                    return fail(format!(
                        "the record at {offset} was never logged there: {}",
                        abbreviate(text)
                    ));
                }
            },
        };
        if last_sample.is_some_and(|last| sample <= last) {
            return fail(format!("sample {sample} at {offset} is out of order"));
        }
        last_sample = Some(sample);
    }
    let (Some(first), Some(next)) = (first_ack, next_ack) else {
        return fail("no acknowledged sample in the image".to_owned());
    };
    if next != acked.len() {
        return fail(format!(
            "the newest acknowledged samples are missing, from sample {}",
            acked[next].sample
        ));
    }
    // Unrolled offsets (laps counted): an offset smaller than the one before is a lap later.
    let mut base = 0;
    let mut last = 0;
    let positions: Vec<u64> = acked
        .iter()
        .map(|a| {
            let offset = a.offset.unwrap_or(last);
            if offset < last {
                base += ring.len;
            }
            last = offset;
            base + offset
        })
        .collect();
    // The log ends after the newest record (its chunk headers, a ring header and a trailer if
    // it crosses a block boundary, padding to the word): a bound.
    let newest = acked.len() - 1;
    let end = positions[newest] + acked[newest].text.len() as u64 + 64;
    let must = positions.partition_point(|&p| p + ring.keep < end);
    if first > must {
        return fail(format!(
            "the ring must still hold acknowledged sample {}, but it starts at sample {}",
            acked[must.min(newest)].sample,
            acked[first].sample
        ));
    }
    Ok(Retained {
        acked: next - first,
        in_flight: in_flight_read,
        first_sample: acked[first].sample,
        last_sample: acked[newest].sample,
        must_sample: acked[must.min(newest)].sample,
    })
}

/// `text` cut to 60 characters.
fn abbreviate(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_owned(),
    }
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

    fn sample(offset: Option<u64>, n: u64) -> Sample {
        Sample {
            offset,
            sample: n,
            text: format!("t={}ms temp=21.00C", n * 1000),
        }
    }

    /// A ring of 4 blocks (128 KiB) keeping 64 KiB; samples 0..12 every 16 KiB, a lap and a
    /// half; 5 in flight.
    fn scene() -> (RingShape, Vec<Sample>, Vec<Sample>) {
        let ring = RingShape {
            len: 4 * 32 * 1024,
            blocks: 4,
            keep: 2 * 32 * 1024,
        };
        let at = |n: u64| Some(n * 16 * 1024 % ring.len + 19);
        let acked = (0..12)
            .filter(|&n| n != 5)
            .map(|n| sample(at(n), n))
            .collect();
        (ring, acked, vec![sample(at(5), 5), sample(None, 12)])
    }

    fn read(samples: &[&Sample]) -> Vec<(u64, String)> {
        samples
            .iter()
            .map(|s| (s.offset.unwrap_or(7), s.text.clone()))
            .collect()
    }

    #[test]
    fn retained_records_are_the_newest_acknowledged_ones() {
        let (ring, acked, in_flight) = scene();
        // From sample 4 (5 was in flight); the newest 64 KiB begin with sample 8 (16 KiB
        // apart, the last at 11): the ring must keep those.
        let newest: Vec<&Sample> = acked.iter().filter(|s| s.sample >= 4).collect();
        let found = check_retained(&read(&newest), &acked, &in_flight, &ring).unwrap();
        assert_eq!((found.acked, found.in_flight), (7, 0));
        assert_eq!((found.first_sample, found.last_sample), (4, 11));
        assert_eq!(found.must_sample, 8);
        let kept: Vec<&Sample> = acked.iter().filter(|s| s.sample >= 8).collect();
        assert!(check_retained(&read(&kept), &acked, &in_flight, &ring).is_ok());
        // More of the older ones, and the one in flight that survived, in its place.
        let mut more: Vec<&Sample> = acked.iter().filter(|s| s.sample >= 2).collect();
        more.insert(3, &in_flight[0]);
        let found = check_retained(&read(&more), &acked, &in_flight, &ring).unwrap();
        assert_eq!(
            (found.acked, found.in_flight, found.first_sample),
            (9, 1, 2)
        );

        let fails = |records: Vec<&Sample>| {
            check_retained(&read(&records), &acked, &in_flight, &ring).is_err()
        };
        // One acknowledged sample missing in the middle, the newest missing, the ring not
        // keeping what it must, out of order, a record never logged, another's offset.
        assert!(fails(
            newest.iter().copied().filter(|s| s.sample != 7).collect()
        ));
        assert!(fails(
            newest.iter().copied().filter(|s| s.sample != 11).collect()
        ));
        assert!(fails(
            newest.iter().copied().filter(|s| s.sample >= 9).collect()
        ));
        let mut swapped = newest.clone();
        swapped.swap(1, 2);
        assert!(fails(swapped));
        let stranger = sample(Some(19), 99);
        let mut extra = newest.clone();
        extra.push(&stranger);
        assert!(fails(extra));
        let moved = Sample {
            offset: Some(3),
            ..newest[0].clone()
        };
        let mut elsewhere = newest.clone();
        elsewhere[0] = &moved;
        assert!(fails(elsewhere));
        assert!(fails(vec![]));
    }

    #[test]
    fn sample_lines_and_ring_headers() {
        assert_eq!(
            parse_sample("19\t0\tt=0ms temp=20.00C hum=40.0%"),
            Some(Sample {
                offset: Some(19),
                sample: 0,
                text: "t=0ms temp=20.00C hum=40.0%".to_owned()
            })
        );
        assert_eq!(parse_sample("-\t7\tt=7000ms a\tb").unwrap().offset, None);
        assert_eq!(
            parse_sample("-\t7\tt=7000ms a\tb").unwrap().text,
            "t=7000ms a\tb"
        );
        assert_eq!(parse_sample("x\t7\tt"), None);
        assert_eq!(parse_sample("19\t7"), None);
        // Four blocks, a ring header (group 1) in block 2 only.
        let mut image = vec![0xFF; 4 * 32 * 1024];
        let header = [0, 0, 0, 0, 12, 0, 0xB0, 1, 0, 0, 0, 0, 0, 0, 0, 4, 0, 1, 3];
        image[2 * 32 * 1024..][..19].copy_from_slice(&header);
        let shape = RingShape::of(&image).unwrap();
        assert_eq!((shape.blocks, shape.keep), (4, 64 * 1024));
        image[2 * 32 * 1024 + 17] = 2;
        assert_eq!(RingShape::of(&image).unwrap().keep, 0);
        assert!(RingShape::of(&vec![0xFF; 4 * 32 * 1024]).is_err());
    }
}
