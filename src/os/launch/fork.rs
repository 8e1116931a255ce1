//! The forked child (`fork(2)`): the way on every architecture without a
//! shared-memory clone of ours, and wherever `clone3` is refused. It runs
//! the same setup, and joins its cgroup by writing `cgroup.procs` as its
//! first step. The cost: the fork copies the host's page tables, which
//! grows with the host's memory.
//!
//! A failed step is reported through a close-on-exec pipe: the step and
//! the errno, or EOF once the exec has succeeded.

use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use nix::libc;

use super::child::{self, Report};
use super::{reap_failed, ChildSetup, Failure, Refused, SignalsBlocked, Step};

/// The lowest number the report pipe's write end may have: above every
/// descriptor a child keeps.
const REPORT_FD_MIN: i32 = 256;

pub(super) fn launch(setup: &ChildSetup<'_>) -> Result<u32, Refused> {
    let failed = |errno: i32| {
        Refused::Failed(Failure {
            step: Step::Clone as u8,
            errno,
        })
    };
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills the two descriptors it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(failed(
            std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
        ));
    }
    // SAFETY: both were just made by pipe2 and are owned by nobody else.
    let (read_end, low_end) =
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // The child writes its report after moving descriptors into place: the
    // write end must be above every number they go to.
    // SAFETY: duplicates our descriptor; the copy is owned below.
    let high = unsafe { libc::fcntl(low_end.as_raw_fd(), libc::F_DUPFD_CLOEXEC, REPORT_FD_MIN) };
    if high < 0 {
        return Err(failed(
            std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
        ));
    }
    drop(low_end);
    // SAFETY: just made, owned by nobody else.
    let write_end = unsafe { OwnedFd::from_raw_fd(high) };
    let blocked = SignalsBlocked::new();
    // SAFETY: the child runs only `child::run`, which makes raw system
    // calls and never returns.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        child::run(setup, true, Report::Pipe(write_end.as_raw_fd()), None);
    }
    let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
    drop(blocked);
    drop(write_end);
    if pid < 0 {
        return Err(failed(errno));
    }
    let mut report = [0u8; 8];
    let mut pipe = File::from(read_end);
    let mut got = 0;
    loop {
        match pipe.read(&mut report[got..]) {
            // EOF: the exec succeeded and closed the pipe (or a report
            // was cut short, which cannot happen for 8 bytes on a pipe).
            Ok(0) => break,
            Ok(n) => {
                got += n;
                if got == report.len() {
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                // The child's state is unknown: it may have exec'd.
                let _ = e;
                break;
            }
        }
    }
    if got < report.len() {
        return Ok(pid as u32);
    }
    reap_failed(pid);
    Err(Refused::Failed(Report::from_bytes(report)))
}
