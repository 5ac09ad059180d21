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

/// A file of a live log: its log's number, its segment (0 for the log's first file; a later
/// one, in either directory, after a failover), the number of its first record in the log,
/// and its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogFile {
    pub(crate) number: u64,
    pub(crate) segment: u32,
    pub(crate) first: u64,
    pub(crate) path: PathBuf,
}

/// How recovery ended: what the writer needs to start after it. Files are indices in the
/// list recovered.
#[derive(Debug, Clone, Default)]
pub(crate) struct Outcome {
    /// Point-in-time recovery stopped at this damage, in this file.
    pub(crate) stopped: Option<(usize, Damage)>,
    /// The last file's torn tail (bytes after its last complete record), to cut off.
    pub(crate) torn_tail: Option<(usize, Damage)>,
    /// Recovery was read to its end, without an error.
    pub(crate) complete: bool,
    /// The file of the last record recovered, and where that record ends.
    pub(crate) last: Option<(usize, u64)>,
}

/// The records of a WAL directory's live logs, in log-number order, read with the
/// [`WalOptions::recovery`](super::WalOptions::recovery) mode as RocksDB reads them across
/// files:
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
/// A log failed over to another directory is one log in several files (segments), as
/// Pebble's are: its records are read from each segment in turn, a record written in two
/// segments (not yet durable in the first when the second took over) yielded once. A segment
/// that a later one follows ends at its first damage (a write the stalled disk did not
/// finish), which loses nothing as long as the next segment starts at or before the record
/// where it ended (else the records between are reported lost, as damage).
///
/// Each file starts with [`WalEntry::Log`]. The iterator ends after an error.
#[derive(Debug)]
pub struct Recovery<'a, S: Storage> {
    storage: &'a S,
    files: &'a [LogFile],
    mode: RecoveryMode,
    /// The next file to open.
    next: usize,
    /// The open file, its reader, and how many records were read in it.
    reader: Option<OpenFile<S::Reader>>,
    /// Records of the current log yielded so far.
    yielded: u64,
    outcome: &'a mut Outcome,
    done: bool,
}

impl<'a, S: Storage> Recovery<'a, S> {
    pub(crate) fn new(
        storage: &'a S,
        files: &'a [LogFile],
        mode: RecoveryMode,
        outcome: &'a mut Outcome,
    ) -> Self {
        *outcome = Outcome::default();
        Self {
            storage,
            files,
            mode,
            next: 0,
            reader: None,
            yielded: 0,
            outcome,
            done: false,
        }
    }

    /// Where [`PointInTimeRecovery`](RecoveryMode::PointInTimeRecovery) stopped, once it
    /// did: the log's number and the damage (in a log, or its torn tail before the next log).
    /// No later log is read.
    pub fn stopped(&self) -> Option<(u64, Damage)> {
        self.outcome
            .stopped
            .and_then(|(file, damage)| Some((self.files.get(file)?.number, damage)))
    }

    /// The last log's torn tail (bytes after its last complete record, never acknowledged),
    /// once the last log was read to its end: its number and the bytes.
    pub fn torn_tail(&self) -> Option<(u64, Damage)> {
        self.outcome
            .torn_tail
            .and_then(|(file, damage)| Some((self.files.get(file)?.number, damage)))
    }

    /// Opens the next file; its entry, or damage: records lost between two segments.
    fn open_next(&mut self) -> Result<Option<WalEntry>, WalError> {
        let Some(log) = self.files.get(self.next) else {
            return Ok(None);
        };
        let index = self.next;
        self.next += 1;
        let continues = index > 0 && self.files[index - 1].number == log.number;
        if !continues {
            self.yielded = 0;
        }
        if log.first > self.yielded {
            // Records durable in the segment before (this one starts after them) were lost.
            let damage = Damage::new(0, log.first - self.yielded, DamageKind::TornTail);
            self.yielded = log.first;
            match self.mode {
                RecoveryMode::AbsoluteConsistency => {
                    return Err(WalError::Damaged {
                        log: log.number,
                        damage,
                    });
                }
                RecoveryMode::PointInTimeRecovery => {
                    self.outcome.stopped = Some((index, damage));
                    self.next = self.files.len();
                    return Ok(Some(WalEntry::Damage {
                        log: log.number,
                        damage,
                    }));
                }
                _ => {
                    self.next -= 1;
                    return Ok(Some(WalEntry::Damage {
                        log: log.number,
                        damage,
                    }));
                }
            }
        }
        let file = self
            .storage
            .open(&log.path)
            .map_err(|e| WalError::io(WalOperation::Read, &log.path, e))?;
        let read = ReadOptions::new().format(ReadFormat::Auto {
            log_number: Some(recyclable_log_number(log.number)),
        });
        let mode = if continued(self.files, index) {
            // Read to its first damage, where it ends.
            RecoveryMode::PointInTimeRecovery
        } else {
            self.mode
        };
        let options = LogReaderOptions::new().read(read).recovery(mode);
        self.reader = Some((index, LogReader::new(StdSource::new(file), &options), 0));
        Ok(Some(WalEntry::Log {
            number: log.number,
            path: log.path.clone(),
        }))
    }

    /// The next entry of the open file; `None` once it ended (and what its end means is
    /// settled).
    fn next_in_file(&mut self) -> Result<Option<WalEntry>, WalError> {
        loop {
            let files = self.files;
            let Some((index, reader, read)) = self.reader.as_mut() else {
                return Ok(None);
            };
            let index = *index;
            let log = &files[index];
            let continued = continued(files, index);
            let is_last = index + 1 == files.len();
            let entry = match reader.next() {
                Ok(entry) => entry,
                Err(ReadError::Damaged(_)) if continued => None,
                Err(ReadError::Damaged(damage)) => {
                    return Err(WalError::Damaged {
                        log: log.number,
                        damage,
                    });
                }
                Err(ReadError::Io(e)) => {
                    return Err(WalError::io(WalOperation::Read, &log.path, e));
                }
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
                    let number = log.first + *read;
                    *read += 1;
                    if number < self.yielded {
                        // Written again here after a failover: yielded from the segment before.
                        continue;
                    }
                    self.yielded = number + 1;
                    let position = WalPosition::in_segment(log.number, log.segment, record.offset);
                    self.outcome.last = Some((index, record.end));
                    return Ok(Some(WalEntry::Record(WalRecord {
                        position,
                        end: record.end,
                        data: record.data.to_vec(),
                    })));
                }
                // A segment another follows ends at its first damage.
                Some(Entry::Damage(_)) if continued => {
                    self.reader = None;
                    return Ok(None);
                }
                Some(Entry::Damage(damage)) => {
                    return Ok(Some(WalEntry::Damage {
                        log: log.number,
                        damage,
                    }));
                }
                None if continued => {
                    self.reader = None;
                    return Ok(None);
                }
                None => {
                    let ending = reader.ending();
                    let tail = reader.tail();
                    let number = log.number;
                    self.reader = None;
                    if let Some(Ending::Stopped(damage)) = ending {
                        self.outcome.stopped = Some((index, damage));
                        self.next = self.files.len();
                        return Ok(None);
                    }
                    if let Some(tail) = tail.filter(|t| t.kind == DamageKind::TornTail) {
                        if is_last {
                            self.outcome.torn_tail = Some((index, tail));
                        } else if self.mode == RecoveryMode::PointInTimeRecovery {
                            // A gap before the next log: stop, and say so.
                            self.outcome.stopped = Some((index, tail));
                            self.next = self.files.len();
                            return Ok(Some(WalEntry::Damage {
                                log: number,
                                damage: tail,
                            }));
                        }
                    }
                    return Ok(None);
                }
            }
        }
    }

    fn step(&mut self) -> Result<Option<WalEntry>, WalError> {
        loop {
            if self.reader.is_none() {
                return self.open_next();
            }
            if let Some(entry) = self.next_in_file()? {
                return Ok(Some(entry));
            }
        }
    }
}

/// A file being read: its index, its reader, and how many records were read in it.
type OpenFile<R> = (usize, LogReader<StdSource<R>>, u64);

/// Whether file `index` is followed by a later segment of its log.
fn continued(files: &[LogFile], index: usize) -> bool {
    files
        .get(index + 1)
        .is_some_and(|next| next.number == files[index].number)
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
    log: &LogFile,
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
