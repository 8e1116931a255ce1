//! A host program for the containment tests (`tests/containment.rs`): each
//! case needs a process of its own — one under a pseudo-terminal, one
//! SIGKILLed while its shells run, one with a signal setup of its own.
//!
//! `containment-host CASE`; it prints what the test checks, one `key=value`
//! a line, on stdout.

mod hardening;

use bashtools::{BashTools, Caller};
use serde_json::json;

fn main() {
    let case = std::env::args().nth(1).unwrap_or_default();
    match case.as_str() {
        "tty" => tty(),
        "sigchld-blocked" => sigchld_blocked(),
        "sigchld-ignored" => sigchld_ignored(),
        "die" => die(&std::env::args().nth(2).expect("a marker")),
        "pid-reuse" => pid_reuse(),
        "cap-no-inotify" => cap_no_inotify(),
        "cap-nofile" => cap_nofile(),
        "steal" => hardening::steal(&std::env::args().nth(2).expect("how")),
        "fork-drop" => hardening::fork_drop(),
        "build-loop" => build_loop(),
        other => {
            eprintln!("containment-host: unknown case {other:?}");
            std::process::exit(2);
        }
    }
}

/// Builds tools and drops them, again and again, until it is killed:
/// whenever the kill comes, some of the tools' cgroups may exist and
/// others not yet. Prints `built` once the first ones were built.
fn build_loop() {
    let mut first = true;
    loop {
        let tools = BashTools::builder().build().expect("tools");
        if first {
            println!("built");
            first = false;
        }
        drop(tools);
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
    // FIFOs: the waits below end on the command's write itself.
    let trapped = tools.output_directory().join("trapped");
    let termed = tools.output_directory().join("termed");
    for fifo in [&trapped, &termed] {
        nix::unistd::mkfifo(fifo, nix::sys::stat::Mode::S_IRWXU).expect("a fifo");
    }
    // `sleep & wait`, not a foreground `sleep`: bash runs a trap only once
    // its foreground command ends, and a TERM that reaches a forked child
    // before its exec is lost with the exec (the child then sleeps on,
    // and so would the trap); `wait` is cut short by the trapped signal.
    let cmd = format!(
        "trap 'echo > {}' TERM; echo > {}; while :; do sleep {m} & wait $!; done",
        termed.display(),
        trapped.display()
    );
    let r = tools.bash(&json!({"command": cmd, "run_in_background": true}), &me);
    if !wait_for(&trapped) {
        // What the test cannot see from outside: how the command stands.
        let id = r.task_id.clone().unwrap_or_default();
        let out = tools.bash_output(&json!({"bash_id": id}));
        eprintln!("containment-host: {id} never wrote its fifo: {}", out.text);
        std::process::exit(1);
    }
    let id = r.task_id.clone().expect("a background shell has an ID");
    let stopper = tools.clone();
    std::thread::spawn(move || stopper.kill_shell(&json!({"shell_id": id})));
    // Ready once the TERM has arrived: the stop is in its grace.
    if !wait_for(&termed) {
        eprintln!("containment-host: the TERM trap never ran");
        std::process::exit(1);
    }
    println!("ready");
    loop {
        std::thread::park();
    }
}

/// Waits until a command writes into the FIFO `fifo`; whether it did
/// within two minutes (a command that never writes fails the test with
/// what the host knows of it, instead of hanging it).
fn wait_for(fifo: &std::path::Path) -> bool {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use std::os::fd::AsFd;
    use std::os::unix::fs::OpenOptionsExt;
    // Non-blocking, so a command that never writes fails the test at the
    // deadline instead of hanging it; Linux reports no hang-up on a FIFO
    // no writer has opened yet, so the poll waits for the write itself.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(fifo)
        .expect("open the fifo");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return false;
        }
        let mut polls = [PollFd::new(file.as_fd(), PollFlags::POLLIN)];
        let ms = u16::try_from(left.as_millis()).unwrap_or(u16::MAX);
        if poll(&mut polls, PollTimeout::from(ms)).is_ok_and(|n| n > 0) {
            return true;
        }
    }
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

/// Inside a pid namespace of its own (`unshare --pid --fork --mount-proc`,
/// as root, so `ns_last_pid` can be written): two commands end, each after
/// a `cmd &` of its own has ended too; then unrelated processes get their
/// numbers — one the pid of the first command's leader (a session leader
/// of its own), one the group and session of the second's without its pid
/// (its leader exited, its child runs on). `kill_shell` of the ended
/// shells, `stop_all` and drop must leave both alive.
fn pid_reuse() {
    use std::os::unix::process::CommandExt;
    let tools = BashTools::builder()
        .kill_grace(std::time::Duration::from_millis(500))
        .build()
        .expect("tools");
    println!("mode={:?}", tools.containment());
    let me = Caller::default();
    // Background shells, so `kill_shell` can be asked about them too.
    let (mut former, mut ids) = (Vec::new(), Vec::new());
    for _ in 0..2 {
        let r = tools.bash(
            &json!({"command": "(sleep 0.05; :) & echo $$", "run_in_background": true}),
            &me,
        );
        let id = r.task_id.clone().expect("an ID");
        let r = tools.bash_output(&json!({"bash_id": id, "block": true, "timeout": 20}));
        let pid = r
            .text
            .split("<stdout>\n")
            .nth(1)
            .and_then(|s| s.lines().next()?.trim().parse::<i32>().ok())
            .expect("the leader's pid");
        former.push(pid);
        ids.push(id);
    }
    // Everything of both commands has ended: no process is in their groups.
    // A group emptying signals nothing (its members need not be our
    // children): looked at again after a pause, under the deadline.
    let ended = wait_until(30, || !former.iter().any(|&p| in_group(p)));
    assert!(ended, "the commands never ended");
    let spawn_as = |pid: i32, script: &str| {
        std::fs::write("/proc/sys/kernel/ns_last_pid", format!("{}", pid - 1))
            .expect("write ns_last_pid");
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", script]);
        // SAFETY: setsid is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                nix::unistd::setsid()?;
                Ok(())
            })
        };
        cmd.spawn().expect("an unrelated process")
    };
    // The first: pid, group and session all equal to the first leader's.
    let a = spawn_as(former[0], "exec sleep 1000");
    // The second: the group and session of the second leader's number,
    // held by a child whose parent (the number's holder) has exited.
    let mut b = spawn_as(former[1], "sleep 1000 & exit 0");
    let b_pid = b.id() as i32;
    b.wait().expect("the holder exits");
    // Forked before its parent exited: it runs now.
    let b_child = group_members(b_pid)[0];
    println!("reused_pid={}", a.id() as i32 == former[0]);
    println!("reused_group={}", b_pid == former[1]);
    for id in &ids {
        let r = tools.kill_shell(&json!({"shell_id": id}));
        println!("kill_shell={}", r.text);
    }
    println!(
        "after_kill_shell={}",
        alive(a.id() as i32) && alive(b_child)
    );
    tools.stop_all();
    println!("after_stop_all={}", alive(a.id() as i32) && alive(b_child));
    drop(tools);
    println!("after_drop={}", alive(a.id() as i32) && alive(b_child));
    for pid in [a.id() as i32, b_child] {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let mut a = a;
    let _ = a.wait();
}

/// `(pgrp, session, state)` of `pid`, from `/proc`.
fn stat_of(pid: i32) -> Option<(i32, i32, char)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let f: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    Some((f[2].parse().ok()?, f[3].parse().ok()?, f[0].chars().next()?))
}

fn alive(pid: i32) -> bool {
    stat_of(pid).is_some_and(|(.., state)| state != 'Z' && state != 'X')
}

/// Live processes whose group or session is `id`.
fn group_members(id: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&p| {
            stat_of(p).is_some_and(|(g, s, st)| (g == id || s == id) && st != 'Z' && st != 'X')
        })
        .collect()
}

/// Whether any process, a zombie included, still holds number `id` (as its
/// pid, group or session): while one does, the kernel gives it to no one.
fn in_group(id: i32) -> bool {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .any(|p| p == id || stat_of(p).is_some_and(|(g, s, _)| g == id || s == id))
}

/// A command that writes 5 MB under a cap of 100 000 bytes, in the
/// foreground and in the background: both must be stopped for the cap, as
/// their results say.
fn cap_run(tools: &BashTools, name: &str) {
    let me = Caller::default();
    let r = tools.bash(
        &json!({"command": "for i in $(seq 50); do head -c 100000 /dev/zero; sleep 0.02; done; echo ran-on", "timeout": 60}),
        &me,
    );
    println!("{name}_foreground={}", verdict(&r.text));
    let r = tools.bash(
        &json!({"command": "for i in $(seq 50); do head -c 100000 /dev/zero; sleep 0.02; done; echo ran-on", "run_in_background": true}),
        &me,
    );
    let id = r.task_id.clone().unwrap_or_default();
    let mut text = String::new();
    let end = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while verdict(&text) == "running" && std::time::Instant::now() < end {
        text = tools
            .bash_output(&json!({"bash_id": id, "block": true, "timeout": 5}))
            .text;
    }
    println!("{name}_background={}", verdict(&text));
    // Moved to the background at its timeout, its file renamed, then it
    // writes: the cap follows the file to its new name.
    let r = tools.bash(
        &json!({"command": "sleep 2; for i in $(seq 50); do head -c 100000 /dev/zero; sleep 0.02; done; echo ran-on", "timeout": 1}),
        &me,
    );
    let id = r.task_id.clone().unwrap_or_default();
    let mut text = String::new();
    let end = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while verdict(&text) == "running" && std::time::Instant::now() < end {
        text = tools
            .bash_output(&json!({"bash_id": id, "block": true, "timeout": 5}))
            .text;
    }
    println!("{name}_moved={}", verdict(&text));
}

fn verdict(text: &str) -> &'static str {
    if text.contains("max_output_bytes") {
        "capped"
    } else if text.contains("ran-on") {
        "ran-on"
    } else {
        "running"
    }
}

/// The user's inotify instances used up before the first command: the cap
/// is kept by polling. Run as a user of its own (the test picks an unused
/// uid), so the instances used up are nobody else's.
fn cap_no_inotify() {
    let mut held = Vec::new();
    while let Ok(fd) = nix::sys::inotify::Inotify::init(nix::sys::inotify::InitFlags::IN_CLOEXEC) {
        held.push(fd);
        if held.len() > 100_000 {
            break;
        }
    }
    println!("held_instances={}", held.len());
    let tools = BashTools::builder()
        .max_output_bytes(100_000)
        .output_root(std::env::args().nth(2).expect("an output root"))
        .build()
        .expect("tools");
    cap_run(&tools, "no_inotify");
}

/// `RLIMIT_NOFILE` so low that, once the tools run, only `free` descriptors
/// are left (for `free` from 0 up): whenever a command still starts, the cap
/// holds — by inotify where a descriptor was left for the watch's handle,
/// else by polling.
fn cap_nofile() {
    let tools = BashTools::builder()
        .max_output_bytes(100_000)
        .build()
        .expect("tools");
    // Warm up: the reaper, the timer and the watcher exist before the limit.
    let me = Caller::default();
    tools.bash(&json!({"command": "true"}), &me);
    let highest = std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u64>().ok())
        .max()
        .unwrap_or(2);
    let hard = nofile(None).rlim_max;
    for free in 0..8 {
        // Each round from the same state: a spare cell made (by a command
        // started with descriptors to spare; one made under the limit may
        // have failed) and nothing of the last command's end in flight
        // that could open a descriptor once the table is full.
        tools.bash(&json!({"command": "true"}), &me);
        wait_for_quiet_descriptors();
        // A limit a little above what is open, every slot under it taken
        // (gaps included), then `free` of them given back.
        nofile(Some(highest + 16));
        let mut filler = Vec::new();
        while let Ok(f) = std::fs::File::open("/dev/null") {
            filler.push(f);
        }
        filler.truncate(filler.len().saturating_sub(free));
        let r = tools.bash(
            &json!({"command": "for i in $(seq 50); do head -c 100000 /dev/zero; sleep 0.02; done; echo ran-on", "timeout": 60}),
            &me,
        );
        nofile(Some(hard));
        drop(filler);
        let verdict = if r.is_error && !r.text.contains("max_output_bytes") {
            "not-started"
        } else {
            verdict(&r.text)
        };
        eprintln!("free{free}: {}", r.text.lines().last().unwrap_or(""));
        println!("free{free}={verdict}");
    }
    // Every command has ended: no descriptor reads an output file any more
    // (the output cap's watch holds one while a command runs, and once kept
    // it for good when the start failed). The one spare output file made
    // ready for the next command is written, not read.
    let outdir = tools.output_directory().to_path_buf();
    let reading_outputs = || {
        let mut reading = Vec::new();
        for entry in std::fs::read_dir("/proc/self/fd")
            .expect("/proc/self/fd")
            .flatten()
        {
            let Ok(target) = std::fs::read_link(entry.path()) else {
                continue;
            };
            let fd = entry.file_name().to_string_lossy().into_owned();
            let info =
                std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).unwrap_or_default();
            let flags = info
                .lines()
                .find_map(|l| l.strip_prefix("flags:"))
                .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
                .unwrap_or(0);
            let read_only = flags & 3 == 0;
            if target.starts_with(&outdir) && target != outdir && read_only {
                reading.push(format!("{fd} {}", target.display()));
            }
        }
        reading
    };
    wait_until(20, || reading_outputs().is_empty());
    let reading = reading_outputs();
    eprintln!("reading output files: {reading:?}");
    println!("output_files_read={}", reading.len());
}

/// What each of our descriptors points at.
fn open_descriptors() -> Vec<std::path::PathBuf> {
    std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .collect()
}

/// Waits until our descriptors stay the same for a while (a command's end
/// may still be closing or opening some), at most 20 s.
fn wait_for_quiet_descriptors() {
    let mut last = open_descriptors();
    let mut same = 0;
    wait_until(20, || {
        let now = open_descriptors();
        same = if now == last { same + 1 } else { 0 };
        last = now;
        same >= 10
    });
}

/// Waits until `cond` holds, at most `secs` seconds; whether it came to
/// hold. What it waits on (other processes, the tools' own threads) has
/// nothing to wake us: it is looked at again after a pause (doubling from
/// 1 ms to 10 ms), under the deadline.
fn wait_until(secs: u64, mut cond: impl FnMut() -> bool) -> bool {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    let mut pause = std::time::Duration::from_millis(1);
    while !cond() {
        if std::time::Instant::now() >= end {
            return false;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(std::time::Duration::from_millis(10));
    }
    true
}

/// `RLIMIT_NOFILE`: sets its soft limit to `soft` if given; returns it as it
/// was.
fn nofile(soft: Option<u64>) -> nix::libc::rlimit {
    let mut old = nix::libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain syscalls on a struct we own.
    unsafe {
        assert_eq!(nix::libc::getrlimit(nix::libc::RLIMIT_NOFILE, &mut old), 0);
        if let Some(soft) = soft {
            let new = nix::libc::rlimit {
                rlim_cur: soft,
                rlim_max: old.rlim_max,
            };
            assert_eq!(nix::libc::setrlimit(nix::libc::RLIMIT_NOFILE, &new), 0);
        }
    }
    old
}
