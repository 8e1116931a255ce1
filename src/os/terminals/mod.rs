//! The one I/O thread that serves every pseudo-terminal of a `BashTools`:
//! it copies what each terminal's programs print into that shell's output
//! file, and types what `write_stdin` sends into the terminal.
//!
//! **Entry point:** [`Terminals`], one per `BashTools`; a new terminal is
//! opened with `pty::open` and handed to it.
//!
//! One thread for all of them, not one per shell: it sleeps in `poll(2)` on
//! every master and an `eventfd(2)` that wakes it when a terminal is added,
//! input is queued, a drain is asked for, or the thread is to end.
//!
//! - A master read that fails with EIO means every holder of the slave has
//!   closed it (the command and all it started have exited): the master is
//!   closed and forgotten.
//! - When a shell's leader exits, its exit is recorded only after
//!   [`Terminals::drain`]: the thread has read the master until it was empty,
//!   so what the leader printed is in the file before anyone is told it
//!   ended (a read that finds nothing first flushes the kernel's pending
//!   terminal buffer, `n_tty_read`). Processes it left running keep writing
//!   to the file until they are gone.
//! - Reads are bounded per round (`ROUND`), so one terminal printing at full
//!   speed does not starve the others or the input.
//! - Input is written without blocking; what the terminal does not take at
//!   once waits for `POLLOUT`.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::libc;
use parking_lot::{Condvar, Mutex};

pub(crate) mod pty;
mod pump;
use pump::run;

/// Bytes gathered from a terminal before they are written to its file.
const CHUNK: usize = 64 * 1024;
/// Bytes read from one terminal before the others get their turn.
const ROUND: usize = 16 * CHUNK;
/// The longest a leader's exit waits for its terminal to be drained.
const DRAIN_WAIT: Duration = Duration::from_secs(2);
/// The longest a drain keeps reading a terminal that its leftover
/// processes keep filling.
const DRAIN_LIMIT: Duration = Duration::from_millis(100);

/// One terminal.
struct Term {
    master: Arc<OwnedFd>,
    output: Arc<File>,
    /// Where the terminal itself is.
    side: Side,
    /// Where its command's leader is.
    leader: Leader,
    /// Input not yet taken by the terminal.
    input: Vec<u8>,
    /// Bytes copied into the output file so far.
    received: u64,
    /// When output last arrived.
    last_output: Option<Instant>,
}

/// A terminal's own state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// Its command is being started: its slave may not be open yet, and a
    /// read of the master would fail as if it had been closed. Not served.
    Starting,
    /// Served: its output is copied, input typed into it.
    Open,
    /// Every holder of the slave has closed it (EIO): nothing more comes.
    Closed,
}

/// The state of a terminal's leader, as far as the terminal is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leader {
    /// Running (or not known to have exited).
    Running,
    /// It has exited, and its exit waits in [`Terminals::drain`] for the
    /// terminal to be read empty.
    Draining,
    /// It has exited and what it printed is in the file.
    Exited,
}

impl Term {
    /// Nothing more to serve or wait for: it can be forgotten.
    fn done(&self) -> bool {
        self.side == Side::Closed && self.leader == Leader::Exited
    }
}

#[derive(Default)]
struct State {
    terms: HashMap<u64, Term>,
    ending: bool,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    wake: OwnedFd,
}

impl Shared {
    fn wake(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our eventfd.
        unsafe { libc::write(self.wake.as_raw_fd(), (&one as *const u64).cast(), 8) };
    }
}

/// Why a wait for a terminal's output returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Waited {
    /// Output came, then nothing for the quiet time.
    Quiet,
    /// The leader has exited (its output is in the file), or the terminal
    /// is gone.
    Ended,
    /// The deadline passed.
    Deadline,
}

/// The terminals and their thread; dropping it ends the thread and closes
/// every master.
/// The most input a terminal holds for its program before the program has
/// read it (the kernel's own buffer is full by then): 1 MiB.
pub(crate) const MAX_QUEUED_INPUT: usize = 1 << 20;

pub(crate) struct Terminals {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Terminals {
    /// Starts the I/O thread.
    pub(crate) fn start() -> io::Result<Terminals> {
        // SAFETY: a plain call; the descriptor is owned below.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            // SAFETY: just made, owned by nobody else.
            wake: unsafe { OwnedFd::from_raw_fd(fd) },
        });
        let for_thread = shared.clone();
        let thread = std::thread::Builder::new()
            .name("bashtools-terminals".into())
            .spawn(move || run(&for_thread))?;
        Ok(Terminals {
            shared,
            thread: Some(thread),
        })
    }

    /// Adds terminal `key`, whose output goes to `output`; served once
    /// [`started`](Self::started) says its command has the slave open.
    pub(crate) fn add(&self, key: u64, master: OwnedFd, output: File) {
        self.shared.state.lock().terms.insert(
            key,
            Term {
                master: Arc::new(master),
                output: Arc::new(output),
                side: Side::Starting,
                leader: Leader::Running,
                input: Vec::new(),
                received: 0,
                last_output: None,
            },
        );
    }

    /// The command of terminal `key` has started: serve it.
    pub(crate) fn started(&self, key: u64) {
        if let Some(t) = self.shared.state.lock().terms.get_mut(&key) {
            if t.side == Side::Starting {
                t.side = Side::Open;
            }
        }
        self.shared.wake();
    }

    /// Forgets terminal `key` (its command could not start).
    pub(crate) fn remove(&self, key: u64) {
        self.shared.state.lock().terms.remove(&key);
        self.shared.changed.notify_all();
        self.shared.wake();
    }

    /// The leader of terminal `key` has exited: returns once what it
    /// printed is in the output file (or after [`DRAIN_WAIT`]).
    pub(crate) fn drain(&self, key: u64) {
        let mut state = self.shared.state.lock();
        match state.terms.get_mut(&key) {
            Some(t) if t.leader == Leader::Running => t.leader = Leader::Draining,
            Some(_) => {}
            None => return,
        }
        self.shared.wake();
        let until = Instant::now() + DRAIN_WAIT;
        while state
            .terms
            .get(&key)
            .is_some_and(|t| t.leader != Leader::Exited)
        {
            if self
                .shared
                .changed
                .wait_until(&mut state, until)
                .timed_out()
            {
                return;
            }
        }
    }

    /// Queues `input` for terminal `key`; returns how many bytes of output
    /// it had received before, for [`wait`](Self::wait). `Err` when the
    /// terminal is closed or unknown (EIO), and when the input would pass
    /// [`MAX_QUEUED_INPUT`] of what its program has not read yet (ENOBUFS,
    /// nothing queued): a program that never reads must not grow the host.
    pub(crate) fn write(&self, key: u64, input: &[u8]) -> io::Result<u64> {
        let mut state = self.shared.state.lock();
        let t = state
            .terms
            .get_mut(&key)
            .filter(|t| t.side != Side::Closed)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::EIO))?;
        if t.input.len() + input.len() > MAX_QUEUED_INPUT {
            return Err(io::Error::from_raw_os_error(libc::ENOBUFS));
        }
        t.input.extend_from_slice(input);
        let received = t.received;
        drop(state);
        self.shared.wake();
        Ok(received)
    }

    /// Waits until terminal `key` has received output beyond `since` and
    /// then been quiet for `quiet`, or its leader has exited, or `deadline`.
    pub(crate) fn wait(&self, key: u64, since: u64, quiet: Duration, deadline: Instant) -> Waited {
        let mut state = self.shared.state.lock();
        loop {
            let Some(t) = state.terms.get(&key) else {
                return Waited::Ended;
            };
            if t.leader == Leader::Exited {
                return Waited::Ended;
            }
            let now = Instant::now();
            if now >= deadline {
                return Waited::Deadline;
            }
            let until = match t.last_output {
                Some(at) if t.received > since => {
                    let calm = at + quiet;
                    if now >= calm {
                        return Waited::Quiet;
                    }
                    calm.min(deadline)
                }
                _ => deadline,
            };
            self.shared.changed.wait_until(&mut state, until);
        }
    }
}

impl Drop for Terminals {
    fn drop(&mut self) {
        self.shared.state.lock().ending = true;
        self.shared.wake();
        if let Some(thread) = self.thread.take() {
            if thread.thread().id() != std::thread::current().id() {
                let _ = thread.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A terminal served by `terms` as key 1, its slave held by the test
    /// (in place of a command), and the file its output goes to.
    fn served(terms: &Terminals) -> (File, File) {
        let pty = pty::open(80, 24).unwrap();
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(pty.slave.to_str().unwrap())
            .unwrap();
        let path = std::env::temp_dir().join(format!(
            "bashtools-terminals-test-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let output = File::create(&path).unwrap();
        let reader = File::open(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        terms.add(1, pty.master, output);
        terms.started(1);
        (slave, reader)
    }

    #[test]
    fn a_drain_returns_once_what_was_written_is_in_the_file() {
        let terms = Terminals::start().unwrap();
        let (mut slave, mut reader) = served(&terms);
        slave.write_all(&[b'x'; 3000]).unwrap();
        drop(slave);
        terms.drain(1);
        let mut got = Vec::new();
        reader.read_to_end(&mut got).unwrap();
        assert_eq!(got.len(), 3000);
        // Closed and drained: forgotten, and a write is refused.
        assert_eq!(
            terms.wait(1, 0, Duration::ZERO, Instant::now()),
            Waited::Ended
        );
        assert!(terms.write(1, b"late").is_err());
    }

    #[test]
    fn a_wait_ends_on_quiet_after_output_or_at_its_deadline() {
        let terms = Terminals::start().unwrap();
        let (mut slave, _reader) = served(&terms);
        let start = Instant::now();
        let far = start + Duration::from_secs(60);
        // Nothing printed: the deadline, not the quiet time, ends the wait.
        let soon = Instant::now() + Duration::from_millis(50);
        assert_eq!(
            terms.wait(1, 0, Duration::from_millis(10), soon),
            Waited::Deadline
        );
        slave.write_all(b"hello\n").unwrap();
        assert_eq!(
            terms.wait(1, 0, Duration::from_millis(50), far),
            Waited::Quiet
        );
        assert!(start.elapsed() < Duration::from_secs(30));
        // What is typed reaches the program (here: the test, on the slave).
        let since = terms.write(1, b"typed\n").unwrap();
        assert_eq!(since, 6);
        let mut line = [0u8; 6];
        slave.read_exact(&mut line).unwrap();
        assert_eq!(&line, b"typed\n");
    }
}
