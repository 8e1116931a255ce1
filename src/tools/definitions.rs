//! The tools as a model sees them: name, description and JSON Schema of the
//! arguments. Shared by [`async_tools`](crate::BashTools::async_tools) and
//! the MCP server, so both describe the tools the same way.
//!
//! The descriptions state units, defaults and limits with this value's own
//! configuration, so what the model reads is what the tools do.

use serde_json::Value;

use super::params;

use crate::config::{defaults, Config};
use crate::texts::seconds;

/// A tool's definition.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolDefinition {
    /// `bash`, `bash_output`, `kill_shell`, `monitor` or `write_stdin`.
    pub name: &'static str,
    /// What the tool does, for a model.
    pub description: String,
    /// The JSON Schema of its arguments.
    pub input_schema: Value,
}

pub(crate) fn bash(c: &Config, tasks: bool) -> ToolDefinition {
    let mut def = bash_plain(c, tasks);
    if c.interactive {
        def.input_schema = params::schema(&[params::BASH, params::BASH_INTERACTIVE], |name| {
            describe_bash(c, name)
        });
    }
    def
}

/// What each argument of `bash` is, for the model.
fn describe_bash(c: &Config, name: &str) -> String {
    match name {
        "command" => "The command line to run with bash -c.".into(),
        "timeout" => format!("Seconds to wait in the foreground before moving the command to the background (default {}, at most {}).", seconds(c.default_timeout), seconds(c.max_timeout)),
        "description" => "What the command does, in 5-10 words (shown in notifications).".into(),
        "run_in_background" => "Start in the background at once and return its ID.".into(),
        "working_directory" => "Directory to run in, for this command only; relative paths are taken from the default working directory.".into(),
        "stdin" => "Text given to the command as its standard input (e.g. a script for `python3 -`).".into(),
        "interactive" => "Start in the background at once on a terminal of its own (for prompts, REPLs, debuggers); answer it with write_stdin.".into(),
        _ => format!("With interactive: milliseconds to wait for its first output (default {}).", defaults::YIELD.as_millis()),
    }
}

fn bash_plain(c: &Config, tasks: bool) -> ToolDefinition {
    ToolDefinition {
        name: "bash",
        description: format!(
            "Runs a shell command with `bash -c` and returns its combined stdout and stderr, in the order written \
             (leading blank lines and trailing whitespace removed; output over {limit} characters keeps its first and \
             last halves around a `... [N characters truncated] ...` marker). A non-zero exit is an error result that \
             starts with `Exit code N`. Standard input is /dev/null unless `stdin` gives it, and pagers and editors are disabled. `timeout` is \
             in seconds (default {default}, at most {max}); a command still running at its timeout is NOT killed: it \
             moves to the background and the result gives its ID (bash_N) for bash_output and kill_shell. With \
             `run_in_background: true` it starts there at once.{rendered}{cd}{env}{interactive}{notified}{sandbox}",
            cd = crate::texts::cd_note(c.persist_working_directory),
            env = if c.persist_environment {
                crate::texts::ENV_NOTE
            } else {
                ""
            },
            rendered = if c.render_output {
                " Output is shown as a terminal shows it: colours and other escape sequences removed, a line \
                 redrawn with \\r (a progress bar) in its last state."
            } else {
                ""
            },
            limit = c.output_limit,
            default = seconds(c.default_timeout),
            max = seconds(c.max_timeout),
            interactive = if c.interactive {
                crate::texts::INTERACTIVE_NOTE
            } else {
                ""
            },
            notified = if tasks {
                " You are notified when a background command ends; do not poll for it."
            } else {
                ""
            },
            sandbox = c.sandbox.as_ref().map_or(String::new(), |s| {
                crate::texts::sandbox_note(&s.allow_write, s.network)
            }),
        ),
        input_schema: params::schema(&[params::BASH], |name| describe_bash(c, name)),
    }
}

pub(crate) fn bash_output(c: &Config) -> ToolDefinition {
    ToolDefinition {
        name: "bash_output",
        description: format!(
            "Returns what a background shell (bash_N) or monitor wrote since the last call, with its state: \
             `<status>running|completed|failed|killed</status>`, `<exit_code>N</exit_code>` once it has ended, and the \
             new output between `<stdout>` and `</stdout>` (left out when there is none). `filter` is a regular \
             expression matched per line, case-insensitively: only matching lines are returned, the others are \
             consumed. `tail: N` keeps only the last N lines of what would be returned. With `block: true` it waits until the shell ends or `timeout` seconds pass (default {block}, \
             at most {max}). Also takes the ID or name of another background task (a subagent) and returns its status \
             and, once ended, its report in `<output>`. An unknown ID is an error result.",
            block = seconds(c.block_timeout),
            max = seconds(c.max_timeout),
        ),
        input_schema: params::schema(&[params::BASH_OUTPUT], |name| match name {
            "bash_id" => "The ID of the background shell or task (bash_N, monitor_N, ...).".into(),
            "filter" => "Regular expression; only matching lines are returned (case-insensitive). It is matched against each line as the command wrote it, before secrets are masked.".into(),
            "block" => "Wait for the shell to end (or the timeout) before answering.".into(),
            "tail" => "Only the last N lines of the new output (after filter); the rest is consumed, and a line says how many were left out.".into(),
            _ => format!("Seconds to wait with block (default {}, at most {}).", seconds(c.block_timeout), seconds(c.max_timeout)),
        }),
    }
}

pub(crate) fn kill_shell(c: &Config) -> ToolDefinition {
    ToolDefinition {
        name: "kill_shell",
        description: format!(
            "Stops a background shell or monitor and everything it started: SIGTERM to its process group, SIGKILL \
             {grace} later to whatever is left. Answers `Successfully stopped task: ID (COMMAND)` once it is gone; an \
             unknown ID, or one that is no longer running, is an error result that says so. Another running \
             background task (a subagent) is asked to stop.",
            grace = seconds(c.kill_grace),
        ),
        input_schema: params::schema(&[params::KILL_SHELL], |_| {
            "The ID of the shell, monitor or task to stop.".into()
        }),
    }
}

pub(crate) fn list_shells() -> ToolDefinition {
    ToolDefinition {
        name: "list_shells",
        description: "Lists every background shell (bash_N) and monitor (monitor_N), newest first, one per line: \
             `ID (STATUS, ELAPSED): DESCRIPTION` while running, `ID (STATUS, exit code N, ELAPSED): DESCRIPTION` \
             once ended (no exit code for killed ones). Use it to find the IDs of work you started when you no \
             longer have them. `No shells` when there are none."
            .to_string(),
        input_schema: params::schema(&[params::LIST_SHELLS], |_| String::new()),
    }
}

pub(crate) fn monitor(c: &Config) -> ToolDefinition {
    let o = &c.monitor_options;
    ToolDefinition {
        name: "monitor",
        description: format!(
            "Starts a command in the background (monitor_N) and notifies you of each line it prints on stdout, as \
             events: lines within {window} of each other arrive together, at most {burst} per event (more are \
             counted as suppressed), each cut at {line} characters. Use it to wait for something to happen \
             (`tail -f app.log | grep --line-buffered ERROR`) instead of polling or sleeping. stderr is not an event \
             (read it with bash_output). It ends when the command exits, at `timeout_ms` (milliseconds, default \
             {default} ms, between {min} and {max} ms), or with kill_shell; you are notified when it ends.",
            window = seconds(o.batch_window),
            burst = o.burst_limit,
            line = o.line_limit,
            default = c.monitor_timeout.as_millis(),
            min = c.monitor_min_timeout.as_millis(),
            max = c.monitor_max_timeout.as_millis(),
        ),
        input_schema: params::schema(&[params::MONITOR], |name| match name {
            "description" => "What is being watched, in a few words (shown with each event).".into(),
            "command" => "The command whose stdout lines are the events; use line-buffered output (grep --line-buffered).".into(),
            _ => format!("Milliseconds to watch (default {}, between {} and {}).", c.monitor_timeout.as_millis(), c.monitor_min_timeout.as_millis(), c.monitor_max_timeout.as_millis()),
        }),
    }
}

pub(crate) fn write_stdin(c: &Config) -> ToolDefinition {
    ToolDefinition {
        name: "write_stdin",
        description: format!(
            "Types `input` into the terminal of a shell started with `bash` and `interactive: true`, as a keyboard \
             would: end a line with \\n (Enter); control characters work, e.g. \\u0003 is Ctrl-C (interrupt) and \\u0004 \
             Ctrl-D (end of input). Then waits up to `yield_ms` milliseconds (default {default}, at most {max} ms) for \
             its output, answering early once it has paused {quiet} ms or the shell has ended, in bash_output's form: \
             `<status>`, `<exit_code>` once ended, and the new output in `<stdout>`. Use bash_output later for output \
             that comes after. An unknown ID, a shell that is not interactive or one that has ended is an error result.",
            default = defaults::YIELD.as_millis(),
            max = c.max_timeout.as_millis(),
            quiet = defaults::QUIET.as_millis(),
        ),
        input_schema: params::schema(&[params::WRITE_STDIN], |name| match name {
            "shell_id" => "The ID of the interactive shell (bash_N).".into(),
            "input" => "What to type; \\n is Enter, \\u0003 Ctrl-C, \\u0004 Ctrl-D.".into(),
            _ => format!("Milliseconds to wait for output (default {}).", defaults::YIELD.as_millis()),
        }),
    }
}

/// Every tool this configuration offers: `monitor` only with a registry
/// (`tasks`), `list_shells` always, `write_stdin` only with `interactive`.
pub(crate) fn all(c: &Config, tasks: bool) -> Vec<ToolDefinition> {
    let mut defs = vec![bash(c, tasks), bash_output(c), kill_shell(c)];
    if tasks {
        defs.push(monitor(c));
    }
    defs.push(list_shells());
    if c.interactive {
        defs.push(write_stdin(c));
    }
    defs
}
