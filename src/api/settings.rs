//! The tools' settings, read-only, and the tools' rule for a timeout argument.

use std::path::Path;
use std::time::Duration;

use crate::config::Config;

/// The settings of a [`BashTools`](crate::BashTools), read-only (from [`BashTools::settings`](crate::BashTools::settings)).
#[derive(Clone, Copy)]
pub struct Settings<'a> {
    pub(super) config: &'a Config,
}

impl std::fmt::Debug for Settings<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("working_directory", &self.working_directory())
            .field("default_timeout", &self.default_timeout())
            .field("max_timeout", &self.max_timeout())
            .field("output_limit", &self.output_limit())
            .field("kill_grace", &self.kill_grace())
            .field("block_timeout", &self.block_timeout())
            .field("max_output_bytes", &self.max_output_bytes())
            .field("allowed_commands", &self.allowed_commands())
            .field("interactive", &self.interactive())
            .field("terminal_size", &self.terminal_size())
            .field(
                "persist_working_directory",
                &self.persist_working_directory(),
            )
            .finish_non_exhaustive()
    }
}

impl Settings<'_> {
    /// Where commands run unless the call or caller names another directory.
    pub fn working_directory(&self) -> &Path {
        &self.config.working_directory
    }
    /// Whether a `cd` in a foreground command carries to the recipient's
    /// next commands ([`Builder::persist_working_directory`](crate::Builder::persist_working_directory)).
    pub fn persist_working_directory(&self) -> bool {
        self.config.persist_working_directory
    }
    /// Foreground time of a `bash` call without `timeout`.
    pub fn default_timeout(&self) -> Duration {
        self.config.default_timeout
    }
    /// The cap of `bash` and `bash_output` timeouts.
    pub fn max_timeout(&self) -> Duration {
        self.config.max_timeout
    }
    /// Characters a result carries.
    pub fn output_limit(&self) -> usize {
        self.config.output_limit
    }
    /// Between SIGTERM and SIGKILL when a shell is stopped.
    pub fn kill_grace(&self) -> Duration {
        self.config.kill_grace
    }
    /// How long `bash_output` with `block` waits without `timeout`.
    pub fn block_timeout(&self) -> Duration {
        self.config.block_timeout
    }
    /// An output file past this stops its shell.
    pub fn max_output_bytes(&self) -> u64 {
        self.config.max_output_bytes
    }
    /// Whether `bash` offers `interactive: true` and `write_stdin` exists.
    pub fn interactive(&self) -> bool {
        self.config.interactive
    }
    /// The terminal of an interactive command: columns, rows.
    pub fn terminal_size(&self) -> (u16, u16) {
        self.config.terminal_size
    }
    /// The words commands may start with, when a list is configured.
    pub fn allowed_commands(&self) -> Option<&[String]> {
        self.config.allowed_commands.as_deref()
    }
    /// How long a call with these JSON arguments may take, by the tool's
    /// own rule: its `timeout` in seconds (absent, zero, negative or not a
    /// number: `default_timeout` for `bash`, `block_timeout` for
    /// `bash_output`), cut to `max_timeout`. For a progress bar's total.
    ///
    /// ```
    /// use std::time::Duration;
    /// let tools = bashtools::BashTools::builder().build()?;
    /// let s = tools.settings();
    /// let args = serde_json::json!({"command": "make", "timeout": 30});
    /// assert_eq!(s.call_timeout("bash", &args), Duration::from_secs(30));
    /// let args = serde_json::json!({"bash_id": "bash_1", "block": true});
    /// assert_eq!(s.call_timeout("bash_output", &args), s.block_timeout());
    /// # Ok::<(), bashtools::Error>(())
    /// ```
    pub fn call_timeout(&self, tool: &str, args: &serde_json::Value) -> Duration {
        let default = match tool {
            "bash_output" => self.config.block_timeout,
            _ => self.config.default_timeout,
        };
        let max = self.config.max_timeout;
        match args.as_object() {
            Some(a) => timeout_secs(a, "timeout", default, max),
            None => default.min(max),
        }
    }
}

/// A timeout in seconds: absent, zero, negative or non-numeric falls back
/// to `default` (contract §4); a larger one than `max` is cut down.
/// A numeric string (`"30"`) counts as its number.
pub(crate) fn timeout_secs(
    args: &serde_json::Map<String, serde_json::Value>,
    name: &str,
    default: Duration,
    max: Duration,
) -> Duration {
    let secs = match args.get(name) {
        Some(serde_json::Value::Number(n)) => n.as_f64(),
        Some(serde_json::Value::String(s)) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    let chosen = match secs {
        Some(s) if s.is_finite() && s > 0.0 => Duration::try_from_secs_f64(s).unwrap_or(max),
        _ => default,
    };
    chosen.min(max)
}
