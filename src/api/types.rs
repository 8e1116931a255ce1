//! The values of the typed API: a command to run, what running it led to,
//! a shell's ID, status and new output, and the errors of a call.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::limits::{Limits, Usage};
use crate::status::TaskStatus;

/// The ID of a background shell: `bash_N` or `monitor_N`.
///
/// ```
/// use bashtools::ShellId;
/// let id = ShellId::from("bash_1");
/// assert_eq!(id.as_str(), "bash_1");
/// assert_eq!(id.to_string(), "bash_1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ShellId(String);

impl ShellId {
    /// The ID as the tools show it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ShellId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for ShellId {
    fn from(s: &str) -> ShellId {
        ShellId(s.to_string())
    }
}

impl From<String> for ShellId {
    fn from(s: String) -> ShellId {
        ShellId(s)
    }
}

impl AsRef<str> for ShellId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// What running a [`Command`] led to.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// It ran to its end in the foreground.
    Exited(Exited),
    /// It runs in the background: started there, or moved there at its timeout.
    Background(Backgrounded),
    /// A gate refused it; nothing was started.
    Refused(Refusal),
}

/// Why a command was stopped before it ended on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopCause {
    /// `kill`/`kill_shell`, or a cancelled call.
    Killed,
    /// `stop_all`, or the end of the tools.
    StopAll,
    /// Its output passed `max_output_bytes` (the limit).
    OutputCap {
        /// The limit it passed, in bytes.
        limit: u64,
    },
    /// A monitor's timeout.
    MonitorTimeout,
    /// A monitor whose output rate stayed too high.
    Flood,
}

/// With [`persist_working_directory`](crate::Builder::persist_working_directory):
/// the directory the recipient's last command ended in could not be used
/// (removed since, or outside the sandbox), and the command ran where it
/// would have without it. The recorded directory is forgotten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CwdReset {
    pub(crate) lost: PathBuf,
    pub(crate) ran_in: PathBuf,
    pub(crate) outside_sandbox: bool,
}

impl CwdReset {
    /// The recorded directory that could not be used.
    pub fn lost(&self) -> &Path {
        &self.lost
    }
    /// Where the command ran instead.
    pub fn ran_in(&self) -> &Path {
        &self.ran_in
    }
    /// Whether it was refused for lying outside the sandbox (else it is no
    /// longer a directory).
    pub fn outside_sandbox(&self) -> bool {
        self.outside_sandbox
    }
}

/// A command that ran to its end in the foreground.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exited {
    pub(crate) code: i32,
    pub(crate) output: String,
    pub(crate) truncated: u64,
    pub(crate) stopped: Option<StopCause>,
    pub(crate) output_lost: bool,
    pub(crate) cwd_reset: Option<CwdReset>,
    pub(crate) usage: Usage,
    pub(crate) not_kept: Vec<NotKept>,
}

/// With [`persist_environment`](crate::Builder::persist_environment): a
/// variable a command exported that its recipient's next commands do not
/// get.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotKept {
    /// Under `allowed_commands`, a variable the gate refuses to assign
    /// ([`gate::changes_what_runs`](crate::gate::changes_what_runs)), set
    /// where the gate could not see it.
    ChangesWhatRuns(std::ffi::OsString),
    /// Past the 64 KiB the carried environment may hold.
    TooLarge(std::ffi::OsString),
    /// A variable that changes how bash itself starts (`SHELLOPTS`,
    /// `BASHOPTS`, `POSIXLY_CORRECT`, `BASH_ENV`, `ENV`): never carried,
    /// allow-list or not, so no command can change how the next ones start.
    ShapesBash(std::ffi::OsString),
    /// Past the 256 variables the carried environment may hold.
    TooMany(std::ffi::OsString),
    /// The command's exported variables passed 4 MiB: those past that were
    /// not read, and keep the values they had before it.
    Unread,
}

impl Exited {
    /// What it cost (wall time, CPU time, peak memory) and the limits it
    /// ran into.
    ///
    /// ```no_run
    /// use bashtools::{BashTools, Caller, Command, Outcome};
    /// let tools = BashTools::builder().memory_limit(64 << 20).build()?;
    /// let cmd = Command::new("python3 -c 'x = bytearray(200 << 20)'");
    /// let Outcome::Exited(e) = tools.run(&cmd, &Caller::default())? else { panic!() };
    /// assert_eq!(e.usage().out_of_memory(), Some(64 << 20));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn usage(&self) -> &Usage {
        &self.usage
    }
    /// With [`persist_environment`](crate::Builder::persist_environment):
    /// the variables it exported that were not kept for the next commands.
    pub fn not_kept(&self) -> &[NotKept] {
        &self.not_kept
    }
    /// The exit code: N, 128+S when a signal ended it, -1 when its status
    /// was lost (the host reaped it).
    pub fn code(&self) -> i32 {
        self.code
    }
    /// Exit code 0, and not stopped.
    pub fn success(&self) -> bool {
        self.code == 0 && self.stopped.is_none()
    }
    /// Its output (stdout and stderr as written), cut to `output_limit`
    /// characters by keeping the head and the tail.
    pub fn output(&self) -> &str {
        &self.output
    }
    /// How many characters were left out in the middle (0: none).
    pub fn truncated_chars(&self) -> u64 {
        self.truncated
    }
    /// Whether its output may not all have been written: the file system
    /// of the output directory had no space left when the command ended.
    /// The command writes its file itself, so its write errors are not
    /// seen; a disk that filled and emptied again while it ran goes
    /// unnoticed.
    pub fn output_lost(&self) -> bool {
        self.output_lost
    }
    /// Why it was stopped, if it was.
    pub fn stopped(&self) -> Option<StopCause> {
        self.stopped
    }
    /// Whether it could not start in the recorded directory, and where it
    /// ran instead.
    pub fn cwd_reset(&self) -> Option<&CwdReset> {
        self.cwd_reset.as_ref()
    }
}

/// A command that runs in the background.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backgrounded {
    pub(crate) id: ShellId,
    pub(crate) output_file: PathBuf,
    pub(crate) after: Option<Duration>,
    pub(crate) notified: bool,
    pub(crate) cwd_reset: Option<CwdReset>,
}

impl Backgrounded {
    /// Its ID.
    pub fn id(&self) -> &ShellId {
        &self.id
    }
    /// The file its output is written to.
    pub fn output_file(&self) -> &Path {
        &self.output_file
    }
    /// The timeout after which it moved to the background; `None` when it
    /// was started there.
    pub fn after(&self) -> Option<Duration> {
        self.after
    }
    /// Whether its end will be delivered as a notification (a task
    /// registry is configured).
    pub fn notified(&self) -> bool {
        self.notified
    }
    /// Whether it could not start in the recorded directory, and where it
    /// ran instead.
    pub fn cwd_reset(&self) -> Option<&CwdReset> {
        self.cwd_reset.as_ref()
    }
}

/// A background shell's end as it would be notified
/// ([`BashTools::notification`](crate::BashTools::notification)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndNotice {
    /// The `<task-notification>` block a model reads.
    pub text: String,
    /// The one line a surface shows for it, e.g.
    /// `Background command "build" completed (exit code 0)`.
    pub label: String,
}

/// Why a gate refused a command.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// `allowed_commands` refused it: a word outside the list, or a
    /// construct the gate cannot vouch for (the text says which).
    Gate(crate::gate::Denial),
    /// The policy asked for approval and there was no one to ask: no
    /// approver, or an MCP client that cannot ask the user (`prefix` is
    /// then what to allow, for the text).
    NeedsApproval {
        /// The parts' words, joined (`git push, npm publish`).
        words: String,
        /// For an MCP client that cannot ask: the prefix to allow.
        client_cannot_ask: Option<String>,
    },
    /// The person (or the approver) said no, or no answer came in time.
    Declined {
        /// The command line.
        line: String,
        /// Why, when it was said (`no answer within 300s`).
        reason: Option<String>,
    },
    /// The validator refused it, with this reason (may be empty).
    Validator(String),
    /// The validator panicked; the command was refused.
    ValidatorPanicked,
}

/// A background shell's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellInfo {
    pub(crate) id: ShellId,
    pub(crate) command: String,
    pub(crate) description: Option<String>,
    pub(crate) status: TaskStatus,
    pub(crate) exit_code: Option<i32>,
    pub(crate) output_file: PathBuf,
    pub(crate) stopped: Option<StopCause>,
    pub(crate) usage: Option<Usage>,
}

impl ShellInfo {
    /// What it cost and the limits it ran into, once it has ended.
    pub fn usage(&self) -> Option<&Usage> {
        self.usage.as_ref()
    }
    /// Its ID.
    pub fn id(&self) -> &ShellId {
        &self.id
    }
    /// The command line.
    pub fn command(&self) -> &str {
        &self.command
    }
    /// Its description, if one was given.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }
    /// `Running`, then `Completed`, `Failed` or `Killed`.
    pub fn status(&self) -> TaskStatus {
        self.status
    }
    /// Its exit code once it has ended.
    pub fn exit_code(&self) -> Option<i32> {
        self.exit_code
    }
    /// The file its output is written to.
    pub fn output_file(&self) -> &Path {
        &self.output_file
    }
    /// Why it was stopped, if it was.
    pub fn stopped(&self) -> Option<StopCause> {
        self.stopped
    }
}

/// What a shell wrote since the last read, and its state when read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOutput {
    pub(crate) info: ShellInfo,
    pub(crate) text: String,
    pub(crate) truncated: u64,
    pub(crate) output_lost: bool,
    pub(crate) lines_left_out: u64,
}

impl NewOutput {
    /// With a `tail`: how many lines came before the ones kept (read and
    /// consumed all the same); 0 without one.
    pub fn lines_left_out(&self) -> u64 {
        self.lines_left_out
    }
    /// Whether the shell has ended and its output may not all have been
    /// written (see [`Exited::output_lost`]).
    pub fn output_lost(&self) -> bool {
        self.output_lost
    }
    /// The shell's state, taken before its output was read: once it says
    /// ended, the text reaches the end of the output.
    pub fn info(&self) -> &ShellInfo {
        &self.info
    }
    /// The new output (only the matching lines with a filter), cut to
    /// `output_limit` characters by keeping the head and the tail.
    pub fn text(&self) -> &str {
        &self.text
    }
    /// How many characters were left out in the middle (0: none).
    pub fn truncated_chars(&self) -> u64 {
        self.truncated
    }
}

mod call_error;
mod command;
pub use call_error::{CallError, IoFailure};
pub use command::Command;
