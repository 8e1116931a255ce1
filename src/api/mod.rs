//! The typed public API: what a Rust program calls. The JSON tools
//! ([`BashTools::bash`] and the others) are a thin edge over it.

pub(crate) mod builder;
pub(crate) mod core;
mod environment;
pub(crate) mod foreground;
mod monitor;
pub(crate) mod reads;
mod settings;
mod start;
mod stop;
pub(crate) mod types;

#[cfg(test)]
mod state_machine_tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use regex::Regex;

use self::core::Core;
pub(crate) use self::settings::timeout_secs;
pub use self::settings::Settings;
use self::types::{CallError, Command, EndNotice, NewOutput, Outcome, ShellId, ShellInfo};
use crate::caller::Caller;
use crate::config::Config;
use crate::error::Error;
use crate::os::contain::Containment;
use crate::os::files::outdir::OutputDir;
use crate::os::process::Process;
use crate::os::sandbox::SandboxStatus;
pub(crate) use crate::pending::{Completer, Pending};
use crate::shells::ExitWaiter;
use crate::status::TaskStatus;
use crate::tasks::Tasks;
use crate::{deadline, texts, timer, Builder};

/// The shell tools. `Clone + Send + Sync`: clones are handles to the same
/// shells. When the last clone is dropped every shell it started is stopped
/// and the output directory removed (see [`close`](Self::close)).
///
/// Two ways in: the typed API ([`run`](Self::run), [`status`](Self::status),
/// [`read_output`](Self::read_output), [`wait`](Self::wait),
/// [`kill`](Self::kill)), for a program; and the JSON tools
/// ([`bash`](Self::bash), [`bash_output`](Self::bash_output),
/// [`kill_shell`](Self::kill_shell), [`monitor`](Self::monitor)), whose
/// answers are the texts a model reads.
///
/// ```
/// use bashtools::{BashTools, Caller, Command, Outcome};
/// let tools = BashTools::builder().build()?;
/// match tools.run(&Command::new("echo hi; exit 3"), &Caller::default())? {
///     Outcome::Exited(e) => assert_eq!((e.code(), e.output()), (3, "hi")),
///     other => panic!("{other:?}"),
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct BashTools {
    owner: Arc<Owner>,
}

/// The one owner of the shared state: its drop ends the tools.
struct Owner {
    core: Arc<Core>,
    /// What the sandbox enforces, and its private temporary directory
    /// (removed after the shells are stopped), when there is one.
    sandbox: Option<(OutputDir, SandboxStatus)>,
    /// The process that built the tools: only its drop ends them.
    pid: u32,
}

impl Drop for Owner {
    fn drop(&mut self) {
        if std::process::id() != self.pid {
            // A copy in a child forked without exec: its shells, cells and
            // directories are the parent's, and the threads that would stop
            // them are not in this process. Leave everything to the parent:
            // one more count that is never given back keeps the core (and
            // all it owns) from being dropped here.
            std::mem::forget(self.core.clone());
            if let Some((tmp, _)) = self.sandbox.take() {
                std::mem::forget(tmp);
            }
            return;
        }
        self.core.close();
        self.core.shells.remove_output_directory();
        if let Some((tmp, _)) = &self.sandbox {
            tmp.remove();
        }
    }
}

impl std::fmt::Debug for BashTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BashTools")
            .field("working_directory", &self.core().config.working_directory)
            .field("output_directory", &self.output_directory())
            .field("tasks", &self.core().tasks.is_some())
            .field("sandbox", &self.sandbox_status())
            .finish_non_exhaustive()
    }
}

impl BashTools {
    /// A [`Builder`] with the defaults (those of Claude Code).
    pub fn builder() -> Builder {
        Builder::default()
    }

    pub(crate) fn from_parts(
        config: Arc<Config>,
        gates: core::Gates,
        tasks: Option<Tasks>,
        outdir: OutputDir,
        process: Arc<dyn Process>,
        sandbox: Option<(OutputDir, SandboxStatus)>,
    ) -> Result<BashTools, Error> {
        let core = Core::new(config, gates, tasks, outdir, process);
        Ok(BashTools {
            owner: Arc::new(Owner {
                core,
                sandbox,
                pid: std::process::id(),
            }),
        })
    }

    /// What the [`Sandbox`](crate::Sandbox) enforces on this kernel; `None`
    /// without one. Asked of the kernel once, when the tools were built.
    ///
    /// ```
    /// let tools = bashtools::BashTools::builder().build()?;
    /// assert_eq!(tools.sandbox_status(), None);
    /// # Ok::<(), bashtools::Error>(())
    /// ```
    pub fn sandbox_status(&self) -> Option<SandboxStatus> {
        self.owner.sandbox.as_ref().map(|&(_, status)| status)
    }

    pub(crate) fn core(&self) -> &Arc<Core> {
        &self.owner.core
    }

    // ------------------------------------------------------------ typed API

    /// Runs `cmd` (as `bash -c`) and blocks until it exits, or until its
    /// timeout moves it to the background, or answers at once when it
    /// starts in the background or a gate refuses it.
    ///
    /// # Errors
    /// A blank command or one with a NUL byte, a working directory that is
    /// missing or outside the sandbox, a spawn that failed, or tools that
    /// have ended.
    pub fn run(&self, cmd: &Command, caller: &Caller) -> Result<Outcome, CallError> {
        self.core().run(cmd, caller)
    }

    /// [`run`](Self::run) as a [`Pending`]: no thread of the caller's waits.
    /// Its [`command`](Pending::command) handle stops the command. Dropping it
    /// does not stop the command: at its timeout it moves to the background
    /// like any other.
    pub fn run_f(&self, cmd: &Command, caller: &Caller) -> Pending<Result<Outcome, CallError>> {
        foreground::run_f(self.core(), cmd, caller, Arc::new(|r| r))
    }

    /// `text` with the secrets of these tools masked as `[redacted NAME]`,
    /// as every text the model reads is (the values of secret variables of
    /// the commands' environment, carried ones included, and
    /// [`redact_values`](crate::Builder::redact_values)); borrowed when
    /// nothing was masked, so a host can tell, for an audit log, whether a
    /// text of its own held a secret.
    ///
    /// ```
    /// use std::borrow::Cow;
    /// let tools = bashtools::BashTools::builder()
    ///     .redact_values(["s3cr3t-value-123"])
    ///     .build()?;
    /// assert_eq!(tools.redact("key: s3cr3t-value-123"), "key: [redacted value]");
    /// assert!(matches!(tools.redact("nothing here"), Cow::Borrowed(_)));
    /// # Ok::<(), bashtools::Error>(())
    /// ```
    pub fn redact<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        let secrets = self.core().secrets.read().clone();
        match secrets.mask(text) {
            std::borrow::Cow::Borrowed(_) => std::borrow::Cow::Borrowed(text),
            std::borrow::Cow::Owned(masked) => std::borrow::Cow::Owned(masked),
        }
    }

    /// The state of background shell `id`.
    ///
    /// # Errors
    /// [`CallError::UnknownId`] for an ID that is not a shell of these tools.
    pub fn status(&self, id: &ShellId) -> Result<ShellInfo, CallError> {
        self.core().check_open()?;
        self.key(id).and_then(|k| self.info(id, k))
    }

    /// What shell `id` wrote since the last read (by this call or
    /// `bash_output`), only the lines matching `filter` if one is given.
    ///
    /// # Errors
    /// An unknown ID, or an output file that cannot be read.
    pub fn read_output(
        &self,
        id: &ShellId,
        filter: Option<&Regex>,
    ) -> Result<NewOutput, CallError> {
        self.core().check_open()?;
        let key = self.key(id)?;
        self.core().read_output(key, filter)
    }

    /// Waits until shell `id` has ended or `timeout` passed (a huge timeout
    /// is no deadline), and returns its state then.
    ///
    /// # Errors
    /// An unknown ID.
    pub fn wait(&self, id: &ShellId, timeout: Duration) -> Result<ShellInfo, CallError> {
        self.core().check_open()?;
        let key = self.key(id)?;
        let table = self.core().shells.table();
        let inner = table.lock();
        drop(table.wait_exited(inner, &[key], deadline::after(timeout)));
        self.info(id, key)
    }

    /// [`wait`](Self::wait) as a [`Pending`].
    pub fn wait_f(&self, id: &ShellId, timeout: Duration) -> Pending<Result<ShellInfo, CallError>> {
        let key = match self.core().check_open().and_then(|()| self.key(id)) {
            Ok(k) => k,
            Err(e) => return Pending::ready(Err(e)),
        };
        let (pending, completer) = Pending::new();
        let waiter = InfoWaiter {
            core: self.core().clone(),
            id: id.clone(),
            key,
            completer,
        };
        if let Some(at) = deadline::after(timeout) {
            let late = waiter.clone();
            timer::at(at, move || late.complete());
        }
        self.core().shells.table().on_exit(key, Box::new(waiter));
        pending
    }

    /// Stops background shell `id` and everything it started (SIGTERM,
    /// `kill_grace`, SIGKILL) and returns its state once it is gone.
    ///
    /// # Errors
    /// [`CallError::UnknownId`], or [`CallError::NotRunning`] for a shell
    /// that has ended already.
    pub fn kill(&self, id: &ShellId) -> Result<ShellInfo, CallError> {
        self.core().check_open()?;
        self.core().kill(id.as_str())
    }

    /// The typed `write_stdin`: types `input` into the terminal of
    /// interactive shell `id` (started with [`Command::interactive`]), as a
    /// keyboard would: `\n` is Enter,
    /// `\u{3}` Ctrl-C, `\u{4}` Ctrl-D. Then waits up to `yield_time` (at
    /// most `max_timeout`) for what it prints, returning early once that
    /// output has paused for 200 ms or the shell has ended, and returns
    /// its new output as [`read_output`](Self::read_output) does.
    ///
    /// What is typed passes no gate: `allowed_commands` and the validator
    /// check command lines only (see [`Builder::interactive`]).
    ///
    /// # Errors
    /// [`CallError::InteractiveOff`] without the option,
    /// [`CallError::UnknownId`], [`CallError::NotInteractive`] for a shell
    /// started without a terminal, [`CallError::NotRunning`] for one that
    /// has ended, [`CallError::TerminalClosed`] when nothing holds its
    /// terminal any more, [`CallError::InputBacklog`] when its program has
    /// not read what it was given before and this input would pass the
    /// 1 MiB that may wait for it (nothing of it is sent).
    pub fn send_input(
        &self,
        id: &ShellId,
        input: &str,
        yield_time: Duration,
    ) -> Result<NewOutput, CallError> {
        self.core().check_open()?;
        self.core()
            .write_stdin(id.as_str(), input.as_bytes(), yield_time)
    }

    /// Waits up to `yield_time` (at most `max_timeout`) for interactive
    /// shell `id` to print something not read yet, returning early once
    /// that output has paused for 200 ms or the shell has ended, and
    /// returns its new output. What the `bash` tool answers an interactive
    /// command with: its first yield.
    ///
    /// # Errors
    /// [`CallError::UnknownId`], [`CallError::NotInteractive`].
    pub fn yield_output(&self, id: &ShellId, yield_time: Duration) -> Result<NewOutput, CallError> {
        self.core().check_open()?;
        let key = self.key(id)?;
        self.core().yield_unread(key, yield_time)
    }

    fn key(&self, id: &ShellId) -> Result<u64, CallError> {
        self.core()
            .key_of(id.as_str())
            .ok_or_else(|| CallError::UnknownId(id.to_string()))
    }

    fn info(&self, id: &ShellId, key: u64) -> Result<ShellInfo, CallError> {
        self.core()
            .info(key)
            .ok_or_else(|| CallError::UnknownId(id.to_string()))
    }

    /// The `<task-notification>` of a background shell's end and the line a
    /// surface shows for it, for shell `id` as if it ended with `status`.
    /// `None` for an ID these tools do not know.
    pub fn notification(&self, id: &ShellId, status: TaskStatus) -> Option<EndNotice> {
        let key = self.core().key_of(id.as_str())?;
        let inner = self.core().shells.table().lock();
        let s = inner.get(key)?;
        let code = s.exit_code().unwrap_or(if status == TaskStatus::Completed {
            0
        } else {
            1
        });
        let label = texts::shell_summary(s.what(), status, code);
        let text = texts::end_notification(id.as_str(), s.call(), s.output(), status, &label);
        Some(EndNotice { text, label })
    }

    // ------------------------------------------------------------ the whole

    /// Pids of the running background shells and of the foreground commands
    /// of detached callers: what a surface that cancels a run must leave alone.
    pub fn background_pids(&self) -> Vec<u32> {
        self.core().shells.background_pids()
    }

    /// Stops every running shell and monitor (SIGTERM, `kill_grace`,
    /// SIGKILL, all at once), and what ended commands left running. The
    /// tools stay usable: the stopped shells report `killed`, and a new
    /// command starts a new shell. Idempotent.
    pub fn stop_all(&self) {
        self.core().stop_all();
    }

    /// Ends the tools: stops everything, as [`stop_all`](Self::stop_all),
    /// and answers every later call (of any clone) with an error. Dropping
    /// the last clone calls it, as a last line of defense; the MCP server
    /// calls it at the end of its session.
    pub fn close(&self) {
        self.core().close();
    }

    /// How the commands are contained: [`Containment::Cgroup`] where a
    /// cgroup could be made for these tools (cgroup v2, writable: root, or
    /// a delegated subtree), else [`Containment::Session`]. Decided when
    /// the value is built; `BASHTOOLS_CONTAINMENT=session` in the
    /// environment asks for sessions.
    pub fn containment(&self) -> Containment {
        self.core().shells.process().containment()
    }

    /// The process limit every command gets (`Ok(n)`), or why there is
    /// none (`Err(reason)`): [`DEFAULT_PIDS_LIMIT`](crate::DEFAULT_PIDS_LIMIT)
    /// by default where cgroups with the pids controller can be made.
    ///
    /// ```no_run
    /// let tools = bashtools::BashTools::builder().build()?;
    /// match tools.pids_limit() {
    ///     Ok(n) => println!("limits: pids {n}"),
    ///     Err(why) => println!("limits: pids not applied ({why})"),
    /// }
    /// # Ok::<(), bashtools::Error>(())
    /// ```
    pub fn pids_limit(&self) -> Result<u64, crate::limits::NoPidsLimit> {
        self.core().shells.process().pids_limit()
    }

    /// The cgroup that holds every command of these tools, in cgroup mode.
    pub fn cgroup(&self) -> Option<PathBuf> {
        self.core().shells.process().cgroup()
    }

    /// The task registry these tools notify, if one was configured.
    pub fn tasks(&self) -> Option<&Tasks> {
        self.core().tasks.as_ref()
    }

    /// The private directory the output files are written to (removed when
    /// the last clone is dropped).
    pub fn output_directory(&self) -> &Path {
        self.core().shells.output_directory()
    }

    /// The settings these tools were built with.
    pub fn settings(&self) -> Settings<'_> {
        Settings {
            config: &self.core().config,
        }
    }
}

/// Completes a [`BashTools::wait_f`] at the exit or the deadline.
#[derive(Clone)]
struct InfoWaiter {
    core: Arc<Core>,
    id: ShellId,
    key: u64,
    completer: Completer<Result<ShellInfo, CallError>>,
}

impl InfoWaiter {
    fn complete(self) {
        let InfoWaiter {
            core,
            id,
            key,
            completer,
        } = self;
        completer.complete_with(move || {
            core.info(key)
                .ok_or_else(|| CallError::UnknownId(id.to_string()))
        });
    }
}

impl ExitWaiter for InfoWaiter {
    fn is_stale(&self) -> bool {
        self.completer.is_done()
    }
    fn exited(self: Box<Self>) {
        self.complete();
    }
}
