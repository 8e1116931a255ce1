//! Starting a command: `bash -c COMMAND` in a session of its own
//! (contract §2).
//!
//! - A new session (`setsid(2)`): the command
//!   leads a new session and a new process group, with no controlling
//!   terminal. Opening `/dev/tty` (what sudo, ssh and git prompts do) fails
//!   at once with ENXIO instead of stopping the command with SIGTTIN, one
//!   `killpg(2)` reaches everything that stays in the group, and the host's
//!   own group is never hit.
//! - stdin is `/dev/null`, or a private file holding the input the call
//!   gave (never a pipe): a command that reads input gets EOF instead of
//!   hanging on a terminal nobody watches.
//! - stdout and stderr are two descriptors of **one open file description**
//!   (`dup2`), so they share one offset and the file keeps the order the
//!   output was written in. A file, never a pipe: a grandchild that keeps the
//!   descriptor open cannot hang a reader, and huge output costs disk, not
//!   memory. (A monitor's stdout is a pipe: its reader wants the lines.)
//! - The signal mask is emptied and every signal disposition reset to
//!   default before `exec`. A host that blocks or ignores SIGTERM
//!   (signal-hook threads, `nohup`) would otherwise pass that on, and the
//!   command could not be stopped gracefully.
//! - A command longer than the kernel's limit for one argument
//!   (`MAX_ARG_STRLEN`, 128 KiB: `execve(2)` fails with E2BIG) is handed to
//!   bash in a private memory file (`memfd_create(2)`) on descriptor 3,
//!   which bash sources and closes before the command's first word runs.
//! - The record of the directory a command ends in (`lastdir.rs`) asks for
//!   a startup file (`BASH_ENV`, which bash reads before the command): the
//!   user's own `BASH_ENV` is kept aside in [`USER_BASH_ENV`] for that
//!   file to restore.
//! - Nothing else of the host's reaches the command: every other
//!   descriptor is closed at its exec.
//!
//! The process itself is made by the one launcher (`launch/`), from the
//! [`ChildSetup`] built here.

use std::ffi::{CStr, CString, OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::OnceLock;

use crate::config::Config;
use crate::os::bash::lastdir::{self, Record, Startup};
use crate::os::launch::{self, ChildSetup, Input, Output, Via};
use crate::os::sandbox::Restrictions;

/// What to start, in the words of the shells.
pub(crate) struct SpawnSpec<'a> {
    /// Limits in place of the owner's (the typed API's per-command ones).
    pub limits: Option<crate::limits::Limits>,
    /// The caller's carried environment: set, or unset for `None`.
    pub carried: &'a [(OsString, Option<OsString>)],
    pub command: &'a str,
    pub cwd: &'a Path,
    /// The file stderr — and stdout, unless `stdout` is given — goes to.
    pub output: &'a File,
    /// Where stdout goes instead (a monitor's pipe).
    pub stdout: Option<OwnedFd>,
    /// The slave of a pseudo-terminal (`pty`): opened as stdin, stdout and
    /// stderr instead of `/dev/null` and the output file, and, right after
    /// `setsid`, the command's controlling terminal.
    pub terminal: Option<&'a CStr>,
    /// The command's standard input (a private file, read-only), instead of
    /// `/dev/null`.
    pub stdin: Option<&'a File>,
    /// Whether the directory the command ends in is recorded
    /// (`lastdir.rs`).
    pub record_end: bool,
}

/// What the process layer adds to a spec: where the command is held and
/// how it is restricted.
pub(crate) struct Placement<'a> {
    /// The file the directory the command ends in is written to.
    pub record: Option<&'a Record>,
    /// The cgroup to start the command in, open, and whether it gets a
    /// cgroup namespace rooted there.
    pub cell: Option<(&'a File, bool)>,
    /// The `cgroup.procs` of each cgroup v1 directory the command joins
    /// (its budget on a hybrid host), open for writing.
    pub v1: &'a [File],
    /// A variable that marks the command and all it starts (containment's).
    pub mark: Option<(OsString, OsString)>,
    /// The startup file that records where the command ends.
    pub lastdir: Option<&'a Startup>,
    pub restrictions: Option<&'a Restrictions>,
    pub via: Via,
}

/// Where the user's own `BASH_ENV` is kept while our startup file takes
/// its place; that file puts it back before the command runs.
pub(crate) const USER_BASH_ENV: &str = "BASHTOOLS_USER_BASH_ENV";

/// The longest command passed as an argument: the kernel's `MAX_ARG_STRLEN`
/// (32 pages) less one byte for the terminating NUL.
const MAX_ARG: usize = 32 * 4096 - 1;

/// The descriptor a long command is read from.
const SCRIPT_FD: i32 = 3;

/// The non-interactive environment of contract §3.
const NONINTERACTIVE: [(&str, &str); 4] = [
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("GIT_EDITOR", "true"),
    ("TERM", "dumb"),
];

fn set(env: &mut Vec<(OsString, OsString)>, k: &OsStr, v: &OsStr) {
    env.retain(|(key, _)| key != k);
    env.push((k.to_os_string(), v.to_os_string()));
}

/// What every command's environment starts from: the host's, then the
/// non-interactive variables, then the configured ones, less the removed
/// ones.
pub(crate) fn base_environment(config: &Config) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    if config.noninteractive_env {
        for (k, v) in NONINTERACTIVE {
            set(&mut env, OsStr::new(k), OsStr::new(v));
        }
    }
    for (k, v) in &config.env {
        set(&mut env, k, v);
    }
    env.retain(|(k, _)| !config.env_remove.contains(k));
    env
}

/// The environment of a command: the [base](base_environment), then the
/// caller's carried variables (`carried`: set, or unset for `None`), then
/// the containment's mark and the end record's.
fn environment(
    config: &Config,
    carried: &[(OsString, Option<OsString>)],
    mark: Option<&(OsString, OsString)>,
    record: bool,
) -> (Vec<(OsString, OsString)>, bool) {
    let mut env = base_environment(config);
    for (k, v) in carried {
        match v {
            Some(v) => set(&mut env, k, v),
            None => env.retain(|(key, _)| key != k),
        }
    }
    if let Some((k, v)) = mark {
        set(&mut env, k, v);
    }
    let mut user_bash_env = false;
    if record {
        let bash_env = OsStr::new("BASH_ENV");
        if let Some((_, user)) = env.iter().find(|(k, _)| k == bash_env).cloned() {
            set(&mut env, OsStr::new(USER_BASH_ENV), &user);
            user_bash_env = true;
        }
        set(&mut env, bash_env, OsStr::new(lastdir::STARTUP_PATH));
    }
    (env, user_bash_env)
}

/// `bash`, found once on the host's `PATH`: a spawn then execs it directly
/// instead of trying each `PATH` entry in turn. Not found is an error
/// naming the step (never an exec of a relative `bash`, which would run
/// whatever file of that name the working directory holds).
pub(crate) fn bash_path() -> io::Result<&'static CStr> {
    static BASH: OnceLock<Option<CString>> = OnceLock::new();
    BASH.get_or_init(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|dir| dir.join("bash"))
            .find(|p| {
                std::fs::metadata(p)
                    .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            })
            .and_then(|p| CString::new(p.into_os_string().into_vec()).ok())
    })
    .as_deref()
    .ok_or_else(|| launch::not_found("bash"))
}

pub(crate) fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte"))
}

/// `NAME=VALUE` strings for `execve`; a pair holding a NUL byte is left out.
pub(crate) fn env_strings(env: Vec<(OsString, OsString)>) -> Vec<CString> {
    env.into_iter()
        .filter_map(|(k, v)| {
            let mut kv = k.into_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            cstring(&kv).ok()
        })
        .collect()
}

/// A command too long for one argument, in a memory file bash reads on
/// [`SCRIPT_FD`]. The first thing the sourced text does is close that
/// descriptor, so the command's own processes never inherit it; on the same
/// line, so `LINENO` counts the command's lines as `bash -c` would.
fn script_file(command: &str) -> io::Result<OwnedFd> {
    use nix::sys::memfd::{memfd_create, MFdFlags};
    let fd = memfd_create(c"bashtools-command", MFdFlags::MFD_CLOEXEC)?;
    let mut file = File::from(fd);
    file.write_all(format!("exec {SCRIPT_FD}<&-; ").as_bytes())?;
    file.write_all(command.as_bytes())?;
    Ok(OwnedFd::from(file))
}

/// Everything `exec` needs, built before the reaper's lock is taken.
pub(crate) struct Launch<'a> {
    argv: Vec<CString>,
    envp: Vec<CString>,
    cwd: CString,
    output: &'a File,
    stdout: Option<OwnedFd>,
    stdin: Option<&'a File>,
    terminal: Option<&'a CStr>,
    /// The command, when it is too long for an argument.
    script: Option<OwnedFd>,
    /// Whether the startup file reads the user's own `BASH_ENV`.
    user_bash_env: bool,
    /// The sandbox's Landlock ruleset for this command (its own output
    /// file added), made here, before the launch takes the reaper's lock.
    ruleset: Option<OwnedFd>,
    place: Placement<'a>,
}

/// Prepares the start of `spec`, placed as `place` says; [`Launch::spawn`]
/// starts it.
pub(crate) fn prepare<'a>(
    spec: SpawnSpec<'a>,
    place: Placement<'a>,
    config: &Config,
) -> io::Result<Launch<'a>> {
    // Checked before anything else: a NUL byte cannot be passed either way.
    let command = cstring(spec.command.as_bytes())?;
    let (command, script) = if command.as_bytes().len() > MAX_ARG {
        let source = format!(". /dev/fd/{SCRIPT_FD}");
        (
            cstring(source.as_bytes())?,
            Some(script_file(spec.command)?),
        )
    } else {
        (command, None)
    };
    let argv = vec![c"bash".to_owned(), c"-c".to_owned(), command];
    let record = place
        .record
        .filter(|_| place.lastdir.is_some() && spec.record_end);
    let ruleset = match place.restrictions {
        Some(r) => r.ruleset_for(&[spec.output.as_fd()])?,
        None => None,
    };
    let (env, user_bash_env) =
        environment(config, spec.carried, place.mark.as_ref(), record.is_some());
    let envp = env_strings(env);
    let place = Placement {
        lastdir: place.lastdir.filter(|_| record.is_some()),
        ..place
    };
    Ok(Launch {
        argv,
        envp,
        cwd: cstring(spec.cwd.as_os_str().as_bytes())?,
        output: spec.output,
        stdout: spec.stdout,
        stdin: spec.stdin,
        terminal: spec.terminal,
        script,
        user_bash_env,
        ruleset,
        place,
    })
}

impl Launch<'_> {
    /// Starts the command; returns the pid (also its session and process
    /// group id).
    pub(crate) fn spawn(self) -> io::Result<u32> {
        let Launch {
            argv,
            envp,
            cwd,
            output,
            stdout,
            stdin,
            terminal,
            script,
            user_bash_env,
            ruleset,
            place,
        } = self;
        let out = output.as_fd();
        let (stdin, stdout, stderr) = match terminal {
            // On a terminal, stdout and stderr are copies of it.
            Some(tty) => (Input::Terminal(tty), Output::Stdin, Output::Stdin),
            None => (
                stdin.map_or(Input::Null, |f| Input::Fd(f.as_fd())),
                Output::Fd(stdout.as_ref().map_or(out, |fd| fd.as_fd())),
                Output::Fd(out),
            ),
        };
        let mut setup = ChildSetup::new(bash_path()?.to_owned(), argv, envp, cwd)
            .stdio(stdin, stdout, stderr)
            .new_session()
            .restrict(place.restrictions, ruleset.as_ref().map(AsFd::as_fd));
        if let Some(script) = &script {
            setup = setup.keep(script.as_fd(), SCRIPT_FD);
        }
        if let (Some(startup), Some(record)) = (place.lastdir, place.record) {
            setup = setup
                .keep(startup.fd(user_bash_env), lastdir::STARTUP_FD)
                .keep(record.fd(), lastdir::RECORD_FD);
        }
        if let Some((cell, namespace)) = place.cell {
            setup = setup.cgroup(cell.as_fd(), namespace);
        }
        for dir in place.v1 {
            setup = setup.join_v1(dir.as_fd());
        }
        launch::launch(&setup, place.via)
    }
}
