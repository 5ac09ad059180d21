//! [`LogWriter::create`] and [`LogWriter::overwrite`]: a new log written in place, under the
//! log's writer lock.

use std::fs::{File, OpenOptions};
use std::path::Path;

use crate::error::{Error, Operation};
use crate::file::{check_kind, check_writable_kind, inspect};
use crate::lock::open_locked;
use crate::writer::{LogWriter, LogWriterOptions};

impl LogWriter<File> {
    /// Creates a new log at `path` (or takes an existing empty file) and writes it in place,
    /// holding the log's writer lock; a file that exists and is not empty is refused
    /// ([`Error::AlreadyExists`]) and left unchanged. A crash leaves the records flushed so
    /// far: this is how a write-ahead log is started. To make a whole log appear at once, or
    /// not at all, use [`AtomicLog`](crate::AtomicLog).
    ///
    /// ```
    /// use logfmt_std::{Error, LogWriter, LogWriterOptions};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("000001.log");
    /// let mut writer = LogWriter::create(&path, &LogWriterOptions::new())?;
    /// writer.add_record(b"hello")?;
    /// // One writer at a time: a second one is refused while the first is open.
    /// let refused = LogWriter::overwrite(&path, &LogWriterOptions::new()).err();
    /// assert!(matches!(refused, Some(Error::Locked { .. })));
    /// writer.close()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::AlreadyExists`], [`Error::Locked`] (another writer holds the lock: see
    /// [`LogWriterOptions::lock_wait`]), [`Error::IsADirectory`], [`Error::NotAFile`], or
    /// [`Error::Io`].
    pub fn create(path: impl AsRef<Path>, options: &LogWriterOptions) -> Result<Self, Error> {
        let path = path.as_ref();
        let file = open_to_write(path, options)?;
        let len = inspect(&file, path)?.len();
        if len > 0 {
            return Err(Error::AlreadyExists {
                path: path.into(),
                len,
            });
        }
        Ok(Self::new(file, &options.starting_at(0)))
    }

    /// Creates a new log at `path`, emptying the file if it exists, once it holds the log's
    /// writer lock. The old content is gone at once: to replace a log only once the new one
    /// is complete, use [`AtomicLog`](crate::AtomicLog).
    ///
    /// # Errors
    /// [`Error::Locked`], [`Error::IsADirectory`], [`Error::NotAFile`], or [`Error::Io`].
    pub fn overwrite(path: impl AsRef<Path>, options: &LogWriterOptions) -> Result<Self, Error> {
        let path = path.as_ref();
        let file = open_to_write(path, options)?;
        file.set_len(0)
            .map_err(|e| Error::io(Operation::Truncate, path, e))?;
        Ok(Self::new(file, &options.starting_at(0)))
    }
}

/// Opens (creating, never truncating) the regular file at `path` to write it, and takes its
/// writer lock.
fn open_to_write(path: &Path, options: &LogWriterOptions) -> Result<File, Error> {
    check_writable_kind(path)?;
    let file = open_locked(path, options.lock_wait, || {
        OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map(Some)
            .map_err(|e| Error::io(Operation::Create, path, e))
    })?;
    let file = file.ok_or_else(|| Error::io(Operation::Create, path, missing()))?;
    check_kind(&inspect(&file, path)?, path)?;
    Ok(file)
}

/// The error of a file that was there and is not.
pub(crate) fn missing() -> std::io::Error {
    std::io::ErrorKind::NotFound.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::LockWait;
    use std::fs;
    use std::time::Duration;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn create_refuses_a_non_empty_file_and_leaves_it_alone() -> TestResult {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("log");
        fs::write(&path, b"precious")?;
        let err = LogWriter::create(&path, &LogWriterOptions::new()).err();
        assert!(
            matches!(err, Some(Error::AlreadyExists { len: 8, .. })),
            "{err:?}"
        );
        assert_eq!(fs::read(&path)?, b"precious");
        let writer = LogWriter::overwrite(&path, &LogWriterOptions::new())?;
        assert_eq!(fs::read(&path)?, b"");
        drop(writer);
        // An existing empty file is fine.
        assert!(LogWriter::create(&path, &LogWriterOptions::new()).is_ok());
        Ok(())
    }

    #[test]
    fn a_second_writer_is_refused_and_the_log_left_alone() -> TestResult {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("log");
        let mut first = LogWriter::create(&path, &LogWriterOptions::new())?;
        first.add_record(b"one")?;
        first.flush()?;
        let before = fs::read(&path)?;
        for refused in [
            LogWriter::create(&path, &LogWriterOptions::new()).err(),
            LogWriter::overwrite(&path, &LogWriterOptions::new()).err(),
            LogWriter::overwrite(
                &path,
                &LogWriterOptions::new().lock_wait(LockWait::For(Duration::from_millis(50))),
            )
            .err(),
        ] {
            let text = refused.as_ref().map(ToString::to_string);
            assert!(matches!(refused, Some(Error::Locked { .. })), "{refused:?}");
            assert!(
                text.is_some_and(|t| t.starts_with("another writer holds the log's lock")
                    && t.ends_with(&*path.to_string_lossy())),
            );
        }
        assert_eq!(fs::read(&path)?, before);
        // The lock goes with the file.
        let file = first.close()?;
        assert!(LogWriter::overwrite(&path, &LogWriterOptions::new()).is_err());
        drop(file);
        assert!(LogWriter::overwrite(&path, &LogWriterOptions::new()).is_ok());
        Ok(())
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_directories_are_not_logs_to_write() -> TestResult {
        let dir = tempfile::tempdir()?;
        for (path, what) in [(Path::new("/dev/null"), "device"), (dir.path(), "dir")] {
            let err = LogWriter::create(path, &LogWriterOptions::new()).err();
            assert!(
                matches!(
                    err,
                    Some(Error::NotAFile { .. } | Error::IsADirectory { .. })
                ),
                "{what}: {err:?}"
            );
        }
        Ok(())
    }
}
