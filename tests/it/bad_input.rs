//! Bad input never panics and never starts anything: every missing or
//! mistyped argument is an error result with the exact text of
//! `src/texts.rs`; timeouts out of range are not errors (SPEC section 4);
//! a builder that cannot work fails at `build()`.

use std::path::Path;
use std::time::Duration;

use crate::common::*;
use bashtools::{BashTools, ToolResult};
use serde_json::{json, Value};

const NO_COMMAND: &str = "No command given: the command parameter must be a non-empty string";
const NUL_IN_COMMAND: &str =
    "Invalid command: it contains a NUL byte, which a shell command cannot hold";
const NOT_AN_OBJECT: &str = "Invalid input: the arguments must be a JSON object";
const CLOSED: &str = "The shell tools have ended: no command can be started or read";
const VALIDATOR_PANICKED: &str = "Command denied (the validator failed)";

#[track_caller]
fn assert_error(r: &ToolResult, text: &str) {
    assert!(r.is_error, "expected an error result, got {r:?}");
    assert_eq!(r.text, text);
}

/// A `touch` of `marker` as a shell command.
fn touch(marker: &Path) -> String {
    format!("touch '{}'", marker.display())
}

// ---------------------------------------------------------------- bash

#[test]
fn bash_with_missing_or_mistyped_command_is_an_error_that_starts_nothing() {
    let tools = tools();
    for input in [
        json!({}),
        json!({"description": "no command"}),
        json!({"command": 42}),
        json!({"command": ["touch", "x"]}),
        json!({"command": null}),
        json!({"command": {"cmd": "ls"}}),
        json!({"command": true}),
        json!({"command": ""}),
        json!({"command": "   "}),
        json!({"command": "\n\t  \n"}),
    ] {
        let r = bash(&tools, input.clone());
        assert!(r.is_error, "{input}: {r:?}");
        assert_eq!(r.text, NO_COMMAND, "{input}");
    }
    assert!(tools.background_pids().is_empty());
    // Nothing was started, so no ID was used up.
    let r = bash(
        &tools,
        json!({"command": "sleep 1000", "run_in_background": true}),
    );
    assert_eq!(id_of(&r), "bash_1", "{r:?}");
    let pgids = tools.background_pids();
    drop(tools);
    assert_gone(&pgids);
}

#[test]
fn bash_with_nul_byte_in_command_is_an_error_that_starts_nothing() {
    let scratch = Scratch::new("nul");
    let marker = scratch.path("marker");
    let tools = tools();
    let command = format!("{}\0; echo after-nul", touch(&marker));
    let r = bash(&tools, json!({ "command": command }));
    assert_error(&r, NUL_IN_COMMAND);
    let r = bash(
        &tools,
        json!({ "command": command, "run_in_background": true }),
    );
    assert_error(&r, NUL_IN_COMMAND);
    assert!(!marker.exists(), "a refused command ran");
    assert!(tools.background_pids().is_empty());
}

#[test]
fn arguments_that_are_not_an_object_are_an_error_for_every_tool() {
    let tools = tools();
    for input in [json!([1]), json!("ls"), json!(null), json!(7), json!(true)] {
        assert_error(&bash(&tools, input.clone()), NOT_AN_OBJECT);
        assert_error(&tools.bash_output(&input), NOT_AN_OBJECT);
        assert_error(&tools.bash_output_f(&input).wait(), NOT_AN_OBJECT);
        assert_error(&tools.kill_shell(&input), NOT_AN_OBJECT);
    }
    assert!(tools.background_pids().is_empty());
}

/// The moved-to-background answer for a `sleep` that outlives its
/// timeout; the shell is stopped when the tools are dropped.
fn moved_text(tools: &BashTools, timeout: Value) -> String {
    let r = bash(tools, json!({"command": "sleep 1000", "timeout": timeout}));
    assert!(!r.is_error, "timeout {timeout}: {r:?}");
    r.text
}

#[test]
fn out_of_range_timeouts_are_refused_and_large_ones_cut_to_the_max() {
    // default 0.5 s, max 1 s: every answer names the timeout it used.
    let scratch = Scratch::new("timeouts");
    let marker = scratch.path("marker");
    let tools = builder()
        .default_timeout(Duration::from_millis(500))
        .max_timeout(Duration::from_secs(1))
        .build()
        .unwrap();
    // Zero, negative or not a number: refused, naming `timeout` (§4), and
    // nothing runs.
    let refused = "Invalid input: the timeout parameter must be a number greater than 0";
    for timeout in [
        json!(-5),
        json!(-0.5),
        json!(0),
        json!(0.0),
        json!("abc"),
        json!("30"),
        json!([1]),
        json!({"s": 1}),
        json!(null),
    ] {
        let r = bash(
            &tools,
            json!({"command": touch(&marker), "timeout": timeout}),
        );
        assert_error(&r, refused);
        let r = tools.bash_output(&json!({"bash_id": "bash_1", "timeout": timeout}));
        assert_error(&r, refused);
    }
    assert!(!marker.exists(), "a refused command ran");
    let cut =
        "Command did not complete within its 1s timeout and was moved to the background (ID: ";
    let cases = [
        (json!(1e300), cut),
        (json!(3600), cut),
        // A valid one in range is used as given.
        (
            json!(0.75),
            "Command did not complete within its 0.75s timeout",
        ),
    ];
    let count = cases.len();
    for (timeout, expected) in cases {
        let text = moved_text(&tools, timeout.clone());
        assert!(
            text.starts_with(expected),
            "timeout {timeout}: expected {expected:?}, got {text:?}"
        );
        assert!(text.ends_with(" To check interim output, use bash_output with that ID."));
    }
    let pgids = tools.background_pids();
    assert_eq!(pgids.len(), count, "every sleep went on in the background");
    drop(tools);
    assert_gone(&pgids);
}

#[test]
fn description_of_the_wrong_type_is_an_error_that_starts_nothing() {
    let scratch = Scratch::new("description");
    let marker = scratch.path("marker");
    let tools = tools();
    for description in [
        json!(5),
        json!(["a"]),
        json!({"a": 1}),
        json!(false),
        json!(null),
    ] {
        let r = bash(
            &tools,
            json!({"command": touch(&marker), "description": description}),
        );
        assert_error(
            &r,
            "Invalid input: the description parameter must be a string",
        );
    }
    assert!(!marker.exists(), "a refused command ran");
    let r = bash(
        &tools,
        json!({"command": "echo ok", "description": "says ok"}),
    );
    assert_eq!((r.text.as_str(), r.is_error), ("ok", false));
}

#[test]
fn an_argument_the_tool_does_not_take_is_an_error_that_starts_nothing() {
    let scratch = Scratch::new("unknown");
    let marker = scratch.path("marker");
    let tools = tools();
    let r = bash(&tools, json!({"command": touch(&marker), "bogus": 1}));
    assert_error(
        &r,
        "Invalid input: bash has no parameter bogus (it takes command, timeout, description, \
         run_in_background, working_directory, stdin)",
    );
    // `interactive` is a parameter only where the option is on.
    let r = bash(
        &tools,
        json!({"command": touch(&marker), "interactive": false}),
    );
    assert!(
        r.is_error && r.text.starts_with("Interactive commands are not enabled"),
        "{r:?}"
    );
    assert!(!marker.exists(), "a refused command ran");
    assert!(tools.background_pids().is_empty());
}

#[test]
fn run_in_background_must_be_a_boolean() {
    let scratch = Scratch::new("background");
    let marker = scratch.path("marker");
    let tools = tools();
    for value in [
        json!("yes"),
        json!(1),
        json!("1"),
        json!(["true"]),
        json!("true"),
        json!(null),
    ] {
        let r = bash(
            &tools,
            json!({"command": touch(&marker), "run_in_background": value}),
        );
        assert_error(
            &r,
            "Invalid input: the run_in_background parameter must be a boolean",
        );
    }
    assert!(!marker.exists(), "a refused command ran");
    assert!(tools.background_pids().is_empty());

    let r = bash(
        &tools,
        json!({"command": "sleep 1000", "run_in_background": true}),
    );
    assert!(!r.is_error, "{r:?}");
    assert!(
        r.text.starts_with(
            "Command running in background with ID: bash_1. Output is being written to: "
        ),
        "{r:?}"
    );
    let pgids = tools.background_pids();
    assert_eq!(pgids.len(), 1);
    drop(tools);
    assert_gone(&pgids);
}

#[test]
fn working_directory_that_is_missing_or_a_file_is_an_error_that_starts_nothing() {
    let scratch = Scratch::new("cwd");
    let marker = scratch.path("marker");
    let file = scratch.path("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    let missing = scratch.path("no-such-dir");
    let tools = builder().working_directory(&scratch.0).build().unwrap();

    let r = bash(
        &tools,
        json!({"command": touch(&marker), "working_directory": missing}),
    );
    assert_error(
        &r,
        &format!("Working directory does not exist: {}", missing.display()),
    );
    let r = bash(
        &tools,
        json!({"command": touch(&marker), "working_directory": file, "run_in_background": true}),
    );
    assert_error(
        &r,
        &format!("Working directory is not a directory: {}", file.display()),
    );
    // Relative: taken from the configured working directory.
    let r = bash(
        &tools,
        json!({"command": touch(&marker), "working_directory": "no-such-dir"}),
    );
    assert_error(
        &r,
        &format!("Working directory does not exist: {}", missing.display()),
    );
    let r = bash(
        &tools,
        json!({"command": touch(&marker), "working_directory": 3}),
    );
    assert_error(
        &r,
        "Invalid input: the working_directory parameter must be a string",
    );
    assert!(!marker.exists(), "a refused command ran");
    assert!(tools.background_pids().is_empty());
}

#[test]
fn relative_working_directory_is_resolved_against_the_configured_one() {
    let scratch = Scratch::new("relative");
    std::fs::create_dir_all(scratch.path("sub/inner")).unwrap();
    let tools = builder().working_directory(&scratch.0).build().unwrap();
    let r = bash(
        &tools,
        json!({"command": "pwd -P", "working_directory": "sub/inner"}),
    );
    assert_eq!(
        r.text,
        scratch.path("sub/inner").display().to_string(),
        "{r:?}"
    );
    assert!(!r.is_error);
    let r = bash(&tools, json!({"command": "pwd -P"}));
    assert_eq!(r.text, scratch.0.display().to_string(), "{r:?}");
}

// ---------------------------------------------------------------- build()

fn build_error(b: bashtools::Builder) -> String {
    match b.build() {
        Ok(_) => panic!("build() succeeded"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn build_fails_for_a_missing_working_directory_and_names_it() {
    let scratch = Scratch::new("build-missing");
    let missing = scratch.path("not-there");
    let text = build_error(builder().working_directory(&missing));
    assert!(
        text.contains(&missing.display().to_string()),
        "{text:?} does not name {}",
        missing.display()
    );
    assert!(text.contains("does not exist"), "{text:?}");
}

#[test]
fn build_fails_for_a_file_as_working_directory_and_names_it() {
    let scratch = Scratch::new("build-file");
    let file = scratch.path("a-file");
    std::fs::write(&file, "x").unwrap();
    let text = build_error(builder().working_directory(&file));
    assert!(
        text.contains(&file.display().to_string()),
        "{text:?} does not name {}",
        file.display()
    );
    assert!(text.contains("not a directory"), "{text:?}");
}

#[test]
fn build_fails_for_an_output_root_under_a_regular_file_and_names_it() {
    let scratch = Scratch::new("build-root");
    let file = scratch.path("a-file");
    std::fs::write(&file, "x").unwrap();
    let root = file.join("sub");
    let text = build_error(builder().output_root(&root));
    assert!(
        text.contains(&root.display().to_string()),
        "{text:?} does not name {}",
        root.display()
    );
    // Nothing was made beside the file.
    let entries: Vec<_> = std::fs::read_dir(&scratch.0).unwrap().flatten().collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
}

// ---------------------------------------------------------------- bash_output

#[test]
fn bash_output_with_missing_or_mistyped_or_unknown_id_is_an_error() {
    let tools = tools();
    let cases = [
        (
            json!({}),
            "Invalid input: the bash_id parameter is required",
        ),
        (
            json!({"bash_id": null}),
            "Invalid input: the bash_id parameter must be a string",
        ),
        (
            json!({"bash_id": "bash_1", "id": "bash_1"}),
            "Invalid input: bash_output has no parameter id (it takes bash_id, filter, block, timeout, tail)",
        ),
        (
            json!({"bash_id": 1}),
            "Invalid input: the bash_id parameter must be a string",
        ),
        (
            json!({"bash_id": ["bash_1"]}),
            "Invalid input: the bash_id parameter must be a string",
        ),
        (
            json!({"bash_id": "bash_77"}),
            "No task found with ID: bash_77",
        ),
        (
            json!({"bash_id": "bash_77", "block": true}),
            "No task found with ID: bash_77",
        ),
        (json!({"bash_id": ""}), "No task found with ID: "),
    ];
    for (input, text) in cases {
        assert_error(&tools.bash_output(&input), text);
        assert_error(&tools.bash_output_f(&input).wait(), text);
    }
}

#[test]
fn bash_output_with_invalid_filter_or_block_is_an_error() {
    let tools = tools();
    let r = bash(
        &tools,
        json!({"command": "echo $$; sleep 1000", "run_in_background": true}),
    );
    let id = id_of(&r);
    let pgids = tools.background_pids();
    assert_eq!(pgids.len(), 1);

    let r = tools.bash_output(&json!({"bash_id": id, "filter": "("}));
    assert!(r.is_error, "{r:?}");
    assert!(r.text.starts_with("Invalid filter regex \"(\": "), "{r:?}");
    assert!(
        r.text.len() > "Invalid filter regex \"(\": ".len(),
        "names the parse error: {r:?}"
    );
    let r = tools.bash_output(&json!({"bash_id": id, "filter": 5}));
    assert_error(&r, "Invalid input: the filter parameter must be a string");
    let r = tools.bash_output(&json!({"bash_id": id, "block": "maybe"}));
    assert_error(&r, "Invalid input: the block parameter must be a boolean");
    let r = tools
        .bash_output_f(&json!({"bash_id": id, "block": "maybe"}))
        .wait();
    assert_error(&r, "Invalid input: the block parameter must be a boolean");

    // The errors consumed nothing: the pid echoed is still there to read.
    wait_until("the shell has written its pid", || {
        let r = tools.bash_output(&json!({"bash_id": id}));
        assert!(!r.is_error, "{r:?}");
        r.text
            .contains(&format!("<stdout>\n{}\n</stdout>", pgids[0]))
    });
    drop(tools);
    assert_gone(&pgids);
}

// ---------------------------------------------------------------- kill_shell

#[test]
fn kill_shell_with_missing_mistyped_or_unknown_id_is_an_error() {
    let tools = tools();
    let cases = [
        (
            json!({}),
            "Invalid input: the shell_id parameter is required",
        ),
        (
            json!({"shell_id": null}),
            "Invalid input: the shell_id parameter must be a string",
        ),
        (
            json!({"shell_id": 1}),
            "Invalid input: the shell_id parameter must be a string",
        ),
        (
            json!({"bash_id": "bash_1"}),
            "Invalid input: kill_shell has no parameter bash_id (it takes shell_id)",
        ),
        (
            json!({"shell_id": "bash_77"}),
            "No task found with ID: bash_77",
        ),
    ];
    for (input, text) in cases {
        assert_error(&tools.kill_shell(&input), text);
    }
}

#[test]
fn kill_shell_of_a_completed_shell_says_it_is_not_running() {
    let tools = tools();
    let r = bash(
        &tools,
        json!({"command": "echo $$", "run_in_background": true}),
    );
    assert_eq!(id_of(&r), "bash_1");
    let r = tools.bash_output(&json!({"bash_id": "bash_1", "block": true, "timeout": 60}));
    assert!(
        r.text
            .starts_with("<status>completed</status>\n<exit_code>0</exit_code>\n<stdout>\n"),
        "{r:?}"
    );
    let pid: u32 = r.text.lines().nth(3).unwrap().parse().unwrap();
    let r = tools.kill_shell(&json!({"shell_id": "bash_1"}));
    assert_error(&r, "Task bash_1 is not running (status: completed)");
    drop(tools);
    assert_gone(&[pid]);
}

#[test]
fn kill_shell_twice_says_the_second_time_that_it_was_killed() {
    let tools = tools();
    let r = bash(
        &tools,
        json!({"command": "sleep 1000", "run_in_background": true}),
    );
    assert_eq!(id_of(&r), "bash_1");
    let pgids = tools.background_pids();
    let r = tools.kill_shell(&json!({"shell_id": "bash_1"}));
    assert_eq!(
        (r.text.as_str(), r.is_error),
        ("Successfully stopped task: bash_1 (sleep 1000)", false)
    );
    let r = tools.kill_shell(&json!({"shell_id": "bash_1"}));
    assert_error(&r, "Task bash_1 is not running (status: killed)");
    assert_gone(&pgids);
}

// ---------------------------------------------------------------- after stop_all, after close

/// `stop_all` stops what runs, and the tools stay usable: the stopped shell
/// reads `killed` with its last output, and a new command starts a new shell.
#[test]
fn after_stop_all_the_stopped_shells_read_killed_and_new_commands_run() {
    let scratch = Scratch::new("stopped");
    let marker = scratch.path("marker");
    let tools = tools();
    let r = bash(
        &tools,
        json!({"command": "echo before; sleep 1000", "run_in_background": true}),
    );
    assert_eq!(id_of(&r), "bash_1");
    wait_until("it has written", || {
        tools
            .bash_output(&json!({"bash_id": "bash_1"}))
            .text
            .contains("before")
    });
    let pgids = tools.background_pids();
    tools.stop_all();
    assert_gone(&pgids);

    let r = tools.bash_output(&json!({"bash_id": "bash_1"}));
    assert!(
        r.text.starts_with("<status>killed</status>\n<exit_code>"),
        "{r:?}"
    );
    let r = bash(&tools, json!({"command": touch(&marker)}));
    assert!(!r.is_error, "{r:?}");
    assert!(marker.exists(), "a new command runs after stop_all");
    let r = bash(
        &tools,
        json!({"command": "sleep 1000", "run_in_background": true}),
    );
    assert_eq!(id_of(&r), "bash_2");
    tools.stop_all();
}

/// After `close` (what drop and the server's shutdown do), every call is an
/// error result that starts nothing.
#[test]
fn bash_and_bash_output_after_close_are_errors_that_start_nothing() {
    let scratch = Scratch::new("closed");
    let marker = scratch.path("marker");
    let tools = tools();
    let r = bash(
        &tools,
        json!({"command": "sleep 1000", "run_in_background": true}),
    );
    assert_eq!(id_of(&r), "bash_1");
    let pgids = tools.background_pids();
    tools.close();
    assert_gone(&pgids);

    assert_error(&bash(&tools, json!({"command": touch(&marker)})), CLOSED);
    assert_error(
        &bash(
            &tools,
            json!({"command": touch(&marker), "run_in_background": true}),
        ),
        CLOSED,
    );
    assert_error(
        &bash(&tools, json!({"command": touch(&marker), "timeout": 0.1})),
        CLOSED,
    );
    for input in [
        json!({"bash_id": "bash_1"}),
        json!({"bash_id": "bash_1", "block": true}),
        json!({"bash_id": "bash_2"}),
    ] {
        assert_error(&tools.bash_output(&input), CLOSED);
        assert_error(&tools.bash_output_f(&input).wait(), CLOSED);
    }
    assert_error(&tools.kill_shell(&json!({"shell_id": "bash_1"})), CLOSED);
    assert!(!marker.exists(), "a command ran after close");
    assert!(tools.background_pids().is_empty());
}

/// kill_shell after stop_all still tells the truth about each ID: the shells
/// stop_all stopped are `killed`, and nothing new can have started.
#[test]
fn kill_shell_after_stop_all_reports_what_stop_all_did() {
    let tools = tools();
    let r = bash(
        &tools,
        json!({"command": "sleep 1000", "run_in_background": true}),
    );
    assert_eq!(id_of(&r), "bash_1");
    let pgids = tools.background_pids();
    tools.stop_all();
    assert_gone(&pgids);
    assert_error(
        &tools.kill_shell(&json!({"shell_id": "bash_1"})),
        "Task bash_1 is not running (status: killed)",
    );
    assert_error(
        &tools.kill_shell(&json!({"shell_id": "bash_9"})),
        "No task found with ID: bash_9",
    );
}

// ---------------------------------------------------------------- gates

#[test]
fn validator_that_panics_refuses_the_command_and_starts_nothing() {
    let scratch = Scratch::new("validator");
    let marker = scratch.path("marker");
    let tools = builder()
        .validator(|command, _cwd| {
            if command.contains("touch") {
                panic!("validator blew up on purpose");
            }
            Ok(())
        })
        .build()
        .unwrap();
    let r = bash(&tools, json!({"command": touch(&marker)}));
    assert_error(&r, VALIDATOR_PANICKED);
    let r = bash(
        &tools,
        json!({"command": touch(&marker), "run_in_background": true}),
    );
    assert_error(&r, VALIDATOR_PANICKED);
    assert!(!marker.exists(), "a refused command ran");
    assert!(tools.background_pids().is_empty());
    // The tools still work after the panic.
    let r = bash(&tools, json!({"command": "echo still-here"}));
    assert_eq!((r.text.as_str(), r.is_error), ("still-here", false));
}

#[test]
fn refused_command_starts_no_process() {
    let scratch = Scratch::new("refused");
    let marker = scratch.path("marker");
    let tools = builder().allowed_commands(["echo"]).build().unwrap();
    let r = bash(&tools, json!({"command": touch(&marker)}));
    assert_error(&r, "Command not allowed: touch");
    let r = bash(
        &tools,
        json!({"command": touch(&marker), "run_in_background": true}),
    );
    assert_error(&r, "Command not allowed: touch");
    assert!(!marker.exists(), "a refused command ran");
    assert!(tools.background_pids().is_empty());
    let r = bash(&tools, json!({"command": "echo allowed"}));
    assert_eq!((r.text.as_str(), r.is_error), ("allowed", false));
}
