//! `Pending<T>`: a value that arrives later, to wait for blocking or to await
//! as a `std::future::Future` (contract §2).
//!
//! Both ways are woken from the same place: whoever completes the value
//! notifies the condvar (for `wait`) and wakes the stored `Waker` (for
//! `poll`). Nothing polls on a timer, and no executor is assumed.
//!
//! The value is produced by a closure run by the *taker*, not the completer:
//! a completion signalled from the reaper thread must stay quick, while
//! producing a tool result may mean reading a large output file.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

type Thunk<T> = Box<dyn FnOnce() -> T + Send>;

enum Slot<T> {
    /// Not ready; the waker of the last `poll`, if any.
    Waiting(Option<Waker>),
    /// Ready: the closure that produces the value.
    Ready(Thunk<T>),
    /// The value has been handed out.
    Taken,
}

struct Shared<T> {
    slot: Mutex<Slot<T>>,
    ready: Condvar,
    /// Set when the `Pending` is dropped: nobody will take the value.
    abandoned: AtomicBool,
    /// Whether a value nobody will take is still made (its closure run
    /// and the value dropped): a foreground command's result is also its
    /// settling (its record and output file removed), which must happen
    /// whether or not anyone waits.
    make_if_dropped: AtomicBool,
}

/// A result that is not there yet.
///
/// ```
/// use bashtools::Pending;
/// let p = Pending::ready(42);
/// assert_eq!(p.wait(), 42);
/// ```
pub struct Pending<T> {
    shared: Arc<Shared<T>>,
    command: Option<CommandHandle>,
}

/// The command a [`Pending`] waits for (from [`Pending::command`]): stop it,
/// or find where its output goes while it runs. `Clone + Send + Sync`: hand
/// it to whichever thread learns of a cancellation.
#[derive(Clone)]
pub struct CommandHandle {
    cancel: Arc<dyn Fn() + Send + Sync>,
    output: Arc<dyn Fn() -> Option<PathBuf> + Send + Sync>,
}

impl CommandHandle {
    pub(crate) fn new(
        cancel: impl Fn() + Send + Sync + 'static,
        output: impl Fn() -> Option<PathBuf> + Send + Sync + 'static,
    ) -> CommandHandle {
        CommandHandle {
            cancel: Arc::new(cancel),
            output: Arc::new(output),
        }
    }

    /// Stops the command and everything it started (TERM, `kill_grace`,
    /// KILL), after which the `Pending` completes with the command's
    /// result (`Exit code 143`…). Blocks until it is stopped; calling it
    /// again, or after the command ended, does nothing.
    pub fn cancel(&self) {
        (self.cancel)()
    }

    /// The file the command's output is being written to (renamed after
    /// its ID when it moves to the background); `None` once it has ended
    /// and its result was taken.
    pub fn output_file(&self) -> Option<PathBuf> {
        (self.output)()
    }
}

impl std::fmt::Debug for CommandHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandHandle")
            .field("output_file", &self.output_file())
            .finish_non_exhaustive()
    }
}

/// The other end of a [`Pending`]: completes it once; later completions are ignored.
pub(crate) struct Completer<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for Completer<T> {
    fn clone(&self) -> Self {
        Completer {
            shared: self.shared.clone(),
        }
    }
}

impl<T: Send + 'static> Pending<T> {
    /// A `Pending` that is ready at once.
    pub fn ready(value: T) -> Pending<T> {
        let (pending, completer) = Pending::new();
        completer.complete_with(move || value);
        pending
    }

    pub(crate) fn new() -> (Pending<T>, Completer<T>) {
        let shared = Arc::new(Shared {
            slot: Mutex::new(Slot::Waiting(None)),
            ready: Condvar::new(),
            abandoned: AtomicBool::new(false),
            make_if_dropped: AtomicBool::new(false),
        });
        (
            Pending {
                shared: shared.clone(),
                command: None,
            },
            Completer { shared },
        )
    }
}

impl<T> Pending<T> {
    /// Makes the value even if this `Pending` is dropped before it is
    /// taken (see `Shared::make_if_dropped`).
    pub(crate) fn make_if_dropped(self) -> Pending<T> {
        self.shared.make_if_dropped.store(true, Ordering::Release);
        self
    }

    /// Names the command this pending waits for.
    pub(crate) fn with_command(mut self, command: CommandHandle) -> Pending<T> {
        self.command = Some(command);
        self
    }

    /// The command this pending waits for, when it waits for one (a
    /// foreground `bash`): to stop it, or to read its output as it comes.
    /// `None` when the answer was known at once.
    pub fn command(&self) -> Option<CommandHandle> {
        self.command.clone()
    }

    /// Blocks until the value is there and returns it.
    ///
    /// # Panics
    /// When the value was already taken (by [`try_take`](Self::try_take) or
    /// [`wait_timeout`](Self::wait_timeout)): there is nothing left to wait for.
    pub fn wait(mut self) -> T {
        // Without a deadline the wait only ends with the value, or with
        // `None` when it was taken before.
        self.wait_deadline(None)
            .expect("Pending waited on after its value was taken")
    }

    /// Blocks at most `timeout`; `None` if the value is not there by then
    /// (the `Pending` can be waited on again).
    pub fn wait_timeout(&mut self, timeout: Duration) -> Option<T> {
        // A timeout too long to be a point in time is no deadline.
        self.wait_deadline(Instant::now().checked_add(timeout))
    }

    /// The value if it is there, without blocking.
    pub fn try_take(&mut self) -> Option<T> {
        let thunk = {
            let mut slot = self.shared.slot.lock();
            take_ready(&mut slot)?
        };
        Some(thunk())
    }

    /// Whether the value is there (and not taken yet).
    pub fn is_ready(&self) -> bool {
        matches!(*self.shared.slot.lock(), Slot::Ready(_))
    }

    fn wait_deadline(&mut self, deadline: Option<Instant>) -> Option<T> {
        let thunk = {
            let mut slot = self.shared.slot.lock();
            loop {
                if let Some(t) = take_ready(&mut slot) {
                    break t;
                }
                if matches!(*slot, Slot::Taken) {
                    return None;
                }
                match deadline {
                    Some(d) => {
                        if self.shared.ready.wait_until(&mut slot, d).timed_out() {
                            return take_ready(&mut slot).map(|t| {
                                drop(slot);
                                t()
                            });
                        }
                    }
                    None => self.shared.ready.wait(&mut slot),
                }
            }
        };
        Some(thunk())
    }
}

fn take_ready<T>(slot: &mut Slot<T>) -> Option<Thunk<T>> {
    if !matches!(slot, Slot::Ready(_)) {
        return None;
    }
    match std::mem::replace(slot, Slot::Taken) {
        Slot::Ready(t) => Some(t),
        _ => None,
    }
}

impl<T> Drop for Pending<T> {
    fn drop(&mut self) {
        // Under the slot's lock, so a completion either sees the flag or
        // has stored its value for the check below.
        let unread = {
            let mut slot = self.shared.slot.lock();
            self.shared.abandoned.store(true, Ordering::Release);
            if self.shared.make_if_dropped.load(Ordering::Acquire) {
                take_ready(&mut slot)
            } else {
                None
            }
        };
        if let Some(make) = unread {
            drop(make());
        }
    }
}

impl<T> std::fmt::Debug for Pending<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match *self.shared.slot.lock() {
            Slot::Waiting(_) => "waiting",
            Slot::Ready(_) => "ready",
            Slot::Taken => "taken",
        };
        f.debug_struct("Pending").field("state", &state).finish()
    }
}

impl<T> Future for Pending<T> {
    type Output = T;

    /// # Panics
    /// When polled again after it returned `Ready`, as futures may.
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let thunk = {
            let mut slot = self.shared.slot.lock();
            match &mut *slot {
                Slot::Waiting(waker) => {
                    *waker = Some(cx.waker().clone());
                    return Poll::Pending;
                }
                Slot::Taken => panic!("Pending polled after its value was taken"),
                Slot::Ready(_) => take_ready(&mut slot),
            }
        };
        match thunk {
            Some(t) => Poll::Ready(t()),
            None => Poll::Pending,
        }
    }
}

impl<T> Completer<T> {
    /// Makes the value ready: `make` runs when it is taken. Returns false if
    /// it was completed already (the first completion wins).
    /// A `Pending` dropped before (see [`Pending::make_if_dropped`]) has
    /// the value made here and dropped.
    pub(crate) fn complete_with(&self, make: impl FnOnce() -> T + Send + 'static) -> bool {
        let waker = {
            let mut slot = self.shared.slot.lock();
            match &mut *slot {
                Slot::Waiting(_)
                    if self.shared.abandoned.load(Ordering::Acquire)
                        && self.shared.make_if_dropped.load(Ordering::Acquire) =>
                {
                    *slot = Slot::Taken;
                    drop(slot);
                    drop(make());
                    return true;
                }
                Slot::Waiting(w) => {
                    let waker = w.take();
                    *slot = Slot::Ready(Box::new(make));
                    waker
                }
                _ => return false,
            }
        };
        self.shared.ready.notify_all();
        if let Some(w) = waker {
            w.wake();
        }
        true
    }

    /// True once completed, or when the `Pending` was dropped: nobody waits.
    /// Whether a value was given (by this completer or a clone): unlike
    /// [`is_done`](Self::is_done), a dropped `Pending` does not count.
    pub(crate) fn is_completed(&self) -> bool {
        !matches!(*self.shared.slot.lock(), Slot::Waiting(_))
    }

    /// Whether a value was given, or nobody waits for one any more.
    pub(crate) fn is_done(&self) -> bool {
        self.shared.abandoned.load(Ordering::Acquire)
            || !matches!(*self.shared.slot.lock(), Slot::Waiting(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_completion_wins() {
        let (mut p, c) = Pending::<u32>::new();
        assert!(p.try_take().is_none());
        assert!(c.complete_with(|| 1));
        assert!(!c.complete_with(|| 2));
        assert!(c.is_done());
        assert_eq!(p.wait_timeout(Duration::ZERO), Some(1));
    }

    #[test]
    fn a_dropped_pending_is_done_for_its_completer() {
        let (p, c) = Pending::<u32>::new();
        assert!(!c.is_done());
        drop(p);
        assert!(c.is_done());
    }

    #[test]
    fn a_value_that_must_be_made_is_made_when_its_pending_is_dropped() {
        use std::sync::atomic::AtomicUsize;
        let made = Arc::new(AtomicUsize::new(0));
        // Ready first, dropped after.
        let (p, c) = Pending::<u32>::new();
        let p = p.make_if_dropped();
        let m = made.clone();
        c.complete_with(move || m.fetch_add(1, Ordering::SeqCst) as u32);
        assert_eq!(
            made.load(Ordering::SeqCst),
            0,
            "made by the taker, not the completer"
        );
        drop(p);
        assert_eq!(made.load(Ordering::SeqCst), 1);
        // Dropped first, ready after.
        let (p, c) = Pending::<u32>::new();
        drop(p.make_if_dropped());
        let m = made.clone();
        assert!(c.complete_with(move || m.fetch_add(1, Ordering::SeqCst) as u32));
        assert_eq!(made.load(Ordering::SeqCst), 2);
        // Without the flag a dropped value is not made.
        let (p, c) = Pending::<u32>::new();
        let m = made.clone();
        c.complete_with(move || m.fetch_add(1, Ordering::SeqCst) as u32);
        drop(p);
        assert_eq!(made.load(Ordering::SeqCst), 2);
    }

    #[test]
    #[should_panic(expected = "after its value was taken")]
    fn waiting_after_the_value_was_taken_panics_instead_of_hanging() {
        let mut p = Pending::ready(7);
        assert_eq!(p.try_take(), Some(7));
        p.wait();
    }
}
