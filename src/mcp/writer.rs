//! The one way to stdout: whole lines, in the order they were sent, written
//! by a thread of their own.
//!
//! Responses come from call threads, notifications from the inbox, all at
//! once. Each message is serialized by its sender and queued; one thread
//! writes and flushes the lines in queue order, so two can never
//! interleave, and the order in which messages were queued is the order the
//! client reads them.
//!
//! A client that stops reading blocks only that thread; no sender ever
//! waits for the pipe (senders may hold locks). Each call instead reserves
//! room for the largest answer it can give before it starts
//! ([`Writer::reserve`]), and waits while the bytes queued plus the room
//! reserved by calls still running would pass [`QUEUE_LIMIT`]:
//! backpressure on the calls rather than a queue that grows with every
//! answer nobody reads, or messages lost. A burst of calls sent together
//! is bounded too, since the answers a call holds before it queues them
//! are counted from its start. What may still pass the limit:
//! notifications (a monitor that prints while the client reads nothing),
//! and one call whose own reservation is larger than the limit (it runs
//! alone).
//! [`Writer::close`] gives up on the pipe at its deadline (contract §9:
//! shutdown never blocks on the client).
//! `serde_json` escapes control characters inside strings, so a serialized
//! message never contains a newline of its own.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender};
use parking_lot::{Condvar, Mutex};
use serde_json::Value;

/// The most bytes queued for the client before senders wait: 16 MiB.
pub(crate) const QUEUE_LIMIT: usize = 16 << 20;

/// Where messages to the client go.
pub(crate) struct Writer {
    /// `None` once closed.
    queue: Mutex<Option<Sender<Vec<u8>>>>,
    /// Disconnects when the writing thread ends (all written, or broken).
    done: Receiver<()>,
    /// Set once a write failed (the client closed its end).
    broken: Arc<AtomicBool>,
    /// The bytes queued and not yet written.
    queued: Arc<Queued>,
}

/// The bytes waiting for the client, and the wait for room.
#[derive(Default)]
struct Queued {
    /// Bytes queued and not yet written, plus the room reserved by
    /// running calls ([`Room`]).
    bytes: Mutex<usize>,
    room: Condvar,
    /// Set by [`Writer::stop_waiting`].
    stop: AtomicBool,
}

impl Writer {
    /// Starts the writing thread.
    pub(crate) fn start(out: impl Write + Send + 'static) -> std::io::Result<Writer> {
        let (tx, rx) = crossbeam_channel::unbounded::<Vec<u8>>();
        let (done_tx, done) = crossbeam_channel::bounded::<()>(0);
        let broken = Arc::new(AtomicBool::new(false));
        let queued = Arc::new(Queued::default());
        let (flag, counted) = (broken.clone(), queued.clone());
        std::thread::Builder::new()
            .name("bashtools-mcp-out".into())
            .spawn(move || {
                let _done = done_tx;
                write_all(out, &rx, &flag, &counted);
                // Broken or closed: nobody waits for room any more.
                flag.store(true, Ordering::Relaxed);
                drop(counted.bytes.lock());
                counted.room.notify_all();
            })?;
        Ok(Writer {
            queue: Mutex::new(Some(tx)),
            done,
            broken,
            queued,
        })
    }

    /// Queues `message` as one line. Never blocks on the client (it may be
    /// called with locks held). After [`close`](Self::close), or once the
    /// client has gone, it is dropped.
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
        *self.queued.bytes.lock() += line.len();
        if let Some(q) = self.queue.lock().as_ref() {
            let _ = q.send(line);
        }
    }

    /// Reserves room for an answer of up to `bound` bytes, waiting while
    /// the bytes queued and reserved leave less than that under
    /// [`QUEUE_LIMIT`] (when nothing is queued or reserved it never waits,
    /// so a bound above the limit runs alone). Each call runs it before it
    /// starts, holding no lock, and keeps the [`Room`] until its answer is
    /// queued: a client that sends requests and never reads the answers
    /// stops having them run, rather than growing the server with answers
    /// it does not take. Returns at once after
    /// [`stop_waiting`](Self::stop_waiting) or once the client is gone.
    pub(crate) fn reserve(&self, bound: usize) -> Room<'_> {
        let mut bytes = self.queued.bytes.lock();
        while *bytes > 0
            && bytes.saturating_add(bound) > QUEUE_LIMIT
            && !self.broken.load(Ordering::Relaxed)
            && !self.stopped()
        {
            self.queued.room.wait(&mut bytes);
        }
        *bytes += bound;
        Room {
            queued: &self.queued,
            bound,
        }
    }

    /// No call waits for room any more (the session is ending).
    pub(crate) fn stop_waiting(&self) {
        self.queued.stop.store(true, Ordering::Relaxed);
        drop(self.queued.bytes.lock());
        self.queued.room.notify_all();
    }

    fn stopped(&self) -> bool {
        self.queued.stop.load(Ordering::Relaxed)
    }

    /// Accepts no more messages and waits until every queued one is
    /// written, or `deadline`. Returns whether everything was written.
    pub(crate) fn close(&self, deadline: Instant) -> bool {
        self.stop_waiting();
        self.queue.lock().take();
        // The thread ends (and `done` disconnects) once the queue is empty.
        matches!(
            self.done.recv_deadline(deadline),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected)
        )
    }
}

/// Room reserved for one call's answer; given back when dropped (after the
/// answer, if any, was queued and so counts on its own).
pub(crate) struct Room<'a> {
    queued: &'a Queued,
    bound: usize,
}

impl Drop for Room<'_> {
    fn drop(&mut self) {
        *self.queued.bytes.lock() -= self.bound;
        self.queued.room.notify_all();
    }
}

fn write_all(mut out: impl Write, rx: &Receiver<Vec<u8>>, broken: &AtomicBool, queued: &Queued) {
    while let Ok(line) = rx.recv() {
        let mut written = out.write_all(&line);
        *queued.bytes.lock() -= line.len();
        queued.room.notify_all();
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
