//! One `BashTools` shared by many threads: foreground calls, background
//! shells read to the end with `bash_output`, and `kill_shell`, all at once,
//! give exact output, unique IDs, and no deadlock (SPEC sections 2 and 10).

mod common;

use std::collections::hash_map::DefaultHasher;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bashtools::BashTools;
use common::*;
use serde_json::json;

const THREADS: usize = 8;
const ITERATIONS: usize = 10;
/// Lines of a foreground payload, and of a background one.
const FG_LINES: usize = 2000;
const BG_LINES: usize = 20000;
/// The whole test, from the first thread to the last join.
const WATCHDOG: Duration = Duration::from_secs(120);

/// `seq 1 N` with every line prefixed, as a command that also writes its
/// pid (its pgid) to `pid_file`.
fn payload_command(prefix: &str, lines: usize, pid_file: &Path) -> String {
    format!(
        "echo $$ > '{}'; seq 1 {lines} | awk '{{print \"{prefix}-\" $0}}'",
        pid_file.display()
    )
}

fn payload_lines(prefix: &str, lines: usize) -> Vec<String> {
    (1..=lines).map(|n| format!("{prefix}-{n}")).collect()
}

/// The lines concatenated without separators: a chunk boundary that falls
/// inside a line (and the trimming at chunk ends) cannot change it.
fn checksum<S: AsRef<str>>(lines: impl IntoIterator<Item = S>) -> (u64, usize) {
    let mut h = DefaultHasher::new();
    let mut len = 0;
    for line in lines {
        let line = line.as_ref();
        len += line.len();
        for b in line.bytes() {
            b.hash(&mut h);
        }
    }
    (h.finish(), len)
}

/// The `<stdout>` chunk of a bash_output answer, if any.
fn stdout_chunk(text: &str) -> Option<&str> {
    let start = text.find("\n<stdout>\n")? + "\n<stdout>\n".len();
    let end = text.rfind("\n</stdout>")?;
    Some(&text[start..end])
}

fn status_of(text: &str) -> &str {
    text.strip_prefix("<status>")
        .and_then(|t| t.split("</status>").next())
        .unwrap_or("?")
}

/// One worker: returns the IDs it was given and the pgids it started.
fn worker(tools: &BashTools, t: usize, dir: &Path) -> (Vec<String>, Vec<u32>) {
    let mut ids = Vec::new();
    let mut pgids = Vec::new();
    for i in 0..ITERATIONS {
        // 1. Foreground: the exact output.
        let prefix = format!("fg{t}-{i}");
        let pid_file = dir.join(format!("{prefix}.pid"));
        let r = bash(
            tools,
            json!({"command": payload_command(&prefix, FG_LINES, &pid_file), "timeout": 600}),
        );
        assert!(
            !r.is_error,
            "{prefix}: {}",
            &r.text[..r.text.len().min(300)]
        );
        assert!(
            r.text == payload_lines(&prefix, FG_LINES).join("\n"),
            "{prefix}: wrong output ({} bytes, starts {:?})",
            r.text.len(),
            &r.text[..r.text.len().min(100)]
        );
        pgids.push(read_pid(&pid_file));

        // 2. Background, read with block until it has ended; every chunk counts.
        let prefix = format!("bg{t}-{i}");
        let pid_file = dir.join(format!("{prefix}.pid"));
        let r = bash(
            tools,
            json!({"command": payload_command(&prefix, BG_LINES, &pid_file), "run_in_background": true}),
        );
        assert!(!r.is_error, "{prefix}: {r:?}");
        let id = id_of(&r);
        ids.push(id.clone());
        let mut lines: Vec<String> = Vec::new();
        let end = Instant::now() + WATCHDOG;
        for read in 0.. {
            // The first reads do not block: they catch the output while it
            // is being written, so a chunk may end inside a line.
            let block = read >= 3;
            let r = tools.bash_output(&json!({"bash_id": id, "block": block, "timeout": 60}));
            assert!(!r.is_error, "{prefix} {id}: {r:?}");
            if let Some(chunk) = stdout_chunk(&r.text) {
                lines.extend(chunk.lines().map(str::to_string));
            }
            match status_of(&r.text) {
                "running" => assert!(Instant::now() < end, "{prefix} {id} never ended"),
                "completed" => {
                    assert!(r.text.contains("\n<exit_code>0</exit_code>"), "{r:?}");
                    break;
                }
                other => panic!("{prefix} {id}: status {other}: {r:?}"),
            }
        }
        // Nothing more to read once it has ended.
        let r = tools.bash_output(&json!({"bash_id": id}));
        assert_eq!(
            r.text, "<status>completed</status>\n<exit_code>0</exit_code>",
            "{prefix} {id}"
        );
        assert_eq!(
            checksum(&lines),
            checksum(payload_lines(&prefix, BG_LINES)),
            "{prefix} {id}: the chunks do not add up to the output"
        );
        pgids.push(read_pid(&pid_file));

        // 3. A sleeper, killed.
        let prefix = format!("kill{t}-{i}");
        let pid_file = dir.join(format!("{prefix}.pid"));
        let command = format!("echo $$ > '{}'; sleep 1000", pid_file.display());
        let r = bash(
            tools,
            json!({"command": command, "run_in_background": true}),
        );
        assert!(!r.is_error, "{prefix}: {r:?}");
        let id = id_of(&r);
        ids.push(id.clone());
        let pgid = read_pid(&pid_file);
        pgids.push(pgid);
        let r = tools.kill_shell(&json!({ "shell_id": id }));
        assert_eq!(
            (r.text.as_str(), r.is_error),
            (
                format!("Successfully stopped task: {id} ({command})").as_str(),
                false
            ),
            "{prefix}"
        );
        let left = live_in_group(pgid);
        assert!(
            left.is_empty(),
            "{prefix} {id}: {left:?} alive after kill_shell"
        );
        let r = tools.bash_output(&json!({ "bash_id": id }));
        assert!(
            r.text.starts_with("<status>killed</status>"),
            "{prefix} {id}: {r:?}"
        );
    }
    (ids, pgids)
}

/// Sends on drop, so the watchdog hears of a worker that panicked too.
struct Done(crossbeam_channel::Sender<()>);

impl Drop for Done {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

#[test]
fn eight_threads_sharing_one_tools_get_exact_output_unique_ids_and_no_deadlock() {
    let scratch = Arc::new(Scratch::new("shared"));
    let tools = Arc::new(
        builder()
            .output_limit(1_000_000)
            .build()
            .expect("tools build"),
    );
    let (tx, rx) = crossbeam_channel::unbounded();
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let tools = tools.clone();
            let scratch = scratch.clone();
            let done = Done(tx.clone());
            std::thread::spawn(move || {
                let _done = done;
                worker(&tools, t, &scratch.0)
            })
        })
        .collect();
    drop(tx);

    let deadline = Instant::now() + WATCHDOG;
    for n in 0..THREADS {
        if rx.recv_deadline(deadline).is_err() {
            // Stop what is running, so the processes do not outlive the test.
            tools.stop_all();
            panic!("deadlock? only {n} of {THREADS} threads finished within {WATCHDOG:?}");
        }
    }
    let mut all_ids = Vec::new();
    let mut all_pgids = Vec::new();
    let mut failures = Vec::new();
    for (t, h) in handles.into_iter().enumerate() {
        match h.join() {
            Ok((ids, pgids)) => {
                all_ids.extend(ids);
                all_pgids.extend(pgids);
            }
            Err(e) => {
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                failures.push(format!("thread {t}: {msg}"));
            }
        }
    }
    if !failures.is_empty() {
        tools.stop_all();
        panic!(
            "{} thread(s) failed:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }

    let unique: HashSet<&String> = all_ids.iter().collect();
    assert_eq!(all_ids.len(), THREADS * ITERATIONS * 2);
    assert_eq!(unique.len(), all_ids.len(), "an ID was given twice");
    for n in 1..=all_ids.len() {
        assert!(
            unique.contains(&format!("bash_{n}")),
            "bash_{n} was skipped"
        );
    }
    assert!(tools.background_pids().is_empty());

    let tools = Arc::try_unwrap(tools).unwrap_or_else(|_| panic!("a thread still holds the tools"));
    drop(tools);
    assert_gone(&all_pgids);
    wait_until("no zombie child is left", || zombie_children().is_empty());
}
