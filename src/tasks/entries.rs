//! What the registry hands out: the notifications, snapshots of its
//! entries, a new entry to register, and the application's handle on one.

use super::Tasks;
use crate::status::TaskStatus;
use crate::texts;

/// One `<task-notification>` for one recipient.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Notification {
    /// Who it is for (the recipient of the call that started the work).
    pub recipient: String,
    /// The entry it is about (`bash_3`, `monitor_1`, `agent_2`).
    pub task_id: String,
    /// The whole `<task-notification>…</task-notification>` text, for the model.
    pub text: String,
    /// The one line a surface shows for it (the summary).
    pub label: String,
    /// `Completed`, `Failed` or `Killed` for an end; `None` for a monitor event.
    pub status: Option<TaskStatus>,
}

/// What the registry knows of one entry (a snapshot).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
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
    pub(super) kind: String,
    pub(super) description: String,
    pub(super) name: Option<String>,
    pub(super) recipient: String,
    pub(super) call: Option<String>,
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
/// The application's end of an entry it registered: reports how the work
/// ended. The first report wins; later ones are ignored.
#[derive(Clone, Debug)]
pub struct TaskHandle {
    pub(super) tasks: Tasks,
    pub(super) id: String,
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
            .finish(&self.id, status, report, error, |info, call| {
                texts::task_notification(&texts::TaskEnd {
                    id: &info.id,
                    kind: &info.kind,
                    description: &info.description,
                    call,
                    status: info.status,
                    report: info.report.as_deref(),
                    error: info.error.as_deref(),
                })
            });
    }
}
