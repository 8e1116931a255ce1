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
//! On x86_64 the child shares the host's memory until it execs
//! (`CLONE_VM | CLONE_VFORK` on a stack of its own, as `posix_spawn(3)`
//! does), so nothing is copied; elsewhere it is a fork, which copies the
//! host's page tables: a cost that grows with the host's memory. Either
//! way the child may only make async-signal-safe calls until it execs:
//! everything it needs (paths, argument and environment arrays) is built
//! before the clone, and it allocates nothing. An exec failure is
//! reported through memory the parent shares, or, forked, a close-on-exec
//! pipe (its errno; EOF means the exec succeeded).

use std::ffi::CStr;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicI32, Ordering};

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
    /// A terminal's slave to open as stdin (read and write, after
    /// `setsid`, so it becomes the controlling terminal); `stdin` is then
    /// not used.
    pub terminal: Option<&'a CStr>,
    /// Without a terminal: the descriptor stdin is a copy of; `None`:
    /// `/dev/null`.
    pub stdin: Option<i32>,
    /// `(from, to)` descriptor moves, in order, after stdin is set.
    pub moves: &'a [(i32, i32)],
}

/// Starts `child` in a new session inside the cgroup open at `cgroup`;
/// returns its pid. `Err` with ENOSYS, EINVAL or E2BIG when the kernel
/// cannot (the caller falls back).
pub(crate) fn spawn_into(child: &Child<'_>, cgroup: &File) -> io::Result<u32> {
    #[cfg(target_arch = "x86_64")]
    {
        spawn_shared(child, cgroup)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        spawn_forked(child, cgroup)
    }
}

/// How a child that cannot exec says why.
#[derive(Clone, Copy)]
enum Report<'a> {
    /// The write end of a close-on-exec pipe (a forked child).
    Pipe(i32),
    /// A slot in memory the parent shares (a `CLONE_VM` child).
    Slot(&'a AtomicI32),
}

/// The forked spawn: portable, but the child gets a copy of the host's page
/// tables, which costs in proportion to the host's memory.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn spawn_forked(child: &Child<'_>, cgroup: &File) -> io::Result<u32> {
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
        exec_child(child, Report::Pipe(write_end.as_raw_fd()));
    }
    drop(write_end);
    let mut errno = [0u8; 4];
    let mut pipe = File::from(read_end);
    match pipe.read(&mut errno) {
        // EOF: the exec succeeded and closed the pipe.
        Ok(0) => Ok(pid as u32),
        Ok(_) => Err(reap_failed(pid as i32, i32::from_ne_bytes(errno))),
        Err(e) => Err(e),
    }
}

/// The child has exited (127) after reporting `errno`: the reaper owns its
/// pid only once we return it, so it is reaped here.
fn reap_failed(pid: i32, errno: i32) -> io::Error {
    let mut status = 0;
    // SAFETY: waits for our own child, just made.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    io::Error::from_raw_os_error(errno)
}

/// The child's stack in the shared spawn. `exec_child` needs well under
/// a page; the rest is margin.
const CHILD_STACK: usize = 64 * 1024;

/// What the shared child is handed: the parent's memory, read in place.
struct Shared<'a, 'b> {
    child: &'a Child<'b>,
    errno: AtomicI32,
}

/// The shared spawn, as `posix_spawn(3)` does it: `CLONE_VM | CLONE_VFORK`
/// with a stack of its own, so nothing is copied and the parent thread
/// sleeps until the child has exec'd or failed. The child runs on that
/// stack from the instruction after the system call, so the call is made
/// in assembly that jumps straight to [`shared_child`]: no code of the
/// parent's frame ever runs on the child's stack.
///
/// Every signal is blocked around the clone: a handler of the host run by
/// the child would run on the host's memory. The child sets every handler
/// to the default before it unblocks them.
#[cfg(target_arch = "x86_64")]
fn spawn_shared(child: &Child<'_>, cgroup: &File) -> io::Result<u32> {
    let shared = Shared {
        child,
        errno: AtomicI32::new(0),
    };
    // u128 keeps the top of the stack 16-byte aligned, as the ABI wants.
    let mut stack = vec![0u128; CHILD_STACK / 16];
    let args = CloneArgs {
        flags: libc::CLONE_VM as u64 | libc::CLONE_VFORK as u64 | CLONE_INTO_CGROUP,
        exit_signal: libc::SIGCHLD as u64,
        stack: stack.as_mut_ptr() as u64,
        stack_size: (stack.len() * 16) as u64,
        cgroup: cgroup.as_raw_fd() as u64,
        ..CloneArgs::default()
    };
    let all = full_mask();
    let mut old = [0u64; 1];
    // SAFETY: the raw call (glibc's would keep two signals unblocked);
    // both masks are 8 bytes, the size the kernel is told.
    unsafe {
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            all.as_ptr(),
            old.as_mut_ptr(),
            8usize,
        )
    };
    let ret: i64;
    // SAFETY: clone3 with CLONE_VM | CLONE_VFORK: the child starts on
    // `stack` (top 16-byte aligned) with the parent's registers, so r12
    // still holds `&shared`; it calls `shared_child`, which never returns,
    // with no use of the parent's stack. The parent is resumed by the
    // kernel once the child has exec'd or exited; until then `shared` and
    // `stack` stay alive, since this frame cannot go on. syscall clobbers
    // rcx and r11.
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
            entry = sym shared_child,
            inlateout("rax") libc::SYS_clone3 => ret,
            in("rdi") &args as *const CloneArgs,
            in("rsi") std::mem::size_of::<CloneArgs>(),
            in("r12") &shared as *const Shared<'_, '_>,
            lateout("rcx") _,
            lateout("r11") _,
        );
    }
    // SAFETY: as above; restores the mask this thread had.
    unsafe {
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            old.as_ptr(),
            std::ptr::null_mut::<u64>(),
            8usize,
        )
    };
    drop(stack);
    if ret < 0 {
        return Err(io::Error::from_raw_os_error(-ret as i32));
    }
    match shared.errno.load(Ordering::Acquire) {
        0 => Ok(ret as u32),
        errno => Err(reap_failed(ret as i32, errno)),
    }
}

/// The shared child's first frame, on its own stack.
#[cfg(target_arch = "x86_64")]
extern "C" fn shared_child(shared: *const Shared<'_, '_>) -> ! {
    // SAFETY: the parent keeps `shared` alive and still until we exec or
    // exit (CLONE_VFORK).
    let shared = unsafe { &*shared };
    exec_child(shared.child, Report::Slot(&shared.errno))
}

/// Every signal, as the kernel's 64-bit mask.
fn full_mask() -> [u64; 1] {
    [u64::MAX]
}

/// In the child: session, stdio, directory, signals, exec. Never returns.
fn exec_child(child: &Child<'_>, report: Report<'_>) -> ! {
    let fail = |report: Report<'_>| -> ! {
        let errno = io::Error::last_os_error().raw_os_error().unwrap_or(0);
        match report {
            Report::Pipe(fd) => {
                let bytes = errno.to_ne_bytes();
                // SAFETY: write is async-signal-safe; nothing is freed.
                unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
            }
            // 0 would read as success: an errno is never 0 here.
            Report::Slot(slot) => slot.store(errno.max(1), Ordering::Release),
        }
        // SAFETY: _exit is async-signal-safe; it ends only this child.
        unsafe { libc::_exit(127) }
    };
    // SAFETY (each block below): raw system calls on descriptors and
    // NUL-terminated strings the parent prepared; no allocation, no lock.
    if unsafe { libc::setsid() } < 0 {
        fail(report);
    }
    // A terminal is opened read-write after setsid, without O_NOCTTY: it
    // becomes the controlling terminal.
    let terminal = child
        .terminal
        .map(|tty| unsafe { libc::open(tty.as_ptr(), libc::O_RDWR) });
    match (terminal, child.stdin) {
        (Some(fd), _) if fd < 0 => fail(report),
        (Some(0), _) => {}
        (Some(fd), _) => {
            if unsafe { libc::dup2(fd, 0) } < 0 {
                fail(report);
            }
            unsafe { libc::close(fd) };
        }
        // dup2 clears close-on-exec on the copy; a descriptor already 0
        // keeps it, so it is cleared by hand.
        (None, Some(0)) => {
            if unsafe { libc::fcntl(0, libc::F_SETFD, 0) } < 0 {
                fail(report);
            }
        }
        (None, Some(fd)) => {
            if unsafe { libc::dup2(fd, 0) } < 0 {
                fail(report);
            }
        }
        (None, None) => {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::os::cgroup::Jail;
    use std::ffi::CString;

    /// A jail and one cell open, or `None` (said on stderr) where this
    /// process may not make cgroups.
    fn cell() -> Option<(Jail, crate::os::cgroup::Cell, File)> {
        let jail = match Jail::create() {
            Ok(j) => j,
            Err(e) => {
                eprintln!("SKIP: no cgroup can be made here ({e}): clone3 is not tried");
                assert!(
                    std::env::var_os("BASHTOOLS_TEST_REQUIRE_CGROUP").is_none(),
                    "cgroups are required here"
                );
                return None;
            }
        };
        let cell = jail.cell().unwrap();
        let file = cell.open().unwrap();
        Some((jail, cell, file))
    }

    /// Runs `program` (argv `[program, "-c", script]`) through `spawn`,
    /// and returns its exit status, or the spawn's error.
    fn run(
        spawn: fn(&Child<'_>, &File) -> io::Result<u32>,
        program: &str,
        script: &str,
        cgroup: &File,
    ) -> io::Result<i32> {
        let program = CString::new(program).unwrap();
        let (c, s) = (CString::new("-c").unwrap(), CString::new(script).unwrap());
        let argv = [
            program.as_ptr() as *mut _,
            c.as_ptr() as *mut _,
            s.as_ptr() as *mut _,
            std::ptr::null_mut(),
        ];
        let envp = [std::ptr::null_mut()];
        let cwd = CString::new("/").unwrap();
        let null = File::options().write(true).open("/dev/null").unwrap();
        let moves = [(null.as_raw_fd(), 1), (null.as_raw_fd(), 2)];
        let child = Child {
            program: &program,
            argv: &argv,
            envp: &envp,
            cwd: &cwd,
            terminal: None,
            stdin: None,
            moves: &moves,
        };
        let pid = spawn(&child, cgroup)? as i32;
        let mut status = 0;
        // SAFETY: waits for the child just made (this test's own).
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        Ok(libc::WEXITSTATUS(status))
    }

    fn both_ways(check: impl Fn(fn(&Child<'_>, &File) -> io::Result<u32>, &File)) {
        let Some((jail, cell, file)) = cell() else {
            return;
        };
        check(spawn_forked, &file);
        #[cfg(target_arch = "x86_64")]
        check(spawn_shared, &file);
        drop(file);
        cell.remove().unwrap();
        jail.destroy(std::time::Instant::now() + std::time::Duration::from_secs(5));
    }

    #[test]
    fn a_child_runs_in_the_cell_in_a_session_of_its_own_with_its_exit_status() {
        both_ways(|spawn, cgroup| {
            // Session leader (sid = pid) and in a cell of the jail.
            let script = "read -r _ _ _ _ _ sid _ < /proc/self/stat; \
                          [ \"$sid\" = $$ ] || exit 10; \
                          grep -q '/run-' /proc/self/cgroup || exit 11; exit 7";
            assert_eq!(run(spawn, "/bin/sh", script, cgroup).unwrap(), 7);
        });
    }

    #[test]
    fn an_exec_failure_is_reported_with_its_errno() {
        both_ways(|spawn, cgroup| {
            let e = run(spawn, "/nonexistent/bashtools-no-such", "", cgroup).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::ENOENT), "{e}");
        });
    }
}
