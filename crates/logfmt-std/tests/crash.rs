//! Crash-proven appends: a `LogWriter` in a child process is killed (SIGKILL) at random
//! moments, many times, and after each kill the log holds every acknowledged record, nothing
//! that was never written, and the next append continues it cleanly.
//!
//! The child appends with [`SyncPolicy::EveryRecord`] and acknowledges each record by
//! printing `ack N` once `add_record` has returned (the record is then synced). It is this
//! test binary itself, run again with `LOGFMT_CRASH_CHILD` naming the log.
//!
//! `LOGFMT_CRASH_TRIALS` sets the number of kills (default 40, a few seconds);
//! `LOGFMT_CRASH_SEED` the seed.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use logfmt_std::{
    DamageKind, LogReaderOptions, LogWriter, LogWriterOptions, RecoveryMode, SyncPolicy,
    TornTailPolicy,
    advanced::{Entry, LogReader},
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The child's log, when this binary runs as the child.
const CHILD: &str = "LOGFMT_CRASH_CHILD";
/// Which run the child is (its records differ from every other run's).
const RUN: &str = "LOGFMT_CRASH_RUN";

/// A small deterministic generator (xorshift64*), seeded.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Record `i` of run `run`: its length varies from empty to two blocks, and its bytes name
/// the run and the record.
fn record(run: u64, i: u64) -> Vec<u8> {
    let mut rng = Rng((run << 32 | i).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let len = match rng.below(10) {
        0 => 0,
        1 => 40_000 + rng.below(30_000) as usize,
        2..=4 => rng.below(5_000) as usize,
        _ => rng.below(200) as usize,
    };
    let mut data = format!("{run}:{i}:").into_bytes();
    data.resize(data.len() + len, (run as u8).wrapping_add(i as u8));
    data
}

/// The child: appends records of its run until it is killed, acknowledging each.
#[test]
fn crash_child() -> TestResult {
    let Some(path) = std::env::var_os(CHILD) else {
        return Ok(()); // Not the child.
    };
    let run: u64 = std::env::var(RUN)?.parse()?;
    let writing = LogWriterOptions::new().sync(SyncPolicy::EveryRecord);
    let options = writing.torn_tail(TornTailPolicy::Truncate);
    let (mut writer, _) = LogWriter::append(Path::new(&path), &options)?;
    println!("ready");
    for i in 0.. {
        writer.add_record(&record(run, i))?;
        println!("ack {i}");
    }
    Ok(())
}

/// Records, and whether a torn tail follows them.
type Contents = (Vec<Vec<u8>>, bool);

/// The records of the log at `path`, and whether it ends in a torn tail; any other damage
/// is an error.
fn read_back(path: &Path) -> Result<Contents, Box<dyn std::error::Error>> {
    let data = fs::read(path)?;
    let options = LogReaderOptions::new().recovery(RecoveryMode::SkipAnyCorruptedRecords);
    let mut reader = LogReader::from_slice(&data, &options);
    let mut records = Vec::new();
    while let Some(entry) = reader.next()? {
        match entry {
            Entry::Record(r) => records.push(r.data.to_vec()),
            Entry::Damage(d) if d.kind == DamageKind::TornTail => {}
            Entry::Damage(d) => return Err(format!("damage after a crash: {d}").into()),
            other => panic!("not expected here: {other:?}"),
        }
    }
    Ok((records, reader.tail().is_some()))
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn a_writer_killed_at_random_moments_loses_no_acknowledged_record() -> TestResult {
    let trials = env_number("LOGFMT_CRASH_TRIALS", 40);
    let seed = env_number("LOGFMT_CRASH_SEED", 0x5eed);
    let mut rng = Rng(seed | 1);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("000001.log");
    let mut expected: Vec<Vec<u8>> = Vec::new();
    let mut torn_seen = 0;
    for run in 1..=trials {
        let mut child = Command::new(std::env::current_exe()?)
            .args(["crash_child", "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD, &path)
            .env(RUN, run.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        // Kill after a random number of acknowledgements (sometimes before the first), and a
        // random moment after it.
        let wanted = rng.below(30);
        let mut acked = 0u64;
        let mut ready = false;
        while acked < wanted {
            let Some(line) = lines.next() else { break };
            let line = line?;
            if line == "ready" {
                ready = true;
            } else if line.starts_with("ack ") {
                acked += 1;
            }
        }
        std::thread::sleep(Duration::from_micros(rng.below(3_000)));
        child.kill()?;
        child.wait()?;
        // Acknowledgements printed before the kill landed count too.
        for line in lines {
            let line = line?;
            ready |= line == "ready";
            acked += u64::from(line.starts_with("ack "));
        }

        let (records, torn) = read_back(&path)?;
        torn_seen += usize::from(torn);
        // Every record of earlier runs, then this run's records in order: every one
        // acknowledged, and at most the one being written beyond them.
        let before = expected.len();
        assert!(
            records.len() >= before && records[..before] == expected[..],
            "run {run}: records of earlier runs lost or changed"
        );
        let new = &records[before..];
        let mine: Vec<Vec<u8>> = (0..new.len() as u64).map(|i| record(run, i)).collect();
        assert_eq!(new, &mine[..], "run {run}: a record never written appeared");
        assert!(
            new.len() as u64 >= acked && new.len() as u64 <= acked + 1,
            "run {run}: {} records of {acked} acknowledged (ready: {ready})",
            new.len()
        );
        expected = records;
    }
    // The next append (truncating a torn tail, if any) continues cleanly.
    let options = LogWriterOptions::new().torn_tail(TornTailPolicy::Truncate);
    let (mut writer, report) = LogWriter::append(&path, &options)?;
    assert_eq!(report.records, expected.len() as u64);
    writer.add_record(b"the end")?;
    writer.close()?;
    let (records, torn) = read_back(&path)?;
    assert!(!torn);
    expected.push(b"the end".to_vec());
    assert_eq!(records, expected);
    eprintln!("{trials} kills, {torn_seen} left a torn tail");
    Ok(())
}

/// A log file on a disk that fills up: writes fail with `StorageFull` once `room` bytes are
/// written (the last write may be cut short, as a real one is).
struct Full {
    file: fs::File,
    room: usize,
}

impl std::io::Write for Full {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.room == 0 && !buf.is_empty() {
            return Err(std::io::ErrorKind::StorageFull.into());
        }
        let n = buf.len().min(self.room);
        let n = self.file.write(&buf[..n])?;
        self.room -= n;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl logfmt_std::advanced::SyncWrite for Full {
    fn sync(&mut self) -> std::io::Result<()> {
        self.file.sync_data()
    }
}

#[test]
fn a_full_disk_keeps_every_record_written_before_it() -> TestResult {
    let dir = tempfile::tempdir()?;
    let mut rng = Rng(7);
    for room in [
        0usize, 1, 6, 7, 100, 32_767, 32_768, 40_000, 100_000, 150_001,
    ] {
        let path = dir.path().join(format!("full-{room}.log"));
        let file = fs::File::options().create(true).append(true).open(&path)?;
        let options = LogWriterOptions::new().sync(SyncPolicy::EveryRecord);
        let mut writer = LogWriter::new(Full { file, room }, &options);
        let mut acked = Vec::new();
        let error = loop {
            let data = record(room as u64, acked.len() as u64);
            match writer.add_record(&data) {
                Ok(_) => acked.push(data),
                Err(e) => break e,
            }
            if acked.len() > 10_000 {
                return Err("the disk never filled".into());
            }
        };
        // A clear error: the disk is full, and the writer refuses more.
        assert_eq!(error.kind(), Some(std::io::ErrorKind::StorageFull));
        assert!(!error.is_poisoned());
        assert!(writer.add_record(b"more").is_err_and(|e| e.is_poisoned()));
        drop(writer);
        // Every acknowledged record is there; at most a torn tail follows.
        let (records, _) = read_back(&path)?;
        assert_eq!(records, acked, "room {room}");
        // Once there is room again, the log continues cleanly after its last record.
        let options = LogWriterOptions::new().torn_tail(TornTailPolicy::Truncate);
        let (mut writer, report) = LogWriter::append(&path, &options)?;
        assert_eq!(report.records, acked.len() as u64);
        let extra = record(9, rng.below(100));
        writer.add_record(&extra)?;
        writer.close()?;
        let (records, torn) = read_back(&path)?;
        assert!(!torn);
        acked.push(extra);
        assert_eq!(records, acked, "room {room}");
    }
    Ok(())
}
