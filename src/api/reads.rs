//! Reading a shell: its state, what it wrote since the last read, and the
//! terminal of an interactive one (what is typed in, what it answers).

use std::time::Duration;

use regex::Regex;

use std::time::Instant;

use super::core::Core;
use super::types::{CallError, Exited, NewOutput, ShellId, ShellInfo, StopCause};
use crate::output;
use crate::shells::ExitWaiter;
use crate::shells::{Key, StopReason};
use crate::status::TaskStatus;
use crate::tasks::{EndWaiter, TaskInfo};
use crate::{deadline, timer};

/// One line of `list_shells`.
pub(crate) struct Listed {
    pub id: String,
    pub status: TaskStatus,
    pub exit_code: Option<i32>,
    pub elapsed: Duration,
    pub what: String,
}

impl Core {
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

    /// What shell `key` would have answered as a foreground command, once
    /// it has ended: its whole output rendered from the start (cut as a
    /// foreground result is), its exit code, why it was stopped. `None`
    /// while it runs or for a key it does not know.
    pub(crate) fn as_foreground(&self, key: Key) -> Option<Result<Exited, CallError>> {
        let (path, code, reason, usage) = {
            let inner = self.shells.table().lock();
            let s = inner.get(key)?;
            if s.is_running() {
                return None;
            }
            (
                s.output().to_path_buf(),
                s.exit_code(),
                s.stop_reason(),
                s.usage().unwrap_or_default(),
            )
        };
        let (limit, terminal) = (self.config.output_limit, self.config.render_output);
        let rendered = match output::render_file_as(&path, 0, limit, None, true, terminal) {
            Ok(r) => r,
            Err(e) => return Some(Err(CallError::ReadFailed(e.into()))),
        };
        Some(Ok(Exited {
            code: code.unwrap_or(-1),
            output: self.mask(rendered.text),
            truncated: rendered.truncated,
            stopped: self.cause(reason),
            output_lost: crate::os::files::outdir::no_space(&path),
            cwd_reset: None,
            usage,
            not_kept: Vec::new(),
        }))
    }

    /// Every background shell and monitor, newest first: ID, status, exit
    /// code, how long it has run (or ran), and its description or command.
    pub(crate) fn listing(&self) -> Vec<Listed> {
        let inner = self.shells.table().lock();
        let mut all: Vec<(Key, Listed)> = inner
            .iter()
            .filter_map(|(key, s)| {
                Some((
                    key,
                    Listed {
                        id: s.id()?.to_string(),
                        status: s.status(),
                        exit_code: s.exit_code(),
                        elapsed: s.elapsed(),
                        // A command or description may hold escapes too.
                        what: if self.config.render_output {
                            output::render::render_text(s.what())
                        } else {
                            s.what().to_string()
                        },
                    },
                ))
            })
            .collect();
        all.sort_by_key(|(key, _)| std::cmp::Reverse(*key));
        all.into_iter().map(|(_, l)| l).collect()
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
            usage: s.usage(),
        })
    }

    /// What shell `key` wrote since the last read (only the lines matching
    /// `filter`, if given), and its state.
    pub(crate) fn read_output(
        &self,
        key: Key,
        filter: Option<&Regex>,
    ) -> Result<NewOutput, CallError> {
        self.read_output_tail(key, filter, None)
    }

    /// [`read_output`](Self::read_output), keeping only the last `tail`
    /// lines (all of it is consumed).
    pub(crate) fn read_output_tail(
        &self,
        key: Key,
        filter: Option<&Regex>,
        tail: Option<u64>,
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
        let (path, limit, done) = (
            &info.output_file,
            self.config.output_limit,
            info.exit_code.is_some(),
        );
        let terminal = self.config.render_output;
        let (rendered, lines_left_out) = match tail {
            None => {
                output::render_file_as(path, cursor, limit, filter, done, terminal).map(|r| (r, 0))
            }
            Some(n) => output::render_file_tail(path, cursor, limit, filter, done, n, terminal),
        }
        .map_err(|e| CallError::ReadFailed(e.into()))?;
        self.shells.advance_cursor(key, rendered.consumed);
        // Asked once the shell has ended, when its output is complete.
        let output_lost = info.status() != TaskStatus::Running
            && crate::os::files::outdir::no_space(info.output_file());
        Ok(NewOutput {
            info,
            text: self.mask(rendered.text),
            truncated: rendered.truncated,
            output_lost,
            lines_left_out,
        })
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
        let since = self.shells.write_terminal(key, input).map_err(|e| {
            if e.raw_os_error() == Some(nix::libc::ENOBUFS) {
                CallError::InputBacklog {
                    id: id.to_string(),
                    limit: crate::shells::MAX_QUEUED_INPUT,
                }
            } else {
                CallError::TerminalClosed(id.to_string())
            }
        })?;
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
}

/// What a `bash_output` reads: a shell of these tools, or another entry of
/// the registry (a subagent, or another `BashTools`'s shell), by its ID.
#[derive(Clone)]
pub(crate) enum Target {
    Shell(Key),
    Task(String),
}

/// Told once, when what it waits on ends or its deadline passes, unless
/// it is stale by then (its `Pending` completed another way, or dropped).
pub(crate) trait Waiter: Clone + Send + 'static {
    fn is_stale(&self) -> bool;
    fn wake(self);
}

/// A [`Waiter`] as the table and the registry take one.
struct OnEnd<W>(W);

impl<W: Waiter> ExitWaiter for OnEnd<W> {
    fn is_stale(&self) -> bool {
        self.0.is_stale()
    }

    fn exited(self: Box<Self>) {
        self.0.wake();
    }
}

impl<W: Waiter> EndWaiter for OnEnd<W> {
    fn is_stale(&self) -> bool {
        self.0.is_stale()
    }

    fn ended(self: Box<Self>) {
        self.0.wake();
    }
}

impl Core {
    /// What ID (or a registry entry's name) `id` names, if anything.
    pub(crate) fn target_of(&self, id: &str) -> Option<Target> {
        match self.key_of(id) {
            Some(key) => Some(Target::Shell(key)),
            None => self
                .tasks
                .as_ref()
                .and_then(|t| t.resolve(id))
                .map(Target::Task),
        }
    }

    /// Whether `target` is still at work.
    pub(crate) fn is_running(&self, target: &Target) -> bool {
        match target {
            Target::Shell(key) => self.info(*key).is_some_and(|i| !i.status().is_ended()),
            Target::Task(id) => self.task_info(id).is_some_and(|i| !i.status.is_ended()),
        }
    }

    /// Blocks until `target` ends, or the deadline (`None`: none).
    pub(crate) fn wait_end(&self, target: &Target, deadline: Option<Instant>) {
        match target {
            Target::Shell(key) => {
                let table = self.shells.table();
                let inner = table.lock();
                drop(table.wait_exited(inner, &[*key], deadline));
            }
            Target::Task(id) => {
                if let Some(tasks) = &self.tasks {
                    tasks.wait_end(id, deadline);
                }
            }
        }
    }

    /// Wakes `waiter` once, when `target` ends or after `timeout`,
    /// whichever is first; no thread waits meanwhile.
    pub(crate) fn when_ended(&self, target: &Target, timeout: Duration, waiter: impl Waiter) {
        if let Some(at) = deadline::after(timeout) {
            let on_timeout = waiter.clone();
            timer::at(at, move || on_timeout.wake());
        }
        match target {
            Target::Shell(key) => self.shells.table().on_exit(*key, Box::new(OnEnd(waiter))),
            Target::Task(id) => {
                if let Some(tasks) = &self.tasks {
                    tasks.on_end(id, Box::new(OnEnd(waiter)));
                }
            }
        }
    }

    /// The registry's entry `id`.
    pub(crate) fn task_info(&self, id: &str) -> Option<TaskInfo> {
        self.tasks.as_ref().and_then(|t| t.get(id))
    }
}
