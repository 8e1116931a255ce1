//! Where typed outcomes and errors become the texts a model reads: the
//! `Display` of [`CallError`] and [`Refusal`], and the result of each
//! [`Outcome`]. The wording itself lives in [`crate::texts`].

use std::fmt;

use super::ToolResult;
use crate::api::types::{CallError, Exited, NotKept, Outcome, Refusal, StopCause};
use crate::status::TaskStatus;
use crate::texts;

/// Not-kept notes shown one by one; past them, one line says how many more.
const NOTES_SHOWN: usize = 3;

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            CallError::NoCommand => texts::NO_COMMAND.to_string(),
            CallError::NulInCommand => texts::NUL_IN_COMMAND.to_string(),
            CallError::NoSuchDirectory(p) => texts::no_such_directory(p),
            CallError::NotADirectory(p) => texts::not_a_directory(p),
            CallError::OutsideSandbox(p) => texts::outside_sandbox(p),
            CallError::SpawnFailed(e) => texts::spawn_failed(&e.to_string()),
            CallError::ReadFailed(e) => texts::read_failed(&e.to_string()),
            CallError::UnknownId(id) => texts::no_task(id),
            CallError::NotRunning { id, status } => texts::not_running(id, *status),
            CallError::StopPanicked(id) => texts::stop_panicked(id),
            CallError::MonitorNeedsTasks => texts::MONITOR_NEEDS_TASKS.to_string(),
            CallError::InteractiveOff => texts::INTERACTIVE_OFF.to_string(),
            CallError::StdinWithInteractive => texts::STDIN_WITH_INTERACTIVE.to_string(),
            CallError::NotInteractive(id) => texts::not_interactive(id),
            CallError::TerminalClosed(id) => texts::terminal_closed(id),
            CallError::InputBacklog { id, limit } => texts::input_backlog(id, *limit),
            CallError::Closed => texts::CLOSED.to_string(),
        };
        f.write_str(&text)
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Gate(gate) => write!(f, "{gate}"),
            Refusal::NeedsApproval {
                words,
                client_cannot_ask: None,
            } => f.write_str(&texts::needs_approval(words)),
            Refusal::NeedsApproval {
                words,
                client_cannot_ask: Some(prefix),
            } => f.write_str(&texts::client_cannot_ask(words, prefix)),
            Refusal::Declined { line, reason } => {
                f.write_str(&texts::declined(line, reason.as_deref()))
            }
            Refusal::Validator(reason) => f.write_str(&texts::refused(reason)),
            Refusal::ValidatorPanicked => f.write_str(texts::VALIDATOR_PANICKED),
        }
    }
}

impl std::error::Error for Refusal {}

/// The result of a typed call's error.
pub(crate) fn error(e: &CallError) -> ToolResult {
    ToolResult::error(e.to_string())
}

/// The `bash` result of an outcome.
pub(crate) fn outcome(outcome: &Outcome) -> ToolResult {
    let reset = match outcome {
        Outcome::Exited(e) => e.cwd_reset(),
        Outcome::Background(b) => b.cwd_reset(),
        _ => None,
    };
    let result = result_of(outcome);
    match reset {
        Some(r) => result.with_note(&texts::cwd_reset(r.lost(), r.ran_in(), r.outside_sandbox())),
        None => result,
    }
}

fn result_of(outcome: &Outcome) -> ToolResult {
    match outcome {
        Outcome::Exited(e) => exited(e),
        Outcome::Background(b) => {
            let text = match b.after() {
                Some(timeout) => texts::moved_to_background(
                    timeout,
                    b.id().as_str(),
                    b.output_file(),
                    b.notified(),
                ),
                None => {
                    texts::running_in_background(b.id().as_str(), b.output_file(), b.notified())
                }
            };
            ToolResult::ok(text).with_task(
                b.id().as_str(),
                Some(TaskStatus::Running),
                Some(b.output_file().to_path_buf()),
            )
        }
        Outcome::Refused(r) => ToolResult::error(r.to_string()),
    }
}

/// The output cap's limit, when the cap stopped the command.
pub(crate) fn cap_of(stopped: Option<StopCause>) -> Option<u64> {
    match stopped {
        Some(StopCause::OutputCap { limit }) => Some(limit),
        _ => None,
    }
}

pub(crate) fn exited(e: &Exited) -> ToolResult {
    // A full disk: the output is said to be lost, not to be none.
    let lost = match (e.output_lost(), e.output().is_empty()) {
        (false, _) => None,
        (true, true) => Some(texts::OUTPUT_LOST),
        (true, false) => Some(texts::OUTPUT_CUT),
    };
    let oom = e.usage().out_of_memory();
    let result = if e.success() && oom.is_none() {
        match (e.output().is_empty(), lost) {
            (true, Some(lost)) => ToolResult::ok(lost),
            (true, None) => ToolResult::ok(texts::NO_OUTPUT),
            (false, Some(lost)) => ToolResult::ok(format!("{}\n{lost}", e.output())),
            (false, None) => ToolResult::ok(e.output()),
        }
    } else {
        let mut text = texts::failed_command(e.code(), oom, e.output(), cap_of(e.stopped()));
        if let Some(lost) = lost {
            text.push('\n');
            text.push_str(lost);
        }
        ToolResult::error(text)
    };
    let mut result = with_usage(result, Some(e.usage()));
    // A few notes, then one line for the rest: a command that exported
    // thousands of variables must not get a result of megabytes.
    let not_kept = e.not_kept();
    for n in not_kept.iter().take(NOTES_SHOWN) {
        let line = match n {
            NotKept::ChangesWhatRuns(name) => {
                texts::not_kept_changes_what_runs(&name.to_string_lossy())
            }
            NotKept::TooLarge(name) => texts::not_kept_too_large(&name.to_string_lossy()),
            NotKept::ShapesBash(name) => texts::not_kept_shapes_bash(&name.to_string_lossy()),
            NotKept::TooMany(name) => texts::not_kept_too_many(&name.to_string_lossy()),
            NotKept::Unread => texts::NOT_KEPT_UNREAD.to_string(),
        };
        result = result.with_note(&line);
    }
    if not_kept.len() > NOTES_SHOWN {
        result = result.with_note(&texts::not_kept_more(not_kept.len() - NOTES_SHOWN));
    }
    result
        .with_exit_code(Some(e.code()))
        .with_output(e.output(), e.truncated_chars())
}

/// The result with what the command cost, and the note of a reached
/// process limit, if one was.
pub(crate) fn with_usage(result: ToolResult, usage: Option<&crate::limits::Usage>) -> ToolResult {
    let mut result = match usage.and_then(|u| u.pids_limit_reached()) {
        Some(limit) => result.with_note(&texts::pids_reached(limit)),
        None => result,
    };
    result.usage = usage.copied();
    result
}

/// The memory limit an ended shell ran out of, if it did.
pub(crate) fn oom_of(info: &crate::api::types::ShellInfo) -> Option<u64> {
    info.usage().and_then(|u| u.out_of_memory())
}
