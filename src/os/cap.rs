//! The output cap (`max_output_bytes`, contract §8): a shell whose output
//! file grows past the cap is stopped, so a runaway command cannot fill the
//! disk.
//!
//! One thread per process watches every output file with `inotify(7)`
//! (`IN_MODIFY`) and looks at a file's size when it changes. The kernel
//! merges repeated events of one file while they are unread, and the thread
//! reads at most [`THROTTLE`] often, so a command writing at full speed costs
//! it a few system calls per interval, not one per write.

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};
use parking_lot::Mutex;

/// The longest a file is left unchecked while it grows; what a command can
/// write past the cap is at most its write rate times this.
const THROTTLE: Duration = Duration::from_millis(10);

/// What runs when a file passes its limit: it may block (it runs on a
/// thread of its own), and runs at most once.
pub(crate) type OnOver = Box<dyn FnOnce() + Send>;

struct Watched {
    limit: u64,
    on_over: OnOver,
    /// Read-only handle: `fstat` on it follows the file through a rename
    /// (a foreground file is renamed when its command moves to the background).
    file: File,
}

struct Watcher {
    inotify: Inotify,
    watched: Mutex<HashMap<WatchDescriptor, Watched>>,
}

/// A registration, to hand back to [`unwatch`]. `None` when inotify is not
/// available: the cap is then not enforced (documented in the README).
pub(crate) type Watch = Option<WatchDescriptor>;

static WATCHER: OnceLock<Option<Watcher>> = OnceLock::new();

fn watcher() -> Option<&'static Watcher> {
    WATCHER
        .get_or_init(|| {
            let inotify = Inotify::init(InitFlags::IN_CLOEXEC).ok()?;
            // The throttle waits on a channel that never receives: a
            // deadline wait, not a sleep that nothing could end.
            let (never_tx, never_rx) = crossbeam_channel::bounded::<()>(0);
            std::thread::Builder::new()
                .name("bashtools-cap".into())
                .spawn(move || watch_forever(never_tx, never_rx))
                .ok()?;
            Some(Watcher {
                inotify,
                watched: Mutex::new(HashMap::new()),
            })
        })
        .as_ref()
}

/// Starts watching `path`: `on_over` runs once its size passes `limit`.
pub(crate) fn watch(path: &Path, limit: u64, on_over: OnOver) -> Watch {
    let w = watcher()?;
    let file = File::open(path).ok()?;
    let wd = w.inotify.add_watch(path, AddWatchFlags::IN_MODIFY).ok()?;
    w.watched.lock().insert(
        wd,
        Watched {
            limit,
            on_over,
            file,
        },
    );
    Some(wd)
}

/// Stops watching (the shell has exited).
pub(crate) fn unwatch(watch: Watch) {
    let (Some(w), Some(wd)) = (watcher(), watch) else {
        return;
    };
    if w.watched.lock().remove(&wd).is_some() {
        let _ = w.inotify.rm_watch(wd);
    }
}

fn watch_forever(_keep: Sender<()>, never: Receiver<()>) {
    let Some(w) = watcher() else {
        return;
    };
    loop {
        if let Ok(events) = w.inotify.read_events() {
            let mut seen = Vec::new();
            for e in events {
                if !seen.contains(&e.wd) {
                    seen.push(e.wd);
                }
            }
            for wd in seen {
                check(w, wd);
            }
        }
        // At most one look per THROTTLE, also after a failed read, which
        // must not turn into a spin.
        let _ = never.recv_timeout(THROTTLE);
    }
}

/// Runs the callback of `wd` if its file has passed its limit.
fn check(w: &Watcher, wd: WatchDescriptor) {
    let over = {
        let mut watched = w.watched.lock();
        let Some(entry) = watched.get(&wd) else {
            return;
        };
        let size = entry.file.metadata().map(|m| m.len()).unwrap_or(0);
        // Taken out at once: later events of the same file find it gone.
        if size > entry.limit {
            watched.remove(&wd)
        } else {
            None
        }
    };
    if let Some(entry) = over {
        let _ = w.inotify.rm_watch(wd);
        // The callback may wait (stopping waits up to kill_grace): not on
        // this thread, which must keep watching the other files.
        let _ = std::thread::Builder::new()
            .name("bashtools-cap-stop".into())
            .spawn(entry.on_over);
    }
}
