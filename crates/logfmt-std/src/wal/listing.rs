//! What a WAL directory holds, listed once for the writer ([`Wal`](super::Wal)) and the
//! reader ([`ReadOnlyWal`](super::ReadOnlyWal)) alike: its live logs' files in log-number and
//! segment order (both directories, with failover), the logs kept for reuse, the remains of
//! logs whose release a crash cut short, and the names of the other entries.

use std::path::{Path, PathBuf};

use super::error::{WalError, WalOperation};
use super::names::{self, Name};
use super::options::WalOptions;
use super::recover::LogFile;
use super::storage::Storage;

/// A WAL directory's entries, by what they are.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    /// Every live log's files, in log-number and segment order (both directories).
    pub(crate) files: Vec<LogFile>,
    /// Released logs kept for reuse (the first directory's), in log-number order.
    pub(crate) recycle: Vec<u64>,
    /// The files left of logs whose release a crash cut short (their first file gone).
    pub(crate) remains: Vec<(u64, PathBuf)>,
    /// The entries of either directory that are none of the WAL's files (nor its lock), in
    /// name order.
    pub(crate) others: Vec<PathBuf>,
}

/// Lists `dir` (and the failover directory `options` names, if any).
pub(crate) fn list<S: Storage>(
    storage: &S,
    dir: &Path,
    options: &WalOptions,
) -> Result<Listing, WalError> {
    let dirs = std::iter::once(dir.to_path_buf())
        .chain(options.failover.as_ref().map(|f| f.secondary.clone()));
    let mut files = Vec::new();
    let mut listing = Listing::default();
    for each in dirs {
        let mut entries = storage
            .list(&each)
            .map_err(|e| WalError::io(WalOperation::List, &each, e))?;
        entries.sort_unstable();
        for name in &entries {
            match names::parse(name) {
                Some(Name::Live {
                    number,
                    segment,
                    first,
                }) => files.push(LogFile {
                    number,
                    segment,
                    first,
                    path: names::path(&each, number, segment, first),
                }),
                Some(Name::Recycle(number)) if each == dir => listing.recycle.push(number),
                Some(Name::Recycle(_)) => {}
                None if name.as_str() == names::LOCK => {}
                None => listing.others.push(each.join(name)),
            }
        }
    }
    files.sort_by_key(|f| (f.number, f.segment));
    listing.recycle.sort_unstable();
    (listing.files, listing.remains) = split_remains(files);
    Ok(listing)
}

/// Splits the files listed into the live logs' and the remains of logs whose release a crash
/// cut short: a log is released first file first, so a log whose first file present starts
/// after its first record lost its beginning to a release (a log always has its first file
/// from its start, and a later segment starts after records only once they are durable in an
/// earlier one).
fn split_remains(files: Vec<LogFile>) -> (Vec<LogFile>, Vec<(u64, PathBuf)>) {
    let mut live = Vec::with_capacity(files.len());
    let mut remains = Vec::new();
    let mut headless = None;
    for (i, file) in files.iter().enumerate() {
        let starts_log = i == 0 || files[i - 1].number != file.number;
        if starts_log {
            headless = Some(file.number).filter(|_| file.first > 0);
        }
        if headless == Some(file.number) {
            remains.push((file.number, file.path.clone()));
        } else {
            live.push(file.clone());
        }
    }
    (live, remains)
}
