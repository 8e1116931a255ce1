//! The JSON tools as methods of [`BashTools`]: the edge a model's tool
//! calls come in by. Defined here, not in `api`, so the typed layer never
//! depends on the JSON one.

use serde_json::Value;

use super::async_tools::{self, AsyncTool, AsyncToolsOptions};
use super::{
    answers, bash, bash_output, definitions, kill_shell, list_shells, monitor, write_stdin,
    ToolDefinition, ToolResult,
};
use crate::api::Pending;
use crate::{BashTools, Caller};

impl BashTools {
    /// The `bash` tool: `{command, timeout?, description?, run_in_background?,
    /// working_directory?}`. Runs the command in the foreground until its
    /// timeout (seconds), then moves it to the background as `bash_N`.
    ///
    /// Blocks the calling thread for as long as the command runs in the
    /// foreground.
    pub fn bash(&self, input: &Value, caller: &Caller) -> ToolResult {
        bash::bash(self.core(), input, caller)
    }

    /// [`bash`](Self::bash) as a [`Pending`]: completes when the command
    /// exits or, at its timeout, when it has moved to the background. Its
    /// [`command`](Pending::command) handle stops a foreground command.
    pub fn bash_f(&self, input: &Value, caller: &Caller) -> Pending<ToolResult> {
        bash::bash_f(self.core(), input, caller)
    }

    /// The `bash_output` tool: `{bash_id, filter?, block?, timeout?}`. The
    /// output written since the last call, with the shell's status. With
    /// `block`, waits (on this thread) until the shell ends or `timeout`
    /// seconds pass.
    pub fn bash_output(&self, input: &Value) -> ToolResult {
        bash_output::bash_output(self.core(), input)
    }

    /// [`bash_output`](Self::bash_output) as a [`Pending`]: with `block`, it
    /// completes when the shell exits or the timeout passes, and no thread
    /// of the caller's waits meanwhile.
    pub fn bash_output_f(&self, input: &Value) -> Pending<ToolResult> {
        bash_output::bash_output_f(self.core(), input)
    }

    /// The `kill_shell` tool: `{shell_id}`. SIGTERM to the shell's process
    /// group, SIGKILL after `kill_grace` to whatever is left; answers once
    /// the group is gone.
    pub fn kill_shell(&self, input: &Value) -> ToolResult {
        kill_shell::kill_shell(self.core(), input)
    }

    /// The `monitor` tool: `{description, command, timeout_ms?}`. Starts the
    /// command in the background as `monitor_N`; each batch of its stdout
    /// lines is sent as a notification to the caller's recipient, and one
    /// more when it ends. Needs a [`Tasks`](crate::Tasks) registry.
    pub fn monitor(&self, input: &Value, caller: &Caller) -> ToolResult {
        monitor::monitor(self.core(), input, caller)
    }

    /// The `list_shells` tool: `{}`. Every background shell and monitor of
    /// these tools, newest first, one per line with its status, exit code,
    /// run time and description; `No shells` when there are none.
    pub fn list_shells(&self, input: &Value) -> ToolResult {
        list_shells::list_shells(self.core(), input)
    }

    /// The `write_stdin` tool: `{shell_id, input, yield_ms?}` (with the
    /// [`interactive`](crate::Builder::interactive) option). Types `input`
    /// into the terminal of a shell started with `interactive: true` —
    /// control characters as a keyboard sends them (`\u0003` Ctrl-C,
    /// `\u0004` Ctrl-D) — then waits up to `yield_ms` (default 1000) for
    /// its output, answering early once it has paused 200 ms or the shell
    /// ended, in `bash_output`'s form. What is typed passes no gate.
    ///
    /// Blocks the calling thread for at most the yield.
    pub fn write_stdin(&self, input: &Value) -> ToolResult {
        write_stdin::write_stdin(self.core(), input)
    }

    /// The tools for a non-blocking agent loop: definitions (name,
    /// description, JSON Schema) whose handlers return a [`Pending`]; `monitor`
    /// is among them when a [`Tasks`](crate::Tasks) registry is configured.
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
        async_tools::async_tools(self.core(), options)
    }

    /// The result a foreground `bash` call would have given for background
    /// shell `id`, once it has ended: its whole output (cut to
    /// `output_limit` as a foreground result is) and `Exit code N` when it
    /// failed. `None` while it runs, or for an ID these tools do not know.
    /// For an MCP task that stands for a shell.
    pub fn bash_result(&self, id: &str) -> Option<ToolResult> {
        let core = self.core();
        let key = core.key_of(id)?;
        let exited = match core.as_foreground(key)? {
            Ok(exited) => exited,
            Err(e) => return Some(answers::error(&e)),
        };
        let info = core.info(key);
        let mut result = answers::exited(&exited);
        if let Some(info) = info {
            result = result.with_task(id, Some(info.status), Some(info.output_file));
        }
        Some(result)
    }

    /// The definitions of the tools (name, description, JSON Schema).
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        let mut defs = definitions::all(&self.core().config, self.core().tasks.is_some());
        if let Some(said) = self.core().policy_note() {
            for def in defs
                .iter_mut()
                .filter(|d| matches!(d.name, "bash" | "monitor"))
            {
                def.description.push_str(&said);
            }
        }
        defs
    }
}
