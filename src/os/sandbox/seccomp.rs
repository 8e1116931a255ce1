//! The seccomp filter of a sandboxed command (`seccomp(2)`), a classic BPF
//! program over `struct seccomp_data`: what Landlock does not cover.
//!
//! - A system call of another ABI (32-bit, x32) fails with ENOSYS, since
//!   the filter reads the native numbers.
//! - `ioctl`s that push input into a terminal (`TIOCSTI`) or reach the
//!   console (`TIOCLINUX`) fail with EPERM, and so does `io_uring_setup`
//!   (io_uring operations never pass a seccomp filter).
//! - With the network off, every IPv4 or IPv6 socket but plain TCP — UDP,
//!   ICMP, SCTP, MPTCP, raw — fails with EPERM, since Landlock's network
//!   rules see only TCP.
//!
//! Built once, in the host ([`filter`]); installed by the child itself
//! (`restrict.rs`).

use nix::libc;

/// `TIOCLINUX`.
const TIOCLINUX: u32 = 0x541C;

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
pub(super) fn filter(network_off: bool) -> Vec<libc::sock_filter> {
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
