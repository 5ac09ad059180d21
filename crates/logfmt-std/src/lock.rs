//! One writer at a time: an exclusive advisory lock on the log file for as long as a writer
//! holds it open.
//!
//! The lock is the standard library's [`File::try_lock`] on the open log (`flock(LOCK_EX)` on
//! Unix, `LockFileEx` on Windows). It belongs to the open file, so it lasts until the
//! last handle to it is closed, and a process killed in any way loses it. A path is locked by
//! opening it, locking the open file, and checking that the path still names that file (a
//! writer that replaced it by renaming a new file over it had the lock until it was done):
//! otherwise it is opened again.
//!
//! What it cannot do: stop a writer that does not take it (LevelDB's own writer, `cat >>`,
//! an editor), or work where `flock` is not shared between machines (NFS and other network
//! file systems may grant it on each machine alone). A file system that refuses locks makes
//! writing fail ([`Operation::Lock`]) rather than go on unguarded. Readers never take it.

use std::fs::{File, TryLockError};
use std::io;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

#[cfg(not(unix))]
use same_file::Handle;

use crate::error::{Error, Operation};

/// What a writer does when another writer holds the log's lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum LockWait {
    /// Refuse at once with [`Error::Locked`]. The default.
    #[default]
    Refuse,
    /// Wait up to this long for the lock, then refuse with [`Error::Locked`].
    For(Duration),
    /// Wait as long as it takes.
    Forever,
}

impl LockWait {
    /// When to stop waiting, from now; `None` for never.
    fn deadline(self) -> Option<Instant> {
        match self {
            Self::Refuse => Some(Instant::now()),
            Self::For(wait) => Instant::now().checked_add(wait),
            Self::Forever => None,
        }
    }
}

/// How long to sleep between attempts, growing up to a tenth of a second.
fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(u64::from(attempt.min(10)) * 10 + 1)
}

/// Opens the file at `path` with `open` and takes its exclusive lock, waiting as `wait` says;
/// checks that `path` still names the locked file (else opens it again).
///
/// `open` returns `Ok(None)` when there is nothing to lock (the path does not exist and is
/// not to be created).
pub(crate) fn open_locked(
    path: &Path,
    wait: LockWait,
    mut open: impl FnMut() -> Result<Option<File>, Error>,
) -> Result<Option<File>, Error> {
    let deadline = wait.deadline();
    let mut attempt = 0u32;
    loop {
        let Some(file) = open()? else {
            return Ok(None);
        };
        let locked = match file.try_lock() {
            Ok(()) => true,
            Err(TryLockError::WouldBlock) => false,
            Err(TryLockError::Error(e)) => return Err(Error::io(Operation::Lock, path, e)),
        };
        if locked {
            if still_named(&file, path).map_err(|e| Error::io(Operation::Inspect, path, e))? {
                return Ok(Some(file));
            }
            // Replaced (or removed) while we waited: lock what the path names now.
            drop(file);
            continue;
        }
        drop(file);
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(Error::Locked {
                path: path.into(),
                waited: match wait {
                    LockWait::For(wait) => Some(wait),
                    _ => None,
                },
            });
        }
        let pause = backoff(attempt);
        attempt = attempt.saturating_add(1);
        let pause = match deadline {
            Some(d) => pause.min(d.saturating_duration_since(Instant::now())),
            None => pause,
        };
        thread::sleep(pause);
    }
}

/// Whether `path` names the open `file` (same device and inode). On Unix the path is only
/// inspected (`stat`), never opened: opening a FIFO blocks until it has a writer.
pub(crate) fn still_named(file: &File, path: &Path) -> io::Result<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match std::fs::metadata(path) {
            Ok(named) => {
                let open = file.metadata()?;
                Ok(named.dev() == open.dev() && named.ino() == open.ino())
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }
    #[cfg(not(unix))]
    match Handle::from_path(path) {
        Ok(named) => Ok(named == Handle::from_file(file.try_clone()?)?),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Whether the open `file` and the file at `path` are one file (same device and inode: hard
/// links, symbolic links, bind mounts and `/proc/self/fd/N` included). A missing `path` is
/// not. `path` is not opened (on Unix), so a FIFO there is answered at once.
///
/// # Errors
/// The operating system's, inspecting either.
pub fn is_same_file(file: &File, path: &Path) -> io::Result<bool> {
    still_named(file, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    fn open(path: &Path) -> impl FnMut() -> Result<Option<File>, Error> + '_ {
        move || {
            File::options()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)
                .map(Some)
                .map_err(|e| Error::io(Operation::Create, path, e))
        }
    }

    #[test]
    fn a_second_lock_is_refused_at_once_or_after_waiting() -> TestResult {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("log");
        let held = open_locked(&path, LockWait::Refuse, open(&path))?;
        assert!(held.is_some());
        let started = Instant::now();
        let refused = open_locked(&path, LockWait::Refuse, open(&path)).err();
        assert!(
            matches!(&refused, Some(Error::Locked { waited: None, .. })),
            "{refused:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(1));
        let started = Instant::now();
        let wait = LockWait::For(Duration::from_millis(200));
        let refused = open_locked(&path, wait, open(&path)).err();
        assert!(
            matches!(
                &refused,
                Some(Error::Locked {
                    waited: Some(_),
                    ..
                })
            ),
            "{refused:?}"
        );
        assert!(started.elapsed() >= Duration::from_millis(200));
        // Released when the file is closed.
        drop(held);
        assert!(open_locked(&path, LockWait::Refuse, open(&path))?.is_some());
        Ok(())
    }

    #[test]
    fn a_waiting_writer_gets_the_lock_when_it_is_released() -> TestResult {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("log");
        let held = open_locked(&path, LockWait::Refuse, open(&path))?;
        let releaser = thread::spawn(move || {
            thread::sleep(Duration::from_millis(100));
            drop(held);
        });
        let got = open_locked(&path, LockWait::Forever, open(&path))?;
        assert!(got.is_some());
        releaser
            .join()
            .map_err(|_| "the releasing thread panicked")?;
        Ok(())
    }

    #[test]
    fn a_file_replaced_while_waiting_is_opened_again() -> TestResult {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("log");
        std::fs::write(&path, b"old")?;
        let held = open_locked(&path, LockWait::Refuse, open(&path))?;
        let replacement = dir.path().join("new");
        std::fs::write(&replacement, b"new")?;
        let (from, to) = (replacement.clone(), path.clone());
        let replacer = thread::spawn(move || {
            thread::sleep(Duration::from_millis(100));
            // The holder puts a new file in place, then lets go of the old one.
            let renamed = std::fs::rename(from, to);
            drop(held);
            renamed
        });
        let got = open_locked(&path, LockWait::Forever, open(&path))?;
        replacer
            .join()
            .map_err(|_| "the replacing thread panicked")??;
        let Some(mut file) = got else {
            return Err("nothing locked".into());
        };
        let mut text = String::new();
        io::Read::read_to_string(&mut file, &mut text)?;
        assert_eq!(text, "new");
        Ok(())
    }

    #[test]
    fn same_file_sees_through_links() -> TestResult {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("in.log");
        std::fs::write(&path, b"x")?;
        let hard = dir.path().join("hard.log");
        std::fs::hard_link(&path, &hard)?;
        let file = File::open(&path)?;
        assert!(is_same_file(&file, &hard)?);
        assert!(is_same_file(&file, &path)?);
        #[cfg(unix)]
        {
            let soft = dir.path().join("soft.log");
            std::os::unix::fs::symlink(&path, &soft)?;
            assert!(is_same_file(&file, &soft)?);
        }
        let other = dir.path().join("other.log");
        std::fs::write(&other, b"x")?;
        assert!(!is_same_file(&file, &other)?);
        assert!(!is_same_file(&file, &dir.path().join("missing"))?);
        Ok(())
    }

    /// A FIFO is inspected, not opened: opening it would wait for a writer.
    #[cfg(unix)]
    #[test]
    fn same_file_does_not_open_a_fifo() -> TestResult {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("in.log");
        std::fs::write(&path, b"x")?;
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status()?;
        assert!(made.success(), "mkfifo");
        let file = File::open(&path)?;
        let (tx, rx) = std::sync::mpsc::channel();
        let (f, p) = (file.try_clone()?, fifo.clone());
        // On a thread: a regression blocks there, and the test fails instead of hanging.
        thread::spawn(move || tx.send(is_same_file(&f, &p).map_err(|e| e.kind())));
        let answer = rx.recv_timeout(Duration::from_secs(10))?;
        assert_eq!(answer, Ok(false));
        Ok(())
    }
}
