//! Why a call of the typed API failed: [`CallError`], and the operating
//! system's error it may hold.

use std::fmt;
use std::path::PathBuf;

use crate::status::TaskStatus;

/// Why a call of the typed API failed. Its [`Display`](fmt::Display) is the
/// text the tools show a model for it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallError {
    /// The command is empty or blank.
    NoCommand,
    /// The command holds a NUL byte, which `bash -c` cannot take.
    NulInCommand,
    /// The working directory does not exist.
    NoSuchDirectory(PathBuf),
    /// The working directory is not a directory.
    NotADirectory(PathBuf),
    /// The working directory lies outside every directory the
    /// [`Sandbox`](crate::Sandbox) lets commands write in.
    OutsideSandbox(PathBuf),
    /// The command could not be started (the OS's error, kept as its
    /// [`source`](std::error::Error::source)).
    SpawnFailed(IoFailure),
    /// The output file could not be read (the OS's error, kept as its
    /// [`source`](std::error::Error::source)).
    ReadFailed(IoFailure),
    /// No shell (or registry entry) has this ID.
    UnknownId(String),
    /// The shell has ended already, with this status.
    NotRunning {
        /// Its ID.
        id: String,
        /// How it ended.
        status: TaskStatus,
    },
    /// A registry entry's stop handler panicked.
    StopPanicked(String),
    /// `monitor` needs a task registry and none was configured.
    MonitorNeedsTasks,
    /// An interactive command, or `write_stdin`, without the
    /// [`interactive`](crate::Builder::interactive) option.
    InteractiveOff,
    /// An interactive command with a `stdin` text: its input is what is
    /// typed into its terminal.
    StdinWithInteractive,
    /// `write_stdin` to a shell that was not started interactive (its ID).
    NotInteractive(String),
    /// `write_stdin` to a shell whose programs have all closed its terminal
    /// (its ID).
    TerminalClosed(String),
    /// `write_stdin` to a shell whose program has not read the earlier
    /// input: what is queued would pass the limit (its ID, the limit in
    /// bytes). Nothing of this input was queued.
    InputBacklog {
        /// The shell's ID.
        id: String,
        /// The most input held for a program that has not read it.
        limit: usize,
    },
    /// The tools have ended (the last `BashTools` was dropped, or
    /// [`close`](crate::BashTools::close) was called).
    Closed,
}

impl std::error::Error for CallError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CallError::SpawnFailed(e) | CallError::ReadFailed(e) => Some(e.io_error()),
            _ => None,
        }
    }
}

/// An error of the operating system behind a [`CallError`]: the
/// [`std::io::Error`] itself, shared so the `CallError` stays `Clone`.
/// Two are equal when their kinds and texts are.
///
/// ```
/// use bashtools::{CallError, IoFailure};
/// use std::error::Error as _;
/// let io = std::io::Error::from_raw_os_error(2);
/// let err = CallError::SpawnFailed(IoFailure::from(io));
/// let source = err.source().unwrap().downcast_ref::<std::io::Error>().unwrap();
/// assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
/// ```
#[derive(Debug, Clone)]
pub struct IoFailure(std::sync::Arc<std::io::Error>);

impl IoFailure {
    /// The error.
    pub fn io_error(&self) -> &std::io::Error {
        &self.0
    }
}

impl From<std::io::Error> for IoFailure {
    fn from(e: std::io::Error) -> IoFailure {
        IoFailure(std::sync::Arc::new(e))
    }
}

impl PartialEq for IoFailure {
    fn eq(&self, other: &IoFailure) -> bool {
        self.0.kind() == other.0.kind() && self.0.to_string() == other.0.to_string()
    }
}

impl Eq for IoFailure {}

impl fmt::Display for IoFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}
