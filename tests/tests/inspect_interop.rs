//! The inspector agrees with the tools LevelDB and RocksDB users know, on databases written by
//! the real libraries (`cargo xtask interop`; ignored by a plain `cargo test`):
//!
//! - LevelDB 1.23: `logfmt cat --decode` of a write-ahead log and of the MANIFEST says what
//!   LevelDB's own `leveldb::DumpFile` (the code of `leveldbutil dump`) says: every batch's
//!   offset and sequence number, every put and delete with its key and value, every
//!   VersionEdit field, in LevelDB's text.
//! - RocksDB 7.8: on a database with three column families, puts, deletes, single deletes,
//!   merges, range deletions, a mixed batch and two-phase-commit transactions (one committed,
//!   one rolled back), `logfmt cat --output json` lists the batches `ldb dump_wal
//!   --print_value` lists — sequence number, count, size, offset, and every operation with its
//!   column family, key and value, and the transaction markers — and the VersionEdits `ldb
//!   manifest_dump --verbose` lists, fact for fact.

mod interop_tools;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use interop_tools::{MISSING, compiled, helper, leveldb, logfmt, path_str, scratch};
use serde_json::Value;

/// Every line of `logfmt cat ARGS` as JSON.
fn json_lines(args: &[&str]) -> Vec<Value> {
    let out = logfmt(args);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:.200}")))
        .collect()
}

fn text(value: &Value) -> &str {
    value
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {value}"))
}

fn number(value: &Value) -> u64 {
    value
        .as_u64()
        .unwrap_or_else(|| panic!("not a number: {value}"))
}

fn files(dir: &Path, matches: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(&matches))
        .collect();
    found.sort();
    found
}

fn manifest(dir: &Path) -> PathBuf {
    let current = fs::read_to_string(dir.join("CURRENT")).expect("CURRENT");
    dir.join(current.trim_end())
}

// ------------------------------------------------------------------------- LevelDB

/// Bytes that LevelDB's `EscapeString` and logfmt's escaping show alike: anything but the
/// quote and the backslash, which logfmt escapes too (so that its text reads back).
fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            match state as u8 {
                b'\'' | b'\\' => b'.',
                b => b,
            }
        })
        .collect()
}

/// A LevelDB batch: per operation its key and, for a put, its value.
type Batch = Vec<(Vec<u8>, Option<Vec<u8>>)>;

/// The LevelDB helper's SPEC: batches of puts (tag 1) and deletes (tag 0).
fn leveldb_spec(batches: &[Batch]) -> Vec<u8> {
    let mut out = Vec::new();
    let field = |out: &mut Vec<u8>, b: &[u8]| {
        out.extend_from_slice(&(b.len() as u32).to_le_bytes());
        out.extend_from_slice(b);
    };
    for batch in batches {
        out.extend_from_slice(&(batch.len() as u32).to_le_bytes());
        for (key, value) in batch {
            out.push(u8::from(value.is_some()));
            field(&mut out, key);
            if let Some(value) = value {
                field(&mut out, value);
            }
        }
    }
    out
}

/// `leveldb::DumpFile` of `file`, as `leveldbutil dump` prints it.
fn leveldb_dump(file: &Path, scratch: &Path) -> String {
    let out = scratch.join("dump.txt");
    leveldb(&[Path::new("dump"), file, &out]);
    fs::read_to_string(&out).expect("the dump")
}

/// Bytes given in hex, escaped as LevelDB's `EscapeString` escapes them: printable ASCII as it
/// is, other bytes as \xNN.
fn escape(hex: &Value) -> String {
    let hex = text(hex);
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .map(|b| {
            if (b' '..=b'~').contains(&b) {
                char::from(b).to_string()
            } else {
                format!("\\x{b:02x}")
            }
        })
        .collect()
}

/// LevelDB's text for the records of a write-ahead log, made from logfmt's JSON: per batch
/// `--- offset N; sequence S`, per operation `  put 'K' 'V'` or `  del 'K'`, escaped as
/// LevelDB escapes (printable ASCII as is, other bytes as \xNN).
fn leveldb_text_of_batches(json: &[Value]) -> String {
    let mut out = String::new();
    for batch in json {
        assert!(batch.get("error").is_none(), "{batch}");
        out += &format!(
            "--- offset {}; sequence {}\n",
            batch["offset"], batch["sequence"]
        );
        for op in batch["ops"].as_array().expect("ops") {
            assert_eq!(op["cf"], 0, "LevelDB has no column families");
            match text(&op["op"]) {
                "put" => {
                    out += &format!(
                        "  put '{}' '{}'\n",
                        escape(&op["key"]),
                        escape(&op["value"])
                    )
                }
                "delete" => out += &format!("  del '{}'\n", escape(&op["key"])),
                other => panic!("LevelDB wrote a {other}"),
            }
        }
    }
    out
}

/// LevelDB's `VersionEdit::DebugString` for the records of a MANIFEST, made from logfmt's
/// JSON.
fn leveldb_text_of_edits(json: &[Value]) -> String {
    let key = |k: &Value| {
        format!(
            "'{}' @ {} : {}",
            escape(&k["key"]),
            k["sequence"],
            k["type"]
        )
    };
    let mut out = String::new();
    for edit in json {
        assert!(edit.get("error").is_none(), "{edit}");
        out += &format!("--- offset {}; VersionEdit {{", edit["offset"]);
        for field in edit["fields"].as_array().expect("fields") {
            out += &match text(&field["field"]) {
                "comparator" => format!("\n  Comparator: {}", text(&field["name"])),
                "log_number" => format!("\n  LogNumber: {}", field["value"]),
                "prev_log_number" => format!("\n  PrevLogNumber: {}", field["value"]),
                "next_file_number" => format!("\n  NextFile: {}", field["value"]),
                "last_sequence" => format!("\n  LastSeq: {}", field["value"]),
                "compact_pointer" => {
                    format!(
                        "\n  CompactPointer: {} {}",
                        field["level"],
                        key(&field["key"])
                    )
                }
                "deleted_file" => format!("\n  RemoveFile: {} {}", field["level"], field["number"]),
                "new_file" => format!(
                    "\n  AddFile: {} {} {} {} .. {}",
                    field["level"],
                    field["number"],
                    field["size"],
                    key(&field["smallest"]),
                    key(&field["largest"])
                ),
                other => panic!("LevelDB wrote a {other}"),
            };
        }
        out += "\n}\n";
    }
    out
}

#[test]
#[ignore = "needs LevelDB: run with cargo xtask interop"]
fn leveldb_dump_agrees() {
    let dir = scratch("inspect_interop", "leveldb");
    let db = dir.join("db");
    // Batches of puts and deletes, binary keys and values, values up to 100 KB (records
    // spanning blocks), an empty batch.
    let batches: Vec<Batch> = (0..60u64)
        .map(|i| match i % 5 {
            0 => Vec::new(),
            1 => vec![(bytes(8, i), None)],
            2 => (0..20)
                .map(|j| {
                    (
                        bytes(1 + j, i * 100 + j as u64),
                        Some(bytes(j * 7, i + j as u64)),
                    )
                })
                .collect(),
            3 => vec![(b"big".to_vec(), Some(bytes(100_000, i)))],
            _ => vec![(
                format!("key{i}").into_bytes(),
                Some(b"\x00\x1b[2J\n".to_vec()),
            )],
        })
        .collect();
    let spec = dir.join("spec");
    fs::write(&spec, leveldb_spec(&batches)).expect("spec");
    leveldb(&[Path::new("write"), &db, &spec]);
    let logs = files(&db, |name| name.ends_with(".log"));
    assert_eq!(logs.len(), 1, "{logs:?}");
    let json = json_lines(&["cat", "--output", "json", path_str(&logs[0])]);
    assert_eq!(json.len(), batches.len());
    assert_eq!(leveldb_text_of_batches(&json), leveldb_dump(&logs[0], &dir));

    // Reopening recovers the log into a table file: the new MANIFEST adds it.
    let contents = dir.join("contents");
    leveldb(&[Path::new("read"), &db, &contents]);
    let manifest = manifest(&db);
    let json = json_lines(&["cat", "--output", "json", path_str(&manifest)]);
    let fields: Vec<&str> = json
        .iter()
        .flat_map(|edit| edit["fields"].as_array().expect("fields"))
        .map(|f| text(&f["field"]))
        .collect();
    assert!(fields.contains(&"new_file"), "{fields:?}");
    assert_eq!(leveldb_text_of_edits(&json), leveldb_dump(&manifest, &dir));

    // The whole database: the MANIFEST, then the live log; every record decodes.
    let out = logfmt(&["cat", "--output", "json", path_str(&db)]);
    let lines = String::from_utf8_lossy(&out.stdout).lines().count();
    assert!(lines >= json.len(), "{lines}");
    logfmt(&["verify", path_str(&db)]);
}

// ------------------------------------------------------------------------- RocksDB

/// Writes the RocksDB database of `tests/interop/rocksdb_inspect.cc` in `dir`.
fn rocksdb_database(dir: &Path) {
    static HELPER: OnceLock<PathBuf> = OnceLock::new();
    helper(
        compiled("rocksdb_inspect", "-lrocksdb", &HELPER),
        &[Path::new("write"), dir],
    );
}

fn ldb(args: &[String]) -> String {
    let out = Command::new("ldb")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run RocksDB's `ldb` ({e}): {MISSING}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "ldb {args:?}: {stderr}");
    assert!(!stderr.contains("Corruption"), "ldb {args:?}: {stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `ldb dump_wal --print_value`'s line for a batch, made from logfmt's JSON and the record's
/// length: `sequence,count,size,offset,OPERATIONS`, each operation as ldb prints it
/// (`PUT(cf) : 0xKEY : 0xVALUE`, `DELETE_RANGE(cf) : 0xBEGIN 0xEND`, `BEGIN_PREPARE(false)`,
/// `COMMIT(0xXID)`, ...; log data is not printed).
fn ldb_line(batch: &Value, size: u64) -> String {
    let hex = |v: &Value| format!("0x{}", text(v).to_uppercase());
    let mut line = format!(
        "{},{},{size},{},",
        batch["sequence"], batch["count"], batch["offset"]
    );
    for op in batch["ops"].as_array().expect("ops") {
        let cf = &op["cf"];
        let printed = match text(&op["op"]) {
            "put" => format!("PUT({cf}) : {} : {} ", hex(&op["key"]), hex(&op["value"])),
            "merge" => format!("MERGE({cf}) : {} : {} ", hex(&op["key"]), hex(&op["value"])),
            "delete" => format!("DELETE({cf}) : {} ", hex(&op["key"])),
            "single_delete" => format!("SINGLE_DELETE({cf}) : {} ", hex(&op["key"])),
            "delete_range" => format!(
                "DELETE_RANGE({cf}) : {} {} ",
                hex(&op["key"]),
                hex(&op["end_key"])
            ),
            "noop" => "NOOP ".to_string(),
            "begin_prepare" | "begin_persisted_prepare" => "BEGIN_PREPARE(false) ".to_string(),
            "begin_unprepare" => "BEGIN_PREPARE(true) ".to_string(),
            "end_prepare" => format!("END_PREPARE({}) ", hex(&op["xid"])),
            "commit" => format!("COMMIT({}) ", hex(&op["xid"])),
            "rollback" => format!("ROLLBACK({}) ", hex(&op["xid"])),
            "log_data" => String::new(),
            other => panic!("unexpected {other} in {batch}"),
        };
        line += &printed;
    }
    line
}

/// The facts of each edit as `ldb manifest_dump --verbose` prints them (`Key: value` lines
/// between `VersionEdit {` and `}`), as sets; an added file as its level, number and size.
fn ldb_edits(text: &str) -> Vec<BTreeSet<String>> {
    let mut edits = Vec::new();
    let mut current: Option<BTreeSet<String>> = None;
    for line in text.lines() {
        match line {
            "VersionEdit {" => current = Some(BTreeSet::new()),
            "}" => edits.extend(current.take()),
            fact => {
                if let Some(facts) = current.as_mut() {
                    let fact = fact.trim();
                    let fact = match fact.strip_prefix("AddFile: ") {
                        Some(rest) => {
                            let numbers: Vec<&str> = rest.split(' ').take(3).collect();
                            format!("AddFile: {}", numbers.join(" "))
                        }
                        None => fact.to_string(),
                    };
                    facts.insert(fact);
                }
            }
        }
    }
    edits
}

/// The same facts, made from logfmt's JSON.
fn logfmt_edits(json: &[Value]) -> Vec<BTreeSet<String>> {
    json.iter()
        .map(|edit| {
            assert!(edit.get("error").is_none(), "{edit}");
            let mut facts = BTreeSet::new();
            let mut family = 0;
            for field in edit["fields"].as_array().expect("fields") {
                let value = &field["value"];
                let fact = match text(&field["field"]) {
                    "comparator" => format!("Comparator: {}", text(&field["name"])),
                    "log_number" => format!("LogNumber: {value}"),
                    "prev_log_number" => format!("PrevLogNumber: {value}"),
                    "next_file_number" => format!("NextFileNumber: {value}"),
                    "last_sequence" => format!("LastSeq: {value}"),
                    "max_column_family" => format!("MaxColumnFamily: {value}"),
                    "min_log_number_to_keep" => format!("MinLogNumberToKeep: {value}"),
                    "column_family" => {
                        family = number(value);
                        continue;
                    }
                    "column_family_add" => format!("ColumnFamilyAdd: {}", text(&field["name"])),
                    "column_family_drop" => "ColumnFamilyDrop".to_string(),
                    "deleted_file" => format!("DeleteFile: {} {}", field["level"], field["number"]),
                    "new_file" => {
                        // RocksDB keeps its min log number to keep in a new file's custom
                        // fields too.
                        for custom in field["custom"].as_array().into_iter().flatten() {
                            if custom["name"] == "min_log_number_to_keep" {
                                facts.insert(format!("MinLogNumberToKeep: {}", custom["value"]));
                            }
                        }
                        format!(
                            "AddFile: {} {} {}",
                            field["level"], field["number"], field["size"]
                        )
                    }
                    other => panic!("unexpected {other} in {edit}"),
                };
                facts.insert(fact);
            }
            facts.insert(format!("ColumnFamily: {family}"));
            facts
        })
        .collect()
}

#[test]
#[ignore = "needs RocksDB and ldb: run with cargo xtask interop"]
fn rocksdb_ldb_agrees() {
    let dir = scratch("inspect_interop", "rocksdb");
    let db = dir.join("db");
    rocksdb_database(&db);
    let logs = files(&db, |name| name.ends_with(".log"));
    assert!(!logs.is_empty());
    let mut kinds = BTreeSet::new();
    for log in &logs {
        let json = json_lines(&["cat", "--output", "json", path_str(log)]);
        let raw = json_lines(&["cat", "--decode", "raw", "--output", "json", path_str(log)]);
        assert_eq!(json.len(), raw.len());
        let ours: Vec<String> = json
            .iter()
            .zip(&raw)
            .map(|(batch, record)| ldb_line(batch, number(&record["length"])))
            .collect();
        let listed = ldb(&[
            "dump_wal".into(),
            format!("--walfile={}", log.display()),
            "--print_value".into(),
            "--header".into(),
        ]);
        let mut lines = listed.lines();
        assert_eq!(
            lines.next().map(str::trim_end),
            Some("Sequence,Count,ByteSize,Physical Offset,Key(s) : value")
        );
        let theirs: Vec<String> = lines.map(str::to_string).collect();
        assert_eq!(ours, theirs, "{}", log.display());
        kinds.extend(
            json.iter()
                .flat_map(|b| b["ops"].as_array().expect("ops"))
                .map(|op| text(&op["op"]).to_string()),
        );
    }
    // Every kind the database was written with was seen.
    for kind in [
        "put",
        "delete",
        "single_delete",
        "merge",
        "delete_range",
        "log_data",
        "noop",
        "begin_prepare",
        "end_prepare",
        "commit",
        "rollback",
    ] {
        assert!(kinds.contains(kind), "no {kind} in {kinds:?}");
    }

    let manifest = manifest(&db);
    let json = json_lines(&["cat", "--output", "json", path_str(&manifest)]);
    let dumped = ldb(&[
        "manifest_dump".into(),
        format!("--path={}", manifest.display()),
        "--verbose".into(),
    ]);
    let ours = logfmt_edits(&json);
    assert!(
        ours.iter()
            .any(|e| e.iter().any(|f| f.starts_with("AddFile"))),
        "{ours:?}"
    );
    assert!(
        ours.iter().any(|e| e.contains("ColumnFamilyDrop")),
        "{ours:?}"
    );
    assert_eq!(ours, ldb_edits(&dumped));

    // The directory: the MANIFEST, then every live log in order (RocksDB recovers from all).
    let out = logfmt(&["cat", "--output", "json", path_str(&db)]);
    let files: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).expect("JSON");
            text(&v["file"]).to_string()
        })
        .collect();
    let mut order: Vec<String> = files.clone();
    order.dedup();
    let mut expected = vec![path_str(&manifest).to_string()];
    expected.extend(logs.iter().map(|l| path_str(l).to_string()));
    assert_eq!(order, expected);
    // Every file is whole and every record decodes (`logfmt` asserts exit status 0).
    let verified = logfmt(&["verify", path_str(&db)]);
    let text = String::from_utf8_lossy(&verified.stdout);
    assert!(text.ends_with("files read: no damage\n"), "{text}");
}
