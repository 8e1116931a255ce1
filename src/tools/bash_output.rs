//! The `bash_output` tool (SPEC section 4): what a background shell wrote
//! since the last call, and its state.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use regex::{Regex, RegexBuilder};
use serde_json::Value;

use super::ToolResult;
use crate::core::Core;
use crate::pending::{Completer, Pending};
use crate::shells::table::{ExitWaiter, StopReason};
use crate::tasks::{EndWaiter, TaskStatus};
use crate::{input, output, texts, timer};

/// What a `bash_output` call reads.
#[derive(Clone)]
enum Target {
    /// A shell of this `BashTools`.
    Shell(u64),
    /// Another entry of the registry (a subagent, or another `BashTools`'s shell), by its ID.
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
    let key = {
        let inner = core.table.lock();
        if inner.closed {
            return Err(texts::STOPPED.to_string());
        }
        inner.by_id(&id)
    };
    let target = match key {
        Some(key) => Target::Shell(key),
        None => core
            .config
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
        let deadline = Instant::now() + req.timeout;
        match &req.target {
            Target::Shell(key) => {
                let inner = core.table.lock();
                drop(core.table.wait_exited(inner, &[*key], Some(deadline)));
            }
            Target::Task(id) => {
                if let Some(tasks) = &core.config.tasks {
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
        Target::Shell(key) => core
            .table
            .lock()
            .shells
            .get(key)
            .is_some_and(|s| s.is_running()),
        Target::Task(id) => core
            .config
            .tasks
            .as_ref()
            .and_then(|t| t.get(id))
            .is_some_and(|i| i.status == TaskStatus::Running),
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
    let on_timeout = late.clone();
    timer::at(Instant::now() + req.timeout, move || on_timeout.complete());
    match &req.target {
        Target::Shell(key) => core.table.on_exit(*key, Box::new(late)),
        Target::Task(id) => {
            if let Some(tasks) = &core.config.tasks {
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
            None => ToolResult::error(texts::STOPPED),
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
        Target::Shell(key) => shell_answer(core, id, *key, filter),
        Target::Task(task_id) => match core.config.tasks.as_ref().and_then(|t| t.get(task_id)) {
            Some(info) => ToolResult::ok(texts::task_output(&info)),
            None => ToolResult::error(texts::no_task(id)),
        },
    }
}

/// Reads a shell's new output and words the answer.
fn shell_answer(core: &Core, id: &str, key: u64, filter: Option<&Regex>) -> ToolResult {
    let Some(read_lock) = core
        .table
        .lock()
        .shells
        .get(&key)
        .map(|s| s.read_lock.clone())
    else {
        return ToolResult::error(texts::no_task(id));
    };
    // One reader at a time per shell: the cursor is read, the file read, and
    // the cursor moved as one step.
    let _reading = read_lock.lock();
    let Some((path, cursor, status, code, stop)) = core.table.lock().shells.get(&key).map(|s| {
        (
            s.output.clone(),
            s.cursor,
            s.status(),
            s.exit_code(),
            s.stop,
        )
    }) else {
        return ToolResult::error(texts::no_task(id));
    };
    // The state is taken before the file is read: once ended, the file is
    // complete, so everything to its end may be consumed.
    let rendered = match output::render_file(
        &path,
        cursor,
        core.config.output_limit,
        filter,
        code.is_some(),
    ) {
        Ok(r) => r,
        Err(e) => return ToolResult::error(texts::read_failed(&e)),
    };
    if let Some(s) = core.table.lock().shells.get_mut(&key) {
        s.cursor = cursor + rendered.consumed;
    }
    let mut text = format!("<status>{status}</status>");
    if let Some(code) = code {
        text.push_str(&format!("\n<exit_code>{code}</exit_code>"));
    }
    if !rendered.text.is_empty() {
        text.push_str("\n<stdout>\n");
        text.push_str(&rendered.text);
        text.push_str("\n</stdout>");
    }
    if stop == Some(StopReason::OutputCap) {
        text.push('\n');
        text.push_str(&texts::output_cap(core.config.max_output_bytes));
    }
    ToolResult::ok(text)
}
