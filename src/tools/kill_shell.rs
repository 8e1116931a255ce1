//! The `kill_shell` tool: stop a background shell and its whole process
//! group, or ask another registry entry to stop.

use std::sync::Arc;

use serde_json::Value;

use super::params;
use super::{answers, input, ToolResult};
use crate::api::core::Core;
use crate::texts;

pub(crate) fn kill_shell(core: &Arc<Core>, input: &Value) -> ToolResult {
    run(core, input).into()
}

fn run(core: &Arc<Core>, input: &Value) -> Result<ToolResult, String> {
    let args = params::check("kill_shell", &[params::KILL_SHELL], input)?;
    let id = input::required_str(args, "shell_id")?;
    core.check_open().map_err(|e| e.to_string())?;
    if core.key_of(id).is_none() {
        return other_entry(core, id);
    }
    match core.kill(id) {
        Ok(info) => Ok(
            ToolResult::ok(texts::stopped(id, info.command())).with_task(
                id,
                Some(info.status()),
                Some(info.output_file().to_path_buf()),
            ),
        ),
        Err(e) => Ok(answers::error(&e)),
    }
}

/// Another entry of the registry (a subagent): asked to stop.
fn other_entry(core: &Core, id: &str) -> Result<ToolResult, String> {
    if core.tasks.is_none() {
        return Err(texts::no_task(id));
    }
    match core.stop_entry(id) {
        Ok((id, description)) => Ok(ToolResult::ok(texts::stopped(&id, &description))),
        Err(e) => Err(e.to_string()),
    }
}
