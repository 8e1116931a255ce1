//! The `bash` tool: every text and behaviour of SPEC section 4 for `bash`.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use common::*;
use serde_json::json;

#[test]
fn output_of_a_successful_command() {
    let t = tools();
    let r = bash(&t, json!({"command": "echo hello"}));
    assert_eq!(r.text, "hello");
    assert!(!r.is_error);
}

#[test]
fn no_output_says_so() {
    let t = tools();
    let r = bash(&t, json!({"command": "true"}));
    assert_eq!(r.text, "(Bash completed with no output)");
    assert!(!r.is_error);
}

#[test]
fn whitespace_only_output_counts_as_none() {
    let t = tools();
    let r = bash(&t, json!({"command": "printf '\\n  \\n\\t\\n'"}));
    assert_eq!(r.text, "(Bash completed with no output)");
}

#[test]
fn nonzero_exit_is_an_error_with_its_code() {
    let t = tools();
    let r = bash(&t, json!({"command": "exit 3"}));
    assert_eq!(r.text, "Exit code 3");
    assert!(r.is_error);
    let r = bash(&t, json!({"command": "echo oops; exit 4"}));
    assert_eq!(r.text, "Exit code 4\noops");
    assert!(r.is_error);
}

#[test]
fn death_by_signal_is_128_plus_the_signal() {
    let t = tools();
    let r = bash(&t, json!({"command": "echo before; kill -KILL $$"}));
    assert_eq!(r.text, "Exit code 137\nbefore");
    assert!(r.is_error);
    let r = bash(&t, json!({"command": "kill -TERM $$"}));
    assert_eq!(r.text, "Exit code 143");
}

#[test]
fn leading_blank_lines_and_trailing_whitespace_are_trimmed() {
    let t = tools();
    let r = bash(
        &t,
        json!({"command": "printf '\\n \\n\\n  indented\\nlast  \\n\\n\\t\\n'"}),
    );
    assert_eq!(r.text, "  indented\nlast");
}

#[test]
fn stdout_and_stderr_keep_the_order_they_were_written_in() {
    let t = tools();
    let r = bash(
        &t,
        json!({"command": "for i in $(seq 1 200); do echo out$i; echo err$i >&2; done"}),
    );
    let expected: Vec<String> = (1..=200)
        .flat_map(|i| [format!("out{i}"), format!("err{i}")])
        .collect();
    assert_eq!(r.text, expected.join("\n"));
}

/// A command printing exactly `n` characters of `c`.
fn print_n(c: &str, n: usize) -> serde_json::Value {
    json!({"command": format!("for i in $(seq 1 {n}); do printf '%s' '{c}'; done")})
}

#[test]
fn output_of_exactly_the_limit_is_not_truncated() {
    let t = builder().output_limit(10).build().unwrap();
    assert_eq!(bash(&t, print_n("x", 9)).text, "x".repeat(9));
    assert_eq!(bash(&t, print_n("x", 10)).text, "x".repeat(10));
}

#[test]
fn output_one_past_the_limit_keeps_head_and_tail() {
    let t = builder().output_limit(10).build().unwrap();
    let r = bash(&t, json!({"command": "printf 'abcdefghijk'"}));
    assert_eq!(r.text, "abcde\n\n... [1 characters truncated] ...\n\nghijk");
}

#[test]
fn truncation_counts_characters_not_bytes() {
    let t = builder().output_limit(10).build().unwrap();
    assert_eq!(bash(&t, print_n("é", 10)).text, "é".repeat(10));
    let r = bash(&t, print_n("日", 13));
    assert_eq!(
        r.text,
        format!(
            "{}\n\n... [3 characters truncated] ...\n\n{}",
            "日".repeat(5),
            "日".repeat(5)
        )
    );
}

#[test]
fn huge_output_returns_at_most_the_limit_plus_the_marker() {
    let t = tools();
    // 200 MB of 'a' with no newline, then a last line.
    let r = bash(
        &t,
        json!({"command": "head -c 200000000 /dev/zero | tr '\\0' a; echo; echo the end"}),
    );
    assert!(!r.is_error, "{}", &r.text[..200.min(r.text.len())]);
    let marker = "\n\n... [199970008 characters truncated] ...\n\n";
    assert!(r.text.contains(marker), "marker missing");
    assert_eq!(r.text.chars().count(), 30_000 + marker.chars().count());
    assert!(r.text.ends_with("a\nthe end"));
}

#[test]
fn invalid_utf8_is_replaced_not_an_error() {
    let t = tools();
    let r = bash(&t, json!({"command": "printf 'ok \\xff\\xfe end'"}));
    assert_eq!(r.text, "ok \u{FFFD}\u{FFFD} end");
    assert!(!r.is_error);
}

#[test]
fn timeout_moves_the_command_to_the_background_without_killing_it() {
    let t = tools();
    let r = bash(
        &t,
        json!({"command": "sleep 0.5; echo finished", "timeout": 0.2}),
    );
    assert!(!r.is_error);
    let path = t.output_directory().join("bash_1.output");
    assert_eq!(
        r.text,
        format!(
            "Command did not complete within its 0.2s timeout and was moved to the background (ID: bash_1). Output is being written to: {}. To check interim output, use bash_output with that ID.",
            path.display()
        )
    );
    let r = t.bash_output(&json!({"bash_id": "bash_1", "block": true}));
    assert_eq!(
        r.text,
        "<status>completed</status>\n<exit_code>0</exit_code>\n<stdout>\nfinished\n</stdout>"
    );
}

#[test]
fn default_timeout_applies_without_one() {
    let t = builder()
        .default_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let r = bash(&t, json!({"command": "sleep 30"}));
    assert!(
        r.text
            .starts_with("Command did not complete within its 0.3s timeout"),
        "{}",
        r.text
    );
}

#[test]
fn a_timeout_above_the_maximum_is_cut_down() {
    let t = builder()
        .max_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let r = bash(&t, json!({"command": "sleep 30", "timeout": 100}));
    assert!(
        r.text
            .starts_with("Command did not complete within its 0.3s timeout"),
        "{}",
        r.text
    );
}

#[test]
fn run_in_background_answers_at_once() {
    let t = tools();
    let r = bash(
        &t,
        json!({"command": "sleep 30", "run_in_background": true}),
    );
    let path = t.output_directory().join("bash_1.output");
    assert_eq!(
        r.text,
        format!(
            "Command running in background with ID: bash_1. Output is being written to: {}.",
            path.display()
        )
    );
    assert!(!r.is_error);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "output file mode");
    let mode = std::fs::metadata(t.output_directory())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o700, "output directory mode");
}

#[test]
fn ids_count_up_and_are_never_reused() {
    let t = tools();
    let mut ids = Vec::new();
    for _ in 0..3 {
        let r = bash(&t, json!({"command": "true", "run_in_background": true}));
        ids.push(id_of(&r));
    }
    let r = bash(&t, json!({"command": "sleep 5", "timeout": 0.1}));
    ids.push(id_of(&r));
    assert_eq!(ids, ["bash_1", "bash_2", "bash_3", "bash_4"]);
}

#[test]
fn working_directory_argument_then_caller_then_configured() {
    let base = std::env::temp_dir().join(format!("bashtools-wd-{}", std::process::id()));
    let sub = base.join("sub");
    let other = base.join("other");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    let t = builder().working_directory(&base).build().unwrap();
    let pwd = |input: serde_json::Value, caller: bashtools::Caller| t.bash(&input, &caller).text;
    let canon = |p: &std::path::Path| p.canonicalize().unwrap().display().to_string();
    assert_eq!(pwd(json!({"command": "pwd -P"}), me()), canon(&base));
    assert_eq!(
        pwd(
            json!({"command": "pwd -P", "working_directory": "sub"}),
            me()
        ),
        canon(&sub)
    );
    assert_eq!(
        pwd(json!({"command": "pwd -P"}), me().working_directory(&other)),
        canon(&other)
    );
    assert_eq!(
        pwd(
            json!({"command": "pwd -P", "working_directory": sub.to_str().unwrap()}),
            me().working_directory(&other)
        ),
        canon(&sub)
    );
    drop(t);
    std::fs::remove_dir_all(&base).unwrap();
}

#[test]
fn commands_get_a_noninteractive_environment() {
    let t = tools();
    let r = bash(
        &t,
        json!({"command": "echo $PAGER $GIT_PAGER $GIT_EDITOR $TERM"}),
    );
    assert_eq!(r.text, "cat cat true dumb");
}

#[test]
fn environment_options_set_and_remove_variables() {
    let t = builder()
        .noninteractive_env(false)
        .env("BASHTOOLS_TEST_VAR", "set by the builder")
        .env("PAGER", "more")
        .env_remove("HOME")
        .build()
        .unwrap();
    let r = bash(
        &t,
        json!({"command": "echo \"$BASHTOOLS_TEST_VAR|$PAGER|${HOME-unset}|${GIT_EDITOR-unset}\""}),
    );
    assert_eq!(r.text, "set by the builder|more|unset|unset");
}

#[test]
fn stdin_is_dev_null() {
    let t = tools();
    let r = bash(&t, json!({"command": "cat; readlink /proc/self/fd/0"}));
    assert_eq!(r.text, "/dev/null");
}

#[test]
fn each_command_leads_a_process_group_of_its_own() {
    let t = tools();
    let r = bash(
        &t,
        json!({"command": "echo $$; cut -d' ' -f5 /proc/$$/stat"}),
    );
    let lines: Vec<&str> = r.text.lines().collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0], lines[1], "pid equals pgid");
    let host_pgid = nix::unistd::getpgrp().as_raw().to_string();
    assert_ne!(lines[1], host_pgid);
}

#[test]
fn the_child_gets_an_empty_signal_mask_and_default_dispositions() {
    use nix::sys::signal::{sigprocmask, SigSet, SigmaskHow, Signal};
    let t = tools();
    // Block SIGTERM on this thread (the one that forks), as a host using
    // signal-hook or a signal-handling thread might.
    let mut set = SigSet::empty();
    set.add(Signal::SIGTERM);
    set.add(Signal::SIGUSR1);
    let mut old = SigSet::empty();
    sigprocmask(SigmaskHow::SIG_BLOCK, Some(&set), Some(&mut old)).unwrap();
    let r = bash(
        &t,
        json!({"command": "grep -E '^Sig(Blk|Ign)' /proc/self/status"}),
    );
    sigprocmask(SigmaskHow::SIG_SETMASK, Some(&old), None).unwrap();
    assert_eq!(
        r.text,
        "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000"
    );
}

#[test]
fn description_is_accepted() {
    let t = tools();
    let r = bash(&t, json!({"command": "echo hi", "description": "say hi"}));
    assert_eq!(r.text, "hi");
}

#[test]
fn gates_refuse_with_the_spec_texts() {
    let t = builder()
        .allowed_commands(["echo", "true"])
        .build()
        .unwrap();
    let r = bash(&t, json!({"command": "echo hi && rm -rf nothing"}));
    assert_eq!(
        (r.text.as_str(), r.is_error),
        ("Command not allowed: rm", true)
    );
    let r = bash(&t, json!({"command": "echo allowed; true"}));
    assert_eq!(r.text, "allowed");

    let t = builder()
        .validator(|_, _| Err("blocked by policy".into()))
        .build()
        .unwrap();
    let r = bash(&t, json!({"command": "echo hi"}));
    assert_eq!(
        (r.text.as_str(), r.is_error),
        ("Command blocked by policy", true)
    );

    let t = builder()
        .validator(|_, _| Err(String::new()))
        .build()
        .unwrap();
    assert_eq!(
        bash(&t, json!({"command": "echo hi"})).text,
        "Command denied"
    );
}

#[test]
fn the_validator_sees_the_command_and_its_directory() {
    let seen = std::sync::Arc::new(parking_lot::Mutex::new(Vec::new()));
    let log = seen.clone();
    let t = builder()
        .working_directory("/")
        .validator(move |command, cwd| {
            log.lock().push((command.to_string(), cwd.to_path_buf()));
            Ok(())
        })
        .build()
        .unwrap();
    bash(&t, json!({"command": "true", "working_directory": "tmp"}));
    bash(&t, json!({"command": "sleep 0", "run_in_background": true}));
    let seen = seen.lock();
    assert_eq!(
        seen[0],
        ("true".to_string(), std::path::PathBuf::from("/tmp"))
    );
    assert_eq!(
        seen[1],
        ("sleep 0".to_string(), std::path::PathBuf::from("/"))
    );
}

#[test]
fn the_allowed_list_is_checked_for_background_commands_too() {
    let t = builder().allowed_commands(["sleep"]).build().unwrap();
    let r = bash(
        &t,
        json!({"command": "sleep 1; touch x", "run_in_background": true}),
    );
    assert_eq!(r.text, "Command not allowed: touch");
    assert!(t.background_pids().is_empty());
}
