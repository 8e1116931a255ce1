//! Secrets never reach the model (README, "Secrets"), on real processes: values of
//! secret variables are masked in results, reads, notifications and
//! monitor events, whole or cut; the output file keeps them.

use bashtools::{BashTools, Caller, Tasks};
use serde_json::json;

use crate::common::{self, Scratch};

const TOKEN: &str = "ghp_0123456789abcdefghijklmnopqrstuvwxyz";

fn tools(dir: &Scratch) -> BashTools {
    common::builder()
        .working_directory(dir.path(""))
        .tasks(Tasks::new())
        .env("GITHUB_TOKEN", TOKEN)
        .env("DEPLOY_URL", "https://deploy.example.com/hook/secret-path")
        .env("SHORT_TOKEN", "abc123")
        .env("PLAIN", "a value nobody hides")
        .redact_env(["DEPLOY_URL"])
        .build()
        .unwrap()
}

fn no_piece_of(text: &str, secret: &str) {
    for window in secret.as_bytes().windows(8) {
        let piece = std::str::from_utf8(window).unwrap();
        assert!(!text.contains(piece), "{piece:?} of a secret in {text:?}");
    }
}

#[test]
fn env_output_is_masked_and_short_values_are_left() {
    let dir = Scratch::new("secrets-env");
    let t = tools(&dir);
    let r = t.bash(&json!({"command": "env | sort"}), &Caller::default());
    assert!(
        r.text.contains("GITHUB_TOKEN=[redacted GITHUB_TOKEN]"),
        "{}",
        r.text
    );
    assert!(
        r.text.contains("DEPLOY_URL=[redacted DEPLOY_URL]"),
        "{}",
        r.text
    );
    assert!(r.text.contains("SHORT_TOKEN=abc123"), "{}", r.text);
    assert!(r.text.contains("PLAIN=a value nobody hides"), "{}", r.text);
    no_piece_of(&r.text, TOKEN);
    assert_eq!(r.output.as_deref(), Some(r.text.as_str()));
}

#[test]
fn a_value_cut_by_the_head_and_tail_is_masked_in_both_parts() {
    let dir = Scratch::new("secrets-cut");
    let t = common::builder()
        .working_directory(dir.path(""))
        .env("GITHUB_TOKEN", TOKEN)
        .output_limit(60)
        .build()
        .unwrap();
    // The token straddles the cut: its head ends the shown head, its tail
    // starts the shown tail, at several offsets.
    for pad in [10, 20, 25] {
        let command = format!(
            "printf '%s' \"$(head -c {pad} /dev/zero | tr '\\0' a)$GITHUB_TOKEN$(head -c 200 /dev/zero | tr '\\0' b)\"; printf '%s' \"$GITHUB_TOKEN\""
        );
        let r = t.bash(&json!({"command": command}), &Caller::default());
        no_piece_of(&r.text, TOKEN);
        assert!(r.text.contains("[redacted GITHUB_TOKEN]"), "{}", r.text);
    }
}

#[test]
fn reads_notifications_and_the_file_on_disk() {
    let dir = Scratch::new("secrets-reads");
    let t = tools(&dir);
    let me = Caller::default().recipient("secrets");
    let rx = t.tasks().unwrap().subscribe("secrets");
    // Printed a few bytes at a time, over several reads.
    let r = t.bash(
        &json!({"command": "for i in $(seq 0 4 40); do printf '%s' \"${GITHUB_TOKEN:$i:4}\"; sleep 0.05; done; echo; echo done",
                "run_in_background": true, "description": "drip"}),
        &me,
    );
    let id = common::id_of(&r);
    // No read shows 8 bytes of it in a row.
    common::wait_until("the shell ends", || {
        let r = t.bash_output(&json!({"bash_id": id}));
        no_piece_of(&r.text, TOKEN);
        r.text.contains("<status>completed</status>")
    });
    let n = rx
        .recv_timeout(common::DEADLINE)
        .expect("the end notification");
    assert!(!n.text.contains(TOKEN));
    // The file keeps what the command wrote.
    let file = r.output_file.clone().unwrap();
    let on_disk = std::fs::read_to_string(&file).unwrap();
    assert!(on_disk.contains(TOKEN), "{on_disk}");
    // A whole read after the end: masked.
    let r = t.bash(&json!({"command": format!("cat {}", file.display())}), &me);
    assert!(r.text.contains("[redacted GITHUB_TOKEN]"), "{}", r.text);
    no_piece_of(&r.text, TOKEN);
}

#[test]
fn monitor_events_are_masked_even_cut() {
    let dir = Scratch::new("secrets-monitor");
    let t = tools(&dir);
    let me = Caller::default().recipient("mon");
    let rx = t.tasks().unwrap().subscribe("mon");
    let r = t.monitor(
        &json!({"description": "d", "command": "echo \"token is $GITHUB_TOKEN\"; echo \"url $DEPLOY_URL\"", "timeout_ms": 60000}),
        &me,
    );
    assert!(!r.is_error, "{}", r.text);
    let mut all = String::new();
    common::wait_until("the monitor ends", || {
        while let Ok(n) = rx.try_recv() {
            all.push_str(&n.text);
            all.push('\n');
        }
        all.contains("<status>")
    });
    assert!(all.contains("[redacted GITHUB_TOKEN]"), "{all}");
    assert!(all.contains("[redacted DEPLOY_URL]"), "{all}");
    no_piece_of(&all, TOKEN);
}

#[test]
fn an_exported_secret_is_masked_from_the_next_command_on() {
    let dir = Scratch::new("secrets-carried");
    let t = common::builder()
        .working_directory(dir.path(""))
        .persist_environment(true)
        .build()
        .unwrap();
    let me = Caller::default();
    let r = t.bash(
        &json!({"command": "export NPM_TOKEN=npm_abcdefghijklmnop"}),
        &me,
    );
    assert!(!r.is_error, "{}", r.text);
    let r = t.bash(&json!({"command": "echo $NPM_TOKEN"}), &me);
    assert_eq!(r.text, "[redacted NPM_TOKEN]");
}

#[test]
fn no_redact_auto_masks_only_what_is_named() {
    let dir = Scratch::new("secrets-off");
    let t = common::builder()
        .working_directory(dir.path(""))
        .env("GITHUB_TOKEN", TOKEN)
        .env("MY_HOOK", "https://hooks.example.com/abc")
        .redact_env(["MY_HOOK"])
        .redact_auto(false)
        .redact_values(["host-known-secret-value"])
        .build()
        .unwrap();
    let r = t.bash(
        &json!({"command": "echo $GITHUB_TOKEN $MY_HOOK host-known-secret-value"}),
        &Caller::default(),
    );
    assert_eq!(
        r.text,
        format!("{TOKEN} [redacted MY_HOOK] [redacted value]")
    );
}

#[test]
fn with_the_gate_on() {
    let dir = Scratch::new("secrets-gate");
    let t = common::builder()
        .working_directory(dir.path(""))
        .env("GITHUB_TOKEN", TOKEN)
        .allowed_commands(["echo", "printenv"])
        .build()
        .unwrap();
    let r = t.bash(
        &json!({"command": "printenv GITHUB_TOKEN"}),
        &Caller::default(),
    );
    assert_eq!(r.text, "[redacted GITHUB_TOKEN]");
}

#[test]
fn with_the_sandbox_on() {
    let dir = Scratch::new("secrets-sandbox");
    let t = common::builder()
        .working_directory(dir.path(""))
        .env("GITHUB_TOKEN", TOKEN)
        .sandbox(bashtools::Sandbox::new().best_effort(true))
        .build()
        .unwrap();
    let r = t.bash(
        &json!({"command": "echo \"t=$GITHUB_TOKEN\""}),
        &Caller::default(),
    );
    assert_eq!(r.text, "t=[redacted GITHUB_TOKEN]");
}

/// A line cut at the monitor's line limit in the middle of the value: the
/// part shown is masked.
#[test]
fn a_value_cut_at_the_monitor_line_limit_is_masked() {
    let dir = Scratch::new("secrets-monitor-cut");
    let t = common::builder()
        .working_directory(dir.path(""))
        .tasks(Tasks::new())
        .env("GITHUB_TOKEN", TOKEN)
        .monitor_options(bashtools::MonitorOptions::default().line_limit(30))
        .build()
        .unwrap();
    let me = Caller::default().recipient("cut");
    let rx = t.tasks().unwrap().subscribe("cut");
    t.monitor(
        &json!({"description": "d", "command": "echo \"padding-xx $GITHUB_TOKEN\"", "timeout_ms": 60000}),
        &me,
    );
    let mut all = String::new();
    common::wait_until("the monitor ends", || {
        while let Ok(n) = rx.try_recv() {
            all.push_str(&n.text);
        }
        all.contains("<status>")
    });
    assert!(
        all.contains("padding-xx [redacted GITHUB_TOKEN]...(truncated)"),
        "{all}"
    );
    no_piece_of(&all, TOKEN);
}
