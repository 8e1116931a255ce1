//! The shells: the record of every command we started, the table that holds
//! them, and the supervisor that starts, settles and stops them.
//!
//! This layer sits on `os` (through the `os::process::Process` seam) and
//! knows nothing of tools, texts or the task registry.

#[cfg(test)]
pub(crate) mod fake;
pub(crate) mod shell;
mod stop;
pub(crate) mod supervisor;
pub(crate) mod table;

pub(crate) use crate::os::terminals::MAX_QUEUED_INPUT;
pub(crate) use shell::{Ended, ExitWaiter, Key, Kind, NewShell, Shell, StopReason};
pub(crate) use supervisor::{Settled, StartError, Stdio, Supervisor};
