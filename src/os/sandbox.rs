//! The sandbox of commands: a Landlock ruleset (`landlock(7)`), prepared
//! once as a file descriptor when the tools are built, that every command
//! applies to itself in the child, before its exec (`launch/restrict.rs`).
//!
//! Landlock is an unprivileged access control: a process restricts itself,
//! and the restriction can never be lifted, only narrowed, by it or by any
//! process it starts. No thread of the host is ever restricted: the host
//! keeps every right it had, and each command is a Landlock domain of its
//! own, which reaches no process outside it (ABI 6 scoping).
//!
//! What is asked for (each right exists from the Landlock ABI named; an
//! older kernel enforces what it knows, and [`SandboxStatus`] says what):
//! - the filesystem (ABI 1; 2: linking and renaming across directories, 3:
//!   truncation, 5: ioctls on devices): read and execute everywhere, write
//!   in the write roots and the devices of [`DEVICES`], and write (not
//!   create or remove) the files under the "write files" roots, such as the
//!   output directory, which a command reaches again through `/dev/stdout`;
//! - TCP `connect(2)` and `bind(2)` (ABI 4), unless the network is allowed;
//! - signals and abstract unix sockets (ABI 6): scoped, so a command reaches
//!   no process outside its own domain, the host included.
//!
//! The rights of ABIs this crate was not tested with (pathname unix
//! sockets, UDP) are not asked for, so a newer kernel does not change what
//! commands may do.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use std::os::fd::OwnedFd;

use landlock::{
    make_bitflags, Access, AccessFs, AccessNet, BitFlags, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope, ABI,
};
use nix::libc;

use crate::config::SandboxPolicy;

/// The devices a command may open for writing (and use ioctls on): what
/// shells and common tools open. Those missing on this machine are left
/// out.
pub(crate) const DEVICES: [&str; 9] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
];

/// The newest ABI whose rights are asked for: the filesystem of ABI 5
/// (which ABI 6 keeps), TCP of ABI 4, the scopes of ABI 6.
const ASKED: ABI = ABI::V6;

/// What the sandbox enforces on this machine, as the kernel told it when
/// the tools were built.
///
/// ```
/// use bashtools::{BashTools, Sandbox};
/// let tools = BashTools::builder()
///     .sandbox(Sandbox::new().best_effort(true))
///     .build()?;
/// let status = tools.sandbox_status().expect("a sandbox was asked for");
/// if status.filesystem() {
///     assert!(status.abi() >= 1);
/// }
/// println!("{status}");
/// # Ok::<(), bashtools::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SandboxStatus {
    abi: u32,
    filesystem: bool,
    network: bool,
    scoping: bool,
}

impl SandboxStatus {
    /// The kernel's Landlock ABI version; 0 when it has no Landlock (not
    /// built in, or not enabled at boot).
    pub fn abi(&self) -> u32 {
        self.abi
    }

    /// Whether writes outside the write roots are refused (ABI 1).
    pub fn filesystem(&self) -> bool {
        self.filesystem
    }

    /// Whether TCP `connect` and `bind` are refused (ABI 4). False as well
    /// when the sandbox allows the network.
    pub fn network(&self) -> bool {
        self.network
    }

    /// Whether signals and abstract unix sockets are scoped to the sandbox
    /// (ABI 6).
    pub fn scoping(&self) -> bool {
        self.scoping
    }

    /// What a kernel without Landlock enforces: nothing.
    #[cfg(test)]
    pub(crate) fn not_enforced() -> SandboxStatus {
        SandboxStatus {
            abi: 0,
            filesystem: false,
            network: false,
            scoping: false,
        }
    }

    /// What a kernel of Landlock ABI `abi` enforces, with a ruleset made
    /// or not.
    fn of(abi: u32, made: bool, network_allowed: bool) -> SandboxStatus {
        let enforced = made && abi >= 1;
        SandboxStatus {
            abi,
            filesystem: enforced,
            network: enforced && abi >= 4 && !network_allowed,
            scoping: enforced && abi >= 6,
        }
    }
}

/// One line: the ABI, then what is enforced.
///
/// `Landlock ABI 7: filesystem restricted, network restricted, signals and
/// abstract sockets scoped`
impl fmt::Display for SandboxStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.filesystem {
            return f.write_str("not enforced: this kernel has no Landlock");
        }
        let state = |on: bool, yes: &'static str, no: &'static str| if on { yes } else { no };
        write!(
            f,
            "Landlock ABI {}: filesystem restricted, network {}, signals and abstract sockets {}",
            self.abi,
            state(self.network, "restricted", "not restricted"),
            state(self.scoping, "scoped", "not scoped"),
        )
    }
}

/// Why the ruleset could not be made.
#[derive(Debug)]
pub(crate) struct RestrictError {
    /// The directory that could not be opened, if that was it.
    pub path: Option<PathBuf>,
    pub error: io::Error,
}

impl RestrictError {
    fn landlock(err: landlock::RulesetError) -> RestrictError {
        RestrictError {
            path: None,
            error: io::Error::other(err),
        }
    }
}

/// The kernel's Landlock ABI version (`landlock_create_ruleset(2)` with
/// `LANDLOCK_CREATE_RULESET_VERSION`); 0 without Landlock.
fn kernel_abi() -> u32 {
    const VERSION: libc::c_uint = 1;
    // SAFETY: a null attribute and size 0 only ask for the version.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            VERSION,
        )
    };
    v.max(0) as u32
}

/// The ruleset of `policy`, as a descriptor every command applies to
/// itself; `write_files` are directories whose files may be written (not
/// created or removed). A kernel without Landlock is not an error: there
/// is no ruleset, and the status says nothing is enforced.
pub(crate) fn ruleset(
    policy: &SandboxPolicy,
    write_files: &[&Path],
) -> Result<(Option<OwnedFd>, SandboxStatus), RestrictError> {
    let all = AccessFs::from_all(ASKED);
    let mut ruleset = Ruleset::default()
        .handle_access(all)
        .map_err(RestrictError::landlock)?;
    if !policy.network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(ABI::V4))
            .map_err(RestrictError::landlock)?;
    }
    let ruleset = ruleset
        .scope(Scope::from_all(ASKED))
        .map_err(RestrictError::landlock)?
        .create()
        .map_err(RestrictError::landlock)?;
    let ruleset = add(ruleset, Path::new("/"), AccessFs::from_read(ASKED))?;
    let mut ruleset = policy
        .write_roots()
        .try_fold(ruleset, |r, root| add(r, root, all))?;
    let files = make_bitflags!(AccessFs::{ReadFile | WriteFile | Truncate});
    for dir in write_files {
        ruleset = add(ruleset, dir, files)?;
    }
    for device in DEVICES {
        let path = Path::new(device);
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        let access = if meta.is_dir() {
            all
        } else {
            make_bitflags!(AccessFs::{ReadFile | WriteFile | Truncate | IoctlDev})
        };
        ruleset = add(ruleset, path, access)?;
    }
    let fd: Option<OwnedFd> = ruleset.into();
    let abi = kernel_abi();
    let status = SandboxStatus::of(abi, fd.is_some(), policy.network);
    Ok((fd, status))
}

/// Adds the rule "`access` beneath `path`".
fn add(
    ruleset: RulesetCreated,
    path: &Path,
    access: BitFlags<AccessFs>,
) -> Result<RulesetCreated, RestrictError> {
    let fd = PathFd::new(path).map_err(|e| RestrictError {
        path: Some(path.to_path_buf()),
        error: io::Error::other(e),
    })?;
    ruleset
        .add_rule(PathBeneath::new(fd, access))
        .map_err(RestrictError::landlock)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_line_names_what_is_enforced() {
        let full = SandboxStatus {
            abi: 7,
            filesystem: true,
            network: true,
            scoping: true,
        };
        assert_eq!(
            full.to_string(),
            "Landlock ABI 7: filesystem restricted, network restricted, signals and abstract sockets scoped"
        );
        let old = SandboxStatus {
            abi: 3,
            filesystem: true,
            network: false,
            scoping: false,
        };
        assert_eq!(
            old.to_string(),
            "Landlock ABI 3: filesystem restricted, network not restricted, signals and abstract sockets not scoped"
        );
        let none = SandboxStatus {
            abi: 0,
            filesystem: false,
            network: false,
            scoping: false,
        };
        assert_eq!(
            none.to_string(),
            "not enforced: this kernel has no Landlock"
        );
    }
}
