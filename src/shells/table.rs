//! The shell table: every command we started, under one mutex (SPEC section 2).
//!
//! Data flows one way: the tools read and change records here; the reaper's
//! exit hook records exits here and wakes whoever waits. Nothing in this
//! module signals a process or reads a file.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::os::reaper::Exit;

/// Why we stopped a shell (it then reports `killed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopReason {
    /// `kill_shell`.
    Killed,
    /// `stop_all` or drop.
    StopAll,
    /// Its output file passed `max_output_bytes`.
    OutputCap,
    /// A monitor reached its timeout.
    MonitorTimeout,
    /// A monitor suppressed lines in every window for `flood_timeout`.
    Flood,
}

/// Where a shell is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// Spawned (or about to be) and not reaped.
    Running,
    /// Reaped.
    Exited(Exit),
}

/// Something to run once a shell has exited (a `Pending` to complete).
pub(crate) trait ExitWaiter: Send {
    /// True when nobody waits any more (the `Pending` completed another way
    /// or was dropped): the waiter is pruned without being run.
    fn is_stale(&self) -> bool;
    /// The shell has exited.
    fn exited(self: Box<Self>);
}

/// One command: a foreground call in progress, or a background shell.
pub(crate) struct Shell {
    /// `bash_N` once it is in the background; foreground commands have none.
    pub id: Option<String>,
    pub command: String,
    pub description: Option<String>,
    /// Pid of the leader, which is also the process group id. 0 until spawned.
    pub pid: u32,
    pub output: PathBuf,
    /// Bytes of the output file already shown by `bash_output`.
    pub cursor: u64,
    pub state: State,
    /// Set when we asked it to stop, before it exited.
    pub stop: Option<StopReason>,
    /// Who is told when it ends in the background.
    pub recipient: String,
    pub call: Option<String>,
    pub detached: bool,
    pub background: bool,
    /// A monitor: its reader thread, not the exit, sends its end notice.
    pub monitor: bool,
    /// Serialises reads of the output, so two `bash_output` calls at once
    /// never show the same bytes twice or skip any.
    pub read_lock: Arc<Mutex<()>>,
    waiters: Vec<Box<dyn ExitWaiter>>,
}

impl Shell {
    /// A record for a command that is about to be spawned.
    pub(crate) fn new(command: String, output: PathBuf, recipient: String) -> Shell {
        Shell {
            id: None,
            command,
            description: None,
            pid: 0,
            output,
            cursor: 0,
            state: State::Running,
            stop: None,
            recipient,
            call: None,
            detached: false,
            background: false,
            monitor: false,
            read_lock: Arc::new(Mutex::new(())),
            waiters: Vec::new(),
        }
    }

    pub(crate) fn is_running(&self) -> bool {
        self.state == State::Running
    }

    /// `running`, `completed`, `failed` or `killed` (SPEC section 4).
    pub(crate) fn status(&self) -> &'static str {
        match self.state {
            State::Running => "running",
            State::Exited(_) if self.stop.is_some() => "killed",
            State::Exited(Exit::Code(0)) => "completed",
            State::Exited(_) => "failed",
        }
    }

    pub(crate) fn exit_code(&self) -> Option<i32> {
        match self.state {
            State::Running => None,
            State::Exited(e) => Some(e.code()),
        }
    }
}

/// What the notification of a shell's end says.
pub(crate) struct Ended {
    pub id: String,
    /// The description, or the command when there is none.
    pub what: String,
    pub call: Option<String>,
    pub output: PathBuf,
    pub status: String,
    pub code: i32,
}

impl Ended {
    /// What the shell's notification says now that it has ended.
    pub(crate) fn of(shell: &Shell) -> Option<Ended> {
        Ended::with(shell, shell.status(), shell.exit_code()?)
    }

    /// What it would say if it ended with `status` and `code`.
    pub(crate) fn with(shell: &Shell, status: &str, code: i32) -> Option<Ended> {
        Some(Ended {
            id: shell.id.clone()?,
            what: shell
                .description
                .clone()
                .unwrap_or_else(|| shell.command.clone()),
            call: shell.call.clone(),
            output: shell.output.clone(),
            status: status.to_string(),
            code,
        })
    }

    /// The notification text and its label (SPEC section 5).
    pub(crate) fn texts(&self) -> (String, String) {
        let summary = crate::texts::shell_summary(&self.what, &self.status, self.code);
        let text = crate::texts::end_notification(
            &self.id,
            self.call.as_deref(),
            &self.output,
            &self.status,
            &summary,
        );
        (text, summary)
    }
}

/// The records, keyed by an internal number that never repeats.
#[derive(Default)]
pub(crate) struct Inner {
    pub shells: HashMap<u64, Shell>,
    /// `bash_N` → key.
    pub ids: HashMap<String, u64>,
    next_key: u64,
    /// Set by `stop_all`: nothing new starts.
    pub closed: bool,
    /// Process groups of foreground commands that have ended, newest last:
    /// what they left running (`server &`) is stopped by `stop_all` too.
    /// Bounded by [`FINISHED_GROUPS`]; older ones are forgotten.
    pub finished_groups: VecDeque<u32>,
}

/// How many ended foreground groups `stop_all` looks after.
pub(crate) const FINISHED_GROUPS: usize = 4096;

impl Inner {
    /// Adds a record and returns its key.
    pub(crate) fn insert(&mut self, shell: Shell) -> u64 {
        self.next_key += 1;
        let key = self.next_key;
        if let Some(id) = &shell.id {
            self.ids.insert(id.clone(), key);
        }
        self.shells.insert(key, shell);
        key
    }

    pub(crate) fn by_id(&self, id: &str) -> Option<u64> {
        self.ids.get(id).copied()
    }

    /// Gives a record its background ID.
    pub(crate) fn name(&mut self, key: u64, id: String) {
        if let Some(shell) = self.shells.get_mut(&key) {
            shell.id = Some(id.clone());
            shell.background = true;
            self.ids.insert(id, key);
        }
    }

    pub(crate) fn remove(&mut self, key: u64) -> Option<Shell> {
        let shell = self.shells.remove(&key)?;
        if shell.pid != 0 {
            if self.finished_groups.len() == FINISHED_GROUPS {
                self.finished_groups.pop_front();
            }
            self.finished_groups.push_back(shell.pid);
        }
        if let Some(id) = &shell.id {
            self.ids.remove(id);
        }
        Some(shell)
    }
}

/// The table and the condvar that is notified on every exit.
#[derive(Default)]
pub(crate) struct Table {
    inner: Mutex<Inner>,
    exited: Condvar,
}

impl Table {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock()
    }

    /// Records an exit (from the reaper's hook), wakes blocking waiters and
    /// runs the registered ones outside the lock. Returns what the end
    /// notification needs when the shell is a background shell (not a
    /// monitor, whose reader thread sends its own).
    pub(crate) fn record_exit(&self, key: u64, exit: Exit) -> Option<Ended> {
        let (waiters, ended) = {
            let mut inner = self.inner.lock();
            let shell = inner.shells.get_mut(&key)?;
            shell.state = State::Exited(exit);
            let ended = (shell.background && !shell.monitor).then(|| Ended::of(shell));
            (std::mem::take(&mut shell.waiters), ended)
        };
        self.exited.notify_all();
        for w in waiters {
            if !w.is_stale() {
                w.exited();
            }
        }
        ended.flatten()
    }

    /// Runs `waiter` when the shell exits, or now if it has exited already
    /// (or is gone).
    pub(crate) fn on_exit(&self, key: u64, waiter: Box<dyn ExitWaiter>) {
        let mut inner = self.inner.lock();
        match inner.shells.get_mut(&key) {
            Some(shell) if shell.is_running() => {
                shell.waiters.retain(|w| !w.is_stale());
                shell.waiters.push(waiter);
            }
            _ => {
                drop(inner);
                waiter.exited();
            }
        }
    }

    /// Blocks until every shell of `keys` has exited or `deadline` passes
    /// (`None`: no deadline). Returns the guard and whether all have exited.
    pub(crate) fn wait_exited<'a>(
        &'a self,
        mut inner: MutexGuard<'a, Inner>,
        keys: &[u64],
        deadline: Option<Instant>,
    ) -> (MutexGuard<'a, Inner>, bool) {
        loop {
            let all = keys
                .iter()
                .all(|k| inner.shells.get(k).map_or(true, |s| !s.is_running()));
            if all {
                return (inner, true);
            }
            match deadline {
                Some(d) => {
                    if self.exited.wait_until(&mut inner, d).timed_out() {
                        let all = keys
                            .iter()
                            .all(|k| inner.shells.get(k).map_or(true, |s| !s.is_running()));
                        return (inner, all);
                    }
                }
                None => self.exited.wait(&mut inner),
            }
        }
    }
}
