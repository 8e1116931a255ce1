//! The output cap (`max_output_bytes`, contract §8): a shell whose output
//! file grows past the cap is stopped, so a runaway command cannot fill the
//! disk.
//!
//! One thread per process watches every output file with `inotify(7)`
//! (`IN_MODIFY`) and looks at a file's size when it changes. The kernel
//! merges repeated events of one file while they are unread, and the thread
//! reads at most [`THROTTLE`] often, so a command writing at full speed costs
//! it a few system calls per interval, not one per write.
//!
//! The cap is never silently off: where inotify cannot be had (the user's
//! inotify instances or watches are used up) or no descriptor is free to
//! open the file, the file is polled instead — a second thread, started the
//! first time one is needed, `stat`s each such file by its path every
//! [`POLL`] (no descriptor needed). A stop for the cap is the same either
//! way, and so is its result.
//!
//! A registration that ends leaves its kernel watch in place ("parked"):
//! removing one (`inotify_rm_watch(2)`) costs the caller some tens of
//! microseconds and the watching thread a wake-up, and it happens at every
//! foreground command's end, on the way of its result. The file is then
//! either deleted (the kernel drops the watch itself) or kept as a spare,
//! whose next registration gets the same watch back. Parked watches are
//! removed for real only beyond [`MAX_PARKED`], oldest first.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};
use parking_lot::Mutex;

use crate::os::files::outdir::{file_id, open_own, sole_open, FileId};

/// The longest a file is left unchecked while it grows; what a command can
/// write past the cap is at most its write rate times this.
const THROTTLE: Duration = Duration::from_millis(10);

/// How often a polled file's size is looked at: what a command can write
/// past the cap without inotify is at most its write rate times this.
const POLL: Duration = Duration::from_millis(20);

/// How many ended registrations' kernel watches are left in place (each
/// counts towards the user's `max_user_watches`).
const MAX_PARKED: usize = 64;

/// What runs when a file passes its limit: it may block (it runs on a
/// thread of its own), and runs at most once.
pub(crate) type OnOver = Box<dyn FnOnce() + Send>;

struct Watched {
    limit: u64,
    on_over: OnOver,
    how: How,
}

/// How a file's size is known.
enum How {
    /// Its inotify watch, and a read-only handle: `fstat` on it follows the
    /// file through a rename (a foreground file is renamed when its command
    /// moves to the background).
    Inotify { wd: WatchDescriptor, file: File },
    /// Its path, `stat`ed every [`POLL`]; [`renamed`] keeps it current.
    Poll { path: PathBuf },
}

struct Cap {
    /// `None` if no inotify instance could be had: every file is polled.
    inotify: Option<Inotify>,
    /// By registration number.
    watched: Mutex<HashMap<u64, Watched>>,
    /// Registration number of each inotify watch.
    by_wd: Mutex<HashMap<WatchDescriptor, u64>>,
    /// Kernel watches of ended registrations, oldest first. Its lock is
    /// held around every `inotify_add_watch` and `inotify_rm_watch` (taken
    /// before the others), so a watch removed here is never one that a
    /// registration has just been given back.
    parked: Mutex<VecDeque<WatchDescriptor>>,
    /// Wakes the poll thread (started at the first polled file).
    poller: OnceLock<Option<Sender<()>>>,
}

/// A registration, to hand back to [`unwatch`]. `None` only if not even a
/// poll thread could be started.
pub(crate) type Watch = Option<u64>;

static CAP: OnceLock<Cap> = OnceLock::new();

fn cap() -> &'static Cap {
    CAP.get_or_init(|| {
        let inotify = Inotify::init(InitFlags::IN_CLOEXEC).ok().filter(|_| {
            // The throttle waits on a channel that never receives: a
            // deadline wait, not a sleep that nothing could end.
            let (never_tx, never_rx) = crossbeam_channel::bounded::<()>(0);
            std::thread::Builder::new()
                .name("bashtools-cap".into())
                .spawn(move || watch_forever(never_tx, never_rx))
                .is_ok()
        });
        Cap {
            inotify,
            watched: Mutex::new(HashMap::new()),
            by_wd: Mutex::new(HashMap::new()),
            parked: Mutex::new(VecDeque::new()),
            poller: OnceLock::new(),
        }
    })
}

/// Starts watching `path`: `on_over` runs once its size passes `limit`.
pub(crate) fn watch(path: &Path, limit: u64, on_over: OnOver) -> Watch {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let c = cap();
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let watched = |how| Watched {
        limit,
        on_over,
        how,
    };
    if let Some(inotify) = &c.inotify {
        if let Ok(file) = File::open(path) {
            let mut parked = c.parked.lock();
            if let Ok(wd) = inotify.add_watch(path, AddWatchFlags::IN_MODIFY) {
                // The file's parked watch, if it had one, is in use again.
                parked.retain(|p| *p != wd);
                // Both locks, so the watcher never sees the wd without its entry.
                let mut by_wd = c.by_wd.lock();
                c.watched
                    .lock()
                    .insert(id, watched(How::Inotify { wd, file }));
                by_wd.insert(wd, id);
                return Some(id);
            }
        }
    }
    let wake = c.poller.get_or_init(start_poller).as_ref()?;
    c.watched.lock().insert(
        id,
        watched(How::Poll {
            path: path.to_path_buf(),
        }),
    );
    let _ = wake.try_send(());
    Some(id)
}

/// The file at `from` is now at `to`: a polled file is looked for there.
pub(crate) fn renamed(from: &Path, to: &Path) {
    let Some(c) = CAP.get() else {
        return;
    };
    for w in c.watched.lock().values_mut() {
        if let How::Poll { path } = &mut w.how {
            if path == from {
                *path = to.to_path_buf();
            }
        }
    }
}

/// Stops watching (nothing can write the file any more). Its kernel watch
/// is parked (see the module's docs).
pub(crate) fn unwatch(watch: Watch) {
    let (Some(c), Some(id)) = (CAP.get(), watch) else {
        return;
    };
    let mut parked = c.parked.lock();
    let entry = {
        let mut by_wd = c.by_wd.lock();
        let entry = c.watched.lock().remove(&id);
        if let Some(Watched {
            how: How::Inotify { wd, .. },
            ..
        }) = &entry
        {
            by_wd.remove(wd);
            parked.push_back(*wd);
        }
        entry
    };
    let oldest = (parked.len() > MAX_PARKED)
        .then(|| parked.pop_front())
        .flatten();
    if let (Some(wd), Some(inotify)) = (oldest, &c.inotify) {
        let _ = inotify.rm_watch(wd);
    }
    drop(parked);
    // Its descriptor of the file is closed outside every lock, and if it
    // was a big deleted file's last, off this thread (the reaper's).
    if let Some(Watched {
        how: How::Inotify { file, .. },
        ..
    }) = entry
    {
        crate::os::files::reclaim::close(file);
    }
}

/// Whether registration `watch`'s file has one open file description
/// (`outdir::sole_open`), asked on the registration's own descriptor (or,
/// polled, on one opened here); if so the registration ends and the
/// file's identity is returned. `None` when it has ended already: the
/// caller must ask.
pub(crate) fn release_if_sole(watch: Watch) -> Option<Option<FileId>> {
    let (c, id) = (CAP.get()?, watch?);
    let mut by_wd = c.by_wd.lock();
    let mut watched = c.watched.lock();
    let (wd, file) = match &watched.get(&id)?.how {
        How::Inotify { wd, file } => (wd, file),
        How::Poll { path } => {
            // Ended here if sole: polled on, it would look at whatever
            // file is at this path next (a spare keeps its name).
            let Some(fid) = sole_at(path) else {
                return Some(None);
            };
            watched.remove(&id);
            return Some(fid);
        }
    };
    if !sole_open(file) {
        return Some(None);
    }
    // The kernel's watch is left on the file: the next command to get it
    // as a spare is given the same watch descriptor, which then maps to
    // that command's registration. Removing it would cost the inotify
    // thread a wake-up now, on the way of this call's result.
    let (wd, fid) = (*wd, file_id(file));
    watched.remove(&id);
    by_wd.remove(&wd);
    Some(fid)
}

/// The identity of the file at `path` if it has one open file description
/// (the one opened here, see `outdir::open_own`); `None` if not.
fn sole_at(path: &Path) -> Option<Option<FileId>> {
    let file = open_own(path, false)?;
    sole_open(&file).then(|| file_id(&file))
}

fn watch_forever(_keep: Sender<()>, never: Receiver<()>) {
    let c = cap();
    let Some(inotify) = &c.inotify else {
        return;
    };
    loop {
        if let Ok(events) = inotify.read_events() {
            let mut seen = Vec::new();
            for e in events {
                if e.mask.contains(AddWatchFlags::IN_IGNORED) {
                    // The kernel dropped the watch (its file is gone).
                    c.parked.lock().retain(|p| *p != e.wd);
                    continue;
                }
                if !seen.contains(&e.wd) {
                    seen.push(e.wd);
                }
            }
            for wd in seen {
                let id = c.by_wd.lock().get(&wd).copied();
                if let Some(id) = id {
                    check(c, id);
                }
            }
        }
        // At most one look per THROTTLE, also after a failed read, which
        // must not turn into a spin.
        let _ = never.recv_timeout(THROTTLE);
    }
}

/// The poll thread: `None` if it cannot be started.
fn start_poller() -> Option<Sender<()>> {
    let (wake, woken) = crossbeam_channel::bounded::<()>(1);
    std::thread::Builder::new()
        .name("bashtools-cap-poll".into())
        .spawn(move || poll_forever(woken))
        .ok()?;
    Some(wake)
}

fn poll_forever(woken: Receiver<()>) {
    let c = cap();
    loop {
        let polled: Vec<u64> = c
            .watched
            .lock()
            .iter()
            .filter(|(_, w)| matches!(w.how, How::Poll { .. }))
            .map(|(&id, _)| id)
            .collect();
        if polled.is_empty() {
            // Nothing to poll: wait for a registration, not a timer.
            if woken.recv().is_err() {
                return;
            }
            continue;
        }
        for id in polled {
            check(c, id);
        }
        let _ = woken.recv_timeout(POLL);
    }
}

/// Runs the callback of registration `id` if its file has passed its limit.
fn check(c: &Cap, id: u64) {
    let over = {
        let _parked = c.parked.lock();
        let mut by_wd = c.by_wd.lock();
        let mut watched = c.watched.lock();
        let Some(entry) = watched.get(&id) else {
            return;
        };
        let size = match &entry.how {
            How::Inotify { file, .. } => file.metadata().map(|m| m.len()).unwrap_or(0),
            How::Poll { path } => std::fs::metadata(path).map(|m| m.len()).unwrap_or(0),
        };
        // Taken out at once: later events of the same file find it gone.
        if size > entry.limit {
            let entry = watched.remove(&id);
            if let Some(Watched {
                how: How::Inotify { wd, .. },
                ..
            }) = &entry
            {
                by_wd.remove(wd);
                if let Some(inotify) = &c.inotify {
                    let _ = inotify.rm_watch(*wd);
                }
            }
            entry
        } else {
            None
        }
    };
    if let Some(entry) = over {
        // The callback may wait (stopping waits up to kill_grace): not on
        // this thread, which must keep watching the other files.
        let _ = std::thread::Builder::new()
            .name("bashtools-cap-stop".into())
            .spawn(entry.on_over);
    }
}
