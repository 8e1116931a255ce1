//! The `bash` tool (SPEC section 4): run a command, in the foreground until
//! its timeout, then in the background.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use super::ToolResult;
use crate::caller::Caller;
use crate::core::{Core, StartSpec};
use crate::table::{Shell, StopReason};
use crate::{input, output, texts};

/// The arguments of a `bash` call, checked.
struct BashInput<'a> {
    command: &'a str,
    timeout: std::time::Duration,
    description: Option<&'a str>,
    run_in_background: bool,
    working_directory: Option<&'a str>,
}

fn parse<'a>(core: &Core, input: &'a Value) -> Result<BashInput<'a>, String> {
    let args = input::object(input)?;
    let command = match args.get("command") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.as_str(),
        _ => return Err(texts::NO_COMMAND.to_string()),
    };
    if command.contains('\0') {
        return Err(texts::NUL_IN_COMMAND.to_string());
    }
    Ok(BashInput {
        command,
        timeout: input::timeout_secs(
            args,
            "timeout",
            core.config.default_timeout,
            core.config.max_timeout,
        ),
        description: input::optional_str(args, "description")?,
        run_in_background: input::optional_bool(args, "run_in_background")?,
        working_directory: input::optional_str(args, "working_directory")?,
    })
}

pub(crate) fn bash(core: &Arc<Core>, input: &Value, caller: &Caller) -> ToolResult {
    run(core, input, caller).into()
}

fn run(core: &Arc<Core>, input: &Value, caller: &Caller) -> Result<ToolResult, String> {
    let args = parse(core, input)?;
    if core.table.lock().closed {
        return Err(texts::STOPPED.to_string());
    }
    let cwd = core.resolve_cwd(args.working_directory, caller)?;
    core.check_gates(args.command, &cwd)?;
    let id = args.run_in_background.then(|| core.next_bash_id());
    let key = core.start(StartSpec {
        command: args.command,
        description: args.description,
        cwd: &cwd,
        caller,
        id: id.clone(),
        monitor: false,
        stdout: None,
    })?;
    if let Some(id) = id {
        let path = core.table.lock().shells[&key].output.clone();
        return Ok(ToolResult::ok(texts::running_in_background(
            &id,
            &path,
            core.notifies(),
        )));
    }

    let deadline = Instant::now() + args.timeout;
    let inner = core.table.lock();
    let (mut inner, exited) = core.table.wait_exited(inner, &[key], Some(deadline));
    if !exited {
        // Not killed: it goes on as a background shell (as in Claude Code).
        // Its file is renamed after its new ID; the command keeps writing to
        // the same open file.
        let id = core.next_bash_id();
        let shell = inner
            .shells
            .get_mut(&key)
            .expect("a running shell stays in the table");
        let renamed = shell.output.with_file_name(format!("{id}.output"));
        if std::fs::rename(&shell.output, &renamed).is_ok() {
            shell.output = renamed;
        }
        let path = shell.output.clone();
        inner.name(key, id.clone());
        core.register_task(&inner.shells[&key], key);
        drop(inner);
        return Ok(ToolResult::ok(texts::moved_to_background(
            args.timeout,
            &id,
            &path,
            core.notifies(),
        )));
    }
    let shell = inner
        .remove(key)
        .expect("the shell is in the table until removed here");
    drop(inner);
    let result = finished(core, &shell);
    let _ = std::fs::remove_file(&shell.output);
    Ok(result)
}

/// The result of a foreground command that has ended.
fn finished(core: &Core, shell: &Shell) -> ToolResult {
    let rendered = match output::render_file(&shell.output, 0, core.config.output_limit, None, true)
    {
        Ok(r) => r,
        Err(e) => return ToolResult::error(texts::read_failed(&e)),
    };
    let code = shell.exit_code().unwrap_or(-1);
    let mut text = if code == 0 && shell.stop.is_none() {
        if rendered.text.is_empty() {
            return ToolResult::ok(texts::NO_OUTPUT);
        }
        return ToolResult::ok(rendered.text);
    } else {
        texts::exit_code(code)
    };
    if !rendered.text.is_empty() {
        text.push('\n');
        text.push_str(&rendered.text);
    }
    if shell.stop == Some(StopReason::OutputCap) {
        text.push_str("\n\n");
        text.push_str(&texts::output_cap(core.config.max_output_bytes));
    }
    ToolResult::error(text)
}
