//! `logfmt map`: the block map agrees with `verify` on the LevelDB vectors, a damaged log and a
//! ring image; letters only without a terminal; the picture is one self-contained file, never
//! written over an existing file unless told, nor over a file it reads.

mod common;
#[path = "common/ring_image.rs"]
mod ring_image;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::Value;

const BLOCK: u64 = 32_768;

/// The LevelDB vectors (`tests/leveldb`, a link the package carries as files).
fn vector_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/leveldb")
}

fn vectors() -> Vec<PathBuf> {
    let dir = vector_dir();
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the vectors")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    logs
}

/// A log of 2000 records written by `logfmt write` into `dir`, with one byte flipped in its
/// first block: a damaged log.
fn damaged_log(dir: &Path) -> PathBuf {
    let path = dir.join("000007.log");
    let lines: String = (0..2000).map(|i| format!("record {i:05}\n")).collect();
    let output = logfmt(&["write", p(&path)], lines.as_bytes());
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let mut bytes = std::fs::read(&path).expect("reads");
    bytes[20_000] ^= 0x40;
    std::fs::write(&path, bytes).expect("writes");
    path
}

fn map_json(path: &Path) -> Value {
    let output = logfmt(&["map", "--json", p(path)], b"");
    assert_eq!(
        status(&output),
        0,
        "{}: {}",
        path.display(),
        stderr(&output)
    );
    json(&output)
}

fn verify_json(path: &Path) -> Value {
    json(&logfmt(&["verify", "--json", p(path)], b""))
}

/// The blocks `verify` says are damaged, by its corruptions' offsets.
fn damaged_blocks(verify: &Value) -> Vec<u64> {
    let mut blocks: Vec<u64> = verify["corruptions"]
        .as_array()
        .expect("corruptions")
        .iter()
        .map(|c| c["offset"].as_u64().expect("an offset") / BLOCK)
        .collect();
    blocks.sort_unstable();
    blocks.dedup();
    blocks
}

#[test]
fn the_map_of_every_vector_agrees_with_verify() {
    let logs = vectors();
    assert_eq!(logs.len(), 27);
    for log in logs {
        let map = map_json(&log);
        let verify = verify_json(&log);
        let name = log.display();
        let len = std::fs::metadata(&log).expect("metadata").len();
        let blocks = map["blocks"].as_str().expect("blocks");
        assert_eq!(
            blocks.len() as u64,
            len.div_ceil(BLOCK),
            "{name}: one letter a block"
        );
        for key in ["records", "payload_bytes", "dropped_bytes"] {
            assert_eq!(map[key], verify[key], "{name}: {key}");
        }
        for block in damaged_blocks(&verify) {
            assert_eq!(
                blocks.as_bytes()[block as usize],
                b'X',
                "{name}: block {block}"
            );
        }
        if verify["corruptions"].as_array().expect("list").is_empty() {
            assert!(!blocks.contains('X'), "{name}: {blocks}");
        }
    }
}

#[test]
fn known_vectors_draw_as_expected() {
    let dir = vector_dir();
    for (name, expected) in [
        ("checksum_mismatch.log", "X"),
        ("fragmentation.log", "....."),
        ("all_zero_3_blocks.log", "000"),
        ("partial_last.log", "TT"),
        ("error_joins_records.log", "XXX"),
    ] {
        let map = map_json(&dir.join(name));
        assert_eq!(map["blocks"], expected, "{name}");
    }
}

#[test]
fn a_damaged_log_is_damaged_where_verify_says() {
    let dir = tempfile::tempdir().expect("a directory");
    let log = damaged_log(dir.path());
    let map = map_json(&log);
    let verify = verify_json(&log);
    let damaged = damaged_blocks(&verify);
    assert!(!damaged.is_empty());
    let blocks = map["blocks"].as_str().expect("blocks");
    for (index, letter) in blocks.bytes().enumerate() {
        let expected = if damaged.contains(&(index as u64)) {
            b'X'
        } else {
            b'.'
        };
        assert_eq!(letter, expected, "block {index} of {blocks}");
    }
    assert_eq!(
        map["damage"][0]["offset"],
        verify["corruptions"][0]["offset"]
    );
    assert!(
        map["damage"][0]["gloss"]
            .as_str()
            .is_some_and(|g| !g.is_empty())
    );
}

#[test]
fn a_ring_image_shows_its_newest_and_oldest_blocks() {
    let dir = tempfile::tempdir().expect("a directory");
    let spec = ring_image::Spec::new(6, 1_500, 23);
    let run = ring_image::run::<4096>(&spec, ring_image::sample);
    let image = dir.path().join("ring.img");
    std::fs::write(&image, &run.image).expect("writes");
    let map = map_json(&image);
    let verify = verify_json(&image);
    let ring = &verify["ring"];
    assert_eq!(map["ring"]["newest"], ring["newest"]);
    assert_eq!(map["ring"]["oldest"], ring["oldest"]);
    assert_eq!(map["records"], verify["records"]);
    let blocks = map["blocks"].as_str().expect("blocks").as_bytes();
    let newest = ring["newest"].as_u64().expect("newest") as usize;
    let oldest = ring["oldest"].as_u64().expect("oldest") as usize;
    assert_eq!(blocks[newest], b'H', "{}", map["blocks"]);
    if oldest != newest {
        assert_eq!(blocks[oldest], b'O', "{}", map["blocks"]);
    }
    assert!(
        blocks.contains(&b'-'),
        "the group erased ahead: {}",
        map["blocks"]
    );
}

#[test]
fn without_a_terminal_the_map_is_letters_only() {
    let dir = tempfile::tempdir().expect("a directory");
    let log = damaged_log(dir.path());
    let output = logfmt(&["map", "--width", "16", p(&log)], b"");
    assert_eq!(status(&output), 0);
    let text = stdout(&output);
    assert!(!text.contains('\x1b'), "{text}");
    assert!(
        text.lines().next().is_some_and(|l| l.contains('X')),
        "{text}"
    );
    assert!(text.contains("X damaged"), "the legend: {text}");
    assert!(text.contains("corruption"), "the summary: {text}");
}

#[test]
fn color_always_colours_and_never_does_not() {
    let dir = tempfile::tempdir().expect("a directory");
    let log = damaged_log(dir.path());
    let run = |args: &[&str], no_color: bool| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_logfmt"));
        command.args(args).arg(p(&log));
        if no_color {
            command.env("NO_COLOR", "1");
        } else {
            command.env_remove("NO_COLOR");
        }
        let output = command.output().expect("runs logfmt");
        assert_eq!(status(&output), 0, "{}", stderr(&output));
        stdout(&output)
    };
    // `always`: colours into a pipe, and whatever NO_COLOR says (the flag is the user's word).
    for no_color in [false, true] {
        let text = run(&["map", "--color", "always"], no_color);
        assert!(text.contains("\x1b[48;5;160;"), "{text}");
    }
    // `never`, and `auto` off a terminal: letters only.
    for args in [
        &["map", "--color", "never"][..],
        &["map", "--color", "auto"],
        &["map"],
    ] {
        let text = run(args, false);
        assert!(!text.contains('\x1b'), "{args:?}: {text}");
    }
    // A bad value is a usage error.
    let output = logfmt(&["map", "--color", "sometimes", p(&log)], b"");
    assert_eq!(status(&output), 2);
}

#[test]
fn the_picture_is_self_contained_and_never_replaces_a_file_unasked() {
    let dir = tempfile::tempdir().expect("a directory");
    let log = damaged_log(dir.path());
    let out = dir.path().join("map.html");
    let output = logfmt(&["map", "--html", p(&out), p(&log)], b"");
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let html = std::fs::read_to_string(&out).expect("the picture");
    assert!(!html.contains("<script"), "no script");
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "nothing from elsewhere"
    );
    let verify = verify_json(&log);
    let block = damaged_blocks(&verify)[0];
    assert!(
        html.contains(&format!("id=\"f0-b{block}\"")),
        "the damaged block's row"
    );
    assert!(
        html.contains(&format!("href=\"#f0-b{block}\"")),
        "the damage list links to it"
    );
    assert!(html.contains("checksum"), "span details");

    // An existing file is kept without --force; with it, replaced.
    std::fs::write(&out, b"keep me").expect("writes");
    let output = logfmt(&["map", "--html", p(&out), p(&log)], b"");
    assert_ne!(status(&output), 0);
    assert_eq!(std::fs::read(&out).expect("reads"), b"keep me");
    let output = logfmt(&["map", "--force", "--html", p(&out), p(&log)], b"");
    assert_eq!(status(&output), 0, "{}", stderr(&output));

    // Never over a file it reads, even with --force.
    let copy = dir.path().join("copy.log");
    std::fs::copy(&log, &copy).expect("copies");
    let before = std::fs::read(&copy).expect("reads");
    let output = logfmt(&["map", "--force", "--html", p(&copy), p(&copy)], b"");
    assert_ne!(status(&output), 0);
    assert_eq!(std::fs::read(&copy).expect("reads"), before);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .expect("lists")
        .map(|e| e.expect("entry").file_name())
        .filter(|n| n.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
