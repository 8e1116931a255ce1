//! Containment where no cgroup can be made (forced here with
//! `BASHTOOLS_CONTAINMENT=session`): each command leads a session of its
//! own. What stays in the session (`set -m` jobs, plain forks) is stopped
//! with it; what calls `setsid` itself escapes, and these tests pin that
//! too, so the README's table says exactly what holds.

mod common;
mod escapes;

use std::time::Duration;

use bashtools::{BashTools, Containment};
use common::*;
use escapes::{kill_marker, left_after, marker, wait_started, Escape};
use serde_json::json;

/// Every test of this file wants sessions, so setting the variable from
/// each (to the same value) is no race between them.
fn session_tools() -> BashTools {
    std::env::set_var("BASHTOOLS_CONTAINMENT", "session");
    let tools = tools();
    assert_eq!(tools.containment(), Containment::Session);
    assert!(tools.cgroup().is_none());
    tools
}

/// Starts `escape` from a foreground command, then stops everything with
/// `stop`, which hands the tools back to be kept until the check (`None`:
/// it dropped them); returns what is left of it after `wait` (killed by
/// the test afterwards).
fn left_of_escape(
    escape: Escape,
    stop: impl FnOnce(BashTools) -> Option<BashTools>,
    wait: Duration,
) -> Vec<(u32, char)> {
    let tools = session_tools();
    let m = marker();
    let r = bash(
        &tools,
        json!({"command": format!("{}\necho $$", escape.command(&m))}),
    );
    let leader: u32 = r
        .text
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{}", r.text));
    wait_started(&m);
    if escape.new_session() {
        // Found by its command line, the escape may not have called
        // setsid(2) yet: a stop then still reaches it in the command's
        // session. Its escape is what is tested, so wait for it.
        wait_until("the escape has left the command's session", || {
            escapes::with_marker(&m)
                .iter()
                .all(|&(pid, _)| session_of(pid).is_some_and(|sid| sid != leader))
        });
    }
    let kept = stop(tools);
    let left = left_after(&m, wait);
    kill_marker(&m);
    drop(kept);
    left
}

/// The session of process `pid` (field 6 of `/proc/PID/stat`).
fn session_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces: count after its ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split(' ').nth(3)?.parse().ok()
}

fn stop_all(tools: BashTools) -> Option<BashTools> {
    tools.stop_all();
    Some(tools)
}

fn dropped(tools: BashTools) -> Option<BashTools> {
    drop(tools);
    None
}

#[test]
fn job_control_is_stopped_by_stop_all_in_session_mode() {
    let left = left_of_escape(Escape::JobControl, stop_all, Duration::from_millis(1));
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn job_control_is_stopped_by_drop_in_session_mode() {
    let left = left_of_escape(Escape::JobControl, dropped, Duration::from_millis(1));
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn job_control_is_stopped_by_kill_shell_in_session_mode() {
    let tools = session_tools();
    let m = marker();
    let cmd = format!("set -m; sleep {m} & sleep {m}");
    let r = bash(&tools, json!({"command": cmd, "run_in_background": true}));
    let id = id_of(&r);
    wait_until("both sleeps run", || escapes::with_marker(&m).len() >= 2);
    let r = tools.kill_shell(&json!({"shell_id": id}));
    assert!(!r.is_error, "{}", r.text);
    let left = left_after(&m, Duration::from_millis(1));
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_lingering_group_is_stopped_by_stop_all_after_many_commands() {
    let tools = session_tools();
    let m = marker();
    let r = bash(
        &tools,
        json!({"command": format!("sleep {m} & echo started")}),
    );
    assert_eq!(r.text, "started");
    // More commands than any fixed ring of ended groups would keep.
    for _ in 0..300 {
        bash(&tools, json!({"command": "true"}));
    }
    tools.stop_all();
    let left = left_after(&m, Duration::from_millis(1));
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn setsid_escapes_stop_all_in_session_mode() {
    if !Escape::Setsid.available() {
        eprintln!("SKIP: no setsid");
        return;
    }
    let left = left_of_escape(Escape::Setsid, stop_all, Duration::from_millis(1));
    assert!(
        !left.is_empty(),
        "a new session is out of reach without a cgroup"
    );
}

/// Dropped, the tools close the keeper's socket, and the keeper stops
/// every process that still carries the owner's mark in its environment,
/// new sessions included (after the drop returns, within the grace).
#[test]
fn python_new_session_is_stopped_by_the_keeper_at_drop_in_session_mode() {
    if !Escape::Python.available() {
        eprintln!("SKIP: no python3");
        return;
    }
    let left = left_of_escape(Escape::Python, dropped, DEADLINE);
    assert!(left.is_empty(), "the keeper left {left:?}");
}

#[test]
fn the_output_cap_holds_after_the_leader_exits_in_session_mode() {
    std::env::set_var("BASHTOOLS_CONTAINMENT", "session");
    let tools = builder().max_output_bytes(1_000_000).build().unwrap();
    let m = marker();
    let cmd = format!("(while :; do head -c 100000 /dev/zero; sleep 0.01; done; : {m}) & exit 0");
    let r = bash(&tools, json!({"command": cmd, "run_in_background": true}));
    let id = id_of(&r);
    let path = tools.output_directory().join(format!("{id}.output"));
    let left = left_after(&m, Duration::from_secs(30));
    assert!(left.is_empty(), "the writer ran on: {left:?}");
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size < 10_000_000, "the file grew to {size} bytes");
}
