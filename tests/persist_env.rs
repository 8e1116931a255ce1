//! `persist_environment` (SPEC §8, "Persisted environment"): the variables
//! a foreground command exports or unsets carry to its recipient's next
//! commands, as environment entries and never as code, on real processes.

mod common;

use std::time::Duration;

use bashtools::{BashTools, Caller, NotKept};
use common::Scratch;
use serde_json::json;

fn tools_in(dir: &Scratch) -> BashTools {
    common::builder()
        .working_directory(&dir.0)
        .persist_environment(true)
        .build()
        .unwrap()
}

fn run(t: &BashTools, command: &str) -> (String, bool) {
    run_as(t, command, &common::me())
}

fn run_as(t: &BashTools, command: &str, caller: &Caller) -> (String, bool) {
    let r = t.bash(&json!({"command": command}), caller);
    (r.text, r.is_error)
}

fn ok(t: &BashTools, command: &str) -> String {
    let (text, err) = run(t, command);
    assert!(!err, "{command}: {text}");
    text
}

#[test]
fn an_export_and_an_unset_carry_to_the_next_commands() {
    let dir = Scratch::new("env-carry");
    std::env::set_var("BASHTOOLS_TEST_HOST_VAR", "host");
    let t = tools_in(&dir);
    ok(
        &t,
        "export GREETING=hello; export EMPTY=; unset BASHTOOLS_TEST_HOST_VAR",
    );
    assert_eq!(
        ok(
            &t,
            "echo \"$GREETING [${EMPTY-unset}] ${BASHTOOLS_TEST_HOST_VAR-gone}\""
        ),
        "hello [] gone"
    );
    // A later command that does not touch them keeps them; one that
    // changes one changes only that one.
    ok(&t, "true");
    ok(&t, "export GREETING=bye");
    assert_eq!(ok(&t, "echo $GREETING-${EMPTY-unset}"), "bye-");
    // Background commands get it too, and an exit code is no obstacle.
    let (_, err) = run(&t, "export LATE=1; exit 3");
    assert!(err);
    let r = t.bash(
        &json!({"command": "echo $LATE $GREETING", "run_in_background": true}),
        &common::me(),
    );
    let id = common::id_of(&r);
    let r = t.bash_output(&json!({"bash_id": id, "block": true, "timeout": 30}));
    assert!(r.text.contains("<stdout>\n1 bye\n</stdout>"), "{}", r.text);
}

#[test]
fn values_travel_as_data_never_as_code() {
    let dir = Scratch::new("env-data");
    let t = tools_in(&dir);
    let marker = dir.path("pwned");
    let hostile = [
        format!("$(touch {})", marker.display()),
        format!("`touch {}`", marker.display()),
        "a\nb\"c'd\\e$f\u{1}\u{7f}é".to_string(),
        "() { :; }; touch x".to_string(),
        "a=b==c=".to_string(),
        "=".to_string(),
    ];
    for (i, v) in hostile.iter().enumerate() {
        // Set through the environment of a program, so no quoting of ours
        // stands between the value and bash.
        let set = format!("export V{i}=\"$(printf %s \"$SRC\")\"");
        let r = t.bash(
            &json!({"command": format!("SRC={} ; {set}", shell_quote(v))}),
            &common::me(),
        );
        assert!(!r.is_error, "{r:?}");
    }
    for (i, v) in hostile.iter().enumerate() {
        let got = ok(
            &t,
            &format!("printf '%s' \"$V{i}\" | od -An -c | tr -s ' \\n' ' '"),
        );
        let want = ok(
            &t,
            &format!(
                "printf '%s' {} | od -An -c | tr -s ' \\n' ' '",
                shell_quote(v)
            ),
        );
        assert_eq!(got, want, "V{i}");
    }
    assert!(!marker.exists(), "a carried value was evaluated");
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[test]
fn functions_aliases_and_options_are_not_carried() {
    let dir = Scratch::new("env-functions");
    let t = tools_in(&dir);
    ok(
        &t,
        "f() { echo fn; }; export -f f; alias ll='echo alias'; set -o noglob; export KEPT=yes",
    );
    assert_eq!(
        ok(&t, "type -t f || echo none; alias ll 2>/dev/null || echo noalias; [[ $- == *f* ]] && echo noglob || echo glob; echo $KEPT"),
        "none\nnoalias\nglob\nyes"
    );
}

#[test]
fn each_recipient_has_its_own_and_a_stopped_or_moved_command_changes_nothing() {
    let dir = Scratch::new("env-recipients");
    let t = common::builder()
        .working_directory(&dir.0)
        .persist_environment(true)
        .default_timeout(Duration::from_millis(500))
        .build()
        .unwrap();
    let (a, b) = (
        Caller::default().recipient("a"),
        Caller::default().recipient("b"),
    );
    run_as(&t, "export WHO=a", &a);
    run_as(&t, "export WHO=b", &b);
    assert_eq!(run_as(&t, "echo $WHO", &a).0, "a");
    assert_eq!(run_as(&t, "echo $WHO", &b).0, "b");
    // Moved to the background at its timeout: its export does not count.
    let (text, _) = run_as(&t, "export WHO=moved; sleep 5", &a);
    assert!(text.contains("moved to the background"), "{text}");
    assert_eq!(run_as(&t, "echo $WHO", &a).0, "a");
    t.stop_all();
}

#[test]
fn under_an_allow_list_what_changes_what_runs_is_not_kept_and_said() {
    let dir = Scratch::new("env-gated");
    std::fs::write(
        dir.path("setup.sh"),
        "export PATH=/nowhere:$PATH LD_PRELOAD=/x.so MODE=fast\n",
    )
    .unwrap();
    // `source` runs a file the policy cannot read: it runs only where
    // commands no rule names are allowed.
    let t = common::builder()
        .working_directory(&dir.0)
        .persist_environment(true)
        .allowed_commands(["source", "echo", "export"])
        .unlisted(bashtools::Decision::Allow)
        .build()
        .unwrap();
    // The gate sees it: refused, as ever.
    let (text, err) = run(&t, "export PATH=/nowhere");
    assert!(err && text.starts_with("Command not allowed"), "{text}");
    // A sourced file sets them where the gate cannot see: it runs, and
    // only what does not change what runs is kept.
    let r = t.bash(&json!({"command": "source ./setup.sh"}), &common::me());
    assert!(!r.is_error, "{r:?}");
    assert!(
        r.text.ends_with(
            "\nNote: LD_PRELOAD was not kept: it changes what runs\nNote: PATH was not kept: it changes what runs"
        ),
        "{}",
        r.text
    );
    // Sourced again: said again (the same listing comes to the same).
    let again = t.bash(&json!({"command": "source ./setup.sh"}), &common::me());
    assert_eq!(again.text, r.text);
    assert_eq!(
        ok(&t, "echo \"$MODE ${LD_PRELOAD-none} $PATH\"")
            .split(' ')
            .next(),
        Some("fast")
    );
    let path = ok(&t, "echo $PATH");
    assert!(!path.contains("/nowhere"), "{path}");
    assert_eq!(ok(&t, "echo ${LD_PRELOAD-none}"), "none");
}

#[test]
fn past_64_kib_a_variable_is_not_kept_and_said() {
    let dir = Scratch::new("env-big");
    let t = tools_in(&dir);
    let r = t.bash(
        &json!({"command": "export A=$(head -c 40000 /dev/zero | tr '\\0' a) B=$(head -c 40000 /dev/zero | tr '\\0' b) C=small"}),
        &common::me(),
    );
    assert!(
        r.text
            .ends_with("Note: B was not kept: the carried environment is limited to 64 KiB"),
        "{}",
        r.text
    );
    assert_eq!(ok(&t, "echo ${#A} ${#B} $C"), "40000 0 small");
}

#[test]
fn typed_results_say_what_was_not_kept() {
    let dir = Scratch::new("env-typed");
    // `eval "$x"` runs what the gate cannot read: it runs only where
    // commands no rule names are allowed.
    let t = common::builder()
        .working_directory(&dir.0)
        .persist_environment(true)
        .allowed_commands(["eval"])
        .unlisted(bashtools::Decision::Allow)
        .build()
        .unwrap();
    let out = t
        .run(
            &bashtools::Command::new("x=IF; eval \"export ${x}S=x\""),
            &common::me(),
        )
        .unwrap();
    let bashtools::Outcome::Exited(e) = out else {
        panic!("{out:?}")
    };
    assert_eq!(e.not_kept(), &[NotKept::ChangesWhatRuns("IFS".into())]);
}

#[test]
fn off_by_default_and_beside_a_sticky_cd() {
    let dir = Scratch::new("env-off");
    let t = common::builder().working_directory(&dir.0).build().unwrap();
    ok(&t, "export X=1");
    assert_eq!(ok(&t, "echo ${X-unset}"), "unset");
    let both = common::builder()
        .working_directory(&dir.0)
        .persist_environment(true)
        .persist_working_directory(true)
        .build()
        .unwrap();
    ok(&both, "cd /; export X=2");
    assert_eq!(ok(&both, "pwd; echo $X"), "/\n2");
    // A command with a directory of its own still carries its exports,
    // not its directory.
    let r = both.bash(
        &json!({"command": "cd /tmp; export X=3", "working_directory": dir.0}),
        &common::me(),
    );
    assert!(!r.is_error, "{r:?}");
    assert_eq!(ok(&both, "pwd; echo $X"), "/\n3");
}

#[test]
fn the_server_carries_exports_unless_told_not_to() {
    let server = env!("CARGO_BIN_EXE_bashtools-mcp");
    for (args, want) in [(&[][..], "1"), (&["--no-persist-env"][..], "unset")] {
        let mut child = std::process::Command::new(server)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        use std::io::{BufRead, Write};
        let lines = [
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":"export X=1"}}}),
            json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo ${X-unset}"}}}),
        ];
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut answer = None;
        for l in &lines {
            writeln!(stdin, "{l}").unwrap();
            stdin.flush().unwrap();
            if l.get("id").is_none() {
                continue;
            }
            let mut line = String::new();
            loop {
                line.clear();
                out.read_line(&mut line).unwrap();
                let v: serde_json::Value = serde_json::from_str(&line).unwrap();
                if v["id"] == l["id"] {
                    answer = Some(v);
                    break;
                }
            }
        }
        drop(stdin);
        child.wait().unwrap();
        let text = answer.unwrap()["result"]["content"][0]["text"].clone();
        assert_eq!(text, want, "{args:?}");
    }
}

/// A command that writes a listing of its own into its record (the
/// descriptor is its, as every descriptor bash holds) gains nothing it
/// could not set itself: under an allow-list what changes what runs is
/// still not kept, and nothing of the record is evaluated.
#[test]
fn a_forged_record_is_data_and_still_gated() {
    let dir = Scratch::new("env-forged");
    let marker = dir.path("pwned");
    let t = common::builder()
        .working_directory(&dir.0)
        .persist_environment(true)
        .allowed_commands(["cat", "exec", "echo"])
        .build()
        .unwrap();
    // The listing alone, from a file (the gate would refuse the line that
    // spells it): the trap's own writes go nowhere once 63 is closed.
    std::fs::write(
        dir.path("forged"),
        format!(
            "\0declare -x LD_PRELOAD=\"/x.so\"\ndeclare -x MINE=\"\\$(touch {})\"\n",
            marker.display()
        ),
    )
    .unwrap();
    let r = t.bash(
        &json!({"command": "cat forged >&63; exec 63>&-"}),
        &common::me(),
    );
    assert!(!r.is_error, "{r:?}");
    assert!(
        r.text
            .lines()
            .any(|l| l == "Note: LD_PRELOAD was not kept: it changes what runs"),
        "{}",
        r.text
    );
    assert_eq!(
        ok(&t, "echo \"${LD_PRELOAD-none} ${MINE-none}\""),
        format!("none $(touch {})", marker.display())
    );
    assert!(!marker.exists(), "a forged value was evaluated");
}
