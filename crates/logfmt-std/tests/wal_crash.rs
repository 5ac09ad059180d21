//! Crash-proving the WAL directory: random workloads (appends, waits, rotations at a size and
//! on demand, releases, reuse of released logs, clean restarts, and with failover to a second
//! directory, stalls of the primary's syncs) on a [`CrashableStorage`],
//! crashed in the middle of every storage operation in turn — a write, a sync, a file
//! created, renamed, cut or removed, a directory synced — losing everything not made
//! durable (and, in some runs, keeping a torn part of the unsynced bytes). After each crash
//! the directory is recovered (point in time), and:
//!
//! - every acknowledged record is there, in order, exactly once, at the position it was
//!   given;
//! - nothing else is there but records appended after the acknowledged ones, in order (a
//!   prefix of them);
//! - nothing released comes back;
//!
//! then the workload goes on from the recovered state, and is checked again at its end.
//!
//! Half the workloads fail over to a second directory when the primary's syncs stall (a sync
//! through the storage seam that blocks until the workload lets it go on, or a crash): a log
//! then goes on in a new file (segment) in the other directory, and a record may be written in
//! two files; recovery must still yield it once. Records are then compared by log and bytes
//! (which file of its log a record is read from depends on whether the stalled sync ended).
//!
//! `LOGFMT_WAL_CRASH_CASES` sets the number of workloads (default 96).

use std::path::Path;

use logfmt_std::RecoveryMode;
use std::time::Duration;

use logfmt_std::wal::{
    CrashableStorage, Failover, Wal, WalEntry, WalOptions, WalTicket, WalWriter,
};
use proptest::prelude::*;

/// One step of a workload.
#[derive(Debug, Clone)]
enum Op {
    /// Append a record of this many bytes (beyond its id); not waited for.
    Append(usize),
    /// Append one and wait until it is durable.
    AppendDurable(usize),
    /// Wait for the last record appended.
    Wait,
    /// Start a new log.
    Rotate,
    /// Release the logs before the record this far back from the last (0: the last).
    Release(usize),
    /// Close cleanly and open again.
    Restart,
    /// With failover: every sync in the primary directory blocks from now.
    Stall,
    /// With failover: the primary's syncs go on.
    Unstall,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0usize..3_000).prop_map(Op::Append),
        4 => (0usize..3_000).prop_map(Op::AppendDurable),
        1 => Just(Op::Wait),
        1 => Just(Op::Rotate),
        1 => (0usize..6).prop_map(Op::Release),
        1 => Just(Op::Restart),
        1 => Just(Op::Stall),
        1 => Just(Op::Unstall),
    ]
}

/// Record `id`: its id, then `len` bytes that depend on it.
fn record(id: u64, len: usize) -> Vec<u8> {
    let mut data = id.to_le_bytes().to_vec();
    data.extend((0..len).map(|i| (id as usize).wrapping_mul(31).wrapping_add(i) as u8));
    data
}

/// A record the model expects: its id, its log, its offset, and its bytes.
#[derive(Debug, Clone)]
struct Rec {
    log: u64,
    offset: u64,
    data: Vec<u8>,
}

/// What the directory must hold.
#[derive(Debug, Default)]
struct Model {
    /// Every record that may be there, in order.
    records: Vec<Rec>,
    /// The first this many are acknowledged: they must be there.
    acked: usize,
    /// A release was under way at the crash: logs below this may be gone.
    releasing: Option<u64>,
    /// The last record's ticket.
    last: Option<WalTicket>,
    next_id: u64,
    /// A record may be read from either of two files of its log (failover): records are
    /// compared by their log and bytes.
    moving: bool,
}

impl Model {
    fn ack_all(&mut self) {
        self.acked = self.records.len();
    }

    /// Logs below `limit` were released.
    fn released(&mut self, limit: u64) {
        let gone = self.records.iter().take_while(|r| r.log < limit).count();
        self.records.drain(..gone);
        self.acked = self.acked.saturating_sub(gone);
    }
}

const DIR: &str = "/wal";
const SECONDARY: &str = "/wal-secondary";

fn options(recycle: usize, log_size: u64, failover: bool) -> WalOptions {
    let failover = failover.then(|| Failover::new(SECONDARY, Duration::from_millis(2)));
    WalOptions::new()
        .create(true)
        .recovery(RecoveryMode::PointInTimeRecovery)
        .recycle(recycle)
        .log_size(log_size)
        .failover(failover)
}

/// Opens the directory, checks what it recovers against the model (which it then becomes),
/// and starts writing. `None` if the machine crashed meanwhile.
fn recover_and_check(
    fs: &CrashableStorage,
    options: &WalOptions,
    model: &mut Model,
) -> Result<Option<WalWriter<CrashableStorage>>, TestCaseError> {
    // A syncing thread of an earlier writer (of a file whose sync stalled, going on once
    // the stall ends) may bring the crash about while the directory is read: read it again
    // after such a crash.
    let (wal, found, damaged) = loop {
        let crashes = fs.crashes();
        let read = read_all(fs, options);
        if fs.crashes() == crashes {
            break read?;
        }
    };
    // A release under way may or may not have happened.
    let moving = model.moving;
    let same =
        |a: &Rec, b: &Rec| a.data == b.data && a.log == b.log && (moving || a.offset == b.offset);
    // A release under way at the crash: any of its oldest logs may be gone.
    if let Some(limit) = model.releasing.take() {
        let gone = model.records.iter().take_while(|r| r.log < limit).count();
        let k = match found.first() {
            Some(first) => (0..=gone)
                .find(|&k| model.records.get(k).is_some_and(|r| same(r, first)))
                .unwrap_or(0),
            None => gone,
        };
        if k > 0 {
            let log = model.records[k - 1].log;
            prop_assert!(
                model.records.get(k).is_none_or(|r| r.log != log),
                "a released log came back in part"
            );
        }
        model.records.drain(..k);
        model.acked = model.acked.saturating_sub(k);
    }
    let skip = 0;
    let expected = &model.records[skip..];
    prop_assert!(
        found.len() >= model.acked && found.len() <= expected.len(),
        "found {} records, {} acknowledged, {} appended",
        found.len(),
        model.acked,
        expected.len()
    );
    for (i, (got, want)) in found.iter().zip(expected).enumerate() {
        prop_assert!(
            same(got, want),
            "record {} of {}: {:?} for {:?}",
            i,
            found.len(),
            (got.log, got.offset, got.data.len()),
            (want.log, want.offset, want.data.len())
        );
    }
    if std::env::var_os("WAL_DEBUG").is_some() {
        eprintln!(
            "model {:?}",
            model
                .records
                .iter()
                .map(|r| (r.log, r.offset, r.data.len()))
                .collect::<Vec<_>>()
        );
        eprintln!(
            "logs {:?} found {:?} damage {damaged:?}",
            wal.logs(),
            found
                .iter()
                .map(|r| (r.log, r.offset, r.data.len()))
                .collect::<Vec<_>>()
        );
    }
    if let Some((log, damage)) = damaged {
        prop_assert_eq!(Some(log), wal.logs().last().copied(), "{}", damage);
        prop_assert!(
            found
                .last()
                .is_none_or(|r| r.log < log || r.offset < damage.offset)
        );
    }
    model.records = found;
    model.ack_all(); // what was recovered is durable
    model.last = None;
    match wal.start() {
        Ok(writer) => Ok(Some(writer)),
        Err(_) if !fs.crash_pending() => Ok(None),
        Err(e) => Err(TestCaseError::fail(format!("start: {e}"))),
    }
}

/// What the directory recovers: its records and the damage point in time stopped at.
type Read = (
    Wal<CrashableStorage>,
    Vec<Rec>,
    Option<(u64, logfmt_std::Damage)>,
);

/// Opens the directory and reads it to its end.
fn read_all(fs: &CrashableStorage, options: &WalOptions) -> Result<Read, TestCaseError> {
    let mut wal = match Wal::open_in(fs.clone(), Path::new(DIR), options) {
        Ok(wal) => wal,
        Err(e) => return Err(TestCaseError::fail(format!("open: {e}"))),
    };
    let mut found = Vec::new();
    let mut damaged = None;
    for entry in wal.recover() {
        match entry.map_err(|e| TestCaseError::fail(format!("recovery: {e}")))? {
            WalEntry::Record(r) => found.push(Rec {
                log: r.position.log,
                offset: r.position.offset,
                data: r.data,
            }),
            WalEntry::Damage { log, damage } => {
                // A write torn by the crash, where point in time stops: in the last log, after
                // the last record recovered.
                prop_assert!(damaged.is_none(), "damage after damage: {damage}");
                damaged = Some((log, damage));
            }
            _ => {}
        }
    }
    Ok((wal, found, damaged))
}

/// Runs `ops` from `from`; returns where it stopped if the machine crashed.
fn run(
    fs: &CrashableStorage,
    options: &WalOptions,
    model: &mut Model,
    writer: &mut Option<WalWriter<CrashableStorage>>,
    ops: &[Op],
) -> Result<Option<usize>, TestCaseError> {
    let crashes = fs.crashes();
    for (i, op) in ops.iter().enumerate() {
        if fs.crashes() != crashes {
            // A crash the last step did not see (a rotation after an append, which the
            // append does not fail for).
            return Ok(Some(i));
        }
        let Some(w) = writer.as_ref() else {
            return Ok(Some(i));
        };
        let done = match op {
            Op::Append(len) | Op::AppendDurable(len) => {
                let id = model.next_id;
                model.next_id += 1;
                let data = record(id, *len);
                match w.append(&data) {
                    Ok(ticket) => {
                        model.records.push(Rec {
                            log: ticket.position.log,
                            offset: ticket.position.offset,
                            data,
                        });
                        model.last = Some(ticket);
                        if matches!(op, Op::AppendDurable(_)) {
                            w.wait(ticket).map(|()| model.ack_all())
                        } else {
                            Ok(())
                        }
                    }
                    Err(e) => Err(e),
                }
            }
            Op::Wait => match model.last {
                Some(ticket) => w.wait(ticket).map(|()| model.ack_all()),
                None => Ok(()),
            },
            // Every record of the log durable first (with failover, in another file if need be).
            Op::Rotate => w.rotate().map(|_| model.ack_all()),
            Op::Stall => {
                if model.moving {
                    fs.stall(Path::new(DIR));
                }
                Ok(())
            }
            Op::Unstall => {
                fs.unstall(Path::new(DIR));
                Ok(())
            }
            Op::Release(back) => {
                let at = model.records.len().checked_sub(back + 1);
                let position = at.map(|at| {
                    let r = &model.records[at];
                    logfmt_std::wal::WalPosition::new(r.log, r.offset)
                });
                match position {
                    Some(position) => {
                        let limit = position.log.min(w.position().log);
                        model.releasing = Some(limit);
                        let released = w.release_before(position);
                        if released.is_ok() {
                            model.releasing = None;
                            model.released(limit);
                        }
                        released.map(drop)
                    }
                    None => Ok(()),
                }
            }
            Op::Restart => {
                let closed = writer.take().map(WalWriter::close).transpose();
                match closed {
                    Ok(_) => {
                        model.ack_all();
                        *writer = recover_and_check(fs, options, model)?;
                        Ok(())
                    }
                    Err(e) => Err(e),
                }
            }
        };
        if std::env::var_os("WAL_DEBUG").is_some() {
            eprintln!("  {op:?}: {done:?} (crashes {})", fs.crashes());
        }
        if let Err(e) = done {
            prop_assert!(!fs.crash_pending(), "{op:?} failed with no crash: {e}");
            return Ok(Some(i));
        }
        if writer.is_none() {
            return Ok(Some(i + 1));
        }
    }
    Ok((fs.crashes() != crashes).then_some(ops.len()))
}

/// The workload, crashed after `crash_at` storage operations (never, with `None`); checked
/// after the crash and at its end.
fn workload(
    ops: &[Op],
    options: &WalOptions,
    crash_at: Option<u64>,
    tear: Option<u64>,
) -> Result<u64, TestCaseError> {
    let fs = CrashableStorage::new();
    let mut model = Model {
        moving: options.failover.is_some(),
        ..Model::default()
    };
    let mut writer = recover_and_check(&fs, options, &mut model)?;
    let start = fs.operations();
    if let Some(at) = crash_at {
        fs.crash_after(at, tear);
    }
    let mut rest = ops;
    while let Some(stopped) = run(&fs, options, &mut model, &mut writer, rest)? {
        // The machine crashed: drop the writer (its handles write to nothing now), recover.
        drop(writer.take());
        prop_assert!(!fs.crash_pending(), "stopped with no crash");
        writer = recover_and_check(&fs, options, &mut model)?;
        rest = &rest[stopped.min(rest.len())..];
    }
    let used = fs.operations() - start;
    fs.unstall(Path::new(DIR));
    if let Some(writer) = writer.take() {
        let crashes = fs.crashes();
        match writer.close() {
            Ok(()) => model.ack_all(),
            // The crash came in the last syncs (a syncing thread's count of operations
            // varies from run to run).
            Err(_) if fs.crashes() != crashes || (crash_at.is_some() && !fs.crash_pending()) => {}
            Err(e) => return Err(TestCaseError::fail(format!("close: {e}"))),
        }
    }
    recover_and_check(&fs, options, &mut model)?;
    Ok(used)
}

fn cases() -> u32 {
    std::env::var("LOGFMT_WAL_CRASH_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(96)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn every_acknowledged_record_survives_a_crash_at_every_step(
        ops in proptest::collection::vec(op(), 1..40),
        recycle in prop_oneof![Just(0usize), Just(2usize)],
        log_size in prop_oneof![Just(4_000u64), Just(40_000u64)],
        tear in proptest::option::of(any::<u64>()),
        failover in any::<bool>(),
    ) {
        let options = options(recycle, log_size, failover);
        let operations = workload(&ops, &options, None, None)?;
        if std::env::var_os("WAL_DEBUG").is_some() {
            eprintln!("{} ops, {operations} crash points", ops.len());
        }
        for at in 1..=operations {
            workload(&ops, &options, Some(at), tear)?;
        }
    }
}

/// Workloads that once failed, at every crash point.
#[test]
fn regressions() -> Result<(), TestCaseError> {
    use Op::*;
    type Case = (&'static [Op], usize, u64, Option<u64>, bool);
    let cases: [Case; 5] = [
        (
            &[
                Append(2701),
                Append(112),
                Append(2049),
                Wait,
                AppendDurable(2923),
                AppendDurable(2528),
                Append(941),
                Unstall,
                AppendDurable(1543),
                Append(2277),
                Append(1888),
                Release(4),
                Stall,
                Append(1928),
                AppendDurable(2668),
                Append(2637),
                Release(1),
                Release(0),
                Append(139),
                AppendDurable(2242),
                Append(360),
                Append(1823),
                AppendDurable(72),
            ],
            2,
            4_000,
            Some(9_259_319_038_939_617_899),
            true,
        ),
        (
            &[
                Stall,
                Append(1167),
                Release(1),
                Release(0),
                Append(869),
                Append(2341),
                AppendDurable(696),
                Wait,
                Append(2691),
                Append(1218),
                Rotate,
                AppendDurable(895),
                AppendDurable(2936),
                Rotate,
                AppendDurable(2927),
                Append(1881),
                Restart,
                Restart,
                Append(1961),
                Release(3),
                Append(2081),
                Release(4),
                AppendDurable(1142),
            ],
            0,
            4_000,
            Some(10_890_804_337_287_113_197),
            true,
        ),
        (
            &[
                Append(816),
                AppendDurable(1362),
                Stall,
                Release(4),
                AppendDurable(903),
                Wait,
                Wait,
                AppendDurable(1386),
                Stall,
                Unstall,
                Append(1459),
                AppendDurable(841),
                Append(29),
                AppendDurable(961),
                Unstall,
                Wait,
                Release(1),
                Release(0),
                Rotate,
            ],
            0,
            40_000,
            None,
            true,
        ),
        (
            &[
                Append(1178),
                AppendDurable(2784),
                Append(0),
                Append(0),
                Append(0),
                Release(0),
                AppendDurable(8),
                Release(0),
                Rotate,
            ],
            2,
            4_000,
            Some(16_234_369_449_060_935_045),
            false,
        ),
        (
            &[
                Restart,
                Rotate,
                Wait,
                Rotate,
                Stall,
                Append(693),
                Stall,
                Append(2068),
                AppendDurable(2189),
                Append(81),
                AppendDurable(1565),
                Append(1867),
                Rotate,
                Unstall,
                Wait,
                AppendDurable(2174),
                AppendDurable(410),
                Wait,
                AppendDurable(1887),
                Restart,
                Stall,
                Stall,
                AppendDurable(457),
                Append(1877),
            ],
            2,
            40_000,
            Some(8_005_854_214_164_162_090),
            true,
        ),
    ];
    for (ops, recycle, log_size, tear, failover) in cases {
        let options = options(recycle, log_size, failover);
        let operations = workload(ops, &options, None, None)?;
        for at in 1..=operations {
            if std::env::var_os("WAL_DEBUG").is_some() {
                eprintln!("crash at {at}");
            }
            workload(ops, &options, Some(at), tear)?;
        }
    }
    Ok(())
}
