//! Stopping one shell (`kill_shell`): what is left of it, even after its
//! leader has ended.

use super::core::Core;
use super::types::{CallError, ShellInfo};
use crate::shells::StopReason;
use crate::status::TaskStatus;
use crate::tasks::StopRefused;

impl Core {
    /// Stops background shell `id` (its whole group) and returns its state.
    pub(crate) fn kill(&self, id: &str) -> Result<ShellInfo, CallError> {
        let key = self
            .key_of(id)
            .ok_or_else(|| CallError::UnknownId(id.to_string()))?;
        let not_running = |core: &Core| {
            let status = core.info(key).map_or(TaskStatus::Completed, |i| i.status);
            CallError::NotRunning {
                id: id.to_string(),
                status,
            }
        };
        let lingering = |core: &Core| {
            // Its leader has ended, but processes it started still run:
            // those are stopped, and the shell keeps the status it ended with.
            if core.shells.lingers(key) {
                core.shells.stop(&[key], StopReason::Killed);
                core.info(key)
                    .ok_or_else(|| CallError::UnknownId(id.to_string()))
            } else {
                Err(not_running(core))
            }
        };
        if self.info(key).is_some_and(|i| i.status.is_ended()) {
            return lingering(self);
        }
        if self.shells.stop(&[key], StopReason::Killed).is_empty() {
            // It ended on its own between the look-up and the signal.
            return lingering(self);
        }
        self.info(key)
            .ok_or_else(|| CallError::UnknownId(id.to_string()))
    }
}

impl Core {
    /// Asks registry entry `id` (a subagent, another `BashTools`'s shell)
    /// to stop; its ID and description when it was running.
    pub(crate) fn stop_entry(&self, id: &str) -> Result<(String, String), CallError> {
        let Some(tasks) = &self.tasks else {
            return Err(CallError::UnknownId(id.to_string()));
        };
        tasks.request_stop(id).map_err(|refused| match refused {
            StopRefused::Unknown => CallError::UnknownId(id.to_string()),
            StopRefused::NotRunning(id, status) => CallError::NotRunning { id, status },
            StopRefused::Panicked(id) => CallError::StopPanicked(id),
        })
    }
}
