//! [`database_log`]: whether a file is a log LevelDB or RocksDB reads — one that must hold
//! none of logfmt's own chunks (packs, compressed packs, ring headers, resume markers), whose
//! records LevelDB's and RocksDB's readers report as chunks of an unknown type and drop.

use std::fmt;
use std::fs::File;
use std::io;
use std::path::Path;

use crate::content::{VersionEdit, WriteBatch};
use crate::file::log_number_in_name;
use crate::reader::{Bounded, LogReader, LogReaderOptions};
use crate::recovery::{ReadError, RecoveryMode};
use crate::source::StdSource;
use logfmt_core::{ReadOptions, parts::ReadFormat};

/// The largest first record [`database_log`] reads to decode it: a WriteBatch or VersionEdit
/// larger than this is not looked at (the file's name may still tell).
const FIRST_RECORD_LIMIT: usize = 1 << 20;

/// How far into the file [`database_log`] looks for a first record past damage.
const SEARCH_LIMIT: u64 = 4 << 20;

/// Why a file is taken for a log that LevelDB or RocksDB reads ([`database_log`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DatabaseLog {
    /// Its name is a write-ahead log's: `NNNNNN.log`.
    WalName,
    /// Its name is a MANIFEST's: `MANIFEST-NNNNNN`.
    ManifestName,
    /// Its first record decodes as a `WriteBatch` (a write-ahead log's record).
    WriteBatches,
    /// Its first record decodes as a `VersionEdit` (a MANIFEST's record).
    VersionEdits,
}

impl fmt::Display for DatabaseLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::WalName => "named as a LevelDB or RocksDB write-ahead log (NNNNNN.log)",
            Self::ManifestName => "named as a LevelDB or RocksDB MANIFEST (MANIFEST-NNNNNN)",
            Self::WriteBatches => "its records are LevelDB or RocksDB WriteBatches",
            Self::VersionEdits => "its records are LevelDB or RocksDB VersionEdits",
        })
    }
}

/// Whether the file at `path` is a log LevelDB or RocksDB reads, and why: by its name
/// (`NNNNNN.log`, `MANIFEST-NNNNNN`), or, for a regular file that exists, by its first
/// record (looked for in its first 4 MiB), which decodes whole as a `WriteBatch` or a
/// `VersionEdit`. `None` for any other
/// file, and for a path that does not exist yet under another name.
///
/// Such a file must hold only the chunks LevelDB and RocksDB read: their readers report a
/// logfmt pack (compressed or not) as a chunk of an unknown type and drop its records.
/// Only a regular file is opened (never a FIFO or a device).
///
/// ```
/// use std::path::Path;
/// use logfmt_std::{LogWriter, LogWriterOptions, advanced::{DatabaseLog, database_log}};
///
/// assert_eq!(database_log(Path::new("/no/such/000005.log"))?, Some(DatabaseLog::WalName));
/// assert_eq!(database_log(Path::new("/no/such/MANIFEST-000001"))?, Some(DatabaseLog::ManifestName));
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("events");
/// let mut writer = LogWriter::create(&path, &LogWriterOptions::new())?;
/// // A WriteBatch: sequence 1, one put of a = 1.
/// writer.add_record(b"\x01\0\0\0\0\0\0\0\x01\0\0\0\x01\x01a\x011")?;
/// writer.close()?;
/// assert_eq!(database_log(&path)?, Some(DatabaseLog::WriteBatches));
///
/// let text = dir.path().join("notes");
/// let mut writer = LogWriter::create(&text, &LogWriterOptions::new())?;
/// writer.add_record(b"a line of text")?;
/// writer.close()?;
/// assert_eq!(database_log(&text)?, None);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// Reading the file failed.
pub fn database_log(path: &Path) -> io::Result<Option<DatabaseLog>> {
    if log_number_in_name(path).is_some() {
        return Ok(Some(DatabaseLog::WalName));
    }
    if is_manifest_name(path) {
        return Ok(Some(DatabaseLog::ManifestName));
    }
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() && meta.len() > 0 => {}
        Ok(_) => return Ok(None),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    }
    let file = File::open(path)?;
    first_record_decodes(&file)
}

/// `MANIFEST-` and digits.
fn is_manifest_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|name| name.to_str())
        .and_then(|name| name.strip_prefix("MANIFEST-"))
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// What the first complete record of the log in `file` decodes as, if it decodes whole.
fn first_record_decodes(file: &File) -> io::Result<Option<DatabaseLog>> {
    let options = LogReaderOptions::new()
        .read(ReadOptions::new().format(ReadFormat::Auto { log_number: None }))
        .recovery(RecoveryMode::SkipAnyCorruptedRecords);
    let mut reader = LogReader::new(StdSource::new(file), &options);
    loop {
        // Only damage so far, far into the file: not read to its end.
        if reader.position() > SEARCH_LIMIT {
            return Ok(None);
        }
        match reader.next_bounded(FIRST_RECORD_LIMIT) {
            Ok(Some(Bounded::Record(record))) => return Ok(decodes_as(record.data)),
            Ok(Some(Bounded::Oversized(_) | Bounded::Damage(_))) => {}
            Ok(None) => return Ok(None),
            Err(ReadError::Io(e)) => return Err(e),
            Err(_) => return Ok(None),
        }
    }
}

/// `record` as a `WriteBatch` or a `VersionEdit` (at least one field), if it decodes whole.
fn decodes_as(record: &[u8]) -> Option<DatabaseLog> {
    let batch = WriteBatch::new(record).is_ok_and(|batch| batch.ops().all(|op| op.is_ok()));
    if batch {
        return Some(DatabaseLog::WriteBatches);
    }
    let edit = !record.is_empty() && VersionEdit::new(record).fields().all(|f| f.is_ok());
    edit.then_some(DatabaseLog::VersionEdits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for (name, found) in [
            ("000005.log", Some(DatabaseLog::WalName)),
            ("/db/123.log", Some(DatabaseLog::WalName)),
            ("MANIFEST-000001", Some(DatabaseLog::ManifestName)),
            ("MANIFEST-", None),
            ("MANIFEST-00001a", None),
            ("x.log", None),
            ("000005.log.bak", None),
        ] {
            let found_here = database_log(Path::new("/no/such/dir").join(name).as_path());
            assert_eq!(found_here.ok().flatten(), found, "{name}");
        }
    }

    #[test]
    fn records() {
        let batch = b"\x01\0\0\0\0\0\0\0\x01\0\0\0\x01\x01a\x011";
        assert_eq!(decodes_as(batch), Some(DatabaseLog::WriteBatches));
        // A VersionEdit: log number 7 (tag 2), next file 9 (tag 3).
        assert_eq!(decodes_as(&[2, 7, 3, 9]), Some(DatabaseLog::VersionEdits));
        assert_eq!(decodes_as(b"hello, world"), None);
        assert_eq!(decodes_as(b""), None);
        // A batch whose count does not match its operations.
        assert_eq!(
            decodes_as(b"\x01\0\0\0\0\0\0\0\x02\0\0\0\x01\x01a\x011"),
            None
        );
    }
}
