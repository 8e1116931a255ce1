//! A foreground command as a [`Pending`]: it completes when the command
//! exits, or at its timeout once the command has moved to the background,
//! whichever comes first — and once.
//!
//! The move to the background happens at the timeout even when nobody
//! waits: dropping the `Pending` never leaves an invisible command. A
//! command whose `Pending` was dropped goes on; at its timeout it becomes
//! `bash_N`, is listed by `background_pids` and notified like any other.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use super::core::Core;
use super::start::{Origin, Started};
use super::types::{Backgrounded, CallError, Command, Exited, Outcome, ShellId};
use crate::caller::Caller;
use crate::pending::{CommandHandle, Completer, Pending};
use crate::shells::{ExitWaiter, Key, Settled, Shell, StopReason};
use crate::{deadline, output, timer};

/// Turns the typed result into what the caller's `Pending` holds.
pub(crate) type Convert<T> = Arc<dyn Fn(Result<Outcome, CallError>) -> T + Send + Sync>;

/// Starts `cmd` and returns its result as a `Pending` of `T`.
pub(crate) fn run_f<T: Send + 'static>(
    core: &Arc<Core>,
    cmd: &Command,
    caller: &Caller,
    convert: Convert<T>,
) -> Pending<T> {
    if core.will_ask(cmd.get_command(), caller) {
        return asked_then_run(core, cmd, caller, convert);
    }
    let (key, timeout, place) = match core.start(cmd, caller) {
        Ok(Started::Answered(outcome)) => return Pending::ready(convert(Ok(outcome))),
        Ok(Started::Foreground {
            key,
            timeout,
            place,
        }) => (key, timeout, place),
        Err(e) => return Pending::ready(convert(Err(e))),
    };
    let (pending, completer) = Pending::new();
    // A command that ends before its `Pending` is dropped is settled too.
    let pending = pending.make_if_dropped();
    let state = Arc::new(Settle {
        core: Arc::downgrade(core),
        key,
        timeout,
        place,
        settled: OnceLock::new(),
        convert,
        completer,
    });
    if let Some(at) = deadline::after(timeout) {
        // The timer holds the state weakly: once the command has exited and
        // its result was taken, nothing keeps the result in memory until the
        // timeout.
        let weak: Weak<Settle<T>> = Arc::downgrade(&state);
        let alive = weak.clone();
        // Swept once the call is over: its state is then gone.
        let live = move || alive.strong_count() > 0;
        timer::at_while(at, live, move || {
            if let Some(state) = weak.upgrade() {
                // Even if the `Pending` was dropped: the command must not
                // stay an invisible foreground command.
                if !state.completer.is_completed() {
                    // Eagerly, on the timer thread: the move to the
                    // background must happen at the timeout even if nobody
                    // takes the result.
                    let result = state.result();
                    let convert = state.convert.clone();
                    state.completer.complete_with(move || convert(result));
                }
            }
        });
    }
    core.shells.table().on_exit(key, Box::new(OnExit(state)));
    let (stopper, reader) = (Arc::downgrade(core), Arc::downgrade(core));
    pending.with_command(CommandHandle::new(
        move || {
            if let Some(core) = stopper.upgrade() {
                core.shells.stop(&[key], StopReason::Killed);
            }
        },
        move || reader.upgrade().and_then(|core| core.output_of(key)),
    ))
}

/// One settling of a call, shared by its exit waiter and its timer.
struct Settle<T> {
    core: Weak<Core>,
    key: Key,
    timeout: Duration,
    place: Origin,
    settled: OnceLock<Result<Outcome, CallError>>,
    convert: Convert<T>,
    completer: Completer<T>,
}

impl<T> Settle<T> {
    fn result(&self) -> Result<Outcome, CallError> {
        self.settled
            .get_or_init(|| match self.core.upgrade() {
                Some(core) => core.settle(self.key, self.timeout, &self.place),
                None => Err(CallError::Closed),
            })
            .clone()
    }
}

struct OnExit<T>(Arc<Settle<T>>);

impl<T: Send + 'static> ExitWaiter for OnExit<T> {
    /// Stale once the call has its result (the timeout moved the command
    /// to the background); not when the `Pending` was merely dropped: that
    /// command must still be settled (its record and file removed) when it
    /// exits.
    fn is_stale(&self) -> bool {
        self.0.completer.is_completed()
    }

    /// On the reaper thread: only marks the result ready; the output is
    /// read by whoever takes it. Nobody will take it when the `Pending` was
    /// dropped: then `complete_with` settles it here (`make_if_dropped`).
    fn exited(self: Box<Self>) {
        let state = self.0;
        let completer = state.completer.clone();
        completer.complete_with(move || {
            let result = state.result();
            (state.convert)(result)
        });
    }
}

/// A line that needs the approver's answer: asked, and then run as
/// [`Core::run`] does, on a thread of its own, so no thread of the caller
/// waits for the person. The [`Pending`] has no command handle while the
/// person is asked.
fn asked_then_run<T: Send + 'static>(
    core: &Arc<Core>,
    cmd: &Command,
    caller: &Caller,
    convert: Convert<T>,
) -> Pending<T> {
    let (pending, completer) = Pending::new();
    let pending = pending.make_if_dropped();
    let (core, cmd, caller) = (core.clone(), cmd.clone(), caller.clone());
    let done = completer.clone();
    let convert2 = convert.clone();
    let spawned = std::thread::Builder::new()
        .name("bashtools-approval".into())
        .spawn(move || {
            let result = core.run(&cmd, &caller);
            done.complete_with(move || convert2(result));
        });
    if let Err(e) = spawned {
        completer.complete_with(move || convert(Err(CallError::SpawnFailed(e.into()))));
    }
    pending
}

impl Core {
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
        place: &Origin,
    ) -> Result<Outcome, CallError> {
        let settled = self.shells.settle(
            key,
            || self.next_bash_id(),
            |shell, key| self.register(shell, key),
        );
        match settled {
            Settled::Finished(shell) => {
                let mut not_kept = Vec::new();
                if let Some(state) = self.shells.take_last_state(key, &shell) {
                    if let Some(dir) = state.dir.filter(|_| place.keep_dir) {
                        self.keep_last_dir(place, dir);
                    }
                    if let Some(exports) = state.exports {
                        not_kept = self.keep_exports(&place.session, exports);
                    }
                }
                let exited = self.finished(&shell, place).map(|mut e| {
                    e.not_kept = not_kept;
                    e
                });
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
    fn finished(&self, shell: &Shell, place: &Origin) -> Result<Exited, CallError> {
        let (limit, terminal) = (self.config.output_limit, self.config.render_output);
        let rendered = output::render_file_as(shell.output(), 0, limit, None, true, terminal)
            .map_err(|e| CallError::ReadFailed(e.into()))?;
        Ok(Exited {
            code: shell.exit_code().unwrap_or(-1),
            output: self.mask(rendered.text),
            truncated: rendered.truncated,
            stopped: self.cause(shell.stop_reason()),
            output_lost: crate::os::files::outdir::no_space(shell.output()),
            cwd_reset: place.reset.clone(),
            usage: shell.usage().unwrap_or_default(),
            not_kept: Vec::new(),
        })
    }
}
