//! The tasks extension of MCP 2026-07-28 (`io.modelcontextprotocol/tasks`,
//! SEP-2663): a `bash` call from a request that declares the extension and
//! is still running after its first second answers with a task instead of
//! a result, and a `run_in_background` call names one.
//!
//! **A task is a shell.** When a task-capable call's command is still
//! running at `task_after`, it moves to the background (it becomes
//! `bash_N`, as at any timeout), and the task stands for that shell: its
//! id maps to `bash_N` one to one, so `bash_output` and `kill_shell` take
//! either. The task is `working` while the shell runs and `completed` once
//! it has ended, its result then the very result a foreground call would
//! have given had it waited for the end (`BashTools::bash_result`: the
//! whole output, `Exit code N`); the call's own `timeout` no longer moves
//! anything, the command is in the background already. `tasks/cancel`
//! stops the shell's whole tree (as `kill_shell`) and ends the task
//! `cancelled`.
//!
//! Task ids are 128 random bits (`task_` and 32 hex digits): unguessable,
//! unlike `bash_N`. A task lives as long as the server (`ttlMs: null`).
//! Each change of status goes to every `subscriptions/listen` stream that
//! asked for the task, as `notifications/tasks` carrying what `tasks/get`
//! would return. Classic sessions, and requests without the extension,
//! never see a task.

use std::collections::HashMap;
use std::future::Future;
use std::io::Read;
use std::sync::Arc;
use std::task::{Context, Wake, Waker};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crossbeam_channel::{Receiver, Sender};
use parking_lot::Mutex;
use serde_json::{json, Map, Value};

use super::backend::Backend;
use super::jsonrpc::{self, RpcError, INVALID_PARAMS};
use super::writer::Writer;
use crate::{CallError, Pending, ShellId, ShellInfo, ToolResult};

/// The extension's identifier.
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// `MissingRequiredClientCapability` (2026-07-28).
pub(crate) const MISSING_CAPABILITY: i64 = -32021;

/// How often a client is asked to poll `tasks/get`.
const POLL_INTERVAL_MS: u64 = 1000;

/// The `_meta` key of a subscription's messages.
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Whether a request's `_meta` declares the extension among its client
/// capabilities.
pub(crate) fn declared(params: &Map<String, Value>) -> bool {
    params
        .get("_meta")
        .and_then(|m| m.get("io.modelcontextprotocol/clientCapabilities"))
        .and_then(|c| c.get("extensions"))
        .and_then(|e| e.get(EXTENSION))
        .is_some()
}

/// The error for a tasks request from a client that did not declare the
/// extension.
pub(crate) fn missing_capability() -> RpcError {
    RpcError::new(
        MISSING_CAPABILITY,
        format!("Missing required client capability: the {EXTENSION} extension"),
    )
    .with_data(json!({"requiredCapabilities": {"extensions": {EXTENSION: {}}}}))
}

fn not_found() -> RpcError {
    RpcError::new(INVALID_PARAMS, "Failed to retrieve task: Task not found")
}

enum End {
    /// The shell ended: the result a foreground call would have given, in
    /// its MCP form.
    Completed(Value),
    /// `tasks/cancel` stopped it.
    Cancelled,
}

struct Entry {
    shell: String,
    output_file: String,
    created: SystemTime,
    updated: SystemTime,
    end: Option<End>,
    /// `tasks/cancel` is stopping it: its end is the cancellation's.
    cancelling: bool,
    /// The shell's end, waited for without a thread (its waker tells the
    /// board's thread).
    _watch: Pending<Result<ShellInfo, CallError>>,
}

/// A `subscriptions/listen` stream that asked for tasks.
struct Listen {
    id: Value,
    tasks: Vec<String>,
}

#[derive(Default)]
struct Inner {
    tasks: HashMap<String, Entry>,
    by_shell: HashMap<String, String>,
    listens: Vec<Listen>,
}

/// The tasks of one session.
pub(crate) struct Board {
    inner: Mutex<Inner>,
    backend: Backend,
    out: Arc<Writer>,
    /// Shells that ended, for the board's thread.
    ended: Sender<String>,
    /// Turns a call's result into its MCP form.
    render: fn(&ToolResult) -> Value,
}

impl Board {
    /// A board whose thread refreshes a task as soon as its shell ends;
    /// `render` makes the MCP result of a tool result.
    pub(crate) fn start(
        backend: Backend,
        out: Arc<Writer>,
        render: fn(&ToolResult) -> Value,
    ) -> std::io::Result<Arc<Board>> {
        let (tx, rx) = crossbeam_channel::unbounded();
        let board = Arc::new(Board {
            inner: Mutex::new(Inner::default()),
            backend,
            out,
            ended: tx,
            render,
        });
        let weak = Arc::downgrade(&board);
        std::thread::Builder::new()
            .name("bashtools-mcp-tasks".into())
            .spawn(move || watch(&weak, &rx))?;
        Ok(board)
    }

    /// A new task for background shell `shell` (with its output file).
    /// Its `CreateTaskResult`, once `tasks/get` can find it.
    pub(crate) fn create(&self, shell: &str, output_file: &str) -> (String, Value) {
        let id = new_id();
        let mut watch = self.backend.wait_f(&ShellId::from(shell), Duration::MAX);
        let waker = Waker::from(Arc::new(Ended {
            shell: shell.to_string(),
            tx: self.ended.clone(),
        }));
        // Registers the waker (or finds the shell ended already).
        if std::pin::Pin::new(&mut watch)
            .poll(&mut Context::from_waker(&waker))
            .is_ready()
        {
            let _ = self.ended.send(shell.to_string());
        }
        let now = SystemTime::now();
        let mut inner = self.inner.lock();
        inner.by_shell.insert(shell.to_string(), id.clone());
        inner.tasks.insert(
            id.clone(),
            Entry {
                shell: shell.to_string(),
                output_file: output_file.to_string(),
                created: now,
                updated: now,
                end: None,
                cancelling: false,
                _watch: watch,
            },
        );
        let mut created = detail(&id, &inner.tasks[&id]);
        created["resultType"] = json!("task");
        (id, created)
    }

    /// The shell task `id` stands for.
    pub(crate) fn shell_of(&self, id: &str) -> Option<String> {
        self.inner.lock().tasks.get(id).map(|e| e.shell.clone())
    }

    /// `tasks/get`: the task as it is now.
    pub(crate) fn get(&self, id: &str) -> Result<Value, RpcError> {
        let shell = self.shell_of(id).ok_or_else(not_found)?;
        self.refresh(&shell);
        let inner = self.inner.lock();
        let entry = inner.tasks.get(id).ok_or_else(not_found)?;
        let mut d = detail(id, entry);
        d["resultType"] = json!("complete");
        Ok(d)
    }

    /// `tasks/cancel`: stops the shell's tree (waiting until it is gone)
    /// and ends the task `cancelled`; an ended task is left as it is.
    pub(crate) fn cancel(&self, id: &str) -> Result<Value, RpcError> {
        let shell = self.shell_of(id).ok_or_else(not_found)?;
        self.refresh(&shell);
        let stop = match self.inner.lock().tasks.get_mut(id) {
            Some(e) if e.end.is_none() && !e.cancelling => {
                e.cancelling = true;
                true
            }
            _ => false,
        };
        if stop {
            self.backend.kill_shell(&json!({"shell_id": shell}));
            let mut inner = self.inner.lock();
            if let Some(e) = inner.tasks.get_mut(id) {
                if e.end.is_none() {
                    e.end = Some(End::Cancelled);
                    e.updated = SystemTime::now();
                }
            }
            drop(inner);
            self.announce(id);
        }
        Ok(json!({"resultType": "complete"}))
    }

    /// `tasks/update`: there is never input to give (no task asks for
    /// any); an empty acknowledgement for a known task.
    pub(crate) fn update(&self, id: &str) -> Result<Value, RpcError> {
        self.shell_of(id).ok_or_else(not_found)?;
        Ok(json!({"resultType": "complete"}))
    }

    /// A `subscriptions/listen` for `tasks` (those that exist): the
    /// acknowledgement to send; the stream stays open until the client
    /// cancels it or the session ends.
    pub(crate) fn listen(&self, id: &Value, tasks: Vec<String>) -> Value {
        let mut inner = self.inner.lock();
        let known: Vec<String> = tasks
            .into_iter()
            .filter(|t| inner.tasks.contains_key(t))
            .collect();
        inner.listens.push(Listen {
            id: id.clone(),
            tasks: known.clone(),
        });
        jsonrpc::notification(
            "notifications/subscriptions/acknowledged",
            json!({"notifications": {"taskIds": known}, "_meta": {SUBSCRIPTION_ID: id}}),
        )
    }

    /// The client cancelled request `key`: if it was a listen, its stream
    /// ends (no response is due).
    pub(crate) fn unlisten(&self, key: &str) {
        self.inner
            .lock()
            .listens
            .retain(|l| jsonrpc::id_key(&l.id) != key);
    }

    /// The session ends: each open stream is answered.
    pub(crate) fn close(&self) {
        let listens = std::mem::take(&mut self.inner.lock().listens);
        for l in listens {
            let done = json!({"resultType": "complete", "_meta": {SUBSCRIPTION_ID: l.id}});
            self.out.send(&jsonrpc::result(&l.id, done));
        }
    }

    /// Reads the end of task shell `shell` if it has ended; true when the
    /// task changed.
    fn refresh(&self, shell: &str) -> bool {
        let id = match self.inner.lock().by_shell.get(shell) {
            Some(id) => id.clone(),
            None => return false,
        };
        if self
            .inner
            .lock()
            .tasks
            .get(&id)
            .map_or(true, |e| e.end.is_some() || e.cancelling)
        {
            return false;
        }
        // Outside the lock: reading a large output takes a while.
        let Some(result) = self.backend.bash_result(shell) else {
            return false;
        };
        let rendered = (self.render)(&result);
        let mut inner = self.inner.lock();
        match inner.tasks.get_mut(&id) {
            Some(e) if e.end.is_none() && !e.cancelling => {
                e.end = Some(End::Completed(rendered));
                e.updated = SystemTime::now();
                true
            }
            _ => false,
        }
    }

    /// Sends task `id` as it is now to every stream that asked for it.
    fn announce(&self, id: &str) {
        let inner = self.inner.lock();
        let Some(entry) = inner.tasks.get(id) else {
            return;
        };
        for l in inner
            .listens
            .iter()
            .filter(|l| l.tasks.iter().any(|t| t == id))
        {
            let mut params = detail(id, entry);
            params["_meta"] = json!({SUBSCRIPTION_ID: l.id});
            self.out
                .send(&jsonrpc::notification("notifications/tasks", params));
        }
    }
}

/// The board's thread: refreshes each task whose shell ended, and tells
/// the streams that asked for it.
fn watch(board: &std::sync::Weak<Board>, rx: &Receiver<String>) {
    for shell in rx {
        let Some(board) = board.upgrade() else {
            return;
        };
        if board.refresh(&shell) {
            let id = board.inner.lock().by_shell.get(&shell).cloned();
            if let Some(id) = id {
                board.announce(&id);
            }
        }
    }
}

/// Wakes the board's thread with the shell that ended.
struct Ended {
    shell: String,
    tx: Sender<String>,
}

impl Wake for Ended {
    fn wake(self: Arc<Self>) {
        let _ = self.tx.send(self.shell.clone());
    }
}

/// A task as `tasks/get` and `notifications/tasks` show it.
fn detail(id: &str, e: &Entry) -> Value {
    let (status, message) = match &e.end {
        None => (
            "working",
            format!(
                "Running as {} (output in {}); bash_output and kill_shell take either ID",
                e.shell, e.output_file
            ),
        ),
        Some(End::Completed(_)) => ("completed", format!("{} has ended", e.shell)),
        Some(End::Cancelled) => ("cancelled", format!("{} was stopped", e.shell)),
    };
    let mut d = json!({
        "taskId": id,
        "status": status,
        "statusMessage": message,
        "createdAt": iso8601(e.created),
        "lastUpdatedAt": iso8601(e.updated),
        "ttlMs": null,
        "pollIntervalMs": POLL_INTERVAL_MS,
    });
    if let Some(End::Completed(result)) = &e.end {
        d["result"] = result.clone();
    }
    d
}

/// `task_` and 128 random bits in hex.
fn new_id() -> String {
    let mut bytes = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        // No /dev/urandom: the clock and the address of a fresh allocation
        // (still not a counter a client could guess).
        let t = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let a = Box::new(0u8);
        let mixed = t ^ ((&*a as *const u8 as u128) << 64);
        bytes = mixed.to_le_bytes();
    }
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("task_{hex}")
}

/// `t` as ISO 8601 in UTC, to the millisecond: `2026-12-03T11:30:00.123Z`.
pub(crate) fn iso8601(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a civil date (H. Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_iso_8601_in_utc() {
        let at = |s: u64, ms: u64| iso8601(UNIX_EPOCH + Duration::from_millis(s * 1000 + ms));
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(at(1_796_304_600, 123), "2026-12-03T13:30:00.123Z");
    }

    #[test]
    fn ids_are_unguessable() {
        let (a, b) = (new_id(), new_id());
        assert_ne!(a, b);
        assert_eq!(a.len(), "task_".len() + 32);
        assert!(a["task_".len()..].chars().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn only_a_request_that_declares_the_extension_gets_tasks() {
        let with = json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION: {}}}}});
        let without = json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}});
        assert!(declared(with.as_object().unwrap()));
        assert!(!declared(without.as_object().unwrap()));
        assert_eq!(missing_capability().code, -32021);
    }
}
