//! The sandbox of commands: a Landlock ruleset (`landlock(7)`) that every
//! command applies to itself in the child, before its exec
//! (`restrict.rs`). Its rules are opened once, when the tools are
//! built ([`Rules`]); each command's ruleset is made from them as a file
//! descriptor when it starts, with its own output file added.
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
//!   create or remove) the command's own output file, which it reaches
//!   again through `/dev/stdout`: nothing else of the private output
//!   directory, so no command writes another's output;
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

use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;

use landlock::{make_bitflags, Access, AccessFs, AccessNet, Scope, ABI};
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
    view: bool,
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

    /// Whether commands run in a read-only view of the filesystem, so that
    /// changing a file's mode, owner, times or extended attributes outside
    /// the write roots is refused too (`Read-only file system`): Landlock
    /// has no right for those. It needs Linux 5.12 and either
    /// `CAP_SYS_ADMIN` or unprivileged user namespaces.
    pub fn read_only_view(&self) -> bool {
        self.view
    }

    /// What a kernel without Landlock enforces: nothing.
    #[cfg(test)]
    pub(crate) fn not_enforced() -> SandboxStatus {
        SandboxStatus {
            abi: 0,
            filesystem: false,
            network: false,
            scoping: false,
            view: false,
        }
    }

    /// The status with the read-only view made or not.
    pub(crate) fn with_view(self, view: bool) -> SandboxStatus {
        SandboxStatus {
            view: view && self.filesystem,
            ..self
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
            view: false,
        }
    }
}

/// One line: the ABI, then what is enforced.
///
/// `Landlock ABI 7: filesystem restricted, network restricted, signals and
/// abstract sockets scoped; a read-only view outside the write roots`
impl fmt::Display for SandboxStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.filesystem {
            return f.write_str("not enforced: this kernel has no Landlock");
        }
        let state = |on: bool, yes: &'static str, no: &'static str| if on { yes } else { no };
        write!(
            f,
            "Landlock ABI {}: filesystem restricted, network {}, signals and abstract sockets {}; {}",
            self.abi,
            state(self.network, "restricted", "not restricted"),
            state(self.scoping, "scoped", "not scoped"),
            state(
                self.view,
                "a read-only view outside the write roots",
                "no read-only view (modes, owners, times and extended attributes outside the write roots can be changed)"
            ),
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

/// The rules of `policy`, opened once: every command gets a ruleset of its
/// own made from them ([`Rules::ruleset`]), with its own output file added.
/// A kernel without Landlock is not an error: there are no rules, and the
/// status says nothing is enforced.
pub(crate) fn rules(
    policy: &SandboxPolicy,
) -> Result<(Option<Rules>, SandboxStatus), RestrictError> {
    let abi = kernel_abi();
    let Some(asked) = abi_of(abi) else {
        return Ok((None, SandboxStatus::of(abi, false, policy.network)));
    };
    let all = AccessFs::from_all(asked).bits();
    let net = if policy.network || abi < 4 {
        0
    } else {
        AccessNet::from_all(asked).bits()
    };
    let scoped = if abi >= 6 {
        Scope::from_all(asked).bits()
    } else {
        0
    };
    let mut rules = Rules {
        attr: [all, net, scoped],
        rules: Vec::new(),
        file: make_bitflags!(AccessFs::{ReadFile | WriteFile | Truncate}).bits() & all,
        spare: parking_lot::Mutex::new(Vec::new()),
    };
    rules.add(Path::new("/"), AccessFs::from_read(asked).bits())?;
    for root in policy.write_roots() {
        rules.add(root, all)?;
    }
    let device =
        make_bitflags!(AccessFs::{ReadFile | WriteFile | Truncate | IoctlDev}).bits() & all;
    for device_path in DEVICES {
        let path = Path::new(device_path);
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        rules.add(path, if meta.is_dir() { all } else { device })?;
    }
    // One ruleset now: what the kernel refuses is an error at build, not
    // at each command's start.
    rules
        .ruleset(&[])
        .map_err(|error| RestrictError { path: None, error })?;
    Ok((Some(rules), SandboxStatus::of(abi, true, policy.network)))
}

/// The directories a command may write in: the write roots of `policy`
/// and the device directories of [`DEVICES`] this machine has. They stay
/// writable in the read-only view (`view.rs`).
pub(crate) fn writable_dirs(policy: &SandboxPolicy) -> Vec<PathBuf> {
    let devices = DEVICES
        .iter()
        .map(Path::new)
        .filter(|p| p.is_dir())
        .map(Path::to_path_buf);
    policy
        .write_roots()
        .map(Path::to_path_buf)
        .chain(devices)
        .collect()
}

/// The crate's name for ABI `abi`, at most the newest one asked for;
/// `None` without Landlock.
fn abi_of(abi: u32) -> Option<ABI> {
    Some(match abi {
        0 => return None,
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        _ => ASKED,
    })
}

/// What a sandboxed command may reach, as rule descriptors opened once
/// (`O_PATH`), from which each command's ruleset is made in a few system
/// calls: the same for every command but one rule, the command's own
/// output file, which it may write again through `/dev/stdout` while no
/// other command's output file, and nothing else of the private output
/// directory, is writable to it.
#[derive(Debug)]
pub(crate) struct Rules {
    /// `struct landlock_ruleset_attr`: the handled filesystem and network
    /// rights and the scopes, as this kernel knows them.
    attr: [u64; 3],
    /// Each rule: a directory (or device) and the rights beneath it.
    rules: Vec<(OwnedFd, u64)>,
    /// The rights on a command's own files.
    file: u64,
    /// A ruleset of the common rules made ahead, for the next command.
    spare: parking_lot::Mutex<Vec<OwnedFd>>,
}

/// `struct landlock_path_beneath_attr` (packed in the kernel's header).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// `LANDLOCK_RULE_PATH_BENEATH`.
const RULE_PATH_BENEATH: libc::c_int = 1;

impl Rules {
    fn add(&mut self, path: &Path, access: u64) -> Result<(), RestrictError> {
        let fd = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH)
            .open(path)
            .map_err(|error| RestrictError {
                path: Some(path.to_path_buf()),
                error,
            })?;
        self.rules.push((fd.into(), access));
        Ok(())
    }

    /// A ruleset of every rule, and read-write access to `files` (the
    /// command's own output file), as a descriptor the child applies to
    /// itself. The common rules come from a spare made while the last
    /// command ran ([`make_spare`](Self::make_spare)) when there is one:
    /// then the start adds one rule, not a dozen.
    pub(crate) fn ruleset(&self, files: &[BorrowedFd<'_>]) -> io::Result<OwnedFd> {
        let spare = self.spare.lock().pop();
        let ruleset = match spare {
            Some(fd) => fd,
            None => self.base()?,
        };
        for fd in files {
            add_rule(&ruleset, fd.as_raw_fd(), self.file)?;
        }
        Ok(ruleset)
    }

    /// Makes a ruleset of the common rules for the next command, unless
    /// one waits already. Called once a command has started, while it runs.
    pub(crate) fn make_spare(&self) {
        if !self.spare.lock().is_empty() {
            return;
        }
        if let Ok(fd) = self.base() {
            self.spare.lock().push(fd);
        }
    }

    /// A new ruleset of the common rules.
    fn base(&self) -> io::Result<OwnedFd> {
        // SAFETY: a struct of three u64 that lives across the call.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                self.attr.as_ptr(),
                std::mem::size_of_val(&self.attr),
                0u32,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a new descriptor the kernel just gave us.
        let ruleset = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        for (fd, access) in &self.rules {
            add_rule(&ruleset, fd.as_raw_fd(), *access)?;
        }
        Ok(ruleset)
    }
}

/// Adds "`access` beneath the file or directory open at `parent_fd`".
fn add_rule(ruleset: &OwnedFd, parent_fd: i32, allowed_access: u64) -> io::Result<()> {
    let attr = PathBeneathAttr {
        allowed_access,
        parent_fd,
    };
    // SAFETY: the attribute lives across the call; integers else.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0u32,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
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
            view: true,
        };
        assert_eq!(
            full.to_string(),
            "Landlock ABI 7: filesystem restricted, network restricted, signals and abstract sockets scoped; a read-only view outside the write roots"
        );
        let old = SandboxStatus {
            abi: 3,
            filesystem: true,
            network: false,
            scoping: false,
            view: false,
        };
        assert_eq!(
            old.to_string(),
            "Landlock ABI 3: filesystem restricted, network not restricted, signals and abstract sockets not scoped; no read-only view (modes, owners, times and extended attributes outside the write roots can be changed)"
        );
        let none = SandboxStatus::not_enforced().with_view(true);
        assert_eq!(
            none.to_string(),
            "not enforced: this kernel has no Landlock"
        );
    }
}
