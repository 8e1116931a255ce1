//! The helpers every subsystem of `os` shares, below all of them: the
//! errno of a failed call, a thread's signal mask held blocked, reaping a
//! child of our own at once, pidfds (`pidfd_open(2)`,
//! `pidfd_send_signal(2)`), a group's signal that never hits the host's
//! own group (`killpg(2)`), this process's effective capabilities
//! (`capabilities(7)`, read from `/proc/self/status`), and its limit of
//! open files (`getrlimit(2)`), raised for the host and kept as it was for
//! the commands.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::OnceLock;

use nix::libc;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::{getpgrp, Pid};

/// The errno of the last failed call of this thread.
pub(crate) fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Reaps a child that reported a failure (it exits at once): the reaper
/// owns a pid only once its start returns, so nobody else will.
pub(crate) fn reap_failed(pid: libc::pid_t) {
    let mut status = 0;
    // SAFETY: waits for our own child, just made; retried on EINTR.
    while unsafe { libc::waitpid(pid, &mut status, libc::__WALL) } < 0
        && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
}

/// Blocks every signal on the calling thread until dropped (then restores
/// its mask): a handler of the host must not run in a child that shares
/// its memory, or before the child has reset it. The raw call, since
/// glibc's keeps two signals of its own unblocked.
pub(crate) struct SignalsBlocked {
    old: [u64; 1],
}

impl SignalsBlocked {
    pub(crate) fn new() -> SignalsBlocked {
        let all = [u64::MAX];
        let mut old = [0u64; 1];
        // SAFETY: both masks are 8 bytes, the size the kernel is told.
        unsafe {
            libc::syscall(
                libc::SYS_rt_sigprocmask,
                libc::SIG_SETMASK,
                all.as_ptr(),
                old.as_mut_ptr(),
                8usize,
            )
        };
        SignalsBlocked { old }
    }
}

impl Drop for SignalsBlocked {
    fn drop(&mut self) {
        // SAFETY: as in `new`; restores the mask this thread had.
        unsafe {
            libc::syscall(
                libc::SYS_rt_sigprocmask,
                libc::SIG_SETMASK,
                self.old.as_ptr(),
                std::ptr::null_mut::<u64>(),
                8usize,
            )
        };
    }
}

/// A pidfd for `pid` (Linux 5.3+): readable once the process has exited.
pub(crate) fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    // SAFETY: a plain syscall with integer arguments; a non-negative return
    // is a new descriptor that we own.
    let fd = unsafe { nix::libc::syscall(nix::libc::SYS_pidfd_open, pid as i32, 0) };
    if fd < 0 {
        return None;
    }
    // SAFETY: `fd` was just returned by the kernel and is owned by no one else.
    Some(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// `pidfd_send_signal(2)`: the process the descriptor was opened for, or
/// nobody (ESRCH) if it has ended since.
pub(crate) fn pidfd_signal(fd: &OwnedFd, signal: Signal) {
    use std::os::fd::AsRawFd;
    // SAFETY: a plain syscall on a descriptor we own; a null siginfo asks
    // for the same as kill(2).
    unsafe {
        nix::libc::syscall(
            nix::libc::SYS_pidfd_send_signal,
            fd.as_raw_fd(),
            signal as i32,
            std::ptr::null::<nix::libc::siginfo_t>(),
            0,
        );
    }
}

/// Sends `signal` to group `pgid`, unless that is the host's own group.
/// Errors (ESRCH: nobody left) are nothing to act on.
pub(crate) fn killpg_checked(pgid: u32, signal: Signal) {
    if pgid == 0 || Pid::from_raw(pgid as i32) == getpgrp() {
        return;
    }
    let _ = killpg(Pid::from_raw(pgid as i32), signal);
}

/// `CAP_SYS_ADMIN`.
pub(crate) const CAP_SYS_ADMIN: u32 = 21;

/// Whether this process has capability `cap` in its effective set
/// (`CapEff` of `/proc/self/status`).
pub(crate) fn has_effective(cap: u32) -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|set| set & (1 << cap) != 0)
}

/// The soft limit of open files this process had before
/// [`raise_descriptor_limit`] raised it: what every command gets back.
static COMMANDS_NOFILE: OnceLock<libc::rlimit> = OnceLock::new();

/// Raises this process's soft limit of open files to its hard limit, once;
/// the commands started after it get the soft limit as it was
/// ([`commands_nofile`]). Returns the soft limit now in force.
pub(crate) fn raise_descriptor_limit() -> io::Result<u64> {
    let mut now = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: fills a struct of ours.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut now) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if now.rlim_cur >= now.rlim_max {
        return Ok(now.rlim_cur);
    }
    COMMANDS_NOFILE.get_or_init(|| now);
    let raised = libc::rlimit {
        rlim_cur: now.rlim_max,
        rlim_max: now.rlim_max,
    };
    // SAFETY: reads a struct of ours.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(raised.rlim_cur)
}

/// The limit of open files a command gets: the one this process had before
/// it raised its own; `None` if it never did (the command inherits ours).
pub(crate) fn commands_nofile() -> Option<libc::rlimit> {
    COMMANDS_NOFILE.get().copied()
}
