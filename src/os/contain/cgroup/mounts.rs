//! Where this process's cgroups are, for cgroup v2 and for each v1
//! controller alike: the hierarchy's mount in `/proc/self/mountinfo`
//! (`proc(5)`: root and mount point in fields 4 and 5, then, after ` - `,
//! the filesystem type and the super options, where a v1 hierarchy lists
//! its controllers) and this process's path in it from `/proc/self/cgroup`
//! (`0::PATH` for v2, `N:CONTROLLERS:PATH` for v1). Nothing assumes
//! `/sys/fs/cgroup`, which on a hybrid layout holds the v1 controllers,
//! with v2 at `.../unified`.
//!
//! Also the directory chores both versions share: removing a cgroup (with
//! whatever a command made inside it), removing a jail with its cells, and
//! telling a live owner's jail from one a dead owner left: the owner holds
//! a shared `flock(2)` on its jail's directory for as long as it lives,
//! which no pid namespace hides (a pid can be another namespace's).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// A cgroup hierarchy: the unified one (v2), or the v1 one that has a
/// controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hierarchy<'a> {
    V2,
    V1(&'a str),
}

/// This process's cgroup directory in `hierarchy`, if it is mounted.
pub(crate) fn own_cgroup(hierarchy: Hierarchy<'_>) -> Option<PathBuf> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    locate(&mountinfo, &cgroups, hierarchy)
}

/// The directory of our cgroup in `hierarchy`, from the text of
/// `mountinfo` and `/proc/self/cgroup`.
fn locate(mountinfo: &str, cgroups: &str, hierarchy: Hierarchy<'_>) -> Option<PathBuf> {
    let (root, mountpoint) = mountinfo.lines().find_map(|l| mount(l, hierarchy))?;
    let path = cgroups.lines().find_map(|l| membership(l, hierarchy))?;
    // Under a cgroup namespace the mount's root and our path are both
    // relative to the namespace; outside one the root is "/".
    let rel = path.strip_prefix(root.as_str()).unwrap_or(path);
    Some(mountpoint.join(rel.trim_start_matches('/')))
}

/// (root, mount point) of a `mountinfo` line that mounts `hierarchy`.
fn mount(line: &str, hierarchy: Hierarchy<'_>) -> Option<(String, PathBuf)> {
    let (fields, rest) = line.split_once(" - ")?;
    let mut after = rest.split_whitespace();
    let fstype = after.next()?;
    let found = match hierarchy {
        Hierarchy::V2 => fstype == "cgroup2",
        Hierarchy::V1(controller) => {
            fstype == "cgroup" && after.nth(1)?.split(',').any(|o| o == controller)
        }
    };
    if !found {
        return None;
    }
    let mut f = fields.split_whitespace();
    let root = unescape(f.nth(3)?);
    let mountpoint = unescape(f.next()?);
    Some((root, PathBuf::from(mountpoint)))
}

/// Our path in `hierarchy`, from one line of `/proc/self/cgroup`.
fn membership<'a>(line: &'a str, hierarchy: Hierarchy<'_>) -> Option<&'a str> {
    let mut parts = line.splitn(3, ':');
    let (id, list, path) = (parts.next()?, parts.next()?, parts.next()?);
    let found = match hierarchy {
        Hierarchy::V2 => id == "0" && list.is_empty(),
        Hierarchy::V1(controller) => list.split(',').any(|c| c == controller),
    };
    found.then_some(path)
}

/// `mountinfo` writes space, tab, newline and backslash as `\ooo`.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(u8::is_ascii_digit) {
            let n = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(n);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Removes the cgroup `dir`, and the cgroups a command made inside it (a
/// root command without the sandbox may: `rmdir` does not recurse, and
/// one left inside kept the cell, and its jail, for good); one already
/// gone is no error. Fails (EBUSY) while a process is in any of them.
pub(crate) fn remove(dir: &Path) -> io::Result<()> {
    match rmdir(dir) {
        // Children first (the usual cell has none, and costs one rmdir);
        // then once more, whether they all went or not. (cgroupfs says
        // EBUSY; another file system ENOTEMPTY.)
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(nix::libc::EBUSY | nix::libc::ENOTEMPTY)
            ) && has_children(dir) =>
        {
            remove_children(dir);
            rmdir(dir)
        }
        other => other,
    }
}

/// `rmdir(2)` of a cgroup; one already gone is no error.
fn rmdir(dir: &Path) -> io::Result<()> {
    match std::fs::remove_dir(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Whether the cgroup `dir` has cgroups under it.
fn has_children(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut entries| {
        entries.any(|e| e.is_ok_and(|e| e.file_type().is_ok_and(|t| t.is_dir())))
    })
}

/// Removes every cgroup under `dir`, depth first.
fn remove_children(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                let _ = remove(&e.path());
            }
        }
    }
}

/// Removes every cgroup under `dir`, then `dir`: a jail and its cells,
/// each empty by now (what still holds a process stays).
pub(crate) fn remove_with_cells(dir: &Path) {
    remove_children(dir);
    let _ = remove(dir);
}

/// Opens the jail `dir` and takes a shared lock on it, held as long as the
/// file is: the sign that its owner lives.
pub(crate) fn hold(dir: &Path) -> io::Result<File> {
    let file = File::open(dir)?;
    flock(&file, nix::libc::LOCK_SH)?;
    Ok(file)
}

/// `flock(2)` without waiting.
fn flock(file: &File, how: nix::libc::c_int) -> io::Result<()> {
    // SAFETY: flock on a descriptor we own; integers only.
    let ret = unsafe { nix::libc::flock(file.as_raw_fd(), how | nix::libc::LOCK_NB) };
    if ret == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The owner pid in a jail's name (`bashtools-PID-N-HEX16`).
fn jail_owner(name: &str) -> Option<u32> {
    let mut parts = name.strip_prefix("bashtools-")?.split('-');
    let pid = parts.next()?.parse().ok()?;
    parts.next()?.parse::<u64>().ok()?;
    let random = parts.next()?;
    let hex = random.len() == 16 && random.bytes().all(|b| b.is_ascii_hexdigit());
    (hex && parts.next().is_none()).then_some(pid)
}

/// The jails under `base` that dead owners left, besides `mine`: a name of
/// our pattern, an owner pid that is no process here, and no lock held on
/// it. Each comes with an exclusive lock on it, held while it is swept, so
/// two owners starting at once never sweep one together (nor a starting
/// owner's, which holds its lock before anything is in it).
pub(crate) fn stale_jails(base: &Path, mine: &Path) -> Vec<(PathBuf, File)> {
    let Ok(entries) = std::fs::read_dir(base) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str().and_then(jail_owner)?;
            let path = entry.path();
            let dead = !Path::new(&format!("/proc/{pid}")).exists();
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if path == mine || !dead || !is_dir {
                return None;
            }
            let file = File::open(&path).ok()?;
            flock(&file, nix::libc::LOCK_EX).ok()?;
            Some((path, file))
        })
        .collect()
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
0::/user.slice/x
";

    #[test]
    fn each_controllers_hierarchy_and_our_place_in_it_are_found() {
        let at = |c| locate(MOUNTINFO, CGROUPS, Hierarchy::V1(c));
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

    #[test]
    fn a_hybrid_layouts_cgroup2_mount_and_our_place_in_it_are_found() {
        assert_eq!(
            locate(MOUNTINFO, CGROUPS, Hierarchy::V2),
            Some(PathBuf::from("/sys/fs/cgroup/unified/user.slice/x"))
        );
        let v1_only = MOUNTINFO.lines().take(4).collect::<Vec<_>>().join("\n");
        assert_eq!(locate(&v1_only, CGROUPS, Hierarchy::V2), None);
    }

    #[test]
    fn under_a_cgroup_namespace_the_path_is_taken_relative_to_the_mount_root() {
        let mountinfo = "41 31 0:38 /ns /sys/fs/cgroup rw - cgroup2 cgroup2 rw";
        assert_eq!(
            locate(mountinfo, "0::/ns/job", Hierarchy::V2),
            Some(PathBuf::from("/sys/fs/cgroup/job"))
        );
    }

    #[test]
    fn a_jails_owner_is_read_from_its_name() {
        assert_eq!(jail_owner("bashtools-123-0-0123456789abcdef"), Some(123));
        assert_eq!(jail_owner("bashtools-123-0-0123"), None);
        assert_eq!(jail_owner("bashtools-123-0-0123456789abcdef-1"), None);
        assert_eq!(jail_owner("bashtools-x-0-0123456789abcdef"), None);
        assert_eq!(jail_owner("run-1"), None);
    }

    #[test]
    fn a_cgroup_that_cannot_go_is_given_up_not_retried_for_ever() {
        // A plain directory stands in (ENOTEMPTY for EBUSY): its child
        // holds a file, so neither goes, and the removal must end with an
        // error instead of trying again for ever.
        let dir = std::env::temp_dir().join(format!("bashtools-mounts-{}", std::process::id()));
        let child = dir.join("child");
        std::fs::create_dir_all(&child).unwrap();
        std::fs::write(child.join("held"), b"x").unwrap();
        assert!(remove(&dir).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn escaped_mount_points_are_read_back() {
        assert_eq!(unescape(r"/a\040b"), "/a b");
        assert_eq!(unescape(r"/plain"), "/plain");
    }
}
