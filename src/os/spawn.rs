//! Starting a command: `bash -c COMMAND` in a process group of its own
//! (SPEC section 2).
//!
//! - `setpgid(2)` in the child: the command and everything it forks share
//!   one group, so one `killpg(2)` reaches them all and the host's own group
//!   is never hit.
//! - stdin is `/dev/null`: a command that reads input gets EOF instead of
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
//!
//! With glibc the child is made by `posix_spawn(3)`, which uses
//! `clone(CLONE_VM | CLONE_VFORK)`: unlike `fork(2)` it does not copy the
//! host's page tables, so starting a command costs the same for a small host
//! and for an agent with gigabytes of heap (a fork-based spawn measured 3-4x
//! slower from a 64 MiB host). Elsewhere `std::process::Command` with a
//! `pre_exec` hook does the same work after a fork.

use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::OnceLock;

use crate::config::Config;

/// What to start.
pub(crate) struct SpawnSpec<'a> {
    pub command: &'a str,
    pub cwd: &'a Path,
    /// The file stderr — and stdout, unless `stdout` is given — goes to.
    pub output: &'a File,
    /// Where stdout goes instead (a monitor's pipe).
    pub stdout: Option<OwnedFd>,
}

/// The non-interactive environment of SPEC section 3.
const NONINTERACTIVE: [(&str, &str); 4] = [
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("GIT_EDITOR", "true"),
    ("TERM", "dumb"),
];

/// The environment of a command: the host's, then the non-interactive
/// variables, then the configured ones, less the removed ones.
fn environment(config: &Config) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let mut set = |k: &OsStr, v: &OsStr| {
        env.retain(|(key, _)| key != k);
        env.push((k.to_os_string(), v.to_os_string()));
    };
    if config.noninteractive_env {
        for (k, v) in NONINTERACTIVE {
            set(OsStr::new(k), OsStr::new(v));
        }
    }
    for (k, v) in &config.env {
        set(k, v);
    }
    env.retain(|(k, _)| !config.env_remove.contains(k));
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

/// Everything `exec` needs, built before the reaper's lock is taken.
pub(crate) struct Launch<'a> {
    /// The absolute path of bash, or `bash` to search `PATH` for.
    program: CString,
    argv: Vec<CString>,
    envp: Vec<CString>,
    cwd: CString,
    output: &'a File,
    stdout: Option<OwnedFd>,
}

/// Prepares the start of `spec`; [`Launch::spawn`] starts it.
pub(crate) fn prepare<'a>(spec: SpawnSpec<'a>, config: &Config) -> io::Result<Launch<'a>> {
    let argv = vec![
        cstring(b"bash")?,
        cstring(b"-c")?,
        cstring(spec.command.as_bytes())?,
    ];
    let envp = environment(config)
        .into_iter()
        .filter_map(|(k, v)| {
            let mut kv = k.into_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            cstring(&kv).ok()
        })
        .collect();
    Ok(Launch {
        program: bash_path().cloned().unwrap_or_else(|| argv[0].clone()),
        argv,
        envp,
        cwd: cstring(spec.cwd.as_os_str().as_bytes())?,
        output: spec.output,
        stdout: spec.stdout,
    })
}

#[cfg(target_env = "gnu")]
mod imp {
    //! `posix_spawnp(3)` with file actions for stdio and the directory, and
    //! attributes for the group, the mask and the dispositions.

    use std::io;
    use std::os::fd::AsRawFd;
    use std::ptr;

    use nix::libc;

    use super::Launch;

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
        // SAFETY: sigset_t is plain data; sigfillset initialises it.
        let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
        unsafe { libc::sigfillset(&mut set) };
        let words = std::mem::size_of::<libc::sigset_t>() / std::mem::size_of::<u64>();
        let bits = &mut set as *mut libc::sigset_t as *mut u64;
        // Signal n is bit n-1 of the mask: set 1..=64 (the kernel's signals).
        if words > 0 {
            // SAFETY: the first word of the mask is within the struct.
            unsafe { *bits = u64::MAX };
        }
        set
    }

    struct Actions(libc::posix_spawn_file_actions_t);
    impl Drop for Actions {
        fn drop(&mut self) {
            // SAFETY: initialised in `spawn` before this guard exists.
            unsafe { libc::posix_spawn_file_actions_destroy(&mut self.0) };
        }
    }

    struct Attr(libc::posix_spawnattr_t);
    impl Drop for Attr {
        fn drop(&mut self) {
            // SAFETY: initialised in `spawn` before this guard exists.
            unsafe { libc::posix_spawnattr_destroy(&mut self.0) };
        }
    }

    impl Launch<'_> {
        /// Starts the command; returns the pid (also its process group id).
        pub(crate) fn spawn(&self) -> io::Result<u32> {
            let out = self.output.as_raw_fd();
            let stdout = self.stdout.as_ref().map_or(out, |fd| fd.as_raw_fd());
            // SAFETY: every pointer passed below points into values that
            // live until posix_spawnp returns (it copies what it keeps); the
            // argument and environment arrays end with a null pointer.
            unsafe {
                let mut actions = Actions(std::mem::zeroed());
                check(libc::posix_spawn_file_actions_init(&mut actions.0))?;
                check(libc::posix_spawn_file_actions_addopen(
                    &mut actions.0,
                    0,
                    b"/dev/null\0".as_ptr() as *const libc::c_char,
                    libc::O_RDONLY,
                    0,
                ))?;
                check(libc::posix_spawn_file_actions_adddup2(
                    &mut actions.0,
                    stdout,
                    1,
                ))?;
                check(libc::posix_spawn_file_actions_adddup2(
                    &mut actions.0,
                    out,
                    2,
                ))?;
                check(libc::posix_spawn_file_actions_addchdir_np(
                    &mut actions.0,
                    self.cwd.as_ptr(),
                ))?;

                let mut attr = Attr(std::mem::zeroed());
                check(libc::posix_spawnattr_init(&mut attr.0))?;
                let flags = libc::POSIX_SPAWN_SETPGROUP
                    | libc::POSIX_SPAWN_SETSIGMASK
                    | libc::POSIX_SPAWN_SETSIGDEF;
                check(libc::posix_spawnattr_setflags(
                    &mut attr.0,
                    flags as libc::c_short,
                ))?;
                check(libc::posix_spawnattr_setpgroup(&mut attr.0, 0))?;
                let mut empty: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut empty);
                check(libc::posix_spawnattr_setsigmask(&mut attr.0, &empty))?;
                let all = all_signals();
                check(libc::posix_spawnattr_setsigdefault(&mut attr.0, &all))?;

                let mut argv: Vec<*mut libc::c_char> =
                    self.argv.iter().map(|a| a.as_ptr() as *mut _).collect();
                argv.push(ptr::null_mut());
                let mut envp: Vec<*mut libc::c_char> =
                    self.envp.iter().map(|e| e.as_ptr() as *mut _).collect();
                envp.push(ptr::null_mut());

                let mut pid: libc::pid_t = 0;
                check(libc::posix_spawnp(
                    &mut pid,
                    self.program.as_ptr(),
                    &actions.0,
                    &attr.0,
                    argv.as_ptr(),
                    envp.as_ptr(),
                ))?;
                Ok(pid as u32)
            }
        }
    }
}

#[cfg(not(target_env = "gnu"))]
mod imp {
    //! `std::process::Command` with a `pre_exec` hook: a fork, then the same
    //! resets by hand before exec.

    use std::io;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    use nix::sys::signal::{sigprocmask, SigSet, SigmaskHow};

    use super::Launch;

    impl Launch<'_> {
        pub(crate) fn spawn(&self) -> io::Result<u32> {
            let arg = std::ffi::OsStr::from_bytes(self.argv[2].as_bytes());
            let mut cmd = Command::new(std::ffi::OsStr::from_bytes(self.program.as_bytes()));
            cmd.arg("-c").arg(arg);
            cmd.current_dir(std::ffi::OsStr::from_bytes(self.cwd.as_bytes()));
            cmd.env_clear();
            for kv in &self.envp {
                let kv = kv.as_bytes();
                if let Some(eq) = kv.iter().position(|&b| b == b'=') {
                    cmd.env(
                        std::ffi::OsStr::from_bytes(&kv[..eq]),
                        std::ffi::OsStr::from_bytes(&kv[eq + 1..]),
                    );
                }
            }
            cmd.stdin(Stdio::null());
            let stdout = match &self.stdout {
                Some(fd) => Stdio::from(fd.try_clone()?),
                None => Stdio::from(self.output.try_clone()?),
            };
            cmd.stdout(stdout)
                .stderr(Stdio::from(self.output.try_clone()?));
            cmd.process_group(0);
            // SAFETY: the hook runs in the forked child and calls only
            // async-signal-safe functions.
            unsafe { cmd.pre_exec(reset_signals) };
            let child = cmd.spawn()?;
            Ok(child.id())
        }
    }

    fn reset_signals() -> io::Result<()> {
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
