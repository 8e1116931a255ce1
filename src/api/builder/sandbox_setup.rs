//! The sandbox at `build()`: its directories resolved, its private
//! temporary directory made, its Landlock ruleset and read-only view
//! prepared.

use std::path::Path;

use crate::config::{Sandbox, SandboxPolicy};
use crate::error::Error;
use crate::os::launch::view::View;
use crate::os::launch::Restrictions;
use crate::os::outdir::OutputDir;
use crate::os::sandbox::{self, SandboxStatus};

/// The sandbox's directories, resolved, and its private temporary
/// directory, made under `root` (mode 0700, removed with the tools).
pub(super) fn resolve_sandbox(
    sandbox: &Sandbox,
    working_directory: &Path,
    root: &Path,
) -> Result<(SandboxPolicy, OutputDir), Error> {
    let resolve = |dir: &Path| {
        dir.canonicalize()
            .map_err(|e| Error::sandbox(Some(dir.to_path_buf()), e))
    };
    let allow_write = sandbox
        .get_allow_write()
        .iter()
        .map(|dir| resolve(dir))
        .collect::<Result<_, _>>()?;
    let tmp = OutputDir::create(root).map_err(|e| Error::sandbox(Some(root.to_path_buf()), e))?;
    let policy = SandboxPolicy {
        working_directory: resolve(working_directory)?,
        allow_write,
        tmp: resolve(tmp.path())?,
        network: sandbox.is_network_allowed(),
        best_effort: sandbox.is_best_effort(),
    };
    Ok((policy, tmp))
}

/// The restrictions every command applies to itself under `policy` (each
/// with its own output file writable, for `/dev/stdout`). `None` when the
/// kernel enforces nothing, which is an error unless best effort.
pub(super) fn prepare_sandbox(
    policy: &SandboxPolicy,
) -> Result<(Option<Restrictions>, SandboxStatus), Error> {
    let (rules, status) = sandbox::rules(policy).map_err(|e| Error::sandbox(e.path, e.error))?;
    if !enforced(status, policy.best_effort)? {
        return Ok((None, status));
    }
    // Where no view can be made, the sandbox runs without one and the
    // status says so (Landlock still refuses every write outside the roots).
    let view = View::make(sandbox::writable_dirs(policy).iter().map(|p| p.as_path())).ok();
    let status = status.with_view(view.is_some());
    Ok((
        Some(Restrictions::new(rules, !policy.network, view)),
        status,
    ))
}

/// Whether commands are restricted: when the kernel enforces something.
/// Enforcing nothing is an error unless best effort (the commands then
/// run unrestricted).
pub(super) fn enforced(status: SandboxStatus, best_effort: bool) -> Result<bool, Error> {
    if status.filesystem() {
        Ok(true)
    } else if best_effort {
        Ok(false)
    } else {
        Err(Error::sandbox_unsupported())
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn a_kernel_without_landlock_fails_the_build_unless_best_effort() {
        let none = SandboxStatus::not_enforced();
        let err = enforced(none, false).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::SandboxUnsupported);
        assert!(err.to_string().contains("no Landlock"), "{err}");
        assert!(!enforced(none, true).unwrap());
    }
}
