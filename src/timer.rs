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

/// Whether the timer thread runs; the lock serialises [`start`], so there
/// is one thread however many callers race.
static STARTING: Mutex<bool> = parking_lot::const_mutex(false);

/// Starts the timer thread unless it runs already. Called by `build()`, so
/// a process that cannot start a thread gets an error there, not a panic
/// in the middle of a call.
pub(crate) fn start() -> std::io::Result<()> {
    let mut running = STARTING.lock();
    if *running {
        return Ok(());
    }
    // The heap exists before the thread that reads it.
    TIMER.get_or_init(|| Timer {
        heap: Mutex::new((BinaryHeap::new(), 0)),
        changed: Condvar::new(),
    });
    std::thread::Builder::new()
        .name("bashtools-timer".into())
        .spawn(run)?;
    *running = true;
    Ok(())
}

fn timer() -> Option<&'static Timer> {
    TIMER.get()
}

/// Runs `job` on the timer thread at `at` (at once if it has passed). Jobs
/// must be quick: they delay the ones after them. Every caller runs after
/// `build()` started the timer; should it be missing all the same, the
/// job is dropped rather than run early.
pub(crate) fn at(at: Instant, job: impl FnOnce() + Send + 'static) {
    if start().is_err() {
        return;
    }
    let Some(t) = timer() else {
        return;
    };
    let mut guard = t.heap.lock();
    guard.1 += 1;
    let seq = guard.1;
    // The thread sleeps until the earliest entry: only a new earliest one
    // changes that (a foreground call's timeout, 2 minutes out, does not,
    // and is not worth a wake-up on every call).
    let earliest = guard.0.peek().map_or(true, |Reverse(e)| at < e.at);
    guard.0.push(Reverse(Entry {
        at,
        seq,
        job: Box::new(job),
    }));
    drop(guard);
    if earliest {
        t.changed.notify_one();
    }
}

fn run() {
    let Some(t) = timer() else {
        return;
    };
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
