//! The one way to stdout: whole lines, in the order they were sent, written
//! by a thread of their own.
//!
//! Responses come from call threads, notifications from the inbox, all at
//! once. Each message is serialized by its sender and queued; one thread
//! writes and flushes the lines in queue order, so two can never
//! interleave, and the order in which messages were queued is the order the
//! client reads them. A client that stops reading blocks only that thread:
//! no sender waits for the pipe, and [`Writer::close`] gives up on it at its
//! deadline (contract §9: shutdown never blocks on the client).
//! `serde_json` escapes control characters inside strings, so a serialized
//! message never contains a newline of its own.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender};
use parking_lot::Mutex;
use serde_json::Value;

/// Where messages to the client go.
pub(crate) struct Writer {
    /// `None` once closed.
    queue: Mutex<Option<Sender<Vec<u8>>>>,
    /// Disconnects when the writing thread ends (all written, or broken).
    done: Receiver<()>,
    /// Set once a write failed (the client closed its end).
    broken: Arc<AtomicBool>,
}

impl Writer {
    /// Starts the writing thread.
    pub(crate) fn start(out: impl Write + Send + 'static) -> std::io::Result<Writer> {
        let (tx, rx) = crossbeam_channel::unbounded::<Vec<u8>>();
        let (done_tx, done) = crossbeam_channel::bounded::<()>(0);
        let broken = Arc::new(AtomicBool::new(false));
        let flag = broken.clone();
        std::thread::Builder::new()
            .name("bashtools-mcp-out".into())
            .spawn(move || {
                let _done = done_tx;
                write_all(out, &rx, &flag);
            })?;
        Ok(Writer {
            queue: Mutex::new(Some(tx)),
            done,
            broken,
        })
    }

    /// Queues `message` as one line. Never blocks on the client. After
    /// [`close`](Self::close), or once the client has gone, it is dropped.
    pub(crate) fn send(&self, message: &Value) {
        if self.broken.load(Ordering::Relaxed) {
            return;
        }
        let mut line = match serde_json::to_vec(message) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("bashtools-mcp: cannot serialize a message: {e}");
                return;
            }
        };
        line.push(b'\n');
        if let Some(q) = self.queue.lock().as_ref() {
            let _ = q.send(line);
        }
    }

    /// Accepts no more messages and waits until every queued one is
    /// written, or `deadline`. Returns whether everything was written.
    pub(crate) fn close(&self, deadline: Instant) -> bool {
        self.queue.lock().take();
        // The thread ends (and `done` disconnects) once the queue is empty.
        matches!(
            self.done.recv_deadline(deadline),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected)
        )
    }
}

fn write_all(mut out: impl Write, rx: &Receiver<Vec<u8>>, broken: &AtomicBool) {
    while let Ok(line) = rx.recv() {
        let mut written = out.write_all(&line);
        // Flush when nothing else is queued: a burst costs one flush.
        if written.is_ok() && rx.is_empty() {
            written = out.flush();
        }
        if let Err(e) = written {
            broken.store(true, Ordering::Relaxed);
            eprintln!("bashtools-mcp: cannot write to the client: {e}");
            return;
        }
    }
    let _ = out.flush();
}
