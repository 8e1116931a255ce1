//! What is left once a command's leader has ended: what it cost, and its
//! cell, kept for the next command or removed once nothing of it can run.

use super::*;
use crate::limits::Usage;

/// What is left to do once a leader has ended: remove its cell if it is
/// empty, and run its `on_gone` if nothing of it can run any more.
#[must_use = "finish() removes the cell and runs on_gone"]
pub(crate) struct LeaderEnded {
    pub(super) gone: Option<Entry>,
    pub(super) on_gone: Option<OnGone>,
    /// Where an empty cell that was never stopped is kept for the next
    /// command instead of being removed (cgroup mode).
    pub(super) spare: Option<Spares>,
    /// What the command cost, read from its cell as its leader ended.
    pub(super) cost: Usage,
}

impl LeaderEnded {
    /// What the command cost, and which limit it hit.
    pub(crate) fn cost(&self) -> Usage {
        self.cost
    }

    /// Removes the empty cell and runs `on_gone` (outside every lock:
    /// it may take others).
    pub(crate) fn finish(mut self) {
        if let Some(mut entry) = self.gone.take() {
            let hold = std::mem::replace(&mut entry.hold, Hold::in_session());
            // A stopped command's cell is never reused (see `CellHold`).
            if let Some(mut cell) = hold.into_reusable_cell() {
                let room = self.spare.as_ref().filter(|s| s.lock().len() < SPARE_CELLS);
                match room.filter(|_| cell.reopen().is_ok()) {
                    Some(spare) => keep_or_remove(spare, cell),
                    None => {
                        let _ = cell.remove();
                    }
                }
            }
        }
        if let Some(f) = self.on_gone.take() {
            f();
        }
    }
}

/// Keeps `cell` among the spares if there is room, else removes it.
pub(super) fn keep_or_remove(spares: &Spares, cell: CellSet) {
    let mut spare = spares.lock();
    if spare.len() < SPARE_CELLS {
        spare.push(cell);
    } else {
        drop(spare);
        let _ = cell.remove();
    }
}
