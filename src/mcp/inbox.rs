//! One session's notifications: where each goes, and when.
//!
//! The server's calls name one of two recipients: [`HEARD`] when the client
//! wants log messages for that call, [`UNHEARD`] when it does not (a
//! stateless request without a log level, or a classic client that set a
//! level above `info`). Both queues are read here, by whoever gets there
//! first: the forwarding thread (woken when a queue has something) or a
//! call about to answer. Each notification is *released* once:
//! - as `notifications/message`, at once, when logs are delivered and its
//!   recipient is [`HEARD`];
//! - into the list of undelivered ones when results are delivered: the next
//!   `tools/call` response takes them all, in order, as more text content.
//!
//! Two rules keep the order a client can rely on:
//! - **Never before its ID.** A task can end before the response that
//!   announced its ID has been written (`run_in_background` of `true`). A
//!   notification read while a `bash` or `monitor` call is in flight is
//!   held until its ID has been announced, or until every such call in
//!   flight when it was read has answered (so none is held for ever).
//! - **Nothing after the end.** Once stdin has ended ([`Inbox::close`]) no
//!   log and no progress message is written; only responses.
//!
//! Everything is decided under one lock, and messages are queued on the
//! [`Writer`] (which never blocks) while it is held: the order of decisions
//! is the order on the wire.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use crossbeam_channel::{Receiver, Select, Sender};
use parking_lot::{Condvar, Mutex};
use serde_json::{json, Value};

use super::backend::Backend;
use super::jsonrpc;
use super::options::Deliver;
use super::writer::Writer;
use crate::Notification;

/// The recipient of the calls whose notifications go to the client as log
/// messages too.
pub const HEARD: &str = "mcp";

/// The recipient of the calls whose client declined log messages.
pub const UNHEARD: &str = "mcp-unheard";

/// A call in flight, as the inbox knows it.
pub(crate) type Seq = u64;

struct Held {
    n: Notification,
    /// The `bash`/`monitor` calls in flight when it was read.
    behind: Vec<Seq>,
}

#[derive(Default)]
struct State {
    held: Vec<Held>,
    /// Released, not yet carried by a result.
    undelivered: VecDeque<Notification>,
    announced: HashSet<String>,
    /// Every call in flight; `true` for those that may announce an ID.
    calls: std::collections::HashMap<Seq, bool>,
    next_seq: Seq,
    /// Counts releases, so a waiter can tell that one happened.
    released: u64,
    closed: bool,
    /// The client opened with the classic handshake: log messages may go
    /// out at any time. Otherwise (2026-07-28) a message belongs to a
    /// request in flight that asked for them: one goes out only while such
    /// a request runs (`heard`), never after its response.
    classic: bool,
    /// Stateless calls in flight whose `_meta` asked for log messages.
    heard: HashSet<Seq>,
}

/// The notifications of one session.
pub(crate) struct Inbox {
    queues: Vec<Receiver<Notification>>,
    deliver: Deliver,
    out: Arc<Writer>,
    state: Mutex<State>,
    /// Notified on each release and at close.
    changed: Condvar,
    /// Each notification also goes out as a Claude Code channel event.
    channel: AtomicBool,
}

impl Inbox {
    pub(crate) fn new(backend: &Backend, deliver: Deliver, out: Arc<Writer>) -> Inbox {
        let queues = [HEARD, UNHEARD]
            .iter()
            .filter_map(|r| backend.subscribe(r))
            .collect();
        Inbox {
            queues,
            deliver,
            out,
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            channel: AtomicBool::new(false),
        }
    }

    /// From now on, each notification also goes out as a channel event
    /// (`notifications/claude/channel`): the client is Claude Code, which
    /// hands it to an idle agent as a new turn when its channels are on.
    pub(crate) fn open_channel(&self) {
        self.channel.store(true, Ordering::Relaxed);
    }

    /// Whether a notification reaches the model by a path that is on: in
    /// results always, as a log only for a recipient that hears them (and
    /// even then only in clients that show logs, so it is not promised).
    pub(crate) fn promises(&self) -> bool {
        self.deliver.results()
    }

    /// The client opened with the classic handshake.
    pub(crate) fn classic(&self) {
        self.state.lock().classic = true;
    }

    /// Records a call starting; `announces` for `bash` and `monitor`, whose
    /// answers name new task IDs; `heard` for a stateless request that asked
    /// for log messages.
    pub(crate) fn begin(&self, announces: bool, heard: bool) -> Seq {
        let mut st = self.state.lock();
        st.next_seq += 1;
        let seq = st.next_seq;
        st.calls.insert(seq, announces);
        if heard {
            st.heard.insert(seq);
        }
        seq
    }

    /// Ends call `seq`: its answer names the task IDs `announced`. With
    /// `respond`, the response is made from the undelivered notifications
    /// (when results carry them) and queued, all under the lock. A cancelled
    /// call passes `None`: its ID are announced all the same, and the
    /// notifications wait for the next result.
    pub(crate) fn finish(
        &self,
        seq: Seq,
        announced: Vec<String>,
        respond: Option<&mut dyn FnMut(Vec<Notification>) -> Value>,
        carries: bool,
    ) {
        let mut st = self.state.lock();
        st.calls.remove(&seq);
        let named: HashSet<String> = announced.iter().cloned().collect();
        st.announced.extend(announced);
        for h in &mut st.held {
            h.behind.retain(|s| *s != seq);
        }
        let mut logs = Vec::new();
        // Released while this call is still in flight: a stateless call
        // that asked for log messages may still carry them.
        self.release_held(&mut st, &mut logs);
        self.pull_into(&mut st, &mut logs);
        st.heard.remove(&seq);
        if !st.classic {
            // 2026-07-28: a message belongs to a request in flight, so it
            // goes before the response; one about a task this response
            // names cannot precede it, and is left to the results.
            let (before, _named): (Vec<Value>, Vec<Value>) = logs.into_iter().partition(|m| {
                m["params"]["data"]["task_id"]
                    .as_str()
                    .map_or(true, |t| !named.contains(t))
            });
            for m in &before {
                self.out.send(m);
            }
            logs = Vec::new();
        }
        if let Some(respond) = respond {
            // A response that cannot carry them (a task) leaves them for
            // the next result.
            let carried = if self.deliver.results() && carries {
                st.undelivered.drain(..).collect()
            } else {
                Vec::new()
            };
            self.out.send(&respond(carried));
        }
        // After the response: it may be the one that named their IDs.
        for m in &logs {
            self.out.send(m);
        }
    }

    /// Queues `message` (a progress notification) if call `seq` has not
    /// answered yet and stdin has not ended; whether it was queued.
    pub(crate) fn send_for(&self, seq: Seq, message: &Value) -> bool {
        let st = self.state.lock();
        let live = !st.closed && st.calls.contains_key(&seq);
        if live {
            self.out.send(message);
        }
        live
    }

    /// Stdin has ended: no more log or progress messages.
    pub(crate) fn close(&self) {
        self.state.lock().closed = true;
        self.changed.notify_all();
    }

    /// How many notifications have been released so far, and how many of
    /// them no result has carried yet.
    pub(crate) fn released(&self) -> (u64, usize) {
        let mut st = self.state.lock();
        self.pull(&mut st);
        (st.released, st.undelivered.len())
    }

    /// Wakes the calls waiting in [`wait_release_or`](Self::wait_release_or)
    /// (a `Pending` of theirs completed).
    pub(crate) fn poke(&self) {
        let _st = self.state.lock();
        self.changed.notify_all();
    }

    /// Waits until more than `seen` notifications have been released,
    /// `done()` holds, or `deadline`. Returns whether stdin has ended.
    pub(crate) fn wait_release_or(
        &self,
        seen: u64,
        deadline: Instant,
        done: impl Fn() -> bool,
    ) -> bool {
        let mut st = self.state.lock();
        loop {
            self.pull(&mut st);
            if st.released > seen || st.closed || done() {
                return st.closed;
            }
            if self.changed.wait_until(&mut st, deadline).timed_out() {
                return st.closed;
            }
        }
    }

    /// Reads what the registry queued for this session.
    fn pull(&self, st: &mut State) {
        let mut logs = Vec::new();
        self.pull_into(st, &mut logs);
        for m in &logs {
            self.out.send(m);
        }
    }

    /// [`pull`](Self::pull), leaving the log messages to send in `logs`.
    fn pull_into(&self, st: &mut State, logs: &mut Vec<Value>) {
        for q in &self.queues {
            while let Ok(n) = q.try_recv() {
                let behind: Vec<Seq> = st
                    .calls
                    .iter()
                    .filter(|(_, announces)| **announces)
                    .map(|(s, _)| *s)
                    .collect();
                if behind.is_empty() || st.announced.contains(&n.task_id) {
                    self.release(st, n, logs);
                } else {
                    st.held.push(Held { n, behind });
                }
            }
        }
    }

    fn release_held(&self, st: &mut State, logs: &mut Vec<Value>) {
        let held = std::mem::take(&mut st.held);
        for h in held {
            if h.behind.is_empty() || st.announced.contains(&h.n.task_id) {
                self.release(st, h.n, logs);
            } else {
                st.held.push(h);
            }
        }
    }

    /// Releases `n`: into the undelivered list, and its log message (if
    /// one is due) into `logs`, for the caller to send.
    fn release(&self, st: &mut State, n: Notification, logs: &mut Vec<Value>) {
        let in_flight = st.classic || !st.heard.is_empty();
        if self.deliver.logs() && n.recipient == HEARD && !st.closed && in_flight {
            logs.push(message(&n));
        }
        if self.channel.load(Ordering::Relaxed) && !st.closed {
            logs.push(channel_event(&n));
        }
        if self.deliver.results() {
            st.undelivered.push_back(n);
        }
        st.released += 1;
        self.changed.notify_all();
    }
}

/// The thread that reads the queues while no call does, so log messages
/// go out when they happen.
pub(crate) struct Forwarder {
    stop: Sender<()>,
    thread: Option<JoinHandle<()>>,
}

impl Forwarder {
    pub(crate) fn start(inbox: Arc<Inbox>) -> std::io::Result<Forwarder> {
        let (stop, stopped) = crossbeam_channel::bounded(1);
        let thread = std::thread::Builder::new()
            .name("bashtools-mcp-notify".into())
            .spawn(move || forward(&inbox, &stopped))?;
        Ok(Forwarder {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops the thread (it never waits for the client, so this is quick).
    pub(crate) fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        let _ = self.stop.try_send(());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        self.halt();
    }
}

fn forward(inbox: &Inbox, stopped: &Receiver<()>) {
    loop {
        // Wait for something to read without taking it: the read happens
        // under the inbox's lock, so the release order is the queue order.
        let mut sel = Select::new();
        for q in &inbox.queues {
            sel.recv(q);
        }
        let stop = sel.recv(stopped);
        if sel.ready() == stop {
            return;
        }
        let mut st = inbox.state.lock();
        inbox.pull(&mut st);
    }
}

/// The Claude Code channel event of one notification: its text as the
/// content, its task and status as meta (keys that are identifiers, as
/// Claude Code requires).
pub(crate) fn channel_event(n: &Notification) -> Value {
    let mut meta = json!({"task_id": n.task_id});
    if let Some(status) = n.status {
        meta["status"] = json!(status.as_str());
    }
    jsonrpc::notification(
        "notifications/claude/channel",
        json!({"content": n.text, "meta": meta}),
    )
}

/// The `notifications/message` of one notification (level `info`, logger
/// `bashtools`, data `{task_id, status?, text}`).
pub(crate) fn message(n: &Notification) -> Value {
    let mut data = json!({"task_id": n.task_id, "text": n.text});
    if let Some(status) = n.status {
        data["status"] = json!(status.as_str());
    }
    jsonrpc::notification(
        "notifications/message",
        json!({"level": "info", "logger": "bashtools", "data": data}),
    )
}
