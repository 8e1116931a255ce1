//! Interactive commands (contract §4 `write_stdin`): a command on a
//! pseudo-terminal of its own, answered with `write_stdin`, with real
//! programs (bash's `read`, an interactive bash, `cat`, python3).
//!
//! Output can come in pieces on a busy machine (the echo of the input, then
//! the program's answer): the tests gather what `write_stdin` and
//! `bash_output` return until what they expect is there, never a pause.

mod common;

use std::time::{Duration, Instant};

use bashtools::{BashTools, Caller, Command, ErrorKind, Outcome, TaskStatus, Tasks};
use common::*;
use serde_json::json;

/// A generous yield: answers come back early anyway (quiet or ended).
const YIELD_MS: u64 = 10_000;

fn interactive() -> BashTools {
    builder().interactive(true).build().expect("tools build")
}

/// Starts `command` interactive; returns its ID and its first answer.
fn start(t: &BashTools, command: &str) -> (String, String) {
    let r = bash(
        t,
        json!({"command": command, "interactive": true, "yield_ms": YIELD_MS}),
    );
    assert!(!r.is_error, "{}", r.text);
    (id_of(&r), r.text)
}

fn write(t: &BashTools, id: &str, input: &str) -> bashtools::ToolResult {
    t.write_stdin(&json!({"shell_id": id, "input": input, "yield_ms": YIELD_MS}))
}

/// Everything shown so far plus what comes next, until it holds `needle`.
fn gather_until(t: &BashTools, id: &str, mut seen: String, needle: &str) -> String {
    let end = Instant::now() + DEADLINE;
    while !seen.contains(needle) {
        assert!(Instant::now() < end, "no {needle:?} in {seen:?}");
        let r = t.yield_output(&id.into(), Duration::from_millis(YIELD_MS));
        match r {
            Ok(out) => {
                // Each answer is trimmed: keep the pieces apart.
                seen.push('\n');
                seen.push_str(out.text());
            }
            Err(e) => panic!("{e}"),
        }
    }
    seen
}

/// Waits for shell `id` to end; its state then.
fn ended(t: &BashTools, id: &str) -> bashtools::ShellInfo {
    let info = t.wait(&id.into(), DEADLINE).unwrap();
    assert!(info.status().is_ended(), "{info:?}");
    info
}

/// The pids of processes whose command line contains `marker`.
fn with_marker(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if String::from_utf8_lossy(&cmdline).contains(marker) {
            found.push(pid);
        }
    }
    found
}

#[test]
fn a_prompt_is_shown_and_answered() {
    let t = interactive();
    let (id, first) = start(&t, "read -p 'name? ' n; echo \"hi $n\"");
    assert!(
        first.starts_with("Command running in background with ID: bash_1."),
        "{first}"
    );
    gather_until(&t, &id, first, "name?");
    let r = write(&t, &id, "bob\n");
    assert!(!r.is_error, "{}", r.text);
    assert!(r.text.starts_with("<status>"), "{}", r.text);
    let seen = gather_until(&t, &id, r.text, "hi bob");
    let info = ended(&t, &id);
    assert_eq!(
        (info.status(), info.exit_code()),
        (TaskStatus::Completed, Some(0))
    );
    // Once ended, the answer says so, with everything it printed.
    let last = t.bash_output(&json!({"bash_id": id}));
    assert!(last
        .text
        .starts_with("<status>completed</status>\n<exit_code>0</exit_code>"));
    assert!(seen.contains("hi bob"), "{seen}");
}

#[test]
fn the_terminal_is_the_controlling_terminal_of_a_session_leader_of_80_by_24() {
    let t = interactive();
    let (id, first) = start(
        &t,
        "tty; stty size; read -r _ _ _ _ _ sid _ < /proc/$$/stat; \
         [ \"$sid\" = \"$$\" ] && echo session-leader; \
         [ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo all-three; echo \"TERM=$TERM\"",
    );
    let seen = gather_until(&t, &id, first, "TERM=");
    assert!(seen.contains("/dev/pts/"), "{seen}");
    assert!(seen.contains("24 80"), "{seen}");
    assert!(seen.contains("session-leader"), "{seen}");
    assert!(seen.contains("all-three"), "{seen}");
    assert!(seen.contains("TERM=dumb"), "{seen}");
    // No carriage returns: \n stays \n.
    assert!(!seen.contains('\r'), "{seen:?}");
    ended(&t, &id);
}

#[test]
fn the_terminal_size_can_be_configured() {
    let t = builder()
        .interactive(true)
        .terminal_size(120, 40)
        .build()
        .unwrap();
    let (id, first) = start(&t, "stty size; echo done");
    let seen = gather_until(&t, &id, first, "done");
    assert!(seen.contains("40 120"), "{seen}");
}

#[test]
fn python_evaluates_a_line() {
    if std::process::Command::new("python3")
        .arg("-c")
        .arg("")
        .status()
        .map_or(true, |s| !s.success())
    {
        eprintln!("skipped: no python3 on this machine");
        return;
    }
    let t = interactive();
    let (id, first) = start(&t, "python3 -q -i");
    gather_until(&t, &id, first, ">>>");
    let r = write(&t, &id, "1+1\n");
    let seen = gather_until(&t, &id, r.text, "\n2");
    assert!(seen.contains("1+1"), "the echo of the input: {seen}");
    let r = write(&t, &id, "exit()\n");
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(ended(&t, &id).status(), TaskStatus::Completed);
}

#[test]
fn ctrl_c_interrupts_a_sleep_and_the_shell_keeps_answering() {
    let t = interactive();
    let (id, first) = start(&t, "PS1='ready$ ' exec bash --norc --noprofile -i");
    gather_until(&t, &id, first, "ready$");
    let leader = t.background_pids()[0];
    let r = write(&t, &id, "sleep 100\n");
    assert!(!r.is_error, "{}", r.text);
    let sleeping = || {
        processes()
            .into_iter()
            .filter(|&(pid, ppid, _, _)| ppid == leader && pid != leader)
            .count()
    };
    wait_until("the sleep runs", || sleeping() == 1);
    let r = write(&t, &id, "\u{3}");
    assert!(!r.is_error, "{}", r.text);
    wait_until("the sleep is interrupted", || sleeping() == 0);
    let r = write(&t, &id, "echo still-$((6*7))\n");
    let seen = gather_until(&t, &id, r.text, "still-42");
    assert!(seen.contains("still-42"), "{seen}");
    let info = t.status(&id.as_str().into()).unwrap();
    assert_eq!(info.status(), TaskStatus::Running);
    let r = write(&t, &id, "exit 5\n");
    assert!(!r.is_error, "{}", r.text);
    let info = ended(&t, &id);
    assert_eq!(
        (info.status(), info.exit_code()),
        (TaskStatus::Failed, Some(5))
    );
}

#[test]
fn ctrl_d_ends_cat() {
    let t = interactive();
    let (id, _) = start(&t, "cat");
    let r = write(&t, &id, "hello\n");
    // The terminal's echo, then cat's copy.
    let seen = gather_until(&t, &id, r.text, "hello\nhello");
    assert!(seen.contains("hello"), "{seen}");
    let r = write(&t, &id, "\u{4}");
    assert!(!r.is_error, "{}", r.text);
    let info = ended(&t, &id);
    assert_eq!(
        (info.status(), info.exit_code()),
        (TaskStatus::Completed, Some(0))
    );
}

#[test]
fn fifty_megabytes_on_a_terminal_are_truncated_and_capped() {
    let t = builder()
        .interactive(true)
        .max_output_bytes(1 << 20)
        .build()
        .unwrap();
    let r = bash(
        &t,
        json!({"command": "head -c 50000000 /dev/zero | tr '\\0' x; echo; sleep 100",
               "interactive": true}),
    );
    let id = id_of(&r);
    let first = r.text;
    let info = ended(&t, &id);
    assert_eq!(info.status(), TaskStatus::Killed);
    let size = std::fs::metadata(info.output_file()).unwrap().len();
    assert!(size < 50_000_000, "the cap stopped it: {size} bytes");
    let r = t.bash_output(&json!({"bash_id": id}));
    // The first yield showed what came in its second, the rest comes now:
    // each cut to the output limit.
    let both = format!("{first}\n{}", r.text);
    assert!(
        both.contains("characters truncated"),
        "{}",
        &both[..200.min(both.len())]
    );
    assert!(r.text.contains("1048576"), "the cap is named: {}", r.text);
    assert!(first.len() < 40_000 && r.text.len() < 40_000);
}

#[test]
fn kill_shell_of_an_interactive_shell_leaves_nothing() {
    let t = interactive();
    let marker = format!("9{}7", std::process::id());
    let (id, first) = start(
        &t,
        &format!("sleep {marker}1 & sleep {marker}2 & read -p ready x"),
    );
    gather_until(&t, &id, first, "ready");
    // bash, whose command line holds the marker, and its two sleeps.
    wait_until("both sleeps run", || with_marker(&marker).len() == 3);
    let r = t.kill_shell(&json!({"shell_id": id}));
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(with_marker(&marker), Vec::<u32>::new());
    assert_eq!(zombie_children(), Vec::<u32>::new());
    let info = t.status(&id.as_str().into()).unwrap();
    assert_eq!(info.status(), TaskStatus::Killed);
    // Stopped: it takes no more input.
    let r = write(&t, &id, "x\n");
    assert!(r.is_error);
}

/// Hardening item 18: a program that never reads its terminal cannot make
/// `write_stdin` queue without end: past 1 MiB waiting for it, the input
/// is refused with a clear message, the shell goes on, and `kill_shell`
/// still stops it.
#[test]
fn input_for_a_program_that_never_reads_is_capped() {
    let t = interactive();
    // Raw mode: the terminal's line discipline holds what it can and then
    // takes no more (in canonical mode it would drop the excess itself).
    let (id, first) = start(&t, "stty raw -echo && echo raw && sleep 1000");
    gather_until(&t, &id, first, "raw");
    let chunk = "y".repeat(64 * 1024);
    let mut refused = None;
    for i in 0..64 {
        let r = t.write_stdin(&json!({"shell_id": id, "input": chunk, "yield_ms": 1}));
        if r.is_error {
            refused = Some((i, r.text));
            break;
        }
    }
    let (sent, text) = refused.expect("4 MiB were queued for a program that never reads");
    assert!(sent >= 15, "refused after {sent} chunks of 64 KiB: {text}");
    assert_eq!(
        text,
        format!("Input not sent: shell {id} has not read the input it was given before, and at most 1024 KiB may wait for it. Read its output with bash_output, or stop it with kill_shell.")
    );
    assert_eq!(
        t.status(&id.as_str().into()).unwrap().status(),
        TaskStatus::Running
    );
    let r = t.kill_shell(&json!({"shell_id": id}));
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(zombie_children(), Vec::<u32>::new());
}

#[test]
fn drop_stops_interactive_shells() {
    let marker = format!("8{}3", std::process::id());
    {
        let t = interactive();
        start(&t, &format!("sleep {marker}"));
        wait_until("the sleep runs", || with_marker(&marker).len() == 1);
    }
    assert_eq!(with_marker(&marker), Vec::<u32>::new());
    // The keeper ends on its own once the tools are dropped (EOF on its
    // socket) and is reaped by the reaper a moment later.
    wait_until("no zombie child is left", || zombie_children().is_empty());
}

#[test]
fn an_unknown_id_is_an_error() {
    let t = interactive();
    let r = write(&t, "bash_99", "x\n");
    assert_eq!(
        (r.text.as_str(), r.is_error),
        ("No task found with ID: bash_99", true)
    );
}

#[test]
fn a_shell_that_is_not_interactive_is_an_error() {
    let t = interactive();
    let r = bash(
        &t,
        json!({"command": "sleep 100", "run_in_background": true}),
    );
    let id = id_of(&r);
    let r = write(&t, &id, "x\n");
    assert!(r.is_error);
    assert_eq!(
        r.text,
        "Shell bash_1 is not interactive: write_stdin types only into a shell started with interactive: true"
    );
    t.kill_shell(&json!({"shell_id": id}));
}

#[test]
fn a_shell_that_ended_is_an_error() {
    let t = interactive();
    let (id, _) = start(&t, "echo bye");
    ended(&t, &id);
    let r = write(&t, &id, "x\n");
    assert_eq!(
        (r.text.as_str(), r.is_error),
        ("Task bash_1 is not running (status: completed)", true)
    );
}

#[test]
fn interactive_needs_the_option() {
    let t = tools();
    let r = bash(&t, json!({"command": "cat", "interactive": true}));
    assert!(r.is_error);
    assert!(
        r.text.starts_with("Interactive commands are not enabled"),
        "{}",
        r.text
    );
    assert!(t.background_pids().is_empty());
    let r = write(&t, "bash_1", "x\n");
    assert!(r.is_error);
    assert!(
        r.text.starts_with("Interactive commands are not enabled"),
        "{}",
        r.text
    );
    assert!(!t.definitions().iter().any(|d| d.name == "write_stdin"));
    let bash_def = &t.definitions()[0];
    assert!(bash_def.input_schema["properties"]
        .get("interactive")
        .is_none());
}

#[test]
fn stdin_beside_interactive_is_refused_and_starts_nothing() {
    let t = interactive();
    let r = bash(
        &t,
        json!({"command": "cat", "interactive": true, "stdin": "hello\n"}),
    );
    assert!(r.is_error);
    assert!(
        r.text
            .starts_with("stdin cannot be combined with interactive"),
        "{}",
        r.text
    );
    assert!(t.background_pids().is_empty());
}

#[test]
fn interactive_beside_a_gate_needs_interactive_ungated() {
    let gated = BashTools::builder()
        .interactive(true)
        .allowed_commands(["python3"])
        .build()
        .unwrap_err();
    assert_eq!(gated.kind(), ErrorKind::InteractiveGated);
    assert!(gated.to_string().contains("interactive_ungated"), "{gated}");
    let validated = BashTools::builder()
        .interactive(true)
        .validator(|_, _| Ok(()))
        .build()
        .unwrap_err();
    assert_eq!(validated.kind(), ErrorKind::InteractiveGated);
    let t = builder()
        .interactive(true)
        .interactive_ungated(true)
        .allowed_commands(["cat"])
        .build()
        .unwrap();
    // The command line is gated as usual ...
    let r = bash(&t, json!({"command": "rm -rf x", "interactive": true}));
    assert_eq!(
        (r.text.as_str(), r.is_error),
        ("Command not allowed: rm", true)
    );
    // ... what is typed into it is not.
    let (id, _) = start(&t, "cat");
    let r = write(&t, &id, "rm -rf x\n");
    assert!(!r.is_error, "{}", r.text);
    write(&t, &id, "\u{4}");
    ended(&t, &id);
}

#[test]
fn the_tool_list_offers_write_stdin_with_the_option() {
    let t = interactive();
    let defs = t.definitions();
    let names: Vec<&str> = defs.iter().map(|d| d.name).collect();
    assert_eq!(
        names,
        [
            "bash",
            "bash_output",
            "kill_shell",
            "list_shells",
            "write_stdin"
        ]
    );
    assert!(defs[0].input_schema["properties"]["interactive"].is_object());
    assert!(defs[0].description.contains("write_stdin"));
}

#[test]
fn the_typed_api_starts_answers_and_reads() {
    let t = interactive();
    let cmd = Command::new("read -p 'age? ' a; echo \"age $a\"").interactive(true);
    assert!(cmd.is_interactive() && cmd.is_background());
    let Outcome::Background(bg) = t.run(&cmd, &Caller::default()).unwrap() else {
        panic!("an interactive command starts in the background")
    };
    let mut seen = String::new();
    while !seen.contains("age?") {
        seen.push_str(t.yield_output(bg.id(), DEADLINE).unwrap().text());
    }
    let out = t.send_input(bg.id(), "7\n", DEADLINE).unwrap();
    let seen = gather_until(&t, bg.id().as_str(), out.text().to_string(), "age 7");
    assert!(seen.contains("age 7"));
    ended(&t, bg.id().as_str());
}

#[test]
fn the_end_of_an_interactive_shell_is_notified() {
    let tasks = Tasks::new();
    let inbox = tasks.subscribe("main");
    let t = builder().interactive(true).tasks(tasks).build().unwrap();
    let (id, _) = start(&t, "cat");
    write(&t, &id, "\u{4}");
    let n = inbox.recv_timeout(DEADLINE).unwrap();
    assert_eq!(n.task_id, id);
    assert!(n.text.contains("<status>completed</status>"), "{}", n.text);
}

#[test]
fn containment_holds_an_interactive_shell() {
    let t = interactive();
    // Session mode (no cgroup): nothing to print first.
    let cell = t
        .cgroup()
        .map(|jail| format!("{}; ", print_cell(&jail)))
        .unwrap_or_default();
    let (id, first) = start(&t, &format!("{cell}read -p ready x"));
    let seen = gather_until(&t, &id, first, "ready");
    if let Some(cgroup) = t.cgroup() {
        // Cgroup mode: the command was created inside its own cell, under
        // the tools' cgroup.
        let name = cgroup.file_name().unwrap().to_string_lossy().to_string();
        assert!(
            seen.contains(&name),
            "{seen} not under {}",
            cgroup.display()
        );
    }
    let r = t.kill_shell(&json!({"shell_id": id}));
    assert!(!r.is_error, "{}", r.text);
}

#[test]
fn a_sandboxed_interactive_shell_gets_its_terminal() {
    let dir = Scratch::new("pty-sandbox");
    let t = builder()
        .interactive(true)
        .working_directory(&dir.0)
        .sandbox(bashtools::Sandbox::new().best_effort(true))
        .build()
        .unwrap();
    let (id, first) = start(&t, "tty; read -p 'go? ' x; echo \"got $x\"");
    let seen = gather_until(&t, &id, first, "go?");
    assert!(seen.contains("/dev/pts/"), "{seen}");
    let r = write(&t, &id, "yes\n");
    gather_until(&t, &id, r.text, "got yes");
    ended(&t, &id);
}

#[test]
fn a_command_that_prints_and_exits_at_once_is_ended_with_all_its_output() {
    let t = interactive();
    // One write as large as the terminal holds, then the exit at once:
    // all of it is still in the terminal when the leader is reaped.
    let expected = 60_000;
    for _ in 0..10 {
        let r = bash(
            &t,
            json!({"command": "exec head -c 60000 /dev/zero", "interactive": true}),
        );
        let id = id_of(&r);
        // The end is recorded only once the terminal has been drained.
        let info = ended(&t, &id);
        assert_eq!(info.status(), TaskStatus::Completed);
        let size = std::fs::metadata(info.output_file()).unwrap().len();
        assert_eq!(size as usize, expected, "{id}");
    }
}

#[test]
fn the_async_tools_answer_interactive_commands() {
    let t = interactive();
    let tools = t.async_tools(bashtools::AsyncToolsOptions::new());
    let tool = |name: &str| tools.iter().find(|t| t.name() == name).unwrap();
    let r = tool("bash")
        .call(
            &json!({"command": "read -p 'say? ' w; echo \"said $w\"", "interactive": true}),
            None,
        )
        .wait();
    assert!(!r.is_error, "{}", r.text);
    let id = id_of(&r);
    let r = tool("write_stdin")
        .call(
            &json!({"shell_id": id, "input": "yes\n", "yield_ms": YIELD_MS}),
            None,
        )
        .wait();
    assert!(!r.is_error, "{}", r.text);
    gather_until(&t, &id, r.text, "said yes");
    ended(&t, &id);
}

/// Set for the process of its own that [`io_threads_alone`] runs in.
const ALONE: &str = "BASHTOOLS_TEST_IO_THREADS_ALONE";

/// Run by the test below in a process of its own, so that no other test's
/// tools start or end their I/O threads meanwhile; does nothing elsewhere.
#[test]
fn io_threads_alone() {
    if std::env::var_os(ALONE).is_none() {
        return;
    }
    let io_threads = || {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .flatten()
            .filter(|task| {
                std::fs::read_to_string(task.path().join("comm"))
                    .is_ok_and(|c| c.trim() == "bashtools-termi")
            })
            .count()
    };
    let t = interactive();
    assert_eq!(io_threads(), 0, "started with the first terminal");
    let ids: Vec<String> = (0..5)
        .map(|_| {
            let r = bash(
                &t,
                json!({"command": "cat", "interactive": true, "yield_ms": 50}),
            );
            id_of(&r)
        })
        .collect();
    assert_eq!(io_threads(), 1);
    for id in &ids {
        let r = t.write_stdin(&json!({"shell_id": id, "input": "\u{4}", "yield_ms": 50}));
        assert!(!r.is_error, "{}", r.text);
        ended(&t, id);
    }
}

#[test]
fn one_io_thread_serves_every_terminal() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "io_threads_alone", "--test-threads=1"])
        .env(ALONE, "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("1 passed"), "{text}");
}

#[test]
fn ctrl_c_stops_a_program_run_directly() {
    let t = interactive();
    // It prints nothing: its first answer waits the whole (short) yield.
    let r = bash(
        &t,
        json!({"command": "exec sleep 100", "interactive": true, "yield_ms": 100}),
    );
    let id = id_of(&r);
    let r = write(&t, &id, "\u{3}");
    assert!(!r.is_error, "{}", r.text);
    let info = ended(&t, &id);
    // SIGINT from the terminal, as at a keyboard: 128 + 2.
    assert_eq!(
        (info.status(), info.exit_code()),
        (TaskStatus::Failed, Some(130))
    );
}

#[test]
fn a_shell_that_closed_its_terminal_takes_no_input() {
    let t = interactive();
    let (id, first) = start(
        &t,
        "echo closing; exec </dev/null >/dev/null 2>&1; sleep 100",
    );
    gather_until(&t, &id, first, "closing");
    let end = Instant::now() + DEADLINE;
    let r = loop {
        // The I/O thread sees the terminal closed at its next read.
        let r = t.write_stdin(&json!({"shell_id": id, "input": "x\n", "yield_ms": 100}));
        if r.is_error || Instant::now() > end {
            break r;
        }
    };
    assert_eq!(
        r.text,
        format!("Shell {id} has closed its terminal: it reads no more input")
    );
    let r = t.kill_shell(&json!({"shell_id": id}));
    assert!(!r.is_error, "{}", r.text);
}
