//! cgroup v2 (`cgroups(7)`; the kernel's `admin-guide/cgroup-v2.rst`): a
//! directory per command, which every process it starts belongs to whatever
//! it does — `setsid`, `set -m`, double forks and daemons leave a session or
//! a group, never their cgroup (only a process allowed to write
//! `cgroup.procs` elsewhere can move one out).
//!
//! - The hierarchy is found in `/proc/self/mountinfo` (filesystem type
//!   `cgroup2`) and this process's place in it in `/proc/self/cgroup`
//!   (the `0::PATH` line): nothing assumes `/sys/fs/cgroup`, which on a
//!   hybrid layout holds the v1 controllers, with v2 at `.../unified`.
//! - Under our own cgroup, one directory per owner ([`Jail`]) and one per
//!   command under it ([`Cell`]). No process ever lives in the jail itself,
//!   so the "no internal processes" rule never bites.
//! - Stopping: SIGTERM and SIGCONT to every member, then, after the grace,
//!   `cgroup.kill` (SIGKILL to every member, atomically with respect to
//!   forks). "Everything is gone" is `populated 0` in `cgroup.events`,
//!   which the kernel signals to `poll(2)` (POLLPRI): no `/proc` scan.
//! - A command is created inside its cell (`clone3(2)` with
//!   `CLONE_INTO_CGROUP`), or, forked where the kernel cannot, joins it
//!   before its exec (`launch/`): none of its code runs elsewhere.
//! - A cell emptied by `cgroup.kill` is never reused (one was seen to
//!   kill the next command put in it); one that emptied by itself may be,
//!   and the next command's cell is made ahead, while the current one runs
//!   (`contain.rs`). Each cell keeps its `cgroup.events` open: one
//!   descriptor per live or spare cell.

use std::collections::HashSet;
use std::fs::{DirBuilder, File};
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::{DirBuilderExt, FileExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::Signal;

use crate::os::sys;

mod mounts;
pub(crate) mod v1;

use mounts::{own_cgroup, Hierarchy};

/// How every cell's name begins (`run-N`): the keeper's script finds the
/// cells of a jail by it.
pub(crate) const CELL_PREFIX: &str = "run-";

/// Counts the jails made by this process, so two owners never share one.
static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// 64 bits from the kernel's random source (`getrandom(2)`).
fn random_u64() -> io::Result<u64> {
    let mut bytes = [0u8; 8];
    // SAFETY: fills the 8 bytes of our buffer.
    let n = unsafe { nix::libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    if n != bytes.len() as isize {
        return Err(io::Error::last_os_error());
    }
    Ok(u64::from_ne_bytes(bytes))
}

/// One owner's cgroup: every command's cell is made under it.
#[derive(Debug)]
pub(crate) struct Jail {
    dir: PathBuf,
    /// The jail's directory, with a shared lock held on it: the sign for
    /// an owner starting later that this one lives (`mounts::hold`).
    _held: File,
    next: AtomicU64,
    /// The jail's own `cpu.stat`, open: reading it flushes the kernel's
    /// pending statistics of every cell ([`flush_stats`](Self::flush_stats)).
    stats: Option<File>,
}

impl Jail {
    /// Makes the owner's cgroup under this process's own, calling `before`
    /// with its path just before it is made (the keeper is told). Fails
    /// where there is no cgroup v2 hierarchy, no permission to make
    /// cgroups there, or no `cgroup.kill` (Linux before 5.14).
    pub(crate) fn create(before: &dyn Fn(&Path)) -> io::Result<Jail> {
        let base = own_cgroup(Hierarchy::V2)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no cgroup v2 hierarchy"))?;
        // The pid and a sequence say whose it is; 64 random bits make the
        // name unique across pid namespaces (every container's server is
        // PID 1) and boots, so a cell another left behind never takes it.
        let dir = base.join(format!(
            "bashtools-{}-{}-{:016x}",
            std::process::id(),
            SEQUENCE.fetch_add(1, Ordering::Relaxed),
            random_u64()?
        ));
        before(&dir);
        DirBuilder::new().mode(0o755).create(&dir)?;
        if !dir.join("cgroup.kill").exists() {
            let _ = std::fs::remove_dir(&dir);
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "no cgroup.kill (Linux 5.14+)",
            ));
        }
        let held = match mounts::hold(&dir) {
            Ok(held) => held,
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                return Err(e);
            }
        };
        sweep_stale(&base, &dir);
        let stats = File::open(dir.join("cpu.stat")).ok();
        Ok(Jail {
            dir,
            _held: held,
            next: AtomicU64::new(1),
            stats,
        })
    }

    /// Flushes the kernel's pending CPU statistics of every cell, so that
    /// reading one cell's later costs the same however many cells there
    /// are.
    ///
    /// Why: each cell whose processes ran since the last flush is linked,
    /// per CPU, into a *singly* linked list of its parent's "updated"
    /// children (`css_rstat_updated_list` in `kernel/cgroup/rstat.c`), new
    /// ones at the head. Reading one cell's `cpu.stat` (its usage, at every
    /// command's end) unlinks it, and finding its predecessor walks the
    /// list: with 1000 background shells started since, the cell of the
    /// oldest cost ~300 µs to read, on the way of `kill_shell`'s answer
    /// and of every foreground result. Read from the jail, the whole list
    /// is taken at once; done after every spawn, it never grows past the
    /// cells that ran since the last command started.
    pub(crate) fn flush_stats(&self) {
        if let Some(f) = &self.stats {
            let mut buf = [0u8; 512];
            let _ = std::os::unix::fs::FileExt::read_at(f, &mut buf, 0);
        }
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// A new, empty cell for one command.
    pub(crate) fn cell(&self) -> io::Result<Cell> {
        let dir = self.dir.join(format!(
            "{CELL_PREFIX}{}",
            self.next.fetch_add(1, Ordering::Relaxed)
        ));
        DirBuilder::new().mode(0o755).create(&dir)?;
        let events = File::open(dir.join("cgroup.events")).ok().map(Arc::new);
        Ok(Cell { dir, events })
    }

    /// SIGKILL to everything in the jail, a wait (up to `deadline`) for it
    /// to empty, then the removal of every cell and of the jail. The last
    /// line of defense of a dropped owner.
    pub(crate) fn destroy(&self, deadline: Instant) {
        let whole = Cell {
            dir: self.dir.clone(),
            events: None,
        };
        if !whole.populated() {
            return self.remove_all();
        }
        whole.kill();
        Cell::wait_all_empty(&[&whole], deadline);
        self.remove_all();
    }

    fn remove_all(&self) {
        mounts::remove_with_cells(&self.dir);
    }
}

/// Kills what is left in the jails dead owners left beside `mine` (their
/// keeper died with them, or was killed first) and removes them: one run
/// of an attack suite that SIGKILLs hosts and keepers once left 16 here.
fn sweep_stale(base: &Path, mine: &Path) {
    for (dir, _locked) in mounts::stale_jails(base, mine) {
        let stale = Cell {
            dir: dir.clone(),
            events: File::open(dir.join("cgroup.events")).ok().map(Arc::new),
        };
        if stale.populated() {
            stale.kill();
            Cell::wait_all_empty(&[&stale], Instant::now() + Duration::from_secs(1));
        }
        mounts::remove_with_cells(&dir);
    }
}

/// One command's cgroup.
#[derive(Debug)]
pub(crate) struct Cell {
    dir: PathBuf,
    /// Its `cgroup.events`, open from the cell's making on (`None` if that
    /// failed): asked at every command's end, before its caller is woken,
    /// where an open of the file costs several times its read.
    events: Option<Arc<File>>,
}

impl Cell {
    /// The cell's directory.
    pub(crate) fn path(&self) -> &Path {
        &self.dir
    }

    /// The cell's name (`run-N`), which its v1 directories share.
    pub(crate) fn name(&self) -> &std::ffi::OsStr {
        self.dir.file_name().unwrap_or_default()
    }

    /// A cell at `dir`, for tests of what is written to and read from its
    /// files (a plain directory stands in for the kernel's).
    #[cfg(test)]
    pub(crate) fn at(dir: PathBuf) -> Cell {
        Cell { dir, events: None }
    }

    /// Another handle on the same cell (its path and events file).
    pub(crate) fn clone_ref(&self) -> Cell {
        Cell {
            dir: self.dir.clone(),
            events: self.events.clone(),
        }
    }

    /// The cell's directory, open, for `clone3(CLONE_INTO_CGROUP)`.
    pub(crate) fn open(&self) -> io::Result<File> {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_DIRECTORY)
            .open(&self.dir)
    }

    /// Whether any process is in the cell (`cgroup.events`). A cell that
    /// cannot be read is taken as empty: it is gone.
    pub(crate) fn populated(&self) -> bool {
        // One read into the stack (no size query, no string grown).
        match &self.events {
            Some(f) => file_populated(f),
            None => self.open_events().is_ok_and(|f| file_populated(&f)),
        }
    }

    fn open_events(&self) -> io::Result<File> {
        File::open(self.dir.join("cgroup.events"))
    }

    /// The pids in the cell now.
    fn members(&self) -> Vec<u32> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .map(|s| s.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    /// Sends `signal` to every member. A member is signalled through a
    /// pidfd opened before its cgroup is checked, so a pid that ended and
    /// was given to another process between the list and the signal is
    /// never hit. Members forked meanwhile are found by a second look.
    pub(crate) fn signal(&self, signal: Signal, skip: &HashSet<u32>) {
        let mut done: Vec<u32> = skip.iter().copied().collect();
        for _ in 0..3 {
            let fresh: Vec<u32> = self
                .members()
                .into_iter()
                .filter(|p| !done.contains(p))
                .collect();
            if fresh.is_empty() {
                return;
            }
            for pid in fresh {
                if let Some(fd) = sys::pidfd_open(pid) {
                    if self.holds(pid) {
                        sys::pidfd_signal(&fd, signal);
                    }
                }
                done.push(pid);
            }
        }
    }

    /// Whether `/proc/PID/cgroup` names this cell.
    pub(crate) fn holds(&self, pid: u32) -> bool {
        let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/cgroup")) else {
            return false;
        };
        let Some(path) = s.lines().find_map(|l| l.strip_prefix("0::")) else {
            return false;
        };
        let path = path.trim_end();
        !path.is_empty() && path != "/" && self.dir.ends_with(path.trim_start_matches('/'))
    }

    /// SIGKILL to every member at once (`cgroup.kill`).
    pub(crate) fn kill(&self) {
        let _ = std::fs::write(self.dir.join("cgroup.kill"), b"1");
    }

    /// Waits until every cell of `cells` is empty or `deadline` passes;
    /// returns the indices of those still populated.
    pub(crate) fn wait_all_empty(cells: &[&Cell], deadline: Instant) -> Vec<usize> {
        let files: Vec<Option<File>> = cells
            .iter()
            // Fresh files, not the cell's own: a wait is woken by an event
            // its own file has not read yet, and another waiter's reads of
            // a shared one would take that away.
            .map(|c| c.open_events().ok())
            .collect();
        loop {
            // Read first, then poll: an event between the two is not lost,
            // because the kernel flags the file until it is read again.
            let left: Vec<usize> = files
                .iter()
                .enumerate()
                .filter(|(_, f)| f.as_ref().is_some_and(file_populated))
                .map(|(i, _)| i)
                .collect();
            let now = Instant::now();
            if left.is_empty() || now >= deadline {
                return left;
            }
            let mut polls: Vec<PollFd<'_>> = left
                .iter()
                .filter_map(|&i| files[i].as_ref())
                .map(|f| PollFd::new(f.as_fd(), PollFlags::POLLPRI))
                .collect();
            let ms = (deadline - now).as_millis().min(i32::MAX as u128) as i32;
            let _ = poll(
                &mut polls,
                PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX),
            );
        }
    }

    /// Removes the cell; fails (EBUSY) while anything is in it.
    pub(crate) fn remove(&self) -> io::Result<()> {
        mounts::remove(&self.dir)
    }
}

fn file_populated(f: &File) -> bool {
    let mut buf = [0u8; 256];
    match f.read_at(&mut buf, 0) {
        Ok(n) => is_populated(&String::from_utf8_lossy(&buf[..n])),
        Err(_) => false,
    }
}

fn is_populated(events: &str) -> bool {
    events.lines().any(|l| l.trim() == "populated 1")
}

#[cfg(test)]
mod birth_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn populated_is_read_from_the_events_file() {
        assert!(is_populated("populated 1\nfrozen 0\n"));
        assert!(!is_populated("populated 0\nfrozen 0\n"));
    }
}
