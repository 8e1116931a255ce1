//! The cgroup v1 controllers of a hybrid host (`cgroups(7)`, "CGROUPS
//! VERSION 1"): where the v2 hierarchy has no memory, pids or cpu
//! controller but a v1 hierarchy mounts it, a command's budget is set
//! there, in a directory of its own beside its v2 cell.
//!
//! Each v1 hierarchy is found in `/proc/self/mountinfo` (type `cgroup`,
//! the controller among the super options) and this process's place in it
//! in `/proc/self/cgroup` (`N:CONTROLLERS:PATH`). Under that place, one
//! directory per owner with the v2 jail's name, one per command under it
//! with the v2 cell's name. A v1 cgroup cannot be born into: the child
//! writes `0` to each one's `cgroup.procs` before its exec (`launch/`),
//! through the file the parent opened (so the child opens nothing: a host
//! short of descriptors still starts commands).

use std::fs::{DirBuilder, File};
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use super::mounts::{self, own_cgroup, Hierarchy};

/// A controller a budget uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Controller {
    Memory,
    Pids,
    Cpu,
}

impl Controller {
    pub(crate) const ALL: [Controller; 3] = [Controller::Memory, Controller::Pids, Controller::Cpu];

    /// Its name in `cgroup.controllers`, mount options and `/proc/PID/cgroup`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Controller::Memory => "memory",
            Controller::Pids => "pids",
            Controller::Cpu => "cpu",
        }
    }
}

/// One owner's directory in the v1 hierarchy of one controller.
#[derive(Debug)]
pub(crate) struct V1Jail {
    controller: Controller,
    dir: PathBuf,
    /// Its directory, with a shared lock held (`mounts::hold`).
    _held: File,
}

impl V1Jail {
    /// Makes `name` under our own cgroup of `controller`.
    pub(crate) fn create(
        controller: Controller,
        name: &str,
        before: &dyn Fn(&Path),
    ) -> io::Result<V1Jail> {
        let base = own_cgroup(Hierarchy::V1(controller.name())).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "no cgroup v1 hierarchy has the {} controller",
                    controller.name()
                ),
            )
        })?;
        let dir = base.join(name);
        before(&dir);
        DirBuilder::new().mode(0o755).create(&dir)?;
        let held = match mounts::hold(&dir) {
            Ok(held) => held,
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                return Err(e);
            }
        };
        // What dead owners left: by now the v2 sweep has killed their
        // processes; an empty directory goes, a busy one stays.
        for (stale, _locked) in mounts::stale_jails(&base, &dir) {
            mounts::remove_with_cells(&stale);
        }
        Ok(V1Jail {
            controller,
            dir,
            _held: held,
        })
    }

    /// The command's directory `name` (the v2 cell's name), made and open.
    pub(crate) fn cell(&self, name: &std::ffi::OsStr) -> io::Result<V1Cell> {
        let dir = self.dir.join(name);
        DirBuilder::new().mode(0o755).create(&dir)?;
        match open_procs(&dir) {
            Ok(procs) => Ok(V1Cell {
                controller: self.controller,
                dir,
                procs: Some(procs),
            }),
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                Err(e)
            }
        }
    }

    /// Removes every command's directory and the jail (each empty by now:
    /// a v1 directory with a process in it stays).
    pub(crate) fn remove_all(&self) {
        mounts::remove_with_cells(&self.dir);
    }
}

/// One command's directory in one v1 hierarchy.
#[derive(Debug)]
pub(crate) struct V1Cell {
    pub(crate) controller: Controller,
    pub(crate) dir: PathBuf,
    /// Its `cgroup.procs`, open for writing: the child joins through this
    /// (taken by a command's start, opened again when the cell is kept for
    /// reuse).
    pub(crate) procs: Option<File>,
}

impl V1Cell {
    /// Writes `value` to the cell's file `name`.
    pub(crate) fn write(&self, name: &str, value: &str) -> io::Result<()> {
        std::fs::write(self.dir.join(name), value)
    }

    /// Removes the directory; fails (EBUSY) while a process is in it.
    pub(crate) fn remove(&self) -> io::Result<()> {
        mounts::remove(&self.dir)
    }
}

impl V1Cell {
    /// A handle to what is in the directory, to stop it.
    pub(crate) fn members(&self) -> V1Members {
        V1Members {
            controller: self.controller,
            dir: self.dir.clone(),
        }
    }
}

/// The processes of one command's v1 directory. A command that left its v2
/// cell (root, no sandbox, no `nsdelegate`) is still here, in each v1
/// hierarchy of a hybrid host, and is stopped through it.
#[derive(Debug)]
pub(crate) struct V1Members {
    controller: Controller,
    dir: PathBuf,
}

impl V1Members {
    /// Sends `signal` to every process here that `cell` (the command's v2
    /// cell, signalled on its own) does not hold. Each through a pidfd
    /// opened before its membership is checked, as for a v2 cell.
    pub(crate) fn signal_escaped(&self, signal: nix::sys::signal::Signal, cell: &super::Cell) {
        let Ok(procs) = std::fs::read_to_string(self.dir.join("cgroup.procs")) else {
            return;
        };
        for pid in procs.lines().filter_map(|l| l.trim().parse::<u32>().ok()) {
            let Some(fd) = crate::os::sys::pidfd_open(pid) else {
                continue;
            };
            if self.holds(pid) && !cell.holds(pid) {
                crate::os::sys::pidfd_signal(&fd, signal);
            }
        }
    }

    /// Whether `/proc/PID/cgroup` puts `pid` in this directory.
    fn holds(&self, pid: u32) -> bool {
        let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/cgroup")) else {
            return false;
        };
        s.lines().any(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, list, path) = (parts.next(), parts.next(), parts.next());
            let ours = list.is_some_and(|l| l.split(',').any(|c| c == self.controller.name()));
            let path = path.unwrap_or("").trim_end().trim_start_matches('/');
            ours && !path.is_empty() && self.dir.ends_with(path)
        })
    }
}

/// The `cgroup.procs` of the cgroup `dir`, open for writing.
pub(crate) fn open_procs(dir: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("cgroup.procs"))
}
