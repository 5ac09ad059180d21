//! `logfmt-sql` as a person runs it.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use logfmt_std::RecoveryMode;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_logfmt-sql"))
        .args(args)
        .output()
        .expect("logfmt-sql runs")
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "status {:?}, stderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// Per file: records and payload bytes of a sequential read.
fn per_file(dir: &Path) -> Vec<(String, u64, u64)> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let (rows, _) = common::sequential(path, RecoveryMode::SkipAnyCorruptedRecords);
            (
                common::name(path),
                rows.len() as u64,
                rows.iter().map(|r| r.2).sum(),
            )
        })
        .filter(|(_, n, _)| *n > 0)
        .collect()
}

const QUERY: &str =
    "SELECT file, count(*) AS n, sum(length) AS bytes FROM logs GROUP BY file ORDER BY file";

#[test]
fn a_text_table() {
    let dir = tempfile::tempdir().unwrap();
    common::corpus(dir.path());
    let out = stdout(&run(&[
        QUERY,
        dir.path().to_str().unwrap(),
        "--partitions",
        "3",
    ]));
    for (file, n, bytes) in per_file(dir.path()) {
        let line = out
            .lines()
            .find(|line| line.contains(&format!(" {file} ")))
            .unwrap_or_else(|| panic!("{file} not in\n{out}"));
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        assert_eq!(
            cells[1..4],
            [file.as_str(), &n.to_string(), &bytes.to_string()],
            "{line}"
        );
    }
}

#[test]
fn csv_and_json() {
    let dir = tempfile::tempdir().unwrap();
    common::corpus(dir.path());
    let want = per_file(dir.path());
    let path = dir.path().to_str().unwrap();

    let csv = stdout(&run(&[QUERY, path, "--output", "csv"]));
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("file,n,bytes"));
    let got: Vec<String> = lines.map(str::to_owned).collect();
    let expected: Vec<String> = want
        .iter()
        .map(|(f, n, b)| format!("{f},{n},{b}"))
        .collect();
    assert_eq!(got, expected);

    let json = stdout(&run(&[QUERY, path, "-o", "json"]));
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let got: Vec<(String, u64, u64)> = value
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row["file"].as_str().unwrap().to_owned(),
                row["n"].as_u64().unwrap(),
                row["bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, want);

    let ndjson = stdout(&run(&[
        "SELECT offset FROM logs LIMIT 3",
        path,
        "-o",
        "ndjson",
    ]));
    assert_eq!(ndjson.lines().count(), 3, "{ndjson}");

    // No rows: `[]`, and a CSV header.
    let empty = "SELECT file FROM logs WHERE length > 100000000";
    assert_eq!(stdout(&run(&[empty, path, "-o", "json"])).trim(), "[]");
    assert_eq!(stdout(&run(&[empty, path, "-o", "csv"])).trim(), "file");
}

#[test]
fn parquet_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    common::corpus(&logs);
    let out = dir.path().join("damage.parquet");
    let output = run(&[
        "SELECT file, offset, bytes, kind FROM damage ORDER BY file, offset",
        logs.to_str().unwrap(),
        "-o",
        "parquet",
        "--out",
        out.to_str().unwrap(),
    ]);
    stdout(&output);
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[..4], b"PAR1");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let rows = runtime.block_on(async {
        let ctx = datafusion::prelude::SessionContext::new();
        let frame = ctx
            .read_parquet(out.to_str().unwrap(), Default::default())
            .await
            .unwrap();
        frame.count().await.unwrap()
    });
    let mut want = 0;
    for entry in std::fs::read_dir(&logs).unwrap() {
        want += common::sequential(
            &entry.unwrap().path(),
            RecoveryMode::SkipAnyCorruptedRecords,
        )
        .1
        .len();
    }
    assert!(want > 0);
    assert_eq!(rows, want);
}

#[test]
fn single_files_and_the_ops_table() {
    let dir = tempfile::tempdir().unwrap();
    let paths = common::corpus(dir.path());
    let plain = paths[0].to_str().unwrap();
    let out = stdout(&run(&[
        "SELECT count(*) AS n FROM logs",
        plain,
        "-o",
        "csv",
    ]));
    assert_eq!(out, "n\n300\n");
    // Not write batches: an error row for each record.
    let out = stdout(&run(&[
        "SELECT count(*) AS n FROM ops WHERE error IS NOT NULL",
        plain,
        "-o",
        "csv",
    ]));
    assert_eq!(out, "n\n300\n");
}

#[test]
fn errors_are_reported_not_panicked() {
    let dir = tempfile::tempdir().unwrap();
    common::corpus(dir.path());
    let path = dir.path().to_str().unwrap();
    for (args, says) in [
        (vec!["SELECT nothing FROM logs", path], "nothing"),
        (vec!["SELEC 1", path], "SELEC"),
        (vec!["SELECT * FROM nowhere", path], "nowhere"),
        (
            vec!["SELECT 1", "/no/such/dir"],
            "no such file or directory",
        ),
    ] {
        let output = run(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.starts_with("logfmt-sql: error: "), "{stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    // Damage with `--recovery absolute`: an error naming the file.
    let output = run(&["SELECT count(*) FROM logs", path, "--recovery", "absolute"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("is damaged"), "{stderr}");
    // A usage error: clap's status 2.
    let output = run(&["SELECT 1"]);
    assert_eq!(output.status.code(), Some(2));
}
