//! Where one command is held: in a cgroup of its own (`cell.rs`), or, where
//! none could be made, in its session (`session.rs`). This is the one place
//! that tells the two apart: the containment asks every question of a
//! [`Hold`] through the methods here, each of which matches once.

mod cell;
mod session;

use std::io;

use super::budget::{Budget, CellSet};
use crate::limits::Usage;
use crate::os::contain::cgroup::Cell;
use crate::os::reaper::Rusage;
use cell::CellHold;
use session::SessionHold;

/// Where one command is held.
pub(super) enum Hold {
    Cell(CellHold),
    Session(SessionHold),
}

impl Hold {
    /// A command about to start in `cell`.
    pub(super) fn in_cell(cell: CellSet) -> Hold {
        Hold::Cell(CellHold::new(cell))
    }

    /// A command about to start in a session of its own.
    pub(super) fn in_session() -> Hold {
        Hold::Session(SessionHold::new())
    }

    /// Whether the command's leader has been reaped.
    pub(super) fn exited(&self) -> bool {
        match self {
            Hold::Cell(c) => c.exited,
            Hold::Session(s) => s.exited,
        }
    }

    /// Whether the command is held by its session.
    pub(super) fn is_session(&self) -> bool {
        matches!(self, Hold::Session(_))
    }

    /// Whether the command is held by its session and its leader has been
    /// reaped (spawned or not).
    pub(super) fn session_ended(&self) -> bool {
        matches!(self, Hold::Session(s) if s.exited)
    }

    /// The leader was spawned as `pid` (which names its session).
    pub(super) fn spawned(&mut self, pid: u32) {
        if let Hold::Session(s) = self {
            s.sid = pid;
        }
    }

    /// The leader has been reaped, having used `leader`: what the command
    /// cost, and whether something of it may still run (a session's
    /// answer is unknown without a `/proc` scan: yes, until a prune).
    pub(super) fn leader_exited(&mut self, budget: &Budget, leader: Rusage) -> (Usage, bool) {
        match self {
            Hold::Cell(c) => c.leader_exited(budget, leader),
            Hold::Session(s) => {
                s.exited = true;
                (leader_cost(leader), true)
            }
        }
    }

    /// Whether, its leader gone, processes it started still run in its
    /// cell; `None` for a session (a `/proc` scan tells: see
    /// [`Hold::ended_session`]).
    pub(super) fn cell_lingers(&self) -> Option<bool> {
        match self {
            Hold::Cell(c) => Some(c.exited && c.cell.populated()),
            Hold::Session(_) => None,
        }
    }

    /// The session of an ended leader (its id, once spawned).
    pub(super) fn ended_session(&self) -> Option<u32> {
        match self {
            Hold::Session(s) if s.exited && s.sid != 0 => Some(s.sid),
            _ => None,
        }
    }

    /// Marks the cell stopped (never reused) and returns a handle to it,
    /// to signal or wait on; `None` for a session.
    pub(super) fn stop_cell(&mut self) -> Option<&CellSet> {
        match self {
            Hold::Cell(c) => {
                c.stopped = true;
                Some(&c.cell)
            }
            Hold::Session(_) => None,
        }
    }

    /// A handle to the cell, to wait on; `None` for a session.
    pub(super) fn cell(&self) -> Option<Cell> {
        match self {
            Hold::Cell(c) => Some(c.cell.clone_ref()),
            Hold::Session(_) => None,
        }
    }

    /// Removes an empty cell whose leader has ended: whether the command
    /// may now be forgotten (an ended session always may).
    pub(super) fn release(&self) -> bool {
        match self {
            Hold::Cell(c) => c.exited && c.cell.remove().is_ok(),
            Hold::Session(s) => s.exited,
        }
    }

    /// Removes the cell of a command that emptied since its leader ended:
    /// whether it is gone.
    pub(super) fn prune_cell(&self) -> bool {
        match self {
            Hold::Cell(c) => c.exited && !c.cell.populated() && c.cell.remove().is_ok(),
            Hold::Session(_) => false,
        }
    }

    /// The cell, for the spares, unless it was stopped (see `CellHold`),
    /// in which case it is removed; `None` for a session.
    pub(super) fn into_reusable_cell(self) -> Option<CellSet> {
        match self {
            Hold::Cell(c) if !c.stopped => Some(c.cell),
            Hold::Cell(c) => {
                let _ = c.cell.remove();
                None
            }
            Hold::Session(_) => None,
        }
    }

    /// Removes the cell of a command that never started.
    pub(super) fn abandon(&self) -> io::Result<()> {
        match self {
            Hold::Cell(c) => c.cell.remove(),
            Hold::Session(_) => Ok(()),
        }
    }
}

/// What a command cost as far as its leader's own usage tells (all a
/// session knows).
pub(super) fn leader_cost(leader: Rusage) -> Usage {
    Usage {
        cpu: Some(leader.cpu),
        peak_memory: Some(leader.max_rss),
        ..Usage::default()
    }
}
