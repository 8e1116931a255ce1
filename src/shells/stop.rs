//! Stopping: SIGTERM to everything a command started, `kill_grace` for it
//! to go, then SIGKILL to whatever is left — the one place this is done, for
//! `kill_shell`, a cancelled call, the output cap, a monitor's end,
//! `stop_all` and drop.

use std::time::Duration;

use nix::sys::signal::Signal;

use super::shell::{Key, StopReason};
use super::supervisor::Supervisor;
use crate::deadline;

/// How long to wait for a group to go after SIGKILL. KILL cannot be caught,
/// so only a process stuck in the kernel (uninterruptible sleep) outlasts it.
const AFTER_KILL: Duration = Duration::from_secs(10);

impl Supervisor {
    /// Stops the commands of `keys`: SIGTERM (and SIGCONT, so a stopped
    /// process can handle it) to everything each started, SIGKILL after
    /// `kill_grace` to whatever is left, and returns once the leaders are
    /// reaped and nothing is left (or `AFTER_KILL` passed). A key whose
    /// record is gone reaches what its command left running. Returns the
    /// keys that were running when asked, so were stopped by this call.
    pub(crate) fn stop(&self, keys: &[Key], reason: StopReason) -> Vec<Key> {
        let mut marked = Vec::new();
        // Only started shells are waited for: one still being started by
        // another thread is marked, and stopped by that thread as soon as
        // its pid is known (see `Supervisor::start`).
        let mut started = Vec::new();
        let mut targets = Vec::new();
        {
            let mut inner = self.table.lock();
            for &key in keys {
                let Some(shell) = inner.get_mut(key) else {
                    targets.push(key);
                    continue;
                };
                if shell.pid().is_none() {
                    shell.stop.get_or_insert(reason);
                    continue;
                }
                started.push(key);
                targets.push(key);
                if shell.is_running() {
                    shell.stop.get_or_insert(reason);
                    marked.push(key);
                }
            }
        }
        // A stopped process (SIGSTOP, or SIGTTIN from a terminal read)
        // handles TERM only once it runs again.
        self.process
            .signal(&targets, &[Signal::SIGTERM, Signal::SIGCONT]);
        let deadline = deadline::after(self.kill_grace);
        let inner = self.table.lock();
        drop(self.table.wait_exited(inner, &started, deadline));
        let left = self.process.wait_gone(&targets, deadline);
        if !left.is_empty() {
            self.process.signal(&left, &[Signal::SIGKILL]);
            let after = deadline::after(AFTER_KILL);
            let inner = self.table.lock();
            drop(self.table.wait_exited(inner, &started, after));
            self.process.wait_gone(&left, after);
        } else {
            // Gone within the grace, but a leader that ended just before its
            // deadline may not be recorded yet (its exit is on its way through
            // the reaper): "stopped" is answered once the table knows, so a
            // read right after sees the shell killed.
            let inner = self.table.lock();
            drop(
                self.table
                    .wait_exited(inner, &started, deadline::after(AFTER_KILL)),
            );
        }
        self.process.release(&targets);
        marked
    }

    /// Stops every running shell, and what ended commands left running,
    /// all at once. The tools stay usable: a new command starts a new
    /// shell. Idempotent: a second call finds nothing to stop.
    pub(crate) fn stop_all(&self) {
        let mut keys: Vec<Key> = {
            let inner = self.table.lock();
            inner
                .shells
                .iter()
                .filter(|(_, s)| s.is_running())
                .map(|(&k, _)| k)
                .collect()
        };
        for key in self.process.lingering() {
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        if !keys.is_empty() {
            self.stop(&keys, StopReason::StopAll);
        }
    }

    /// Whether command `key` has ended while processes it started still run.
    pub(crate) fn lingers(&self, key: Key) -> bool {
        self.process.lingers(key)
    }

    /// Ends the tools: nothing new starts, then everything is stopped.
    pub(crate) fn close(&self) {
        self.table.lock().closed = true;
        self.stop_all();
    }
}
