//! [`WalOptions`]: how a WAL directory is opened, recovered and written.

use std::time::Duration;

use crate::group::GroupPolicy;
use crate::recovery::RecoveryMode;

/// How a [`Wal`](super::Wal) is opened, recovered and written.
///
/// ```
/// use logfmt_std::{RecoveryMode, wal::WalOptions};
///
/// let options = WalOptions::new()
///     .create(true)
///     .recovery(RecoveryMode::PointInTimeRecovery)
///     .log_size(64 << 20)
///     .recycle(4);
/// assert_eq!(options.recycle, 4);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WalOptions {
    /// Create the directory (and its parents) if it is missing. Default `false`.
    pub create: bool,
    /// How damage is read, across the logs as within one. Default
    /// [`RecoveryMode::PointInTimeRecovery`] (RocksDB's default).
    pub recovery: RecoveryMode,
    /// A new log is started once the current one reaches this many bytes. Default 64 MiB.
    pub log_size: u64,
    /// Released logs kept to be written again (RocksDB's `recycle_log_file_num`): every log
    /// is then written in RocksDB's recyclable format, whose chunks carry the log's number, so
    /// that a reused file's earlier bytes are never read as records. Default 0: released logs
    /// are removed. With [`failover`](Self::failover), released logs are removed (a reused
    /// log's end is marked with a synced write, which a stalled disk would hold up), but logs
    /// are still written in the recyclable format if this is not 0.
    pub recycle: usize,
    /// When the group commit syncs. Default [`GroupPolicy::new`].
    pub group: GroupPolicy,
    /// A second directory, and how long a sync of the first may take before new records go
    /// to the second (Pebble's WAL failover). Default `None`.
    pub failover: Option<Failover>,
}

/// Pebble's WAL failover: a second directory, written while a sync of the first takes longer
/// than `threshold`, until the stalled sync ends.
///
/// As Pebble's, a log is then one log in several files (segments): when a sync of its file
/// stalls, the log goes on in a new file in the other directory (`NNNNNN-SSS-FIRST.log`:
/// segment `SSS`, starting at the log's record `FIRST`), every record not yet durable written
/// again there; once the stalled sync ends, the log goes on in a new file in the primary
/// directory. Recovery reads both directories, each log's segments in turn, a record written
/// in two segments yielded once. Crash-proven as the rest of the WAL directory: a crash
/// property test crashes inside every storage operation of workloads with stalls, and finds
/// every acknowledged record exactly once, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Failover {
    /// The second directory (created when the first is, if asked).
    pub secondary: std::path::PathBuf,
    /// A sync slower than this moves new records to the other directory.
    pub threshold: Duration,
}

impl Failover {
    /// Failover to `secondary` after a sync slower than `threshold`.
    pub fn new(secondary: impl Into<std::path::PathBuf>, threshold: Duration) -> Self {
        Self {
            secondary: secondary.into(),
            threshold,
        }
    }
}

impl Default for WalOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl WalOptions {
    /// The defaults.
    #[must_use]
    pub fn new() -> Self {
        Self {
            create: false,
            recovery: RecoveryMode::PointInTimeRecovery,
            log_size: 64 << 20,
            recycle: 0,
            group: GroupPolicy::new(),
            failover: None,
        }
    }

    /// Sets [`create`](Self::create).
    #[must_use]
    pub fn create(mut self, create: bool) -> Self {
        self.create = create;
        self
    }

    /// Sets [`recovery`](Self::recovery).
    #[must_use]
    pub fn recovery(mut self, mode: RecoveryMode) -> Self {
        self.recovery = mode;
        self
    }

    /// Sets [`log_size`](Self::log_size).
    #[must_use]
    pub fn log_size(mut self, bytes: u64) -> Self {
        self.log_size = bytes;
        self
    }

    /// Sets [`recycle`](Self::recycle).
    #[must_use]
    pub fn recycle(mut self, logs: usize) -> Self {
        self.recycle = logs;
        self
    }

    /// Sets [`group`](Self::group).
    #[must_use]
    pub fn group(mut self, policy: GroupPolicy) -> Self {
        self.group = policy;
        self
    }

    /// Sets [`failover`](Self::failover).
    #[must_use]
    pub fn failover(mut self, failover: Option<Failover>) -> Self {
        self.failover = failover;
        self
    }
}
