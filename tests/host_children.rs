//! The host's own children are not ours: the reaper collects only the pids
//! it started (never `waitpid(-1)`), so a host that spawns and waits for a
//! child of its own gets the child's real exit status, even while shells
//! start and end around it; and `wait-timeout`'s SIGCHLD handler and the
//! reaper's coexist (SPEC sections 2 and 8).

mod common;

use std::process::Command;
use std::time::Duration;

use bashtools::BashTools;
use common::*;
use serde_json::json;
use wait_timeout::ChildExt;

/// Starts `command` in the background and returns its ID.
fn start_bg(tools: &BashTools, command: &str) -> String {
    let r = bash(
        tools,
        json!({"command": command, "run_in_background": true}),
    );
    assert!(!r.is_error, "{command}: {r:?}");
    id_of(&r)
}

/// Waits for a background shell that echoed `$$` to end; returns its pgid.
fn finish(tools: &BashTools, id: &str, status: &str) -> u32 {
    let r = tools.bash_output(&json!({"bash_id": id, "block": true, "timeout": 60}));
    assert!(
        r.text
            .starts_with(&format!("<status>{status}</status>\n<exit_code>")),
        "{id}: {r:?}"
    );
    let start = r.text.find("<stdout>\n").expect("the echoed pid") + "<stdout>\n".len();
    let end = r.text.rfind("\n</stdout>").expect("the echoed pid");
    r.text[start..end].trim().parse().expect("a pid")
}

#[test]
fn host_child_gets_its_real_exit_status_while_shells_run_and_end() {
    let tools = tools();
    let mut pgids = Vec::new();
    // Shells that keep running throughout.
    for _ in 0..3 {
        start_bg(&tools, "sleep 1000");
    }
    pgids.extend(tools.background_pids());
    assert_eq!(pgids.len(), 3);

    for round in 0..20 {
        // Shells that end around the host's child, so SIGCHLD arrives
        // for both kinds of children.
        let quick = start_bg(&tools, "echo $$; exit 1");
        let short = start_bg(&tools, "echo $$; sleep 0.05");
        let status = Command::new("sh")
            .args(["-c", "exit 7"])
            .spawn()
            .expect("spawn sh")
            .wait()
            .expect("wait for our own child (not ECHILD)");
        assert_eq!(status.code(), Some(7), "round {round}: {status:?}");
        pgids.push(finish(&tools, &quick, "failed"));
        pgids.push(finish(&tools, &short, "completed"));
    }
    assert_eq!(
        tools.background_pids().len(),
        3,
        "the long shells still run"
    );
    drop(tools);
    assert_gone(&pgids);
}

#[test]
fn longer_host_child_is_waited_while_bash_calls_happen_on_another_thread() {
    let tools = tools();
    let pgids = std::thread::scope(|s| {
        let calls = s.spawn(|| {
            let mut pgids = Vec::new();
            for i in 0..30 {
                let r = bash(
                    &tools,
                    json!({"command": format!("echo $$; echo call-{i}")}),
                );
                assert!(!r.is_error, "{r:?}");
                let mut lines = r.text.lines();
                pgids.push(lines.next().unwrap().parse::<u32>().unwrap());
                assert_eq!(lines.next(), Some(format!("call-{i}").as_str()));
                let id = start_bg(&tools, "echo $$; exit 2");
                pgids.push(finish(&tools, &id, "failed"));
            }
            pgids
        });
        for _ in 0..3 {
            let mut child = Command::new("sh")
                .args(["-c", "sleep 0.5; exit 3"])
                .spawn()
                .expect("spawn sh");
            let status = child.wait().expect("wait for our own child (not ECHILD)");
            assert_eq!(status.code(), Some(3), "{status:?}");
        }
        calls.join().expect("the bash calls")
    });
    assert_eq!(pgids.len(), 60);
    drop(tools);
    assert_gone(&pgids);
}

#[test]
fn wait_timeout_on_a_host_child_coexists_with_the_reaper() {
    let tools = tools();
    let mut pgids = Vec::new();
    // The reaper runs before wait-timeout installs its handler.
    let r = bash(&tools, json!({"command": "echo $$"}));
    pgids.push(r.text.parse::<u32>().expect("a pid"));

    // A shell that ends while wait_timeout waits on the host's child.
    let during = start_bg(&tools, "echo $$; sleep 0.2; exit 4");
    let mut child = Command::new("sh")
        .args(["-c", "sleep 0.5; exit 5"])
        .spawn()
        .expect("spawn sh");
    let status = child
        .wait_timeout(Duration::from_secs(60))
        .expect("wait_timeout")
        .expect("the host's child ended within 60 s");
    assert_eq!(status.code(), Some(5), "{status:?}");
    // A child that outlives the timeout is reported as still running.
    let mut slow = Command::new("sleep")
        .arg("1000")
        .spawn()
        .expect("spawn sleep");
    assert_eq!(
        slow.wait_timeout(Duration::from_millis(100))
            .expect("wait_timeout"),
        None
    );
    slow.kill().unwrap();
    let status = slow.wait().unwrap();
    assert_eq!(status.code(), None, "killed by a signal: {status:?}");

    // The reaper still sees exits: the one during the wait, and new ones.
    pgids.push(finish(&tools, &during, "failed"));
    let r = bash(&tools, json!({"command": "echo $$; echo after"}));
    assert!(!r.is_error, "{r:?}");
    let mut lines = r.text.lines();
    pgids.push(lines.next().unwrap().parse().unwrap());
    assert_eq!(lines.next(), Some("after"));
    let after = start_bg(&tools, "echo $$; sleep 0.1");
    pgids.push(finish(&tools, &after, "completed"));

    // And wait_timeout still works once more after the reaper's calls.
    let mut child = Command::new("sh")
        .args(["-c", "exit 6"])
        .spawn()
        .expect("spawn sh");
    let status = child
        .wait_timeout(Duration::from_secs(60))
        .expect("wait_timeout")
        .expect("ended");
    assert_eq!(status.code(), Some(6));

    drop(tools);
    assert_gone(&pgids);
}
