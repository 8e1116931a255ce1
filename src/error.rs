//! The error of building the tools: [`Error`], with an [`ErrorKind`] to
//! act on.
//!
//! It is one of the crate's two error types, each for its own moment:
//! [`Error`] when a [`BashTools`](crate::BashTools) cannot be built (a
//! working directory, the output directory, a thread, the sandbox), and
//! [`CallError`](crate::CallError) when a call of the typed API fails
//! once the tools exist. The JSON tools return neither: a failed tool call
//! is a [`ToolResult`](crate::ToolResult) with `is_error: true`, because
//! that is what a model can read and act on. Both keep the operating
//! system's error, where there is one, as their
//! [`source`](std::error::Error::source).

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::limits::{LimitError, LimitReason};

/// Why a [`BashTools`](crate::BashTools) could not be built.
#[derive(Debug)]
pub struct Error {
    kind: Repr,
}

/// What kind of [`Error`] it is, for a caller that acts on it.
///
/// ```
/// let err = bashtools::BashTools::builder()
///     .working_directory("/no/such/dir")
///     .build()
///     .unwrap_err();
/// assert_eq!(err.kind(), bashtools::ErrorKind::WorkingDirectoryMissing);
/// assert_eq!(err.path(), Some(std::path::Path::new("/no/such/dir")));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The configured working directory does not exist.
    WorkingDirectoryMissing,
    /// The configured working directory exists but is not a directory.
    WorkingDirectoryNotADirectory,
    /// The process's own current directory could not be read.
    CurrentDirectory,
    /// The private directory for output files could not be made.
    OutputDirectory,
    /// A thread the tools need (the reaper, the timer, the output cap's
    /// watcher) could not be started, or a signal handler installed.
    Thread,
    /// A [`Sandbox`](crate::Sandbox) was asked for, and this kernel has no
    /// Landlock (not built in, or not enabled at boot), and the sandbox is
    /// not [`best_effort`](crate::Sandbox::best_effort).
    SandboxUnsupported,
    /// The sandbox could not be set up: a directory it names does not exist
    /// or cannot be opened, its temporary directory could not be made, or
    /// the kernel refused the ruleset.
    Sandbox,
    /// [`interactive`](crate::Builder::interactive) was asked for beside
    /// `allowed_commands` or a validator, without
    /// [`interactive_ungated`](crate::Builder::interactive_ungated): what is
    /// typed into a running program passes no gate.
    InteractiveGated,
    /// A limit ([`memory_limit`](crate::Builder::memory_limit),
    /// [`pids_limit`](crate::Builder::pids_limit),
    /// [`cpu_limit`](crate::Builder::cpu_limit)) has a value out of range.
    LimitInvalid,
    /// A limit was asked for and cannot be applied here: no cgroup can be
    /// made for commands, or no hierarchy offers its controller. Never
    /// silently off.
    LimitUnavailable,
    /// An entry of [`allowed_commands`](crate::Builder::allowed_commands)
    /// cannot be read as a rule (a quote, an unclosed `[`, nothing at all).
    RuleInvalid,
}

#[derive(Debug)]
enum Repr {
    /// The configured working directory does not exist.
    WorkingDirectoryMissing(PathBuf),
    /// The configured working directory exists but is not a directory.
    WorkingDirectoryNotADirectory(PathBuf),
    /// The process's own current directory could not be read (no
    /// `working_directory` was configured, so it was needed).
    CurrentDirectory(io::Error),
    /// The private directory for output files could not be made.
    OutputDirectory(PathBuf, io::Error),
    /// A thread could not be started (what it was for, the error).
    Thread(&'static str, io::Error),
    /// No Landlock, and a sandbox that is not best effort.
    SandboxUnsupported,
    /// The sandbox could not be set up (the directory, if that was it).
    Sandbox(Option<PathBuf>, io::Error),
    /// Interactive commands beside a gate, not allowed ungated.
    InteractiveGated,
    /// A limit's value is out of range, or it cannot be applied here.
    Limit(LimitError),
    /// An allowed command that is no rule (the entry, why).
    Rule(String, String),
}

impl Error {
    pub(crate) fn working_directory_missing(path: PathBuf) -> Self {
        Error {
            kind: Repr::WorkingDirectoryMissing(path),
        }
    }

    pub(crate) fn working_directory_not_a_directory(path: PathBuf) -> Self {
        Error {
            kind: Repr::WorkingDirectoryNotADirectory(path),
        }
    }

    pub(crate) fn current_directory(err: io::Error) -> Self {
        Error {
            kind: Repr::CurrentDirectory(err),
        }
    }

    pub(crate) fn thread(what: &'static str, err: io::Error) -> Self {
        Error {
            kind: Repr::Thread(what, err),
        }
    }

    pub(crate) fn sandbox_unsupported() -> Self {
        Error {
            kind: Repr::SandboxUnsupported,
        }
    }

    pub(crate) fn sandbox(path: Option<PathBuf>, err: io::Error) -> Self {
        Error {
            kind: Repr::Sandbox(path, err),
        }
    }

    pub(crate) fn rule(entry: String, error: String) -> Self {
        Error {
            kind: Repr::Rule(entry, error),
        }
    }

    pub(crate) fn limit(error: LimitError) -> Self {
        Error {
            kind: Repr::Limit(error),
        }
    }

    /// The option a limit error is about (`memory_limit`, `pids_limit`,
    /// `cpu_limit`).
    pub fn option(&self) -> Option<&'static str> {
        match &self.kind {
            Repr::Limit(e) => Some(e.option),
            _ => None,
        }
    }

    pub(crate) fn interactive_gated() -> Self {
        Error {
            kind: Repr::InteractiveGated,
        }
    }

    pub(crate) fn output_directory(path: PathBuf, err: io::Error) -> Self {
        Error {
            kind: Repr::OutputDirectory(path, err),
        }
    }
}

impl Error {
    /// What kind of error it is.
    pub fn kind(&self) -> ErrorKind {
        match self.kind {
            Repr::WorkingDirectoryMissing(_) => ErrorKind::WorkingDirectoryMissing,
            Repr::WorkingDirectoryNotADirectory(_) => ErrorKind::WorkingDirectoryNotADirectory,
            Repr::CurrentDirectory(_) => ErrorKind::CurrentDirectory,
            Repr::OutputDirectory(..) => ErrorKind::OutputDirectory,
            Repr::Thread(..) => ErrorKind::Thread,
            Repr::SandboxUnsupported => ErrorKind::SandboxUnsupported,
            Repr::Sandbox(..) => ErrorKind::Sandbox,
            Repr::InteractiveGated => ErrorKind::InteractiveGated,
            Repr::Limit(LimitError {
                reason: LimitReason::Invalid(_),
                ..
            }) => ErrorKind::LimitInvalid,
            Repr::Limit(LimitError {
                reason: LimitReason::Unavailable(_),
                ..
            }) => ErrorKind::LimitUnavailable,
            Repr::Rule(..) => ErrorKind::RuleInvalid,
        }
    }

    /// The path the error is about, if any.
    pub fn path(&self) -> Option<&std::path::Path> {
        match &self.kind {
            Repr::WorkingDirectoryMissing(p)
            | Repr::WorkingDirectoryNotADirectory(p)
            | Repr::OutputDirectory(p, _) => Some(p),
            Repr::Sandbox(p, _) => p.as_deref(),
            Repr::CurrentDirectory(_)
            | Repr::Thread(..)
            | Repr::SandboxUnsupported
            | Repr::InteractiveGated
            | Repr::Limit(_)
            | Repr::Rule(..) => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Repr::WorkingDirectoryMissing(p) => {
                write!(f, "working directory does not exist: {}", p.display())
            }
            Repr::WorkingDirectoryNotADirectory(p) => {
                write!(f, "working directory is not a directory: {}", p.display())
            }
            Repr::CurrentDirectory(e) => {
                write!(f, "cannot read the current directory: {e}")
            }
            Repr::Thread(what, e) => write!(f, "cannot start the {what}: {e}"),
            Repr::SandboxUnsupported => f.write_str(
                "a sandbox was asked for, but this kernel has no Landlock (Linux 5.13+, \
                 with landlock among the enabled LSMs); choose Sandbox::best_effort(true) \
                 to run commands unrestricted instead",
            ),
            Repr::Sandbox(Some(p), e) => {
                write!(f, "cannot set up the sandbox for {}: {e}", p.display())
            }
            Repr::Sandbox(None, e) => write!(f, "cannot set up the sandbox: {e}"),
            Repr::InteractiveGated => f.write_str(
                "interactive commands were asked for beside allowed_commands or a validator: \
                 the gates check the command line, never what is typed into a running \
                 program; set interactive_ungated to accept that",
            ),
            Repr::Limit(e) => write!(f, "{e}"),
            Repr::Rule(entry, e) => write!(f, "allowed command {entry:?} is no rule: {e}"),
            Repr::OutputDirectory(p, e) => {
                write!(
                    f,
                    "cannot create the private output directory in {}: {e}",
                    p.display()
                )
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            Repr::CurrentDirectory(e)
            | Repr::OutputDirectory(_, e)
            | Repr::Thread(_, e)
            | Repr::Sandbox(_, e) => Some(e),
            Repr::Limit(LimitError {
                reason: LimitReason::Invalid(e),
                ..
            }) => Some(e),
            _ => None,
        }
    }
}
