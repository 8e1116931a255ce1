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

/// Whether an entry's job still has anything to do.
type Live = Box<dyn Fn() -> bool + Send>;

struct Entry {
    at: Instant,
    seq: u64,
    job: Job,
    /// `None`: always. An entry that is no longer live is dropped unrun
    /// when the heap is swept (see [`at_while`]).
    live: Option<Live>,
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
    heap: Mutex<Heap>,
    changed: Condvar,
}

#[derive(Default)]
struct Heap {
    entries: BinaryHeap<Reverse<Entry>>,
    seq: u64,
    /// How many entries the last sweep left: the next sweep waits until
    /// there are twice as many, so sweeping costs O(1) per entry.
    after_sweep: usize,
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
        heap: Mutex::new(Heap::default()),
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
    push(at, Box::new(job), None);
}

/// As [`at`], for a job that may have nothing left to do long before `at`
/// (a foreground call's timeout, two minutes out, once its command has
/// ended): while `live` says false the entry may be dropped unrun, so what
/// the job holds is not kept until `at` (every call would otherwise keep a
/// few hundred bytes for its whole timeout).
pub(crate) fn at_while(
    at: Instant,
    live: impl Fn() -> bool + Send + 'static,
    job: impl FnOnce() + Send + 'static,
) {
    push(at, Box::new(job), Some(Box::new(live)));
}

fn push(at: Instant, job: Job, live: Option<Live>) {
    if start().is_err() {
        return;
    }
    let Some(t) = timer() else {
        return;
    };
    let mut heap = t.heap.lock();
    heap.seq += 1;
    let seq = heap.seq;
    // The thread sleeps until the earliest entry: only a new earliest one
    // changes that (a foreground call's timeout, 2 minutes out, does not,
    // and is not worth a wake-up on every call).
    let earliest = heap.entries.peek().map_or(true, |Reverse(e)| at < e.at);
    heap.entries.push(Reverse(Entry { at, seq, job, live }));
    if heap.entries.len() > 64.max(2 * heap.after_sweep) {
        heap.entries
            .retain(|Reverse(e)| e.live.as_ref().map_or(true, |live| live()));
        heap.after_sweep = heap.entries.len();
    }
    drop(heap);
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
        let next = guard.entries.peek().map(|Reverse(e)| e.at);
        match next {
            None => t.changed.wait(&mut guard),
            Some(at) if at > Instant::now() => {
                t.changed.wait_until(&mut guard, at);
            }
            Some(_) => {
                if let Some(Reverse(entry)) = guard.entries.pop() {
                    drop(guard);
                    (entry.job)();
                    guard = t.heap.lock();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    /// Entries whose job has nothing left to do are dropped long before
    /// their time, and with them what they hold; live ones still run.
    #[test]
    fn entries_no_longer_live_are_swept_before_their_time() {
        let held = Arc::new(());
        let later = Instant::now() + Duration::from_secs(3600);
        for _ in 0..1000 {
            let h = held.clone();
            at_while(later, || false, move || drop(h));
        }
        // Each push may sweep: far fewer than the 1000 are still held.
        assert!(
            Arc::strong_count(&held) < 200,
            "{} entries still held",
            Arc::strong_count(&held)
        );
        let (tx, rx) = crossbeam_channel::bounded(1);
        let ran = Arc::new(AtomicBool::new(false));
        let r = ran.clone();
        at_while(
            Instant::now(),
            || true,
            move || {
                r.store(true, Ordering::SeqCst);
                let _ = tx.send(());
            },
        );
        rx.recv_timeout(Duration::from_secs(30))
            .expect("a live entry runs at its time");
        assert!(ran.load(Ordering::SeqCst));
    }
}
