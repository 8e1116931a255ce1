//! The MCP server as a client sees it: the built `bashtools-mcp` driven
//! over pipes (SPEC section 9). Handshakes, the stateless form, the tools,
//! notifications, concurrency, cancellation, bad input and shutdown.

use crate::client::{leader_with, meta, output_path, task_id, tool_result, Server};
use crate::common::assert_gone;
use nix::sys::signal::Signal;
use serde_json::{json, Value};

fn error_code(r: &Value) -> i64 {
    r["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error response: {r}"))
}

// ---------------------------------------------------------------- handshakes

#[test]
fn initialize_answers_each_classic_version() {
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut s = Server::start(&[]);
        let r = s.initialize(version);
        assert_eq!(r["protocolVersion"], version);
        assert_eq!(
            r["capabilities"],
            json!({"tools": {"listChanged": false}, "logging": {}, "experimental": {"claude/channel": {}}})
        );
        assert_eq!(r["serverInfo"]["name"], "bashtools");
        assert_eq!(r["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
        assert!(r["instructions"].as_str().unwrap().contains("bash_output"));
    }
}

#[test]
fn an_unknown_version_gets_the_newest_classic_one() {
    for asked in ["1999-01-01", "2026-07-28"] {
        let mut s = Server::start(&[]);
        assert_eq!(s.initialize(asked)["protocolVersion"], "2025-11-25");
    }
}

#[test]
fn ping_answers_an_empty_object_before_and_after_initialize() {
    let mut s = Server::start(&[]);
    assert_eq!(s.call("ping", json!({}))["result"], json!({}));
    s.initialize("2025-11-25");
    assert_eq!(s.call("ping", json!({}))["result"], json!({}));
}

#[test]
fn classic_calls_before_initialize_are_refused_until_it() {
    let mut s = Server::start(&[]);
    for method in ["tools/list", "tools/call"] {
        let r = s.call(
            method,
            json!({"name": "bash", "arguments": {"command": "echo hi"}}),
        );
        // A request with neither the handshake nor the stateless `_meta`
        // lacks a parameter (2026-07-28): -32602.
        assert_eq!(error_code(&r), -32602, "{r}");
        assert!(r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize"));
    }
    s.initialize("2025-06-18");
    assert_eq!(
        s.tool("bash", json!({"command": "echo hi"})),
        ("hi".into(), false)
    );
}

// ------------------------------------------------------- stateless 2026-07-28

#[test]
fn discover_lists_every_version_and_the_capabilities() {
    let mut s = Server::start(&[]);
    let r = s.call("server/discover", json!({"_meta": meta()}));
    let result = &r["result"];
    assert_eq!(
        result["supportedVersions"],
        json!([
            "2026-07-28",
            "2025-11-25",
            "2025-06-18",
            "2025-03-26",
            "2024-11-05"
        ])
    );
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["capabilities"]["tools"],
        json!({"listChanged": false})
    );
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "bashtools"
    );
    assert!(result["ttlMs"].as_u64().is_some());
    assert!(result["cacheScope"].is_string());
    assert!(result["instructions"].is_string());
}

#[test]
fn stateless_requests_need_no_handshake() {
    let mut s = Server::start(&[]);
    let r = s.call("tools/list", json!({"_meta": meta()}));
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(r["result"]["tools"].as_array().unwrap().len(), 5);
    assert!(r["result"]["ttlMs"].is_u64());
    let r = s.call(
        "tools/call",
        json!({"_meta": meta(), "name": "bash", "arguments": {"command": "echo stateless"}}),
    );
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(
        r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["version"],
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(tool_result(&r), ("stateless".into(), false));
}

#[test]
fn an_unsupported_stateless_version_is_32022_with_the_supported_ones() {
    let mut s = Server::start(&[]);
    let mut m = meta();
    m["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    for method in ["server/discover", "tools/list", "tools/call"] {
        let r = s.call(
            method,
            json!({"_meta": m, "name": "bash", "arguments": {"command": "true"}}),
        );
        assert_eq!(error_code(&r), -32022, "{r}");
        let data = &r["error"]["data"];
        assert_eq!(data["requested"], "2099-01-01");
        assert!(data["supported"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28")));
    }
    s.still_serving();
}

#[test]
fn a_stateless_request_without_client_capabilities_is_invalid_params() {
    let mut s = Server::start(&[]);
    let m = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    let r = s.call("tools/list", json!({"_meta": m}));
    assert_eq!(error_code(&r), -32602, "{r}");
}

// ------------------------------------------------------------------- tools

#[test]
fn tools_list_shows_four_tools_with_schemas_annotations_and_units() {
    let mut s = Server::initialized(&[]);
    let r = s.call("tools/list", json!({}));
    let tools = r["result"]["tools"].as_array().unwrap().clone();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
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
    for t in &tools {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        assert!(t["inputSchema"]["required"].is_array(), "{t}");
        assert!(t["description"].as_str().unwrap().len() > 100, "{t}");
        assert!(t["annotations"]["title"].is_string(), "{t}");
    }
    let by = |n: &str| tools.iter().find(|t| t["name"] == n).unwrap().clone();
    let bash = by("bash");
    assert_eq!(bash["annotations"]["destructiveHint"], true);
    assert_eq!(bash["annotations"]["openWorldHint"], true);
    let desc = bash["description"].as_str().unwrap();
    assert!(
        desc.contains("in seconds (default 120s, at most 600s)"),
        "{desc}"
    );
    assert!(desc.contains("30000 characters"), "{desc}");
    assert_eq!(by("bash_output")["annotations"]["readOnlyHint"], true);
    let kill = by("kill_shell");
    assert_eq!(kill["annotations"]["destructiveHint"], true);
    assert_eq!(kill["annotations"]["idempotentHint"], true);
    let monitor = by("monitor")["description"].as_str().unwrap().to_string();
    assert!(
        monitor.contains("milliseconds, default 300000 ms"),
        "{monitor}"
    );
}

#[test]
fn foreground_bash_answers_with_its_output_or_its_exit_code() {
    let mut s = Server::initialized(&[]);
    assert_eq!(
        s.tool("bash", json!({"command": "echo hi; echo there >&2"})),
        ("hi\nthere".into(), false)
    );
    assert_eq!(
        s.tool("bash", json!({"command": "echo oops; exit 3"})),
        ("Exit code 3\noops".into(), true)
    );
    assert_eq!(
        s.tool("bash", json!({"command": "true"})),
        ("(Bash completed with no output)".into(), false)
    );
}

#[test]
fn a_command_past_its_timeout_moves_to_the_background() {
    let mut s = Server::initialized(&[]);
    let (text, err) = s.tool("bash", json!({"command": "sleep 30", "timeout": 0.3}));
    assert!(!err);
    assert!(
        text.starts_with("Command did not complete within its 0.3s timeout and was moved to the background (ID: bash_1)"),
        "{text}"
    );
    let (text, _) = s.tool("kill_shell", json!({"shell_id": "bash_1"}));
    assert_eq!(text, "Successfully stopped task: bash_1 (sleep 30)");
}

#[test]
fn background_bash_is_read_with_bash_output_and_stopped_with_kill_shell() {
    let mut s = Server::initialized(&[]);
    let (text, err) = s.tool(
        "bash",
        json!({"command": "echo started; sleep 60", "run_in_background": true, "description": "sleeper"}),
    );
    assert!(!err, "{text}");
    assert!(
        text.starts_with("Command running in background with ID: bash_1."),
        "{text}"
    );
    let id = task_id(&text, "bash");
    let mut seen = String::new();
    crate::common::wait_until("bash_output shows the first line", || {
        let (out, err) = s.tool("bash_output", json!({"bash_id": id}));
        assert!(!err, "{out}");
        assert!(out.starts_with("<status>running</status>"), "{out}");
        seen.push_str(&out);
        seen.contains("<stdout>\nstarted\n</stdout>")
    });
    let (text, err) = s.tool("kill_shell", json!({"shell_id": id}));
    assert_eq!(
        (text.as_str(), err),
        (
            "Successfully stopped task: bash_1 (echo started; sleep 60)",
            false
        )
    );
    let (out, _) = s.tool("bash_output", json!({"bash_id": id}));
    assert!(out.starts_with("<status>killed</status>"), "{out}");
    let (text, err) = s.tool("kill_shell", json!({"shell_id": id}));
    assert_eq!(
        (text.as_str(), err),
        ("Task bash_1 is not running (status: killed)", true)
    );
    let n = s.log_message(|d| d["task_id"] == "bash_1");
    assert_eq!(n["params"]["data"]["status"], "killed");
}

#[test]
fn bash_output_with_block_waits_for_the_end() {
    let mut s = Server::initialized(&[]);
    let (text, _) = s.tool(
        "bash",
        json!({"command": "sleep 0.3; echo late", "run_in_background": true}),
    );
    let id = task_id(&text, "bash");
    let (out, err) = s.tool(
        "bash_output",
        json!({"bash_id": id, "block": true, "timeout": 20}),
    );
    assert!(!err);
    assert_eq!(
        out,
        "<status>completed</status>\n<exit_code>0</exit_code>\n<stdout>\nlate\n</stdout>"
    );
}

#[test]
fn an_unknown_tool_is_invalid_params() {
    let mut s = Server::initialized(&[]);
    let r = s.call("tools/call", json!({"name": "rm_rf", "arguments": {}}));
    assert_eq!(error_code(&r), -32602);
    assert!(r["error"]["message"].as_str().unwrap().contains("rm_rf"));
    let r = s.call("tools/call", json!({"arguments": {}}));
    assert_eq!(error_code(&r), -32602);
}

#[test]
fn arguments_of_the_wrong_type_are_tool_errors() {
    let mut s = Server::initialized(&[]);
    let cases = [
        ("bash", json!({"command": 5}), "No command given"),
        ("bash", json!({}), "No command given"),
        (
            "bash",
            json!({"command": "true", "bogus": 1}),
            "bash has no parameter bogus",
        ),
        (
            "bash",
            json!({"command": "true", "timeout": -5}),
            "the timeout parameter must be a number greater than 0",
        ),
        (
            "bash_output",
            json!({"bash_id": 7}),
            "bash_id parameter must be a string",
        ),
        (
            "bash_output",
            json!({"bash_id": "bash_99"}),
            "No task found with ID: bash_99",
        ),
        (
            "kill_shell",
            json!({"shell_id": null}),
            "shell_id parameter must be a string",
        ),
        (
            "monitor",
            json!({"description": "d", "command": "true", "timeout_ms": "soon"}),
            "timeout_ms",
        ),
    ];
    for (tool, args, expected) in cases {
        let (text, err) = s.tool(tool, args.clone());
        assert!(err, "{tool} {args}: {text}");
        assert!(text.contains(expected), "{tool} {args}: {text}");
    }
    // Arguments that are no object are the request's fault (§9).
    for args in [json!("echo hi"), json!(["ls"]), json!(null), json!(5)] {
        let r = s.call("tools/call", json!({"name": "bash", "arguments": args}));
        assert_eq!(r["error"]["code"], -32602, "{args}: {r}");
    }
    s.still_serving();
}

// ----------------------------------------------------------- notifications

#[test]
fn a_background_end_arrives_as_a_log_message() {
    let mut s = Server::initialized(&[]);
    let (text, _) = s.tool(
        "bash",
        json!({"command": "echo done", "run_in_background": true, "description": "say done"}),
    );
    let id = task_id(&text, "bash");
    let n = s.log_message(|d| d["task_id"] == id.as_str());
    let params = &n["params"];
    assert_eq!(params["level"], "info");
    assert_eq!(params["logger"], "bashtools");
    assert_eq!(params["data"]["status"], "completed");
    let text = params["data"]["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!("<task-notification>\n<task-id>{id}</task-id>")),
        "{text}"
    );
    assert!(
        text.contains("<summary>Background command \"say done\" completed (exit code 0)</summary>"),
        "{text}"
    );
}

#[test]
fn monitor_events_arrive_in_order_before_its_end() {
    let mut s = Server::initialized(&["--batch-window-ms", "50"]);
    let (text, err) = s.tool(
        "monitor",
        json!({"description": "count", "command": "for i in 1 2 3; do echo line$i; sleep 0.1; done"}),
    );
    assert!(!err, "{text}");
    assert!(
        text.starts_with("Monitor started (task monitor_1, timeout 300000ms)."),
        "{text}"
    );
    let mut events = String::new();
    loop {
        let n = s.log_message(|d| d["task_id"] == "monitor_1");
        let data = &n["params"]["data"];
        if data.get("status").is_some() {
            assert_eq!(data["status"], "completed");
            assert!(data["text"]
                .as_str()
                .unwrap()
                .contains("Monitor \"count\" stream ended"));
            break;
        }
        events.push_str(data["text"].as_str().unwrap());
    }
    let (a, b, c) = (
        events.find("line1").expect("line1"),
        events.find("line2").expect("line2"),
        events.find("line3").expect("line3"),
    );
    assert!(a < b && b < c, "{events}");
}

#[test]
fn stateless_calls_get_log_messages_only_when_they_ask() {
    let mut s = Server::start(&[]);
    let quiet = json!({"_meta": meta(), "name": "bash", "arguments": {"command": "echo a", "run_in_background": true}});
    let r = s.call("tools/call", quiet);
    let first = task_id(&tool_result(&r).0, "bash");
    let r = s.call(
        "tools/call",
        json!({"_meta": meta(), "name": "bash_output", "arguments": {"bash_id": first, "block": true}}),
    );
    assert!(tool_result(&r).0.starts_with("<status>completed</status>"));
    let mut m = meta();
    m["io.modelcontextprotocol/logLevel"] = json!("info");
    // A heard task that ends while no heard request runs: its log message
    // would belong to a request already answered, so none is sent.
    let heard = json!({"_meta": m, "name": "bash", "arguments": {"command": "echo b", "run_in_background": true}});
    let r = s.call("tools/call", heard);
    let second = task_id(&tool_result(&r).0, "bash");
    let r = s.call(
        "tools/call",
        json!({"_meta": meta(), "name": "bash_output", "arguments": {"bash_id": second, "block": true}}),
    );
    assert!(tool_result(&r).0.starts_with("<status>completed</status>"));
    // One that ends while a heard request runs: sent. The task waits for a
    // file that the heard call makes, and the call waits for one the test
    // makes once the message has come.
    let dir = crate::common::Scratch::new("heard");
    let (go, release) = (dir.path("go"), dir.path("release"));
    let started = format!("until [ -e {} ]; do sleep 0.02; done; echo c", go.display());
    let heard = json!({"_meta": m, "name": "bash", "arguments": {"command": started, "run_in_background": true}});
    let r = s.call("tools/call", heard);
    let third = task_id(&tool_result(&r).0, "bash");
    let running = format!(
        "touch {}; until [ -e {} ]; do sleep 0.02; done",
        go.display(),
        release.display()
    );
    let call = s.request(
        "tools/call",
        json!({"_meta": m, "name": "bash", "arguments": {"command": running, "timeout": 600}}),
    );
    s.log_message(|d| d["task_id"] == third.as_str());
    std::fs::write(&release, "").unwrap();
    s.response(&call);
    let others: Vec<Value> = s
        .drain()
        .into_iter()
        .filter(|v| v["method"] == "notifications/message")
        .collect();
    assert!(
        others.is_empty(),
        "log messages outside a heard request: {others:?}"
    );
}

#[test]
fn the_carried_state_does_not_follow_the_log_level() {
    // Once the carried state was keyed by the recipient the log level
    // picks: after `warning`, commands ran in the default directory with
    // the exports gone (and `info` brought them back).
    let mut s = Server::initialized(&[]);
    let (_, err) = s.tool("bash", json!({"command": "cd /etc && export T=abc"}));
    assert!(!err);
    for level in ["warning", "info", "error"] {
        let r = s.call("logging/setLevel", json!({"level": level}));
        assert_eq!(r["result"], json!({}));
        let (text, err) = s.tool("bash", json!({"command": "pwd; echo $T"}));
        assert!(!err, "{level}: {text}");
        assert_eq!(text, "/etc\nabc", "{level}");
    }
    // A cd made while not heard carries to heard calls too.
    s.call("logging/setLevel", json!({"level": "warning"}));
    s.tool("bash", json!({"command": "cd /usr"}));
    s.call("logging/setLevel", json!({"level": "debug"}));
    let (text, _) = s.tool("bash", json!({"command": "pwd"}));
    assert_eq!(text, "/usr");
}

#[test]
fn set_level_above_info_silences_the_notifications() {
    let mut s = Server::initialized(&[]);
    let r = s.call("logging/setLevel", json!({"level": "warning"}));
    assert_eq!(r["result"], json!({}));
    let (text, _) = s.tool(
        "bash",
        json!({"command": "true", "run_in_background": true}),
    );
    let first = task_id(&text, "bash");
    s.tool("bash_output", json!({"bash_id": first, "block": true}));
    s.call("logging/setLevel", json!({"level": "info"}));
    let (text, _) = s.tool(
        "bash",
        json!({"command": "true", "run_in_background": true}),
    );
    let second = task_id(&text, "bash");
    s.log_message(|d| d["task_id"] == second.as_str());
    assert!(!s
        .drain()
        .iter()
        .any(|v| v["params"]["data"]["task_id"] == first.as_str()));
    let r = s.call("logging/setLevel", json!({"level": "loud"}));
    assert_eq!(error_code(&r), -32602);
}

// ------------------------------------------------------------- concurrency

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

/// Hardening item 13: a client that sends calls and stops reading their
/// answers does not grow the server without end: once 16 MiB of answers
/// wait, no new call runs (backpressure, not lost messages). Calls are
/// sent one after the other, each once the one before has run (its
/// command touches a file at its end); each answers 1 MB.
#[test]
fn a_client_that_stops_reading_holds_the_server_back_not_its_memory() {
    use std::io::{BufRead, Write};
    use std::process::{Command, Stdio};
    let dir = crate::common::Scratch::new("unread");
    let mut child = Command::new(crate::client::BIN)
        .args(["--output-limit", "1000000", "--kill-grace", "0.5"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut send = |v: Value| {
        stdin.write_all(format!("{v}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}),
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let before = rss_kib(pid);
    let done = |i: usize| dir.path(&format!("done-{i}"));
    let mut ran = 0;
    let mut held = None;
    for i in 1..=200 {
        let command = format!(
            "head -c 1000000 /dev/zero | tr '\\0' a; touch {}",
            done(i).display()
        );
        send(
            json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "bash", "arguments": {"command": command}}}),
        );
        // Until this call has run; a call held back never does.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !done(i).exists() && std::time::Instant::now() < deadline {
            crate::common::poll_pause(std::time::Duration::from_millis(10));
        }
        if !done(i).exists() {
            held = Some(i);
            break;
        }
        ran = i;
    }
    let grown = rss_kib(pid).saturating_sub(before);
    let held = held.unwrap_or_else(|| {
        panic!("all {ran} calls ran for a client that read nothing; the server grew {grown} KiB")
    });
    eprintln!("held back after {ran} unread answers of 1 MB; the server grew {grown} KiB");
    // Each call reserves 4 MB (1 MB of characters at two bytes each, twice
    // with structuredContent): at least 16 MiB / 4 MB of them run.
    assert!(ran >= 4, "held back after {ran} answers of 1 MB");
    assert!(
        grown < 80 * 1024,
        "the server grew {grown} KiB for {ran} unread answers"
    );
    // Reading again lets the held call run; every answer arrives.
    let mut ids = Vec::new();
    for line in std::io::BufReader::new(stdout).lines() {
        let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if let Some(id) = v["id"].as_u64() {
            ids.push(id);
            if id == held as u64 {
                break;
            }
        }
    }
    assert!(done(held).exists());
    ids.sort_unstable();
    assert_eq!(ids, (0..=held as u64).collect::<Vec<_>>());
    drop(stdin);
    let _ = child.wait();
}

/// Hardening 32.12: a burst of calls sent at once by a client that reads
/// nothing stays bounded too. Each call reserves room for its largest
/// answer before it starts, so the calls a burst starts together cannot
/// hold more answers than the writer's limit. The test sends 200 calls of
/// 1 MB answers without waiting, then waits until no command has run for
/// a while (every call that started has ended; the rest wait for room),
/// and checks that the server grew less than 64 MiB and that not
/// all ran; then it reads, and every call runs and answers. Without the
/// reservation every call of the burst runs and the server grows by
/// hundreds of MiB.
#[test]
fn a_burst_from_a_client_that_reads_nothing_stays_under_64_mib() {
    use std::io::{BufRead, Write};
    use std::process::{Command, Stdio};
    const CALLS: usize = 200;
    let dir = crate::common::Scratch::new("burst");
    let mut child = Command::new(crate::client::BIN)
        .args(["--output-limit", "1000000", "--kill-grace", "0.5"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut burst = String::new();
    for v in [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ] {
        burst.push_str(&format!("{v}\n"));
    }
    stdin.write_all(burst.as_bytes()).unwrap();
    stdin.flush().unwrap();
    let before = rss_kib(pid);
    let done = |i: usize| dir.path(&format!("done-{i}"));
    let mut burst = String::new();
    for i in 1..=CALLS {
        let command = format!(
            "head -c 1000000 /dev/zero | tr '\\0' a; touch {}",
            done(i).display()
        );
        let call = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "bash", "arguments": {"command": command}}});
        burst.push_str(&format!("{call}\n"));
    }
    stdin.write_all(burst.as_bytes()).unwrap();
    stdin.flush().unwrap();
    let ran = || (1..=CALLS).filter(|i| done(*i).exists()).count();
    let descendants = || {
        let all = crate::common::processes();
        let mut mine = vec![pid];
        let mut grew = true;
        while grew {
            grew = false;
            for (p, pp, _, state) in &all {
                if mine.contains(pp) && !mine.contains(p) && *state != 'Z' {
                    mine.push(*p);
                    grew = true;
                }
            }
        }
        // Left out: the server itself and its keeper (a `bash --norc`
        // that outlives every command).
        mine.retain(|p| {
            let line = std::fs::read_to_string(format!("/proc/{p}/cmdline")).unwrap_or_default();
            *p != pid && !line.starts_with("bash\0--norc\0--noprofile\0-c\0\nout=")
        });
        mine.len()
    };
    // Calls of one client run their commands one after the other, so
    // "nothing runs" is seen between two of them too: the burst is over
    // once nothing has run for 3 s (under the old code the next command
    // starts within milliseconds) or every call has run.
    let (mut seen, mut since) = (ran(), std::time::Instant::now());
    let give_up = since + std::time::Duration::from_secs(120);
    while seen < CALLS && std::time::Instant::now() < give_up {
        crate::common::poll_pause(std::time::Duration::from_millis(50));
        let now = ran();
        if now != seen || descendants() != 0 {
            (seen, since) = (now, std::time::Instant::now());
        } else if seen > 0 && since.elapsed() > std::time::Duration::from_secs(3) {
            break;
        }
    }
    let grown = rss_kib(pid).saturating_sub(before);
    let count = ran();
    eprintln!(
        "a burst of {CALLS} calls of 1 MB answers: {count} ran unread; the server grew {grown} KiB"
    );
    assert!(
        count < CALLS,
        "all {CALLS} calls ran for a client that read nothing; the server grew {grown} KiB"
    );
    assert!(
        grown < 64 * 1024,
        "the server grew {grown} KiB for {count} unread answers"
    );
    let mut ids = Vec::new();
    for line in std::io::BufReader::new(stdout).lines() {
        let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if let Some(id) = v["id"].as_u64() {
            assert!(v.get("result").is_some(), "{}", &line_head(&v));
            ids.push(id);
            if ids.len() == CALLS + 1 {
                break;
            }
        }
    }
    ids.sort_unstable();
    assert_eq!(ids, (0..=CALLS as u64).collect::<Vec<_>>());
    assert_eq!(ran(), CALLS);
    drop(stdin);
    let _ = child.wait();
}

fn line_head(v: &Value) -> String {
    v.to_string().chars().take(300).collect()
}

#[test]
fn a_long_foreground_bash_delays_nothing_else() {
    let mut s = Server::initialized(&[]);
    let long = s.request(
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "sleep 600; : long-foreground", "timeout": 600}}),
    );
    let leader = leader_with(s.pid(), "long-foreground");
    assert_eq!(s.call("ping", json!({}))["result"], json!({}));
    let (text, _) = s.tool(
        "bash",
        json!({"command": "echo side; sleep 60", "run_in_background": true}),
    );
    let id = task_id(&text, "bash");
    let (out, err) = s.tool("bash_output", json!({"bash_id": id}));
    assert!(!err && out.starts_with("<status>running</status>"), "{out}");
    let (out, err) = s.tool("kill_shell", json!({"shell_id": id}));
    assert!(!err, "{out}");
    assert_eq!(s.tool("bash", json!({"command": "echo quick"})).0, "quick");
    assert!(
        !s.drain().iter().any(|v| v["id"] == long),
        "the long call answered early"
    );
    s.notify("notifications/cancelled", json!({"requestId": long}));
    assert_gone(&[leader]);
}

#[test]
fn cancelling_a_foreground_bash_stops_its_group_and_sends_nothing() {
    let mut s = Server::initialized(&[]);
    let id = s.request(
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "sleep 300 & sleep 300; : cancel-me", "timeout": 300}}),
    );
    let leader = leader_with(s.pid(), "cancel-me");
    s.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "test"}),
    );
    assert_gone(&[leader]);
    // The id is free again once the cancelled call has finished; reusing it
    // shows that, and everything answered for it must be the new call.
    let mut answers = Vec::new();
    crate::common::wait_until("the cancelled call has finished", || {
        s.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "bash", "arguments": {"command": "echo again"}}}));
        let r = s.response(&id);
        answers.push(r.clone());
        r.get("result").is_some()
    });
    for r in &answers {
        match r.get("result") {
            Some(_) => assert_eq!(tool_result(r).0, "again"),
            None => assert!(
                r["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("duplicate"),
                "{r}"
            ),
        }
    }
    s.still_serving();
    assert!(
        !s.drain().iter().any(|v| v["id"] == id),
        "an answer for the cancelled call"
    );
}

#[test]
fn a_request_id_still_running_is_refused_and_the_first_completes() {
    let dir = tempdir("dup");
    let go = dir.join("go");
    let mut s = Server::initialized(&[]);
    let command = format!(
        "until [ -e '{}' ]; do sleep 0.02; done; echo first",
        go.display()
    );
    s.send(
        &json!({"jsonrpc": "2.0", "id": "same", "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": command}}}),
    );
    s.send(
        &json!({"jsonrpc": "2.0", "id": "same", "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": "echo second"}}}),
    );
    let r = s.response(&json!("same"));
    assert_eq!(error_code(&r), -32600, "{r}");
    assert!(r["error"]["message"]
        .as_str()
        .unwrap()
        .contains("duplicate request id"));
    std::fs::write(&go, "").unwrap();
    let r = s.response(&json!("same"));
    assert_eq!(tool_result(&r), ("first".into(), false));
    let _ = std::fs::remove_dir_all(dir);
}

// --------------------------------------------------------------- bad input

#[test]
fn bad_lines_are_answered_and_the_server_goes_on() {
    let mut s = Server::initialized(&[]);
    let cases: [(&[u8], i64); 9] = [
        (b"this is not json\n", -32700),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}\n",
            -32700,
        ),
        (b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\n", -32700),
        (b"42\n", -32600),
        (b"\"a string\"\n", -32600),
        (
            b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\n",
            -32600,
        ),
        (b"[]\n", -32600),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}\n",
            -32600,
        ),
        (b"{\"id\":{},\"method\":\"ping\"}\n", -32600),
    ];
    for (line, code) in cases {
        s.send_raw(line);
        let r = s.null_id_error();
        assert_eq!(
            error_code(&r),
            code,
            "{}: {r}",
            String::from_utf8_lossy(line)
        );
        s.still_serving();
    }
}

#[test]
fn a_batch_array_is_refused_as_such() {
    let mut s = Server::initialized(&[]);
    s.send_raw(b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\n");
    let r = s.null_id_error();
    assert!(
        r["error"]["message"].as_str().unwrap().contains("batch"),
        "{r}"
    );
}

#[test]
fn requests_without_jsonrpc_or_method_are_invalid() {
    let mut s = Server::initialized(&[]);
    s.send(&json!({"id": 41, "method": "ping"}));
    assert_eq!(error_code(&s.response(&json!(41))), -32600);
    s.send(&json!({"jsonrpc": "1.0", "id": 42, "method": "ping"}));
    assert_eq!(error_code(&s.response(&json!(42))), -32600);
    s.send(&json!({"jsonrpc": "2.0", "id": 43}));
    assert_eq!(error_code(&s.response(&json!(43))), -32600);
    s.send(&json!({"jsonrpc": "2.0", "id": 44, "method": ["ping"]}));
    assert_eq!(error_code(&s.response(&json!(44))), -32600);
    s.send(&json!({"jsonrpc": "2.0", "id": 45, "method": "ping", "params": "x"}));
    assert_eq!(error_code(&s.response(&json!(45))), -32602);
    // Hardening item 19: an id that would come back changed (a float, a
    // u64 + 1 rounded) is refused, never echoed as another number.
    for id in ["18446744073709551616", "7.5"] {
        s.send_raw(format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n").as_bytes());
        assert_eq!(error_code(&s.null_id_error()), -32600, "{id}");
    }
    s.still_serving();
}

#[test]
fn unknown_methods_are_32601_and_unknown_notifications_are_ignored() {
    let mut s = Server::initialized(&[]);
    for method in [
        "resources/list",
        "prompts/list",
        "tools/destroy",
        "notifications/initialized",
    ] {
        let r = s.call(method, json!({}));
        assert_eq!(error_code(&r), -32601, "{method}: {r}");
    }
    s.notify("notifications/whatever", json!({}));
    s.notify("notifications/cancelled", json!({"requestId": 12345}));
    s.send(&json!({"jsonrpc": "2.0", "id": 99, "result": {}}));
    s.send_raw(b"\n   \n");
    s.still_serving();
    let stray: Vec<Value> = s.drain();
    assert!(
        stray.is_empty(),
        "answers to notifications or responses: {stray:?}"
    );
}

#[test]
fn a_ten_megabyte_line_is_answered_with_its_id_not_fatal() {
    let mut s = Server::initialized(&[]);
    let mut line = br#"{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":""#.to_vec();
    line.extend(std::iter::repeat(b'a').take(10 << 20));
    line.extend_from_slice(b"\"}}\n");
    s.send_raw(&line);
    let r = s.response(&json!(7));
    assert_eq!(error_code(&r), -32600, "{r}");
    assert!(
        r["error"]["message"].as_str().unwrap().contains("limit"),
        "{r}"
    );
    s.still_serving();
    assert_eq!(s.tool("bash", json!({"command": "echo alive"})).0, "alive");
}

#[test]
fn a_line_past_the_limit_flag_whose_id_comes_late_is_answered_with_null() {
    let mut s = Server::initialized(&["--max-line-bytes", "1000"]);
    // Past the 4 KiB kept of an over-long line, the id cannot be read.
    let pad = "x".repeat(10_000);
    let line = format!(r#"{{"jsonrpc":"2.0","method":"ping","params":{{"pad":"{pad}"}},"id":8}}"#);
    s.send_raw(format!("{line}\n").as_bytes());
    let r = s.null_id_error();
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("limit of 1000 bytes"),
        "{r}"
    );
    // Under the flag's limit is served.
    let r = s.call("ping", json!({"pad": "x".repeat(500)}));
    assert_eq!(r["result"], json!({}));
}

#[test]
fn a_large_line_under_the_limit_is_served() {
    let mut s = Server::initialized(&[]);
    let pad = "x".repeat(1 << 20);
    let r = s.call("ping", json!({"pad": pad}));
    assert_eq!(r["result"], json!({}));
}

// ---------------------------------------------------------------- shutdown

/// Starts a background shell and a monitor; returns their leaders and the
/// output directory.
fn start_work(s: &mut Server, tag: &str) -> (Vec<u32>, std::path::PathBuf) {
    let (text, _) = s.tool(
        "bash",
        json!({"command": format!("sleep 1000; : bg-{tag}"), "run_in_background": true}),
    );
    let dir = output_path(&text).parent().unwrap().to_path_buf();
    assert!(dir.is_dir());
    let (text, err) = s.tool(
        "monitor",
        json!({"description": "ticks", "command": format!("while :; do echo tick; sleep 0.2; done; : mon-{tag}")}),
    );
    assert!(!err, "{text}");
    let leaders = vec![
        leader_with(s.pid(), &format!("bg-{tag}")),
        leader_with(s.pid(), &format!("mon-{tag}")),
    ];
    (leaders, dir)
}

#[test]
fn the_end_of_stdin_stops_every_shell_before_exit() {
    let mut s = Server::initialized(&[]);
    let (leaders, dir) = start_work(&mut s, "eof");
    s.close_stdin();
    let status = s.wait_exit();
    assert!(status.success(), "{status:?}");
    assert_gone(&leaders);
    assert!(!dir.exists(), "the output directory was left behind");
}

#[test]
fn sigterm_sigint_and_sighup_stop_every_shell_before_exit() {
    for (signal, tag) in [
        (Signal::SIGTERM, "term"),
        (Signal::SIGINT, "int"),
        (Signal::SIGHUP, "hup"),
    ] {
        let mut s = Server::initialized(&[]);
        let (leaders, dir) = start_work(&mut s, tag);
        s.signal(signal);
        let status = s.wait_exit();
        assert_eq!(status.code(), Some(128 + signal as i32), "{signal}");
        assert_gone(&leaders);
        assert!(
            !dir.exists(),
            "{signal}: the output directory was left behind"
        );
    }
}

#[test]
fn a_running_call_at_the_end_of_stdin_is_stopped_and_answered() {
    let mut s = Server::initialized(&[]);
    let id = s.request(
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "sleep 500; : at-eof", "timeout": 500}}),
    );
    let leader = leader_with(s.pid(), "at-eof");
    s.close_stdin();
    let r = s.response(&id);
    let (text, err) = tool_result(&r);
    assert!(err && text.starts_with("Exit code"), "{text}");
    assert!(s.wait_exit().success());
    assert_gone(&[leader]);
}

/// How the server is ended.
#[derive(Clone, Copy, Debug)]
enum End {
    Eof,
    Sigterm,
}

/// The server starts each of the five escapes (`tests/escapes`) from a
/// foreground command, and is ended by `end`: none of them is left. In
/// cgroup mode none is left when the server has exited; in session mode
/// (`session`) the keeper stops them, the ones in new sessions included,
/// within the grace after the server's exit.
fn escapes_are_stopped_at_the_servers_end(end: End, session: bool) {
    let mut s = Server::start_with(&[], |cmd| {
        if session {
            cmd.env("BASHTOOLS_CONTAINMENT", "session");
        } else {
            cmd.env_remove("BASHTOOLS_CONTAINMENT");
        }
    });
    s.initialize("2025-06-18");
    // Its stderr is read by a thread of its own: wait for the line.
    crate::common::wait_until("the server says its containment", || {
        s.stderr().contains("containment: ")
    });
    let cgroup = s.stderr().contains("containment: a cgroup per command");
    if !session && !cgroup {
        assert!(
            std::env::var_os("BASHTOOLS_TEST_REQUIRE_CGROUP").is_none(),
            "cgroup mode is required here (.ci/run): {}",
            s.stderr()
        );
        eprintln!("SKIP: no cgroup v2 can be made here: the session mode is tested instead");
        return;
    }
    let mut markers = Vec::new();
    for escape in crate::escapes::ALL {
        if !escape.available() {
            eprintln!("SKIP: {escape:?} needs a tool this machine lacks");
            continue;
        }
        let m = crate::escapes::marker();
        let (text, err) = s.tool(
            "bash",
            json!({"command": format!("{}\necho started", escape.command(&m))}),
        );
        assert_eq!((text.as_str(), err), ("started", false), "{escape:?}");
        crate::escapes::wait_started(&m);
        markers.push((escape, m));
    }
    match end {
        End::Eof => s.close_stdin(),
        End::Sigterm => s.signal(Signal::SIGTERM),
    }
    let status = s.wait_exit();
    match end {
        End::Eof => assert!(status.success(), "{status:?}"),
        End::Sigterm => assert_eq!(status.code(), Some(128 + Signal::SIGTERM as i32)),
    }
    // At the exit itself in cgroup mode; the keeper's grace (0.5 s) after
    // it in session mode, with room for a loaded machine.
    let wait = if session {
        std::time::Duration::from_secs(10)
    } else {
        std::time::Duration::from_millis(1)
    };
    for (escape, m) in markers {
        let left = crate::escapes::left_after(&m, wait);
        assert!(left.is_empty(), "{end:?}: {escape:?} survived: {left:?}");
    }
}

#[test]
fn the_end_of_stdin_stops_every_escape_in_cgroup_mode() {
    escapes_are_stopped_at_the_servers_end(End::Eof, false);
}

#[test]
fn sigterm_stops_every_escape_in_cgroup_mode() {
    escapes_are_stopped_at_the_servers_end(End::Sigterm, false);
}

#[test]
fn the_end_of_stdin_stops_every_escape_in_session_mode_through_the_keeper() {
    escapes_are_stopped_at_the_servers_end(End::Eof, true);
}

#[test]
fn sigterm_stops_every_escape_in_session_mode_through_the_keeper() {
    escapes_are_stopped_at_the_servers_end(End::Sigterm, true);
}

fn tempdir(tag: &str) -> std::path::PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let dir = std::env::temp_dir().join(format!(
        "bashtools-mcp-test-{tag}-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_server_answers_within_the_deadline_under_load() {
    // Many calls at once, each on its own thread, all answered.
    let mut s = Server::initialized(&[]);
    let ids: Vec<Value> = (0..50)
        .map(|i| {
            s.request(
                "tools/call",
                json!({"name": "bash", "arguments": {"command": format!("echo n{i}")}}),
            )
        })
        .collect();
    for (i, id) in ids.iter().enumerate() {
        let r = s.response(id);
        assert_eq!(tool_result(&r).0, format!("n{i}"));
    }
}

#[test]
fn the_schema_check_refuses_what_the_official_types_refuse() {
    // The check every message of these tests passes can fail.
    let bad = [
        json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text"}], "isError": false}}),
        json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": 3}]}}),
        json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": "far"}}),
        json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "loud", "data": 1}}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": "x"}}),
    ];
    for m in bad {
        assert!(crate::client::schema_check(&m).is_err(), "{m}");
    }
    let good = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "hi"}], "isError": false}});
    assert_eq!(crate::client::schema_check(&good), Ok(()));
}

/// `--sandbox` over MCP: a write outside the working directory fails with
/// the OS's own error, and the server says on stderr what is enforced, and
/// in every case what holds the commands.
#[test]
fn the_sandbox_flags_restrict_commands_and_the_start_says_what_holds_them() {
    let dir = tempdir("sandbox");
    let outside = tempdir("outside");
    let dir_s = dir.display().to_string();
    let landlock = bashtools::BashTools::builder()
        .sandbox(bashtools::Sandbox::new())
        .build()
        .is_ok();
    if !landlock {
        eprintln!("no Landlock on this kernel: checking that --sandbox is refused instead");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_bashtools-mcp"))
            .args(["--sandbox", "--working-directory", &dir_s])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("Landlock"));
        return;
    }
    let mut s = Server::initialized(&["--sandbox", "--working-directory", &dir_s]);
    let probe = outside.join("probe");
    let (text, err) = s.tool(
        "bash",
        json!({"command": format!("touch '{}'", probe.display())}),
    );
    let refused = text.contains("Read-only file system") || text.contains("Permission denied");
    assert!(err && refused, "{text}");
    assert!(!probe.exists(), "the sandbox let a write outside through");
    let (text, err) = s.tool("bash", json!({"command": "touch inside && echo ok"}));
    assert_eq!((text.as_str(), err), ("ok", false));
    crate::common::wait_until("the start-up lines are on stderr", || {
        let e = s.stderr();
        e.contains("bashtools-mcp: sandbox: Landlock ABI")
            && e.contains("bashtools-mcp: containment: ")
    });
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&outside);
}

// ------------------------------------------------------ structured results

/// Every tool has an `outputSchema` from 2025-06-18 on, and every result a
/// `structuredContent` with the typed facts beside the unchanged text
/// (what validates it against the schema is the interop suite's
/// `jsonschema`; here each fact is checked against the text).
#[test]
fn results_carry_structured_content_from_2025_06_18_on() {
    let mut s = Server::initialized(&[]);
    let list = s.call("tools/list", json!({}));
    for tool in list["result"]["tools"].as_array().unwrap() {
        let schema = &tool["outputSchema"];
        assert_eq!(schema["type"], "object", "{tool}");
        assert_eq!(schema["required"], json!(["is_error"]), "{tool}");
        assert!(tool["title"].is_string(), "{tool}");
    }
    let r = s.call(
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "echo hi; exit 3"}}),
    );
    let mut sc = r["result"]["structuredContent"].clone();
    assert_eq!(r["result"]["content"][0]["text"], "Exit code 3\nhi");
    // What it cost: figures that vary, in their own object (SPEC §11).
    let usage = sc.as_object_mut().unwrap().remove("usage").expect("usage");
    assert!(
        usage["wall_ms"].is_u64() && usage["cpu_ms"].is_u64(),
        "{usage}"
    );
    assert!(usage["peak_memory_bytes"].as_u64() > Some(0), "{usage}");
    assert!(usage["of_tree"].is_boolean(), "{usage}");
    assert_eq!(
        sc,
        json!({"is_error": true, "exit_code": 3, "output": "hi", "truncated_chars": 0}),
        "{r}"
    );
    let (text, _) = s.tool(
        "bash",
        json!({"command": "echo later", "run_in_background": true}),
    );
    let id = task_id(&text, "bash");
    let r = s.call(
        "tools/call",
        json!({"name": "bash_output", "arguments": {"bash_id": id, "block": true}}),
    );
    let sc = &r["result"]["structuredContent"];
    assert_eq!(sc["shell_id"], json!(id), "{r}");
    assert_eq!(sc["status"], "completed", "{r}");
    assert_eq!(sc["exit_code"], 0, "{r}");
    assert_eq!(sc["output"], "later", "{r}");
    assert!(
        sc["output_file"]
            .as_str()
            .is_some_and(|f| f.ends_with(".output")),
        "{r}"
    );
    let r = s.call(
        "tools/call",
        json!({"name": "kill_shell", "arguments": {"shell_id": "bash_99"}}),
    );
    assert_eq!(
        r["result"]["structuredContent"],
        json!({"is_error": true}),
        "{r}"
    );
    // An older protocol knows neither.
    let mut old = Server::start(&[]);
    old.initialize("2025-03-26");
    let list = old.call("tools/list", json!({}));
    assert!(list["result"]["tools"][0].get("outputSchema").is_none());
    let r = old.call(
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "echo hi"}}),
    );
    assert!(r["result"].get("structuredContent").is_none(), "{r}");
}

// ------------------------------------------------------- Claude Code channel

/// The server declares `experimental["claude/channel"]`; to Claude Code
/// (and only to it) each task notification also goes out as a channel
/// event, which wakes an idle agent.
#[test]
fn claude_code_gets_each_notification_as_a_channel_event() {
    let mut s = Server::start(&[]);
    let init = s.initialize_as("2025-06-18", "claude-code");
    assert_eq!(
        init["capabilities"]["experimental"]["claude/channel"],
        json!({})
    );
    let (text, _) = s.tool(
        "bash",
        json!({"command": "echo done", "run_in_background": true}),
    );
    let id = task_id(&text, "bash");
    let event = s
        .next_matching(std::time::Duration::from_secs(60), |m| {
            m["method"] == "notifications/claude/channel"
        })
        .expect("a channel event");
    let params = &event["params"];
    assert_eq!(
        params["meta"],
        json!({"task_id": id, "status": "completed"})
    );
    let content = params["content"].as_str().unwrap();
    assert!(content.starts_with("<task-notification>"), "{content}");
    assert!(
        content.contains(&format!("<task-id>{id}</task-id>")),
        "{content}"
    );

    // Another client gets the log message, and no channel event.
    let mut other = Server::initialized(&[]);
    other.tool(
        "bash",
        json!({"command": "echo done", "run_in_background": true}),
    );
    other.log_message(|d| d["status"] == "completed");
    other.still_serving();
    assert!(other
        .drain()
        .iter()
        .all(|m| m["method"] != "notifications/claude/channel"));
}

// ------------------------------------------------------------------ tasks

/// `tools/call` of `bash` from a request that declares the tasks extension.
fn task_call(s: &mut Server, arguments: Value) -> Value {
    s.call(
        "tools/call",
        json!({"_meta": crate::client::task_meta(), "name": "bash", "arguments": arguments}),
    )
}

fn task_request(s: &mut Server, method: &str, task: &str) -> Value {
    s.call(
        method,
        json!({"_meta": crate::client::task_meta(), "taskId": task}),
    )
}

#[test]
fn a_bash_call_still_running_answers_with_a_task_that_ends_with_its_result() {
    let mut s = Server::start(&["--task-after-ms", "200"]);
    let d = s.call("server/discover", json!({"_meta": meta()}));
    assert_eq!(
        d["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
    // Fast: answered inline.
    let r = task_call(&mut s, json!({"command": "echo quick"}));
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert_eq!(r["result"]["content"][0]["text"], "quick");
    // Slow: a task.
    let r = task_call(&mut s, json!({"command": "sleep 1; echo done; exit 3"}));
    let created = &r["result"];
    assert_eq!(created["resultType"], "task", "{r}");
    assert_eq!(created["status"], "working", "{r}");
    let id = created["taskId"].as_str().unwrap().to_string();
    assert!(
        id.len() == 37 && id.starts_with("task_") && id[5..].chars().all(|c| c.is_ascii_hexdigit()),
        "{id}"
    );
    assert!(
        created["statusMessage"]
            .as_str()
            .unwrap()
            .contains("bash_1"),
        "{r}"
    );
    assert!(created["createdAt"].as_str().unwrap().ends_with('Z'), "{r}");
    assert!(created.get("result").is_none());
    // A stream for it: acknowledged, then told of its end.
    let listen = s.request(
        "subscriptions/listen",
        json!({"_meta": crate::client::task_meta(), "notifications": {"taskIds": [id]}}),
    );
    let ack = s
        .next_matching(std::time::Duration::from_secs(60), |m| {
            m["method"] == "notifications/subscriptions/acknowledged"
        })
        .expect("acknowledged");
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]));
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        listen
    );
    let done = s
        .next_matching(std::time::Duration::from_secs(60), |m| {
            m["method"] == "notifications/tasks"
        })
        .expect("the task's end");
    assert_eq!(done["params"]["taskId"], json!(id));
    assert_eq!(done["params"]["status"], "completed", "{done}");
    // The very result a foreground call would have given.
    let got = task_request(&mut s, "tasks/get", &id);
    let result = &got["result"]["result"];
    assert_eq!(got["result"]["status"], "completed", "{got}");
    assert_eq!(result["content"][0]["text"], "Exit code 3\ndone", "{got}");
    assert_eq!(result["isError"], true);
    assert_eq!(result["structuredContent"]["exit_code"], 3);
    // The task id works where a shell id goes.
    let r = s.call(
        "tools/call",
        json!({"name": "bash_output", "arguments": {"bash_id": id}, "_meta": meta()}),
    );
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("<status>failed</status>"),
        "{r}"
    );
    // The first task's end notice waits for a result that can carry it:
    // the next task-capable call still answers with a task, and the notice
    // comes with the next plain result.
    let r = task_call(&mut s, json!({"command": "sleep 0.5; echo again"}));
    assert_eq!(r["result"]["resultType"], "task", "{r}");
    let again = r["result"]["taskId"].as_str().unwrap().to_string();
    let end = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while task_request(&mut s, "tasks/get", &again)["result"]["status"] == "working" {
        assert!(std::time::Instant::now() < end, "the task never ended");
    }
    // bash_2's end notice is now pending: this call still gets a task.
    let r = task_call(&mut s, json!({"command": "sleep 0.5"}));
    assert_eq!(r["result"]["resultType"], "task", "{r}");
    let plain = s.call(
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "echo plain"}, "_meta": meta()}),
    );
    let carried = crate::client::carried(&plain);
    assert!(
        carried
            .iter()
            .any(|n| n.contains("<task-id>bash_2</task-id>")),
        "{plain}"
    );
    s.notify("notifications/cancelled", json!({"requestId": listen}));
    s.still_serving();
}

#[test]
fn a_cancelled_task_stops_its_whole_tree() {
    let mut s = Server::start(&["--task-after-ms", "100"]);
    let r = task_call(
        &mut s,
        json!({"command": "echo $$; sleep 1000 & exec sleep 1000"}),
    );
    let id = r["result"]["taskId"].as_str().expect("a task").to_string();
    // The leader's pid, as it printed it (read through the task id).
    let end = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let pid: u32 = loop {
        let r = s.call(
            "tools/call",
            json!({"name": "bash_output", "arguments": {"bash_id": id}, "_meta": meta()}),
        );
        let text = r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if let Some(pid) = text.lines().find_map(|l| l.trim().parse().ok()) {
            break pid;
        }
        assert!(std::time::Instant::now() < end, "no pid: {r}");
    };
    let ack = task_request(&mut s, "tasks/cancel", &id);
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    assert!(ack["result"].get("status").is_none(), "an empty ack: {ack}");
    assert_gone(&[pid]);
    let got = task_request(&mut s, "tasks/get", &id);
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
    // Cancelling again is the same empty acknowledgement.
    let again = task_request(&mut s, "tasks/cancel", &id);
    assert_eq!(again["result"]["resultType"], "complete");
}

#[test]
fn run_in_background_names_its_task_and_bad_task_requests_are_refused() {
    let mut s = Server::start(&[]);
    let r = task_call(
        &mut s,
        json!({"command": "true", "run_in_background": true}),
    );
    let id = r["result"]["structuredContent"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_string();
    assert!(r["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("bash_1"));
    let got = task_request(&mut s, "tasks/get", &id);
    assert!(got["result"]["taskId"] == json!(id), "{got}");
    // Unknown: -32602; without the extension: -32021; gone methods: -32601.
    assert_eq!(
        error_code(&task_request(&mut s, "tasks/get", "task_0")),
        -32602
    );
    let plain = s.call("tasks/get", json!({"_meta": meta(), "taskId": id}));
    assert_eq!(error_code(&plain), -32021);
    assert_eq!(
        plain["error"]["data"]["requiredCapabilities"]["extensions"]
            ["io.modelcontextprotocol/tasks"],
        json!({})
    );
    for gone in ["tasks/list", "tasks/result"] {
        let r = s.call(gone, json!({"_meta": crate::client::task_meta()}));
        assert_eq!(error_code(&r), -32601, "{gone}: {r}");
    }
    // A classic session never sees a task.
    let mut classic = Server::initialized(&["--task-after-ms", "50"]);
    let r = classic.call(
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "sleep 0.3; echo classic"}}),
    );
    assert_eq!(r["result"]["content"][0]["text"], "classic", "{r}");
}

/// Issue 33, item 6: what an outside check of the 2026-07-28 revision
/// still found.
#[test]
fn the_2026_07_28_edge_cases() {
    let mut s = Server::start(&["--progress-interval-ms", "100"]);
    // Methods the revision removed, asked in its form: -32601.
    for method in ["initialize", "ping", "logging/setLevel"] {
        let r = s.call(
            method,
            json!({"_meta": meta(), "level": "info", "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        );
        assert_eq!(error_code(&r), -32601, "{method}: {r}");
    }
    // server/discover without its `_meta`: -32602.
    let r = s.call("server/discover", json!({}));
    assert_eq!(error_code(&r), -32602, "{r}");
    assert_eq!(
        s.call("server/discover", json!({"_meta": meta()}))["result"]["resultType"],
        "complete"
    );
    // monitor's timeout_ms must be above 0, as its schema says.
    for ms in [json!(0), json!(-5)] {
        let r = s.call(
            "tools/call",
            json!({"_meta": meta(), "name": "monitor", "arguments": {"command": "echo x", "description": "d", "timeout_ms": ms}}),
        );
        let (text, err) = tool_result(&r);
        assert!(err, "{r}");
        assert!(text.contains("timeout_ms"), "{text}");
    }
    // Progress for a command that prints nothing still says something.
    let mut m = meta();
    m["progressToken"] = json!("p");
    let call = s.request(
        "tools/call",
        json!({"_meta": m, "name": "bash", "arguments": {"command": "sleep 0.5"}}),
    );
    let progress = s.until(|v| v["id"] == call && v.get("method").is_none());
    let said: Vec<&Value> = progress
        .iter()
        .filter(|v| v["method"] == "notifications/progress")
        .collect();
    assert!(!said.is_empty(), "{progress:?}");
    assert!(
        said.iter().all(|v| v["params"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("running for "))),
        "{said:?}"
    );
    // A request of the tasks extension is never handed another call's
    // notification; the next plain request is.
    let r = s.call(
        "tools/call",
        json!({"_meta": meta(), "name": "bash", "arguments": {"command": "echo x", "run_in_background": true}}),
    );
    let id = task_id(&tool_result(&r).0, "bash");
    let r = s.call(
        "tools/call",
        json!({"_meta": crate::client::task_meta(), "name": "bash_output", "arguments": {"bash_id": id, "block": true}}),
    );
    let all = r["result"]["content"].to_string();
    assert!(!all.contains("<task-notification>"), "{r}");
    let r = s.call(
        "tools/call",
        json!({"_meta": meta(), "name": "bash", "arguments": {"command": "echo after"}}),
    );
    assert!(
        r["result"]["content"]
            .to_string()
            .contains(&format!("<task-id>{id}</task-id>")),
        "{r}"
    );
}

/// Secrets over MCP (README, "Secrets"): a session that prints a secret every way a command
/// can — foreground, background and its reads, a monitor, progress, the
/// end notifications — writes not one 8-byte piece of it on stdout.
#[test]
fn no_piece_of_a_secret_reaches_the_client() {
    const TOKEN: &str = "sk_live_0123456789abcdefghijklmnopqrstuv";
    let mut s = Server::start_with(&["--progress-interval-ms", "50"], |c| {
        c.env("STRIPE_SECRET_KEY", TOKEN);
    });
    s.initialize("2025-06-18");
    // Every request sent before any answer is read, so that every message
    // the server writes is scanned (the first background shell is bash_1).
    let call = |s: &mut Server, args: Value| s.request("tools/call", args);
    call(
        &mut s,
        json!({"name": "bash", "arguments": {"command": "env"}}),
    );
    call(
        &mut s,
        json!({"name": "bash", "arguments": {"command": "echo \"bg $STRIPE_SECRET_KEY\"", "run_in_background": true}}),
    );
    call(
        &mut s,
        json!({"name": "bash_output", "arguments": {"bash_id": "bash_1", "block": true}}),
    );
    call(
        &mut s,
        json!({"name": "monitor", "arguments": {"command": "echo \"event $STRIPE_SECRET_KEY\"", "description": "m", "timeout_ms": 60000}}),
    );
    call(
        &mut s,
        json!({"name": "bash", "arguments": {"command": "echo \"$STRIPE_SECRET_KEY\"; sleep 0.4"}, "_meta": {"progressToken": "p"}}),
    );
    let last = call(
        &mut s,
        json!({"name": "bash", "arguments": {"command": "sleep 0.5; echo after"}}),
    );
    let mut seen = s.until(|v| v["id"] == last && v.get("method").is_none());
    s.close_stdin();
    seen.extend(s.rest());
    assert!(seen.len() > 8, "{seen:?}");
    let all: String = seen.iter().map(|v| v.to_string()).collect();
    for window in TOKEN.as_bytes().windows(8) {
        let piece = std::str::from_utf8(window).unwrap();
        assert!(!all.contains(piece), "{piece} reached the client");
    }
    assert!(all.contains("[redacted STRIPE_SECRET_KEY]"));
}

/// `--redact NAME` and `--no-redact-auto` take effect.
#[test]
fn redact_flags_take_effect() {
    let mut s = Server::start_with(&["--redact", "HOOK_URL", "--no-redact-auto"], |c| {
        c.env("HOOK_URL", "https://hooks.example.com/T000/B000");
        c.env("GITHUB_TOKEN", "ghp_visible_because_auto_is_off");
    });
    s.initialize("2025-06-18");
    let (text, _) = s.tool("bash", json!({"command": "echo $HOOK_URL $GITHUB_TOKEN"}));
    assert_eq!(text, "[redacted HOOK_URL] ghp_visible_because_auto_is_off");
}
