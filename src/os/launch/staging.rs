//! Staging descriptors: how a shared-memory child keeps what it needs of
//! the host's descriptor table without copying the rest.
//!
//! A child made without `CLONE_FILES` gets a copy of the host's whole
//! descriptor table at the clone, and its exec then closes every entry
//! again: about 0.7 µs per descriptor the host holds, so a host with a
//! thousand open files (or a thousand live commands, each holding its
//! output file, its cell's events and a pidfd) paid some 2 ms per command.
//!
//! Instead the child shares the host's table (`CLONE_FILES`), copies the
//! few descriptors it needs onto a fixed set of low-numbered descriptors
//! held for the purpose (each a `/dev/null` until then, close-on-exec),
//! and takes a private table of only the descriptors below the highest of
//! them (`close_range(2)` with `CLOSE_RANGE_UNSHARE`, Linux 5.9). The
//! parent, resumed once the child has exec'd, points them back at
//! `/dev/null`, so no file stays open for longer than the launch. One
//! launch at a time uses them (a lock); another host thread that forks
//! meanwhile only inherits close-on-exec copies.

use std::os::fd::RawFd;
use std::sync::{Mutex, MutexGuard, OnceLock};

use nix::libc;

/// How many: stdin, stdout, stderr, every kept descriptor, the Landlock
/// ruleset.
pub(super) const COUNT: usize = 3 + super::MAX_KEPT + 1;

/// The descriptors, and one more `/dev/null` to point them back at.
pub(super) struct Staging {
    pub(super) fds: [RawFd; COUNT],
    null: RawFd,
}

static STAGING: OnceLock<Option<Staging>> = OnceLock::new();
static IN_USE: Mutex<()> = Mutex::new(());

/// The staging descriptors, held until the guard is dropped; `None` where
/// they could not be opened (the child then copies the whole table).
pub(super) fn take() -> Option<(&'static Staging, MutexGuard<'static, ()>)> {
    let staging = STAGING.get_or_init(open).as_ref()?;
    let guard = IN_USE.lock().unwrap_or_else(|e| e.into_inner());
    Some((staging, guard))
}

fn open() -> Option<Staging> {
    let null = || {
        // SAFETY: a NUL-terminated path; the descriptor is kept for good.
        let fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        (fd >= 0).then_some(fd)
    };
    let mut fds = [0; COUNT];
    for fd in &mut fds {
        *fd = null()?;
    }
    Some(Staging { fds, null: null()? })
}

impl Staging {
    /// In the parent, after the launch: every staging descriptor back to
    /// `/dev/null`, letting go of what the child put there.
    pub(super) fn reset(&self) {
        for &fd in &self.fds {
            // SAFETY: our own descriptors; no pointers.
            unsafe { libc::dup3(self.null, fd, libc::O_CLOEXEC) };
        }
    }
}
