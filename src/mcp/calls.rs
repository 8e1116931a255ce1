//! `tools/call` requests in flight: each runs on a thread of its own, so
//! the reader of stdin never waits for a command, and a ten-minute
//! foreground `bash` delays nothing else.
//!
//! The table knows every running call by its request id: to refuse a
//! second request with the same id, and to cancel one
//! (`notifications/cancelled`): a cancelled call sends no response, and
//! its foreground command, if it has one, is stopped with its whole group.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::{Condvar, Mutex};
use serde_json::{json, Value};

use super::jsonrpc;
use super::protocol::{self, Era};
use super::writer::Writer;
use crate::pending::CommandHandle;
use crate::{BashTools, Caller, ToolResult};

/// At most this many calls run at once; more are refused with an error
/// response. Each costs a thread, and a client past this is looping.
pub const MAX_CALLS_IN_FLIGHT: usize = 1024;

#[derive(Default)]
struct Call {
    /// `notifications/cancelled` came for it.
    cancelled: bool,
    /// Stops its foreground command while it runs.
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

    /// Removes call `key`; whether its response should be sent.
    fn finish(&self, key: &str) -> bool {
        let answered = self.calls.lock().remove(key).is_some_and(|c| !c.cancelled);
        self.ended.notify_all();
        answered
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
}

/// Runs `call` on a thread of its own and sends its response, unless it is
/// cancelled first. Returns `false` if the thread could not start (the
/// caller answers with an error).
pub(crate) fn spawn(
    tools: &BashTools,
    calls: &Arc<Calls>,
    out: &Arc<Writer>,
    call: ToolCall,
) -> bool {
    let (tools, calls, out) = (tools.clone(), calls.clone(), out.clone());
    let key = jsonrpc::id_key(&call.id);
    std::thread::Builder::new()
        .name("bashtools-mcp-call".into())
        .spawn(move || {
            let result = run(&tools, &calls, &key, &call);
            if calls.finish(&key) {
                out.send(&jsonrpc::result(&call.id, call_result(&result, call.era)));
            }
        })
        .is_ok()
}

fn run(tools: &BashTools, calls: &Calls, key: &str, call: &ToolCall) -> ToolResult {
    let input = &call.arguments;
    match call.tool.as_str() {
        "bash" => {
            let pending = tools.bash_f(input, &call.caller);
            if let Some(canceller) = pending.command() {
                if !calls.foreground(key, canceller.clone()) {
                    canceller.cancel();
                }
            }
            pending.wait()
        }
        "bash_output" => tools.bash_output(input),
        "kill_shell" => tools.kill_shell(input),
        _ => tools.monitor(input, &call.caller),
    }
}

/// Stops a cancelled call's foreground command, off the reader's thread:
/// stopping waits up to `kill_grace` for the group to go.
pub(crate) fn stop_cancelled(canceller: CommandHandle) {
    let spawned = std::thread::Builder::new()
        .name("bashtools-mcp-cancel".into())
        .spawn(move || canceller.cancel());
    if let Err(e) = spawned {
        eprintln!("bashtools-mcp: cannot stop a cancelled command: {e}");
    }
}

/// The MCP form of a tool result: tool failures are results with
/// `isError: true`, so the model reads them.
fn call_result(r: &ToolResult, era: Era) -> Value {
    let result = json!({
        "content": [{"type": "text", "text": r.text}],
        "isError": r.is_error,
    });
    match era {
        Era::Classic => result,
        Era::Stateless { .. } => protocol::stateless(result),
    }
}
