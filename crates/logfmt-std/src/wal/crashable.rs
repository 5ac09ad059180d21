//! [`CrashableStorage`]: a [`Storage`] in memory that loses, at a simulated crash, everything
//! not made durable — written bytes not synced, and directory entries (files created,
//! renamed, removed) not synced — as LevelDB's fault-injection test environment and Pebble's
//! crashable memory file system do; and whose syncs can be made to stall.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Cursor, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use crate::group::SyncHandle;
use crate::writer::SyncWrite;

use super::storage::Storage;

/// A file's contents: what was written, and what a crash leaves.
#[derive(Debug, Default)]
struct Inode {
    /// Every byte written.
    data: Vec<u8>,
    /// The bytes as of the last sync: what a crash leaves.
    durable: Vec<u8>,
    /// The first offset written since the last sync.
    dirty_from: Option<usize>,
    /// Synced at least once since created: a directory entry for it can be made durable
    /// (an entry whose file was never written back is dropped by a crash).
    synced: bool,
}

impl Inode {
    fn sync(&mut self) {
        self.synced = true;
        if let Some(from) = self.dirty_from.take() {
            let from = from.min(self.data.len()).min(self.durable.len());
            self.durable.truncate(from);
            self.durable.extend_from_slice(&self.data[from..]);
        }
        self.durable.truncate(self.data.len());
    }

    /// What a crash leaves: the durable bytes, with the first `keep` of the unsynced ones
    /// written over them (a write torn part way).
    fn after_crash(&self, keep: &mut dyn FnMut(u64) -> u64) -> Self {
        let mut data = self.durable.clone();
        if let Some(from) = self.dirty_from.filter(|&f| f < self.data.len()) {
            let unsynced = self.data.len() - from;
            let kept = usize::try_from(keep(unsynced as u64))
                .unwrap_or(usize::MAX)
                .min(unsynced);
            let end = from + kept;
            if data.len() < end {
                data.resize(end, 0);
            }
            data[from..end].copy_from_slice(&self.data[from..end]);
        }
        Self {
            durable: data.clone(),
            data,
            dirty_from: None,
            synced: true,
        }
    }
}

type Shared = Arc<Mutex<Inode>>;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A directory: its entries now, and those a crash leaves.
#[derive(Debug, Default)]
struct Dir {
    entries: BTreeMap<String, Shared>,
    durable: BTreeMap<String, Shared>,
}

#[derive(Debug, Default)]
struct State {
    /// The directories whose syncs stall (a crash ends every stall).
    stalls: Arc<Stalls>,
    dirs: BTreeMap<PathBuf, Dir>,
    locked: BTreeSet<PathBuf>,
    /// Crashes so far: a lock or handle of before one is gone.
    crashes: u64,
    /// Operations that change something, so far.
    operations: u64,
    /// Crash once this many operations have been done.
    crash_at: Option<u64>,
    /// How much of each file's unsynced bytes the next crash keeps.
    tear: Option<u64>,
}

impl State {
    /// The file at `path`.
    fn inode(&self, path: &Path) -> io::Result<Shared> {
        let (dir, name) = split(path)?;
        let dir = self.dirs.get(dir).ok_or_else(not_found)?;
        dir.entries.get(&name).cloned().ok_or_else(not_found)
    }

    /// Counts an operation of a handle or call made after `epoch` crashes: refused if a crash
    /// came since, or comes now.
    fn operate(&mut self, epoch: u64) -> io::Result<()> {
        if self.crashes != epoch {
            return Err(crashed());
        }
        self.operations += 1;
        if self.crash_at.is_some_and(|at| self.operations >= at) {
            self.crash_at = None;
            let tear = self.tear;
            self.crash(&mut |n| tear.map_or(0, |t| t % (n + 1)));
            return Err(crashed());
        }
        Ok(())
    }

    fn crash(&mut self, keep: &mut dyn FnMut(u64) -> u64) {
        let mut crashed: BTreeMap<*const Mutex<Inode>, Shared> = BTreeMap::new();
        for dir in self.dirs.values_mut() {
            let mut entries = BTreeMap::new();
            for (name, inode) in &dir.durable {
                let after = crashed
                    .entry(Arc::as_ptr(inode))
                    .or_insert_with(|| Arc::new(Mutex::new(lock(inode).after_crash(keep))));
                entries.insert(name.clone(), Arc::clone(after));
            }
            dir.durable = entries.clone();
            dir.entries = entries;
        }
        self.locked.clear();
        self.crashes += 1;
        lock(&self.stalls.dirs).clear();
        self.stalls.changed.notify_all();
    }
}

/// The error of every operation after a crash, until the storage is opened again.
fn crashed() -> io::Error {
    io::Error::other("the simulated machine crashed")
}

/// Which directories' syncs stall.
#[derive(Debug, Default)]
struct Stalls {
    dirs: Mutex<BTreeSet<PathBuf>>,
    changed: Condvar,
}

impl Stalls {
    fn wait_while_stalled(&self, dir: &Path) {
        let mut dirs = lock(&self.dirs);
        while dirs.contains(dir) {
            dirs = self
                .changed
                .wait(dirs)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// A [`Storage`] in memory that a test crashes: [`crash`](Self::crash) keeps only what was
/// made durable — bytes synced (through [`SyncWrite::sync`] or the sync handle), files
/// created, renamed and removed once their directory was synced (a new file's entry only if
/// the file itself was synced before the directory: a directory entry whose file was never
/// written back does not survive, as on a file system that writes the entry first) — and, with
/// [`crash_tearing`](Self::crash_tearing), a part of the unsynced bytes too, as a write torn
/// by a power cut leaves them. Handles opened before a crash write to nothing after it. A
/// directory is created durably at once.
///
/// [`stall`](Self::stall) makes every sync of a file in a directory block until
/// [`unstall`](Self::unstall): a disk that stops answering.
///
/// Clones share the same files. A clone belongs to the machine as it is when cloned: after a
/// crash, every change made through a clone of before (a file created, renamed, removed or
/// cut, a directory synced) fails, as every write through a handle of before does — the
/// process that held it is gone. Clone again to go on after a crash.
///
/// ```
/// use std::io::Write;
/// use std::path::Path;
/// use logfmt_std::advanced::{SyncHandle, SyncWrite};
/// use logfmt_std::wal::{CrashableStorage, Storage};
///
/// let fs = CrashableStorage::new();
/// let dir = Path::new("/wal");
/// fs.create_dir(dir)?;
/// let (mut synced, _) = fs.create(&dir.join("a"))?;
/// synced.sync()?; // the new file first, then its directory entry
/// fs.sync_dir(dir)?;
/// synced.write_all(b"kept")?;
/// synced.sync()?;
/// synced.write_all(b" lost")?;
/// let (_, handle) = fs.create(&dir.join("c"))?;
/// fs.sync_dir(dir)?; // its entry is not durable: the file was never synced
/// handle.sync()?;
/// let (mut unlisted, _) = fs.create(&dir.join("b"))?;
/// unlisted.write_all(b"lost")?;
/// unlisted.sync()?; // its data is durable, its directory entry is not
///
/// fs.crash();
/// assert_eq!(fs.list(dir)?, ["a"]);
/// assert_eq!(fs.contents(&dir.join("a")), Some(b"kept".to_vec()));
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct CrashableStorage {
    state: Arc<Mutex<State>>,
    stalls: Arc<Stalls>,
    /// The crashes before this clone was made.
    epoch: u64,
}

impl Clone for CrashableStorage {
    fn clone(&self) -> Self {
        Self {
            state: Arc::clone(&self.state),
            stalls: Arc::clone(&self.stalls),
            epoch: lock(&self.state).crashes,
        }
    }
}

impl Default for CrashableStorage {
    fn default() -> Self {
        Self::new()
    }
}

impl CrashableStorage {
    /// An empty file system.
    #[must_use]
    pub fn new() -> Self {
        let stalls = Arc::<Stalls>::default();
        let state = State {
            stalls: Arc::clone(&stalls),
            ..State::default()
        };
        Self {
            state: Arc::new(Mutex::new(state)),
            stalls,
            epoch: 0,
        }
    }

    /// A crash: every file and directory entry loses what was not durable.
    pub fn crash(&self) {
        self.crash_tearing(|_| 0);
    }

    /// A crash that keeps, of each file's `n` unsynced bytes, the first `keep(n)` (a torn
    /// write): the rest is lost.
    pub fn crash_tearing(&self, mut keep: impl FnMut(u64) -> u64) {
        lock(&self.state).crash(&mut keep);
    }

    /// Crashes in the middle of what is being done: when `operations` more operations that
    /// change something (a write, a sync, a file created, renamed, cut or removed, a directory
    /// synced) have been made, the last of them fails and the machine crashes as by
    /// [`crash`](Self::crash) (keeping, of each file's `n` unsynced bytes, `tear % (n + 1)`
    /// with a `tear`). Every later call through a handle or lock of before fails.
    pub fn crash_after(&self, operations: u64, tear: Option<u64>) {
        let mut state = lock(&self.state);
        state.crash_at = Some(state.operations + operations.max(1));
        state.tear = tear;
    }

    /// Operations that changed something, so far (see [`crash_after`](Self::crash_after)).
    #[must_use]
    pub fn operations(&self) -> u64 {
        lock(&self.state).operations
    }

    /// Crashes so far.
    #[must_use]
    pub fn crashes(&self) -> u64 {
        lock(&self.state).crashes
    }

    /// Whether a crash [`crash_after`](Self::crash_after) asked for is still to come.
    #[must_use]
    pub fn crash_pending(&self) -> bool {
        lock(&self.state).crash_at.is_some()
    }

    /// Makes every sync of a file in `dir` block until [`unstall`](Self::unstall) (or a
    /// crash).
    pub fn stall(&self, dir: &Path) {
        lock(&self.stalls.dirs).insert(dir.to_path_buf());
    }

    /// Lets the syncs of files in `dir` go on.
    pub fn unstall(&self, dir: &Path) {
        lock(&self.stalls.dirs).remove(dir);
        self.stalls.changed.notify_all();
    }

    /// The bytes written to the file at `path` (synced or not), if it exists.
    #[must_use]
    pub fn contents(&self, path: &Path) -> Option<Vec<u8>> {
        let inode = self.inode(path).ok()?;
        Some(lock(&inode).data.clone())
    }

    /// Puts `bytes` in a file at `path`, durably (its directory entry too): a test's damage.
    ///
    /// # Errors
    /// The directory does not exist.
    pub fn put(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let (dir, name) = split(path)?;
        let mut state = lock(&self.state);
        let dir = state.dirs.get_mut(dir).ok_or_else(not_found)?;
        let inode = Arc::new(Mutex::new(Inode {
            data: bytes.to_vec(),
            durable: bytes.to_vec(),
            dirty_from: None,
            synced: true,
        }));
        dir.entries.insert(name.clone(), Arc::clone(&inode));
        dir.durable.insert(name, inode);
        Ok(())
    }

    fn inode(&self, path: &Path) -> io::Result<Shared> {
        lock(&self.state).inode(path)
    }

    fn open_to_write(&self, path: &Path, inode: Shared) -> (CrashFile, CrashHandle) {
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let epoch = self.epoch;
        let file = CrashFile {
            inode: Arc::clone(&inode),
            position: 0,
            state: Arc::clone(&self.state),
            epoch,
        };
        let handle = CrashHandle {
            inode,
            dir,
            stalls: Arc::clone(&self.stalls),
            state: Arc::clone(&self.state),
            epoch,
        };
        (file, handle)
    }
}

fn not_found() -> io::Error {
    io::ErrorKind::NotFound.into()
}

/// A path's directory and file name.
fn split(path: &Path) -> io::Result<(&Path, String)> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
    Ok((path.parent().unwrap_or(Path::new("")), name.to_owned()))
}

/// A [`CrashableStorage`] file open to write.
#[derive(Debug)]
pub struct CrashFile {
    inode: Shared,
    position: usize,
    state: Arc<Mutex<State>>,
    epoch: u64,
}

impl Write for CrashFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // Counted and done in one step under the state's lock (as every operation here): a
        // crash comes wholly before or after it.
        let mut state = lock(&self.state);
        state.operate(self.epoch)?;
        let mut inode = lock(&self.inode);
        let end = self.position + buf.len();
        if inode.data.len() < end {
            inode.data.resize(end, 0);
        }
        inode.data[self.position..end].copy_from_slice(buf);
        let from = inode
            .dirty_from
            .map_or(self.position, |f| f.min(self.position));
        inode.dirty_from = Some(from);
        self.position = end;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl SyncWrite for CrashFile {
    fn sync(&mut self) -> io::Result<()> {
        // One step under the state's lock: a crash another thread's operation makes comes
        // before this sync (which then fails) or after it (which it keeps), never between a
        // sync counted and its bytes made durable — a sync that returned must have held.
        let mut state = lock(&self.state);
        state.operate(self.epoch)?;
        lock(&self.inode).sync();
        Ok(())
    }
}

/// Syncs a [`CrashableStorage`] file from any thread; blocks while its directory is
/// [stalled](CrashableStorage::stall).
#[derive(Debug)]
pub struct CrashHandle {
    inode: Shared,
    dir: PathBuf,
    stalls: Arc<Stalls>,
    state: Arc<Mutex<State>>,
    epoch: u64,
}

impl SyncHandle for CrashHandle {
    fn sync(&self) -> io::Result<()> {
        self.stalls.wait_while_stalled(&self.dir);
        // Counted and made durable in one step, as `CrashFile`'s sync.
        let mut state = lock(&self.state);
        state.operate(self.epoch)?;
        lock(&self.inode).sync();
        Ok(())
    }
}

/// The directory lock of a [`CrashableStorage`]: released when dropped, or by a crash.
#[derive(Debug)]
pub struct CrashLock {
    state: Arc<Mutex<State>>,
    dir: PathBuf,
    crashes: u64,
}

impl Drop for CrashLock {
    fn drop(&mut self) {
        let mut state = lock(&self.state);
        if state.crashes == self.crashes {
            state.locked.remove(&self.dir);
        }
    }
}

impl Storage for CrashableStorage {
    type File = CrashFile;
    type Handle = CrashHandle;
    type Reader = Cursor<Vec<u8>>;
    type Lock = CrashLock;

    fn create_dir(&self, dir: &Path) -> io::Result<()> {
        lock(&self.state).dirs.entry(dir.to_path_buf()).or_default();
        Ok(())
    }

    fn lock(&self, dir: &Path) -> io::Result<Option<CrashLock>> {
        let mut state = lock(&self.state);
        if !state.dirs.contains_key(dir) {
            return Err(not_found());
        }
        if !state.locked.insert(dir.to_path_buf()) {
            return Ok(None);
        }
        Ok(Some(CrashLock {
            state: Arc::clone(&self.state),
            dir: dir.to_path_buf(),
            crashes: state.crashes,
        }))
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let state = lock(&self.state);
        let dir = state.dirs.get(dir).ok_or_else(not_found)?;
        Ok(dir.entries.keys().cloned().collect())
    }

    fn create(&self, path: &Path) -> io::Result<(CrashFile, CrashHandle)> {
        let (dir, name) = split(path)?;
        let inode = {
            let mut state = lock(&self.state);
            state.operate(self.epoch)?;
            let dir = state.dirs.get_mut(dir).ok_or_else(not_found)?;
            if dir.entries.contains_key(&name) {
                return Err(io::ErrorKind::AlreadyExists.into());
            }
            let inode: Shared = Arc::default();
            dir.entries.insert(name, Arc::clone(&inode));
            inode
        };
        Ok(self.open_to_write(path, inode))
    }

    fn reuse(&self, path: &Path) -> io::Result<(CrashFile, CrashHandle)> {
        let inode = self.inode(path)?;
        Ok(self.open_to_write(path, inode))
    }

    fn open(&self, path: &Path) -> io::Result<Cursor<Vec<u8>>> {
        let inode = self.inode(path)?;
        let data = lock(&inode).data.clone();
        Ok(Cursor::new(data))
    }

    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        let mut state = lock(&self.state);
        state.operate(self.epoch)?;
        let inode = state.inode(path)?;
        let mut inode = lock(&inode);
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        inode.data.truncate(len);
        inode.sync();
        Ok(())
    }

    fn write_at(&self, path: &Path, offset: u64, bytes: &[u8]) -> io::Result<()> {
        let (mut file, handle) = self.reuse(path)?;
        file.position = usize::try_from(offset).unwrap_or(usize::MAX);
        file.write_all(bytes)?;
        handle.sync()
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let ((from_dir, from_name), (to_dir, to_name)) = (split(from)?, split(to)?);
        if from_dir != to_dir {
            return Err(io::Error::new(
                io::ErrorKind::CrossesDevices,
                "renames stay in a directory",
            ));
        }
        let mut state = lock(&self.state);
        state.operate(self.epoch)?;
        let dir = state.dirs.get_mut(from_dir).ok_or_else(not_found)?;
        let inode = dir.entries.remove(&from_name).ok_or_else(not_found)?;
        dir.entries.insert(to_name, inode);
        Ok(())
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        let (dir, name) = split(path)?;
        let mut state = lock(&self.state);
        state.operate(self.epoch)?;
        let dir = state.dirs.get_mut(dir).ok_or_else(not_found)?;
        dir.entries.remove(&name).map(drop).ok_or_else(not_found)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut state = lock(&self.state);
        state.operate(self.epoch)?;
        let dir = state.dirs.get_mut(dir).ok_or_else(not_found)?;
        // An entry is made durable once its file is: a file created and never synced keeps
        // its durable entry if it had one (never, for a new name), else none.
        let mut durable = BTreeMap::new();
        for (name, inode) in &dir.entries {
            if lock(inode).synced {
                durable.insert(name.clone(), Arc::clone(inode));
            } else if let Some(before) = dir.durable.get(name) {
                durable.insert(name.clone(), Arc::clone(before));
            }
        }
        dir.durable = durable;
        Ok(())
    }
}
