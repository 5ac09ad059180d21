//! A new log file is made durable before any record in it is acknowledged: the file synced,
//! then its directory entry synced — on every path that starts one: a rotation, a released
//! log's file reused, and a failover going on in the other directory. [`CrashableStorage`]
//! keeps a new file's directory entry through a crash only if the file was synced before its
//! directory was (an entry whose file was never written back does not survive), so each case
//! here loses its acknowledged record if a step is missing or out of order.

use std::path::Path;
use std::time::Duration;

use logfmt_std::wal::{CrashableStorage, Failover, Wal, WalEntry, WalOptions};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const PRIMARY: &str = "/primary";
const SECONDARY: &str = "/secondary";

/// The records recovered.
fn recovered(
    fs: &CrashableStorage,
    options: &WalOptions,
) -> Result<Vec<Vec<u8>>, Box<dyn std::error::Error>> {
    let mut wal = Wal::open_in(fs.clone(), PRIMARY, options)?;
    let mut records = Vec::new();
    for entry in wal.recover() {
        match entry? {
            WalEntry::Record(r) => records.push(r.data),
            WalEntry::Damage { log, damage } => return Err(format!("log {log}: {damage}").into()),
            _ => {}
        }
    }
    Ok(records)
}

#[test]
fn a_rotated_log_survives_a_crash_once_a_record_in_it_is_acknowledged() -> TestResult {
    let fs = CrashableStorage::new();
    let options = WalOptions::new().create(true);
    let writer = Wal::open_in(fs.clone(), PRIMARY, &options)?.start()?;
    writer.append_durable(b"first")?;
    let new = writer.rotate()?;
    let ticket = writer.append_durable(b"in the new log")?;
    assert_eq!(ticket.position.log, new);
    fs.crash();
    drop(writer);
    assert_eq!(
        recovered(&fs, &options)?,
        [&b"first"[..], b"in the new log"]
    );
    Ok(())
}

#[test]
fn a_reused_log_survives_a_crash_once_a_record_in_it_is_acknowledged() -> TestResult {
    let fs = CrashableStorage::new();
    let options = WalOptions::new().create(true).recycle(1);
    let writer = Wal::open_in(fs.clone(), PRIMARY, &options)?.start()?;
    writer.append_durable(b"released")?;
    writer.rotate()?;
    writer.release_before(writer.position())?;
    assert_eq!(writer.kept_for_reuse().len(), 1);
    writer.append_durable(b"kept")?;
    writer.rotate()?; // takes the released log's file
    assert!(writer.kept_for_reuse().is_empty());
    writer.append_durable(b"in the reused file")?;
    fs.crash();
    drop(writer);
    assert_eq!(
        recovered(&fs, &options)?,
        [&b"kept"[..], b"in the reused file"]
    );
    Ok(())
}

#[test]
fn a_failed_over_segment_survives_a_crash_once_a_record_in_it_is_acknowledged() -> TestResult {
    let fs = CrashableStorage::new();
    let failover = Failover::new(SECONDARY, Duration::from_millis(5));
    let options = WalOptions::new().create(true).failover(Some(failover));
    let writer = Wal::open_in(fs.clone(), PRIMARY, &options)?.start()?;
    writer.append_durable(b"before")?;
    fs.stall(Path::new(PRIMARY));
    writer.append_durable(b"in the secondary")?;
    assert_eq!(writer.current_dir(), Path::new(SECONDARY));
    // A new log while the primary stalls: started in the secondary too.
    writer.rotate()?;
    writer.append_durable(b"in a new log in the secondary")?;
    fs.crash();
    drop(writer);
    assert_eq!(
        recovered(&fs, &options)?,
        [
            &b"before"[..],
            b"in the secondary",
            b"in a new log in the secondary"
        ]
    );
    Ok(())
}
