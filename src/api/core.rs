//! What every handle of one `BashTools` shares: the configuration, the
//! registry, the supervisor, the IDs, and the end of the tools. The
//! operations on it are in the files beside this one, one concept each:
//! `start.rs` (gates, directories, starting), `foreground.rs` (running
//! and settling a foreground command), `reads.rs` (what a shell wrote,
//! and its state), `stop.rs` (killing a shell), `monitor.rs` (starting a
//! monitor).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::Mutex;

use super::types::CallError;
use crate::config::Config;
use crate::os::files::outdir::OutputDir;
use crate::os::process::Process;
use crate::shells::{Ended, Key, Kind, Shell, StopReason, Supervisor};
use crate::status::TaskStatus;
use crate::tasks::{TaskInfo, Tasks};
use crate::texts;

/// The policy lines are judged by, and who is asked.
pub(crate) struct Gates {
    /// `None`: no gate at all (no `allowed_commands`, no rules).
    pub policy: Option<crate::policy::Policy>,
    /// Asked when a line needs approval.
    pub approver: Option<Arc<crate::policy::Approver>>,
}

pub(crate) struct Core {
    pub config: Arc<Config>,
    pub gates: Gates,
    pub tasks: Option<Tasks>,
    pub shells: Arc<Supervisor>,
    /// The N of the next `bash_N` when there is no registry to ask.
    pub(super) next_bash: AtomicU64,
    /// The reader threads of monitors, joined by `stop_all` so every end
    /// notice has been sent when it returns.
    pub(super) readers: Mutex<Vec<JoinHandle<()>>>,
    /// With `persist_working_directory`: where each recipient's last
    /// foreground command ended.
    pub(super) last_dirs: Mutex<HashMap<String, LastDir>>,
    /// With `persist_environment`: each recipient's carried variables.
    pub(super) carried: Mutex<HashMap<String, Kept>>,
    /// The secrets masked in every text the model reads.
    pub(crate) secrets: crate::secrets::Shared,
    /// The prefixes each session's person allowed *always* (policy).
    pub(super) always: Mutex<HashMap<String, Vec<crate::policy::Rule>>>,
}

impl Core {
    pub(crate) fn new(
        config: Arc<Config>,
        gates: Gates,
        tasks: Option<Tasks>,
        outdir: OutputDir,
        process: Arc<dyn Process>,
    ) -> Arc<Core> {
        let secrets = crate::secrets::shared(crate::secrets::Secrets::new(secret_values(&config)));
        let on_end = {
            let (tasks, secrets) = (tasks.clone(), secrets.clone());
            Arc::new(move |ended: Ended| {
                if let Some(tasks) = &tasks {
                    notify_end(tasks, &ended, &secrets.read());
                }
            })
        };
        let shells = Arc::new(Supervisor::new(
            process,
            outdir,
            config.kill_grace,
            config.max_output_bytes,
            on_end,
        ));
        Arc::new(Core {
            config,
            gates,
            tasks,
            shells,
            next_bash: AtomicU64::new(1),
            readers: Mutex::new(Vec::new()),
            always: Mutex::new(HashMap::new()),
            secrets,
            last_dirs: Mutex::new(HashMap::new()),
            carried: Mutex::new(HashMap::new()),
        })
    }

    /// The next `bash_N`: from the registry when there is one, so IDs are
    /// unique across every `BashTools` sharing it.
    pub(crate) fn next_bash_id(&self) -> String {
        match &self.tasks {
            Some(tasks) => tasks.next_id("bash"),
            None => format!("bash_{}", self.next_bash.fetch_add(1, Ordering::Relaxed)),
        }
    }

    /// Whether a background shell's end will be delivered as a notification.
    pub(crate) fn notifies(&self) -> bool {
        self.tasks.is_some()
    }

    pub(crate) fn check_open(&self) -> Result<(), CallError> {
        if self.shells.table().lock().is_closed() {
            Err(CallError::Closed)
        } else {
            Ok(())
        }
    }

    /// Registers background shell `key` in the registry. Run under the
    /// table's lock (see [`Supervisor::start`]), so its end always finds
    /// its entry.
    pub(crate) fn register(&self, shell: &Shell, key: Key) {
        let (Some(tasks), Some(id)) = (&self.tasks, shell.id()) else {
            return;
        };
        let shells = self.shells.downgrade();
        tasks.insert(
            TaskInfo {
                id: id.to_string(),
                kind: if shell.kind() == Kind::Monitor {
                    "monitor"
                } else {
                    "bash"
                }
                .to_string(),
                name: None,
                description: shell.what().to_string(),
                status: TaskStatus::Running,
                report: None,
                error: None,
                recipient: shell.recipient().to_string(),
            },
            shell.call().map(str::to_string),
            Some(Arc::new(move || {
                if let Some(shells) = shells.upgrade() {
                    shells.stop(&[key], StopReason::Killed);
                }
            })),
        );
    }

    /// Keeps a monitor's reader thread, to be joined by `stop_all`.
    pub(crate) fn keep_reader(&self, handle: JoinHandle<()>) {
        let mut readers = self.readers.lock();
        readers.retain(|h| !h.is_finished());
        readers.push(handle);
    }

    /// Stops every running shell; the tools stay usable.
    pub(crate) fn stop_all(&self) {
        self.shells.stop_all();
        self.join_readers();
    }

    /// Ends the tools: stops everything and refuses every later call.
    pub(crate) fn close(&self) {
        self.shells.close();
        self.shells.process().close();
        self.join_readers();
    }

    fn join_readers(&self) {
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
}

/// The end notification of a background shell.
fn notify_end(tasks: &Tasks, ended: &Ended, secrets: &crate::secrets::Secrets) {
    let summary = match ended.out_of_memory {
        Some(limit) => texts::out_of_memory_summary(&ended.what, limit),
        None => texts::shell_summary(&ended.what, ended.status, ended.code),
    };
    let summary = secrets.mask(&summary).into_owned();
    let text = texts::end_notification(
        &ended.id,
        ended.call.as_deref(),
        &ended.output,
        ended.status,
        &summary,
    );
    tasks.finish_with(&ended.id, ended.status, text, summary);
}

/// Whether variable `name` is secret: named by `redact_env`, or by the
/// automatic rule while it is on.
fn is_secret(config: &Config, name: &str) -> bool {
    config.redact_names.iter().any(|n| n == name)
        || config.redact_auto && crate::secrets::is_secret_name(name)
}

/// The secrets of the commands' environment at start (README, "Secrets"): the
/// variables named by `redact_env`, those whose name says so (unless
/// `redact_auto` is off), and the host's own values.
fn secret_values(config: &Config) -> Vec<(String, Vec<u8>)> {
    use std::os::unix::ffi::OsStrExt;
    let mut found: Vec<(String, Vec<u8>)> = crate::os::bash::spawn::base_environment(config)
        .into_iter()
        .filter_map(|(k, v)| {
            let name = k.to_str()?;
            is_secret(config, name).then(|| (name.to_string(), v.as_bytes().to_vec()))
        })
        .collect();
    found.extend(
        config
            .redact_values
            .iter()
            .map(|v| ("value".to_string(), v.as_bytes().to_vec())),
    );
    found
}

impl Core {
    /// `text` with every secret masked (README, "Secrets").
    pub(crate) fn mask(&self, text: String) -> String {
        let secrets = self.secrets.read();
        match secrets.mask(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(masked) => masked,
        }
    }

    /// Adds the secrets among `carried` (a session's carried variables):
    /// from the next command on, their values are masked too.
    pub(crate) fn learn_secrets<'a>(
        &self,
        carried: impl Iterator<Item = (&'a std::ffi::OsStr, &'a std::ffi::OsStr)>,
    ) {
        use std::os::unix::ffi::OsStrExt;
        let new: Vec<(String, Vec<u8>)> = carried
            .filter_map(|(k, v)| {
                let name = k.to_str()?;
                let value = v.as_bytes();
                (is_secret(&self.config, name) && value.len() >= crate::secrets::MIN_SECRET_BYTES)
                    .then(|| (name.to_string(), value.to_vec()))
            })
            .collect();
        if new.is_empty() {
            return;
        }
        let mut secrets = self.secrets.write();
        if new
            .iter()
            .all(|(_, v)| secrets.pairs().any(|(_, known)| known == *v))
        {
            return;
        }
        let all: Vec<(String, Vec<u8>)> = secrets.pairs().chain(new).collect();
        *secrets = Arc::new(crate::secrets::Secrets::new(all));
    }
}

/// Where a recipient's last foreground command ended, and the caller's own
/// working directory it started from: the record holds only while the
/// caller still names that one.
pub(crate) struct LastDir {
    pub(super) dir: PathBuf,
    pub(super) base: Option<PathBuf>,
}

/// A recipient's carried environment: a value to set, or `None` to unset.
pub(crate) type Carried =
    std::collections::BTreeMap<std::ffi::OsString, Option<std::ffi::OsString>>;

/// A recipient's carried environment, the listing it was last worked out
/// from, and what that left out: a command that ends with the same listing
/// comes to the same, which is known without reading it (most commands
/// export nothing). (The result depends on the listing alone: what a
/// command starts with is the base and what this same listing carried.)
#[derive(Default)]
pub(crate) struct Kept {
    pub(super) carried: Carried,
    pub(super) exports: crate::os::bash::lastdir::Exports,
    pub(super) not_kept: Vec<super::types::NotKept>,
}
