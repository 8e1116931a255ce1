//! One shell's record: what was started, where it is in its life, and who
//! is told when it ends.
//!
//! A shell's life is an enum, never a sentinel pid plus flags, and its
//! status (`running`, `completed`, `failed`, `killed`) is worked out here
//! and nowhere else.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::limits::Usage;
use crate::os::reaper::Exit;
use crate::status::TaskStatus;

/// The table's own number for a shell; never reused.
pub(crate) use crate::os::process::Key;

/// Where a shell is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Life {
    /// Recorded, and being started by the thread that recorded it.
    Spawning,
    /// Started; its leader (pid = process group id) is not reaped yet.
    Running { pid: u32 },
    /// Its leader has been reaped.
    Exited { pid: u32, exit: Exit },
}

/// What kind of work a shell is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A `bash` call that waits for it.
    Foreground,
    /// A `bash_N`: started with `run_in_background`, or moved there at its
    /// timeout. Its end is notified.
    Background,
    /// A `monitor_N`: its reader thread, not its exit, sends its end notice.
    Monitor,
}

/// Why we stopped a shell (it then reports `killed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopReason {
    /// `kill_shell`, or a cancelled call.
    Killed,
    /// `stop_all` or drop.
    StopAll,
    /// Its output file passed `max_output_bytes`.
    OutputCap,
    /// A monitor reached its timeout.
    MonitorTimeout,
    /// A monitor suppressed lines in every window for `flood_timeout`.
    Flood,
}

/// Something to run once a shell has exited (a `Pending` to complete).
pub(crate) trait ExitWaiter: Send {
    /// True when nobody waits any more (the `Pending` completed another way
    /// or was dropped): the waiter is pruned without being run.
    fn is_stale(&self) -> bool;
    /// The shell has exited.
    fn exited(self: Box<Self>);
}

/// What a new shell is: given to [`Supervisor::start`](super::Supervisor::start).
pub(crate) struct NewShell {
    pub command: String,
    pub description: Option<String>,
    /// `Some(bash_N)` (or `monitor_N`) for work that starts in the background.
    pub id: Option<String>,
    pub kind: Kind,
    pub recipient: String,
    pub call: Option<String>,
    pub detached: bool,
    /// Limits in place of the owner's.
    pub limits: Option<crate::limits::Limits>,
    /// The caller's carried environment: set, or unset for `None`.
    pub carried: Vec<(std::ffi::OsString, Option<std::ffi::OsString>)>,
}

/// One command: a foreground call in progress, or a background shell.
pub(crate) struct Shell {
    pub(super) id: Option<String>,
    pub(super) command: String,
    pub(super) description: Option<String>,
    pub(super) kind: Kind,
    pub(super) life: Life,
    /// Set when we asked it to stop, before it exited.
    pub(super) stop: Option<StopReason>,
    pub(super) output: PathBuf,
    /// Bytes of the output file already shown by `bash_output`.
    pub(super) cursor: u64,
    pub(super) recipient: String,
    pub(super) call: Option<String>,
    pub(super) detached: bool,
    /// Serialises reads of the output, so two `bash_output` calls at once
    /// never show the same bytes twice or skip any.
    pub(super) read_lock: Arc<Mutex<()>>,
    pub(super) waiters: Vec<Box<dyn ExitWaiter>>,
    /// Whether it runs on a pseudo-terminal of its own (`write_stdin`
    /// types into it).
    pub(super) interactive: bool,
    /// Its output file's registration with the output cap.
    pub(super) watch: crate::os::files::output_cap::Watch,
    /// When it was recorded, and when its leader was reaped.
    pub(super) started: Instant,
    pub(super) ended_at: Option<Instant>,
    /// What it cost and which limit it hit, once its leader has ended.
    pub(super) cost: Usage,
}

impl Shell {
    pub(super) fn new(new: NewShell, output: PathBuf) -> Shell {
        Shell {
            id: new.id,
            command: new.command,
            description: new.description,
            kind: new.kind,
            life: Life::Spawning,
            stop: None,
            output,
            cursor: 0,
            recipient: new.recipient,
            call: new.call,
            detached: new.detached,
            read_lock: Arc::new(Mutex::new(())),
            waiters: Vec::new(),
            interactive: false,
            watch: None,
            started: Instant::now(),
            ended_at: None,
            cost: Usage::default(),
        }
    }

    /// What it cost and the limits it ran into, once ended: the cgroup's
    /// figures with the wall time.
    pub(crate) fn usage(&self) -> Option<Usage> {
        self.ended_at.map(|_| Usage {
            wall: self.elapsed(),
            ..self.cost
        })
    }

    /// How long it has run so far, or in all once ended.
    pub(crate) fn elapsed(&self) -> Duration {
        self.ended_at
            .unwrap_or_else(Instant::now)
            .saturating_duration_since(self.started)
    }

    pub(crate) fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }
    pub(crate) fn command(&self) -> &str {
        &self.command
    }
    pub(crate) fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }
    /// The description, or the command when there is none.
    pub(crate) fn what(&self) -> &str {
        self.description.as_deref().unwrap_or(&self.command)
    }
    pub(crate) fn kind(&self) -> Kind {
        self.kind
    }
    pub(crate) fn output(&self) -> &Path {
        &self.output
    }
    pub(crate) fn cursor(&self) -> u64 {
        self.cursor
    }
    pub(crate) fn recipient(&self) -> &str {
        &self.recipient
    }
    pub(crate) fn call(&self) -> Option<&str> {
        self.call.as_deref()
    }
    pub(crate) fn stop_reason(&self) -> Option<StopReason> {
        self.stop
    }
    pub(crate) fn is_interactive(&self) -> bool {
        self.interactive
    }
    pub(crate) fn read_lock(&self) -> Arc<Mutex<()>> {
        self.read_lock.clone()
    }

    /// The leader's pid once it has been started.
    pub(crate) fn pid(&self) -> Option<u32> {
        match self.life {
            Life::Spawning => None,
            Life::Running { pid } | Life::Exited { pid, .. } => Some(pid),
        }
    }

    /// Not reaped yet (being started, or running).
    pub(crate) fn is_running(&self) -> bool {
        !matches!(self.life, Life::Exited { .. })
    }

    /// Whether it is work the session goes on with: a background shell or
    /// monitor, or the foreground command of a detached caller.
    pub(crate) fn is_background_work(&self) -> bool {
        self.kind != Kind::Foreground || self.detached
    }

    /// `running`, `completed`, `failed` or `killed`: the one place a
    /// shell's status is decided.
    pub(crate) fn status(&self) -> TaskStatus {
        match self.life {
            Life::Spawning | Life::Running { .. } => TaskStatus::Running,
            Life::Exited { .. } if self.stop.is_some() => TaskStatus::Killed,
            Life::Exited {
                exit: Exit::Code(0),
                ..
            } => TaskStatus::Completed,
            Life::Exited { .. } => TaskStatus::Failed,
        }
    }

    /// N, 128+S for a signal, -1 when the status was lost; `None` while running.
    pub(crate) fn exit_code(&self) -> Option<i32> {
        match self.life {
            Life::Exited { exit, .. } => Some(exit.code()),
            _ => None,
        }
    }

    /// What its end notification needs, once it has ended in the background.
    pub(crate) fn ended(&self) -> Option<Ended> {
        Some(Ended {
            id: self.id.clone()?,
            what: self.what().to_string(),
            call: self.call.clone(),
            output: self.output.clone(),
            status: self.status(),
            code: self.exit_code()?,
            out_of_memory: self.cost.out_of_memory,
        })
    }
}

/// What the notification of a shell's end says (made into text above).
#[derive(Debug, Clone)]
pub(crate) struct Ended {
    pub id: String,
    /// The description, or the command when there is none.
    pub what: String,
    pub call: Option<String>,
    pub output: PathBuf,
    pub status: TaskStatus,
    pub code: i32,
    /// The memory limit it was stopped at, if it ran out.
    pub out_of_memory: Option<u64>,
}
