//! What every handle of one `BashTools` shares, and the typed operations
//! the public API and the JSON tools are made of: start a command, settle
//! it at its exit or timeout, read a shell, wait for it, kill it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::Mutex;
use regex::Regex;

use super::types::{
    Backgrounded, CallError, Command, CwdReset, Exited, NewOutput, Outcome, Refusal, ShellId,
    ShellInfo, StopCause,
};
use crate::caller::Caller;
use crate::config::Config;
use crate::deadline;
use crate::os::outdir::OutputDir;
use crate::os::process::Process;
use crate::shells::{
    Ended, Key, Kind, NewShell, Settled, Shell, StartError, Stdio, StopReason, Supervisor,
};
use crate::status::TaskStatus;
use crate::tasks::{TaskInfo, Tasks};
use crate::{gate, output, texts};

pub(crate) struct Core {
    pub config: Arc<Config>,
    pub tasks: Option<Tasks>,
    pub shells: Arc<Supervisor>,
    /// The N of the next `bash_N` when there is no registry to ask.
    next_bash: AtomicU64,
    /// The reader threads of monitors, joined by `stop_all` so every end
    /// notice has been sent when it returns.
    readers: Mutex<Vec<JoinHandle<()>>>,
    /// With `persist_working_directory`: where each recipient's last
    /// foreground command ended.
    last_dirs: Mutex<HashMap<String, LastDir>>,
}

/// Where a recipient's last foreground command ended, and the caller's own
/// working directory it started from: the record holds only while the
/// caller still names that one.
struct LastDir {
    dir: PathBuf,
    base: Option<PathBuf>,
}

/// What starting a command led to.
pub(crate) enum Started {
    /// Refused by a gate, or started in the background: known at once.
    Answered(Outcome),
    /// Running in the foreground until `timeout`.
    Foreground {
        key: Key,
        timeout: Duration,
        place: Place,
    },
}

/// Where a foreground command started, for its settling: whose directory
/// its end may become, and whether the recorded one had to be dropped.
#[derive(Debug, Clone)]
pub(crate) struct Place {
    recipient: String,
    base: Option<PathBuf>,
    reset: Option<CwdReset>,
}

impl Core {
    pub(crate) fn new(
        config: Arc<Config>,
        tasks: Option<Tasks>,
        outdir: OutputDir,
        process: Arc<dyn Process>,
    ) -> Arc<Core> {
        let on_end = {
            let tasks = tasks.clone();
            Arc::new(move |ended: Ended| {
                if let Some(tasks) = &tasks {
                    notify_end(tasks, &ended);
                }
            })
        };
        let shells = Arc::new(Supervisor::new(
            process,
            outdir,
            config.kill_grace,
            config.max_output_bytes,
            on_end,
        ));
        Arc::new(Core {
            config,
            tasks,
            shells,
            next_bash: AtomicU64::new(1),
            readers: Mutex::new(Vec::new()),
            last_dirs: Mutex::new(HashMap::new()),
        })
    }

    /// The next `bash_N`: from the registry when there is one, so IDs are
    /// unique across every `BashTools` sharing it.
    pub(crate) fn next_bash_id(&self) -> String {
        match &self.tasks {
            Some(tasks) => tasks.next_id("bash"),
            None => format!("bash_{}", self.next_bash.fetch_add(1, Ordering::Relaxed)),
        }
    }

    /// Whether a background shell's end will be delivered as a notification.
    pub(crate) fn notifies(&self) -> bool {
        self.tasks.is_some()
    }

    pub(crate) fn check_open(&self) -> Result<(), CallError> {
        if self.shells.table().lock().is_closed() {
            Err(CallError::Closed)
        } else {
            Ok(())
        }
    }

    /// Registers background shell `key` in the registry. Run under the
    /// table's lock (see [`Supervisor::start`]), so its end always finds
    /// its entry.
    pub(crate) fn register(&self, shell: &Shell, key: Key) {
        let (Some(tasks), Some(id)) = (&self.tasks, shell.id()) else {
            return;
        };
        let shells = self.shells.downgrade();
        tasks.insert(
            TaskInfo {
                id: id.to_string(),
                kind: if shell.kind() == Kind::Monitor {
                    "monitor"
                } else {
                    "bash"
                }
                .to_string(),
                name: None,
                description: shell.what().to_string(),
                status: TaskStatus::Running,
                report: None,
                error: None,
                recipient: shell.recipient().to_string(),
            },
            shell.call().map(str::to_string),
            Some(Arc::new(move || {
                if let Some(shells) = shells.upgrade() {
                    shells.stop(&[key], StopReason::Killed);
                }
            })),
        );
    }

    /// The directory a command runs in: the call's, else the caller's, else
    /// the configured one; relative paths are taken from the configured one.
    /// With a sandbox it must lie inside one of its write roots.
    pub(crate) fn resolve_cwd(
        &self,
        arg: Option<&Path>,
        caller: &Caller,
    ) -> Result<PathBuf, CallError> {
        let base = &self.config.working_directory;
        let dir = match (arg, caller.get_working_directory()) {
            (Some(a), _) => base.join(a),
            (None, Some(c)) => base.join(c),
            (None, None) => base.clone(),
        };
        self.check_dir(&dir)?;
        Ok(dir)
    }

    /// The directory a command starts in: [`resolve_cwd`](Self::resolve_cwd),
    /// except that with `persist_working_directory` and no directory of
    /// the call's own, where the recipient's last foreground command ended
    /// comes first — if it is still usable; else it is forgotten and the
    /// reset returned.
    pub(crate) fn start_dir(
        &self,
        arg: Option<&Path>,
        caller: &Caller,
    ) -> Result<(PathBuf, Option<CwdReset>), CallError> {
        if arg.is_none() && self.config.persist_working_directory {
            if let Some(last) = self.last_dir(caller) {
                match self.check_dir(&last) {
                    Ok(()) => return Ok((last, None)),
                    Err(e) => {
                        self.last_dirs.lock().remove(caller.get_recipient());
                        let ran_in = self.resolve_cwd(None, caller)?;
                        let reset = CwdReset {
                            lost: last,
                            ran_in: ran_in.clone(),
                            outside_sandbox: matches!(e, CallError::OutsideSandbox(_)),
                        };
                        return Ok((ran_in, Some(reset)));
                    }
                }
            }
        }
        Ok((self.resolve_cwd(arg, caller)?, None))
    }

    /// Where `caller`'s recipient last ended, while its caller's own
    /// directory is the one it started from.
    fn last_dir(&self, caller: &Caller) -> Option<PathBuf> {
        let dirs = self.last_dirs.lock();
        let last = dirs.get(caller.get_recipient())?;
        (last.base.as_deref() == caller.get_working_directory()).then(|| last.dir.clone())
    }

    /// Keeps `dir` as where `place`'s recipient ended.
    fn keep_last_dir(&self, place: &Place, dir: PathBuf) {
        self.last_dirs.lock().insert(
            place.recipient.clone(),
            LastDir {
                dir,
                base: place.base.clone(),
            },
        );
    }

    /// A directory a command may run in: one that exists and, with a
    /// sandbox, lies inside one of its write roots.
    fn check_dir(&self, dir: &Path) -> Result<(), CallError> {
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(CallError::NotADirectory(dir.to_path_buf())),
            Err(_) => return Err(CallError::NoSuchDirectory(dir.to_path_buf())),
        }
        if let Some(sandbox) = &self.config.sandbox {
            // Resolved as the kernel will: a symlink out of a root is out.
            let inside = dir
                .canonicalize()
                .is_ok_and(|real| sandbox.allows_cwd(&real));
            if !inside {
                return Err(CallError::OutsideSandbox(dir.to_path_buf()));
            }
        }
        Ok(())
    }

    /// The gates: `allowed_commands`, then the validator.
    pub(crate) fn check_gates(&self, command: &str, cwd: &Path) -> Result<(), Refusal> {
        if let Some(allowed) = &self.config.allowed_commands {
            gate::check_allowed(command, allowed).map_err(Refusal::NotAllowed)?;
        }
        if let Some(validator) = &self.config.validator {
            let verdict =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| validator(command, cwd)));
            match verdict {
                Ok(Ok(())) => {}
                Ok(Err(reason)) => return Err(Refusal::Validator(reason)),
                Err(_) => return Err(Refusal::ValidatorPanicked),
            }
        }
        Ok(())
    }

    /// Checks a command line before anything else is looked at.
    pub(crate) fn check_command(command: &str) -> Result<(), CallError> {
        if command.trim().is_empty() {
            return Err(CallError::NoCommand);
        }
        if command.contains('\0') {
            return Err(CallError::NulInCommand);
        }
        Ok(())
    }

    /// The foreground time of `cmd`: its own, else the default; at most the cap.
    pub(crate) fn timeout_of(&self, cmd: &Command) -> Duration {
        cmd.get_timeout()
            .unwrap_or(self.config.default_timeout)
            .min(self.config.max_timeout)
    }

    /// Checks and starts `cmd`: in the background at once, or in the
    /// foreground until its timeout.
    pub(crate) fn start(
        self: &Arc<Self>,
        cmd: &Command,
        caller: &Caller,
    ) -> Result<Started, CallError> {
        Core::check_command(cmd.get_command())?;
        self.check_open()?;
        if cmd.is_interactive() && !self.config.interactive {
            return Err(CallError::InteractiveOff);
        }
        if cmd.is_interactive() && cmd.get_stdin().is_some() {
            return Err(CallError::StdinWithInteractive);
        }
        let (cwd, reset) = self.start_dir(cmd.get_working_directory(), caller)?;
        if let Err(refusal) = self.check_gates(cmd.get_command(), &cwd) {
            return Ok(Started::Answered(Outcome::Refused(refusal)));
        }
        let id = cmd.is_background().then(|| self.next_bash_id());
        let new = NewShell {
            command: cmd.get_command().to_string(),
            description: cmd.get_description().map(str::to_string),
            id: id.clone(),
            kind: if id.is_some() {
                Kind::Background
            } else {
                Kind::Foreground
            },
            recipient: caller.get_recipient().to_string(),
            call: caller.get_call().map(str::to_string),
            detached: caller.is_detached(),
        };
        let key = self.start_shell(
            new,
            &cwd,
            Stdio {
                stdout: None,
                terminal: cmd.is_interactive().then_some(self.config.terminal_size),
                stdin: cmd.get_stdin().map(str::to_string),
                // Only where it ends from where this order put it.
                record_cwd: self.config.persist_working_directory
                    && id.is_none()
                    && cmd.get_working_directory().is_none(),
            },
        )?;
        match id {
            Some(id) => {
                let output_file = self.output_of(key).unwrap_or_default();
                Ok(Started::Answered(Outcome::Background(Backgrounded {
                    id: ShellId::from(id),
                    output_file,
                    after: None,
                    notified: self.notifies(),
                    cwd_reset: reset,
                })))
            }
            None => Ok(Started::Foreground {
                key,
                timeout: self.timeout_of(cmd),
                place: Place {
                    recipient: caller.get_recipient().to_string(),
                    base: caller.get_working_directory().map(Path::to_path_buf),
                    reset,
                },
            }),
        }
    }

    /// Starts a shell, registering it when it starts in the background; a
    /// failed start forgets its registry entry too.
    pub(crate) fn start_shell(
        self: &Arc<Self>,
        new: NewShell,
        cwd: &Path,
        stdio: Stdio,
    ) -> Result<Key, CallError> {
        let id = new.id.clone();
        let started = self
            .shells
            .start(new, cwd, stdio, |shell, key| self.register(shell, key));
        started.map_err(|e| {
            if let (Some(tasks), Some(id)) = (&self.tasks, &id) {
                tasks.remove(id);
            }
            match e {
                StartError::Closed => CallError::Closed,
                StartError::Io(e) => CallError::SpawnFailed(e.into()),
            }
        })
    }

    /// The output file of shell `key`, while its record exists.
    pub(crate) fn output_of(&self, key: Key) -> Option<PathBuf> {
        let inner = self.shells.table().lock();
        inner.get(key).map(|s| s.output().to_path_buf())
    }

    /// Runs `cmd` and blocks until it exits or moves to the background.
    pub(crate) fn run(
        self: &Arc<Self>,
        cmd: &Command,
        caller: &Caller,
    ) -> Result<Outcome, CallError> {
        match self.start(cmd, caller)? {
            Started::Answered(outcome) => Ok(outcome),
            Started::Foreground {
                key,
                timeout,
                place,
            } => {
                let table = self.shells.table();
                let inner = table.lock();
                drop(table.wait_exited(inner, &[key], deadline::after(timeout)));
                self.settle(key, timeout, &place)
            }
        }
    }

    /// Settles a foreground command at its exit or its timeout.
    pub(crate) fn settle(
        &self,
        key: Key,
        timeout: Duration,
        place: &Place,
    ) -> Result<Outcome, CallError> {
        let settled = self.shells.settle(
            key,
            || self.next_bash_id(),
            |shell, key| self.register(shell, key),
        );
        match settled {
            Settled::Finished(shell) => {
                if let Some(dir) = self.shells.take_last_dir(key, &shell) {
                    self.keep_last_dir(place, dir);
                }
                let exited = self.finished(&shell, place);
                self.shells.retire_output(&shell);
                exited.map(Outcome::Exited)
            }
            Settled::Moved { id, output } => Ok(Outcome::Background(Backgrounded {
                id: ShellId::from(id),
                output_file: output,
                after: Some(timeout),
                notified: self.notifies(),
                cwd_reset: place.reset.clone(),
            })),
            Settled::Gone => Err(CallError::Closed),
        }
    }

    /// What a foreground command that has ended produced.
    fn finished(&self, shell: &Shell, place: &Place) -> Result<Exited, CallError> {
        let rendered = output::render_file(shell.output(), 0, self.config.output_limit, None, true)
            .map_err(|e| CallError::ReadFailed(e.into()))?;
        Ok(Exited {
            code: shell.exit_code().unwrap_or(-1),
            output: rendered.text,
            truncated: rendered.truncated,
            stopped: self.cause(shell.stop_reason()),
            output_lost: crate::os::outdir::no_space(shell.output()),
            cwd_reset: place.reset.clone(),
        })
    }

    pub(crate) fn cause(&self, reason: Option<StopReason>) -> Option<StopCause> {
        reason.map(|r| match r {
            StopReason::Killed => StopCause::Killed,
            StopReason::StopAll => StopCause::StopAll,
            StopReason::OutputCap => StopCause::OutputCap {
                limit: self.config.max_output_bytes,
            },
            StopReason::MonitorTimeout => StopCause::MonitorTimeout,
            StopReason::Flood => StopCause::Flood,
        })
    }

    /// The key of background shell `id`.
    pub(crate) fn key_of(&self, id: &str) -> Option<Key> {
        self.shells.table().lock().by_id(id)
    }

    /// The state of shell `key` (with ID `id`).
    pub(crate) fn info(&self, key: Key) -> Option<ShellInfo> {
        let inner = self.shells.table().lock();
        let s = inner.get(key)?;
        Some(ShellInfo {
            id: ShellId::from(s.id()?),
            command: s.command().to_string(),
            description: s.description().map(str::to_string),
            status: s.status(),
            exit_code: s.exit_code(),
            output_file: s.output().to_path_buf(),
            stopped: self.cause(s.stop_reason()),
        })
    }

    /// What shell `key` wrote since the last read (only the lines matching
    /// `filter`, if given), and its state.
    pub(crate) fn read_output(
        &self,
        key: Key,
        filter: Option<&Regex>,
    ) -> Result<NewOutput, CallError> {
        let (read_lock, id) = {
            let inner = self.shells.table().lock();
            let s = inner.get(key).ok_or(CallError::Closed)?;
            (s.read_lock(), s.id().unwrap_or_default().to_string())
        };
        // One reader at a time per shell: the cursor is read, the file read,
        // and the cursor moved as one step.
        let _reading = read_lock.lock();
        let cursor = self
            .shells
            .table()
            .lock()
            .get(key)
            .map(|s| s.cursor())
            .ok_or_else(|| CallError::UnknownId(id.clone()))?;
        // The state is taken before the file is read: once ended, the file
        // is complete, so everything to its end may be consumed.
        let info = self.info(key).ok_or(CallError::UnknownId(id))?;
        let rendered = output::render_file(
            &info.output_file,
            cursor,
            self.config.output_limit,
            filter,
            info.exit_code.is_some(),
        )
        .map_err(|e| CallError::ReadFailed(e.into()))?;
        self.shells.advance_cursor(key, rendered.consumed);
        // Asked once the shell has ended, when its output is complete.
        let output_lost =
            info.status() != TaskStatus::Running && crate::os::outdir::no_space(info.output_file());
        Ok(NewOutput {
            info,
            text: rendered.text,
            truncated: rendered.truncated,
            output_lost,
        })
    }

    /// Stops background shell `id` (its whole group) and returns its state.
    pub(crate) fn kill(&self, id: &str) -> Result<ShellInfo, CallError> {
        let key = self
            .key_of(id)
            .ok_or_else(|| CallError::UnknownId(id.to_string()))?;
        let not_running = |core: &Core| {
            let status = core.info(key).map_or(TaskStatus::Completed, |i| i.status);
            CallError::NotRunning {
                id: id.to_string(),
                status,
            }
        };
        let lingering = |core: &Core| {
            // Its leader has ended, but processes it started still run:
            // those are stopped, and the shell keeps the status it ended with.
            if core.shells.lingers(key) {
                core.shells.stop(&[key], StopReason::Killed);
                core.info(key)
                    .ok_or_else(|| CallError::UnknownId(id.to_string()))
            } else {
                Err(not_running(core))
            }
        };
        if self.info(key).is_some_and(|i| i.status.is_ended()) {
            return lingering(self);
        }
        if self.shells.stop(&[key], StopReason::Killed).is_empty() {
            // It ended on its own between the look-up and the signal.
            return lingering(self);
        }
        self.info(key)
            .ok_or_else(|| CallError::UnknownId(id.to_string()))
    }

    /// Types `input` into the terminal of interactive shell `id`, then
    /// answers as [`yield_output`](Self::yield_output).
    pub(crate) fn write_stdin(
        &self,
        id: &str,
        input: &[u8],
        yield_time: Duration,
    ) -> Result<NewOutput, CallError> {
        if !self.config.interactive {
            return Err(CallError::InteractiveOff);
        }
        let key = self
            .key_of(id)
            .ok_or_else(|| CallError::UnknownId(id.to_string()))?;
        let (interactive, status) = {
            let inner = self.shells.table().lock();
            let s = inner
                .get(key)
                .ok_or_else(|| CallError::UnknownId(id.to_string()))?;
            (s.is_interactive(), s.status())
        };
        if !interactive {
            return Err(CallError::NotInteractive(id.to_string()));
        }
        if status.is_ended() {
            return Err(CallError::NotRunning {
                id: id.to_string(),
                status,
            });
        }
        let since = self
            .shells
            .write_terminal(key, input)
            .map_err(|_| CallError::TerminalClosed(id.to_string()))?;
        self.yield_output(key, since, yield_time)
    }

    /// Waits up to `yield_time` (at most `max_timeout`) for interactive
    /// shell `key` to print more than `since` bytes, answering early once
    /// that output has paused for [`QUIET`](crate::defaults::QUIET) or the
    /// shell has ended; then reads its new output.
    pub(crate) fn yield_output(
        &self,
        key: Key,
        since: u64,
        yield_time: Duration,
    ) -> Result<NewOutput, CallError> {
        let until = deadline::saturating_add(
            std::time::Instant::now(),
            yield_time.min(self.config.max_timeout),
        );
        self.shells
            .wait_terminal(key, since, crate::config::defaults::QUIET, until);
        self.read_output(key, None)
    }

    /// Waits as [`yield_output`](Self::yield_output) for output of
    /// interactive shell `key` not read yet (past its cursor: its file
    /// holds only what its terminal received).
    pub(crate) fn yield_unread(
        &self,
        key: Key,
        yield_time: Duration,
    ) -> Result<NewOutput, CallError> {
        let cursor = {
            let inner = self.shells.table().lock();
            let s = inner.get(key).ok_or(CallError::Closed)?;
            if !s.is_interactive() {
                return Err(CallError::NotInteractive(
                    s.id().unwrap_or_default().to_string(),
                ));
            }
            s.cursor()
        };
        self.yield_output(key, cursor, yield_time)
    }

    /// Keeps a monitor's reader thread, to be joined by `stop_all`.
    pub(crate) fn keep_reader(&self, handle: JoinHandle<()>) {
        let mut readers = self.readers.lock();
        readers.retain(|h| !h.is_finished());
        readers.push(handle);
    }

    /// Stops every running shell; the tools stay usable.
    pub(crate) fn stop_all(&self) {
        self.shells.stop_all();
        self.join_readers();
    }

    /// Ends the tools: stops everything and refuses every later call.
    pub(crate) fn close(&self) {
        self.shells.close();
        self.join_readers();
    }

    fn join_readers(&self) {
        let readers = std::mem::take(&mut *self.readers.lock());
        let me = std::thread::current().id();
        for r in readers {
            // A reader never calls stop_all, but the embedder's code could run
            // on it (a drop of the last BashTools held there): never join self.
            if r.thread().id() != me {
                let _ = r.join();
            }
        }
    }
}

/// The end notification of a background shell.
fn notify_end(tasks: &Tasks, ended: &Ended) {
    let summary = texts::shell_summary(&ended.what, ended.status, ended.code);
    let text = texts::end_notification(
        &ended.id,
        ended.call.as_deref(),
        &ended.output,
        ended.status,
        &summary,
    );
    tasks.finish_with(&ended.id, ended.status, text, summary);
}
