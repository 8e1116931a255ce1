//! A host program for the containment tests (`tests/containment.rs`): each
//! case needs a process of its own — one under a pseudo-terminal, one
//! SIGKILLed while its shells run, one with a signal setup of its own.
//!
//! `containment-host CASE`; it prints what the test checks, one `key=value`
//! a line, on stdout.

use bashtools::{BashTools, Caller};
use serde_json::json;

fn main() {
    let case = std::env::args().nth(1).unwrap_or_default();
    match case.as_str() {
        "tty" => tty(),
        "sigchld-blocked" => sigchld_blocked(),
        "sigchld-ignored" => sigchld_ignored(),
        "die" => die(&std::env::args().nth(2).expect("a marker")),
        other => {
            eprintln!("containment-host: unknown case {other:?}");
            std::process::exit(2);
        }
    }
}

/// Under a terminal (`script -qc`): a command that opens `/dev/tty` must
/// fail at once instead of stopping with SIGTTIN.
fn tty() {
    let host_has_tty = std::fs::File::open("/dev/tty").is_ok();
    println!("host_tty={host_has_tty}");
    let tools = BashTools::builder().build().expect("tools");
    let r = tools.bash(
        &json!({"command": "read -r line < /dev/tty; echo read=$?", "timeout": 20}),
        &Caller::default(),
    );
    println!("result={}", r.text.replace('\n', " | "));
}

/// Starts a background shell, a foreground `cmd &` that outlives its
/// command, a `setsid` escape, and a TERM-trapping shell that `kill_shell` is stopping (in
/// its grace), prints `ready`, and waits to be SIGKILLed.
fn die(m: &str) {
    let tools = BashTools::builder()
        .kill_grace(std::time::Duration::from_secs(2))
        .build()
        .expect("tools");
    println!("mode={:?}", tools.containment());
    println!("outdir={}", tools.output_directory().display());
    if let Some(cgroup) = tools.cgroup() {
        println!("cgroup={}", cgroup.display());
    }
    let me = Caller::default();
    tools.bash(
        &json!({"command": format!("sleep {m}"), "run_in_background": true}),
        &me,
    );
    let r = tools.bash(
        &json!({"command": format!("sleep {m} & echo started")}),
        &me,
    );
    assert_eq!(r.text, "started");
    // FIFOs: the host's open for reading returns once the command writes,
    // so the waits below end on the event itself.
    let trapped = tools.output_directory().join("trapped");
    let termed = tools.output_directory().join("termed");
    for fifo in [&trapped, &termed] {
        nix::unistd::mkfifo(fifo, nix::sys::stat::Mode::S_IRWXU).expect("a fifo");
    }
    let cmd = format!(
        "trap 'echo > {}' TERM; echo > {}; while :; do sleep {m}; done",
        termed.display(),
        trapped.display()
    );
    let r = tools.bash(&json!({"command": cmd, "run_in_background": true}), &me);
    wait_for(&trapped);
    let id = r.task_id.clone().expect("a background shell has an ID");
    let stopper = tools.clone();
    std::thread::spawn(move || stopper.kill_shell(&json!({"shell_id": id})));
    // Ready once the TERM has arrived: the stop is in its grace.
    wait_for(&termed);
    println!("ready");
    loop {
        std::thread::park();
    }
}

/// Waits until a command writes into the FIFO `fifo`: opening it for
/// reading blocks until a writer opens it, and reading ends at its close.
fn wait_for(fifo: &std::path::Path) {
    use std::io::Read;
    let mut buf = Vec::new();
    let _ = std::fs::File::open(fifo)
        .expect("open the fifo")
        .read_to_end(&mut buf);
}

/// SIGCHLD blocked in every thread before the first use: exits are still
/// collected, with their codes.
fn sigchld_blocked() {
    let mut chld = nix::sys::signal::SigSet::empty();
    chld.add(nix::sys::signal::Signal::SIGCHLD);
    chld.thread_block().expect("block SIGCHLD");
    let tools = BashTools::builder().build().expect("tools");
    let me = Caller::default();
    let r = tools.bash(&json!({"command": "echo hi", "timeout": 20}), &me);
    println!("echo={}", r.text);
    let r = tools.bash(&json!({"command": "exit 3", "timeout": 20}), &me);
    println!("exit={}", r.text);
}

/// SIGCHLD set to SIG_IGN by the host: its own children are still reaped
/// by the kernel (no zombie), and commands still complete (their codes are
/// lost: the kernel discards them).
fn sigchld_ignored() {
    // SAFETY: SIG_IGN installs no handler.
    unsafe { nix::libc::signal(nix::libc::SIGCHLD, nix::libc::SIG_IGN) };
    let tools = BashTools::builder().build().expect("tools");
    let me = Caller::default();
    let r = tools.bash(&json!({"command": "echo hi", "timeout": 20}), &me);
    println!("echo={}", r.text.replace('\n', " | "));
    // Never waited for on purpose: the kernel reaps it (SIG_IGN).
    #[allow(clippy::zombie_processes)]
    let own = std::process::Command::new("true").spawn().expect("a child");
    let proc_dir = format!("/proc/{}", own.id());
    // Auto-reaped by the kernel: the pid disappears, no zombie stays. Its
    // pidfd wakes the wait at the exit; the release follows at once.
    // SAFETY: a plain syscall; a non-negative result is a new fd we own.
    let fd = unsafe { nix::libc::syscall(nix::libc::SYS_pidfd_open, own.id() as i32, 0) };
    if fd >= 0 {
        use std::os::fd::{AsFd, FromRawFd, OwnedFd};
        // SAFETY: `fd` was just returned by the kernel.
        let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        let mut polls = [nix::poll::PollFd::new(
            fd.as_fd(),
            nix::poll::PollFlags::POLLIN,
        )];
        let _ = nix::poll::poll(&mut polls, nix::poll::PollTimeout::from(20_000u16));
    }
    let end = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::path::Path::new(&proc_dir).exists() && std::time::Instant::now() < end {
        std::thread::yield_now();
    }
    let gone = !std::path::Path::new(&proc_dir).exists();
    println!("own_child={}", if gone { "reaped" } else { "zombie" });
}
