//! The resolved configuration every tool call reads, and the options of
//! monitors. A leaf: it imports nothing of the crate.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The validator's signature: `Err(reason)` refuses the command with `Command REASON`.
pub type Validator = dyn Fn(&str, &Path) -> Result<(), String> + Send + Sync + 'static;

/// Asked when a monitor starts: is there nobody at the keyboard?
pub type Unattended = dyn Fn() -> bool + Send + Sync + 'static;

/// Every default, written once: the builder, [`MonitorOptions`], the
/// server's `--help` and the README's tables take them from here (each is
/// Claude Code's).
pub mod defaults {
    use std::time::Duration;

    /// Foreground time of a `bash` call without `timeout`.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
    /// The cap of `bash` and `bash_output` timeouts.
    pub const MAX_TIMEOUT: Duration = Duration::from_secs(600);
    /// Characters a result carries.
    pub const OUTPUT_LIMIT: usize = 30_000;
    /// Between SIGTERM and SIGKILL when a shell is stopped.
    pub const KILL_GRACE: Duration = Duration::from_secs(5);
    /// How long `bash_output` with `block` waits without `timeout`.
    pub const BLOCK_TIMEOUT: Duration = Duration::from_secs(30);
    /// A monitor's watch without `timeout_ms`.
    pub const MONITOR_TIMEOUT: Duration = Duration::from_secs(300);
    /// The cap of a monitor's `timeout_ms`.
    pub const MONITOR_MAX_TIMEOUT: Duration = Duration::from_secs(1800);
    /// The cap of `timeout_ms` when nobody is at the keyboard.
    pub const MONITOR_UNATTENDED_MAX_TIMEOUT: Duration = Duration::from_secs(600);
    /// The floor of a monitor's `timeout_ms`.
    pub const MONITOR_MIN_TIMEOUT: Duration = Duration::from_secs(1);
    /// An output file past this many bytes stops its shell (1 GiB).
    pub const MAX_OUTPUT_BYTES: u64 = 1 << 30;
    /// Whether commands get `PAGER=cat`, `GIT_PAGER=cat`, `GIT_EDITOR=true`, `TERM=dumb`.
    pub const NONINTERACTIVE_ENV: bool = true;
    /// `render_output`: results show what a terminal would.
    pub const RENDER_OUTPUT: bool = true;
    /// Whether a `cd` in a foreground command carries to the caller's next
    /// commands (the library's default; `bashtools-mcp` turns it on, see
    /// [`SERVER_PERSIST_WORKING_DIRECTORY`]).
    pub const PERSIST_WORKING_DIRECTORY: bool = false;
    /// `persist_working_directory` in `bashtools-mcp` (`--no-persist-cwd`
    /// turns it off): models trained on Claude Code expect `cd` to stick.
    pub const SERVER_PERSIST_WORKING_DIRECTORY: bool = true;
    /// Whether the exported variables a foreground command set or unset
    /// carry to the caller's next commands (the library's default;
    /// `bashtools-mcp` turns it on, see [`SERVER_PERSIST_ENVIRONMENT`]).
    pub const PERSIST_ENVIRONMENT: bool = false;
    /// `persist_environment` in `bashtools-mcp` (`--no-persist-env` turns
    /// it off): an `export` or a sourced virtualenv sticks, as in a terminal.
    pub const SERVER_PERSIST_ENVIRONMENT: bool = true;
    /// At most this many bytes (names plus values) of exported variables
    /// are carried from one command to the next.
    pub const CARRIED_ENVIRONMENT_LIMIT: usize = 64 << 10;
    /// At most this many variables are carried from one command to the
    /// next (bash starts more slowly with every entry of its environment:
    /// 21 888 empty ones, under 64 KiB, made every command take 1.9 s).
    pub const CARRIED_ENTRIES_LIMIT: usize = 256;
    /// A monitor's lines within this window go out as one event.
    pub const BATCH_WINDOW: Duration = Duration::from_millis(200);
    /// At most this many lines in one monitor event.
    pub const BURST_LIMIT: usize = 20;
    /// A monitor line longer than this many characters is cut.
    pub const LINE_LIMIT: usize = 500;
    /// A monitor suppressing lines in every window this long is stopped.
    pub const FLOOD_TIMEOUT: Duration = Duration::from_secs(30);
    /// Whether `bash` offers `interactive: true` and the `write_stdin` tool.
    pub const INTERACTIVE: bool = false;
    /// The terminal of an interactive command: columns, rows.
    pub const TERMINAL_SIZE: (u16, u16) = (80, 24);
    /// How long an interactive `bash` or a `write_stdin` waits for output
    /// without `yield_ms`.
    pub const YIELD: Duration = Duration::from_millis(1000);
    /// An interactive command's output that has paused this long is
    /// answered at once, before the yield is over.
    pub const QUIET: Duration = Duration::from_millis(200);
}

/// The resolved options every tool call reads. Built once, never changed.
pub(crate) struct Config {
    pub working_directory: PathBuf,
    pub allowed_commands: Option<Vec<String>>,
    /// Variables whose values are secret, by name (`redact_env`).
    pub redact_names: Vec<String>,
    /// Every variable whose name says it is secret is (`redact_auto`).
    pub redact_auto: bool,
    /// Values the host knows are secret (`redact_values`).
    pub redact_values: Vec<String>,
    /// Lines are judged by a policy (`allowed_commands` or rules): the
    /// carried environment then keeps nothing the gate would refuse.
    pub gated: bool,
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
    pub render_output: bool,
    /// Whether a foreground command's last directory becomes its caller's.
    pub persist_working_directory: bool,
    /// Whether a foreground command's exported variables become its caller's.
    pub persist_environment: bool,
    pub env: Vec<(OsString, OsString)>,
    pub env_remove: Vec<OsString>,
    pub output_root: PathBuf,
    pub monitor_options: MonitorOptions,
    /// The sandbox's resolved policy, when one was asked for.
    pub sandbox: Option<SandboxPolicy>,
    /// `interactive: true` on `bash`, and `write_stdin`, are offered.
    pub interactive: bool,
    /// The terminal of an interactive command: columns, rows.
    pub terminal_size: (u16, u16),
}

/// A [`Sandbox`] resolved at `build()`: its directories made absolute and
/// resolved (symlinks followed), so a working directory is checked against
/// what the kernel will check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SandboxPolicy {
    /// The configured working directory, resolved.
    pub working_directory: PathBuf,
    /// The directories given to [`Sandbox::allow_write`], resolved.
    pub allow_write: Vec<PathBuf>,
    /// The private temporary directory (`TMPDIR` of every command).
    pub tmp: PathBuf,
    /// Whether TCP `connect` and `bind` are allowed.
    pub network: bool,
    /// Whether a kernel without Landlock is accepted (commands then run
    /// unrestricted).
    pub best_effort: bool,
}

impl SandboxPolicy {
    /// Where commands may write: the working directory, the directories
    /// given, the temporary directory.
    pub(crate) fn write_roots(&self) -> impl Iterator<Item = &Path> {
        std::iter::once(self.working_directory.as_path())
            .chain(self.allow_write.iter().map(PathBuf::as_path))
            .chain(std::iter::once(self.tmp.as_path()))
    }

    /// Whether `dir` (already resolved) lies inside a write root.
    pub(crate) fn allows_cwd(&self, dir: &Path) -> bool {
        self.write_roots().any(|root| dir.starts_with(root))
    }
}

/// A Landlock sandbox for commands (Linux 5.13 and later; what each kernel
/// enforces is in the README's "Sandbox" section).
///
/// - **Filesystem**: commands read and execute everything, and write only
///   in the working directory, the directories given to
///   [`allow_write`](Self::allow_write), a private temporary directory
///   (their `TMPDIR`, removed with the tools) and the devices commands need
///   (`/dev/null`, `/dev/zero`, `/dev/full`, `/dev/random`, `/dev/urandom`,
///   `/dev/tty`, `/dev/ptmx`, `/dev/pts`, `/dev/shm`). A call whose
///   working directory lies outside these is refused.
/// - **Network**: TCP `connect` and `bind` are refused unless
///   [`allow_network`](Self::allow_network) (Landlock ABI 4).
/// - **Signals and abstract unix sockets** are scoped: a command cannot
///   signal the host or connect to its abstract sockets (Landlock ABI 6).
///
/// The restriction holds for the command and everything it starts, never
/// for the host. Commands also run with `no_new_privs`, so set-user-ID
/// programs such as `sudo` do not gain privileges. What the running kernel
/// enforces is [`BashTools::sandbox_status`](crate::BashTools::sandbox_status).
///
/// ```
/// use bashtools::Sandbox;
/// let sandbox = Sandbox::new().allow_write("/var/tmp").allow_network(true);
/// assert!(sandbox.is_network_allowed());
/// assert_eq!(sandbox.get_allow_write(), [std::path::PathBuf::from("/var/tmp")]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sandbox {
    allow_write: Vec<PathBuf>,
    allow_network: bool,
    best_effort: bool,
}

impl Sandbox {
    /// A sandbox with no more than the working directory, the private
    /// temporary directory and the devices writable, and no network.
    pub fn new() -> Sandbox {
        Sandbox::default()
    }

    /// Lets commands write in `dir` and everything under it (repeatable).
    /// It must exist when the tools are built.
    pub fn allow_write(mut self, dir: impl Into<PathBuf>) -> Sandbox {
        self.allow_write.push(dir.into());
        self
    }

    /// Lets commands `connect` and `bind` TCP sockets (default: refused).
    pub fn allow_network(mut self, allow: bool) -> Sandbox {
        self.allow_network = allow;
        self
    }

    /// Builds the tools even where the kernel has no Landlock at all; the
    /// commands then run unrestricted, as
    /// [`sandbox_status`](crate::BashTools::sandbox_status) reports.
    /// Default: such a `build()` fails
    /// ([`ErrorKind::SandboxUnsupported`](crate::ErrorKind::SandboxUnsupported)).
    pub fn best_effort(mut self, best_effort: bool) -> Sandbox {
        self.best_effort = best_effort;
        self
    }

    /// The directories given to [`allow_write`](Self::allow_write).
    pub fn get_allow_write(&self) -> &[PathBuf] {
        &self.allow_write
    }

    /// Whether TCP `connect` and `bind` are allowed.
    pub fn is_network_allowed(&self) -> bool {
        self.allow_network
    }

    /// Whether a kernel without Landlock is accepted.
    pub fn is_best_effort(&self) -> bool {
        self.best_effort
    }
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
            batch_window: defaults::BATCH_WINDOW,
            burst_limit: defaults::BURST_LIMIT,
            line_limit: defaults::LINE_LIMIT,
            flood_timeout: defaults::FLOOD_TIMEOUT,
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
