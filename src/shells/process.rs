//! The seam between the supervisor and the operating system: what it takes
//! to start a command, signal what it started, and know when that is gone.
//!
//! [`RealProcess`] is the kernel (the `os` layer); with a sandbox, it
//! starts commands from the sandbox's restricted thread. [`FakeProcess`] (tests
//! only) is a process whose exit the test decides, so the supervisor's state
//! machine — timeout → background, TERM → grace → KILL, one end notice when
//! stop and exit race, `stop_all` — is checked without timing luck.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::time::Instant;

use nix::sys::signal::Signal;
use parking_lot::Mutex;

use super::shell::Key;

use crate::config::Config;
use crate::os::reaper::{reaper, ExitHook};
use crate::os::spawner::Spawner;
use crate::os::{group, spawn};

/// Starts commands and reaches what they started. A command is named by
/// the table's key for it, which outlives its record: what an ended
/// command left running is still reached by its key.
pub(crate) trait Process: Send + Sync + 'static {
    /// Starts command `key`; returns its leader's pid, and with
    /// `want_pidfd` a pidfd of it, opened while the pid cannot have been
    /// reaped (and so recycled). `on_exit` runs once, on another thread,
    /// when the leader is reaped.
    fn spawn(
        &self,
        key: Key,
        spec: spawn::SpawnSpec<'_>,
        want_pidfd: bool,
        on_exit: ExitHook,
    ) -> io::Result<(u32, Option<OwnedFd>)>;
    /// Sends `signal` to everything the commands `keys` started, and to
    /// nothing else.
    fn signal(&self, keys: &[Key], signal: Signal);
    /// Waits until nothing is left of the commands `keys`, or the deadline
    /// (`None`: none). Returns those with something left.
    fn wait_gone(&self, keys: &[Key], deadline: Option<Instant>) -> Vec<Key>;
    /// Forgets what is known of the commands `keys` that have nothing left.
    fn release(&self, keys: &[Key]);
    /// The commands whose leaders have exited while processes they started
    /// still run.
    fn lingering(&self) -> Vec<Key>;
}

/// The kernel: `posix_spawn`, the reaper, process groups.
pub(crate) struct RealProcess {
    config: Arc<Config>,
    /// The sandbox's restricted thread, which starts every command when
    /// there is a sandbox.
    spawner: Option<Spawner>,
    /// The leader's pid of every command that may still have processes:
    /// running ones, and ended ones (newest last, at most
    /// [`ENDED_GROUPS`]) whose groups may hold what they left running.
    groups: Arc<Mutex<Groups>>,
}

#[derive(Default)]
struct Groups {
    running: HashMap<Key, u32>,
    ended: VecDeque<(Key, u32)>,
}

/// How many ended commands' groups are looked after.
const ENDED_GROUPS: usize = 4096;

impl RealProcess {
    /// Commands started from the calling thread, or from `spawner`'s.
    pub(crate) fn new(config: Arc<Config>, spawner: Option<Spawner>) -> RealProcess {
        RealProcess {
            config,
            spawner,
            groups: Arc::new(Mutex::new(Groups::default())),
        }
    }

    /// The group (leader pid) of each command of `keys` we know.
    fn pids(&self, keys: &[Key]) -> Vec<(Key, u32)> {
        let groups = self.groups.lock();
        keys.iter()
            .filter_map(|&k| {
                groups
                    .running
                    .get(&k)
                    .copied()
                    .or_else(|| groups.ended.iter().find(|(e, _)| *e == k).map(|&(_, p)| p))
                    .map(|p| (k, p))
            })
            .collect()
    }
}

impl Process for RealProcess {
    fn spawn(
        &self,
        key: Key,
        spec: spawn::SpawnSpec<'_>,
        want_pidfd: bool,
        on_exit: ExitHook,
    ) -> io::Result<(u32, Option<OwnedFd>)> {
        let Some(spawner) = &self.spawner else {
            return start(&self.config, &self.groups, key, spec, want_pidfd, on_exit);
        };
        // The sandbox's thread starts it, so it inherits the thread's
        // restriction. What the spec borrows goes there owned (the output
        // file as a duplicate descriptor).
        let config = self.config.clone();
        let groups = self.groups.clone();
        let command = spec.command.to_string();
        let cwd = spec.cwd.to_path_buf();
        let output = spec.output.try_clone()?;
        let stdout = spec.stdout;
        spawner.run(move || {
            let spec = spawn::SpawnSpec {
                command: &command,
                cwd: &cwd,
                output: &output,
                stdout,
            };
            start(&config, &groups, key, spec, want_pidfd, on_exit)
        })?
    }

    /// Through the reaper while the leader is unreaped (a pid we own cannot
    /// have been recycled); after that only if `/proc` still shows live
    /// members of the group, which keep its number from being reused
    /// (Linux frees a pid number only when no process uses it as a pid,
    /// group or session id).
    fn signal(&self, keys: &[Key], signal: Signal) {
        for (_, pid) in self.pids(keys) {
            if reaper().signal_group(pid, signal) {
                continue;
            }
            let one: HashSet<u32> = [pid].into();
            if !group::live_members(&one).is_empty() {
                group::killpg_checked(pid, signal);
            }
        }
    }

    fn wait_gone(&self, keys: &[Key], deadline: Option<Instant>) -> Vec<Key> {
        let pids = self.pids(keys);
        let groups: HashSet<u32> = pids.iter().map(|&(_, p)| p).collect();
        let left = group::wait_gone(&groups, deadline);
        pids.into_iter()
            .filter(|(_, p)| left.contains(p))
            .map(|(k, _)| k)
            .collect()
    }

    fn release(&self, keys: &[Key]) {
        let left: HashSet<Key> = self
            .wait_gone(keys, Some(Instant::now()))
            .into_iter()
            .collect();
        let mut groups = self.groups.lock();
        groups
            .ended
            .retain(|(k, _)| !keys.contains(k) || left.contains(k));
    }

    fn lingering(&self) -> Vec<Key> {
        let ended: Vec<(Key, u32)> = self.groups.lock().ended.iter().copied().collect();
        let pgids: HashSet<u32> = ended.iter().map(|&(_, p)| p).collect();
        let live = group::lingering(&pgids);
        ended
            .into_iter()
            .filter(|(_, p)| live.contains(p))
            .map(|(k, _)| k)
            .collect()
    }
}

/// Starts command `key` on this thread (see [`Process::spawn`]).
fn start(
    config: &Config,
    groups: &Arc<Mutex<Groups>>,
    key: Key,
    spec: spawn::SpawnSpec<'_>,
    want_pidfd: bool,
    on_exit: ExitHook,
) -> io::Result<(u32, Option<OwnedFd>)> {
    let launch = spawn::prepare(spec, config)?;
    let mut pidfd = None;
    let ended = groups.clone();
    // Inside the reaper's lock: the pid cannot be reaped before its
    // pidfd is open, nor before its group is recorded.
    let pid = reaper().spawn(
        || {
            let pid = launch.spawn()?;
            if want_pidfd {
                pidfd = group::pidfd_open(pid);
            }
            groups.lock().running.insert(key, pid);
            Ok(pid)
        },
        Box::new(move |exit| {
            ended.lock().leader_exited(key);
            on_exit(exit)
        }),
    )?;
    Ok((pid, pidfd))
}

impl Groups {
    /// The leader of command `key` has been reaped: its group is now what
    /// it left running, if anything.
    fn leader_exited(&mut self, key: Key) {
        if let Some(pid) = self.running.remove(&key) {
            if self.ended.len() == ENDED_GROUPS {
                self.ended.pop_front();
            }
            self.ended.push_back((key, pid));
        }
    }
}

#[cfg(test)]
pub(crate) use fake::{FakeProcess, OnTerm};

#[cfg(test)]
mod fake {
    use std::collections::HashMap;
    use std::io;
    use std::time::Instant;

    use nix::sys::signal::Signal;
    use parking_lot::{Condvar, Mutex};

    use super::Process;
    use crate::os::reaper::{Exit, ExitHook};
    use crate::os::spawn::SpawnSpec;
    use crate::shells::shell::Key;

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
        keys: HashMap<Key, u32>,
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

        fn pids(&self, keys: &[Key]) -> Vec<u32> {
            let state = self.state.lock();
            keys.iter()
                .filter_map(|k| state.keys.get(k).copied())
                .collect()
        }

        fn signal_one(&self, pid: u32, signal: Signal) {
            let ends = {
                let mut state = self.state.lock();
                let Some(p) = state.procs.get_mut(&pid) else {
                    return;
                };
                if p.hook.is_none() {
                    return;
                }
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
    }

    impl Process for FakeProcess {
        fn spawn(
            &self,
            key: Key,
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
            state.keys.insert(key, pid);
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

        fn signal(&self, keys: &[Key], signal: Signal) {
            for pid in self.pids(keys) {
                self.signal_one(pid, signal);
            }
        }

        fn wait_gone(&self, keys: &[Key], deadline: Option<Instant>) -> Vec<Key> {
            let mut state = self.state.lock();
            loop {
                let left: Vec<Key> = keys
                    .iter()
                    .copied()
                    .filter(|k| state.keys.get(k).is_some_and(|&p| Self::alive(&state, p)))
                    .collect();
                if left.is_empty() {
                    return left;
                }
                let timed_out = match deadline {
                    Some(d) => self.changed.wait_until(&mut state, d).timed_out(),
                    None => {
                        self.changed.wait(&mut state);
                        false
                    }
                };
                if timed_out {
                    return keys
                        .iter()
                        .copied()
                        .filter(|k| state.keys.get(k).is_some_and(|&p| Self::alive(&state, p)))
                        .collect();
                }
            }
        }

        fn release(&self, _keys: &[Key]) {}

        fn lingering(&self) -> Vec<Key> {
            // A fake leader is its whole tree: once reaped, nothing lingers.
            Vec::new()
        }
    }
}
