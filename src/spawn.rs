//! Starting a command: `bash -c COMMAND` in a process group of its own
//! (SPEC section 2).
//!
//! - `setpgid(2)` in the child (`process_group(0)`): the command and
//!   everything it forks share one group, so one `killpg(2)` reaches them all
//!   and the host's own group is never hit.
//! - stdin is `/dev/null`: a command that reads input gets EOF instead of
//!   hanging on a terminal nobody watches.
//! - stdout and stderr are two descriptors of **one open file description**
//!   (`dup`), so they share one offset and the file keeps the order the
//!   output was written in. A file, never a pipe: a grandchild that keeps the
//!   descriptor open cannot hang a reader, and huge output costs disk, not
//!   memory.
//! - The signal mask and every signal disposition are reset in the child
//!   before `exec`. A host that blocks or ignores SIGTERM (signal-hook
//!   threads, `nohup`) would otherwise pass that on, and the command could
//!   not be stopped gracefully.

use std::fs::File;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use nix::sys::signal::{sigprocmask, SigSet, SigmaskHow};

use crate::config::Config;

/// What to start.
pub(crate) struct SpawnSpec<'a> {
    pub command: &'a str,
    pub cwd: &'a Path,
    /// The file both stdout and stderr go to.
    pub output: &'a File,
    /// Where stdout goes when it is not the output file (a monitor reads it
    /// through a pipe); `None` sends stdout to `output` too.
    pub stdout: Option<Stdio>,
}

/// The non-interactive environment of SPEC section 3.
const NONINTERACTIVE: [(&str, &str); 4] = [
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("GIT_EDITOR", "true"),
    ("TERM", "dumb"),
];

/// Builds the `Command`; [`crate::reaper::Reaper::spawn`] starts it.
pub(crate) fn command(spec: SpawnSpec<'_>, config: &Config) -> io::Result<Command> {
    let mut cmd = Command::new("bash");
    cmd.arg("-c").arg(spec.command).current_dir(spec.cwd);
    cmd.stdin(Stdio::null());
    let stdout = match spec.stdout {
        Some(stdout) => stdout,
        None => Stdio::from(spec.output.try_clone()?),
    };
    cmd.stdout(stdout);
    cmd.stderr(Stdio::from(spec.output.try_clone()?));
    if config.noninteractive_env {
        for (k, v) in NONINTERACTIVE {
            cmd.env(k, v);
        }
    }
    for (k, v) in &config.env {
        cmd.env(k, v);
    }
    for k in &config.env_remove {
        cmd.env_remove(k);
    }
    cmd.process_group(0);
    // SAFETY: the closure runs in the forked child before exec and calls only
    // async-signal-safe functions (sigaction, sigprocmask); it allocates nothing.
    unsafe {
        cmd.pre_exec(reset_signals);
    }
    Ok(cmd)
}

/// Restores default dispositions and an empty mask, as a fresh process has.
/// `exec` already resets caught signals to default, but not ignored ones and
/// not the mask.
///
/// The raw `rt_sigaction` system call is used instead of libc's `signal`,
/// which refuses the real-time signals the C library keeps for itself (32
/// and 33 with glibc) although a parent may have left them ignored.
fn reset_signals() -> io::Result<()> {
    // The kernel's `struct sigaction` with SIG_DFL, no flags and an empty
    // mask is all zeros, whatever the field order of the architecture.
    let default_action = [0u64; 4];
    for signo in 1..=nix::libc::SIGRTMAX() {
        if signo == nix::libc::SIGKILL || signo == nix::libc::SIGSTOP {
            continue;
        }
        // SAFETY: rt_sigaction reads `default_action` (large enough for the
        // kernel's struct) and writes nothing (old action is null); it is
        // async-signal-safe. Errors for numbers the kernel refuses are harmless.
        unsafe {
            nix::libc::syscall(
                nix::libc::SYS_rt_sigaction,
                signo,
                default_action.as_ptr(),
                std::ptr::null_mut::<u64>(),
                8usize,
            );
        }
    }
    sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)?;
    Ok(())
}
