//! Task notifications and monitor events to the client, as
//! `notifications/message` (level `info`, logger `bashtools`, data
//! `{task_id, status?, text}`).
//!
//! The server's calls name one of two recipients: [`HEARD`] when the client
//! wants log messages for that call, [`UNHEARD`] when it does not (a
//! stateless request without a log level, or a classic client that set a
//! level above `info`). One thread forwards the first and drops the
//! second; one thread, reading one queue that the registry fills in order,
//! keeps the notifications in the order they happened.

use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{select, Receiver, Sender};
use serde_json::{json, Value};

use super::jsonrpc;
use super::writer::Writer;
use crate::tasks::{Notification, Tasks};

/// The recipient of the calls whose notifications go to the client.
pub const HEARD: &str = "mcp";

/// The recipient of the calls whose notifications the client declined.
pub const UNHEARD: &str = "mcp-unheard";

/// The forwarding thread of one session.
pub(crate) struct Forwarder {
    stop: Sender<()>,
    thread: Option<JoinHandle<()>>,
}

impl Forwarder {
    /// Starts forwarding `tasks`' notifications for [`HEARD`] to `out`.
    pub(crate) fn start(tasks: &Tasks, out: Arc<Writer>) -> std::io::Result<Forwarder> {
        let heard = tasks.subscribe(HEARD);
        let unheard = tasks.subscribe(UNHEARD);
        let (stop, stopped) = crossbeam_channel::bounded(1);
        let thread = std::thread::Builder::new()
            .name("bashtools-mcp-notify".into())
            .spawn(move || forward(&heard, &unheard, &stopped, &out))?;
        Ok(Forwarder {
            stop,
            thread: Some(thread),
        })
    }

    /// Sends what is queued, then stops the thread.
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

fn forward(
    heard: &Receiver<Notification>,
    unheard: &Receiver<Notification>,
    stopped: &Receiver<()>,
    out: &Writer,
) {
    loop {
        select! {
            recv(heard) -> n => match n {
                Ok(n) => out.send(&message(&n)),
                Err(_) => return,
            },
            recv(unheard) -> _ => {}
            recv(stopped) -> _ => break,
        }
    }
    // What ended during shutdown (shells stopped by it) still goes out.
    while let Ok(n) = heard.try_recv() {
        out.send(&message(&n));
    }
}

/// The `notifications/message` of one notification.
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
