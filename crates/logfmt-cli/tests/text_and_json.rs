//! Every reporting command's text and `--json` come from one report: on a damaged log and on
//! a ring image, the counts the text shows are the counts the JSON holds.

mod common;
#[path = "common/ring_image.rs"]
mod ring_image;

use std::path::{Path, PathBuf};

use common::*;
use ring_image::{Spec, run, sample};
use serde_json::Value;

/// A log of 3000 records with two bytes flipped in two blocks, and a ring image, in `dir`.
fn logs(dir: &Path) -> Vec<PathBuf> {
    let damaged = dir.join("damaged.log");
    let lines: String = (1..=3000)
        .map(|i| format!("{i} a record long enough to fill a few blocks\n"))
        .collect();
    let written = logfmt(&["write", p(&damaged)], lines.as_bytes());
    assert_eq!(status(&written), 0, "{}", stderr(&written));
    let mut bytes = std::fs::read(&damaged).expect("reads the log");
    bytes[40_000] ^= 0xff;
    bytes[70_000] ^= 0x01;
    std::fs::write(&damaged, bytes).expect("writes the damaged log");
    let ring = dir.join("ring.img");
    std::fs::write(&ring, run::<4096>(&Spec::new(5, 1_500, 29), sample).image)
        .expect("writes the ring image");
    vec![damaged, ring]
}

/// `logfmt args... file` and `logfmt args... --json file`: the text and the JSON lines.
fn both(args: &[&str], file: &Path) -> (String, Vec<Value>) {
    let run = |json: bool| {
        let mut all: Vec<&str> = args.to_vec();
        if json {
            all.push("--json");
        }
        all.push(p(file));
        logfmt(&all, b"")
    };
    let (text, json) = (run(false), run(true));
    assert_eq!(status(&text), status(&json), "{args:?}: the same status");
    assert_eq!(stderr(&text), stderr(&json), "{args:?}: the same warnings");
    let lines = stdout(&json)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    (stdout(&text), lines)
}

/// The number just before `word` in `text` (`1850 records` -> 1850 for "records").
fn number_before(text: &str, word: &str) -> u64 {
    let at = text
        .find(&format!(" {word}"))
        .unwrap_or_else(|| panic!("no {word:?} in {text:?}"));
    let digits: String = text[..at]
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits.parse().expect("a number")
}

/// The number after `word ` in `text` (`total 1850` -> 1850 for "total").
fn number_after(text: &str, word: &str) -> u64 {
    let at = text
        .find(&format!("{word} "))
        .unwrap_or_else(|| panic!("no {word:?} in {text:?}"))
        + word.len()
        + 1;
    let digits: String = text[at..]
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().expect("a number")
}

fn u(value: &Value) -> u64 {
    value.as_u64().expect("a count")
}

#[test]
fn verify_says_in_text_what_its_json_holds() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for log in logs(dir.path()) {
        let (text, json) = both(&["verify"], &log);
        let [json] = &json[..] else {
            panic!("one object")
        };
        let head = text.lines().next().expect("a line");
        assert_eq!(
            number_before(head, "records"),
            u(&json["records"]),
            "{head}"
        );
        assert_eq!(
            number_before(head, "bytes of payload"),
            u(&json["payload_bytes"])
        );
        let corruptions = json["corruptions"].as_array().expect("a list");
        if corruptions.is_empty() {
            assert!(head.ends_with("no corruption"), "{head}");
        } else {
            assert_eq!(
                number_before(head, "bytes dropped"),
                u(&json["dropped_bytes"])
            );
            assert_eq!(number_before(head, "corruptions"), corruptions.len() as u64);
        }
        let listed: Vec<u64> = text
            .lines()
            .filter_map(|line| line.strip_prefix("  offset "))
            .map(|rest| {
                rest.split(':')
                    .next()
                    .expect("an offset")
                    .trim()
                    .parse()
                    .expect("n")
            })
            .collect();
        let offsets: Vec<u64> = corruptions.iter().map(|c| u(&c["offset"])).collect();
        assert_eq!(listed, offsets, "{}", log.display());
    }
}

#[test]
fn stats_says_in_text_what_its_json_holds() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for log in logs(dir.path()) {
        let (text, json) = both(&["stats"], &log);
        let [json] = &json[..] else {
            panic!("one object")
        };
        let row = |key: &str| -> &str {
            text.lines()
                .find_map(|line| line.trim_start().strip_prefix(key))
                .unwrap_or_else(|| panic!("no row {key}"))
                .trim_start()
        };
        assert_eq!(number_before(row("size"), "bytes"), u(&json["bytes"]));
        assert_eq!(number_before(row("size"), "blocks"), u(&json["blocks"]));
        assert!(row("records").starts_with(&format!("{},", json["records"])));
        assert_eq!(
            number_before(row("records"), "bytes"),
            u(&json["payload_bytes"])
        );
        let chunks = &json["chunks"];
        for (name, key) in [("FULL", "full"), ("FIRST", "first"), ("LAST", "last")] {
            assert_eq!(number_after(row("chunks"), name), u(&chunks[key]), "{name}");
        }
        let regions = u(&json["damage"]["regions"]);
        if regions == 0 {
            assert_eq!(row("damage"), "none");
        } else {
            assert_eq!(number_before(row("damage"), "region"), regions);
            assert_eq!(
                number_before(row("damage"), "bytes"),
                u(&json["damage"]["bytes"])
            );
        }
        assert_eq!(text.contains("\n  ring "), !json["ring"].is_null());
    }
}

#[test]
fn cat_prints_a_line_per_record_in_text_and_an_object_per_record_in_json() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for log in logs(dir.path()) {
        let text = logfmt(&["cat", "--decode", "raw", "-o", "hex", p(&log)], b"");
        let json = logfmt(&["cat", "--decode", "raw", "--json", p(&log)], b"");
        assert_eq!(stderr(&text), stderr(&json), "the same warnings");
        let hex: Vec<String> = stdout(&json)
            .lines()
            .map(|line| {
                let record: Value = serde_json::from_str(line).expect("a JSON line");
                record["hex"].as_str().expect("hex").to_owned()
            })
            .collect();
        let text = stdout(&text);
        let lines: Vec<&str> = text.lines().collect();
        assert!(!hex.is_empty());
        assert_eq!(lines.len(), hex.len(), "{}", log.display());
        assert!(lines.iter().zip(&hex).all(|(line, hex)| line == hex));
    }
}

#[test]
fn chunks_map_and_split_count_alike_in_text_and_json() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for log in logs(dir.path()) {
        let (text, json) = both(&["chunks"], &log);
        let summary = json.last().expect("a summary");
        let last = text.lines().last().expect("a summary line");
        assert_eq!(
            number_before(last, "chunks"),
            u(&summary["chunks"]),
            "{last}"
        );
        assert_eq!(number_after(last, "FULL"), u(&summary["full"]));
        let listed: Vec<u64> = json
            .iter()
            .filter(|o| o["kind"] != "summary")
            .filter_map(|o| o["offset"].as_u64())
            .collect();
        // Every row but the summary line, which begins with the file's size.
        let lines: Vec<&str> = text.lines().collect();
        let rows: Vec<u64> = lines[..lines.len() - 1]
            .iter()
            .filter_map(|line| line.split_whitespace().next()?.parse().ok())
            .collect();
        assert_eq!(rows, listed, "{}", log.display());

        let (text, json) = both(&["map"], &log);
        let [json] = &json[..] else {
            panic!("one object")
        };
        let last = text.lines().last().expect("a summary line");
        assert_eq!(
            number_before(last, "records"),
            u(&json["records"]),
            "{last}"
        );
        assert!(text.starts_with(json["blocks"].as_str().expect("cells")));

        if log.extension().is_some_and(|e| e == "log") {
            let (text, json) = both(&["split", "--parts", "3"], &log);
            let [json] = &json[..] else {
                panic!("one object")
            };
            assert_eq!(number_after(&text, "total"), u(&json["records"]));
            let ranges = json["ranges"].as_array().expect("ranges");
            assert_eq!(text.lines().count(), ranges.len() + 2, "{text}");
        }
    }
}

#[test]
fn write_reports_in_json_what_verify_reads() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = dir.path().join("a.log");
    let written = logfmt(&["write", "--json", p(&log)], b"one\ntwo\nthree\n");
    assert_eq!(status(&written), 0, "{}", stderr(&written));
    let created: Value = serde_json::from_str(&stdout(&written)).expect("one JSON object");
    let appended = logfmt(&["write", "--append", "--json", p(&log)], b"four\n");
    assert_eq!(status(&appended), 0, "{}", stderr(&appended));
    let appended: Value = serde_json::from_str(&stdout(&appended)).expect("one JSON object");
    assert_eq!(created["file"], p(&log));
    assert_eq!(
        (u(&created["records"]), u(&created["payload_bytes"])),
        (3, 11)
    );
    assert_eq!(created["appended_at"], Value::Null);
    assert_eq!(u(&appended["appended_at"]), u(&created["bytes"]));
    assert_eq!(
        (u(&appended["records"]), u(&appended["payload_bytes"])),
        (1, 4)
    );
    let verified = logfmt(&["verify", "--json", p(&log)], b"");
    let verified: Value = serde_json::from_str(&stdout(&verified)).expect("one JSON object");
    assert_eq!(u(&verified["records"]), 4);
    assert_eq!(u(&verified["payload_bytes"]), 15);
    let len = std::fs::metadata(&log).expect("the log").len();
    assert_eq!(u(&appended["bytes"]), len);
    // Standard output holds the log with `-`: no room for the report.
    let refused = logfmt(&["write", "--json", "-"], b"x\n");
    assert_eq!(status(&refused), 2);
    assert!(stdout(&refused).is_empty());
}
