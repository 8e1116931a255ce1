//! How a launch fails: the step of the child's setup that did, and the
//! system's error, carried up inside an `io::Error`.

use std::fmt;
use std::io;

use nix::libc;

use super::ChildSetup;
use crate::os::sandbox::SandboxStep;

/// A step of the child's setup, as a failure names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub(crate) enum Step {
    /// The process could not be made (`clone3`, `fork`).
    Clone = 1,
    /// Joining the cgroup (`cgroup.procs`).
    Cgroup,
    /// `setsid`.
    Session,
    /// `unshare(CLONE_NEWCGROUP)`.
    CgroupNamespace,
    /// Entering the sandbox's read-only view (`setns`).
    View,
    /// Opening the terminal or `/dev/null`.
    Open,
    /// Moving descriptors into place, closing the others.
    Descriptors,
    /// `chdir` to the working directory.
    Directory,
    /// Setting the limit of open files back (`setrlimit`).
    Limits,
    /// `no_new_privs`.
    NoNewPrivs,
    /// Dropping capabilities.
    Capabilities,
    /// Installing the seccomp filter.
    Seccomp,
    /// `landlock_restrict_self`.
    Landlock,
    /// `execve`.
    Exec,
}

impl From<SandboxStep> for Step {
    fn from(s: SandboxStep) -> Step {
        match s {
            SandboxStep::View => Step::View,
            SandboxStep::NoNewPrivs => Step::NoNewPrivs,
            SandboxStep::Capabilities => Step::Capabilities,
            SandboxStep::Seccomp => Step::Seccomp,
            SandboxStep::Landlock => Step::Landlock,
        }
    }
}

impl Step {
    pub(super) fn from_u8(n: u8) -> Step {
        pub(super) const ALL: [Step; 14] = [
            Step::Clone,
            Step::Cgroup,
            Step::Session,
            Step::CgroupNamespace,
            Step::View,
            Step::Open,
            Step::Descriptors,
            Step::Directory,
            Step::Limits,
            Step::NoNewPrivs,
            Step::Capabilities,
            Step::Seccomp,
            Step::Landlock,
            Step::Exec,
        ];
        ALL.into_iter()
            .find(|s| *s as u8 == n)
            .unwrap_or(Step::Exec)
    }

    pub(super) fn describe(self) -> &'static str {
        match self {
            Step::Clone => "cannot create the process",
            Step::Cgroup => "cannot join its cgroup",
            Step::Session => "cannot start a new session",
            Step::CgroupNamespace => "cannot enter a cgroup namespace of its own",
            Step::View => "cannot enter the sandbox's read-only view of the filesystem",
            Step::Open => "cannot open its terminal or /dev/null",
            Step::Descriptors => "cannot set up its descriptors",
            Step::Directory => "cannot enter its working directory",
            Step::Limits => "cannot set its limit of open files",
            Step::NoNewPrivs => "cannot set no_new_privs",
            Step::Capabilities => "cannot drop its capabilities",
            Step::Seccomp => "cannot install its seccomp filter",
            Step::Landlock => "cannot enter its Landlock sandbox",
            Step::Exec => "cannot execute",
        }
    }
}

/// A child that could not be set up: the step and the system's error.
/// Carried inside an [`io::Error`] (of the errno's kind) on the way up, so
/// the typed value can be recovered with `get_ref().downcast_ref()`.
#[derive(Debug)]
pub(crate) struct LaunchError {
    pub(super) step: Step,
    /// What the step was about: the program for `exec`, the directory for
    /// `chdir`.
    pub(super) subject: Option<String>,
    pub(super) source: io::Error,
}

impl LaunchError {
    pub(super) fn new(step: Step, errno: i32, setup: &ChildSetup<'_>) -> LaunchError {
        let subject = match step {
            Step::Exec => Some(setup.program.to_string_lossy().into_owned()),
            Step::Directory => Some(setup.cwd.to_string_lossy().into_owned()),
            _ => None,
        };
        LaunchError {
            step,
            subject,
            source: io::Error::from_raw_os_error(errno),
        }
    }

    /// The step that failed.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn step(&self) -> Step {
        self.step
    }

    pub(super) fn into_io(self) -> io::Error {
        io::Error::new(self.source.kind(), self)
    }
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.step.describe())?;
        if let Some(subject) = &self.subject {
            write!(f, " {subject}")?;
        }
        write!(f, ": {}", self.source)
    }
}

impl std::error::Error for LaunchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// The error of a program not found on `PATH`: the exec step, ENOENT.
pub(crate) fn not_found(program: &str) -> io::Error {
    LaunchError {
        step: Step::Exec,
        subject: Some(format!("{program} (not found on PATH)")),
        source: io::Error::from_raw_os_error(libc::ENOENT),
    }
    .into_io()
}

/// What a child that failed reports: the step and the errno.
#[derive(Clone, Copy, Default)]
#[repr(C)]
pub(super) struct Failure {
    pub(super) step: u8,
    pub(super) errno: i32,
}
