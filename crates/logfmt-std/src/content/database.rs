//! A LevelDB or RocksDB database directory: the MANIFEST its `CURRENT` file names, and its
//! write-ahead logs, the live ones in log-number order.

use std::fmt;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use super::version_edit::{Field, FileField, VersionEdit};
use crate::escape::EscapedPath;
use crate::{Entry, LogReader, LogReaderOptions, StdSource};

/// What a file of a [`Database`] holds (see [`Database::files`]).
///
/// ```
/// use logfmt_std::content::DbFileKind;
///
/// assert_ne!(DbFileKind::Manifest, DbFileKind::Wal);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DbFileKind {
    /// A MANIFEST: `VersionEdit` records.
    Manifest,
    /// A write-ahead log (`NNNNNN.log`): `WriteBatch` records.
    Wal,
}

/// A file of a [`Database`]: see the example of [`Database`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct DbFile {
    /// What it holds.
    pub kind: DbFileKind,
    /// The number in its name.
    pub number: u64,
    /// Where it is.
    pub path: PathBuf,
}

/// A database directory, as LevelDB's and RocksDB's recovery find its files: `CURRENT`
/// names the MANIFEST; the MANIFEST's edits give the oldest log still needed; the logs from
/// it on (and the previous log, if the MANIFEST names one) are live, read in log-number
/// order.
///
/// The oldest log needed is the smallest log number of the column families still alive (each
/// column family's last `log_number`), or the last `min_log_number_to_keep` if that is
/// smaller (RocksDB keeps the logs of prepared transactions). A MANIFEST that cannot be read
/// to the end gives what its readable edits give; one that cannot be read at all leaves every
/// log live ([`floor`](Self::floor) is `None`).
///
/// ```
/// use logfmt_std::content::{Database, DbFileKind};
/// use logfmt_std::{LogWriter, LogWriterOptions};
///
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("CURRENT"), "MANIFEST-000004\n")?;
/// // One edit: log number 7 (tag 2).
/// let mut manifest = LogWriter::create(dir.path().join("MANIFEST-000004"), &LogWriterOptions::new())?;
/// manifest.add_record(&[2, 7])?;
/// manifest.close()?;
/// for log in ["000003.log", "000010.log", "000007.log"] {
///     std::fs::write(dir.path().join(log), b"")?;
/// }
///
/// let db = Database::open(dir.path())?;
/// assert_eq!(db.manifest().number, 4);
/// assert_eq!(db.floor(), Some(7));
/// let live: Vec<u64> = db.wals().iter().map(|f| f.number).collect();
/// assert_eq!(live, [7, 10]);
/// assert_eq!(db.obsolete_wals()[0].number, 3);
/// assert_eq!(db.files().next().map(|f| f.kind), Some(DbFileKind::Manifest));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Database {
    manifest: DbFile,
    wals: Vec<DbFile>,
    obsolete: Vec<DbFile>,
    floor: Option<u64>,
}

impl Database {
    /// Finds the files of the database in `dir`.
    ///
    /// ```
    /// use logfmt_std::content::Database;
    ///
    /// let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("CURRENT"), "MANIFEST-000001\n")?;
    /// // The MANIFEST is missing: every log is live.
    /// std::fs::write(dir.path().join("000002.log"), b"")?;
    /// let db = Database::open(dir.path())?;
    /// assert_eq!((db.floor(), db.wals().len()), (None, 1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`DatabaseError::Io`] if the directory or its `CURRENT` file cannot be read;
    /// [`DatabaseError::NoCurrent`] if there is no `CURRENT` file (not a database);
    /// [`DatabaseError::BadCurrent`] if it does not name a MANIFEST.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, DatabaseError> {
        let dir = dir.as_ref();
        let current = dir.join("CURRENT");
        let text = match regular(&current).and_then(|_| fs::read(&current)) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound && dir.is_dir() => {
                return Err(DatabaseError::NoCurrent { dir: dir.into() });
            }
            Err(source) => {
                return Err(DatabaseError::Io {
                    path: current,
                    source,
                });
            }
        };
        let name = text.strip_suffix(b"\n").unwrap_or(&text);
        let number = std::str::from_utf8(name)
            .ok()
            .and_then(|name| name.strip_prefix("MANIFEST-"))
            .and_then(number_in);
        let Some(number) = number else {
            return Err(DatabaseError::BadCurrent { path: current });
        };
        let manifest = DbFile {
            kind: DbFileKind::Manifest,
            number,
            path: dir.join(String::from_utf8_lossy(name).as_ref()),
        };
        let mut logs = Vec::new();
        let entries = fs::read_dir(dir).map_err(|source| DatabaseError::Io {
            path: dir.into(),
            source,
        })?;
        for entry in entries {
            let entry = entry.map_err(|source| DatabaseError::Io {
                path: dir.into(),
                source,
            })?;
            let name = entry.file_name();
            let Some(number) = name
                .to_str()
                .and_then(|name| name.strip_suffix(".log"))
                .and_then(number_in)
            else {
                continue;
            };
            logs.push(DbFile {
                kind: DbFileKind::Wal,
                number,
                path: entry.path(),
            });
        }
        logs.sort_by_key(|log| log.number);
        let needed = regular(&manifest.path)
            .and_then(|()| File::open(&manifest.path))
            .ok()
            .map(oldest_needed);
        let floor = needed.map(|n| n.floor);
        let (wals, obsolete) = logs.into_iter().partition(|log| match needed {
            Some(needed) => log.number >= needed.floor || Some(log.number) == needed.prev,
            None => true,
        });
        Ok(Self {
            manifest,
            wals,
            obsolete,
            floor,
        })
    }

    /// The MANIFEST `CURRENT` names (it may be missing or damaged: it has not been checked).
    ///
    /// ```
    /// use logfmt_std::content::{Database, DbFileKind};
    ///
    /// let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("CURRENT"), "MANIFEST-000009\n")?;
    /// let manifest = Database::open(dir.path())?.manifest().clone();
    /// assert_eq!((manifest.kind, manifest.number), (DbFileKind::Manifest, 9));
    /// assert_eq!(manifest.path, dir.path().join("MANIFEST-000009"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn manifest(&self) -> &DbFile {
        &self.manifest
    }

    /// The live write-ahead logs, in log-number order.
    #[must_use]
    pub fn wals(&self) -> &[DbFile] {
        &self.wals
    }

    /// The write-ahead logs older than the oldest one needed (left behind; not read by
    /// recovery), in log-number order.
    #[must_use]
    pub fn obsolete_wals(&self) -> &[DbFile] {
        &self.obsolete
    }

    /// The oldest log number the MANIFEST says is needed; `None` if it could not be opened.
    #[must_use]
    pub fn floor(&self) -> Option<u64> {
        self.floor
    }

    /// The MANIFEST, then the live logs in order: the files a reader of the database reads.
    pub fn files(&self) -> impl Iterator<Item = &DbFile> {
        std::iter::once(&self.manifest).chain(&self.wals)
    }
}

/// The number of a `NNNNNN` file name part: decimal digits only.
fn number_in(digits: &str) -> Option<u64> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The oldest log a MANIFEST says is needed, and the previous log it names.
#[derive(Debug, Clone, Copy)]
struct Needed {
    floor: u64,
    prev: Option<u64>,
}

/// Reads the MANIFEST's edits as far as they can be read.
fn oldest_needed(file: File) -> Needed {
    use std::collections::BTreeMap;
    let mut reader = LogReader::new(StdSource::seekable(file), &LogReaderOptions::new());
    // The last log number of each live column family.
    let mut families: BTreeMap<u32, u64> = BTreeMap::new();
    let mut keep: Option<u64> = None;
    let mut prev = None;
    while let Ok(Some(entry)) = reader.next() {
        let Entry::Record(record) = entry else {
            continue;
        };
        let mut family = 0;
        let mut log_number = None;
        let mut dropped = false;
        for field in VersionEdit::new(record.data).fields() {
            let Ok(field) = field else { break };
            match field {
                Field::ColumnFamily(cf) => family = cf,
                Field::LogNumber(n) => log_number = Some(n),
                Field::PrevLogNumber(n) => prev = (n != 0).then_some(n),
                Field::ColumnFamilyDrop => dropped = true,
                Field::MinLogNumberToKeep(n) => keep = Some(keep.map_or(n, |k| k.max(n))),
                Field::NewFile(file) => {
                    for custom in &file.custom {
                        if let FileField::MinLogNumberToKeep(n) = *custom {
                            keep = Some(keep.map_or(n, |k| k.max(n)));
                        }
                    }
                }
                _ => {}
            }
        }
        if dropped {
            families.remove(&family);
        } else {
            let entry = families.entry(family).or_insert(0);
            if let Some(n) = log_number {
                *entry = n;
            }
        }
    }
    let oldest_family = families.values().copied().min().unwrap_or(0);
    Needed {
        floor: keep.map_or(oldest_family, |k| k.min(oldest_family)),
        prev,
    }
}

/// Why a database directory could not be opened ([`Database::open`]).
///
/// ```
/// use logfmt_std::content::{Database, DatabaseError};
///
/// let dir = tempfile::tempdir()?;
/// let error = Database::open(dir.path()).unwrap_err();
/// assert!(matches!(error, DatabaseError::NoCurrent { .. }));
/// assert!(error.to_string().ends_with("without a CURRENT file: not a LevelDB or RocksDB database"));
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum DatabaseError {
    /// The directory, or its `CURRENT` file, could not be read.
    Io {
        /// What could not be read.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// The directory has no `CURRENT` file: it is not a LevelDB or RocksDB database.
    NoCurrent {
        /// The directory.
        dir: PathBuf,
    },
    /// `CURRENT` does not hold the name of a MANIFEST (`MANIFEST-NNNNNN` and a newline).
    BadCurrent {
        /// The `CURRENT` file.
        path: PathBuf,
    },
}

/// Refuses what is not a regular file before it is opened: a FIFO would wait for a writer,
/// a device (a link to `/dev/zero`) would be read without end.
fn regular(path: &Path) -> io::Result<()> {
    if fs::metadata(path)?.is_file() {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ))
    }
}

impl fmt::Display for DatabaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { path, .. } => write!(f, "cannot read {}", EscapedPath::new(path)),
            Self::NoCurrent { dir } => write!(
                f,
                "{} is a directory without a CURRENT file: not a LevelDB or RocksDB database",
                EscapedPath::new(dir)
            ),
            Self::BadCurrent { path } => write!(
                f,
                "{} does not name a MANIFEST (MANIFEST-NNNNNN)",
                EscapedPath::new(path)
            ),
        }
    }
}

impl std::error::Error for DatabaseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::coding::{put_slice, put_varint};
    use crate::{LogWriter, LogWriterOptions};

    fn manifest(dir: &Path, number: u64, edits: &[Vec<u8>]) {
        fs::write(dir.join("CURRENT"), format!("MANIFEST-{number:06}\n")).unwrap();
        let path = dir.join(format!("MANIFEST-{number:06}"));
        let mut writer = LogWriter::create(&path, &LogWriterOptions::new()).unwrap();
        for edit in edits {
            writer.add_record(edit).unwrap();
        }
        writer.close().unwrap();
    }

    fn logs(dir: &Path, numbers: &[u64]) {
        for n in numbers {
            fs::write(dir.join(format!("{n:06}.log")), b"").unwrap();
        }
    }

    fn field(tag: u64, value: u64) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint(&mut out, tag);
        put_varint(&mut out, value);
        out
    }

    fn numbers(files: &[DbFile]) -> Vec<u64> {
        files.iter().map(|f| f.number).collect()
    }

    #[test]
    fn leveldb_live_logs_and_the_previous_log() {
        let dir = tempfile::tempdir().unwrap();
        let mut comparator = vec![1];
        put_slice(&mut comparator, b"leveldb.BytewiseComparator");
        let later = [field(2, 9), field(9, 5)].concat();
        manifest(dir.path(), 8, &[comparator, field(2, 4), later]);
        logs(dir.path(), &[4, 5, 6, 9, 12, 100_000_000]);
        fs::write(dir.path().join("LOG"), b"info").unwrap();
        fs::write(dir.path().join("000011.ldb"), b"table").unwrap();
        fs::write(dir.path().join("x.log"), b"not numbered").unwrap();
        let db = Database::open(dir.path()).unwrap();
        assert_eq!(db.manifest().path, dir.path().join("MANIFEST-000008"));
        assert_eq!(db.floor(), Some(9));
        assert_eq!(numbers(db.wals()), [5, 9, 12, 100_000_000]);
        assert_eq!(numbers(db.obsolete_wals()), [4, 6]);
        let kinds: Vec<_> = db.files().map(|f| f.kind).collect();
        assert_eq!(kinds[0], DbFileKind::Manifest);
        assert_eq!(kinds.len(), 5);
    }

    #[test]
    fn rocksdb_column_families_and_min_log_to_keep() {
        let dir = tempfile::tempdir().unwrap();
        // cf 0 at log 20; cf 1 added, at log 14; cf 2 added at log 3 then dropped.
        let cf =
            |id: u64, rest: &[Vec<u8>]| [vec![field(200, id)], rest.to_vec()].concat().concat();
        let mut add = Vec::new();
        put_varint(&mut add, 201);
        put_slice(&mut add, b"cf");
        manifest(
            dir.path(),
            2,
            &[
                field(2, 20),
                cf(1, &[add.clone(), field(2, 14)]),
                cf(2, &[add, field(2, 3)]),
                cf(2, &[vec![0xca, 0x01]]), // 202: drop
            ],
        );
        logs(dir.path(), &[3, 13, 14, 20]);
        let db = Database::open(dir.path()).unwrap();
        assert_eq!(db.floor(), Some(14));
        assert_eq!(numbers(db.wals()), [14, 20]);
        // A prepared transaction keeps an older log.
        manifest(dir.path(), 3, &[field(2, 20), field(10, 13)]);
        let db = Database::open(dir.path()).unwrap();
        assert_eq!(numbers(db.wals()), [13, 14, 20]);
    }

    #[test]
    fn not_a_database() {
        let dir = tempfile::tempdir().unwrap();
        logs(dir.path(), &[1]);
        assert!(matches!(
            Database::open(dir.path()),
            Err(DatabaseError::NoCurrent { .. })
        ));
        fs::write(dir.path().join("CURRENT"), b"garbage\n").unwrap();
        assert!(matches!(
            Database::open(dir.path()),
            Err(DatabaseError::BadCurrent { .. })
        ));
        // CURRENT names a MANIFEST that is missing: every log is live.
        fs::write(dir.path().join("CURRENT"), b"MANIFEST-000009\n").unwrap();
        let db = Database::open(dir.path()).unwrap();
        assert_eq!((db.floor(), numbers(db.wals())), (None, vec![1]));
        let error = Database::open(dir.path().join("missing")).unwrap_err();
        assert!(error.to_string().contains("CURRENT"), "{error}");
    }
}
