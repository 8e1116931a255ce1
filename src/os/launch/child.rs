//! The child's side of the launcher: the setup steps, run between the clone
//! and `execve(2)`, in the order of the module doc of `launch`.
//!
//! The child may share the host's memory (`clone3.rs`) or be a fork of a
//! multithreaded host (`fork.rs`): either way it may only make
//! async-signal-safe calls. Everything here is a raw system call on values
//! the parent prepared; nothing allocates, locks or unwinds. The few
//! arrays it needs live on its stack.

use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};

use nix::libc;

use super::{ChildSetup, Failure, Input, Output, Step, MAX_KEPT};
use crate::os::sys::errno;

/// How a child that cannot exec says why: a slot in memory the parent
/// shares (all of it for a `CLONE_VM` child, one page for a forked one),
/// the step in the high half, the errno in the low one; 0 until a
/// failure. The parent reads it once the child has exec'd or exited
/// (`CLONE_VFORK`).
#[derive(Clone, Copy)]
pub(super) struct Report<'a>(pub(super) &'a AtomicU64);

impl Report<'_> {
    /// Packs a failure for the slot (never 0: steps start at 1).
    pub(super) fn pack(f: Failure) -> u64 {
        (u64::from(f.step) << 32) | u64::from(f.errno as u32)
    }

    pub(super) fn unpack(v: u64) -> Failure {
        Failure {
            step: (v >> 32) as u8,
            errno: v as u32 as i32,
        }
    }
}

/// Reports `step` with `errno` and ends the child with 127.
fn fail(report: Report<'_>, step: Step, errno: i32) -> ! {
    let f = Failure {
        step: step as u8,
        // 0 would read as success through the slot.
        errno: if errno == 0 { libc::EIO } else { errno },
    };
    let Report(slot) = report;
    slot.store(Report::pack(f), Ordering::Release);
    // SAFETY: _exit is async-signal-safe; it ends only this child.
    unsafe { libc::_exit(127) }
}

/// `Err(errno)` when a call returned a negative value.
fn check(ret: libc::c_long) -> Result<libc::c_long, i32> {
    if ret < 0 {
        Err(errno())
    } else {
        Ok(ret)
    }
}

/// Runs every step of `setup` and execs; never returns. `join_cgroup`:
/// the child was not born in its cgroup and moves itself there first.
/// `staging`: the child shares the host's descriptor table, and these are
/// the descriptors it may use to keep what it needs (`staging.rs`).
pub(super) fn run(
    setup: &ChildSetup<'_>,
    join_cgroup: bool,
    report: Report<'_>,
    staging: Option<&[RawFd]>,
) -> ! {
    let step = |step: Step, r: Result<(), i32>| {
        if let Err(e) = r {
            fail(report, step, e)
        }
    };
    if join_cgroup {
        if let Some(dir) = setup.cgroup {
            step(Step::Cgroup, join(dir.as_raw_fd()));
        }
    }
    for &procs in &setup.v1[..setup.v1_len] {
        // Before the cgroup namespace, which is then rooted at these too.
        // SAFETY: a one-byte buffer of ours, on a descriptor the parent
        // keeps open until we exec.
        let written = check(unsafe { libc::write(procs, b"0".as_ptr().cast(), 1) } as libc::c_long);
        step(Step::Cgroup, written.map(drop));
    }
    if setup.session {
        // SAFETY: a system call without pointers.
        step(
            Step::Session,
            check(unsafe { libc::setsid() }.into()).map(drop),
        );
    }
    if setup.cgroup.is_some() && setup.cgroup_namespace {
        // After the join: the namespace is rooted at the cell the child is
        // in when it unshares.
        // SAFETY: a system call without pointers.
        let r = check(unsafe { libc::unshare(libc::CLONE_NEWCGROUP) }.into());
        step(Step::CgroupNamespace, r.map(drop));
    }
    if let Some(r) = setup.restrictions {
        if let Err((s, e)) = r.enter_view() {
            fail(report, s.into(), e);
        }
    }
    let ruleset = match descriptors(setup, staging) {
        Ok(ruleset) => ruleset,
        Err((s, e)) => fail(report, s, e),
    };
    // SAFETY: a NUL-terminated path the parent prepared.
    let r = check(unsafe { libc::chdir(setup.cwd.as_ptr()) }.into());
    step(Step::Directory, r.map(drop));
    if let Some(nofile) = &setup.nofile {
        // Lowering the soft limit is always allowed.
        // SAFETY: reads a struct the parent prepared.
        let r = check(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, nofile) }.into());
        step(Step::Limits, r.map(drop));
    }
    default_dispositions();
    if let Some(r) = setup.restrictions {
        if let Err((s, e)) = r.apply(ruleset) {
            fail(report, s.into(), e);
        }
    }
    empty_mask();
    // SAFETY: NUL-terminated strings and NULL-terminated arrays the parent
    // keeps alive until we exec or exit.
    unsafe {
        libc::execve(
            setup.program.as_ptr(),
            setup.argv.pointers.as_ptr(),
            setup.envp.pointers.as_ptr(),
        )
    };
    fail(report, Step::Exec, errno())
}

/// Writes `0` (this process) to `cgroup.procs` of the cgroup open at `dir`.
fn join(dir: RawFd) -> Result<(), i32> {
    // SAFETY: a NUL-terminated name; the descriptor is closed below.
    let fd = check(
        unsafe {
            libc::openat(
                dir,
                c"cgroup.procs".as_ptr(),
                libc::O_WRONLY | libc::O_CLOEXEC,
            )
        }
        .into(),
    )? as RawFd;
    // SAFETY: a one-byte buffer of ours.
    let written = check(unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) } as libc::c_long);
    // SAFETY: our own descriptor.
    unsafe { libc::close(fd) };
    written.map(drop)
}

/// Opens `path` with `flags`.
fn open(path: &std::ffi::CStr, flags: libc::c_int) -> Result<RawFd, (Step, i32)> {
    // SAFETY: a NUL-terminated path.
    check(unsafe { libc::open(path.as_ptr(), flags) }.into())
        .map(|fd| fd as RawFd)
        .map_err(|e| (Step::Open, e))
}

/// Where each source descriptor the child needs ended up: itself, or a
/// staging descriptor.
struct Staged {
    from: [RawFd; STAGED],
    to: [RawFd; STAGED],
    len: usize,
}

/// Sources: stdin, stdout, stderr, the kept ones, the ruleset.
const STAGED: usize = 3 + MAX_KEPT + 1;

impl Staged {
    fn at(&self, fd: RawFd) -> RawFd {
        (0..self.len)
            .find(|&i| self.from[i] == fd)
            .map_or(fd, |i| self.to[i])
    }
}

/// A child sharing the host's table: copies every source it needs onto a
/// staging descriptor, then takes a private table of the descriptors below
/// the highest of them (the rest of the host's are never copied).
fn stage(setup: &ChildSetup<'_>, staging: &[RawFd]) -> Result<Staged, (Step, i32)> {
    let mut staged = Staged {
        from: [-1; STAGED],
        to: [-1; STAGED],
        len: 0,
    };
    let mut add = |fd: RawFd| -> Result<(), (Step, i32)> {
        if fd < 0 || staged.from[..staged.len].contains(&fd) {
            return Ok(());
        }
        let to = staging[staged.len];
        // SAFETY: descriptors of ours; the copy is close-on-exec, so a host
        // thread forking meanwhile passes it to no program.
        check(unsafe { libc::dup3(fd, to, libc::O_CLOEXEC) }.into())
            .map_err(|e| (Step::Descriptors, e))?;
        staged.from[staged.len] = fd;
        staged.to[staged.len] = to;
        staged.len += 1;
        Ok(())
    };
    if let Input::Fd(fd) = setup.stdin {
        add(fd.as_raw_fd())?;
    }
    for out in [setup.stdout, setup.stderr] {
        if let Output::Fd(fd) = out {
            add(fd.as_raw_fd())?;
        }
    }
    for &(fd, _) in setup.kept() {
        add(fd)?;
    }
    if let Some(fd) = setup.ruleset.map(|fd| fd.as_raw_fd()) {
        add(fd)?;
    }
    let top = staging.iter().copied().max().unwrap_or(2);
    // SAFETY: no pointers. From here on the table is the child's own.
    let r = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            (top + 1) as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_UNSHARE,
        )
    };
    if r != 0 {
        // A kernel before 5.9: a private copy of the whole table.
        // SAFETY: no pointers.
        check(unsafe { libc::unshare(libc::CLONE_FILES) }.into())
            .map_err(|e| (Step::Descriptors, e))?;
    }
    Ok(staged)
}

/// Stdio and the kept descriptors into place, every other one
/// close-on-exec. Returns where the Landlock ruleset now is.
fn descriptors(
    setup: &ChildSetup<'_>,
    staging: Option<&[RawFd]>,
) -> Result<Option<RawFd>, (Step, i32)> {
    let staged = match staging {
        Some(staging) => stage(setup, staging)?,
        None => Staged {
            from: [-1; STAGED],
            to: [-1; STAGED],
            len: 0,
        },
    };
    let (mut moves, n) = plan(setup, &staged)?;
    let moves = &mut moves[..n];
    let above = moves.iter().map(|m| m.1).max().unwrap_or(2) + 1;
    unshadow(moves, above)?;
    // The ruleset is no move's source, but must not be a move's target.
    let mut ruleset = setup.ruleset.map(|fd| staged.at(fd.as_raw_fd()));
    if let Some(fd) = ruleset.filter(|&fd| moves.iter().any(|m| m.1 == fd)) {
        ruleset = Some(dup_above(fd, above)?);
    }
    for &(src, dst) in moves.iter() {
        let r = if src == dst {
            // dup2 onto itself keeps close-on-exec: clear it instead.
            // SAFETY: a descriptor of ours; no pointers.
            unsafe { libc::fcntl(src, libc::F_SETFD, 0) }
        } else {
            // SAFETY: descriptors of ours; no pointers.
            unsafe { libc::dup2(src, dst) }
        };
        check(r.into()).map_err(|e| (Step::Descriptors, e))?;
    }
    cloexec_all_but_kept(setup).map(|()| ruleset)
}

/// (source, target) of every descriptor the program gets: stdio, then the
/// kept ones; the first `n` of the array.
type Moves = [(RawFd, RawFd); 3 + MAX_KEPT];

/// The moves `setup` asks for, with the sources where staging put them;
/// opens `/dev/null` or the terminal where asked.
fn plan(setup: &ChildSetup<'_>, staged: &Staged) -> Result<(Moves, usize), (Step, i32)> {
    let src = |fd: RawFd| staged.at(fd);
    let mut moves: Moves = [(-1, -1); 3 + MAX_KEPT];
    let stdin = match setup.stdin {
        Input::Null => open(c"/dev/null", libc::O_RDONLY | libc::O_CLOEXEC)?,
        Input::Fd(fd) => src(fd.as_raw_fd()),
        // Read-write, after setsid, without O_NOCTTY: it becomes the
        // controlling terminal.
        Input::Terminal(tty) => open(tty, libc::O_RDWR | libc::O_CLOEXEC)?,
    };
    let mut null_out = -1;
    let mut output = |o: Output<'_>| -> Result<RawFd, (Step, i32)> {
        Ok(match o {
            Output::Stdin => stdin,
            Output::Fd(fd) => src(fd.as_raw_fd()),
            Output::Null => {
                if null_out < 0 {
                    null_out = open(c"/dev/null", libc::O_WRONLY | libc::O_CLOEXEC)?;
                }
                null_out
            }
        })
    };
    moves[0] = (stdin, 0);
    moves[1] = (output(setup.stdout)?, 1);
    moves[2] = (output(setup.stderr)?, 2);
    let n = 3 + setup.kept().len();
    for (m, &(fd, at)) in moves[3..n].iter_mut().zip(setup.kept()) {
        *m = (src(fd), at);
    }
    Ok((moves, n))
}

/// A source that is another move's target would be overwritten before it
/// is copied: each such source is moved to `above` or higher first.
fn unshadow(moves: &mut [(RawFd, RawFd)], above: RawFd) -> Result<(), (Step, i32)> {
    for i in 0..moves.len() {
        let src = moves[i].0;
        if moves.iter().enumerate().any(|(j, m)| j != i && m.1 == src) {
            let copy = dup_above(src, above)?;
            for m in moves.iter_mut() {
                if m.0 == src {
                    m.0 = copy;
                }
            }
        }
    }
    Ok(())
}

/// A close-on-exec copy of `fd` at `above` or higher.
fn dup_above(fd: RawFd, above: RawFd) -> Result<RawFd, (Step, i32)> {
    // SAFETY: duplicates a descriptor of ours; no pointers.
    check(unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, above) }.into())
        .map(|copy| copy as RawFd)
        .map_err(|e| (Step::Descriptors, e))
}

/// Every descriptor from 3 up, but the kept ones, closes at exec.
fn cloexec_all_but_kept(setup: &ChildSetup<'_>) -> Result<(), (Step, i32)> {
    let mut kept = [0 as RawFd; MAX_KEPT];
    let kept = &mut kept[..setup.kept().len()];
    for (k, &(_, at)) in kept.iter_mut().zip(setup.kept()) {
        *k = at;
    }
    kept.sort_unstable();
    let mut from = 3;
    for &at in kept.iter() {
        if at > from {
            cloexec_range(from, at - 1)?;
        }
        from = at + 1;
    }
    cloexec_range(from, RawFd::MAX)
}

/// Marks descriptors `lo..=hi` close-on-exec: `close_range(2)` with
/// `CLOSE_RANGE_CLOEXEC` (Linux 5.11), else one `fcntl` each up to the
/// descriptor limit. Marked rather than closed, so a
/// Landlock ruleset stays usable until the exec.
fn cloexec_range(lo: RawFd, hi: RawFd) -> Result<(), (Step, i32)> {
    // SAFETY: a system call without pointers.
    let r = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            lo as libc::c_uint,
            hi as libc::c_uint,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if r == 0 {
        return Ok(());
    }
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: fills the struct on our stack.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err((Step::Descriptors, errno()));
    }
    let top = (limit.rlim_cur.min(1 << 20) as RawFd).min(hi.saturating_add(1));
    for fd in lo..top {
        // SAFETY: no pointers; EBADF for descriptors not open is expected.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    Ok(())
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

/// Every signal's disposition back to the default. The raw call: glibc's
/// `signal()` refuses its own signals (32 and 33), and an ignored signal
/// would stay ignored across exec.
fn default_dispositions() {
    let default = KernelSigaction::default();
    for signo in 1..=64usize {
        if signo != libc::SIGKILL as usize && signo != libc::SIGSTOP as usize {
            // SAFETY: installs no handler; the struct is on our stack.
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
}

/// An empty signal mask (the raw call: glibc's keeps its own signals
/// blocked).
fn empty_mask() {
    let empty = [0u64; 1];
    // SAFETY: an 8-byte mask, the size the kernel is told.
    unsafe {
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            empty.as_ptr(),
            std::ptr::null::<u64>(),
            8usize,
        )
    };
}
