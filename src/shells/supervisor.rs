//! The supervisor: starts shells, records their exits, moves a foreground
//! command to the background at its timeout, and reports each background
//! shell's end once. Stopping is in [`stop`](super::stop).
//!
//! It knows nothing of tools, texts or the task registry: what happens when
//! a shell ends in the background is the `on_end` callback it was given, and
//! what happens when a shell becomes background work is a closure passed to
//! [`start`](Supervisor::start) or [`settle`](Supervisor::settle), run under
//! the table's lock so the shell cannot end before it has been registered.

use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;

use super::shell::{Ended, Key, Life, NewShell, Shell, StopReason};
use super::table::Table;
use crate::os::files::outdir::OutputDir;
use crate::os::process::Process;
use crate::os::terminals::{Terminals, Waited};
use crate::os::{bash::spawn, files::output_cap, terminals::pty};

/// Called once when a background shell (not a monitor) has ended.
pub(crate) type OnEnd = Arc<dyn Fn(Ended) + Send + Sync>;

/// Why a shell could not be started.
#[derive(Debug)]
pub(crate) enum StartError {
    /// The tools have ended (drop, or the server's shutdown).
    Closed,
    /// The output file could not be made, or the spawn failed.
    Io(std::io::Error),
}

/// What a foreground command's timeout or exit settled.
pub(crate) enum Settled {
    /// It has exited: its record, taken out of the table. Its output file
    /// is still there, for the caller to read and then discard.
    Finished(Box<Shell>),
    /// Still running at its timeout: now background shell `id`, its output
    /// file renamed after it.
    Moved { id: String, output: PathBuf },
    /// The record is gone (another settling took it).
    Gone,
}

/// Where the commands' stdio goes, for [`Supervisor::start`].
pub(crate) struct Stdio {
    /// Where stdout goes instead of the output file (a monitor's pipe).
    pub stdout: Option<OwnedFd>,
    /// A pseudo-terminal of this size (columns, rows) for stdin, stdout
    /// and stderr, its output copied into the output file (interactive
    /// commands).
    pub terminal: Option<(u16, u16)>,
    /// What the command reads on stdin (`None`: `/dev/null`).
    pub stdin: Option<String>,
    /// Whether the directory it ends in is recorded (see `os/bash/lastdir.rs`);
    /// read back by [`Supervisor::take_last_dir`].
    pub record_end: bool,
}

/// The files of [`Supervisor::side_files`].
struct SideFiles {
    /// The command's input, open for reading; its name already removed.
    stdin: Option<File>,
    /// Whether the directory it ends in is recorded.
    record_end: bool,
    /// Limits in place of the owner's.
    limits: Option<crate::limits::Limits>,
    /// The caller's carried environment.
    carried: Vec<(std::ffi::OsString, Option<std::ffi::OsString>)>,
}

pub(crate) struct Supervisor {
    pub(super) table: Arc<Table>,
    pub(super) process: Arc<dyn Process>,
    pub(super) kill_grace: Duration,
    outdir: Arc<OutputDir>,
    max_output_bytes: u64,
    next_file: AtomicU64,
    on_end: OnEnd,
    /// The I/O thread of the interactive commands' terminals, started with
    /// the first of them.
    terminals: Mutex<Option<Arc<Terminals>>>,
}

impl Supervisor {
    pub(crate) fn new(
        process: Arc<dyn Process>,
        outdir: OutputDir,
        kill_grace: Duration,
        max_output_bytes: u64,
        on_end: OnEnd,
    ) -> Supervisor {
        Supervisor {
            table: Arc::new(Table::default()),
            process,
            kill_grace,
            outdir: Arc::new(outdir),
            max_output_bytes,
            next_file: AtomicU64::new(1),
            on_end,
            terminals: Mutex::new(None),
        }
    }

    pub(crate) fn table(&self) -> &Table {
        &self.table
    }

    pub(crate) fn process(&self) -> &dyn Process {
        &*self.process
    }

    pub(crate) fn output_directory(&self) -> &Path {
        self.outdir.path()
    }

    /// Removes the output directory (the tools have ended).
    pub(crate) fn remove_output_directory(&self) {
        self.outdir.remove();
    }

    /// Starts `new` in `cwd` and records it; returns its key. `register`
    /// runs under the table's lock once the record exists, for work that
    /// starts in the background. Nothing is left behind when it fails.
    pub(crate) fn start(
        self: &Arc<Self>,
        mut new: NewShell,
        cwd: &Path,
        stdio: Stdio,
        register: impl FnOnce(&Shell, Key),
    ) -> Result<Key, StartError> {
        let file_name = new.id.as_ref().map(|id| format!("{id}.output"));
        let (path, file) = self
            .outdir
            .output_file(file_name.as_deref())
            .map_err(StartError::Io)?;
        let n = self.next_file.fetch_add(1, Ordering::Relaxed);
        let files = self.side_files(n, &stdio).map_err(|e| {
            let _ = std::fs::remove_file(&path);
            StartError::Io(e)
        })?;
        let command = new.command.clone();
        let files = SideFiles {
            limits: new.limits,
            carried: std::mem::take(&mut new.carried),
            ..files
        };
        let key = {
            let mut inner = self.table.lock();
            if inner.closed {
                drop(inner);
                let _ = std::fs::remove_file(&path);
                return Err(StartError::Closed);
            }
            let mut shell = Shell::new(new, path.clone());
            shell.interactive = stdio.terminal.is_some();
            let key = inner.insert(shell);
            register(&inner.shells[&key], key);
            key
        };
        let (pid, _) = match self.spawn(key, &command, cwd, (&path, &file), stdio, &files) {
            Ok(spawned) => spawned,
            Err(e) => {
                self.table.lock().forget(key);
                let _ = std::fs::remove_file(&path);
                return Err(StartError::Io(e));
            }
        };
        // The command has its own descriptor of its input now.
        drop(files.stdin);
        let stop = {
            let mut inner = self.table.lock();
            let closed = inner.closed;
            inner.shells.get_mut(&key).and_then(|s| {
                // The exit hook may have run already (a command that ended
                // at once): only a record still spawning becomes running.
                if s.life == Life::Spawning {
                    s.life = Life::Running { pid };
                } else if let Life::Exited { exit, .. } = s.life {
                    s.life = Life::Exited { pid, exit };
                }
                // A stop asked for while we were forking could not see
                // this pid; nor could the end of the tools.
                s.stop.or(closed.then_some(StopReason::StopAll))
            })
        };
        if let Some(reason) = stop {
            // Stopped here. It did start, so its result says how it ended.
            self.stop(&[key], reason);
        }
        Ok(key)
    }

    /// The terminals' I/O thread, started if it is not running yet.
    fn terminals(&self) -> std::io::Result<Arc<Terminals>> {
        let mut slot = self.terminals.lock();
        if let Some(t) = &*slot {
            return Ok(t.clone());
        }
        let t = Arc::new(Terminals::start()?);
        *slot = Some(t.clone());
        Ok(t)
    }

    /// The terminals, when an interactive command has been started.
    fn running_terminals(&self) -> Option<Arc<Terminals>> {
        self.terminals.lock().clone()
    }

    /// Types `input` into the terminal of shell `key`; returns the bytes of
    /// output it had received before (see [`wait_terminal`](Self::wait_terminal)).
    /// `Err` when its terminal is closed (or it has none).
    pub(crate) fn write_terminal(&self, key: Key, input: &[u8]) -> std::io::Result<u64> {
        match self.running_terminals() {
            Some(t) => t.write(key, input),
            None => Err(std::io::Error::from_raw_os_error(nix::libc::EIO)),
        }
    }

    /// Waits until the terminal of shell `key` has printed more than
    /// `since` bytes and then been quiet for `quiet`, or its leader has
    /// exited (then also until the exit is recorded), or `deadline`.
    pub(crate) fn wait_terminal(
        &self,
        key: Key,
        since: u64,
        quiet: Duration,
        deadline: std::time::Instant,
    ) -> Waited {
        let Some(t) = self.running_terminals() else {
            return Waited::Ended;
        };
        let waited = t.wait(key, since, quiet, deadline);
        if waited == Waited::Ended {
            // The exit is recorded right after the drain: wait for it, so
            // the state read next says ended.
            let soon = std::time::Instant::now() + Duration::from_secs(2);
            let inner = self.table.lock();
            drop(self.table.wait_exited(inner, &[key], Some(soon)));
        }
        waited
    }

    /// The files a command needs beside its output: its input, written
    /// and already unlinked (so nothing is left whatever happens next).
    fn side_files(&self, n: u64, stdio: &Stdio) -> std::io::Result<SideFiles> {
        let stdin = match &stdio.stdin {
            Some(text) => {
                let name = format!("stdin-{n}");
                let (path, mut writer) = self.outdir.create_file(&name)?;
                let reader = std::io::Write::write_all(&mut writer, text.as_bytes())
                    .and_then(|()| File::open(&path));
                let _ = std::fs::remove_file(&path);
                Some(reader?)
            }
            None => None,
        };
        Ok(SideFiles {
            stdin,
            record_end: stdio.record_end,
            limits: None,
            carried: Vec::new(),
        })
    }

    /// Spawns command `key`, its output into `file` (open at `path`).
    fn spawn(
        self: &Arc<Self>,
        key: Key,
        command: &str,
        cwd: &Path,
        (path, file): (&Path, &File),
        stdio: Stdio,
        files: &SideFiles,
    ) -> std::io::Result<(u32, Option<OwnedFd>)> {
        let Some((cols, rows)) = stdio.terminal else {
            return self.spawn_with(key, command, cwd, (path, file), stdio, files, None);
        };
        let terminals = self.terminals()?;
        let pty = pty::open(cols, rows)?;
        terminals.add(key, pty.master, file.try_clone()?);
        let spawned = self.spawn_with(
            key,
            command,
            cwd,
            (path, file),
            stdio,
            files,
            Some((&pty.slave, terminals.clone())),
        );
        match &spawned {
            Ok(_) => terminals.started(key),
            Err(_) => terminals.remove(key),
        }
        spawned
    }

    #[allow(clippy::too_many_arguments)]
    fn spawn_with(
        self: &Arc<Self>,
        key: Key,
        command: &str,
        cwd: &Path,
        (path, file): (&Path, &File),
        stdio: Stdio,
        files: &SideFiles,
        terminal: Option<(&std::ffi::CStr, Arc<Terminals>)>,
    ) -> std::io::Result<(u32, Option<OwnedFd>)> {
        let me = Arc::downgrade(self);
        let watch = output_cap::watch(
            path,
            self.max_output_bytes,
            Box::new(move || {
                if let Some(me) = me.upgrade() {
                    me.stop(&[key], StopReason::OutputCap);
                }
            }),
        );
        if let Some(shell) = self.table.lock().shells.get_mut(&key) {
            shell.watch = watch;
        }
        let table = self.table.clone();
        let on_end = self.on_end.clone();
        let terminal_io = terminal.as_ref().map(|(_, t)| ((), t.clone()));
        let spawned = self.process.spawn(
            key,
            spawn::SpawnSpec {
                command,
                cwd,
                output: file,
                stdout: stdio.stdout,
                terminal: terminal.as_ref().map(|(slave, _)| *slave),
                stdin: files.stdin.as_ref(),
                record_end: files.record_end,
                limits: files.limits,
                carried: &files.carried,
            },
            // No one waits on the leader's pidfd (a monitor ends at EOF).
            false,
            Box::new(move |exit, cost| {
                // What the leader printed on its terminal is in the file
                // before its end is told.
                if let Some((_, terminals)) = &terminal_io {
                    terminals.drain(key);
                }
                table.record_exit(key, exit, cost, |ended| on_end(ended));
            }),
            // The cap stays on while anything the command started can still
            // write its file.
            Box::new(move || output_cap::unwatch(watch)),
        );
        // Nothing started, so nothing will end: the watch (its descriptor
        // of the file, its inotify watch) goes now.
        if spawned.is_err() {
            output_cap::unwatch(watch);
        }
        spawned
    }

    /// Settles a foreground call at its exit or its timeout: the record of
    /// a command that has exited, else it moves to the background — not
    /// killed, as in Claude Code — as the ID `next_id` gives. Its file is
    /// renamed after its new ID; the command keeps writing to the same open
    /// file. `register` runs under the lock once it is background work.
    pub(crate) fn settle(
        &self,
        key: Key,
        next_id: impl FnOnce() -> String,
        register: impl FnOnce(&Shell, Key),
    ) -> Settled {
        let mut inner = self.table.lock();
        let Some(shell) = inner.shells.get_mut(&key) else {
            return Settled::Gone;
        };
        if !shell.is_running() {
            return match inner.remove(key) {
                Some(shell) => Settled::Finished(Box::new(shell)),
                None => Settled::Gone,
            };
        }
        let id = next_id();
        // Now background work: where it ends is not kept.
        self.process.forget_last_state(key);
        let renamed = shell.output.with_file_name(format!("{id}.output"));
        if std::fs::rename(&shell.output, &renamed).is_ok() {
            output_cap::renamed(&shell.output, &renamed);
            shell.output = renamed;
        }
        let output = shell.output.clone();
        inner.name(key, id.clone());
        register(&inner.shells[&key], key);
        Settled::Moved { id, output }
    }

    /// The directory settled foreground command `key` ended in and its
    /// exported variables, if it ended on its own (not stopped) with its
    /// end recorded. Asked once: the record is forgotten either way.
    pub(crate) fn take_last_state(
        &self,
        key: Key,
        shell: &Shell,
    ) -> Option<crate::os::process::LastState> {
        if shell.is_running() || shell.stop_reason().is_some() {
            self.process.forget_last_state(key);
            return None;
        }
        self.process.last_state(key)
    }

    /// Done with the output file of `shell`, a settled foreground command
    /// whose result has been read: removed, or kept for the next command
    /// when nothing can write it any more (`OutputDir::retire`; a
    /// terminal's I/O thread still holding it is such a writer). Done on
    /// the tidying thread, after the result has gone its way.
    pub(crate) fn retire_output(&self, shell: &Shell) {
        let watch = shell.watch;
        self.outdir.retire_later(shell.output.clone(), move || {
            output_cap::release_if_sole(watch)
        });
    }

    /// Moves the read cursor of shell `key` on by `by` bytes.
    pub(crate) fn advance_cursor(&self, key: Key, by: u64) {
        if let Some(s) = self.table.lock().shells.get_mut(&key) {
            s.cursor += by;
        }
    }

    /// Pids of the running background work (background shells, monitors,
    /// and the foreground commands of detached callers).
    pub(crate) fn background_pids(&self) -> Vec<u32> {
        let inner = self.table.lock();
        let mut pids: Vec<u32> = inner
            .shells
            .values()
            .filter(|s| s.is_running() && s.is_background_work())
            .filter_map(|s| s.pid())
            .collect();
        pids.sort_unstable();
        pids
    }

    /// A weak handle, for callbacks that must not keep it alive.
    pub(crate) fn downgrade(self: &Arc<Self>) -> Weak<Supervisor> {
        Arc::downgrade(self)
    }
}
