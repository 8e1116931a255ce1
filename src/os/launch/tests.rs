//! The launcher on real processes, each way: what a child gets, and what a
//! failed step reports. (What a command sees through the whole crate is in
//! `tests/launcher.rs`; being born in a cgroup is tested with the cells, in
//! `os::contain::cgroup`.) The helpers are shared with those tests.

use std::ffi::CString;
use std::fs::File;
use std::os::fd::AsFd;

use super::*;

pub(crate) const BOTH: [Via; 2] = [Via::Clone3, Via::Fork];

fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

/// `/bin/sh -c SCRIPT` in `/`, output to `out`, environment empty.
pub(crate) fn sh<'a>(script: &str, out: &'a File) -> ChildSetup<'a> {
    ChildSetup::new(
        c("/bin/sh"),
        vec![c("sh"), c("-c"), c(script)],
        vec![],
        c("/"),
    )
    .stdio(
        Input::Null,
        Output::Fd(out.as_fd()),
        Output::Fd(out.as_fd()),
    )
}

/// Waits for `pid`, this test's own child; its exit code.
pub(crate) fn wait(pid: u32) -> i32 {
    let mut status = 0;
    // SAFETY: waits for a child of this test, into a status of ours.
    let waited = unsafe { libc::waitpid(pid as i32, &mut status, 0) };
    assert_eq!(waited, pid as i32);
    libc::WEXITSTATUS(status)
}

/// A scratch file, removed on drop.
pub(crate) struct Scratch(std::path::PathBuf);
impl Scratch {
    pub(crate) fn new(name: &str) -> Scratch {
        Scratch(
            std::env::temp_dir().join(format!("bashtools-launch-{}-{name}", std::process::id())),
        )
    }
    pub(crate) fn create(&self) -> File {
        File::create(&self.0).unwrap()
    }
    pub(crate) fn text(&self) -> String {
        std::fs::read_to_string(&self.0).unwrap()
    }
}
impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn a_child_leads_a_new_session_and_exits_with_its_own_status() {
    for via in BOTH {
        let out = Scratch::new("session");
        let file = out.create();
        let script =
            "read -r _ _ _ _ _ sid _ < /proc/self/stat; [ \"$sid\" = $$ ] || exit 10; exit 7";
        let setup = sh(script, &file).new_session();
        assert_eq!(
            wait(launch(&setup, via).unwrap()),
            7,
            "{via:?}: {}",
            out.text()
        );
    }
}

#[test]
fn a_failed_exec_names_the_step_the_program_and_the_errno() {
    for via in BOTH {
        let out = Scratch::new("exec");
        let file = out.create();
        let mut setup = sh("", &file);
        setup.program = c("/nonexistent/bashtools-no-such");
        let err = launch(&setup, via).unwrap_err();
        let launch_err = err
            .get_ref()
            .unwrap()
            .downcast_ref::<LaunchError>()
            .unwrap();
        assert_eq!(launch_err.step(), Step::Exec, "{via:?}");
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        let text = err.to_string();
        assert!(
            text.starts_with("cannot execute /nonexistent/bashtools-no-such: No such file"),
            "{text}"
        );
    }
}

#[test]
fn a_missing_directory_names_the_chdir_step() {
    for via in BOTH {
        let out = Scratch::new("chdir");
        let file = out.create();
        let mut setup = sh("exit 0", &file);
        setup.cwd = c("/nonexistent/bashtools-dir");
        let err = launch(&setup, via).unwrap_err();
        let launch_err = err
            .get_ref()
            .unwrap()
            .downcast_ref::<LaunchError>()
            .unwrap();
        assert_eq!(launch_err.step(), Step::Directory, "{via:?}");
        assert!(
            err.to_string()
                .starts_with("cannot enter its working directory /nonexistent/bashtools-dir"),
            "{err}"
        );
    }
}

#[test]
fn only_stdio_and_the_kept_descriptors_reach_the_child() {
    for via in BOTH {
        let out = Scratch::new("fds");
        let file = out.create();
        // Opened without close-on-exec, as a careless host would.
        // SAFETY: a NUL-terminated path; the descriptor is closed below.
        let leaked = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY) };
        assert!(leaked > 2);
        let kept = File::open("/dev/zero").unwrap();
        let setup = sh("ls /proc/self/fd; readlink /proc/self/fd/7", &file).keep(kept.as_fd(), 7);
        assert_eq!(wait(launch(&setup, via).unwrap()), 0);
        // SAFETY: our own descriptor.
        unsafe { libc::close(leaked) };
        let text = out.text();
        let mut lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.pop(), Some("/dev/zero"), "{via:?}: {text}");
        // 0, 1, 2, 7, and the one `ls` opened to list the directory.
        let fds: Vec<i32> = lines.iter().map(|l| l.parse().unwrap()).collect();
        assert_eq!(fds.len(), 5, "{via:?}: {fds:?}");
        assert!(
            fds[..3] == [0, 1, 2] && fds.contains(&7),
            "{via:?}: {fds:?}"
        );
    }
}

#[test]
fn a_source_descriptor_that_is_another_target_is_not_overwritten() {
    // stdout comes from descriptor N, which is also where a kept one goes.
    for via in BOTH {
        let out = Scratch::new("swap");
        let file = out.create();
        let zero = File::open("/dev/zero").unwrap();
        // SAFETY: duplicates our file; wrapped at once, closed on drop.
        let at_n =
            unsafe { File::from_raw_fd(libc::fcntl(file.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 200)) };
        let n = at_n.as_raw_fd();
        let script = format!("echo out; readlink /proc/self/fd/{n}");
        let setup = ChildSetup::new(
            c("/bin/sh"),
            vec![c("sh"), c("-c"), c(&script)],
            vec![],
            c("/"),
        )
        .stdio(
            Input::Null,
            Output::Fd(at_n.as_fd()),
            Output::Fd(at_n.as_fd()),
        )
        .keep(zero.as_fd(), n);
        assert_eq!(wait(launch(&setup, via).unwrap()), 0);
        drop(setup);
        assert_eq!(out.text(), "out\n/dev/zero\n", "{via:?}");
    }
}

#[test]
fn signals_are_default_and_unblocked_in_the_child() {
    for via in BOTH {
        let out = Scratch::new("signals");
        let file = out.create();
        // This thread blocks SIGTERM while it starts the child.
        let mut term = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: initialises the set, then blocks it on this thread only.
        unsafe {
            libc::sigemptyset(term.as_mut_ptr());
            libc::sigaddset(term.as_mut_ptr(), libc::SIGTERM);
            libc::pthread_sigmask(libc::SIG_BLOCK, term.as_ptr(), std::ptr::null_mut());
        }
        let setup = sh("grep -E '^Sig(Blk|Ign)' /proc/self/status", &file);
        let pid = launch(&setup, via);
        // SAFETY: as above.
        unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, term.as_ptr(), std::ptr::null_mut()) };
        assert_eq!(wait(pid.unwrap()), 0);
        assert_eq!(
            out.text(),
            "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n",
            "{via:?}"
        );
    }
}

use std::os::fd::{AsRawFd, FromRawFd};

#[test]
fn after_a_launch_the_staging_descriptors_hold_nothing_of_the_child() {
    let out = Scratch::new("staging");
    let file = out.create();
    let kept = File::open("/dev/zero").unwrap();
    let setup = sh("echo staged", &file).keep(kept.as_fd(), 9);
    assert_eq!(wait(launch(&setup, Via::Clone3).unwrap()), 0);
    assert_eq!(out.text(), "staged\n");
    let Some((staging, _guard)) = staging::take() else {
        eprintln!("SKIP: no staging descriptors could be opened");
        return;
    };
    for &fd in &staging.fds {
        let target = std::fs::read_link(format!("/proc/self/fd/{fd}")).unwrap();
        assert_eq!(target, std::path::Path::new("/dev/null"), "staging {fd}");
    }
}
