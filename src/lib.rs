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
//! lines into a notification; [`BashTools::async_tools`] gives the tools to
//! an agent loop that must not block; [`BashTools::server`] serves them over
//! MCP (the `bashtools-mcp` binary).
//!
//! ## How it works
//! - Every command runs as `bash -c COMMAND` in a process group of its own,
//!   stdin from `/dev/null`, stdout and stderr into one file in a private
//!   directory (see `spawn`).
//! - One reaper thread per process collects the exits of the commands it
//!   started, and only those (see `reaper`).
//! - A mutex-guarded table holds the shells; waits are a condvar with a
//!   deadline, or a [`Pending`] that is also a [`std::future::Future`].
//! - Stopping a shell is SIGTERM to its group, then SIGKILL after
//!   `kill_grace` to whatever is left of it.
//! - Dropping a [`BashTools`] stops every shell it started and removes the
//!   output directory.

#![warn(missing_docs)]

mod async_tools;
mod caller;
mod config;
mod core;
mod error;
pub mod gate;
mod input;
pub mod mcp;
mod monitor;
mod os;
mod output;
mod pending;
mod shells;
mod tasks;
mod texts;
mod timer;
mod tools;

use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

pub use crate::async_tools::{AsyncTool, AsyncToolsOptions};
pub use crate::caller::Caller;
pub use crate::config::{Builder, Unattended, Validator};
pub use crate::error::Error;
pub use crate::monitor::MonitorOptions;
pub use crate::os::contain::Containment;
pub use crate::pending::Pending;
pub use crate::tasks::{
    NewTask, Notification, StopFn, TaskHandle, TaskInfo, TaskStatus, Tasks, DEFAULT_QUEUE_LIMIT,
};
pub use crate::tools::definitions::ToolDefinition;
pub use crate::tools::ToolResult;

/// The shell tools. `Send + Sync`: share one value between threads (e.g. in
/// an `Arc`). Dropping it stops every shell it started (see
/// [`stop_all`](Self::stop_all)).
pub struct BashTools {
    core: Arc<core::Core>,
    /// Made by the first [`server`](Self::server) call.
    server: OnceLock<mcp::McpServer>,
}

impl BashTools {
    /// A [`Builder`] with the defaults of SPEC section 3.
    pub fn builder() -> Builder {
        Builder::default()
    }

    pub(crate) fn from_config(config: config::Config) -> Result<BashTools, Error> {
        let outdir = os::outdir::OutputDir::create(&config.output_root)
            .map_err(|e| Error::output_directory(config.output_root.clone(), e))?;
        Ok(BashTools {
            core: Arc::new(core::Core::new(config, outdir)),
            server: OnceLock::new(),
        })
    }

    /// The `bash` tool: `{command, timeout?, description?, run_in_background?,
    /// working_directory?}`. Runs the command in the foreground until its
    /// timeout (seconds), then moves it to the background as `bash_N`.
    ///
    /// Blocks the calling thread for as long as the command runs in the
    /// foreground.
    pub fn bash(&self, input: &Value, caller: &Caller) -> ToolResult {
        tools::bash::bash(&self.core, input, caller)
    }

    /// The `bash_output` tool: `{bash_id, filter?, block?, timeout?}`. The
    /// output written since the last call, with the shell's status. With
    /// `block`, waits (on this thread) until the shell ends or `timeout`
    /// seconds pass.
    pub fn bash_output(&self, input: &Value) -> ToolResult {
        tools::bash_output::bash_output(&self.core, input)
    }

    /// [`bash_output`](Self::bash_output) as a [`Pending`]: with `block`, it
    /// completes when the shell exits or the timeout passes, and no thread
    /// of the caller's waits meanwhile.
    pub fn bash_output_f(&self, input: &Value) -> Pending<ToolResult> {
        tools::bash_output::bash_output_f(&self.core, input)
    }

    /// The `kill_shell` tool: `{shell_id}`. SIGTERM to the shell's process
    /// group, SIGKILL after `kill_grace` to whatever is left; answers once
    /// the group is gone.
    pub fn kill_shell(&self, input: &Value) -> ToolResult {
        tools::kill_shell::kill_shell(&self.core, input)
    }

    /// The `monitor` tool: `{description, command, timeout_ms?}`. Starts the
    /// command in the background as `monitor_N`; each batch of its stdout
    /// lines is sent as a notification to the caller's recipient, and one
    /// more when it ends. Needs a [`Tasks`] registry.
    pub fn monitor(&self, input: &Value, caller: &Caller) -> ToolResult {
        tools::monitor::monitor(&self.core, input, caller)
    }

    /// The `<task-notification>` of a background shell's end and the line a
    /// surface shows for it (SPEC section 5), for shell `id` as if it ended
    /// with `status` (`completed`, `failed` or `killed`). `None` for an ID
    /// this value does not know.
    pub fn notification(&self, id: &str, status: &str) -> Option<(String, String)> {
        self.core.notification(id, status)
    }

    /// The tools for a non-blocking agent loop: definitions (name,
    /// description, JSON Schema) whose handlers return a [`Pending`]; `monitor`
    /// is among them when a [`Tasks`] registry is configured.
    ///
    /// ```
    /// use bashtools::{AsyncToolsOptions, BashTools};
    /// use serde_json::json;
    /// let tools = BashTools::builder().build()?;
    /// let async_tools = tools.async_tools(AsyncToolsOptions::new().recipient("main"));
    /// let bash = async_tools.iter().find(|t| t.name() == "bash").unwrap();
    /// let r = bash.call(&json!({"command": "echo hi"}), Some("toolu_1")).wait();
    /// assert_eq!(r.text, "hi");
    /// # Ok::<(), bashtools::Error>(())
    /// ```
    pub fn async_tools(&self, options: AsyncToolsOptions) -> Vec<AsyncTool> {
        async_tools::async_tools(&self.core, options)
    }

    /// The definitions of the tools (name, description, JSON Schema).
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        tools::definitions::all(&self.core.config)
    }

    /// Pids of the running background shells and of the foreground commands
    /// of detached callers: what a surface that cancels a run must leave alone.
    pub fn background_pids(&self) -> Vec<u32> {
        self.core.background_pids()
    }

    /// Stops every running shell (SIGTERM, `kill_grace`, SIGKILL, all at
    /// once) and refuses new commands from then on. Idempotent: a second call
    /// finds nothing to stop. [`Drop`] calls it as a last line of defense.
    pub fn stop_all(&self) {
        self.core.stop_all();
    }

    /// The MCP server of these tools (SPEC section 9), made on first use;
    /// `bashtools-mcp` serves it on stdio. See [`mcp`].
    pub fn server(&self) -> &mcp::McpServer {
        self.server
            .get_or_init(|| mcp::McpServer::new(self.core.clone()))
    }

    /// How the commands are contained: [`Containment::Cgroup`] where a cgroup
    /// (v2) could be made under this process's own, else
    /// [`Containment::Session`]. Decided when the value is built; setting
    /// `BASHTOOLS_CONTAINMENT=session` in the environment asks for sessions.
    pub fn containment(&self) -> Containment {
        self.core.contain.mode()
    }

    /// The cgroup that holds this value's commands (one cgroup per command
    /// under it), in cgroup mode; removed on drop.
    pub fn cgroup(&self) -> Option<&Path> {
        self.core.contain.jail_dir()
    }

    /// The private directory the output files are written to (removed on drop).
    pub fn output_directory(&self) -> &Path {
        self.core.outdir.path()
    }
}

impl Drop for BashTools {
    fn drop(&mut self) {
        self.core.stop_all();
        self.core.outdir.remove();
    }
}
