//! # bashtools
//!
//! The shell tools of Claude Code — `bash`, `bash_output`, `kill_shell` (and,
//! with a task registry, `monitor`) — as a synchronous, thread-based Rust
//! library for AI agents and any other program.
//!
//! ```
//! use bashtools::{BashTools, Caller};
//! use serde_json::json;
//!
//! let tools = BashTools::builder().build()?;
//! let r = tools.bash(&json!({"command": "echo hello"}), &Caller::default());
//! assert_eq!(r.text, "hello");
//! assert!(!r.is_error);
//!
//! let r = tools.bash(&json!({"command": "exit 3"}), &Caller::default());
//! assert_eq!((r.text.as_str(), r.is_error), ("Exit code 3", true));
//! # Ok::<(), bashtools::Error>(())
//! ```
//!
//! ## Two ways in
//! A program calls the typed API — values in, values out:
//!
//! ```
//! use std::time::Duration;
//! use bashtools::{BashTools, Caller, Command, Outcome, TaskStatus};
//!
//! let tools = BashTools::builder().build()?;
//! let cmd = Command::new("sleep 0.2; echo late").timeout(Duration::from_millis(50));
//! let Outcome::Background(bg) = tools.run(&cmd, &Caller::default())? else {
//!     unreachable!("still running at its timeout")
//! };
//! let info = tools.wait(bg.id(), Duration::from_secs(30))?;
//! assert_eq!(info.status(), TaskStatus::Completed);
//! assert_eq!(tools.read_output(bg.id(), None)?.text(), "late");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A model calls the JSON tools ([`BashTools::bash`], [`BashTools::bash_output`],
//! [`BashTools::kill_shell`], [`BashTools::monitor`]), whose answers are the
//! texts of the contract; they are a thin edge over the typed API.
//!
//! ## Background work and notifications
//!
//! A command still running at its timeout (seconds) is not killed: it moves
//! to the background as `bash_N`. With a [`Tasks`] registry its end is
//! delivered, once, as a `<task-notification>` to the recipient of the call
//! that started it.
//!
//! ```
//! use std::time::Duration;
//! use bashtools::{BashTools, Caller, Tasks};
//! use serde_json::json;
//!
//! let tasks = Tasks::new();
//! let inbox = tasks.subscribe("main");
//! let tools = BashTools::builder().tasks(tasks.clone()).build()?;
//!
//! let r = tools.bash(&json!({"command": "sleep 0.2; echo late", "timeout": 0.05}),
//!                    &Caller::default().call("toolu_1"));
//! assert!(r.text.contains("moved to the background (ID: bash_1)"));
//!
//! let n = inbox.recv_timeout(Duration::from_secs(30)).unwrap();
//! assert_eq!(n.task_id, "bash_1");
//! assert!(n.text.contains("<status>completed</status>"));
//!
//! let r = tools.bash_output(&json!({"bash_id": "bash_1"}));
//! assert!(r.text.contains("<stdout>\nlate\n</stdout>"));
//! # Ok::<(), bashtools::Error>(())
//! ```
//!
//! A monitor ([`BashTools::monitor`]) turns each batch of a command's stdout
//! lines into a notification; with the [`interactive`](Builder::interactive)
//! option a command can run on a pseudo-terminal of its own and be answered
//! with [`BashTools::write_stdin`] (typed: [`BashTools::send_input`]); [`BashTools::async_tools`] gives the tools to
//! an agent loop that must not block; [`BashTools::server`] serves them over
//! MCP (the `bashtools-mcp` binary).
//!
//! ## The contract
//! The tools' arguments, the texts a model reads, the defaults, the registry
//! and the server are written out in `docs/contract.md` in the repository;
//! `§N` in these docs names its sections.
//!
//! ## How it works
//! - Every command runs as `bash -c COMMAND` in a process group of its own,
//!   stdin from `/dev/null`, stdout and stderr into one file in a private
//!   directory (see `spawn`).
//! - An interactive command's stdin, stdout and stderr are a pseudo-terminal
//!   instead (its controlling terminal); one I/O thread per `BashTools`
//!   copies every terminal's output into its shell's file (see `terminals`).
//! - One reaper thread per process collects the exits of the commands it
//!   started, and only those (see `reaper`).
//! - A mutex-guarded table holds the shells; waits are a condvar with a
//!   deadline, or a [`Pending`] that is also a [`std::future::Future`].
//! - Stopping a shell is SIGTERM to its group, then SIGKILL after
//!   `kill_grace` to whatever is left of it.
//! - Dropping the last clone of a [`BashTools`] stops every shell it started
//!   and removes the output directory.
//!
//! The README's "How it works" shows the layers and how they depend on each
//! other (one way: leaves, `os`, `shells`, mechanisms, `api`, `tools`, `mcp`).

#![warn(missing_docs)]
// Only `os` talks to the kernel below what nix wraps; nowhere else may
// `unsafe` appear, and there each block says why it is sound.
#![deny(unsafe_code)]
#![warn(
    unreachable_pub,
    rust_2018_idioms,
    missing_debug_implementations,
    clippy::undocumented_unsafe_blocks
)]

#[cfg(not(target_os = "linux"))]
compile_error!(
    "bashtools supports Linux only: it is built on clone3, cgroups, Landlock, pidfds, \
     inotify and /proc, which other systems do not have in this form"
);

// Leaves: import nothing of the layers below.
mod caller;
mod config;
mod deadline;
mod error;
mod limits;
mod secrets;
mod status;
#[cfg(test)]
mod test_rng;
mod texts;
// The kernel, then the shells on it.
#[allow(unsafe_code)]
mod os;
mod shells;
// Mechanisms, each usable alone.
pub mod gate;
mod monitor;
mod output;
mod pending;
mod policy;
mod tasks;
mod timer;
// The typed public API, the JSON edge over it, and the server.
mod api;
#[cfg(feature = "mcp")]
pub mod mcp;
mod tools;

pub use crate::api::builder::Builder;
pub use crate::api::types::{
    Backgrounded, CallError, Command, CwdReset, EndNotice, Exited, IoFailure, NewOutput, NotKept,
    Outcome, Refusal, ShellId, ShellInfo, StopCause,
};
pub use crate::api::{BashTools, Settings};
pub use crate::caller::Caller;
pub use crate::config::{defaults, MonitorOptions, Sandbox, Unattended, Validator};
pub use crate::error::{Error, ErrorKind};
pub use crate::limits::{
    LimitProblem, Limits, NoPidsLimit, ParseLimitError, Usage, DEFAULT_PIDS_LIMIT,
};
pub use crate::os::contain::Containment;
pub use crate::os::sandbox::SandboxStatus;
pub use crate::pending::{CommandHandle, Pending};
pub use crate::policy::{
    load_rules, Approval, Approved, Approver, Decision, Judgement, Part, Policy, Rule, RuleError,
    RulesFile, RulesFileError,
};
pub use crate::secrets::{is_secret_name, MIN_SECRET_BYTES};
pub use crate::status::{ParseStatusError, TaskStatus};
pub use crate::tasks::{
    NewTask, Notification, StopFn, TaskHandle, TaskInfo, Tasks, DEFAULT_QUEUE_LIMIT,
};
pub use crate::tools::async_tools::{AsyncTool, AsyncToolsOptions};
pub use crate::tools::{ToolDefinition, ToolResult};

/// Makes this process reap every child it did not start through the tools,
/// once it has ended — what PID 1 of a container (or a child subreaper)
/// must do, since the orphans of every command are handed to it. Without
/// it they stay zombies. Only for a process that starts no children of its
/// own beside the tools: theirs would lose their exit status. The server,
/// `bashtools-mcp`, turns it on when it is PID 1.
///
/// ```no_run
/// if std::process::id() == 1 {
///     bashtools::reap_orphans()?;
/// }
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn reap_orphans() -> std::io::Result<()> {
    os::reaper::reap_orphans()
}

/// Raises this process's soft limit of open files to its hard limit, for a
/// host that keeps many background shells (each holds about three of its
/// descriptors; at the usual soft limit of 1024 the 330th fails with "Too
/// many open files"). The commands started afterwards get the soft limit
/// as it was, so no program behaves differently under bashtools. Returns
/// the soft limit now in force. `bashtools-mcp` calls it at start.
///
/// ```
/// let now = bashtools::raise_descriptor_limit()?;
/// assert!(now >= 3);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn raise_descriptor_limit() -> std::io::Result<u64> {
    os::sys::raise_descriptor_limit()
}

/// The README's examples, compiled and run as doc-tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// What may be shared between threads, checked when the crate is built.
#[allow(dead_code)]
fn assert_thread_safety() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<BashTools>();
    send_sync::<Tasks>();
    send_sync::<Caller>();
    send_sync::<CommandHandle>();
    send_sync::<Pending<ToolResult>>();
    send::<Pending<Result<Outcome, CallError>>>();
    send_sync::<AsyncTool>();
    #[cfg(feature = "mcp")]
    send_sync::<mcp::McpServer>();
}
