//! A tour of the shell tools: a foreground command, a timeout that moves a
//! command to the background, `bash_output` with `block`, and `kill_shell`.
//!
//! Run it with `cargo run --example tour`.

use std::time::Duration;

use bashtools::{BashTools, Caller};
use serde_json::json;

fn show(title: &str, r: &bashtools::ToolResult) {
    println!(
        "── {title}{}",
        if r.is_error { "  (error result)" } else { "" }
    );
    for line in r.text.lines() {
        println!("   {line}");
    }
    println!();
}

fn main() -> Result<(), bashtools::Error> {
    let tools = BashTools::builder()
        .kill_grace(Duration::from_secs(2))
        .build()?;
    let me = Caller::default();

    // 1. A foreground command: stdout and stderr come back in the order written.
    let r = tools.bash(
        &json!({"command": "echo 'hello from bash'; echo 'to stderr' >&2; uname -s"}),
        &me,
    );
    show("bash: a foreground command", &r);

    // 2. A failing command is an error result that starts with its exit code.
    let r = tools.bash(&json!({"command": "ls /no/such/dir"}), &me);
    show("bash: a failing command", &r);

    // 3. A command that outlives its timeout (seconds) is not killed: it
    //    moves to the background as bash_N.
    let r = tools.bash(
        &json!({"command": "for i in 1 2 3; do echo tick $i; sleep 0.5; done; echo done",
                "timeout": 0.6, "description": "three ticks"}),
        &me,
    );
    show("bash: timeout moves it to the background", &r);
    let id = r
        .text
        .split("(ID: ")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .unwrap_or("bash_1")
        .to_string();

    // 4. bash_output with block waits for the shell to end (woken by its exit).
    let r = tools.bash_output(&json!({"bash_id": id, "block": true, "timeout": 10}));
    show(&format!("bash_output {id} with block"), &r);

    // 5. A background shell with a grandchild, stopped with kill_shell: the
    //    whole process group goes.
    let r = tools.bash(
        &json!({"command": "(sleep 1000 &); sleep 1000", "run_in_background": true}),
        &me,
    );
    show("bash: run_in_background", &r);
    let id = r
        .text
        .split("ID: ")
        .nth(1)
        .and_then(|s| s.split('.').next())
        .unwrap_or("bash_2")
        .to_string();
    println!("   background pids: {:?}\n", tools.background_pids());
    let r = tools.kill_shell(&json!({"shell_id": id}));
    show(&format!("kill_shell {id}"), &r);
    let r = tools.bash_output(&json!({"bash_id": id}));
    show(&format!("bash_output {id} after kill_shell"), &r);

    // 6. Bad input is an error result, never a panic.
    let r = tools.bash_output(&json!({"bash_id": "bash_99"}));
    show("bash_output of an unknown ID", &r);

    // Dropping the tools stops whatever still runs and removes the output files.
    Ok(())
}
