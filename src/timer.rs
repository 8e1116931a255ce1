//! One timer thread for every deadline that must fire without a caller's
//! thread waiting on it (a `Pending` with a timeout).
//!
//! A binary heap of deadlines under a mutex; the thread sleeps on a condvar
//! until the earliest one, and is woken early when an earlier one is added.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::OnceLock;
use std::time::Instant;

use parking_lot::{Condvar, Mutex};

type Job = Box<dyn FnOnce() + Send>;

struct Entry {
    at: Instant,
    seq: u64,
    job: Job,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

struct Timer {
    heap: Mutex<(BinaryHeap<Reverse<Entry>>, u64)>,
    changed: Condvar,
}

static TIMER: OnceLock<Timer> = OnceLock::new();

fn timer() -> &'static Timer {
    TIMER.get_or_init(|| {
        std::thread::Builder::new()
            .name("bashtools-timer".into())
            .spawn(run)
            .expect("cannot start the timer thread");
        Timer {
            heap: Mutex::new((BinaryHeap::new(), 0)),
            changed: Condvar::new(),
        }
    })
}

/// Runs `job` on the timer thread at `at` (at once if it has passed). Jobs
/// must be quick: they delay the ones after them.
pub(crate) fn at(at: Instant, job: impl FnOnce() + Send + 'static) {
    let t = timer();
    let mut guard = t.heap.lock();
    guard.1 += 1;
    let seq = guard.1;
    guard.0.push(Reverse(Entry {
        at,
        seq,
        job: Box::new(job),
    }));
    drop(guard);
    t.changed.notify_one();
}

fn run() {
    let t = timer();
    let mut guard = t.heap.lock();
    loop {
        let next = guard.0.peek().map(|Reverse(e)| e.at);
        match next {
            None => t.changed.wait(&mut guard),
            Some(at) if at > Instant::now() => {
                t.changed.wait_until(&mut guard, at);
            }
            Some(_) => {
                if let Some(Reverse(entry)) = guard.0.pop() {
                    drop(guard);
                    (entry.job)();
                    guard = t.heap.lock();
                }
            }
        }
    }
}
