//! The `monitor` tool (SPEC section 4): start a command whose stdout lines
//! arrive as notifications.

use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::fcntl::{fcntl, FcntlArg, OFlag};
use serde_json::Value;

use super::ToolResult;
use crate::caller::Caller;
use crate::core::{Core, StartSpec};
use crate::monitor::MonitorRun;
use crate::os::group;
use crate::{input, texts};

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
    let ms = match args.get("timeout_ms") {
        None | Some(Value::Null) => return Ok(c.monitor_timeout.clamp(min, max)),
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
        Some(_) => None,
    };
    let ms = match ms {
        Some(ms) if !ms.is_nan() => ms,
        _ => return Err(texts::wrong_type("timeout_ms", "a number of milliseconds")),
    };
    let wanted = if ms <= 0.0 {
        Duration::ZERO
    } else {
        Duration::try_from_secs_f64(ms / 1000.0).unwrap_or(max)
    };
    Ok(wanted.clamp(min, max))
}

fn run(core: &Arc<Core>, input: &Value, caller: &Caller) -> Result<ToolResult, String> {
    let args = input::object(input)?;
    let Some(tasks) = core.config.tasks.clone() else {
        return Err(texts::MONITOR_NEEDS_TASKS.to_string());
    };
    let description = input::required_str(args, "description")?;
    if description.trim().is_empty() {
        return Err(texts::missing("description"));
    }
    let command = match args.get("command") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.as_str(),
        _ => return Err(texts::NO_COMMAND.to_string()),
    };
    if command.contains('\0') {
        return Err(texts::NUL_IN_COMMAND.to_string());
    }
    let timeout = timeout(core, args)?;
    if core.table.lock().closed {
        return Err(texts::STOPPED.to_string());
    }
    let cwd = core.resolve_cwd(None, caller)?;
    core.check_gates(command, &cwd)?;

    let (read, write) =
        nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(|e| texts::spawn_failed(&e.into()))?;
    // The reader must never block on a pipe that a grandchild holds open.
    fcntl(read.as_raw_fd(), FcntlArg::F_SETFL(OFlag::O_NONBLOCK))
        .map_err(|e| texts::spawn_failed(&e.into()))?;
    let id = tasks.next_id("monitor");
    let key = core.start(StartSpec {
        command,
        description: Some(description),
        cwd: &cwd,
        caller,
        id: Some(id.clone()),
        monitor: true,
        stdout: Some(write),
    })?;
    let (pid, output) = {
        let inner = core.table.lock();
        let s = &inner.shells[&key];
        (s.pid, s.output.clone())
    };
    let run = MonitorRun {
        core: core.clone(),
        tasks,
        key,
        id: id.clone(),
        description: description.to_string(),
        recipient: caller.recipient.clone(),
        call: caller.call.clone(),
        output,
        deadline: Instant::now() + timeout,
        stdout: std::fs::File::from(read),
        leader: group::pidfd_open(pid),
    };
    core.spawn_reader(&id, run)
        .map_err(|e| texts::spawn_failed(&e))?;
    Ok(ToolResult::ok(texts::monitor_started(&id, timeout)))
}
