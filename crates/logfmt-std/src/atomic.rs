//! [`AtomicLog`]: a new log written beside its destination and put in place whole, or not at
//! all.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use logfmt_core::Written;
use tempfile::TempPath;

use crate::error::{Error, Operation};
use crate::file::{check_kind, check_writable_kind, inspect};
use crate::lock::{open_locked, still_named};
use crate::writer::{LogWriter, LogWriterOptions};

/// A new log written to a temporary file in its destination's directory, and put in place
/// by [`commit`](Self::commit): the data is synced, the file renamed over the destination,
/// and the directory synced. Until then the destination is untouched; a failure, or dropping
/// an `AtomicLog` without committing it, removes the temporary file and leaves the
/// destination as it was (a crash may leave the temporary file, named `.NAME.XXXXXX.tmp`).
///
/// Writers exclude one another:
///
/// - an existing destination is opened and its writer lock taken (as [`LogWriter::append`]
///   takes it) for as long as the `AtomicLog` lives: a writer of it is refused
///   ([`Error::Locked`]) or waits ([`LogWriterOptions::lock_wait`]), and a writer that waited
///   for it goes on with the new file once this one is in place;
/// - a destination that does not exist yet is claimed at the commit, by a rename that
///   refuses to replace a file: if another writer created it meanwhile, the commit is
///   refused ([`Error::AlreadyExists`]) and that writer's log is kept.
///
/// A destination that is a symbolic link is written through: the new log is put in place of
/// the file the link points to (created there if the link dangles), beside it, and the link
/// is kept, as [`LogWriter::append`] writes through it. A hard link's other names keep the
/// old file (the new log is a new file).
///
/// ```
/// use logfmt_std::{AtomicLog, Error, LogFile, LogWriterOptions};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("000001.log");
/// std::fs::write(&path, b"old content")?;
///
/// // Refused: the destination is not empty.
/// let refused = AtomicLog::create(&path, &LogWriterOptions::new()).err();
/// assert!(matches!(refused, Some(Error::AlreadyExists { .. })));
///
/// let mut log = AtomicLog::create(&path, &LogWriterOptions::new().replace(true))?;
/// log.add_record(b"new")?;
/// assert_eq!(std::fs::read(&path)?, b"old content"); // not yet
/// log.commit()?;
/// assert_eq!(LogFile::open(&path)?.len_at_open(), 10);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct AtomicLog {
    writer: LogWriter<File>,
    /// The temporary file; removed when dropped, unless it was put in place.
    temp: TempPath,
    dest: PathBuf,
    /// The destination as it was, with its writer lock; `None` if it did not exist.
    held: Option<File>,
}

impl AtomicLog {
    /// Starts a new log to be put at `path`: takes the writer lock of the file there (if
    /// any), checks it may be replaced, and creates the temporary file beside it.
    ///
    /// # Errors
    /// [`Error::AlreadyExists`] (a destination that is not empty, without
    /// [`replace`](LogWriterOptions::replace)); [`Error::Locked`]; [`Error::IsADirectory`],
    /// [`Error::NotAFile`] (a destination that is not a regular file); [`Error::Io`] (with
    /// [`Operation::Open`] if the destination exists and this user may not write it, with
    /// [`Operation::Create`] if the directory cannot take a new file).
    pub fn create(path: impl AsRef<Path>, options: &LogWriterOptions) -> Result<Self, Error> {
        let dest = &link_target(path.as_ref())?;
        check_writable_kind(dest)?;
        let held = open_locked(dest, options.lock_wait, || {
            match OpenOptions::new().read(true).open(dest) {
                Ok(file) => Ok(Some(file)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(Error::io(Operation::Open, dest, e)),
            }
        })?;
        let mut permissions = None;
        if let Some(existing) = &held {
            let meta = inspect(existing, dest)?;
            check_kind(&meta, dest)?;
            if meta.len() > 0 && !options.replace {
                return Err(Error::AlreadyExists {
                    path: dest.into(),
                    len: meta.len(),
                });
            }
            // A rename needs only the directory's permission: replacing a file this user may
            // not write would go around its mode. Refused, as writing it in place would be.
            if let Err(e) = OpenOptions::new().write(true).open(dest) {
                return Err(Error::io(Operation::Open, dest, e));
            }
            permissions = Some(meta.permissions());
        }
        let dir = directory_of(dest);
        let name = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let prefix = format!(".{name}.");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        match permissions {
            Some(permissions) => {
                builder.permissions(permissions);
            }
            None => new_file_permissions(&mut builder),
        }
        let temp = builder
            .tempfile_in(dir)
            .map_err(|e| Error::io(Operation::Create, dest, without_path(e)))?;
        let (file, temp) = temp.into_parts();
        let writer_options = options.starting_at(0).sync_on_close(true);
        Ok(Self {
            writer: LogWriter::new(file, &writer_options),
            temp,
            dest: dest.into(),
            held,
        })
    }

    /// Appends one record (see [`LogWriter::add_record`]).
    ///
    /// # Errors
    /// [`Error::Write`] naming the destination. The destination is untouched.
    pub fn add_record(&mut self, data: &[u8]) -> Result<Written, Error> {
        self.writer.add_record(data).map_err(|source| Error::Write {
            path: self.dest.clone(),
            source,
        })
    }

    /// Appends one record of `len` bytes without holding it whole (see
    /// [`LogWriter::add_record_with`]).
    ///
    /// # Errors
    /// [`Error::Write`] naming the destination (also for an error of `fill`). The destination
    /// is untouched.
    pub fn add_record_with(
        &mut self,
        len: u64,
        fill: impl FnMut(&mut [u8]) -> std::io::Result<()>,
    ) -> Result<Written, Error> {
        self.writer
            .add_record_with(len, fill)
            .map_err(|source| Error::Write {
                path: self.dest.clone(),
                source,
            })
    }

    /// The writer, for its other calls ([`pad_to`](LogWriter::pad_to),
    /// [`position`](LogWriter::position), ...).
    pub fn writer(&mut self) -> &mut LogWriter<File> {
        &mut self.writer
    }

    /// Where the log is to be put.
    pub fn path(&self) -> &Path {
        &self.dest
    }

    /// The temporary file the log is written to until it is committed.
    pub fn temporary_path(&self) -> &Path {
        &self.temp
    }

    /// Puts the log in place: flushes and syncs it, renames it over the destination (or,
    /// where there was none, to the destination if nothing has been put there meanwhile),
    /// then syncs the directory. The destination's writer lock is released after.
    ///
    /// # Errors
    /// [`Error::Write`] (flushing or syncing failed), [`Error::AlreadyExists`] (another
    /// writer created the destination meanwhile), [`Error::Io`] with [`Operation::Rename`].
    /// The temporary file is removed and the destination left as it was, except that a
    /// failure to sync the directory after the rename leaves the new log in place, not
    /// known to be durable.
    pub fn commit(self) -> Result<(), Error> {
        let Self {
            writer,
            temp,
            dest,
            held,
        } = self;
        let file = writer.close().map_err(|source| Error::Write {
            path: dest.clone(),
            source,
        })?;
        drop(file);
        match &held {
            Some(existing) => {
                // Under the lock, the destination is still the file that was locked (a
                // writer that replaces it takes the lock first).
                let same = still_named(existing, &dest)
                    .map_err(|e| Error::io(Operation::Rename, &dest, e))?;
                if !same {
                    return Err(Error::io(
                        Operation::Rename,
                        &dest,
                        io::Error::other(
                            "the destination was replaced by a writer that took no lock",
                        ),
                    ));
                }
                temp.persist(&dest)
                    .map_err(|e| Error::io(Operation::Rename, &dest, e.error))?;
            }
            None => {
                if let Err(e) = temp.persist_noclobber(&dest) {
                    return Err(match fs::metadata(&dest) {
                        Ok(meta) if e.error.kind() == io::ErrorKind::AlreadyExists => {
                            Error::AlreadyExists {
                                path: dest,
                                len: meta.len(),
                            }
                        }
                        _ => Error::io(Operation::Rename, &dest, e.error),
                    });
                }
            }
        }
        sync_directory(directory_of(&dest)).map_err(|e| Error::io(Operation::Rename, &dest, e))?;
        drop(held);
        Ok(())
    }
}

/// Symbolic links followed at most this many times (Linux's `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// The file `path` names once symbolic links are followed: `path` itself unless it is a
/// symbolic link; the file a link points to (whether it exists or not), its relative target
/// taken from the link's directory. Only the last component is followed: the directories on
/// the way stay as they are named.
///
/// # Errors
/// [`Error::Io`] with [`Operation::Inspect`] if a link cannot be read, or more than
/// [`MAX_LINKS`] are chained (a loop).
fn link_target(path: &Path) -> Result<PathBuf, Error> {
    let mut at = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        match fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target =
                    fs::read_link(&at).map_err(|e| Error::io(Operation::Inspect, path, e))?;
                at = match at.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(at),
        }
    }
    Err(Error::io(
        Operation::Inspect,
        path,
        io::Error::other("too many levels of symbolic links"),
    ))
}

/// The operating system's error inside one that `tempfile` decorated with the temporary
/// file's name (the message names the destination instead).
fn without_path(error: io::Error) -> io::Error {
    let raw = error
        .get_ref()
        .and_then(|inner| inner.source())
        .and_then(|source| source.downcast_ref::<io::Error>())
        .and_then(io::Error::raw_os_error);
    match raw {
        Some(code) => io::Error::from_raw_os_error(code),
        None => error,
    }
}

/// The directory a path's file is in (`.` for a bare name).
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Makes a directory's entries durable (a file created or renamed in it). Not possible, and
/// not needed, where directories cannot be opened as files.
pub(crate) fn sync_directory(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// Gives a new file read and write permission for all, less the process's umask (which the
/// operating system applies), rather than the temporary file's owner-only default.
fn new_file_permissions(builder: &mut tempfile::Builder<'_, '_>) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    #[cfg(not(unix))]
    {
        let _ = builder;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    fn entries(dir: &Path) -> io::Result<Vec<String>> {
        let mut names: Vec<String> = fs::read_dir(dir)?
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<Result<_, _>>()?;
        names.sort();
        Ok(names)
    }

    /// A destination this user may not write is not replaced (root may write any file, and
    /// replaces it).
    #[test]
    fn a_file_this_user_may_not_write_is_not_replaced() -> TestResult {
        use std::os::unix::fs::PermissionsExt;

        let dir = tempfile::tempdir()?;
        let path = dir.path().join("read-only.log");
        fs::write(&path, b"not a log, but someone's")?;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o444))?;
        let may_write = OpenOptions::new().write(true).open(&path).is_ok();
        let options = LogWriterOptions::new().replace(true);
        match AtomicLog::create(&path, &options) {
            Err(Error::Io {
                operation: Operation::Open,
                source,
                ..
            }) if !may_write => {
                assert_eq!(source.kind(), io::ErrorKind::PermissionDenied);
                assert_eq!(fs::read(&path)?, b"not a log, but someone's");
                assert_eq!(entries(dir.path())?, ["read-only.log"]);
            }
            Ok(mut log) if may_write => {
                log.add_record(b"new")?;
                log.commit()?;
                assert_eq!(fs::metadata(&path)?.len(), 10);
            }
            other => panic!("may write: {may_write}: {other:?}"),
        }
        Ok(())
    }

    #[test]
    fn nothing_is_in_place_until_the_commit_and_nothing_is_left_without_it() -> TestResult {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("new.log");
        let mut log = AtomicLog::create(&path, &LogWriterOptions::new())?;
        log.add_record(&[1; 50_000])?;
        assert!(!path.exists());
        assert!(log.temporary_path().exists());
        drop(log);
        assert_eq!(entries(dir.path())?, Vec::<String>::new());

        let mut log = AtomicLog::create(&path, &LogWriterOptions::new())?;
        log.add_record(b"kept")?;
        log.commit()?;
        assert_eq!(entries(dir.path())?, ["new.log"]);
        assert_eq!(fs::metadata(&path)?.len(), 11);
        Ok(())
    }

    #[test]
    fn a_destination_created_meanwhile_is_kept() -> TestResult {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("raced.log");
        let mut log = AtomicLog::create(&path, &LogWriterOptions::new().replace(true))?;
        log.add_record(b"late")?;
        // Another writer puts a log there first.
        fs::write(&path, b"first")?;
        let refused = log.commit().err();
        assert!(
            matches!(refused, Some(Error::AlreadyExists { len: 5, .. })),
            "{refused:?}"
        );
        assert_eq!(fs::read(&path)?, b"first");
        assert_eq!(entries(dir.path())?, ["raced.log"]);
        Ok(())
    }

    /// A symbolic link is written through, as an append writes through it: the link stays,
    /// its target is replaced (or created, if the link dangles), beside the target.
    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_is_written_through() -> TestResult {
        let dir = tempfile::tempdir()?;
        let logs = dir.path().join("logs");
        fs::create_dir(&logs)?;
        let target = logs.join("real.log");
        fs::write(&target, b"old")?;
        let link = dir.path().join("link.log");
        std::os::unix::fs::symlink("logs/real.log", &link)?;
        let mut log = AtomicLog::create(&link, &LogWriterOptions::new().replace(true))?;
        assert_eq!(log.path(), target);
        assert!(log.temporary_path().starts_with(&logs));
        log.add_record(b"new")?;
        log.commit()?;
        assert!(fs::symlink_metadata(&link)?.file_type().is_symlink());
        assert_eq!(fs::read(&target)?.len(), 10);
        assert_eq!(entries(dir.path())?, ["link.log", "logs"]);
        assert_eq!(entries(&logs)?, ["real.log"]);

        // A dangling link: its target is created.
        let dangling = dir.path().join("dangling.log");
        std::os::unix::fs::symlink("logs/new.log", &dangling)?;
        let mut log = AtomicLog::create(&dangling, &LogWriterOptions::new())?;
        log.add_record(b"first")?;
        log.commit()?;
        assert!(fs::symlink_metadata(&dangling)?.file_type().is_symlink());
        assert_eq!(fs::read(logs.join("new.log"))?.len(), 12);

        // A loop is an error, and nothing is created.
        let a = dir.path().join("a.log");
        let b = dir.path().join("b.log");
        std::os::unix::fs::symlink(&b, &a)?;
        std::os::unix::fs::symlink(&a, &b)?;
        let refused = AtomicLog::create(&a, &LogWriterOptions::new()).err();
        assert!(
            matches!(
                refused,
                Some(Error::Io {
                    operation: Operation::Inspect,
                    ..
                })
            ),
            "{refused:?}"
        );
        assert_eq!(entries(&logs)?, ["new.log", "real.log"]);
        Ok(())
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_log_keeps_its_permissions_and_its_other_names_keep_the_old_one() -> TestResult {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("old.log");
        fs::write(&path, b"old")?;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640))?;
        let link = dir.path().join("link.log");
        fs::hard_link(&path, &link)?;
        let mut log = AtomicLog::create(&path, &LogWriterOptions::new().replace(true))?;
        log.add_record(b"new")?;
        log.commit()?;
        assert_eq!(fs::metadata(&path)?.permissions().mode() & 0o777, 0o640);
        assert_eq!(fs::metadata(&path)?.len(), 10);
        assert_eq!(fs::read(&link)?, b"old");
        Ok(())
    }
}
