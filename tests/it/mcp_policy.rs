//! The policy over MCP (README, "Policy"): deny and allow rules, and *ask*
//! reaching the person through `elicitation/create` in a classic session,
//! through an `InputRequiredResult` and a signed `requestState` in the
//! stateless revision, and a refusal for a client that cannot ask.

use serde_json::{json, Value};

use crate::client::{meta, tool_result, Server};
use crate::common::{Scratch, DEADLINE};

/// A classic session whose client declared elicitation.
fn asking_session(args: &[&str]) -> Server {
    let mut s = Server::start(args);
    s.call(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "tests", "version": "0"}}),
    );
    s.notify("notifications/initialized", json!({}));
    s
}

/// The next `elicitation/create` the server sends.
fn question(s: &mut Server) -> Value {
    s.next_matching(DEADLINE, |v| v["method"] == "elicitation/create")
        .unwrap_or_else(|| panic!("no question; stderr: {}", s.stderr()))
}

fn answer(s: &mut Server, question: &Value, result: Value) {
    s.send(&json!({"jsonrpc": "2.0", "id": question["id"], "result": result}));
}

fn decision(d: &str) -> Value {
    json!({"action": "accept", "content": {"decision": d}})
}

#[test]
fn a_classic_client_is_asked_and_its_answer_decides() {
    let dir = Scratch::new("mcp-ask");
    let wd = dir.path("");
    let mut s = asking_session(&[
        "--working-directory",
        wd.to_str().unwrap(),
        "--ask",
        "touch",
        "--deny",
        "rm",
    ]);
    // Denied outright: nothing is asked.
    let (text, err) = s.tool("bash", json!({"command": "true && rm -f x"}));
    assert!(err);
    assert_eq!(text, "Command not allowed: rm");

    // Once: the question names the line and the parts; the line runs.
    let call = s.request(
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "touch one && echo made"}}),
    );
    let q = question(&mut s);
    let message = q["params"]["message"].as_str().unwrap();
    assert_eq!(
        message,
        "Run this command?\n\ntouch one && echo made\n\nNeeds approval: touch"
    );
    let titles: Vec<&str> = q["params"]["requestedSchema"]["properties"]["decision"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        [
            "Allow once",
            "Allow always for this session: touch one",
            "Deny"
        ]
    );
    // Nothing else waits while the question is open.
    assert_eq!(s.call("ping", json!({}))["result"], json!({}));
    answer(&mut s, &q, decision("once"));
    assert_eq!(tool_result(&s.response(&call)), ("made".to_string(), false));
    assert!(dir.path("one").exists());

    // Declined, cancelled, or a deny: the line does not run.
    for (n, refusal) in [
        json!({"action": "decline"}),
        json!({"action": "cancel"}),
        decision("deny"),
    ]
    .into_iter()
    .enumerate()
    {
        let line = format!("touch no{n}");
        let call = s.request(
            "tools/call",
            json!({"name": "bash", "arguments": {"command": line}}),
        );
        let q = question(&mut s);
        answer(&mut s, &q, refusal);
        assert_eq!(
            tool_result(&s.response(&call)),
            (format!("Command denied: {line}"), true)
        );
        assert!(!dir.path(&format!("no{n}")).exists());
    }
    // An error response denies too.
    let call = s.request(
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "touch err"}}),
    );
    let q = question(&mut s);
    s.send(&json!({"jsonrpc": "2.0", "id": q["id"], "error": {"code": -1, "message": "no"}}));
    assert_eq!(
        tool_result(&s.response(&call)),
        ("Command denied: touch err".to_string(), true)
    );

    // Always: the prefix runs unasked from now on; another does not.
    let call = s.request(
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "touch two"}}),
    );
    let q = question(&mut s);
    answer(&mut s, &q, decision("always"));
    assert!(!tool_result(&s.response(&call)).1);
    let call = s.request(
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "touch two && echo again"}}),
    );
    let before = s.until(|v| v["id"] == call && v.get("method").is_none());
    assert!(
        !before.iter().any(|v| v["method"] == "elicitation/create"),
        "asked again: {before:?}"
    );
    assert_eq!(
        tool_result(before.last().unwrap()),
        ("again".to_string(), false)
    );
}

#[test]
fn no_answer_in_time_denies_the_line() {
    let dir = Scratch::new("mcp-ask-timeout");
    let wd = dir.path("");
    let mut s = asking_session(&[
        "--working-directory",
        wd.to_str().unwrap(),
        "--ask",
        "touch",
        "--approval-timeout",
        "0.5",
    ]);
    let call = s.request(
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "touch late"}}),
    );
    let q = question(&mut s);
    assert_eq!(
        tool_result(&s.response(&call)),
        (
            "Command denied: touch late (no answer within 0.5s)".to_string(),
            true
        )
    );
    // A late answer is dropped; the line never runs.
    answer(&mut s, &q, decision("once"));
    s.still_serving();
    assert!(!dir.path("late").exists());
}

#[test]
fn a_client_that_cannot_ask_is_told_what_to_allow() {
    let dir = Scratch::new("mcp-cannot-ask");
    let wd = dir.path("");
    let mut s = Server::initialized(&[
        "--working-directory",
        wd.to_str().unwrap(),
        "--ask",
        "touch",
    ]);
    assert_eq!(
        s.tool("bash", json!({"command": "touch made"})),
        (
            "Command needs approval: touch (this client cannot ask the user; allow it with --allow \"touch made\" or a rules file)".to_string(),
            true
        )
    );
    assert!(!dir.path("made").exists());
    // A stateless request without the elicitation capability: the same.
    let r = s.call(
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "touch made"}, "_meta": meta()}),
    );
    assert_eq!(r["result"]["resultType"], "complete");
    assert!(tool_result(&r)
        .0
        .starts_with("Command needs approval: touch (this client cannot ask"));
    assert!(!dir.path("made").exists());
}

fn asking_meta() -> Value {
    let mut m = meta();
    m["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {}});
    m
}

#[test]
fn a_stateless_client_gets_the_question_and_a_state_good_once() {
    let dir = Scratch::new("mcp-ask-stateless");
    let wd = dir.path("");
    let mut s = Server::start(&[
        "--working-directory",
        wd.to_str().unwrap(),
        "--ask",
        "touch",
    ]);
    let args = json!({"command": "touch one && echo made"});
    let r = s.call(
        "tools/call",
        json!({"name": "bash", "arguments": args, "_meta": asking_meta()}),
    );
    let result = &r["result"];
    assert_eq!(result["resultType"], "input_required", "{r}");
    let q = &result["inputRequests"]["approval"];
    assert_eq!(q["method"], "elicitation/create");
    assert_eq!(
        q["params"]["message"],
        "Run this command?\n\ntouch one && echo made\n\nNeeds approval: touch"
    );
    let state = result["requestState"].as_str().unwrap().to_string();
    assert!(!dir.path("one").exists());
    let retry = |s: &mut Server, args: &Value, state: &str, answer: Value| {
        s.call(
            "tools/call",
            json!({"name": "bash", "arguments": args, "_meta": asking_meta(),
                   "inputResponses": {"approval": answer}, "requestState": state}),
        )
    };
    // For other arguments, altered, or from nowhere: -32602.
    let other = json!({"command": "touch other"});
    let r = retry(&mut s, &other, &state, decision("once"));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let mut altered = state.clone().into_bytes();
    altered[4] = if altered[4] == b'a' { b'b' } else { b'a' };
    let r = retry(
        &mut s,
        &args,
        &String::from_utf8(altered).unwrap(),
        decision("once"),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = retry(&mut s, &args, "made.up", decision("once"));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(!dir.path("one").exists());
    // The real answer runs the line, once.
    let r = retry(&mut s, &args, &state, decision("once"));
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(tool_result(&r), ("made".to_string(), false));
    let r = retry(&mut s, &args, &state, decision("once"));
    assert_eq!(r["error"]["code"], -32602, "a state was used twice: {r}");
    assert!(r["error"]["message"]
        .as_str()
        .unwrap()
        .contains("already used"));
    // Declined: denied with the line.
    let args = json!({"command": "touch two"});
    let r = s.call(
        "tools/call",
        json!({"name": "bash", "arguments": args, "_meta": asking_meta()}),
    );
    let state = r["result"]["requestState"].as_str().unwrap().to_string();
    let r = retry(&mut s, &args, &state, json!({"action": "decline"}));
    assert_eq!(
        tool_result(&r),
        ("Command denied: touch two".to_string(), true)
    );
    assert!(!dir.path("two").exists());
    // Never a request from the server in this revision.
    assert!(!s
        .drain()
        .iter()
        .any(|v| v["method"] == "elicitation/create"));
}

#[test]
fn tools_list_says_which_decisions_are_active() {
    let mut s = Server::initialized(&["--allow", "git status", "--ask", "git push"]);
    let r = s.call("tools/list", json!({}));
    let bash = r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "bash")
        .unwrap()
        .clone();
    let d = bash["description"].as_str().unwrap();
    assert!(d.contains("A policy judges every command"), "{d}");
    assert!(d.contains("approves") && d.contains("refused"), "{d}");
    assert!(!d.contains("git push"), "the rules are not shown: {d}");
}

fn cli(args: &[&str]) -> std::process::Output {
    std::process::Command::new(crate::client::BIN)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// Both rule files, merged with the flags: `--check-rules` prints them
/// and exits 0; a bad file exits 2 with one line naming FILE:LINE; the
/// same files served take effect.
#[test]
fn rules_files_of_claude_code_and_codex_are_read_and_checked() {
    let dir = Scratch::new("rules-files");
    let claude = dir.path("settings.json");
    std::fs::write(
        &claude,
        r#"{
  "permissions": {
    "allow": ["Bash(echo:*)", "Bash(git status)", "Read(./**)"],
    "deny": ["Bash(rm -rf *)"]
  }
}"#,
    )
    .unwrap();
    let codex = dir.path("default.rules");
    std::fs::write(
        &codex,
        "# project rules\nprefix_rule(\n    pattern = [\"touch\", [\"a\", \"b\"]],\n    decision = \"forbidden\",\n    justification = \"not those\",\n    match = [\"touch a\"],\n    not_match = [\"touch c\"],\n)\n",
    )
    .unwrap();
    let (c, x) = (claude.to_str().unwrap(), codex.to_str().unwrap());
    let out = cli(&["--deny", "curl", "--check-rules", c, x]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "deny curl\ndeny rm -rf\nallow echo\nallow git status (exactly)\ndeny touch [a b] — not those\ndeny (every command no rule matches)\n"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("skipped 1 entries for other tools"),
        "{out:?}"
    );
    // A failing example: exit 2, one line naming the file and line.
    let bad = dir.path("bad.rules");
    std::fs::write(
        &bad,
        "prefix_rule(\n  pattern=[\"git\"],\n  match=[\"ls\"])\n",
    )
    .unwrap();
    for args in [
        vec!["--check-rules", bad.to_str().unwrap()],
        vec!["--rules", bad.to_str().unwrap()],
    ] {
        let out = cli(&args);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!(
                "{}:3: the example `ls` does not match",
                bad.display()
            )),
            "{err}"
        );
    }
    let out = cli(&["--rules", dir.path("missing.json").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let out = cli(&["--allow", "git [push", "--check-rules"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    // Served: the files decide.
    let wd = dir.path("");
    let mut s = Server::initialized(&[
        "--working-directory",
        wd.to_str().unwrap(),
        "--rules",
        c,
        "--rules",
        x,
    ]);
    assert_eq!(
        s.tool("bash", json!({"command": "echo hi"})),
        ("hi".to_string(), false)
    );
    assert_eq!(
        s.tool("bash", json!({"command": "echo x && touch b"})),
        ("Command not allowed: touch b: not those".to_string(), true)
    );
    assert_eq!(
        s.tool("bash", json!({"command": "git status -s"})),
        ("Command not allowed: git".to_string(), true)
    );
    assert!(!dir.path("b").exists());
}
