//! The keeper: one small process per owner that stops what is left of the
//! owner's commands when the owner dies without cleaning up — SIGKILL, an
//! abort, `process::exit` — and removes its output directory
//! (`socketpair(2)`, `setsid(2)`).
//!
//! It is bash itself (no binary of ours to install): a script that reads
//! its stdin, one end of a socket pair whose other end only the owner holds,
//! close-on-exec, so no command ever inherits it. Nothing is written on it:
//! when the owner's end closes — the owner dropped or died, the kernel
//! closes it either way — the read sees EOF, and the keeper sends TERM and
//! CONT to what is left (every member of the owner's cgroup; in session mode
//! every process whose environment carries the owner's mark, which its
//! commands pass on to what they start), waits up to the grace, sends KILL
//! (`cgroup.kill`), removes the cgroups and the output directory, and
//! exits. After a normal drop nothing is left, and it exits at once. The
//! owner tells it nothing per command, so a command costs the keeper
//! nothing.
//!
//! The keeper runs in a session of its own, outside the owner's cgroup
//! (what it must stop cannot stop it), and is reaped by the reaper while
//! the owner lives.

use std::ffi::OsStr;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};

use crate::os::reaper;

/// The keeper's script: `$1` the owner's cgroup (or empty), `$2` the output
/// directory, `$3` the grace in ticks of 50 ms, `$4` the `NAME=VALUE` that
/// marks the environment of every process of the owner's commands (session
/// mode; empty in cgroup mode).
const SCRIPT: &str = r#"
jail=$1 out=$2 ticks=$3 mark=$4
# Nothing is ever written: EOF means the owner is gone.
while read -r _; do :; done
# A pipe nobody writes: `read -t` on it waits without a process.
exec 3<> <(:)
populated() {
    [ -n "$jail" ] || return 1
    local k v
    while read -r k v; do
        [ "$k" = populated ] && [ "$v" = 1 ] && return 0
    done < "$jail/cgroup.events"
    return 1
}
# Session mode: the processes whose environment carries the owner's mark.
marked=()
find_marked() {
    [ -n "$mark" ] || return 0
    local d p kv
    marked=()
    for d in /proc/[0-9]*; do
        p=${d#/proc/}
        [ "$p" = "$$" ] && continue
        while IFS= read -r -d '' kv; do
            if [ "$kv" = "$mark" ]; then marked+=("$p"); break; fi
        done < "$d/environ"
    done 2>/dev/null
}
marked_alive() {
    local p
    for p in "${marked[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done
    return 1
}
left() { populated || marked_alive; }
signal() {
    local f p
    if [ -n "$jail" ]; then
        for f in "$jail"/run-*/cgroup.procs; do
            [ -e "$f" ] || continue
            while read -r p; do kill "-$1" "$p" 2>/dev/null; done < "$f"
        done
    fi
    for p in "${marked[@]}"; do kill "-$1" "$p" 2>/dev/null; done
}
# `$1` ticks at most, while `$2` (left or populated) holds.
wait_while() {
    local i=0
    while $2 && [ $i -lt "$1" ]; do read -r -t 0.05 -u 3; i=$((i + 1)); done
}
find_marked
if left; then
    signal TERM
    signal CONT
    wait_while "$ticks" left
    find_marked
    if left; then
        [ -n "$jail" ] && echo 1 > "$jail/cgroup.kill"
        signal KILL
        # KILL is final; only a cgroup must empty before it can be
        # removed. (Zombies that init may never reap would keep `kill -0`
        # true.)
        wait_while 200 populated
    fi
fi
if [ -n "$jail" ] && [ -d "$jail" ]; then
    for d in "$jail"/run-*/; do [ -d "$d" ] && rmdir "$d"; done
    rmdir "$jail"
fi
rm -rf -- "$out"
"#;

/// The owner's end of the keeper's socket; dropping it lets the keeper
/// clean up and exit.
#[derive(Debug)]
pub(crate) struct Keeper {
    _end: OwnedFd,
}

impl Keeper {
    /// Starts the keeper of an owner whose commands are in `jail` (cgroup
    /// mode) and whose output is in `outdir`.
    pub(crate) fn start(
        jail: Option<&Path>,
        outdir: &Path,
        mark: &OsStr,
        grace: Duration,
    ) -> io::Result<Keeper> {
        let (end, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::Stream,
            None,
            SockFlag::SOCK_CLOEXEC,
        )?;
        let mut cmd = command(jail, outdir, mark, grace);
        cmd.stdin(Stdio::from(theirs));
        // SAFETY: the hook runs in the forked child and calls only
        // async-signal-safe functions.
        unsafe { cmd.pre_exec(keeper_session) };
        reaper::init()?.spawn(|| Ok(cmd.spawn()?.id()), Box::new(|_| {}))?;
        Ok(Keeper { _end: end })
    }
}

/// The keeper's command line and environment (its stdin is the socket).
fn command(jail: Option<&Path>, outdir: &Path, mark: &OsStr, grace: Duration) -> Command {
    let ticks = grace.as_millis().div_ceil(50).max(1);
    let mut cmd = Command::new("bash");
    // `--norc`: bash reads `~/.bashrc` even with `-c` when its stdin is
    // a socket (it takes itself for a shell started by sshd), and a
    // user's rc file may hang or start anything.
    cmd.args(["--norc", "--noprofile", "-c"])
        .arg(SCRIPT)
        .arg("bashtools-keeper")
        .arg(jail.map_or(Path::new(""), |j| j))
        .arg(outdir)
        .arg(ticks.to_string())
        .arg(mark)
        // No startup file of the host's (BASH_ENV) runs in the keeper.
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .current_dir("/")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// In the keeper's child: a session of its own (a terminal's SIGINT or
/// SIGHUP to the host's group does not reach it), default dispositions and
/// an empty mask.
fn keeper_session() -> io::Result<()> {
    nix::unistd::setsid()?;
    for signo in 1..nix::libc::SIGRTMIN() {
        if signo == nix::libc::SIGKILL || signo == nix::libc::SIGSTOP {
            continue;
        }
        // SAFETY: installs no handler.
        unsafe {
            nix::libc::signal(signo, nix::libc::SIG_DFL);
        }
    }
    use nix::sys::signal::{sigprocmask, SigSet, SigmaskHow};
    sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// bash takes a shell whose stdin is a socket for one started by sshd
    /// and reads `~/.bashrc` even with `-c`: the keeper must not, or a
    /// user's rc file (seen: `pyenv init` waiting on a lock) keeps it from
    /// ever reading its socket.
    #[test]
    fn the_keeper_reads_no_rc_file_of_the_user() {
        let home = std::env::temp_dir().join(format!("bashtools-keeper-rc-{}", std::process::id()));
        std::fs::create_dir_all(&home).unwrap();
        let ran = home.join("ran");
        std::fs::write(
            home.join(".bashrc"),
            format!("echo > '{}'\n", ran.display()),
        )
        .unwrap();
        let out = home.join("out");
        std::fs::create_dir_all(&out).unwrap();
        let (end, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::Stream,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .unwrap();
        let mut cmd = command(None, &out, OsStr::new(""), Duration::from_millis(50));
        cmd.env("HOME", &home).stdin(Stdio::from(theirs));
        let mut keeper = cmd.spawn().unwrap();
        drop(end);
        // At EOF the keeper removes the output directory and exits.
        let status = keeper.wait().unwrap();
        assert!(status.success(), "{status}");
        assert!(!out.exists(), "the keeper did its work");
        assert!(!ran.exists(), "the keeper read ~/.bashrc");
        std::fs::remove_dir_all(&home).unwrap();
    }
}
