//! The read-only view of a sandbox: one mount namespace (`mount_namespaces(7)`)
//! in which every mount is read-only but the write roots, made once when
//! the tools are built and entered by each sandboxed command with
//! `setns(2)` before its `chdir`.
//!
//! Why: Landlock refuses writing, creating, removing and renaming outside
//! the write roots, but it has no right for a file's metadata, so `chmod`,
//! `chown`, `utime` and `setxattr` of a file the command's user owns would
//! succeed anywhere. A read-only mount refuses all four (`EROFS`), for
//! root too.
//!
//! How the namespace is made: a helper forked from the host unshares a
//! mount namespace (with a user namespace of its own first when the host
//! lacks `CAP_SYS_ADMIN`, mapping only its own uid and gid), makes every
//! mount a slave (nothing propagates back to the host), clones each write
//! root's mount tree (`open_tree(2)`) while it is still writable, sets the
//! whole tree read-only (`mount_setattr(2)`, recursive), and moves the
//! clones back onto their paths (`move_mount(2)`). The host keeps the
//! namespaces open by descriptor; the helper then exits.
//!
//! The helper is the one process of ours the launcher (`os::launch`) does
//! not make, for two reasons. It runs no program: it makes mounts, reports
//! and waits to be killed, so none of a `ChildSetup`'s steps (session,
//! descriptors, directory, dispositions, restrictions, `execve`) apply to
//! it. And the launcher sits above the sandbox — it applies the
//! restrictions this module builds — so going through it would turn the
//! order of the two around. A plain `clone(SIGCHLD)` with every signal
//! blocked, reaped here before `make` returns, is all it needs.
//!
//! What a command sees in it: the same paths and files. Writes outside the
//! write roots fail with `Read-only file system` rather than `Permission
//! denied`. Without `CAP_SYS_ADMIN` it also runs in the user namespace, in
//! which the only ids that exist are its own: files of other users show
//! as owned by the overflow id (`nobody`), and so do its supplementary
//! groups; what it may open is unchanged (the kernel checks the real ids).
//! A mount the host makes after the build propagates into the view where
//! the host's mounts are shared, and is then writable to metadata changes
//! (Landlock still refuses writing its files); where they are private it
//! does not appear. A filesystem the host unmounts stays pinned by the
//! view where they are private.
//!
//! Making it needs `open_tree`, `move_mount` and `mount_setattr` (Linux
//! 5.12) and either `CAP_SYS_ADMIN` or unprivileged user namespaces; where
//! one is missing there is no view, and
//! [`SandboxStatus::read_only_view`](crate::SandboxStatus::read_only_view)
//! says so.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::libc;

use super::SandboxStep as Step;
use crate::os::sys::{errno, has_effective, reap_failed, SignalsBlocked, CAP_SYS_ADMIN};

/// `OPEN_TREE_CLONE`, `AT_RECURSIVE`, `MOVE_MOUNT_F_EMPTY_PATH` and
/// `MOUNT_ATTR_RDONLY` from `<linux/mount.h>`.
const OPEN_TREE_CLONE: libc::c_uint = 1;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 4;
const MOUNT_ATTR_RDONLY: u64 = 1;

/// `struct mount_attr` (`MOUNT_ATTR_SIZE_VER0`).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// The namespaces of the view, open; entered by each sandboxed command.
#[derive(Debug)]
pub(crate) struct View {
    /// The user namespace that owns the mount namespace, when the host
    /// had no `CAP_SYS_ADMIN` to make one without.
    user: Option<OwnedFd>,
    mount: OwnedFd,
}

/// Where the helper stopped, as it reports it (the errno follows).
#[derive(Debug, Clone, Copy)]
#[repr(i32)]
enum Stage {
    Unshare = 1,
    Ids,
    Slave,
    Clone,
    ReadOnly,
    Move,
}

impl Stage {
    fn name(n: i32) -> &'static str {
        match n {
            1 => "unshare",
            2 => "map its ids",
            3 => "make the mounts slaves",
            4 => "clone a write root",
            5 => "make the mounts read-only",
            6 => "mount a write root",
            _ => "report",
        }
    }
}

/// Everything the helper needs, made before the fork.
struct Plan {
    user: bool,
    setgroups: CString,
    uid_map: (CString, Vec<u8>),
    gid_map: (CString, Vec<u8>),
    roots: Vec<CString>,
}

impl View {
    /// A view in which `writable` (directories) stay writable and every
    /// other mount is read-only. `Err` says which stage failed; the sandbox
    /// then runs without a view.
    pub(crate) fn make<'a>(writable: impl Iterator<Item = &'a Path>) -> io::Result<View> {
        let roots = writable
            .map(|p| CString::new(p.as_os_str().as_bytes()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in a write root"))?;
        if roots.iter().any(|r| r.as_bytes() == b"/") {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the whole filesystem is writable",
            ));
        }
        // SAFETY: plain getters.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let plan = Plan {
            user: !has_effective(CAP_SYS_ADMIN),
            setgroups: c"/proc/self/setgroups".into(),
            uid_map: (
                c"/proc/self/uid_map".into(),
                format!("{uid} {uid} 1\n").into(),
            ),
            gid_map: (
                c"/proc/self/gid_map".into(),
                format!("{gid} {gid} 1\n").into(),
            ),
            roots,
        };
        let mut clones = vec![-1 as RawFd; plan.roots.len()];
        let (report_read, report_write) = pipe()?;
        let blocked = SignalsBlocked::new();
        // SAFETY: a fork (no CLONE_VM): the child runs only `helper`, raw
        // system calls on what `plan` prepared, with every signal blocked,
        // and never returns.
        let pid = unsafe {
            libc::syscall(
                libc::SYS_clone,
                libc::SIGCHLD as libc::c_ulong,
                0usize,
                0usize,
                0usize,
                0usize,
            )
        };
        if pid == 0 {
            helper(&plan, &mut clones, report_write.as_raw_fd());
        }
        let clone_errno = errno();
        drop(blocked);
        if pid < 0 {
            return Err(io::Error::from_raw_os_error(clone_errno));
        }
        let pid = pid as libc::pid_t;
        drop(report_write);
        let mut report = [0i32; 2];
        let got = read_all(report_read.as_raw_fd(), &mut report);
        let opened = if got && report[0] == 0 {
            let ns = |name: &str| {
                std::fs::File::open(format!("/proc/{pid}/ns/{name}")).map(OwnedFd::from)
            };
            let user = if plan.user { Some(ns("user")) } else { None };
            ns("mnt").and_then(|mount| {
                Ok(View {
                    user: user.transpose()?,
                    mount,
                })
            })
        } else if got {
            Err(io::Error::new(
                io::Error::from_raw_os_error(report[1]).kind(),
                format!(
                    "cannot {}: {}",
                    Stage::name(report[0]),
                    io::Error::from_raw_os_error(report[1])
                ),
            ))
        } else {
            Err(io::Error::other("the helper ended without a report"))
        };
        // SAFETY: our own child, not yet reaped (so its pid is still its).
        unsafe { libc::kill(pid, libc::SIGKILL) };
        reap_failed(pid);
        opened
    }

    /// In the child: enters the view (the user namespace first). The
    /// working directory is the view's root afterwards: `chdir` follows.
    pub(crate) fn enter(&self) -> Result<(), (Step, i32)> {
        if let Some(user) = &self.user {
            // SAFETY: a descriptor of ours; no pointers.
            if unsafe { libc::setns(user.as_raw_fd(), libc::CLONE_NEWUSER) } != 0 {
                return Err((Step::View, errno()));
            }
        }
        // SAFETY: as above.
        if unsafe { libc::setns(self.mount.as_raw_fd(), libc::CLONE_NEWNS) } != 0 {
            return Err((Step::View, errno()));
        }
        Ok(())
    }
}

/// A close-on-exec pipe.
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [-1; 2];
    // SAFETY: an array of two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: two new descriptors of ours.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Reads the helper's report; false if it ended first.
fn read_all(fd: RawFd, report: &mut [i32; 2]) -> bool {
    let want = std::mem::size_of_val(report);
    loop {
        // SAFETY: a buffer of `want` bytes of ours.
        let n = unsafe { libc::read(fd, report.as_mut_ptr().cast(), want) };
        if n >= 0 || errno() != libc::EINTR {
            return n == want as isize;
        }
    }
}

/// The forked helper: makes the view, reports, and holds it until the host
/// has opened its namespaces and kills it. Async-signal-safe: raw system
/// calls on what the parent prepared.
fn helper(plan: &Plan, clones: &mut [RawFd], report: RawFd) -> ! {
    let outcome = build(plan, clones);
    let message: [i32; 2] = match outcome {
        Ok(()) => [0, 0],
        Err((stage, e)) => [stage as i32, e],
    };
    // SAFETY: our own buffer and descriptor. Every signal is blocked, so
    // `pause` returns never: the host's SIGKILL ends the helper.
    unsafe {
        libc::write(
            report,
            message.as_ptr().cast(),
            std::mem::size_of_val(&message),
        );
        if outcome.is_err() {
            libc::_exit(1);
        }
        loop {
            libc::pause();
        }
    }
}

fn build(plan: &Plan, clones: &mut [RawFd]) -> Result<(), (Stage, i32)> {
    let fail = |stage: Stage| (stage, errno());
    let flags = if plan.user {
        libc::CLONE_NEWUSER | libc::CLONE_NEWNS
    } else {
        libc::CLONE_NEWNS
    };
    // Sound throughout: this is the forked helper (its own copy of memory,
    // single-threaded), every pointer is to a NUL-terminated string the
    // parent made or a struct on this stack, alive across each call, and
    // the namespaces changed are the helper's own.
    // SAFETY: integers only; changes only this helper's namespaces.
    if unsafe { libc::unshare(flags) } != 0 {
        return Err(fail(Stage::Unshare));
    }
    if plan.user {
        write_file(&plan.setgroups, b"deny").map_err(|e| (Stage::Ids, e))?;
        write_file(&plan.uid_map.0, &plan.uid_map.1).map_err(|e| (Stage::Ids, e))?;
        write_file(&plan.gid_map.0, &plan.gid_map.1).map_err(|e| (Stage::Ids, e))?;
    }
    let none = std::ptr::null::<libc::c_char>();
    // SAFETY: a static NUL-terminated path and null pointers the call
    // allows (no source, no type, no data for a propagation change).
    if unsafe {
        libc::mount(
            none,
            c"/".as_ptr(),
            none,
            libc::MS_REC | libc::MS_SLAVE,
            std::ptr::null(),
        )
    } != 0
    {
        return Err(fail(Stage::Slave));
    }
    for (root, clone) in plan.roots.iter().zip(clones.iter_mut()) {
        // SAFETY: a NUL-terminated path the parent prepared; the descriptor
        // it returns is kept in `clones` and dies with the helper.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_open_tree,
                libc::AT_FDCWD,
                root.as_ptr(),
                OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint | AT_RECURSIVE,
            )
        };
        if fd < 0 {
            return Err(fail(Stage::Clone));
        }
        *clone = fd as RawFd;
    }
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: a static path and a `struct mount_attr` on this stack, of the
    // size the call is told.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            c"/".as_ptr(),
            AT_RECURSIVE,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if r != 0 {
        return Err(fail(Stage::ReadOnly));
    }
    for (root, &clone) in plan.roots.iter().zip(clones.iter()) {
        // SAFETY: a descriptor from `open_tree` above, an empty static path
        // (with `MOVE_MOUNT_F_EMPTY_PATH`) and a NUL-terminated target.
        let r = unsafe {
            libc::syscall(
                libc::SYS_move_mount,
                clone,
                c"".as_ptr(),
                libc::AT_FDCWD,
                root.as_ptr(),
                MOVE_MOUNT_F_EMPTY_PATH,
            )
        };
        if r != 0 {
            return Err(fail(Stage::Move));
        }
    }
    Ok(())
}

/// Writes `data` to the file at `path` in one call.
fn write_file(path: &CString, data: &[u8]) -> Result<(), i32> {
    // SAFETY: a NUL-terminated path and a buffer of ours; the descriptor
    // is closed before returning.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(errno());
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        let e = errno();
        libc::close(fd);
        if n != data.len() as isize {
            return Err(if n < 0 { e } else { libc::EIO });
        }
    }
    Ok(())
}
