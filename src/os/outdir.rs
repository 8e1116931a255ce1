//! The private directory that holds the output files (contract §2).
//!
//! Mode 0700 for the directory and 0600 for each file: a command's output can
//! hold secrets, and other users of the machine must not read it. The
//! directory is removed when its owner is dropped, or by the keeper when the
//! owner dies (`keeper.rs`).
//!
//! The owner holds an exclusive `flock(2)` on its directory for as long as
//! it lives (the kernel drops it when the process dies, however it dies).
//! When a new directory is made, the directories of the crate's own name
//! pattern in the same root whose lock is free *and* whose owner pid is
//! dead are removed: what owners left that died before the keeper existed,
//! or whose keeper could not run. Both tests, because a pid alone can lie
//! (another pid namespace sharing `/tmp`), and a lock alone is free for
//! directories made before the lock existed.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Counts the directories made by this process, so two values never collide.
static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// A directory of our own; removed with everything in it on drop.
#[derive(Debug)]
pub(crate) struct OutputDir {
    path: PathBuf,
    /// The directory itself, open, holding the owner's lock.
    _lock: File,
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
        Ok(OutputDir { path, _lock: lock })
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
