//! The one door from the MCP server to the rest of the crate.
//!
//! Every call `src/mcp` makes into the tools, the shell table, the task
//! registry or the configuration goes through [`Backend`], so that moving
//! the server onto the crate's public API is a change to this file alone.
//! Each method says what it needs from the library.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use serde_json::Value;

use crate::caller::Caller;
use crate::core::Core;
use crate::pending::Pending;
use crate::shells::table::StopReason;
use crate::tasks::Notification;
use crate::tools::{self, definitions::ToolDefinition, ToolResult};

/// The sentence that promises a notification in the tools' texts.
pub(crate) const NOTIFIED: &str = crate::texts::NOTIFIED;

/// The sentences that promise a monitor's events, and what to say instead
/// when only log messages carry them.
pub(crate) const MONITOR_NOTIFIED: (&str, &str) = (
    crate::texts::MONITOR_NOTIFIED,
    crate::texts::MONITOR_AS_LOGS,
);

/// The tools of one [`BashTools`](crate::BashTools), as the server uses them.
#[derive(Clone)]
pub(crate) struct Backend {
    core: Arc<Core>,
}

/// The options the server reads (durations and limits of SPEC section 3).
pub(crate) struct Limits {
    pub default_timeout: Duration,
    pub max_timeout: Duration,
    pub block_timeout: Duration,
    pub output_limit: usize,
    pub kill_grace: Duration,
}

impl Backend {
    pub(crate) fn new(core: Arc<Core>) -> Backend {
        Backend { core }
    }

    /// Needs: the configured durations and limits.
    pub(crate) fn limits(&self) -> Limits {
        let c = &self.core.config;
        Limits {
            default_timeout: c.default_timeout,
            max_timeout: c.max_timeout,
            block_timeout: c.block_timeout,
            output_limit: c.output_limit,
            kill_grace: c.kill_grace,
        }
    }

    /// Needs: whether a task registry is configured (notifications and the
    /// `monitor` tool exist only with one).
    pub(crate) fn has_tasks(&self) -> bool {
        self.core.config.tasks.is_some()
    }

    /// Needs: the tool definitions of this configuration.
    pub(crate) fn definitions(&self) -> Vec<ToolDefinition> {
        tools::definitions::all(&self.core.config)
    }

    /// Needs: a subscription to one recipient's notifications.
    pub(crate) fn subscribe(&self, recipient: &str) -> Option<Receiver<Notification>> {
        self.core
            .config
            .tasks
            .as_ref()
            .map(|t| t.subscribe(recipient))
    }

    /// Needs: `bash` as a `Pending`, with the table key of its foreground
    /// command (to stop it when the call is cancelled, and to read its
    /// output for progress).
    pub(crate) fn bash(
        &self,
        input: &Value,
        caller: &Caller,
    ) -> (Pending<ToolResult>, Option<u64>) {
        tools::bash::bash_f_keyed(&self.core, input, caller)
    }

    /// Needs: `bash_output` as a `Pending` (blocking ones complete at the
    /// shell's end or the timeout; a dropped one consumes no output).
    pub(crate) fn bash_output(&self, input: &Value) -> Pending<ToolResult> {
        tools::bash_output::bash_output_f(&self.core, input)
    }

    /// Needs: `kill_shell`.
    pub(crate) fn kill_shell(&self, input: &Value) -> ToolResult {
        tools::kill_shell::kill_shell(&self.core, input)
    }

    /// Needs: `monitor`.
    pub(crate) fn monitor(&self, input: &Value, caller: &Caller) -> ToolResult {
        tools::monitor::monitor(&self.core, input, caller)
    }

    /// Needs: stopping one foreground command by its key (a cancelled call).
    pub(crate) fn stop_foreground(&self, key: u64) {
        self.core.stop(&[key], StopReason::Killed);
    }

    /// Needs: `stop_all`.
    pub(crate) fn stop_all(&self) {
        self.core.stop_all();
    }

    /// Needs: the output file of a foreground command by its key.
    pub(crate) fn foreground_output(&self, key: u64) -> Option<PathBuf> {
        let inner = self.core.table.lock();
        inner.shells.get(&key).map(|s| s.output.clone())
    }

    /// Needs: the output file of a running shell by its ID (`None` when it
    /// is not one of ours or has ended).
    pub(crate) fn running_output(&self, id: &str) -> Option<PathBuf> {
        let inner = self.core.table.lock();
        let shell = &inner.shells[&inner.by_id(id)?];
        shell.is_running().then(|| shell.output.clone())
    }

    /// Needs: the effective timeout of a call (the tools' own rule: seconds,
    /// default, cut to `max_timeout`).
    pub(crate) fn timeout_of(&self, args: &Value, default: Duration) -> Duration {
        match args.as_object() {
            Some(a) => {
                crate::input::timeout_secs(a, "timeout", default, self.core.config.max_timeout)
            }
            None => default.min(self.core.config.max_timeout),
        }
    }

    /// Needs: a wait for a task's end in the registry. A shell's exit is
    /// recorded in the table a moment before its registry entry ends (and
    /// its notification is queued): a call that saw the exit waits for
    /// that moment here, so its notification can travel in its result.
    pub(crate) fn wait_task_end(&self, id: &str, deadline: Instant) {
        let exited = {
            let inner = self.core.table.lock();
            inner
                .by_id(id)
                .is_some_and(|k| !inner.shells[&k].is_running())
        };
        if let (true, Some(tasks)) = (exited, &self.core.config.tasks) {
            tasks.wait_end(id, deadline);
        }
    }
}

/// The builder's defaults of the options the server's flags set.
///
/// Needs: the defaults of [`Builder`](crate::Builder). It has no getters,
/// so a default value is built (in a fresh private directory under the
/// temp directory, removed at once) and its configuration read; a getter
/// per option on the builder would make this a copy.
pub(crate) fn builder_defaults() -> Option<super::Defaults> {
    let tools = crate::BashTools::builder().build().ok()?;
    let c = &tools.core.config;
    Some(super::Defaults {
        default_timeout: c.default_timeout,
        max_timeout: c.max_timeout,
        output_limit: c.output_limit,
        kill_grace: c.kill_grace,
        block_timeout: c.block_timeout,
        monitor_timeout: c.monitor_timeout,
        monitor_max_timeout: c.monitor_max_timeout,
        monitor_min_timeout: c.monitor_min_timeout,
        monitor_unattended_max_timeout: c.monitor_unattended_max_timeout,
        max_output_bytes: c.max_output_bytes,
        monitor: c.monitor_options.clone(),
    })
}
