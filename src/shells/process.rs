//! The seam between the supervisor and the operating system: what it takes
//! to start a command, signal what it started, and know when that is gone.
//!
//! [`RealProcess`] is the kernel (the `os` layer). [`FakeProcess`] (tests
//! only) is a process whose exit the test decides, so the supervisor's state
//! machine — timeout → background, TERM → grace → KILL, one end notice when
//! stop and exit race, `stop_all` — is checked without timing luck.

use std::collections::HashSet;
use std::io;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::time::Instant;

use nix::sys::signal::Signal;

use crate::config::Config;
use crate::os::reaper::{reaper, ExitHook};
use crate::os::{group, spawn};

/// Starts commands and reaches what they started.
pub(crate) trait Process: Send + Sync + 'static {
    /// Starts `spec`; returns the leader's pid (also its process group id),
    /// and with `want_pidfd` a pidfd of it, opened while the pid cannot have
    /// been reaped (and so recycled). `on_exit` runs once, on another
    /// thread, when the leader is reaped.
    fn spawn(
        &self,
        spec: spawn::SpawnSpec<'_>,
        want_pidfd: bool,
        on_exit: ExitHook,
    ) -> io::Result<(u32, Option<OwnedFd>)>;
    /// Sends `signal` to everything the command led by `pid` started, and
    /// to nothing else.
    fn signal(&self, pid: u32, signal: Signal);
    /// Waits until nothing is left of the commands led by `pids`, or the
    /// deadline (`None`: none). Returns those with something left.
    fn wait_gone(&self, pids: &HashSet<u32>, deadline: Option<Instant>) -> HashSet<u32>;
    /// Of the commands led by `pids`, whose leaders have been reaped, those
    /// that still have processes running.
    fn lingering(&self, pids: &HashSet<u32>) -> HashSet<u32>;
}

/// The kernel: `posix_spawn`, the reaper, process groups.
pub(crate) struct RealProcess {
    pub config: Arc<Config>,
}

impl Process for RealProcess {
    fn spawn(
        &self,
        spec: spawn::SpawnSpec<'_>,
        want_pidfd: bool,
        on_exit: ExitHook,
    ) -> io::Result<(u32, Option<OwnedFd>)> {
        let launch = spawn::prepare(spec, &self.config)?;
        let mut pidfd = None;
        // Inside the reaper's lock: the pid cannot be reaped before its
        // pidfd is open.
        let pid = reaper().spawn(
            || {
                let pid = launch.spawn()?;
                if want_pidfd {
                    pidfd = group::pidfd_open(pid);
                }
                Ok(pid)
            },
            on_exit,
        )?;
        Ok((pid, pidfd))
    }

    /// Through the reaper while the leader is unreaped (a pid we own cannot
    /// have been recycled); after that only if `/proc` still shows live
    /// members of the group, which keep its number from being reused
    /// (Linux frees a pid number only when no process uses it as a pid,
    /// group or session id).
    fn signal(&self, pid: u32, signal: Signal) {
        if reaper().signal_group(pid, signal) {
            return;
        }
        let one: HashSet<u32> = [pid].into();
        if !group::live_members(&one).is_empty() {
            group::killpg_checked(pid, signal);
        }
    }

    fn wait_gone(&self, pids: &HashSet<u32>, deadline: Option<Instant>) -> HashSet<u32> {
        group::wait_gone(pids, deadline)
    }

    fn lingering(&self, pids: &HashSet<u32>) -> HashSet<u32> {
        group::lingering(pids)
    }
}

#[cfg(test)]
pub(crate) use fake::{FakeProcess, OnTerm};

#[cfg(test)]
mod fake {
    use std::collections::{HashMap, HashSet};
    use std::io;
    use std::time::Instant;

    use nix::sys::signal::Signal;
    use parking_lot::{Condvar, Mutex};

    use super::Process;
    use crate::os::reaper::{Exit, ExitHook};
    use crate::os::spawn::SpawnSpec;

    /// What a fake process does on SIGTERM.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) enum OnTerm {
        /// Exits at once, killed by the signal.
        Exit,
        /// Ignores it (only SIGKILL ends it).
        Ignore,
    }

    struct Proc {
        command: String,
        hook: Option<ExitHook>,
        signals: Vec<Signal>,
        on_term: OnTerm,
    }

    #[derive(Default)]
    struct State {
        next_pid: u32,
        procs: HashMap<u32, Proc>,
        /// Whether the next spawn fails.
        fail_next: bool,
    }

    /// Processes that exit when the test says so (or on a signal).
    pub(crate) struct FakeProcess {
        state: Mutex<State>,
        changed: Condvar,
        on_term: OnTerm,
    }

    impl FakeProcess {
        pub(crate) fn new(on_term: OnTerm) -> FakeProcess {
            FakeProcess {
                state: Mutex::new(State {
                    next_pid: 1000,
                    ..State::default()
                }),
                changed: Condvar::new(),
                on_term,
            }
        }

        /// The leader `pid` exits with `exit` (its hook runs on this thread).
        /// False when it had already ended.
        pub(crate) fn exit(&self, pid: u32, exit: Exit) -> bool {
            let hook = self
                .state
                .lock()
                .procs
                .get_mut(&pid)
                .and_then(|p| p.hook.take());
            self.changed.notify_all();
            match hook {
                Some(hook) => {
                    hook(exit);
                    true
                }
                None => false,
            }
        }

        /// The signals sent to `pid` so far.
        pub(crate) fn signals(&self, pid: u32) -> Vec<Signal> {
            self.state
                .lock()
                .procs
                .get(&pid)
                .map(|p| p.signals.clone())
                .unwrap_or_default()
        }

        /// The pid of the last command started as `command`.
        pub(crate) fn pid_of(&self, command: &str) -> Option<u32> {
            let state = self.state.lock();
            state
                .procs
                .iter()
                .filter(|(_, p)| p.command == command)
                .map(|(&pid, _)| pid)
                .max()
        }

        /// Makes the next spawn fail.
        pub(crate) fn fail_next_spawn(&self) {
            self.state.lock().fail_next = true;
        }

        /// Blocks until some process of `command` exists (another thread is
        /// starting it).
        pub(crate) fn wait_spawned(&self, command: &str) -> u32 {
            let mut state = self.state.lock();
            loop {
                if let Some((&pid, _)) = state.procs.iter().find(|(_, p)| p.command == command) {
                    return pid;
                }
                self.changed.wait(&mut state);
            }
        }

        fn alive(state: &State, pid: u32) -> bool {
            state.procs.get(&pid).is_some_and(|p| p.hook.is_some())
        }
    }

    impl Process for FakeProcess {
        fn spawn(
            &self,
            spec: SpawnSpec<'_>,
            _want_pidfd: bool,
            on_exit: ExitHook,
        ) -> io::Result<(u32, Option<std::os::fd::OwnedFd>)> {
            let mut state = self.state.lock();
            if std::mem::take(&mut state.fail_next) {
                return Err(io::Error::from_raw_os_error(nix::libc::EAGAIN));
            }
            state.next_pid += 1;
            let pid = state.next_pid;
            state.procs.insert(
                pid,
                Proc {
                    command: spec.command.to_string(),
                    hook: Some(on_exit),
                    signals: Vec::new(),
                    on_term: self.on_term,
                },
            );
            drop(state);
            self.changed.notify_all();
            Ok((pid, None))
        }

        fn signal(&self, pid: u32, signal: Signal) {
            let ends = {
                let mut state = self.state.lock();
                let Some(p) = state.procs.get_mut(&pid) else {
                    return;
                };
                p.signals.push(signal);
                match signal {
                    Signal::SIGKILL => true,
                    Signal::SIGTERM => p.on_term == OnTerm::Exit,
                    _ => false,
                }
            };
            if ends {
                self.exit(pid, Exit::Signal(signal as i32));
            }
        }

        fn wait_gone(&self, pids: &HashSet<u32>, deadline: Option<Instant>) -> HashSet<u32> {
            let mut state = self.state.lock();
            loop {
                let left: HashSet<u32> = pids
                    .iter()
                    .copied()
                    .filter(|&p| Self::alive(&state, p))
                    .collect();
                if left.is_empty() {
                    return left;
                }
                match deadline {
                    Some(d) => {
                        if self.changed.wait_until(&mut state, d).timed_out() {
                            return pids
                                .iter()
                                .copied()
                                .filter(|&p| Self::alive(&state, p))
                                .collect();
                        }
                    }
                    None => self.changed.wait(&mut state),
                }
            }
        }

        fn lingering(&self, _pids: &HashSet<u32>) -> HashSet<u32> {
            // A fake leader is its whole tree: once reaped, nothing lingers.
            HashSet::new()
        }
    }
}
