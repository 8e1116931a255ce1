//! Starting a monitor: a command whose stdout lines go, in batches, to the
//! registry as notifications, read by a thread of its own (`monitor.rs`
//! of the crate) until the command closes its stdout or the timeout.

use std::sync::Arc;
use std::time::Duration;

use nix::fcntl::{fcntl, FcntlArg, OFlag};

use super::core::Core;
use super::types::CallError;
use crate::caller::Caller;
use crate::deadline;
use crate::monitor::MonitorRun;
use crate::shells::{Kind, NewShell, Stdio, StopReason};

impl Core {
    /// Starts `command` as a monitor described by `description`, stopped
    /// after `timeout`, its events to `caller`'s recipient; returns its ID.
    /// The command has passed the gates already.
    pub(crate) fn start_monitor(
        self: &Arc<Self>,
        command: &str,
        description: &str,
        timeout: Duration,
        caller: &Caller,
        cwd: &std::path::Path,
    ) -> Result<String, CallError> {
        let Some(tasks) = self.tasks.clone() else {
            return Err(CallError::MonitorNeedsTasks);
        };
        let failed = |e: nix::Error| CallError::SpawnFailed(std::io::Error::from(e).into());
        let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(failed)?;
        // The reader must never block on a pipe that a grandchild holds open.
        fcntl(&read, FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).map_err(failed)?;
        let id = tasks.next_id("monitor");
        let key = self.start_shell(
            NewShell {
                command: command.to_string(),
                description: Some(description.to_string()),
                id: Some(id.clone()),
                kind: Kind::Monitor,
                recipient: caller.get_recipient().to_string(),
                call: caller.get_call().map(str::to_string),
                detached: caller.is_detached(),
                limits: None,
                carried: self.carried_for(caller.get_session()),
            },
            cwd,
            Stdio {
                stdout: Some(write),
                terminal: None,
                stdin: None,
                record_end: false,
            },
        )?;
        let output = self
            .info(key)
            .map(|i| i.output_file().to_path_buf())
            .unwrap_or_default();
        let run = MonitorRun {
            shells: self.shells.clone(),
            options: self.config.monitor_options.clone(),
            render: self.config.render_output,
            tasks,
            key,
            id: id.clone(),
            description: description.to_string(),
            recipient: caller.get_recipient().to_string(),
            call: caller.get_call().map(str::to_string),
            output,
            deadline: deadline::after(timeout),
            stdout: std::fs::File::from(read),
            secrets: self.secrets.clone(),
        };
        let spawned = std::thread::Builder::new()
            .name(format!("bashtools-{id}"))
            .spawn(move || run.run());
        match spawned {
            Ok(handle) => {
                self.keep_reader(handle);
                Ok(id)
            }
            Err(e) => {
                self.shells.stop(&[key], StopReason::Killed);
                Err(CallError::SpawnFailed(e.into()))
            }
        }
    }
}
