//! The `bash_output` tool: what a background shell wrote since the last
//! call, and its state; or the state of another registry entry.

use std::sync::{Arc, Weak};
use std::time::Duration;

use regex::{Regex, RegexBuilder};
use serde_json::Value;

use super::{answers, input, ToolResult};
use crate::api::core::Core;
use crate::pending::{Completer, Pending};
use crate::shells::{ExitWaiter, Key};
use crate::tasks::EndWaiter;
use crate::{deadline, texts, timer};

/// What a `bash_output` call reads.
#[derive(Clone)]
enum Target {
    /// A shell of this `BashTools`.
    Shell(Key),
    /// Another entry of the registry (a subagent, or another `BashTools`'s
    /// shell), by its ID.
    Task(String),
}

/// A checked `bash_output` call.
struct Request {
    id: String,
    target: Target,
    filter: Option<Regex>,
    block: bool,
    timeout: Duration,
}

fn parse(core: &Core, input: &Value) -> Result<Request, String> {
    let args = input::object(input)?;
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
    let block = input::optional_bool(args, "block")?;
    let timeout = input::timeout_secs(
        args,
        "timeout",
        core.config.block_timeout,
        core.config.max_timeout,
    );
    core.check_open().map_err(|e| e.to_string())?;
    let target = match core.key_of(&id) {
        Some(key) => Target::Shell(key),
        None => core
            .tasks
            .as_ref()
            .and_then(|t| t.resolve(&id))
            .map(Target::Task)
            .ok_or_else(|| texts::no_task(&id))?,
    };
    Ok(Request {
        id,
        target,
        filter,
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
        let deadline = deadline::after(req.timeout);
        match &req.target {
            Target::Shell(key) => {
                let table = core.shells.table();
                let inner = table.lock();
                drop(table.wait_exited(inner, &[*key], deadline));
            }
            Target::Task(id) => {
                if let Some(tasks) = &core.tasks {
                    tasks.wait_end(id, deadline);
                }
            }
        }
    }
    answer(core, &req.id, &req.target, req.filter.as_ref())
}

/// Future-style: the `Pending` completes when the shell exits or the
/// timeout passes, whichever is first; no thread of the caller's waits.
pub(crate) fn bash_output_f(core: &Arc<Core>, input: &Value) -> Pending<ToolResult> {
    let req = match parse(core, input) {
        Ok(r) => r,
        Err(e) => return Pending::ready(ToolResult::error(e)),
    };
    let running = match &req.target {
        Target::Shell(key) => core.info(*key).is_some_and(|i| !i.status().is_ended()),
        Target::Task(id) => core
            .tasks
            .as_ref()
            .and_then(|t| t.get(id))
            .is_some_and(|i| !i.status.is_ended()),
    };
    if !req.block || !running {
        return Pending::ready(answer(core, &req.id, &req.target, req.filter.as_ref()));
    }
    let (pending, completer) = Pending::new();
    let late = Answer {
        core: Arc::downgrade(core),
        id: req.id,
        target: req.target.clone(),
        filter: req.filter,
        completer,
    };
    if let Some(at) = deadline::after(req.timeout) {
        let on_timeout = late.clone();
        timer::at(at, move || on_timeout.complete());
    }
    match &req.target {
        Target::Shell(key) => core.shells.table().on_exit(*key, Box::new(late)),
        Target::Task(id) => {
            if let Some(tasks) = &core.tasks {
                tasks.on_end(id, Box::new(late));
            }
        }
    }
    pending
}

/// An answer to give later, on exit or at the deadline.
#[derive(Clone)]
struct Answer {
    core: Weak<Core>,
    id: String,
    target: Target,
    filter: Option<Regex>,
    completer: Completer<ToolResult>,
}

impl Answer {
    fn complete(self) {
        let Answer {
            core,
            id,
            target,
            filter,
            completer,
        } = self;
        completer.complete_with(move || match core.upgrade() {
            Some(core) => answer(&core, &id, &target, filter.as_ref()),
            None => ToolResult::error(texts::CLOSED),
        });
    }
}

impl ExitWaiter for Answer {
    fn is_stale(&self) -> bool {
        self.completer.is_done()
    }

    fn exited(self: Box<Self>) {
        self.complete();
    }
}

impl EndWaiter for Answer {
    fn is_stale(&self) -> bool {
        self.completer.is_done()
    }

    fn ended(self: Box<Self>) {
        self.complete();
    }
}

/// Answers for whatever the call reads.
fn answer(core: &Core, id: &str, target: &Target, filter: Option<&Regex>) -> ToolResult {
    match target {
        Target::Shell(key) => match core.read_output(*key, filter) {
            Ok(out) => {
                let info = out.info();
                let mut text = texts::shell_output(
                    info.status(),
                    info.exit_code(),
                    out.text(),
                    answers::cap_of(info.stopped()),
                );
                if out.output_lost() {
                    text.push('\n');
                    text.push_str(texts::OUTPUT_CUT);
                }
                ToolResult::ok(text)
                    .with_exit_code(info.exit_code())
                    .with_task(
                        id,
                        Some(info.status()),
                        Some(info.output_file().to_path_buf()),
                    )
            }
            Err(e) => answers::error(&e),
        },
        Target::Task(task_id) => match core.tasks.as_ref().and_then(|t| t.get(task_id)) {
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
