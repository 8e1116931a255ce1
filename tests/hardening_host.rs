//! Hardening, the host's side (SPEC §8 "What no command can do" and the
//! paragraphs after it): a host that reaps children itself, a host forked
//! without exec, the server as PID 1, and the server's own process out of
//! its commands' reach. Each attack runs on real processes.

#[path = "mcp/client.rs"]
mod client;
mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use client::Server;
use serde_json::json;

const UNKNOWN: &str =
    "Exit code unknown: the exit status was collected by another part of the program";

fn is_root() -> bool {
    // SAFETY: no arguments.
    unsafe { nix::libc::geteuid() == 0 }
}

/// Runs the helper host with `args`; its stdout. Fails if it does not end
/// within a generous deadline (a call that hangs is the bug).
fn host(args: &[&str]) -> String {
    let mut child = Command::new(common::containment_host())
        .args(args)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut out, &mut s).unwrap();
        s
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let text = reader.join().unwrap();
            assert!(status.success(), "{args:?}: {status}\n{text}");
            return text;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let text = reader.join().unwrap();
            panic!("{args:?}: the host hung (a call never returned):\n{text}");
        }
        common::poll_pause(Duration::from_millis(20));
    }
}

/// Item 10: whoever takes the exit status — a thread's `waitpid(-1)`,
/// SIGCHLD set to SIG_IGN, a handler of the host's — no call hangs, and a
/// status that was taken is said to be unknown, never made up.
#[test]
fn a_host_that_reaps_children_itself_never_hangs_a_call() {
    for how in ["waitpid", "sigign", "handler"] {
        let text = host(&["steal", how]);
        let results: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("result="))
            .collect();
        assert_eq!(results.len(), 100, "{how}: {text}");
        assert!(
            results.iter().all(|r| *r == "Exit code 3" || *r == UNKNOWN),
            "{how}: {text}"
        );
        assert!(text.ends_with("done\n"), "{how}: {text}");
        if how == "sigign" {
            // The kernel reaps every child itself: no status survives.
            assert!(results.iter().all(|r| *r == UNKNOWN), "{text}");
        }
    }
}

/// Item 12: a child forked from the host (no exec) that drops its copy of
/// the tools stops nothing and deletes nothing of the parent's.
#[test]
fn a_forked_child_dropping_the_tools_leaves_the_parents_alone() {
    let text = host(&["fork-drop"]);
    assert!(text.contains("child_exit=0\n"), "{text}");
    assert!(text.contains("outdir_exists=true\n"), "{text}");
    assert!(text.contains("status=<status>running</status>\n"), "{text}");
    // The parent's own drop still ends everything.
    assert!(text.contains("outdir_after_drop=false\n"), "{text}");
}

/// Item 11: the server as PID 1 of a pid namespace (a container's entry
/// point) reaps the orphans its commands leave: 100 commands that each
/// leave a short-lived child behind leave no zombie.
#[test]
fn the_server_as_pid_1_leaves_no_zombies() {
    if !is_root() {
        eprintln!("SKIP: a pid namespace needs root here; the fallback (not PID 1) reaps nothing that is not its own, checked by host_children.rs");
        return;
    }
    let unshare = Command::new("unshare").arg("--help").output();
    if !unshare.is_ok_and(|o| o.status.success()) {
        eprintln!("SKIP: no unshare(1) on this machine");
        return;
    }
    // Every cgroup a PID 1 server makes is named after pid 1: none may be
    // left once it has exited (its keeper dies with its namespace).
    let pid1_jails = || -> Vec<String> {
        let mut all = Vec::new();
        for line in std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap()
            .lines()
        {
            if line.contains(" - cgroup") {
                let mount = line.split_whitespace().nth(4).unwrap();
                let mut dirs = vec![std::path::PathBuf::from(mount)];
                // Our own cgroup there may be a level or two down.
                for _ in 0..3 {
                    let mut next = Vec::new();
                    for d in &dirs {
                        for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
                            let name = e.file_name().to_string_lossy().into_owned();
                            if name.starts_with("bashtools-1-") {
                                all.push(e.path().display().to_string());
                            } else if e.file_type().is_ok_and(|t| t.is_dir()) {
                                next.push(e.path());
                            }
                        }
                    }
                    dirs = next;
                }
            }
        }
        all
    };
    let before = pid1_jails();
    let mut s = Server::start_with(&[], |cmd| {
        let program = cmd.get_program().to_os_string();
        let args: Vec<_> = cmd.get_args().map(|a| a.to_os_string()).collect();
        let mut wrapped = Command::new("unshare");
        wrapped
            .args(["--pid", "--fork", "--mount-proc", "--kill-child"])
            .arg(program)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        *cmd = wrapped;
    });
    s.initialize("2025-06-18");
    let (text, _) = s.tool("bash", json!({"command": "echo $PPID"}));
    assert_eq!(text, "1", "the server is not PID 1 of its namespace");
    for _ in 0..100 {
        let (text, err) = s.tool("bash", json!({"command": "(sleep 0.01 &); echo left"}));
        assert_eq!((text.as_str(), err), ("left", false));
    }
    // Every orphan has ended by now or soon; none may stay a zombie.
    let count = "ps -eo stat= | grep -c '^Z' || true";
    common::wait_until("no zombie is left", || {
        s.tool("bash", json!({"command": count})).0 == "0"
    });
    // The end of stdin ends the server, which removes its cgroups itself.
    drop(s);
    let left: Vec<String> = pid1_jails()
        .into_iter()
        .filter(|j| !before.contains(j))
        .collect();
    assert!(
        left.is_empty(),
        "cgroups left by the PID 1 server: {left:?}"
    );
}

/// Items 5 and 20: the server is not dumpable, so a command running as the
/// same user (not root) can neither read its environment — variables
/// removed with `--env-remove` included — nor open its stdin or stdout
/// through `/proc`. As root the server runs as a user of its own here.
#[test]
fn a_command_cannot_reach_the_servers_environment_or_stdio() {
    let uid = 3_900_000_000 + std::process::id() % 100_000;
    let as_user = is_root();
    if !as_user {
        eprintln!("note: not root: the server runs as this user, as its commands do");
    }
    let scratch = common::Scratch::new("nondumpable");
    std::fs::set_permissions(
        &scratch.0,
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let dir = scratch.0.display().to_string();
    let mut s = Server::start_with(&["--env-remove", "BASHTOOLS_TEST_SECRET"], |cmd| {
        cmd.env("BASHTOOLS_TEST_SECRET", "hunter2")
            .current_dir(&dir);
        if as_user {
            std::os::unix::process::CommandExt::uid(cmd, uid);
            std::os::unix::process::CommandExt::gid(cmd, uid);
        }
    });
    s.initialize("2025-06-18");
    let (text, _) = s.tool(
        "bash",
        json!({"command": "echo ${BASHTOOLS_TEST_SECRET-removed}"}),
    );
    assert_eq!(text, "removed");
    for (what, command) in [
        ("environ", "cat /proc/$PPID/environ"),
        (
            "stdout",
            "echo '{\"jsonrpc\":\"2.0\",\"method\":\"forged\"}' > /proc/$PPID/fd/1",
        ),
        (
            "stdin",
            "echo '{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"ping\"}' > /proc/$PPID/fd/0",
        ),
        ("memory", "head -c 1 /proc/$PPID/mem"),
    ] {
        let (text, err) = s.tool(
            "bash",
            json!({"command": format!("{command} && echo REACHED")}),
        );
        assert!(err && !text.contains("REACHED"), "{what}: {text}");
        assert!(!text.contains("hunter2"), "{what}: {text}");
    }
    // Nothing forged arrived, and the server still answers.
    s.still_serving();
    let stray = s.drain();
    assert!(
        stray
            .iter()
            .all(|m| m["method"] != "forged" && m["id"] != 99),
        "{stray:?}"
    );
}

/// Item 5, unsandboxed: no helper process of ours (the keeper, a command)
/// holds the server's stdin or stdout.
#[test]
fn no_process_of_ours_holds_the_servers_stdio() {
    let mut s = Server::initialized(&[]);
    let (text, _) = s.tool(
        "bash",
        json!({"command": "sleep 1000", "run_in_background": true}),
    );
    assert!(text.contains("ID: "), "{text}");
    let server = s.pid();
    // The server's stdin and stdout are pipes whose other ends this test
    // holds (as a user, the server itself is not ours to look into: it is
    // not dumpable).
    let stdio = s.stdio_pipes().to_vec();
    assert_eq!(stdio.len(), 2, "{stdio:?}");
    let mut holders = Vec::new();
    for (pid, ..) in common::processes() {
        // The test holds the other ends of the same pipes.
        if pid == server || pid == std::process::id() {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path()) {
                if stdio.contains(&target) {
                    holders.push((pid, fd.file_name(), target));
                }
            }
        }
    }
    // This test process holds the other ends, not these.
    assert!(holders.is_empty(), "{holders:?}");
}

/// Item 22: a cell named as another server's was (`bashtools-PID-SEQ`, the
/// same in every container whose server is PID 1), left behind, does not
/// make the next server fall back to sessions: names are unique.
#[test]
fn cells_left_by_others_never_take_a_new_servers_name() {
    let first = common::tools();
    let Some(jail) = first.cgroup() else {
        assert!(std::env::var_os("BASHTOOLS_TEST_REQUIRE_CGROUP").is_none());
        eprintln!("SKIP: no cgroup can be made here (session mode)");
        return;
    };
    let base = jail.parent().unwrap().to_path_buf();
    // Every name the old scheme would give this process next.
    let pid = std::process::id();
    let squatted: Vec<_> = (0..256)
        .map(|seq| base.join(format!("bashtools-{pid}-{seq}")))
        .filter(|dir| std::fs::create_dir(dir).is_ok())
        .collect();
    let second = common::tools();
    let mode = second.containment();
    let name = second.cgroup();
    drop(second);
    for dir in &squatted {
        let _ = std::fs::remove_dir(dir);
    }
    assert_eq!(mode, bashtools::Containment::Cgroup);
    let name = name.unwrap();
    assert!(!squatted.contains(&name), "{}", name.display());
    assert_ne!(name, jail);
}

/// The keeper is told what to clean up over a socket whose other end only
/// the host holds (close-on-exec). A command must not be able to tell it
/// anything — a cgroup to kill or a directory to remove when the host
/// ends: no socket of the keeper's or the host's can be opened through
/// `/proc`, and a directory named in such an attempt survives the host's
/// end.
#[test]
fn no_command_can_tell_the_keeper_what_to_clean_up() {
    let tools = common::tools();
    let decoy = common::Scratch::new("keeper-decoy");
    let victim = decoy.path("victim");
    std::fs::create_dir(&victim).unwrap();
    let me = std::process::id();
    let attack = format!(
        "for d in /proc/[0-9]*; do
             grep -qzx bashtools-keeper $d/cmdline 2>/dev/null && k=${{d#/proc/}}
         done
         echo keeper=$k
         for f in /proc/$k/fd/* /proc/{me}/fd/*; do
             [ \"$(readlink $f 2>/dev/null | cut -c1-7)\" = socket: ] || continue
             echo SOCKET $f
             (printf 'v1 {v}\\njail {v}\\nmark X=1\\n' > $f) 2>/dev/null && echo WROTE $f
         done
         echo tried",
        v = victim.display()
    );
    let r = common::bash(&tools, json!({ "command": attack }));
    assert!(r.text.contains("tried"), "{}", r.text);
    assert!(r.text.contains("keeper="), "{}", r.text);
    assert!(!r.text.contains("keeper=\n"), "no keeper found: {}", r.text);
    // The keeper's own stdin at least was tried.
    assert!(r.text.contains("/fd/0"), "no socket tried: {}", r.text);
    assert!(!r.text.contains("WROTE"), "{}", r.text);
    // The keeper's end: it removes only what the host told it.
    let keeper: u32 = r
        .text
        .lines()
        .find_map(|l| l.strip_prefix("keeper=")?.trim().parse().ok())
        .unwrap();
    drop(tools);
    common::wait_until("the keeper has ended", || {
        !std::path::Path::new(&format!("/proc/{keeper}")).exists()
            || std::fs::read_to_string(format!("/proc/{keeper}/stat")).is_ok_and(|s| {
                s.rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('Z'))
            })
    });
    assert!(
        victim.is_dir(),
        "the keeper removed a directory a command named"
    );
}
