//! The sandbox of commands, in one place: the Landlock rules
//! (`rules.rs`), the seccomp filter (`seccomp.rs`), the read-only view
//! of the filesystem (`view.rs`), and the [`Restrictions`] that bundle
//! them (`restrict.rs`), which the launcher's child applies to itself
//! before its exec.
//!
//! **Entry point:** [`prepare`], called once when the tools are built: it
//! opens the rules, makes the view, and says what the kernel enforces.
//! The launcher (`os::launch`) then calls [`Restrictions::apply`] in each
//! child; nothing here starts a command.
//!
//! Below the launcher, above `sys`: the one process made here, the view's
//! helper, is a plain fork that runs no program (see `view.rs`).

mod restrict;
mod rules;
mod seccomp;
mod view;

use crate::config::SandboxPolicy;

pub(crate) use restrict::Restrictions;
pub(crate) use rules::RestrictError;
pub use rules::SandboxStatus;

/// A step of a sandboxed child's setup that can fail, as the launcher's
/// report names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SandboxStep {
    /// Entering the read-only view (`setns`).
    View,
    /// `no_new_privs`.
    NoNewPrivs,
    /// Dropping capabilities.
    Capabilities,
    /// Installing the seccomp filter.
    Seccomp,
    /// `landlock_restrict_self`.
    Landlock,
}

/// Why the sandbox cannot be had.
#[derive(Debug)]
pub(crate) enum PrepareError {
    /// The rules could not be made (a directory that cannot be opened, a
    /// ruleset the kernel refuses).
    Rules(RestrictError),
    /// The kernel enforces nothing, and best effort was not asked for.
    Unsupported,
}

/// The restrictions every command applies to itself under `policy` (each
/// with its own output file writable, for `/dev/stdout`), and what the
/// kernel enforces of them. `None` when it enforces nothing, which is an
/// error unless `policy` is best effort.
pub(crate) fn prepare(
    policy: &SandboxPolicy,
) -> Result<(Option<Restrictions>, SandboxStatus), PrepareError> {
    let (rules, status) = rules::rules(policy).map_err(PrepareError::Rules)?;
    if !enforced(status, policy.best_effort)? {
        return Ok((None, status));
    }
    // Where no view can be made, the sandbox runs without one and the
    // status says so (Landlock still refuses every write outside the roots).
    let view = view::View::make(rules::writable_dirs(policy).iter().map(|p| p.as_path())).ok();
    let status = status.with_view(view.is_some());
    Ok((
        Some(Restrictions::new(rules, !policy.network, view)),
        status,
    ))
}

/// Whether commands are restricted: when the kernel enforces something.
/// Enforcing nothing is an error unless best effort (the commands then
/// run unrestricted).
fn enforced(status: SandboxStatus, best_effort: bool) -> Result<bool, PrepareError> {
    if status.filesystem() {
        Ok(true)
    } else if best_effort {
        Ok(false)
    } else {
        Err(PrepareError::Unsupported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_without_landlock_is_refused_unless_best_effort() {
        let none = SandboxStatus::not_enforced();
        assert!(matches!(
            enforced(none, false),
            Err(PrepareError::Unsupported)
        ));
        assert!(!enforced(none, true).unwrap());
    }
}
