//! `tools/call` requests in flight: each runs on a thread of its own, so
//! the reader of stdin never waits for a command, and a ten-minute
//! foreground `bash` delays nothing else.
//!
//! The table knows every running call by its request id: to refuse a
//! second request with the same id, and to cancel one
//! (`notifications/cancelled`): a cancelled call sends no response, and
//! its foreground command, if it has one, is stopped with its whole group.
//!
//! A `bash_output` with `block: true` on one of this session's shells also
//! returns early when another notification reaches the session, so a
//! model with nothing else to do waits for the next background event in
//! one call; its result carries that notification.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::task::{Context, Wake, Waker};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use serde_json::{json, Value};

use super::ask::{self, Answer, Asks};
use super::backend::Backend;
use super::inbox::{Inbox, Seq};
use super::jsonrpc;
use super::progress::Progress;
use super::protocol::{self, Era};
use super::tasks::Board;
use super::writer::Writer;
use crate::{Caller, CommandHandle, Notification, Pending, TaskStatus, ToolResult};

/// At most this many calls run at once; more are refused with an error
/// response. Each costs a thread, and a client past this is looping.
pub const MAX_CALLS_IN_FLIGHT: usize = 1024;

#[derive(Default)]
struct Call {
    /// `notifications/cancelled` came for it.
    cancelled: bool,
    /// Its foreground command while it runs.
    foreground: Option<CommandHandle>,
}

/// The calls in flight.
#[derive(Default)]
pub(crate) struct Calls {
    calls: Mutex<HashMap<String, Call>>,
    /// Notified each time a call ends.
    ended: Condvar,
}

/// Why a call could not start.
pub(crate) enum Refused {
    /// A call with this request id is still running.
    Duplicate,
    /// [`MAX_CALLS_IN_FLIGHT`] are running.
    Full,
}

impl Calls {
    /// Records a call about to start.
    pub(crate) fn begin(&self, key: &str) -> Result<(), Refused> {
        let mut calls = self.calls.lock();
        if calls.contains_key(key) {
            return Err(Refused::Duplicate);
        }
        if calls.len() >= MAX_CALLS_IN_FLIGHT {
            return Err(Refused::Full);
        }
        calls.insert(key.to_string(), Call::default());
        Ok(())
    }

    /// Forgets a call that never started (its thread could not be made).
    pub(crate) fn forget(&self, key: &str) {
        self.calls.lock().remove(key);
        self.ended.notify_all();
    }

    /// Records the foreground command of call `key`. `false` when the call
    /// was cancelled before its command was known: the caller stops it.
    fn foreground(&self, key: &str, shell: CommandHandle) -> bool {
        match self.calls.lock().get_mut(key) {
            Some(call) if !call.cancelled => {
                call.foreground = Some(shell);
                true
            }
            _ => false,
        }
    }

    /// Marks call `key` cancelled; returns its foreground command, if any,
    /// to stop. Unknown (already answered) calls are left alone: a
    /// cancellation may always arrive after the response.
    pub(crate) fn cancel(&self, key: &str) -> Option<CommandHandle> {
        let mut calls = self.calls.lock();
        let call = calls.get_mut(key)?;
        call.cancelled = true;
        call.foreground.take()
    }

    /// Whether the response of call `key` should be sent (it was not
    /// cancelled). The call stays in flight until [`done`](Self::done), so
    /// the end of the session waits for its response to be handed over.
    fn answers(&self, key: &str) -> bool {
        self.calls.lock().get(key).is_some_and(|c| !c.cancelled)
    }

    /// Removes call `key`: its response, if any, has been handed over.
    fn done(&self, key: &str) {
        self.calls.lock().remove(key);
        self.ended.notify_all();
    }

    /// Waits until no call runs, or `deadline`. Returns how many are left.
    pub(crate) fn wait_idle(&self, deadline: Instant) -> usize {
        let mut calls = self.calls.lock();
        while !calls.is_empty() {
            if self.ended.wait_until(&mut calls, deadline).timed_out() {
                break;
            }
        }
        calls.len()
    }
}

/// One `tools/call`, ready to run.
pub(crate) struct ToolCall {
    pub id: Value,
    pub tool: String,
    pub arguments: Value,
    pub caller: Caller,
    pub era: Era,
    /// Whether the result carries `structuredContent`.
    pub structured: bool,
    /// What the tasks extension makes of it.
    pub task: TaskMode,
    /// `_meta.progressToken`, as the client gave it.
    pub progress: Option<Value>,
    /// How the person can be asked, if the policy asks.
    pub asking: Asking,
    /// A stateless request that declared the tasks extension.
    pub tasks_declared: bool,
}

/// How a call's client can ask the person (README, "Policy").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asking {
    /// It cannot: a line that needs approval is refused, saying what to
    /// allow.
    Cannot,
    /// A classic session whose client declared `elicitation`: the call
    /// sends `elicitation/create` and waits.
    Elicit,
    /// Already asked (a stateless retry with a checked answer): the line
    /// runs.
    Approved,
}

/// What the tasks extension makes of a `tools/call` (`tasks.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskMode {
    /// Nothing: a classic session, or a request without the extension.
    None,
    /// A `bash` call still running at its (shortened) timeout answers with
    /// a task for the shell it became.
    Foreground,
    /// A `run_in_background` call names the task of its shell in its
    /// `structuredContent`.
    Background,
}

/// What a call thread shares with the session.
#[derive(Clone)]
pub(crate) struct Shared {
    pub backend: Backend,
    /// The way to the client.
    pub out: Arc<Writer>,
    pub calls: Arc<Calls>,
    pub inbox: Arc<Inbox>,
    pub tasks: Arc<Board>,
    pub progress_every: Duration,
    /// The tools' output limit, in characters (what an answer can hold).
    pub output_limit: usize,
    /// Our requests to the client, waiting for their answers.
    pub asks: Arc<Asks>,
    /// How long the person has to answer.
    pub approval_timeout: Duration,
    /// Strip the promise of a notification from texts (no path that
    /// reaches the model is on).
    pub unpromised: bool,
}

/// Runs `call` on a thread of its own and sends its response, unless it is
/// cancelled first. Gives the call back if the thread could not start.
pub(crate) fn spawn(cx: &Shared, call: ToolCall) -> Result<(), Box<ToolCall>> {
    let cx2 = cx.clone();
    let slot = Arc::new(Mutex::new(Some(call)));
    let taken = slot.clone();
    let spawned = std::thread::Builder::new()
        .name("bashtools-mcp-call".into())
        .spawn(move || {
            if let Some(call) = taken.lock().take() {
                run_and_answer(&cx2, call);
            }
        });
    match spawned {
        Ok(_) => Ok(()),
        Err(_) => Err(Box::new(slot.lock().take().expect("the thread never ran"))),
    }
}

/// Runs `call` on this thread and sends its response (unless cancelled).
pub(crate) fn run_and_answer(cx: &Shared, call: ToolCall) {
    // Backpressure: no new work while the client leaves its answers unread
    // (`writer.rs`); the room is held until the answer is queued.
    let _room = cx.out.reserve(answer_bound(&call, cx.output_limit));
    let key = jsonrpc::id_key(&call.id);
    let heard = call.era != Era::Classic && call.caller.get_recipient() == super::inbox::HEARD;
    let seq = cx
        .inbox
        .begin(matches!(call.tool.as_str(), "bash" | "monitor"), heard);
    let mut result = run(cx, &key, seq, &call);
    if cx.unpromised {
        let (promise, instead) = super::backend::MONITOR_NOTIFIED;
        result.text = result
            .text
            .replace(super::backend::NOTIFIED, "")
            .replace(promise, instead);
    }
    // The task a `bash` or `monitor` answer announced, by its typed ID.
    let announced: Vec<String> =
        if result.is_error || !matches!(call.tool.as_str(), "bash" | "monitor") {
            Vec::new()
        } else {
            result.task_id.iter().cloned().collect()
        };
    // The task the shell a task-capable call started stands for.
    let task = match (&result.task_id, result.status, call.task) {
        (Some(shell), Some(TaskStatus::Running), mode)
            if !result.is_error && mode != TaskMode::None =>
        {
            let file = result
                .output_file
                .as_ref()
                .map(|f| f.display().to_string())
                .unwrap_or_default();
            Some((mode, cx.tasks.create(shell, &file)))
        }
        _ => None,
    };
    if cx.calls.answers(&key) {
        let mut respond = |carried: Vec<Notification>| {
            let body = match &task {
                // The task instead of the result; the notifications wait
                // for the next result.
                Some((TaskMode::Foreground, (_, created))) => protocol::as_task(created.clone()),
                Some((_, (id, _))) => {
                    let mut body = call_result(&result, &carried, call.era, call.structured);
                    body["structuredContent"]["taskId"] = json!(id);
                    body
                }
                None => call_result(&result, &carried, call.era, call.structured),
            };
            jsonrpc::result(&call.id, body)
        };
        // A request of the tasks extension learns of other tasks through
        // them, never in its text.
        let carries = !call.tasks_declared && !matches!(task, Some((TaskMode::Foreground, _)));
        cx.inbox.finish(seq, announced, Some(&mut respond), carries);
    } else {
        cx.inbox.finish(seq, announced, None, true);
    }
    cx.calls.done(&key);
}

/// Room for the notifications an answer carries and its envelope.
const ANSWER_SLACK: usize = 16 << 10;

/// The bytes `call`'s answer can take, as [`Writer::reserve`] counts them:
/// output of `output_limit` characters at two bytes each (text that is
/// not all ASCII, escapes), twice when `structuredContent` repeats it.
/// Calls that answer with a few lines (starting a background command,
/// stopping one) reserve only the slack.
fn answer_bound(call: &ToolCall, output_limit: usize) -> usize {
    let small = match call.tool.as_str() {
        "kill_shell" | "monitor" => true,
        "bash" => call.arguments.get("run_in_background") == Some(&Value::Bool(true)),
        _ => false,
    };
    if small {
        return ANSWER_SLACK;
    }
    let copies = if call.structured { 2 } else { 1 };
    output_limit
        .saturating_mul(2 * copies)
        .saturating_add(ANSWER_SLACK)
}

/// The caller `call` runs as, once the person was asked if the policy
/// asks: marked approved for its line, or as one that cannot be asked;
/// `Err` with the refusal's text when the person said no or did not answer.
fn approve(cx: &Shared, call: &ToolCall) -> Result<Caller, String> {
    let mut caller = call.caller.clone();
    let Some(line) = call.arguments.get("command").and_then(Value::as_str) else {
        return Ok(caller);
    };
    if call.asking == Asking::Approved {
        caller.approved = Some(line.to_string());
        return Ok(caller);
    }
    let Some(approval) = cx.backend.asks(line, &caller) else {
        return Ok(caller);
    };
    if call.asking == Asking::Cannot {
        caller.cannot_ask = Some(allow_hint(&approval));
        return Ok(caller);
    }
    let answer = cx
        .asks
        .ask(&cx.out, ask::question(&approval), cx.approval_timeout);
    approved(cx, caller, &approval, &answer)
}

/// What `--allow` would let a line that needs approval run.
fn allow_hint(approval: &crate::Approval) -> String {
    match approval.suggested_prefix.is_empty() {
        false => approval.suggested_prefix.join(" "),
        true => approval
            .parts
            .first()
            .map(|p| p.join(" "))
            .unwrap_or_default(),
    }
}

/// The caller of an approved line, or the denial's text.
fn approved(
    cx: &Shared,
    mut caller: Caller,
    approval: &crate::Approval,
    answer: &Answer,
) -> Result<Caller, String> {
    match answer {
        Answer::Once | Answer::Always => {
            if *answer == Answer::Always {
                cx.backend.allow_always(&caller, &approval.suggested_prefix);
            }
            caller.approved = Some(approval.line.clone());
            Ok(caller)
        }
        Answer::Denied => Err(crate::texts::declined(&approval.line, None)),
        Answer::TimedOut => {
            let why = format!("no answer within {}s", cx.approval_timeout.as_secs_f64());
            Err(crate::texts::declined(&approval.line, Some(&why)))
        }
    }
}

fn run(cx: &Shared, key: &str, seq: Seq, call: &ToolCall) -> ToolResult {
    let input = &call.arguments;
    let caller = match call.tool.as_str() {
        "bash" | "monitor" => match approve(cx, call) {
            Ok(caller) => caller,
            Err(denied) => return ToolResult::error(denied),
        },
        _ => call.caller.clone(),
    };
    match call.tool.as_str() {
        "bash" => {
            let (pending, shell) = cx.backend.bash(input, &caller);
            if let Some(shell) = &shell {
                if !cx.calls.foreground(key, shell.clone()) {
                    shell.cancel();
                }
            }
            let total = cx.backend.timeout_of("bash", input);
            let output = shell.as_ref().and_then(|s| s.output_file());
            wait_reporting(cx, seq, call, pending, total, || output.clone())
        }
        // A shell's end notification is queued before anyone woken by its
        // exit runs, so it travels in these calls' own results.
        "bash_output" => {
            let total = cx.backend.timeout_of("bash_output", input);
            bash_output(cx, seq, call, total)
        }
        "kill_shell" => cx.backend.kill_shell(input),
        "list_shells" => cx.backend.list_shells(input),
        "write_stdin" => cx.backend.write_stdin(input),
        _ => cx.backend.monitor(input, &caller),
    }
}

/// Waits for `pending`, sending progress meanwhile when the call asked.
fn wait_reporting(
    cx: &Shared,
    seq: Seq,
    call: &ToolCall,
    mut pending: Pending<ToolResult>,
    total: Duration,
    output: impl Fn() -> Option<PathBuf>,
) -> ToolResult {
    let Some(token) = &call.progress else {
        return pending.wait();
    };
    let mut progress = Progress::new(token.clone(), total);
    loop {
        if let Some(r) = pending.wait_timeout(cx.progress_every) {
            return r;
        }
        let mask = |line: String| cx.backend.mask(line);
        cx.inbox
            .send_for(seq, &progress.next(output().as_deref(), &mask));
    }
}

/// Stops a cancelled call's foreground command, off the reader's thread:
/// stopping waits up to `kill_grace` for the group to go.
pub(crate) fn stop_cancelled(shell: CommandHandle) {
    let spawned = std::thread::Builder::new()
        .name("bashtools-mcp-cancel".into())
        .spawn(move || shell.cancel());
    if let Err(e) = spawned {
        eprintln!("bashtools-mcp: cannot stop a cancelled command: {e}");
    }
}

/// Wakes a call thread waiting in the inbox when its `Pending` completes.
struct InboxWaker(Arc<Inbox>);

impl Wake for InboxWaker {
    fn wake(self: Arc<Self>) {
        self.0.poke();
    }
}

/// `bash_output`; with `block: true` on a running shell of ours, also
/// returns early at the next notification of the session (when results
/// carry notifications).
fn bash_output(cx: &Shared, seq: Seq, call: &ToolCall, total: Duration) -> ToolResult {
    let input = &call.arguments;
    let id = input.get("bash_id").and_then(Value::as_str);
    let blocks = input.get("block") == Some(&Value::Bool(true));
    let running = id.and_then(|id| cx.backend.running_output(id));
    let early = cx.inbox.promises() && blocks && running.is_some();
    let mut pending = cx.backend.bash_output(input);
    if !early {
        let id = id.map(str::to_string);
        let backend = cx.backend.clone();
        return wait_reporting(cx, seq, call, pending, total, move || {
            id.as_deref().and_then(|id| backend.running_output(id))
        });
    }
    let id = id.expect("checked above");
    let waker = Waker::from(Arc::new(InboxWaker(cx.inbox.clone())));
    let (seen, undelivered) = cx.inbox.released();
    let deadline = Instant::now() + total;
    let mut progress = call.progress.clone().map(|t| Progress::new(t, total));
    let mut next_tick = Instant::now() + cx.progress_every;
    let mut polled = false;
    loop {
        // Registers the waker, or takes the answer if it is there.
        if !polled || pending.is_ready() {
            polled = true;
            let mut context = Context::from_waker(&waker);
            let polled_now =
                std::future::Future::poll(std::pin::Pin::new(&mut pending), &mut context);
            if let std::task::Poll::Ready(r) = polled_now {
                return r;
            }
        }
        if undelivered > 0 || cx.inbox.released().0 > seen {
            break;
        }
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        let wake_at = match progress {
            Some(_) => deadline.min(next_tick),
            None => deadline,
        };
        if cx
            .inbox
            .wait_release_or(seen, wake_at, || pending.is_ready())
        {
            break;
        }
        if let Some(p) = &mut progress {
            if Instant::now() >= next_tick {
                next_tick += cx.progress_every;
                cx.inbox.send_for(
                    seq,
                    &p.next(cx.backend.running_output(id).as_deref(), &|l| {
                        cx.backend.mask(l)
                    }),
                );
            }
        }
    }
    // Another event came first (or the deadline): answer as a call
    // without `block` would now. The dropped `Pending` consumes nothing.
    drop(pending);
    let mut now = input.clone();
    now["block"] = json!(false);
    cx.backend.bash_output(&now).wait()
}

/// The MCP form of a tool result: tool failures are results with
/// `isError: true`, so the model reads them. Each notification not yet
/// delivered follows as one more text item, in order.
pub(crate) fn call_result(
    r: &ToolResult,
    carried: &[Notification],
    era: Era,
    structured: bool,
) -> Value {
    let mut content = vec![json!({"type": "text", "text": r.text})];
    content.extend(
        carried
            .iter()
            .map(|n| json!({"type": "text", "text": n.text})),
    );
    let mut result = json!({"content": content, "isError": r.is_error});
    if structured {
        result["structuredContent"] = super::tools::structured(r);
    }
    match era {
        Era::Classic => result,
        Era::Stateless { .. } => protocol::stateless(result),
    }
}

/// The MCP form of a task's result: a stateless result with its
/// structured content, as the foreground call would have answered.
pub(crate) fn task_result(r: &ToolResult) -> Value {
    call_result(r, &[], Era::Stateless { log: None }, true)
}
