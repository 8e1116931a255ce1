//! One command's cells: its v2 cell and, on a hybrid host, its v1
//! directories, the limits written to them, and what the command cost,
//! read back when it ends (the module doc of `budget` says how).

use super::*;
use crate::os::contain::cgroup::v1::V1Members;

/// The most memory a cell may still be charged with to be handed to the
/// next command: what the page cache of a short command leaves, not a
/// file kept in a tmpfs.
const REUSE_CHARGE: u64 = 4 << 20;

/// One command's cgroups: its v2 cell and, on a hybrid host, its v1
/// directories; and the limits set on them.
#[derive(Debug)]
pub(crate) struct CellSet {
    pub(super) cell: Cell,
    pub(super) open: Option<File>,
    pub(super) v1: Vec<V1Cell>,
    pub(super) applied: Applied,
    /// `usage_usec` of `cpu.stat` when the command came in (a reused cell).
    pub(super) cpu_base: u64,
    /// Whether a command has run in it.
    pub(super) used: bool,
    /// Whether its command hit a limit: it is never reused.
    pub(super) hit: bool,
    /// Set by the OOM watch of a v1 memory cell.
    pub(super) oom: Arc<AtomicBool>,
    /// The reaper's token of that watch.
    pub(super) watch: Option<u64>,
    /// `usage_usec` as read at the last command's end.
    pub(super) cpu_read: u64,
    /// Whether the v1 memory peak is to be reset before the next command.
    pub(super) reset_peak: bool,
    /// Counter files kept open ([`Kept`]).
    pub(super) kept: [Option<File>; 4],
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
                c.procs = Some(crate::os::contain::cgroup::v1::open_procs(&c.dir)?);
            }
        }
        Ok(())
    }

    /// Whether it may serve another command.
    /// Handles to the command's v1 directories, to stop what left the v2
    /// cell but not them.
    pub(crate) fn v1_members(&self) -> Vec<V1Members> {
        self.v1.iter().map(V1Cell::members).collect()
    }

    pub(crate) fn reusable(&self, budget: &Budget) -> bool {
        !self.used
            || (!self.hit
                && budget.place(Controller::Memory) != Some(ControllerHome::V2)
                && self.charge_is_low())
    }

    /// Whether the memory still charged to the cell (v1) is near zero: a
    /// file its command left in a tmpfs (`/dev/shm`) stays charged to it,
    /// and the next command would start with that much of its limit gone.
    /// No memory directory: nothing charged that a limit counts.
    fn charge_is_low(&self) -> bool {
        let Some(memory) = self.v1_of(Controller::Memory) else {
            return true;
        };
        std::fs::read_to_string(memory.dir.join("memory.usage_in_bytes"))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .is_some_and(|bytes| bytes <= REUSE_CHARGE)
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
                Some(ControllerHome::V2) => self.cell_write("pids.max", &v)?,
                Some(ControllerHome::V1(_)) => self
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
                Some(ControllerHome::V2) => self.cell_write("cpu.max", &v2)?,
                Some(ControllerHome::V1(_)) => {
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
            Some(ControllerHome::V2) => {
                let v = bytes.map_or("max".to_string(), |b| b.to_string());
                self.cell_write("memory.max", &v)?;
                self.cell_write("memory.swap.max", if bytes.is_some() { "0" } else { "max" })
                    .or_else(ignore_missing)?;
                self.cell_write("memory.oom.group", "1")?;
            }
            Some(ControllerHome::V1(_)) => {
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
        let Some(ControllerHome::V1(j)) = budget.place(c) else {
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
            Some(ControllerHome::V2) => {
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
            Some(ControllerHome::V2) => self.cell_read("pids.events"),
            Some(ControllerHome::V1(_)) => self.kept_read(Kept::PidsEventsV1),
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
