//! Process groups: finding what is left of one, waiting for it to go, and
//! signalling it (`killpg(2)`, `pidfd_open(2)`, `proc(5)`).
//!
//! The reaper knows only the group leader. A command's grandchildren (a
//! `(sleep 1000 &)`, a server started with `&`) stay in its group after the
//! leader exits, so stopping a shell means stopping the whole group, and
//! knowing when it is gone means looking at the group itself: `/proc` lists
//! its members, and a pidfd per member turns "wait until they exit" into a
//! `poll(2)` with a deadline instead of a sleep loop.

use std::collections::HashSet;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::time::Instant;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{killpg, Signal};
use nix::unistd::{getpgrp, Pid};

/// Sends `signal` to group `pgid`, unless that is the host's own group.
/// Errors (ESRCH: nobody left) are nothing to act on.
pub(crate) fn killpg_checked(pgid: u32, signal: Signal) {
    if pgid == 0 || Pid::from_raw(pgid as i32) == getpgrp() {
        return;
    }
    let _ = killpg(Pid::from_raw(pgid as i32), signal);
}

/// The live (non-zombie) members of the groups `pgids`, as (pid, pgid),
/// from one scan of `/proc/*/stat`. Zombies are left out: they have ended,
/// and reaping them is their parent's business.
pub(crate) fn live_members(pgids: &HashSet<u32>) -> Vec<(u32, u32)> {
    if pgids.is_empty() {
        return Vec::new();
    }
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| match stat_of(pid) {
            Some((state, pgrp)) if pgids.contains(&pgrp) && state != 'Z' && state != 'X' => {
                Some((pid, pgrp))
            }
            _ => None,
        })
        .collect()
}

/// Of the groups `pgids`, whose leaders we have reaped, those that still
/// have live members and are still ours. A group id stays allocated while any
/// process uses it, so a group with members has existed without a break
/// since its leader ran — unless the number was freed and given out again
/// in between, which can only happen after some process got the pid itself:
/// a group whose number is a live pid now is not ours, and is left alone.
pub(crate) fn lingering(pgids: &HashSet<u32>) -> HashSet<u32> {
    live_members(pgids)
        .into_iter()
        .map(|(_, g)| g)
        .filter(|&g| stat_of(g).is_none())
        .collect()
}

/// (state, pgrp) of a process from `/proc/PID/stat`.
fn stat_of(pid: u32) -> Option<(char, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may itself hold spaces or
    // parentheses: the fields after the last ')' are what we want.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

/// Waits until the groups `pgids` have no live member or `deadline` passes.
/// Returns the groups that still have members.
/// `None`: no deadline.
pub(crate) fn wait_gone(pgids: &HashSet<u32>, deadline: Option<Instant>) -> HashSet<u32> {
    loop {
        let members = live_members(pgids);
        if members.is_empty() {
            return HashSet::new();
        }
        let left: HashSet<u32> = members.iter().map(|&(_, g)| g).collect();
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            return left;
        }
        let fds: Vec<OwnedFd> = members.iter().filter_map(|&(p, _)| pidfd_open(p)).collect();
        if fds.is_empty() {
            // The members went between the scan and the open (scan again),
            // or the kernel has no pidfds: then nothing can be waited on.
            let again = live_members(pgids);
            if again.is_empty() {
                return HashSet::new();
            }
            return again.iter().map(|&(_, g)| g).collect();
        }
        let ms = deadline.map_or(-1, |d| (d - now).as_millis().min(i32::MAX as u128) as i32);
        let mut polls: Vec<PollFd> = fds
            .iter()
            .map(|fd| PollFd::new(fd.as_fd(), PollFlags::POLLIN))
            .collect();
        // Any one exit wakes us; the loop scans again, which also finds
        // members forked since the last scan.
        let _ = poll(
            &mut polls,
            if ms < 0 {
                PollTimeout::NONE
            } else {
                PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX)
            },
        );
    }
}

/// A pidfd for `pid` (Linux 5.3+): readable once the process has exited.
pub(crate) fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    // SAFETY: a plain syscall with integer arguments; a non-negative return
    // is a new descriptor that we own.
    let fd = unsafe { nix::libc::syscall(nix::libc::SYS_pidfd_open, pid as i32, 0) };
    if fd < 0 {
        return None;
    }
    // SAFETY: `fd` was just returned by the kernel and is owned by no one else.
    Some(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}
