//! [`LogFile`]: a log opened to read it, with errors that name the file.

use std::fs::{self, File, Metadata};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::error::{Error, Operation};
use crate::ring::{RingImage, RingSource};
use crate::source::StdSource;
use crate::split::ReadAt;

/// A log opened to read it, with its path (for error messages) and its length when opened.
/// Reading takes no lock: a log being appended to reads as a prefix of it, possibly ending in
/// a torn tail (the record being written).
///
/// Logs are written by [`LogWriter`](crate::LogWriter)'s file constructors and by
/// [`AtomicLog`](crate::AtomicLog).
///
/// ```
/// use logfmt_std::{LogFile, LogWriter, LogWriterOptions};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("000001.log");
/// let mut writer = LogWriter::create(&path, &LogWriterOptions::new())?;
/// writer.add_record(b"hello")?;
/// writer.close()?;
///
/// let log = LogFile::open(&path)?;
/// assert_eq!(log.len_at_open(), 12);
/// assert!(log.is_regular());
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

    /// The file's length when it was opened. 0 for a pipe.
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

    /// A block source reading the log from its start up to its length when it was opened
    /// ([`len_at_open`](Self::len_at_open)): what is appended meanwhile is not read, so a
    /// command that reads a log and one that appends what it reads to the same log both end.
    /// A pipe or a device is read as it comes, to its end. An initial offset is reached by
    /// seeking when it is a regular file, by reading otherwise.
    ///
    /// ```
    /// use std::io::Write;
    /// use logfmt_std::{advanced::BlockSource, LogFile, LogWriter, LogWriterOptions};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("000001.log");
    /// let mut writer = LogWriter::create(&path, &LogWriterOptions::new())?;
    /// writer.add_record(b"hello")?;
    /// writer.close()?;
    ///
    /// let log = LogFile::open(&path)?;
    /// std::fs::OpenOptions::new().append(true).open(&path)?.write_all(b"appended")?;
    /// let mut source = log.source();
    /// source.load_next()?;
    /// assert_eq!(source.block().len(), 12); // the record, not what came after
    /// let mut growing = log.growing_source();
    /// growing.load_next()?;
    /// assert_eq!(growing.block().len(), 20);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn source(&self) -> StdSource<LogBytes<'_>> {
        self.source_to(self.len)
    }

    /// A block source reading the log from its start to its end, whatever its length now: for
    /// a reader that follows a log a writer appends to
    /// ([`ReadOptions::tailing`](logfmt_core::ReadOptions::tailing)). Otherwise as
    /// [`source`](Self::source).
    pub fn growing_source(&self) -> StdSource<LogBytes<'_>> {
        self.source_to(u64::MAX)
    }

    fn source_to(&self, end: u64) -> StdSource<LogBytes<'_>> {
        if self.regular {
            StdSource::seekable(LogBytes::File(ReadAt::up_to(&self.file, end)))
        } else {
            StdSource::new(LogBytes::Stream(&self.file))
        }
    }

    /// A second source over this log, from its start, that does not disturb reading through
    /// [`source`](Self::source): to read a part of it again while it is being read (see
    /// [`RecordStream`](crate::RecordStream)). It reads the same open file, so it is the same
    /// file even if its name was reused meanwhile (on Unix; elsewhere the file is opened again
    /// by its path).
    ///
    /// ```
    /// use logfmt_std::{advanced::BlockSource, LogFile, LogWriter, LogWriterOptions};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("000001.log");
    /// let mut writer = LogWriter::create(&path, &LogWriterOptions::new())?;
    /// writer.add_record(&[1u8; 40_000])?;
    /// writer.close()?;
    ///
    /// let log = LogFile::open(&path)?;
    /// let mut first = log.source();
    /// first.load_next()?;
    /// let mut again = log.reread()?;
    /// again.load_next()?;
    /// assert_eq!(again.block(), first.block());
    /// first.load_next()?; // not moved by the second reader
    /// assert_eq!(first.block().len(), 40_000 + 14 - 32_768);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::NotAFile`] for a pipe or a device, which cannot be read twice; [`Error::Io`]
    /// if the file cannot be opened again.
    pub fn reread(&self) -> Result<StdSource<Reread<'_>>, Error> {
        if !self.regular {
            return Err(Error::NotAFile {
                path: self.path.clone(),
            });
        }
        #[cfg(unix)]
        let reader = Reread {
            inner: ReadAt::new(&self.file),
        };
        #[cfg(not(unix))]
        let reader = Reread {
            inner: File::open(&self.path).map_err(|e| Error::io(Operation::Open, &self.path, e))?,
            log: std::marker::PhantomData,
        };
        Ok(StdSource::seekable(reader))
    }

    /// The ring log this file holds, if it is a ring image (a regular file with one block at
    /// least beginning with a ring header, or cut short of whole blocks but beginning as a
    /// ring image does: see [`RingImage`]). Reads the first bytes of each block with
    /// positioned reads (on Unix; elsewhere the file opened again), not disturbing
    /// [`source`](Self::source). A pipe or a device is never a ring image.
    ///
    /// # Errors
    /// [`Error::Io`] if reading fails.
    pub fn ring(&self) -> Result<Option<RingImage>, Error> {
        if !self.regular {
            return Ok(None);
        }
        let mut image = self.reread()?.into_inner();
        RingImage::read(&mut image, self.len).map_err(|e| self.read_error(e))
    }

    /// A source of the blocks of this ring image in `ring`'s order (see [`RingSource`]),
    /// reading with positioned reads (on Unix; elsewhere the file opened again).
    ///
    /// # Errors
    /// [`Error::NotAFile`] for a pipe or a device; [`Error::Io`] if the file cannot be opened
    /// again.
    pub fn ring_source(&self, ring: &RingImage) -> Result<RingSource<Reread<'_>>, Error> {
        Ok(ring.source(self.reread()?.into_inner()))
    }

    /// A read error on this log, naming it.
    pub fn read_error(&self, source: io::Error) -> Error {
        Error::io(Operation::Read, &self.path, source)
    }

    /// Whether `path` names this very file (same device and inode: hard links, symbolic
    /// links, bind mounts and `/proc/self/fd/N` included). A missing `path` does not.
    ///
    /// ```
    /// use logfmt_std::LogFile;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("in.log");
    /// std::fs::write(&path, b"")?;
    /// std::fs::hard_link(&path, dir.path().join("link.log"))?;
    /// let log = LogFile::open(&path)?;
    /// assert!(log.is_same_file(&dir.path().join("link.log"))?);
    /// assert!(!log.is_same_file(&dir.path().join("other.log"))?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Io`] if either cannot be inspected.
    pub fn is_same_file(&self, path: &Path) -> Result<bool, Error> {
        crate::lock::is_same_file(&self.file, path)
            .map_err(|e| Error::io(Operation::Inspect, path, e))
    }
}

/// The bytes of a [`LogFile`] as its [`source`](LogFile::source) reads them: a regular file
/// with positioned reads of its own, up to an end; a pipe or a device as it comes.
#[derive(Debug)]
#[non_exhaustive]
pub enum LogBytes<'f> {
    /// A regular file.
    File(ReadAt<'f>),
    /// A pipe or a device: read in order, never sought.
    Stream(&'f File),
}

impl Read for LogBytes<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Self::File(file) => file.read(buf),
            Self::Stream(stream) => {
                let mut stream: &File = stream;
                stream.read(buf)
            }
        }
    }
}

impl Seek for LogBytes<'_> {
    /// Moves a regular file's position; a pipe or a device cannot be sought
    /// ([`io::ErrorKind::Unsupported`]).
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        match self {
            Self::File(file) => file.seek(to),
            Self::Stream(_) => Err(io::ErrorKind::Unsupported.into()),
        }
    }
}

/// A reader of a [`LogFile`] from its start that does not disturb reading through
/// [`LogFile::source`]: made by [`LogFile::reread`]. On Unix it reads the same open file with
/// positioned reads ([`ReadAt`](crate::ReadAt)); elsewhere, the file opened again.
#[derive(Debug)]
pub struct Reread<'f> {
    #[cfg(unix)]
    inner: ReadAt<'f>,
    #[cfg(not(unix))]
    inner: File,
    #[cfg(not(unix))]
    log: std::marker::PhantomData<&'f File>,
}

impl Read for Reread<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf)
    }
}

impl Seek for Reread<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.inner.seek(to)
    }
}

/// The log number in a RocksDB-style file name (`000042.log` is 42), if there is one. It is
/// the log number of a new recyclable log; an existing log's own is its first chunk's.
///
/// ```
/// use std::path::Path;
/// use logfmt_std::advanced::log_number_in_name;
///
/// assert_eq!(log_number_in_name(Path::new("/db/000042.log")), Some(42));
/// assert_eq!(log_number_in_name(Path::new("MANIFEST-000005")), None);
/// ```
pub fn log_number_in_name(path: &Path) -> Option<u64> {
    let name = path.file_name()?.to_str()?;
    let digits = name.strip_suffix(".log")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The log number a recyclable chunk carries for the file number `number`: its low 32 bits
/// (RocksDB's rule).
///
/// ```
/// assert_eq!(logfmt_std::advanced::recyclable_log_number((1 << 32) + 42), 42);
/// ```
#[must_use]
pub fn recyclable_log_number(number: u64) -> u32 {
    (number & u64::from(u32::MAX)) as u32
}

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
    use logfmt_core::{Reader, parts::Item};
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
    fn numbers_in_names() {
        assert_eq!(log_number_in_name(Path::new("000042.log")), Some(42));
        assert_eq!(log_number_in_name(Path::new("/db/wal/7.log")), Some(7));
        assert_eq!(log_number_in_name(Path::new("000042.log.old")), None);
        assert_eq!(log_number_in_name(Path::new("MANIFEST-000005")), None);
        assert_eq!(log_number_in_name(Path::new("x42.log")), None);
        assert_eq!(log_number_in_name(Path::new(".log")), None);
        assert_eq!(log_number_in_name(Path::new("+1.log")), None);
        assert_eq!(
            log_number_in_name(Path::new("99999999999999999999999.log")),
            None
        );
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

        let err = LogFile::open(dir.path()).err();
        assert!(matches!(err, Some(Error::IsADirectory { .. })), "{err:?}");
        assert_eq!(err.as_ref().map(Error::path), Some(dir.path()));
        Ok(())
    }

    #[test]
    fn names_are_shown_escaped() -> TestResult {
        let dir = tempfile::tempdir()?;
        let missing = dir.path().join("a\x1b[31mred\n.log");
        let text = LogFile::open(&missing)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(text.ends_with(r"a\u{1b}[31mred\n.log"), "{text}");
        assert!(!text.contains('\x1b'));
        Ok(())
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_readable_logs() -> TestResult {
        let log = LogFile::open("/dev/null")?;
        assert!(!log.is_regular());
        assert!(!log.source().seeks());
        assert_eq!(read_lengths(&log)?, []);
        Ok(())
    }
}
