//! The names of a WAL directory's files: live logs `000123.log` (RocksDB's and LevelDB's
//! names), logs kept for reuse `000123.recycle`, the empty file `000123-4567.cut` saying that
//! log 123 ends at offset 4567 (a failover wrote its later records again in the next log),
//! and the lock file `LOCK`.

use std::path::{Path, PathBuf};

/// The directory's lock file (RocksDB's name).
pub(crate) const LOCK: &str = "LOCK";

/// What a file in a WAL directory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Kind {
    /// A live log, `NNNNNN.log`.
    Live,
    /// A released log kept for reuse, `NNNNNN.recycle`.
    Recycle,
}

/// The file name of log `number` of `kind`: six digits at least, as RocksDB writes them.
pub(crate) fn file_name(number: u64, kind: Kind) -> String {
    match kind {
        Kind::Live => format!("{number:06}.log"),
        Kind::Recycle => format!("{number:06}.recycle"),
    }
}

/// The path of log `number` of `kind` in `dir`.
pub(crate) fn path(dir: &Path, number: u64, kind: Kind) -> PathBuf {
    dir.join(file_name(number, kind))
}

/// The name of the file saying that log `number` ends at `offset`.
pub(crate) fn cut_path(dir: &Path, number: u64, offset: u64) -> PathBuf {
    dir.join(format!("{number:06}-{offset}.cut"))
}

/// The log number and offset a cut file's name holds.
pub(crate) fn parse_cut(name: &str) -> Option<(u64, u64)> {
    let (number, offset) = name.strip_suffix(".cut")?.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(number) || !digits(offset) {
        return None;
    }
    Some((number.parse().ok()?, offset.parse().ok()?))
}

/// The log number and kind a file name holds, if it is one of a WAL directory's logs.
pub(crate) fn parse(name: &str) -> Option<(u64, Kind)> {
    let (digits, kind) = if let Some(digits) = name.strip_suffix(".log") {
        (digits, Kind::Live)
    } else {
        (name.strip_suffix(".recycle")?, Kind::Recycle)
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((digits.parse().ok()?, kind))
}

/// The logs among `names`, by kind, each in log-number order.
pub(crate) fn logs(names: &[String]) -> (Vec<u64>, Vec<u64>) {
    let mut live = Vec::new();
    let mut recycle = Vec::new();
    for (number, kind) in names.iter().filter_map(|n| parse(n)) {
        match kind {
            Kind::Live => live.push(number),
            Kind::Recycle => recycle.push(number),
        }
    }
    live.sort_unstable();
    recycle.sort_unstable();
    (live, recycle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(file_name(123, Kind::Live), "000123.log");
        assert_eq!(file_name(1_234_567, Kind::Recycle), "1234567.recycle");
        assert_eq!(parse("000123.log"), Some((123, Kind::Live)));
        assert_eq!(parse("7.recycle"), Some((7, Kind::Recycle)));
        for not_a_log in [
            "LOCK",
            ".log",
            "12a.log",
            "000123.log.tmp",
            "MANIFEST-000001",
        ] {
            assert_eq!(parse(not_a_log), None, "{not_a_log}");
        }
        assert_eq!(
            cut_path(Path::new("/w"), 12, 4567),
            Path::new("/w/000012-4567.cut")
        );
        assert_eq!(parse_cut("000012-4567.cut"), Some((12, 4567)));
        assert_eq!(parse_cut("000012.cut"), None);
        assert_eq!(parse_cut("000012-.cut"), None);
        let names = ["000010.log", "000002.log", "LOCK", "000001.recycle"].map(String::from);
        assert_eq!(logs(&names), (vec![2, 10], vec![1]));
    }
}
