//! The Tasks registry (SPEC section 6): application entries, reading and
//! stopping them through the tools, and the per-recipient queues.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::common::*;
use bashtools::{NewTask, TaskStatus, Tasks};
use serde_json::json;

#[test]
fn tasks_is_clone_send_sync() {
    fn is<T: Clone + Send + Sync>() {}
    is::<Tasks>();
    fn send_sync<T: Send + Sync>() {}
    send_sync::<bashtools::BashTools>();
    send_sync::<bashtools::Caller>();
}

#[test]
fn bash_output_reads_an_agent_by_id_and_by_name() {
    let tasks = Tasks::new();
    let t = builder().tasks(tasks.clone()).build().unwrap();
    let agent = tasks.register(
        NewTask::new("agent", "review the diff").name("reviewer"),
        || {},
    );
    assert_eq!(agent.id(), "agent_1");
    assert_eq!(
        t.bash_output(&json!({"bash_id": "agent_1"})).text,
        "<status>running</status>"
    );
    assert_eq!(
        t.bash_output(&json!({"bash_id": "reviewer"})).text,
        "<status>running</status>"
    );
    agent.complete("All good.\nTwo nits.");
    assert_eq!(
        t.bash_output(&json!({"bash_id": "reviewer"})).text,
        "<status>completed</status>\n<output>\nAll good.\nTwo nits.\n</output>"
    );
}

#[test]
fn a_failed_agent_shows_its_error() {
    let tasks = Tasks::new();
    let t = builder().tasks(tasks.clone()).build().unwrap();
    let agent = tasks.register(NewTask::new("agent", "build"), || {});
    agent.fail("the model gave up");
    assert_eq!(
        t.bash_output(&json!({"bash_id": agent.id()})).text,
        "<status>failed</status>\n<output>\nthe model gave up\n</output>"
    );
    // The first report wins.
    agent.complete("too late");
    assert_eq!(tasks.get(agent.id()).unwrap().status, TaskStatus::Failed);
}

#[test]
fn block_waits_for_an_agent_blocking_and_as_a_pending() {
    let tasks = Tasks::new();
    let t = Arc::new(builder().tasks(tasks.clone()).build().unwrap());
    let agent = tasks.register(NewTask::new("agent", "think"), || {});
    let p = t.bash_output_f(&json!({"bash_id": "agent_1", "block": true, "timeout": 60}));
    let waiter = {
        let t = t.clone();
        std::thread::spawn(move || {
            t.bash_output(&json!({"bash_id": "agent_1", "block": true, "timeout": 60}))
        })
    };
    assert!(!p.is_ready());
    agent.complete("done thinking");
    let expected = "<status>completed</status>\n<output>\ndone thinking\n</output>";
    assert_eq!(waiter.join().unwrap().text, expected);
    let mut p = p;
    assert_eq!(p.wait_timeout(DEADLINE).unwrap().text, expected);
}

#[test]
fn kill_shell_asks_an_agent_to_stop() {
    let tasks = Tasks::new();
    let t = builder().tasks(tasks.clone()).build().unwrap();
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let agent = tasks.register(
        NewTask::new("agent", "write docs").recipient("main"),
        move || {
            counter.fetch_add(1, Ordering::SeqCst);
        },
    );
    let rx = tasks.subscribe("main");
    let r = t.kill_shell(&json!({"shell_id": "agent_1"}));
    assert_eq!(
        (r.text.as_str(), r.is_error),
        ("Successfully stopped task: agent_1 (write docs)", false)
    );
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert!(agent.stop_requested());
    agent.stopped();
    let n = rx.recv_timeout(DEADLINE).unwrap();
    assert_eq!(n.label, "Agent \"write docs\" was stopped");
    assert_eq!(
        n.text,
        "<task-notification>\n<task-id>agent_1</task-id>\n<status>killed</status>\n<summary>Agent \"write docs\" was stopped</summary>\n</task-notification>"
    );
    let r = t.kill_shell(&json!({"shell_id": "agent_1"}));
    assert_eq!(r.text, "Task agent_1 is not running (status: killed)");
}

#[test]
fn an_agent_whose_stop_panics_is_an_error_result() {
    let tasks = Tasks::new();
    let t = builder().tasks(tasks.clone()).build().unwrap();
    tasks.register(NewTask::new("agent", "fragile"), || {
        panic!("stop is broken")
    });
    let r = t.kill_shell(&json!({"shell_id": "agent_1"}));
    assert_eq!(
        (r.text.as_str(), r.is_error),
        (
            "Task agent_1 could not be stopped: its stop handler failed",
            true
        )
    );
}

#[test]
fn an_agent_notification_carries_its_report_and_call() {
    let tasks = Tasks::new();
    let rx = tasks.subscribe("lead");
    let agent = tasks.register(
        NewTask::new("agent", "a & b")
            .recipient("lead")
            .call("toolu_7"),
        || {},
    );
    agent.complete("report");
    let n = rx.recv_timeout(DEADLINE).unwrap();
    assert_eq!(
        n.text,
        "<task-notification>\n<task-id>agent_1</task-id>\n<tool-use-id>toolu_7</tool-use-id>\n<status>completed</status>\n<summary>Agent \"a &amp; b\" completed</summary>\n<result>report</result>\n</task-notification>"
    );
}

#[test]
fn a_recipient_that_never_reads_keeps_only_the_newest() {
    let tasks = Tasks::with_queue_limit(3);
    for i in 0..10 {
        let a = tasks.register(NewTask::new("agent", format!("job {i}")), || {});
        a.complete("ok");
    }
    assert_eq!(tasks.dropped("main"), 7);
    let rx = tasks.subscribe("main");
    let ids: Vec<String> = rx.try_iter().map(|n| n.task_id).collect();
    assert_eq!(ids, ["agent_8", "agent_9", "agent_10"]);
}

#[test]
fn unknown_ids_and_names_are_errors() {
    let tasks = Tasks::new();
    let t = builder().tasks(tasks.clone()).build().unwrap();
    assert_eq!(
        t.bash_output(&json!({"bash_id": "nobody"})).text,
        "No task found with ID: nobody"
    );
    assert_eq!(
        t.kill_shell(&json!({"shell_id": "nobody"})).text,
        "No task found with ID: nobody"
    );
    assert!(tasks.get("nobody").is_none());
}

#[test]
fn background_shells_are_entries_of_the_registry() {
    let tasks = Tasks::new();
    let t = builder().tasks(tasks.clone()).build().unwrap();
    bash(
        &t,
        json!({"command": "sleep 1000", "run_in_background": true, "description": "nap"}),
    );
    let info = tasks.get("bash_1").unwrap();
    assert_eq!(
        (info.kind.as_str(), info.description.as_str(), info.status),
        ("bash", "nap", TaskStatus::Running)
    );
    t.kill_shell(&json!({"shell_id": "bash_1"}));
    wait_until("the entry ends", || {
        tasks.get("bash_1").unwrap().status == TaskStatus::Killed
    });
    assert!(tasks.list().iter().any(|i| i.id == "bash_1"));
}
