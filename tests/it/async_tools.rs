//! `async_tools` (SPEC section 8): definitions whose handlers return a
//! `Pending`, with the caller asked at each call.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::common::*;
use bashtools::{AsyncTool, AsyncToolsOptions, Tasks};
use serde_json::json;

fn find<'a>(tools: &'a [AsyncTool], name: &str) -> &'a AsyncTool {
    tools.iter().find(|t| t.name() == name).unwrap()
}

#[test]
fn definitions_name_the_tools_with_schemas() {
    let t = tools();
    let names: Vec<&str> = t
        .async_tools(AsyncToolsOptions::new())
        .iter()
        .map(|t| t.name())
        .collect();
    assert_eq!(names, ["bash", "bash_output", "kill_shell", "list_shells"]);
    let t = builder().tasks(Tasks::new()).build().unwrap();
    let defs = t.definitions();
    let names: Vec<&str> = defs.iter().map(|d| d.name).collect();
    assert_eq!(
        names,
        [
            "bash",
            "bash_output",
            "kill_shell",
            "monitor",
            "list_shells"
        ]
    );
    for d in &defs {
        assert_eq!(d.input_schema["type"], "object");
        assert!(d.input_schema["required"].is_array());
        assert!(
            d.description.len() > 100,
            "{} has a real description",
            d.name
        );
    }
    assert!(defs[0].description.contains("seconds"));
    assert!(defs[3].description.contains("milliseconds"));
}

#[test]
fn bash_completes_through_a_pending() {
    let t = tools();
    let tools = t.async_tools(AsyncToolsOptions::new());
    let r = find(&tools, "bash")
        .call(&json!({"command": "echo async"}), None)
        .wait();
    assert_eq!(r.text, "async");
    let mut p = find(&tools, "bash").call(&json!({"command": "exit 2"}), None);
    let r = p.wait_timeout(DEADLINE).unwrap();
    assert_eq!((r.text.as_str(), r.is_error), ("Exit code 2", true));
}

#[test]
fn bash_moves_to_the_background_at_its_timeout_with_nobody_waiting() {
    let tasks = Tasks::new();
    let rx = tasks.subscribe("sub");
    let t = builder().tasks(tasks.clone()).build().unwrap();
    let tools = t.async_tools(AsyncToolsOptions::new().recipient("sub"));
    let p = find(&tools, "bash").call(
        &json!({"command": "sleep 0.5", "timeout": 0.1}),
        Some("toolu_3"),
    );
    // Nobody waits on p: the timer moves the command.
    wait_until("it is a background shell", || tasks.get("bash_1").is_some());
    let r = p.wait();
    assert!(r.text.starts_with("Command did not complete within its 0.1s timeout and was moved to the background (ID: bash_1)"), "{}", r.text);
    let n = rx.recv_timeout(DEADLINE).unwrap();
    assert!(
        n.text.contains("<tool-use-id>toolu_3</tool-use-id>"),
        "{}",
        n.text
    );
}

#[test]
fn the_caller_is_asked_at_each_call() {
    let tasks = Tasks::new();
    let t = builder().tasks(tasks.clone()).build().unwrap();
    let asked = Arc::new(AtomicUsize::new(0));
    let n = asked.clone();
    let tools = t.async_tools(
        AsyncToolsOptions::new()
            .recipient_with(move || format!("agent_{}", n.fetch_add(1, Ordering::SeqCst) + 1)),
    );
    let bash = find(&tools, "bash");
    for _ in 0..2 {
        bash.call(&json!({"command": "true", "run_in_background": true}), None)
            .wait();
    }
    assert_eq!(asked.load(Ordering::SeqCst), 2);
    assert_eq!(tasks.get("bash_1").unwrap().recipient, "agent_1");
    assert_eq!(tasks.get("bash_2").unwrap().recipient, "agent_2");
}

#[test]
fn working_directory_and_detached_come_from_the_options() {
    let t = tools();
    let tools = t.async_tools(
        AsyncToolsOptions::new()
            .working_directory_with(|| "/tmp".into())
            .detached_with(|| true),
    );
    let r = find(&tools, "bash")
        .call(&json!({"command": "pwd"}), None)
        .wait();
    assert_eq!(r.text, "/tmp");
    let mut p = find(&tools, "bash").call(&json!({"command": "sleep 1000", "timeout": 600}), None);
    // A detached caller's foreground command belongs to the session.
    wait_until("it is listed", || t.background_pids().len() == 1);
    t.stop_all();
    let r = p.wait_timeout(DEADLINE).unwrap();
    assert!(r.text.starts_with("Exit code 143"), "{}", r.text);
}

#[test]
fn applies_says_which_calls_are_ours() {
    let t = tools();
    let tools = t.async_tools(AsyncToolsOptions::new().applies(|source| source == "bashtools"));
    assert!(find(&tools, "bash").applies("bashtools"));
    assert!(!find(&tools, "bash").applies("other-server"));
    let plain = t.async_tools(AsyncToolsOptions::new());
    assert!(find(&plain, "bash").applies("anything"));
}

#[test]
fn bash_output_with_block_through_async_tools() {
    let t = tools();
    let tools = t.async_tools(AsyncToolsOptions::new());
    let marker = std::env::temp_dir().join(format!("bashtools-async-{}", std::process::id()));
    let _ = std::fs::remove_file(&marker);
    let command = format!(
        "while [ ! -e {m} ]; do sleep 0.02; done; echo done",
        m = marker.display()
    );
    find(&tools, "bash")
        .call(
            &json!({"command": command, "run_in_background": true}),
            None,
        )
        .wait();
    let mut p =
        find(&tools, "bash_output").call(&json!({"bash_id": "bash_1", "block": true}), None);
    assert!(p.try_take().is_none(), "not ready while the shell runs");
    std::fs::write(&marker, "").unwrap();
    let r = p.wait_timeout(DEADLINE).expect("completed by the exit");
    assert_eq!(
        r.text,
        "<status>completed</status>\n<exit_code>0</exit_code>\n<stdout>\ndone\n</stdout>"
    );
    let r = find(&tools, "kill_shell")
        .call(&json!({"shell_id": "bash_1"}), None)
        .wait();
    assert_eq!(r.text, "Task bash_1 is not running (status: completed)");
    std::fs::remove_file(&marker).unwrap();
}
