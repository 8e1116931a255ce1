//! Hardening of the carried state (`persist_working_directory`,
//! `persist_environment`): no command can brick the session. A variable
//! that changes how bash itself starts — `SHELLOPTS`, `BASHOPTS`,
//! `POSIXLY_CORRECT`, `BASH_ENV`, `ENV` — is never carried, whether the
//! command exported it or forged its end record, with or without an
//! allow-list; and `cd` and `export` keep being recorded after such a
//! command.

use bashtools::{BashTools, NotKept};
use serde_json::json;

use crate::common::{self, Scratch};

fn tools_in(dir: &Scratch, gated: bool) -> BashTools {
    let b = common::builder()
        .working_directory(&dir.0)
        .persist_working_directory(true)
        .persist_environment(true);
    let b = if gated {
        b.allowed_commands([
            "export", "set", "cd", "echo", "pwd", "printf", "exec", "true",
        ])
    } else {
        b
    };
    b.build().unwrap()
}

fn run(t: &BashTools, command: &str) -> String {
    let r = t.bash(&json!({"command": command}), &common::me());
    assert!(!r.is_error, "{command}: {}", r.text);
    r.text
}

/// After the hostile command, the session still records `cd` and `export`
/// and runs commands.
fn assert_not_bricked(t: &BashTools, dir: &Scratch) {
    let sub = dir.0.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    run(
        t,
        &format!("cd '{}' && export CARRIED_AFTER=yes", sub.display()),
    );
    let text = run(
        t,
        "pwd; echo \"v=$CARRIED_AFTER\"; echo \"opts=$SHELLOPTS\"; echo \"be=${BASH_ENV-unset}\"",
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], sub.to_str().unwrap(), "{text}");
    assert_eq!(lines[1], "v=yes", "{text}");
    assert!(
        !lines[2].contains("noexec") && !lines[2].contains("posix"),
        "{text}"
    );
    assert_eq!(lines[3], "be=unset", "{text}");
}

const SHAPING: [&str; 5] = [
    "SHELLOPTS",
    "BASHOPTS",
    "POSIXLY_CORRECT",
    "BASH_ENV",
    "ENV",
];

#[test]
fn exporting_posixly_correct_does_not_brick_the_session() {
    let dir = Scratch::new("carried-posix");
    let t = tools_in(&dir, false);
    let text = run(&t, "export POSIXLY_CORRECT=1; echo set");
    assert!(
        text.contains("Note: POSIXLY_CORRECT was not kept"),
        "{text}"
    );
    assert_not_bricked(&t, &dir);
    // Unsetting it afterwards changes nothing either.
    run(&t, "unset POSIXLY_CORRECT");
    assert_not_bricked(&t, &dir);
}

#[test]
fn under_an_allow_list_assigning_one_is_refused_and_the_session_goes_on() {
    let dir = Scratch::new("carried-gated");
    let t = tools_in(&dir, true);
    for n in SHAPING {
        let r = t.bash(&json!({"command": format!("export {n}=1")}), &common::me());
        assert!(
            r.is_error && r.text.contains("not allowed"),
            "{n}: {}",
            r.text
        );
    }
    assert_not_bricked(&t, &dir);
}

#[test]
fn exported_shellopts_in_posix_mode_does_not_brick_the_session() {
    let dir = Scratch::new("carried-shellopts");
    let t = tools_in(&dir, false);
    let text = run(&t, "set -o posix; export SHELLOPTS; echo set");
    assert!(text.contains("Note: SHELLOPTS was not kept"), "{text}");
    assert_not_bricked(&t, &dir);
}

#[test]
fn every_variable_that_shapes_bash_is_never_carried_with_a_note() {
    {
        let gated = false;
        let dir = Scratch::new("carried-shaping");
        let t = tools_in(&dir, gated);
        let exports: Vec<String> = SHAPING
            .iter()
            .map(|n| format!("export {n}=/tmp/x"))
            .collect();
        let r = t.run(
            &bashtools::Command::new(format!("{}; true", exports.join("; "))),
            &common::me(),
        );
        let Ok(bashtools::Outcome::Exited(e)) = r else {
            panic!("{r:?}")
        };
        for n in SHAPING {
            assert!(
                e.not_kept()
                    .iter()
                    .any(|k| matches!(k, NotKept::ShapesBash(name) if name == n)),
                "gated {gated}: {n} not noted: {:?}",
                e.not_kept()
            );
        }
        let text = run(&t, "for n in SHELLOPTS BASHOPTS POSIXLY_CORRECT BASH_ENV ENV; do printenv $n; done; echo end");
        assert_eq!(text, "end", "gated {gated}");
        assert_not_bricked(&t, &dir);
    }
}

#[test]
fn a_forged_end_record_with_noexec_does_not_brick_the_session() {
    for gated in [false, true] {
        forged_record(gated);
    }
}

fn forged_record(gated: bool) {
    let dir = Scratch::new("carried-forged");
    let t = tools_in(&dir, gated);
    let r = t.bash(
        &json!({"command": r#"printf '/tmp\n\0declare -x SHELLOPTS="braceexpand:hashall:interactive-comments:noexec"\ndeclare -x BASHOPTS="extdebug"\n' >&63; exec 63>&-"#}),
        &common::me(),
    );
    // Refused by the gate, or run: either way nothing of it is carried.
    assert!(!r.is_error || gated, "{}", r.text);
    // Commands still run, foreground and background.
    assert_eq!(run(&t, "echo still"), "still");
    let r = t.bash(
        &json!({"command": "echo bg", "run_in_background": true}),
        &common::me(),
    );
    let id = r.task_id.clone().expect("a background shell");
    t.wait(&id.as_str().into(), common::DEADLINE).unwrap();
    let out = t.read_output(&id.as_str().into(), None).unwrap();
    assert_eq!(out.text(), "bg");
    assert_not_bricked(&t, &dir);
}

#[test]
fn notes_obey_the_output_limit() {
    let dir = Scratch::new("carried-notes");
    let t = common::builder()
        .working_directory(&dir.0)
        .persist_environment(true)
        .output_limit(1000)
        .build()
        .unwrap();
    // 30 000 variables: past the count and the size the carried
    // environment holds, each one not kept.
    let r = t.bash(
        &json!({"command": "for i in $(seq 30000); do export VARIABLE_NUMBER_$i=0123456789; done; echo done"}),
        &common::me(),
    );
    assert!(!r.is_error, "{}", r.text);
    let notes: Vec<&str> = r.text.lines().filter(|l| l.starts_with("Note: ")).collect();
    assert_eq!(notes.len(), 4, "{}", r.text);
    assert!(
        notes[3].starts_with("Note: ") && notes[3].ends_with("more variables were not kept"),
        "{notes:?}"
    );
    assert!(r.text.len() < 1000 + 600, "{} bytes", r.text.len());
}

#[test]
fn at_most_256_variables_are_carried_and_the_rest_named() {
    let dir = Scratch::new("carried-many");
    let t = tools_in(&dir, false);
    let text = run(
        &t,
        "for i in $(seq 300); do export MANY_$i=; done; echo done",
    );
    assert!(
        text.contains("was not kept: the carried environment is limited to 256 variables"),
        "{text}"
    );
    // Three named, then how many more: every one of the 300 is either
    // carried or counted.
    let more: usize = text
        .rsplit_once("Note: ")
        .and_then(|(_, l)| l.strip_suffix(" more variables were not kept"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    let carried: usize = run(&t, "env | grep -c '^MANY_'").parse().unwrap();
    assert!(carried <= 256 && carried > 200, "{carried}");
    assert_eq!(carried + 3 + more, 300, "{text}");
}

#[test]
fn a_record_over_4_mib_keeps_the_cd_and_the_small_exports() {
    let dir = Scratch::new("carried-big");
    let sub = dir.0.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let t = tools_in(&dir, false);
    // A 5 MB value: once the whole record was dropped, and with it the
    // `cd` and the small exports.
    let text = run(
        &t,
        "cd sub; export SMALL_A=1 SMALL_Z=2; export BIG=$(head -c 5000000 /dev/zero | tr '\\0' x); echo set",
    );
    assert!(text.contains("Note: BIG was not kept"), "{text}");
    let text = run(&t, "pwd; echo \"$SMALL_A $SMALL_Z ${#BIG}\"");
    assert_eq!(text, format!("{}\n1 2 0", sub.display()));
}

#[test]
fn a_redirection_naming_a_variable_is_recorded() {
    // `{NAME}>FILE` assigns the descriptor's number to NAME, after the
    // command word too: such a line once passed for one that cannot change
    // the shell, and the change of an exported NAME was lost.
    let dir = Scratch::new("carried-varfd");
    let t = tools_in(&dir, false);
    run(&t, "export FD=old");
    run(&t, "true {FD}>/dev/null");
    let fd = run(&t, "echo $FD");
    assert!(fd.parse::<u32>().is_ok_and(|n| n >= 10), "{fd}");
}
