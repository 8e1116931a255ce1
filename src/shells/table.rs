//! The shell table: every command we started, under one mutex, and a
//! condvar notified on every exit.
//!
//! Data flows one way: the supervisor reads and changes records here; the
//! reaper's exit hook records exits here and wakes whoever waits. Nothing in
//! this module signals a process or reads a file.

use std::collections::HashMap;
use std::time::Instant;

use parking_lot::{Condvar, Mutex, MutexGuard};

use super::shell::{Ended, ExitWaiter, Key, Kind, Life, Shell};
use crate::os::reaper::Exit;

/// The records, keyed by a number that never repeats.
#[derive(Default)]
pub(crate) struct Inner {
    pub(super) shells: HashMap<Key, Shell>,
    /// `bash_N` → key.
    ids: HashMap<String, Key>,
    next_key: Key,
    /// Set when the tools end (drop, the server's shutdown): nothing new
    /// starts. `stop_all` does not set it.
    pub(super) closed: bool,
}

impl Inner {
    pub(super) fn insert(&mut self, shell: Shell) -> Key {
        self.next_key += 1;
        let key = self.next_key;
        if let Some(id) = &shell.id {
            self.ids.insert(id.clone(), key);
        }
        self.shells.insert(key, shell);
        key
    }

    pub(crate) fn by_id(&self, id: &str) -> Option<Key> {
        self.ids.get(id).copied()
    }

    /// Every shell, with its key.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Key, &Shell)> {
        self.shells.iter().map(|(&k, s)| (k, s))
    }

    pub(crate) fn get(&self, key: Key) -> Option<&Shell> {
        self.shells.get(&key)
    }

    pub(crate) fn get_mut(&mut self, key: Key) -> Option<&mut Shell> {
        self.shells.get_mut(&key)
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    /// Gives a foreground record its background ID.
    pub(super) fn name(&mut self, key: Key, id: String) {
        if let Some(shell) = self.shells.get_mut(&key) {
            shell.id = Some(id.clone());
            shell.kind = Kind::Background;
            self.ids.insert(id, key);
        }
    }

    pub(super) fn remove(&mut self, key: Key) -> Option<Shell> {
        let shell = self.shells.remove(&key)?;
        if let Some(id) = &shell.id {
            self.ids.remove(id);
        }
        Some(shell)
    }

    /// Forgets a record whose command never started.
    pub(super) fn forget(&mut self, key: Key) {
        if let Some(shell) = self.shells.remove(&key) {
            if let Some(id) = &shell.id {
                self.ids.remove(id);
            }
        }
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

    /// Records an exit (from the reaper's hook), hands what the end
    /// notification needs to `notify` when the shell is a background shell
    /// (not a monitor, whose reader thread sends its own), then wakes
    /// blocking waiters and runs the registered ones, outside the lock: who
    /// is woken by the exit finds its notification sent.
    pub(super) fn record_exit(
        &self,
        key: Key,
        exit: Exit,
        cost: crate::limits::Usage,
        notify: impl FnOnce(Ended),
    ) {
        let (waiters, ended) = {
            let mut inner = self.inner.lock();
            let Some(shell) = inner.shells.get_mut(&key) else {
                return;
            };
            let pid = shell.pid().unwrap_or(0);
            shell.life = Life::Exited { pid, exit };
            shell.ended_at = Some(std::time::Instant::now());
            shell.cost = cost;
            let ended = (shell.kind == Kind::Background).then(|| shell.ended());
            (std::mem::take(&mut shell.waiters), ended.flatten())
        };
        if let Some(ended) = ended {
            notify(ended);
        }
        self.exited.notify_all();
        for w in waiters {
            if !w.is_stale() {
                w.exited();
            }
        }
    }

    /// Runs `waiter` when the shell exits, or now if it has exited already
    /// (or is gone).
    pub(crate) fn on_exit(&self, key: Key, waiter: Box<dyn ExitWaiter>) {
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
        keys: &[Key],
        deadline: Option<Instant>,
    ) -> (MutexGuard<'a, Inner>, bool) {
        let all_exited = |inner: &Inner| {
            keys.iter()
                .all(|k| inner.shells.get(k).map_or(true, |s| !s.is_running()))
        };
        loop {
            if all_exited(&inner) {
                return (inner, true);
            }
            match deadline {
                Some(d) => {
                    if self.exited.wait_until(&mut inner, d).timed_out() {
                        // The deadline has passed: look once more on the way out.
                        let all = all_exited(&inner);
                        return (inner, all);
                    }
                }
                None => self.exited.wait(&mut inner),
            }
        }
    }
}
