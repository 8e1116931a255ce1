//! The settled configuration every tool call reads, and the options of
//! monitors. A leaf: it imports nothing of the crate.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The validator's signature: `Err(reason)` refuses the command with `Command REASON`.
pub type Validator = dyn Fn(&str, &Path) -> Result<(), String> + Send + Sync + 'static;

/// Asked when a monitor starts: is there nobody at the keyboard?
pub type Unattended = dyn Fn() -> bool + Send + Sync + 'static;

/// The settled options every tool call reads. Built once, never changed.
pub(crate) struct Config {
    pub working_directory: PathBuf,
    pub allowed_commands: Option<Vec<String>>,
    pub validator: Option<Arc<Validator>>,
    pub default_timeout: Duration,
    pub max_timeout: Duration,
    pub output_limit: usize,
    pub kill_grace: Duration,
    pub block_timeout: Duration,
    pub monitor_timeout: Duration,
    pub monitor_max_timeout: Duration,
    pub monitor_unattended_max_timeout: Duration,
    pub monitor_min_timeout: Duration,
    pub unattended: Option<Arc<Unattended>>,
    pub max_output_bytes: u64,
    pub noninteractive_env: bool,
    pub env: Vec<(OsString, OsString)>,
    pub env_remove: Vec<OsString>,
    pub output_root: PathBuf,
    pub monitor_options: MonitorOptions,
}

/// How every monitor batches its lines (contract §7).
///
/// ```
/// use std::time::Duration;
/// let opts = bashtools::MonitorOptions::default()
///     .batch_window(Duration::from_millis(50))
///     .burst_limit(5);
/// assert_eq!(opts.line_limit, 500);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MonitorOptions {
    /// Lines within this window after the first go out as one notification,
    /// so a multi-line event arrives whole (200 ms).
    pub batch_window: Duration,
    /// At most this many lines in one notification; the rest of the window
    /// are counted and reported as suppressed (20).
    pub burst_limit: usize,
    /// A longer line is cut and ends with `...(truncated)`; a line that never
    /// ends holds no more than this in memory (500 characters).
    pub line_limit: usize,
    /// A monitor that suppressed lines in every window for this long is
    /// stopped (30 s).
    pub flood_timeout: Duration,
}

impl Default for MonitorOptions {
    fn default() -> Self {
        MonitorOptions {
            batch_window: Duration::from_millis(200),
            burst_limit: 20,
            line_limit: 500,
            flood_timeout: Duration::from_secs(30),
        }
    }
}

impl MonitorOptions {
    /// Sets [`batch_window`](Self::batch_window).
    pub fn batch_window(mut self, d: Duration) -> Self {
        self.batch_window = d;
        self
    }
    /// Sets [`burst_limit`](Self::burst_limit).
    pub fn burst_limit(mut self, n: usize) -> Self {
        self.burst_limit = n;
        self
    }
    /// Sets [`line_limit`](Self::line_limit).
    pub fn line_limit(mut self, chars: usize) -> Self {
        self.line_limit = chars;
        self
    }
    /// Sets [`flood_timeout`](Self::flood_timeout).
    pub fn flood_timeout(mut self, d: Duration) -> Self {
        self.flood_timeout = d;
        self
    }
}
