//! A tiny MCP client for the tests: starts the built `bashtools-mcp`, talks
//! JSON-RPC to it over pipes, and checks that stdout carries nothing but
//! JSON-RPC messages.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use parking_lot::Mutex;
use serde_json::{json, Value};
use wait_timeout::ChildExt;

/// Generous: these machines are shared and noisy.
pub const DEADLINE: Duration = Duration::from_secs(30);

pub const BIN: &str = env!("CARGO_BIN_EXE_bashtools-mcp");

/// `_meta` of a stateless (2026-07-28) request that declares the tasks
/// extension.
pub fn task_meta() -> Value {
    let mut m = meta();
    m["io.modelcontextprotocol/clientCapabilities"] =
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    m
}

/// `_meta` of a stateless (2026-07-28) request.
pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "0"}
    })
}

/// A running server and what it has sent that nobody took yet.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    /// Messages received while waiting for others.
    stash: Vec<Value>,
    next_id: i64,
    stderr: Arc<Mutex<String>>,
    /// The pipes of the server's stdin and stdout (`pipe:[INODE]`).
    stdio: Vec<std::path::PathBuf>,
}

impl Server {
    /// Starts the server with a short kill grace and `args`.
    pub fn start(args: &[&str]) -> Server {
        Server::start_with(args, |_| {})
    }

    /// [`start`](Self::start), with a hook to adjust the command (its environment).
    pub fn start_with(args: &[&str], adjust: impl FnOnce(&mut Command)) -> Server {
        let mut cmd = Command::new(BIN);
        cmd.args(["--kill-grace", "0.5"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        adjust(&mut cmd);
        let mut child = cmd.spawn().expect("start bashtools-mcp");
        let stdout = child.stdout.take().unwrap();
        let stdio = {
            use std::os::fd::AsRawFd;
            let fds = [
                child.stdin.as_ref().unwrap().as_raw_fd(),
                stdout.as_raw_fd(),
            ];
            fds.iter()
                .filter_map(|fd| std::fs::read_link(format!("/proc/self/fd/{fd}")).ok())
                .collect()
        };
        let (tx, rx) = crossbeam_channel::unbounded();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v = match serde_json::from_str::<Value>(&line) {
                    Ok(v) if v.is_object() && v["jsonrpc"] == "2.0" => match schema_check(&v) {
                        Ok(()) => v,
                        Err(e) => json!({"not_a_message": format!("{e}: {line}")}),
                    },
                    _ => json!({"not_a_message": line}),
                };
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut err = child.stderr.take().unwrap();
        let collected = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                collected
                    .lock()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let stdin = child.stdin.take();
        Server {
            child,
            stdin,
            rx,
            stash: Vec::new(),
            next_id: 1,
            stderr,
            stdio,
        }
    }

    /// Started and through the classic handshake (2025-06-18).
    pub fn initialized(args: &[&str]) -> Server {
        let mut s = Server::start(args);
        s.initialize("2025-06-18");
        s
    }

    /// `initialize` with `version`, then `notifications/initialized`; the result.
    pub fn initialize(&mut self, version: &str) -> Value {
        self.initialize_as(version, "tests")
    }

    /// [`initialize`](Self::initialize) as the client named `client`.
    pub fn initialize_as(&mut self, version: &str, client: &str) -> Value {
        let r = self.call(
            "initialize",
            json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": client, "version": "0"}}),
        );
        self.notify("notifications/initialized", json!({}));
        r["result"].clone()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The pipes of the server's stdin and stdout, as `/proc` names them.
    pub fn stdio_pipes(&self) -> &[std::path::PathBuf] {
        &self.stdio
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().clone()
    }

    /// Writes raw bytes (the caller adds the newline).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to the server");
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).unwrap();
        line.push(b'\n');
        self.send_raw(&line);
    }

    pub fn fresh_id(&mut self) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        id
    }

    /// Sends a request and returns its id.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.fresh_id();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and waits for its response.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params);
        self.response(&id)
    }

    /// `tools/call`; returns `(text, isError)`.
    pub fn tool(&mut self, name: &str, arguments: Value) -> (String, bool) {
        let r = self.call("tools/call", json!({"name": name, "arguments": arguments}));
        tool_result(&r)
    }

    /// The next message matching `pred` (stashed ones first), or `None`
    /// after `within`.
    pub fn next_matching(
        &mut self,
        within: Duration,
        mut pred: impl FnMut(&Value) -> bool,
    ) -> Option<Value> {
        if let Some(i) = self.stash.iter().position(&mut pred) {
            return Some(self.stash.remove(i));
        }
        let end = Instant::now() + within;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let v = self.rx.recv_timeout(left).ok()?;
            assert!(
                v.get("not_a_message").is_none(),
                "stdout carried a line that is not a JSON-RPC message: {v}"
            );
            if pred(&v) {
                return Some(v);
            }
            self.stash.push(v);
        }
    }

    /// Every message in the order received (stashed ones first), up to and
    /// including the first that matches `pred`.
    pub fn until(&mut self, mut pred: impl FnMut(&Value) -> bool) -> Vec<Value> {
        let mut seen = std::mem::take(&mut self.stash);
        if let Some(i) = seen.iter().position(&mut pred) {
            self.stash = seen.split_off(i + 1);
            return seen;
        }
        let end = Instant::now() + DEADLINE;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let v = self.rx.recv_timeout(left).unwrap_or_else(|_| {
                panic!(
                    "no matching message; got {seen:?}; stderr: {}",
                    self.stderr()
                )
            });
            assert!(v.get("not_a_message").is_none(), "not JSON-RPC: {v}");
            let done = pred(&v);
            seen.push(v);
            if done {
                return seen;
            }
        }
    }

    /// Everything the server writes until its stdout closes.
    pub fn rest(&mut self) -> Vec<Value> {
        let mut all = std::mem::take(&mut self.stash);
        let end = Instant::now() + DEADLINE;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(v) => {
                    assert!(v.get("not_a_message").is_none(), "not a valid message: {v}");
                    all.push(v);
                }
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return all,
                Err(_) => panic!("stdout did not close; stderr: {}", self.stderr()),
            }
        }
    }

    /// The response to request `id`.
    pub fn response(&mut self, id: &Value) -> Value {
        let id = id.clone();
        self.next_matching(DEADLINE, |v| v["id"] == id && v.get("method").is_none())
            .unwrap_or_else(|| panic!("no response to request {id}; stderr: {}", self.stderr()))
    }

    /// The next error response whose id is `null`.
    pub fn null_id_error(&mut self) -> Value {
        self.next_matching(DEADLINE, |v| v["id"].is_null() && v.get("error").is_some())
            .expect("an error response with id null")
    }

    /// The next `notifications/message` whose data matches `pred`.
    pub fn log_message(&mut self, mut pred: impl FnMut(&Value) -> bool) -> Value {
        self.next_matching(DEADLINE, |v| {
            v["method"] == "notifications/message" && pred(&v["params"]["data"])
        })
        .expect("a notifications/message")
    }

    /// Every message received so far (stashed and waiting), taken.
    pub fn drain(&mut self) -> Vec<Value> {
        let mut all = std::mem::take(&mut self.stash);
        all.extend(self.rx.try_iter());
        for v in &all {
            assert!(v.get("not_a_message").is_none(), "not a valid message: {v}");
        }
        all
    }

    /// Whether a ping round trip works (the server still serves).
    pub fn still_serving(&mut self) {
        let r = self.call("ping", json!({}));
        assert_eq!(r["result"], json!({}), "ping after bad input: {r}");
    }

    /// Closes stdin: end of input for the server.
    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// Waits for the server to exit.
    pub fn wait_exit(&mut self) -> ExitStatus {
        self.child
            .wait_timeout(DEADLINE)
            .expect("wait for the server")
            .unwrap_or_else(|| panic!("the server did not exit; stderr: {}", self.stderr()))
    }

    /// Sends `signal` to the server.
    pub fn signal(&self, signal: nix::sys::signal::Signal) {
        let pid = nix::unistd::Pid::from_raw(self.pid() as i32);
        nix::sys::signal::kill(pid, signal).expect("signal the server");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stdin.take();
        if self.child.wait_timeout(DEADLINE).ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Checks a message from the server against the official MCP schema types
/// (crate `rust-mcp-schema`) of 2025-06-18, the version these tests
/// negotiate (the crate builds one version at a time; a stateless
/// 2026-07-28 result is checked as the same result of 2025-06-18, its
/// `resultType` and `_meta` aside). Results are told apart by their fields.
pub fn schema_check(v: &Value) -> Result<(), String> {
    use rust_mcp_schema::mcp_2025_06_18 as classic;
    fn is<T: serde::de::DeserializeOwned>(what: &str, v: &Value) -> Result<(), String> {
        serde_json::from_value::<T>(v.clone())
            .map(drop)
            .map_err(|e| format!("schema: not a valid {what}: {e}"))
    }
    if let Some(method) = v.get("method").and_then(Value::as_str) {
        if v.get("id").is_some() {
            // The one request the server sends: the policy's question, a
            // form whose single choice uses the titled-enum form of
            // 2025-11-25 (`oneOf` of `const`/`title`), not in these types.
            let p = &v["params"];
            let choices = &p["requestedSchema"]["properties"]["decision"]["oneOf"];
            let titled = choices.as_array().is_some_and(|c| {
                !c.is_empty()
                    && c.iter()
                        .all(|c| c["const"].is_string() && c["title"].is_string())
            });
            return match method {
                "elicitation/create"
                    if p["message"].is_string()
                        && p["requestedSchema"]["type"] == "object"
                        && p["requestedSchema"]["required"] == json!(["decision"])
                        && titled =>
                {
                    Ok(())
                }
                _ => Err(format!("schema: the server sent a request ({method}): {v}")),
            };
        }
        let params = &v["params"];
        return match method {
            "notifications/message" => {
                is::<classic::LoggingMessageNotificationParams>("log message", params)
            }
            "notifications/progress" => {
                // A token of another JSON type than the schema's string or
                // number is echoed as the client gave it (the tests check the
                // echo); the rest of the message is checked.
                let mut params = params.clone();
                if !(params["progressToken"].is_string() || params["progressToken"].is_number()) {
                    params["progressToken"] = json!("echoed");
                }
                is::<classic::ProgressNotificationParams>("progress notification", &params)
            }
            // 2026-07-28 and its tasks extension (not in the 2025-06-18
            // types): a task's detail, and a stream's acknowledgement.
            "notifications/tasks" => match (params["taskId"].as_str(), params["status"].as_str()) {
                (Some(_), Some(_)) => Ok(()),
                _ => Err(format!("schema: not a valid task notification: {params}")),
            },
            "notifications/subscriptions/acknowledged" => match params["notifications"].is_object()
            {
                true => Ok(()),
                false => Err(format!("schema: not a valid acknowledgement: {params}")),
            },
            // Claude Code's own (not in the MCP schema): `content`, a
            // string, and `meta`, a map of strings (its handler's zod
            // schema).
            "notifications/claude/channel" => {
                let meta_ok = params["meta"]
                    .as_object()
                    .is_some_and(|m| m.values().all(Value::is_string));
                if params["content"].is_string() && meta_ok {
                    Ok(())
                } else {
                    Err(format!("schema: not a valid channel event: {params}"))
                }
            }
            _ => Err(format!("schema: unexpected notification {method}")),
        };
    }
    if let Some(e) = v.get("error") {
        return match (e["code"].as_i64(), e["message"].as_str()) {
            (Some(_), Some(_)) => Ok(()),
            _ => Err("schema: an error without an integer code and a message".into()),
        };
    }
    let Some(r) = v.get("result").filter(|r| r.is_object()) else {
        return Err("schema: neither a result object, an error nor a notification".into());
    };
    if r.get("content").is_some() {
        is::<classic::CallToolResult>("tool result", r)
    } else if r.get("tools").is_some() {
        is::<classic::ListToolsResult>("tools/list result", r)
    } else if r.get("protocolVersion").is_some() {
        is::<classic::InitializeResult>("initialize result", r)
    } else {
        Ok(())
    }
}

/// `(text, isError)` of a `tools/call` response: its first content item
/// (the notifications it carries follow it, see [`carried`]).
pub fn tool_result(r: &Value) -> (String, bool) {
    let result = &r["result"];
    assert!(result.is_object(), "not a tool result: {r}");
    let content = result["content"].as_array().expect("content");
    assert!(!content.is_empty(), "at least one content block: {r}");
    assert!(
        content.iter().all(|c| c["type"] == "text"),
        "text items only: {r}"
    );
    (
        content[0]["text"].as_str().unwrap().to_string(),
        result["isError"].as_bool().expect("isError"),
    )
}

/// The `<task-notification>` texts a `tools/call` response carries after
/// its own text.
pub fn carried(r: &Value) -> Vec<String> {
    let content = r["result"]["content"].as_array().expect("content");
    content[1..]
        .iter()
        .map(|c| {
            let t = c["text"].as_str().expect("a text item").to_string();
            assert!(
                t.starts_with("<task-notification>\n") && t.ends_with("</task-notification>"),
                "a carried item is a task notification: {t}"
            );
            t
        })
        .collect()
}

/// The `bash_N` / `monitor_N` named in a text.
pub fn task_id(text: &str, kind: &str) -> String {
    let start = text.find(&format!("{kind}_")).expect("an ID in the text");
    text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// The output file named in a background answer.
pub fn output_path(text: &str) -> std::path::PathBuf {
    let start = text.find("written to: ").expect("an output path") + "written to: ".len();
    let rest = &text[start..];
    let end = rest.find(".output").expect("a .output file") + ".output".len();
    rest[..end].into()
}

/// The pid (= process group) of the process whose command line contains
/// `marker` and whose parent is `parent`: the leader of a shell the server
/// started.
pub fn leader_with(parent: u32, marker: &str) -> u32 {
    let mut found = None;
    crate::common::wait_until(
        &format!("a process with {marker:?} runs under {parent}"),
        || {
            found = child_with(parent, marker);
            found.is_some()
        },
    );
    found.unwrap()
}

/// The child of `parent` whose command line contains `marker`, if one runs.
fn child_with(parent: u32, marker: &str) -> Option<u32> {
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let ppid: u32 = stat[close + 1..]
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        if ppid == parent && String::from_utf8_lossy(&cmdline).contains(marker) {
            return Some(pid);
        }
    }
    None
}
