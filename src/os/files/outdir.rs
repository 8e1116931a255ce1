//! The private directory that holds the output files (contract §2).
//!
//! Mode 0700 for the directory and 0600 for each file: a command's output can
//! hold secrets, and other users of the machine must not read it. The
//! directory is removed when its owner is dropped, or by the keeper when the
//! owner dies (`os/contain/keeper.rs`).
//!
//! The owner holds an exclusive `flock(2)` on its directory for as long as
//! it lives (the kernel drops it when the process dies, however it dies).
//! When a new directory is made, the directories of the crate's own name
//! pattern in the same root whose lock is free *and* whose owner pid is
//! dead are removed: what owners left that died before the keeper existed,
//! or whose keeper could not run. Both tests, because a pid alone can lie
//! (another pid namespace sharing `/tmp`), and a lock alone is free for
//! directories made before the lock existed.
//!
//! **Spare files.** A foreground command's file has a hidden name (`.fg-N`:
//! it is internal until the command moves to the background, when it is
//! renamed after its ID). It is not deleted when its result has been read,
//! if nothing can write it any more: it is emptied and kept, under the same
//! name (at most [`MAX_SPARES`]), for the next foreground command's output,
//! which takes it as it is; a background command's file is a spare renamed
//! after its ID. Making a new file costs an inode, and on ext4 without a
//! journal the allocator skips every inode freed in the last minutes, so
//! with one new file per command creating one grew to a third of a
//! millisecond within a few thousand commands; a `rename(2)` there costs
//! some 20 µs, which is why a foreground spare keeps its name (see
//! BENCHMARKS.md). "Nothing can write it" is asked of the
//! kernel: a write lease (`F_SETLEASE`) is granted only on a file that no
//! other open file description refers to. The question is asked on the
//! output cap's own read-only descriptor of the file (or on one opened for
//! it), so a process the command left behind that still holds its stdout
//! keeps the file from being reused: the file is then deleted, as before,
//! and stays capped while that process writes. Only a regular file with one
//! link, opened without following a symlink, and the very file the lease
//! was asked of, is reused: a command that replaced its own output file can
//! never have another file emptied.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use parking_lot::{Condvar, Mutex};

/// Counts the directories made by this process, so two values never collide.
static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// How many emptied output files are kept for reuse: enough for a few
/// foreground calls at once.
pub(crate) const MAX_SPARES: usize = 4;

/// The longest a new output file waits for a spare on its way back. The
/// tidying thread takes tens of microseconds for one; this bound only
/// matters if it is held up (a machine under heavy load), and then a new
/// file is made.
const RETURN_WAIT: Duration = Duration::from_millis(50);

/// The largest file emptied for reuse: emptying a big one frees its blocks
/// on the way of the call's result, while a deleted one is freed later,
/// off that way, when its last descriptor closes.
const MAX_SPARE_BYTES: u64 = 1 << 20;

/// The name prefix of a foreground command's file, and so of a spare
/// (hidden: `ls` does not show it).
pub(crate) const FOREGROUND_PREFIX: &str = ".fg-";

/// The spare files, and the retirements not yet done.
#[derive(Debug, Default)]
struct Spares {
    /// Emptied output files kept for reuse, by their hidden path, open for
    /// writing.
    files: Vec<(PathBuf, File)>,
    /// Files handed to [`OutputDir::retire_later`] and not yet retired.
    retiring: usize,
}

/// A directory of our own; removed with everything in it on drop.
#[derive(Debug)]
pub(crate) struct OutputDir {
    path: PathBuf,
    /// The directory itself, open, holding the owner's lock.
    _lock: File,
    /// Emptied output files kept for reuse, and how many are on their way
    /// back.
    spares: Mutex<Spares>,
    /// Notified when a file on its way back has been dealt with.
    returned: Condvar,
    /// Numbers the foreground files.
    next_foreground: AtomicU64,
}

impl OutputDir {
    /// Makes a fresh directory `bashtools-PID-N-NANOS` under `root`.
    /// `create` (not `create_all`) fails on an existing name, so nobody can
    /// plant a directory for us to write into.
    pub(crate) fn create(root: &Path) -> io::Result<OutputDir> {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let name = format!(
            "bashtools-{}-{}-{nanos}",
            std::process::id(),
            SEQUENCE.fetch_add(1, Ordering::Relaxed)
        );
        let path = root.join(name);
        DirBuilder::new().mode(0o700).create(&path)?;
        let lock = match File::open(&path).and_then(|f| lock(&f).map(|()| f)) {
            Ok(f) => f,
            Err(e) => {
                let _ = std::fs::remove_dir(&path);
                return Err(e);
            }
        };
        remove_stale(root, &path);
        Ok(OutputDir {
            path,
            _lock: lock,
            spares: Mutex::new(Spares::default()),
            returned: Condvar::new(),
            next_foreground: AtomicU64::new(0),
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Creates a new output file, 0600, failing if the name exists.
    pub(crate) fn create_file(&self, name: &str) -> io::Result<(PathBuf, File)> {
        let path = self.path.join(name);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)?;
        Ok((path, file))
    }

    /// An output file named `name`, or for a foreground command (`None`)
    /// a hidden one of [`FOREGROUND_PREFIX`]: a spare (renamed if `name`
    /// is given), or else a new file.
    ///
    /// When no spare is there but one is on its way back
    /// ([`retire_later`](Self::retire_later)), it is waited for (at most
    /// [`RETURN_WAIT`]): a command that follows another at once still gets
    /// its file rather than a new inode.
    pub(crate) fn output_file(&self, name: Option<&str>) -> io::Result<(PathBuf, File)> {
        let spare = {
            let mut spares = self.spares.lock();
            let until = Instant::now() + RETURN_WAIT;
            while spares.files.is_empty() && spares.retiring > 0 {
                if self.returned.wait_until(&mut spares, until).timed_out() {
                    break;
                }
            }
            spares.files.pop()
        };
        if let Some((hidden, file)) = spare.and_then(still_spare) {
            let Some(name) = name else {
                return Ok((hidden, file));
            };
            let path = self.path.join(name);
            // `renameat2(RENAME_NOREPLACE)` is not in std; the names are
            // ours and unique, so a plain rename replaces nothing.
            if std::fs::rename(&hidden, &path).is_ok() {
                return Ok((path, file));
            }
            let _ = std::fs::remove_file(&hidden);
        }
        match name {
            Some(name) => self.create_file(name),
            None => {
                let n = self.next_foreground.fetch_add(1, Ordering::Relaxed);
                self.create_file(&format!("{FOREGROUND_PREFIX}{n}"))
            }
        }
    }

    /// Done with output file `path` (its result has been read): kept as a
    /// spare if no process but ours has it open and there is room, else
    /// removed. `sole` is asked first: `None` if it cannot tell,
    /// `Some(None)` if another process has the file open, `Some(Some(id))`
    /// if it is the only one that has it open (the output cap, which then
    /// lets go of it).
    pub(crate) fn retire(&self, path: &Path, sole: impl FnOnce() -> Option<Option<FileId>>) {
        // A big file is deleted, never emptied: its blocks are then freed
        // on the tidying thread (`reclaim`), not on the way of this call's
        // result.
        let small = std::fs::symlink_metadata(path).is_ok_and(|m| m.len() <= MAX_SPARE_BYTES);
        // Only a file of ours under a foreground name: a spare keeps it.
        let foreground = path.parent() == Some(self.path.as_path())
            && path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(FOREGROUND_PREFIX));
        if small && foreground && self.spares.lock().files.len() < MAX_SPARES {
            if let Some(file) = reusable(path, sole) {
                // Emptied only if it holds something: a truncation is a
                // change the output cap's thread is woken for.
                let len = file.metadata().map_or(u64::MAX, |m| m.len());
                let emptied = len == 0 || (len <= MAX_SPARE_BYTES && empty(&file));
                if emptied {
                    let mut spares = self.spares.lock();
                    if spares.files.len() < MAX_SPARES {
                        spares.files.push((path.to_path_buf(), file));
                        return;
                    }
                }
            }
        }
        if small {
            let _ = std::fs::remove_file(path);
        } else {
            crate::os::files::reclaim::remove(path);
        }
    }

    /// [`retire`](Self::retire)s `path` on the tidying thread (`reclaim`),
    /// off the way of the result that was just read from it: emptying a
    /// file and asking the kernel whether anyone else holds it is some
    /// 40-60 µs of file-system work. The next [`output_file`](Self::output_file)
    /// waits for it if it finds no other spare. `sole` runs either way
    /// (it ends the output cap's hold on the file), even once the
    /// directory is gone.
    pub(crate) fn retire_later(
        self: &Arc<Self>,
        path: PathBuf,
        sole: impl FnOnce() -> Option<Option<FileId>> + Send + 'static,
    ) {
        self.spares.lock().retiring += 1;
        let dir: Weak<OutputDir> = Arc::downgrade(self);
        crate::os::files::reclaim::later(move || {
            let Some(dir) = dir.upgrade() else {
                let _ = sole();
                return;
            };
            dir.retire(&path, sole);
            dir.spares.lock().retiring -= 1;
            dir.returned.notify_all();
        });
    }

    /// Removes the directory and every file in it. Idempotent.
    pub(crate) fn remove(&self) {
        // A missing directory is what we want; any other failure leaves files
        // in the temp directory, which is all that can be done from a drop.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        self.remove();
    }
}

/// An exclusive, non-blocking `flock(2)` on `file` (close-on-exec: std
/// opens every file so, and commands never inherit it).
fn lock(file: &File) -> io::Result<()> {
    // SAFETY: flock on a descriptor we own; integers only.
    let ret =
        unsafe { nix::libc::flock(file.as_raw_fd(), nix::libc::LOCK_EX | nix::libc::LOCK_NB) };
    if ret == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Which file a descriptor is: device and inode.
pub(crate) type FileId = (u64, u64);

/// The identity of `file`.
pub(crate) fn file_id(file: &File) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    file.metadata().ok().map(|m| (m.dev(), m.ino()))
}

/// Whether `file`, on which a write lease is asked, is the one open file
/// description of its file (see the module's docs): for a read-only
/// descriptor, no writer and no other reader; for a writing one, no other
/// writer and no reader.
pub(crate) fn sole_open(file: &File) -> bool {
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor we own; integers only. The lease is
    // let go at once: it was only the question.
    let sole = unsafe { nix::libc::fcntl(fd, nix::libc::F_SETLEASE, nix::libc::F_WRLCK) } == 0;
    if sole {
        // SAFETY: as above: gives back the lease just taken.
        unsafe { nix::libc::fcntl(fd, nix::libc::F_SETLEASE, nix::libc::F_UNLCK) };
    }
    sole
}

/// A spare as it was kept: still empty, and still the file at its name.
/// A process the command left can reopen its old output file by name and
/// write to it after the file was emptied; such a spare is removed, not
/// handed out.
fn still_spare((path, file): (PathBuf, File)) -> Option<(PathBuf, File)> {
    use std::os::unix::fs::MetadataExt;
    let same = match (file.metadata(), std::fs::symlink_metadata(&path)) {
        (Ok(meta), Ok(named)) => {
            meta.len() == 0 && (named.dev(), named.ino()) == (meta.dev(), meta.ino())
        }
        _ => false,
    };
    if same {
        return Some((path, file));
    }
    let _ = std::fs::remove_file(&path);
    None
}

/// `path` opened without following a symlink, if it is a regular file of
/// one link (so emptying it empties nothing else). Opened non-blocking (a
/// FIFO put in its place must not hang the open), then blocking again: the
/// descriptor may become a command's stdout, which must look as usual.
pub(crate) fn open_own(path: &Path, write: bool) -> Option<File> {
    use std::os::unix::fs::MetadataExt;
    let file = OpenOptions::new()
        .read(!write)
        .write(write)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.file_type().is_file() || meta.nlink() != 1 {
        return None;
    }
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor we own; integers only.
    let flags = unsafe { nix::libc::fcntl(fd, nix::libc::F_GETFL) };
    let blocking = flags >= 0
        // SAFETY: as above; clears one flag of the file's status flags.
        && unsafe { nix::libc::fcntl(fd, nix::libc::F_SETFL, flags & !nix::libc::O_NONBLOCK) } == 0;
    blocking.then_some(file)
}

/// `path` opened for writing, if nothing but this process has it open: the
/// file `sole` vouches for (the output cap's descriptor of it, which it
/// then lets go), or else one asked here.
fn reusable(path: &Path, sole: impl FnOnce() -> Option<Option<FileId>>) -> Option<File> {
    let vouched = match sole() {
        Some(id) => id?,
        None => {
            let reader = open_own(path, false)?;
            if !sole_open(&reader) {
                return None;
            }
            file_id(&reader)?
        }
    };
    // The same file the question was asked of, not one put in its place.
    let file = open_own(path, true)?;
    (file_id(&file)? == vouched).then_some(file)
}

/// Empties `file`, and ends the flush at close that emptying arms on ext4.
///
/// ext4 (mounted `auto_da_alloc`, its default) takes a truncation to zero
/// for the start of a "replace the file's contents" and flushes the new
/// contents to disk at the next close of any descriptor of the file. For a
/// spare that close is the reading of the next command's output, and the
/// truncation after it waits for that write to reach the disk: a 3-byte
/// `echo hi` cost some 0.2 ms a command, all of it waiting on the block
/// device (see BENCHMARKS.md). A close right after the truncation, while the
/// file holds nothing to flush, ends the watch for nothing. Other file
/// systems ignore the extra open and close.
fn empty(file: &File) -> bool {
    if file.set_len(0).is_err() {
        return false;
    }
    // A new description of the very same file (not its path, which a
    // process could have changed), closed at once.
    drop(File::open(format!("/proc/self/fd/{}", file.as_raw_fd())));
    true
}

/// The owner pid in a name of the crate's pattern `bashtools-PID-N-NANOS`.
fn owner_of(name: &str) -> Option<u32> {
    let mut parts = name.strip_prefix("bashtools-")?.split('-');
    let pid = parts.next()?.parse().ok()?;
    parts.next()?.parse::<u64>().ok()?;
    parts.next()?.parse::<u64>().ok()?;
    parts.next().is_none().then_some(pid)
}

/// Removes the directories under `root` that dead owners left (see the
/// module's docs); `mine` is never touched.
fn remove_stale(root: &Path, mine: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(pid) = entry.file_name().to_str().and_then(owner_of) else {
            continue;
        };
        if path == mine || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        // Not a symlink to follow, and one we can lock: nobody owns it.
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && File::open(&path).and_then(|f| lock(&f)).is_ok() {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

/// Whether the file system that holds `path` has no space left for this
/// process (`statvfs(3)`): no block free to root, or none available to
/// others. An output file is written by the command itself, so its write
/// errors are never seen here; a full file system when the command ends is
/// the sign that what it wrote may not all be in the file.
pub(crate) fn no_space(path: &Path) -> bool {
    let Ok(fs) = nix::sys::statvfs::statvfs(path) else {
        return false;
    };
    // SAFETY: a plain syscall.
    let free = if unsafe { nix::libc::geteuid() } == 0 {
        fs.blocks_free()
    } else {
        fs.blocks_available()
    };
    free == 0
}

#[cfg(test)]
mod tests {
    use super::owner_of;

    #[test]
    fn only_the_crates_own_names_have_an_owner() {
        assert_eq!(owner_of("bashtools-123-0-456"), Some(123));
        assert_eq!(owner_of("bashtools-test-123-0-x"), None);
        assert_eq!(owner_of("bashtools-123-0"), None);
        assert_eq!(owner_of("bashtools-123-0-456-7"), None);
        assert_eq!(owner_of("other-123-0-456"), None);
    }
}
