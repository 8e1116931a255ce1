//! What is left of commands once their leaders are gone, and stopping it:
//! lingering trees, signals, `cgroup.kill`, waiting for the end, and the
//! pruning of what has ended.

use std::collections::HashSet;
use std::time::Instant;

use nix::sys::signal::Signal;

use super::cgroup::v1::V1Members;
use super::cgroup::Cell;
use super::group;
use super::{Contain, Entry, Hold, Key};

impl Contain {
    /// Whether `key`'s leader has ended while processes it started still run.
    pub(crate) fn lingers(&self, key: Key) -> bool {
        let holds = self.holds.lock();
        let Some(hold) = holds.by_key.get(&key).map(|e| &e.hold) else {
            return false;
        };
        if let Some(lingers) = hold.cell_lingers() {
            return lingers;
        }
        let Some(sid) = hold.ended_session() else {
            return false;
        };
        drop(holds);
        !group::lingering(&[sid].into(), &self.mark_entry).is_empty()
    }

    /// Keys whose leader has ended and which may still hold processes.
    pub(crate) fn lingering_keys(&self) -> Vec<Key> {
        self.holds
            .lock()
            .by_key
            .iter()
            .filter(|(_, e)| e.hold.exited())
            .map(|(&k, _)| k)
            .collect()
    }

    /// Whether `key` is held in a cell (its processes are then signalled
    /// and waited for here, not by session).
    pub(super) fn in_cell(&self, key: Key) -> bool {
        self.holds
            .lock()
            .by_key
            .get(&key)
            .is_some_and(|e| !e.hold.is_session())
    }

    /// `NAME=VALUE` of the owner's mark, as `/proc/PID/environ` shows it.
    pub(super) fn mark_entry(&self) -> &[u8] {
        &self.mark_entry
    }

    /// The sessions of ended leaders among `keys` that still have members
    /// (not recycled: see `group::lingering`), with their keys: one `/proc`
    /// scan for all of them.
    pub(super) fn lingering_sessions(&self, keys: &[Key]) -> Vec<(Key, u32)> {
        let sids: Vec<(Key, u32)> = {
            let holds = self.holds.lock();
            keys.iter()
                .filter_map(|&k| Some((k, holds.by_key.get(&k)?.hold.ended_session()?)))
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
    pub(super) fn mark_stopped(&self, keys: &[Key]) {
        let mut holds = self.holds.lock();
        for k in keys {
            if let Some(entry) = holds.by_key.get_mut(k) {
                entry.hold.stop_cell();
            }
        }
    }

    /// Sends `signal` to every member of the cells of `keys` except the
    /// pids in `skip` (leaders, which their reaper signals alone), and to
    /// what left a cell but not its v1 directories.
    pub(super) fn signal_cells(&self, keys: &[Key], signal: Signal, skip: &HashSet<u32>) {
        for (cell, v1) in self.stopped_cells(keys) {
            cell.signal(signal, skip);
            for members in v1 {
                members.signal_escaped(signal, &cell);
            }
        }
    }

    /// SIGKILL to every member of the cells of `keys` (`cgroup.kill`), and
    /// to what left a cell but not its v1 directories.
    pub(super) fn kill_cells(&self, keys: &[Key]) {
        for (cell, v1) in self.stopped_cells(keys) {
            cell.kill();
            for members in v1 {
                members.signal_escaped(Signal::SIGKILL, &cell);
            }
        }
    }

    /// The cells of `keys`, each with its v1 directories, marked stopped
    /// while the lock is held: its leader's exit, which takes the same
    /// lock, then removes the cell instead of handing it to the next
    /// command.
    fn stopped_cells(&self, keys: &[Key]) -> Vec<(Cell, Vec<V1Members>)> {
        let mut holds = self.holds.lock();
        keys.iter()
            .filter_map(|k| {
                let set = holds.by_key.get_mut(k)?.hold.stop_cell()?;
                Some((set.clone_ref(), set.v1_members()))
            })
            .collect()
    }

    /// Waits until the cells of `keys` are empty or `deadline` passes;
    /// returns the keys whose cells are not. The lock is not held while
    /// waiting: the cells' events files are opened first.
    pub(super) fn wait_cells_gone(&self, keys: &[Key], deadline: Instant) -> Vec<Key> {
        let dirs: Vec<(Key, Cell)> = {
            let holds = self.holds.lock();
            keys.iter()
                .filter_map(|&k| Some((k, holds.by_key.get(&k)?.hold.cell()?)))
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
    pub(crate) fn release(&self, keys: &[Key]) {
        let mut gone = Vec::new();
        let mut holds = self.holds.lock();
        for k in keys {
            let done = holds.by_key.get(k).is_some_and(|e| e.hold.release());
            if done {
                if let Some(entry) = holds.by_key.remove(k) {
                    if entry.hold.is_session() {
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
        let gone = self.take(Hold::prune_cell);
        drop(gone);
    }

    /// Forgets the ended sessions nothing is left of: one `/proc` scan.
    pub(super) fn prune_sessions(&self) {
        let ended: HashSet<u32> = {
            let holds = self.holds.lock();
            holds
                .by_key
                .values()
                .filter_map(|e| e.hold.ended_session())
                .collect()
        };
        let live = group::lingering(&ended, &self.mark_entry);
        let gone = self
            .take(|h| h.session_ended() && h.ended_session().map_or(true, |s| !live.contains(&s)));
        let mut holds = self.holds.lock();
        let left = holds
            .by_key
            .values()
            .filter(|e| e.hold.session_ended())
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
        let keys: Vec<Key> = holds
            .by_key
            .iter()
            .filter(|(_, e)| done(&e.hold))
            .map(|(&k, _)| k)
            .collect();
        keys.iter().filter_map(|k| holds.by_key.remove(k)).collect()
    }
}
