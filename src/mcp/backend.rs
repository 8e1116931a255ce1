//! The one door from the MCP server to the rest of the crate, and it opens
//! on the public API only: a [`BashTools`] handle, its typed queries, its
//! JSON tools and the [`CommandHandle`] of a foreground call.

use std::path::PathBuf;
use std::time::Duration;

use crossbeam_channel::Receiver;
use serde_json::Value;

use crate::{BashTools, Caller, CommandHandle, Notification, Pending};
use crate::{ShellId, TaskStatus, ToolDefinition, ToolResult};

/// The sentence that promises a notification in the tools' texts.
pub(crate) const NOTIFIED: &str = crate::texts::NOTIFIED;

/// The sentences that promise a monitor's events, and what to say instead
/// when only log messages carry them.
pub(crate) const MONITOR_NOTIFIED: (&str, &str) = (
    crate::texts::MONITOR_NOTIFIED,
    crate::texts::MONITOR_AS_LOGS,
);

/// The tools of one [`BashTools`], as the server uses them.
#[derive(Clone)]
pub(crate) struct Backend {
    tools: BashTools,
}

/// The options the server reads.
pub(crate) struct ServerSettings {
    pub default_timeout: Duration,
    pub max_timeout: Duration,
    pub output_limit: usize,
    pub kill_grace: Duration,
}

impl Backend {
    pub(crate) fn new(tools: BashTools) -> Backend {
        Backend { tools }
    }

    pub(crate) fn settings(&self) -> ServerSettings {
        let s = self.tools.settings();
        ServerSettings {
            default_timeout: s.default_timeout(),
            max_timeout: s.max_timeout(),
            output_limit: s.output_limit(),
            kill_grace: s.kill_grace(),
        }
    }

    /// Whether a task registry is configured (notifications and the
    /// `monitor` tool exist only with one).
    pub(crate) fn has_tasks(&self) -> bool {
        self.tools.tasks().is_some()
    }

    /// Whether interactive commands and `write_stdin` are offered.
    pub(crate) fn is_interactive(&self) -> bool {
        self.tools.settings().interactive()
    }

    pub(crate) fn write_stdin(&self, input: &Value) -> ToolResult {
        self.tools.write_stdin(input)
    }

    pub(crate) fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools.definitions()
    }

    pub(crate) fn subscribe(&self, recipient: &str) -> Option<Receiver<Notification>> {
        self.tools.tasks().map(|t| t.subscribe(recipient))
    }

    /// `bash` as a `Pending`, with the handle of its foreground command (to
    /// stop it when the call is cancelled, and to read its output for
    /// progress).
    pub(crate) fn bash(
        &self,
        input: &Value,
        caller: &Caller,
    ) -> (Pending<ToolResult>, Option<CommandHandle>) {
        let pending = self.tools.bash_f(input, caller);
        let command = pending.command();
        (pending, command)
    }

    pub(crate) fn bash_output(&self, input: &Value) -> Pending<ToolResult> {
        self.tools.bash_output_f(input)
    }

    /// Waits for shell `id` to end, future-style.
    pub(crate) fn wait_f(
        &self,
        id: &ShellId,
        timeout: Duration,
    ) -> Pending<Result<crate::ShellInfo, crate::CallError>> {
        self.tools.wait_f(id, timeout)
    }

    /// The result a foreground call would have given for shell `id`, once
    /// it has ended.
    pub(crate) fn bash_result(&self, id: &str) -> Option<ToolResult> {
        self.tools.bash_result(id)
    }

    pub(crate) fn list_shells(&self, input: &Value) -> ToolResult {
        self.tools.list_shells(input)
    }

    pub(crate) fn kill_shell(&self, input: &Value) -> ToolResult {
        self.tools.kill_shell(input)
    }

    pub(crate) fn monitor(&self, input: &Value, caller: &Caller) -> ToolResult {
        self.tools.monitor(input, caller)
    }

    /// `text` with the secrets masked (README, "Secrets").
    pub(crate) fn mask(&self, text: String) -> String {
        self.tools.core().mask(text)
    }

    /// What the person would be asked before `command` runs for `caller`.
    pub(crate) fn asks(&self, command: &str, caller: &Caller) -> Option<crate::Approval> {
        self.tools.core().asks(command, caller)
    }

    /// Allows `prefix` for `caller`'s session (an *always* answer).
    pub(crate) fn allow_always(&self, caller: &Caller, prefix: &[String]) {
        self.tools.core().allow_always(caller, prefix);
    }

    /// Ends the tools at the end of the session: every shell is stopped and
    /// later calls are refused.
    pub(crate) fn close(&self) {
        self.tools.close();
    }

    /// The output file of a running shell of ours by its ID.
    pub(crate) fn running_output(&self, id: &str) -> Option<PathBuf> {
        let info = self.tools.status(&ShellId::from(id)).ok()?;
        (info.status() == TaskStatus::Running).then(|| info.output_file().to_path_buf())
    }

    /// The effective timeout of a call of `tool` (see
    /// [`Settings::call_timeout`](crate::Settings::call_timeout)).
    pub(crate) fn timeout_of(&self, tool: &str, args: &Value) -> Duration {
        self.tools.settings().call_timeout(tool, args)
    }
}
