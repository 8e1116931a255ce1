//! Sessions and process groups: finding what is left of one, waiting for it
//! to go, and signalling it (`killpg(2)`, `pidfd_open(2)`,
//! `pidfd_send_signal(2)`, `proc(5)`).
//!
//! Every command leads a session of its own, whose id is also its group id
//! and its leader's pid. The reaper knows only the leader. A command's
//! grandchildren (a `(sleep 1000 &)`, a server started with `&`) stay in its
//! group after the leader exits, and a job started under `set -m` leaves the
//! group but stays in the session, so a member is any process whose group
//! *or* session is the command's; knowing when they are gone means looking
//! at them: `/proc` lists them, and a pidfd per member turns "wait until
//! they exit" into a `poll(2)` with a deadline instead of a sleep loop.
//! (What calls `setsid` itself leaves both: only a cgroup holds it, see
//! `cgroup.rs`.)
//!
//! Once a leader is reaped its number can be given out again after the
//! last member is gone, so a group is taken for ours only while a member
//! carries the owner's mark in its environment: an unrelated process that
//! got the number is never signalled.

use std::collections::HashSet;
use std::os::fd::{AsFd, OwnedFd};
use std::time::Instant;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::Signal;

use crate::os::sys::{killpg_checked, pidfd_open, pidfd_signal};

/// The live (non-zombie) members of the sessions (or groups) `pgids`, as
/// (pid, id), from one scan of `/proc/*/stat`. Zombies are left out: they
/// have ended, and reaping them is their parent's business.
pub(crate) fn live_members(pgids: &HashSet<u32>) -> Vec<(u32, u32)> {
    if pgids.is_empty() {
        return Vec::new();
    }
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let (state, pgrp, sid) = stat_of(pid)?;
            if state == 'Z' || state == 'X' {
                return None;
            }
            [pgrp, sid]
                .into_iter()
                .find(|id| pgids.contains(id))
                .map(|id| (pid, id))
        })
        .collect()
}

/// Of the groups `pgids`, whose leaders we have reaped, those that still
/// have live members and are still ours. A group id stays allocated while
/// any process uses it, so a group with members of ours has existed without
/// a break since its leader ran; but once the last one is gone the number
/// may be given out again (pid reuse), and an unrelated process may then
/// lead a session of that number, or leave a child in it and exit. So a
/// group counts as ours only while a member carries `mark` (the owner's
/// `NAME=VALUE`, which every command passes on to what it starts) in its
/// environment, and no live process holds the number as its pid.
pub(crate) fn lingering(pgids: &HashSet<u32>, mark: &[u8]) -> HashSet<u32> {
    live_members(pgids)
        .into_iter()
        .filter(|&(pid, g)| stat_of(g).is_none() && carries(pid, mark))
        .map(|(_, g)| g)
        .collect()
}

/// Whether the environment `pid` was started with holds `mark` as one of
/// its `NAME=VALUE` entries (`/proc/PID/environ`).
fn carries(pid: u32, mark: &[u8]) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| env.split(|&b| b == 0).any(|kv| kv == mark))
}

/// (state, pgrp, session) of a process from `/proc/PID/stat`.
fn stat_of(pid: u32) -> Option<(char, u32, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may itself hold spaces or
    // parentheses: the fields after the last ')' are what we want.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    let sid = fields.next()?.parse().ok()?;
    Some((state, pgrp, sid))
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
        // Every member found exits before the next scan, which finds those
        // forked since: a scan costs all of /proc, so N members going one
        // by one cost two scans, not N.
        let mut waiting: Vec<&OwnedFd> = fds.iter().collect();
        while !waiting.is_empty() {
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                break;
            }
            let ms = deadline.map_or(-1, |d| (d - now).as_millis().min(i32::MAX as u128) as i32);
            let mut polls: Vec<PollFd<'_>> = waiting
                .iter()
                .map(|fd| PollFd::new(fd.as_fd(), PollFlags::POLLIN))
                .collect();
            let timeout = if ms < 0 {
                PollTimeout::NONE
            } else {
                PollTimeout::try_from(ms.saturating_add(1)).unwrap_or(PollTimeout::MAX)
            };
            if !matches!(poll(&mut polls, timeout), Ok(n) if n > 0) {
                continue;
            }
            let exited: Vec<bool> = polls
                .iter()
                .map(|p| p.revents().is_some_and(|r| !r.is_empty()))
                .collect();
            let mut i = 0;
            waiting.retain(|_| {
                i += 1;
                !exited[i - 1]
            });
        }
    }
}

/// Sends `signals`, in order, to the sessions `sids` (leaders' pids), with
/// one scan of `/proc` for all of them, so stopping N commands costs a few
/// scans, not N.
/// `owned` are the sessions whose leader the reaper still holds (its pid
/// cannot have been recycled): their group was signalled through the
/// reaper, and only members that left the group are signalled here. The
/// others' leaders are reaped, so their number may have been given out
/// again: each is signalled (its group by `killpg`, and the members that
/// left it) only with proof that it is still ours — a member that carries
/// `mark`, checked after a pidfd of it is open (so the check is about the
/// process the pidfd holds), and no live process with the number as its
/// pid (see [`lingering`]). Members that left the group are signalled
/// through a pidfd each, checked after it is opened, so a recycled pid is
/// never hit.
pub(crate) fn signal_sessions(
    sids: &HashSet<u32>,
    owned: &HashSet<u32>,
    signals: &[Signal],
    mark: &[u8],
) {
    let members = live_members(sids);
    let mut anchored: HashSet<u32> = owned.clone();
    for &(pid, id) in &members {
        if anchored.contains(&id) {
            continue;
        }
        let Some(_fd) = pidfd_open(pid) else {
            continue;
        };
        let member = |st: char, g: u32, s: u32| (g == id || s == id) && st != 'Z';
        if stat_of(id).is_none()
            && carries(pid, mark)
            && matches!(stat_of(pid), Some((st, g, s)) if member(st, g, s))
        {
            anchored.insert(id);
        }
    }
    for &signal in signals {
        for &sid in &anchored {
            if !owned.contains(&sid) {
                killpg_checked(sid, signal);
            }
        }
    }
    for (pid, _) in members {
        let Some(fd) = pidfd_open(pid) else {
            continue;
        };
        if matches!(stat_of(pid), Some((_, pgrp, s)) if anchored.contains(&s) && pgrp != s) {
            for &signal in signals {
                pidfd_signal(&fd, signal);
            }
        }
    }
}
