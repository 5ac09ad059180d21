//! The names of a WAL directory's files: live logs `000123.log` (RocksDB's and LevelDB's
//! names), the later segments of a log failed over to another directory `000123-001-45.log`
//! (Pebble's `000123-001.log`, with the number of the segment's first record in its log),
//! logs kept for reuse `000123.recycle`, and the lock file `LOCK`.

use std::path::{Path, PathBuf};

/// The directory's lock file (RocksDB's name).
pub(crate) const LOCK: &str = "LOCK";

/// What a file in a WAL directory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Name {
    /// A file of live log `number`: its segment `segment` (0: `NNNNNN.log`, the log's first
    /// file), whose first record is the log's record `first` (counting from 0).
    Live {
        number: u64,
        segment: u32,
        first: u64,
    },
    /// A released log kept for reuse, `NNNNNN.recycle`.
    Recycle(u64),
}

/// The file name of segment `segment` of log `number`, whose first record is the log's
/// record `first`: six digits at least, as RocksDB writes them.
pub(crate) fn file_name(number: u64, segment: u32, first: u64) -> String {
    if segment == 0 {
        format!("{number:06}.log")
    } else {
        format!("{number:06}-{segment:03}-{first}.log")
    }
}

/// The path of segment `segment` of log `number` in `dir`.
pub(crate) fn path(dir: &Path, number: u64, segment: u32, first: u64) -> PathBuf {
    dir.join(file_name(number, segment, first))
}

/// The path of released log `number` kept for reuse in `dir`.
pub(crate) fn recycle_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("{number:06}.recycle"))
}

fn digits(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// What a file name is, if it is one of a WAL directory's logs.
pub(crate) fn parse(name: &str) -> Option<Name> {
    if let Some(stem) = name.strip_suffix(".recycle") {
        return digits(stem).map(Name::Recycle);
    }
    let stem = name.strip_suffix(".log")?;
    let mut parts = stem.split('-');
    let number = digits(parts.next()?)?;
    let Some(segment) = parts.next() else {
        return Some(Name::Live {
            number,
            segment: 0,
            first: 0,
        });
    };
    let segment = u32::try_from(digits(segment)?).ok().filter(|&s| s > 0)?;
    let first = digits(parts.next()?)?;
    if parts.next().is_some() {
        return None;
    }
    Some(Name::Live {
        number,
        segment,
        first,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(file_name(123, 0, 0), "000123.log");
        assert_eq!(file_name(123, 2, 45), "000123-002-45.log");
        assert_eq!(
            recycle_path(Path::new("/w"), 1_234_567),
            Path::new("/w/1234567.recycle")
        );
        let live = |number, segment, first| Name::Live {
            number,
            segment,
            first,
        };
        assert_eq!(parse("000123.log"), Some(live(123, 0, 0)));
        assert_eq!(parse("000123-002-45.log"), Some(live(123, 2, 45)));
        assert_eq!(parse("7.recycle"), Some(Name::Recycle(7)));
        for not_a_log in [
            "LOCK",
            ".log",
            "12a.log",
            "000123.log.tmp",
            "MANIFEST-000001",
            "000123-000-4.log",
            "000123-001.log",
            "000123-001-4-5.log",
            "000012-4567.cut",
        ] {
            assert_eq!(parse(not_a_log), None, "{not_a_log}");
        }
    }
}
