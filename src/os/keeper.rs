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
//! (what it must stop cannot stop it), is started by the same launcher as
//! every command (`launch/`: default dispositions, an empty mask, none of
//! the host's descriptors but its socket), and is reaped by the reaper
//! while the owner lives.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};

use crate::os::launch::{self, ChildSetup, Input, Output, Via};
use crate::os::reaper;
use crate::os::spawn::{bash_path, cstring, env_strings};

/// The keeper's script: `$1` the owner's cgroup (or empty), `$2` the output
/// directory, `$3` the grace in ticks of 50 ms, `$4` the `NAME=VALUE` that
/// marks the environment of every process of the owner's commands (session
/// mode; empty in cgroup mode), then the owner's cgroup v1 directories
/// (a hybrid host's budgets), removed once the cgroup is empty.
const SCRIPT: &str = r#"
jail=$1 out=$2 ticks=$3 mark=$4
shift 4
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
# Empty once the cgroup is: every process of the commands has ended.
for v1 in "$@"; do
    [ -d "$v1" ] || continue
    for d in "$v1"/run-*/; do [ -d "$d" ] && rmdir "$d"; done
    rmdir "$v1"
done
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
    /// mode) and whose output is in `outdir`, made `via` that way.
    pub(crate) fn start(
        jail: Option<&Path>,
        v1: &[std::path::PathBuf],
        outdir: &Path,
        mark: &OsStr,
        grace: Duration,
        via: Via,
    ) -> io::Result<Keeper> {
        let (end, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::Stream,
            None,
            SockFlag::SOCK_CLOEXEC,
        )?;
        let (argv, envp) = command(jail, v1, outdir, mark, grace)?;
        let setup = ChildSetup::new(bash_path()?.to_owned(), argv, envp, c"/".to_owned())
            .stdio(Input::Fd(theirs.as_fd()), Output::Null, Output::Null)
            .new_session();
        reaper::init()?.spawn(|| launch::launch(&setup, via), Box::new(|_, _| {}))?;
        Ok(Keeper { _end: end })
    }
}

/// The keeper's arguments and environment (its stdin is the socket).
fn command(
    jail: Option<&Path>,
    v1: &[std::path::PathBuf],
    outdir: &Path,
    mark: &OsStr,
    grace: Duration,
) -> io::Result<(Vec<CString>, Vec<CString>)> {
    let ticks = grace.as_millis().div_ceil(50).max(1).to_string();
    let jail = jail.map_or(Path::new(""), |j| j);
    // `--norc`: bash reads `~/.bashrc` even with `-c` when its stdin is
    // a socket (it takes itself for a shell started by sshd), and a
    // user's rc file may hang or start anything.
    let argv = [
        OsStr::new("bash"),
        OsStr::new("--norc"),
        OsStr::new("--noprofile"),
        OsStr::new("-c"),
        OsStr::new(SCRIPT),
        OsStr::new("bashtools-keeper"),
        jail.as_os_str(),
        outdir.as_os_str(),
        OsStr::new(&ticks),
        mark,
    ]
    .into_iter()
    .chain(v1.iter().map(|d| d.as_os_str()))
    .map(|a| cstring(a.as_bytes()))
    .collect::<io::Result<Vec<_>>>()?;
    // No startup file of the host's (BASH_ENV) runs in the keeper: its
    // environment is PATH alone.
    let path = std::env::var_os("PATH").unwrap_or_default();
    let envp = env_strings(vec![("PATH".into(), path)]);
    Ok((argv, envp))
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
        let (argv, mut envp) =
            command(None, &[], &out, OsStr::new(""), Duration::from_millis(50)).unwrap();
        envp.push(cstring(format!("HOME={}", home.display()).as_bytes()).unwrap());
        let setup = ChildSetup::new(bash_path().unwrap().to_owned(), argv, envp, c"/".to_owned())
            .stdio(Input::Fd(theirs.as_fd()), Output::Null, Output::Null)
            .new_session();
        let pid = launch::launch(&setup, Via::from_env()).unwrap();
        drop(setup);
        drop(theirs);
        drop(end);
        // At EOF the keeper removes the output directory and exits.
        let mut status = 0;
        // SAFETY: waits for this test's own child.
        unsafe { nix::libc::waitpid(pid as i32, &mut status, 0) };
        assert_eq!(nix::libc::WEXITSTATUS(status), 0, "{status}");
        assert!(!out.exists(), "the keeper did its work");
        assert!(!ran.exists(), "the keeper read ~/.bashrc");
        std::fs::remove_dir_all(&home).unwrap();
    }
}
