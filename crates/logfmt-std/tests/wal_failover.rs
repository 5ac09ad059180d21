//! Failover as Pebble does it, with the stall injected through the storage seam
//! ([`CrashableStorage::stall`]: every sync of a file in the primary directory blocks): new
//! records go to a log in the secondary directory once a sync has taken longer than the
//! threshold, the records the stalled sync had not made durable are written again there, and
//! writing goes back to the primary once its sync ends. Recovery reads both directories: every
//! acknowledged record once, in order, also after a crash.

use std::path::Path;
use std::time::Duration;

use logfmt_std::wal::{CrashableStorage, Failover, Storage, Wal, WalEntry, WalOptions};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const PRIMARY: &str = "/primary";
const SECONDARY: &str = "/secondary";

fn options() -> WalOptions {
    let failover = Failover::new(SECONDARY, Duration::from_millis(20));
    WalOptions::new().create(true).failover(Some(failover))
}

/// Every record recovered, and the live logs.
type Recovered = (Vec<Vec<u8>>, Vec<u64>);

fn recovered(fs: &CrashableStorage) -> Result<Recovered, Box<dyn std::error::Error>> {
    let mut wal = Wal::open_in(fs.clone(), PRIMARY, &options())?;
    let mut records = Vec::new();
    for entry in wal.recover() {
        match entry? {
            WalEntry::Record(r) => records.push(r.data),
            WalEntry::Damage { log, damage } => return Err(format!("log {log}: {damage}").into()),
            _ => {}
        }
    }
    Ok((records, wal.logs()))
}

#[test]
fn a_stalled_sync_moves_appends_to_the_secondary_and_back() -> TestResult {
    let fs = CrashableStorage::new();
    let writer = Wal::open_in(fs.clone(), PRIMARY, &options())?.start()?;
    let mut acked = Vec::new();
    for i in 0..10u8 {
        writer.append_durable(&[i; 100])?;
        acked.push(vec![i; 100]);
    }
    assert_eq!(writer.current_dir(), Path::new(PRIMARY));

    // The primary stops answering: appends not yet durable, then one waited for.
    fs.stall(Path::new(PRIMARY));
    let pending: Vec<_> = (10..20u8)
        .map(|i| writer.append(&[i; 100]))
        .collect::<Result<_, _>>()?;
    // Returns although the primary never answers: the log went on in the secondary.
    let last = writer.append_durable(&[20; 100])?;
    assert_eq!(writer.current_dir(), Path::new(SECONDARY));
    let now = writer.position();
    assert_eq!(now.log, last.position.log, "the same log, in another file");
    assert!(now.segment > 0);
    for (i, ticket) in pending.iter().enumerate() {
        writer.wait(*ticket)?; // durable in the secondary
        acked.push(vec![10 + i as u8; 100]);
    }
    acked.push(vec![20; 100]);
    // The log's second file: its segment 1, from the first record not durable in the first.
    let names = fs.list(Path::new(SECONDARY))?;
    let first_file = format!("{:06}.log", last.position.log);
    let second = format!("{:06}-001-10.log", last.position.log);
    assert!(names.contains(&second), "{names:?}");
    assert!(fs.list(Path::new(PRIMARY))?.contains(&first_file));

    // The primary answers again: the log goes on in a new file there.
    fs.unstall(Path::new(PRIMARY));
    let mut i = 21u8;
    while writer.current_dir() != Path::new(PRIMARY) {
        assert!(i < 250, "never back to the primary");
        writer.append_durable(&[i; 100])?;
        acked.push(vec![i; 100]);
        i += 1;
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(writer.position().segment >= 2);
    writer.append_durable(b"back")?;
    acked.push(b"back".to_vec());
    assert_eq!(
        writer.logs(),
        [last.position.log],
        "one log, in three files"
    );

    // A power cut now: every acknowledged record once, in order, from both directories.
    fs.crash();
    drop(writer);
    let (records, _) = recovered(&fs)?;
    assert_eq!(records, acked);
    Ok(())
}

#[test]
fn a_crash_while_the_primary_stalls_loses_no_acknowledged_record() -> TestResult {
    let fs = CrashableStorage::new();
    let writer = Wal::open_in(fs.clone(), PRIMARY, &options())?.start()?;
    let mut acked = Vec::new();
    writer.append_durable(b"before")?;
    acked.push(b"before".to_vec());
    fs.stall(Path::new(PRIMARY));
    for i in 0..50u32 {
        writer.append_durable(&i.to_le_bytes())?;
        acked.push(i.to_le_bytes().to_vec());
    }
    writer.append(b"never acknowledged")?;
    // The stalled sync never ends: the primary's log holds only what was synced before.
    fs.crash();
    drop(writer);
    let (records, logs) = recovered(&fs)?;
    assert!(records.len() == acked.len() || records.len() == acked.len() + 1);
    assert_eq!(records[..acked.len()], acked[..]);
    assert_eq!(logs.len(), 1, "{logs:?}");

    // Writing goes on after it, and a second recovery reads the same and more.
    let writer = Wal::open_in(fs.clone(), PRIMARY, &options())?.start()?;
    writer.append_durable(b"after")?;
    writer.close()?;
    let (again, _) = recovered(&fs)?;
    assert_eq!(again[..records.len()], records[..]);
    assert_eq!(again.last().map(Vec::as_slice), Some(&b"after"[..]));
    Ok(())
}

#[test]
fn failover_on_real_files_reads_both_directories() -> TestResult {
    let root = tempfile::tempdir()?;
    let secondary = root.path().join("secondary");
    let failover = Failover::new(&secondary, Duration::from_millis(100));
    let options = WalOptions::new().create(true).failover(Some(failover));
    let writer = Wal::open(root.path().join("primary"), &options)?.start()?;
    for i in 0..100u32 {
        writer.append_durable(&i.to_le_bytes())?;
    }
    writer.rotate()?;
    writer.append_durable(b"last")?;
    writer.close()?;
    assert!(secondary.is_dir());
    let mut wal = Wal::open(root.path().join("primary"), &options)?;
    let records = wal
        .recover()
        .filter_map(|e| match e {
            Ok(WalEntry::Record(r)) => Some(r.data),
            _ => None,
        })
        .count();
    assert_eq!(records, 101);
    Ok(())
}
