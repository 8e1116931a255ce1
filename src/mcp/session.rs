//! One client on one stream: reads messages, answers the quick ones at
//! once, hands `tools/call` to [`calls`](super::calls), and keeps the
//! little state the classic handshake needs.
//!
//! Only the reading thread touches the session's state, so it needs no
//! lock; what call threads share (the calls in flight, the inbox of
//! notifications, the writer) is in `Arc`s.
//!
//! The end of input is bounded: from stdin's end, `kill_grace` + 1 s at
//! most pass before `run` returns — the shells are stopped, the calls get
//! until then to answer, and the writer until then to flush; a client that
//! stopped reading holds up nothing.

use std::io::BufRead;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use crossbeam_channel::Sender;

use super::ask::{self, Answer, Asks, Stamp};
use super::calls::{self, Asking, Calls, Refused, Shared, TaskMode, ToolCall, MAX_CALLS_IN_FLIGHT};
use super::inbox::{Forwarder, Inbox, HEARD, UNHEARD};
use super::jsonrpc::{
    self, Message, RpcError, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND,
};
use super::lines::{self, Line, Lines};
use super::options::Options;
use super::protocol::{self, Era, Level};
use super::tasks::{self, Board};
use super::tools;
use super::writer::Writer;
use super::McpServer;
use crate::caller::Caller;

/// What the end of input may take beyond `kill_grace` (contract §9:
/// done within `kill_grace` + 1 s whatever the client does).
const END_MARGIN: Duration = Duration::from_millis(900);

pub(crate) struct Session<'a> {
    server: &'a McpServer,
    options: &'a Options,
    out: Arc<Writer>,
    calls: Arc<Calls>,
    shared: Shared,
    /// A thread started with the session, for `kill_shell` and
    /// `bash_output` calls when no new thread can be started (the process
    /// limit is exhausted): an agent can still stop what exhausted it.
    reserve: Option<Sender<ToolCall>>,
    /// The instructions for these options.
    instructions: String,
    /// The version the classic handshake agreed on; `None` before it.
    classic: Option<&'static str>,
    /// The classic client declared `elicitation` in `initialize`.
    elicitation: bool,
    /// Signs the stateless ask's `requestState`s (`None`: no randomness,
    /// the stateless ask is off).
    stamp: Option<Stamp>,
    /// The level set by `logging/setLevel` (classic); all messages before.
    classic_level: Level,
}

impl<'a> Session<'a> {
    pub(crate) fn new(
        server: &'a McpServer,
        options: &'a Options,
        out: Arc<Writer>,
    ) -> std::io::Result<Session<'a>> {
        let calls = Arc::new(Calls::default());
        let inbox = Arc::new(Inbox::new(&server.backend, options.delivery(), out.clone()));
        let tasks =
            Board::start(server.backend.clone(), out.clone(), calls::task_result).map_err(|e| {
                std::io::Error::new(e.kind(), format!("cannot start the tasks thread: {e}"))
            })?;
        let shared = Shared {
            backend: server.backend.clone(),
            out: out.clone(),
            calls: calls.clone(),
            unpromised: !inbox.promises(),
            inbox,
            tasks,
            progress_every: options.progress_every(),
            output_limit: server.backend.settings().output_limit,
            asks: Arc::new(Asks::default()),
            approval_timeout: options.approval_wait(),
        };
        Ok(Session {
            server,
            options,
            out,
            calls,
            shared,
            reserve: None,
            instructions: super::instructions(&server.backend, options.delivery()),
            classic: None,
            elicitation: false,
            stamp: Stamp::new(),
            classic_level: Level::Debug,
        })
    }

    /// Serves until the end of `input`, then stops every shell and monitor
    /// and lets the running calls answer.
    pub(crate) fn run(mut self, input: impl BufRead) -> std::io::Result<()> {
        let forwarder = Forwarder::start(self.shared.inbox.clone())?;
        self.reserve = Some(self.start_reserve()?);
        let mut lines = Lines::new(input, self.options.line_limit());
        let read = loop {
            match lines.next_line() {
                Ok(Some(line)) => self.line(line),
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        // The client has gone: from now on only the answers to what it
        // asked are written, and nothing of ours may outlive it.
        let deadline = Instant::now() + self.server.backend.settings().kill_grace + END_MARGIN;
        // Calls waiting for a client that does not read go on (and end).
        self.out.stop_waiting();
        // Nobody will answer a question now: each waiting line is denied.
        self.shared.asks.close();
        self.shared.inbox.close();
        self.shared.tasks.close();
        self.reserve.take();
        self.server.backend.close();
        let left = self.calls.wait_idle(deadline);
        if left > 0 {
            eprintln!("bashtools-mcp: {left} calls still running at exit");
        }
        forwarder.stop();
        if !self.out.close(deadline) {
            eprintln!("bashtools-mcp: the client stopped reading; unwritten messages dropped");
        }
        read
    }

    fn start_reserve(&self) -> std::io::Result<Sender<ToolCall>> {
        let (tx, rx) = crossbeam_channel::unbounded::<ToolCall>();
        let shared = self.shared.clone();
        std::thread::Builder::new()
            .name("bashtools-mcp-reserve".into())
            .spawn(move || {
                for call in rx {
                    calls::run_and_answer(&shared, call);
                }
            })?;
        Ok(tx)
    }

    fn line(&mut self, line: Line) {
        let bytes = match line {
            Line::Text(b) => b,
            Line::TooLong { len, head } => {
                let limit = self.options.line_limit();
                let e = RpcError::new(
                    INVALID_REQUEST,
                    format!("Invalid request: a message of {len} bytes is past the limit of {limit} bytes per line"),
                );
                self.out
                    .send(&jsonrpc::error(&lines::id_at_start(&head), &e));
                return;
            }
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        match jsonrpc::parse(&bytes) {
            Ok(Message::Request { id, method, params }) => self.request(id, &method, params),
            Ok(Message::Notification { method, params }) => self.notification(&method, &params),
            Ok(Message::Response { id, answer }) => self.shared.asks.answered(&id, answer),
            Err(r) => self.out.send(&jsonrpc::error(&r.id, &r.error)),
        }
    }

    /// Only cancellation means something to this server; the others
    /// (`notifications/initialized`, progress, roots) need no action.
    fn notification(&mut self, method: &str, params: &Map<String, Value>) {
        if method != "notifications/cancelled" {
            return;
        }
        let Some(id) = params.get("requestId") else {
            return;
        };
        let key = jsonrpc::id_key(id);
        self.shared.tasks.unlisten(&key);
        if let Some(shell) = self.calls.cancel(&key) {
            calls::stop_cancelled(shell);
        }
    }

    fn request(&mut self, id: Value, method: &str, params: Map<String, Value>) {
        let era = match protocol::era(&params) {
            Ok(era) => era,
            Err(e) => return self.out.send(&jsonrpc::error(&id, &e)),
        };
        if era != Era::Classic {
            let client = params
                .get("_meta")
                .and_then(|m| m.get(protocol::META_CLIENT_INFO));
            if protocol::is_claude_code(client) {
                self.shared.inbox.open_channel();
            }
        }
        if era != Era::Classic {
            if let Some(answer) = self.tasks_request(&id, method, &params) {
                return match answer {
                    Ok(Some(result)) => self.out.send(&jsonrpc::result(&id, result)),
                    Ok(None) => {}
                    Err(e) => self.out.send(&jsonrpc::error(&id, &e)),
                };
            }
        }
        if method == "tools/call" {
            return match self.ready(era) {
                Ok(()) => self.call(id, params, era),
                Err(e) => self.out.send(&jsonrpc::error(&id, &e)),
            };
        }
        // The stateless revision removed the handshake, `ping` and the
        // session's log level; `server/discover` belongs to it and needs
        // its `_meta`.
        let removed = matches!(method, "initialize" | "ping" | "logging/setLevel");
        if era != Era::Classic && removed {
            let e = RpcError::new(
                METHOD_NOT_FOUND,
                format!(
                    "Method not found: {method} was removed in protocol version {}",
                    protocol::STATELESS_VERSION
                ),
            );
            return self.out.send(&jsonrpc::error(&id, &e));
        }
        if method == "server/discover" && era == Era::Classic {
            let e = RpcError::new(
                INVALID_PARAMS,
                format!(
                    "Invalid params: server/discover needs params._meta with {} and {} (protocol version {})",
                    protocol::META_VERSION_KEY,
                    protocol::META_CAPABILITIES,
                    protocol::STATELESS_VERSION
                ),
            );
            return self.out.send(&jsonrpc::error(&id, &e));
        }
        let message = match self.answer(method, &params, era) {
            // `server/discover` belongs to the stateless revision: its result
            // has that form whichever way it was asked.
            Ok(result) if method == "server/discover" || era != Era::Classic => {
                jsonrpc::result(&id, protocol::stateless(result))
            }
            Ok(result) => jsonrpc::result(&id, result),
            Err(e) => jsonrpc::error(&id, &e),
        };
        self.out.send(&message);
    }

    /// The result of every request but `tools/call`, which answers later.
    fn answer(
        &mut self,
        method: &str,
        params: &Map<String, Value>,
        era: Era,
    ) -> Result<Value, RpcError> {
        match method {
            "initialize" => Ok(self.initialize(params)),
            "ping" => Ok(json!({})),
            "server/discover" => Ok(protocol::discover_result(&self.instructions)),
            "tools/list" => {
                self.ready(era)?;
                let structured = protocol::structured(era, self.classic);
                let list = json!({"tools": tools::list(&self.server.backend, self.shared.inbox.promises(), structured)});
                Ok(match era {
                    Era::Classic => list,
                    Era::Stateless { .. } => protocol::cacheable(list),
                })
            }
            "logging/setLevel" => {
                self.ready(era)?;
                self.set_level(params)
            }
            _ => Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!("Method not found: {method}"),
            )),
        }
    }

    /// Classic requests need the handshake first; stateless ones carry
    /// everything they need.
    fn ready(&self, era: Era) -> Result<(), RpcError> {
        match (era, self.classic) {
            (Era::Stateless { .. }, _) | (Era::Classic, Some(_)) => Ok(()),
            (Era::Classic, None) => Err(RpcError::new(
                INVALID_PARAMS,
                format!(
                    "Server not initialized: send initialize first, or name protocol version {} in params._meta (io.modelcontextprotocol/protocolVersion)",
                    protocol::STATELESS_VERSION
                ),
            )),
        }
    }

    /// What the tasks extension makes of a call of `tool`: a task-capable
    /// `bash` call runs in the foreground only until the task delay; a task
    /// id where a shell id goes stands for its shell.
    fn task_mode(
        &self,
        tool: &str,
        params: &Map<String, Value>,
        era: Era,
        args: &mut Value,
    ) -> TaskMode {
        for name in ["bash_id", "shell_id"] {
            let shell = args
                .get(name)
                .and_then(Value::as_str)
                .and_then(|t| self.shared.tasks.shell_of(t));
            if let Some(shell) = shell {
                args[name] = json!(shell);
            }
        }
        if era == Era::Classic || tool != "bash" || !tasks::declared(params) {
            return TaskMode::None;
        }
        if args.get("run_in_background") == Some(&Value::Bool(true)) {
            return TaskMode::Background;
        }
        if args.get("interactive") == Some(&Value::Bool(true)) {
            return TaskMode::None;
        }
        let after = self.options.task_delay();
        let limits = self.server.backend.settings();
        // Only a timeout the schema accepts is shortened; any other is the
        // tool's to refuse.
        let given = match args.get("timeout") {
            None => Some(limits.default_timeout),
            Some(Value::Number(n)) => n
                .as_f64()
                .filter(|s| *s > 0.0)
                .and_then(|s| Duration::try_from_secs_f64(s).ok()),
            Some(_) => None,
        };
        if let Some(given) = given {
            let shortened = given.min(limits.max_timeout).min(after);
            args["timeout"] = json!(shortened.as_secs_f64());
        }
        TaskMode::Foreground
    }

    /// A stateless request of the tasks extension (`tasks.rs`): `None` for
    /// any other method; `Ok(None)` for a listen, answered only when its
    /// stream ends.
    fn tasks_request(
        &mut self,
        id: &Value,
        method: &str,
        params: &Map<String, Value>,
    ) -> Option<Result<Option<Value>, RpcError>> {
        let board = &self.shared.tasks;
        let task_id = || {
            params
                .get("taskId")
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| {
                    RpcError::new(INVALID_PARAMS, "Invalid params: taskId must be a string")
                })
        };
        let answer = match method {
            "tasks/get" | "tasks/cancel" | "tasks/update" if !tasks::declared(params) => {
                Err(tasks::missing_capability())
            }
            "tasks/get" => task_id().and_then(|t| board.get(&t)).map(Some),
            "tasks/cancel" => task_id().and_then(|t| board.cancel(&t)).map(Some),
            "tasks/update" => task_id().and_then(|t| board.update(&t)).map(Some),
            "subscriptions/listen" => {
                let wanted = params
                    .get("notifications")
                    .and_then(|n| n.get("taskIds"))
                    .and_then(Value::as_array)?;
                if !tasks::declared(params) {
                    Err(tasks::missing_capability())
                } else {
                    let ids = wanted
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect();
                    self.out.send(&board.listen(id, ids));
                    Ok(None)
                }
            }
            _ => return None,
        };
        Some(answer)
    }

    fn initialize(&mut self, params: &Map<String, Value>) -> Value {
        let requested = params.get("protocolVersion").and_then(Value::as_str);
        let version = protocol::negotiate(requested);
        self.classic = Some(version);
        self.shared.inbox.classic();
        self.elicitation = params
            .get("capabilities")
            .and_then(|c| c.get("elicitation"))
            .is_some_and(Value::is_object);
        if protocol::is_claude_code(params.get("clientInfo")) {
            self.shared.inbox.open_channel();
        }
        protocol::initialize_result(version, &self.instructions)
    }

    fn set_level(&mut self, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let level = params.get("level").unwrap_or(&Value::Null);
        self.classic_level = protocol::level(level)?;
        Ok(json!({}))
    }

    /// The policy's question in the stateless revision (README, "Policy"): how
    /// the call's line may be asked about, or `None` once this request is
    /// answered here — with an `InputRequiredResult` carrying the question
    /// and a signed `requestState`, with the denial the person gave, or
    /// with `-32602` for a state that is altered, expired, for other
    /// arguments or used already.
    fn stateless_ask(
        &mut self,
        id: &Value,
        tool: &str,
        params: &Map<String, Value>,
        sent: &Value,
        era: Era,
    ) -> Option<Asking> {
        let line = match (tool, sent.get("command")) {
            ("bash" | "monitor", Some(Value::String(line))) => line.clone(),
            _ => return Some(Asking::Cannot),
        };
        let caller = Caller::default().recipient(HEARD).session(HEARD);
        let retried = params.contains_key("inputResponses") || params.contains_key("requestState");
        let invalid = |why: String| RpcError::new(INVALID_PARAMS, format!("Invalid params: {why}"));
        if retried {
            let state = params.get("requestState").and_then(Value::as_str);
            let checked = match (&self.stamp, state) {
                (Some(stamp), Some(state)) => stamp
                    .redeem(state, caller.get_session(), sent)
                    .map_err(|why| invalid(format!("requestState is {why}"))),
                _ => Err(invalid(
                    "requestState must be the string this server gave".into(),
                )),
            };
            let vouched = match checked {
                Ok(v) => v,
                Err(e) => {
                    self.out.send(&jsonrpc::error(id, &e));
                    return None;
                }
            };
            let answer = params
                .get("inputResponses")
                .and_then(|r| r.get("approval"))
                .map_or(Answer::Denied, ask::answer_of);
            return match answer {
                Answer::Once | Answer::Always => {
                    if answer == Answer::Always {
                        self.server
                            .backend
                            .allow_always(&caller, &vouched.suggested_prefix);
                    }
                    Some(Asking::Approved)
                }
                Answer::Denied | Answer::TimedOut => {
                    let denied = crate::ToolResult::error(crate::texts::declined(&line, None));
                    let structured = protocol::structured(era, self.classic);
                    let body = calls::call_result(&denied, &[], era, structured);
                    self.out.send(&jsonrpc::result(id, body));
                    None
                }
            };
        }
        let Some(approval) = self.server.backend.asks(&line, &caller) else {
            // Nothing to ask (or a denial the call itself gives).
            return Some(Asking::Cannot);
        };
        let can_elicit = params
            .get("_meta")
            .and_then(|m| m.get(protocol::META_CAPABILITIES))
            .and_then(|c| c.get("elicitation"))
            .is_some_and(Value::is_object);
        let Some(stamp) = self.stamp.as_ref().filter(|_| can_elicit) else {
            return Some(Asking::Cannot);
        };
        let state = stamp.issue(
            caller.get_session(),
            sent,
            &approval.suggested_prefix,
            self.options.approval_wait(),
        );
        let mut result = protocol::stateless(json!({
            "inputRequests": {"approval": {"method": "elicitation/create", "params": ask::question(&approval)}},
            "requestState": state,
        }));
        result["resultType"] = json!("input_required");
        self.out.send(&jsonrpc::result(id, result));
        None
    }

    fn call(&mut self, id: Value, params: Map<String, Value>, era: Era) {
        let tool = match params.get("name") {
            Some(Value::String(name)) if tools::exists(&self.server.backend, name) => name.clone(),
            Some(Value::String(name)) => {
                let e = RpcError::new(INVALID_PARAMS, format!("Unknown tool: {name}"));
                return self.out.send(&jsonrpc::error(&id, &e));
            }
            _ => {
                let e = RpcError::new(
                    INVALID_PARAMS,
                    "Invalid params: name (the tool to call) must be a string",
                );
                return self.out.send(&jsonrpc::error(&id, &e));
            }
        };
        // Arguments that are no object are the request's fault (§9): the
        // tool never sees them. Absent ones are an empty object.
        let arguments = match params.get("arguments") {
            None => json!({}),
            Some(args @ Value::Object(_)) => args.clone(),
            Some(_) => {
                let e = RpcError::new(
                    INVALID_PARAMS,
                    "Invalid params: arguments must be an object",
                );
                return self.out.send(&jsonrpc::error(&id, &e));
            }
        };
        let sent = arguments.clone();
        let mut arguments = arguments;
        let task = self.task_mode(&tool, &params, era, &mut arguments);
        let key = jsonrpc::id_key(&id);
        // The policy's question, before anything is recorded: in the
        // stateless revision it is this call's answer.
        let asking = match era {
            Era::Classic if self.elicitation => Asking::Elicit,
            Era::Classic => Asking::Cannot,
            Era::Stateless { .. } => match self.stateless_ask(&id, &tool, &params, &sent, era) {
                Some(asking) => asking,
                None => return,
            },
        };
        if let Err(refused) = self.calls.begin(&key) {
            let e = match refused {
                Refused::Duplicate => RpcError::new(
                    INVALID_REQUEST,
                    format!("Invalid request: duplicate request id {id}: a call with this id is still running"),
                ),
                Refused::Full => RpcError::new(
                    INTERNAL_ERROR,
                    format!("Too many calls in flight (at most {MAX_CALLS_IN_FLIGHT}); wait for some to finish"),
                ),
            };
            return self.out.send(&jsonrpc::error(&id, &e));
        }
        let heard = match era {
            Era::Classic => self.classic_level.hears_info(),
            Era::Stateless { log } => log.is_some_and(Level::hears_info),
        };
        let progress = params
            .get("_meta")
            .and_then(|m| m.get("progressToken"))
            .filter(|t| !t.is_null())
            .cloned();
        let call = ToolCall {
            id: id.clone(),
            tool,
            arguments,
            // One client, one carried state, whichever queue its
            // notifications go to.
            caller: Caller::default()
                .recipient(if heard { HEARD } else { UNHEARD })
                .session(HEARD),
            era,
            structured: protocol::structured(era, self.classic),
            task,
            progress,
            asking,
            tasks_declared: era != Era::Classic && tasks::declared(&params),
        };
        let Err(call) = calls::spawn(&self.shared, call) else {
            return;
        };
        // No thread could start: stopping and reading still work.
        let reserve = self.reserve.as_ref();
        let call = match (call.tool.as_str(), reserve) {
            ("kill_shell" | "bash_output", Some(r)) => match r.send(*call) {
                Ok(()) => return,
                Err(back) => Box::new(back.0),
            },
            _ => call,
        };
        {
            drop(call);
            self.calls.forget(&key);
            let e = RpcError::new(
                INTERNAL_ERROR,
                "Internal error: cannot start a thread for the call",
            );
            self.out.send(&jsonrpc::error(&id, &e));
        }
    }
}
