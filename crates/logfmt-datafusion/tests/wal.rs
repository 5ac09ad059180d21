//! `logfmt-sql --wal DIR`: a WAL directory as the tables `wal` and `wal_damage`, its logs read
//! in log-number order as `logfmt_std::wal` recovers them.

use std::path::{Path, PathBuf};
use std::process::Command;

use logfmt_std::RecoveryMode;
use logfmt_std::wal::{ReadOnlyWal, Wal, WalEntry, WalOptions};
use serde_json::Value;

/// Writes three logs of four records each.
fn write_wal(dir: &Path) {
    let writer = Wal::open(dir, &WalOptions::new().create(true))
        .unwrap()
        .start()
        .unwrap();
    for log in 0..3 {
        if log > 0 {
            writer.rotate().unwrap();
        }
        for i in 0..4 {
            writer
                .append_durable(format!("log {log} record {i}").as_bytes())
                .unwrap();
        }
    }
    writer.close().unwrap();
}

/// What `logfmt_std::wal` recovers: each record's log, file, offset and bytes.
fn recovered(dir: &Path, mode: RecoveryMode) -> Vec<(u64, PathBuf, u64, Vec<u8>)> {
    let mut wal = ReadOnlyWal::open(dir, &WalOptions::new().recovery(mode)).unwrap();
    let mut file = PathBuf::new();
    let mut out = Vec::new();
    for entry in wal.recover() {
        match entry.unwrap() {
            WalEntry::Log { path, .. } => file = path,
            WalEntry::Record(r) => {
                out.push((r.position.log, file.clone(), r.position.offset, r.data))
            }
            _ => {}
        }
    }
    out
}

fn query(dir: &Path, mode: &str, sql: &str) -> Vec<Value> {
    run_sql(&["--wal", dir.to_str().unwrap(), "--recovery", mode], sql)
}

/// The rows `logfmt-sql ARGS SQL` prints, as JSON.
fn run_sql(args: &[&str], sql: &str) -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_logfmt-sql"))
        .args(args)
        .args(["--output", "ndjson", sql])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_wal_directory_is_one_table_in_log_order() {
    let dir = tempfile::tempdir().unwrap();
    write_wal(dir.path());
    let logs = ReadOnlyWal::open(dir.path(), &WalOptions::new())
        .unwrap()
        .logs();
    // Damage the second record of the middle log.
    let middle = &logs[1].path;
    let mut bytes = std::fs::read(middle).unwrap();
    let second = 7 + "log 1 record 0".len();
    bytes[second + 9] ^= 0x40;
    std::fs::write(middle, bytes).unwrap();

    for (mode, rust) in [
        ("skip", RecoveryMode::SkipAnyCorruptedRecords),
        ("point-in-time", RecoveryMode::PointInTimeRecovery),
    ] {
        let want = recovered(dir.path(), rust);
        let rows = query(
            dir.path(),
            mode,
            "SELECT log, file, offset, length, encode(payload, 'hex') AS hex FROM wal",
        );
        let got: Vec<(u64, PathBuf, u64, Vec<u8>)> = rows
            .iter()
            .map(|r| {
                let data = unhex(r["hex"].as_str().unwrap());
                assert_eq!(r["length"].as_u64(), Some(data.len() as u64));
                (
                    r["log"].as_u64().unwrap(),
                    PathBuf::from(r["file"].as_str().unwrap()),
                    r["offset"].as_u64().unwrap(),
                    data,
                )
            })
            .collect();
        assert_eq!(got, want, "{mode}");
        let expected = if mode == "skip" { 9 } else { 5 };
        assert_eq!(got.len(), expected, "{mode}");
        let damage = query(
            dir.path(),
            mode,
            "SELECT log, file, offset, bytes, reason FROM wal_damage",
        );
        assert_eq!(damage.len(), 1, "{mode}: {damage:?}");
        assert_eq!(damage[0]["log"].as_u64(), Some(logs[1].number));
        assert_eq!(damage[0]["file"].as_str(), middle.to_str());
        assert_eq!(damage[0]["offset"].as_u64(), Some(second as u64));
        assert_eq!(damage[0]["reason"].as_str(), Some("checksum mismatch"));
    }
}

/// The bytes of lowercase hex digits.
fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

/// A WAL that failed over to `secondary` and came back: written through `logfmt_std::wal`'s
/// crashable storage (its primary's syncs stalled a while), then copied to the two
/// directories. Returns the records, in order.
fn write_failed_over_wal(primary: &Path, secondary: &Path) -> Vec<Vec<u8>> {
    use logfmt_std::wal::{CrashableStorage, Failover, Storage};
    use std::time::Duration;
    let (mem_primary, mem_secondary) = (Path::new("/primary"), Path::new("/secondary"));
    let failover = Failover::new(mem_secondary, Duration::from_millis(20));
    let options = WalOptions::new().create(true).failover(Some(failover));
    let fs = CrashableStorage::new();
    let writer = Wal::open_in(fs.clone(), mem_primary, &options)
        .unwrap()
        .start()
        .unwrap();
    let mut written = Vec::new();
    let mut i = 0u32;
    let mut append = |written: &mut Vec<Vec<u8>>| {
        let data = format!("record {i}").into_bytes();
        writer.append_durable(&data).unwrap();
        written.push(data);
        i += 1;
    };
    append(&mut written);
    fs.stall(mem_primary);
    append(&mut written);
    assert_eq!(writer.current_dir(), mem_secondary, "failed over");
    append(&mut written);
    fs.unstall(mem_primary);
    while writer.current_dir() != mem_primary {
        assert!(written.len() < 500, "never back to the primary");
        append(&mut written);
        std::thread::sleep(Duration::from_millis(1));
    }
    append(&mut written);
    writer.close().unwrap();
    for (from, to) in [(mem_primary, primary), (mem_secondary, secondary)] {
        for name in fs.list(from).unwrap() {
            std::fs::write(to.join(&name), fs.contents(&from.join(&name)).unwrap()).unwrap();
        }
    }
    written
}

#[test]
fn a_failed_over_wal_is_read_with_its_secondary_directory() {
    let (primary, secondary) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let written = write_failed_over_wal(primary.path(), secondary.path());
    let rows = run_sql(
        &[
            "--wal",
            primary.path().to_str().unwrap(),
            "--wal-secondary",
            secondary.path().to_str().unwrap(),
        ],
        "SELECT file, encode(payload, 'hex') AS hex FROM wal",
    );
    let payloads: Vec<Vec<u8>> = rows
        .iter()
        .map(|row| unhex(row["hex"].as_str().unwrap()))
        .collect();
    assert_eq!(payloads, written);
    let in_secondary = rows
        .iter()
        .filter(|row| Path::new(row["file"].as_str().unwrap()).starts_with(secondary.path()))
        .count();
    assert!(in_secondary > 0 && in_secondary < rows.len(), "{rows:?}");

    // Without --wal it is refused.
    let out = Command::new(env!("CARGO_BIN_EXE_logfmt-sql"))
        .args([
            "--wal-secondary",
            secondary.path().to_str().unwrap(),
            "SELECT 1",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
}
