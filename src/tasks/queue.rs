//! Per-recipient notification queues.
//!
//! A queue exists from the first notification or the first `subscribe`,
//! whichever comes first, so nothing sent before anyone listens is lost.
//! Each queue is a bounded crossbeam channel: a recipient that never
//! subscribes must not make memory grow without end. Past the limit the
//! **oldest** notification is dropped (the newest say more about the present)
//! and the count of dropped ones is kept.

use std::collections::HashMap;

use crossbeam_channel::{Receiver, Sender, TrySendError};

use super::Notification;

/// The default number of notifications a queue holds for a recipient that
/// does not read them.
pub const DEFAULT_QUEUE_LIMIT: usize = 4096;

struct Queue {
    tx: Sender<Notification>,
    /// Kept to drop the oldest when full, and to hand out on `subscribe`.
    rx: Receiver<Notification>,
    dropped: u64,
}

pub(crate) struct Queues {
    limit: usize,
    by_recipient: HashMap<String, Queue>,
}

impl Queues {
    pub(crate) fn new(limit: usize) -> Queues {
        Queues {
            limit: limit.max(1),
            by_recipient: HashMap::new(),
        }
    }

    fn queue(&mut self, recipient: &str) -> &mut Queue {
        let limit = self.limit;
        self.by_recipient
            .entry(recipient.to_string())
            .or_insert_with(|| {
                let (tx, rx) = crossbeam_channel::bounded(limit);
                Queue { tx, rx, dropped: 0 }
            })
    }

    /// The receiving end for `recipient` (the same channel on every call).
    pub(crate) fn subscribe(&mut self, recipient: &str) -> Receiver<Notification> {
        self.queue(recipient).rx.clone()
    }

    /// Queues `n` for its recipient, dropping the oldest if the queue is full.
    pub(crate) fn send(&mut self, n: Notification) {
        let q = self.queue(&n.recipient);
        let mut n = n;
        loop {
            match q.tx.try_send(n) {
                Ok(()) => return,
                Err(TrySendError::Full(back)) => {
                    if q.rx.try_recv().is_ok() {
                        q.dropped += 1;
                    }
                    n = back;
                }
                // Both ends live in this struct: it cannot be disconnected.
                Err(TrySendError::Disconnected(_)) => return,
            }
        }
    }

    /// How many notifications were dropped for `recipient` because its queue was full.
    pub(crate) fn dropped(&self, recipient: &str) -> u64 {
        self.by_recipient.get(recipient).map_or(0, |q| q.dropped)
    }
}
