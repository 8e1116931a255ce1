//! `Tasks`: the registry of background work, and the notifications sent when
//! that work ends (SPEC sections 5 and 6).
//!
//! Background shells register here as `bash_N`, monitors as `monitor_N`, and
//! the application registers its own work (a subagent) with
//! [`Tasks::register`]. When an entry ends, exactly one notification goes to
//! the recipient of the call that started it, over a per-recipient channel
//! ([`Tasks::subscribe`]).

mod queue;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::Receiver;
use parking_lot::{Condvar, Mutex};

use queue::Queues;
pub use queue::DEFAULT_QUEUE_LIMIT;

use crate::texts;

/// One `<task-notification>` for one recipient.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    /// Who it is for (the recipient of the call that started the work).
    pub recipient: String,
    /// The entry it is about (`bash_3`, `monitor_1`, `agent_2`).
    pub task_id: String,
    /// The whole `<task-notification>…</task-notification>` text, for the model.
    pub text: String,
    /// The one line a surface shows for it (the summary).
    pub label: String,
    /// `completed`, `failed` or `killed` for an end; `None` for a monitor event.
    pub status: Option<String>,
}

/// Where an entry is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskStatus {
    /// Still at work.
    Running,
    /// Ended well (exit 0, or a report).
    Completed,
    /// Ended badly (another exit code, or an error).
    Failed,
    /// Stopped on request.
    Killed,
}

impl TaskStatus {
    /// `running`, `completed`, `failed` or `killed`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Running => "running",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Killed => "killed",
        }
    }

    pub(crate) fn from_str(s: &str) -> TaskStatus {
        match s {
            "completed" => TaskStatus::Completed,
            "failed" => TaskStatus::Failed,
            "killed" => TaskStatus::Killed,
            _ => TaskStatus::Running,
        }
    }
}

/// What the registry knows of one entry (a snapshot).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskInfo {
    /// `KIND_N`, unique in the registry.
    pub id: String,
    /// `bash`, `monitor`, or the application's own kind (`agent`).
    pub kind: String,
    /// The name given at spawn, by which the entry can be found too.
    pub name: Option<String>,
    /// What it does, in a few words.
    pub description: String,
    /// Where it is in its life.
    pub status: TaskStatus,
    /// The report of an entry that completed.
    pub report: Option<String>,
    /// The error of an entry that failed.
    pub error: Option<String>,
    /// Who is notified when it ends.
    pub recipient: String,
}

/// An application entry to register: see [`Tasks::register`].
#[derive(Debug, Clone)]
pub struct NewTask {
    kind: String,
    description: String,
    name: Option<String>,
    recipient: String,
    call: Option<String>,
}

impl NewTask {
    /// An entry of `kind` (its IDs are `KIND_N`) doing `description`.
    pub fn new(kind: impl Into<String>, description: impl Into<String>) -> NewTask {
        NewTask {
            kind: kind.into(),
            description: description.into(),
            name: None,
            recipient: "main".into(),
            call: None,
        }
    }

    /// A name the entry can be found by, besides its ID.
    pub fn name(mut self, name: impl Into<String>) -> NewTask {
        self.name = Some(name.into());
        self
    }

    /// Who is notified when it ends (default `main`).
    pub fn recipient(mut self, recipient: impl Into<String>) -> NewTask {
        self.recipient = recipient.into();
        self
    }

    /// The tool-use id of the call that started it.
    pub fn call(mut self, call: impl Into<String>) -> NewTask {
        self.call = Some(call.into());
        self
    }
}

/// Asked to stop an entry (`kill_shell`). Must not block for long: it asks,
/// and the entry reports its end later through its [`TaskHandle`].
pub type StopFn = dyn Fn() + Send + Sync + 'static;

/// Run once when an entry ends, or found stale and dropped.
pub(crate) trait EndWaiter: Send {
    fn is_stale(&self) -> bool;
    fn ended(self: Box<Self>);
}

struct Entry {
    info: TaskInfo,
    call: Option<String>,
    stop: Option<Arc<StopFn>>,
    stop_requested: bool,
    waiters: Vec<Box<dyn EndWaiter>>,
}

struct State {
    entries: HashMap<String, Entry>,
    /// Spawn name → ID.
    names: HashMap<String, String>,
    /// The last N given out per kind.
    counters: HashMap<String, u64>,
    queues: Queues,
}

struct Shared {
    state: Mutex<State>,
    ended: Condvar,
}

/// The registry of background work. `Clone + Send + Sync`: every clone is
/// the same registry, and [`BashTools`](crate::BashTools) values that share
/// it share its IDs.
///
/// ```
/// use bashtools::{NewTask, Tasks};
/// let tasks = Tasks::new();
/// let rx = tasks.subscribe("main");
/// let agent = tasks.register(NewTask::new("agent", "review the diff"), || {});
/// agent.complete("looks good");
/// let n = rx.recv().unwrap();
/// assert_eq!(n.task_id, "agent_1");
/// assert_eq!(n.label, "Agent \"review the diff\" completed");
/// ```
#[derive(Clone)]
pub struct Tasks {
    shared: Arc<Shared>,
}

impl Default for Tasks {
    fn default() -> Self {
        Tasks::new()
    }
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.shared.state.lock().entries.len();
        f.debug_struct("Tasks").field("entries", &n).finish()
    }
}

impl Tasks {
    /// An empty registry; each recipient's queue holds up to
    /// [`DEFAULT_QUEUE_LIMIT`] unread notifications.
    pub fn new() -> Tasks {
        Tasks::with_queue_limit(DEFAULT_QUEUE_LIMIT)
    }

    /// An empty registry whose per-recipient queues hold at most `limit`
    /// unread notifications; past that the oldest is dropped (and counted,
    /// see [`dropped`](Self::dropped)).
    pub fn with_queue_limit(limit: usize) -> Tasks {
        Tasks {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    entries: HashMap::new(),
                    names: HashMap::new(),
                    counters: HashMap::new(),
                    queues: Queues::new(limit),
                }),
                ended: Condvar::new(),
            }),
        }
    }

    /// The notifications for `recipient`, including those sent before this
    /// call. Every call returns the same channel: two receivers of one
    /// recipient share its notifications, each going to one of them.
    pub fn subscribe(&self, recipient: &str) -> Receiver<Notification> {
        self.shared.state.lock().queues.subscribe(recipient)
    }

    /// How many notifications for `recipient` were dropped because nobody
    /// read its queue and it was full.
    pub fn dropped(&self, recipient: &str) -> u64 {
        self.shared.state.lock().queues.dropped(recipient)
    }

    /// Registers the application's own work (a subagent) as `KIND_N`. `stop`
    /// is called when `kill_shell` asks it to stop; the work then reports its
    /// end through the returned handle. An entry whose handle never reports
    /// stays `running`.
    pub fn register<F>(&self, task: NewTask, stop: F) -> TaskHandle
    where
        F: Fn() + Send + Sync + 'static,
    {
        let id = self.next_id(&task.kind);
        self.insert(
            TaskInfo {
                id: id.clone(),
                kind: task.kind,
                name: task.name,
                description: task.description,
                status: TaskStatus::Running,
                report: None,
                error: None,
                recipient: task.recipient,
            },
            task.call,
            Some(Arc::new(stop)),
        );
        TaskHandle {
            tasks: self.clone(),
            id,
        }
    }

    /// The entry with this ID, or this spawn name.
    pub fn get(&self, id_or_name: &str) -> Option<TaskInfo> {
        let state = self.shared.state.lock();
        let id = resolve(&state, id_or_name)?;
        state.entries.get(&id).map(|e| e.info.clone())
    }

    /// Every entry, in no particular order.
    pub fn list(&self) -> Vec<TaskInfo> {
        let state = self.shared.state.lock();
        state.entries.values().map(|e| e.info.clone()).collect()
    }

    /// The next `KIND_N`, unique in this registry.
    pub(crate) fn next_id(&self, kind: &str) -> String {
        let mut state = self.shared.state.lock();
        let n = state.counters.entry(kind.to_string()).or_insert(0);
        *n += 1;
        format!("{kind}_{n}")
    }

    /// Adds an entry whose ID came from [`next_id`](Self::next_id).
    pub(crate) fn insert(&self, info: TaskInfo, call: Option<String>, stop: Option<Arc<StopFn>>) {
        let mut state = self.shared.state.lock();
        if let Some(name) = &info.name {
            state.names.insert(name.clone(), info.id.clone());
        }
        state.entries.insert(
            info.id.clone(),
            Entry {
                info,
                call,
                stop,
                stop_requested: false,
                waiters: Vec::new(),
            },
        );
    }

    /// Forgets an entry whose work never started.
    pub(crate) fn remove(&self, id: &str) {
        let mut state = self.shared.state.lock();
        if let Some(e) = state.entries.remove(id) {
            if let Some(name) = e.info.name {
                state.names.remove(&name);
            }
        }
    }

    /// Sends a notification that is not an end (a monitor's events).
    pub(crate) fn notify(&self, n: Notification) {
        self.shared.state.lock().queues.send(n);
    }

    /// Records the end of entry `id` and sends its notification — once: an
    /// entry that has ended already is left as it is, and nothing is sent.
    /// Returns whether this call ended it.
    pub(crate) fn finish(
        &self,
        id: &str,
        status: TaskStatus,
        report: Option<String>,
        error: Option<String>,
        notification: impl FnOnce(&TaskInfo, Option<&str>) -> Notification,
    ) -> bool {
        let waiters = {
            let mut state = self.shared.state.lock();
            let Some(entry) = state.entries.get_mut(id) else {
                return false;
            };
            if entry.info.status != TaskStatus::Running {
                return false;
            }
            entry.info.status = status;
            entry.info.report = report;
            entry.info.error = error;
            let n = notification(&entry.info, entry.call.as_deref());
            let waiters = std::mem::take(&mut entry.waiters);
            state.queues.send(n);
            waiters
        };
        self.shared.ended.notify_all();
        for w in waiters {
            if !w.is_stale() {
                w.ended();
            }
        }
        true
    }

    /// [`finish`](Self::finish) of a shell or a monitor, whose notification
    /// text is made by its owner: `status` is `completed`, `failed` or `killed`.
    pub(crate) fn finish_with(&self, id: &str, status: &str, text: String, label: String) {
        self.finish(id, TaskStatus::from_str(status), None, None, |info, _| {
            Notification {
                recipient: info.recipient.clone(),
                task_id: info.id.clone(),
                text,
                label,
                status: Some(status.to_string()),
            }
        });
    }

    /// Asks a running entry to stop. `Ok(description)` when it was asked;
    /// `Err(text)` when it is unknown, not running, or its stop panicked.
    pub(crate) fn request_stop(&self, id_or_name: &str) -> Result<(String, String), String> {
        let (id, stop, description) = {
            let mut state = self.shared.state.lock();
            let id = resolve(&state, id_or_name).ok_or_else(|| texts::no_task(id_or_name))?;
            let entry = state
                .entries
                .get_mut(&id)
                .ok_or_else(|| texts::no_task(id_or_name))?;
            if entry.info.status != TaskStatus::Running {
                return Err(texts::not_running(&id, entry.info.status.as_str()));
            }
            entry.stop_requested = true;
            (id, entry.stop.clone(), entry.info.description.clone())
        };
        if let Some(stop) = stop {
            // The application's code: a panic in it is its bug, not a reason
            // to take the caller down.
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| stop())).is_ok();
            if !ok {
                return Err(texts::stop_panicked(&id));
            }
        }
        Ok((id, description))
    }

    /// Whether `kill_shell` asked entry `id` to stop.
    pub(crate) fn stop_requested(&self, id: &str) -> bool {
        let state = self.shared.state.lock();
        state.entries.get(id).is_some_and(|e| e.stop_requested)
    }

    /// Runs `waiter` when entry `id` ends (now, if it has ended or is unknown).
    pub(crate) fn on_end(&self, id: &str, waiter: Box<dyn EndWaiter>) {
        let mut state = self.shared.state.lock();
        match state.entries.get_mut(id) {
            Some(e) if e.info.status == TaskStatus::Running => {
                e.waiters.retain(|w| !w.is_stale());
                e.waiters.push(waiter);
            }
            _ => {
                drop(state);
                waiter.ended();
            }
        }
    }

    /// Blocks until entry `id` ends or `deadline` passes.
    pub(crate) fn wait_end(&self, id: &str, deadline: Instant) {
        let mut state = self.shared.state.lock();
        while state
            .entries
            .get(id)
            .is_some_and(|e| e.info.status == TaskStatus::Running)
        {
            if self
                .shared
                .ended
                .wait_until(&mut state, deadline)
                .timed_out()
            {
                return;
            }
        }
    }

    /// The ID for an ID or a spawn name.
    pub(crate) fn resolve(&self, id_or_name: &str) -> Option<String> {
        resolve(&self.shared.state.lock(), id_or_name)
    }
}

fn resolve(state: &State, id_or_name: &str) -> Option<String> {
    if state.entries.contains_key(id_or_name) {
        return Some(id_or_name.to_string());
    }
    state.names.get(id_or_name).cloned()
}

/// The application's end of an entry it registered: reports how the work
/// ended. The first report wins; later ones are ignored.
#[derive(Clone, Debug)]
pub struct TaskHandle {
    tasks: Tasks,
    id: String,
}

impl TaskHandle {
    /// The entry's ID (`agent_1`).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The work completed with this report.
    pub fn complete(&self, report: impl Into<String>) {
        self.end(TaskStatus::Completed, Some(report.into()), None);
    }

    /// The work failed with this error.
    pub fn fail(&self, error: impl Into<String>) {
        self.end(TaskStatus::Failed, None, Some(error.into()));
    }

    /// The work stopped (after [`stop_requested`](Self::stop_requested), or on its own).
    pub fn stopped(&self) {
        self.end(TaskStatus::Killed, None, None);
    }

    /// Whether `kill_shell` has asked the work to stop.
    pub fn stop_requested(&self) -> bool {
        self.tasks.stop_requested(&self.id)
    }

    fn end(&self, status: TaskStatus, report: Option<String>, error: Option<String>) {
        self.tasks
            .finish(&self.id, status, report, error, texts::task_notification);
    }
}
