//! The JSON contract (`JSON.md`): every field each `--json` output prints on the repository's
//! logs is listed there, under its command, with its type.
//!
//! A field printed but not listed, or of a type the page does not give it, fails: an output
//! cannot grow a field, or change one's type, without the page saying so.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::*;
use serde_json::Value;

/// The repository's root (this crate is `crates/logfmt-cli`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The fields `JSON.md` lists, by command: each path (`a.b`, `list[].c`) and its types.
fn contract() -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("JSON.md"))
        .expect("JSON.md");
    let mut sections: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let mut section = String::new();
    for line in page.lines() {
        if let Some(name) = line.strip_prefix("## ") {
            section = name.trim().to_owned();
        } else if let Some(row) = line.strip_prefix("| `") {
            let mut cells = row.split('|');
            let path = cells.next().expect("a path").trim().trim_end_matches('`');
            let types = cells.next().expect("a type").trim();
            let types = types.split(" or ").map(|t| t.trim().to_owned()).collect();
            sections
                .entry(section.clone())
                .or_default()
                .insert(path.to_owned(), types);
        }
    }
    sections
}

/// The name of `value`'s JSON type, as the page writes it.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Every field of `value` under `prefix`, with its type.
fn fields(value: &Value, prefix: &str, out: &mut BTreeMap<String, BTreeSet<&'static str>>) {
    match value {
        Value::Object(map) => {
            for (key, field) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                out.entry(path.clone())
                    .or_default()
                    .insert(type_name(field));
                fields(field, &path, out);
            }
        }
        Value::Array(items) => {
            for item in items {
                fields(item, &format!("{prefix}[]"), out);
            }
        }
        _ => {}
    }
}

/// Whether `path` is listed in `listed`: itself, or inside an object listed whole (no field
/// of it listed).
fn is_listed(listed: &BTreeMap<String, BTreeSet<String>>, path: &str) -> bool {
    if listed.contains_key(path) {
        return true;
    }
    let mut ancestor = path;
    while let Some(at) = ancestor.rfind(['.', '[']) {
        ancestor = &ancestor[..at];
        if listed.get(ancestor).is_some_and(|t| t.contains("object")) {
            let inner = [format!("{ancestor}."), format!("{ancestor}[]")];
            return !listed
                .keys()
                .any(|k| inner.iter().any(|i| k.starts_with(i)));
        }
    }
    false
}

/// The logs to run the commands on: the LevelDB vectors, the format-freeze files (packs, a
/// ring image, a recyclable log, RocksDB's compression), a damaged log, a database.
fn logs() -> Vec<PathBuf> {
    let mut logs = Vec::new();
    for dir in [
        "tests/data/leveldb",
        "tests/data/format-freeze",
        "tests/data/damaged",
    ] {
        let mut found: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .expect("the test data")
            .map(|e| e.expect("an entry").path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e != "txt"))
            .collect();
        found.sort();
        logs.extend(found);
    }
    logs
}

/// The WALs Pebble wrote (`tests/data/pebble`).
fn pebble_logs() -> Vec<PathBuf> {
    let mut logs = Vec::new();
    for dir in ["find-val-sep-db", "db-stage-4", "mixed"] {
        for entry in std::fs::read_dir(root().join("tests/data/pebble").join(dir)).expect("data") {
            logs.push(entry.expect("an entry").path());
        }
    }
    logs.sort();
    logs
}

#[test]
fn every_json_field_is_in_the_contract() -> TestResult {
    if !root().join("tests/data").exists() {
        eprintln!("tests/data is not here (a published package): nothing to check");
        return Ok(());
    }
    let contract = contract();
    let mut seen: BTreeMap<&str, BTreeMap<String, BTreeSet<&'static str>>> = BTreeMap::new();
    let mut record = |command: &'static str, stdout: &[u8]| {
        for line in String::from_utf8_lossy(stdout).lines() {
            let value: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{command}: not JSON ({e}): {line}"));
            fields(&value, "", seen.entry(command).or_default());
        }
    };
    let dir = tempfile::tempdir()?;
    let db = root().join("tests/data/leveldb-db");
    for log in logs().iter().chain([&db]) {
        for command in ["verify", "stats", "map", "split", "chunks", "cat"] {
            if log == &db && matches!(command, "map" | "split" | "chunks") {
                continue;
            }
            let output = logfmt(&[command, "--json", p(log)], b"");
            record(command, &output.stdout);
        }
        let output = logfmt(&["verify", "--json", "--recovery", "skip", p(log)], b"");
        record("verify", &output.stdout);
        let output = logfmt(&["verify", "--json", "--max-errors", "1", p(log)], b"");
        record("verify", &output.stdout);
        let out = dir.path().join("out.log");
        for command in ["salvage", "export"] {
            let output = logfmt(
                &[
                    command,
                    "--json",
                    "--force",
                    "--max-errors",
                    "1",
                    p(log),
                    p(&out),
                ],
                b"",
            );
            record(command, &output.stdout);
        }
    }
    // Pebble's WALs, read as Pebble's and with auto: the dialect and WAL-sync fields.
    for log in pebble_logs() {
        for format in ["pebble", "auto"] {
            for command in ["verify", "stats", "chunks", "cat"] {
                let output = logfmt(&[command, "--json", "--format", format, p(&log)], b"");
                record(command, &output.stdout);
            }
        }
    }
    // A WAL directory read as one log, under each recovery mode; with a log that is text.
    let wal = dir.path().join("wal");
    std::fs::create_dir(&wal)?;
    for entry in std::fs::read_dir(root().join("tests/data/wal"))? {
        let entry = entry?;
        std::fs::copy(entry.path(), wal.join(entry.file_name()))?;
    }
    std::fs::write(wal.join("000001.log"), "text, not a log\n")?;
    for mode in ["tolerate", "skip", "point-in-time", "absolute"] {
        for command in ["verify", "cat"] {
            let output = logfmt(&[command, "--json", "--recovery", mode, p(&wal)], b"");
            record(command, &output.stdout);
        }
        let output = logfmt(
            &[
                "cat",
                "--json",
                "--decode",
                "raw",
                "--recovery",
                mode,
                p(&wal),
            ],
            b"",
        );
        record("cat", &output.stdout);
    }
    let output = logfmt(&["verify", "--json", "--max-errors", "0", p(&wal)], b"");
    record("verify", &output.stdout);
    let output = logfmt(&["stats", "--json", p(&wal)], b"");
    record("stats", &output.stdout);
    // Several files at once.
    let [first, second, ..] = &logs()[..] else {
        panic!("logs")
    };
    for command in ["verify", "stats", "map", "split", "chunks", "cat"] {
        let output = logfmt(&[command, "--json", p(first), p(second)], b"");
        record(command, &output.stdout);
    }
    let written = dir.path().join("w.log");
    let output = logfmt(&["write", "--json", p(&written)], b"a\nb\n");
    record("write", &output.stdout);
    let output = logfmt(&["write", "--json", "--append", p(&written)], b"c\n");
    record("write", &output.stdout);
    let mut cut = framed(&[b"one".to_vec()]);
    cut.extend_from_slice(&9u32.to_le_bytes());
    let output = logfmt(
        &[
            "write",
            "--json",
            "--force",
            "--input",
            "framed",
            p(&written),
        ],
        &cut,
    );
    record("write", &output.stdout);

    let mut problems = Vec::new();
    for (command, fields) in &seen {
        let Some(listed) = contract.get(*command) else {
            problems.push(format!("{command}: no section in JSON.md"));
            continue;
        };
        for (path, types) in fields {
            if !is_listed(listed, path) {
                problems.push(format!("{command}: `{path}` is not listed"));
            } else if let Some(allowed) = listed.get(path) {
                for t in types {
                    if !allowed.contains(*t) {
                        problems.push(format!("{command}: `{path}` is a {t}, listed {allowed:?}"));
                    }
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "JSON.md disagrees:\n{}",
        problems.join("\n")
    );
    // Every command with a --json output was seen.
    for command in [
        "verify", "stats", "map", "split", "chunks", "cat", "salvage", "export", "write",
    ] {
        assert!(seen.contains_key(command), "{command} printed no JSON");
    }
    Ok(())
}

#[test]
fn an_unlisted_field_is_found() {
    let mut listed = BTreeMap::new();
    listed.insert("a".to_owned(), BTreeSet::from(["object".to_owned()]));
    listed.insert("b".to_owned(), BTreeSet::from(["object".to_owned()]));
    listed.insert("b.c".to_owned(), BTreeSet::from(["number".to_owned()]));
    assert!(is_listed(&listed, "a.anything"), "an object listed whole");
    assert!(is_listed(&listed, "b.c"));
    assert!(
        !is_listed(&listed, "b.d"),
        "an object whose fields are listed"
    );
    assert!(!is_listed(&listed, "e"));
}
