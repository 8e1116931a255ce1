//! Every text a model reads, in one place, each with the SPEC section it
//! comes from. A wording change is one edit here and one test.
//!
//! Texts marked "ours" are not fixed by the spec; they follow its style.

use std::path::Path;
use std::time::Duration;

/// §4 bash: a missing, mistyped, empty or blank `command`.
pub(crate) const NO_COMMAND: &str =
    "No command given: the command parameter must be a non-empty string";

/// Ours: a NUL byte cannot be passed to `bash -c`.
pub(crate) const NUL_IN_COMMAND: &str =
    "Invalid command: it contains a NUL byte, which a shell command cannot hold";

/// §4 bash: exit 0 with nothing to show.
pub(crate) const NO_OUTPUT: &str = "(Bash completed with no output)";

/// §4 bash: any exit but 0.
pub(crate) fn exit_code(code: i32) -> String {
    format!("Exit code {code}")
}

/// §4 bash: still running at its timeout, moved to the background.
pub(crate) fn moved_to_background(
    timeout: Duration,
    id: &str,
    path: &Path,
    notified: bool,
) -> String {
    format!(
        "Command did not complete within its {} timeout and was moved to the background (ID: {id}). Output is being written to: {}.{} To check interim output, use bash_output with that ID.",
        seconds(timeout),
        path.display(),
        if notified { NOTIFIED } else { "" },
    )
}

/// §4 bash: `run_in_background: true`.
pub(crate) fn running_in_background(id: &str, path: &Path, notified: bool) -> String {
    format!(
        "Command running in background with ID: {id}. Output is being written to: {}.{}",
        path.display(),
        if notified { NOTIFIED } else { "" },
    )
}

/// §4 bash: said only when a `tasks` registry will deliver the notification.
const NOTIFIED: &str = " You will be notified when it completes.";

/// §4 gates: a word outside `allowed_commands`.
pub(crate) fn not_allowed(word: &str) -> String {
    format!("Command not allowed: {word}")
}

/// §4 gates: the validator refused, with its reason (`Command denied` for none).
pub(crate) fn refused(reason: &str) -> String {
    if reason.trim().is_empty() {
        "Command denied".to_string()
    } else {
        format!("Command {reason}")
    }
}

/// Ours: the validator panicked; the command is refused, not run.
pub(crate) const VALIDATOR_PANICKED: &str = "Command denied (the validator failed)";

/// §4 bash_output / kill_shell: an ID nobody knows.
pub(crate) fn no_task(id: &str) -> String {
    format!("No task found with ID: {id}")
}

/// §4 kill_shell: the shell has ended already.
pub(crate) fn not_running(id: &str, status: &str) -> String {
    format!("Task {id} is not running (status: {status})")
}

/// §4 kill_shell: stopped.
pub(crate) fn stopped(id: &str, command: &str) -> String {
    format!("Successfully stopped task: {id} ({command})")
}

/// Ours: an invalid `filter` of bash_output names the regex and the error.
pub(crate) fn invalid_filter(filter: &str, err: &str) -> String {
    format!("Invalid filter regex \"{filter}\": {err}")
}

/// Ours: a working directory that does not exist.
pub(crate) fn no_such_directory(path: &Path) -> String {
    format!("Working directory does not exist: {}", path.display())
}

/// Ours: a working directory that is not a directory.
pub(crate) fn not_a_directory(path: &Path) -> String {
    format!("Working directory is not a directory: {}", path.display())
}

/// Ours: the command could not be started at all.
pub(crate) fn spawn_failed(err: &std::io::Error) -> String {
    format!("Failed to start the command: {err}")
}

/// Ours: the output file could not be read.
pub(crate) fn read_failed(err: &std::io::Error) -> String {
    format!("Failed to read the command's output: {err}")
}

/// Ours: a call after `stop_all`.
pub(crate) const STOPPED: &str =
    "The shell tools have been stopped (stop_all): no command can be started or read";

/// Ours: the arguments are not a JSON object.
pub(crate) const NOT_AN_OBJECT: &str = "Invalid input: the arguments must be a JSON object";

/// Ours: a required argument is missing.
pub(crate) fn missing(name: &str) -> String {
    format!("Invalid input: the {name} parameter is required")
}

/// Ours: an argument of the wrong type.
pub(crate) fn wrong_type(name: &str, expected: &str) -> String {
    format!("Invalid input: the {name} parameter must be {expected}")
}

/// §8 ours: an output file passed `max_output_bytes` and its shell was stopped.
pub(crate) fn output_cap(cap: u64) -> String {
    format!(
        "[The command was stopped: its output passed the limit of {cap} bytes (max_output_bytes).]"
    )
}

/// §4 truncation marker between head and tail.
pub(crate) fn truncated(chars: u64) -> String {
    format!("\n\n... [{chars} characters truncated] ...\n\n")
}

/// Seconds as `120s` or `1.5s`.
pub(crate) fn seconds(d: Duration) -> String {
    let ms = d.as_millis();
    if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        let s = format!("{:.3}", d.as_secs_f64());
        format!("{}s", s.trim_end_matches('0').trim_end_matches('.'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_whole_when_they_can_be() {
        assert_eq!(seconds(Duration::from_secs(120)), "120s");
        assert_eq!(seconds(Duration::from_millis(1500)), "1.5s");
        assert_eq!(seconds(Duration::from_millis(250)), "0.25s");
    }

    #[test]
    fn an_empty_reason_is_denied() {
        assert_eq!(refused(""), "Command denied");
        assert_eq!(refused("blocked by policy"), "Command blocked by policy");
    }
}
