//! Write-side faults: a destination that fails, or fills up, at every possible point.
//!
//! For every failure point N (every byte of the log for the small logs, a stride plus every
//! block boundary for the larger ones), with flushes after every record, every few records, or
//! only at the end:
//! - the failure surfaces, once, as `WriteError::Sink` from the call that hit it;
//! - the writer stays poisoned: every later `add_record`, `flush` and `pad_to` is `Poisoned`, and
//!   nothing more reaches the destination;
//! - what reached the destination is exactly the first N bytes of the log the writer writes
//!   when nothing fails (the failing call's accepted part included), and reads back, with no
//!   report, as the records in order: every acknowledged record (`add_record` Ok, then a
//!   `flush` Ok), possibly followed by records whose chunks all got through before the failure,
//!   and never a part of one (a torn tail reads as the end of the log).
//!
//! Through the core `Writer` with a custom `Sink`, and through `logfmt-std`'s `StdSink` over an
//! `io::Write` that writes short, is interrupted, fills up (`ENOSPC`) or returns `Ok(0)`, and over
//! `/dev/full`.

#![allow(missing_docs)]

use std::cell::RefCell;
use std::io::{self, Write};
use std::rc::Rc;

use logfmt_core::{BLOCK_SIZE, Sink, WriteError, Writer};
use logfmt_std::advanced::StdSink;
use logfmt_tests::{Seen, content, model, read_log};

/// A destination shared with the test: the bytes that got through.
type Shared = Rc<RefCell<Vec<u8>>>;

/// A core `Sink` that accepts `budget` bytes; the call that crosses it writes what fits and
/// fails. It panics if used after failing (the writer must stop).
struct Failing {
    out: Shared,
    budget: usize,
    failed: bool,
}

#[derive(Debug, PartialEq, Eq)]
struct Full;

impl Sink for Failing {
    type Error = Full;

    fn write(&mut self, bytes: &[u8]) -> Result<(), Full> {
        assert!(!self.failed, "the writer wrote after its sink failed");
        let mut out = self.out.borrow_mut();
        let room = self.budget - out.len();
        if bytes.len() > room {
            out.extend_from_slice(&bytes[..room]);
            self.failed = true;
            return Err(Full);
        }
        out.extend_from_slice(bytes);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Full> {
        assert!(!self.failed, "the writer flushed after its sink failed");
        Ok(())
    }
}

/// The test logs: record lists (unique contents).
fn scripts() -> Vec<(&'static str, Vec<Vec<u8>>)> {
    let small: Vec<Vec<u8>> = (0..150)
        .map(|i| content(20 + i * 37 % 400, i as u64))
        .collect();
    let mut mixed = vec![
        content(100, 1),
        content(32_768 - 107 - 14, 2),
        content(300, 3),
    ];
    mixed.push(Vec::new());
    mixed.push(content(32_447 + 32_761 + 100, 4));
    mixed.extend((0..20).map(|i| content(50 + i * 13, 10 + i as u64)));
    vec![("small", small), ("mixed", mixed)]
}

/// What one run did.
#[derive(Debug)]
struct Run {
    /// Records `add_record` returned Ok for.
    accepted: usize,
    /// Of them, acknowledged by a later successful flush.
    acknowledged: usize,
    /// Records passed to `add_record` (the accepted ones, and one that failed).
    attempted: usize,
    failed: bool,
}

/// Writes `records` through `sink`, flushing after every `every` records (0: only at the
/// end); stops at the first error and checks that the writer stays poisoned.
fn run<S: Sink>(sink: S, records: &[Vec<u8>], every: usize) -> Run
where
    S::Error: std::fmt::Debug,
{
    let mut writer = Writer::new(sink, Box::new([0u8; BLOCK_SIZE]));
    let mut run = Run {
        accepted: 0,
        acknowledged: 0,
        attempted: 0,
        failed: false,
    };
    for (i, record) in records.iter().enumerate() {
        run.attempted += 1;
        if let Err(e) = writer.add_record(record) {
            assert!(matches!(e, WriteError::Sink(_)), "first error: {e:?}");
            run.failed = true;
            break;
        }
        run.accepted += 1;
        if every > 0 && (i + 1) % every == 0 {
            if let Err(e) = writer.flush() {
                assert!(matches!(e, WriteError::Sink(_)), "first error: {e:?}");
                run.failed = true;
                break;
            }
            run.acknowledged = run.accepted;
        }
    }
    if !run.failed {
        match writer.flush() {
            Ok(()) => run.acknowledged = run.accepted,
            Err(e) => {
                assert!(matches!(e, WriteError::Sink(_)), "first error: {e:?}");
                run.failed = true;
            }
        }
    }
    if run.failed {
        assert!(writer.is_poisoned());
        for _ in 0..2 {
            assert!(matches!(
                writer.add_record(b"more"),
                Err(WriteError::Poisoned)
            ));
            assert!(matches!(writer.flush(), Err(WriteError::Poisoned)));
            assert!(matches!(writer.pad_to(8), Err(WriteError::Poisoned)));
        }
    }
    run
}

/// Checks what reached the destination after `run`: the first bytes of `full`, reading back
/// as the promised records (read for real when `read`, else from the model's spans).
fn check_destination(
    what: &str,
    out: &[u8],
    full: &[u8],
    spans: &[std::ops::Range<u64>],
    records: &[Vec<u8>],
    run: &Run,
    read: bool,
) {
    assert!(
        out.len() <= full.len(),
        "{what}: more bytes than the log has"
    );
    assert!(
        out == &full[..out.len()],
        "{what}: the bytes that got through differ from the log's"
    );
    // The records a reader finds in a prefix: those whose chunks all got through.
    let complete = spans
        .iter()
        .take_while(|s| s.end <= out.len() as u64)
        .count();
    assert!(
        complete >= run.acknowledged,
        "{what}: acknowledged records lost ({complete} readable, {} acknowledged)",
        run.acknowledged
    );
    assert!(
        complete <= run.attempted,
        "{what}: a record readable that was never added"
    );
    if !run.failed {
        assert_eq!(complete, records.len(), "{what}");
    }
    if read {
        let o = read_log(out);
        assert!(o.drops().is_empty(), "{what}: a report: {:?}", o.drops());
        assert_eq!(o.records(), records[..complete], "{what}: read back");
        assert!(o.items.iter().all(|s| matches!(s, Seen::Record { .. })));
    }
}

#[test]
fn a_sink_failing_at_every_byte() {
    for (name, records) in scripts() {
        let (full, spans) = model::write_spans(&records, 0);
        let n = full.len();
        let small = name == "small";
        let mut points: Vec<usize> = if small {
            (0..=n).collect()
        } else {
            (0..=n).step_by(61).collect()
        };
        for b in 0..=n / BLOCK_SIZE {
            let at = b * BLOCK_SIZE;
            points.extend(at.saturating_sub(16)..(at + 16).min(n + 1));
        }
        for s in &spans {
            points.extend(s.end.saturating_sub(3) as usize..(s.end as usize + 3).min(n + 1));
        }
        points.sort_unstable();
        points.dedup();
        for every in [1, 3, 0] {
            for (k, &budget) in points.iter().enumerate() {
                let out: Shared = Rc::default();
                let sink = Failing {
                    out: Rc::clone(&out),
                    budget,
                    failed: false,
                };
                let run = run(sink, &records, every);
                let what = format!("{name} log, flush every {every}, failing after {budget} bytes");
                assert_eq!(run.failed, budget < n, "{what}: {run:?}");
                let out = out.borrow();
                check_destination(
                    &what,
                    &out,
                    &full,
                    &spans,
                    &records,
                    &run,
                    k % 37 == 0 || budget + 1 >= n,
                );
            }
        }
    }
}

/// An `io::Write` with scripted misbehaviour.
struct Flaky {
    out: Shared,
    /// Total bytes it accepts before it is full (`ENOSPC`).
    capacity: usize,
    /// At most this many bytes per `write` call.
    max_write: usize,
    /// Every n-th call is `Interrupted` (0: never).
    interrupt_every: usize,
    /// Once full: `Ok(0)` instead of an error.
    zero_when_full: bool,
    calls: usize,
    /// The n-th `sync` fails with `EIO` (0: none does).
    sync_fails_at: usize,
    syncs: usize,
}

impl Flaky {
    fn new(out: &Shared, capacity: usize, max_write: usize, interrupt_every: usize) -> Self {
        Flaky {
            out: Rc::clone(out),
            capacity,
            max_write,
            interrupt_every,
            zero_when_full: false,
            calls: 0,
            sync_fails_at: 0,
            syncs: 0,
        }
    }
}

impl logfmt_std::advanced::SyncWrite for Flaky {
    fn sync(&mut self) -> io::Result<()> {
        self.syncs += 1;
        if self.syncs == self.sync_fails_at {
            return Err(io::Error::from_raw_os_error(5)); // EIO
        }
        Ok(())
    }
}

impl Write for Flaky {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.calls += 1;
        if self.interrupt_every > 0 && self.calls.is_multiple_of(self.interrupt_every) {
            return Err(io::ErrorKind::Interrupted.into());
        }
        let mut out = self.out.borrow_mut();
        let room = self.capacity - out.len();
        if room == 0 && !buf.is_empty() {
            if self.zero_when_full {
                return Ok(0);
            }
            return Err(io::Error::from_raw_os_error(28)); // ENOSPC
        }
        let n = buf.len().min(room).min(self.max_write);
        out.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn std_sink_short_writes_interruptions_and_enospc() {
    for (name, records) in scripts() {
        let (full, spans) = model::write_spans(&records, 0);
        let n = full.len();
        // Short writes and interruptions: the same log.
        for (max_write, interrupt_every) in [(1, 0), (7, 3), (4096, 2), (100_000, 5)] {
            let out: Shared = Rc::default();
            let flaky = Flaky::new(&out, usize::MAX / 2, max_write, interrupt_every);
            let run = run(StdSink::new(flaky), &records, 2);
            assert!(!run.failed, "{name}: short writes are not failures");
            assert!(
                *out.borrow() == full,
                "{name}: short writes change the bytes"
            );
        }
        // The destination fills up (ENOSPC, or a writer returning Ok(0)) after `capacity`
        // bytes, at points around every block boundary and a stride.
        let mut capacities: Vec<usize> = (0..n).step_by(1009).collect();
        for b in 1..=n / BLOCK_SIZE {
            capacities.extend(b * BLOCK_SIZE - 3..(b * BLOCK_SIZE + 3).min(n));
        }
        for capacity in capacities {
            for zero_when_full in [false, true] {
                let out: Shared = Rc::default();
                let flaky = Flaky {
                    zero_when_full,
                    ..Flaky::new(&out, capacity, 1000, 4)
                };
                let mut writer = Writer::new(StdSink::new(flaky), Box::new([0u8; BLOCK_SIZE]));
                let mut acknowledged = 0;
                let mut accepted = 0;
                let mut error = None;
                for record in &records {
                    match writer.add_record(record).and_then(|_| {
                        accepted += 1;
                        writer.flush()
                    }) {
                        Ok(()) => acknowledged = accepted,
                        Err(e) => {
                            error = Some(e);
                            break;
                        }
                    }
                }
                let what =
                    format!("{name} log, full after {capacity} bytes (Ok(0): {zero_when_full})");
                let Some(WriteError::Sink(e)) = error else {
                    panic!("{what}: the failure did not surface: {error:?}");
                };
                let kind = if zero_when_full {
                    io::ErrorKind::WriteZero
                } else {
                    io::ErrorKind::StorageFull
                };
                assert_eq!(e.kind(), kind, "{what}: {e}");
                assert!(
                    matches!(writer.add_record(b"x"), Err(WriteError::Poisoned)),
                    "{what}"
                );
                assert!(
                    matches!(writer.flush(), Err(WriteError::Poisoned)),
                    "{what}"
                );
                let run = Run {
                    accepted,
                    acknowledged,
                    attempted: accepted + 1,
                    failed: true,
                };
                check_destination(&what, &out.borrow(), &full, &spans, &records, &run, true);
            }
        }
    }
}

/// `/dev/full` (ENOSPC on every write): the first block the writer hands over fails with
/// `StorageFull`, the log writer is poisoned from then on, and `LogFile` refuses the device as
/// a log file to create in the first place.
#[cfg(target_os = "linux")]
#[test]
fn dev_full() {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let mut writer = Writer::new(StdSink::new(file), Box::new([0u8; BLOCK_SIZE]));
    // Records laid out in the block buffer are not written yet...
    writer.add_record(b"hello").expect("laid out in memory");
    // ...flushing them fails.
    let err = writer.flush().expect_err("ENOSPC");
    let WriteError::Sink(e) = err else {
        panic!("{err:?}")
    };
    assert_eq!(e.kind(), io::ErrorKind::StorageFull);
    assert_eq!(e.raw_os_error(), Some(28));
    assert!(matches!(writer.add_record(b"x"), Err(WriteError::Poisoned)));
    // A whole block fails inside add_record.
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let mut writer = Writer::new(StdSink::new(file), Box::new([0u8; BLOCK_SIZE]));
    assert!(matches!(
        writer.add_record(&[7u8; 40_000]),
        Err(WriteError::Sink(_))
    ));
    assert!(matches!(writer.flush(), Err(WriteError::Poisoned)));
    // LogWriter will not create a log on a device.
    let err = logfmt_std::LogWriter::create("/dev/full", &logfmt_std::LogWriterOptions::new())
        .expect_err("not a regular file");
    assert!(matches!(err, logfmt_std::Error::NotAFile { .. }), "{err:?}");
}

/// The file constructors' errors name the file and say why.
#[test]
fn log_file_write_errors_name_the_file() {
    let dir = std::env::temp_dir().join(format!("logfmt-write-faults-{}", std::process::id()));
    let path = dir.join("missing").join("000001.log");
    let options = logfmt_std::LogWriterOptions::new();
    for err in [
        logfmt_std::LogWriter::create(&path, &options).err(),
        logfmt_std::AtomicLog::create(&path, &logfmt_std::LogWriterOptions::new()).err(),
    ] {
        let text = err.as_ref().map(ToString::to_string).unwrap_or_default();
        assert!(text.starts_with("cannot create log: "), "{text}");
        assert!(text.contains("000001.log"), "{text}");
        let source = err
            .as_ref()
            .and_then(|e| std::error::Error::source(e))
            .map(ToString::to_string);
        assert!(
            source
                .as_deref()
                .is_some_and(|s| s.contains("No such file or directory")),
            "{source:?}"
        );
    }
}

/// `logfmt-std`'s `LogWriter` (syncing every record): a failed `fsync` (`EIO`) or a full
/// destination (`ENOSPC`) is `Failed` once, naming the operation; every later call is
/// `Poisoned` with the same original error (no retry after a failed fsync: what reached the
/// disk is unknown); every record whose `add_record` returned Ok (synced) reads back, in order,
/// with no report.
#[test]
fn log_writer_failures_are_sticky() {
    use logfmt_std::{
        LogWriter, LogWriterError, LogWriterOptions, SyncPolicy, advanced::WriteOperation,
    };
    let (_, records) = scripts().remove(1);
    let (full, spans) = model::write_spans(&records, 0);
    let options = LogWriterOptions::new().sync(SyncPolicy::EveryRecord);
    // Failures: each sync in turn, and the destination filling up around every block edge.
    let mut faults: Vec<(usize, usize)> =
        (1..=records.len()).map(|k| (usize::MAX / 2, k)).collect();
    for b in 0..=full.len() / BLOCK_SIZE {
        let edge = (b * BLOCK_SIZE).saturating_sub(2)..(b * BLOCK_SIZE + 2).min(full.len());
        faults.extend(edge.map(|capacity| (capacity, 0)));
    }
    for (capacity, sync_fails_at) in faults {
        let what = format!("LogWriter, capacity {capacity}, sync #{sync_fails_at} fails");
        let out: Shared = Rc::default();
        let flaky = Flaky {
            sync_fails_at,
            ..Flaky::new(&out, capacity, 5000, 3)
        };
        let mut writer = LogWriter::new(flaky, &options);
        let mut acknowledged = 0;
        let mut failure = None;
        for record in &records {
            match writer.add_record(record) {
                Ok(_) => acknowledged += 1,
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        let Some(LogWriterError::Failed { operation, source }) = failure else {
            panic!("{what}: no failure surfaced: {failure:?}");
        };
        if sync_fails_at > 0 {
            assert_eq!(operation, WriteOperation::Sync, "{what}");
            assert_eq!(source.raw_os_error(), Some(5), "{what}");
        } else {
            assert_eq!(
                source.kind(),
                io::ErrorKind::StorageFull,
                "{what}: {source}"
            );
        }
        for _ in 0..2 {
            for result in [
                writer.add_record(b"x").map(drop),
                writer.flush(),
                writer.sync(),
            ] {
                match result {
                    Err(LogWriterError::Poisoned { source: again, .. }) => {
                        assert_eq!(again.raw_os_error(), source.raw_os_error(), "{what}");
                    }
                    other => panic!("{what}: not poisoned: {other:?}"),
                }
            }
        }
        assert!(writer.failure().is_some());
        drop(writer);
        let run = Run {
            accepted: acknowledged,
            acknowledged,
            attempted: acknowledged + 1,
            failed: true,
        };
        check_destination(&what, &out.borrow(), &full, &spans, &records, &run, true);
    }
}
