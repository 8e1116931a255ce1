//! The restrictions a sandboxed child applies to itself, last before its
//! exec: `no_new_privs`, no capabilities, a seccomp filter, and the
//! Landlock ruleset (`landlock(7)`) the parent prepared once as a file
//! descriptor (see `sandbox.rs`).
//!
//! - **`no_new_privs`** (`prctl(2)`): a set-user-ID program gains nothing;
//!   it also lets an unprivileged child install the filter and the ruleset.
//! - **Capabilities** (`capabilities(7)`): the ambient set cleared, the
//!   bounding set emptied (when the host may: `CAP_SETPCAP`), and the
//!   effective, permitted and inheritable sets zeroed with `capset(2)`. A
//!   command run by root keeps uid 0 — files root owns are still its own —
//!   but no privilege beyond that: no raw sockets, no `TIOCSTI` into other
//!   terminals, no mounts, no module loading.
//! - **seccomp** (`seccomp(2)`): what Landlock does not cover. `ioctl`s
//!   that push input into a terminal (`TIOCSTI`) or reach the console
//!   (`TIOCLINUX`) fail with EPERM, and so does `io_uring_setup` (io_uring
//!   operations never pass a seccomp filter); with the network off, so
//!   does every IPv4 or IPv6 socket but plain TCP — UDP, ICMP, SCTP,
//!   MPTCP, raw — since Landlock's network rules see only TCP. A system
//!   call of another ABI (32-bit, x32) fails with ENOSYS, since the filter
//!   reads the native numbers.
//! - **Landlock**: `landlock_restrict_self(2)` on the prepared ruleset.
//!   Each command becomes a domain of its own: it cannot signal, trace or
//!   open the descriptors of any process outside it — the host, or
//!   another command.

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd, RawFd};

use nix::libc;

use super::caps::has_effective;
use super::view::View;
use super::Step;
use crate::os::sandbox::Rules;

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
/// `TIOCLINUX`.
const TIOCLINUX: u32 = 0x541C;

impl Restrictions {
    /// The restrictions of a sandbox; `network_off`: IPv4 and IPv6 sockets
    /// other than TCP are refused too. Each command's Landlock ruleset is its own
    /// ([`ChildSetup::restrict`](super::ChildSetup::restrict)).
    pub(crate) fn new(rules: Option<Rules>, network_off: bool, view: Option<View>) -> Restrictions {
        Restrictions {
            rules,
            drop_bounding: has_effective(CAP_SETPCAP),
            filter: filter(network_off),
            view,
        }
    }

    /// The read-only view each command enters, if there is one.
    pub(super) fn view(&self) -> Option<&View> {
        self.view.as_ref()
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
    pub(super) fn apply(&self, ruleset: Option<RawFd>) -> Result<(), (Step, i32)> {
        let errno = || {
            std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO)
        };
        // SAFETY (each block): prctl, capset, seccomp and landlock calls
        // on integers and on structs that live on this stack or in `self`.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err((Step::NoNewPrivs, errno()));
        }
        // EINVAL: a kernel before ambient capabilities (4.3), none to clear.
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

/// The native audit architecture, as `seccomp_data.arch` gives it.
#[cfg(target_arch = "x86_64")]
const ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const ARCH: u32 = 0xC000_00B7;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const ARCH: u32 = 0;

/// Offsets in `struct seccomp_data`: nr, arch, then 8-byte arguments from
/// 16 (their low halves first, on a little-endian machine).
const NR: u32 = 0;
const ARCH_AT: u32 = 4;
const ARG0_LOW: u32 = 16;
const ARG1_LOW: u32 = 24;
const ARG2_LOW: u32 = 32;

fn stmt(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump_eq(k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    }
}

fn jump_ge(k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    }
}

fn load(at: u32) -> libc::sock_filter {
    stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, at)
}

fn ret(value: u32) -> libc::sock_filter {
    stmt(libc::BPF_RET | libc::BPF_K, value)
}

/// The filter: see the module doc.
fn filter(network_off: bool) -> Vec<libc::sock_filter> {
    let allow = ret(libc::SECCOMP_RET_ALLOW);
    let deny = |errno: i32| ret(libc::SECCOMP_RET_ERRNO | (errno as u32 & 0xffff));
    let mut f = vec![
        load(ARCH_AT),
        jump_eq(ARCH, 1, 0),
        deny(libc::ENOSYS),
        load(NR),
    ];
    // x32 system calls carry this bit in their numbers.
    #[cfg(target_arch = "x86_64")]
    f.extend([jump_ge(0x4000_0000, 0, 1), deny(libc::ENOSYS)]);
    // ioctl(fd, TIOCSTI | TIOCLINUX, …): EPERM.
    f.extend([
        jump_eq(libc::SYS_ioctl as u32, 0, 4),
        load(ARG1_LOW),
        jump_eq(libc::TIOCSTI as u32, 1, 0),
        jump_eq(TIOCLINUX, 0, 1),
        deny(libc::EPERM),
    ]);
    // The ioctl branch ends here (allowed); reload the number for the next.
    f.push(load(NR));
    // io_uring: its operations (a socket, an open) never pass this filter.
    f.extend([
        jump_eq(libc::SYS_io_uring_setup as u32, 0, 1),
        deny(libc::EPERM),
    ]);
    if network_off {
        // An IPv4 or IPv6 socket that is not plain TCP (whose connect and
        // bind Landlock decides): UDP, ICMP, SCTP, MPTCP, raw. EPERM.
        f.extend([
            jump_eq(libc::SYS_socket as u32, 0, 10),
            load(ARG0_LOW),
            jump_eq(libc::AF_INET as u32, 1, 0),
            jump_eq(libc::AF_INET6 as u32, 0, 7),
            load(ARG1_LOW),
            stmt(libc::BPF_ALU | libc::BPF_AND | libc::BPF_K, SOCK_TYPE_MASK),
            jump_eq(libc::SOCK_STREAM as u32, 0, 3),
            load(ARG2_LOW),
            jump_eq(0, 2, 0),
            jump_eq(libc::IPPROTO_TCP as u32, 1, 0),
            deny(libc::EPERM),
        ]);
    }
    f.push(allow);
    f
}

/// The type bits of `socket(2)`'s second argument (the rest are
/// `SOCK_NONBLOCK` and `SOCK_CLOEXEC`).
const SOCK_TYPE_MASK: u32 = 0xf;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every jump of the filter lands inside it, on an instruction.
    #[test]
    fn the_filter_is_well_formed() {
        for network_off in [false, true] {
            let f = filter(network_off);
            assert!(f.len() < 64, "{}", f.len());
            for (i, ins) in f.iter().enumerate() {
                if ins.code as u32 & 0x07 == libc::BPF_JMP {
                    assert!(i + 1 + (ins.jt as usize) < f.len());
                    assert!(i + 1 + (ins.jf as usize) < f.len());
                }
            }
            assert_eq!(f.last().unwrap().code as u32, libc::BPF_RET | libc::BPF_K);
        }
    }
}
