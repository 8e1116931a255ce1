//! Nothing outlives the tools: no process, no zombie, no output directory,
//! whatever the commands do to resist (SPEC sections 2 and 8); and nothing
//! a command prints can make a call fail or grow without bound.

mod common;

use std::time::{Duration, Instant};

use bashtools::{BashTools, Caller};
use common::*;
use serde_json::json;

const CAP_TEXT: &str = "[The command was stopped: its output passed the limit of";

/// How many live members of group `pgid` run `sleep`.
fn sleeps_in_group(pgid: u32) -> usize {
    live_in_group(pgid)
        .into_iter()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "sleep")
        })
        .count()
}

/// Starts `command` in the background; returns its ID and pgid.
fn start_bg(tools: &BashTools, command: &str) -> (String, u32) {
    let before = tools.background_pids();
    let r = bash(
        tools,
        json!({"command": command, "run_in_background": true}),
    );
    assert!(!r.is_error, "{command}: {r:?}");
    let id = id_of(&r);
    let new: Vec<u32> = tools
        .background_pids()
        .into_iter()
        .filter(|p| !before.contains(p))
        .collect();
    assert_eq!(new.len(), 1, "{command}: one new background pid");
    (id, new[0])
}

/// Stops every shell when dropped, so a failing test cannot leave a
/// foreground thread waiting on a `sleep 1000`.
struct StopOnDrop<'a>(&'a BashTools);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop_all();
    }
}

#[test]
fn drop_with_shells_running_leaves_no_process_no_zombie_and_no_output_directory() {
    let tools = builder()
        .default_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let mut pgids = Vec::new();

    let (_, plain) = start_bg(&tools, "sleep 1000");
    pgids.push(plain);
    let (_, orphan) = start_bg(&tools, "(sleep 1000 &); sleep 1000");
    pgids.push(orphan);
    let (_, ignores) = start_bg(&tools, "trap '' TERM; sleep 1000");
    pgids.push(ignores);
    let (_, traps) = start_bg(&tools, "trap 'echo got TERM' TERM; sleep 1000 & wait");
    pgids.push(traps);
    // And one that outlived its foreground timeout.
    let before = tools.background_pids();
    let r = bash(&tools, json!({"command": "sleep 1000"}));
    assert!(
        r.text
            .starts_with("Command did not complete within its 0.3s timeout"),
        "{r:?}"
    );
    let moved: Vec<u32> = tools
        .background_pids()
        .into_iter()
        .filter(|p| !before.contains(p))
        .collect();
    assert_eq!(moved.len(), 1);
    pgids.extend(moved);

    // Every sleep is running before the drop, so the drop has work to do.
    wait_until("every sleep has started", || {
        sleeps_in_group(plain) == 1
            && sleeps_in_group(orphan) == 2
            && sleeps_in_group(ignores) == 1
            && sleeps_in_group(traps) == 1
    });
    let dir = tools.output_directory().to_path_buf();
    assert!(dir.is_dir());

    drop(tools);
    for &pgid in &pgids {
        assert!(
            live_in_group(pgid).is_empty(),
            "group {pgid} outlived the drop"
        );
    }
    assert!(
        !dir.exists(),
        "output directory {} left behind",
        dir.display()
    );
    assert_gone(&pgids);
    wait_until("no zombie child is left", || zombie_children().is_empty());
}

#[test]
fn stop_all_kills_a_command_ignoring_sigterm_after_kill_grace_and_is_idempotent() {
    let grace = Duration::from_secs(2);
    let tools = builder().kill_grace(grace).build().unwrap();
    let (id, pgid) = start_bg(&tools, "trap '' TERM; sleep 1000");
    wait_until("the sleep has started", || sleeps_in_group(pgid) == 1);

    let t0 = Instant::now();
    tools.stop_all();
    let first = t0.elapsed();
    assert!(
        live_in_group(pgid).is_empty(),
        "stop_all returned with the group alive"
    );
    assert!(
        first >= grace,
        "TERM is ignored, so only KILL after the grace ends it: {first:?}"
    );
    assert!(tools.background_pids().is_empty());

    let t1 = Instant::now();
    tools.stop_all();
    let second = t1.elapsed();
    assert!(
        second < grace,
        "the second stop_all found something to wait for: {second:?}"
    );
    assert!(tools.background_pids().is_empty());
    let r = tools.bash_output(&json!({"bash_id": id}));
    assert!(r.text.starts_with("<status>killed</status>"), "{r:?}");
    drop(tools);
    assert_gone(&[pgid]);
}

#[test]
fn foreground_command_running_in_another_thread_returns_when_stop_all_is_called() {
    let scratch = Scratch::new("fg-stop-all");
    let pid_file = scratch.path("pid");
    let tools = builder()
        .default_timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    let command = format!("echo $$ > '{}'; sleep 1000", pid_file.display());
    let (tx, rx) = crossbeam_channel::bounded(1);
    let pid = std::thread::scope(|s| {
        let _guard = StopOnDrop(&tools);
        s.spawn(|| {
            // Detached, so that `background_pids` tells when its pid is
            // recorded: stop_all then surely finds it running (see
            // `foreground_command_stopped_right_after_it_started_reports_its_exit`).
            let r = tools.bash(
                &json!({ "command": command }),
                &Caller::default().detached(true),
            );
            let _ = tx.send(r);
        });
        let pid = read_pid(&pid_file);
        wait_until("the sleep has started", || sleeps_in_group(pid) == 1);
        wait_until("the pid is recorded", || {
            tools.background_pids() == vec![pid]
        });
        tools.stop_all();
        assert!(
            live_in_group(pid).is_empty(),
            "stop_all returned with the command alive"
        );
        let r = rx
            .recv_timeout(DEADLINE)
            .expect("the foreground call did not return after stop_all");
        assert!(r.is_error, "{r:?}");
        assert!(
            r.text == "Exit code 143" || r.text == "Exit code 137",
            "{r:?}"
        );
        pid
    });
    drop(tools);
    assert_gone(&[pid]);
}

#[test]
fn foreground_command_stopped_right_after_it_started_reports_its_exit() {
    let scratch = Scratch::new("fg-stop-all-race");
    for i in 0..50 {
        let pid_file = scratch.path(&format!("pid-{i}"));
        let tools = tools();
        let command = format!("echo $$ > '{}'; sleep 1000", pid_file.display());
        let (r, pid) = std::thread::scope(|s| {
            let _guard = StopOnDrop(&tools);
            let call = s.spawn(|| bash(&tools, json!({ "command": command })));
            // Stop it as soon as it has visibly run: the call must still
            // answer with how the command ended.
            let end = Instant::now() + DEADLINE;
            let pid: u32 = loop {
                if let Ok(t) = std::fs::read_to_string(&pid_file) {
                    if t.ends_with('\n') {
                        break t.trim().parse().unwrap();
                    }
                }
                assert!(Instant::now() < end, "the command never wrote its pid");
                std::thread::yield_now();
            };
            tools.stop_all();
            (call.join().unwrap(), pid)
        });
        drop(tools);
        assert_gone(&[pid]);
        assert!(
            r.is_error && r.text.starts_with("Exit code "),
            "iteration {i}: the command ran (it wrote {}), yet the call answers {r:?}",
            pid_file.display()
        );
    }
}

#[test]
fn kill_shell_on_an_orphaning_command_leaves_no_live_member_when_it_returns() {
    let tools = tools();
    let (id, pgid) = start_bg(&tools, "(sleep 1000 &); sleep 1000");
    wait_until("both sleeps have started", || sleeps_in_group(pgid) == 2);
    let r = tools.kill_shell(&json!({ "shell_id": id }));
    let left = live_in_group(pgid);
    assert!(left.is_empty(), "kill_shell returned with {left:?} alive");
    assert_eq!(
        (r.text.as_str(), r.is_error),
        (
            format!("Successfully stopped task: {id} ((sleep 1000 &); sleep 1000)").as_str(),
            false
        )
    );
    let r = tools.bash_output(&json!({ "bash_id": id }));
    assert!(
        r.text.starts_with("<status>killed</status>\n<exit_code>"),
        "{r:?}"
    );
    drop(tools);
    assert_gone(&[pgid]);
}

#[test]
fn grandchild_ignoring_sigterm_is_sigkilled_after_the_grace() {
    let grace = Duration::from_secs(1);
    let tools = builder().kill_grace(grace).build().unwrap();
    let (id, pgid) = start_bg(&tools, "bash -c \"trap '' TERM; sleep 1000\" & wait");
    // The inner bash set its trap before it started the sleep.
    wait_until("the grandchild sleep has started", || {
        sleeps_in_group(pgid) == 1
    });
    let t0 = Instant::now();
    let r = tools.kill_shell(&json!({ "shell_id": id }));
    let took = t0.elapsed();
    let left = live_in_group(pgid);
    assert!(left.is_empty(), "kill_shell returned with {left:?} alive");
    assert!(!r.is_error, "{r:?}");
    assert!(
        r.text
            .starts_with(&format!("Successfully stopped task: {id} (")),
        "{r:?}"
    );
    assert!(
        took >= grace,
        "the grandchild ignores TERM: only KILL after the grace ends it ({took:?})"
    );
    drop(tools);
    assert_gone(&[pgid]);
}

#[test]
fn background_pids_lists_background_and_detached_foreground_but_not_attached_foreground() {
    let scratch = Scratch::new("bg-pids");
    let attached_file = scratch.path("attached");
    let detached_file = scratch.path("detached");
    let fifo = scratch.path("release");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let tools = builder()
        .default_timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    let (_, bg) = start_bg(&tools, "sleep 1000");
    assert_eq!(tools.background_pids(), vec![bg]);

    // The attached command ends when released through the fifo, the
    // detached one when stopped.
    let attached_cmd = format!(
        "echo $$ > '{}'; read word < '{}'; echo released-$word",
        attached_file.display(),
        fifo.display()
    );
    let detached_cmd = format!("echo $$ > '{}'; sleep 1000", detached_file.display());
    let pids = std::thread::scope(|s| {
        let _guard = StopOnDrop(&tools);
        let attached =
            s.spawn(|| tools.bash(&json!({ "command": attached_cmd }), &Caller::default()));
        let detached = s.spawn(|| {
            tools.bash(
                &json!({ "command": detached_cmd }),
                &Caller::default().detached(true),
            )
        });
        let attached_pid = read_pid(&attached_file);
        let detached_pid = read_pid(&detached_file);
        wait_until("the detached foreground pid is listed", || {
            tools.background_pids().contains(&detached_pid)
        });
        let listed = tools.background_pids();
        let mut expected = vec![bg, detached_pid];
        expected.sort_unstable();
        assert_eq!(
            listed, expected,
            "attached foreground pid {attached_pid} must not be listed"
        );
        assert!(
            !live_in_group(attached_pid).is_empty(),
            "the attached command is running"
        );

        // Opening the fifo waits for its reader, the attached command.
        std::fs::write(&fifo, "go\n").unwrap();
        let r = attached.join().unwrap();
        assert_eq!((r.text.as_str(), r.is_error), ("released-go", false));
        assert_eq!(tools.background_pids(), expected);

        tools.stop_all();
        let r = detached.join().unwrap();
        assert!(
            r.text == "Exit code 143" || r.text == "Exit code 137",
            "{r:?}"
        );
        assert!(r.is_error);
        assert!(tools.background_pids().is_empty());
        vec![bg, attached_pid, detached_pid]
    });
    drop(tools);
    assert_gone(&pids);
}

#[test]
fn non_utf8_output_becomes_replacement_characters_not_an_error() {
    let tools = tools();
    let r = bash(&tools, json!({"command": r"printf '\xff\xfe ok'"}));
    assert_eq!(r.text, "\u{FFFD}\u{FFFD} ok");
    assert!(!r.is_error);

    let r = bash(
        &tools,
        json!({"command": r"printf 'a\xffb\n'; echo $$", "run_in_background": true}),
    );
    let id = id_of(&r);
    let r = tools.bash_output(&json!({"bash_id": id, "block": true, "timeout": 60}));
    let head = "<status>completed</status>\n<exit_code>0</exit_code>\n<stdout>\na\u{FFFD}b\n";
    assert!(r.text.starts_with(head), "{r:?}");
    assert!(r.text.ends_with("\n</stdout>"), "{r:?}");
    assert!(!r.is_error);
    let pid: u32 = r.text[head.len()..r.text.len() - "\n</stdout>".len()]
        .parse()
        .expect("the pid echoed last");
    drop(tools);
    assert_gone(&[pid]);
}

#[test]
fn endless_line_in_background_is_stopped_at_the_output_cap() {
    let cap: u64 = 1 << 20;
    let scratch = Scratch::new("bg-cap");
    let pid_file = scratch.path("pid");
    let tools = builder().max_output_bytes(cap).build().unwrap();
    // Its pid goes to a file: it may be over the cap before we could list it.
    let command = format!("echo $$ > '{}'; yes | tr -d '\\n'", pid_file.display());
    let r = bash(
        &tools,
        json!({"command": command, "run_in_background": true}),
    );
    assert!(!r.is_error, "{r:?}");
    let id = id_of(&r);
    let r = tools.bash_output(&json!({"bash_id": id, "block": true, "timeout": 120}));
    assert!(!r.is_error, "{r:?}");
    assert!(
        r.text.starts_with("<status>killed</status>\n<exit_code>"),
        "{}",
        &r.text[..r.text.len().min(200)]
    );
    assert!(
        r.text.contains(CAP_TEXT),
        "no cap text in {}",
        &r.text[r.text.len().saturating_sub(300)..]
    );
    assert!(
        r.text
            .ends_with(&format!("{CAP_TEXT} {cap} bytes (max_output_bytes).]")),
        "{}",
        &r.text[r.text.len().saturating_sub(300)..]
    );
    // The leader has been reaped; the rest of the pipeline goes with the stop.
    let pgid = read_pid(&pid_file);
    assert_gone(&[pgid]);
    // The file stopped growing: it holds the cap plus what a few
    // milliseconds of writing can add, not gigabytes.
    let size = std::fs::metadata(tools.output_directory().join(format!("{id}.output")))
        .map(|m| m.len())
        .unwrap_or(0);
    assert!(size < 512 * cap, "output file grew to {size} bytes");
    drop(tools);
    assert_gone(&[pgid]);
}

#[test]
fn foreground_command_exceeding_the_output_cap_is_an_error_naming_the_cap() {
    let cap: u64 = 1 << 20;
    let scratch = Scratch::new("fg-cap");
    let pid_file = scratch.path("pid");
    let tools = builder()
        .max_output_bytes(cap)
        .default_timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    let r = bash(
        &tools,
        json!({"command": format!("echo $$ > '{}'; yes", pid_file.display())}),
    );
    let pid = read_pid(&pid_file);
    assert!(r.is_error, "{}", &r.text[..r.text.len().min(200)]);
    assert!(
        r.text.starts_with("Exit code "),
        "{}",
        &r.text[..r.text.len().min(200)]
    );
    assert!(
        r.text
            .ends_with(&format!("{CAP_TEXT} {cap} bytes (max_output_bytes).]")),
        "{}",
        &r.text[r.text.len().saturating_sub(300)..]
    );
    drop(tools);
    assert_gone(&[pid]);
}

#[test]
fn many_short_commands_leave_no_zombie_child() {
    let tools = tools();
    for i in 0..200 {
        let r = bash(&tools, json!({"command": "true"}));
        assert_eq!(
            (r.text.as_str(), r.is_error),
            ("(Bash completed with no output)", false),
            "call {i}"
        );
    }
    wait_until("no zombie child is left", || zombie_children().is_empty());
    // Each foreground call removed its output file (or emptied it as a
    // spare for the next one).
    let files = common::output_files(tools.output_directory());
    assert!(files.is_empty(), "{files:?}");
}

/// After a drop, nothing of group `pgid` runs; if something does, it is
/// killed before the test fails, so it does not outlive the test run.
fn assert_drop_stopped(pgid: u32) {
    let left = live_in_group(pgid);
    if !left.is_empty() {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pgid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        panic!("drop left {left:?} of group {pgid} running");
    }
    assert_gone(&[pgid]);
}

#[test]
fn drop_after_the_leader_exited_still_stops_the_orphans_left_in_its_group() {
    let tools = tools();
    let r = bash(
        &tools,
        json!({"command": "(sleep 1000 &); echo $$", "run_in_background": true}),
    );
    let id = id_of(&r);
    let r = tools.bash_output(&json!({"bash_id": id, "block": true, "timeout": 60}));
    let head = "<status>completed</status>\n<exit_code>0</exit_code>\n<stdout>\n";
    assert!(r.text.starts_with(head), "{r:?}");
    let pgid: u32 = r.text[head.len()..r.text.len() - "\n</stdout>".len()]
        .parse()
        .expect("the pid echoed");
    // The leader has exited; its orphan sleeps on in its group.
    wait_until("the orphan sleep is running", || sleeps_in_group(pgid) == 1);
    drop(tools);
    assert_drop_stopped(pgid);
}

#[test]
fn drop_after_a_foreground_command_returned_stops_what_it_left_in_its_group() {
    let tools = tools();
    let r = bash(&tools, json!({"command": "(sleep 1000 &); echo $$"}));
    assert!(!r.is_error, "{r:?}");
    let pgid: u32 = r.text.parse().expect("the pid echoed");
    wait_until("the orphan sleep is running", || sleeps_in_group(pgid) == 1);
    drop(tools);
    assert_drop_stopped(pgid);
}
