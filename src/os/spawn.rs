//! Starting a command: `bash -c COMMAND` in a session of its own
//! (contract §2).
//!
//! - A new session (`setsid(2)`, through `POSIX_SPAWN_SETSID`): the command
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
//! - Containment may ask for a startup file (`BASH_ENV`, which bash reads
//!   before the command), and so may the record of the directory a command
//!   ends in (`lastdir.rs`): the user's own `BASH_ENV` is kept aside in
//!   [`USER_BASH_ENV`] for that file to restore.
//!
//! With glibc the child is made by `posix_spawn(3)`, which uses
//! `clone(CLONE_VM | CLONE_VFORK)`: unlike `fork(2)` it does not copy the
//! host's page tables, so starting a command costs the same for a small host
//! and for an agent with gigabytes of heap (a fork-based spawn measured 3-4x
//! slower from a 64 MiB host). Elsewhere `std::process::Command` with a
//! `pre_exec` hook does the same work after a fork.

use std::ffi::{CStr, CString, OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::OnceLock;

use crate::config::Config;
use crate::os::lastdir;

/// What to start.
pub(crate) struct SpawnSpec<'a> {
    pub command: &'a str,
    pub cwd: &'a Path,
    /// The file stderr — and stdout, unless `stdout` is given — goes to.
    pub output: &'a File,
    /// Where stdout goes instead (a monitor's pipe).
    pub stdout: Option<OwnedFd>,
    /// The cgroup to start the command in, if any.
    pub join: Option<Join<'a>>,
    /// A variable that marks the command and all it starts (containment's,
    /// in session mode).
    pub mark: Option<(OsString, OsString)>,
    /// The slave of a pseudo-terminal (`pty`): opened as stdin, stdout and
    /// stderr instead of `/dev/null` and the output file, and, right after
    /// `setsid`, the command's controlling terminal.
    pub terminal: Option<&'a CStr>,
    /// The command's standard input (a private file, read-only), instead of
    /// `/dev/null`.
    pub stdin: Option<&'a File>,
    /// Where the directory the command ends in is written (`lastdir.rs`).
    pub record_cwd: Option<&'a Path>,
    /// The startup file that writes it (set by the process layer, as `join`).
    pub lastdir: Option<&'a Path>,
}

/// The record of the directory a command ends in: the file the trap
/// appends to (made empty by the host) and the startup file that sets the
/// trap.
#[derive(Clone, Copy)]
struct RecordCwd<'a> {
    pub file: &'a Path,
    pub startup: &'a Path,
}

/// How a command gets into its cgroup: created inside it (`clone3.rs`),
/// or, where the kernel cannot, moved by its own bash from a startup file
/// (`BASH_ENV`) told where by `env`.
pub(crate) struct Join<'a> {
    pub cgroup: &'a File,
    pub startup: &'a Path,
    pub env: Vec<(OsString, OsString)>,
}

/// Where the user's own `BASH_ENV` is kept while a containment startup file
/// takes its place; that file puts it back before the command runs.
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

/// The environment of a command: the host's, then the non-interactive
/// variables, then the configured ones, less the removed ones, then the
/// containment's and the directory record's.
fn environment(
    config: &Config,
    mark: Option<&(OsString, OsString)>,
    join: Option<&Join<'_>>,
    record: Option<RecordCwd<'_>>,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let set = |env: &mut Vec<(OsString, OsString)>, k: &OsStr, v: &OsStr| {
        env.retain(|(key, _)| key != k);
        env.push((k.to_os_string(), v.to_os_string()));
    };
    if config.noninteractive_env {
        for (k, v) in NONINTERACTIVE {
            set(&mut env, OsStr::new(k), OsStr::new(v));
        }
    }
    for (k, v) in &config.env {
        set(&mut env, k, v);
    }
    env.retain(|(k, _)| !config.env_remove.contains(k));
    if let Some((k, v)) = mark {
        set(&mut env, k, v);
    }
    // The record's startup file runs first and then sources the
    // containment's, which restores the user's own.
    let startup = record.map(|r| r.startup).or(join.map(|j| j.startup));
    if let Some(startup) = startup {
        let bash_env = OsStr::new("BASH_ENV");
        if let Some((_, user)) = env.iter().find(|(k, _)| k == bash_env).cloned() {
            set(&mut env, OsStr::new(USER_BASH_ENV), &user);
        }
        set(&mut env, bash_env, startup.as_os_str());
    }
    if let Some(record) = record {
        set(
            &mut env,
            OsStr::new(lastdir::FILE_VAR),
            record.file.as_os_str(),
        );
        if let Some(join) = join {
            set(
                &mut env,
                OsStr::new(lastdir::THEN_VAR),
                join.startup.as_os_str(),
            );
        }
    }
    if let Some(join) = join {
        for (k, v) in &join.env {
            set(&mut env, k, v);
        }
    }
    env
}

/// `bash`, found once on the host's `PATH`: a spawn then execs it directly
/// instead of trying each `PATH` entry in turn. `None` when it is not found
/// (the spawn then searches `PATH` itself and reports the error).
fn bash_path() -> Option<&'static CString> {
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
    .as_ref()
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte"))
}

/// A command too long for one argument, in a memory file bash reads on
/// [`SCRIPT_FD`]. The first thing the sourced text does is close that
/// descriptor, so the command's own processes never inherit it; on the same
/// line, so `LINENO` counts the command's lines as `bash -c` would.
fn script_file(command: &str) -> io::Result<OwnedFd> {
    use nix::sys::memfd::{memfd_create, MemFdCreateFlag};
    let name = std::ffi::CStr::from_bytes_with_nul(b"bashtools-command\0").expect("a C string");
    let fd = memfd_create(name, MemFdCreateFlag::MFD_CLOEXEC)?;
    let mut file = File::from(fd);
    file.write_all(format!("exec {SCRIPT_FD}<&-; ").as_bytes())?;
    file.write_all(command.as_bytes())?;
    Ok(OwnedFd::from(file))
}

/// Everything `exec` needs, built before the reaper's lock is taken.
pub(crate) struct Launch<'a> {
    /// The absolute path of bash, or `bash` to search `PATH` for.
    program: CString,
    argv: Vec<CString>,
    envp: Vec<CString>,
    cwd: CString,
    output: &'a File,
    stdout: Option<OwnedFd>,
    stdin: Option<&'a File>,
    /// The command, when it is too long for an argument.
    script: Option<OwnedFd>,
    /// The cgroup to create the command in, and what makes the environment
    /// that has bash move itself there where that cannot be done.
    cgroup: Option<Joining<'a>>,
    /// The terminal to open as stdio.
    terminal: Option<CString>,
}

/// A command's cell, and what the environment that joins it is made of.
struct Joining<'a> {
    join: Join<'a>,
    config: &'a Config,
    mark: Option<(OsString, OsString)>,
    record: Option<RecordCwd<'a>>,
}

impl Joining<'_> {
    /// The environment whose startup file moves bash into the cell.
    fn env(&self) -> Vec<CString> {
        env_strings(environment(
            self.config,
            self.mark.as_ref(),
            Some(&self.join),
            self.record,
        ))
    }
}

fn env_strings(env: Vec<(OsString, OsString)>) -> Vec<CString> {
    env.into_iter()
        .filter_map(|(k, v)| {
            let mut kv = k.into_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            cstring(&kv).ok()
        })
        .collect()
}

/// Prepares the start of `spec`; [`Launch::spawn`] starts it.
pub(crate) fn prepare<'a>(spec: SpawnSpec<'a>, config: &'a Config) -> io::Result<Launch<'a>> {
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
    let argv = vec![cstring(b"bash")?, cstring(b"-c")?, command];
    let record = spec
        .record_cwd
        .zip(spec.lastdir)
        .map(|(file, startup)| RecordCwd { file, startup });
    let envp = env_strings(environment(config, spec.mark.as_ref(), None, record));
    // The environment that moves bash into its cell is made only where the
    // kernel cannot create the command there (rare): not on every start.
    let cgroup = spec.join.map(|join| Joining {
        join,
        config,
        mark: spec.mark.clone(),
        record,
    });
    Ok(Launch {
        program: bash_path().cloned().unwrap_or_else(|| argv[0].clone()),
        argv,
        envp,
        cwd: cstring(spec.cwd.as_os_str().as_bytes())?,
        output: spec.output,
        stdout: spec.stdout,
        stdin: spec.stdin,
        script,
        cgroup,
        terminal: spec.terminal.map(CStr::to_owned),
    })
}

impl Launch<'_> {
    /// Starts the command; returns the pid (also its session and process
    /// group id). With a cgroup: created inside it where the kernel can
    /// (`clone3`), else spawned with the startup file that moves it.
    pub(crate) fn spawn(&self) -> io::Result<u32> {
        let Some(joining) = &self.cgroup else {
            return self.spawn_with(&self.envp);
        };
        // bash not found up front: only the spawn's PATH search can say why.
        // `BASHTOOLS_CGROUP_JOIN=startup` asks for the startup file (what a
        // kernel without clone3 gets), so that path can be tested here.
        let startup_only = std::env::var_os(JOIN_VAR).is_some_and(|v| v == "startup");
        if !self.program.as_bytes().starts_with(b"/") || startup_only {
            return self.spawn_with(&joining.env());
        }
        match self.clone_into(joining.join.cgroup) {
            Err(e) if CLONE3_MISSING.contains(&e.raw_os_error().unwrap_or(0)) => {
                self.spawn_with(&joining.env())
            }
            other => other,
        }
    }

    fn clone_into(&self, cgroup: &File) -> io::Result<u32> {
        use std::os::fd::AsRawFd;
        let out = self.output.as_raw_fd();
        let stdout = self.stdout.as_ref().map_or(out, |fd| fd.as_raw_fd());
        // On a terminal, stdin is the terminal and stdout and stderr copies of it.
        let mut moves = match &self.terminal {
            Some(_) => vec![(0, 1), (0, 2)],
            None => vec![(stdout, 1), (out, 2)],
        };
        if let Some(script) = &self.script {
            moves.push((script.as_raw_fd(), SCRIPT_FD));
        }
        let ptrs = |v: &[CString]| -> Vec<*mut nix::libc::c_char> {
            v.iter()
                .map(|s| s.as_ptr() as *mut _)
                .chain(std::iter::once(std::ptr::null_mut()))
                .collect()
        };
        let (argv, envp) = (ptrs(&self.argv), ptrs(&self.envp));
        crate::os::clone3::spawn_into(
            &crate::os::clone3::Child {
                program: &self.program,
                argv: &argv,
                envp: &envp,
                cwd: &self.cwd,
                terminal: self.terminal.as_deref(),
                stdin: self.stdin.map(|f| f.as_raw_fd()),
                moves: &moves,
            },
            cgroup,
        )
    }
}

/// The variable that turns `clone3` off (tests of the fallback).
const JOIN_VAR: &str = "BASHTOOLS_CGROUP_JOIN";

/// The errors of a kernel without `clone3` or `CLONE_INTO_CGROUP`.
const CLONE3_MISSING: [i32; 4] = [
    nix::libc::ENOSYS,
    nix::libc::EINVAL,
    nix::libc::E2BIG,
    nix::libc::EOPNOTSUPP,
];

#[cfg(target_env = "gnu")]
mod imp {
    //! `posix_spawn(3)` with file actions for stdio and the directory, and
    //! attributes for the session, the mask and the dispositions. Each call
    //! is its own small `unsafe` block; the guards that destroy the action
    //! list and the attributes exist only once their init has succeeded.

    use std::io;
    use std::mem::MaybeUninit;
    use std::os::fd::AsRawFd;
    use std::ptr;

    use nix::libc;

    use super::{Launch, SCRIPT_FD};

    /// Turns a `posix_spawn*` return value (an errno, not -1) into a Result.
    fn check(ret: libc::c_int) -> io::Result<()> {
        if ret == 0 {
            Ok(())
        } else {
            Err(io::Error::from_raw_os_error(ret))
        }
    }

    /// Every signal, including the real-time ones glibc keeps for itself (32
    /// and 33), which `sigfillset` leaves out: glibc's spawn would otherwise
    /// set those to SIG_IGN in the child, and exec keeps ignored signals.
    fn all_signals() -> libc::sigset_t {
        let mut set = MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: sigfillset initialises the whole set it is given.
        unsafe { libc::sigfillset(set.as_mut_ptr()) };
        // SAFETY: initialised just above.
        let mut set = unsafe { set.assume_init() };
        // Signal n is bit n-1 of the mask: set 1..=64 (the kernel's
        // signals) in its first 64 bits. glibc's sigset_t is 1024 bits of
        // unsigned longs; the write makes no assumption on its alignment.
        if std::mem::size_of::<libc::sigset_t>() >= std::mem::size_of::<u64>() {
            let first = &mut set as *mut libc::sigset_t as *mut u64;
            // SAFETY: the first 8 bytes lie within the set (checked above).
            unsafe { first.write_unaligned(u64::MAX) };
        }
        set
    }

    fn no_signals() -> libc::sigset_t {
        let mut set = MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: sigemptyset initialises the whole set it is given.
        unsafe { libc::sigemptyset(set.as_mut_ptr()) };
        // SAFETY: initialised just above.
        unsafe { set.assume_init() }
    }

    /// An initialised `posix_spawn_file_actions_t`, destroyed on drop.
    struct Actions(libc::posix_spawn_file_actions_t);

    impl Actions {
        fn new() -> io::Result<Actions> {
            let mut raw = MaybeUninit::uninit();
            // SAFETY: init writes the object it is given.
            check(unsafe { libc::posix_spawn_file_actions_init(raw.as_mut_ptr()) })?;
            // SAFETY: init succeeded, so the object is initialised.
            Ok(Actions(unsafe { raw.assume_init() }))
        }

        fn open(&mut self, fd: i32, path: &std::ffi::CStr, flags: i32) -> io::Result<()> {
            // SAFETY: the path is NUL-terminated; the action list copies it.
            check(unsafe {
                libc::posix_spawn_file_actions_addopen(&mut self.0, fd, path.as_ptr(), flags, 0)
            })
        }

        fn dup2(&mut self, from: i32, to: i32) -> io::Result<()> {
            // SAFETY: integers only; the list is initialised.
            check(unsafe { libc::posix_spawn_file_actions_adddup2(&mut self.0, from, to) })
        }

        fn chdir(&mut self, dir: &std::ffi::CStr) -> io::Result<()> {
            // SAFETY: `dir` is NUL-terminated; glibc copies it.
            check(unsafe { libc::posix_spawn_file_actions_addchdir_np(&mut self.0, dir.as_ptr()) })
        }
    }

    impl Drop for Actions {
        fn drop(&mut self) {
            // SAFETY: only an initialised list is ever wrapped.
            unsafe { libc::posix_spawn_file_actions_destroy(&mut self.0) };
        }
    }

    /// An initialised `posix_spawnattr_t`, destroyed on drop.
    struct Attr(libc::posix_spawnattr_t);

    impl Attr {
        fn new() -> io::Result<Attr> {
            let mut raw = MaybeUninit::uninit();
            // SAFETY: init writes the object it is given.
            check(unsafe { libc::posix_spawnattr_init(raw.as_mut_ptr()) })?;
            // SAFETY: init succeeded, so the object is initialised.
            Ok(Attr(unsafe { raw.assume_init() }))
        }

        fn flags(&mut self, flags: libc::c_int) -> io::Result<()> {
            // SAFETY: an integer only; the attributes are initialised.
            check(unsafe { libc::posix_spawnattr_setflags(&mut self.0, flags as libc::c_short) })
        }

        fn mask(&mut self, set: &libc::sigset_t) -> io::Result<()> {
            // SAFETY: the set is initialised; glibc copies it.
            check(unsafe { libc::posix_spawnattr_setsigmask(&mut self.0, set) })
        }

        fn defaults(&mut self, set: &libc::sigset_t) -> io::Result<()> {
            // SAFETY: the set is initialised; glibc copies it.
            check(unsafe { libc::posix_spawnattr_setsigdefault(&mut self.0, set) })
        }
    }

    impl Drop for Attr {
        fn drop(&mut self) {
            // SAFETY: only initialised attributes are ever wrapped.
            unsafe { libc::posix_spawnattr_destroy(&mut self.0) };
        }
    }

    impl Launch<'_> {
        /// `posix_spawn` with environment `env`.
        pub(crate) fn spawn_with(&self, env: &[std::ffi::CString]) -> io::Result<u32> {
            let out = self.output.as_raw_fd();
            let stdout = self.stdout.as_ref().map_or(out, |fd| fd.as_raw_fd());
            let mut actions = Actions::new()?;
            match (&self.terminal, self.stdin) {
                // Opened after the SETSID below (glibc runs the attributes
                // first), without O_NOCTTY: it becomes the controlling
                // terminal.
                (Some(tty), _) => {
                    actions.open(0, tty, libc::O_RDWR)?;
                    actions.dup2(0, 1)?;
                    actions.dup2(0, 2)?;
                }
                (None, stdin) => {
                    match stdin {
                        Some(file) => actions.dup2(file.as_raw_fd(), 0)?,
                        None => actions.open(0, c"/dev/null", libc::O_RDONLY)?,
                    }
                    actions.dup2(stdout, 1)?;
                    actions.dup2(out, 2)?;
                }
            }
            if let Some(script) = &self.script {
                actions.dup2(script.as_raw_fd(), SCRIPT_FD)?;
            }
            actions.chdir(&self.cwd)?;

            let mut attr = Attr::new()?;
            // SETSID makes the new group too: SETPGROUP beside it would fail
            // (a session leader cannot change its group).
            attr.flags(
                libc::POSIX_SPAWN_SETSID as libc::c_int
                    | libc::POSIX_SPAWN_SETSIGMASK
                    | libc::POSIX_SPAWN_SETSIGDEF,
            )?;
            attr.mask(&no_signals())?;
            attr.defaults(&all_signals())?;

            let mut argv: Vec<*mut libc::c_char> =
                self.argv.iter().map(|a| a.as_ptr() as *mut _).collect();
            argv.push(ptr::null_mut());
            let mut envp: Vec<*mut libc::c_char> =
                env.iter().map(|e| e.as_ptr() as *mut _).collect();
            envp.push(ptr::null_mut());

            let mut pid: libc::pid_t = 0;
            // SAFETY: the program, argument and environment strings live in
            // `self` until this returns, and both arrays end with a null
            // pointer; the action list and attributes are initialised.
            check(unsafe {
                libc::posix_spawnp(
                    &mut pid,
                    self.program.as_ptr(),
                    &actions.0,
                    &attr.0,
                    argv.as_ptr(),
                    envp.as_ptr(),
                )
            })?;
            Ok(pid as u32)
        }
    }
}

#[cfg(not(target_env = "gnu"))]
mod imp {
    //! `std::process::Command` with a `pre_exec` hook: a fork, then the same
    //! session and resets by hand before exec.

    use std::io;
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    use nix::sys::signal::{sigprocmask, SigSet, SigmaskHow};

    use super::{Launch, SCRIPT_FD};

    impl Launch<'_> {
        pub(crate) fn spawn_with(&self, env: &[std::ffi::CString]) -> io::Result<u32> {
            let arg = std::ffi::OsStr::from_bytes(self.argv[2].as_bytes());
            let mut cmd = Command::new(std::ffi::OsStr::from_bytes(self.program.as_bytes()));
            cmd.arg("-c").arg(arg);
            cmd.current_dir(std::ffi::OsStr::from_bytes(self.cwd.as_bytes()));
            cmd.env_clear();
            for kv in env {
                let kv = kv.as_bytes();
                if let Some(eq) = kv.iter().position(|&b| b == b'=') {
                    cmd.env(
                        std::ffi::OsStr::from_bytes(&kv[..eq]),
                        std::ffi::OsStr::from_bytes(&kv[eq + 1..]),
                    );
                }
            }
            match self.stdin {
                Some(file) => cmd.stdin(Stdio::from(file.try_clone()?)),
                None => cmd.stdin(Stdio::null()),
            };
            let stdout = match &self.stdout {
                Some(fd) => Stdio::from(fd.try_clone()?),
                None => Stdio::from(self.output.try_clone()?),
            };
            cmd.stdout(stdout)
                .stderr(Stdio::from(self.output.try_clone()?));
            let script = self.script.as_ref().map(|fd| fd.as_raw_fd());
            let terminal = self.terminal.clone();
            // SAFETY: the hook runs in the forked child and calls only
            // async-signal-safe functions.
            unsafe { cmd.pre_exec(move || start_session(script, terminal.as_deref())) };
            let child = cmd.spawn()?;
            Ok(child.id())
        }
    }

    fn start_session(script: Option<i32>, terminal: Option<&std::ffi::CStr>) -> io::Result<()> {
        nix::unistd::setsid()?;
        if let Some(tty) = terminal {
            // After setsid and without O_NOCTTY: the controlling terminal.
            // SAFETY: open and dup2 on a NUL-terminated path and our own
            // descriptors.
            let fd = unsafe { nix::libc::open(tty.as_ptr(), nix::libc::O_RDWR) };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            for to in 0..3 {
                // SAFETY: as above.
                if unsafe { nix::libc::dup2(fd, to) } < 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            if fd > 2 {
                // SAFETY: our own descriptor, no longer needed.
                unsafe { nix::libc::close(fd) };
            }
        }
        if let Some(fd) = script {
            // SAFETY: dup2 on descriptors this process holds.
            if unsafe { nix::libc::dup2(fd, SCRIPT_FD) } < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        for signo in 1..=nix::libc::SIGRTMAX() {
            if signo == nix::libc::SIGKILL || signo == nix::libc::SIGSTOP {
                continue;
            }
            // SAFETY: installs no handler.
            unsafe {
                nix::libc::signal(signo, nix::libc::SIG_DFL);
            }
        }
        sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)?;
        Ok(())
    }
}
