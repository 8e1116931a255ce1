//! What is left of commands once their leaders are gone, and stopping it:
//! lingering trees, signals, `cgroup.kill`, waiting for the end, and the
//! pruning of what has ended.

use std::collections::HashSet;
use std::time::Instant;

use nix::sys::signal::Signal;

use super::{Contain, Entry, Hold};
use crate::os::cgroup::Cell;
use crate::os::group;

impl Contain {
    /// Whether `key`'s leader has ended while processes it started still run.
    pub(crate) fn lingers(&self, key: u64) -> bool {
        let holds = self.holds.lock();
        match holds.by_key.get(&key).map(|e| &e.hold) {
            Some(Hold::Cell {
                cell, exited: true, ..
            }) => cell.populated(),
            Some(&Hold::Session { sid, exited: true }) if sid != 0 => {
                drop(holds);
                !group::lingering(&[sid].into(), &self.mark_entry).is_empty()
            }
            _ => false,
        }
    }

    /// Keys whose leader has ended and which may still hold processes.
    pub(crate) fn lingering_keys(&self) -> Vec<u64> {
        self.holds
            .lock()
            .by_key
            .iter()
            .filter(|(_, e)| {
                matches!(
                    e.hold,
                    Hold::Cell { exited: true, .. } | Hold::Session { exited: true, .. }
                )
            })
            .map(|(&k, _)| k)
            .collect()
    }

    /// Whether `key` is held in a cell (its processes are then signalled
    /// and waited for here, not by session).
    pub(crate) fn in_cell(&self, key: u64) -> bool {
        matches!(
            self.holds.lock().by_key.get(&key).map(|e| &e.hold),
            Some(Hold::Cell { .. })
        )
    }

    /// `NAME=VALUE` of the owner's mark, as `/proc/PID/environ` shows it.
    pub(crate) fn mark_entry(&self) -> &[u8] {
        &self.mark_entry
    }

    /// The sessions of ended leaders among `keys` that still have members
    /// (not recycled: see `group::lingering`), with their keys: one `/proc`
    /// scan for all of them.
    pub(crate) fn lingering_sessions(&self, keys: &[u64]) -> Vec<(u64, u32)> {
        let sids: Vec<(u64, u32)> = {
            let holds = self.holds.lock();
            keys.iter()
                .filter_map(|&k| match holds.by_key.get(&k).map(|e| &e.hold) {
                    Some(&Hold::Session { sid, exited: true }) if sid != 0 => Some((k, sid)),
                    _ => None,
                })
                .collect()
        };
        if sids.is_empty() {
            return sids;
        }
        let live = group::lingering(&sids.iter().map(|&(_, s)| s).collect(), &self.mark_entry);
        sids.into_iter().filter(|(_, s)| live.contains(s)).collect()
    }

    /// Marks the cells of `keys` stopped, before any of their processes is
    /// signalled: a leader that dies of the signal at once is reaped by
    /// another thread, whose exit hook (under the same lock) then removes
    /// its cell instead of handing it to the next command. Marked after
    /// the signal, as it once was, a loaded machine let the reaper win:
    /// the stopped cell became a later command's.
    pub(crate) fn mark_stopped(&self, keys: &[u64]) {
        let mut holds = self.holds.lock();
        for k in keys {
            if let Some(Hold::Cell { stopped, .. }) = holds.by_key.get_mut(k).map(|e| &mut e.hold) {
                *stopped = true;
            }
        }
    }

    /// Sends `signal` to every member of the cells of `keys` except the
    /// pids in `skip` (leaders, which their reaper signals alone).
    pub(crate) fn signal(&self, keys: &[u64], signal: Signal, skip: &HashSet<u32>) {
        let cells: Vec<Cell> = {
            let mut holds = self.holds.lock();
            keys.iter()
                .filter_map(|k| match holds.by_key.get_mut(k).map(|e| &mut e.hold) {
                    // Marked while the lock is held: its leader's exit,
                    // which takes the same lock, then removes the cell
                    // instead of handing it to the next command.
                    Some(Hold::Cell { cell, stopped, .. }) => {
                        *stopped = true;
                        Some(cell.clone_ref())
                    }
                    _ => None,
                })
                .collect()
        };
        for cell in cells {
            cell.signal(signal, skip);
        }
    }

    /// SIGKILL to every member of the cells of `keys`.
    pub(crate) fn kill(&self, keys: &[u64]) {
        let mut holds = self.holds.lock();
        for k in keys {
            if let Some(Hold::Cell { cell, stopped, .. }) =
                holds.by_key.get_mut(k).map(|e| &mut e.hold)
            {
                *stopped = true;
                cell.kill();
            }
        }
    }

    /// Waits until the cells of `keys` are empty or `deadline` passes;
    /// returns the keys whose cells are not. The lock is not held while
    /// waiting: the cells' events files are opened first.
    pub(crate) fn wait_gone(&self, keys: &[u64], deadline: Instant) -> Vec<u64> {
        let dirs: Vec<(u64, Cell)> = {
            let holds = self.holds.lock();
            keys.iter()
                .filter_map(|&k| match holds.by_key.get(&k).map(|e| &e.hold) {
                    Some(Hold::Cell { cell, .. }) => Some((k, cell.clone_ref())),
                    _ => None,
                })
                .collect()
        };
        let cells: Vec<&Cell> = dirs.iter().map(|(_, c)| c).collect();
        Cell::wait_all_empty(&cells, deadline)
            .into_iter()
            .map(|i| dirs[i].0)
            .collect()
    }

    /// Forgets the cells of `keys` that are empty and whose leader has been
    /// reaped, and removes them; forgets ended sessions among `keys`.
    pub(crate) fn release(&self, keys: &[u64]) {
        let mut gone = Vec::new();
        let mut holds = self.holds.lock();
        for k in keys {
            let done = match holds.by_key.get(k).map(|e| &e.hold) {
                Some(Hold::Cell {
                    cell, exited: true, ..
                }) => cell.remove().is_ok(),
                Some(Hold::Session { exited: true, .. }) => true,
                _ => false,
            };
            if done {
                if let Some(entry) = holds.by_key.remove(k) {
                    if let Hold::Session { .. } = entry.hold {
                        holds.ended_sessions = holds.ended_sessions.saturating_sub(1);
                    }
                    gone.push(entry);
                }
            }
        }
        drop(holds);
        drop(gone);
    }

    /// Removes the cells that emptied since their leader ended.
    pub(super) fn prune_cells(&self) {
        let gone = self.take(|h| match h {
            Hold::Cell {
                cell, exited: true, ..
            } => !cell.populated() && cell.remove().is_ok(),
            _ => false,
        });
        drop(gone);
    }

    /// Forgets the ended sessions nothing is left of: one `/proc` scan.
    pub(super) fn prune_sessions(&self) {
        let ended: HashSet<u32> = {
            let holds = self.holds.lock();
            holds
                .by_key
                .values()
                .filter_map(|e| match e.hold {
                    Hold::Session { sid, exited: true } => Some(sid),
                    _ => None,
                })
                .collect()
        };
        let live = group::lingering(&ended, &self.mark_entry);
        let gone = self.take(|h| match *h {
            Hold::Session { sid, exited: true } => !live.contains(&sid),
            _ => false,
        });
        let mut holds = self.holds.lock();
        let left = holds
            .by_key
            .values()
            .filter(|e| matches!(e.hold, Hold::Session { exited: true, .. }))
            .count();
        holds.ended_sessions = left;
        holds.after_prune = left;
        drop(holds);
        drop(gone);
    }

    /// Takes out the entries for which `done` holds, to be dropped (and
    /// their `on_gone` run) outside the lock.
    pub(super) fn take(&self, mut done: impl FnMut(&Hold) -> bool) -> Vec<Entry> {
        let mut holds = self.holds.lock();
        let keys: Vec<u64> = holds
            .by_key
            .iter()
            .filter(|(_, e)| done(&e.hold))
            .map(|(&k, _)| k)
            .collect();
        keys.iter().filter_map(|k| holds.by_key.remove(k)).collect()
    }
}
