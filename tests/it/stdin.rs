//! The `stdin` argument of `bash` (issue 12): a string given to the command
//! as its standard input, from a private file that is gone before the
//! command starts, in the foreground and the background alike.

use crate::common::id_of;
use bashtools::{Caller, Command, Outcome};
use serde_json::json;

/// The output directory holds nothing but `keep`.
fn only_in_output_directory(t: &bashtools::BashTools, keep: &[&str]) {
    let names = crate::common::output_files(t.output_directory());
    assert_eq!(names, keep, "files in the output directory");
}

#[test]
fn python_reads_its_program_from_stdin() {
    let t = crate::common::tools();
    println!("containment: {:?}", t.containment());
    let r = crate::common::bash(&t, json!({"command": "python3 -", "stdin": "print(6*7)"}));
    assert_eq!((r.text.as_str(), r.is_error), ("42", false));
    only_in_output_directory(&t, &[]);
}

#[test]
fn a_megabyte_of_stdin_is_read_to_its_end() {
    let t = crate::common::tools();
    let input = "x".repeat(1 << 20);
    let r = crate::common::bash(&t, json!({"command": "wc -c", "stdin": input}));
    assert_eq!(r.text.trim(), (1 << 20).to_string());
    only_in_output_directory(&t, &[]);
}

#[test]
fn a_command_that_reads_part_of_its_stdin_still_ends() {
    let t = crate::common::tools();
    let r = crate::common::bash(
        &t,
        json!({"command": "head -c 3", "stdin": "abcdef".repeat(100_000)}),
    );
    assert_eq!(r.text, "abc");
}

#[test]
fn stdin_reaches_a_background_command_and_no_file_is_left() {
    let t = crate::common::tools();
    let r = crate::common::bash(
        &t,
        json!({"command": "read -r a; read -r b; echo \"$b $a\"", "stdin": "one\ntwo\n", "run_in_background": true}),
    );
    let id = id_of(&r);
    let out = t.bash_output(&json!({"bash_id": id, "block": true}));
    assert!(out.text.contains("two one"), "{out:?}");
    assert!(out.text.contains("<status>completed</status>"), "{out:?}");
    only_in_output_directory(&t, &[&format!("{id}.output")]);
}

#[test]
fn the_input_file_is_gone_while_the_command_runs() {
    let t = crate::common::tools();
    let out = t.output_directory().display().to_string();
    let r = crate::common::bash(
        &t,
        json!({"command": format!("ls -A {out}; ls -l /proc/$$/fd/0"), "stdin": "secret"}),
    );
    assert!(!r.is_error, "{r:?}");
    // Only the command's own output file, and its stdin a removed file.
    let lines: Vec<&str> = r.text.lines().collect();
    assert!(lines[0].starts_with(".fg-"), "{r:?}");
    assert!(lines[1].ends_with("(deleted)"), "{r:?}");
}

#[test]
fn without_stdin_it_is_dev_null() {
    let t = crate::common::tools();
    let r = crate::common::bash(&t, json!({"command": "readlink /proc/$$/fd/0; cat"}));
    assert_eq!(r.text, "/dev/null");
}

#[test]
fn a_stdin_of_the_wrong_type_is_an_error_that_names_it() {
    let t = crate::common::tools();
    for bad in [
        json!(5),
        json!(["a"]),
        json!({"a": 1}),
        json!(true),
        json!(null),
    ] {
        let r = crate::common::bash(&t, json!({"command": "cat", "stdin": bad}));
        assert!(r.is_error);
        assert_eq!(
            r.text,
            "Invalid input: the stdin parameter must be a string"
        );
    }
    let r = crate::common::bash(&t, json!({"command": "cat"}));
    assert_eq!(
        (r.text.as_str(), r.is_error),
        ("(Bash completed with no output)", false)
    );
}

#[test]
fn the_gates_apply_to_a_command_with_stdin() {
    let t = crate::common::builder()
        .allowed_commands(["cat"])
        .build()
        .unwrap();
    let r = crate::common::bash(&t, json!({"command": "python3 -", "stdin": "print(1)"}));
    assert_eq!(
        (r.text.as_str(), r.is_error),
        ("Command not allowed: python3", true)
    );
    let r = crate::common::bash(&t, json!({"command": "cat", "stdin": "ok"}));
    assert_eq!(r.text, "ok");
}

#[test]
fn the_typed_api_takes_stdin() {
    let t = crate::common::tools();
    let cmd = Command::new("tr a-z A-Z").stdin("loud\n");
    assert_eq!(cmd.get_stdin(), Some("loud\n"));
    match t.run(&cmd, &Caller::default()).unwrap() {
        Outcome::Exited(e) => assert_eq!(e.output(), "LOUD"),
        other => panic!("{other:?}"),
    }
}
