use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use logfmt_core::{Reader, parts::Item};
use proptest::prelude::*;

use super::*;
use crate::writer::LogWriterOptions;

/// A destination in memory that fails its `n`-th operation (a write, which then leaves half
/// its bytes, or a sync) and every one after it, like a disk gone bad; `durable` is how much
/// of it the last successful sync made durable.
#[derive(Debug, Default)]
struct Disk {
    written: Vec<u8>,
    durable: usize,
    ops: usize,
    fail_at: Option<usize>,
}

impl Disk {
    fn op(&mut self) -> io::Result<()> {
        let n = self.ops;
        self.ops += 1;
        match self.fail_at {
            Some(at) if n >= at => Err(io::Error::other("injected fault")),
            _ => Ok(()),
        }
    }
}

#[derive(Debug, Clone, Default)]
struct Shared(Arc<Mutex<Disk>>);

impl Shared {
    fn disk(&self) -> std::sync::MutexGuard<'_, Disk> {
        self.0.lock().unwrap()
    }
}

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut disk = self.disk();
        if let Err(e) = disk.op() {
            // Torn: part of the write reached the disk.
            disk.written.extend_from_slice(&buf[..buf.len() / 2]);
            return Err(e);
        }
        disk.written.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl SyncWrite for Shared {
    fn sync(&mut self) -> io::Result<()> {
        SyncHandle::sync(&*self)
    }
}

impl SyncHandle for Shared {
    fn sync(&self) -> io::Result<()> {
        let mut disk = self.disk();
        disk.op()?;
        disk.durable = disk.written.len();
        Ok(())
    }
}

/// The records of `log` with their offsets, up to the first damage.
fn records_in(log: &[u8]) -> Vec<(u64, Vec<u8>)> {
    let mut scratch = vec![0u8; 1 << 20];
    let mut reader = Reader::from_slice(log, &mut scratch);
    let mut out = Vec::new();
    while let Ok(Some(item)) = reader.next() {
        match item {
            Item::Record(r) => out.push((r.offset, r.data.to_vec())),
            _ => break,
        }
    }
    out
}

/// What one thread of a run did: the records it appended (where, what), and how many of them
/// were acknowledged durable.
#[derive(Debug, Default)]
struct Done {
    appended: Vec<(Written, Vec<u8>)>,
    acked: usize,
}

/// Runs `threads` threads appending their `records` to one group writer over `disk`, each
/// waiting for durability after every `every`-th record and after its last; returns what
/// each did.
fn run(
    disk: &Shared,
    options: &LogWriterOptions,
    policy: GroupPolicy,
    records: &[Vec<Vec<u8>>],
    every: usize,
) -> Vec<Done> {
    let writer = LogWriter::new(disk.clone(), options);
    let group = Arc::new(GroupWriter::new(writer, disk.clone(), policy));
    let handles: Vec<_> = records
        .iter()
        .cloned()
        .map(|mine| {
            let group = Arc::clone(&group);
            thread::spawn(move || {
                let mut done = Done::default();
                let count = mine.len();
                for (i, record) in mine.into_iter().enumerate() {
                    let Ok(written) = group.append(&record) else {
                        break;
                    };
                    done.appended.push((written, record));
                    if (i + 1) % every == 0 || i + 1 == count {
                        if group.wait(written.end).is_err() {
                            break;
                        }
                        done.acked = done.appended.len();
                    }
                }
                done
            })
        })
        .collect();
    let done = handles.into_iter().map(|h| h.join().unwrap()).collect();
    if let Some(group) = Arc::into_inner(group) {
        let _ = group.close();
    }
    done
}

fn record_sets() -> impl Strategy<Value = Vec<Vec<Vec<u8>>>> {
    let record = prop_oneof![
        8 => proptest::collection::vec(any::<u8>(), 0..200),
        1 => proptest::collection::vec(any::<u8>(), 30_000..70_000),
    ];
    proptest::collection::vec(proptest::collection::vec(record, 1..25), 1..6)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 1 } else { 24 }))]

    /// Any interleaving of any number of threads: the log holds exactly the appended
    /// records, in ticket order, byte for byte as sequential `add_record` calls write them;
    /// every record is durable once its thread's wait returns.
    #[test]
    fn threads_get_their_records_in_ticket_order(
        records in record_sets(),
        every in 1usize..5,
        delay in prop_oneof![Just(0u64), Just(50), Just(500)],
        pack in any::<bool>(),
    ) {
        let disk = Shared::default();
        let mut options = LogWriterOptions::new();
        if pack {
            options = options.pack(Some(logfmt_core::pack::PackLimit::default()));
        }
        let policy = GroupPolicy::new().max_delay(Duration::from_micros(delay)).max_records(8);
        let done = run(&disk, &options, policy, &records, every);
        let mut appended: Vec<(Written, Vec<u8>)> =
            done.into_iter().flat_map(|d| d.appended).collect();
        prop_assert_eq!(appended.len(), records.iter().map(Vec::len).sum::<usize>());
        appended.sort_by_key(|(w, _)| w.end);
        let log = disk.disk().written.clone();
        prop_assert_eq!(disk.disk().durable, log.len(), "closed: all durable");
        let read: Vec<Vec<u8>> = records_in(&log).into_iter().map(|(_, r)| r).collect();
        let expected: Vec<Vec<u8>> = appended.iter().map(|(_, r)| r.clone()).collect();
        prop_assert_eq!(&read, &expected);
        if !pack {
            // The same bytes as one thread's sequential appends in ticket order.
            let mut sequential = LogWriter::new(Vec::new(), &LogWriterOptions::new());
            for (written, record) in &appended {
                prop_assert_eq!(sequential.add_record(record).unwrap(), *written);
            }
            prop_assert_eq!(sequential.close().unwrap(), log);
        }
    }
}

/// A fault at every write and sync of a run: no acknowledged record is lost, and what the
/// disk keeps durable holds nothing but appended records, in ticket order.
#[test]
fn a_fault_at_any_write_or_sync_loses_no_acknowledged_record() {
    let records: Vec<Vec<Vec<u8>>> = (0..4u8)
        .map(|t| {
            (0..12u16)
                .map(|i| vec![t; usize::from(i) * 997 % 9000 + 1])
                .collect()
        })
        .collect();
    let options = LogWriterOptions::new();
    let clean = Shared::default();
    run(&clean, &options, GroupPolicy::new(), &records, 3);
    let ops = clean.disk().ops;
    assert!(ops > 4, "the run writes and syncs");
    let mut failed_acks = 0;
    for fail_at in 0..ops + 2 {
        let disk = Shared::default();
        disk.disk().fail_at = Some(fail_at);
        let done = run(&disk, &options, GroupPolicy::new(), &records, 3);
        let (written, durable) = {
            let d = disk.disk();
            (d.written.clone(), d.durable)
        };
        let kept = records_in(&written[..durable]);
        let appended: Vec<(u64, Vec<u8>)> = done
            .iter()
            .flat_map(|d| d.appended.iter().map(|(w, r)| (w.offset, r.clone())))
            .collect();
        for (offset, record) in &kept {
            assert!(
                appended.iter().any(|(o, r)| o == offset && r == record),
                "fault at op {fail_at}: a record at {offset} nobody appended"
            );
        }
        for d in &done {
            for (w, record) in &d.appended[..d.acked] {
                assert!(
                    kept.iter().any(|(o, r)| *o == w.offset && r == record),
                    "fault at op {fail_at}: acknowledged record at {} lost",
                    w.offset
                );
            }
            failed_acks += d.appended.len() - d.acked;
        }
    }
    assert!(failed_acks > 0, "some faults were felt by the writers");
}

#[test]
fn a_failed_sync_fails_every_waiter_with_the_original_error() {
    let disk = Shared::default();
    let group = GroupWriter::new(
        LogWriter::new(disk.clone(), &LogWriterOptions::new()),
        disk.clone(),
        GroupPolicy::new(),
    );
    let first = group.append(b"one").unwrap();
    group.wait(first.end).unwrap();
    assert_eq!(group.durable(), first.end);
    let second = group.append(b"two").unwrap();
    let ops = disk.disk().ops;
    disk.disk().fail_at = Some(ops + 1); // the flush's write passes, the sync fails
    let failed = group.wait(second.end).unwrap_err();
    assert!(matches!(
        failed,
        LogWriterError::Failed {
            operation: WriteOperation::Sync,
            ..
        }
    ));
    // Every later call gets the original error, and the durable watermark stays.
    let again = group.wait(second.end).unwrap_err();
    assert!(again.is_poisoned());
    assert_eq!(again.kind(), Some(io::ErrorKind::Other));
    assert!(group.append(b"three").unwrap_err().is_poisoned());
    assert_eq!(group.durable(), first.end);
    let stats = group.stats();
    assert_eq!(
        (stats.records, stats.syncs, stats.synced_records),
        (2, 1, 1)
    );
}

#[test]
fn a_leader_waits_for_more_records_within_the_policy() {
    let disk = Shared::default();
    let policy = GroupPolicy::new()
        .max_delay(Duration::from_secs(10))
        .max_records(4);
    let group = Arc::new(GroupWriter::new(
        LogWriter::new(disk.clone(), &LogWriterOptions::new()),
        disk.clone(),
        policy,
    ));
    let first = group.append(b"first").unwrap();
    let leader = {
        let group = Arc::clone(&group);
        thread::spawn(move || group.wait(first.end))
    };
    // The leader waits (10 s at most) until 4 records wait to be synced: one sync for all.
    for record in [b"b", b"c", b"d"] {
        thread::sleep(Duration::from_millis(5));
        group.append(record).unwrap();
    }
    leader.join().unwrap().unwrap();
    let stats = group.stats();
    assert_eq!((stats.syncs, stats.largest_batch), (1, 4));
    assert_eq!(group.durable(), group.position());
}

#[test]
fn a_log_file_keeps_its_length_while_room_is_reserved_ahead() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000007.log");
    let writer = LogWriter::create(&path, &LogWriterOptions::new()).unwrap();
    let group = GroupWriter::from_file_writer(writer, GroupPolicy::new()).unwrap();
    let written = group.append_durable(&[5u8; 100]).unwrap();
    assert_eq!(group.durable(), written.end);
    // Readers see the log and nothing else.
    assert_eq!(std::fs::metadata(&path).unwrap().len(), written.end);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        // The room ahead is allocated, where the file system can (tmpfs and ext4 can).
        let probe = std::fs::File::create(dir.path().join("probe")).unwrap();
        match SyncHandle::reserve(&probe, 4096) {
            Ok(()) => {
                let allocated = std::fs::metadata(&path).unwrap().blocks() * 512;
                assert!(allocated >= RESERVE, "{allocated} bytes allocated");
            }
            Err(e) => std::println!("no room reserved here (fallocate: {e}); not checked"),
        }
    }
    group.close().unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), written.end);
}
