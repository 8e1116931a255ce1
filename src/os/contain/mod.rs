//! Containment of one owner's commands: each command in a cgroup of its own
//! where cgroups can be made (`cgroup/`), else in a session of its own
//! (`group.rs`); and what a command leaves running after its leader exits
//! (a lingering tree) is remembered for as long as it runs, so stopping
//! every shell also stops it, however many commands ran since.
//!
//! **Entry point:** [`Contain`], one per owner: [`Contain::enter`] before a
//! command starts, [`Contain::leader_exited`] when its leader is reaped,
//! [`Contain::signal`] and [`Contain::wait_gone`] to stop it.
//!
//! Inside: the two ways a command is held, matched in one place
//! (`hold/`: `cell.rs`, `session.rs`); cgroups v2 and v1 (`cgroup/`, with
//! the mount parsing both share in `mounts.rs`); the budgets of each cell
//! (`budget/`); what is reached of ended commands (`reach.rs`) and how they
//! are stopped (`stop.rs`); what is left once a leader ends (`ended.rs`);
//! and the keeper process that cleans up if the owner dies (`keeper.rs`).
//!
//! The owner names its commands by a [`Key`] of its own; this module keeps,
//! per key, where the command is held. A cell is forgotten once it is empty
//! and its leader reaped, so memory follows the live processes. A session's
//! emptiness costs a `/proc` scan, so ended sessions are pruned in batches,
//! when their number has doubled since the last prune.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::limits::{LimitError, Limits};
use crate::os::launch::Via;
use crate::os::reaper::Rusage;
use crate::os::sys;
use budget::{Budget, CellSet};
use cgroup::Jail;
use keeper::{Keeper, Told};

/// How the commands of a `BashTools` are held, so that stopping one stops
/// everything it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Containment {
    /// Each command runs in a cgroup (v2) of its own under one cgroup per
    /// `BashTools`: a process that leaves its session or group (`setsid`,
    /// daemons, `tmux`) is still stopped with the command.
    Cgroup,
    /// Each command leads a session of its own (no cgroup could be made):
    /// what stays in its session or group is stopped with it; a process
    /// that calls `setsid` itself escapes.
    Session,
}

/// The variable that turns cgroups off (`BASHTOOLS_CONTAINMENT=session`),
/// read when a `BashTools` is built.
pub(crate) const MODE_VAR: &str = "BASHTOOLS_CONTAINMENT";

/// The name the shells give a command: it outlives the command's record,
/// so what an ended command left running is still reached by it.
pub(crate) type Key = u64;

/// Runs once a command is forgotten: nothing of it can run any more.
pub(crate) type OnGone = Box<dyn FnOnce() + Send>;

/// One command: where it is held, and what to run once it is gone.
struct Entry {
    hold: Hold,
    on_gone: Option<OnGone>,
}

impl Drop for Entry {
    fn drop(&mut self) {
        if let Some(f) = self.on_gone.take() {
            f();
        }
    }
}

/// What a spawn needs to put the command where it is held: its cell,
/// open (`None`: held by its session), and its v1 directories (a hybrid
/// host's budget).
pub(crate) struct Entering {
    pub cell: Option<File>,
    pub v1: Vec<File>,
}

/// One owner's containment.
pub(crate) struct Contain {
    jail: Option<Jail>,
    /// The limits of each command's cell, and where they are written.
    budget: Budget,
    holds: Mutex<Holds>,
    /// Empty cells for the next commands, so making one is off the path
    /// of a command's start: one made ahead ([`Contain::make_spare`]), and
    /// those of ended commands that emptied without `cgroup.kill` (see
    /// [`LeaderEnded::finish`]), at most [`SPARE_CELLS`].
    spare: Spares,
    /// Stops what is left if the owner dies (`None` if it could not start).
    /// Held only for its socket: dropped last, after the jail is gone.
    _keeper: Option<Keeper>,
    /// The value of [`MARK_VAR`]: the output directory's name.
    mark: OsString,
    /// `MARK_VAR=mark`, as it appears in `/proc/PID/environ`.
    mark_entry: Vec<u8>,
    /// Whether each command gets a cgroup namespace rooted at its cell, so
    /// that it cannot move itself out (`cgroup_namespaces(7)`): where this
    /// process may make one (`CAP_SYS_ADMIN`).
    namespace: bool,
}

/// Empty cells kept for reuse.
type Spares = Arc<Mutex<Vec<CellSet>>>;

/// How many empty cells are kept: with two, commands run one after another
/// never make or remove a cell (one is in use while the other waits).
const SPARE_CELLS: usize = 2;

/// The variable that marks the processes of one owner's commands.
pub(crate) const MARK_VAR: &str = "BASHTOOLS_OWNER";

#[derive(Default)]
struct Holds {
    by_key: HashMap<Key, Entry>,
    /// Ended sessions, and how many were left after the last prune.
    ended_sessions: usize,
    after_prune: usize,
}

impl Contain {
    /// Cgroups when a jail can be made under this process's cgroup (and
    /// [`MODE_VAR`] does not say `session`), else sessions; and a keeper
    /// that stops what is left, with `grace` between TERM and KILL, and
    /// removes `outdir` if the owner dies; processes are made `via` that
    /// way. Fails, naming the option, when a limit of `limits` cannot be
    /// applied here.
    pub(crate) fn new(
        outdir: &Path,
        grace: Duration,
        via: Via,
        limits: Limits,
    ) -> Result<Contain, LimitError> {
        // The keeper first, and told of each cgroup before it is made: an
        // owner killed while it builds leaves none behind.
        let keeper = Keeper::start(outdir, grace, via).ok();
        let tell = |what: Told| {
            let keeper = keeper.as_ref();
            move |dir: &Path| {
                if let Some(k) = keeper {
                    k.tell(what, dir.as_os_str());
                }
            }
        };
        let wanted = std::env::var_os(MODE_VAR).map_or(true, |v| v != "session");
        let jail = if wanted {
            Jail::create(&tell(Told::Jail)).map_err(|e| e.to_string())
        } else {
            Err(format!("{MODE_VAR}=session"))
        };
        let budget = match Budget::new(
            jail.as_ref().map_err(String::as_str),
            limits,
            &tell(Told::V1),
        ) {
            Ok(b) => b,
            Err(e) => {
                // Nothing will run: the jail goes with the error.
                if let Ok(j) = &jail {
                    j.destroy(Instant::now());
                }
                return Err(e);
            }
        };
        let jail = jail.ok();
        let mark = outdir.file_name().unwrap_or_default().to_os_string();
        if let (None, Some(k)) = (&jail, &keeper) {
            // Before any command runs with it.
            let mut marker = OsString::from(format!("{MARK_VAR}="));
            marker.push(&mark);
            k.tell(Told::Mark, &marker);
        }
        let mut mark_entry = format!("{MARK_VAR}=").into_bytes();
        mark_entry.extend_from_slice(mark.as_encoded_bytes());
        Ok(Contain {
            jail,
            budget,
            holds: Mutex::new(Holds::default()),
            spare: Arc::new(Mutex::new(Vec::new())),
            _keeper: keeper,
            mark,
            mark_entry,
            namespace: sys::has_effective(sys::CAP_SYS_ADMIN),
        })
    }

    /// The process limit every command gets, or why there is none.
    pub(crate) fn pids_limit(&self) -> Result<u64, crate::limits::NoPidsLimit> {
        self.budget.pids()
    }

    /// Whether commands get a cgroup namespace rooted at their cell.
    pub(crate) fn namespaces(&self) -> bool {
        self.namespace
    }

    /// The variable that marks every process of this owner's commands: the
    /// keeper finds them by it in session mode, and a lingering session is
    /// known to be still ours by it after its leader is gone (in either
    /// mode: a command whose cell could not be made is held by its session).
    pub(crate) fn mark(&self) -> Option<(OsString, OsString)> {
        Some((OsString::from(MARK_VAR), self.mark.clone()))
    }

    pub(crate) fn mode(&self) -> Containment {
        if self.jail.is_some() {
            Containment::Cgroup
        } else {
            Containment::Session
        }
    }

    /// The cgroup of the whole owner, in cgroup mode.
    pub(crate) fn jail_dir(&self) -> Option<&Path> {
        self.jail.as_ref().map(|j| j.dir())
    }

    /// Prepares a place for command `key` before it is spawned, with the
    /// limits `over` asks for in place of the defaults. A cell that cannot
    /// be made or set up (`pids.max` of the parent reached, no descriptor
    /// left) leaves this command to its session, without the default
    /// process limit; a limit asked for (by the builder or the command)
    /// makes that an error instead.
    pub(crate) fn enter(&self, key: Key, over: Option<&Limits>) -> std::io::Result<Entering> {
        let limits = self.budget.resolve(over)?;
        self.prune_cells();
        let spare = self.spare.lock().pop();
        let mut failure = None;
        let cell = self
            .jail
            .as_ref()
            .and_then(|j| spare.or_else(|| new_cell(j, &self.budget)))
            .and_then(|mut cell| {
                let prepared = cell.set_limits(&self.budget, &limits).and_then(|()| {
                    cell.begin();
                    cell.entering()
                });
                match prepared {
                    Ok(p) => Some((cell, p)),
                    Err(e) => {
                        let _ = cell.remove();
                        failure = Some(e);
                        None
                    }
                }
            });
        if cell.is_none() && self.budget.asked(over) {
            return Err(failure.unwrap_or_else(|| {
                std::io::Error::other(
                    "no cgroup could be made for the command, so its limits cannot be applied",
                )
            }));
        }
        let mut holds = self.holds.lock();
        match cell {
            Some((cell, (file, v1))) => {
                let entering = Entering {
                    cell: Some(file),
                    v1,
                };
                holds.by_key.insert(
                    key,
                    Entry {
                        hold: Hold::in_cell(cell),
                        on_gone: None,
                    },
                );
                Ok(entering)
            }
            None => {
                holds.by_key.insert(
                    key,
                    Entry {
                        hold: Hold::in_session(),
                        on_gone: None,
                    },
                );
                Ok(Entering {
                    cell: None,
                    v1: Vec::new(),
                })
            }
        }
    }

    /// Makes the next command's cell now, if none is spare: called once a
    /// command has started, while its caller would only wait, so the
    /// `mkdir` is not on the way of the next start.
    pub(crate) fn make_spare(&self) {
        let Some(jail) = &self.jail else {
            return;
        };
        // Off the way of any result too (see `Jail::flush_stats`).
        jail.flush_stats();
        if !self.spare.lock().is_empty() {
            return;
        }
        if let Some(cell) = new_cell(jail, &self.budget) {
            keep_or_remove(&self.spare, cell);
        }
    }

    /// Command `key` was spawned as `pid`.
    pub(crate) fn spawned(&self, key: Key, pid: u32) {
        if let Some(entry) = self.holds.lock().by_key.get_mut(&key) {
            entry.hold.spawned(pid);
        }
    }

    /// The spawn of `key` failed: nothing of it runs.
    pub(crate) fn forget(&self, key: Key) {
        if let Some(entry) = self.holds.lock().by_key.remove(&key) {
            let _ = entry.hold.abandon();
        }
    }

    /// The leader of `key` has been reaped (called from the reaper's hook:
    /// quick). `on_gone` runs once nothing of it can run any more: when the
    /// returned [`LeaderEnded`] is finished, or when its lingering tree is
    /// gone. The command's state is recorded here; the removal of an empty
    /// cell waits for [`LeaderEnded::finish`], so whoever waits for the
    /// exit can be woken first.
    pub(crate) fn leader_exited(&self, key: Key, on_gone: OnGone, leader: Rusage) -> LeaderEnded {
        let mut holds = self.holds.lock();
        let Some(entry) = holds.by_key.get_mut(&key) else {
            drop(holds);
            return LeaderEnded {
                gone: None,
                on_gone: Some(on_gone),
                spare: None,
                cost: hold::leader_cost(leader),
            };
        };
        entry.on_gone = Some(on_gone);
        let (cost, lingers) = entry.hold.leader_exited(&self.budget, leader);
        if entry.hold.is_session() {
            holds.ended_sessions += 1;
        }
        let gone = (!lingers).then(|| holds.by_key.remove(&key)).flatten();
        let prune = holds.ended_sessions > 2 * holds.after_prune + 64;
        drop(holds);
        if prune {
            self.prune_sessions();
        }
        LeaderEnded {
            gone,
            on_gone: None,
            spare: self.jail.as_ref().map(|_| self.spare.clone()),
            cost,
        }
    }
}

/// A new cell under `jail`, open, with the budget's default limits; `None`
/// if it cannot be made (the command then keeps to its session).
fn new_cell(jail: &Jail, budget: &Budget) -> Option<CellSet> {
    let cell = jail.cell().ok()?;
    match cell.open() {
        Ok(file) => {
            let mut set = budget.wrap(cell, file);
            // The usual limits now, off the path of the command's start.
            if set.set_limits(budget, &budget.defaults()).is_err() {
                let _ = set.remove();
                return None;
            }
            Some(set)
        }
        Err(_) => {
            let _ = cell.remove();
            None
        }
    }
}

impl Contain {
    /// No command will start any more: whatever is still in the jail is
    /// killed and every cgroup removed, in every hierarchy. Called when the
    /// tools close (a server that exits as PID 1 of its namespace takes
    /// its keeper with it, so the drop's cleanup may never run) and at the
    /// drop. Idempotent.
    pub(crate) fn close(&self) {
        for cell in self.spare.lock().drain(..) {
            let _ = cell.remove();
        }
        if let Some(jail) = &self.jail {
            jail.destroy(Instant::now() + Duration::from_secs(10));
        }
        self.budget.remove_v1();
    }
}

impl Drop for Contain {
    /// The last line of defense: whatever is still in the jail is killed
    /// and the jail removed.
    fn drop(&mut self) {
        // Every entry's on_gone runs: nothing is held any more.
        self.holds.lock().by_key.clear();
        self.close();
    }
}

pub(crate) mod budget;
pub(crate) mod cgroup;
mod ended;
pub(crate) mod group;
mod hold;
pub(crate) mod keeper;
mod reach;
mod stop;

use hold::Hold;

use ended::keep_or_remove;
pub(crate) use ended::LeaderEnded;
