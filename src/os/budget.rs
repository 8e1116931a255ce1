//! Budgets: the memory, process and CPU limits of each command's cell, and
//! what the command cost, read back from it (SPEC §11).
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
//!   and per command in the v1 hierarchy (`cgroup_v1.rs`), joined by the
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

use crate::limits::{Limits, Usage, DEFAULT_PIDS_LIMIT};
use crate::os::cgroup::{Cell, Jail};
use crate::os::cgroup_v1::{Controller, V1Cell, V1Jail};
use crate::os::reaper::{self, Rusage};

/// Where a controller's files are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
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
    places: [Option<Place>; 3],
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
    ) -> Result<Budget, (&'static str, String)> {
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
                        places[i] = Some(Place::V2);
                        continue;
                    }
                    // Made whatever the builder asked: a command may ask
                    // for a limit of its own (a directory per owner and
                    // hierarchy; a command's own is made at its first
                    // limit there).
                    match V1Jail::create(c, &name.to_string_lossy(), before) {
                        Ok(j) => {
                            places[i] = Some(Place::V1(v1.len()));
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
        budget.check(&asked).map_err(|(c, why)| (option(c), why))?;
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
    pub(crate) fn pids(&self) -> Result<u64, String> {
        match (self.places[1], self.defaults.pids) {
            (None, _) => Err(self.missing[1].clone()),
            (Some(_), Some(n)) if n > 0 => Ok(n),
            _ => Err("pids_limit is 0".into()),
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
        over.check().map_err(|(o, why)| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("{o}: {why}"))
        })?;
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

    fn place(&self, c: Controller) -> Option<Place> {
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

/// One command's cgroups: its v2 cell and, on a hybrid host, its v1
/// directories; and the limits set on them.
#[derive(Debug)]
pub(crate) struct CellSet {
    cell: Cell,
    open: Option<File>,
    v1: Vec<V1Cell>,
    applied: Applied,
    /// `usage_usec` of `cpu.stat` when the command came in (a reused cell).
    cpu_base: u64,
    /// Whether a command has run in it.
    used: bool,
    /// Whether its command hit a limit: it is never reused.
    hit: bool,
    /// Set by the OOM watch of a v1 memory cell.
    oom: Arc<AtomicBool>,
    /// The reaper's token of that watch.
    watch: Option<u64>,
    /// `usage_usec` as read at the last command's end.
    cpu_read: u64,
    /// Whether the v1 memory peak is to be reset before the next command.
    reset_peak: bool,
    /// Counter files kept open ([`Kept`]).
    kept: [Option<File>; 4],
}

/// The counter files a cell keeps open.
#[derive(Debug, Clone, Copy)]
enum Kept {
    CpuStat,
    MemoryPeakV1,
    PidsEventsV1,
    OomControlV1,
}

impl Deref for CellSet {
    type Target = Cell;
    fn deref(&self) -> &Cell {
        &self.cell
    }
}

impl CellSet {
    /// What the child needs to enter the cells: the v2 cell open (for
    /// `clone3(CLONE_INTO_CGROUP)`) and the v1 directories it joins. They
    /// are taken, so a start opens no descriptor (a host short of them
    /// still starts commands); [`reopen`](Self::reopen) opens them again
    /// when the cell is kept for the next command.
    pub(crate) fn entering(&mut self) -> io::Result<(File, Vec<File>)> {
        self.reopen()?;
        let open = self.open.take().expect("opened above");
        let v1 = self.v1.iter_mut().filter_map(|c| c.procs.take()).collect();
        Ok((open, v1))
    }

    /// Opens what [`entering`](Self::entering) took, and resets the v1
    /// memory peak for the next command (here, off the way of a start: the
    /// cell is kept after its command's caller was woken).
    pub(crate) fn reopen(&mut self) -> io::Result<()> {
        if std::mem::take(&mut self.reset_peak) {
            if let Some(c) = self.v1_of(Controller::Memory) {
                c.write("memory.max_usage_in_bytes", "0")?;
            }
        }
        if self.open.is_none() {
            self.open = Some(self.cell.open()?);
        }
        for c in &mut self.v1 {
            if c.procs.is_none() {
                c.procs = Some(crate::os::cgroup_v1::open_procs(&c.dir)?);
            }
        }
        Ok(())
    }

    /// Whether it may serve another command.
    pub(crate) fn reusable(&self, budget: &Budget) -> bool {
        !self.used || (!self.hit && budget.place(Controller::Memory) != Some(Place::V2))
    }

    /// Sets `want` on the cell (only what differs from what is set).
    pub(crate) fn set_limits(&mut self, budget: &Budget, want: &Limits) -> io::Result<()> {
        let want = Applied {
            memory: want.memory,
            pids: want.pids.filter(|&n| n > 0),
            cpu: want.cpu,
        };
        if want.memory != self.applied.memory {
            self.set_memory(budget, want.memory)?;
        }
        if want.pids != self.applied.pids {
            let v = want.pids.map_or("max".to_string(), |n| n.to_string());
            match budget.place(Controller::Pids) {
                Some(Place::V2) => self.cell_write("pids.max", &v)?,
                Some(Place::V1(_)) => self
                    .v1_cell(budget, Controller::Pids)?
                    .write("pids.max", &v)?,
                None => {}
            }
        }
        if want.cpu != self.applied.cpu {
            // Thousandths of a CPU times the period in µs, over 1000.
            let quota = want.cpu.map(|m| (m * CPU_PERIOD_US / 1000).max(1000));
            let v2 = quota.map_or(format!("max {CPU_PERIOD_US}"), |q| {
                format!("{q} {CPU_PERIOD_US}")
            });
            let v1 = quota.map_or("-1".to_string(), |q| q.to_string());
            match budget.place(Controller::Cpu) {
                Some(Place::V2) => self.cell_write("cpu.max", &v2)?,
                Some(Place::V1(_)) => {
                    let c = self.v1_cell(budget, Controller::Cpu)?;
                    c.write("cpu.cfs_period_us", &CPU_PERIOD_US.to_string())?;
                    c.write("cpu.cfs_quota_us", &v1)?;
                }
                None => {}
            }
        }
        self.applied = want;
        Ok(())
    }

    /// Readies the cell for its next command: a reused cell's counters are
    /// read (CPU) or reset (v1 memory peak).
    pub(crate) fn begin(&mut self) {
        // A reused cell's CPU count goes on from where its last command's
        // was read, at that command's end (it was empty then, or it would
        // not be reused).
        self.cpu_base = self.cpu_read;
        self.used = true;
    }

    fn set_memory(&mut self, budget: &Budget, bytes: Option<u64>) -> io::Result<()> {
        match budget.place(Controller::Memory) {
            Some(Place::V2) => {
                let v = bytes.map_or("max".to_string(), |b| b.to_string());
                self.cell_write("memory.max", &v)?;
                self.cell_write("memory.swap.max", if bytes.is_some() { "0" } else { "max" })
                    .or_else(ignore_missing)?;
                self.cell_write("memory.oom.group", "1")?;
            }
            Some(Place::V1(_)) => {
                let v = bytes.map_or("-1".to_string(), |b| b.to_string());
                let cell = self.v1_cell(budget, Controller::Memory)?;
                // memsw (memory + swap) may never be below the memory limit:
                // lowered after it, raised before it.
                let memsw = cell.dir.join("memory.memsw.limit_in_bytes").exists();
                if cell.write("memory.limit_in_bytes", &v).is_err() && memsw {
                    cell.write("memory.memsw.limit_in_bytes", &v)?;
                    cell.write("memory.limit_in_bytes", &v)?;
                } else if memsw {
                    cell.write("memory.memsw.limit_in_bytes", &v)?;
                }
                if bytes.is_some() && self.watch.is_none() {
                    self.watch_oom()?;
                }
            }
            None => {}
        }
        Ok(())
    }

    /// Asks the v1 memory cell's OOM events (`cgroup.event_control`) on an
    /// eventfd the reaper thread watches: at the first, the whole tree is
    /// killed through its v2 cell, as v2's `memory.oom.group` would.
    fn watch_oom(&mut self) -> io::Result<()> {
        let cell = self
            .v1_of(Controller::Memory)
            .ok_or_else(|| io::Error::other("no v1 memory cell"))?;
        // SAFETY: a system call without pointers; the descriptor is ours.
        let efd =
            unsafe { nix::libc::eventfd(0, nix::libc::EFD_CLOEXEC | nix::libc::EFD_NONBLOCK) };
        if efd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: just made, owned by nothing else.
        let efd = unsafe { OwnedFd::from_raw_fd(efd) };
        let control = File::open(cell.dir.join("memory.oom_control"))?;
        cell.write(
            "cgroup.event_control",
            &format!("{} {}", efd.as_raw_fd(), control.as_raw_fd()),
        )?;
        drop(control);
        let oom = self.oom.clone();
        let kill = self.cell.clone_ref();
        let reading = efd.try_clone()?;
        let token = reaper::init()?.watch(
            efd,
            Box::new(move || {
                let mut buf = [0u8; 8];
                let _ = nix::unistd::read(&reading, &mut buf);
                // The event also comes when the cgroup is removed: only a
                // cell that is still populated is out of memory.
                if kill.populated() {
                    oom.store(true, Ordering::SeqCst);
                    kill.kill();
                }
            }),
        )?;
        self.watch = Some(token);
        Ok(())
    }

    /// The v1 cell of `c`, made at first need.
    fn v1_cell(&mut self, budget: &Budget, c: Controller) -> io::Result<&V1Cell> {
        if let Some(i) = self.v1.iter().position(|v| v.controller == c) {
            return Ok(&self.v1[i]);
        }
        let Some(Place::V1(j)) = budget.place(c) else {
            return Err(io::Error::other("no v1 hierarchy"));
        };
        let name = self.cell.name().to_os_string();
        let made = budget.v1[j].cell(&name)?;
        self.v1.push(made);
        Ok(self.v1.last().expect("just pushed"))
    }

    fn v1_of(&self, c: Controller) -> Option<&V1Cell> {
        self.v1.iter().find(|v| v.controller == c)
    }

    fn cell_write(&self, name: &str, value: &str) -> io::Result<()> {
        std::fs::write(self.cell.path().join(name), value)
    }

    fn cell_read(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.cell.path().join(name)).ok()
    }

    fn cpu_usec(&mut self) -> Option<u64> {
        field(&self.kept_read(Kept::CpuStat)?, "usage_usec")
    }

    /// A counter file, read through a descriptor kept from its first read
    /// on: a read at every command's end costs no path lookup.
    fn kept_read(&mut self, which: Kept) -> Option<String> {
        let i = which as usize;
        if self.kept[i].is_none() {
            let path = match which {
                Kept::CpuStat => self.cell.path().join("cpu.stat"),
                Kept::MemoryPeakV1 => self
                    .v1_of(Controller::Memory)?
                    .dir
                    .join("memory.max_usage_in_bytes"),
                Kept::PidsEventsV1 => self.v1_of(Controller::Pids)?.dir.join("pids.events"),
                Kept::OomControlV1 => self
                    .v1_of(Controller::Memory)?
                    .dir
                    .join("memory.oom_control"),
            };
            self.kept[i] = File::open(path).ok();
        }
        let mut buf = [0u8; 1024];
        let n = std::os::unix::fs::FileExt::read_at(self.kept[i].as_ref()?, &mut buf, 0).ok()?;
        Some(String::from_utf8_lossy(&buf[..n]).into_owned())
    }

    /// What the command cost and which limit it hit, read when its leader
    /// was reaped (`leader`: the leader's own usage).
    pub(crate) fn cost(&mut self, budget: &Budget, leader: Rusage) -> Usage {
        let usec = self.cpu_usec();
        self.cpu_read = usec.unwrap_or(self.cpu_base);
        self.reset_peak = true;
        let cpu = usec.map(|u| Duration::from_micros(u.saturating_sub(self.cpu_base)));
        let (peak, out_of_memory) = match budget.place(Controller::Memory) {
            Some(Place::V2) => {
                let peak = self
                    .cell_read("memory.peak")
                    .and_then(|s| s.trim().parse().ok());
                let events = self.cell_read("memory.events").unwrap_or_default();
                let killed = field(&events, "oom_kill").unwrap_or(0) > 0
                    || field(&events, "oom_group_kill").unwrap_or(0) > 0;
                (peak, killed)
            }
            _ => match self.v1_of(Controller::Memory) {
                Some(_) => (
                    self.kept_read(Kept::MemoryPeakV1)
                        .and_then(|s| s.trim().parse().ok()),
                    // The watch's flag, or the kernel's count of its kills
                    // (the event may still be on its way to the watch).
                    self.oom.load(Ordering::SeqCst)
                        || self
                            .kept_read(Kept::OomControlV1)
                            .and_then(|s| field(&s, "oom_kill"))
                            .unwrap_or(0)
                            > 0,
                ),
                None => (None, false),
            },
        };
        let pids_events = match budget.place(Controller::Pids) {
            Some(Place::V2) => self.cell_read("pids.events"),
            Some(Place::V1(_)) => self.kept_read(Kept::PidsEventsV1),
            None => None,
        };
        let pids_hit = pids_events.and_then(|e| field(&e, "max")).unwrap_or(0) > 0;
        let out_of_memory = out_of_memory.then_some(self.applied.memory).flatten();
        let pids_reached = pids_hit.then_some(self.applied.pids).flatten();
        if out_of_memory.is_some() || pids_reached.is_some() {
            self.hit = true;
        }
        Usage {
            wall: Duration::ZERO,
            cpu: cpu.or(Some(leader.cpu)),
            cpu_of_tree: cpu.is_some(),
            memory_of_tree: peak.is_some(),
            peak_memory: peak.or(Some(leader.max_rss)),
            out_of_memory,
            pids_reached,
        }
    }

    /// Removes the cell, then its v1 directories (empty once it is);
    /// fails (EBUSY) while anything is in it.
    pub(crate) fn remove(&self) -> io::Result<()> {
        self.cell.remove()?;
        for c in &self.v1 {
            let _ = c.remove();
        }
        Ok(())
    }
}

impl Drop for CellSet {
    fn drop(&mut self) {
        if let (Some(t), Some(r)) = (self.watch, reaper::get()) {
            r.unwatch(t);
        }
    }
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

#[cfg(test)]
mod tests;
