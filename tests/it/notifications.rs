//! Task notifications of background shells (SPEC section 5): exactly one per
//! shell that ends, to the right recipient, in the exact form.

use std::collections::HashMap;
use std::time::Duration;

use crate::common::*;
use bashtools::{Caller, Tasks};
use serde_json::json;

fn with_tasks() -> (bashtools::BashTools, Tasks) {
    let tasks = Tasks::new();
    let t = builder().tasks(tasks.clone()).build().unwrap();
    (t, tasks)
}

#[test]
fn a_background_shell_that_completes_notifies_its_recipient() {
    let (t, tasks) = with_tasks();
    let rx = tasks.subscribe("main");
    let r = t.bash(
        &json!({"command": "echo hi", "run_in_background": true, "description": "say <hi> & go"}),
        &Caller::default().call("toolu_01"),
    );
    let path = t.output_directory().join("bash_1.output");
    assert_eq!(
        r.text,
        format!(
            "Command running in background with ID: bash_1. Output is being written to: {}. You will be notified when it completes.",
            path.display()
        )
    );
    let n = rx.recv_timeout(DEADLINE).expect("a notification");
    assert_eq!(n.recipient, "main");
    assert_eq!(n.task_id, "bash_1");
    assert_eq!(n.status, Some(bashtools::TaskStatus::Completed));
    assert_eq!(
        n.label,
        "Background command \"say <hi> & go\" completed (exit code 0)"
    );
    assert_eq!(
        n.text,
        format!(
            "<task-notification>\n<task-id>bash_1</task-id>\n<tool-use-id>toolu_01</tool-use-id>\n<output-file>{}</output-file>\n<status>completed</status>\n<summary>Background command \"say &lt;hi&gt; &amp; go\" completed (exit code 0)</summary>\n</task-notification>",
            path.display()
        )
    );
    assert!(
        rx.recv_timeout(Duration::from_millis(200)).is_err(),
        "exactly one"
    );
}

#[test]
fn failed_and_stopped_shells_and_no_tool_use_id_without_a_call() {
    let (t, tasks) = with_tasks();
    let rx = tasks.subscribe("main");
    bash(&t, json!({"command": "exit 4", "run_in_background": true}));
    let n = rx.recv_timeout(DEADLINE).unwrap();
    assert_eq!(
        n.label,
        "Background command \"exit 4\" failed with exit code 4"
    );
    assert!(!n.text.contains("<tool-use-id>"));
    assert!(n.text.contains("<status>failed</status>"));

    let r = bash(
        &t,
        json!({"command": "sleep 1000", "run_in_background": true}),
    );
    t.kill_shell(&json!({"shell_id": id_of(&r)}));
    let n = rx.recv_timeout(DEADLINE).unwrap();
    assert_eq!(n.label, "Background command \"sleep 1000\" was stopped");
    assert_eq!(n.status, Some(bashtools::TaskStatus::Killed));
}

#[test]
fn a_shell_moved_to_the_background_notifies_too() {
    let (t, tasks) = with_tasks();
    let rx = tasks.subscribe("agent_7");
    let r = t.bash(
        &json!({"command": "sleep 0.3", "timeout": 0.05}),
        &Caller::default().recipient("agent_7"),
    );
    assert!(
        r.text
            .contains("You will be notified when it completes. To check interim output"),
        "{}",
        r.text
    );
    let n = rx.recv_timeout(DEADLINE).unwrap();
    assert_eq!(n.recipient, "agent_7");
    assert_eq!(n.task_id, "bash_1");
}

#[test]
fn foreground_commands_do_not_notify() {
    let (t, tasks) = with_tasks();
    let rx = tasks.subscribe("main");
    bash(&t, json!({"command": "true"}));
    bash(&t, json!({"command": "exit 1"}));
    assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
}

#[test]
fn notifications_sent_before_subscribe_wait_in_the_queue() {
    let (t, tasks) = with_tasks();
    let r = bash(&t, json!({"command": "true", "run_in_background": true}));
    let id = id_of(&r);
    t.bash_output(&json!({"bash_id": id, "block": true}));
    wait_until("the registry knows it ended", || {
        tasks
            .get(&id)
            .is_some_and(|i| i.status != bashtools::TaskStatus::Running)
    });
    let rx = tasks.subscribe("main");
    assert_eq!(rx.try_recv().unwrap().task_id, id);
}

#[test]
fn ids_are_unique_across_tools_sharing_a_registry() {
    let tasks = Tasks::new();
    let a = builder().tasks(tasks.clone()).build().unwrap();
    let b = builder().tasks(tasks.clone()).build().unwrap();
    let ids: Vec<String> = [&a, &b, &a, &b]
        .iter()
        .map(|t| {
            id_of(&bash(
                t,
                json!({"command": "true", "run_in_background": true}),
            ))
        })
        .collect();
    assert_eq!(ids, ["bash_1", "bash_2", "bash_3", "bash_4"]);
    // b reads and stops a's shells through the registry.
    let r = bash(
        &a,
        json!({"command": "sleep 1000", "run_in_background": true}),
    );
    let id = id_of(&r);
    assert_eq!(
        b.bash_output(&json!({"bash_id": id})).text,
        "<status>running</status>"
    );
    let r = b.kill_shell(&json!({"shell_id": id}));
    assert_eq!(
        r.text,
        format!("Successfully stopped task: {id} (sleep 1000)")
    );
    assert!(a
        .bash_output(&json!({"bash_id": id}))
        .text
        .contains("killed"));
}

#[test]
fn two_hundred_shells_ending_at_once_give_exactly_two_hundred_notifications() {
    let tasks = Tasks::new();
    let t = builder().tasks(tasks.clone()).build().unwrap();
    let recipients = ["main", "agent_1", "agent_2", "agent_3"];
    let rxs: Vec<_> = recipients.iter().map(|r| tasks.subscribe(r)).collect();
    let gate = std::env::temp_dir().join(format!("bashtools-gate-{}", std::process::id()));
    let _ = std::fs::remove_file(&gate);
    let mut expected: HashMap<String, (String, &str)> = HashMap::new();
    let mut to_kill = Vec::new();
    for i in 0..200 {
        let recipient = recipients[i % recipients.len()];
        let (command, status) = match i % 3 {
            0 => (
                format!("while [ ! -e {} ]; do sleep 0.05; done", gate.display()),
                "completed",
            ),
            1 => (
                format!(
                    "while [ ! -e {} ]; do sleep 0.05; done; exit 2",
                    gate.display()
                ),
                "failed",
            ),
            _ => ("sleep 1000".to_string(), "killed"),
        };
        let r = t.bash(
            &json!({"command": command, "run_in_background": true}),
            &Caller::default().recipient(recipient),
        );
        let id = id_of(&r);
        if status == "killed" {
            to_kill.push(id.clone());
        }
        expected.insert(id, (recipient.to_string(), status));
    }
    std::fs::write(&gate, "").unwrap();
    std::thread::scope(|s| {
        for ids in to_kill.chunks(20) {
            let t = &t;
            s.spawn(move || {
                for id in ids {
                    let r = t.kill_shell(&json!({"shell_id": id}));
                    assert!(!r.is_error, "{}", r.text);
                }
            });
        }
    });
    let mut got: HashMap<String, (String, String)> = HashMap::new();
    for (rx, recipient) in rxs.iter().zip(recipients) {
        let want = expected.values().filter(|(r, _)| r == recipient).count();
        for _ in 0..want {
            let n = rx
                .recv_timeout(DEADLINE)
                .expect("every notification arrives");
            assert_eq!(n.recipient, recipient);
            let previous = got.insert(
                n.task_id.clone(),
                (n.recipient, n.status.unwrap().to_string()),
            );
            assert!(previous.is_none(), "{} notified twice", n.task_id);
        }
    }
    for rx in &rxs {
        assert!(
            rx.recv_timeout(Duration::from_millis(300)).is_err(),
            "no extra notification"
        );
    }
    assert_eq!(got.len(), 200);
    for (id, (recipient, status)) in &expected {
        assert_eq!(got[id], (recipient.clone(), status.to_string()), "{id}");
    }
    std::fs::remove_file(&gate).unwrap();
}

#[test]
fn notification_gives_the_text_and_the_label() {
    let (t, _tasks) = with_tasks();
    let r = bash(
        &t,
        json!({"command": "sleep 1000", "run_in_background": true, "description": "wait"}),
    );
    let id = id_of(&r);
    let notice = t
        .notification(&id.as_str().into(), bashtools::TaskStatus::Failed)
        .unwrap();
    assert_eq!(
        notice.label,
        "Background command \"wait\" failed with exit code 1"
    );
    assert!(notice
        .text
        .starts_with("<task-notification>\n<task-id>bash_1</task-id>\n<output-file>"));
    assert!(t
        .notification(&"bash_99".into(), bashtools::TaskStatus::Completed)
        .is_none());
}
