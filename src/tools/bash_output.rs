//! The `bash_output` tool: what a background shell wrote since the last
//! call, and its state; or the state of another registry entry.

use std::sync::{Arc, Weak};
use std::time::Duration;

use regex::{Regex, RegexBuilder};
use serde_json::Value;

use super::params;
use super::{answers, input, ToolResult};
use crate::api::core::Core;
use crate::api::reads::{Target, Waiter};
use crate::api::{Completer, Pending};
use crate::{deadline, texts};

/// What a read keeps: the lines `filter` matches, the last `tail` of them.
#[derive(Clone)]
struct Reading {
    filter: Option<Regex>,
    tail: Option<u64>,
}

/// A checked `bash_output` call.
struct Request {
    id: String,
    target: Target,
    read: Reading,
    block: bool,
    timeout: Duration,
}

fn parse(core: &Core, input: &Value) -> Result<Request, String> {
    let args = params::check("bash_output", &[params::BASH_OUTPUT], input)?;
    let id = input::required_str(args, "bash_id")?.to_string();
    let filter = match input::optional_str(args, "filter")? {
        Some(f) => Some(
            RegexBuilder::new(f)
                .case_insensitive(true)
                .build()
                .map_err(|e| texts::invalid_filter(f, &e.to_string()))?,
        ),
        None => None,
    };
    let tail = args
        .get("tail")
        .and_then(Value::as_number)
        .and_then(params::count);
    let block = input::optional_bool(args, "block")?;
    let timeout = input::timeout_secs(
        args,
        "timeout",
        core.config.block_timeout,
        core.config.max_timeout,
    );
    core.check_open().map_err(|e| e.to_string())?;
    let target = core.target_of(&id).ok_or_else(|| texts::no_task(&id))?;
    Ok(Request {
        id,
        target,
        read: Reading { filter, tail },
        block,
        timeout,
    })
}

/// Blocking: waits on the table's condvar when `block` is set.
pub(crate) fn bash_output(core: &Arc<Core>, input: &Value) -> ToolResult {
    let req = match parse(core, input) {
        Ok(r) => r,
        Err(e) => return ToolResult::error(e),
    };
    if req.block {
        core.wait_end(&req.target, deadline::after(req.timeout));
    }
    answer(core, &req.id, &req.target, &req.read)
}

/// Future-style: the `Pending` completes when the shell exits or the
/// timeout passes, whichever is first; no thread of the caller's waits.
pub(crate) fn bash_output_f(core: &Arc<Core>, input: &Value) -> Pending<ToolResult> {
    let req = match parse(core, input) {
        Ok(r) => r,
        Err(e) => return Pending::ready(ToolResult::error(e)),
    };
    if !req.block || !core.is_running(&req.target) {
        return Pending::ready(answer(core, &req.id, &req.target, &req.read));
    }
    let (pending, completer) = Pending::new();
    let late = Answer {
        core: Arc::downgrade(core),
        id: req.id,
        target: req.target.clone(),
        read: req.read,
        completer,
    };
    core.when_ended(&req.target, req.timeout, late);
    pending
}

/// An answer to give later, on exit or at the deadline.
#[derive(Clone)]
struct Answer {
    core: Weak<Core>,
    id: String,
    target: Target,
    read: Reading,
    completer: Completer<ToolResult>,
}

impl Waiter for Answer {
    fn is_stale(&self) -> bool {
        self.completer.is_done()
    }

    fn wake(self) {
        let Answer {
            core,
            id,
            target,
            read,
            completer,
        } = self;
        completer.complete_with(move || match core.upgrade() {
            Some(core) => answer(&core, &id, &target, &read),
            None => ToolResult::error(texts::CLOSED),
        });
    }
}

/// Answers for whatever the call reads.
fn answer(core: &Core, id: &str, target: &Target, read: &Reading) -> ToolResult {
    match target {
        Target::Shell(key) => match core.read_output_tail(*key, read.filter.as_ref(), read.tail) {
            Ok(out) => {
                let info = out.info();
                let shown = match out.lines_left_out() {
                    0 => out.text().to_string(),
                    n => format!("{}\n{}", texts::lines_not_shown(n), out.text()),
                };
                let mut text = texts::shell_output(
                    info.status(),
                    info.exit_code(),
                    answers::oom_of(info),
                    &shown,
                    answers::cap_of(info.stopped()),
                );
                if out.output_lost() {
                    text.push('\n');
                    text.push_str(texts::OUTPUT_CUT);
                }
                answers::with_usage(ToolResult::ok(text), info.usage())
                    .with_exit_code(info.exit_code())
                    .with_output(out.text(), out.truncated_chars())
                    .with_task(
                        id,
                        Some(info.status()),
                        Some(info.output_file().to_path_buf()),
                    )
            }
            Err(e) => answers::error(&e),
        },
        Target::Task(task_id) => match core.task_info(task_id) {
            Some(info) => {
                let body = info.report.as_deref().or(info.error.as_deref());
                ToolResult::ok(texts::task_output(info.status, body)).with_task(
                    &info.id,
                    Some(info.status),
                    None,
                )
            }
            None => ToolResult::error(texts::no_task(id)),
        },
    }
}
