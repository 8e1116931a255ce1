//! The escapes of the containment tests: commands that leave their group or
//! session, each leaving a `sleep` whose argument is a marker unique to the
//! test, so `/proc` can tell what is left of it and nothing else.
#![allow(dead_code)]

use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How a process gets out of its command's group or session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escape {
    /// `setsid sleep &`: a session of its own.
    Setsid,
    /// `set -m; sleep &`: a group of its own, same session.
    JobControl,
    /// A daemon's double fork with `setsid` in between.
    DoubleFork,
    /// Python's `start_new_session=True`.
    Python,
    /// `tmux new -d`: a server that daemonizes, and the pane under it.
    Tmux,
}

pub const ALL: [Escape; 5] = [
    Escape::Setsid,
    Escape::JobControl,
    Escape::DoubleFork,
    Escape::Python,
    Escape::Tmux,
];

/// A marker no other test uses: `1000.PIDN` is a valid `sleep` duration.
pub fn marker() -> String {
    static N: AtomicU64 = AtomicU64::new(1);
    format!(
        "1000.{}{:04}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

impl Escape {
    /// The tool this escape needs, when the machine may lack it.
    pub fn available(self) -> bool {
        match self {
            Escape::Python => have("python3"),
            Escape::Tmux => have("tmux"),
            Escape::Setsid | Escape::DoubleFork => have("setsid"),
            Escape::JobControl => true,
        }
    }

    /// Whether the escape leaves the command's session.
    pub fn new_session(self) -> bool {
        !matches!(self, Escape::JobControl)
    }

    /// A command line that starts the escape with marker `m` and returns.
    pub fn command(self, m: &str) -> String {
        match self {
            Escape::Setsid => format!("setsid sleep {m} &"),
            Escape::JobControl => format!("set -m; sleep {m} &"),
            Escape::DoubleFork => format!("(setsid sh -c 'sleep {m} & exit 0' &)"),
            Escape::Python => format!(
                "python3 -c \"import subprocess; subprocess.Popen(['sleep','{m}'], start_new_session=True)\""
            ),
            Escape::Tmux => format!("tmux -L bt-{m} new -d 'sleep {m}'"),
        }
    }
}

/// Pids (and states) of live processes whose command line holds `m`.
pub fn with_marker(m: &str) -> Vec<(u32, char)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        if String::from_utf8_lossy(&cmdline).contains(m) {
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| s[s.rfind(')')? + 2..].chars().next())
                .unwrap_or('?');
            if state != 'Z' && state != 'X' {
                out.push((pid, state));
            }
        }
    }
    out
}

/// Waits (generously) until a process with marker `m` runs.
pub fn wait_started(m: &str) {
    crate::common::wait_until(&format!("the escape {m} starts"), || {
        !with_marker(m).is_empty()
    });
}

/// Waits until nothing with marker `m` is left; returns what is left at the
/// deadline (after killing it, so a failing test leaves nothing behind).
pub fn left_after(m: &str, deadline: Duration) -> Vec<(u32, char)> {
    let end = Instant::now() + deadline;
    loop {
        let left = with_marker(m);
        if left.is_empty() {
            return left;
        }
        if Instant::now() >= end {
            kill_marker(m);
            return left;
        }
        let pids: Vec<u32> = left.iter().map(|&(pid, _)| pid).collect();
        crate::common::wait_any_exit(&pids, end);
    }
}

/// SIGKILL to everything with marker `m` (a test's own cleanup).
pub fn kill_marker(m: &str) {
    for (pid, _) in with_marker(m) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        let left: Vec<u32> = with_marker(m).into_iter().map(|(pid, _)| pid).collect();
        if left.is_empty() || Instant::now() >= end {
            return;
        }
        crate::common::wait_any_exit(&left, end);
    }
}
