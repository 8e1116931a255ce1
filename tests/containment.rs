//! Containment (the project's issue "Nothing outlives its owner"): every
//! process a command starts is stopped with it, whatever it does to escape,
//! and a stopped or terminal-reading command is no obstacle.
//!
//! Each test checks through `/proc` that nothing of its commands is left.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use common::*;
use serde_json::json;

/// The helper host built from `tests/helpers/host.rs` (an example, so
/// `cargo test` builds it).
fn host() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let debug = exe.parent().unwrap().parent().unwrap();
    let path = debug.join("examples").join("containment-host");
    assert!(path.exists(), "{} is built by cargo test", path.display());
    path
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn opening_dev_tty_under_a_terminal_fails_at_once() {
    if !have("script") {
        eprintln!("SKIP: no `script` to give the host a pseudo-terminal");
        return;
    }
    let start = Instant::now();
    let out = Command::new("script")
        .args(["-qec", &format!("{} tty", host().display()), "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("host_tty=true"),
        "the host has a terminal: {text}"
    );
    assert!(
        text.contains("read=1") && text.contains("/dev/tty"),
        "the read failed at once: {text}"
    );
    assert!(start.elapsed() < Duration::from_secs(15), "{text}");
}

#[test]
fn a_stopped_term_trapping_command_is_stopped_within_the_grace() {
    let scratch = Scratch::new("stopped");
    let pidfile = scratch.path("pid");
    let tools = builder()
        .kill_grace(Duration::from_secs(30))
        .build()
        .unwrap();
    let cmd = format!(
        "trap 'echo got-term; exit 0' TERM; echo $$ > {}; while :; do read -t 0.05 <> <(:); done",
        pidfile.display()
    );
    let r = bash(&tools, json!({"command": cmd, "run_in_background": true}));
    let id = id_in(&r.text);
    let pid = read_pid(&pidfile);
    // The whole group stops, as a terminal's SIGTTIN would stop it.
    nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGSTOP,
    )
    .unwrap();
    wait_until("the command is stopped", || {
        processes().iter().any(|&(p, _, _, s)| p == pid && s == 'T')
    });
    let start = Instant::now();
    let r = tools.kill_shell(&json!({"shell_id": id}));
    assert!(!r.is_error, "{}", r.text);
    assert!(
        start.elapsed() < Duration::from_secs(15),
        "stopped after {:?}, not by the grace's SIGKILL",
        start.elapsed()
    );
    let r = tools.bash_output(&json!({"bash_id": id}));
    assert!(r.text.contains("got-term"), "it handled TERM: {}", r.text);
    assert_gone(&[pid]);
}

#[test]
fn a_command_starts_a_session_of_its_own() {
    let tools = tools();
    let r = bash(
        &tools,
        json!({"command": "ps -o sid= -o pgid= -o pid= -p $$"}),
    );
    let f: Vec<&str> = r.text.split_whitespace().collect();
    assert_eq!(f.len(), 3, "{}", r.text);
    assert!(f[0] == f[1] && f[1] == f[2], "sid = pgid = pid: {}", r.text);
}
