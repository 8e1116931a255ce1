//! A command longer than the kernel's limit for one argument (128 KiB:
//! `bash -c` alone would fail with E2BIG) runs anyway, with the semantics of
//! a short one.

use crate::common::*;
use serde_json::json;

#[test]
fn a_300_kb_here_document_runs_like_a_short_command() {
    let line = "x".repeat(99);
    let body: String = (0..3000).map(|i| format!("{i:05} {line}\n")).collect();
    let cmd = format!("echo \"$0 $# $LINENO\"\nwc -lc <<'EOF'\n{body}EOF\nexit 7");
    assert!(cmd.len() > 300_000);
    let tools = tools();
    let r = bash(&tools, json!({"command": cmd}));
    assert!(r.is_error, "{}", r.text);
    let lines: Vec<&str> = r.text.lines().collect();
    assert_eq!(lines[0], "Exit code 7");
    assert_eq!(lines[1], "bash 0 1", "$0, $# and $LINENO as with bash -c");
    let counts: Vec<&str> = lines[2].split_whitespace().collect();
    assert_eq!(counts, ["3000", &body.len().to_string()]);
}

#[test]
fn a_long_commands_descriptor_is_not_inherited() {
    let list = "ls /proc/self/fd | sort -n | tr '\\n' ' '";
    let tools = tools();
    let short = bash(&tools, json!({"command": list}));
    let pad = format!("# {}\n", "p".repeat(200_000));
    let long = bash(&tools, json!({"command": format!("{pad}{list}")}));
    assert!(!long.is_error, "{}", long.text);
    // Whatever the host lets commands inherit, the long command has no
    // descriptor more than a short one.
    assert_eq!(long.text, short.text);
}
