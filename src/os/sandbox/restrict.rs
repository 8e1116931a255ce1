//! The restrictions a sandboxed child applies to itself, last before its
//! exec: `no_new_privs`, no capabilities, a seccomp filter, and the
//! Landlock ruleset (`landlock(7)`) the parent prepared once as a file
//! descriptor (see `rules.rs`).
//!
//! - **`no_new_privs`** (`prctl(2)`): a set-user-ID program gains nothing;
//!   it also lets an unprivileged child install the filter and the ruleset.
//! - **Capabilities** (`capabilities(7)`): the ambient set cleared, the
//!   bounding set emptied (when the host may: `CAP_SETPCAP`), and the
//!   effective, permitted and inheritable sets zeroed with `capset(2)`. A
//!   command run by root keeps uid 0 — files root owns are still its own —
//!   but no privilege beyond that: no raw sockets, no `TIOCSTI` into other
//!   terminals, no mounts, no module loading.
//! - **seccomp**: the filter of `seccomp.rs`, for what Landlock does not
//!   cover.
//! - **Landlock**: `landlock_restrict_self(2)` on the prepared ruleset.
//!   Each command becomes a domain of its own: it cannot signal, trace or
//!   open the descriptors of any process outside it — the host, or
//!   another command.

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd, RawFd};

use nix::libc;

use super::rules::Rules;
use super::seccomp::filter;
use super::view::View;
use super::SandboxStep as Step;
use crate::os::sys::{errno, has_effective};

/// What a sandbox applies to each child; built once, when the tools are.
#[derive(Debug)]
pub(crate) struct Restrictions {
    /// The Landlock rules each command's ruleset is made of; `None` where
    /// the kernel has no Landlock.
    rules: Option<Rules>,
    /// Whether the bounding set can be emptied (the host has
    /// `CAP_SETPCAP`); without it, the bounding set grants nothing under
    /// `no_new_privs` anyway.
    drop_bounding: bool,
    /// The seccomp program.
    filter: Vec<libc::sock_filter>,
    /// The read-only view of the filesystem, where one could be made.
    view: Option<View>,
}

/// `PR_CAP_AMBIENT` and its `PR_CAP_AMBIENT_CLEAR_ALL`, and
/// `PR_CAPBSET_DROP`, from `<linux/prctl.h>`.
const PR_CAP_AMBIENT: libc::c_int = 47;
const PR_CAP_AMBIENT_CLEAR_ALL: libc::c_ulong = 4;
const PR_CAPBSET_DROP: libc::c_int = 24;
/// `_LINUX_CAPABILITY_VERSION_3`.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;
/// `CAP_SETPCAP`.
const CAP_SETPCAP: u32 = 8;
/// The highest capability number any kernel has had a use for, with room.
const LAST_CAP: libc::c_ulong = 63;

impl Restrictions {
    /// The restrictions of a sandbox; `network_off`: IPv4 and IPv6 sockets
    /// other than TCP are refused too. Each command's Landlock ruleset is its own
    /// (`ChildSetup::restrict` of `os::launch`).
    pub(crate) fn new(rules: Option<Rules>, network_off: bool, view: Option<View>) -> Restrictions {
        Restrictions {
            rules,
            drop_bounding: has_effective(CAP_SETPCAP),
            filter: filter(network_off),
            view,
        }
    }

    /// In the child, before its descriptors are moved (the view's are the
    /// host's) and before its `chdir` (entering sets the directory to the
    /// view's root): enters the read-only view, if there is one.
    pub(crate) fn enter_view(&self) -> Result<(), (Step, i32)> {
        self.view.as_ref().map_or(Ok(()), View::enter)
    }

    /// In the host, before a command starts: its Landlock ruleset, with
    /// write access to `files` (its own output file). `None` without
    /// Landlock.
    pub(crate) fn ruleset_for(&self, files: &[BorrowedFd<'_>]) -> io::Result<Option<OwnedFd>> {
        self.rules.as_ref().map(|r| r.ruleset(files)).transpose()
    }

    /// Prepares the next command's ruleset while this one runs.
    pub(crate) fn make_spare(&self) {
        if let Some(r) = &self.rules {
            r.make_spare();
        }
    }

    /// In the child: applies everything, in order; the ruleset is the
    /// child's descriptor `ruleset` (it may have been moved). `Err` names
    /// the step that failed and its errno. Async-signal-safe: raw system
    /// calls on values prepared by [`Restrictions::new`], structs on the
    /// stack.
    pub(crate) fn apply(&self, ruleset: Option<RawFd>) -> Result<(), (Step, i32)> {
        // SAFETY: prctl on integers only; sets this child's no_new_privs.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err((Step::NoNewPrivs, errno()));
        }
        // EINVAL: a kernel before ambient capabilities (4.3), none to clear.
        // SAFETY: prctl on integers only; clears this child's ambient set.
        if unsafe { libc::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) } != 0
            && errno() != libc::EINVAL
        {
            return Err((Step::Capabilities, errno()));
        }
        if self.drop_bounding {
            for cap in 0..=LAST_CAP {
                // EINVAL past the kernel's last capability: done.
                // SAFETY: prctl on integers only; changes this child's credentials.
                if unsafe { libc::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) } != 0 {
                    if errno() == libc::EINVAL {
                        break;
                    }
                    return Err((Step::Capabilities, errno()));
                }
            }
        }
        let header = CapHeader {
            version: CAPABILITY_VERSION_3,
            pid: 0,
        };
        let data = [CapData::default(); 2];
        // SAFETY: capset reads a v3 header and two data structs, both on
        // this stack and of the sizes the kernel expects.
        if unsafe { libc::syscall(libc::SYS_capset, &header, data.as_ptr()) } != 0 {
            return Err((Step::Capabilities, errno()));
        }
        let program = libc::sock_fprog {
            len: self.filter.len() as u16,
            filter: self.filter.as_ptr() as *mut libc::sock_filter,
        };
        // SPEC_ALLOW: a kernel that forces the Speculative Store Bypass
        // mitigation on seccomp'd processes (before 5.16) would slow the
        // whole command for a leak within its own memory, which is all it
        // could reach anyway. EINVAL: a kernel before 4.17, without it.
        // SAFETY: the program points at `self.filter`, alive and unchanged
        // for the call; the kernel copies it.
        let install = |flags: libc::c_ulong| unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                flags,
                &program as *const libc::sock_fprog,
            )
        };
        if install(libc::SECCOMP_FILTER_FLAG_SPEC_ALLOW) != 0
            && (errno() != libc::EINVAL || install(0) != 0)
        {
            return Err((Step::Seccomp, errno()));
        }
        if let Some(ruleset) = ruleset {
            // SAFETY: integers only: a ruleset descriptor this child holds.
            if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0) } != 0 {
                return Err((Step::Landlock, errno()));
            }
        }
        Ok(())
    }
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}
