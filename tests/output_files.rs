//! A foreground command's output file, once its result is read: reused for
//! the next command when nothing can write it any more (a "spare"), else
//! removed. Real commands; the inode a command writes to is read from
//! inside it (`stat -L /proc/self/fd/1`).

mod common;

use std::path::Path;

use common::*;
use serde_json::json;

/// The inode of the file a command's stdout is, printed by the command on
/// its last line after `text`.
const SHOW_INODE: &str = "stat -Lc %i /proc/self/fd/1";

/// Held by each test for its whole run: a spawn on another thread holds,
/// until its exec, a copy of the process's descriptors, which keeps the
/// output file's writing one open after its command has ended; the file
/// then still has a writer and is rightly not reused. Tests that count on
/// a reuse therefore run one at a time.
static ONE_AT_A_TIME: parking_lot::Mutex<()> = parking_lot::const_mutex(());

/// Whether this machine grants file leases, which the reuse is decided by.
fn leases_enabled() -> bool {
    std::fs::read_to_string("/proc/sys/fs/leases-enable").map_or(true, |s| s.trim() == "1")
}

/// Runs `command` in the foreground; returns its output's lines.
fn run(tools: &bashtools::BashTools, command: &str) -> Vec<String> {
    let r = bash(tools, json!({ "command": command }));
    assert!(!r.is_error, "{command}: {}", r.text);
    r.text.lines().map(str::to_string).collect()
}

/// The last line of a command that ended with [`SHOW_INODE`].
fn inode(lines: &[String]) -> u64 {
    lines
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("no inode in {lines:?}"))
}

#[test]
fn a_finished_commands_file_is_emptied_and_reused_by_the_next() {
    let _one = ONE_AT_A_TIME.lock();
    let tools = tools();
    let first = run(&tools, &format!("echo first; {SHOW_INODE}"));
    assert_eq!(first[0], "first");
    // Its flags are a new file's: write-only, blocking, not appending.
    let second = run(
        &tools,
        &format!("echo second; grep flags /proc/self/fdinfo/1 >&2; {SHOW_INODE}"),
    );
    // Only its own output: the reused file was emptied.
    assert_eq!(second.len(), 3, "{second:?}");
    assert_eq!(second[0], "second");
    // O_WRONLY (1), and neither O_NONBLOCK (04000)
    // nor O_APPEND (02000): octal, as the kernel prints it.
    let flags = second[1].trim_start_matches("flags:").trim();
    let flags = u32::from_str_radix(flags, 8).unwrap_or_else(|_| panic!("{second:?}"));
    assert_eq!(flags & 0o3, 1, "{second:?}");
    assert_eq!(flags & 0o6000, 0, "{second:?}");
    if leases_enabled() {
        assert_eq!(inode(&first), inode(&second), "the file was not reused");
    } else {
        eprintln!("file leases are off here (fs.leases-enable=0): checking the fallback");
    }
    // Between commands no output file is left, only empty spares.
    assert!(output_files(tools.output_directory()).is_empty());
    let dir = tools.output_directory().to_path_buf();
    drop(tools);
    assert!(!dir.exists(), "the spares went with the directory");
}

#[test]
fn a_file_a_leftover_process_still_holds_is_not_reused() {
    let _one = ONE_AT_A_TIME.lock();
    let tools = tools();
    let scratch = Scratch::new("held");
    let stop = scratch.0.join("stop");
    // The subshell keeps the command's stdout open after the command ends.
    let lingering = run(
        &tools,
        &format!(
            "(while [ ! -e {stop} ]; do sleep 0.02; done; echo late) & echo $!; {SHOW_INODE}",
            stop = stop.display()
        ),
    );
    let pid: u32 = lingering[0].trim().parse().unwrap();
    let next = run(&tools, &format!("echo next; {SHOW_INODE}"));
    assert_eq!(next[0], "next");
    assert_ne!(
        inode(&lingering),
        inode(&next),
        "a file still open for writing was reused"
    );
    std::fs::write(&stop, "").unwrap();
    wait_until("the leftover process has ended", || {
        !Path::new(&format!("/proc/{pid}")).exists()
    });
    // What it wrote last went to its own file, never to a later result.
    let after = run(&tools, &format!("echo after; {SHOW_INODE}"));
    assert!(!after.iter().any(|l| l == "late"), "{after:?}");
    assert_eq!(after[0], "after");
    assert!(output_files(tools.output_directory()).is_empty());
    assert!(zombie_children().is_empty());
}

#[test]
fn a_big_file_is_deleted_not_emptied_for_reuse() {
    let _one = ONE_AT_A_TIME.lock();
    let tools = tools();
    // Past the 1 MiB a spare may hold: emptying it would free its blocks
    // on the way of the result.
    // The inode and its birth: a file system may give a freed inode's
    // number to the next new file, never its birth time.
    let show = "stat -Lc '%i %w' /proc/self/fd/1";
    let big = run(&tools, &format!("head -c 2000000 /dev/zero; echo; {show}"));
    let next = run(&tools, &format!("echo next; {show}"));
    assert_ne!(big.last(), next.last(), "the big file was reused");
    assert_eq!(next[0], "next");
    // A small one is reused again.
    let after = run(&tools, &format!("echo after; {show}"));
    if leases_enabled() {
        assert_eq!(next.last(), after.last(), "the small file was not reused");
    }
    assert!(output_files(tools.output_directory()).is_empty());
}

#[test]
fn the_output_cap_holds_on_a_reused_file() {
    let _one = ONE_AT_A_TIME.lock();
    let cap = 100_000;
    let tools = builder().max_output_bytes(cap).build().unwrap();
    for round in 0..3 {
        // A quick command leaves a spare; the next one gets it.
        run(&tools, "true");
        let r = bash(
            &tools,
            json!({"command": "while :; do head -c 65536 /dev/zero | tr '\\0' a; done"}),
        );
        assert!(
            r.text.contains(&format!("{cap} bytes (max_output_bytes)")),
            "round {round}: {}",
            &r.text[r.text.len().saturating_sub(300)..]
        );
    }
    assert!(output_files(tools.output_directory()).is_empty());
    assert!(zombie_children().is_empty());
}

#[test]
fn a_command_that_replaced_its_output_file_never_has_another_file_emptied() {
    let _one = ONE_AT_A_TIME.lock();
    let tools = tools();
    let scratch = Scratch::new("victim");
    for how in ["ln -f", "ln -sf"] {
        let victim = scratch.0.join(format!("victim-{}", how.len()));
        std::fs::write(&victim, "precious\n").unwrap();
        // The command puts a link to the victim where its output file was.
        let r = bash(
            &tools,
            json!({"command": format!(
                "p=$(readlink /proc/$$/fd/1); {how} {} \"$p\"",
                victim.display()
            )}),
        );
        assert!(!r.is_error, "{how}: {}", r.text);
        // Once the file was put back (`output_files` waits for that): its
        // link in the output directory was removed, nothing more.
        assert!(output_files(tools.output_directory()).is_empty(), "{how}");
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "precious\n",
            "{how}: the victim was emptied"
        );
        use std::os::unix::fs::MetadataExt;
        assert_eq!(std::fs::metadata(&victim).unwrap().nlink(), 1, "{how}");
        // And the next command's output is its own.
        assert_eq!(run(&tools, "echo own"), ["own"], "{how}");
    }
}

/// The kernel watches this process's inotify instances hold now (the
/// output cap's), from `/proc/self/fdinfo`.
fn inotify_watches() -> usize {
    let Ok(fds) = std::fs::read_dir("/proc/self/fd") else {
        return 0;
    };
    fds.flatten()
        .filter(|fd| {
            std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == "anon_inode:inotify")
        })
        .filter_map(|fd| {
            std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.file_name().to_str()?)).ok()
        })
        .map(|info| {
            info.lines()
                .filter(|l| l.starts_with("inotify wd:"))
                .count()
        })
        .sum()
}

#[test]
fn ended_commands_leave_a_bounded_number_of_kernel_watches() {
    let _one = ONE_AT_A_TIME.lock();
    let before = inotify_watches();
    let tools = tools();
    // Background commands: their files stay, so the kernel never drops
    // their watches by itself; only the cap's bound removes them.
    let n = 300;
    for _ in 0..n {
        let r = bash(
            &tools,
            json!({"command": "true", "run_in_background": true}),
        );
        let id = bashtools::ShellId::from(id_of(&r));
        let info = tools.wait(&id, DEADLINE).unwrap();
        assert_eq!(info.exit_code(), Some(0), "{info:?}");
    }
    let files = output_files(tools.output_directory());
    assert_eq!(files.len(), n, "each background file stays");
    // At most 64 parked, at most 65 ended sessions not yet pruned (session
    // mode), a few spares: far fewer than one per command.
    let after = inotify_watches();
    assert!(
        after <= before + 64 + 65 + 4,
        "{after} watches after {n} ended commands ({before} before)"
    );
    // The cap still holds on a file whose watch may be a parked one.
    let capped = builder().max_output_bytes(100_000).build().unwrap();
    run(&capped, "true");
    let r = bash(
        &capped,
        json!({"command": "while :; do head -c 65536 /dev/zero | tr '\\0' a; done"}),
    );
    assert!(
        r.text.contains("100000 bytes (max_output_bytes)"),
        "{}",
        &r.text[..200.min(r.text.len())]
    );
    assert!(zombie_children().is_empty());
}

#[test]
fn a_late_write_by_name_to_a_finished_file_never_reaches_the_next_result() {
    let _one = ONE_AT_A_TIME.lock();
    let tools = tools();
    let scratch = Scratch::new("by-name");
    let (go, wrote, ready) = (
        scratch.0.join("go"),
        scratch.0.join("wrote"),
        scratch.0.join("ready"),
    );
    // A leftover process that holds nothing of the file, but knows its
    // name, and appends to it once told to. The command ends only once the
    // leftover has let go of its copy of the output (otherwise the file,
    // still open elsewhere, is deleted rather than kept, and the write by
    // name makes a new file of that name: not this test's case).
    let first = run(
        &tools,
        &format!(
            "p=$(readlink /proc/$$/fd/1); \
             (exec >/dev/null 2>&1; : > {ready}; while [ ! -e {go} ]; do sleep 0.02; done; \
              echo late-write-by-name >> \"$p\"; : > {wrote}) & \
             while [ ! -e {ready} ]; do sleep 0.01; done; echo $!",
            go = go.display(),
            wrote = wrote.display(),
            ready = ready.display()
        ),
    );
    let pid: u32 = first[0].trim().parse().unwrap();
    std::fs::write(&go, "").unwrap();
    wait_until("the leftover process has written and ended", || {
        wrote.exists() && !Path::new(&format!("/proc/{pid}")).exists()
    });
    // The spare it wrote to is not handed out: the next output is its own.
    assert_eq!(run(&tools, "echo next"), ["next"]);
    let left = output_files(tools.output_directory());
    assert!(left.is_empty(), "{left:?}");
    assert!(zombie_children().is_empty());
}
