//! What a WAL directory holds, listed once for the writer ([`Wal`](super::Wal)) and the
//! reader ([`ReadOnlyWal`](super::ReadOnlyWal)) alike: its live logs in log-number order
//! (both directories, with failover), the logs kept for reuse, the cut files, and the names
//! of the other entries.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::error::{WalError, WalOperation};
use super::names::{self, Kind};
use super::options::WalOptions;
use super::recover::LiveLog;
use super::storage::Storage;

/// A WAL directory's entries, by what they are.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    /// Every live log, in log-number order (both directories).
    pub(crate) logs: Vec<LiveLog>,
    /// Released logs kept for reuse (the first directory's), in log-number order.
    pub(crate) recycle: Vec<u64>,
    /// The files saying where a log ends (a failover's cut): log -> (file, offset).
    pub(crate) cuts: BTreeMap<u64, (PathBuf, u64)>,
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
    let mut listing = Listing::default();
    for each in dirs {
        let mut names = storage
            .list(&each)
            .map_err(|e| WalError::io(WalOperation::List, &each, e))?;
        names.sort_unstable();
        for (number, offset) in names.iter().filter_map(|n| names::parse_cut(n)) {
            let path = names::cut_path(&each, number, offset);
            let cut = listing.cuts.entry(number).or_insert((path.clone(), offset));
            if offset < cut.1 {
                *cut = (path, offset);
            }
        }
        let (live, kept) = names::logs(&names);
        listing.logs.extend(live.into_iter().map(|number| LiveLog {
            number,
            path: names::path(&each, number, Kind::Live),
            cut: None,
        }));
        if each == dir {
            listing.recycle = kept;
        }
        listing.others.extend(
            names
                .iter()
                .filter(|n| {
                    n.as_str() != names::LOCK
                        && names::parse(n).is_none()
                        && names::parse_cut(n).is_none()
                })
                .map(|n| each.join(n)),
        );
    }
    listing.logs.sort_by_key(|log| log.number);
    for log in &mut listing.logs {
        log.cut = listing.cuts.get(&log.number).map(|cut| cut.1);
    }
    Ok(listing)
}
