//! A tour of the shell tools: a foreground command, a timeout that moves a
//! command to the background, `bash_output` with `block`, `kill_shell`, a
//! task notification arriving, a monitor delivering events, and the opt-in
//! extras (stdin, a `cd` that sticks, an interactive command) — through
//! the JSON tools a model calls, and through the typed API a Rust program
//! calls (which gives the IDs as values: nothing is read out of a text).
//!
//! Run it with `cargo run --example tour`.

use std::time::Duration;

use bashtools::{BashTools, Caller, Command, MonitorOptions, Outcome, ShellId, Tasks};
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
    // The registry of background work: background shells and monitors report
    // to it, and it delivers their notifications per recipient.
    let tasks = Tasks::new();
    let inbox = tasks.subscribe("main");
    let tools = BashTools::builder()
        .kill_grace(Duration::from_secs(2))
        .tasks(tasks.clone())
        .monitor_options(MonitorOptions::default().batch_window(Duration::from_millis(100)))
        .build()?;
    let me = Caller::default().call("toolu_tour");

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
    let id = r.task_id.clone().expect("a background shell has an ID");

    // 4. bash_output with block waits for the shell to end (woken by its exit).
    let r = tools.bash_output(&json!({"bash_id": id, "block": true, "timeout": 10}));
    show(&format!("bash_output {id} with block"), &r);

    // 5. The same through the typed API: a background shell with a
    //    grandchild, stopped with kill: the whole process group goes.
    let started = tools.run(
        &Command::new("(sleep 1000 &); sleep 1000").background(true),
        &me,
    );
    let id: ShellId = match started {
        Ok(Outcome::Background(b)) => {
            println!(
                "── run (typed): {} writes to {}",
                b.id(),
                b.output_file().display()
            );
            b.id().clone()
        }
        other => panic!("expected a background shell, got {other:?}"),
    };
    println!("   background pids: {:?}", tools.background_pids());
    match tools.kill(&id) {
        Ok(info) => println!(
            "── kill (typed) {id}: status {}, exit code {:?}\n",
            info.status(),
            info.exit_code()
        ),
        Err(e) => println!("── kill (typed) {id}: {e}\n"),
    }
    let r = tools.kill_shell(&json!({"shell_id": id.as_str()}));
    show(&format!("kill_shell {id} again (JSON)"), &r);

    // 6. Every background shell that ends sends one notification to the
    //    recipient of the call that started it.
    for n in inbox.try_iter() {
        println!("── notification for {} ({})", n.recipient, n.label);
        for line in n.text.lines() {
            println!("   {line}");
        }
        println!();
    }

    // 7. A monitor: each batch of stdout lines arrives as a notification,
    //    then one more when it ends.
    let r = tools.monitor(
        &json!({"description": "build steps", "command":
                "for s in compile link test; do echo \"step: $s\"; sleep 0.3; done; echo 'all done'"}),
        &me,
    );
    show("monitor", &r);
    loop {
        let Ok(n) = inbox.recv_timeout(Duration::from_secs(30)) else {
            println!("   (no more notifications)");
            break;
        };
        println!("── notification: {}", n.label);
        for line in n.text.lines() {
            println!("   {line}");
        }
        println!();
        if n.status.is_some() {
            break;
        }
    }

    // 8. Bad input is an error result, never a panic.
    let r = tools.bash_output(&json!({"bash_id": "bash_99"}));
    show("bash_output of an unknown ID", &r);

    // 9. The opt-in extras: standard input from a string, a `cd` that
    //    sticks, and a command that asks a question on a terminal of its own.
    let extras = BashTools::builder()
        .persist_working_directory(true)
        .interactive(true)
        .build()?;
    let r = extras.bash(&json!({"command": "tr a-z A-Z", "stdin": "shout\n"}), &me);
    show("bash with stdin", &r);
    extras.bash(&json!({"command": "cd /"}), &me);
    let r = extras.bash(&json!({"command": "pwd"}), &me);
    show("bash: pwd after `cd /` in the command before", &r);
    let r = extras.bash(
        &json!({"command": "read -p 'name? ' n; echo \"hi $n\"", "interactive": true}),
        &me,
    );
    show("bash with interactive: true", &r);
    if let Some(id) = r.task_id.clone() {
        let r = extras.write_stdin(&json!({"shell_id": id, "input": "bob\n"}));
        show(&format!("write_stdin {id} \"bob\\n\""), &r);
    }

    // Dropping the tools stops whatever still runs and removes the output files.
    Ok(())
}
