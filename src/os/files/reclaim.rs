//! Work kept off the caller's way, on one thread of the process.
//!
//! - **Freeing a big deleted file.** The last close of a deleted file frees
//!   its blocks and its page cache in the closing thread: for a command
//!   that printed 1 GiB, some 200 ms, which would be spent on the way of
//!   that command's result (its file is removed once the result has been
//!   read) or, worse, on the reaper thread. Such a descriptor is handed to
//!   this thread, which closes it.
//! - **Chores after a result** ([`later`]): putting a foreground command's
//!   output file back for the next command (`OutputDir::retire_later`),
//!   some 40-60 µs of file-system work a command that nobody needs to wait
//!   for.
//!
//! The thread is started the first time it is needed. Where it cannot
//! run the work — it could not start, or this is a process forked from
//! the one that started it, where it does not exist — the work is done on
//! the caller's thread, as it would have been without it.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::sync::OnceLock;

use crossbeam_channel::Sender;

/// A file is "big" past this: closing a smaller one costs little.
const BIG: u64 = 1 << 20;

/// What the thread is given.
enum Chore {
    Close(File),
    Run(Box<dyn FnOnce() + Send>),
}

/// The thread's queue, and the process that started it.
static TIDIER: OnceLock<Option<(u32, Sender<Chore>)>> = OnceLock::new();

/// Hands `chore` to the thread; gives it back when the thread cannot take
/// it.
fn hand(chore: Chore) -> Result<(), Chore> {
    let tidier = TIDIER.get_or_init(|| {
        let (tx, rx) = crossbeam_channel::unbounded::<Chore>();
        std::thread::Builder::new()
            .name("bashtools-tidy".into())
            .spawn(move || {
                for chore in rx {
                    match chore {
                        Chore::Close(file) => drop(file),
                        Chore::Run(work) => work(),
                    }
                }
            })
            .ok()
            .map(|_| (std::process::id(), tx))
    });
    match tidier {
        Some((pid, tx)) if *pid == std::process::id() => {
            // A send fails only if the thread is gone: the chore comes back.
            tx.send(chore).map_err(|e| e.into_inner())
        }
        _ => Err(chore),
    }
}

/// Runs `work` on the thread, soon; here and now if the thread cannot.
pub(crate) fn later(work: impl FnOnce() + Send + 'static) {
    if let Err(Chore::Run(work)) = hand(Chore::Run(Box::new(work))) {
        work();
    }
}

/// Closes `file` here if that is cheap (it still has a name, or is small),
/// else on the thread (here too if the thread cannot).
pub(crate) fn close(file: File) {
    let costly = file
        .metadata()
        .is_ok_and(|m| m.nlink() == 0 && m.len() > BIG);
    if !costly {
        return drop(file);
    }
    // A chore that comes back is dropped here: the file closes.
    let _ = hand(Chore::Close(file));
}

/// Removes the file at `path`; if it is big, its blocks are freed on the
/// tidying thread. A path that is not a regular file is only unlinked.
pub(crate) fn remove(path: &std::path::Path) {
    use std::os::unix::fs::OpenOptionsExt;
    // Opened without following a symlink and without blocking (a FIFO in
    // its place must not hang this); only a regular file is held.
    let held = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .ok()
        .filter(|f| f.metadata().is_ok_and(|m| m.is_file() && m.len() > BIG));
    let _ = std::fs::remove_file(path);
    if let Some(file) = held {
        close(file);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// How many descriptors of this process refer to `path`, deleted.
    fn held(path: &std::path::Path) -> usize {
        let gone = format!("{} (deleted)", path.display());
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .flatten()
            .filter(|fd| {
                std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == gone.as_str())
            })
            .count()
    }

    #[test]
    fn a_big_deleted_file_is_closed_by_the_tidying_thread() {
        let dir = std::env::temp_dir().join(format!("bashtools-reclaim-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("big");
        File::create(&path).unwrap().set_len(BIG + 1).unwrap();
        remove(&path);
        assert!(!path.exists());
        // The tidying thread runs (it may have been started by an earlier
        // big file: there is one per process; it names itself once it
        // runs), and closes the file: no descriptor of ours is left on it.
        let closer_runs = || {
            std::fs::read_dir("/proc/self/task")
                .unwrap()
                .flatten()
                .any(|t| {
                    std::fs::read_to_string(t.path().join("comm"))
                        .is_ok_and(|c| c.trim() == "bashtools-tidy")
                })
        };
        let end = Instant::now() + Duration::from_secs(30);
        while !closer_runs() || held(&path) > 0 {
            assert!(
                Instant::now() < end,
                "no tidying thread closed the big file (it runs: {})",
                closer_runs()
            );
            std::thread::yield_now();
        }
        // A small one is unlinked alike (and closed at once).
        let small = dir.join("small");
        std::fs::write(&small, b"x").unwrap();
        remove(&small);
        assert!(!small.exists());
        assert_eq!(held(&small), 0);
        std::fs::remove_dir(&dir).unwrap();
    }
}
