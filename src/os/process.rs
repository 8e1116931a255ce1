//! The seam between the shells and the operating system, in the shells'
//! words: start a command, signal what it started, be told when it has
//! exited and when nothing of it is left, and where it ended.
//!
//! [`RealProcess`] is the kernel: the launcher, the reaper, containment by
//! cgroup or session, the keeper, the record of the directory a command
//! ends in — all of it stays behind this trait. The shells' fake
//! (`shells/fake.rs`, tests only) is a process whose exit the test decides,
//! so the supervisor's state machine — timeout → background, TERM → grace →
//! KILL, one end notice when stop and exit race, `stop_all` — is checked
//! without timing luck.

use std::collections::HashMap;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use nix::sys::signal::Signal;
use parking_lot::Mutex;

use crate::config::Config;
use crate::limits::{LimitError, Limits, Usage};
pub(crate) use crate::os::bash::lastdir::LastState;
use crate::os::bash::lastdir::{Record, Startup};
use crate::os::bash::spawn;
use crate::os::contain::{Contain, Containment, OnGone};
use crate::os::launch::Via;
use crate::os::reaper::{self, Exit};
use crate::os::sandbox::Restrictions;

pub(crate) use crate::os::contain::Key;

/// Whether `name` is one of the crate's own variables (the containment's
/// mark, the user's `BASH_ENV` kept aside), which no command's environment
/// carries to the next.
pub(crate) fn is_internal(name: &std::ffi::OsStr) -> bool {
    name == crate::os::contain::MARK_VAR || name == spawn::USER_BASH_ENV
}

/// Runs once, on another thread, when a command's leader has been reaped:
/// how it ended, and what the command cost (read from its cell then).
pub(crate) type EndHook = Box<dyn FnOnce(Exit, Usage) + Send>;

/// Starts commands and reaches what they started, by [`Key`].
pub(crate) trait Process: Send + Sync + 'static {
    /// Starts command `key`; returns its leader's pid, and with
    /// `want_pidfd` a pidfd of it, opened while the pid cannot have been
    /// reaped (and so recycled). `on_exit` runs once, on another thread,
    /// when the leader is reaped; `on_gone` once nothing of the command can
    /// run any more (at once after `on_exit`, or later when a tree it left
    /// running is gone).
    fn spawn(
        &self,
        key: Key,
        spec: spawn::SpawnSpec<'_>,
        want_pidfd: bool,
        on_exit: EndHook,
        on_gone: OnGone,
    ) -> io::Result<(u32, Option<OwnedFd>)>;
    /// Sends `signals`, in order, to everything the commands `keys`
    /// started, and to nothing else (SIGKILL ends a cgroup with
    /// `cgroup.kill`). One call for TERM and CONT finds the targets once.
    fn signal(&self, keys: &[Key], signals: &[Signal]);
    /// Waits until nothing is left of the commands `keys`, or the deadline
    /// (`None`: none). Returns those with something left.
    fn wait_gone(&self, keys: &[Key], deadline: Option<Instant>) -> Vec<Key>;
    /// Forgets what is known of the commands `keys` that have nothing left.
    fn release(&self, keys: &[Key]);
    /// The commands whose leaders have exited while processes they started
    /// still run.
    fn lingering(&self) -> Vec<Key>;
    /// Whether command `key` is one of those.
    fn lingers(&self, key: Key) -> bool;
    /// How the commands are held.
    fn containment(&self) -> Containment;
    /// The process limit every command gets, or why there is none.
    fn pids_limit(&self) -> Result<u64, crate::limits::NoPidsLimit>;
    /// The tools are closed and every command stopped: removes what holds
    /// them (the cgroups) now, not at the drop, which a host that exits
    /// with a handle still alive never reaches.
    fn close(&self) {}
    /// The cgroup of all the commands, in cgroup mode.
    fn cgroup(&self) -> Option<PathBuf>;
    /// The directory command `key` ended in and its exported variables,
    /// if it was started with `record_end` and its record holds them;
    /// forgets the record. Asked once, when a foreground command that
    /// ended on its own is settled.
    fn last_state(&self, key: Key) -> Option<LastState>;
    /// Forgets the record of the directory command `key` ends in (it is
    /// stopped, or moved to the background, where the directory does not
    /// carry over).
    fn forget_last_state(&self, key: Key);
}

/// The kernel: the launcher, the reaper, and the containment of each
/// command (a cgroup of its own, or its session).
pub(crate) struct RealProcess {
    config: Arc<Config>,
    /// What a sandbox applies to every command (in the child).
    restrictions: Option<Restrictions>,
    via: Via,
    contain: Arc<Contain>,
    /// The leader's pid of every running command.
    running: Arc<Mutex<HashMap<Key, u32>>>,
    /// The startup file that records where a command ends, with
    /// `persist_working_directory` (`None` without it, or if it could not
    /// be made: directories then do not persist).
    lastdir: Option<Startup>,
    /// The record of each command started with `record_end` and not yet
    /// asked.
    records: Mutex<HashMap<Key, Arc<Record>>>,
}

impl RealProcess {
    /// Containment for the commands whose output goes to `outdir` (the
    /// keeper removes it if the host dies), stopping with `config`'s grace;
    /// every command restricted by `restrictions` and budgeted by `limits`,
    /// and made `via` that way. Fails, naming the option, when a limit
    /// cannot be applied here.
    pub(crate) fn new(
        config: Arc<Config>,
        outdir: &Path,
        restrictions: Option<Restrictions>,
        via: Via,
        limits: Limits,
    ) -> Result<RealProcess, LimitError> {
        let contain = Arc::new(Contain::new(outdir, config.kill_grace, via, limits)?);
        let lastdir = (config.persist_working_directory || config.persist_environment)
            .then(|| Startup::new(config.persist_environment))
            .and_then(Result::ok);
        Ok(RealProcess {
            config,
            restrictions,
            via,
            contain,
            running: Arc::new(Mutex::new(HashMap::new())),
            lastdir,
            records: Mutex::new(HashMap::new()),
        })
    }

    /// Makes the empty record of where command `key` ends, when asked and
    /// the startup file exists.
    fn new_record(&self, key: Key, wanted: bool) -> io::Result<Option<Arc<Record>>> {
        if !wanted || self.lastdir.is_none() {
            return Ok(None);
        }
        let record = Arc::new(Record::new()?);
        self.records.lock().insert(key, record.clone());
        Ok(Some(record))
    }

    /// Starts one command: prepared outside the reaper's lock, launched
    /// inside it, so the pid cannot be reaped before its pidfd is open,
    /// nor before its containment knows it.
    #[allow(clippy::too_many_arguments)]
    fn start(
        &self,
        key: Key,
        spec: spawn::SpawnSpec<'_>,
        record: Option<&Record>,
        entering: &crate::os::contain::Entering,
        want_pidfd: bool,
        on_exit: EndHook,
        on_gone: OnGone,
    ) -> io::Result<(u32, Option<OwnedFd>)> {
        let place = spawn::Placement {
            record,
            cell: entering
                .cell
                .as_ref()
                .map(|c| (c, self.contain.namespaces())),
            v1: &entering.v1,
            mark: self.contain.mark(),
            lastdir: self.lastdir.as_ref(),
            restrictions: self.restrictions.as_ref(),
            via: self.via,
        };
        let launch = spawn::prepare(spec, place, &self.config)?;
        let mut pidfd = None;
        let (contain, running) = (&self.contain, &self.running);
        let (on_exit_contain, on_exit_running) = (self.contain.clone(), self.running.clone());
        let pid = reaper::init()?.spawn(
            || {
                let pid = launch.spawn()?;
                if want_pidfd {
                    pidfd = crate::os::sys::pidfd_open(pid);
                }
                running.lock().insert(key, pid);
                contain.spawned(key, pid);
                Ok(pid)
            },
            Box::new(move |exit, usage| {
                on_exit_running.lock().remove(&key);
                // The state first, then whoever waits is woken, then an
                // empty cell is removed; `on_gone` (the output cap's end)
                // waits while a lingering tree can write.
                let ended = on_exit_contain.leader_exited(key, on_gone, usage);
                // Not held while the waiter runs: an owner dropped by it
                // goes (and removes its cgroup) at once.
                drop(on_exit_contain);
                let cost = ended.cost();
                // A tree stopped at its memory limit was killed, every
                // process of it, even when its leader managed to end on its
                // own first (v1: the kernel kills one process, we the rest).
                let exit = match cost.out_of_memory {
                    Some(_) => reaper::Exit::Signal(nix::libc::SIGKILL),
                    None => exit,
                };
                on_exit(exit, cost);
                ended.finish();
            }),
        )?;
        // The next command's cell (and ruleset) is made while this one runs.
        self.contain.make_spare();
        if let Some(r) = &self.restrictions {
            r.make_spare();
        }
        Ok((pid, pidfd))
    }

    /// The leader's pid of each of `keys` while it is unreaped.
    fn leaders(&self, keys: &[Key]) -> Vec<Option<u32>> {
        // Only the pids of `keys`: the cost of a stop follows what it
        // stops, not how many commands run.
        let running = self.running.lock();
        keys.iter().map(|k| running.get(k).copied()).collect()
    }
}

impl Process for RealProcess {
    fn spawn(
        &self,
        key: Key,
        spec: spawn::SpawnSpec<'_>,
        want_pidfd: bool,
        on_exit: EndHook,
        on_gone: OnGone,
    ) -> io::Result<(u32, Option<OwnedFd>)> {
        let record = self.new_record(key, spec.record_end)?;
        // A cgroup for the command, joined before any of its code runs.
        let entering = match self.contain.enter(key, spec.limits.as_ref()) {
            Ok(e) => e,
            Err(e) => {
                self.forget_last_state(key);
                return Err(e);
            }
        };
        let started = self.start(
            key,
            spec,
            record.as_deref(),
            &entering,
            want_pidfd,
            on_exit,
            on_gone,
        );
        if started.is_err() {
            self.contain.forget(key);
            self.forget_last_state(key);
        }
        started
    }

    fn signal(&self, keys: &[Key], signals: &[Signal]) {
        self.contain.signal(keys, &self.leaders(keys), signals);
    }

    fn wait_gone(&self, keys: &[Key], deadline: Option<Instant>) -> Vec<Key> {
        self.contain.wait_gone(keys, &self.leaders(keys), deadline)
    }

    fn release(&self, keys: &[Key]) {
        self.contain.release(keys);
    }

    fn lingering(&self) -> Vec<Key> {
        self.contain.lingering_keys()
    }

    fn lingers(&self, key: Key) -> bool {
        self.contain.lingers(key)
    }

    fn containment(&self) -> Containment {
        self.contain.mode()
    }

    fn pids_limit(&self) -> Result<u64, crate::limits::NoPidsLimit> {
        self.contain.pids_limit()
    }

    fn close(&self) {
        self.contain.close();
    }

    fn cgroup(&self) -> Option<PathBuf> {
        self.contain.jail_dir().map(Path::to_path_buf)
    }

    fn last_state(&self, key: Key) -> Option<LastState> {
        Some(self.records.lock().remove(&key)?.read())
    }

    fn forget_last_state(&self, key: Key) {
        self.records.lock().remove(&key);
    }
}
