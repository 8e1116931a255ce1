//! The reaper: one thread per process that collects the exits of the
//! processes we started (contract §2).
//!
//! **Entry point:** [`init`], which starts the thread once and returns it;
//! a start goes through [`Reaper::spawn`], so no exit is missed.
//!
//! Each child we start is handed over with a pidfd of it (`pidfd_open(2)`),
//! registered in one `epoll(7)` set. A pidfd becomes readable when its
//! process exits, so the thread learns *which* child ended and reaps that
//! one alone with `wait4(pid, WNOHANG)` (which also says what it used): an exit costs the same with one
//! live command or a thousand. Never `waitpid(-1)`, nor a `waitid(P_ALL)`
//! peek — the kernel answers that by walking every child of the process,
//! which made each exit cost in proportion to the live commands — and the
//! host's other children are never ours to reap (a host that spawns a
//! `std::process::Child` must still get its real exit status).
//!
//! A child whose pidfd cannot be had (no descriptor left, a kernel before
//! 5.3) is swept instead at every SIGCHLD, received through signal-hook's
//! self-pipe, which is in the same epoll set. SIGCHLD is unblocked on the
//! thread, so a host that blocks it everywhere still has those reaped.
//!
//! A host that set SIGCHLD to SIG_IGN keeps it: no handler is installed
//! (one would turn the host's own children into zombies). The kernel then
//! reaps such children itself, so their statuses are lost ([`Exit::Lost`]),
//! though the pidfd still tells when they end.
//!
//! A process that is PID 1 of its namespace (a container's entry point) or
//! a child subreaper inherits every orphan of its descendants, and only it
//! can reap them. With [`reap_orphans`] on, each SIGCHLD also reaps every
//! ended child this reaper does not own: for a process that starts no
//! children of its own beside the tools (`bashtools-mcp` turns it on when
//! it is PID 1), since a host's own `std::process::Child` would lose its
//! status to it.
//!
//! The owned set is also the guard against signalling a recycled pid: a pid
//! is signalled only under the same lock, while it is still in the set. A pid
//! leaves the set in the same critical section in which it is reaped, and an
//! unreaped child (even a zombie) keeps its pid, so no other process can hold
//! it while we might signal it.

use std::collections::HashMap;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

use nix::errno::Errno;
use nix::libc;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use parking_lot::Mutex;
use signal_hook::consts::SIGCHLD;

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

/// What `wait4(2)` says a reaped child used: its own and that of the
/// children it waited for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Rusage {
    /// User plus system time.
    pub cpu: std::time::Duration,
    /// The largest resident set, in bytes.
    pub max_rss: u64,
}

/// Called once, on the reaper thread, when the pid has been reaped. It must
/// be quick: it runs before the next exit is collected.
pub(crate) type ExitHook = Box<dyn FnOnce(Exit, Rusage) + Send>;

/// Called on the reaper thread each time a watched descriptor is readable
/// (level-triggered: it must read what made it so). It must be quick.
pub(crate) type WatchHook = Box<dyn FnMut() + Send>;

/// Tokens of watched descriptors start here, above every pid.
const WATCH_BASE: u64 = 1 << 40;

pub(crate) struct Reaper {
    /// The children we started and have not reaped yet, each with its
    /// hook and its pidfd (`None`: swept at SIGCHLD instead).
    owned: Mutex<HashMap<i32, Owned>>,
    /// The epoll set of the pidfds (and of the SIGCHLD pipe).
    epoll: Epoll,
    /// How many owned children have no pidfd: while any has, the thread
    /// also sweeps every second (a count, so an exit never walks the set).
    unpolled: AtomicUsize,
    /// Descriptors watched for others (an OOM event of a cgroup v1), by
    /// token; a hook is taken out while it runs.
    watches: Mutex<HashMap<u64, (OwnedFd, Option<WatchHook>)>>,
    next_watch: std::sync::atomic::AtomicU64,
}

struct Owned {
    hook: ExitHook,
    pidfd: Option<OwnedFd>,
}

/// Whether ended children we do not own are reaped too ([`reap_orphans`]).
static ORPHANS: AtomicBool = AtomicBool::new(false);

/// From now on, every ended child of this process that the tools did not
/// start is reaped at the next SIGCHLD (and once now). Fails when the
/// reaper cannot start, or when SIGCHLD is ignored (the kernel reaps them
/// then).
pub(crate) fn reap_orphans() -> io::Result<()> {
    let reaper = init()?;
    ORPHANS.store(true, Ordering::Relaxed);
    reaper.reap(&[], true);
    Ok(())
}

/// The epoll datum of the SIGCHLD pipe (pids are positive).
const SIGCHLD_TOKEN: u64 = u64::MAX;

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
    let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)
        .map_err(|e| fail("cannot make the reaper's epoll set", e.into()))?;
    // The handler is registered here, before any child can exist, so no
    // SIGCHLD of ours is ever missed; none where the host ignores SIGCHLD.
    let pipe = if host_ignores_sigchld() {
        None
    } else {
        let (read, write) =
            UnixStream::pair().map_err(|e| fail("cannot make the reaper's SIGCHLD pipe", e))?;
        read.set_nonblocking(true)
            .map_err(|e| fail("cannot make the reaper's SIGCHLD pipe", e))?;
        signal_hook::low_level::pipe::register(SIGCHLD, write)
            .map_err(|e| fail("cannot install the SIGCHLD handler", e))?;
        epoll
            .add(&read, EpollEvent::new(EpollFlags::EPOLLIN, SIGCHLD_TOKEN))
            .map_err(|e| fail("cannot watch the reaper's SIGCHLD pipe", e.into()))?;
        Some(read)
    };
    std::thread::Builder::new()
        .name("bashtools-reaper".into())
        .spawn(move || reap_forever(pipe))
        .map_err(|e| fail("cannot start the reaper thread", e))?;
    Ok(Reaper {
        owned: Mutex::new(HashMap::new()),
        epoll,
        unpolled: AtomicUsize::new(0),
        watches: Mutex::new(HashMap::new()),
        next_watch: std::sync::atomic::AtomicU64::new(WATCH_BASE),
    })
}

fn reap_forever(pipe: Option<UnixStream>) {
    // A host that blocked SIGCHLD in every thread before first use made
    // this thread with it blocked too: unblocked here, this thread is the
    // one the kernel delivers it to, and no other thread's mask changes.
    let mut chld = nix::sys::signal::SigSet::empty();
    chld.add(Signal::SIGCHLD);
    let _ = chld.thread_unblock();
    // The Reaper is stored once this thread's creator returns.
    let reaper = loop {
        if let Some(r) = get() {
            break r;
        }
        std::thread::yield_now();
    };
    let mut events = [EpollEvent::empty(); 64];
    loop {
        // Children without a pidfd are also swept every second: the host
        // may have put a SIGCHLD handler of its own in place of ours.
        let timeout = if reaper.unpolled.load(Ordering::Relaxed) > 0 {
            EpollTimeout::from(1000u16)
        } else {
            EpollTimeout::NONE
        };
        let n = match reaper.epoll.wait(&mut events, timeout) {
            Ok(n) => n,
            // EINTR: a signal handled on this thread (SIGCHLD itself).
            Err(_) => continue,
        };
        let mut pids = Vec::with_capacity(n);
        let mut sweep = n == 0;
        for event in &events[..n] {
            match event.data() {
                SIGCHLD_TOKEN => sweep = true,
                token if token >= WATCH_BASE => reaper.run_watch(token),
                pid => pids.push(pid as i32),
            }
        }
        if sweep {
            if let Some(pipe) = &pipe {
                let mut buf = [0u8; 64];
                while matches!((&*pipe).read(&mut buf), Ok(n) if n > 0) {}
            }
        }
        reaper.reap(&pids, sweep);
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
        // A pidfd that cannot be had, or watched, leaves the child to the
        // sweep at SIGCHLD (where the host ignores SIGCHLD, the kernel may
        // even have reaped it already: its exit is then told at once).
        let pidfd = pidfd_of(pid).filter(|fd| {
            self.epoll
                .add(fd, EpollEvent::new(EpollFlags::EPOLLIN, pid as u64))
                .is_ok()
        });
        // Without a pidfd, the child may be gone already — the usual
        // reason the pidfd failed: a host's `waitpid(-1)` or its own
        // SIGCHLD handler reaped it in the moment since the clone, or the
        // kernel did, where SIGCHLD is ignored. No SIGCHLD of ours would
        // ever tell of it: its end is told at once.
        if pidfd.is_none() {
            if let Some((exit, usage)) = try_reap(pid as i32) {
                drop(owned);
                hook(exit, usage);
                return Ok(pid);
            }
        }
        if pidfd.is_none() {
            self.unpolled.fetch_add(1, Ordering::Relaxed);
        }
        owned.insert(pid as i32, Owned { hook, pidfd });
        Ok(pid)
    }

    /// Sends `signal` to the process group led by `pid` if that leader has
    /// not been reaped yet. Returns whether the leader was still ours.
    pub(crate) fn signal_group(&self, pid: u32, signal: Signal) -> bool {
        let owned = self.owned.lock();
        if !owned.contains_key(&(pid as i32)) {
            return false;
        }
        crate::os::sys::killpg_checked(pid, signal);
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

    /// Reaps the children `pids` (their pidfds said they ended) and, with
    /// `sweep` (a SIGCHLD), every owned child without a pidfd that has
    /// ended; runs the hooks outside the lock, so a hook may call back
    /// into the reaper (to signal, or to spawn).
    fn reap(&self, pids: &[i32], sweep: bool) {
        let mut ended: Vec<(ExitHook, Exit, Rusage)> = Vec::new();
        {
            let mut owned = self.owned.lock();
            let unpolled: Vec<i32> = if sweep {
                owned
                    .iter()
                    .filter(|(_, o)| o.pidfd.is_none())
                    .map(|(&pid, _)| pid)
                    .collect()
            } else {
                Vec::new()
            };
            let orphans = if sweep && ORPHANS.load(Ordering::Relaxed) {
                ended_children()
                    .into_iter()
                    .filter(|pid| !owned.contains_key(pid))
                    .collect()
            } else {
                Vec::new()
            };
            for &pid in &orphans {
                // Not ours: reaped and forgotten. Under the lock, so a
                // child being started now is in the set before it is seen.
                let _ = try_reap(pid);
            }
            for &pid in pids.iter().chain(&unpolled) {
                // A readable pidfd whose child cannot be reaped was reaped
                // by someone else (a host's `waitpid(-1)`): Lost.
                let Some((exit, usage)) = try_reap(pid) else {
                    continue;
                };
                if let Some(o) = owned.remove(&pid) {
                    if o.pidfd.is_none() {
                        self.unpolled.fetch_sub(1, Ordering::Relaxed);
                    }
                    if let Some(fd) = &o.pidfd {
                        let _ = self.epoll.delete(fd);
                    }
                    ended.push((o.hook, exit, usage));
                }
            }
        }
        for (hook, exit, usage) in ended {
            hook(exit, usage);
        }
    }

    /// Runs `hook` on this thread whenever `fd` is readable, until
    /// [`unwatch`](Self::unwatch) with the returned token (which closes
    /// `fd`).
    pub(crate) fn watch(&self, fd: OwnedFd, hook: WatchHook) -> io::Result<u64> {
        let token = self.next_watch.fetch_add(1, Ordering::Relaxed);
        let mut watches = self.watches.lock();
        self.epoll
            .add(&fd, EpollEvent::new(EpollFlags::EPOLLIN, token))
            .map_err(io::Error::from)?;
        watches.insert(token, (fd, Some(hook)));
        Ok(token)
    }

    /// Stops watching `token`'s descriptor and closes it. A hook running
    /// now runs to its end.
    pub(crate) fn unwatch(&self, token: u64) {
        if let Some((fd, _)) = self.watches.lock().remove(&token) {
            let _ = self.epoll.delete(&fd);
        }
    }

    fn run_watch(&self, token: u64) {
        // Out of the map while it runs, so the hook may take other locks
        // (and an unwatch meanwhile simply drops it after).
        let Some(mut hook) = self.watches.lock().get_mut(&token).and_then(|w| w.1.take()) else {
            return;
        };
        hook();
        if let Some(w) = self.watches.lock().get_mut(&token) {
            w.1 = Some(hook);
        }
    }
}

/// The children of this process that have ended and wait to be reaped
/// (zombies whose parent is us), from one scan of `/proc/*/stat`.
fn ended_children() -> Vec<i32> {
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            // "pid (comm) state ppid …": comm may hold anything but ends at
            // the last ')'.
            let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
                return false;
            };
            let mut fields = rest.split_whitespace();
            fields.next() == Some("Z") && fields.next().and_then(|p| p.parse().ok()) == Some(me)
        })
        .collect()
}

/// One `wait4(pid, WNOHANG)`: the exit and what it used, if the pid has
/// ended and is now reaped.
fn try_reap(pid: i32) -> Option<(Exit, Rusage)> {
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value of the plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are to locals of the right types.
    let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
    if r < 0 {
        return match Errno::last() {
            // Not our child any more: somebody called waitpid(-1).
            Errno::ECHILD => Some((Exit::Lost, Rusage::default())),
            // EINTR and the like: the next SIGCHLD sweeps again.
            _ => None,
        };
    }
    // 0: still running; stopped and continued are not asked for.
    let exit = if r == 0 {
        return None;
    } else if libc::WIFEXITED(status) {
        Exit::Code(libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        Exit::Signal(libc::WTERMSIG(status))
    } else {
        return None;
    };
    let time = |t: libc::timeval| {
        std::time::Duration::new(t.tv_sec.max(0) as u64, (t.tv_usec.max(0) as u32) * 1000)
    };
    let usage = Rusage {
        cpu: time(ru.ru_utime) + time(ru.ru_stime),
        max_rss: (ru.ru_maxrss.max(0) as u64) * 1024,
    };
    Some((exit, usage))
}

/// A pidfd of `pid`, or `None` (in the tests: also when they ask for the
/// sweep at SIGCHLD).
fn pidfd_of(pid: u32) -> Option<OwnedFd> {
    #[cfg(test)]
    if tests::NO_PIDFD.load(std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    crate::os::sys::pidfd_open(pid)
}

#[cfg(test)]
mod tests;
