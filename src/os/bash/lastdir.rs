//! Finding out which directory a command ends in, so that a `cd` can carry
//! over to the next command (option `persist_working_directory`), and with
//! which exported variables (option `persist_environment`), without
//! touching the command line, its output or its exit status.
//!
//! With the environment too, the trap then writes a NUL byte and
//! `builtin export -p` to the same descriptor: bash's own listing of its
//! exported variables, which the host reads as data (`exports.rs`), never
//! as code. It too names no variable and calls no function.
//!
//! A startup file (`BASH_ENV`, which bash reads before the command's first
//! word) sets one `EXIT` trap, `builtin pwd -P >&63`: at its end bash
//! writes its directory to descriptor 63, a memory file the host made for
//! this command alone and reads once the command has ended. Bash keeps the
//! exit status a trap was entered with, so `exit 3` still ends with 3, and
//! the output is untouched. The command line is left as it was: `LINENO`,
//! `$BASH_EXECUTION_STRING` and the gate see the user's text.
//!
//! **Nothing a command can set is read by this code.** The trap names no
//! variable, calls no function and evaluates nothing: `builtin` cannot be
//! shadowed by a function or an alias a gated command could define (the
//! gate refuses function definitions, alias expansion and `enable -n`), and
//! where the record goes is a descriptor, not a name. A command that moves
//! descriptor 63 (`exec 63>FILE`) makes the trap write its directory into a
//! file it had opened for writing itself; one that disables `pwd` or sets a
//! trap of its own only loses the record. An earlier design kept the
//! command's own `EXIT` trap beside ours through a `trap` function that
//! stored the command's action in a variable and evaluated it at exit: a
//! line made only of an assignment (which the gate allows) ran anything.
//! There is no such function any more.
//!
//! So the directory stays what it was when the command sets an `EXIT` trap
//! of its own (bash has one `EXIT` trap, and the command's replaces ours),
//! `exec`s another program, or is killed; and when the host stops a
//! command or moves it to the background, whatever the trap wrote: the
//! host decides, not the trap.
//!
//! What the command can see of it: the trap (`trap -p`), descriptor 63
//! (inherited by the programs it starts, like any descriptor bash holds),
//! and that bash, having a trap to run at its end, forks the last program
//! of the command instead of exec'ing it.

use std::ffi::CStr;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

/// The descriptors a command gets the startup file and its record on.
/// High numbers, out of the way of the `exec 3>…` of scripts; the startup
/// file closes its own before the command runs.
pub(crate) const STARTUP_FD: i32 = 62;
pub(crate) const RECORD_FD: i32 = 63;

/// The path `BASH_ENV` names: the startup file's descriptor.
pub(crate) const STARTUP_PATH: &str = "/dev/fd/62";

/// The startup file, read by every command: kept short, since bash's
/// lexer costs about 250 instructions a character. Comments are here, not
/// in it.
///
/// - `/dev/fd/62` is this file, which bash has read whole before it runs
///   it: closed at once.
/// - The trap: `2>&-` first, so a command that closed descriptor 63 gets
///   no error message at its end.
/// - `BASH_ENV` unset, so the scripts the command runs do not read it.
const STARTUP: &str =
    "exec 62<&-; builtin trap -- 'builtin pwd -P 2>&- >&63' EXIT; unset BASH_ENV\n";

/// The startup file when the command's environment had a `BASH_ENV` of its
/// own: the same, then that one put back and read (before the command
/// runs: nothing of the command's is there yet).
const STARTUP_USER: &str = r#"exec 62<&-; builtin trap -- 'builtin pwd -P 2>&- >&63' EXIT
BASH_ENV=$BASHTOOLS_USER_BASH_ENV; unset BASHTOOLS_USER_BASH_ENV; if [ -r "$BASH_ENV" ]; then . "$BASH_ENV"; fi
"#;

/// The startup files, in memory files of this process (nothing on disk to
/// clean up), sealed: no one — no command, no process that opens them again
/// through `/proc` — can change them. Every command that records its
/// directory gets one as a descriptor ([`STARTUP_FD`]).
pub(crate) struct Startup {
    plain: File,
    user: File,
}

impl Startup {
    /// Writes and seals the files; with `exports`, their trap also lists
    /// the exported variables.
    pub(crate) fn new(exports: bool) -> io::Result<Startup> {
        let (plain, user) = if exports {
            (with_exports(STARTUP), with_exports(STARTUP_USER))
        } else {
            (STARTUP.to_string(), STARTUP_USER.to_string())
        };
        Ok(Startup {
            plain: sealed_file(c"bashtools-lastdir", &plain)?,
            user: sealed_file(c"bashtools-lastdir", &user)?,
        })
    }

    /// The startup file, for the child to keep: the one that reads the
    /// user's own `BASH_ENV` after it when there is one.
    pub(crate) fn fd(&self, user_bash_env: bool) -> BorrowedFd<'_> {
        if user_bash_env {
            self.user.as_fd()
        } else {
            self.plain.as_fd()
        }
    }
}

/// A close-on-exec memory file named `name` holding `text`, sealed against
/// every change (`F_SEAL_WRITE`, `F_SEAL_SHRINK`, `F_SEAL_GROW`, and
/// `F_SEAL_SEAL` so the seals stay).
fn sealed_file(name: &CStr, text: &str) -> io::Result<File> {
    use nix::fcntl::{fcntl, FcntlArg, SealFlag};
    let mut file = memory_file(name, true)?;
    file.write_all(text.as_bytes())?;
    let seals = SealFlag::F_SEAL_WRITE
        | SealFlag::F_SEAL_SHRINK
        | SealFlag::F_SEAL_GROW
        | SealFlag::F_SEAL_SEAL;
    fcntl(&file, FcntlArg::F_ADD_SEALS(seals))?;
    Ok(file)
}

fn memory_file(name: &CStr, sealable: bool) -> io::Result<File> {
    use nix::sys::memfd::{memfd_create, MFdFlags};
    let mut flags = MFdFlags::MFD_CLOEXEC;
    if sealable {
        flags |= MFdFlags::MFD_ALLOW_SEALING;
    }
    Ok(File::from(memfd_create(name, flags)?))
}

/// Where one command's directory is written: an empty memory file of its
/// own, handed to it on [`RECORD_FD`]. It has no name in any directory, so
/// no other command (a sandboxed one above all) can find it by path.
pub(crate) struct Record(File);

impl Record {
    pub(crate) fn new() -> io::Result<Record> {
        memory_file(c"bashtools-cwd", false).map(Record)
    }

    /// The file, for the child to keep.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }

    /// What the trap wrote: the directory, and the exported variables
    /// after a NUL when it listed them. Nothing for an empty record (the
    /// trap did not run: `exec`, SIGKILL, a replaced trap).
    ///
    /// Bounded whatever was written: an export line longer than any
    /// variable the carried environment can hold is skipped, its name kept
    /// ([`Exports::too_long`]), and the listing stops at [`RECORD_MAX`]
    /// on a line's end ([`Exports::whole`] false). The directory and what
    /// fits are kept either way.
    pub(crate) fn read(&self) -> LastState {
        let mut reader = RecordReader::default();
        let mut buf = vec![0u8; 64 << 10];
        let mut at = 0u64;
        loop {
            match self.0.read_at(&mut buf, at) {
                Ok(0) => break,
                Ok(n) => {
                    at += n as u64;
                    if !reader.feed(&buf[..n]) {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return LastState::default(),
            }
        }
        reader.finish()
    }
}

/// The record read a chunk at a time, within its bounds.
#[derive(Default)]
struct RecordReader {
    /// The directory's bytes, until the NUL.
    dir: Vec<u8>,
    /// Past the NUL: the export listing.
    listing: Option<Exports>,
    /// The export line being read (at most its first bytes past
    /// [`LINE_MAX`]: enough for its name).
    line: Vec<u8>,
    /// The line being read is longer than [`LINE_MAX`].
    line_too_long: bool,
}

impl RecordReader {
    /// Takes the next bytes; false once nothing more is wanted.
    fn feed(&mut self, mut bytes: &[u8]) -> bool {
        if self.listing.is_none() {
            match bytes.iter().position(|&b| b == 0) {
                Some(nul) => {
                    self.push_dir(&bytes[..nul]);
                    self.listing = Some(Exports {
                        whole: true,
                        ..Exports::default()
                    });
                    bytes = &bytes[nul + 1..];
                }
                None => {
                    self.push_dir(bytes);
                    return true;
                }
            }
        }
        for &b in bytes {
            if b != b'\n' {
                if self.line.len() < LINE_MAX {
                    self.line.push(b);
                } else {
                    self.line_too_long = true;
                }
                continue;
            }
            if !self.end_line() {
                return false;
            }
        }
        true
    }

    /// A directory longer than any path is none: only its start is kept.
    fn push_dir(&mut self, bytes: &[u8]) {
        let room = (DIR_MAX + 1).saturating_sub(self.dir.len());
        self.dir.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// One export line has ended; false once the listing is full.
    fn end_line(&mut self) -> bool {
        let line = std::mem::take(&mut self.line);
        let too_long = std::mem::take(&mut self.line_too_long);
        let Some(listing) = self.listing.as_mut() else {
            return true;
        };
        if too_long {
            listing.too_long.push(name_of(&line));
            return true;
        }
        if listing.listing.len() + line.len() + 1 > RECORD_MAX {
            listing.whole = false;
            return false;
        }
        listing.listing.extend_from_slice(&line);
        listing.listing.push(b'\n');
        true
    }

    fn finish(mut self) -> LastState {
        if let Some(listing) = self.listing.as_mut() {
            // A last line without its newline stays as it is: the listing
            // is then no bash's, and nothing of it is carried.
            if !self.line.is_empty() && !self.line_too_long && listing.whole {
                listing.listing.extend_from_slice(&self.line);
            }
        }
        let dir = (self.dir.len() <= DIR_MAX)
            .then_some(self.dir)
            .and_then(parse);
        LastState {
            dir,
            exports: self.listing,
        }
    }
}

/// The name of an export line (`declare -FLAGS NAME=…`, or `export
/// NAME=…` in POSIX mode), as far as its first bytes tell.
fn name_of(line: &[u8]) -> std::ffi::OsString {
    use std::os::unix::ffi::OsStrExt;
    let rest = line
        .strip_prefix(b"declare ")
        .and_then(|r| r.iter().position(|&b| b == b' ').map(|at| &r[at + 1..]))
        .or_else(|| line.strip_prefix(b"export "))
        .unwrap_or(line);
    let end = rest.iter().position(|&b| b == b'=').unwrap_or(rest.len());
    std::ffi::OsStr::from_bytes(&rest[..end.min(256)]).to_os_string()
}

/// The trap of `text` made to list the exported variables as well.
fn with_exports(text: &str) -> String {
    text.replacen(
        "'builtin pwd -P 2>&- >&63'",
        "'builtin pwd -P 2>&- >&63; builtin printf \\\\0 2>&- >&63; builtin export -p 2>&- >&63'",
        1,
    )
}

/// The most of an export listing that is kept: the exported variables of
/// an environment far past what `execve` takes.
const RECORD_MAX: usize = 4 << 20;

/// The longest export line kept: past the carried environment's whole
/// size (with room for `declare -x ` and the quoting of a value), the
/// variable could never be carried anyway.
const LINE_MAX: usize = 2 * crate::config::defaults::CARRIED_ENVIRONMENT_LIMIT;

/// The longest directory `pwd` can write (`PATH_MAX`).
const DIR_MAX: usize = 4096;

/// What a command's record says of its end.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct LastState {
    /// The directory it ended in.
    pub dir: Option<PathBuf>,
    /// Its exported variables, when the trap listed them.
    pub exports: Option<Exports>,
}

/// A command's exported variables as `export -p` listed them, within the
/// record's bounds.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Exports {
    /// The lines kept, as written (read by `exports.rs`; kept as written,
    /// so an unchanged list is known without reading it).
    pub listing: Vec<u8>,
    /// Variables whose line was too long to keep, by name.
    pub too_long: Vec<std::ffi::OsString>,
    /// Whether the listing is whole; false when it was cut at
    /// [`RECORD_MAX`]: variables past the cut are unknown, not unset.
    pub whole: bool,
}

/// The path `pwd` wrote: all of `bytes` less the newline it ends with, so
/// a directory whose name holds a newline is kept exactly; `None` unless
/// it is absolute and whole. (A program the command started may write to
/// the record too: then it holds no directory, and the directory stays
/// what it was.)
fn parse(mut bytes: Vec<u8>) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    if bytes.pop() != Some(b'\n') || bytes.first() != Some(&b'/') || bytes.contains(&0) {
        return None;
    }
    Some(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_startup_files_are_valid_bash() {
        let path = std::env::temp_dir().join(format!("bashtools-lastdir-{}", std::process::id()));
        for text in [
            STARTUP.to_string(),
            STARTUP_USER.to_string(),
            with_exports(STARTUP),
            with_exports(STARTUP_USER),
        ] {
            std::fs::write(&path, &text).unwrap();
            let ok = std::process::Command::new("bash")
                .arg("-n")
                .arg(&path)
                .status()
                .unwrap()
                .success();
            assert!(ok, "{text}");
        }
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn the_record_is_one_absolute_path_and_its_newline() {
        let of = |text: &str| parse(text.as_bytes().to_vec());
        assert_eq!(of("/tmp/a b\n"), Some(PathBuf::from("/tmp/a b")));
        assert_eq!(of("/x\n/y\n"), Some(PathBuf::from("/x\n/y")));
        assert_eq!(of(""), None);
        assert_eq!(of("relative\n"), None);
        // Cut short (no newline): not a directory the trap finished.
        assert_eq!(of("/x"), None);
    }

    #[test]
    fn a_record_past_its_bounds_keeps_the_directory_and_what_fits() {
        let record = Record::new().unwrap();
        let mut copy = File::from(record.fd().try_clone_to_owned().unwrap());
        copy.write_all(b"/kept\n\0declare -x A=\"1\"\ndeclare -x BIG=\"")
            .unwrap();
        copy.write_all(&vec![b'x'; 3 * LINE_MAX]).unwrap();
        copy.write_all(b"\"\ndeclare -x C=\"3\"\n").unwrap();
        let state = record.read();
        assert_eq!(state.dir, Some(PathBuf::from("/kept")));
        let exports = state.exports.unwrap();
        assert_eq!(exports.listing, b"declare -x A=\"1\"\ndeclare -x C=\"3\"\n");
        assert_eq!(exports.too_long, vec![std::ffi::OsString::from("BIG")]);
        assert!(exports.whole);
        // Past RECORD_MAX of lines that each fit: cut on a line's end.
        let line = format!("declare -x V=\"{}\"\n", "y".repeat(1000));
        let lines = RECORD_MAX / line.len() + 10;
        copy.write_all(line.repeat(lines).as_bytes()).unwrap();
        let exports = record.read().exports.unwrap();
        assert!(!exports.whole);
        assert!(exports.listing.len() <= RECORD_MAX);
        assert!(exports.listing.ends_with(b"\"\n"));
    }

    #[test]
    fn names_of_export_lines() {
        assert_eq!(name_of(b"declare -x A=\"1\""), "A");
        assert_eq!(name_of(b"declare -rx LONG_NAME=\"x"), "LONG_NAME");
        assert_eq!(name_of(b"export P=\"1\""), "P");
        assert_eq!(name_of(b"declare -x NOVALUE"), "NOVALUE");
    }

    #[test]
    fn a_record_reads_back_what_was_written_to_it() {
        let record = Record::new().unwrap();
        assert_eq!(record.read(), LastState::default());
        let mut copy = File::from(record.fd().try_clone_to_owned().unwrap());
        copy.write_all(b"/some where\n").unwrap();
        assert_eq!(record.read().dir, Some(PathBuf::from("/some where")));
        copy.write_all(b"\0declare -x A=\"1\"\n").unwrap();
        let state = record.read();
        assert_eq!(state.dir, Some(PathBuf::from("/some where")));
        let exports = state.exports.unwrap();
        assert_eq!(exports.listing, b"declare -x A=\"1\"\n");
        assert!(exports.whole && exports.too_long.is_empty());
    }
}
