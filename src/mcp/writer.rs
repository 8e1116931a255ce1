//! The one way to stdout: whole lines under one lock.
//!
//! Responses come from call threads and notifications from the forwarder,
//! all at once. Each message is serialized first, then written and flushed
//! as one line while the lock is held, so two messages can never
//! interleave. `serde_json` escapes control characters inside strings, so a
//! serialized message never contains a newline of its own.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;
use serde_json::Value;

/// Where messages to the client go.
pub(crate) struct Writer {
    out: Mutex<Box<dyn Write + Send>>,
    /// Set once a write failed (the client closed its end): later messages
    /// are dropped instead of failing again.
    broken: AtomicBool,
}

impl Writer {
    pub(crate) fn new(out: impl Write + Send + 'static) -> Writer {
        Writer {
            out: Mutex::new(Box::new(out)),
            broken: AtomicBool::new(false),
        }
    }

    /// Writes `message` as one line. A failed write is not an error for the
    /// caller: the client has gone, and stdin's end will stop the server.
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
        let mut out = self.out.lock();
        if let Err(e) = out.write_all(&line).and_then(|()| out.flush()) {
            self.broken.store(true, Ordering::Relaxed);
            eprintln!("bashtools-mcp: cannot write to the client: {e}");
        }
    }
}
