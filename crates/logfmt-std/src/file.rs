//! [`LogFile`]: opening, creating and appending to log files, with errors that name the file.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use logfmt_core::{BLOCK_SIZE, WriteOptions, Writer};

use crate::error::{Error, Operation};
use crate::sink::StdSink;
use crate::source::StdSource;

/// A log writer appending to a [`LogFile`], as made by [`LogFile::writer`].
pub type FileWriter<'a> = Writer<StdSink<&'a File>, Box<[u8; BLOCK_SIZE]>>;

/// An open log file, with its path (for error messages) and its length when opened.
///
/// ```
/// use logfmt_std::{Error, LogFile};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("000001.log");
///
/// // A new log.
/// let log = LogFile::create(&path)?;
/// let mut writer = log.writer();
/// writer.add_record(b"hello").map_err(|e| log.write_error(e))?;
/// writer.flush().map_err(|e| log.write_error(e))?;
/// log.sync()?;
/// drop(writer);
///
/// // `create` refuses to overwrite it; `append` continues it.
/// assert!(matches!(LogFile::create(&path), Err(Error::AlreadyExists { len: 12, .. })));
/// let log = LogFile::append(&path)?;
/// assert_eq!(log.len_at_open(), 12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct LogFile {
    file: File,
    path: PathBuf,
    len: u64,
    regular: bool,
}

impl LogFile {
    /// Opens a log to read it. Anything but a directory is accepted (a pipe such as
    /// `/dev/stdin` too).
    ///
    /// # Errors
    /// [`Error::IsADirectory`], or [`Error::Io`] if it cannot be opened (it does not exist, it
    /// is not readable).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| Error::io(Operation::Open, path, e))?;
        let meta = inspect(&file, path)?;
        if meta.is_dir() {
            return Err(Error::IsADirectory { path: path.into() });
        }
        Ok(Self::new(file, path, &meta))
    }

    /// Creates a new log, or opens an existing empty one. A file that is not empty is left
    /// unchanged and refused with [`Error::AlreadyExists`].
    ///
    /// # Errors
    /// [`Error::AlreadyExists`], [`Error::IsADirectory`], [`Error::NotAFile`], or
    /// [`Error::Io`].
    pub fn create(path: impl AsRef<Path>) -> Result<Self, Error> {
        Self::create_with(path.as_ref(), false)
    }

    /// Creates a new log, emptying the file if it exists.
    ///
    /// # Errors
    /// [`Error::IsADirectory`], [`Error::NotAFile`], or [`Error::Io`].
    pub fn overwrite(path: impl AsRef<Path>) -> Result<Self, Error> {
        Self::create_with(path.as_ref(), true)
    }

    /// Opens a log to continue it, creating it if it does not exist. Every write goes to the
    /// end of the file; [`len_at_open`](Self::len_at_open) is where the writer starts (LevelDB's
    /// `Writer(dest, dest_length)`).
    ///
    /// Nothing is checked: like LevelDB, this appends after a torn tail, where LevelDB's reader
    /// loses the new records. [`LogWriter::append`](crate::LogWriter::append) reads the log
    /// first and never does.
    ///
    /// # Errors
    /// [`Error::IsADirectory`], [`Error::NotAFile`], or [`Error::Io`].
    pub fn append(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        check_writable_kind(path)?;
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| Error::io(Operation::Create, path, e))?;
        let meta = inspect(&file, path)?;
        check_kind(&meta, path)?;
        Ok(Self::new(file, path, &meta))
    }

    fn create_with(path: &Path, overwrite: bool) -> Result<Self, Error> {
        check_writable_kind(path)?;
        // Not truncated on open: a refused file must be left as it is.
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| Error::io(Operation::Create, path, e))?;
        let meta = inspect(&file, path)?;
        check_kind(&meta, path)?;
        let mut log = Self::new(file, path, &meta);
        if log.len > 0 {
            if !overwrite {
                return Err(Error::AlreadyExists {
                    path: log.path,
                    len: log.len,
                });
            }
            log.file
                .set_len(0)
                .map_err(|e| Error::io(Operation::Truncate, path, e))?;
            log.len = 0;
        }
        Ok(log)
    }

    fn new(file: File, path: &Path, meta: &Metadata) -> Self {
        Self {
            file,
            path: path.into(),
            len: meta.len(),
            regular: meta.is_file(),
        }
    }

    /// The path the log was opened with.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's length when it was opened (after emptying it, for
    /// [`overwrite`](Self::overwrite)). 0 for a pipe.
    pub fn len_at_open(&self) -> u64 {
        self.len
    }

    /// Whether it is a regular file (rather than a pipe or a device).
    pub fn is_regular(&self) -> bool {
        self.regular
    }

    /// The open file.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Gives back the open file.
    pub fn into_file(self) -> File {
        self.file
    }

    /// A block source reading the log from its current position; an initial offset is reached
    /// by seeking when it is a regular file, by reading otherwise.
    pub fn source(&self) -> StdSource<&File> {
        if self.regular {
            StdSource::seekable(&self.file)
        } else {
            StdSource::new(&self.file)
        }
    }

    /// A legacy-format log writer continuing the log at [`len_at_open`](Self::len_at_open).
    /// Call [`Writer::flush`] and then [`sync`](Self::sync) when done.
    pub fn writer(&self) -> FileWriter<'_> {
        self.writer_with(&WriteOptions::new().start(self.len))
    }

    /// A log writer with `options` (whose `start` must be the file's length).
    pub fn writer_with(&self, options: &WriteOptions) -> FileWriter<'_> {
        Writer::with_options(StdSink::new(&self.file), Box::new([0; BLOCK_SIZE]), options)
    }

    /// Makes everything written durable (`fsync`).
    ///
    /// # Errors
    /// [`Error::Io`] with [`Operation::Sync`].
    pub fn sync(&self) -> Result<(), Error> {
        self.file
            .sync_all()
            .map_err(|e| Error::io(Operation::Sync, &self.path, e))
    }

    /// A read error on this log, naming it.
    pub fn read_error(&self, source: io::Error) -> Error {
        Error::io(Operation::Read, &self.path, source)
    }

    /// A [`Writer`] error on this log, naming it. A poisoned writer is reported as the
    /// [`io::ErrorKind::Other`] error "the log writer failed earlier".
    pub fn write_error(&self, error: logfmt_core::WriteError<io::Error>) -> Error {
        let source = match error {
            logfmt_core::WriteError::Sink(e) => e,
            _ => io::Error::other(PoisonedWriter),
        };
        Error::io(Operation::Write, &self.path, source)
    }
}

/// The error inside a poisoned writer's [`Error::Io`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PoisonedWriter;

impl std::fmt::Display for PoisonedWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the log writer failed earlier")
    }
}

impl std::error::Error for PoisonedWriter {}

pub(crate) fn inspect(file: &File, path: &Path) -> Result<Metadata, Error> {
    file.metadata()
        .map_err(|e| Error::io(Operation::Inspect, path, e))
}

pub(crate) fn check_kind(meta: &Metadata, path: &Path) -> Result<(), Error> {
    if meta.is_dir() {
        Err(Error::IsADirectory { path: path.into() })
    } else if !meta.is_file() {
        Err(Error::NotAFile { path: path.into() })
    } else {
        Ok(())
    }
}

/// Refuses an existing path that is not a regular file before opening it to write (opening a
/// pipe to write can block).
pub(crate) fn check_writable_kind(path: &Path) -> Result<(), Error> {
    match fs::metadata(path) {
        Ok(meta) => check_kind(&meta, path),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(Operation::Inspect, path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use logfmt_core::{Item, Reader};
    type TestResult = Result<(), Box<dyn std::error::Error>>;

    fn read_lengths(log: &LogFile) -> Result<Vec<(u64, usize)>, io::Error> {
        let mut scratch = vec![0u8; 200_000];
        let mut reader = Reader::new(log.source(), &mut scratch);
        let mut out = Vec::new();
        while let Some(item) = reader.next()? {
            if let Item::Record(r) = item {
                out.push((r.offset, r.data.len()));
            }
        }
        Ok(out)
    }

    #[test]
    fn create_refuses_a_non_empty_file_and_leaves_it_alone() -> TestResult {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("log");
        fs::write(&path, b"precious")?;
        let err = LogFile::create(&path).err();
        assert!(
            matches!(err, Some(Error::AlreadyExists { len: 8, .. })),
            "{err:?}"
        );
        assert_eq!(fs::read(&path)?, b"precious");
        let log = LogFile::overwrite(&path)?;
        assert_eq!(log.len_at_open(), 0);
        assert_eq!(fs::read(&path)?, b"");
        // An existing empty file is fine.
        assert!(LogFile::create(&path).is_ok());
        Ok(())
    }

    #[test]
    fn write_append_and_read_back() -> TestResult {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("log");
        {
            let log = LogFile::create(&path)?;
            let mut writer = log.writer();
            writer
                .add_record(&[1; 32_758])
                .map_err(|e| log.write_error(e))?;
            writer.flush().map_err(|e| log.write_error(e))?;
            log.sync()?;
        }
        let log = LogFile::append(&path)?;
        assert_eq!(log.len_at_open(), 32_765);
        let mut writer = log.writer();
        writer.add_record(b"abc").map_err(|e| log.write_error(e))?;
        writer.flush().map_err(|e| log.write_error(e))?;
        drop(writer);
        // The 3-byte trailer was padded: the record starts in the next block.
        assert_eq!(
            read_lengths(&LogFile::open(&path)?)?,
            [(0, 32_758), (32_768, 3)]
        );
        Ok(())
    }

    #[test]
    fn append_creates_a_missing_log() -> TestResult {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("new");
        let log = LogFile::append(&path)?;
        assert_eq!(log.len_at_open(), 0);
        assert!(log.is_regular());
        assert!(path.exists());
        Ok(())
    }

    #[test]
    fn errors_name_the_file() -> TestResult {
        let dir = tempfile::tempdir()?;
        let missing = dir.path().join("missing");
        let err = LogFile::open(&missing).err();
        let Some(Error::Io {
            operation: Operation::Open,
            source,
            ..
        }) = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!(source.kind(), io::ErrorKind::NotFound);
        let text = err.as_ref().map(ToString::to_string).unwrap_or_default();
        assert_eq!(text, format!("cannot open log: {}", missing.display()));

        for result in [
            LogFile::open(dir.path()),
            LogFile::create(dir.path()),
            LogFile::overwrite(dir.path()),
            LogFile::append(dir.path()),
        ] {
            let err = result.err();
            assert!(matches!(err, Some(Error::IsADirectory { .. })), "{err:?}");
            assert_eq!(err.as_ref().map(Error::path), Some(dir.path()));
        }
        Ok(())
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_readable_but_not_writable_logs() -> TestResult {
        let log = LogFile::open("/dev/null")?;
        assert!(!log.is_regular());
        assert!(!log.source().seeks());
        assert_eq!(read_lengths(&log)?, []);
        let err = LogFile::create("/dev/null").err();
        assert!(matches!(err, Some(Error::NotAFile { .. })), "{err:?}");
        Ok(())
    }

    #[test]
    fn a_poisoned_writer_is_a_write_error() -> TestResult {
        let dir = tempfile::tempdir()?;
        let log = LogFile::create(dir.path().join("log"))?;
        let err = log.write_error(logfmt_core::WriteError::Poisoned);
        assert!(matches!(
            err,
            Error::Io {
                operation: Operation::Write,
                ..
            }
        ));
        let source = std::error::Error::source(&err).map(ToString::to_string);
        assert_eq!(source.as_deref(), Some("the log writer failed earlier"));
        Ok(())
    }
}
