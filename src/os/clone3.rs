//! Starting a command directly inside its cgroup: `clone3(2)` with
//! `CLONE_INTO_CGROUP` (Linux 5.7+), then in the child the same work as the
//! spawn's file actions and attributes, then `execve(2)`.
//!
//! Why not move the command afterwards: a write to `cgroup.procs` takes the
//! kernel's cgroup threadgroup lock for writing, which waits for an RCU
//! grace period — measured at 20 ms and more per command on a loaded
//! machine, while the whole `bash -c true` takes 2 ms. A child created in
//! its cgroup takes that lock for reading only.
//!
//! The price: without `CLONE_VM` this is a fork, which copies the host's
//! page tables (see `spawn.rs` on why the session mode uses
//! `posix_spawn(3)`). The child of a multi-threaded host may only make
//! async-signal-safe calls until it execs: everything it needs (paths,
//! argument and environment arrays) is built before the clone, and it
//! allocates nothing. An exec failure is reported through a close-on-exec
//! pipe (its errno; EOF means the exec succeeded).

use std::ffi::CStr;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use nix::libc;

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

/// The kernel's `struct sigaction` (not glibc's): SIG_DFL, no flags, an
/// empty mask.
#[repr(C)]
#[derive(Default)]
struct KernelSigaction {
    handler: usize,
    flags: u64,
    restorer: usize,
    mask: u64,
}

/// What the child does before exec, prepared by the parent.
pub(crate) struct Child<'a> {
    pub program: &'a CStr,
    /// NULL-terminated.
    pub argv: &'a [*mut libc::c_char],
    /// NULL-terminated.
    pub envp: &'a [*mut libc::c_char],
    pub cwd: &'a CStr,
    /// The descriptor stdin is a copy of; `None`: `/dev/null`.
    pub stdin: Option<i32>,
    /// `(from, to)` descriptor moves, in order, after stdin is set.
    pub moves: &'a [(i32, i32)],
}

/// Starts `child` in a new session inside the cgroup open at `cgroup`;
/// returns its pid. `Err` with ENOSYS, EINVAL or E2BIG when the kernel
/// cannot (the caller falls back).
pub(crate) fn spawn_into(child: &Child<'_>, cgroup: &File) -> io::Result<u32> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills the two descriptors it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both were just made by pipe2 and are owned by nobody else.
    let (read_end, write_end) =
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let args = CloneArgs {
        flags: CLONE_INTO_CGROUP,
        exit_signal: libc::SIGCHLD as u64,
        cgroup: cgroup.as_raw_fd() as u64,
        ..CloneArgs::default()
    };
    // SAFETY: a fork-like clone (no CLONE_VM): the child gets a copy of the
    // address space and runs only `exec_child`, which makes raw system
    // calls and never returns.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone3,
            &args as *const CloneArgs,
            std::mem::size_of::<CloneArgs>(),
        )
    };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        exec_child(child, write_end.as_raw_fd());
    }
    drop(write_end);
    let mut errno = [0u8; 4];
    let mut pipe = File::from(read_end);
    match pipe.read(&mut errno) {
        // EOF: the exec succeeded and closed the pipe.
        Ok(0) => Ok(pid as u32),
        Ok(_) => {
            // The child has exited (127) after reporting: the reaper
            // owns its pid only once we return it, so reap it here.
            let mut status = 0;
            // SAFETY: waits for our own child, just made.
            unsafe { libc::waitpid(pid as i32, &mut status, 0) };
            Err(io::Error::from_raw_os_error(i32::from_ne_bytes(errno)))
        }
        Err(e) => Err(e),
    }
}

/// In the child: session, stdio, directory, signals, exec. Never returns.
fn exec_child(child: &Child<'_>, report: i32) -> ! {
    let fail = |report: i32| -> ! {
        let errno = io::Error::last_os_error().raw_os_error().unwrap_or(0);
        let bytes = errno.to_ne_bytes();
        // SAFETY: write and _exit are async-signal-safe; nothing is freed.
        unsafe {
            libc::write(report, bytes.as_ptr().cast(), bytes.len());
            libc::_exit(127)
        }
    };
    // SAFETY (each block below): raw system calls on descriptors and
    // NUL-terminated strings the parent prepared; no allocation, no lock.
    if unsafe { libc::setsid() } < 0 {
        fail(report);
    }
    match child.stdin {
        // dup2 clears close-on-exec on the copy; a descriptor already 0
        // keeps it, so it is cleared by hand.
        Some(0) => {
            if unsafe { libc::fcntl(0, libc::F_SETFD, 0) } < 0 {
                fail(report);
            }
        }
        Some(fd) => {
            if unsafe { libc::dup2(fd, 0) } < 0 {
                fail(report);
            }
        }
        None => {
            let null = unsafe { libc::open(c_str(b"/dev/null\0"), libc::O_RDONLY) };
            if null < 0 {
                fail(report);
            }
            if null != 0 {
                if unsafe { libc::dup2(null, 0) } < 0 {
                    fail(report);
                }
                unsafe { libc::close(null) };
            }
        }
    }
    for &(from, to) in child.moves {
        let ok = if from == to {
            // dup2 onto itself keeps close-on-exec: clear it instead.
            (unsafe { libc::fcntl(from, libc::F_SETFD, 0) }) >= 0
        } else {
            (unsafe { libc::dup2(from, to) }) >= 0
        };
        if !ok {
            fail(report);
        }
    }
    if unsafe { libc::chdir(child.cwd.as_ptr()) } < 0 {
        fail(report);
    }
    // The raw call: glibc's signal() refuses its own signals (32 and 33),
    // and an ignored one would stay ignored across exec.
    let default = KernelSigaction::default();
    for signo in 1..=64usize {
        if signo != libc::SIGKILL as usize && signo != libc::SIGSTOP as usize {
            unsafe {
                libc::syscall(
                    libc::SYS_rt_sigaction,
                    signo,
                    &default as *const KernelSigaction,
                    std::ptr::null::<KernelSigaction>(),
                    8usize,
                )
            };
        }
    }
    // The raw call: glibc's sigprocmask would keep its own signals blocked.
    let empty = [0u64; 1];
    unsafe {
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            empty.as_ptr(),
            std::ptr::null::<u64>(),
            8usize,
        )
    };
    unsafe {
        libc::execve(
            child.program.as_ptr(),
            child.argv.as_ptr().cast(),
            child.envp.as_ptr().cast(),
        )
    };
    fail(report)
}

fn c_str(bytes: &'static [u8]) -> *const libc::c_char {
    bytes.as_ptr().cast()
}
