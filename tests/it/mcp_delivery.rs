//! How background work reaches the model over MCP (issue: delivery in the
//! result, waiting without polling, progress, a clean end of session),
//! with the built `bashtools-mcp` driven over pipes.

use std::time::{Duration, Instant};

use crate::client::{carried, leader_with, task_id, tool_result, Server, DEADLINE};
use crate::common::assert_gone;
use serde_json::{json, Value};

fn call(s: &mut Server, name: &str, arguments: Value) -> Value {
    s.call("tools/call", json!({"name": name, "arguments": arguments}))
}

/// `<task-id>X</task-id>` of a notification text.
fn notified_id(text: &str) -> String {
    let start = text.find("<task-id>").expect("a task id") + "<task-id>".len();
    let end = text[start..].find('<').unwrap() + start;
    text[start..end].to_string()
}

fn is_log(v: &Value) -> bool {
    v["method"] == "notifications/message"
}

#[test]
fn notifications_travel_in_the_next_result_each_once_in_order() {
    let mut s = Server::initialized(&[]);
    let mut started = Vec::new();
    let mut texts = Vec::new();
    for i in 0..3 {
        let r = call(
            &mut s,
            "bash",
            json!({"command": format!("echo {i}"), "run_in_background": true, "description": format!("job {i}")}),
        );
        started.push(task_id(&tool_result(&r).0, "bash"));
        texts.extend(carried(&r));
    }
    // The log path says when each has been read; the order they went out
    // in is the order the next result carries them.
    let mut logs = 0;
    let stream = s.until(|v| {
        logs += usize::from(is_log(v));
        logs == 3
    });
    let log_order: Vec<String> = stream
        .iter()
        .filter(|v| is_log(v))
        .map(|v| v["params"]["data"]["task_id"].as_str().unwrap().to_string())
        .collect();
    let mut expected = log_order.clone();
    expected.sort();
    let mut sorted_started = started.clone();
    sorted_started.sort();
    assert_eq!(expected, sorted_started);
    let r = call(&mut s, "bash", json!({"command": "echo mine"}));
    assert_eq!(tool_result(&r).0, "mine");
    texts.extend(carried(&r));
    let carried_ids: Vec<String> = texts.iter().map(|t| notified_id(t)).collect();
    assert_eq!(carried_ids, log_order, "in the order they happened");
    assert!(
        texts
            .iter()
            .all(|t| t.contains("<status>completed</status>")),
        "{texts:?}"
    );
    assert!(texts
        .iter()
        .any(|t| t.contains("Background command \"job 1\" completed (exit code 0)")));
    let r = call(&mut s, "bash", json!({"command": "echo again"}));
    assert!(carried(&r).is_empty(), "each once: {r}");
}

#[test]
fn a_notification_is_never_written_before_the_response_that_named_its_id() {
    for round in 0..10 {
        let mut s = Server::initialized(&[]);
        let ids: Vec<Value> = (0..100)
            .map(|_| {
                s.request(
                    "tools/call",
                    json!({"name": "bash", "arguments": {"command": "true", "run_in_background": true}}),
                )
            })
            .collect();
        let mut named: std::collections::HashSet<String> = Default::default();
        let (mut logs, mut answered) = (0, 0);
        let mut delivered = std::collections::HashSet::new();
        let stream = s.until(|v| {
            logs += usize::from(is_log(v));
            answered += usize::from(v.get("result").is_some());
            answered == 100 && logs == 100
        });
        for v in &stream {
            if is_log(v) {
                let id = v["params"]["data"]["task_id"].as_str().unwrap();
                assert!(
                    named.contains(id),
                    "round {round}: {id} logged before its ID was answered"
                );
            } else if v.get("result").is_some() {
                let (text, _) = tool_result(v);
                named.insert(task_id(&text, "bash"));
                for t in carried(v) {
                    let id = notified_id(&t);
                    assert!(
                        named.contains(&id),
                        "round {round}: {id} carried before its ID"
                    );
                    assert!(
                        delivered.insert(id.clone()),
                        "round {round}: {id} carried twice"
                    );
                }
            }
        }
        assert_eq!(named.len(), ids.len());
    }
}

#[test]
fn deliver_log_carries_nothing_in_results_and_promises_nothing() {
    let mut s = Server::initialized(&["--deliver", "log"]);
    let (text, _) = s.tool(
        "bash",
        json!({"command": "echo x", "run_in_background": true}),
    );
    assert!(!text.contains("You will be notified"), "{text}");
    let id = task_id(&text, "bash");
    s.log_message(|d| d["task_id"] == id.as_str());
    let r = call(&mut s, "bash_output", json!({"bash_id": id}));
    assert!(carried(&r).is_empty(), "{r}");
    let r = s.call("tools/list", json!({}));
    let bash = &r["result"]["tools"][0];
    let d = bash["description"].as_str().unwrap();
    assert!(
        d.contains("only as log messages") && !d.contains("do not poll"),
        "{d}"
    );
    let (text, _) = s.tool("monitor", json!({"description": "d", "command": "true"}));
    assert!(!text.contains("You will be notified"), "{text}");
    assert!(text.contains("read its output with bash_output"), "{text}");
}

#[test]
fn the_instructions_say_where_notifications_arrive() {
    for (args, says) in [
        (&[][..], "arrives in a later tool result"),
        (
            &["--deliver", "log"][..],
            "which your client may not show you",
        ),
    ] {
        let mut s = Server::start(args);
        let init = s.initialize("2025-06-18");
        let text = init["instructions"].as_str().unwrap();
        assert!(text.contains(says), "{args:?}: {text}");
    }
}

#[test]
fn deliver_result_sends_no_log_messages() {
    let mut s = Server::initialized(&["--deliver", "result"]);
    let (text, _) = s.tool(
        "bash",
        json!({"command": "sleep 0.3; echo x", "run_in_background": true}),
    );
    assert!(
        text.ends_with("You will be notified when it completes."),
        "{text}"
    );
    let id = task_id(&text, "bash");
    let r = call(&mut s, "bash_output", json!({"bash_id": id, "block": true}));
    assert!(
        tool_result(&r).0.starts_with("<status>completed</status>"),
        "{r}"
    );
    let texts = carried(&r);
    assert_eq!(texts.len(), 1, "its own end travels with it: {r}");
    assert_eq!(notified_id(&texts[0]), id);
    s.still_serving();
    assert!(!s.drain().iter().any(is_log));
    let r = s.call("tools/list", json!({}));
    let d = r["result"]["tools"][0]["description"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(d.contains("in a later tool result"), "{d}");
}

#[test]
fn kill_shell_carries_the_killed_notification() {
    let mut s = Server::initialized(&[]);
    let (text, _) = s.tool(
        "bash",
        json!({"command": "sleep 1000", "run_in_background": true}),
    );
    let id = task_id(&text, "bash");
    let r = call(&mut s, "kill_shell", json!({"shell_id": id}));
    assert!(
        tool_result(&r).0.starts_with("Successfully stopped task"),
        "{r}"
    );
    let texts = carried(&r);
    assert_eq!(texts.len(), 1, "{r}");
    assert!(texts[0].contains("<status>killed</status>"), "{}", texts[0]);
}

#[test]
fn monitor_events_arrive_in_results() {
    let mut s = Server::initialized(&["--batch-window-ms", "20"]);
    let r = call(
        &mut s,
        "monitor",
        json!({"description": "once", "command": "echo ready"}),
    );
    let (text, err) = tool_result(&r);
    assert!(!err, "{text}");
    let mut texts = carried(&r);
    let end = Instant::now() + DEADLINE;
    while !texts.iter().any(|t: &String| t.contains("stream ended")) {
        assert!(Instant::now() < end, "{texts:?}");
        let r = call(
            &mut s,
            "bash_output",
            json!({"bash_id": "monitor_1", "block": true, "timeout": 5}),
        );
        texts.extend(carried(&r));
    }
    assert!(texts[0].contains("<event>ready</event>"), "{texts:?}");
}

#[test]
fn a_blocking_bash_output_returns_early_when_another_task_ends() {
    let mut s = Server::initialized(&[]);
    let (text, _) = s.tool(
        "bash",
        json!({"command": "sleep 1000", "run_in_background": true}),
    );
    let long = task_id(&text, "bash");
    let (text, _) = s.tool(
        "bash",
        json!({"command": "sleep 0.3; echo short", "run_in_background": true}),
    );
    let short = task_id(&text, "bash");
    let started = Instant::now();
    let r = call(
        &mut s,
        "bash_output",
        json!({"bash_id": long, "block": true, "timeout": 300}),
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "it waited for its timeout"
    );
    let (text, err) = tool_result(&r);
    assert!(
        !err && text.starts_with("<status>running</status>"),
        "{text}"
    );
    let texts = carried(&r);
    assert_eq!(
        texts.iter().map(|t| notified_id(t)).collect::<Vec<_>>(),
        vec![short]
    );
    // With nothing undelivered it waits again, and its own end ends it.
    let r = call(&mut s, "kill_shell", json!({"shell_id": long}));
    assert_eq!(carried(&r).len(), 1);
}

#[test]
fn a_blocking_bash_output_without_events_waits_for_its_timeout() {
    let mut s = Server::initialized(&[]);
    let (text, _) = s.tool(
        "bash",
        json!({"command": "sleep 1000", "run_in_background": true}),
    );
    let id = task_id(&text, "bash");
    let started = Instant::now();
    let r = call(
        &mut s,
        "bash_output",
        json!({"bash_id": id, "block": true, "timeout": 1}),
    );
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "returned before its timeout"
    );
    assert!(tool_result(&r).0.starts_with("<status>running</status>"));
    assert!(carried(&r).is_empty());
}

// ------------------------------------------------------------------ progress

fn progress_of(stream: &[Value], token: &Value) -> Vec<Value> {
    stream
        .iter()
        .filter(|v| v["method"] == "notifications/progress")
        .inspect(|v| assert_eq!(&v["params"]["progressToken"], token, "{v}"))
        .map(|v| v["params"].clone())
        .collect()
}

#[test]
fn a_foreground_bash_with_a_token_reports_progress_until_its_response() {
    let mut s = Server::initialized(&["--progress-interval-ms", "100"]);
    for token in [json!("tok"), json!(7), json!({"any": ["json", 1]})] {
        let id = s.request(
            "tools/call",
            json!({"_meta": {"progressToken": token}, "name": "bash",
                   "arguments": {"command": "for i in 1 2 3 4 5 6; do echo step$i; sleep 0.2; done", "timeout": 90}}),
        );
        let stream = s.until(|v| v["id"] == id && v.get("method").is_none());
        let progress = progress_of(&stream, &token);
        assert!(progress.len() >= 2, "{stream:?}");
        let values: Vec<f64> = progress
            .iter()
            .map(|p| p["progress"].as_f64().unwrap())
            .collect();
        assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
        assert!(progress.iter().all(|p| p["total"] == json!(90.0)));
        let messages: Vec<&str> = progress
            .iter()
            .filter_map(|p| p["message"].as_str())
            .collect();
        assert!(
            messages.iter().any(|m| m.starts_with("step")),
            "{messages:?}"
        );
        // Nothing for this call after its response.
        s.still_serving();
        assert!(progress_of(&s.drain(), &token).is_empty());
    }
    // Without a token, none.
    let stream = {
        let id = s.request(
            "tools/call",
            json!({"name": "bash", "arguments": {"command": "sleep 0.5"}}),
        );
        s.until(|v| v["id"] == id)
    };
    assert!(!stream
        .iter()
        .any(|v| v["method"] == "notifications/progress"));
}

#[test]
fn a_blocking_bash_output_with_a_token_reports_progress() {
    let mut s = Server::initialized(&["--progress-interval-ms", "100"]);
    let (text, _) = s.tool(
        "bash",
        json!({"command": "echo waiting; sleep 1000", "run_in_background": true}),
    );
    let bg = task_id(&text, "bash");
    let id = s.request(
        "tools/call",
        json!({"_meta": {"progressToken": "b"}, "name": "bash_output",
               "arguments": {"bash_id": bg, "block": true, "timeout": 1}}),
    );
    let stream = s.until(|v| v["id"] == id && v.get("method").is_none());
    let progress = progress_of(&stream, &json!("b"));
    assert!(progress.len() >= 2, "{stream:?}");
    assert!(progress.iter().all(|p| p["total"] == json!(1.0)));
    assert!(
        progress.iter().any(|p| p["message"] == "waiting"),
        "{progress:?}"
    );
}

// ------------------------------------------------------------ end of session

#[test]
fn after_stdin_ends_only_responses_are_written() {
    let mut s = Server::initialized(&[]);
    let mut leaders = Vec::new();
    for i in 0..5 {
        let marker = format!("eof-only-{i}");
        s.tool(
            "bash",
            json!({"command": format!("sleep 1000; : {marker}"), "run_in_background": true}),
        );
        leaders.push(leader_with(s.pid(), &marker));
    }
    let running = s.request(
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "sleep 1000; : eof-fg", "timeout": 500}}),
    );
    leaders.push(leader_with(s.pid(), "eof-fg"));
    s.still_serving();
    s.drain();
    s.close_stdin();
    let rest = s.rest();
    assert!(s.wait_exit().success());
    let others: Vec<&Value> = rest.iter().filter(|v| v["id"] != running).collect();
    assert!(
        others.is_empty(),
        "written after the end of stdin: {others:?}"
    );
    assert_eq!(rest.len(), 1, "the running call is answered: {rest:?}");
    assert_gone(&leaders);
}

#[test]
fn a_client_that_stops_reading_cannot_hold_up_the_end() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    use wait_timeout::ChildExt;
    let mut child = Command::new(crate::client::BIN)
        .args(["--kill-grace", "0.5"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut send = |v: Value| {
        let mut line = serde_json::to_vec(&v).unwrap();
        line.push(b'\n');
        stdin.write_all(&line).unwrap();
    };
    send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}));
    // Answers of 30 000 characters, far past what a pipe holds, none read.
    for i in 1..=20 {
        send(json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                    "params": {"name": "bash", "arguments": {"command": "head -c 40000 /dev/zero | tr '\\0' x"}}}));
    }
    for i in 21..=80 {
        send(json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                    "params": {"name": "bash", "arguments": {"command": "sleep 1000; : unread", "run_in_background": true}}}));
    }
    let leader = leader_with(child.id(), "unread");
    drop(stdin);
    let closed = Instant::now();
    let status = child.wait_timeout(DEADLINE).unwrap();
    let took = closed.elapsed();
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the server did not exit while its client did not read");
    }
    // kill_grace + 1 s, with room for a loaded machine.
    assert!(
        took < Duration::from_millis(1500) + Duration::from_secs(3),
        "took {took:?}"
    );
    assert_gone(&[leader]);
}

// ------------------------------------------------------- no thread to start

/// Sets the soft `RLIMIT_NPROC` of the server (`prlimit(1)`, run as the
/// server's user, who may change its limits below the hard one).
fn limit_processes(pid: u32, n: &str, as_nobody: bool) {
    let mut cmd = std::process::Command::new("prlimit");
    cmd.args(["--pid", &pid.to_string(), &format!("--nproc={n}:")]);
    if as_nobody {
        use std::os::unix::process::CommandExt;
        cmd.uid(65534).gid(65534);
    }
    let out = cmd.output().expect("run prlimit");
    assert!(
        out.status.success(),
        "prlimit: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn with_no_thread_to_start_kill_shell_bash_output_and_ping_are_answered() {
    // The limit binds only a user other than root: as root, the server
    // runs as nobody.
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    let root = unsafe { nix::libc::geteuid() } == 0;
    let tmp = std::env::temp_dir();
    let tmp = tmp.to_str().unwrap();
    let mut s = Server::start_with(&["--working-directory", tmp, "--output-root", tmp], |cmd| {
        if root {
            use std::os::unix::process::CommandExt;
            cmd.uid(65534).gid(65534);
        }
    });
    s.initialize("2025-06-18");
    let (text, _) = s.tool(
        "bash",
        json!({"command": "sleep 1000; : no-threads", "run_in_background": true}),
    );
    let id = task_id(&text, "bash");
    let leader = leader_with(s.pid(), "no-threads");
    // The hard limit, to give the soft one back at the end.
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", s.pid())).unwrap();
    let hard = limits
        .lines()
        .find(|l| l.starts_with("Max processes"))
        .and_then(|l| l.split_whitespace().nth(3))
        .expect("the process limit")
        .to_string();
    // No task of this user can start from now on in the server.
    limit_processes(s.pid(), "1", root);
    let r = call(&mut s, "bash", json!({"command": "echo never"}));
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("cannot start a thread")),
        "{r}"
    );
    s.still_serving();
    let r = call(&mut s, "bash_output", json!({"bash_id": id}));
    assert!(
        tool_result(&r).0.starts_with("<status>running</status>"),
        "{r}"
    );
    let r = call(&mut s, "kill_shell", json!({"shell_id": id}));
    assert!(
        tool_result(&r)
            .0
            .starts_with("Successfully stopped task: bash_1"),
        "{r}"
    );
    assert_gone(&[leader]);
    s.still_serving();
    limit_processes(s.pid(), &hard, root);
    s.close_stdin();
    assert!(s.wait_exit().success());
}
