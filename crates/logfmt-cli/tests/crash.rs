//! Crash-proven `write --append`: the command is killed (SIGKILL) at random moments while it
//! appends, many times; after each kill the log holds every record of the runs that
//! finished, then a prefix of the killed run's records (what it had flushed), and nothing
//! else but at most a torn tail, which the next `--append` refuses and
//! `--append --truncate-torn-tail` cuts off.
//!
//! `write` syncs at the end: a run is acknowledged when it exits with status 0, and then all
//! of its records are in the log. `LOGFMT_CRASH_TRIALS` sets the number of runs (default
//! 30), `LOGFMT_CRASH_SEED` the seed.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use logfmt_std::{
    DamageKind, LogReaderOptions, RecoveryMode,
    advanced::{Entry, LogReader},
};

mod common;

use common::*;

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

/// Line `i` of run `run` (no newline), from a few bytes to a few blocks.
fn line(run: u64, i: u64) -> Vec<u8> {
    let pad = match (run * 7 + i) % 13 {
        0 => 70_000,
        1..=3 => 3_000,
        _ => (i % 50) as usize,
    };
    let mut data = format!("{run}:{i}:").into_bytes();
    data.resize(data.len() + pad, b'a' + (i % 26) as u8);
    data
}

/// Records, and whether a torn tail follows them.
type Contents = (Vec<Vec<u8>>, bool);

/// The records of the log, and whether it ends in a torn tail; other damage is an error.
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
fn write_append_killed_at_random_moments_keeps_a_clean_prefix() -> TestResult {
    let trials = env_number("LOGFMT_CRASH_TRIALS", 30);
    let mut rng = Rng(env_number("LOGFMT_CRASH_SEED", 0xc1a5) | 1);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("crash.log");
    let mut expected: Vec<Vec<u8>> = Vec::new();
    let (mut torn_seen, mut finished) = (0, 0);
    for run in 1..=trials {
        let mut child = Command::new(env!("CARGO_BIN_EXE_logfmt"))
            .args(["write", "--append", "--truncate-torn-tail", p(&path)])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()?;
        let mut stdin = child.stdin.take().ok_or("no stdin")?;
        let lines = 1 + rng.below(200);
        let finish = rng.below(4) == 0;
        let kill_after = rng.below(lines);
        let mut fed = 0;
        for i in 0..lines {
            if !finish && i == kill_after {
                break;
            }
            let mut bytes = line(run, i);
            bytes.push(b'\n');
            if stdin.write_all(&bytes).is_err() {
                break;
            }
            fed += 1;
        }
        let acknowledged = if finish {
            drop(stdin);
            let out = child.wait_with_output()?;
            assert_eq!(status(&out), 0, "run {run}: {}", stderr(&out));
            finished += 1;
            true
        } else {
            std::thread::sleep(Duration::from_micros(rng.below(5_000)));
            child.kill()?;
            child.wait()?;
            drop(stdin);
            false
        };

        let (records, torn) = read_back(&path)?;
        let before = expected.len();
        assert!(
            records.len() >= before && records[..before] == expected[..],
            "run {run}: records of earlier runs lost or changed"
        );
        let new = &records[before..];
        let mine: Vec<Vec<u8>> = (0..new.len() as u64).map(|i| line(run, i)).collect();
        assert_eq!(new, &mine[..], "run {run}: a record never written appeared");
        assert!(new.len() as u64 <= fed, "run {run}: more records than fed");
        if acknowledged {
            assert_eq!(
                new.len() as u64,
                fed,
                "run {run}: a finished run lost records"
            );
            assert!(!torn, "run {run}: a finished run left a torn tail");
        }
        if torn {
            torn_seen += 1;
            // Without the flag, a torn log is refused and left as it is.
            let before = fs::read(&path)?;
            let out = logfmt(&["write", "--append", p(&path)], b"refused\n");
            assert_eq!(status(&out), 1, "run {run}: {}", stderr(&out));
            assert_eq!(fs::read(&path)?, before);
        }
        expected = records;
    }
    let out = logfmt(
        &["write", "--append", "--truncate-torn-tail", p(&path)],
        b"the end\n",
    );
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    expected.push(b"the end".to_vec());
    let (records, torn) = read_back(&path)?;
    assert!(!torn);
    assert_eq!(records, expected);
    let out = logfmt(&["verify", p(&path)], b"");
    assert_eq!(status(&out), 0, "{}", stdout(&out));
    eprintln!("{trials} runs: {finished} finished, {torn_seen} kills left a torn tail");
    Ok(())
}
