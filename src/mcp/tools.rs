//! The tools as `tools/list` shows them: the crate's definitions (names,
//! descriptions, JSON Schemas) plus MCP's annotations and a word on how
//! notifications travel over MCP.

use serde_json::{json, Value};

use crate::{BashTools, ToolDefinition};

/// How a notification reaches the model over MCP: a log message the
/// client may or may not show it. Said so the model has a way out.
const NOTIFIED_OVER_MCP: &str = " Over MCP, notifications are sent as log messages \
     (notifications/message, logger \"bashtools\"); if your client does not show them to you, \
     check with bash_output instead (block: true waits for the end).";

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

fn entry(def: ToolDefinition, notifies: bool) -> Value {
    let mut description = def.description;
    if notifies && matches!(def.name, "bash" | "monitor") {
        description.push_str(NOTIFIED_OVER_MCP);
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

/// The `tools` array of `tools/list`, in a fixed order.
pub(crate) fn list(tools: &BashTools) -> Vec<Value> {
    let notifies = tools.tasks().is_some();
    tools
        .definitions()
        .into_iter()
        .map(|d| entry(d, notifies))
        .collect()
}

/// Whether `name` is a tool of this configuration.
pub(crate) fn exists(tools: &BashTools, name: &str) -> bool {
    match name {
        "bash" | "bash_output" | "kill_shell" => true,
        "monitor" => tools.tasks().is_some(),
        _ => false,
    }
}
