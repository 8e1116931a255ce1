//! Helpers shared by the integration tests: a tools builder with short
//! timeouts, condition waits with generous deadlines, and `/proc` checks
//! that nothing of ours is left.
#![allow(dead_code)]

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bashtools::{BashTools, Builder, Caller};
use serde_json::Value;

/// Generous: these machines are shared and noisy.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// A builder with a short kill grace, so stopping tests stay quick.
pub fn builder() -> Builder {
    BashTools::builder().kill_grace(Duration::from_millis(500))
}

pub fn tools() -> BashTools {
    builder().build().expect("tools build")
}

pub fn me() -> Caller {
    Caller::default()
}

/// Runs `bash` with the default caller.
pub fn bash(tools: &BashTools, input: Value) -> bashtools::ToolResult {
    tools.bash(&input, &me())
}

/// The `bash_N` of a background answer (its typed extra, not its text).
pub fn id_of(r: &bashtools::ToolResult) -> String {
    r.task_id
        .clone()
        .unwrap_or_else(|| panic!("no task ID in {r:?}"))
}

/// The pause between two looks at a condition that nothing signals (a
/// process appearing in `/proc`, a zombie being reaped by the library's
/// own thread): the only timed pause the tests make, and never a wait for
/// the condition itself, which is always looked at again with a deadline.
pub fn poll_pause(d: Duration) {
    std::thread::sleep(d);
}

/// Waits until `cond` holds, up to [`DEADLINE`]; panics with `what` if not.
pub fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + DEADLINE;
    let mut pause = Duration::from_millis(1);
    while !cond() {
        assert!(Instant::now() < end, "timed out waiting until {what}");
        // A condition on other processes has nothing to wake us: back off.
        poll_pause(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// (pid, ppid, pgrp, state) of every process, from /proc.
pub fn processes() -> Vec<(u32, u32, u32, char)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let f: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        if f.len() < 3 {
            continue;
        }
        let state = f[0].chars().next().unwrap_or('?');
        out.push((
            pid,
            f[1].parse().unwrap_or(0),
            f[2].parse().unwrap_or(0),
            state,
        ));
    }
    out
}

/// Live members of the groups `pgids`, and zombies whose parent is this
/// process (children we failed to reap). Zombies whose parent is PID 1 are
/// left out: they are orphans of ours that the system's init has to reap,
/// and in some sandboxes PID 1 never does.
pub fn left_of(pgids: &[u32]) -> Vec<(u32, u32, u32, char)> {
    let me = std::process::id();
    let groups: HashSet<u32> = pgids.iter().copied().collect();
    processes()
        .into_iter()
        .filter(|&(pid, ppid, pgrp, state)| {
            let ours = groups.contains(&pgrp) || groups.contains(&pid);
            let zombie = state == 'Z' || state == 'X';
            ours && (!zombie || ppid == me)
        })
        .collect()
}

/// Waits until nothing of the groups `pgids` is left (see [`left_of`]).
pub fn assert_gone(pgids: &[u32]) {
    let end = Instant::now() + DEADLINE;
    loop {
        let left = left_of(pgids);
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < end, "processes left behind: {left:?}");
        // Zombies of ours have exited already (their pidfds would wake the
        // poll at once): wait on the live ones while there are any.
        let live: Vec<u32> = left
            .iter()
            .filter(|&&(.., state)| state != 'Z' && state != 'X')
            .map(|&(pid, ..)| pid)
            .collect();
        let pids = if live.is_empty() {
            left.iter().map(|&(pid, ..)| pid).collect()
        } else {
            live
        };
        wait_any_exit(&pids, end);
    }
}

/// Blocks until one of `pids` exits, or `until`: a pidfd per process and
/// one `poll(2)`, so the wait ends on the exit itself. Returns at once when
/// none is left to wait on. A zombie child of ours counts as exited; the
/// reaper takes it away a moment later, which nothing here can wait on, so
/// a short pause stands in for that case alone.
pub fn wait_any_exit(pids: &[u32], until: Instant) {
    use std::os::fd::{AsFd, FromRawFd, OwnedFd};
    let fds: Vec<OwnedFd> = pids
        .iter()
        .filter_map(|&pid| {
            // SAFETY: a plain syscall; a non-negative result is a new fd we own.
            let fd = unsafe { nix::libc::syscall(nix::libc::SYS_pidfd_open, pid as i32, 0) };
            // SAFETY: `fd` was just returned by the kernel.
            (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as i32) })
        })
        .collect();
    if fds.is_empty() {
        return;
    }
    let mut polls: Vec<nix::poll::PollFd> = fds
        .iter()
        .map(|fd| nix::poll::PollFd::new(fd.as_fd(), nix::poll::PollFlags::POLLIN))
        .collect();
    let ms = until
        .saturating_duration_since(Instant::now())
        .as_millis()
        .min(i32::MAX as u128) as i32;
    let timeout = nix::poll::PollTimeout::try_from(ms).unwrap_or(nix::poll::PollTimeout::MAX);
    if let Ok(n) = nix::poll::poll(&mut polls, timeout) {
        if n as usize == polls.len() {
            // Every one has exited: what is left are zombies of ours.
            poll_pause(Duration::from_millis(5));
        }
    }
}

/// Zombie children of this process: exits nobody reaped.
pub fn zombie_children() -> Vec<u32> {
    let me = std::process::id();
    processes()
        .into_iter()
        .filter(|&(_, ppid, _, state)| ppid == me && state == 'Z')
        .map(|(pid, ..)| pid)
        .collect()
}

/// Pids in group `pgid` that are alive now.
pub fn live_in_group(pgid: u32) -> Vec<u32> {
    processes()
        .into_iter()
        .filter(|&(_, _, pgrp, state)| pgrp == pgid && state != 'Z' && state != 'X')
        .map(|(pid, ..)| pid)
        .collect()
}

/// A fresh directory of a test's own (canonical path), removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "bashtools-test-{}-{}-{name}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir.canonicalize().unwrap())
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Waits until a command has written its `$$` (and a newline) to `file`.
pub fn read_pid(file: &std::path::Path) -> u32 {
    let mut pid = 0;
    wait_until(
        "a command has written its pid",
        || match std::fs::read_to_string(file) {
            Ok(s) if s.ends_with('\n') => {
                pid = s.trim().parse().expect("a pid");
                true
            }
            _ => false,
        },
    );
    pid
}

/// The prefix of a foreground command's output file (hidden). Between
/// commands, the only such files left are spares: emptied, kept for the
/// next foreground command, at most four.
pub const FOREGROUND_PREFIX: &str = ".fg-";

/// The names in output directory `dir`, less its spare files (empty
/// foreground ones), which are checked to be few.
///
/// A foreground command's file is put back (emptied, or removed) on the
/// tools' tidying thread just after its result is returned: a foreground
/// file that still holds output is waited for (up to [`DEADLINE`]) before
/// it counts as left behind.
pub fn output_files(dir: &std::path::Path) -> Vec<String> {
    let held = || {
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries.flatten().any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(FOREGROUND_PREFIX)
                    && e.metadata().is_ok_and(|m| m.len() > 0)
            })
        })
    };
    let end = std::time::Instant::now() + DEADLINE;
    while held() && std::time::Instant::now() < end {
        poll_pause(Duration::from_millis(1));
    }
    let mut names = Vec::new();
    let mut spares = 0;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return names;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        // An empty foreground file is a spare; one with output in it is
        // a command's, still there (returned, so a caller can wait for it).
        let empty = e.metadata().is_ok_and(|m| m.len() == 0);
        if name.starts_with(FOREGROUND_PREFIX) && empty {
            spares += 1;
        } else {
            names.push(name);
        }
    }
    assert!(spares <= 4, "{spares} spare files in {}", dir.display());
    names.sort();
    names
}

/// A shell snippet that prints `cell:DIR`, the cgroup of the command's
/// bash, found in the hierarchy under `jail` (the tools' cgroup): a command
/// in a cgroup namespace of its own sees only `0::/` in `/proc/self/cgroup`.
pub fn print_cell(jail: &std::path::Path) -> String {
    format!(
        "for f in '{}'/run-*/cgroup.procs; do grep -qx \"$$\" \"$f\" 2>/dev/null && echo \"cell:${{f%/cgroup.procs}}\"; done; :",
        jail.display()
    )
}

/// The helper host built from `tests/helpers/host.rs` (an example, so
/// `cargo test` builds it).
pub fn containment_host() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let debug = exe.parent().unwrap().parent().unwrap();
    let path = debug.join("examples").join("containment-host");
    assert!(path.exists(), "{} is built by cargo test", path.display());
    // `cargo test --test containment` builds this test, not the examples:
    // a host older than the library's sources would test old code.
    let newest_source = newest(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src"));
    let built = std::fs::metadata(&path).and_then(|m| m.modified()).unwrap();
    assert!(
        built >= newest_source,
        "{} is older than the sources: run `cargo build --examples` (or the whole `cargo test`)",
        path.display()
    );
    path
}

/// The latest modification time of the files under `dir`.
pub fn newest(dir: &std::path::Path) -> std::time::SystemTime {
    let mut latest = std::time::SystemTime::UNIX_EPOCH;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let meta = entry.metadata().unwrap();
        let t = if meta.is_dir() {
            newest(&entry.path())
        } else {
            meta.modified().unwrap()
        };
        latest = latest.max(t);
    }
    latest
}
