//! How a session is served: where notifications go, how often progress is
//! reported, how long a line may be. The defaults live here, once; the
//! binary's `--help` shows them from [`Options::default`].

use std::time::Duration;

use super::lines::MAX_LINE_BYTES;

/// Where task notifications and monitor events go (`--deliver`).
///
/// ```
/// use bashtools::mcp::Deliver;
/// assert_eq!("log".parse::<Deliver>(), Ok(Deliver::Log));
/// assert_eq!(Deliver::Both.as_str(), "both");
/// assert!("never".parse::<Deliver>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Deliver {
    /// In the next `tools/call` result, as more text content: the path that
    /// reaches the model in every client.
    Result,
    /// As `notifications/message` only, for clients that show logs.
    Log,
    /// Both (the default).
    Both,
}

/// A `--deliver` value that is not `result`, `log` or `both`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownDeliver(pub String);

impl std::fmt::Display for UnknownDeliver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` is not result, log or both", self.0)
    }
}

impl std::error::Error for UnknownDeliver {}

/// `result`, `log` or `both`.
impl std::str::FromStr for Deliver {
    type Err = UnknownDeliver;

    fn from_str(s: &str) -> Result<Deliver, UnknownDeliver> {
        match s {
            "result" => Ok(Deliver::Result),
            "log" => Ok(Deliver::Log),
            "both" => Ok(Deliver::Both),
            other => Err(UnknownDeliver(other.to_string())),
        }
    }
}

impl Deliver {
    /// The flag's spelling of this value.
    pub fn as_str(self) -> &'static str {
        match self {
            Deliver::Result => "result",
            Deliver::Log => "log",
            Deliver::Both => "both",
        }
    }

    pub(crate) fn results(self) -> bool {
        matches!(self, Deliver::Result | Deliver::Both)
    }

    pub(crate) fn logs(self) -> bool {
        matches!(self, Deliver::Log | Deliver::Both)
    }
}

/// The options of [`McpServer::serve_with`](super::McpServer::serve_with).
#[derive(Debug, Clone)]
pub struct Options {
    deliver: Deliver,
    progress_interval: Duration,
    max_line_bytes: usize,
    task_after: Duration,
    approval_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            deliver: Deliver::Both,
            progress_interval: Duration::from_millis(5000),
            max_line_bytes: MAX_LINE_BYTES,
            task_after: Duration::from_secs(1),
            approval_timeout: Duration::from_secs(300),
        }
    }
}

impl Options {
    /// Where notifications go (default [`Deliver::Both`]).
    pub fn deliver(mut self, deliver: Deliver) -> Self {
        self.deliver = deliver;
        self
    }

    /// How often a call with a `progressToken` reports progress (default
    /// 5 s). Zero is taken as one millisecond.
    pub fn progress_interval(mut self, every: Duration) -> Self {
        self.progress_interval = every.max(Duration::from_millis(1));
        self
    }

    /// The longest line read as a message (default [`MAX_LINE_BYTES`]).
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = bytes;
        self
    }

    /// How long a `bash` call from a request that declares the tasks
    /// extension runs before it answers with a task (default 1 s).
    pub fn task_after(mut self, after: Duration) -> Self {
        self.task_after = after.max(Duration::from_millis(1));
        self
    }

    /// How long the person has to answer a question of the policy before
    /// the line is denied (default 300 s); a stateless `requestState`
    /// expires after as long.
    pub fn approval_timeout(mut self, timeout: Duration) -> Self {
        self.approval_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// The current [`approval_timeout`](Self::approval_timeout).
    pub fn approval_wait(&self) -> Duration {
        self.approval_timeout
    }

    /// See [`task_after`](Self::task_after).
    pub fn task_delay(&self) -> Duration {
        self.task_after
    }

    /// The current [`deliver`](Self::deliver) value.
    pub fn delivery(&self) -> Deliver {
        self.deliver
    }

    /// The current [`progress_interval`](Self::progress_interval).
    pub fn progress_every(&self) -> Duration {
        self.progress_interval
    }

    /// The current [`max_line_bytes`](Self::max_line_bytes).
    pub fn line_limit(&self) -> usize {
        self.max_line_bytes
    }
}
