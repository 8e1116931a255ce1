//! Where a shell or a registry entry is in its life: `running`, then one of
//! `completed`, `failed` or `killed`. The words are the ones the tools show
//! (`<status>…</status>`), so [`Display`](std::fmt::Display) and
//! [`FromStr`](std::str::FromStr) are each other's inverse.

use std::fmt;
use std::str::FromStr;

/// Where a shell or a registry entry is in its life.
///
/// ```
/// use bashtools::TaskStatus;
/// assert_eq!(TaskStatus::Killed.to_string(), "killed");
/// assert_eq!("failed".parse::<TaskStatus>(), Ok(TaskStatus::Failed));
/// assert!("gone".parse::<TaskStatus>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TaskStatus {
    /// Still at work.
    Running,
    /// Ended well (exit 0, or a report).
    Completed,
    /// Ended badly (another exit code, or an error).
    Failed,
    /// Stopped on request (`kill_shell`, `stop_all`, the output cap, a
    /// monitor's timeout).
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

    /// Whether the work has ended (any status but `running`).
    pub fn is_ended(self) -> bool {
        self != TaskStatus::Running
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A word that is not one of the four statuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseStatusError(String);

impl fmt::Display for ParseStatusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not a task status: {:?} (expected running, completed, failed or killed)",
            self.0
        )
    }
}

impl std::error::Error for ParseStatusError {}

impl FromStr for TaskStatus {
    type Err = ParseStatusError;

    fn from_str(s: &str) -> Result<TaskStatus, ParseStatusError> {
        match s {
            "running" => Ok(TaskStatus::Running),
            "completed" => Ok(TaskStatus::Completed),
            "failed" => Ok(TaskStatus::Failed),
            "killed" => Ok(TaskStatus::Killed),
            other => Err(ParseStatusError(other.to_string())),
        }
    }
}
