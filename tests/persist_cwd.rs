//! `persist_working_directory` (issue 12): the directory a foreground
//! command ends in becomes its recipient's for the next commands, found out
//! without changing the output or the exit status, with real processes.

mod common;

use std::time::Duration;

use bashtools::{BashTools, Caller, Command, Outcome};
use common::{assert_gone, id_of, Scratch};
use serde_json::{json, Value};

fn tools_in(dir: &Scratch) -> BashTools {
    common::builder()
        .working_directory(&dir.0)
        .persist_working_directory(true)
        .build()
        .unwrap()
}

fn run(t: &BashTools, input: Value) -> (String, bool) {
    let r = t.bash(&input, &common::me());
    (r.text, r.is_error)
}

fn pwd(t: &BashTools, caller: &Caller) -> String {
    let r = t.bash(&json!({"command": "pwd"}), caller);
    assert!(!r.is_error, "{r:?}");
    r.text
}

/// Nothing of the tools' processes is left, and no file but the output
/// directory itself.
fn nothing_left(t: &BashTools) {
    let dir = t.output_directory().to_path_buf();
    let left = common::output_files(&dir);
    assert!(
        left.is_empty(),
        "files left in the output directory: {left:?}"
    );
    common::wait_until("no zombie child is left", || {
        common::zombie_children().is_empty()
    });
}

#[test]
fn a_cd_carries_to_the_next_command() {
    let dir = Scratch::new("cd-tmp");
    let t = tools_in(&dir);
    let tmp = std::env::temp_dir().canonicalize().unwrap();
    assert_eq!(
        run(&t, json!({"command": "cd /tmp"})),
        ("(Bash completed with no output)".into(), false)
    );
    assert_eq!(pwd(&t, &common::me()), tmp.display().to_string());
    nothing_left(&t);
}

#[test]
fn a_failing_command_still_moves_the_directory_and_keeps_its_exit_code() {
    let dir = Scratch::new("cd-false");
    std::fs::create_dir(dir.path("sub")).unwrap();
    let t = tools_in(&dir);
    assert_eq!(
        run(&t, json!({"command": "cd sub && false"})),
        ("Exit code 1".into(), true)
    );
    assert_eq!(
        pwd(&t, &common::me()),
        dir.path("sub").display().to_string()
    );
    assert_eq!(
        run(&t, json!({"command": "cd ..; echo out; exit 3"})),
        ("Exit code 3\nout".into(), true)
    );
    assert_eq!(pwd(&t, &common::me()), dir.0.display().to_string());
    nothing_left(&t);
}

#[test]
fn two_recipients_keep_two_directories() {
    let dir = Scratch::new("two");
    for d in ["a", "b"] {
        std::fs::create_dir(dir.path(d)).unwrap();
    }
    let t = tools_in(&dir);
    let (a, b) = (
        Caller::default().recipient("a"),
        Caller::default().recipient("b"),
    );
    assert!(!t.bash(&json!({"command": "cd a"}), &a).is_error);
    assert!(!t.bash(&json!({"command": "cd b"}), &b).is_error);
    assert_eq!(pwd(&t, &a), dir.path("a").display().to_string());
    assert_eq!(pwd(&t, &b), dir.path("b").display().to_string());
    assert_eq!(pwd(&t, &common::me()), dir.0.display().to_string());
}

#[test]
fn the_calls_own_directory_wins_for_that_call_and_is_not_kept() {
    let dir = Scratch::new("arg");
    for d in ["a", "b"] {
        std::fs::create_dir(dir.path(d)).unwrap();
    }
    let t = tools_in(&dir);
    assert!(!run(&t, json!({"command": "cd a"})).1);
    let r = run(
        &t,
        json!({"command": "pwd; cd /", "working_directory": "b"}),
    );
    assert_eq!(r, (dir.path("b").display().to_string(), false));
    assert_eq!(pwd(&t, &common::me()), dir.path("a").display().to_string());
}

#[test]
fn background_commands_and_monitors_start_in_it_but_do_not_change_it() {
    let dir = Scratch::new("bg");
    std::fs::create_dir(dir.path("sub")).unwrap();
    let t = common::builder()
        .working_directory(&dir.0)
        .persist_working_directory(true)
        .tasks(bashtools::Tasks::new())
        .build()
        .unwrap();
    assert!(!run(&t, json!({"command": "cd sub"})).1);
    let r = t.bash(
        &json!({"command": "pwd; cd /", "run_in_background": true}),
        &common::me(),
    );
    let id = id_of(&r);
    let out = t.bash_output(&json!({"bash_id": id, "block": true}));
    assert!(
        out.text.contains(&dir.path("sub").display().to_string()),
        "{out:?}"
    );
    assert!(out.text.contains("<status>completed</status>"), "{out:?}");
    let m = t.monitor(
        &json!({"description": "where", "command": "pwd; cd /"}),
        &common::me(),
    );
    assert!(!m.is_error, "{m:?}");
    let id = id_of(&m);
    let out = t.bash_output(&json!({"bash_id": id, "block": true}));
    assert!(out.text.contains("<status>completed</status>"), "{out:?}");
    assert_eq!(
        pwd(&t, &common::me()),
        dir.path("sub").display().to_string()
    );
}

#[test]
fn a_command_moved_to_the_background_at_its_timeout_does_not_change_it() {
    let dir = Scratch::new("moved");
    std::fs::create_dir(dir.path("sub")).unwrap();
    let fifo = dir.path("go");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let t = tools_in(&dir);
    // Blocks on the FIFO until the test opens it, past its timeout.
    let r = t.bash(
        &json!({"command": "cd sub; read x < ../go", "timeout": 0.3}),
        &common::me(),
    );
    assert!(r.text.contains("moved to the background"), "{r:?}");
    let id = id_of(&r);
    std::fs::write(&fifo, "go\n").unwrap();
    let out = t.bash_output(&json!({"bash_id": id, "block": true}));
    assert!(out.text.contains("<status>completed</status>"), "{out:?}");
    assert_eq!(pwd(&t, &common::me()), dir.0.display().to_string());
}

#[test]
fn a_command_stopped_by_kill_shell_or_cancelled_does_not_change_it() {
    let dir = Scratch::new("killed");
    std::fs::create_dir(dir.path("sub")).unwrap();
    let t = tools_in(&dir);
    let r = t.bash(
        &json!({"command": "cd sub; sleep 100", "timeout": 0.3}),
        &common::me(),
    );
    let id = id_of(&r);
    let pid = t.background_pids();
    let k = t.kill_shell(&json!({"shell_id": id}));
    assert!(!k.is_error, "{k:?}");
    assert_gone(&pid);
    assert_eq!(pwd(&t, &common::me()), dir.0.display().to_string());

    // A foreground command stopped through its handle.
    let pending = t.run_f(
        &Command::new("cd sub; trap 'exit 0' TERM; sleep 100 & wait"),
        &common::me(),
    );
    let handle = pending.command().expect("a command handle");
    handle.cancel();
    match pending.wait() {
        Ok(Outcome::Exited(e)) => assert!(e.stopped().is_some(), "{e:?}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(pwd(&t, &common::me()), dir.0.display().to_string());
}

#[test]
fn a_removed_directory_falls_back_with_a_note() {
    let dir = Scratch::new("removed");
    std::fs::create_dir(dir.path("sub")).unwrap();
    let t = tools_in(&dir);
    assert!(!run(&t, json!({"command": "cd sub"})).1);
    std::fs::remove_dir(dir.path("sub")).unwrap();
    let (text, err) = run(&t, json!({"command": "pwd"}));
    assert!(!err);
    let sub = dir.path("sub");
    assert_eq!(
        text,
        format!(
            "{}\nShell cwd was reset to {} ({} no longer exists)",
            dir.0.display(),
            dir.0.display(),
            sub.display()
        )
    );
    // Said once: the record is gone.
    assert_eq!(pwd(&t, &common::me()), dir.0.display().to_string());
    // The typed API says the same.
    assert!(!run(&t, json!({"command": "mkdir sub2 && cd sub2"})).1);
    std::fs::remove_dir(dir.path("sub2")).unwrap();
    match t.run(&Command::new("true"), &common::me()).unwrap() {
        Outcome::Exited(e) => {
            let reset = e.cwd_reset().expect("a reset");
            assert_eq!(reset.lost(), dir.path("sub2"));
            assert_eq!(reset.ran_in(), dir.0);
            assert!(!reset.outside_sandbox());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn exit_codes_and_output_are_those_of_the_command() {
    let dir = Scratch::new("exit");
    let t = tools_in(&dir);
    assert_eq!(
        run(&t, json!({"command": "exit 3"})),
        ("Exit code 3".into(), true)
    );
    assert_eq!(
        run(
            &t,
            json!({"command": "echo $BASH_ENV-${BASHTOOLS_CWD_FILE-none}; kill -TERM $$"})
        )
        .0,
        "Exit code 143\n-none"
    );
    assert_eq!(
        run(&t, json!({"command": "echo $LINENO\necho $LINENO"})),
        ("1\n2".into(), false)
    );
    assert_eq!(
        run(
            &t,
            json!({"command": "env | grep -c -e ^BASH_ENV= -e ^BASHTOOLS_CWD_FILE= -e ^BASHTOOLS_JOIN_STARTUP= -e ^BASHTOOLS_USER_BASH_ENV="})
        ),
        ("Exit code 1\n0".into(), true)
    );
}

#[test]
fn a_commands_own_exit_trap_runs_as_without_us_and_the_directory_stays() {
    let dir = Scratch::new("trap");
    std::fs::create_dir(dir.path("sub")).unwrap();
    let t = tools_in(&dir);
    // The command's trap replaces ours (bash has one EXIT trap): it runs
    // with the status it was entered with, and the directory is not kept.
    let (text, err) = run(
        &t,
        json!({"command": "trap 'echo bye $?' EXIT; trap -p EXIT; cd sub; exit 4"}),
    );
    assert_eq!(
        (text.as_str(), err),
        ("Exit code 4\ntrap -- 'echo bye $?' EXIT\nbye 4", true)
    );
    assert_eq!(pwd(&t, &common::me()), dir.0.display().to_string());
    // Under `set -eu` too.
    let (text, err) = run(
        &t,
        json!({"command": "set -eu; trap 'echo bye $?' EXIT INT; trap -p INT; cd sub; false"}),
    );
    assert_eq!(
        (text.as_str(), err),
        ("Exit code 1\ntrap -- 'echo bye $?' SIGINT\nbye 1", true)
    );
    assert_eq!(pwd(&t, &common::me()), dir.0.display().to_string());
    // A trap in a subshell is the subshell's own: ours still records.
    assert_eq!(
        run(
            &t,
            json!({"command": "(trap 'echo sub' EXIT; cd /); echo main; cd sub"})
        )
        .0,
        "sub\nmain"
    );
    assert_eq!(
        pwd(&t, &common::me()),
        dir.path("sub").display().to_string()
    );
    nothing_left(&t);
}

/// Item 1 of the hardening: nothing a command can set is evaluated by our
/// code. Under an allow-list that lets only `cd` and `true` run, lines the
/// gate passes (assignments of every name the old startup code used, and
/// of the variables bash itself reads) run nothing else at their end, and
/// write no file.
#[test]
fn nothing_a_command_assigns_is_run_or_written_by_the_record() {
    let dir = Scratch::new("plumbing");
    std::fs::create_dir(dir.path("sub")).unwrap();
    let canary = dir.path("canary");
    let victim = dir.path("victim");
    std::fs::write(&victim, "").unwrap();
    let t = common::builder()
        .working_directory(&dir.0)
        .persist_working_directory(true)
        .allowed_commands(["cd", "true"])
        .build()
        .unwrap();
    let touch = format!("touch {}", canary.display());
    let lines = [
        format!("__bashtools_exit_trap='{touch}'"),
        format!("__bashtools_ours='{touch}'; trap -p"),
        format!("__bashtools_cwd_file={}", victim.display()),
        format!("BASHTOOLS_CWD_FILE={}", victim.display()),
        format!("__bashtools_pid=1 __bashtools_s='$({touch})'"),
        format!("PROMPT_COMMAND='{touch}' PS0='$({touch})' PS1='$({touch})'"),
        format!("ENV='{}' HOME='{}'", victim.display(), dir.0.display()),
        format!("SHELLOPTS_X=1 BASH_XTRACEFD=2 CDPATH='$({touch})'; cd sub"),
        format!("OLDPWD='$({touch})'; PWD='$({touch})'; true"),
        format!("declare -i x; x='a[$({touch})]'"),
    ];
    for line in &lines {
        let r = t.bash(&json!({"command": line}), &common::me());
        assert!(
            !canary.exists(),
            "{line:?} ran a command at its end: {}",
            r.text
        );
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "",
            "{line:?} wrote a file through our trap"
        );
        // The directory the last line left is still real (`cd sub` moved
        // it; a forged PWD did not).
        let here = t.bash(&json!({"command": "true"}), &common::me());
        assert!(!here.is_error, "{line:?}: {}", here.text);
    }
    // `enable -n builtin` would hand `builtin` to a program on PATH: the
    // gate refuses it, whatever the allow-list.
    let t2 = common::builder()
        .working_directory(&dir.0)
        .persist_working_directory(true)
        .allowed_commands(["enable", "true"])
        .build()
        .unwrap();
    let r = t2.bash(&json!({"command": "enable -n builtin"}), &common::me());
    assert!(r.is_error && r.text.contains("enable -n"), "{}", r.text);
    nothing_left(&t);
}

/// Item 14: a directory whose name holds a newline is kept exactly, never
/// a decoy named after its first line.
#[test]
fn a_directory_with_a_newline_in_its_name_is_kept_exactly() {
    let dir = Scratch::new("newline");
    std::fs::create_dir(dir.path("a")).unwrap();
    std::fs::create_dir(dir.path("a\nb")).unwrap();
    std::fs::create_dir(dir.path("-lead")).unwrap();
    std::fs::create_dir(dir.path("trail  ")).unwrap();
    let t = tools_in(&dir);
    for name in ["a\nb", "-lead", "trail  "] {
        let r = t.bash(
            &json!({"command": format!("cd -- {}", shell_quote(name))}),
            &common::me(),
        );
        assert!(!r.is_error, "{name:?}: {}", r.text);
        let r = t.bash(&json!({"command": "printf '%s|' \"$PWD\""}), &common::me());
        assert_eq!(r.text, format!("{}|", dir.path(name).display()), "{name:?}");
        assert!(!run(&t, json!({"command": "cd .."})).1);
    }
    // Bytes that are not UTF-8.
    use std::os::unix::ffi::OsStrExt;
    let odd = dir.0.join(std::ffi::OsStr::from_bytes(b"x\xff"));
    std::fs::create_dir(&odd).unwrap();
    assert!(!run(&t, json!({"command": "cd $'x\\xff'"})).1);
    let r = t.bash(
        &json!({"command": "pwd | od -An -c | tr -d ' \n'"}),
        &common::me(),
    );
    assert!(r.text.ends_with("x377\\n"), "{}", r.text);
    nothing_left(&t);
}

/// `'…'` quoting for bash.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[test]
fn exec_leaves_the_directory_as_it_was() {
    let dir = Scratch::new("exec");
    std::fs::create_dir(dir.path("sub")).unwrap();
    let t = tools_in(&dir);
    assert_eq!(
        run(&t, json!({"command": "cd sub; exec echo hi"})),
        ("hi".into(), false)
    );
    assert_eq!(pwd(&t, &common::me()), dir.0.display().to_string());
    nothing_left(&t);
}

#[test]
fn without_the_option_a_cd_does_not_carry() {
    let dir = Scratch::new("off");
    std::fs::create_dir(dir.path("sub")).unwrap();
    let t = common::builder().working_directory(&dir.0).build().unwrap();
    assert!(!run(&t, json!({"command": "cd sub"})).1);
    assert_eq!(pwd(&t, &common::me()), dir.0.display().to_string());
    let d = t.definitions();
    let bash = d.iter().find(|d| d.name == "bash").unwrap();
    assert!(
        bash.description.contains("does not carry"),
        "{}",
        bash.description
    );
}

#[test]
fn the_bash_description_says_that_cd_persists() {
    let dir = Scratch::new("desc");
    let t = tools_in(&dir);
    let d = t.definitions();
    let bash = d.iter().find(|d| d.name == "bash").unwrap();
    assert!(
        bash.description.contains("The working directory persists"),
        "{}",
        bash.description
    );
}

#[test]
fn a_callers_own_directory_is_where_it_starts_and_a_new_one_wins() {
    let dir = Scratch::new("caller");
    for d in ["w1", "w1/sub", "w2"] {
        std::fs::create_dir(dir.path(d)).unwrap();
    }
    let t = tools_in(&dir);
    let w1 = Caller::default().working_directory("w1");
    assert_eq!(pwd(&t, &w1), dir.path("w1").display().to_string());
    assert!(!t.bash(&json!({"command": "cd sub"}), &w1).is_error);
    assert_eq!(pwd(&t, &w1), dir.path("w1/sub").display().to_string());
    // The embedder moved its caller: the new directory wins.
    let w2 = Caller::default().working_directory("w2");
    assert_eq!(pwd(&t, &w2), dir.path("w2").display().to_string());
}

#[test]
fn a_large_environment_command_and_a_user_bash_env_still_work() {
    let dir = Scratch::new("bashenv");
    std::fs::create_dir(dir.path("sub")).unwrap();
    std::fs::write(dir.path("env.sh"), "USER_ENV_READ=yes\n").unwrap();
    let t = common::builder()
        .working_directory(&dir.0)
        .persist_working_directory(true)
        .env("BASH_ENV", dir.path("env.sh"))
        .build()
        .unwrap();
    assert_eq!(
        run(
            &t,
            json!({"command": "echo $USER_ENV_READ $BASH_ENV; cd sub"})
        )
        .0,
        format!("yes {}", dir.path("env.sh").display())
    );
    assert_eq!(
        pwd(&t, &common::me()),
        dir.path("sub").display().to_string()
    );
    // A command too long for one argument goes through a memory file.
    let long = format!("cd ..; : {}", "x".repeat(200_000));
    assert!(!run(&t, json!({ "command": long })).1);
    assert_eq!(pwd(&t, &common::me()), dir.0.display().to_string());
    let _ = Duration::ZERO;
}

/// Tools sandboxed to `dir`, with the option on; `None` (and why) where the
/// kernel has no Landlock.
fn sandboxed(dir: &Scratch) -> Option<BashTools> {
    let t = common::builder()
        .working_directory(&dir.0)
        .persist_working_directory(true)
        .sandbox(bashtools::Sandbox::new().best_effort(true))
        .build()
        .unwrap();
    if !t.sandbox_status().is_some_and(|s| s.filesystem()) {
        println!("skipped: this kernel has no Landlock");
        return None;
    }
    Some(t)
}

#[test]
fn in_the_sandbox_the_directory_is_recorded_and_one_outside_it_is_reset() {
    let dir = Scratch::new("sandbox");
    std::fs::create_dir(dir.path("sub")).unwrap();
    let Some(t) = sandboxed(&dir) else { return };
    // The command cannot create files outside its roots, yet its record is written.
    let (text, err) = run(
        &t,
        json!({"command": "touch /var/tmp/bashtools-no 2>/dev/null || echo refused; cd sub"}),
    );
    assert_eq!((text.as_str(), err), ("refused", false));
    assert_eq!(
        pwd(&t, &common::me()),
        dir.path("sub").display().to_string()
    );
    // Where a command ended outside the sandbox's roots is not where the next runs.
    assert!(!run(&t, json!({"command": "cd /"})).1);
    let (text, _) = run(&t, json!({"command": "pwd"}));
    assert_eq!(
        text,
        format!(
            "{}\nShell cwd was reset to {} (/ is outside the sandbox)",
            dir.0.display(),
            dir.0.display()
        )
    );
    // The record is a descriptor: written from inside the sandbox, which
    // may write nothing of the output directory's by name.
    assert!(!run(&t, json!({"command": "cd sub"})).1);
    assert_eq!(
        pwd(&t, &common::me()),
        dir.path("sub").display().to_string()
    );
    // stdin in the sandbox too.
    assert_eq!(
        run(&t, json!({"command": "cat", "stdin": "in"})),
        ("in".into(), false)
    );
    nothing_left(&t);
}

/// Hardening item 2: the startup file every later command reads is a
/// sealed memory file. A command that finds it through the host's
/// descriptors (`/proc/$PPID/fd`, reachable here: the test host is
/// dumpable and of the same user) can neither rewrite, append to nor
/// truncate it, so no later command runs injected code.
#[test]
fn no_command_can_rewrite_the_startup_file_of_later_commands() {
    let dir = Scratch::new("inject");
    let canary = dir.path("canary");
    let t = tools_in(&dir);
    // Each descriptor is opened once (appending, which truncates nothing)
    // and attacked through that opening only once it is known to be the
    // startup file: the test host closes and reuses descriptor numbers
    // meanwhile, and another test's files are not this attack's target.
    let attack = format!(
        "n=0; for f in /proc/$PPID/fd/*; do case $(readlink $f) in *bashtools-lastdir*) \
         exec 9>>$f || continue; case $(readlink /proc/self/fd/9) in *bashtools-lastdir*) n=$((n+1)); \
         (printf 'touch {c}\\n' > /proc/self/fd/9) 2>/dev/null && echo rewrote; \
         (printf 'touch {c}\\n' >&9) 2>/dev/null && echo appended; \
         (: > /proc/self/fd/9) 2>/dev/null && echo truncated;; esac; exec 9>&-;; esac; done; echo found $n",
        c = canary.display()
    );
    let (text, _) = run(&t, json!({ "command": attack }));
    assert!(text.starts_with("found ") && text != "found 0", "{text}");
    assert!(
        !text.contains("rewrote") && !text.contains("appended") && !text.contains("truncated"),
        "{text}"
    );
    // Later commands run as before, and nothing injected ran.
    assert_eq!(
        run(&t, json!({"command": "echo fine"})),
        ("fine".into(), false)
    );
    assert!(!canary.exists());
    nothing_left(&t);
}

/// A line that only starts programs cannot move its shell: it runs
/// without the end record (no descriptor 63 reaches what it starts), and
/// the directory and environment stay as they were; a line that may move
/// it has the record.
#[test]
fn a_line_that_cannot_move_the_shell_runs_without_the_record() {
    let dir = Scratch::new("inert");
    std::fs::create_dir(dir.path("sub")).unwrap();
    let t = common::builder()
        .working_directory(&dir.0)
        .persist_working_directory(true)
        .persist_environment(true)
        .build()
        .unwrap();
    let fds = |line: &str| -> Vec<String> {
        let (text, err) = run(&t, json!({ "command": line }));
        assert!(!err, "{text}");
        text.lines().map(str::to_string).collect()
    };
    // `ls` lists its own descriptors: the record's, 63, only when bash
    // holds it.
    let plain = fds("ls /proc/self/fd");
    assert!(!plain.iter().any(|f| f == "63"), "{plain:?}");
    let moving = fds("cd sub && ls /proc/self/fd");
    assert!(moving.iter().any(|f| f == "63"), "{moving:?}");
    // The cd carried; the plain lines after it left it where it was.
    fds("ls -la > /dev/null; true");
    assert_eq!(
        pwd(&t, &common::me()),
        dir.path("sub").display().to_string()
    );
    // A variable set by a line with the record carries; plain lines keep it.
    fds("export KEPT=1");
    fds("echo plain | cat");
    let (text, _) = run(&t, json!({"command": "printenv KEPT"}));
    assert_eq!(text, "1");
    nothing_left(&t);
}
