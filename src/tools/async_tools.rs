//! The tools for an agent loop that does not block on them (contract §8):
//! definitions whose handlers return a [`Pending`].
//!
//! The caller of each call — recipient, detached, working directory — is a
//! value or a closure asked at the call, so one set of tools can serve a
//! subagent whose identity is only known later.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use crate::api::core::Core;
use crate::api::Pending;
use crate::caller::Caller;
use crate::tools::{self, ToolDefinition, ToolResult};

/// A value given now, or a closure asked at each call.
enum Source<T> {
    Value(T),
    Ask(Arc<dyn Fn() -> T + Send + Sync>),
}

impl<T: Clone> Source<T> {
    fn get(&self) -> T {
        match self {
            Source::Value(v) => v.clone(),
            Source::Ask(f) => f(),
        }
    }
}

impl<T: Clone> Clone for Source<T> {
    fn clone(&self) -> Self {
        match self {
            Source::Value(v) => Source::Value(v.clone()),
            Source::Ask(f) => Source::Ask(f.clone()),
        }
    }
}

type Applies = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// Who calls the tools of [`BashTools::async_tools`](crate::BashTools::async_tools).
///
/// ```
/// use bashtools::AsyncToolsOptions;
/// let opts = AsyncToolsOptions::new()
///     .recipient_with(|| "agent_2".to_string())
///     .detached(true)
///     .applies(|source| source == "bashtools");
/// # drop(opts);
/// ```
#[derive(Clone)]
pub struct AsyncToolsOptions {
    recipient: Source<String>,
    detached: Source<bool>,
    working_directory: Option<Source<PathBuf>>,
    applies: Option<Applies>,
}

impl<T: std::fmt::Debug> std::fmt::Debug for Source<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Value(v) => v.fmt(f),
            Source::Ask(_) => f.write_str("(asked at each call)"),
        }
    }
}

impl std::fmt::Debug for AsyncToolsOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncToolsOptions")
            .field("recipient", &self.recipient)
            .field("detached", &self.detached)
            .field("working_directory", &self.working_directory)
            .field("applies", &self.applies.is_some())
            .finish()
    }
}

impl Default for AsyncToolsOptions {
    fn default() -> Self {
        AsyncToolsOptions::new()
    }
}

impl AsyncToolsOptions {
    /// Recipient `main`, attached, the configured working directory.
    pub fn new() -> AsyncToolsOptions {
        AsyncToolsOptions {
            recipient: Source::Value("main".into()),
            detached: Source::Value(false),
            working_directory: None,
            applies: None,
        }
    }

    /// Who is notified when a command of these tools ends in the background.
    pub fn recipient(mut self, recipient: impl Into<String>) -> Self {
        self.recipient = Source::Value(recipient.into());
        self
    }

    /// The recipient, asked at each call.
    pub fn recipient_with(mut self, f: impl Fn() -> String + Send + Sync + 'static) -> Self {
        self.recipient = Source::Ask(Arc::new(f));
        self
    }

    /// Whether the run is detached (see [`Caller::detached`]).
    pub fn detached(mut self, detached: bool) -> Self {
        self.detached = Source::Value(detached);
        self
    }

    /// Whether the run is detached, asked at each call.
    pub fn detached_with(mut self, f: impl Fn() -> bool + Send + Sync + 'static) -> Self {
        self.detached = Source::Ask(Arc::new(f));
        self
    }

    /// Where commands run when a call names no directory.
    pub fn working_directory(mut self, dir: impl Into<PathBuf>) -> Self {
        self.working_directory = Some(Source::Value(dir.into()));
        self
    }

    /// The working directory, asked at each call.
    pub fn working_directory_with(
        mut self,
        f: impl Fn() -> PathBuf + Send + Sync + 'static,
    ) -> Self {
        self.working_directory = Some(Source::Ask(Arc::new(f)));
        self
    }

    /// Says whether a tool call from `source` (e.g. the name of the server or
    /// client it came through) is one of these tools; without it, all are.
    pub fn applies(mut self, f: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        self.applies = Some(Arc::new(f));
        self
    }

    fn caller(&self, call: Option<&str>) -> Caller {
        let mut caller = Caller::default()
            .recipient(self.recipient.get())
            .detached(self.detached.get());
        if let Some(call) = call {
            caller = caller.call(call);
        }
        if let Some(dir) = &self.working_directory {
            caller = caller.working_directory(dir.get());
        }
        caller
    }
}

/// One tool of [`BashTools::async_tools`](crate::BashTools::async_tools):
/// its definition, and a handler that answers with a [`Pending`].
pub struct AsyncTool {
    definition: ToolDefinition,
    core: Arc<Core>,
    options: AsyncToolsOptions,
}

impl std::fmt::Debug for AsyncTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncTool")
            .field("name", &self.definition.name)
            .finish_non_exhaustive()
    }
}

impl AsyncTool {
    /// `bash`, `bash_output`, `kill_shell` or `monitor`.
    pub fn name(&self) -> &'static str {
        self.definition.name
    }

    /// Name, description and JSON Schema.
    pub fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    /// Whether a call from `source` is for this tool (the `applies` option).
    pub fn applies(&self, source: &str) -> bool {
        self.options.applies.as_ref().map_or(true, |f| f(source))
    }

    /// Runs the tool. `call` is the tool-use id, named by the notification of
    /// a command that ends in the background. Nothing here blocks for the
    /// command: `bash` and `bash_output` with `block` complete later.
    /// `kill_shell` waits for the group to go (at most `kill_grace` and a
    /// little) before its `Pending` is returned.
    pub fn call(&self, input: &Value, call: Option<&str>) -> Pending<ToolResult> {
        let caller = self.options.caller(call);
        match self.definition.name {
            "bash" => tools::bash::bash_f(&self.core, input, &caller),
            "bash_output" => tools::bash_output::bash_output_f(&self.core, input),
            "kill_shell" => Pending::ready(tools::kill_shell::kill_shell(&self.core, input)),
            "list_shells" => Pending::ready(tools::list_shells::list_shells(&self.core, input)),
            "write_stdin" => write_stdin_f(&self.core, input),
            _ => Pending::ready(tools::monitor::monitor(&self.core, input, &caller)),
        }
    }
}

/// `write_stdin` as a [`Pending`]: its yield is waited on a thread of its
/// own, so the caller's is not.
fn write_stdin_f(core: &Arc<Core>, input: &Value) -> Pending<ToolResult> {
    let (pending, completer) = Pending::new();
    let (core, input) = (core.clone(), input.clone());
    let spawned = std::thread::Builder::new()
        .name("bashtools-yield".into())
        .spawn(move || {
            let answer = tools::write_stdin::write_stdin(&core, &input);
            completer.complete_with(move || answer);
        });
    match spawned {
        Ok(_) => pending,
        Err(e) => Pending::ready(ToolResult::error(crate::texts::spawn_failed(
            &e.to_string(),
        ))),
    }
}

pub(crate) fn async_tools(core: &Arc<Core>, options: AsyncToolsOptions) -> Vec<AsyncTool> {
    tools::definitions::all(&core.config, core.tasks.is_some())
        .into_iter()
        .map(|definition| AsyncTool {
            definition,
            core: core.clone(),
            options: options.clone(),
        })
        .collect()
}
