//! The typed API on real processes: each entry point, its outcomes and its
//! errors, and the semantics that the JSON tools share with it (the move
//! to the background of a dropped `Pending`, deadlines that cannot
//! overflow). Nothing here reads an ID out of a text.

mod common;

use std::time::{Duration, Instant};

use bashtools::{
    AsyncToolsOptions, BashTools, CallError, Caller, Command, ErrorKind, Outcome, Refusal, ShellId,
    StopCause, TaskStatus, Tasks,
};
use common::*;
use regex::Regex;
use serde_json::json;

fn exited(outcome: Outcome) -> bashtools::Exited {
    match outcome {
        Outcome::Exited(e) => e,
        other => panic!("expected an exit, got {other:?}"),
    }
}

fn backgrounded(outcome: Outcome) -> bashtools::Backgrounded {
    match outcome {
        Outcome::Background(b) => b,
        other => panic!("expected a background shell, got {other:?}"),
    }
}

#[test]
fn run_answers_an_exit_with_its_code_and_output() {
    let tools = tools();
    let e = exited(
        tools
            .run(&Command::new("echo out; echo err >&2; exit 4"), &me())
            .unwrap(),
    );
    assert_eq!((e.code(), e.output()), (4, "out\nerr"));
    assert!(!e.success());
    assert_eq!(e.truncated_chars(), 0);
    assert_eq!(e.stopped(), None);
    let e = exited(tools.run(&Command::new("true"), &me()).unwrap());
    assert!(e.success());
    assert_eq!(e.output(), "");
}

#[test]
fn run_says_how_much_of_a_long_output_was_left_out() {
    let tools = builder().output_limit(100).build().unwrap();
    let e = exited(
        tools
            .run(&Command::new("head -c 1000 /dev/zero | tr '\\0' x"), &me())
            .unwrap(),
    );
    assert_eq!(e.truncated_chars(), 900);
    assert!(e.output().starts_with(&"x".repeat(50)), "{}", e.output());
}

#[test]
fn run_in_the_background_gives_the_id_and_the_output_file() {
    let tools = tools();
    let b = backgrounded(
        tools
            .run(&Command::new("echo hi; sleep 1000").background(true), &me())
            .unwrap(),
    );
    assert_eq!(b.id().as_str(), "bash_1");
    assert_eq!(b.after(), None);
    assert!(b.output_file().exists());
    assert!(!b.notified(), "no registry, no notification");
    wait_until("it has written", || {
        tools.read_output(b.id(), None).unwrap().text() == "hi"
    });
    let pgids = tools.background_pids();
    let info = tools.kill(b.id()).unwrap();
    assert_eq!(info.status(), TaskStatus::Killed);
    assert_eq!(info.stopped(), Some(StopCause::Killed));
    assert_eq!(info.command(), "echo hi; sleep 1000");
    assert_gone(&pgids);
}

#[test]
fn a_timeout_moves_the_command_to_the_background_after_that_long() {
    let tools = tools();
    let timeout = Duration::from_millis(200);
    let b = backgrounded(
        tools
            .run(&Command::new("sleep 1000").timeout(timeout), &me())
            .unwrap(),
    );
    assert_eq!(b.after(), Some(timeout));
    assert_eq!(tools.status(b.id()).unwrap().status(), TaskStatus::Running);
    let pgids = tools.background_pids();
    assert_eq!(pgids.len(), 1);
    drop(tools);
    assert_gone(&pgids);
}

#[test]
fn gates_refuse_with_a_typed_reason() {
    let tools = builder()
        .allowed_commands(["echo"])
        .validator(|cmd, _| {
            if cmd.contains("secret") {
                Err("touches a secret".into())
            } else if cmd.contains("boom") {
                panic!("validator bug")
            } else {
                Ok(())
            }
        })
        .build()
        .unwrap();
    match tools.run(&Command::new("echo a; rm -rf x"), &me()).unwrap() {
        Outcome::Refused(Refusal::Gate(r)) => {
            assert_eq!(r.to_string(), "Command not allowed: rm")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        tools.run(&Command::new("echo secret"), &me()).unwrap(),
        Outcome::Refused(Refusal::Validator("touches a secret".into()))
    );
    assert_eq!(
        tools.run(&Command::new("echo boom"), &me()).unwrap(),
        Outcome::Refused(Refusal::ValidatorPanicked)
    );
}

#[test]
fn bad_commands_and_directories_are_typed_errors() {
    let tools = tools();
    assert_eq!(
        tools.run(&Command::new("  "), &me()),
        Err(CallError::NoCommand)
    );
    assert_eq!(
        tools.run(&Command::new("a\0b"), &me()),
        Err(CallError::NulInCommand)
    );
    let missing = std::path::Path::new("/no/such/dir");
    assert_eq!(
        tools.run(&Command::new("true").working_directory(missing), &me()),
        Err(CallError::NoSuchDirectory(missing.to_path_buf()))
    );
    let unknown = ShellId::from("bash_42");
    for err in [
        tools.status(&unknown).unwrap_err(),
        tools.read_output(&unknown, None).unwrap_err(),
        tools.wait(&unknown, Duration::ZERO).unwrap_err(),
        tools.kill(&unknown).unwrap_err(),
    ] {
        assert_eq!(err, CallError::UnknownId("bash_42".into()));
        assert_eq!(err.to_string(), "No task found with ID: bash_42");
    }
    let err = BashTools::builder()
        .working_directory("/no/such/dir")
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::WorkingDirectoryMissing);
}

#[test]
fn read_output_gives_only_new_output_and_filters_lines() {
    let tools = tools();
    let b = backgrounded(
        tools
            .run(
                &Command::new("echo one; echo two; echo three").background(true),
                &me(),
            )
            .unwrap(),
    );
    let info = tools.wait(b.id(), DEADLINE).unwrap();
    assert_eq!(
        (info.status(), info.exit_code()),
        (TaskStatus::Completed, Some(0))
    );
    let filter = Regex::new("^t").unwrap();
    let out = tools.read_output(b.id(), Some(&filter)).unwrap();
    assert_eq!(out.text(), "two\nthree");
    assert_eq!(out.info().status(), TaskStatus::Completed);
    assert_eq!(tools.read_output(b.id(), None).unwrap().text(), "");
}

#[test]
fn kill_of_an_ended_shell_says_it_is_not_running() {
    let tools = tools();
    let b = backgrounded(
        tools
            .run(&Command::new("exit 2").background(true), &me())
            .unwrap(),
    );
    assert_eq!(
        tools.wait(b.id(), DEADLINE).unwrap().status(),
        TaskStatus::Failed
    );
    let err = tools.kill(b.id()).unwrap_err();
    assert_eq!(
        err,
        CallError::NotRunning {
            id: "bash_1".into(),
            status: TaskStatus::Failed
        }
    );
    assert_eq!(
        err.to_string(),
        "Task bash_1 is not running (status: failed)"
    );
}

#[test]
fn wait_f_completes_at_the_exit_and_wait_returns_at_its_timeout() {
    let tools = tools();
    let b = backgrounded(
        tools
            .run(&Command::new("sleep 1000").background(true), &me())
            .unwrap(),
    );
    let started = Instant::now();
    let info = tools.wait(b.id(), Duration::from_millis(100)).unwrap();
    assert!(started.elapsed() >= Duration::from_millis(100));
    assert_eq!(info.status(), TaskStatus::Running);
    let mut pending = tools.wait_f(b.id(), Duration::MAX);
    assert!(pending.try_take().is_none());
    let pgids = tools.background_pids();
    tools.kill(b.id()).unwrap();
    let info = pending
        .wait_timeout(DEADLINE)
        .expect("completed at the exit");
    assert_eq!(info.unwrap().status(), TaskStatus::Killed);
    assert_gone(&pgids);
}

#[test]
fn the_command_handle_of_run_f_stops_the_foreground_command() {
    let tools = tools();
    let pending = tools.run_f(&Command::new("echo $$; sleep 1000"), &me());
    let canceller = pending
        .command()
        .expect("a foreground command can be stopped");
    wait_until("it runs", || {
        !tools.background_pids().is_empty() || {
            // Foreground commands of attached callers are not background work:
            // look at the process table instead.
            processes()
                .iter()
                .any(|p| p.3 != 'Z' && p.1 == std::process::id())
        }
    });
    let output = canceller.output_file().expect("it writes to a file");
    assert!(output.exists());
    canceller.cancel();
    let e = exited(pending.wait().unwrap());
    assert_eq!(e.stopped(), Some(StopCause::Killed));
    assert!(e.code() == 143 || e.code() == 137, "{e:?}");
}

/// Dropping the `Pending` of a foreground `bash` never leaves an invisible
/// command: at its timeout it moves to the background, is listed by
/// `background_pids`, and its end is notified like any other.
#[test]
fn a_dropped_pending_of_a_foreground_bash_moves_to_the_background_at_its_timeout() {
    let tasks = Tasks::new();
    let inbox = tasks.subscribe("main");
    let tools = builder().tasks(tasks.clone()).build().unwrap();
    let async_tools = tools.async_tools(AsyncToolsOptions::new());
    let bash = async_tools.iter().find(|t| t.name() == "bash").unwrap();
    let pending = bash.call(
        &json!({"command": "sleep 1000", "timeout": 0.2}),
        Some("toolu_9"),
    );
    drop(pending);
    wait_until("it is background work", || {
        tools.background_pids().len() == 1
    });
    let pgids = tools.background_pids();
    let info = tools.status(&ShellId::from("bash_1")).unwrap();
    assert_eq!(info.status(), TaskStatus::Running);
    tools.kill(info.id()).unwrap();
    let n = inbox.recv_timeout(DEADLINE).expect("its end is notified");
    assert_eq!(
        (n.task_id.as_str(), n.status),
        ("bash_1", Some(TaskStatus::Killed))
    );
    assert!(n.text.contains("<tool-use-id>toolu_9</tool-use-id>"));
    assert_gone(&pgids);
}

/// `Duration::MAX`, or a huge number of seconds in a tool call, means "no
/// deadline": never a panic, never a call that is not answered.
#[test]
fn huge_timeouts_and_graces_mean_no_deadline() {
    let tools = builder()
        .max_timeout(Duration::MAX)
        .kill_grace(Duration::MAX)
        .block_timeout(Duration::MAX)
        .build()
        .unwrap();
    let r = tools.bash(&json!({"command": "echo fine", "timeout": 1e300}), &me());
    assert_eq!(r.text, "fine");
    let e = exited(
        tools
            .run(&Command::new("exit 5").timeout(Duration::MAX), &me())
            .unwrap(),
    );
    assert_eq!(e.code(), 5);
    let mut p = tools.bash_f(&json!({"command": "echo later", "timeout": 1e300}), &me());
    assert_eq!(p.wait_timeout(Duration::MAX).unwrap().text, "later");
    // A stop with an endless grace still ends at once for a command that obeys TERM.
    let b = backgrounded(
        tools
            .run(&Command::new("sleep 1000").background(true), &me())
            .unwrap(),
    );
    let r = tools.bash_output(&json!({"bash_id": "bash_1", "block": true, "timeout": 0.1}));
    assert!(r.text.starts_with("<status>running</status>"), "{r:?}");
    let pgids = tools.background_pids();
    assert_eq!(tools.kill(b.id()).unwrap().status(), TaskStatus::Killed);
    assert_gone(&pgids);
}

#[test]
fn tool_results_carry_their_typed_facts() {
    let tools = tools();
    let r = tools.bash(&json!({"command": "exit 3"}), &me());
    assert_eq!((r.exit_code, r.is_error), (Some(3), true));
    let r = tools.bash(
        &json!({"command": "sleep 1000", "run_in_background": true}),
        &me(),
    );
    assert_eq!(r.task_id.as_deref(), Some("bash_1"));
    assert_eq!(r.status, Some(TaskStatus::Running));
    assert!(r.output_file.as_ref().is_some_and(|p| p.exists()));
    let pgids = tools.background_pids();
    let r = tools.kill_shell(&json!({"shell_id": "bash_1"}));
    assert_eq!(r.status, Some(TaskStatus::Killed));
    let r = tools.bash_output(&json!({"bash_id": "bash_1"}));
    assert_eq!(r.status, Some(TaskStatus::Killed));
    assert_eq!(r.exit_code, Some(143));
    assert_gone(&pgids);
}

#[test]
fn clones_share_the_shells_and_the_last_drop_ends_them() {
    let tools = tools();
    let other = tools.clone();
    let b = backgrounded(
        tools
            .run(&Command::new("sleep 1000").background(true), &me())
            .unwrap(),
    );
    assert_eq!(other.status(b.id()).unwrap().status(), TaskStatus::Running);
    let dir = tools.output_directory().to_path_buf();
    let pgids = tools.background_pids();
    drop(tools);
    assert_eq!(other.status(b.id()).unwrap().status(), TaskStatus::Running);
    drop(other);
    assert_gone(&pgids);
    assert!(!dir.exists(), "the output directory is removed");
}

#[test]
fn after_close_every_clone_answers_closed() {
    let tools = tools();
    let other = tools.clone();
    tools.close();
    assert_eq!(
        other.run(&Command::new("true"), &Caller::default()),
        Err(CallError::Closed)
    );
    assert!(other.bash(&json!({"command": "true"}), &me()).is_error);
}

/// A dropped `Pending` whose command ends before its timeout leaves no
/// record and no output file behind.
#[test]
fn a_pending_dropped_after_its_command_ended_leaves_no_file_behind() {
    let tools = tools();
    let pending = tools.run_f(&Command::new("echo gone").timeout(DEADLINE), &me());
    // Ready (the command has exited) but never taken.
    wait_until("the command has ended", || pending.is_ready());
    drop(pending);
    let dir = tools.output_directory().to_path_buf();
    assert_eq!(
        common::output_files(&dir),
        Vec::<String>::new(),
        "the drop settles the command at once"
    );
    assert!(tools.background_pids().is_empty());
}

#[test]
fn a_dropped_pending_of_a_quick_command_leaves_no_file_behind() {
    let tools = tools();
    drop(tools.run_f(&Command::new("echo gone").timeout(DEADLINE), &me()));
    let dir = tools.output_directory().to_path_buf();
    wait_until("its output file is removed", || {
        common::output_files(&dir).is_empty()
    });
    assert!(tools.background_pids().is_empty());
}
