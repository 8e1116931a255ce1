//! Every text a model reads, in one place, each with the contract section (§N of docs/contract.md) it
//! comes from. A wording change is one edit here and one test.
//!
//! Texts marked "ours" are not fixed by the spec; they follow its style.

use std::path::Path;
use std::time::Duration;

use crate::status::TaskStatus;

/// §4 bash: a missing, mistyped, empty or blank `command`.
pub(crate) const NO_COMMAND: &str =
    "No command given: the command parameter must be a non-empty string";

/// Ours: a NUL byte cannot be passed to `bash -c`.
pub(crate) const NUL_IN_COMMAND: &str =
    "Invalid command: it contains a NUL byte, which a shell command cannot hold";

/// §4 bash: exit 0 with nothing to show.
pub(crate) const NO_OUTPUT: &str = "(Bash completed with no output)";

/// Ours: a command's output could not be written (its file system was
/// full when it ended), and none of it is in the file.
pub(crate) const OUTPUT_LOST: &str = "[output lost: no space left on device]";

/// Ours: as [`OUTPUT_LOST`], when some of the output was written: what is
/// shown may lack its end.
pub(crate) const OUTPUT_CUT: &str = "[output may be incomplete: no space left on device]";

/// The exit code of a command whose status another part of the program
/// collected (a `waitpid(-1)` of the host's): no real exit code is
/// negative.
pub(crate) const UNKNOWN_CODE: i32 = -1;

/// §8: the status was collected by someone else.
pub(crate) const EXIT_CODE_UNKNOWN: &str =
    "Exit code unknown: the exit status was collected by another part of the program";

/// §4 bash: any exit but 0.
pub(crate) fn exit_code(code: i32) -> String {
    if code == UNKNOWN_CODE {
        return EXIT_CODE_UNKNOWN.to_string();
    }
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

/// §4 bash `interactive: true` and write_stdin without the `interactive` option.
pub(crate) const INTERACTIVE_OFF: &str = "Interactive commands are not enabled (the interactive option is off): run the command without interactive, its standard input is /dev/null";

/// Ours: `stdin` and `interactive: true` in one call.
pub(crate) const STDIN_WITH_INTERACTIVE: &str = "stdin cannot be combined with interactive: an interactive command reads its terminal; start it, then type its input with write_stdin";

/// §4 bash: the sentence its description gains with the `interactive` option.
pub(crate) const INTERACTIVE_NOTE: &str = " With `interactive: true` the command starts in the background at once on a terminal of its own and the result shows what it printed in its first second; answer its prompts with write_stdin (what you type there is not checked as a command line).";

/// §4 write_stdin: a shell started without `interactive: true`.
pub(crate) fn not_interactive(id: &str) -> String {
    format!("Shell {id} is not interactive: write_stdin types only into a shell started with interactive: true")
}

/// §4 write_stdin: every program of the shell has closed its terminal.
pub(crate) fn terminal_closed(id: &str) -> String {
    format!("Shell {id} has closed its terminal: it reads no more input")
}

/// Ours: `write_stdin` past what a program that does not read may have
/// queued.
pub(crate) fn input_backlog(id: &str, limit: usize) -> String {
    format!("Input not sent: shell {id} has not read the input it was given before, and at most {} KiB may wait for it. Read its output with bash_output, or stop it with kill_shell.", limit / 1024)
}

/// §4 bash `interactive: true`: the background text, then what the command
/// printed in its first yield, in `bash_output`'s form.
pub(crate) fn interactive_started(started: &str, first: &str) -> String {
    format!("{started}\n{first}")
}

/// §4 bash: said only when a `tasks` registry will deliver the notification
/// (the MCP server removes it when no path to the model is on).
pub(crate) const NOTIFIED: &str = " You will be notified when it completes.";

/// §4 gates: a word outside `allowed_commands`.
pub(crate) fn not_allowed(word: &str) -> String {
    format!("Command not allowed: {word}")
}

/// §12: a line needs approval and no approver is configured.
pub(crate) fn needs_approval(words: &str) -> String {
    format!("Command needs approval: {words} (no one can be asked here; allow it with a rule)")
}

/// §12: a line needs approval and the MCP client cannot ask the user.
pub(crate) fn client_cannot_ask(words: &str, prefix: &str) -> String {
    format!(
        "Command needs approval: {words} (this client cannot ask the user; allow it with \
         --allow \"{prefix}\" or a rules file)"
    )
}

/// §12: the person declined, or did not answer in time.
pub(crate) fn declined(line: &str, reason: Option<&str>) -> String {
    match reason {
        Some(reason) => format!("Command denied: {line} ({reason})"),
        None => format!("Command denied: {line}"),
    }
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
pub(crate) fn not_running(id: &str, status: TaskStatus) -> String {
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

/// Ours: a working directory outside the sandbox's writable directories.
pub(crate) fn outside_sandbox(path: &Path) -> String {
    format!(
        "Working directory is outside the sandbox: {} (commands run only in the \
         directories they may write: the working directory, $TMPDIR and the sandbox's \
         allowed directories)",
        path.display()
    )
}

/// Ours: what the `bash` description says of the sandbox (§3 `sandbox`):
/// where commands write, the network, signals, and how a refusal looks.
pub(crate) fn sandbox_note(allowed_dirs: &[std::path::PathBuf], network: bool) -> String {
    let dirs: String = allowed_dirs
        .iter()
        .map(|d| format!(", {}", d.display()))
        .collect();
    format!(
        " Commands run in a sandbox: they can read and run anything, but write only in the working directory, \
         $TMPDIR{dirs} and devices such as /dev/null;{network} they cannot signal processes they did not start (other commands included). \
         An operation the sandbox refuses fails with the system's own error (`Read-only file system` or `Permission denied`).",
        network = if network {
            ""
        } else {
            " the network is off (TCP connect and bind, UDP and every other IP socket are refused);"
        },
    )
}

/// Ours: the command could not be started at all.
pub(crate) fn spawn_failed(err: &str) -> String {
    format!("Failed to start the command: {err}")
}

/// Ours: the output file could not be read.
pub(crate) fn read_failed(err: &str) -> String {
    format!("Failed to read the command's output: {err}")
}

/// Ours: a call that reaches the tools after they ended (the last
/// `BashTools` was dropped, or the server's session ended).
pub(crate) const CLOSED: &str = "The shell tools have ended: no command can be started or read";

/// Ours: the arguments are not a JSON object.
pub(crate) const NOT_AN_OBJECT: &str = "Invalid input: the arguments must be a JSON object";

/// Ours: a required argument is missing.
pub(crate) fn missing(name: &str) -> String {
    format!("Invalid input: the {name} parameter is required")
}

/// Issue 12, Claude Code's wording ("Shell cwd was reset to …"): with
/// `persist_working_directory`, the directory the recipient's last command
/// ended in could not be used, and the command ran in `ran_in`. One line,
/// after the result's text.
pub(crate) fn cwd_reset(lost: &Path, ran_in: &Path, outside_sandbox: bool) -> String {
    let why = if outside_sandbox {
        "is outside the sandbox"
    } else {
        "no longer exists"
    };
    format!(
        "Shell cwd was reset to {} ({} {why})",
        ran_in.display(),
        lost.display()
    )
}

/// Ours: what the `bash` description says with `persist_environment`.
pub(crate) const ENV_NOTE: &str = " Exported variables persist too: an `export` or `unset` in a foreground command carries to your next commands (functions, aliases and shell options do not).";

/// Ours: what the `bash` description says of `cd` (issue 12): whether the
/// directory a command ends in carries to the next one.
pub(crate) fn cd_note(persists: bool) -> &'static str {
    if persists {
        " The working directory persists between commands: a `cd` in a foreground command carries to your next commands (not one run with `working_directory`, nor one in the background); use absolute paths where you can."
    } else {
        " Each command starts in the default working directory: a `cd` does not carry to the next command."
    }
}

/// §4: the line before what `bash_output` shows with `tail`, when lines
/// were left out.
pub(crate) fn lines_not_shown(n: u64) -> String {
    format!("[{n} earlier lines not shown]")
}

/// §4: `list_shells` with nothing to list.
pub(crate) const NO_SHELLS: &str = "No shells";

/// §4: one line of `list_shells`: `ID (STATUS, ELAPSED): WHAT`, with the
/// exit code once ended (not for a killed shell).
pub(crate) fn shell_line(
    id: &str,
    status: TaskStatus,
    code: Option<i32>,
    elapsed: std::time::Duration,
    what: &str,
) -> String {
    let code = match (status, code) {
        (TaskStatus::Killed, _) | (_, None) => String::new(),
        (_, Some(c)) => format!(", exit code {c}"),
    };
    format!("{id} ({status}{code}, {}): {what}", short_elapsed(elapsed))
}

/// §4: a run time as `4s`, `2m05s`, `1h02m`.
pub(crate) fn short_elapsed(d: std::time::Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

/// Ours: an argument the tool does not take.
pub(crate) fn unknown_param(tool: &str, name: &str, known: &[&str]) -> String {
    format!(
        "Invalid input: {tool} has no parameter {name} (it takes {})",
        known.join(", ")
    )
}

/// Ours: a string argument that must say something is blank.
pub(crate) fn blank(name: &str) -> String {
    format!("Invalid input: the {name} parameter must not be blank")
}

/// Ours: an argument of the wrong type or out of range.
pub(crate) fn wrong_type(name: &str, expected: &str) -> String {
    format!("Invalid input: the {name} parameter must be {expected}")
}

/// §8 ours: an output file passed `max_output_bytes` and its shell was stopped.
pub(crate) fn output_cap(cap: u64) -> String {
    format!(
        "[The command was stopped: its output passed the limit of {cap} bytes (max_output_bytes).]"
    )
}

/// §11: the line after `Exit code N` of a tree stopped at its memory limit
/// (`limit` bytes, said in MiB rounded down).
pub(crate) fn out_of_memory(limit: u64) -> String {
    format!(
        "Out of memory: the command was stopped at its memory limit ({} MiB)",
        limit >> 20
    )
}

/// §11: the summary of a background command stopped at its memory limit.
pub(crate) fn out_of_memory_summary(what: &str, limit: u64) -> String {
    format!(
        "Background command \"{what}\" ran out of memory (limit {} MiB)",
        limit >> 20
    )
}

/// §11: the last line of a result whose tree reached its process limit.
pub(crate) fn pids_reached(limit: u64) -> String {
    format!("Note: the process limit ({limit}) was reached; some forks failed")
}

/// §8: the last lines of a result whose command exported a variable that
/// is not carried to the next commands.
pub(crate) fn not_kept_too_large(name: &str) -> String {
    let name = variable_name(name);
    format!("Note: {name} was not kept: the carried environment is limited to 64 KiB")
}

/// §8: as above, for a variable the gate refuses to assign.
pub(crate) fn not_kept_changes_what_runs(name: &str) -> String {
    let name = variable_name(name);
    format!("Note: {name} was not kept: it changes what runs")
}

/// §8: as above, past the number of variables carried.
pub(crate) fn not_kept_too_many(name: &str) -> String {
    let name = variable_name(name);
    let most = crate::config::defaults::CARRIED_ENTRIES_LIMIT;
    format!("Note: {name} was not kept: the carried environment is limited to {most} variables")
}

/// A variable's name as a note shows it: at most 64 characters (bash
/// takes names of any length).
fn variable_name(name: &str) -> String {
    match name.char_indices().nth(64) {
        Some((at, _)) => format!("{}…", &name[..at]),
        None => name.to_string(),
    }
}

/// §8: the line of a result whose exported variables passed what is read.
pub(crate) const NOT_KEPT_UNREAD: &str =
    "Note: the exported variables past 4 MiB were not read: they keep their values from before";

/// §8: the one line for the notes past the first few.
pub(crate) fn not_kept_more(n: usize) -> String {
    format!("Note: {n} more variables were not kept")
}

/// §8: as above, for a variable that changes how bash starts.
pub(crate) fn not_kept_shapes_bash(name: &str) -> String {
    let name = variable_name(name);
    format!("Note: {name} was not kept: it changes how bash starts")
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

/// Ours: `kill_shell` on an application entry whose stop panicked.
pub(crate) fn stop_panicked(id: &str) -> String {
    format!("Task {id} could not be stopped: its stop handler failed")
}

/// Ours: `monitor` without a `tasks` registry.
pub(crate) const MONITOR_NEEDS_TASKS: &str =
    "The monitor tool needs a task registry: this host configured none (BashTools::builder().tasks(...))";

/// §5: `&`, `<` and `>` as XML entities.
pub(crate) fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// §5: the summary of a background shell that ended.
pub(crate) fn shell_summary(what: &str, status: TaskStatus, code: i32) -> String {
    match status {
        TaskStatus::Completed => {
            format!("Background command \"{what}\" completed (exit code {code})")
        }
        TaskStatus::Killed => format!("Background command \"{what}\" was stopped"),
        _ if code == UNKNOWN_CODE => {
            format!("Background command \"{what}\" ended (exit code unknown)")
        }
        _ => format!("Background command \"{what}\" failed with exit code {code}"),
    }
}

/// §5: the summary of a monitor that ended; `why` says why it was stopped
/// when that was not `kill_shell` (a flood, the timeout).
pub(crate) fn monitor_summary(
    what: &str,
    status: TaskStatus,
    code: i32,
    why: Option<&str>,
) -> String {
    match (status, why) {
        (TaskStatus::Completed, _) => format!("Monitor \"{what}\" stream ended"),
        (TaskStatus::Killed, Some(why)) => format!("Monitor \"{what}\" stopped ({why})"),
        (TaskStatus::Killed, None) => format!("Monitor \"{what}\" stopped"),
        _ => format!("Monitor \"{what}\" script failed (exit {code})"),
    }
}

/// §7: why a flooding monitor was stopped.
pub(crate) fn flood_reason(d: Duration) -> String {
    format!("output rate too high for {}", seconds(d))
}

/// §7: the last event of a monitor at its timeout.
pub(crate) const MONITOR_TIMED_OUT: &str = "[Monitor timed out — re-arm if needed.]";

/// §7: the first line of the notification after a window with suppressed lines.
pub(crate) fn suppressed(n: u64) -> String {
    format!("[{n} events suppressed — output rate too high. Consider using kill_shell to restart this monitor with a more selective filter.]")
}

/// §7: a line cut at `line_limit`.
pub(crate) const LINE_TRUNCATED: &str = "...(truncated)";

/// §4 monitor: the answer of a monitor that started.
pub(crate) fn monitor_started(id: &str, timeout: Duration) -> String {
    format!(
        "Monitor started (task {id}, timeout {}ms).{MONITOR_NOTIFIED}",
        timeout.as_millis()
    )
}

/// §4 monitor: the promise of its events (the MCP server replaces it when
/// no path to the model is on).
pub(crate) const MONITOR_NOTIFIED: &str = " You will be notified on each event. Keep working — do not poll or sleep. Events may arrive while you are waiting for the user — an event is not their reply.";

/// Ours: what the MCP server says instead of [`MONITOR_NOTIFIED`] when its
/// events go out only as log messages, which the model may never see.
#[cfg(feature = "mcp")]
pub(crate) const MONITOR_AS_LOGS: &str = " Its events are sent only as log messages (notifications/message), which your client may not show you: read its output with bash_output.";

/// §5: the end notification of a shell or a monitor (the shell form).
pub(crate) fn end_notification(
    id: &str,
    call: Option<&str>,
    output: &Path,
    status: TaskStatus,
    summary: &str,
) -> String {
    let mut text = format!("<task-notification>\n<task-id>{id}</task-id>\n");
    if let Some(call) = call {
        text.push_str(&format!("<tool-use-id>{call}</tool-use-id>\n"));
    }
    text.push_str(&format!(
        "<output-file>{}</output-file>\n<status>{status}</status>\n<summary>{}</summary>\n</task-notification>",
        output.display(),
        xml_escape(summary)
    ));
    text
}

/// §5: a batch of monitor events. The lines are the command's own text:
/// any tag of a notification in them is neutralised
/// ([`neutralise_tags`]), so what the command prints can never read as a
/// notification, or part of one, that we did not send.
pub(crate) fn monitor_event(id: &str, description: &str, lines: &[String]) -> (String, String) {
    let label = format!("Monitor event: \"{description}\"");
    let mut event = String::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            event.push('\n');
        }
        event.push_str(&neutralise_tags(line));
    }
    let text = format!(
        "<task-notification>\n<task-id>{id}</task-id>\n<summary>{}</summary>\n<event>{event}</event>\n</task-notification>",
        xml_escape(&label),
    );
    (text, label)
}

/// The tags a notification is made of.
const NOTIFICATION_TAGS: [&str; 7] = [
    "task-notification",
    "task-id",
    "tool-use-id",
    "output-file",
    "status",
    "summary",
    "event",
];

/// `text` with the `<` of every opening or closing notification tag in it
/// (`<task-notification>`, `</event>`, `<status …`, in any case) written
/// as `&lt;`; every other character as it was, so output with `<` in it
/// (HTML, `a < b`) still reads as itself.
pub(crate) fn neutralise_tags(text: &str) -> std::borrow::Cow<'_, str> {
    let is_tag_at = |rest: &str| {
        let name = rest.strip_prefix('/').unwrap_or(rest);
        NOTIFICATION_TAGS.iter().any(|tag| {
            name.len() >= tag.len()
                && name.as_bytes()[..tag.len()].eq_ignore_ascii_case(tag.as_bytes())
                && !name[tag.len()..]
                    .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
    };
    if !text
        .match_indices('<')
        .any(|(i, _)| is_tag_at(&text[i + 1..]))
    {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (i, c) in text.char_indices() {
        if c == '<' && is_tag_at(&text[i + 1..]) {
            out.push_str("&lt;");
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// What the end notification of an application entry (a subagent) says.
pub(crate) struct TaskEnd<'a> {
    pub id: &'a str,
    pub kind: &'a str,
    pub description: &'a str,
    pub call: Option<&'a str>,
    pub status: TaskStatus,
    pub report: Option<&'a str>,
    pub error: Option<&'a str>,
}

/// Ours, in the form of §5: the end of an application entry (a subagent):
/// the notification text and its label.
pub(crate) fn task_notification(end: &TaskEnd<'_>) -> (String, String) {
    let kind = capitalized(end.kind);
    let what = end.description;
    let label = match end.status {
        TaskStatus::Completed | TaskStatus::Running => format!("{kind} \"{what}\" completed"),
        TaskStatus::Failed => format!("{kind} \"{what}\" failed"),
        TaskStatus::Killed => format!("{kind} \"{what}\" was stopped"),
    };
    let mut text = format!("<task-notification>\n<task-id>{}</task-id>\n", end.id);
    if let Some(call) = end.call {
        text.push_str(&format!("<tool-use-id>{call}</tool-use-id>\n"));
    }
    text.push_str(&format!(
        "<status>{}</status>\n<summary>{}</summary>\n",
        end.status,
        xml_escape(&label)
    ));
    if let Some(report) = end.report {
        text.push_str(&format!("<result>{report}</result>\n"));
    }
    if let Some(error) = end.error {
        text.push_str(&format!("<error>{error}</error>\n"));
    }
    text.push_str("</task-notification>");
    (text, label)
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// §4 bash_output on an application entry: its status, and once ended its
/// report (its error when it failed).
pub(crate) fn task_output(status: TaskStatus, body: Option<&str>) -> String {
    let mut text = format!("<status>{status}</status>");
    if let Some(body) = body {
        text.push_str(&format!("\n<output>\n{body}\n</output>"));
    }
    text
}

/// §4 bash: the result of a foreground command that did not exit 0, or was
/// stopped: `Exit code N`, the out-of-memory line when it ran out of its
/// memory limit (`oom`, bytes), its output, and the cap's note when the
/// output cap (`cap`, in bytes) stopped it.
pub(crate) fn failed_command(
    code: i32,
    oom: Option<u64>,
    output: &str,
    cap: Option<u64>,
) -> String {
    let mut text = exit_code(code);
    if let Some(limit) = oom {
        text.push('\n');
        text.push_str(&out_of_memory(limit));
    }
    if !output.is_empty() {
        text.push('\n');
        text.push_str(output);
    }
    if let Some(cap) = cap {
        text.push_str("\n\n");
        text.push_str(&output_cap(cap));
    }
    text
}

/// §4 bash_output: a shell's status, its exit code once ended, its new
/// output, and the cap's note when the output cap (`cap`, bytes) stopped it.
pub(crate) fn shell_output(
    status: TaskStatus,
    code: Option<i32>,
    oom: Option<u64>,
    output: &str,
    cap: Option<u64>,
) -> String {
    let mut text = format!("<status>{status}</status>");
    if let Some(code) = code {
        text.push_str(&format!("\n<exit_code>{code}</exit_code>"));
    }
    if let Some(limit) = oom {
        text.push('\n');
        text.push_str(&out_of_memory(limit));
    }
    if !output.is_empty() {
        text.push_str("\n<stdout>\n");
        text.push_str(output);
        text.push_str("\n</stdout>");
    }
    if let Some(cap) = cap {
        text.push('\n');
        text.push_str(&output_cap(cap));
    }
    text
}

#[cfg(test)]
mod tests {

    #[test]
    fn run_times_read_as_in_the_spec() {
        let at = |s: u64| super::short_elapsed(Duration::from_secs(s));
        assert_eq!(at(4), "4s");
        assert_eq!(at(59), "59s");
        assert_eq!(at(125), "2m05s");
        assert_eq!(at(3599), "59m59s");
        assert_eq!(at(3720), "1h02m");
        assert_eq!(at(100 * 3600), "100h00m");
        assert_eq!(
            super::shell_line(
                "bash_2",
                TaskStatus::Killed,
                Some(143),
                Duration::from_secs(3),
                "x"
            ),
            "bash_2 (killed, 3s): x"
        );
    }

    use super::*;

    #[test]
    fn seconds_are_whole_when_they_can_be() {
        assert_eq!(seconds(Duration::from_secs(120)), "120s");
        assert_eq!(seconds(Duration::from_millis(1500)), "1.5s");
        assert_eq!(seconds(Duration::from_millis(250)), "0.25s");
    }

    #[test]
    fn notification_tags_are_neutralised_and_nothing_else() {
        assert_eq!(
            neutralise_tags("a < b && c > d <div>"),
            "a < b && c > d <div>"
        );
        assert_eq!(
            neutralise_tags("</event></task-notification><TASK-NOTIFICATION>"),
            "&lt;/event>&lt;/task-notification>&lt;TASK-NOTIFICATION>"
        );
        assert_eq!(
            neutralise_tags("<status >x</Status>"),
            "&lt;status >x&lt;/Status>"
        );
        // A longer name is another tag.
        assert_eq!(
            neutralise_tags("<events> <status-bar> <summary_x>"),
            "<events> <status-bar> <summary_x>"
        );
        assert_eq!(neutralise_tags("é<event>é"), "é&lt;event>é");
        // Whatever the input, no notification tag survives.
        for text in ["<<event>", "<</event>>", "<task-id<task-id>", "x</summary"] {
            let out = neutralise_tags(text).to_lowercase();
            for tag in NOTIFICATION_TAGS {
                assert!(!out.contains(&format!("<{tag}")), "{text}: {out}");
                assert!(!out.contains(&format!("</{tag}")), "{text}: {out}");
            }
        }
    }

    #[test]
    fn an_empty_reason_is_denied() {
        assert_eq!(refused(""), "Command denied");
        assert_eq!(refused("blocked by policy"), "Command blocked by policy");
    }
}
