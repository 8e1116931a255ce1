//! The `list_shells` tool: every background shell and monitor, newest
//! first, in SPEC section 4's exact form, across running, completed,
//! failed and killed shells and monitors.

use crate::common::*;
use bashtools::{ShellId, Tasks};
use serde_json::json;

/// `ID (STATUS[, exit code N], ELAPSED): WHAT` split into its parts, with
/// the run time checked for SPEC's form (`4s`, `2m05s`, `1h02m`).
fn parts(line: &str) -> (String, String, String) {
    let (head, what) = line.split_once("): ").unwrap_or_else(|| panic!("{line}"));
    let (id, inner) = head.split_once(" (").unwrap_or_else(|| panic!("{line}"));
    let (state, elapsed) = inner.rsplit_once(", ").unwrap_or_else(|| panic!("{line}"));
    let digits = elapsed.trim_end_matches(['s', 'm', 'h']);
    assert!(
        elapsed.ends_with('s') && digits.chars().all(|c| c.is_ascii_digit() || c == 'm'),
        "{line}: the run time {elapsed}"
    );
    (id.to_string(), state.to_string(), what.to_string())
}

#[test]
fn every_shell_and_monitor_newest_first_with_status_and_exit_code() {
    let t = builder().tasks(Tasks::new()).build().unwrap();
    assert_eq!(
        (
            t.list_shells(&json!({})).text.as_str(),
            t.list_shells(&json!({})).is_error
        ),
        ("No shells", false)
    );
    let start = |command: &str, description: Option<&str>| {
        let mut args = json!({"command": command, "run_in_background": true});
        if let Some(d) = description {
            args["description"] = json!(d);
        }
        id_of(&bash(&t, args))
    };
    let ok = start("true", Some("succeeds"));
    let bad = start("exit 3", None);
    let killed = start("sleep 1000", Some("sleeps"));
    let running = start("sleep 1000", None);
    let m = t.monitor(
        &json!({"description": "watches", "command": "sleep 1000"}),
        &me(),
    );
    assert!(!m.is_error, "{m:?}");
    for id in [&ok, &bad] {
        t.wait(&ShellId::from(id.as_str()), DEADLINE).unwrap();
    }
    assert!(!t.kill_shell(&json!({"shell_id": killed})).is_error);
    // A foreground command is not listed.
    assert_eq!(bash(&t, json!({"command": "echo fg"})).text, "fg");

    let r = t.list_shells(&json!({}));
    assert!(!r.is_error, "{r:?}");
    let lines: Vec<_> = r.text.lines().map(parts).collect();
    let expected = [
        ("monitor_1", "running", "watches"),
        (running.as_str(), "running", "sleep 1000"),
        (killed.as_str(), "killed", "sleeps"),
        (bad.as_str(), "failed, exit code 3", "exit 3"),
        (ok.as_str(), "completed, exit code 0", "succeeds"),
    ];
    let got: Vec<(&str, &str, &str)> = lines
        .iter()
        .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
        .collect();
    assert_eq!(got, expected, "{}", r.text);
    // Arguments it does not take are refused, naming them.
    let r = t.list_shells(&json!({"all": true}));
    assert!(r.is_error && r.text.contains("no parameter all"), "{r:?}");
    let pids = t.background_pids();
    drop(t);
    assert_gone(&pids);
}
