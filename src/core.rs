//! What the tools share: the configuration, the shell table, the output
//! directory; starting a shell and stopping shells (SPEC sections 2 and 8).

use std::collections::HashSet;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use parking_lot::Mutex;

use crate::caller::Caller;
use crate::config::Config;
use crate::monitor::MonitorRun;
use crate::os::contain::Contain;
use crate::os::outdir::OutputDir;
use crate::os::reaper;
use crate::os::{cap, group, spawn};
use crate::shells::table::{Ended, Shell, StopReason, Table};
use crate::tasks::{TaskInfo, TaskStatus, Tasks};
use crate::{gate, texts};

/// How long to wait for a group to go after SIGKILL. KILL cannot be caught,
/// so only a process stuck in the kernel (uninterruptible sleep) outlasts it.
const AFTER_KILL: Duration = Duration::from_secs(10);

pub(crate) struct Core {
    pub config: Config,
    pub table: Arc<Table>,
    pub outdir: OutputDir,
    /// Where the commands are held (cgroups or sessions), and what ended
    /// commands left running.
    pub contain: Arc<Contain>,
    /// The N of the next `bash_N`.
    next_bash: AtomicU64,
    /// Names the files of foreground commands.
    next_file: AtomicU64,
    /// The reader threads of monitors, joined by `stop_all` so every end
    /// notice has been sent when it returns.
    readers: Mutex<Vec<JoinHandle<()>>>,
}

/// What [`Core::start`] makes of a command.
pub(crate) struct StartSpec<'a> {
    pub command: &'a str,
    pub description: Option<&'a str>,
    pub cwd: &'a Path,
    pub caller: &'a Caller,
    /// `Some(bash_N)` (or `monitor_N`) to start in the background at once.
    pub id: Option<String>,
    /// A monitor: stdout goes to `stdout`, and its end notice is its reader's.
    pub monitor: bool,
    /// Where stdout goes instead of the output file (a monitor's pipe).
    pub stdout: Option<OwnedFd>,
}

impl Core {
    pub(crate) fn new(config: Config, outdir: OutputDir) -> Core {
        // Containment: cgroups or sessions, and the keeper.
        let contain = Arc::new(Contain::new(outdir.path(), config.kill_grace));
        Core {
            config,
            table: Arc::new(Table::default()),
            contain,
            outdir,
            next_bash: AtomicU64::new(1),
            next_file: AtomicU64::new(1),
            readers: Mutex::new(Vec::new()),
        }
    }

    /// The next `bash_N`: from the registry when there is one, so IDs are
    /// unique across every `BashTools` sharing it.
    pub(crate) fn next_bash_id(&self) -> String {
        match &self.config.tasks {
            Some(tasks) => tasks.next_id("bash"),
            None => format!("bash_{}", self.next_bash.fetch_add(1, Ordering::Relaxed)),
        }
    }

    /// Whether a background shell's end will be delivered as a notification.
    pub(crate) fn notifies(&self) -> bool {
        self.config.tasks.is_some()
    }

    /// Registers background shell `key` in the registry as `id`. Called
    /// before the shell can be reaped as a background shell (before the
    /// spawn, or under the table lock when a foreground one moves), so its
    /// end always finds its entry.
    pub(crate) fn register_task(self: &Arc<Self>, shell: &Shell, key: u64) {
        let (Some(tasks), Some(id)) = (&self.config.tasks, &shell.id) else {
            return;
        };
        let core = Arc::downgrade(self);
        tasks.insert(
            TaskInfo {
                id: id.clone(),
                kind: if shell.monitor { "monitor" } else { "bash" }.to_string(),
                name: None,
                description: shell
                    .description
                    .clone()
                    .unwrap_or_else(|| shell.command.clone()),
                status: TaskStatus::Running,
                report: None,
                error: None,
                recipient: shell.recipient.clone(),
            },
            shell.call.clone(),
            Some(Arc::new(move || {
                if let Some(core) = core.upgrade() {
                    core.stop(&[key], StopReason::Killed);
                }
            })),
        );
    }

    /// The text and label of shell `id`'s end notification with `status`.
    pub(crate) fn notification(&self, id: &str, status: &str) -> Option<(String, String)> {
        let inner = self.table.lock();
        let shell = &inner.shells[&inner.by_id(id)?];
        let code = shell
            .exit_code()
            .unwrap_or(if status == "completed" { 0 } else { 1 });
        Some(Ended::with(shell, status, code)?.texts())
    }

    /// The end notification of a background shell (SPEC section 5).
    fn notify_end(tasks: &Tasks, ended: Ended) {
        let (text, label) = ended.texts();
        tasks.finish_with(&ended.id, &ended.status, text, label);
    }

    /// The directory a command runs in: the call's, else the caller's, else
    /// the configured one; relative paths are taken from the configured one.
    pub(crate) fn resolve_cwd(
        &self,
        arg: Option<&str>,
        caller: &Caller,
    ) -> Result<PathBuf, String> {
        let base = &self.config.working_directory;
        let dir = match (arg, &caller.working_directory) {
            (Some(a), _) => base.join(a),
            (None, Some(c)) => base.join(c),
            (None, None) => base.clone(),
        };
        match std::fs::metadata(&dir) {
            Ok(m) if m.is_dir() => Ok(dir),
            Ok(_) => Err(texts::not_a_directory(&dir)),
            Err(_) => Err(texts::no_such_directory(&dir)),
        }
    }

    /// The gates of SPEC section 3: `allowed_commands`, then the validator.
    pub(crate) fn check_gates(&self, command: &str, cwd: &Path) -> Result<(), String> {
        if let Some(allowed) = &self.config.allowed_commands {
            gate::check_allowed(command, allowed)?;
        }
        if let Some(validator) = &self.config.validator {
            let verdict =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| validator(command, cwd)));
            match verdict {
                Ok(Ok(())) => {}
                Ok(Err(reason)) => return Err(texts::refused(&reason)),
                Err(_) => return Err(texts::VALIDATOR_PANICKED.to_string()),
            }
        }
        Ok(())
    }

    /// Starts a command and records it; returns its key. Nothing is left
    /// behind when it fails.
    pub(crate) fn start(self: &Arc<Self>, spec: StartSpec<'_>) -> Result<u64, String> {
        let file_name = match &spec.id {
            Some(id) => format!("{id}.output"),
            None => format!(
                "fg-{}.output",
                self.next_file.fetch_add(1, Ordering::Relaxed)
            ),
        };
        let (path, file) = self
            .outdir
            .create_file(&file_name)
            .map_err(|e| texts::spawn_failed(&e))?;
        let mut shell = Shell::new(
            spec.command.to_string(),
            path.clone(),
            spec.caller.recipient.clone(),
        );
        shell.description = spec.description.map(str::to_string);
        shell.call = spec.caller.call.clone();
        shell.detached = spec.caller.detached;
        shell.id = spec.id;
        shell.background = shell.id.is_some();
        shell.monitor = spec.monitor;
        let id = shell.id.clone();
        let key = {
            let mut inner = self.table.lock();
            if inner.closed {
                drop(inner);
                let _ = std::fs::remove_file(&path);
                return Err(texts::STOPPED.to_string());
            }
            let key = inner.insert(shell);
            self.register_task(&inner.shells[&key], key);
            key
        };
        let forget = |core: &Core| {
            core.contain.forget(key);
            core.table.lock().remove(key);
            let _ = std::fs::remove_file(&path);
            if let (Some(tasks), Some(id)) = (&core.config.tasks, &id) {
                tasks.remove(id);
            }
        };
        // Containment: a cgroup for the command, joined before it runs.
        let entering = self.contain.enter(key);
        let spawned = spawn::prepare(
            spawn::SpawnSpec {
                command: spec.command,
                cwd: spec.cwd,
                output: &file,
                stdout: spec.stdout,
                mark: self.contain.mark(),
                join: entering.cell.as_ref().map(|cell| spawn::Join {
                    cgroup: &cell.dir,
                    startup: &cell.startup,
                    env: cell.env.clone(),
                }),
            },
            &self.config,
        )
        .and_then(|launch| {
            let table = self.table.clone();
            let tasks = self.config.tasks.clone();
            let contain = self.contain.clone();
            let core = Arc::downgrade(self);
            let watch = cap::watch(
                &path,
                self.config.max_output_bytes,
                Box::new(move || {
                    if let Some(core) = core.upgrade() {
                        core.stop(&[key], StopReason::OutputCap);
                    }
                }),
            );
            reaper::init()?.spawn(
                || launch.spawn(),
                Box::new(move |exit| {
                    // Containment: an empty cell is removed now; the cap
                    // keeps watching while a lingering tree can write.
                    contain.leader_exited(key, Box::new(move || cap::unwatch(watch)));
                    let ended = table.record_exit(key, exit);
                    if let (Some(tasks), Some(ended)) = (&tasks, ended) {
                        Core::notify_end(tasks, ended);
                    }
                }),
            )
        });
        let pid = match spawned {
            Ok(pid) => pid,
            Err(e) => {
                forget(self);
                return Err(texts::spawn_failed(&e));
            }
        };
        let closed = {
            let mut inner = self.table.lock();
            if let Some(s) = inner.shells.get_mut(&key) {
                s.pid = pid;
            }
            self.contain.spawned(key, pid);
            inner.closed
        };
        if closed {
            // stop_all ran while we were forking and could not see this pid:
            // stop it here. It did start, so its result says how it ended.
            self.stop(&[key], StopReason::StopAll);
        }
        Ok(key)
    }

    /// Stops the shells of `keys`: SIGTERM to each group, SIGKILL after
    /// `kill_grace` to whatever is left of it, and returns once the leaders
    /// are reaped and the groups are gone (or `AFTER_KILL` passed). Returns
    /// the keys that were running when asked, so were stopped by this call.
    pub(crate) fn stop(&self, keys: &[u64], reason: StopReason) -> Vec<u64> {
        self.stop_groups(keys, HashSet::new(), reason)
    }

    /// [`stop`](Self::stop), plus the groups `pgids` whose leaders have
    /// already been reaped (what ended commands left running in session
    /// mode). `keys` may name commands whose records are gone: their cells
    /// (lingering trees) are stopped too.
    fn stop_groups(&self, keys: &[u64], mut pgids: HashSet<u32>, reason: StopReason) -> Vec<u64> {
        let mut marked = Vec::new();
        // Only spawned shells are waited for: one still being spawned by
        // another thread (pid 0) is stopped by that thread (see `start`).
        let mut spawned = Vec::new();
        // Containment: commands held in a cell are signalled and waited for
        // through it; their leaders are signalled alone, by the reaper.
        let mut cells = Vec::new();
        let mut leaders = HashSet::new();
        let mut forgotten = Vec::new();
        {
            let mut inner = self.table.lock();
            for &key in keys {
                let in_cell = self.contain.in_cell(key);
                let Some(shell) = inner.shells.get_mut(&key) else {
                    // A command whose record is gone: its lingering tree.
                    if in_cell {
                        cells.push(key);
                    } else {
                        forgotten.push(key);
                    }
                    continue;
                };
                if shell.pid == 0 {
                    continue;
                }
                spawned.push(key);
                if shell.is_running() {
                    shell.stop.get_or_insert(reason);
                    marked.push(key);
                }
                if in_cell {
                    cells.push(key);
                    leaders.insert(shell.pid);
                } else {
                    pgids.insert(shell.pid);
                }
            }
        }
        if !forgotten.is_empty() {
            pgids.extend(self.contain.lingering_sessions(&forgotten));
        }
        // A stopped process (SIGSTOP, or SIGTTIN from a terminal read)
        // handles TERM only once it runs again: CONT right after TERM.
        for signal in [Signal::SIGTERM, Signal::SIGCONT] {
            self.signal_all(&pgids, &leaders, &cells, signal);
        }
        let deadline = Instant::now() + self.config.kill_grace;
        let inner = self.table.lock();
        let (inner, _) = self.table.wait_exited(inner, &spawned, Some(deadline));
        drop(inner);
        let left = group::wait_gone(&pgids, deadline);
        let left_cells = self.contain.wait_gone(&cells, deadline);
        if !left.is_empty() || !left_cells.is_empty() {
            self.signal_all(&left, &leaders, &[], Signal::SIGKILL);
            self.contain.kill(&left_cells);
            let after = Instant::now() + AFTER_KILL;
            let inner = self.table.lock();
            let (inner, _) = self.table.wait_exited(inner, &spawned, Some(after));
            drop(inner);
            group::wait_gone(&left, after);
            self.contain.wait_gone(&left_cells, after);
        }
        self.contain.release(keys);
        marked
    }

    /// `signal` to the sessions `pgids` (their groups and the members that
    /// left them), to the unreaped `leaders` alone, and to every member of
    /// the cells of `cells` but those leaders.
    fn signal_all(
        &self,
        pgids: &HashSet<u32>,
        leaders: &HashSet<u32>,
        cells: &[u64],
        signal: Signal,
    ) {
        for &pgid in pgids {
            self.signal_group(pgid, signal);
            group::signal_session(pgid, signal);
        }
        if let Some(reaper) = reaper::get() {
            for &pid in leaders {
                reaper.signal_leader(pid, signal);
            }
        }
        self.contain.signal(cells, signal, leaders);
    }

    /// Whether shell `key` has ended while processes it started still run
    /// (`kill_shell` stops those too).
    pub(crate) fn lingers(&self, key: u64) -> bool {
        self.contain.lingers(key)
    }

    /// Signals a group: through the reaper while its leader is unreaped (a
    /// pid we own cannot have been recycled); after that only if `/proc`
    /// still shows live members of it, which keep the group id from being
    /// reused (Linux frees a pid number only when no process uses it as a
    /// pid, group or session id).
    fn signal_group(&self, pgid: u32, signal: Signal) {
        if reaper::get().is_some_and(|r| r.signal_group(pgid, signal)) {
            return;
        }
        let one: HashSet<u32> = [pgid].into();
        if !group::live_members(&one).is_empty() {
            group::killpg_checked(pgid, signal);
        }
    }

    /// Starts the reader thread of a monitor whose command is running. If
    /// the thread cannot start, the monitor is stopped.
    pub(crate) fn spawn_reader(&self, id: &str, run: MonitorRun) -> std::io::Result<()> {
        let key = run.key;
        let spawned = std::thread::Builder::new()
            .name(format!("bashtools-{id}"))
            .spawn(move || run.run());
        match spawned {
            Ok(handle) => {
                let mut readers = self.readers.lock();
                readers.retain(|h| !h.is_finished());
                readers.push(handle);
                Ok(())
            }
            Err(e) => {
                self.stop(&[key], StopReason::Killed);
                Err(e)
            }
        }
    }

    /// Stops every running shell and refuses new ones, and stops what ended
    /// commands left running in their groups. Idempotent.
    pub(crate) fn stop_all(&self) {
        let mut keys: Vec<u64> = {
            let mut inner = self.table.lock();
            inner.closed = true;
            // The table's ring of ended groups is not needed: containment
            // knows every command that may have left something running.
            inner.finished_groups.clear();
            inner
                .shells
                .iter()
                .filter(|(_, s)| s.is_running())
                .map(|(&k, _)| k)
                .collect()
        };
        // Containment: every tree an ended command left running, however
        // many commands ran since (cells, or sessions with members left).
        let lingering_keys = self.contain.lingering_keys();
        let lingering = self.contain.lingering_sessions(&lingering_keys);
        keys.extend(lingering_keys);
        if !keys.is_empty() || !lingering.is_empty() {
            self.stop_groups(&keys, lingering, StopReason::StopAll);
        }
        let readers = std::mem::take(&mut *self.readers.lock());
        let me = std::thread::current().id();
        for r in readers {
            // A reader never calls stop_all, but the embedder's code could run
            // on it (a drop of the last BashTools held there): never join self.
            if r.thread().id() != me {
                let _ = r.join();
            }
        }
    }

    /// Pids of the running background shells and of the foreground commands
    /// of detached callers (SPEC section 8).
    pub(crate) fn background_pids(&self) -> Vec<u32> {
        let inner = self.table.lock();
        let mut pids: Vec<u32> = inner
            .shells
            .values()
            .filter(|s| s.is_running() && s.pid != 0 && (s.background || s.detached))
            .map(|s| s.pid)
            .collect();
        pids.sort_unstable();
        pids
    }
}
