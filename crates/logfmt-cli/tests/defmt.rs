//! `logfmt defmt`: real defmt frames — the flash image the QEMU flight recorder
//! (`tests/firmware`'s `defmt-recorder`, `cargo xtask qemu`) saved, with its ELF
//! (`tests/data/defmt/`, see its README) — decoded as `defmt-print` prints them and as JSON;
//! records that are not frames of the firmware told in their place, never a crash.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::Value;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/defmt")
        .join(name)
}

/// Whether the fixtures are here: a published package of the CLI holds neither the
/// repository's `tests/data` nor the firmware, so there these tests say so and check nothing.
fn fixtures_here() -> bool {
    let here = image().exists() && elf().exists();
    if !here {
        eprintln!("tests/data/defmt is not here (a published package): nothing to check");
    }
    here
}

fn elf() -> PathBuf {
    data("defmt-recorder.elf")
}

fn image() -> PathBuf {
    data("defmt-flash.img")
}

/// A plain log holding `records`.
fn plain_log(dir: &Path, records: &[Vec<u8>]) -> PathBuf {
    let path = dir.join("frames.log");
    let out = logfmt(&["write", "--input", "framed", p(&path)], &framed(records));
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    path
}

/// The records of the image, raw.
fn image_records() -> Vec<Vec<u8>> {
    let out = logfmt(&["cat", "--output", "framed", p(&image())], b"");
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    unframe(&out.stdout)
}

#[test]
fn the_flight_recorders_image_decodes_as_defmt_print_prints_it() -> TestResult {
    if !fixtures_here() {
        return Ok(());
    }
    let out = logfmt(&["defmt", "--elf", p(&elf()), p(&image())], b"");
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    // Two lines a frame: `TIMESTAMP LEVEL MESSAGE`, `└─ MODULE @ FILE:LINE`.
    assert!(
        lines.len() > 100 && lines.len().is_multiple_of(2),
        "{}",
        lines.len()
    );
    assert!(
        lines[0].ends_with(" INFO  #0 integers: u8=0 i16=0 u64=0 i64=0 usize=0"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("└─ defmt_recorder::log_frame @ "),
        "{}",
        lines[1]
    );
    assert!(
        lines[1].contains("src/bin/defmt-recorder.rs:"),
        "{}",
        lines[1]
    );
    let panic = lines[lines.len() - 2];
    assert!(
        panic.contains(" ERROR panicked at src/bin/defmt-recorder.rs:"),
        "{panic}"
    );
    assert!(panic.ends_with(" frames"), "{panic}");
    // Every kind of argument, as the decoder renders it.
    for kind in [
        "floats: f32=",
        "strings: str=",
        "istr=interned char=λ",
        "slices: bytes=[",
        "derived: Reading { sensor: ",
        "bitfields: low=",
        "debug2format: Calibration { gain: ",
        "hints: bool=",
        " from PendSV",
        " frames dropped (staging buffer full)",
    ] {
        assert!(text.contains(kind), "no `{kind}` frame");
    }
    Ok(())
}

#[test]
fn json_lines_carry_the_same_frames() -> TestResult {
    if !fixtures_here() {
        return Ok(());
    }
    let text = logfmt(&["defmt", "--elf", p(&elf()), p(&image())], b"");
    let out = logfmt(&["defmt", "--elf", p(&elf()), "--json", p(&image())], b"");
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let frames: Vec<Value> = stdout(&out)
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    assert_eq!(frames.len() * 2, stdout(&text).lines().count());
    let first = &frames[0];
    assert_eq!(first["level"], "INFO");
    assert_eq!(
        first["message"],
        "#0 integers: u8=0 i16=0 u64=0 i64=0 usize=0"
    );
    assert!(first["timestamp"].as_str().is_some_and(|t| t.contains('.')));
    assert!(
        first["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("defmt-recorder.rs"))
    );
    assert!(first["line"].as_u64().is_some_and(|l| l > 0));
    assert_eq!(first["module"], "defmt_recorder::log_frame");
    assert!(first["offset"].as_u64().is_some());
    // Frames of packs carry their index in the pack.
    assert!(frames.iter().any(|f| f["index"].as_u64() == Some(1)));
    let last = frames.last().expect("frames");
    assert_eq!(last["level"], "ERROR");
    assert!(
        last["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("panicked at "))
    );
    Ok(())
}

#[test]
fn an_elf_without_a_defmt_table_is_told_once_and_for_each_frame() -> TestResult {
    if !fixtures_here() {
        return Ok(());
    }
    // The logfmt binary itself: an ELF with no `.defmt` section.
    let out = logfmt(
        &["defmt", "--elf", env!("CARGO_BIN_EXE_logfmt"), p(&image())],
        b"",
    );
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no defmt table (.defmt section)"),
        "{}",
        stderr(&out)
    );
    let text = stdout(&out);
    let records = image_records();
    assert_eq!(text.lines().count(), records.len());
    for line in text.lines() {
        assert!(
            line.contains(": not a defmt frame of this firmware: the ELF has no defmt table"),
            "{line}"
        );
    }
    Ok(())
}

#[test]
fn frames_of_another_build_are_told_in_their_place_and_the_others_decode() -> TestResult {
    if !fixtures_here() {
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let records = image_records();
    let good = records[0].clone();
    let mut unknown = good.clone();
    unknown[..2].copy_from_slice(&0xFFF0u16.to_le_bytes()); // no such string index
    let short = good[..good.len() - 3].to_vec(); // its arguments cut short
    let mut long = good.clone();
    long.extend_from_slice(b"xyz"); // bytes past its arguments
    let log = plain_log(
        dir.path(),
        &[good.clone(), unknown, short, long, vec![7], good],
    );
    let out = logfmt(&["defmt", "--elf", p(&elf()), p(&log)], b"");
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2 + 4 + 2, "{text}");
    assert!(lines[0].ends_with("#0 integers: u8=0 i16=0 u64=0 i64=0 usize=0"));
    assert!(
        lines[2].contains("string index 65520 is not in the ELF's defmt table"),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].contains("end before the format string's"),
        "{}",
        lines[3]
    );
    assert!(
        lines[4].contains("do not follow its format string"),
        "{}",
        lines[4]
    );
    assert!(
        lines[5].contains("shorter than a defmt string index"),
        "{}",
        lines[5]
    );
    assert!(lines[5].ends_with("bytes: 07"), "{}", lines[5]);
    assert_eq!(lines[6], lines[0]);
    // The same in JSON: an "error" and the bytes in hex.
    let out = logfmt(&["defmt", "--json", "--elf", p(&elf()), p(&log)], b"");
    let objects: Vec<Value> = stdout(&out)
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    assert_eq!(objects.len(), 6);
    assert!(
        objects[1]["error"]
            .as_str()
            .is_some_and(|e| e.contains("65520"))
    );
    assert!(
        objects[1]["hex"]
            .as_str()
            .is_some_and(|h| h.starts_with("f0 ff "))
    );
    Ok(())
}

#[test]
fn a_file_that_is_no_elf_is_an_error() -> TestResult {
    if !fixtures_here() {
        return Ok(());
    }
    let out = logfmt(&["defmt", "--elf", p(&image()), p(&image())], b"");
    assert_eq!(status(&out), 2);
    assert!(
        stderr(&out).contains("not a firmware ELF"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).starts_with("logfmt: error: "),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("defmt-flash.img"), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    Ok(())
}
