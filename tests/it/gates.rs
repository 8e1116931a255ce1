//! The gates through the tools (SPEC section 3): `allowed_commands` checks
//! every simple command of a line, the validator is asked after it, and a
//! refused command starts nothing — foreground, background and monitor.

use crate::common::*;
use bashtools::Tasks;
use serde_json::json;

/// Lines that must be refused with `allowed_commands(["echo", "cat"])`, each
/// with the word named, and each trying to create `MARKER`.
const REFUSED: &[(&str, &str)] = &[
    ("echo hi; touch MARKER", "touch"),
    ("echo hi && touch MARKER", "touch"),
    ("echo hi || touch MARKER", "touch"),
    ("echo hi | touch MARKER", "touch"),
    ("echo hi & touch MARKER", "touch"),
    ("echo hi\ntouch MARKER", "touch"),
    ("(touch MARKER)", "touch"),
    ("{ touch MARKER; }", "touch"),
    ("echo $(touch MARKER)", "touch"),
    ("echo \"$(touch MARKER)\"", "touch"),
    ("echo `touch MARKER`", "touch"),
    ("cat <(touch MARKER)", "touch"),
    ("\"t\"ouch MARKER", "touch"),
    ("\\touch MARKER", "touch"),
    ("if true; then touch MARKER; fi", "true"),
    (
        "PATH=/tmp touch MARKER",
        "PATH=… (assignments to PATH are not allowed)",
    ),
];

#[test]
fn every_simple_command_is_checked_and_a_refused_line_starts_nothing() {
    let scratch = Scratch::new("gates");
    let t = builder()
        .working_directory(&scratch.0)
        .allowed_commands(["echo", "cat"])
        .build()
        .unwrap();
    for (line, word) in REFUSED {
        for background in [false, true] {
            let r = bash(
                &t,
                json!({"command": line, "run_in_background": background}),
            );
            assert_eq!(
                (r.text.as_str(), r.is_error),
                (format!("Command not allowed: {word}").as_str(), true),
                "{line:?}"
            );
        }
    }
    assert!(t.background_pids().is_empty());
    assert!(!scratch.path("MARKER").exists(), "a refused command ran");
}

#[test]
fn allowed_lines_run() {
    let t = builder()
        .allowed_commands(["echo", "cat", "true"])
        .build()
        .unwrap();
    let r = bash(
        &t,
        json!({"command": "echo a | cat && true; RUST_LOG=debug echo \"$(echo b)\""}),
    );
    assert_eq!((r.text.as_str(), r.is_error), ("a\nb", false));
}

#[test]
fn a_word_that_is_not_a_plain_literal_is_refused() {
    let t = builder().allowed_commands(["echo"]).build().unwrap();
    for line in ["$CMD x", "\"$(echo echo)\" x", "{echo,rm} x", "ech? x"] {
        let r = bash(&t, json!({"command": line}));
        assert!(
            r.is_error && r.text.starts_with("Command not allowed: "),
            "{line:?}: {}",
            r.text
        );
    }
}

#[test]
fn an_unparsable_line_is_refused() {
    let t = builder().allowed_commands(["echo"]).build().unwrap();
    let r = bash(&t, json!({"command": "echo 'unterminated"}));
    assert!(r.is_error);
    assert!(r.text.starts_with("Command not allowed: "), "{}", r.text);
}

#[test]
fn the_validator_is_asked_after_the_list() {
    let t = builder()
        .allowed_commands(["echo"])
        .validator(|command, _| {
            if command.contains("secret") {
                Err("touches a secret".into())
            } else {
                Ok(())
            }
        })
        .build()
        .unwrap();
    assert_eq!(
        bash(&t, json!({"command": "rm secret"})).text,
        "Command not allowed: rm"
    );
    assert_eq!(
        bash(&t, json!({"command": "echo secret"})).text,
        "Command touches a secret"
    );
    assert_eq!(bash(&t, json!({"command": "echo fine"})).text, "fine");
}

#[test]
fn a_monitor_is_gated_too_and_starts_nothing() {
    let scratch = Scratch::new("gates-monitor");
    let t = builder()
        .working_directory(&scratch.0)
        .tasks(Tasks::new())
        .allowed_commands(["tail"])
        .build()
        .unwrap();
    let r = t.monitor(
        &json!({"description": "d", "command": "tail -f x; touch MARKER"}),
        &me(),
    );
    assert_eq!(
        (r.text.as_str(), r.is_error),
        ("Command not allowed: touch", true)
    );
    assert!(t.background_pids().is_empty());
    assert!(!scratch.path("MARKER").exists());
}

#[test]
fn the_public_checker_gives_the_same_answer() {
    assert_eq!(
        bashtools::gate::check_allowed("git status; cargo test", &["git", "cargo"]),
        Ok(())
    );
    assert_eq!(
        bashtools::gate::check_allowed("git status; sudo rm -rf /", &["git"]),
        Err(bashtools::gate::Denial::NotAllowed {
            word: "sudo".to_string()
        })
    );
}

#[test]
fn text_an_integer_variable_would_evaluate_is_checked_wherever_it_is_assigned() {
    // An integer variable evaluates every value it is given as arithmetic,
    // and an array subscript in arithmetic runs what it holds: once
    // `declare -ai arr; arr[0]='a[$(touch F)]'` ran touch with only
    // `declare` and `echo` listed.
    let scratch = Scratch::new("gates-integer");
    let t = builder()
        .working_directory(&scratch.0)
        .allowed_commands(["declare", "echo"])
        .build()
        .unwrap();
    for line in [
        "declare -ai arr; arr[0]='a[$(touch MARKER)]'; echo ${arr[0]}",
        "declare -Ai map; map[k]='a[$(touch MARKER)]'; echo ${map[k]}",
        "declare -ai arr=([0]='a[$(touch MARKER)]')",
        "declare -ai arr; arr+=('a[`touch MARKER`]')",
        "declare -i x; x='a[$(touch MARKER)]'",
    ] {
        let r = bash(&t, json!({"command": line}));
        assert_eq!(
            (r.text.as_str(), r.is_error),
            ("Command not allowed: touch", true),
            "{line:?}"
        );
    }
    assert!(!scratch.path("MARKER").exists(), "a refused command ran");
    // Integers themselves are fine.
    let r = bash(
        &t,
        json!({"command": "declare -ai a=(1 2); a[1]+=3; echo ${a[@]}"}),
    );
    assert_eq!(r.text, "1 5");
}
