//! Signalling and waiting for commands by key, whichever way each is held:
//! the shells' stop (TERM, CONT, the grace, KILL) goes through here.
//!
//! - A command held by its session: through the reaper while its leader is
//!   unreaped (a pid we own cannot have been recycled), else only while a
//!   live member still carries the owner's mark (the number may have been
//!   given out again); and every member that left the group but not the
//!   session — one `/proc` scan for all the sessions
//!   (`group::signal_sessions`).
//! - A command held in a cell: every member listed in the cell, the
//!   unreaped leader alone through the reaper; SIGKILL is `cgroup.kill`.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::{group, Contain, Key};
use crate::os::reaper;

/// Where the commands of some keys are, for signalling and waiting.
#[derive(Default)]
struct Targets {
    /// Sessions (= groups) of commands held by their session.
    sessions: HashSet<u32>,
    /// Unreaped leaders of commands held in a cell: signalled alone,
    /// through the reaper.
    leaders: HashSet<u32>,
    /// Commands held in a cell.
    cells: Vec<Key>,
    /// Which key each session (`Some(sid)`) and cell (`None`) is.
    owners: Vec<(Key, Option<u32>)>,
}

impl Contain {
    /// Sends `signals`, in order, to everything the commands `keys`
    /// started; `leaders` holds each one's unreaped leader.
    pub(crate) fn signal(&self, keys: &[Key], leaders: &[Option<u32>], signals: &[Signal]) {
        let t = self.targets(keys, leaders);
        let owned: HashSet<u32> = t
            .sessions
            .iter()
            .copied()
            .filter(|&sid| {
                reaper::get().is_some_and(|r| signals.iter().all(|&s| r.signal_group(sid, s)))
            })
            .collect();
        if !t.sessions.is_empty() {
            group::signal_sessions(&t.sessions, &owned, signals, self.mark_entry());
        }
        self.mark_stopped(&t.cells);
        for &signal in signals {
            if let Some(reaper) = reaper::get() {
                for &pid in &t.leaders {
                    reaper.signal_leader(pid, signal);
                }
            }
            if signal == Signal::SIGKILL {
                self.kill_cells(&t.cells);
            } else {
                self.signal_cells(&t.cells, signal, &t.leaders);
            }
        }
    }

    /// Waits until nothing is left of the commands `keys` (whose unreaped
    /// leaders are `leaders`), or `deadline` (`None`: none). Returns those
    /// with something left.
    pub(crate) fn wait_gone(
        &self,
        keys: &[Key],
        leaders: &[Option<u32>],
        deadline: Option<Instant>,
    ) -> Vec<Key> {
        let t = self.targets(keys, leaders);
        let left_sessions = group::wait_gone(&t.sessions, deadline);
        // A cell's wait needs a deadline; "none" is as far as an Instant goes.
        let far = deadline
            .unwrap_or_else(|| crate::deadline::saturating_add(Instant::now(), Duration::MAX));
        let left_cells = self.wait_cells_gone(&t.cells, far);
        let mut left: Vec<Key> = t
            .owners
            .iter()
            .filter(|(k, sid)| match sid {
                Some(sid) => left_sessions.contains(sid),
                None => left_cells.contains(k),
            })
            .map(|&(k, _)| k)
            .collect();
        left.sort_unstable();
        left.dedup();
        left
    }

    /// Where each of `keys` is: its cell, or its session (the leader's
    /// while it runs, else an ended one that still has members).
    fn targets(&self, keys: &[Key], leaders: &[Option<u32>]) -> Targets {
        let mut t = Targets::default();
        let mut ended_sessions = Vec::new();
        for (&key, leader) in keys.iter().zip(leaders) {
            match (*leader, self.in_cell(key)) {
                (Some(pid), true) => {
                    t.leaders.insert(pid);
                    t.cells.push(key);
                    t.owners.push((key, None));
                }
                (Some(pid), false) => {
                    t.sessions.insert(pid);
                    t.owners.push((key, Some(pid)));
                }
                (None, true) => {
                    t.cells.push(key);
                    t.owners.push((key, None));
                }
                (None, false) => ended_sessions.push(key),
            }
        }
        for (key, sid) in self.lingering_sessions(&ended_sessions) {
            t.sessions.insert(sid);
            t.owners.push((key, Some(sid)));
        }
        t
    }
}
