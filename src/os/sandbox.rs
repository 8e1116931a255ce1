//! The sandbox of commands: a Landlock ruleset (`landlock(7)`) applied to
//! one thread, whose children — the commands, and everything they start —
//! inherit it (see `spawner`).
//!
//! Landlock is an unprivileged access control: a thread restricts itself,
//! and the restriction can never be lifted, only narrowed, by it or by any
//! process it starts. It is per thread, which is what makes a sandbox for
//! commands cheap: one thread of the host is restricted once, `posix_spawn`
//! from that thread starts restricted children, and the host's other
//! threads keep every right they had.
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
//!   no process outside the sandbox, the host included.
//!
//! The rights of ABIs this crate was not tested with (pathname unix
//! sockets, UDP) are not asked for, so a newer kernel does not change what
//! commands may do. Restricting also sets `no_new_privs` (`prctl(2)`): a
//! set-user-ID program run by a command gains no privileges.
//!
//! A note for code that hands a command a descriptor of the host by path:
//! `/proc/HOSTPID/fd/N` is refused to a sandboxed process (Landlock checks
//! it as `ptrace(2)` access to a process outside the sandbox), while
//! `/proc/self/fd/N` and `/proc/HOSTPID/task/TID/fd/N` of the restricted
//! thread (see `Spawner::proc_fd_path`) are allowed.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use landlock::{
    make_bitflags, Access, AccessFs, AccessNet, BitFlags, LandlockStatus, PathBeneath, PathFd,
    RestrictionStatus, Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus,
    Scope, ABI,
};

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

    /// From what restricting the thread reported.
    fn from_restriction(status: &RestrictionStatus, network_allowed: bool) -> SandboxStatus {
        let abi = match status.landlock {
            LandlockStatus::Available {
                effective_abi,
                kernel_abi,
            } => kernel_abi.unwrap_or(effective_abi as i32).max(0) as u32,
            _ => 0,
        };
        let enforced = status.ruleset != RulesetStatus::NotEnforced;
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

/// Why the calling thread could not be restricted.
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

/// Restricts the calling thread, for good, to `policy`; `write_files` are
/// directories whose files may be written (not created or removed). A
/// kernel without Landlock is not an error: the status says nothing is
/// enforced.
pub(crate) fn restrict_current_thread(
    policy: &SandboxPolicy,
    write_files: &[&Path],
) -> Result<SandboxStatus, RestrictError> {
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
    let status = ruleset.restrict_self().map_err(RestrictError::landlock)?;
    Ok(SandboxStatus::from_restriction(&status, policy.network))
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
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::process::{Command, Output};

    use super::*;
    use crate::os::spawner::Spawner;

    /// A fresh directory of this test's (resolved), removed on drop.
    struct Dir(PathBuf);
    impl Dir {
        fn new(name: &str) -> Dir {
            let dir = std::env::temp_dir().join(format!(
                "bashtools-sandbox-unit-{}-{name}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir(&dir).unwrap();
            Dir(dir.canonicalize().unwrap())
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn sh(script: &str) -> Output {
        Command::new("sh").args(["-c", script]).output().unwrap()
    }

    /// What containment needs of a sandbox: its startup file, a memory
    /// file of the host's, read by path, and its cgroup's `cgroup.procs`,
    /// an existing file written (see the module's doc).
    #[test]
    fn host_descriptors_by_the_threads_path_and_write_files_roots_work() {
        let work = Dir::new("work");
        let files = Dir::new("files");
        std::fs::write(files.0.join("procs"), "").unwrap();
        let policy = SandboxPolicy {
            working_directory: work.0.clone(),
            allow_write: Vec::new(),
            tmp: work.0.clone(),
            network: false,
            best_effort: true,
        };
        let roots = [files.0.clone()];
        let (spawner, status) = Spawner::start("test-sandbox", move || {
            let roots: Vec<&Path> = roots.iter().map(PathBuf::as_path).collect();
            restrict_current_thread(&policy, &roots)
        })
        .unwrap()
        .unwrap();
        if !status.filesystem() {
            println!("skipped: this kernel has no Landlock");
            return;
        }
        let mut memfd = tempfile_in_memory();
        memfd.write_all(b"startup\n").unwrap();
        let fd = memfd.as_raw_fd();
        let by_thread = spawner.proc_fd_path(fd);
        let by_host = format!("/proc/{}/fd/{fd}", std::process::id());
        let procs = files.0.join("procs");
        let made = files.0.join("made");
        let script = format!(
            "cat {thread}; cat {host} || echo host-refused; echo 0 > {procs} && echo wrote; \
             touch {made} || echo create-refused",
            thread = by_thread.display(),
            procs = procs.display(),
            made = made.display(),
            host = by_host,
        );
        let out = spawner.run(move || sh(&script)).unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(stdout, "startup\nhost-refused\nwrote\ncreate-refused\n");
        assert_eq!(std::fs::read_to_string(&procs).unwrap(), "0\n");
        assert!(!made.exists());
        // The host itself was never restricted.
        assert_eq!(
            String::from_utf8_lossy(&sh(&format!("cat {by_host}")).stdout),
            "startup\n"
        );
        drop(memfd);
    }

    fn tempfile_in_memory() -> std::fs::File {
        use nix::sys::memfd::{memfd_create, MemFdCreateFlag};
        let name = std::ffi::CStr::from_bytes_with_nul(b"bashtools-test\0").unwrap();
        std::fs::File::from(memfd_create(name, MemFdCreateFlag::MFD_CLOEXEC).unwrap())
    }

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
