//! The one launcher: every program this crate runs — each command and the
//! keeper — is described by one [`ChildSetup`] and set up by one function
//! that runs **in the child**, between the clone and `execve(2)`. (The one
//! other process of ours, the sandbox view's helper, runs no program: see
//! `os::sandbox`'s `view.rs` for why it is a plain fork.)
//!
//! **Entry point:** [`launch`], with a [`ChildSetup`] and a [`Via`].
//!
//! A [`ChildSetup`] says everything the new process needs: the program,
//! its argument and environment arrays, its directory, its standard
//! streams (files, `/dev/null`, or a terminal it opens as its controlling
//! terminal), the descriptors of ours it keeps (at fixed numbers), a new
//! session, the cgroup to be born in and whether it gets a cgroup namespace
//! of its own, and the [`Restrictions`] of a sandbox. Everything is built
//! in the parent: the child only makes system calls, in this order
//! (`child.rs`), and each step that fails is reported to the caller as a
//! [`LaunchError`] naming the step and the errno, never as a silent exit:
//!
//! 1. the cgroup (forked children only: `clone3` is born in it), then the
//!    cgroup v1 directories of a hybrid host's budget (`0` written to each
//!    one's `cgroup.procs`, which the parent opened),
//! 2. `setsid(2)`, then `unshare(CLONE_NEWCGROUP)` rooted at its cell,
//!    then, under a sandbox, `setns(2)` into its read-only view of the
//!    filesystem (`os::sandbox`),
//! 3. the descriptors: stdio and ours moved into place, every other
//!    descriptor close-on-exec (`close_range(2)`), so nothing the host
//!    opened without `O_CLOEXEC` reaches a command,
//! 4. `chdir(2)`, then the limit of open files as the host had it before it
//!    raised its own (`setrlimit(2)`),
//! 5. every signal disposition back to the default,
//! 6. the restrictions: `no_new_privs`, the capabilities dropped (bounding
//!    and ambient sets too), the seccomp filter, `landlock_restrict_self`,
//! 7. an empty signal mask, then `execve(2)`.
//!
//! Restrictions are applied by the child to itself, so **no thread of the
//! host is ever restricted**, and each command is a Landlock domain of its
//! own: it cannot signal, trace or open the descriptors of the host, nor of
//! another command.
//!
//! Two ways run it (see [`Via`]): on x86_64 a `clone3(2)` child that shares
//! the host's memory until it execs (`clone3.rs`: `CLONE_VM | CLONE_VFORK`
//! on a stack of its own, like `posix_spawn(3)`, so starting a command costs
//! the same from a small host and from one with gigabytes of heap, and
//! `CLONE_INTO_CGROUP` puts it in its cell at birth; it shares the host's
//! descriptor table too, and keeps only what it needs of it, so a host with
//! thousands of open files starts commands as fast: `staging.rs`);
//! everywhere else, and
//! where `clone3` is refused (ENOSYS, or EPERM from a container's seccomp
//! profile), a fork (`fork.rs`: `clone(2)` with `CLONE_VFORK` but not
//! `CLONE_VM`, so it needs no descriptor to report through) that runs the
//! same setup and joins its cell by writing `cgroup.procs`. `BASHTOOLS_LAUNCH=fork`, read when a
//! `BashTools` is built, forces the fork, so the whole test suite runs
//! through it too. `posix_spawn(3)` is not used: it cannot put a child in a
//! cgroup, restrict it or close the host's descriptors, and measured no
//! faster than the shared clone (BENCHMARKS.md, "The launcher").

mod child;
#[cfg(target_arch = "x86_64")]
mod clone3;
mod error;
mod fork;
mod staging;

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

use nix::libc;

use crate::os::sandbox::Restrictions;
use error::Failure;
pub(crate) use error::{not_found, LaunchError, Step};

/// The variable that forces the fork (`BASHTOOLS_LAUNCH=fork`), read when a
/// `BashTools` is built.
pub(crate) const VIA_VAR: &str = "BASHTOOLS_LAUNCH";

/// How the child is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    /// `clone3` sharing the host's memory where this crate has the code for
    /// it (x86_64) and the kernel allows it; the fork otherwise.
    Clone3,
    /// Always `fork(2)`.
    Fork,
}

impl Via {
    /// The way asked for by [`VIA_VAR`], else the fastest.
    pub(crate) fn from_env() -> Via {
        match std::env::var_os(VIA_VAR) {
            Some(v) if v == "fork" => Via::Fork,
            _ => Via::Clone3,
        }
    }
}

/// Where a standard input comes from.
#[derive(Clone, Copy)]
pub(crate) enum Input<'a> {
    /// `/dev/null`.
    Null,
    /// A copy of this descriptor.
    Fd(BorrowedFd<'a>),
    /// A terminal, opened read-write after `setsid` and without
    /// `O_NOCTTY`, so it becomes the controlling terminal.
    Terminal(&'a CStr),
}

/// Where a standard output (or error) goes.
#[derive(Clone, Copy)]
pub(crate) enum Output<'a> {
    /// `/dev/null`.
    Null,
    /// A copy of this descriptor.
    Fd(BorrowedFd<'a>),
    /// A copy of stdin (its terminal).
    Stdin,
}

/// The most descriptors a child keeps beside its stdio.
const MAX_KEPT: usize = 4;

/// The most cgroup v1 directories a child joins (memory, pids, cpu).
const MAX_V1: usize = 3;

/// Everything a new process needs, built by the parent; see the module doc
/// for the order the child applies it in.
pub(crate) struct ChildSetup<'a> {
    program: CString,
    argv: CArray,
    envp: CArray,
    cwd: CString,
    stdin: Input<'a>,
    stdout: Output<'a>,
    stderr: Output<'a>,
    /// Descriptors of ours the child keeps, and the numbers they get (3 or
    /// more, each at most once).
    kept: [(RawFd, RawFd); MAX_KEPT],
    kept_len: usize,
    session: bool,
    cgroup: Option<BorrowedFd<'a>>,
    /// `cgroup.procs` of cgroup v1 directories joined after the (v2) cgroup.
    v1: [RawFd; MAX_V1],
    v1_len: usize,
    cgroup_namespace: bool,
    restrictions: Option<&'a Restrictions>,
    /// The Landlock ruleset the child restricts itself to.
    ruleset: Option<BorrowedFd<'a>>,
    /// The limit of open files the child sets back, when the host raised
    /// its own (`sys::raise_descriptor_limit`).
    nofile: Option<libc::rlimit>,
}

/// Strings and the NULL-terminated array of pointers to them that
/// `execve(2)` takes.
struct CArray {
    _strings: Vec<CString>,
    pointers: Vec<*const libc::c_char>,
}

impl CArray {
    fn new(strings: Vec<CString>) -> CArray {
        let pointers = strings
            .iter()
            .map(|s| s.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect();
        CArray {
            _strings: strings,
            pointers,
        }
    }
}

impl<'a> ChildSetup<'a> {
    /// `program` run with `argv` and exactly the environment `envp`
    /// (`NAME=VALUE` strings) in `cwd`; stdin `/dev/null`, stdout and
    /// stderr `/dev/null`, no new session, nothing else kept.
    pub(crate) fn new(
        program: CString,
        argv: Vec<CString>,
        envp: Vec<CString>,
        cwd: CString,
    ) -> ChildSetup<'a> {
        ChildSetup {
            program,
            argv: CArray::new(argv),
            envp: CArray::new(envp),
            cwd,
            stdin: Input::Null,
            stdout: Output::Null,
            stderr: Output::Null,
            kept: [(-1, -1); MAX_KEPT],
            kept_len: 0,
            session: false,
            cgroup: None,
            v1: [-1; MAX_V1],
            v1_len: 0,
            cgroup_namespace: false,
            restrictions: None,
            ruleset: None,
            nofile: crate::os::sys::commands_nofile(),
        }
    }

    /// The standard streams.
    pub(crate) fn stdio(
        mut self,
        stdin: Input<'a>,
        stdout: Output<'a>,
        stderr: Output<'a>,
    ) -> Self {
        self.stdin = stdin;
        self.stdout = stdout;
        self.stderr = stderr;
        self
    }

    /// Keeps `fd` open in the child as descriptor `at` (3 to 255).
    ///
    /// # Panics
    /// Past [`MAX_KEPT`] descriptors, or out of that range: a bug of ours.
    pub(crate) fn keep(mut self, fd: BorrowedFd<'a>, at: RawFd) -> Self {
        assert!(
            (3..256).contains(&at) && self.kept_len < MAX_KEPT,
            "a kept descriptor"
        );
        self.kept[self.kept_len] = (fd.as_raw_fd(), at);
        self.kept_len += 1;
        self
    }

    /// A new session (and process group) led by the child, with no
    /// controlling terminal unless stdin is a [`Input::Terminal`].
    pub(crate) fn new_session(mut self) -> Self {
        self.session = true;
        self
    }

    /// Born in the cgroup open at `dir`; with `namespace`, in a cgroup
    /// namespace rooted there, so that it cannot move itself out.
    pub(crate) fn cgroup(mut self, dir: BorrowedFd<'a>, namespace: bool) -> Self {
        self.cgroup = Some(dir);
        self.cgroup_namespace = namespace;
        self
    }

    /// Also joins the cgroup v1 directory whose `cgroup.procs` is open (for
    /// writing) at `procs` (a budget on a hybrid host: v1 cannot be born
    /// into).
    ///
    /// # Panics
    /// Past [`MAX_V1`] directories: a bug of ours.
    pub(crate) fn join_v1(mut self, procs: BorrowedFd<'a>) -> Self {
        assert!(self.v1_len < MAX_V1, "a v1 cgroup");
        self.v1[self.v1_len] = procs.as_raw_fd();
        self.v1_len += 1;
        self
    }

    /// A sandbox's restrictions, and the command's Landlock ruleset (none
    /// where the kernel has no Landlock).
    pub(crate) fn restrict(
        mut self,
        restrictions: Option<&'a Restrictions>,
        ruleset: Option<BorrowedFd<'a>>,
    ) -> Self {
        self.restrictions = restrictions;
        self.ruleset = ruleset.filter(|_| restrictions.is_some());
        self
    }

    fn kept(&self) -> &[(RawFd, RawFd)] {
        &self.kept[..self.kept_len]
    }
}

/// Set once `clone3` was refused (ENOSYS, EPERM): every later child is
/// forked without trying it again.
static CLONE3_REFUSED: AtomicBool = AtomicBool::new(false);

/// Starts the process `setup` describes, `via` the way asked for; returns
/// its pid once it has exec'd. A step that failed is an [`io::Error`]
/// holding a [`LaunchError`]; the failed child has been reaped.
pub(crate) fn launch(setup: &ChildSetup<'_>, via: Via) -> io::Result<u32> {
    #[cfg(target_arch = "x86_64")]
    if via == Via::Clone3 && !CLONE3_REFUSED.load(Ordering::Relaxed) {
        match clone3::launch(setup) {
            Err(Refused::Clone3(errno)) => {
                // No clone3 here, or not with CLONE_INTO_CGROUP: fork from
                // now on (a kernel without it does not grow it).
                if errno == libc::ENOSYS || errno == libc::EPERM {
                    CLONE3_REFUSED.store(true, Ordering::Relaxed);
                }
            }
            other => return finish(other, setup),
        }
    }
    let _ = via;
    finish(fork::launch(setup), setup)
}

/// Why a way could not start a child.
enum Refused {
    /// `clone3` itself failed with this errno: the fork may still work.
    Clone3(i32),
    /// The child was made and failed at a step (and was reaped), or the
    /// fork failed.
    Failed(Failure),
}

fn finish(outcome: Result<u32, Refused>, setup: &ChildSetup<'_>) -> io::Result<u32> {
    match outcome {
        Ok(pid) => Ok(pid),
        Err(Refused::Failed(f)) => {
            Err(LaunchError::new(Step::from_u8(f.step), f.errno, setup).into_io())
        }
        Err(Refused::Clone3(errno)) => Err(LaunchError::new(Step::Clone, errno, setup).into_io()),
    }
}

#[cfg(test)]
pub(crate) mod tests;
