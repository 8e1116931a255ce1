//! The sandbox at `build()`: its directories resolved, its private
//! temporary directory made, its Landlock ruleset and read-only view
//! prepared.

use std::path::Path;

use crate::config::{Sandbox, SandboxPolicy};
use crate::error::Error;
use crate::os::files::outdir::OutputDir;
use crate::os::sandbox::{self, PrepareError, Restrictions, SandboxStatus};

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

/// The restrictions every command applies to itself under `policy`, and
/// what the kernel enforces of them (`os::sandbox::prepare`).
pub(super) fn prepare_sandbox(
    policy: &SandboxPolicy,
) -> Result<(Option<Restrictions>, SandboxStatus), Error> {
    sandbox::prepare(policy).map_err(|e| match e {
        PrepareError::Rules(e) => Error::sandbox(e.path, e.error),
        PrepareError::Unsupported => Error::sandbox_unsupported(),
    })
}
