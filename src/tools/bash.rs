//! The `bash` tool: run a command, in the foreground until its timeout,
//! then in the background.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::params::{self, Param};
use super::{answers, input, ToolResult};
use crate::api::core::Core;
use crate::api::foreground;
use crate::api::types::{CallError, Command, Outcome};
use crate::api::Pending;
use crate::caller::Caller;
use crate::config::defaults;
use crate::texts;

/// The command of a `bash` call's arguments, checked.
fn parse(core: &Core, input: &Value) -> Result<Command, String> {
    let params: &[&[Param]] = if core.config.interactive {
        &[params::BASH, params::BASH_INTERACTIVE]
    } else {
        // Not a parameter here; the refusal says why.
        if input.get("interactive").is_some() {
            return Err(texts::INTERACTIVE_OFF.to_string());
        }
        &[params::BASH]
    };
    let args = params::check("bash", params, input)?;
    // Checked: a string with something to run and no NUL.
    let command = args["command"].as_str().unwrap_or_default();
    let mut cmd = Command::new(command).timeout(input::timeout_secs(
        args,
        "timeout",
        core.config.default_timeout,
        core.config.max_timeout,
    ));
    if let Some(d) = input::optional_str(args, "description")? {
        cmd = cmd.description(d);
    }
    cmd = cmd.background(input::optional_bool(args, "run_in_background")?);
    if let Some(dir) = input::optional_str(args, "working_directory")? {
        cmd = cmd.working_directory(dir);
    }
    cmd = cmd.interactive(input::optional_bool(args, "interactive")?);
    if let Some(text) = input::optional_str(args, "stdin")? {
        cmd = cmd.stdin(text);
    }
    Ok(cmd)
}

/// How long an interactive command's first answer waits for its output.
fn yield_of(core: &Core, input: &Value) -> Duration {
    input.as_object().map_or(defaults::YIELD, |args| {
        input::millis(args, "yield_ms", defaults::YIELD, core.config.max_timeout)
    })
}

/// An interactive command: started in the background at once, answered
/// with the usual text and what it printed in its first yield.
fn interactive(core: &Arc<Core>, cmd: &Command, input: &Value, caller: &Caller) -> ToolResult {
    let outcome = match core.run(cmd, caller) {
        Ok(outcome) => outcome,
        Err(e) => return answers::error(&e),
    };
    let started = answers::outcome(&outcome);
    let Outcome::Background(bg) = &outcome else {
        return started;
    };
    let Some(key) = core.key_of(bg.id().as_str()) else {
        return started;
    };
    match core.yield_unread(key, yield_of(core, input)) {
        Ok(out) => {
            let info = out.info();
            let first = texts::shell_output(
                info.status(),
                info.exit_code(),
                answers::oom_of(info),
                out.text(),
                answers::cap_of(info.stopped()),
            );
            ToolResult {
                text: texts::interactive_started(&started.text, &first),
                status: Some(info.status()),
                exit_code: info.exit_code(),
                ..started
            }
            .with_output(out.text(), out.truncated_chars())
        }
        Err(e) => answers::error(&e),
    }
}

pub(crate) fn bash(core: &Arc<Core>, input: &Value, caller: &Caller) -> ToolResult {
    let cmd = match parse(core, input) {
        Ok(cmd) => cmd,
        Err(e) => return ToolResult::error(e),
    };
    if cmd.is_interactive() {
        return interactive(core, &cmd, input, caller);
    }
    match core.run(&cmd, caller) {
        Ok(outcome) => answers::outcome(&outcome),
        Err(e) => answers::error(&e),
    }
}

/// `bash` as a [`Pending`]: completes when the command exits or, at its
/// timeout, when it has moved to the background. No thread of the
/// caller's waits meanwhile; its command handle stops the command.
pub(crate) fn bash_f(core: &Arc<Core>, input: &Value, caller: &Caller) -> Pending<ToolResult> {
    let cmd = match parse(core, input) {
        Ok(cmd) => cmd,
        Err(e) => return Pending::ready(ToolResult::error(e)),
    };
    if cmd.is_interactive() {
        // The first yield is short and rare: a thread of its own waits it.
        let (pending, completer) = Pending::new();
        let (core, input, caller) = (core.clone(), input.clone(), caller.clone());
        let spawned = std::thread::Builder::new()
            .name("bashtools-yield".into())
            .spawn(move || {
                let answer = interactive(&core, &cmd, &input, &caller);
                completer.complete_with(move || answer);
            });
        return match spawned {
            Ok(_) => pending,
            Err(e) => Pending::ready(answers::error(&CallError::SpawnFailed(e.into()))),
        };
    }
    foreground::run_f(
        core,
        &cmd,
        caller,
        Arc::new(|r| match r {
            Ok(outcome) => answers::outcome(&outcome),
            Err(e) => answers::error(&e),
        }),
    )
}
