//! RocksDB 9 (the RocksDB that PyPI's `rocksdict` bundles, driven by `interop/rocksdb9.py`)
//! and logfmt, both ways.
//!
//! - RocksDB 9 writes a database in three phases with a flush between them, then stops as a
//!   crash stops it, with each of these `DBOptions`: none, WAL compression
//!   (`wal_compression = kZSTD`), WAL tracking (`track_and_verify_wals_in_manifest`), recycled
//!   logs (`recycle_log_file_num = 2`, the last phase smaller, so the recycled file keeps its
//!   earlier use's bytes after the new records) and all three together. Every write-ahead log
//!   left is read by `logfmt cat --format auto --output framed`: exactly the batches RocksDB
//!   wrote to it, with their sequence numbers; `logfmt verify --format auto` reports no
//!   corruption; and `logfmt cat --decode write-batch` names every key.
//! - logfmt writes a write-ahead log of batches (`logfmt write --input framed`) — legacy,
//!   legacy with RocksDB's WAL compression, recyclable with the database's log number, and
//!   recyclable with compression — in place of the log of an empty RocksDB 9 database; RocksDB
//!   9 recovers every key from it on open, in its absolute-consistency mode (any damage in the
//!   log is an error).
//!
//! Ignored by a plain `cargo test`; `cargo xtask interop` installs RocksDB 9 (rocksdict, in a
//! virtual environment under `target/`) and runs it with `LOGFMT_ROCKSDB9_PYTHON` naming its
//! Python.

mod interop_tools;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use interop_tools::*;
use logfmt_tests::write_batch::{Batch, Op, apply, decode, encode};

/// The Python of the virtual environment with rocksdict, and the helper script.
fn rocksdb9(args: &[&Path], options: &str) -> String {
    let python = std::env::var_os("LOGFMT_ROCKSDB9_PYTHON").unwrap_or_else(|| {
        panic!("LOGFMT_ROCKSDB9_PYTHON is not set: run with cargo xtask interop")
    });
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("interop/rocksdb9.py");
    let out = Command::new(python)
        .arg(script)
        .args(args)
        .env("LOGFMT_ROCKSDB_OPTIONS", options)
        .output()
        .unwrap_or_else(|e| panic!("running the RocksDB 9 helper: {e}"));
    assert!(
        out.status.success(),
        "rocksdb9.py {args:?} ({options}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Batch `i` of a phase seeded with `seed`: one to three puts (and a delete now and then), of
/// values that compress, some longer than a block.
fn ops(seed: usize, i: usize) -> Vec<Op> {
    let value_len = if i % 13 == 7 {
        45_000
    } else {
        30 + (i * 7 + seed) % 120
    };
    let mut ops: Vec<Op> = (0..1 + (i + seed) % 3)
        .map(|j| {
            Op::Put(
                format!("key-{seed}-{i:04}-{j}").into_bytes(),
                format!("value {seed}/{i} ")
                    .repeat(value_len / 10 + 1)
                    .into_bytes(),
            )
        })
        .collect();
    if i % 5 == 4 {
        ops.push(Op::Delete(
            format!("key-{seed}-{:04}-0", i - 1).into_bytes(),
        ));
    }
    ops
}

/// The write-ahead logs of `dir`, by log number.
fn wals(dir: &Path) -> BTreeMap<u64, PathBuf> {
    fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter_map(|p| {
            let number = p
                .file_name()?
                .to_str()?
                .strip_suffix(".log")?
                .parse()
                .ok()?;
            Some((number, p))
        })
        .collect()
}

/// The batches of `logfmt cat --format auto --output framed` on `log`.
fn cat_batches(log: &Path) -> Vec<Batch> {
    let cat = logfmt(&[
        "cat",
        "--format",
        "auto",
        "--output",
        "framed",
        path_str(log),
    ]);
    let mut framed = &cat.stdout[..];
    let mut batches = Vec::new();
    while let Some((len, rest)) = framed.split_first_chunk::<4>() {
        let (record, rest) = rest.split_at(u32::from_le_bytes(*len) as usize);
        batches.push(decode(record).expect("a WriteBatch"));
        framed = rest;
    }
    batches
}

/// The `DBOptions` RocksDB 9 writes with, each case by name.
const WRITTEN_WITH: &[(&str, &str)] = &[
    ("default", ""),
    ("compressed", "wal_compression=kZSTD"),
    ("tracked", "track_and_verify_wals_in_manifest=true"),
    ("recycled", "recycle_log_file_num=2"),
    (
        "all",
        "wal_compression=kZSTD;track_and_verify_wals_in_manifest=true;recycle_log_file_num=2",
    ),
];

#[test]
#[ignore = "needs RocksDB 9: run with cargo xtask interop"]
fn logs_rocksdb9_writes_read_in_logfmt() {
    println!("{}", rocksdb9(&[Path::new("version")], "").trim());
    for &(name, options) in WRITTEN_WITH {
        let dir = scratch("rocksdb9_interop", &format!("written_{name}"));
        let db = dir.join("db");
        // The last phase smaller than the first, whose file it reuses when logs are recycled.
        let phases: Vec<Vec<Vec<Op>>> = [(1, 60), (2, 30), (3, 25)]
            .iter()
            .map(|&(seed, count)| (0..count).map(|i| ops(seed, i)).collect())
            .collect();
        let spec_file = dir.join("spec");
        fs::write(&spec_file, spec(&phases)).unwrap_or_else(|e| panic!("{e}"));
        let printed = rocksdb9(
            &[Path::new("write"), &db, &spec_file, Path::new("crash")],
            options,
        );
        let kept = printed
            .lines()
            .find_map(|l| l.strip_prefix("options "))
            .unwrap_or_default();
        for option in options.split(';').filter(|o| !o.is_empty()) {
            assert!(
                kept.split(' ').any(|k| k == option),
                "{name}: RocksDB did not keep {option}: {kept}"
            );
        }
        // What each log holds: the batches RocksDB wrote to it, with their sequence numbers.
        let mut expected: BTreeMap<u64, Vec<Batch>> = BTreeMap::new();
        let all_ops: Vec<&Vec<Op>> = phases.iter().flatten().collect();
        let lines: Vec<Vec<u64>> = printed
            .lines()
            .filter_map(|l| l.strip_prefix("batch "))
            .map(|l| l.split(' ').map(|n| n.parse().unwrap()).collect())
            .collect();
        assert_eq!(lines.len(), all_ops.len(), "{name}: {printed}");
        let mut phase_log = [0u64; 3];
        for (ops, line) in all_ops.iter().zip(&lines) {
            let (log, sequence, count) = (line[1], line[2], line[3]);
            phase_log[line[0] as usize] = log;
            assert_eq!(count as usize, ops.len(), "{name}");
            expected.entry(log).or_default().push(Batch {
                sequence,
                ops: (*ops).clone(),
            });
        }
        let logs = wals(&db);
        assert!(!logs.is_empty(), "{name}: no log left");
        let mut report = Vec::new();
        for (number, log) in &logs {
            let what = format!("{name}: {}", log.display());
            let want = expected.get(number).cloned().unwrap_or_default();
            let read = cat_batches(log);
            assert!(read == want, "{what}: other batches than RocksDB wrote");
            let verify = Command::new(logfmt_bin())
                .args(["verify", "--format", "auto", path_str(log)])
                .output()
                .unwrap_or_else(|e| panic!("{e}"));
            let text = String::from_utf8_lossy(&verify.stdout);
            assert!(
                verify.status.success() && text.contains("no corruption"),
                "{what}: {text}{}",
                String::from_utf8_lossy(&verify.stderr)
            );
            let decoded = logfmt(&[
                "cat",
                "--format",
                "auto",
                "--decode",
                "write-batch",
                path_str(log),
            ]);
            let decoded = String::from_utf8_lossy(&decoded.stdout);
            for batch in &want {
                let key = match &batch.ops[0] {
                    Op::Put(key, _) | Op::Delete(key) => String::from_utf8_lossy(key),
                };
                assert!(
                    decoded.contains(&format!("sequence {};", batch.sequence))
                        && decoded.contains(&*key),
                    "{what}: cat --decode write-batch lacks batch {}",
                    batch.sequence
                );
            }
            let bytes = fs::read(log).unwrap_or_else(|e| panic!("{e}"));
            // A recycled log (the last phase's, in the first phase's larger file) has the earlier
            // use's bytes after its records: where a chunk of the first phase's log starts
            // there, the log ends at that record of an older log; where the new records end
            // inside an old chunk (compressed records shift the old chunks), the old bytes
            // read as a chunk cut by the end of the file, a torn tail. No other log has a tail.
            let json = logfmt(&["verify", "--format", "auto", "--json", path_str(log)]);
            let json = String::from_utf8_lossy(&json.stdout);
            let stale = !json.contains("\"tail\": null");
            let recycled = options.contains("recycle_log_file_num=2") && *number == phase_log[2];
            assert_eq!(stale, recycled, "{what}: {json}");
            if json.contains("\"kind\": \"old_record\"") {
                assert!(
                    json.contains(&format!("\"log_number\": {}", phase_log[0])),
                    "{what}: not stale bytes of the first log: {json}"
                );
            }
            report.push(format!(
                "log {number}: {} bytes, {} batches{}{}",
                bytes.len(),
                read.len(),
                if bytes.get(6) == Some(&9) {
                    ", compressed"
                } else {
                    ""
                },
                if stale { ", stale tail" } else { "" }
            ));
        }
        println!(
            "RocksDB 9 with [{options}] (kept: {kept}): logfmt reads {}",
            report.join("; ")
        );
    }
}

/// The ways logfmt writes a log for RocksDB 9 to recover: name and `logfmt write` flags (a
/// recyclable log is given the log number of the file it replaces: `--format rocksdb` writes
/// recyclable chunks with a log number, legacy ones without).
const WRITTEN_BY_LOGFMT: &[(&str, &[&str], bool)] = &[
    ("legacy", &["--format", "rocksdb"], false),
    (
        "legacy-compressed",
        &["--format", "rocksdb", "--compress", "rocksdb"],
        false,
    ),
    ("recyclable", &["--format", "rocksdb"], true),
    (
        "recyclable-compressed",
        &["--format", "rocksdb", "--compress", "rocksdb"],
        true,
    ),
];

#[test]
#[ignore = "needs RocksDB 9: run with cargo xtask interop"]
fn logs_logfmt_writes_recovered_by_rocksdb9() {
    let batches: Vec<Batch> = (0..200)
        .map(|i| Batch {
            sequence: 1 + 3 * i as u64,
            ops: ops(7, i),
        })
        .collect();
    let mut framed = Vec::new();
    for batch in &batches {
        let record = encode(batch);
        framed.extend_from_slice(&(record.len() as u32).to_le_bytes());
        framed.extend_from_slice(&record);
    }
    let mut keys = BTreeMap::new();
    apply(&mut keys, &batches);
    for &(name, flags, recyclable) in WRITTEN_BY_LOGFMT {
        for options in ["", "track_and_verify_wals_in_manifest=true"] {
            let dir = scratch(
                "rocksdb9_interop",
                &format!("recovered_{name}_{}", options.is_empty()),
            );
            let input = dir.join("batches.framed");
            fs::write(&input, &framed).unwrap_or_else(|e| panic!("{e}"));
            // An empty database, closed: its one log is replaced by logfmt's.
            let db = dir.join("db");
            let spec_file = dir.join("empty.spec");
            fs::write(&spec_file, spec(&[])).unwrap_or_else(|e| panic!("{e}"));
            rocksdb9(
                &[Path::new("write"), &db, &spec_file, Path::new("close")],
                options,
            );
            let log = the_log(&db);
            let number = log
                .file_stem()
                .and_then(|s| s.to_str())
                .and_then(|s| s.parse::<u64>().ok())
                .expect("a numbered log");
            fs::remove_file(&log).unwrap_or_else(|e| panic!("{e}"));
            let number_text = number.to_string();
            let mut args = vec!["write", "--input", "framed"];
            args.extend_from_slice(flags);
            if recyclable {
                args.extend_from_slice(&["--log-number", &number_text]);
            }
            args.push(path_str(&log));
            logfmt_with_input(&args, &input);
            let bytes = fs::metadata(&log).map_or(0, |m| m.len());
            let contents_file = dir.join("contents");
            rocksdb9(&[Path::new("read"), &db, &contents_file], options);
            assert!(
                contents(&contents_file) == keys,
                "{name} [{options}]: RocksDB 9 recovered other contents"
            );
            println!(
                "logfmt wrote a {name} log ({} bytes, log {number}): RocksDB 9 [{options}] \
                 recovers its {} keys (absolute consistency)",
                bytes,
                keys.len()
            );
        }
    }
}
