//! A command held in a cgroup of its own: its cell (with the cell's v1
//! directories of a hybrid host), and two facts about it.

use crate::limits::Usage;
use crate::os::contain::budget::{Budget, CellSet};
use crate::os::reaper::Rusage;

/// A command's cell; `exited` once its leader is reaped; `stopped` once a
/// stop has signalled it (TERM, CONT) or written `cgroup.kill`, or it hit a
/// limit: such a cell is never reused. (A signal is sent to the members
/// listed in `cgroup.procs` after the lock is let go, so it may land after
/// the leader's exit — in whatever command a reused cell would hold by
/// then; and a process put in a cell the kernel still kills in would be
/// killed too.)
pub(in crate::os::contain) struct CellHold {
    pub(super) cell: CellSet,
    pub(super) exited: bool,
    pub(super) stopped: bool,
}

impl CellHold {
    pub(super) fn new(cell: CellSet) -> CellHold {
        CellHold {
            cell,
            exited: false,
            stopped: false,
        }
    }

    /// The leader has been reaped: what the command cost, read from its
    /// cell, and whether its cell still holds processes.
    pub(super) fn leader_exited(&mut self, budget: &Budget, leader: Rusage) -> (Usage, bool) {
        self.exited = true;
        let cost = self.cell.cost(budget, leader);
        // A cell whose command hit a limit (or whose counters cannot be
        // reset) is not reused.
        self.stopped |= !self.cell.reusable(budget);
        (cost, self.cell.populated())
    }
}
