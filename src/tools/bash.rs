//! The `bash` tool: run a command, in the foreground until its timeout,
//! then in the background.

use std::sync::Arc;

use serde_json::Value;

use super::{input, words, ToolResult};
use crate::api::core::Core;
use crate::api::foreground;
use crate::api::types::{CallError, Command};
use crate::caller::Caller;
use crate::pending::Pending;
use crate::texts;

/// The command of a `bash` call's arguments, checked.
fn parse(core: &Core, input: &Value) -> Result<Command, String> {
    let args = input::object(input)?;
    let command = match args.get("command") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.as_str(),
        _ => return Err(texts::NO_COMMAND.to_string()),
    };
    if command.contains('\0') {
        return Err(CallError::NulInCommand.to_string());
    }
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
    if let Some(text) = input::optional_str(args, "stdin")? {
        cmd = cmd.stdin(text);
    }
    Ok(cmd)
}

pub(crate) fn bash(core: &Arc<Core>, input: &Value, caller: &Caller) -> ToolResult {
    let cmd = match parse(core, input) {
        Ok(cmd) => cmd,
        Err(e) => return ToolResult::error(e),
    };
    match core.run(&cmd, caller) {
        Ok(outcome) => words::outcome(&outcome),
        Err(e) => words::error(&e),
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
    foreground::run_f(
        core,
        &cmd,
        caller,
        Arc::new(|r| match r {
            Ok(outcome) => words::outcome(&outcome),
            Err(e) => words::error(&e),
        }),
    )
}
