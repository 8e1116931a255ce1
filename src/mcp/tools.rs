//! The tools as `tools/list` shows them: the crate's definitions (names,
//! descriptions, JSON Schemas) plus MCP's annotations and a word on how
//! notifications travel over MCP.

use serde_json::{json, Value};

use super::backend::Backend;
use crate::{ToolDefinition, ToolResult};

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
        "list_shells" => json!({
            "title": "List background shells and monitors",
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

/// The `outputSchema` of every tool: what [`structured`] gives. Each field
/// is there when the result is about it.
pub(crate) fn output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "is_error": {"type": "boolean", "description": "Whether the result is an error (as isError)."},
            "shell_id": {"type": "string", "description": "The shell, monitor or task the result is about (bash_N)."},
            "status": {"type": "string", "enum": ["running", "completed", "failed", "killed"],
                "description": "Its status."},
            "exit_code": {"type": "integer", "description": "The exit code of a command that ended (128+N after signal N; -1 when unknown)."},
            "output": {"type": "string", "description": "The output the result shows, after truncation."},
            "truncated_chars": {"type": "integer", "minimum": 0, "description": "How many characters of that output were left out."},
            "output_file": {"type": "string", "description": "The file holding the shell's whole output."},
            "taskId": {"type": "string", "description": "The task (tasks extension) the shell is, for a request that declared it."},
            "usage": {
                "type": "object",
                "description": "What the ended command cost: wall and CPU time (user + system) in milliseconds, peak memory in bytes (the whole tree's where its cgroup counts them: of_tree), and the limits it ran into.",
                "properties": {
                    "wall_ms": {"type": "integer", "minimum": 0},
                    "cpu_ms": {"type": "integer", "minimum": 0},
                    "peak_memory_bytes": {"type": "integer", "minimum": 0},
                    "of_tree": {"type": "boolean"},
                    "out_of_memory_limit_bytes": {"type": "integer", "minimum": 0, "description": "The memory limit the tree was stopped at."},
                    "pids_limit_reached": {"type": "integer", "minimum": 0, "description": "The process limit the tree reached."}
                },
                "required": ["wall_ms", "of_tree"],
                "additionalProperties": false
            }
        },
        "required": ["is_error"],
        "additionalProperties": false
    })
}

/// The `structuredContent` of a result: its typed facts, beside the text
/// content, which is unchanged.
pub(crate) fn structured(r: &ToolResult) -> Value {
    let mut s = json!({"is_error": r.is_error});
    if let Some(id) = &r.task_id {
        s["shell_id"] = json!(id);
    }
    if let Some(status) = r.status {
        s["status"] = json!(status.as_str());
    }
    if let Some(code) = r.exit_code {
        s["exit_code"] = json!(code);
    }
    if let Some(output) = &r.output {
        s["output"] = json!(output);
    }
    if let Some(n) = r.truncated_chars {
        s["truncated_chars"] = json!(n);
    }
    if let Some(file) = &r.output_file {
        s["output_file"] = json!(file.to_string_lossy());
    }
    if let Some(u) = &r.usage {
        let mut usage = json!({
            "wall_ms": u.wall().as_millis() as u64,
            "of_tree": u.of_tree(),
        });
        if let Some(cpu) = u.cpu() {
            usage["cpu_ms"] = json!(cpu.as_millis() as u64);
        }
        if let Some(peak) = u.peak_memory() {
            usage["peak_memory_bytes"] = json!(peak);
        }
        if let Some(limit) = u.out_of_memory() {
            usage["out_of_memory_limit_bytes"] = json!(limit);
        }
        if let Some(limit) = u.pids_limit_reached() {
            usage["pids_limit_reached"] = json!(limit);
        }
        s["usage"] = usage;
    }
    s
}

fn entry(def: ToolDefinition, notifies: bool, in_results: bool, structured: bool) -> Value {
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
    let mut entry = json!({
        "name": def.name,
        "title": annotations["title"],
        "description": description,
        "inputSchema": def.input_schema,
        "annotations": annotations,
    });
    if structured {
        entry["outputSchema"] = output_schema();
    }
    entry
}

/// The `tools` array of `tools/list`, in a fixed order; `in_results` when
/// results carry notifications, `structured` when they carry
/// `structuredContent` (each tool then has an `outputSchema`).
pub(crate) fn list(backend: &Backend, in_results: bool, structured: bool) -> Vec<Value> {
    let notifies = backend.has_tasks();
    backend
        .definitions()
        .into_iter()
        .map(|d| entry(d, notifies, in_results, structured))
        .collect()
}

/// Whether `name` is a tool of this configuration.
pub(crate) fn exists(backend: &Backend, name: &str) -> bool {
    match name {
        "bash" | "bash_output" | "kill_shell" | "list_shells" => true,
        "monitor" => backend.has_tasks(),
        "write_stdin" => backend.is_interactive(),
        _ => false,
    }
}
