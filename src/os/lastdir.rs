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
//! subshells do not inherit our trap.
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
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// The variable that names the file the trap appends to.
pub(crate) const FILE_VAR: &str = "BASHTOOLS_CWD_FILE";

/// The variable that names the containment's startup file, when a command
/// needs both (see `cgroup.rs`): ours runs first, then sources that one,
/// which restores the user's own `BASH_ENV`.
pub(crate) const THEN_VAR: &str = "BASHTOOLS_JOIN_STARTUP";

/// The startup file. Every name it leaves behind starts with
/// `__bashtools_`; the variables it was told by are unset before the
/// command runs, so the command's environment is what it would be without.
const STARTUP: &str = r#"# bashtools: record the directory this command ends in (see os/lastdir.rs)
__bashtools_cwd_file=$BASHTOOLS_CWD_FILE
__bashtools_pid=$$
__bashtools_ours='if __bashtools_record; then builtin eval -- "${__bashtools_exit_trap-}"; else builtin eval -- "${__bashtools_exit_trap-}"; fi'
unset BASHTOOLS_CWD_FILE
# Called as an `if` condition, so `set -e` does not end the shell on the
# status it hands back; each branch then starts with that status in `$?`.
__bashtools_record() {
    builtin local __bashtools_s=$?
    if [ -f "$__bashtools_cwd_file" ]; then
        builtin pwd -P 2>&- >> "$__bashtools_cwd_file" || :
    fi
    builtin return "$__bashtools_s"
}
# The body of `trap` is parsed only when a command calls it (few do): it is
# most of this file, and every command would pay for parsing it.
__bashtools_trap='
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
'
trap() { builtin eval "$__bashtools_trap"; }
builtin trap -- "$__bashtools_ours" EXIT
if [ -n "${BASHTOOLS_JOIN_STARTUP+set}" ]; then
    BASH_ENV=$BASHTOOLS_JOIN_STARTUP
    unset BASHTOOLS_JOIN_STARTUP
    . "$BASH_ENV"
elif [ -n "${BASHTOOLS_USER_BASH_ENV+set}" ]; then
    BASH_ENV=$BASHTOOLS_USER_BASH_ENV
    unset BASHTOOLS_USER_BASH_ENV
    if [ -r "$BASH_ENV" ]; then . "$BASH_ENV"; fi
else
    unset BASH_ENV
fi
"#;

/// The startup file, in a memory file of this process (nothing on disk to
/// clean up or tamper with), and the path commands open it by.
pub(crate) struct Startup {
    /// Held open for as long as commands may read it by its path.
    _file: File,
    path: PathBuf,
}

impl Startup {
    /// Writes the startup file; `path_of` turns its descriptor into the
    /// path a command opens it by (see `Spawner::proc_fd_path` for why a
    /// sandbox needs another one than `/proc/PID/fd/N`).
    pub(crate) fn new(path_of: impl FnOnce(i32) -> PathBuf) -> io::Result<Startup> {
        use nix::sys::memfd::{memfd_create, MemFdCreateFlag};
        let name = CStr::from_bytes_with_nul(b"bashtools-lastdir\0").expect("a C string");
        let mut file = File::from(memfd_create(name, MemFdCreateFlag::MFD_CLOEXEC)?);
        file.write_all(STARTUP.as_bytes())?;
        let path = path_of(file.as_raw_fd());
        Ok(Startup { _file: file, path })
    }

    /// The path of the startup file, for `BASH_ENV`.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

/// The path of descriptor `fd` of this process, for a command not in a
/// sandbox.
pub(crate) fn proc_fd_path(fd: i32) -> PathBuf {
    PathBuf::from(format!("/proc/{}/fd/{fd}", std::process::id()))
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
    fn the_startup_file_is_valid_bash() {
        let dir = std::env::temp_dir().join(format!("bashtools-lastdir-{}", std::process::id()));
        std::fs::write(&dir, STARTUP).unwrap();
        let ok = std::process::Command::new("bash")
            .arg("-n")
            .arg(&dir)
            .status()
            .unwrap()
            .success();
        let _ = std::fs::remove_file(&dir);
        assert!(ok);
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
