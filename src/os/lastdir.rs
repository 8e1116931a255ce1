//! Finding out which directory a command ends in, so that a `cd` can carry
//! over to the next command (option `persist_working_directory`), without
//! touching the command line, its output or its exit status.
//!
//! A startup file (`BASH_ENV`, which bash reads before the command's first
//! word) sets an `EXIT` trap that appends `pwd -P` to a private file the
//! host made empty before the spawn (in the output directory, so a
//! sandboxed command may write it but not create it). Bash keeps the exit
//! status a trap was entered with, so `exit 3` still ends with 3, and the
//! output is untouched (the trap writes nothing else). The command line is
//! left as it was: `LINENO`, `$BASH_EXECUTION_STRING` and the gates see the
//! user's text.
//!
//! A command may set an `EXIT` trap of its own. A shell function named
//! `trap` keeps ours in place: the command's `EXIT` action is kept aside
//! and run by our trap after the directory is written (with the status the
//! trap was entered with, so `$?` in it is what it would have been);
//! `trap - EXIT` clears only the command's, and `trap -p` lists the
//! command's as if it were the only one. Other signals go to the builtin
//! unchanged, and in a subshell (`BASHPID` differs) everything does:
//! subshells do not inherit our trap. The startup file defines only a
//! stub `trap`, which sources the whole one from a second memory file on
//! its first call: every command pays for lexing the startup file, few call
//! `trap` (see BENCHMARKS.md).
//!
//! What this does not cover (the directory then stays what it was): `exec`
//! replacing bash, `builtin trap`/`command trap` or `unset -f trap` before
//! setting an `EXIT` trap, POSIX mode (`set -o posix`, where the builtin
//! wins over a function) and a shell killed by SIGKILL. A command the host
//! stops or moves to the background never changes it, whatever the trap
//! wrote: the host decides, not the trap.
//!
//! A command substitution that lists traps (`$(trap -p)`) runs in a
//! subshell, where bash shows the parent's traps: ours, not the command's.
//!
//! What the command can see of it: the functions `trap` and
//! `__bashtools_record` and variables named `__bashtools_*` (`declare`,
//! `set`), and that bash, having a trap to run at its end, forks the last
//! program of the command instead of exec'ing it.

use std::ffi::CStr;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};

/// The variable that names the file the trap appends to.
pub(crate) const FILE_VAR: &str = "BASHTOOLS_CWD_FILE";

/// The descriptors a command gets the startup file and the `trap` on.
/// High numbers, out of the way of the `exec 3>…` of scripts; the startup
/// file closes its own before the command runs.
pub(crate) const STARTUP_FD: i32 = 62;
pub(crate) const TRAP_FD: i32 = 63;

/// The path `BASH_ENV` names: the startup file's descriptor.
pub(crate) const STARTUP_PATH: &str = "/dev/fd/62";

/// The startup file, read by every command: kept short, since bash's
/// lexer costs about 250 instructions a character (a first version of 2.5
/// KB doubled what `bash -c true` executes). Comments are here, not in it.
///
/// - `/dev/fd/63` is [`TRAP`], which the stub `trap` sources the first
///   time a command calls `trap` (few do); `/dev/fd/62` is this file, which
///   bash has read whole before it runs it, closed at once.
/// - `__bashtools_record` is called as an `if` condition, so `set -e` does
///   not end the shell on the status it hands back, and each branch starts
///   with that status in `$?` for the command's own `EXIT` action.
/// - Every name it leaves starts with `__bashtools_` (but `trap`); the
///   variables it was told by are unset, so the command's environment is
///   what it would be without.
/// - Last, the user's own `BASH_ENV`, if there was one.
const STARTUP: &str = r#"exec 62<&-; __bashtools_cwd_file=$BASHTOOLS_CWD_FILE __bashtools_pid=$$
unset BASHTOOLS_CWD_FILE
__bashtools_ours='if __bashtools_record; then builtin eval -- "${__bashtools_exit_trap-}"; else builtin eval -- "${__bashtools_exit_trap-}"; fi'
__bashtools_record() { builtin local __bashtools_s=$?; [ -f "$__bashtools_cwd_file" ] && builtin pwd -P 2>&- >>"$__bashtools_cwd_file"; builtin return $__bashtools_s; }
trap() { if . /dev/fd/63; then trap "$@"; else builtin trap "$@"; fi; }
builtin trap -- "$__bashtools_ours" EXIT
if [ -n "${BASHTOOLS_USER_BASH_ENV+set}" ]; then BASH_ENV=$BASHTOOLS_USER_BASH_ENV; unset BASHTOOLS_USER_BASH_ENV; if [ -r "$BASH_ENV" ]; then . "$BASH_ENV"; fi
else unset BASH_ENV; fi
"#;

/// The `trap` that keeps ours, sourced by the stub on its first call (it
/// replaces the stub). In a subshell, and for `-l`, it is the builtin; to
/// list (`trap`, `trap -p`), the command's `EXIT` action stands in for ours
/// while the builtin lists; otherwise the `EXIT` part of a call is kept
/// aside (`-` clears it) and the rest goes to the builtin.
const TRAP: &str = r#"# bashtools: the trap that keeps ours (see os/lastdir.rs)
trap() {
    if [ "$BASHPID" != "$__bashtools_pid" ] || [ "${1-}" = -l ]; then
        builtin trap "$@"
        builtin return
    fi
    if [ $# -eq 0 ] || [ "$1" = -p ]; then
        if [ -n "${__bashtools_exit_trap+set}" ]; then
            builtin trap -- "$__bashtools_exit_trap" EXIT
        else
            builtin trap - EXIT
        fi
        builtin trap "$@"
        builtin set -- "$?"
        builtin trap -- "$__bashtools_ours" EXIT
        builtin return "$1"
    fi
    [ "$1" = -- ] && builtin shift
    local __bashtools_action=- __bashtools_sig __bashtools_rest=()
    if [ $# -gt 1 ] && [[ ! $1 =~ ^[0-9]+$ ]]; then
        __bashtools_action=$1
        builtin shift
    fi
    for __bashtools_sig in "$@"; do
        case ${__bashtools_sig^^} in
        0 | EXIT | SIGEXIT)
            if [ "$__bashtools_action" = - ]; then
                builtin unset __bashtools_exit_trap
            else
                __bashtools_exit_trap=$__bashtools_action
            fi ;;
        *) __bashtools_rest+=("$__bashtools_sig") ;;
        esac
    done
    [ ${#__bashtools_rest[@]} -eq 0 ] || builtin trap -- "$__bashtools_action" "${__bashtools_rest[@]}"
}
"#;

/// The startup file and the `trap` it sources, in memory files of this
/// process (nothing on disk to clean up), sealed: no one — no command, no
/// process that opens them again through `/proc` — can change them. Every
/// command that records its directory gets both as descriptors
/// ([`STARTUP_FD`], [`TRAP_FD`]).
pub(crate) struct Startup {
    startup: File,
    trap: File,
}

impl Startup {
    /// Writes and seals the two files.
    pub(crate) fn new() -> io::Result<Startup> {
        Ok(Startup {
            startup: sealed_file(c"bashtools-lastdir", STARTUP)?,
            trap: sealed_file(c"bashtools-trap", TRAP)?,
        })
    }

    /// The startup file and the `trap`, for the child to keep.
    pub(crate) fn fds(&self) -> (BorrowedFd<'_>, BorrowedFd<'_>) {
        (self.startup.as_fd(), self.trap.as_fd())
    }
}

/// A close-on-exec memory file named `name` holding `text`, sealed against
/// every change (`F_SEAL_WRITE`, `F_SEAL_SHRINK`, `F_SEAL_GROW`, and
/// `F_SEAL_SEAL` so the seals stay).
fn sealed_file(name: &CStr, text: &str) -> io::Result<File> {
    use nix::fcntl::{fcntl, FcntlArg, SealFlag};
    use nix::sys::memfd::{memfd_create, MFdFlags};
    let fd = memfd_create(name, MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING)?;
    let mut file = File::from(fd);
    file.write_all(text.as_bytes())?;
    let seals = SealFlag::F_SEAL_WRITE
        | SealFlag::F_SEAL_SHRINK
        | SealFlag::F_SEAL_GROW
        | SealFlag::F_SEAL_SEAL;
    fcntl(&file, FcntlArg::F_ADD_SEALS(seals))?;
    Ok(file)
}

/// The directory the trap wrote to `record`, if it wrote one: the file's
/// text less the newline `pwd` ends it with. `None` for an empty file (the
/// trap did not run: `exec`, SIGKILL, a replaced trap).
pub(crate) fn read(record: &Path) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let mut bytes = std::fs::read(record).ok()?;
    // Written once; were it written twice, the first line is the one.
    if let Some(end) = bytes.iter().position(|&b| b == b'\n') {
        bytes.truncate(end);
    }
    (!bytes.is_empty() && bytes[0] == b'/')
        .then(|| PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_startup_file_and_the_trap_are_valid_bash() {
        let dir = std::env::temp_dir().join(format!("bashtools-lastdir-{}", std::process::id()));
        for text in [STARTUP, TRAP] {
            std::fs::write(&dir, text).unwrap();
            let ok = std::process::Command::new("bash")
                .arg("-n")
                .arg(&dir)
                .status()
                .unwrap()
                .success();
            assert!(ok, "{text}");
        }
        let _ = std::fs::remove_file(&dir);
    }

    #[test]
    fn the_record_is_the_first_line_of_an_absolute_path() {
        let file = std::env::temp_dir().join(format!("bashtools-lastdir-r-{}", std::process::id()));
        let read_of = |text: &str| {
            std::fs::write(&file, text).unwrap();
            read(&file)
        };
        assert_eq!(read_of("/tmp/a b\n"), Some(PathBuf::from("/tmp/a b")));
        assert_eq!(read_of("/x\n/y\n"), Some(PathBuf::from("/x")));
        assert_eq!(read_of(""), None);
        assert_eq!(read_of("relative\n"), None);
        let _ = std::fs::remove_file(&file);
        assert_eq!(read(&file), None);
    }
}
