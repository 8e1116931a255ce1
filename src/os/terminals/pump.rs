//! The terminals' one I/O thread: poll every master, copy what each
//! printed into its output file a round at a time, type queued input,
//! drain a terminal whose leader has ended.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::time::Instant;

use nix::libc;

use super::{Leader, Shared, Side, CHUNK, DRAIN_LIMIT, ROUND};

/// What one round of the loop serves of a terminal, taken under the lock.
struct Served {
    key: u64,
    master: Arc<OwnedFd>,
    output: Arc<File>,
    wants_out: bool,
    drain: bool,
}

/// The thread: poll, copy, write, drain, until told to end.
pub(super) fn run(shared: &Shared) {
    let mut buf = vec![0u8; CHUNK];
    loop {
        let served: Vec<Served> = {
            let state = shared.state.lock();
            if state.ending {
                return;
            }
            state
                .terms
                .iter()
                .filter(|(_, t)| t.side == Side::Open)
                .map(|(&key, t)| Served {
                    key,
                    master: t.master.clone(),
                    output: t.output.clone(),
                    wants_out: !t.input.is_empty(),
                    drain: t.leader == Leader::Draining,
                })
                .collect()
        };
        // Drains first: a leader's exit waits on them.
        let drains: Vec<&Served> = served.iter().filter(|s| s.drain).collect();
        if !drains.is_empty() {
            for s in drains {
                let until = Instant::now() + DRAIN_LIMIT;
                let mut closed = false;
                while !closed && Instant::now() < until {
                    match copy(shared, s, &mut buf) {
                        Copied::More => {}
                        Copied::Empty => break,
                        Copied::Closed => closed = true,
                    }
                }
                let mut state = shared.state.lock();
                if let Some(t) = state.terms.get_mut(&s.key) {
                    t.leader = Leader::Exited;
                    if closed {
                        t.side = Side::Closed;
                    }
                }
                state.terms.retain(|_, t| !t.done());
                drop(state);
                shared.changed.notify_all();
            }
            continue;
        }
        // A closed terminal has nothing left to drain: its leader's exit
        // need not wait. Closed terminals whose leader has exited are done.
        {
            let mut state = shared.state.lock();
            for t in state.terms.values_mut() {
                if t.side == Side::Closed && t.leader == Leader::Draining {
                    t.leader = Leader::Exited;
                }
            }
            state.terms.retain(|_, t| !t.done());
        }
        shared.changed.notify_all();
        let mut fds = vec![libc::pollfd {
            fd: shared.wake.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        fds.extend(served.iter().map(|s| libc::pollfd {
            fd: s.master.as_raw_fd(),
            events: libc::POLLIN | if s.wants_out { libc::POLLOUT } else { 0 },
            revents: 0,
        }));
        // SAFETY: `fds` is a live array of initialised pollfds.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if n < 0 {
            // EINTR: look again.
            continue;
        }
        if fds[0].revents != 0 {
            let mut count = 0u64;
            // SAFETY: reads 8 bytes into a live u64 from our eventfd.
            unsafe { libc::read(shared.wake.as_raw_fd(), (&mut count as *mut u64).cast(), 8) };
        }
        for (s, fd) in served.iter().zip(&fds[1..]) {
            if fd.revents & libc::POLLOUT != 0 {
                type_input(shared, s);
            }
            if fd.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                serve_output(shared, s, &mut buf);
            }
        }
    }
}

enum Copied {
    /// A full chunk was copied; there may be more.
    More,
    /// Everything there was has been copied (perhaps nothing).
    Empty,
    /// The slave is closed by everyone: nothing more will come.
    Closed,
}

/// Reads of `s`'s master until `buf` is full or nothing is left, then one
/// write of them into its output file: the terminal hands out at most 4 KiB
/// a read (`N_TTY_BUF_SIZE`), and a write and a wake-up per 4 KiB would
/// cost more than the reads.
fn copy(shared: &Shared, s: &Served, buf: &mut [u8]) -> Copied {
    let mut filled = 0;
    let mut closed = false;
    while filled < buf.len() {
        let room = &mut buf[filled..];
        // SAFETY: reads into a live buffer of its length.
        let n = unsafe { libc::read(s.master.as_raw_fd(), room.as_mut_ptr().cast(), room.len()) };
        if n > 0 {
            filled += n as usize;
            continue;
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EAGAIN) if n < 0 => {}
            // EIO (or EOF): every holder of the slave has closed it.
            _ => closed = true,
        }
        break;
    }
    if filled > 0 {
        // A failed write (a full disk) loses these bytes, as a command
        // writing the file itself would lose its write.
        let _ = (&*s.output).write_all(&buf[..filled]);
        let mut state = shared.state.lock();
        if let Some(t) = state.terms.get_mut(&s.key) {
            t.received += filled as u64;
            t.last_output = Some(Instant::now());
        }
        drop(state);
        shared.changed.notify_all();
    }
    match (closed, filled) {
        (true, _) => Copied::Closed,
        (false, 0) => Copied::Empty,
        (false, n) if n < buf.len() => Copied::Empty,
        _ => Copied::More,
    }
}

/// Copies up to a round of `s`'s output; closes it at EIO.
fn serve_output(shared: &Shared, s: &Served, buf: &mut [u8]) {
    let mut read = 0;
    while read < ROUND {
        match copy(shared, s, buf) {
            Copied::More => read += buf.len(),
            Copied::Empty => return,
            Copied::Closed => {
                let mut state = shared.state.lock();
                if let Some(t) = state.terms.get_mut(&s.key) {
                    t.side = Side::Closed;
                    t.input.clear();
                }
                drop(state);
                shared.changed.notify_all();
                return;
            }
        }
    }
}

/// Writes what the terminal takes of `s`'s queued input.
fn type_input(shared: &Shared, s: &Served) {
    let mut state = shared.state.lock();
    let Some(t) = state.terms.get_mut(&s.key) else {
        return;
    };
    if t.input.is_empty() {
        return;
    }
    // SAFETY: writes from a live buffer of its length.
    let n = unsafe { libc::write(s.master.as_raw_fd(), t.input.as_ptr().cast(), t.input.len()) };
    if n > 0 {
        t.input.drain(..n as usize);
    }
}
