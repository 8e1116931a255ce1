//! The builder of [`BashTools`]: one setter per option, each default the
//! one Claude Code uses.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::config::{defaults, MonitorOptions, Sandbox, Unattended, Validator};
use crate::error::Error;
use crate::limits::Limits;
use crate::os::files::outdir::OutputDir;
use crate::os::launch::Via;
use crate::os::process::RealProcess;
use crate::policy::{Approver, Policy};

use crate::tasks::Tasks;
use crate::BashTools;

/// Builds a [`BashTools`]. Every option of contract §3 has a setter of the
/// same name; each default is the one Claude Code uses.
///
/// ```
/// use std::time::Duration;
/// let tools = bashtools::BashTools::builder()
///     .default_timeout(Duration::from_secs(30))
///     .output_limit(10_000)
///     .build()
///     .unwrap();
/// # drop(tools);
/// ```
pub struct Builder {
    working_directory: Option<PathBuf>,
    allowed_commands: Option<Vec<String>>,
    policy: Policy,
    approver: Option<Arc<Approver>>,
    redact_names: Vec<String>,
    redact_auto: bool,
    redact_values: Vec<String>,
    validator: Option<Arc<Validator>>,
    default_timeout: Duration,
    max_timeout: Duration,
    output_limit: usize,
    kill_grace: Duration,
    block_timeout: Duration,
    monitor_timeout: Duration,
    monitor_max_timeout: Duration,
    monitor_unattended_max_timeout: Duration,
    monitor_min_timeout: Duration,
    unattended: Option<Arc<Unattended>>,
    max_output_bytes: u64,
    noninteractive_env: bool,
    render_output: bool,
    persist_working_directory: bool,
    persist_environment: bool,
    env: Vec<(OsString, OsString)>,
    env_remove: Vec<OsString>,
    output_root: Option<PathBuf>,
    tasks: Option<Tasks>,
    monitor_options: MonitorOptions,
    sandbox: Option<Sandbox>,
    interactive: bool,
    interactive_ungated: bool,
    terminal_size: (u16, u16),
    limits: Limits,
}

impl std::fmt::Debug for Builder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builder")
            .field("working_directory", &self.working_directory)
            .field("allowed_commands", &self.allowed_commands)
            .field("policy", &self.policy)
            .field("approver", &self.approver.is_some())
            .field("redact_names", &self.redact_names)
            .field("redact_auto", &self.redact_auto)
            .field("redact_values", &self.redact_values.len())
            .field("validator", &self.validator.is_some())
            .field("default_timeout", &self.default_timeout)
            .field("max_timeout", &self.max_timeout)
            .field("output_limit", &self.output_limit)
            .field("kill_grace", &self.kill_grace)
            .field("block_timeout", &self.block_timeout)
            .field("monitor_timeout", &self.monitor_timeout)
            .field("monitor_max_timeout", &self.monitor_max_timeout)
            .field(
                "monitor_unattended_max_timeout",
                &self.monitor_unattended_max_timeout,
            )
            .field("monitor_min_timeout", &self.monitor_min_timeout)
            .field("unattended", &self.unattended.is_some())
            .field("max_output_bytes", &self.max_output_bytes)
            .field("noninteractive_env", &self.noninteractive_env)
            .field("render_output", &self.render_output)
            .field("persist_working_directory", &self.persist_working_directory)
            .field("persist_environment", &self.persist_environment)
            .field("env", &self.env)
            .field("env_remove", &self.env_remove)
            .field("output_root", &self.output_root)
            .field("tasks", &self.tasks)
            .field("monitor_options", &self.monitor_options)
            .field("sandbox", &self.sandbox)
            .field("interactive", &self.interactive)
            .field("interactive_ungated", &self.interactive_ungated)
            .field("terminal_size", &self.terminal_size)
            .field("limits", &self.limits)
            .finish()
    }
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            working_directory: None,
            allowed_commands: None,
            policy: Policy::new(),
            approver: None,
            redact_names: Vec::new(),
            redact_auto: true,
            redact_values: Vec::new(),
            validator: None,
            default_timeout: defaults::DEFAULT_TIMEOUT,
            max_timeout: defaults::MAX_TIMEOUT,
            output_limit: defaults::OUTPUT_LIMIT,
            kill_grace: defaults::KILL_GRACE,
            block_timeout: defaults::BLOCK_TIMEOUT,
            monitor_timeout: defaults::MONITOR_TIMEOUT,
            monitor_max_timeout: defaults::MONITOR_MAX_TIMEOUT,
            monitor_unattended_max_timeout: defaults::MONITOR_UNATTENDED_MAX_TIMEOUT,
            monitor_min_timeout: defaults::MONITOR_MIN_TIMEOUT,
            unattended: None,
            max_output_bytes: defaults::MAX_OUTPUT_BYTES,
            noninteractive_env: defaults::NONINTERACTIVE_ENV,
            render_output: defaults::RENDER_OUTPUT,
            persist_working_directory: defaults::PERSIST_WORKING_DIRECTORY,
            persist_environment: defaults::PERSIST_ENVIRONMENT,
            env: Vec::new(),
            env_remove: Vec::new(),
            output_root: None,
            tasks: None,
            monitor_options: MonitorOptions::default(),
            sandbox: None,
            interactive: defaults::INTERACTIVE,
            interactive_ungated: false,
            terminal_size: defaults::TERMINAL_SIZE,
            limits: Limits::default(),
        }
    }
}

impl Builder {
    /// Where commands run unless the call or the caller names another
    /// directory. Default: the process's current directory at `build()`.
    pub fn working_directory(mut self, dir: impl Into<PathBuf>) -> Self {
        self.working_directory = Some(dir.into());
        self
    }

    /// The only commands allowed: each entry a command word or a prefix of
    /// words (`"git status"`, `"git [log diff]"`), an allow rule of the
    /// [`Policy`]. Every simple command of a line is checked (see
    /// [`gate::check_allowed`](crate::gate::check_allowed)), not just the
    /// first word; a command no entry allows is refused (or asked, with
    /// [`unlisted`](Self::unlisted)). Default: no list, everything allowed.
    /// An entry that is no rule fails [`build`](Self::build)
    /// ([`ErrorKind::RuleInvalid`](crate::ErrorKind::RuleInvalid)).
    pub fn allowed_commands<I, S>(mut self, words: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_commands = Some(words.into_iter().map(Into::into).collect());
        self
    }

    /// Asked with the command and its working directory before anything
    /// starts; `Err(reason)` refuses it with `Command REASON`. A validator that
    /// panics refuses the command.
    pub fn validator<F>(mut self, validator: F) -> Self
    where
        F: Fn(&str, &Path) -> Result<(), String> + Send + Sync + 'static,
    {
        self.validator = Some(Arc::new(validator));
        self
    }

    /// Foreground time of a `bash` call that gives no `timeout` (120 s).
    pub fn default_timeout(mut self, d: Duration) -> Self {
        self.default_timeout = d;
        self
    }

    /// The cap of `bash` and `bash_output` timeouts (600 s); larger ones are cut down.
    pub fn max_timeout(mut self, d: Duration) -> Self {
        self.max_timeout = d;
        self
    }

    /// Characters (not bytes) a result carries (30 000); longer output keeps
    /// its head and its tail.
    pub fn output_limit(mut self, chars: usize) -> Self {
        self.output_limit = chars;
        self
    }

    /// Time between SIGTERM and SIGKILL when a shell is stopped (5 s).
    pub fn kill_grace(mut self, d: Duration) -> Self {
        self.kill_grace = d;
        self
    }

    /// How long `bash_output` with `block` waits without a `timeout` (30 s).
    pub fn block_timeout(mut self, d: Duration) -> Self {
        self.block_timeout = d;
        self
    }

    /// A monitor's watch without `timeout_ms` (300 s).
    pub fn monitor_timeout(mut self, d: Duration) -> Self {
        self.monitor_timeout = d;
        self
    }

    /// The cap of a monitor's `timeout_ms` (1800 s).
    pub fn monitor_max_timeout(mut self, d: Duration) -> Self {
        self.monitor_max_timeout = d;
        self
    }

    /// The cap of `timeout_ms` when [`unattended`](Self::unattended) says
    /// nobody is at the keyboard (600 s).
    pub fn monitor_unattended_max_timeout(mut self, d: Duration) -> Self {
        self.monitor_unattended_max_timeout = d;
        self
    }

    /// The floor of a monitor's `timeout_ms` (1 s; tests lower it).
    pub fn monitor_min_timeout(mut self, d: Duration) -> Self {
        self.monitor_min_timeout = d;
        self
    }

    /// Asked when a monitor starts: `true` when the run has nobody to ask.
    pub fn unattended<F>(mut self, f: F) -> Self
    where
        F: Fn() -> bool + Send + Sync + 'static,
    {
        self.unattended = Some(Arc::new(f));
        self
    }

    /// An output file past this many bytes stops its shell (1 GiB), so a
    /// runaway command cannot fill the disk.
    pub fn max_output_bytes(mut self, bytes: u64) -> Self {
        self.max_output_bytes = bytes;
        self
    }

    /// Set `PAGER=cat`, `GIT_PAGER=cat`, `GIT_EDITOR=true` and `TERM=dumb` for
    /// every command (default `true`): pagers and editors waiting for a
    /// terminal are the classic hang of an agent's shell.
    pub fn noninteractive_env(mut self, on: bool) -> Self {
        self.noninteractive_env = on;
        self
    }

    /// Show output as a terminal would (default `true`): escape sequences
    /// (colours, cursor moves) removed, a `\r` returning to column 0 so a
    /// progress bar collapses to its last state, backspace applied, `\r\n`
    /// a newline — in `bash`, `bash_output`, `write_stdin` and monitor
    /// events, before the output is cut to `output_limit`. Output files keep
    /// the raw bytes. `false` shows the bytes as written.
    pub fn render_output(mut self, on: bool) -> Self {
        self.render_output = on;
        self
    }

    /// Whether the directory a foreground command ends in becomes its
    /// caller's for the next commands, as in Claude Code's Bash: `cd sub`,
    /// then `ls` lists `sub`. Kept per recipient (see
    /// [`Caller::recipient`](crate::Caller::recipient)). Default: off
    /// ([`defaults::PERSIST_WORKING_DIRECTORY`]; on in `bashtools-mcp`).
    ///
    /// Which directory a command starts in, first match wins: the call's
    /// [`working_directory`](crate::Command::working_directory); the
    /// directory the recipient's last foreground command ended in, as long
    /// as the caller's own
    /// [`working_directory`](crate::Caller::working_directory) is the one
    /// that command started from (an embedder that moves its caller
    /// elsewhere moves it for good); the caller's working directory; the
    /// configured one.
    ///
    /// - Only a foreground command that ends on its own, in the directory
    ///   it was given by this order, is recorded, whatever its exit code
    ///   (`cd sub && false` leaves the recipient in `sub`). A command run
    ///   with its own `working_directory`, started in the background or
    ///   moved there at its timeout, a monitor, or a command stopped
    ///   (`kill_shell`, `stop_all`, the output cap) changes nothing;
    ///   background commands and monitors start in the recorded directory.
    /// - A recorded directory that no longer exists (or lies outside the
    ///   sandbox) is dropped: the command runs where it would without it,
    ///   and its result says so in one line (a `bash` result; a monitor
    ///   falls back the same way without a word).
    /// - Two foreground commands of one recipient at once: the one that
    ///   ends last decides.
    /// - How it is found out: an `EXIT` trap set from a startup file
    ///   (`BASH_ENV`) writes `pwd -P` to a private file. The output and the
    ///   exit status are unchanged, and a command's own `EXIT` trap still
    ///   runs. Not covered (the directory then stays as it was): `exec`,
    ///   an `EXIT` trap set with `builtin trap` or in POSIX mode, a shell
    ///   killed by SIGKILL.
    pub fn persist_working_directory(mut self, on: bool) -> Self {
        self.persist_working_directory = on;
        self
    }

    /// Whether the exported variables a foreground command sets or unsets
    /// (`export`, `unset`, a sourced `venv/bin/activate`) carry to the same
    /// recipient's next commands, foreground and background (default:
    /// false; on in `bashtools-mcp`, `--no-persist-env` turns it off).
    ///
    /// - They travel as environment entries, never as code: a value
    ///   `$(touch x)` stays those characters. Functions, aliases and shell
    ///   options are not carried; nor are `SHLVL`, `PWD`, `OLDPWD` and `_`.
    /// - Under [`allowed_commands`](Self::allowed_commands), a variable the
    ///   gate refuses to assign (`PATH`, `LD_*`, `BASH_ENV`, …) is refused
    ///   as ever when the gate sees the assignment; set where it cannot
    ///   (a sourced file, a program), it is not carried, and the result's
    ///   last lines say `Note: NAME was not kept: it changes what runs`.
    /// - At most 64 KiB (names plus values) is carried; a variable past it
    ///   is not, with `Note: NAME was not kept: the carried environment is
    ///   limited to 64 KiB`.
    /// - As for the directory: a command stopped, moved to the background,
    ///   or whose `EXIT` trap replaced ours (or that `exec`s) changes
    ///   nothing.
    ///
    /// ```no_run
    /// use bashtools::{BashTools, Caller, Command, Outcome};
    /// let tools = BashTools::builder().persist_environment(true).build()?;
    /// tools.run(&Command::new("export GREETING=hello"), &Caller::default())?;
    /// let Outcome::Exited(e) = tools.run(&Command::new("echo $GREETING"), &Caller::default())? else {
    ///     panic!()
    /// };
    /// assert_eq!(e.output(), "hello");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn persist_environment(mut self, on: bool) -> Self {
        self.persist_environment = on;
        self
    }

    /// Set a variable for every command (after the non-interactive ones, so it
    /// can override them).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Remove a variable from every command's environment.
    pub fn env_remove(mut self, key: impl Into<OsString>) -> Self {
        self.env_remove.push(key.into());
        self
    }

    /// The application's registry of background work (contract §6).
    /// With it, background shells and monitors register there, send a
    /// notification when they end, and take IDs unique across every
    /// `BashTools` sharing it; `bash_output` and `kill_shell` reach its other
    /// entries; and the `monitor` tool is available.
    pub fn tasks(mut self, tasks: Tasks) -> Self {
        self.tasks = Some(tasks);
        self
    }

    /// How every monitor batches its lines (contract §7).
    pub fn monitor_options(mut self, options: MonitorOptions) -> Self {
        self.monitor_options = options;
        self
    }

    /// The directory in which the private output directory is made (default:
    /// [`std::env::temp_dir`]). Not in the spec: for hosts whose temp
    /// directory is small or shared.
    pub fn output_root(mut self, dir: impl Into<PathBuf>) -> Self {
        self.output_root = Some(dir.into());
        self
    }

    /// Checks the options and builds the tools.
    ///
    /// # Errors
    /// A working directory that does not exist or is not a directory, an
    /// output directory that cannot be made, a thread the tools need
    /// that cannot be started, a sandbox that cannot be set up or, not
    /// best effort, enforced, and interactive commands beside a gate
    /// without `interactive_ungated` ([`ErrorKind`](crate::ErrorKind)).
    pub fn build(self) -> Result<BashTools, Error> {
        let limits = self.limits;
        limits.check().map_err(Error::limit)?;
        crate::timer::start().map_err(|e| Error::thread("timer thread", e))?;
        let (config, gates, tasks, tmp) = self.resolve()?;
        let outdir = OutputDir::create(&config.output_root)
            .map_err(|e| Error::output_directory(config.output_root.clone(), e))?;
        let config = Arc::new(config);
        let (restrictions, status) = match &config.sandbox {
            Some(policy) => {
                let (restrictions, status) = prepare_sandbox(policy)?;
                (restrictions, Some(status))
            }
            None => (None, None),
        };
        // The reaper before any child: started later, from a thread that
        // blocks SIGCHLD, it would still get every exit, but a failure to
        // start it is best told here.
        crate::os::reaper::init().map_err(|e| Error::thread("reaper", e))?;
        let process = Arc::new(
            RealProcess::new(
                config.clone(),
                outdir.path(),
                restrictions,
                Via::from_env(),
                limits,
            )
            .map_err(Error::limit)?,
        );
        let sandbox = tmp.zip(status);
        BashTools::from_parts(config, gates, tasks, outdir, process, sandbox)
    }

    /// Builds tools whose commands are `process`'s (a fake, in tests).
    #[cfg(test)]
    pub(crate) fn build_with(
        self,
        process: Arc<dyn crate::os::process::Process>,
    ) -> Result<BashTools, Error> {
        let (config, gates, tasks, _) = self.resolve()?;
        let outdir = OutputDir::create(&config.output_root)
            .map_err(|e| Error::output_directory(config.output_root.clone(), e))?;
        BashTools::from_parts(Arc::new(config), gates, tasks, outdir, process, None)
    }
}

mod confinement;
mod policy;
mod redact;
mod resolve;
mod sandbox_setup;
use sandbox_setup::prepare_sandbox;
