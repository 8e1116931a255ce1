//! `Tasks`: the registry of background work, and the notifications sent when
//! that work ends (contract §5 and §6).
//!
//! Background shells register here as `bash_N`, monitors as `monitor_N`, and
//! the application registers its own work (a subagent) with
//! [`Tasks::register`]. When an entry ends, exactly one notification goes to
//! the recipient of the call that started it, over a per-recipient channel
//! ([`Tasks::subscribe`]).

mod entries;
mod queue;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::Receiver;
use parking_lot::{Condvar, Mutex};

pub use entries::{NewTask, Notification, StopFn, TaskHandle, TaskInfo};
use queue::Queues;
pub use queue::DEFAULT_QUEUE_LIMIT;

pub(crate) use crate::status::TaskStatus;

/// Why [`Tasks::request_stop`] did not ask an entry to stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StopRefused {
    /// No entry has this ID or name.
    Unknown,
    /// The entry (its ID) has ended, with this status.
    NotRunning(String, TaskStatus),
    /// The entry's (ID) stop handler panicked.
    Panicked(String),
}

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
        notification: impl FnOnce(&TaskInfo, Option<&str>) -> (String, String),
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
            let (text, label) = notification(&entry.info, entry.call.as_deref());
            let n = Notification {
                recipient: entry.info.recipient.clone(),
                task_id: entry.info.id.clone(),
                text,
                label,
                status: Some(status),
            };
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
    /// text is made by its owner.
    pub(crate) fn finish_with(&self, id: &str, status: TaskStatus, text: String, label: String) {
        self.finish(id, status, None, None, |_, _| (text, label));
    }

    /// Asks a running entry to stop. `Ok((id, description))` when it was
    /// asked; else why not.
    pub(crate) fn request_stop(&self, id_or_name: &str) -> Result<(String, String), StopRefused> {
        let (id, stop, description) = {
            let mut state = self.shared.state.lock();
            let id = resolve(&state, id_or_name).ok_or(StopRefused::Unknown)?;
            let entry = state.entries.get_mut(&id).ok_or(StopRefused::Unknown)?;
            if entry.info.status != TaskStatus::Running {
                return Err(StopRefused::NotRunning(id, entry.info.status));
            }
            entry.stop_requested = true;
            (id, entry.stop.clone(), entry.info.description.clone())
        };
        if let Some(stop) = stop {
            // The application's code: a panic in it is its bug, not a reason
            // to take the caller down.
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| stop())).is_ok();
            if !ok {
                return Err(StopRefused::Panicked(id));
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

    /// Blocks until entry `id` ends or `deadline` passes (`None`: no deadline).
    pub(crate) fn wait_end(&self, id: &str, deadline: Option<Instant>) {
        let mut state = self.shared.state.lock();
        while state
            .entries
            .get(id)
            .is_some_and(|e| e.info.status == TaskStatus::Running)
        {
            match deadline {
                Some(d) => {
                    if self.shared.ended.wait_until(&mut state, d).timed_out() {
                        return;
                    }
                }
                None => self.shared.ended.wait(&mut state),
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
