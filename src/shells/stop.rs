//! Stopping: SIGTERM to everything a command started, `kill_grace` for it
//! to go, then SIGKILL to whatever is left — the one place this is done, for
//! `kill_shell`, a cancelled call, the output cap, a monitor's end,
//! `stop_all` and drop.

use std::collections::HashSet;
use std::time::Duration;

use nix::sys::signal::Signal;

use super::shell::{Key, StopReason};
use super::supervisor::Supervisor;
use crate::deadline;

/// How long to wait for a group to go after SIGKILL. KILL cannot be caught,
/// so only a process stuck in the kernel (uninterruptible sleep) outlasts it.
const AFTER_KILL: Duration = Duration::from_secs(10);

impl Supervisor {
    /// Stops the shells of `keys`: SIGTERM to each, SIGKILL after
    /// `kill_grace` to whatever is left of it, and returns once the leaders
    /// are reaped and the groups are gone (or `AFTER_KILL` passed). Returns
    /// the keys that were running when asked, so were stopped by this call.
    pub(crate) fn stop(&self, keys: &[Key], reason: StopReason) -> Vec<Key> {
        self.stop_with(keys, HashSet::new(), reason)
    }

    /// [`stop`](Self::stop), plus the groups `pgids` whose leaders have
    /// already been reaped (what ended commands left running).
    fn stop_with(&self, keys: &[Key], mut pgids: HashSet<u32>, reason: StopReason) -> Vec<Key> {
        let mut marked = Vec::new();
        // Only started shells are waited for: one still being started by
        // another thread is marked, and stopped by that thread as soon as
        // its pid is known (see `Supervisor::start`).
        let mut started = Vec::new();
        {
            let mut inner = self.table.lock();
            for &key in keys {
                let Some(shell) = inner.get_mut(key) else {
                    continue;
                };
                let Some(pid) = shell.pid() else {
                    shell.stop.get_or_insert(reason);
                    continue;
                };
                started.push(key);
                if shell.is_running() {
                    shell.stop.get_or_insert(reason);
                    marked.push(key);
                }
                pgids.insert(pid);
            }
        }
        for &pgid in &pgids {
            self.process.signal(pgid, Signal::SIGTERM);
        }
        let deadline = deadline::after(self.kill_grace);
        let inner = self.table.lock();
        drop(self.table.wait_exited(inner, &started, deadline));
        let left = self.process.wait_gone(&pgids, deadline);
        if !left.is_empty() {
            for &pgid in &left {
                self.process.signal(pgid, Signal::SIGKILL);
            }
            let after = deadline::after(AFTER_KILL);
            let inner = self.table.lock();
            drop(self.table.wait_exited(inner, &started, after));
            self.process.wait_gone(&left, after);
        }
        marked
    }

    /// Stops every running shell, and what ended commands left running in
    /// their groups, all at once. The tools stay usable: a new command
    /// starts a new shell. Idempotent: a second call finds nothing to stop.
    pub(crate) fn stop_all(&self) {
        let (keys, ended) = {
            let mut inner = self.table.lock();
            let keys: Vec<Key> = inner
                .shells
                .iter()
                .filter(|(_, s)| s.is_running())
                .map(|(&k, _)| k)
                .collect();
            let mut ended: HashSet<u32> = inner.finished_groups.drain(..).collect();
            ended.extend(
                inner
                    .shells
                    .values()
                    .filter(|s| !s.is_running())
                    .filter_map(|s| s.pid()),
            );
            (keys, ended)
        };
        let lingering = self.process.lingering(&ended);
        if !keys.is_empty() || !lingering.is_empty() {
            self.stop_with(&keys, lingering, StopReason::StopAll);
        }
    }

    /// Ends the tools: nothing new starts, then everything is stopped.
    pub(crate) fn close(&self) {
        self.table.lock().closed = true;
        self.stop_all();
    }
}
