//! The forked child: the way on every architecture without a shared-memory
//! clone of ours, and wherever `clone3` is refused. It runs the same setup,
//! and joins its cgroup by writing `cgroup.procs` as its first step. The
//! cost: the fork copies the host's page tables, which grows with the
//! host's memory.
//!
//! The fork is `clone(2)` with `CLONE_VFORK` and without `CLONE_VM`: a
//! copy of the host, like `fork(2)`, whose parent thread sleeps until the
//! child has exec'd or exited. So the child reports a failed step through
//! one page of memory shared with the parent (`MAP_SHARED`), read once the
//! parent wakes: the launch takes no descriptor of the host's, and starts
//! a command even when the host's descriptor table is full.
//!
//! The raw system call's arguments: flags first everywhere but on s390x,
//! which takes the new stack first; both are zero here but the flags, and
//! the child goes on with a copy of the parent's stack, as after `fork`.

use std::sync::atomic::{AtomicU64, Ordering};

use nix::libc;

use super::child::{self, Report};
use super::{ChildSetup, Failure, Refused, Step};
use crate::os::sys::{errno, reap_failed, SignalsBlocked};

/// One page of anonymous memory that a forked child shares with us.
struct SharedSlot(*mut libc::c_void);

impl SharedSlot {
    fn new() -> Result<SharedSlot, i32> {
        // SAFETY: a fresh anonymous mapping; no pointer of ours is passed.
        let page = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                std::mem::size_of::<AtomicU64>(),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if page == libc::MAP_FAILED {
            return Err(errno());
        }
        Ok(SharedSlot(page))
    }

    fn slot(&self) -> &AtomicU64 {
        // SAFETY: the mapping is page-aligned, zero-filled (a valid 0) and
        // lives as long as `self`.
        unsafe { &*self.0.cast::<AtomicU64>() }
    }
}

impl Drop for SharedSlot {
    fn drop(&mut self) {
        // SAFETY: our own mapping, no longer referenced.
        unsafe { libc::munmap(self.0, std::mem::size_of::<AtomicU64>()) };
    }
}

pub(super) fn launch(setup: &ChildSetup<'_>) -> Result<u32, Refused> {
    let failed = |errno: i32| {
        Refused::Failed(Failure {
            step: Step::Clone as u8,
            errno,
        })
    };
    let shared = SharedSlot::new().map_err(failed)?;
    let flags = (libc::CLONE_VFORK | libc::SIGCHLD) as libc::c_ulong;
    let blocked = SignalsBlocked::new();
    // SAFETY: a fork (no CLONE_VM): the child has a copy of our memory and
    // runs only `child::run`, which makes raw system calls and never
    // returns. CLONE_VFORK keeps this thread asleep until the child has
    // exec'd or exited.
    #[cfg(not(target_arch = "s390x"))]
    let pid = unsafe { libc::syscall(libc::SYS_clone, flags, 0usize, 0usize, 0usize, 0usize) };
    // SAFETY: as above; s390x takes the stack before the flags.
    #[cfg(target_arch = "s390x")]
    let pid = unsafe { libc::syscall(libc::SYS_clone, 0usize, flags, 0usize, 0usize, 0usize) };
    if pid == 0 {
        child::run(setup, true, Report(shared.slot()), None);
    }
    let clone_errno = errno();
    drop(blocked);
    if pid < 0 {
        return Err(failed(clone_errno));
    }
    let pid = pid as libc::pid_t;
    match shared.slot().load(Ordering::Acquire) {
        0 => Ok(pid as u32),
        packed => {
            reap_failed(pid);
            Err(Refused::Failed(Report::unpack(packed)))
        }
    }
}
