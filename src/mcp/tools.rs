//! The tools as `tools/list` shows them: the crate's definitions (names,
//! descriptions, JSON Schemas) plus MCP's annotations and a word on how
//! notifications travel over MCP.

use serde_json::{json, Value};

use super::backend::Backend;
use crate::ToolDefinition;

/// Where notifications reach the model over MCP when results carry them.
const IN_RESULTS: &str = " Notifications appear in a later tool result, as a <task-notification> \
     text after that result's own text. With nothing else to do, wait for the next one with \
     bash_output and block: true: it also returns early when another task's notification arrives.";

/// When they are only sent as log messages, which most clients do not show
/// the model: said so the model has a way out.
const AS_LOGS: &str = " Over MCP, notifications are sent only as log messages \
     (notifications/message, logger \"bashtools\"), which your client may not show you: \
     check with bash_output (block: true waits for the end).";

/// The library's promise, which holds over MCP only when results carry
/// notifications.
const LIBRARY_PROMISE: &str =
    " You are notified when a background command ends; do not poll for it.";

/// Hints for clients (MCP `ToolAnnotations`); a client must not trust
/// them for safety decisions, they help it ask the user sensibly.
fn annotations(name: &str) -> Value {
    match name {
        "bash" => json!({
            "title": "Run a shell command",
            "readOnlyHint": false,
            "destructiveHint": true,
            "idempotentHint": false,
            "openWorldHint": true,
        }),
        "bash_output" => json!({
            "title": "Read a background shell's new output",
            "readOnlyHint": true,
            "openWorldHint": false,
        }),
        "write_stdin" => json!({
            "title": "Type into an interactive shell's terminal",
            "readOnlyHint": false,
            "destructiveHint": true,
            "idempotentHint": false,
            "openWorldHint": true,
        }),
        "kill_shell" => json!({
            "title": "Stop a background shell",
            "readOnlyHint": false,
            "destructiveHint": true,
            "idempotentHint": true,
            "openWorldHint": false,
        }),
        _ => json!({
            "title": "Watch a command's output lines as events",
            "readOnlyHint": false,
            "destructiveHint": true,
            "idempotentHint": false,
            "openWorldHint": true,
        }),
    }
}

fn entry(def: ToolDefinition, notifies: bool, in_results: bool) -> Value {
    let mut description = def.description;
    if notifies && matches!(def.name, "bash" | "monitor") {
        if in_results {
            description.push_str(IN_RESULTS);
        } else {
            description = description.replace(LIBRARY_PROMISE, "");
            description.push_str(AS_LOGS);
        }
    }
    let annotations = annotations(def.name);
    json!({
        "name": def.name,
        "title": annotations["title"],
        "description": description,
        "inputSchema": def.input_schema,
        "annotations": annotations,
    })
}

/// The `tools` array of `tools/list`, in a fixed order; `in_results` when
/// results carry notifications.
pub(crate) fn list(backend: &Backend, in_results: bool) -> Vec<Value> {
    let notifies = backend.has_tasks();
    backend
        .definitions()
        .into_iter()
        .map(|d| entry(d, notifies, in_results))
        .collect()
}

/// Whether `name` is a tool of this configuration.
pub(crate) fn exists(backend: &Backend, name: &str) -> bool {
    match name {
        "bash" | "bash_output" | "kill_shell" => true,
        "monitor" => backend.has_tasks(),
        "write_stdin" => backend.is_interactive(),
        _ => false,
    }
}
