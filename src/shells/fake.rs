//! A process whose exit the test decides (tests only): the other side of
//! the `os::process::Process` seam, so the supervisor's state machine is
//! checked without timing luck.

use std::collections::HashMap;
use std::io;
use std::time::Instant;

use nix::sys::signal::Signal;
use parking_lot::{Condvar, Mutex};

use crate::os::bash::spawn::SpawnSpec;
use crate::os::contain::{Containment, OnGone};
use crate::os::process::{EndHook, Key, Process};
use crate::os::reaper::Exit;

/// What a fake process does on SIGTERM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnTerm {
    /// Exits at once, killed by the signal.
    Exit,
    /// Ignores it (only SIGKILL ends it).
    Ignore,
    /// Its tree is gone at once, but its exit reaches the table only when
    /// the test delivers it with [`FakeProcess::exit`]: a reaper running
    /// late.
    GoneUnrecorded,
}

struct Proc {
    command: String,
    hook: Option<Box<dyn FnOnce(Exit) + Send>>,
    signals: Vec<Signal>,
    on_term: OnTerm,
    /// Its tree has gone, its exit not yet recorded.
    gone: bool,
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
        state
            .procs
            .get(&pid)
            .is_some_and(|p| p.hook.is_some() && !p.gone)
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
            if signal == Signal::SIGTERM && p.on_term == OnTerm::GoneUnrecorded {
                p.gone = true;
            }
            match signal {
                Signal::SIGKILL => !p.gone,
                Signal::SIGTERM => p.on_term == OnTerm::Exit,
                _ => false,
            }
        };
        self.changed.notify_all();
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
        on_exit: EndHook,
        on_gone: OnGone,
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
                // A fake leader is its whole tree: gone when it exits.
                hook: Some(Box::new(move |exit| {
                    on_exit(exit, crate::limits::Usage::default());
                    on_gone();
                })),
                signals: Vec::new(),
                on_term: self.on_term,
                gone: false,
            },
        );
        drop(state);
        self.changed.notify_all();
        Ok((pid, None))
    }

    fn signal(&self, keys: &[Key], signals: &[Signal]) {
        for &signal in signals {
            for pid in self.pids(keys) {
                self.signal_one(pid, signal);
            }
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

    fn lingers(&self, _key: Key) -> bool {
        false
    }

    fn containment(&self) -> Containment {
        Containment::Session
    }

    fn pids_limit(&self) -> Result<u64, crate::limits::NoPidsLimit> {
        Err(crate::limits::NoPidsLimit::Unavailable(
            "a fake process has no cgroup".into(),
        ))
    }

    fn cgroup(&self) -> Option<std::path::PathBuf> {
        None
    }

    fn last_state(&self, _key: Key) -> Option<crate::os::process::LastState> {
        None
    }

    fn forget_last_state(&self, _key: Key) {}
}
