//! The `kill_shell` tool (SPEC section 4): stop a background shell and its
//! whole process group.

use std::sync::Arc;

use serde_json::Value;

use super::ToolResult;
use crate::core::Core;
use crate::shells::table::StopReason;
use crate::{input, texts};

pub(crate) fn kill_shell(core: &Arc<Core>, input: &Value) -> ToolResult {
    run(core, input).into()
}

fn run(core: &Arc<Core>, input: &Value) -> Result<ToolResult, String> {
    let args = input::object(input)?;
    let id = input::required_str(args, "shell_id")?;
    let (key, command, lingering) = {
        let inner = core.table.lock();
        let Some(key) = inner.by_id(id) else {
            drop(inner);
            return other_entry(core, id);
        };
        let shell = &inner.shells[&key];
        // An ended shell whose processes still run is stopped all the same.
        let lingering = !shell.is_running() && core.lingers(key);
        if !shell.is_running() && !lingering {
            return Err(texts::not_running(id, shell.status()));
        }
        (key, shell.command.clone(), lingering)
    };
    let stopped = core.stop(&[key], StopReason::Killed);
    if stopped.is_empty() && !lingering {
        // It ended on its own between the look-up and the signal.
        let inner = core.table.lock();
        let status = inner.shells.get(&key).map_or("completed", |s| s.status());
        return Err(texts::not_running(id, status));
    }
    Ok(ToolResult::ok(texts::stopped(id, &command)))
}

/// Another entry of the registry (a subagent): asked to stop.
fn other_entry(core: &Core, id: &str) -> Result<ToolResult, String> {
    let tasks = core
        .config
        .tasks
        .as_ref()
        .ok_or_else(|| texts::no_task(id))?;
    let (id, description) = tasks.request_stop(id)?;
    Ok(ToolResult::ok(texts::stopped(&id, &description)))
}
