//! The shared-memory child (x86_64): `clone3(2)` with `CLONE_VM |
//! CLONE_VFORK` on a stack of its own, as `posix_spawn(3)` does it, plus
//! `CLONE_INTO_CGROUP` (Linux 5.7) when the command has a cell.
//!
//! Nothing of the host is copied, and the parent thread sleeps until the
//! child has exec'd or failed. The child starts on its new stack at the
//! instruction after the system call, so the call is made in assembly that
//! jumps straight to [`entry`]: no code of the parent's frame ever runs on
//! the child's stack. Every signal is blocked around the clone, so no
//! handler of the host runs in the child on the host's memory; the child
//! resets every disposition before it unblocks them.
//!
//! Why `CLONE_INTO_CGROUP` rather than a move afterwards: a write to
//! `cgroup.procs` takes the kernel's cgroup threadgroup lock for writing,
//! which waits for an RCU grace period — measured at 20 ms and more per
//! command on a loaded machine, while the whole `bash -c true` takes 2 ms.

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};

use nix::libc;

use super::child::{self, Report};
use super::staging::{self, Staging};
use super::{ChildSetup, Refused};
use crate::os::sys::{reap_failed, SignalsBlocked};

/// `CLONE_INTO_CGROUP` from `<linux/sched.h>`.
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// `struct clone_args` of `<linux/sched.h>`, version 2 (with `cgroup`).
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

/// The child's stack. The setup needs a few KiB; the rest is margin.
const CHILD_STACK: usize = 64 * 1024;

/// What the child is handed: the parent's memory, read in place.
struct Shared<'a, 'b> {
    setup: &'a ChildSetup<'b>,
    failure: AtomicU64,
    /// The staging descriptors, when the child shares the host's table.
    staging: Option<&'a Staging>,
}

/// Starts the child; `Refused::Clone3` when the kernel refuses the clone
/// itself (the caller then forks).
pub(super) fn launch(setup: &ChildSetup<'_>) -> Result<u32, Refused> {
    // Shared descriptor table and staging descriptors where they could be
    // had (see `staging.rs`); held until the child has exec'd.
    let staging = staging::take();
    let shared = Shared {
        setup,
        failure: AtomicU64::new(0),
        staging: staging.as_ref().map(|(s, _)| *s),
    };
    // u128 keeps the top of the stack 16-byte aligned, as the ABI wants.
    let mut stack = vec![0u128; CHILD_STACK / 16];
    let mut args = CloneArgs {
        flags: libc::CLONE_VM as u64 | libc::CLONE_VFORK as u64,
        exit_signal: libc::SIGCHLD as u64,
        stack: stack.as_mut_ptr() as u64,
        stack_size: (stack.len() * 16) as u64,
        ..CloneArgs::default()
    };
    if shared.staging.is_some() {
        args.flags |= libc::CLONE_FILES as u64;
    }
    if let Some(dir) = setup.cgroup {
        args.flags |= CLONE_INTO_CGROUP;
        args.cgroup = dir.as_raw_fd() as u64;
    }
    let blocked = SignalsBlocked::new();
    let ret: i64;
    // SAFETY: clone3 with CLONE_VM | CLONE_VFORK: the child starts on
    // `stack` (top 16-byte aligned) with the parent's registers, so r12
    // still holds `&shared`; it calls `entry`, which never returns, with no
    // use of the parent's stack. The parent is resumed by the kernel once
    // the child has exec'd or exited; until then `shared` and `stack` stay
    // alive, since this frame cannot go on. syscall clobbers rcx and r11.
    unsafe {
        std::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            "xor ebp, ebp",
            "mov rdi, r12",
            "call {entry}",
            "ud2",
            "2:",
            entry = sym entry,
            inlateout("rax") libc::SYS_clone3 => ret,
            in("rdi") &args as *const CloneArgs,
            in("rsi") std::mem::size_of::<CloneArgs>(),
            in("r12") &shared as *const Shared<'_, '_>,
            lateout("rcx") _,
            lateout("r11") _,
        );
    }
    drop(blocked);
    drop(stack);
    if let Some((staging, guard)) = staging {
        staging.reset();
        drop(guard);
    }
    if ret < 0 {
        return Err(Refused::Clone3(-ret as i32));
    }
    match shared.failure.load(Ordering::Acquire) {
        0 => Ok(ret as u32),
        packed => {
            reap_failed(ret as libc::pid_t);
            Err(Refused::Failed(Report::unpack(packed)))
        }
    }
}

/// The child's first frame, on its own stack.
extern "C" fn entry(shared: *const Shared<'_, '_>) -> ! {
    // SAFETY: the parent keeps `shared` alive and still until we exec or
    // exit (CLONE_VFORK).
    let shared = unsafe { &*shared };
    let staging = shared.staging.map(|s| &s.fds[..]);
    child::run(shared.setup, false, Report(&shared.failure), staging)
}
