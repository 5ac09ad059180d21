//! The host-layer commands, run as a user runs them: safe append, recovery modes, flash
//! images, dump, stats, salvage, split.

use std::fs;
use std::path::Path;

use logfmt_std::{
    LogReaderOptions, LogWriter, LogWriterOptions,
    advanced::{BLOCK_SIZE, Entry, LogReader, ReadError},
};
use serde_json::Value;

mod common;

use common::*;

fn record(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// A log of `records`, and the end offset of each.
fn log_of(records: &[Vec<u8>]) -> (Vec<u8>, Vec<u64>) {
    let mut writer = LogWriter::new(Vec::new(), &LogWriterOptions::new());
    let ends = records
        .iter()
        .map(|r| writer.add_record(r).expect("memory").end)
        .collect();
    (writer.close().expect("memory"), ends)
}

fn cat_framed(path: &Path, extra: &[&str]) -> (i32, Vec<Vec<u8>>, String) {
    let mut args = vec!["cat", "--output", "framed"];
    args.extend_from_slice(extra);
    args.push(p(path));
    let out = logfmt(&args, b"");
    (status(&out), unframe(&out.stdout), stderr(&out))
}

#[test]
fn append_refuses_a_torn_tail_and_truncates_it_when_asked() -> TestResult {
    let dir = tempfile::tempdir()?;
    let records = vec![
        record(10, 1),
        record(40_000, 2),
        record(3, 3),
        vec![],
        record(5, 4),
    ];
    let (log, ends) = log_of(&records);
    let appended = vec![record(7, 9), record(33_000, 8)];
    let path = dir.path().join("000003.log");
    // A sample of cut points: around every record end and block boundary, and a stride.
    let mut cuts: Vec<usize> = (1..log.len()).step_by(2_377).collect();
    for &end in &ends {
        cuts.extend([end as usize - 1, end as usize + 1, end as usize + 7]);
    }
    cuts.extend([BLOCK_SIZE - 1, BLOCK_SIZE, BLOCK_SIZE + 1, BLOCK_SIZE + 7]);
    cuts.retain(|&c| c < log.len() && !ends.contains(&(c as u64)));
    cuts.sort_unstable();
    cuts.dedup();
    for cut in cuts {
        let last_end = ends
            .iter()
            .copied()
            .filter(|&e| e <= cut as u64)
            .max()
            .unwrap_or(0);
        let complete: Vec<Vec<u8>> = records
            .iter()
            .zip(&ends)
            .filter(|(_, e)| **e <= cut as u64)
            .map(|(r, _)| r.clone())
            .collect();
        fs::write(&path, &log[..cut])?;
        let out = logfmt(
            &["write", "--append", "--input", "framed", p(&path)],
            &framed(&appended),
        );
        assert_eq!(status(&out), 1, "cut {cut}: {}", stderr(&out));
        assert_eq!(fs::read(&path)?, &log[..cut], "cut {cut}: the file changed");
        let message = stderr(&out);
        assert!(
            message.starts_with(&format!(
                "logfmt: error: log ends in {} torn bytes at offset {last_end}",
                cut as u64 - last_end
            )) && message.contains("--truncate-torn-tail")
                && message.lines().count() == 1,
            "cut {cut}: {message}"
        );

        let out = logfmt(
            &[
                "write",
                "--append",
                "--truncate-torn-tail",
                "--input",
                "framed",
                p(&path),
            ],
            &framed(&appended),
        );
        assert_eq!(status(&out), 0, "cut {cut}: {}", stderr(&out));
        assert!(stderr(&out).contains(&format!("truncated {} torn bytes", cut as u64 - last_end)));
        let (code, got, notes) = cat_framed(&path, &["--recovery", "skip"]);
        assert_eq!((code, notes.as_str()), (0, ""), "cut {cut}");
        let want: Vec<Vec<u8>> = complete.into_iter().chain(appended.clone()).collect();
        assert!(got == want, "cut {cut}: records differ");
    }
    Ok(())
}

#[test]
fn append_refuses_a_damaged_log() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (mut log, _) = log_of(&[record(100, 1), record(200, 2), record(300, 3)]);
    log[150] ^= 1;
    let path = dir.path().join("damaged.log");
    fs::write(&path, &log)?;
    for flags in [&["--append"][..], &["--append", "--truncate-torn-tail"]] {
        let mut args = vec!["write"];
        args.extend_from_slice(flags);
        args.push(p(&path));
        let out = logfmt(&args, b"new\n");
        assert_eq!(status(&out), 1);
        let message = stderr(&out);
        assert!(
            message.contains("log is damaged (dropped 514 bytes at offset 107: checksum mismatch)"),
            "{message}"
        );
        assert!(message.contains("logfmt salvage"), "{message}");
        assert_eq!(fs::read(&path)?, log);
    }
    Ok(())
}

#[test]
fn recovery_modes_on_cat_and_verify() -> TestResult {
    let dir = tempfile::tempdir()?;
    let records: Vec<Vec<u8>> = (0..6).map(|i| record(9_000, i)).collect();
    let (clean, ends) = log_of(&records);
    // Damage record 2, and cut record 5 short.
    let mut log = clean.clone();
    log[ends[1] as usize + 20] ^= 1;
    log.truncate(ends[5] as usize - 10);
    let path = dir.path().join("damaged.log");
    fs::write(&path, &log)?;

    // What the library reads, mode by mode, is what cat prints and notes.
    for (mode, code) in [
        ("tolerate", 0),
        ("skip", 0),
        ("point-in-time", 0),
        ("absolute", 1),
    ] {
        let options = LogReaderOptions::new().recovery(mode.parse()?);
        let mut reader = LogReader::from_slice(&log, &options);
        let (mut want, mut damage) = (Vec::new(), Vec::new());
        loop {
            match reader.next() {
                Ok(Some(Entry::Record(r))) => want.push(r.data.to_vec()),
                Ok(Some(Entry::Damage(d))) => damage.push(d),
                Ok(None) => break,
                Err(ReadError::Damaged(d)) => {
                    damage.push(d);
                    break;
                }
                Err(e) => return Err(e.to_string().into()),
                other => panic!("not expected here: {other:?}"),
            }
        }
        let (got_code, got, notes) = cat_framed(&path, &["--recovery", mode]);
        assert_eq!(got_code, code, "{mode}: {notes}");
        assert!(got == want, "{mode}: records differ");
        let mut lines = notes.lines();
        for d in &damage {
            let line = lines.next().unwrap_or_default();
            assert!(line.contains(&d.to_string()), "{mode}: {line} / {d}");
        }
        match mode {
            "point-in-time" => assert!(
                lines
                    .next()
                    .unwrap_or_default()
                    .contains("stopped at offset")
            ),
            _ => assert_eq!(lines.next(), None, "{mode}: {notes}"),
        }
    }
    // Tolerate is LevelDB: a checksum mismatch and a missing start, no torn tail; skip adds the
    // torn tail; point-in-time keeps the records before the damage.
    let (_, tolerated, notes) = cat_framed(&path, &[]);
    assert_eq!(notes.lines().count(), 2, "{notes}");
    assert!(
        notes.contains(&format!("at offset {}: checksum mismatch", ends[1])),
        "{notes}"
    );
    assert!(!notes.contains("torn"), "{notes}");
    assert!(tolerated.len() >= 3);
    let (_, _, notes) = cat_framed(&path, &["--recovery", "skip"]);
    assert!(
        notes.contains(&format!(
            "torn {} bytes at offset {}",
            log.len() as u64 - ends[4],
            ends[4]
        )),
        "{notes}"
    );
    let (_, before, _) = cat_framed(&path, &["--recovery", "point-in-time"]);
    assert!(before == records[..2]);
    let (_, _, notes) = cat_framed(&path, &["--recovery", "absolute"]);
    assert!(
        notes.starts_with("logfmt: error: log is damaged"),
        "{notes}"
    );
    assert!(notes.contains("--recovery absolute"), "{notes}");

    // verify: the status tells whether anything was reported.
    for (mode, code, reported, stopped) in [
        ("tolerate", 1, 2, false),
        ("skip", 1, 3, false),
        ("point-in-time", 1, 1, true),
        ("absolute", 1, 1, true),
    ] {
        let out = logfmt(&["verify", "--json", "--recovery", mode, p(&path)], b"");
        assert_eq!(status(&out), code, "{mode}");
        let doc = json(&out);
        assert_eq!(doc["recovery"], mode);
        assert_eq!(
            doc["corruptions"].as_array().map(Vec::len),
            Some(reported),
            "{mode}"
        );
        assert_eq!(doc["stopped_at"].is_object(), stopped, "{mode}");
        // The tail is known only when reading got to the end.
        let tail = if stopped { Value::Null } else { ends[4].into() };
        assert_eq!(doc["tail"]["offset"], tail, "{mode}");
    }
    // Only a torn tail: tolerated by default and point-in-time, reported by skip and absolute.
    let torn = dir.path().join("torn.log");
    fs::write(&torn, &clean[..clean.len() - 10])?;
    for (mode, code) in [
        ("tolerate", 0),
        ("point-in-time", 0),
        ("skip", 1),
        ("absolute", 1),
    ] {
        let out = logfmt(&["verify", "--recovery", mode, p(&torn)], b"");
        assert_eq!(status(&out), code, "{mode}: {}", stdout(&out));
        if mode == "tolerate" {
            assert!(stdout(&out).contains("torn tail"), "{}", stdout(&out));
        }
    }
    Ok(())
}

/// An image of erased flash (0xff) with records written at the start of some blocks.
fn flash_image() -> (Vec<u8>, Vec<Vec<u8>>) {
    let mut image = vec![0xffu8; 4 * BLOCK_SIZE];
    let mut all = Vec::new();
    for (block, count) in [(0, 3), (1, 1), (3, 2)] {
        let records: Vec<Vec<u8>> = (0..count).map(|i| record(100 + i, block as u8)).collect();
        let (log, _) = log_of(&records);
        image[block * BLOCK_SIZE..block * BLOCK_SIZE + log.len()].copy_from_slice(&log);
        all.extend(records);
    }
    (image, all)
}

#[test]
fn flash_images() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (image, records) = flash_image();
    let path = dir.path().join("flash.img");
    fs::write(&path, &image)?;
    // LevelDB's rules see garbage after each written area.
    let out = logfmt(&["verify", p(&path)], b"");
    assert_eq!(status(&out), 1);
    for mode in ["tolerate", "skip", "absolute", "point-in-time"] {
        let out = logfmt(
            &["verify", "--erased", "ff", "--recovery", mode, p(&path)],
            b"",
        );
        assert_eq!(status(&out), 0, "{mode}: {}", stdout(&out));
    }
    let (code, got, notes) = cat_framed(&path, &["--erased", "ff"]);
    assert_eq!((code, got, notes.as_str()), (0, records.clone(), ""));
    let out = logfmt(&["stats", "--json", "--erased", "ff", p(&path)], b"");
    let doc = json(&out);
    assert_eq!(doc["records"], 6);
    assert_eq!(doc["damage"]["regions"], 0);
    assert_eq!(doc["tail"], Value::Null);
    let out = logfmt(&["chunks", "--json", "--erased", "ff", p(&path)], b"");
    let kinds: Vec<String> = stdout(&out)
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).expect("JSON line")["kind"]
                .as_str()
                .unwrap_or("?")
                .to_owned()
        })
        .collect();
    assert_eq!(kinds.iter().filter(|k| *k == "erased").count(), 4);
    assert_eq!(kinds.iter().filter(|k| *k == "chunk").count(), 6);

    // A bit flip in block 1 is still damage.
    let mut damaged = image.clone();
    damaged[BLOCK_SIZE + 10] ^= 1;
    fs::write(&path, &damaged)?;
    let out = logfmt(&["verify", "--json", "--erased", "ff", p(&path)], b"");
    assert_eq!(status(&out), 1);
    assert_eq!(json(&out)["records"], 5);
    let out = logfmt(&["verify", "--erased", "00", p(&path)], b"");
    assert_eq!(status(&out), 1);
    Ok(())
}

#[test]
fn dump_lists_every_chunk_and_region() -> TestResult {
    let dir = tempfile::tempdir()?;
    // A trailer at the end of block 0, a record across blocks 1-2, a zero region, a bad
    // checksum, a torn end.
    let records = vec![
        record(32_755, 1),
        record(10, 2),
        record(40_000, 3),
        record(50, 4),
        record(60, 5),
        record(70, 6),
    ];
    let (mut log, ends) = log_of(&records);
    assert_eq!(ends[0], 32_762);
    let bad = ends[0] as usize + 6 + 9; // record 1, in block 1
    log[bad] ^= 1;
    log.truncate(log.len() - 20);
    let path = dir.path().join("d.log");
    fs::write(&path, &log)?;
    let out = logfmt(&["chunks", "--json", p(&path)], b"");
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    let kind = |v: &Value| v["kind"].as_str().unwrap_or("?").to_owned();
    let summary = lines.last().cloned().unwrap_or_default();
    assert_eq!(kind(&summary), "summary");
    assert_eq!(summary["bytes"], log.len() as u64);
    // Every byte is in exactly one line: items tile the file.
    let mut at = 0u64;
    for line in &lines[..lines.len() - 1] {
        assert_eq!(line["offset"], at, "{line}");
        let header = if kind(line) == "chunk" { 7 } else { 0 };
        at += header + line["length"].as_u64().unwrap_or(0);
    }
    assert_eq!(at, log.len() as u64);
    let found: Vec<(String, u64)> = lines
        .iter()
        .filter(|l| kind(l) != "chunk" && kind(l) != "summary")
        .map(|l| (kind(l), l["offset"].as_u64().unwrap_or(0)))
        .collect();
    assert_eq!(
        found,
        [
            ("trailer".to_owned(), 32_762),
            ("checksum_mismatch".to_owned(), BLOCK_SIZE as u64),
            ("torn".to_owned(), ends[4]),
        ]
    );
    let types: Vec<&str> = lines.iter().filter_map(|l| l["type"].as_str()).collect();
    assert_eq!(types, ["FULL", "LAST", "FULL", "FULL"]);
    assert_eq!(summary["trailer_bytes"], 6);
    assert_eq!(summary["torn_bytes"], log.len() as u64 - ends[4]);

    // Human output: a header, one aligned line per item, a summary.
    let out = logfmt(&["chunks", p(&path)], b"");
    let text = stdout(&out);
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), lines.len() + 1);
    assert!(rows[0].trim_start().starts_with("OFFSET  TYPE"), "{text}");
    let type_column = rows[0].find("TYPE");
    for row in &rows[1..rows.len() - 1] {
        assert_eq!(
            row.find(|c: char| c.is_ascii_alphabetic()),
            type_column,
            "{row}"
        );
    }
    assert!(text.contains("checksum-mismatch"), "{text}");
    assert!(text.contains("dropped: checksum mismatch"), "{text}");
    Ok(())
}

#[test]
fn stats_count_records_chunks_and_waste() -> TestResult {
    let dir = tempfile::tempdir()?;
    let records = vec![record(32_755, 1), vec![], record(40_000, 3), record(5, 4)];
    let (log, _) = log_of(&records);
    let path = dir.path().join("s.log");
    fs::write(&path, &log)?;
    let out = logfmt(&["stats", "--json", p(&path)], b"");
    assert_eq!(status(&out), 0);
    let doc = json(&out);
    assert_eq!(
        doc,
        serde_json::json!({
            "bytes": log.len(), "blocks": 3, "records": 4, "payload_bytes": 72_760,
            "record_size": {"min": 0, "median": 5, "max": 40_000},
            "chunks": {"full": 3, "first": 1, "middle": 0, "last": 1, "unknown": 0},
            "header_bytes": 35, "trailer_bytes": 6, "skipped_bytes": 0,
            "damage": {"regions": 0, "bytes": 0}, "tail": null, "stale": null,
        })
    );
    // Keys come in the documented order.
    let text = stdout(&out);
    let order = [
        "\"bytes\"",
        "\"blocks\"",
        "\"records\"",
        "\"payload_bytes\"",
        "\"record_size\"",
        "\"chunks\"",
        "\"header_bytes\"",
        "\"trailer_bytes\"",
        "\"skipped_bytes\"",
        "\"damage\"",
        "\"tail\"",
        "\"stale\"",
    ];
    let positions: Vec<usize> = order.iter().filter_map(|k| text.find(k)).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
    let out = logfmt(&["stats", p(&path)], b"");
    let text = stdout(&out);
    assert!(text.contains("min 0, median 5, max 40000"), "{text}");
    assert!(text.contains("end           clean"), "{text}");
    Ok(())
}

#[test]
fn salvage_copies_what_can_be_read() -> TestResult {
    let dir = tempfile::tempdir()?;
    let records: Vec<Vec<u8>> = (0..20).map(|i| record(5_000 + i * 100, i as u8)).collect();
    let (mut log, ends) = log_of(&records);
    log[ends[3] as usize + 9] ^= 1; // record 4
    log.truncate(log.len() - 100); // record 19 torn
    let input = dir.path().join("in.log");
    let output = dir.path().join("out.log");
    fs::write(&input, &log)?;
    let (_, expected, _) = cat_framed(&input, &["--recovery", "skip"]);
    let out = logfmt(&["salvage", "--json", p(&input), p(&output)], b"");
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["records"], expected.len());
    let reasons: Vec<&str> = doc["lost"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["reason"].as_str())
        .collect();
    assert!(reasons.contains(&"checksum mismatch"), "{reasons:?}");
    assert!(reasons.iter().any(|r| r.starts_with("torn")), "{reasons:?}");
    // The new log is clean and holds exactly those records.
    let out = logfmt(&["verify", "--recovery", "absolute", p(&output)], b"");
    assert_eq!(status(&out), 0, "{}", stdout(&out));
    let (_, salvaged, _) = cat_framed(&output, &[]);
    assert_eq!(salvaged, expected);
    assert_eq!(fs::read(&input)?, log);
    // It can now be appended to.
    let out = logfmt(&["write", "--append", p(&output)], b"more\n");
    assert_eq!(status(&out), 0);

    // OUT is not overwritten without --force, nor IN ever.
    let before = fs::read(&output)?;
    let out = logfmt(&["salvage", p(&input), p(&output)], b"");
    assert_eq!(status(&out), 1);
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("--append"), "{}", stderr(&out));
    assert_eq!(fs::read(&output)?, before);
    let out = logfmt(&["salvage", "--force", p(&input), p(&output)], b"");
    assert_eq!(status(&out), 0);
    let out = logfmt(&["salvage", "--force", p(&input), p(&input)], b"");
    assert_eq!(status(&out), 2);
    assert_eq!(fs::read(&input)?, log);
    // Human report.
    let again = dir.path().join("again.log");
    let out = logfmt(&["salvage", p(&input), p(&again)], b"");
    let text = stdout(&out);
    assert!(
        text.contains(&format!("{} records", expected.len())),
        "{text}"
    );
    assert!(text.contains("lost: "), "{text}");
    Ok(())
}

#[test]
fn split_ranges_cover_every_record_once() -> TestResult {
    let dir = tempfile::tempdir()?;
    let records: Vec<Vec<u8>> = (0..300)
        .map(|i| record((i * 397) % 9_000, i as u8))
        .collect();
    let (mut log, _) = log_of(&records);
    log[200_000] ^= 1;
    let path = dir.path().join("big.log");
    fs::write(&path, &log)?;
    let (_, all, _) = cat_framed(&path, &[]);
    for parts in [1, 3, 7] {
        let out = logfmt(
            &["split", "--json", "--parts", &parts.to_string(), p(&path)],
            b"",
        );
        assert_eq!(status(&out), 0, "{}", stderr(&out));
        let doc = json(&out);
        assert_eq!(doc["records"], all.len());
        let ranges = doc["ranges"].as_array().cloned().unwrap_or_default();
        assert_eq!(ranges.len(), parts);
        let mut concatenated = Vec::new();
        for range in &ranges {
            let text = format!("{}..{}", range["start"], range["end"]);
            let (code, got, _) = cat_framed(&path, &["--range", &text]);
            assert_eq!(code, 0);
            assert_eq!(range["records"], got.len());
            concatenated.extend(got);
        }
        assert!(concatenated == all, "{parts} parts");
    }
    let out = logfmt(&["split", "--parts", "3", p(&path)], b"");
    let text = stdout(&out);
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), 5, "{text}");
    assert!(rows[0].starts_with("RANGE"), "{text}");
    assert!(
        rows[4].starts_with("total") && rows[4].ends_with(&all.len().to_string()),
        "{text}"
    );
    // Open ranges.
    let (_, from, _) = cat_framed(&path, &["--range", "100000.."]);
    let (_, to, _) = cat_framed(&path, &["--range", "..100000"]);
    assert!([to, from].concat() == all);
    let out = logfmt(&["cat", "--range", "5..1", p(&path)], b"");
    assert_eq!(status(&out), 2);
    Ok(())
}

#[test]
fn quiet_unless_a_terminal() -> TestResult {
    // No progress bar, nor anything else, on a standard error that is not a terminal.
    let dir = tempfile::tempdir()?;
    let (log, _) = log_of(&(0..2000).map(|i| record(1000, i as u8)).collect::<Vec<_>>());
    let path = dir.path().join("q.log");
    fs::write(&path, &log)?;
    for args in [
        &["verify"][..],
        &["stats"],
        &["split"],
        &["chunks", "--json"],
    ] {
        let mut args = args.to_vec();
        args.push(p(&path));
        let out = logfmt(&args, b"");
        assert_eq!(status(&out), 0, "{args:?}");
        assert_eq!(stderr(&out), "", "{args:?}");
    }
    Ok(())
}
