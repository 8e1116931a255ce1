//! The host's cases of the hardening tests (`tests/hardening_host.rs`):
//! a host that reaps children behind the reaper's back, and one that forks
//! and drops its copy of the tools in the child.

use bashtools::{BashTools, Caller};
use nix::libc;
use serde_json::json;

/// A host that takes its children's statuses itself (`how`: `waitpid` —
/// a thread calling `waitpid(-1)` —, `sigign` — SIGCHLD set to SIG_IGN
/// after the tools were built —, `handler` — a SIGCHLD handler of its own
/// that reaps everything), then runs foreground commands: every call must
/// return, with the real code or the unknown-status text.
pub fn steal(how: &str) {
    let tools = BashTools::builder().build().expect("tools");
    let me = Caller::default();
    tools.bash(&json!({"command": "true"}), &me);
    match how {
        "waitpid" => {
            std::thread::spawn(|| loop {
                let mut status = 0;
                // SAFETY: the attack itself: any child, blocking.
                if unsafe { libc::waitpid(-1, &mut status, 0) } < 0 {
                    // No child at the moment (rare: the keeper lives as
                    // long as the tools): the attacker tries again.
                    std::thread::yield_now();
                }
            });
        }
        // SAFETY: plain signal dispositions.
        "sigign" => unsafe {
            libc::signal(libc::SIGCHLD, libc::SIG_IGN);
        },
        "handler" => {
            extern "C" fn reap_all(_: libc::c_int) {
                let mut status = 0;
                // SAFETY: waitpid is async-signal-safe.
                while unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) } > 0 {}
            }
            // SAFETY: installs a handler that only calls waitpid.
            unsafe { libc::signal(libc::SIGCHLD, reap_all as *const () as libc::sighandler_t) };
        }
        other => panic!("unknown way to steal: {other}"),
    }
    for _ in 0..100 {
        let r = tools.bash(&json!({"command": "exit 3", "timeout": 60000}), &me);
        println!("result={}", r.text.lines().next().unwrap_or(""));
    }
    println!("done");
}

/// Starts a background `sleep`, forks, and drops the tools in the child
/// (which then exits); the parent says whether its shell still runs and
/// its output directory is still there.
pub fn fork_drop() {
    let tools = BashTools::builder().build().expect("tools");
    let me = Caller::default();
    let r = tools.bash(
        &json!({"command": "echo started; sleep 1000", "run_in_background": true}),
        &me,
    );
    let id = r.task_id.clone().expect("a background shell's id");
    let outdir = tools.output_directory().to_path_buf();
    // SAFETY: the child only drops the tools and exits; glibc's fork keeps
    // the allocator usable in the child.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        drop(tools);
        // SAFETY: ends the child without running the parent's atexit.
        unsafe { libc::_exit(0) };
    }
    let mut status = 0;
    // SAFETY: waits for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    println!("child_exit={}", libc::WEXITSTATUS(status));
    println!("outdir_exists={}", outdir.is_dir());
    let r = tools.bash_output(&json!({"bash_id": id}));
    let status = r.text.lines().next().unwrap_or("").to_string();
    println!("status={status}");
    drop(tools);
    println!("outdir_after_drop={}", outdir.is_dir());
}
