//! [`Recovery`]: every live log of a WAL directory read in log-number order, as one log, with
//! the recovery mode applied across the logs as RocksDB applies it.

use std::path::PathBuf;

use logfmt_core::{ReadOptions, parts::ReadFormat};

use crate::file::recyclable_log_number;
use crate::reader::{Entry, LogReader, LogReaderOptions};
use crate::recovery::{Damage, DamageKind, Ending, ReadError, RecoveryMode};
use crate::source::StdSource;

use super::error::{WalError, WalOperation};
use super::storage::Storage;
use super::{WalEntry, WalPosition, WalRecord};

/// A log to read: its number, its path, and where a failover cut it short (its bytes after
/// that offset were written again in the next log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LiveLog {
    pub(crate) number: u64,
    pub(crate) path: PathBuf,
    pub(crate) cut: Option<u64>,
}

/// How recovery ended: what the writer needs to start after it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Outcome {
    /// Point-in-time recovery stopped at this damage, in this log.
    pub(crate) stopped: Option<(u64, Damage)>,
    /// The last log's torn tail (bytes after its last complete record), to cut off.
    pub(crate) torn_tail: Option<(u64, Damage)>,
    /// Recovery was read to its end, without an error.
    pub(crate) complete: bool,
    /// Where the last record recovered ends.
    pub(crate) last: Option<WalPosition>,
}

/// The records of a WAL directory's live logs, in log-number order and, within a log, in
/// file order, read with the [`WalOptions::recovery`](super::WalOptions::recovery) mode as
/// RocksDB reads them across files:
///
/// - [`TolerateCorruptedTailRecords`](RecoveryMode::TolerateCorruptedTailRecords) and
///   [`SkipAnyCorruptedRecords`](RecoveryMode::SkipAnyCorruptedRecords): every log is read,
///   damage skipped (and reported as each mode reports it);
/// - [`PointInTimeRecovery`](RecoveryMode::PointInTimeRecovery): reading stops at the first
///   damage, and at a torn tail of a log that another log follows (a gap between the two: a
///   record of the later log after it would be recovered without the ones lost before it);
///   no later log is read;
/// - [`AbsoluteConsistency`](RecoveryMode::AbsoluteConsistency): any damage, a torn tail
///   included, is an error ([`WalError::Damaged`]).
///
/// Each log starts with [`WalEntry::Log`]. The iterator ends after an error.
#[derive(Debug)]
pub struct Recovery<'a, S: Storage> {
    storage: &'a S,
    logs: &'a [LiveLog],
    mode: RecoveryMode,
    /// The next log to open.
    next: usize,
    reader: Option<(usize, LogReader<StdSource<S::Reader>>)>,
    outcome: &'a mut Outcome,
    done: bool,
}

impl<'a, S: Storage> Recovery<'a, S> {
    pub(crate) fn new(
        storage: &'a S,
        logs: &'a [LiveLog],
        mode: RecoveryMode,
        outcome: &'a mut Outcome,
    ) -> Self {
        *outcome = Outcome::default();
        Self {
            storage,
            logs,
            mode,
            next: 0,
            reader: None,
            outcome,
            done: false,
        }
    }

    /// Where [`PointInTimeRecovery`](RecoveryMode::PointInTimeRecovery) stopped, once it
    /// did: the log's number and the damage (in a log, or its torn tail before the next log).
    /// No later log is read.
    pub fn stopped(&self) -> Option<(u64, Damage)> {
        self.outcome.stopped
    }

    /// The last log's torn tail (bytes after its last complete record, never acknowledged),
    /// once the last log was read to its end: its number and the bytes.
    pub fn torn_tail(&self) -> Option<(u64, Damage)> {
        self.outcome.torn_tail
    }

    /// Opens the next log; its entry.
    fn open_next(&mut self) -> Result<Option<WalEntry>, WalError> {
        let Some(log) = self.logs.get(self.next) else {
            return Ok(None);
        };
        let index = self.next;
        self.next += 1;
        let file = self
            .storage
            .open(&log.path)
            .map_err(|e| WalError::io(WalOperation::Read, &log.path, e))?;
        let read = ReadOptions::new().format(ReadFormat::Auto {
            log_number: Some(recyclable_log_number(log.number)),
        });
        let mut options = LogReaderOptions::new().read(read).recovery(self.mode);
        if let Some(cut) = log.cut {
            options = options.range(0..cut);
        }
        self.reader = Some((index, LogReader::new(StdSource::new(file), &options)));
        Ok(Some(WalEntry::Log {
            number: log.number,
            path: log.path.clone(),
        }))
    }

    /// The next entry of the open log; `None` once it ended (and what its end means is
    /// settled).
    fn next_in_log(&mut self) -> Result<Option<WalEntry>, WalError> {
        let Some((index, reader)) = self.reader.as_mut() else {
            return Ok(None);
        };
        let log = &self.logs[*index];
        let is_last = *index + 1 == self.logs.len();
        let entry = match reader.next() {
            Ok(entry) => entry,
            Err(ReadError::Damaged(damage)) => {
                return Err(WalError::Damaged {
                    log: log.number,
                    damage,
                });
            }
            Err(ReadError::Io(e)) => return Err(WalError::io(WalOperation::Read, &log.path, e)),
            Err(other) => {
                return Err(WalError::io(
                    WalOperation::Read,
                    &log.path,
                    std::io::Error::other(other.to_string()),
                ));
            }
        };
        match entry {
            Some(Entry::Record(record)) => {
                let position = WalPosition::new(log.number, record.offset);
                self.outcome.last = Some(WalPosition::new(log.number, record.end));
                Ok(Some(WalEntry::Record(WalRecord {
                    position,
                    end: record.end,
                    data: record.data.to_vec(),
                })))
            }
            Some(Entry::Damage(damage)) => Ok(Some(WalEntry::Damage {
                log: log.number,
                damage,
            })),
            None => {
                let ending = reader.ending();
                let tail = reader.tail();
                let number = log.number;
                self.reader = None;
                if let Some(Ending::Stopped(damage)) = ending {
                    self.outcome.stopped = Some((number, damage));
                    self.next = self.logs.len();
                    return Ok(None);
                }
                // A cut log ends at its cut: what follows was written again in the next log.
                let tail = tail.filter(|_| log.cut.is_none());
                if let Some(tail) = tail.filter(|t| t.kind == DamageKind::TornTail) {
                    if is_last {
                        self.outcome.torn_tail = Some((number, tail));
                    } else if self.mode == RecoveryMode::PointInTimeRecovery {
                        // A gap before the next log: stop, and say so.
                        self.outcome.stopped = Some((number, tail));
                        self.next = self.logs.len();
                        return Ok(Some(WalEntry::Damage {
                            log: number,
                            damage: tail,
                        }));
                    }
                }
                Ok(None)
            }
        }
    }

    fn step(&mut self) -> Result<Option<WalEntry>, WalError> {
        loop {
            if self.reader.is_none() {
                return self.open_next();
            }
            if let Some(entry) = self.next_in_log()? {
                return Ok(Some(entry));
            }
        }
    }
}

impl<S: Storage> Iterator for Recovery<'_, S> {
    type Item = Result<WalEntry, WalError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let step = self.step();
        match step {
            Ok(Some(entry)) => Some(Ok(entry)),
            Ok(None) => {
                self.done = true;
                self.outcome.complete = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// Whether `log` holds a complete record of its own that starts at or after `offset` (read
/// past any damage, as [`RecoveryMode::SkipAnyCorruptedRecords`] reads).
pub(crate) fn records_after<S: Storage>(
    storage: &S,
    log: &LiveLog,
    offset: u64,
) -> Result<bool, WalError> {
    let file = storage
        .open(&log.path)
        .map_err(|e| WalError::io(WalOperation::Read, &log.path, e))?;
    let read = ReadOptions::new().format(ReadFormat::Auto {
        log_number: Some(recyclable_log_number(log.number)),
    });
    let options = LogReaderOptions::new()
        .read(read)
        .recovery(RecoveryMode::SkipAnyCorruptedRecords);
    let mut reader = LogReader::new(StdSource::new(file), &options);
    loop {
        match reader.next_bounded(0) {
            Ok(Some(crate::reader::Bounded::Record(r))) if r.offset >= offset => return Ok(true),
            Ok(Some(crate::reader::Bounded::Oversized(r))) if r.offset >= offset => {
                return Ok(true);
            }
            Ok(Some(_)) => {}
            Ok(None) => return Ok(false),
            Err(ReadError::Io(e)) => return Err(WalError::io(WalOperation::Read, &log.path, e)),
            Err(_) => return Ok(true),
        }
    }
}
