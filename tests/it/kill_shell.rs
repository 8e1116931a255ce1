//! The `kill_shell` tool: every text of SPEC section 4 for `kill_shell`, and
//! that the whole process group goes.

use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::json;

fn background(t: &bashtools::BashTools, command: &str) -> String {
    let r = bash(t, json!({"command": command, "run_in_background": true}));
    id_of(&r)
}

#[test]
fn stops_a_shell_and_names_its_command() {
    let t = tools();
    let id = background(&t, "sleep 1000");
    let pgid = pgid_of(&t);
    let r = t.kill_shell(&json!({"shell_id": id}));
    assert_eq!(
        (r.text.as_str(), r.is_error),
        ("Successfully stopped task: bash_1 (sleep 1000)", false)
    );
    assert!(t.background_pids().is_empty());
    assert_gone(&[pgid]);
}

#[test]
fn the_whole_group_is_gone_when_it_returns() {
    let t = tools();
    let id = background(&t, "(sleep 1000 &); sleep 1000");
    let pgid = pgid_of(&t);
    wait_until("the grandchild runs", || live_in_group(pgid).len() >= 2);
    let r = t.kill_shell(&json!({"shell_id": id}));
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(live_in_group(pgid), Vec::<u32>::new());
}

#[test]
fn a_command_ignoring_sigterm_is_killed_after_the_grace() {
    let grace = Duration::from_millis(700);
    let t = builder().kill_grace(grace).build().unwrap();
    let id = background(
        &t,
        "trap '' TERM; echo trapped; sleep 1000 & wait; sleep 1000",
    );
    let pgid = pgid_of(&t);
    wait_until("the trap is set", || {
        t.bash_output(&json!({"bash_id": id}))
            .text
            .contains("trapped")
    });
    let start = Instant::now();
    let r = t.kill_shell(&json!({"shell_id": id}));
    let took = start.elapsed();
    assert!(!r.is_error, "{}", r.text);
    assert!(took >= grace, "KILL came before the grace ended ({took:?})");
    assert_eq!(
        t.bash_output(&json!({"bash_id": id})).text,
        "<status>killed</status>\n<exit_code>137</exit_code>"
    );
    assert_eq!(live_in_group(pgid), Vec::<u32>::new());
}

#[test]
fn a_grandchild_ignoring_sigterm_is_killed_after_the_grace() {
    let t = builder()
        .kill_grace(Duration::from_millis(300))
        .build()
        .unwrap();
    // The leader dies of TERM at once; its grandchild survives TERM.
    let id = background(
        &t,
        "bash -c \"trap '' TERM; echo ready; sleep 1000\" & sleep 1000",
    );
    let pgid = pgid_of(&t);
    wait_until("the grandchild traps", || {
        t.bash_output(&json!({"bash_id": id}))
            .text
            .contains("ready")
    });
    t.kill_shell(&json!({"shell_id": id}));
    assert_eq!(live_in_group(pgid), Vec::<u32>::new());
}

#[test]
fn unknown_id_is_an_error() {
    let t = tools();
    let r = t.kill_shell(&json!({"shell_id": "bash_5"}));
    assert_eq!(
        (r.text.as_str(), r.is_error),
        ("No task found with ID: bash_5", true)
    );
}

#[test]
fn a_shell_that_ended_is_not_running() {
    let t = tools();
    let done = background(&t, "exit 2");
    t.bash_output(&json!({"bash_id": done, "block": true}));
    let r = t.kill_shell(&json!({"shell_id": done}));
    assert_eq!(
        (r.text.as_str(), r.is_error),
        ("Task bash_1 is not running (status: failed)", true)
    );

    let long = background(&t, "sleep 1000");
    t.kill_shell(&json!({"shell_id": long}));
    let r = t.kill_shell(&json!({"shell_id": long}));
    assert_eq!(r.text, "Task bash_2 is not running (status: killed)");
}

#[test]
fn a_shell_that_completed_reports_completed() {
    let t = tools();
    let id = background(&t, "true");
    t.bash_output(&json!({"bash_id": id, "block": true}));
    let r = t.kill_shell(&json!({"shell_id": id}));
    assert_eq!(r.text, "Task bash_1 is not running (status: completed)");
}

/// A shell whose leader has ended while a process it started runs on keeps
/// its status, but `kill_shell` stops what is left and says so.
#[test]
fn kill_shell_stops_what_an_ended_shell_left_running() {
    let t = tools();
    // The leader prints its pid (its group's id) itself: it may end before
    // the tools list it, so `background_pids` could never show it.
    let id = background(&t, "sleep 1000 & echo $$");
    let mut seen = String::new();
    wait_until("the leader has ended", || {
        let text = t.bash_output(&json!({"bash_id": id})).text;
        seen.push_str(&text);
        text.starts_with("<status>completed</status>")
    });
    let pgid: u32 = seen
        .lines()
        .find_map(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("no pid in {seen:?}"));
    assert!(!live_in_group(pgid).is_empty(), "the sleep runs on");
    let r = t.kill_shell(&json!({"shell_id": id}));
    assert_eq!(
        (r.text.as_str(), r.is_error),
        (
            "Successfully stopped task: bash_1 (sleep 1000 & echo $$)",
            false
        )
    );
    assert_gone(&[pgid]);
    let r = t.bash_output(&json!({"bash_id": id}));
    assert!(r.text.starts_with("<status>completed</status>"), "{r:?}");
    let r = t.kill_shell(&json!({"shell_id": id}));
    assert_eq!(r.text, "Task bash_1 is not running (status: completed)");
}

/// The group of the one background shell, once the tools list it: a shell
/// is listed from the moment its pid is recorded, which may come after
/// the call that started it returns.
fn pgid_of(t: &bashtools::BashTools) -> u32 {
    let mut pids = Vec::new();
    wait_until("the shell is listed", || {
        pids = t.background_pids();
        !pids.is_empty()
    });
    pids[0]
}
