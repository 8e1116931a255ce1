//! The `monitor` tool (contract §4): start a command whose stdout lines
//! arrive as notifications.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::params;
use super::{input, ToolResult};
use crate::api::core::Core;
use crate::api::types::CallError;
use crate::caller::Caller;
use crate::status::TaskStatus;
use crate::texts;

pub(crate) fn monitor(core: &Arc<Core>, input: &Value, caller: &Caller) -> ToolResult {
    run(core, input, caller).into()
}

/// `timeout_ms`: absent means `monitor_timeout`; any number is held between
/// the floor and the cap (zero and negative ones go to the floor); anything
/// that is not a number is an error.
fn timeout(core: &Core, args: &serde_json::Map<String, Value>) -> Result<Duration, String> {
    let c = &core.config;
    let unattended = c.unattended.as_ref().is_some_and(|f| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f())).unwrap_or(false)
    });
    let max = if unattended {
        c.monitor_unattended_max_timeout
    } else {
        c.monitor_max_timeout
    };
    let min = c.monitor_min_timeout.min(max);
    // Checked by `params::check`: absent, or a number above 0 (the
    // schema's `exclusiveMinimum`, so a strict client and the server agree).
    let Some(ms) = args.get("timeout_ms").and_then(Value::as_f64) else {
        return Ok(c.monitor_timeout.clamp(min, max));
    };
    if ms.is_nan() || ms <= 0.0 {
        return Err(texts::wrong_type("timeout_ms", "a number greater than 0"));
    }
    let wanted = Duration::try_from_secs_f64(ms / 1000.0).unwrap_or(max);
    Ok(wanted.clamp(min, max))
}

fn run(core: &Arc<Core>, input: &Value, caller: &Caller) -> Result<ToolResult, String> {
    if core.tasks.is_none() {
        return Err(CallError::MonitorNeedsTasks.to_string());
    }
    let args = params::check("monitor", &[params::MONITOR], input)?;
    let description = input::required_str(args, "description")?;
    // Checked: a string with something to run and no NUL.
    let command = args["command"].as_str().unwrap_or_default();
    Core::check_command(command).map_err(|e| e.to_string())?;
    let timeout = timeout(core, args)?;
    core.check_open().map_err(|e| e.to_string())?;
    // Where the recipient's last command ended (a monitor does not change
    // it; a reset is not worth a line beside the monitor's own).
    let (cwd, _reset) = core.start_dir(None, caller).map_err(|e| e.to_string())?;
    core.check_gates(command, &cwd, caller)
        .map_err(|r| r.to_string())?;

    let id = core
        .start_monitor(command, description, timeout, caller, &cwd)
        .map_err(|e| e.to_string())?;
    Ok(
        ToolResult::ok(texts::monitor_started(&id, timeout)).with_task(
            &id,
            Some(TaskStatus::Running),
            None,
        ),
    )
}
