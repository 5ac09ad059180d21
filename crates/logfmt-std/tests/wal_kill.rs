//! A WAL directory written by a child process that is killed (SIGKILL) at random moments,
//! many times: four threads append durable records while the logs rotate every 64 KiB and
//! the old ones are released (removed, or kept and reused). After each kill the directory is
//! recovered (point in time) and holds every acknowledged record of a live log exactly once,
//! each thread's records in order, and nothing of a released log; the next child goes on from
//! there.
//!
//! The child is this test binary run again with `LOGFMT_WAL_KILL_CHILD` naming the directory.
//! It prints `ack RUN THREAD INDEX LOG` once a record is durable and `released LOG` once every
//! log before LOG is released. `LOGFMT_WAL_KILL_TRIALS` sets the number of kills (default 12), `LOGFMT_WAL_KILL_SEED` the seed.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use logfmt_std::RecoveryMode;
use logfmt_std::wal::{Wal, WalEntry, WalOptions, WalPosition};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const CHILD: &str = "LOGFMT_WAL_KILL_CHILD";
const RUN: &str = "LOGFMT_WAL_KILL_RUN";
const THREADS: u64 = 4;

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

fn options(run: u64) -> WalOptions {
    WalOptions::new()
        .create(true)
        .recovery(RecoveryMode::PointInTimeRecovery)
        .log_size(64 << 10)
        // Every other run reuses released logs.
        .recycle(if run.is_multiple_of(2) { 2 } else { 0 })
}

/// Record `index` of `thread` in `run`: the three numbers, then up to 3 000 bytes.
fn record(run: u64, thread: u64, index: u64) -> Vec<u8> {
    let mut data = format!("{run} {thread} {index} ").into_bytes();
    let len = Rng((run << 40 | thread << 32 | index) | 1).below(3_000) as usize;
    data.resize(data.len() + len, (index as u8) ^ (thread as u8));
    data
}

/// The record's run, thread and index.
fn parse(data: &[u8]) -> Option<(u64, u64, u64)> {
    let mut words = data.splitn(4, |&b| b == b' ');
    let mut number = || std::str::from_utf8(words.next()?).ok()?.parse().ok();
    Some((number()?, number()?, number()?))
}

/// The child: recovers, then appends from four threads until killed, releasing old logs.
#[test]
fn wal_kill_child() -> TestResult {
    let Some(dir) = std::env::var_os(CHILD) else {
        return Ok(()); // Not the child.
    };
    let run: u64 = std::env::var(RUN)?.parse()?;
    let writer = Arc::new(Wal::open(Path::new(&dir), &options(run))?.start()?);
    let out = Arc::new(Mutex::new(()));
    println!("ready");
    let threads: Vec<_> = (0..THREADS)
        .map(|thread| {
            let writer = Arc::clone(&writer);
            let out = Arc::clone(&out);
            std::thread::spawn(move || -> Result<(), logfmt_std::wal::WalError> {
                let mut recent: Vec<WalPosition> = Vec::new();
                for index in 0.. {
                    let ticket = writer.append_durable(&record(run, thread, index))?;
                    {
                        let _line = out.lock();
                        println!("ack {run} {thread} {index} {}", ticket.position.log);
                    }
                    recent.push(ticket.position);
                    if thread == 0 && index % 40 == 39 {
                        // A checkpoint: everything before the record 40 back is obsolete.
                        let at = recent[recent.len() - 40];
                        let _line = out.lock();
                        // The logs released: those below the record's, never the current one.
                        let below = at.log.min(writer.position().log);
                        println!("releasing {below}");
                        writer.release_before(at)?;
                        println!("released {below}");
                    }
                }
                Ok(())
            })
        })
        .collect();
    for thread in threads {
        thread.join().map_err(|_| "a thread panicked")??;
    }
    Ok(())
}

#[test]
fn a_wal_killed_at_random_moments_keeps_every_acknowledged_record() -> TestResult {
    let seed = std::env::var("LOGFMT_WAL_KILL_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_0fa1u64);
    let trials = std::env::var("LOGFMT_WAL_KILL_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12u64);
    let mut rng = Rng(seed | 1);
    let dir = tempfile::tempdir()?;
    // Every acknowledged record: (run, thread, index) -> its log.
    let mut acked: BTreeMap<(u64, u64, u64), u64> = BTreeMap::new();
    // Logs below this are released; below `releasing`, they may be.
    let mut released = 0u64;
    let mut releasing = 0u64;
    let mut rotations_seen = BTreeSet::new();
    for run in 1..=trials {
        let mut child = Command::new(std::env::current_exe()?)
            .args([
                "wal_kill_child",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, dir.path())
            .env(RUN, run.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let wanted = 50 + rng.below(600);
        let mut seen = 0;
        let mut note = |line: &str| {
            let words: Vec<u64> = line
                .split(' ')
                .skip(1)
                .filter_map(|w| w.parse().ok())
                .collect();
            if line.starts_with("ack ") && words.len() == 4 {
                acked.insert((words[0], words[1], words[2]), words[3]);
                rotations_seen.insert(words[3]);
            } else if line.starts_with("released ") && words.len() == 1 {
                released = released.max(words[0]);
            } else if line.starts_with("releasing ") && words.len() == 1 {
                releasing = releasing.max(words[0]);
            }
        };
        while seen < wanted {
            let Some(line) = lines.next() else { break };
            let line = line?;
            note(&line);
            seen += 1;
        }
        std::thread::sleep(Duration::from_micros(rng.below(2_000)));
        child.kill()?;
        child.wait()?;
        for line in lines {
            note(&line?);
        }

        // Recover as the next writer would.
        let mut wal = Wal::open(dir.path(), &options(run))?;
        let mut found: Vec<((u64, u64, u64), u64)> = Vec::new();
        let last_log = wal.logs().last().copied();
        for entry in wal.recover() {
            match entry? {
                WalEntry::Record(r) => {
                    let id = parse(&r.data).ok_or("a record never written")?;
                    assert_eq!(
                        r.data,
                        record(id.0, id.1, id.2),
                        "run {run}: {id:?} changed"
                    );
                    found.push((id, r.position.log));
                }
                WalEntry::Damage { log, damage } => {
                    // Only the end of the last log: a record the kill cut short.
                    assert_eq!(Some(log), last_log, "run {run}: {damage}");
                }
                _ => {}
            }
        }
        let ids: BTreeSet<_> = found.iter().map(|f| f.0).collect();
        assert_eq!(
            ids.len(),
            found.len(),
            "run {run}: a record recovered twice"
        );
        for (id, log) in &found {
            assert!(
                *log >= released,
                "run {run}: {id:?} of released log {log} came back"
            );
        }
        for (id, log) in &acked {
            assert!(
                *log < releasing || ids.contains(id),
                "run {run}: acknowledged {id:?} of log {log} lost (released below {releasing})"
            );
        }
        // Each thread's records in the order it appended them.
        let mut last: BTreeMap<(u64, u64), u64> = BTreeMap::new();
        for ((r, t, i), _) in &found {
            if let Some(before) = last.insert((*r, *t), *i) {
                assert!(*i > before, "run {run}: thread {t} of run {r} out of order");
            }
        }
        drop(wal);
    }
    assert!(rotations_seen.len() > 3, "logs written: {rotations_seen:?}");
    assert!(released > 1, "nothing was released");
    Ok(())
}
