//! The command line of `bashtools-mcp`: `--help`, `--version`, bad flags
//! (usage on stderr, exit 2), and each option of SPEC section 3 taking
//! effect in a served tool call.

use std::process::{Command, Output};

use crate::client::{output_path, task_id, Server, BIN};
use serde_json::json;

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run bashtools-mcp")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const EVERY_FLAG: [&str; 38] = [
    "--working-directory",
    "--redact",
    "--no-redact-auto",
    "--allow",
    "--ask",
    "--deny",
    "--ask-unlisted",
    "--rules",
    "--approval-timeout",
    "--check-rules",
    "--default-timeout",
    "--max-timeout",
    "--output-limit",
    "--kill-grace",
    "--block-timeout",
    "--monitor-timeout",
    "--monitor-max-timeout",
    "--monitor-min-timeout",
    "--monitor-unattended-max-timeout",
    "--unattended",
    "--max-output-bytes",
    "--no-noninteractive-env",
    "--no-persist-cwd",
    "--env",
    "--env-remove",
    "--batch-window-ms",
    "--burst-limit",
    "--line-limit",
    "--flood-timeout",
    "--output-root",
    "--deliver",
    "--progress-interval-ms",
    "--max-line-bytes",
    "--interactive",
    "--interactive-ungated",
    "--terminal-size",
    "--help",
    "--version",
];

#[test]
fn help_lists_every_flag_with_its_default() {
    let out = run(&["--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    for flag in EVERY_FLAG {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(flag)),
            "{flag} missing from --help:\n{help}"
        );
    }
    assert!(help.contains("(default 120)"), "{help}");
    assert!(help.contains("(default 30000)"), "{help}");
}

#[test]
fn help_shows_each_default_of_the_library() {
    let out = run(&["--help"]);
    let help = text(&out.stdout);
    use bashtools::defaults as d;
    let o = bashtools::mcp::Options::default();
    let secs = |d: std::time::Duration| {
        let s = d.as_secs_f64();
        if s.fract() == 0.0 {
            d.as_secs().to_string()
        } else {
            s.to_string()
        }
    };
    let expected = [
        ("--default-timeout", secs(d::DEFAULT_TIMEOUT)),
        ("--max-timeout", secs(d::MAX_TIMEOUT)),
        ("--output-limit", d::OUTPUT_LIMIT.to_string()),
        ("--kill-grace", secs(d::KILL_GRACE)),
        ("--block-timeout", secs(d::BLOCK_TIMEOUT)),
        ("--monitor-timeout", secs(d::MONITOR_TIMEOUT)),
        ("--monitor-max-timeout", secs(d::MONITOR_MAX_TIMEOUT)),
        ("--monitor-min-timeout", secs(d::MONITOR_MIN_TIMEOUT)),
        (
            "--monitor-unattended-max-timeout",
            secs(d::MONITOR_UNATTENDED_MAX_TIMEOUT),
        ),
        ("--max-output-bytes", d::MAX_OUTPUT_BYTES.to_string()),
        ("--batch-window-ms", d::BATCH_WINDOW.as_millis().to_string()),
        ("--burst-limit", d::BURST_LIMIT.to_string()),
        ("--line-limit", d::LINE_LIMIT.to_string()),
        ("--flood-timeout", secs(d::FLOOD_TIMEOUT)),
        ("--deliver", o.delivery().as_str().to_string()),
        (
            "--progress-interval-ms",
            o.progress_every().as_millis().to_string(),
        ),
        ("--max-line-bytes", o.line_limit().to_string()),
        (
            "--no-persist-cwd",
            if d::SERVER_PERSIST_WORKING_DIRECTORY {
                "cd persists"
            } else {
                "cd does not persist"
            }
            .to_string(),
        ),
    ];
    for (flag, default) in expected {
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{flag} ")))
            .unwrap_or_else(|| panic!("{flag} missing:\n{help}"));
        assert!(
            line.ends_with(&format!("(default {default})")),
            "{flag}: {line}"
        );
    }
    // SPEC section 3's values, as a check that the defaults were read.
    assert_eq!(d::DEFAULT_TIMEOUT, std::time::Duration::from_secs(120));
    assert_eq!(d::MAX_OUTPUT_BYTES, 1 << 30);
}

#[test]
fn version_prints_the_crate_version() {
    let out = run(&["--version"]);
    assert!(out.status.success());
    assert_eq!(
        text(&out.stdout),
        format!("bashtools-mcp {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn bad_command_lines_exit_2_with_one_line_naming_the_flag_as_written() {
    // (arguments, what the line must name)
    let cases: &[(&[&str], &str)] = &[
        (&["--frobnicate"], "--frobnicate"),
        (&["serve"], "serve"),
        (&["-x"], "-x"),
        (&["--default-timeout"], "--default-timeout needs a value"),
        (
            &["--max-timeout", "--interactive"],
            "--max-timeout needs a value",
        ),
        (&["--default-timeout", "soon"], "--default-timeout"),
        (&["--default-timeout=0"], "--default-timeout"),
        (&["--max-timeout", "0"], "--max-timeout"),
        (
            &["--default-timeout", "900"],
            "--default-timeout 900 is above --max-timeout 600",
        ),
        (
            &["--max-timeout", "10", "--default-timeout", "30"],
            "--default-timeout 30 is above --max-timeout 10",
        ),
        (
            &["--block-timeout", "20", "--max-timeout", "10"],
            "--block-timeout 20 is above --max-timeout 10",
        ),
        (
            &["--monitor-min-timeout", "9", "--monitor-max-timeout", "5"],
            "--monitor-min-timeout 9 is above --monitor-max-timeout 5",
        ),
        (&["--kill-grace", "-1"], "--kill-grace"),
        (&["--output-limit", "many"], "--output-limit"),
        (&["--output-limit", "0"], "--output-limit"),
        (&["--max-output-bytes", "0"], "--max-output-bytes"),
        (&["--burst-limit", "0"], "--burst-limit"),
        (&["--env", "NOEQUALS"], "--env"),
        (&["--unattended=yes"], "--unattended"),
        (
            &["--working-directory", "/no/such/dir/anywhere"],
            "--working-directory",
        ),
        (&["--deliver", "nowhere"], "--deliver"),
        (&["--deliver"], "--deliver"),
        (&["--progress-interval-ms", "-5"], "--progress-interval-ms"),
        (&["--progress-interval-ms", "0"], "--progress-interval-ms"),
        (&["--max-line-bytes", "-1"], "--max-line-bytes"),
        (&["--max-line-bytes", "big"], "--max-line-bytes"),
        (&["--terminal-size", "80"], "--terminal-size"),
        (&["--terminal-size", "0x24"], "--terminal-size"),
        (
            &["--interactive", "--allow", "python3"],
            "--interactive beside --allow needs --interactive-ungated",
        ),
        // Above the kernel's most pids: once it started and failed every
        // command ("no cgroup could be made").
        (
            &["--pids-limit", "4194305"],
            "--pids-limit: '4194305' is out of range",
        ),
        (&["--output-root", ""], "--output-root"),
    ];
    for (args, names) in cases {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.starts_with("bashtools-mcp: "), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.contains(names), "{args:?}: {err} does not name {names}");
        assert!(out.stdout.is_empty(), "{args:?}: stdout must stay clean");
    }
}

#[test]
fn short_help_and_version_flags_print_and_exit_0() {
    let long = run(&["--help"]);
    let short = run(&["-h"]);
    assert!(short.status.success() && long.status.success());
    assert_eq!(short.stdout, long.stdout);
    let v = run(&["-V"]);
    assert!(v.status.success());
    assert_eq!(
        text(&v.stdout),
        format!("bashtools-mcp {}\n", env!("CARGO_PKG_VERSION"))
    );
}

fn bash(s: &mut Server, command: &str) -> (String, bool) {
    s.tool("bash", json!({"command": command}))
}

#[test]
fn allow_working_directory_env_and_output_flags_take_effect() {
    let dir = std::env::temp_dir().canonicalize().unwrap();
    let dir_s = dir.to_str().unwrap();
    let mut s = Server::start_with(
        &[
            "--working-directory",
            dir_s,
            "--allow",
            "echo",
            "--allow=pwd",
            "--env",
            "GREETING=hello there",
            "--env-remove",
            "DROPPED",
            "--output-limit",
            "20",
        ],
        |c| {
            c.env("DROPPED", "still here");
        },
    );
    s.initialize("2025-11-25");
    assert_eq!(bash(&mut s, "pwd"), (dir_s.to_string(), false));
    assert_eq!(
        bash(&mut s, "ls"),
        ("Command not allowed: ls".to_string(), true)
    );
    assert_eq!(
        bash(&mut s, "echo \"$GREETING\" ${DROPPED-gone}"),
        ("hello there gone".to_string(), false)
    );
    let (long, _) = bash(&mut s, "echo 0123456789abcdefghijklmnopqrstuvwxyz");
    assert!(long.contains("characters truncated"), "{long}");
}

#[test]
fn the_noninteractive_environment_can_be_turned_off() {
    let mut s = Server::start_with(&[], |c| {
        c.env_remove("PAGER");
    });
    s.initialize("2025-11-25");
    assert_eq!(bash(&mut s, "echo $PAGER").0, "cat");
    let mut s = Server::start_with(&["--no-noninteractive-env"], |c| {
        c.env_remove("PAGER");
    });
    s.initialize("2025-11-25");
    assert_eq!(bash(&mut s, "echo ${PAGER-unset}").0, "unset");
}

#[test]
fn timeout_flags_take_effect() {
    let mut s = Server::initialized(&["--default-timeout", "0.2", "--max-timeout", "0.4"]);
    let (t, _) = bash(&mut s, "sleep 30");
    assert!(t.contains("within its 0.2s timeout"), "{t}");
    let (t, _) = s.tool("bash", json!({"command": "sleep 30", "timeout": 100}));
    assert!(t.contains("within its 0.4s timeout"), "{t}");
    let mut s = Server::initialized(&["--block-timeout", "0.2"]);
    let (t, _) = s.tool(
        "bash",
        json!({"command": "sleep 30", "run_in_background": true}),
    );
    let id = task_id(&t, "bash");
    let (out, _) = s.tool("bash_output", json!({"bash_id": id, "block": true}));
    assert!(out.starts_with("<status>running</status>"), "{out}");
}

#[test]
fn monitor_timeout_flags_take_effect() {
    let mut s = Server::initialized(&[
        "--monitor-timeout",
        "2",
        "--monitor-min-timeout",
        "0.5",
        "--monitor-max-timeout",
        "3",
    ]);
    let start = |s: &mut Server, ms: Option<u64>| {
        let mut args = json!({"description": "d", "command": "sleep 30"});
        if let Some(ms) = ms {
            args["timeout_ms"] = json!(ms);
        }
        s.tool("monitor", args).0
    };
    assert!(start(&mut s, None).contains("timeout 2000ms"));
    assert!(start(&mut s, Some(1)).contains("timeout 500ms"));
    assert!(start(&mut s, Some(999_999)).contains("timeout 3000ms"));
    let mut s = Server::initialized(&["--unattended", "--monitor-unattended-max-timeout", "1"]);
    assert!(start(&mut s, Some(999_999)).contains("timeout 1000ms"));
}

#[test]
fn monitor_batching_flags_take_effect() {
    let mut s = Server::initialized(&[
        "--batch-window-ms",
        "300",
        "--burst-limit",
        "2",
        "--line-limit",
        "5",
        "--flood-timeout",
        "60",
    ]);
    let (t, err) = s.tool(
        "monitor",
        json!({"description": "burst", "command": "printf 'abcdefghij\\n2\\n3\\n4\\n'; sleep 1; echo after"}),
    );
    assert!(!err, "{t}");
    let mut events = String::new();
    loop {
        let n = s.log_message(|d| d["task_id"] == "monitor_1");
        let data = &n["params"]["data"];
        if data.get("status").is_some() {
            break;
        }
        events.push_str(data["text"].as_str().unwrap());
    }
    assert!(events.contains("abcde...(truncated)"), "{events}");
    assert!(events.contains("events suppressed"), "{events}");
}

#[test]
fn max_output_bytes_and_output_root_take_effect() {
    let root = std::env::temp_dir().join(format!("bashtools-mcp-root-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let mut s = Server::initialized(&[
        "--max-output-bytes",
        "10000",
        "--output-root",
        root.to_str().unwrap(),
    ]);
    let (t, _) = s.tool(
        "bash",
        json!({"command": "sleep 30", "run_in_background": true}),
    );
    assert!(output_path(&t).starts_with(&root), "{t}");
    let (t, err) = s.tool("bash", json!({"command": "yes", "timeout": 60}));
    assert!(err, "{t}");
    assert!(t.contains("max_output_bytes"), "{t}");
    drop(s);
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn a_relative_output_root_gives_absolute_output_paths() {
    // Results name files the client can open, and the keeper (which runs
    // in `/`) can remove them after the server's SIGKILL.
    let mut s = Server::start_with(&["--output-root", "."], |c| {
        c.current_dir(std::env::temp_dir());
    });
    s.initialize("2025-06-18");
    s.notify("notifications/initialized", json!({}));
    let (t, _) = s.tool(
        "bash",
        json!({"command": "sleep 30", "run_in_background": true}),
    );
    let path = output_path(&t);
    assert!(path.is_absolute(), "{t}");
    let tmp = std::env::temp_dir().canonicalize().unwrap();
    assert!(path.starts_with(&tmp), "{t}");
}

fn tool_names(s: &mut Server) -> Vec<String> {
    let list = s.call("tools/list", json!({}));
    list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn write_stdin_is_listed_only_with_interactive() {
    let mut plain = Server::start(&[]);
    plain.initialize("2025-11-25");
    assert!(!tool_names(&mut plain).contains(&"write_stdin".to_string()));
    let r = plain.call(
        "tools/call",
        json!({"name": "write_stdin", "arguments": {"shell_id": "bash_1", "input": "x"}}),
    );
    assert_eq!(r["error"]["message"], "Unknown tool: write_stdin", "{r}");

    let mut s = Server::start(&["--interactive", "--terminal-size", "100x30"]);
    s.initialize("2025-11-25");
    assert!(tool_names(&mut s).contains(&"write_stdin".to_string()));
    let (text, is_error) = s.tool(
        "bash",
        json!({"command": "stty size; read -p 'name? ' n; echo \"hi $n\"", "interactive": true}),
    );
    assert!(!is_error, "{text}");
    let id = task_id(&text, "bash");
    let mut seen = text;
    let end = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !seen.contains("hi bob") {
        assert!(std::time::Instant::now() < end, "{seen}");
        let input = if seen.contains("name?") && !seen.contains("bob") {
            "bob\n"
        } else {
            ""
        };
        let (text, is_error) = s.tool(
            "write_stdin",
            json!({"shell_id": id, "input": input, "yield_ms": 5000}),
        );
        assert!(!is_error, "{text}");
        seen.push_str(&text);
    }
    assert!(seen.contains("30 100"), "{seen}");
}

#[test]
fn interactive_beside_allow_needs_interactive_ungated() {
    let out = run(&["--interactive", "--allow", "cat"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--interactive-ungated"),
        "{}",
        text(&out.stderr)
    );
    let mut s = Server::start(&["--interactive", "--interactive-ungated", "--allow", "cat"]);
    s.initialize("2025-11-25");
    assert!(tool_names(&mut s).contains(&"write_stdin".to_string()));
}

#[test]
fn a_cd_persists_by_default_and_no_persist_cwd_turns_it_off() {
    let dir = std::env::temp_dir().canonicalize().unwrap();
    let root = dir.display().to_string();
    let mut s = Server::initialized(&["--working-directory", &root]);
    let (t, err) = s.tool("bash", json!({"command": "cd /"}));
    assert!(!err, "{t}");
    assert_eq!(
        s.tool("bash", json!({"command": "pwd"})),
        ("/".to_string(), false)
    );
    let mut s = Server::initialized(&["--working-directory", &root, "--no-persist-cwd"]);
    s.tool("bash", json!({"command": "cd /"}));
    assert_eq!(s.tool("bash", json!({"command": "pwd"})), (root, false));
}

#[test]
fn the_server_raises_its_descriptor_limit_and_commands_get_the_old_one() {
    use std::os::unix::process::CommandExt;
    // A soft limit of 64 open files: each background shell holds about
    // three of the server's, so 40 of them once ended in "Too many open
    // files".
    let mut s = Server::start_with(&[], |c| {
        // SAFETY: between fork and exec, one async-signal-safe system call
        // on a struct on this stack.
        unsafe {
            c.pre_exec(|| {
                let mut l = nix::libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                nix::libc::getrlimit(nix::libc::RLIMIT_NOFILE, &mut l);
                l.rlim_cur = 64.min(l.rlim_max);
                nix::libc::setrlimit(nix::libc::RLIMIT_NOFILE, &l);
                Ok(())
            });
        }
    });
    s.initialize("2025-06-18");
    let hard: u64 = std::fs::read_to_string(format!("/proc/{}/limits", s.pid()))
        .unwrap()
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(4)?.parse().ok())
        .unwrap();
    let soft_now: u64 = std::fs::read_to_string(format!("/proc/{}/limits", s.pid()))
        .unwrap()
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3)?.parse().ok())
        .unwrap();
    assert_eq!(soft_now, hard, "the server's soft limit is its hard one");
    let (text, _) = s.tool("bash", json!({"command": "ulimit -Sn"}));
    assert_eq!(
        text,
        64.min(hard).to_string(),
        "commands get the limit as it was"
    );
    if hard < 200 {
        eprintln!("note: the hard limit here is {hard}: the capacity is not tried");
        return;
    }
    for i in 0..40 {
        let (text, err) = s.tool(
            "bash",
            json!({"command": "sleep 100", "run_in_background": true}),
        );
        assert!(!err, "shell {i}: {text}");
    }
}

#[test]
fn a_removed_variable_is_nowhere_in_the_server() {
    // Once the server kept it in its own /proc/PID/environ, which root
    // reads even of a process that is not dumpable.
    let secret = format!("bt-removed-{}", std::process::id());
    let mut s = Server::start_with(&["--env-remove", "BT_REMOVED_SECRET"], |c| {
        c.env("BT_REMOVED_SECRET", &secret);
    });
    s.initialize("2025-06-18");
    let (text, _) = s.tool(
        "bash",
        json!({"command": "echo \"[${BT_REMOVED_SECRET-unset}]\""}),
    );
    assert_eq!(text, "[unset]");
    // SAFETY: geteuid has no preconditions.
    if unsafe { nix::libc::geteuid() } != 0 {
        eprintln!("note: not root: another process's environ cannot be read here, only the commands' is checked");
        return;
    }
    let environ = std::fs::read(format!("/proc/{}/environ", s.pid())).unwrap();
    assert!(
        !String::from_utf8_lossy(&environ).contains(&secret),
        "the removed value is in the server's environ"
    );
    // The rest of its environment is as it was.
    assert!(String::from_utf8_lossy(&environ).contains("PATH="));
}
