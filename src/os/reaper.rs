//! The reaper: one thread per process that collects the exits of the
//! process-group leaders we started (contract §2).
//!
//! It waits for SIGCHLD through signal-hook's self-pipe (unblocked on its
//! own thread, so a host that blocks SIGCHLD everywhere still has its
//! commands reaped), then calls
//! `waitpid(2)` with `WNOHANG` for each pid it owns — never `waitpid(-1)`,
//! because the host's other children are not ours to reap (a host that
//! spawns a `std::process::Child` must still get its real exit status).
//!
//! A host that set SIGCHLD to SIG_IGN keeps it: no handler is installed
//! (one would turn the host's own children into zombies); the thread polls
//! a pidfd per owned leader instead (`pidfd_open(2)`), and since the kernel
//! reaps such children itself, their statuses are lost ([`Exit::Lost`]) and
//! a pid may be reused once its process ends: signals to it are then only
//! as safe as `kill(2)` is.
//!
//! The owned set is also the guard against signalling a recycled pid: a pid
//! is signalled only under the same lock, while it is still in the set. A pid
//! leaves the set in the same critical section in which it is reaped, and an
//! unreaped child (even a zombie) keeps its pid, so no other process can hold
//! it while we might signal it.

use std::collections::HashMap;
use std::io;
use std::os::fd::OwnedFd;
use std::sync::OnceLock;

use nix::errno::Errno;
use nix::sys::signal::Signal;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use parking_lot::Mutex;
use signal_hook::consts::SIGCHLD;
use signal_hook::iterator::Signals;

/// How a process-group leader ended, as `waitpid(2)` told it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// It called `exit(N)`.
    Code(i32),
    /// It was killed by this signal.
    Signal(i32),
    /// Somebody else reaped it (a host calling `waitpid(-1)`): its status is
    /// lost. Reported as exit code -1.
    Lost,
}

impl Exit {
    /// The exit code a shell reports: N, or 128+S for a signal.
    pub(crate) fn code(self) -> i32 {
        match self {
            Exit::Code(c) => c,
            Exit::Signal(s) => 128 + s,
            Exit::Lost => -1,
        }
    }
}

/// Called once, on the reaper thread, when the pid has been reaped. It must
/// be quick: it runs before the next exit is collected.
pub(crate) type ExitHook = Box<dyn FnOnce(Exit) + Send>;

pub(crate) struct Reaper {
    /// The leaders we started and have not reaped yet.
    owned: Mutex<HashMap<i32, ExitHook>>,
    /// Where the host ignores SIGCHLD: a pidfd per owned leader, polled by
    /// the reaper thread instead of a SIGCHLD handler, and the pipe that
    /// wakes it when one is added.
    polled: Option<Polled>,
}

struct Polled {
    pidfds: Mutex<HashMap<i32, OwnedFd>>,
    wake: (OwnedFd, OwnedFd),
}

/// Whether the host has SIGCHLD set to SIG_IGN (or SA_NOCLDWAIT): the
/// kernel then reaps every child itself, and installing a handler would
/// turn the host's own children into zombies.
fn host_ignores_sigchld() -> bool {
    let mut old = std::mem::MaybeUninit::<nix::libc::sigaction>::zeroed();
    // SAFETY: a null new action only reads the current one into `old`.
    let ret =
        unsafe { nix::libc::sigaction(nix::libc::SIGCHLD, std::ptr::null(), old.as_mut_ptr()) };
    if ret != 0 {
        return false;
    }
    // SAFETY: sigaction succeeded and filled it (and it was zeroed).
    let old = unsafe { old.assume_init() };
    old.sa_sigaction == nix::libc::SIG_IGN || old.sa_flags & nix::libc::SA_NOCLDWAIT != 0
}

static REAPER: OnceLock<Result<Reaper, (io::ErrorKind, String)>> = OnceLock::new();

/// The process's one reaper, started on first use. Fails when the SIGCHLD
/// handler cannot be installed or the thread cannot start (then nothing can
/// be spawned: an exit nobody collects would hang its caller); the failure
/// is remembered and returned to every later call.
pub(crate) fn init() -> io::Result<&'static Reaper> {
    REAPER
        .get_or_init(start)
        .as_ref()
        .map_err(|(kind, msg)| io::Error::new(*kind, msg.clone()))
}

/// The reaper if it has started: nothing can be ours before that.
pub(crate) fn get() -> Option<&'static Reaper> {
    REAPER.get().and_then(|r| r.as_ref().ok())
}

fn start() -> Result<Reaper, (io::ErrorKind, String)> {
    let fail = |what: &str, e: io::Error| (e.kind(), format!("{what}: {e}"));
    if host_ignores_sigchld() {
        let wake = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
            .map_err(|e| fail("cannot make the reaper's pipe", e.into()))?;
        std::thread::Builder::new()
            .name("bashtools-reaper".into())
            .spawn(poll_forever)
            .map_err(|e| fail("cannot start the reaper thread", e))?;
        return Ok(Reaper {
            owned: Mutex::new(HashMap::new()),
            polled: Some(Polled {
                pidfds: Mutex::new(HashMap::new()),
                wake,
            }),
        });
    }
    // The handler is registered here, before any child can exist, so no
    // SIGCHLD of ours is ever missed.
    let signals =
        Signals::new([SIGCHLD]).map_err(|e| fail("cannot install the SIGCHLD handler", e))?;
    std::thread::Builder::new()
        .name("bashtools-reaper".into())
        .spawn(move || reap_forever(signals))
        .map_err(|e| fail("cannot start the reaper thread", e))?;
    Ok(Reaper {
        owned: Mutex::new(HashMap::new()),
        polled: None,
    })
}

/// The reaper where the host ignores SIGCHLD: poll every owned leader's
/// pidfd (and the wake pipe); a readable pidfd is an exit, whose status the
/// kernel has discarded (reported as [`Exit::Lost`]).
fn poll_forever() {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use std::os::fd::AsFd;
    // The Reaper is stored once this thread's creator returns.
    let reaper = loop {
        if let Some(r) = get() {
            break r;
        }
        std::thread::yield_now();
    };
    let Some(polled) = &reaper.polled else {
        return;
    };
    loop {
        let fds: Vec<(i32, OwnedFd)> = polled
            .pidfds
            .lock()
            .iter()
            .filter_map(|(&pid, fd)| Some((pid, fd.try_clone().ok()?)))
            .collect();
        let mut polls: Vec<PollFd> = vec![PollFd::new(polled.wake.0.as_fd(), PollFlags::POLLIN)];
        polls.extend(
            fds.iter()
                .map(|(_, fd)| PollFd::new(fd.as_fd(), PollFlags::POLLIN)),
        );
        if poll(&mut polls, PollTimeout::NONE).is_err() {
            continue;
        }
        let woken = polls[0].revents().is_some_and(|r| !r.is_empty());
        let ended: Vec<i32> = fds
            .iter()
            .zip(&polls[1..])
            .filter(|(_, p)| p.revents().is_some_and(|r| !r.is_empty()))
            .map(|((pid, _), _)| *pid)
            .collect();
        if woken {
            let mut buf = [0u8; 64];
            let _ = nix::unistd::read(std::os::fd::AsRawFd::as_raw_fd(&polled.wake.0), &mut buf);
        }
        let mut hooks = Vec::new();
        {
            let mut owned = reaper.owned.lock();
            for pid in ended {
                polled.pidfds.lock().remove(&pid);
                let exit = try_reap(pid).unwrap_or(Exit::Lost);
                if let Some(hook) = owned.remove(&pid) {
                    hooks.push((hook, exit));
                }
            }
        }
        for (hook, exit) in hooks {
            hook(exit);
        }
    }
}

fn reap_forever(mut signals: Signals) {
    // A host that blocked SIGCHLD in every thread before first use made
    // this thread with it blocked too: unblocked here, this thread is the
    // one the kernel delivers it to, and no other thread's mask changes.
    let mut chld = nix::sys::signal::SigSet::empty();
    chld.add(Signal::SIGCHLD);
    let _ = chld.thread_unblock();
    // `forever` yields after every SIGCHLD (several exits may share one
    // signal, so each wake-up sweeps every owned pid).
    for _ in signals.forever() {
        if let Some(reaper) = get() {
            reaper.sweep();
        }
    }
}

impl Reaper {
    /// Runs `start` (which spawns a child and returns its pid) and takes
    /// ownership of the pid. The lock is held across
    /// the fork, so the reaper cannot sweep before the pid is in the set; a
    /// SIGCHLD that arrives meanwhile is kept by the self-pipe and handled
    /// right after.
    pub(crate) fn spawn(
        &self,
        start: impl FnOnce() -> io::Result<u32>,
        hook: ExitHook,
    ) -> io::Result<u32> {
        let mut owned = self.owned.lock();
        let pid = start()?;
        owned.insert(pid as i32, hook);
        if let Some(polled) = &self.polled {
            match crate::os::group::pidfd_open(pid) {
                Some(fd) => {
                    polled.pidfds.lock().insert(pid as i32, fd);
                }
                // Ended and reaped by the kernel already: a pipe wake-up
                // is not enough, so report it on this thread's way out.
                None => {
                    if let Some(hook) = owned.remove(&(pid as i32)) {
                        drop(owned);
                        hook(Exit::Lost);
                        return Ok(pid);
                    }
                }
            }
            let _ = nix::unistd::write(&polled.wake.1, b"x");
        }
        Ok(pid)
    }

    /// Sends `signal` to the process group led by `pid` if that leader has
    /// not been reaped yet. Returns whether the leader was still ours.
    pub(crate) fn signal_group(&self, pid: u32, signal: Signal) -> bool {
        let owned = self.owned.lock();
        if !owned.contains_key(&(pid as i32)) {
            return false;
        }
        crate::os::group::killpg_checked(pid, signal);
        true
    }

    /// Sends `signal` to the leader `pid` alone (not its group) if it has
    /// not been reaped yet.
    pub(crate) fn signal_leader(&self, pid: u32, signal: Signal) -> bool {
        let owned = self.owned.lock();
        if !owned.contains_key(&(pid as i32)) {
            return false;
        }
        let _ = nix::sys::signal::kill(Pid::from_raw(pid as i32), signal);
        true
    }

    /// Collects every owned pid that has ended; runs the hooks outside the
    /// lock, so a hook may call back into the reaper (to signal, or to spawn).
    fn sweep(&self) {
        let mut ended: Vec<(ExitHook, Exit)> = Vec::new();
        {
            let mut owned = self.owned.lock();
            // Fast path: ask the kernel which child has ended, without
            // reaping it (WNOWAIT), and reap it only if it is ours. One
            // exit then costs two system calls, not one per owned pid.
            while let Some(pid) = peek_ended_child() {
                if !owned.contains_key(&pid) {
                    // The host's child: not ours to reap, and it hides any
                    // exit behind it from the peek. Fall back to asking
                    // for each of ours.
                    break;
                }
                match try_reap(pid) {
                    Some(exit) => {
                        if let Some(hook) = owned.remove(&pid) {
                            ended.push((hook, exit));
                        }
                    }
                    None => break,
                }
            }
            if peek_ended_child().is_some() {
                let pids: Vec<i32> = owned.keys().copied().collect();
                for pid in pids {
                    if let Some(exit) = try_reap(pid) {
                        if let Some(hook) = owned.remove(&pid) {
                            ended.push((hook, exit));
                        }
                    }
                }
            }
        }
        for (hook, exit) in ended {
            hook(exit);
        }
    }
}

/// The pid of some child of this process that has exited and is not reaped
/// yet, leaving it unreaped: `waitid(P_ALL, WEXITED | WNOHANG | WNOWAIT)`.
fn peek_ended_child() -> Option<i32> {
    // SAFETY: waitid fills the siginfo it is given; with WNOWAIT it changes
    // nothing, so the host's children keep their exit statuses.
    let mut info: nix::libc::siginfo_t = unsafe { std::mem::zeroed() };
    let ret = unsafe {
        nix::libc::waitid(
            nix::libc::P_ALL,
            0,
            &mut info,
            nix::libc::WEXITED | nix::libc::WNOHANG | nix::libc::WNOWAIT,
        )
    };
    if ret != 0 {
        return None;
    }
    // SAFETY: si_pid is valid for a SIGCHLD siginfo; 0 means none has ended.
    let pid = unsafe { info.si_pid() };
    (pid != 0).then_some(pid)
}

/// One `waitpid(pid, WNOHANG)`: the exit if the pid has ended and is now reaped.
fn try_reap(pid: i32) -> Option<Exit> {
    match waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG)) {
        Ok(WaitStatus::Exited(_, code)) => Some(Exit::Code(code)),
        Ok(WaitStatus::Signaled(_, sig, _)) => Some(Exit::Signal(sig as i32)),
        // Still running; stopped and continued are not asked for.
        Ok(_) => None,
        // Not our child any more: somebody called waitpid(-1).
        Err(Errno::ECHILD) => Some(Exit::Lost),
        // EINTR and the like: the next SIGCHLD sweeps again.
        Err(_) => None,
    }
}
