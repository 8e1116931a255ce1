//! The `bash` tool (SPEC section 4): run a command, in the foreground until
//! its timeout, then in the background.

use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::ToolResult;
use crate::caller::Caller;
use crate::core::{Core, StartSpec};
use crate::pending::{Completer, Pending};
use crate::shells::table::{ExitWaiter, Shell, StopReason};
use crate::{input, output, texts, timer};

/// The arguments of a `bash` call, checked.
struct BashInput<'a> {
    command: &'a str,
    timeout: Duration,
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
    match launch(core, input, caller) {
        Ok(Launched::Answered(r)) => r,
        Ok(Launched::Foreground { key, timeout }) => {
            let deadline = Instant::now() + timeout;
            let inner = core.table.lock();
            drop(core.table.wait_exited(inner, &[key], Some(deadline)));
            settle(core, key, timeout)
        }
        Err(e) => ToolResult::error(e),
    }
}

/// `bash` as a [`Pending`]: completes when the command exits or, at its
/// timeout, when it has moved to the background. No thread of the
/// caller's waits meanwhile.
pub(crate) fn bash_f(core: &Arc<Core>, input: &Value, caller: &Caller) -> Pending<ToolResult> {
    bash_f_keyed(core, input, caller).0
}

/// [`bash_f`], and the table key of the command while it runs in the
/// foreground (`None` when the answer is known at once), so a caller that
/// cancels the call can stop it: `core.stop(&[key], StopReason::Killed)`.
pub(crate) fn bash_f_keyed(
    core: &Arc<Core>,
    input: &Value,
    caller: &Caller,
) -> (Pending<ToolResult>, Option<u64>) {
    let (key, timeout) = match launch(core, input, caller) {
        Ok(Launched::Answered(r)) => return (Pending::ready(r), None),
        Ok(Launched::Foreground { key, timeout }) => (key, timeout),
        Err(e) => return (Pending::ready(ToolResult::error(e)), None),
    };
    let (pending, completer) = Pending::new();
    // Whichever comes first settles the call, once: the exit, or the timeout.
    let settled = Arc::new(OnceLock::new());
    let at_deadline = Settle {
        core: Arc::downgrade(core),
        key,
        timeout,
        settled: settled.clone(),
        completer: completer.clone(),
    };
    timer::at(Instant::now() + timeout, move || {
        if !at_deadline.completer.is_done() {
            // Eagerly, on the timer thread: the move to the background must
            // happen at the timeout even if nobody takes the result.
            let result = at_deadline.result();
            at_deadline.completer.complete_with(move || result);
        }
    });
    core.table.on_exit(
        key,
        Box::new(Settle {
            core: Arc::downgrade(core),
            key,
            timeout,
            settled,
            completer,
        }),
    );
    (pending, Some(key))
}

/// What starting a `bash` call led to.
enum Launched {
    /// Refused, or started in the background: the answer is known now.
    Answered(ToolResult),
    /// Running in the foreground until `timeout`.
    Foreground { key: u64, timeout: Duration },
}

fn launch(core: &Arc<Core>, input: &Value, caller: &Caller) -> Result<Launched, String> {
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
    match id {
        Some(id) => {
            let path = core.table.lock().shells[&key].output.clone();
            Ok(Launched::Answered(ToolResult::ok(
                texts::running_in_background(&id, &path, core.notifies()),
            )))
        }
        None => Ok(Launched::Foreground {
            key,
            timeout: args.timeout,
        }),
    }
}

/// Settles a foreground call at its exit or its timeout: the result of the
/// command if it has exited, else it moves to the background — not killed,
/// as in Claude Code — as `bash_N`. Its file is renamed after its new ID;
/// the command keeps writing to the same open file.
fn settle(core: &Arc<Core>, key: u64, timeout: Duration) -> ToolResult {
    let mut inner = core.table.lock();
    let Some(shell) = inner.shells.get_mut(&key) else {
        return ToolResult::error(texts::STOPPED);
    };
    if !shell.is_running() {
        let shell = inner.remove(key).expect("looked up just now");
        drop(inner);
        let result = finished(core, &shell);
        let _ = std::fs::remove_file(&shell.output);
        return result;
    }
    let id = core.next_bash_id();
    let renamed = shell.output.with_file_name(format!("{id}.output"));
    if std::fs::rename(&shell.output, &renamed).is_ok() {
        shell.output = renamed;
    }
    let path = shell.output.clone();
    inner.name(key, id.clone());
    core.register_task(&inner.shells[&key], key);
    drop(inner);
    ToolResult::ok(texts::moved_to_background(
        timeout,
        &id,
        &path,
        core.notifies(),
    ))
}

/// One settling of a `bash_f` call, shared by its exit waiter and its timer.
struct Settle {
    core: Weak<Core>,
    key: u64,
    timeout: Duration,
    settled: Arc<OnceLock<ToolResult>>,
    completer: Completer<ToolResult>,
}

impl Settle {
    fn result(&self) -> ToolResult {
        self.settled
            .get_or_init(|| match self.core.upgrade() {
                Some(core) => settle(&core, self.key, self.timeout),
                None => ToolResult::error(texts::STOPPED),
            })
            .clone()
    }
}

impl ExitWaiter for Settle {
    fn is_stale(&self) -> bool {
        self.completer.is_done()
    }

    /// On the reaper thread: only marks the result ready; the output is
    /// read by whoever takes it.
    fn exited(self: Box<Self>) {
        let completer = self.completer.clone();
        completer.complete_with(move || self.result());
    }
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
