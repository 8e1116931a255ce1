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

/// This process's cgroup in the v1 hierarchy of `controller`, if one is
/// mounted.
pub(crate) fn own_cgroup(controller: Controller) -> Option<PathBuf> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    locate(&mountinfo, &cgroups, controller.name())
}

/// The directory of our cgroup of `controller`, from the text of
/// `mountinfo` and `/proc/self/cgroup`.
fn locate(mountinfo: &str, cgroups: &str, controller: &str) -> Option<PathBuf> {
    let (root, mountpoint) = mountinfo.lines().find_map(|l| v1_mount(l, controller))?;
    let path = cgroups.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, list, path) = (parts.next()?, parts.next()?, parts.next()?);
        list.split(',').any(|c| c == controller).then_some(path)
    })?;
    let rel = path.strip_prefix(root.as_str()).unwrap_or(path);
    Some(mountpoint.join(rel.trim_start_matches('/')))
}

/// (root, mount point) of a `mountinfo` line of a v1 hierarchy that has
/// `controller` among its super options.
fn v1_mount(line: &str, controller: &str) -> Option<(String, PathBuf)> {
    let (fields, rest) = line.split_once(" - ")?;
    let mut after = rest.split_whitespace();
    if after.next()? != "cgroup" {
        return None;
    }
    let options = after.nth(1)?;
    if !options.split(',').any(|o| o == controller) {
        return None;
    }
    let mut f = fields.split_whitespace();
    let root = super::cgroup::unescape(f.nth(3)?);
    let mountpoint = super::cgroup::unescape(f.next()?);
    Some((root, PathBuf::from(mountpoint)))
}

/// One owner's directory in the v1 hierarchy of one controller.
#[derive(Debug)]
pub(crate) struct V1Jail {
    controller: Controller,
    dir: PathBuf,
}

impl V1Jail {
    /// Makes `name` under our own cgroup of `controller`.
    pub(crate) fn create(
        controller: Controller,
        name: &str,
        before: &dyn Fn(&Path),
    ) -> io::Result<V1Jail> {
        let base = own_cgroup(controller).ok_or_else(|| {
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
        Ok(V1Jail { controller, dir })
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
        if let Ok(entries) = std::fs::read_dir(&self.dir) {
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    let _ = std::fs::remove_dir(e.path());
                }
            }
        }
        let _ = std::fs::remove_dir(&self.dir);
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
        match std::fs::remove_dir(&self.dir) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }
}

/// The `cgroup.procs` of the cgroup `dir`, open for writing.
pub(crate) fn open_procs(dir: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("cgroup.procs"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const CGROUPS: &str = "\
8:pids:/
4:memory:/svc/job 1
2:cpu,cpuacct:/a
0::/
";

    #[test]
    fn each_controllers_hierarchy_and_our_place_in_it_are_found() {
        let at = |c| locate(MOUNTINFO, CGROUPS, c);
        assert_eq!(
            at("memory"),
            Some(PathBuf::from("/sys/fs/cgroup/memory/svc/job 1"))
        );
        assert_eq!(at("pids"), Some(PathBuf::from("/sys/fs/cgroup/pids")));
        assert_eq!(
            at("cpu"),
            Some(PathBuf::from("/sys/fs/cgroup/cpu,cpuacct/a"))
        );
        // `cpuacct` is not `cpu`, and the v2 line is no v1 hierarchy.
        assert_eq!(at("hugetlb"), None);
    }
}
