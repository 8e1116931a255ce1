//! The keeper: one small process per owner that stops what is left of the
//! owner's commands when the owner dies without cleaning up — SIGKILL, an
//! abort, `process::exit` — and removes its output directory
//! (`socketpair(2)`, `setsid(2)`).
//!
//! It is bash itself (no binary of ours to install): a script that reads
//! its stdin, one end of a socket pair whose other end only the owner holds,
//! close-on-exec, so no command ever inherits it. It is started first,
//! before anything it must clean up exists, and told each cgroup *before*
//! the owner makes it ([`Keeper::tell`]): an owner killed while it builds
//! (a bridge that starts a server per request and kills it after the
//! answer does this all the time) leaves nothing behind either. After
//! that nothing is written on it: when the owner's end closes — the owner
//! dropped or died, the kernel closes it either way — the read sees EOF,
//! and the keeper sends TERM and
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
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};

use super::cgroup::CELL_PREFIX;
use crate::os::bash::spawn::{bash_path, cstring, env_strings};
use crate::os::launch::{self, ChildSetup, Input, Output, Via};
use crate::os::reaper;

/// The keeper's script: `$1` the output directory, `$2` the grace in ticks
/// of 50 ms. Then it is told, one line each on its stdin (see [`Told`]):
/// the owner's cgroup (`jail DIR`), its cgroup v1 directories (`v1 DIR`, a
/// hybrid host's budgets, removed once the cgroup is empty), and in
/// session mode the `NAME=VALUE` that marks the environment of every
/// process of the owner's commands (`mark NAME=VALUE`). A directory told
/// may never have been made (the owner died first, or could not): every
/// use of one checks it is there.
///
/// Its arguments: the output directory, the grace in ticks of 50 ms, and
/// the prefix of a cell's name ([`CELL_PREFIX`], the one the jail names
/// its cells with), which tells a cell from anything else in the jail.
const SCRIPT: &str = r#"
out=$1 ticks=$2 cell=$3 jail= mark=
# Globs see the cgroups a command named `.x` too, and match nothing
# rather than themselves.
shopt -s dotglob nullglob
v1s=()
# What to clean up, told before it is made; EOF means the owner is gone.
while IFS= read -r line; do
    case $line in
        "jail "*) jail=${line#jail } ;;
        "v1 "*) v1s+=("${line#v1 }") ;;
        "mark "*) mark=${line#mark } ;;
    esac
done
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
        for f in "$jail/$cell"*/cgroup.procs; do
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
        [ -n "$jail" ] && [ -d "$jail" ] && echo 1 > "$jail/cgroup.kill"
        signal KILL
        # KILL is final; only a cgroup must empty before it can be
        # removed. (Zombies that init may never reap would keep `kill -0`
        # true.)
        wait_while 200 populated
    fi
fi
# Removes cgroup `$1` and its cells, trying again for up to 2 s: a cell
# that the kernel (or the owner, ending at the same moment) is still
# taking down keeps its parent busy for a moment, and a jail left then
# would stay for good.
remove() {
    local i=0
    while [ -d "$1" ] && [ $i -lt 40 ]; do
        rmtree "$1" && return 0
        read -r -t 0.05 -u 3; i=$((i + 1))
    done
}
# Removes cgroup `$1` and every cgroup a command made inside it, depth
# first (`rmdir` does not recurse).
rmtree() {
    local d
    for d in "$1"/*/; do [ -d "$d" ] && rmtree "${d%/}"; done
    rmdir "$1" 2>/dev/null
}
[ -n "$jail" ] && remove "$jail"
# Empty once the cgroup is: every process of the commands has ended.
for v1 in "${v1s[@]}"; do remove "$v1"; done
rm -rf -- "$out"
"#;

/// The owner's end of the keeper's socket; dropping it lets the keeper
/// clean up and exit.
#[derive(Debug)]
pub(crate) struct Keeper {
    end: OwnedFd,
}

/// What a keeper is told to clean up.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Told {
    /// The owner's cgroup (v2), its commands' cells under it.
    Jail,
    /// One of the owner's cgroup v1 directories.
    V1,
    /// The `NAME=VALUE` in the environment of every process of the
    /// owner's commands (session mode).
    Mark,
}

impl Keeper {
    /// Starts the keeper of an owner whose output is in `outdir`, made
    /// `via` that way; what else it cleans up it is told next.
    pub(crate) fn start(outdir: &Path, grace: Duration, via: Via) -> io::Result<Keeper> {
        let (end, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::Stream,
            None,
            SockFlag::SOCK_CLOEXEC,
        )?;
        let (argv, envp) = command(outdir, grace)?;
        let setup = ChildSetup::new(bash_path()?.to_owned(), argv, envp, c"/".to_owned())
            .stdio(Input::Fd(theirs.as_fd()), Output::Null, Output::Null)
            .new_session();
        reaper::init()?.spawn(|| launch::launch(&setup, via), Box::new(|_, _| {}))?;
        Ok(Keeper { end })
    }

    /// Tells the keeper to clean up `what` too: called *before* the
    /// directory is made, so no moment exists where it is there and the
    /// keeper does not know it. Returns whether the keeper was told; a
    /// value with a newline cannot be (one line each).
    pub(crate) fn tell(&self, what: Told, value: &OsStr) -> bool {
        use nix::sys::socket::{send, MsgFlags};
        let value = value.as_bytes();
        if value.contains(&b'\n') {
            return false;
        }
        let word: &[u8] = match what {
            Told::Jail => b"jail ",
            Told::V1 => b"v1 ",
            Told::Mark => b"mark ",
        };
        let line = [word, value, b"\n"].concat();
        // A few hundred bytes at most, into an empty socket buffer: sent
        // whole or not at all. No SIGPIPE if the keeper is gone.
        send(self.end.as_raw_fd(), &line, MsgFlags::MSG_NOSIGNAL) == Ok(line.len())
    }
}

/// The keeper's arguments and environment (its stdin is the socket).
fn command(outdir: &Path, grace: Duration) -> io::Result<(Vec<CString>, Vec<CString>)> {
    let ticks = grace.as_millis().div_ceil(50).max(1).to_string();
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
        outdir.as_os_str(),
        OsStr::new(&ticks),
        OsStr::new(CELL_PREFIX),
    ]
    .into_iter()
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
        let (argv, mut envp) = command(&out, Duration::from_millis(50)).unwrap();
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
