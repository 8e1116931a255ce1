//! Budgets: the memory, process and CPU limits of each command's cell, and
//! what the command cost, read back from it (the limits options and `Usage`:
//! contract §11, "Limits and accounting", in `docs/contract.md`).
//!
//! Each controller is used where the host offers it, and only under the
//! cgroup the host runs in:
//!
//! - **cgroup v2**, when the owner's jail lists it in `cgroup.controllers`
//!   (the host's cgroup delegates it): the jail enables it for its cells
//!   (`cgroup.subtree_control` of the jail, ours; a parent's settings are
//!   never touched) and each cell gets `memory.max`, `memory.swap.max = 0`,
//!   `memory.oom.group = 1`, `pids.max`, `cpu.max`.
//! - **cgroup v1**, on a hybrid host whose v2 hierarchy lacks it (the
//!   usual layout of CI runners and older servers): a directory per owner
//!   and per command in the v1 hierarchy (`cgroup/v1.rs`), joined by the
//!   child before its exec, with `memory.limit_in_bytes` (and
//!   `memory.memsw.limit_in_bytes`, so no swap), `pids.max`,
//!   `cpu.cfs_quota_us`. v1 has no group OOM kill: the kernel kills one
//!   process of the tree, and the cell's OOM event (`cgroup.event_control`
//!   with an eventfd, watched by the reaper thread) makes us kill the rest
//!   through its v2 cell, as v2's `memory.oom.group` would. (The kernel's
//!   killer stays on: with it off, a charge made by the kernel on the
//!   command's behalf — a `read` into a fresh buffer — fails with `EFAULT`
//!   instead, with no event, and the command goes on.) Its leader may end
//!   on its own before that kill lands; the command is reported killed
//!   all the same (`process.rs`).
//!
//! What a command cost is read when its leader is reaped: CPU time from the
//! v2 cell's `cpu.stat` (a core file of every v2 cgroup), peak memory from
//! `memory.peak` (v2) or `memory.max_usage_in_bytes` (v1), else from the
//! leader's `wait4` usage; `memory.events`/the OOM event and `pids.events`
//! say which limit it hit. A cell is reused by the next command only if its
//! command hit no limit; its CPU count is then read as a difference, and a
//! v1 memory peak reset. With memory on v2 (no reset of `memory.peak`
//! before Linux 6.12) a cell is never reused.

use std::fs::File;
use std::io;
use std::ops::Deref;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::limits::{LimitError, Limits, NoPidsLimit, Usage, DEFAULT_PIDS_LIMIT};
use crate::os::contain::cgroup::v1::{Controller, V1Cell, V1Jail};
use crate::os::contain::cgroup::{Cell, Jail};
use crate::os::reaper::{self, Rusage};

/// Where a controller's files are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ControllerHome {
    V2,
    /// The v1 jail at this index.
    V1(usize),
}

/// The option a controller's limit is set by.
fn option(c: Controller) -> &'static str {
    match c {
        Controller::Memory => "memory_limit",
        Controller::Pids => "pids_limit",
        Controller::Cpu => "cpu_limit",
    }
}

/// One owner's budgets: where each controller is, and the limits every
/// command gets unless it asks for others.
#[derive(Debug)]
pub(crate) struct Budget {
    /// The limits the builder asked for.
    asked: Limits,
    defaults: Limits,
    places: [Option<ControllerHome>; 3],
    /// Why a controller has no place.
    missing: [String; 3],
    v1: Vec<V1Jail>,
}

/// The CPU period written with a quota, in microseconds (the kernel's default).
const CPU_PERIOD_US: u64 = 100_000;

impl Budget {
    /// Finds each controller under `jail` (the v2 jail, or why there is
    /// none) and checks that every limit `asked` for can be applied. The
    /// default process limit applies where pids can be limited. Errors
    /// name the option and the reason.
    pub(crate) fn new(
        jail: Result<&Jail, &str>,
        asked: Limits,
        before: &dyn Fn(&Path),
    ) -> Result<Budget, LimitError> {
        let mut places = [None; 3];
        let mut missing: [String; 3] = Default::default();
        let mut v1 = Vec::new();
        match jail {
            Err(why) => {
                for m in &mut missing {
                    *m = format!("no cgroup can be made for commands ({why})");
                }
            }
            Ok(jail) => {
                let v2 = enable_v2(jail);
                let name = jail.dir().file_name().unwrap_or_default().to_os_string();
                for (i, c) in Controller::ALL.into_iter().enumerate() {
                    if v2.contains(&c) {
                        places[i] = Some(ControllerHome::V2);
                        continue;
                    }
                    // Made whatever the builder asked: a command may ask
                    // for a limit of its own (a directory per owner and
                    // hierarchy; a command's own is made at its first
                    // limit there).
                    match V1Jail::create(c, &name.to_string_lossy(), before) {
                        Ok(j) => {
                            places[i] = Some(ControllerHome::V1(v1.len()));
                            v1.push(j);
                        }
                        Err(e) => {
                            missing[i] = format!(
                                "the cgroup v2 hierarchy has no {0} controller and no cgroup v1 \
                                 {0} directory can be made ({e})",
                                c.name()
                            )
                        }
                    }
                }
            }
        }
        let budget = Budget {
            asked,
            defaults: Limits {
                pids: asked.pids.or(places[1].map(|_| DEFAULT_PIDS_LIMIT)),
                ..asked
            },
            places,
            missing,
            v1,
        };
        budget
            .check(&asked)
            .map_err(|(c, why)| LimitError::unavailable(option(c), why))?;
        Ok(budget)
    }

    /// Whether each limit `limits` sets can be applied here.
    fn check(&self, limits: &Limits) -> Result<(), (Controller, String)> {
        let wanted = [
            limits.memory.is_some(),
            limits.pids.is_some_and(|n| n > 0),
            limits.cpu.is_some(),
        ];
        for (i, c) in Controller::ALL.into_iter().enumerate() {
            if wanted[i] && self.places[i].is_none() {
                return Err((c, self.missing[i].clone()));
            }
        }
        Ok(())
    }

    /// The process limit every command gets, or why there is none.
    pub(crate) fn pids(&self) -> Result<u64, NoPidsLimit> {
        match (self.places[1], self.defaults.pids) {
            (None, _) => Err(NoPidsLimit::Unavailable(self.missing[1].clone())),
            (Some(_), Some(n)) if n > 0 => Ok(n),
            _ => Err(NoPidsLimit::TurnedOff),
        }
    }

    /// The limits every command gets.
    pub(crate) fn defaults(&self) -> Limits {
        self.defaults
    }

    /// Whether a command with `over` has a limit asked for (by the builder
    /// or itself), beyond the default process limit.
    pub(crate) fn asked(&self, over: Option<&Limits>) -> bool {
        let set =
            |l: &Limits| l.memory.is_some() || l.cpu.is_some() || l.pids.is_some_and(|n| n > 0);
        set(&self.asked) || over.is_some_and(set)
    }

    /// A command's limits: the defaults with `over`'s in their place;
    /// an error naming the option when one cannot be applied here.
    pub(crate) fn resolve(&self, over: Option<&Limits>) -> io::Result<Limits> {
        let Some(over) = over else {
            return Ok(self.defaults);
        };
        over.check()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        self.check(over).map_err(|(c, why)| {
            io::Error::new(
                io::ErrorKind::Unsupported,
                format!("{} cannot be applied: {why}", option(c)),
            )
        })?;
        Ok(self.defaults.overridden_by(over))
    }

    /// The cells' companions: `cell` with nothing set yet.
    pub(crate) fn wrap(&self, cell: Cell, open: File) -> CellSet {
        CellSet {
            cell,
            open: Some(open),
            v1: Vec::new(),
            applied: Applied::default(),
            cpu_base: 0,
            used: false,
            hit: false,
            oom: Arc::new(AtomicBool::new(false)),
            watch: None,
            cpu_read: 0,
            reset_peak: false,
            kept: [None, None, None, None],
        }
    }

    fn place(&self, c: Controller) -> Option<ControllerHome> {
        self.places[c as usize]
    }

    /// Removes every v1 directory (after the v2 jail emptied).
    pub(crate) fn remove_v1(&self) {
        for j in &self.v1 {
            j.remove_all();
        }
    }
}

impl Drop for Budget {
    fn drop(&mut self) {
        self.remove_v1();
    }
}

/// Writes `+C` for every wanted controller the jail has to its
/// `cgroup.subtree_control`; returns those that took.
fn enable_v2(jail: &Jail) -> Vec<Controller> {
    let Ok(listed) = std::fs::read_to_string(jail.dir().join("cgroup.controllers")) else {
        return Vec::new();
    };
    let control = jail.dir().join("cgroup.subtree_control");
    Controller::ALL
        .into_iter()
        .filter(|c| listed.split_whitespace().any(|l| l == c.name()))
        .filter(|c| std::fs::write(&control, format!("+{}", c.name())).is_ok())
        .collect()
}

/// The limits written to a cell's files (`None`: unlimited).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Applied {
    memory: Option<u64>,
    pids: Option<u64>,
    /// Thousandths of a CPU.
    cpu: Option<u64>,
}

/// Removing a file that a kernel does not have (no swap accounting) is fine.
fn ignore_missing(e: io::Error) -> io::Result<()> {
    if e.kind() == io::ErrorKind::NotFound {
        Ok(())
    } else {
        Err(e)
    }
}

/// The number after `key ` on a line of a flat-keyed cgroup file.
fn field(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

mod cell_set;
pub(crate) use cell_set::CellSet;

#[cfg(test)]
mod tests;
