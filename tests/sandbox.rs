//! The Landlock sandbox on real processes: what a command may write, reach
//! and signal, for the command and everything it starts, while the host
//! keeps every right. The tests run as root on CI: root does not bypass
//! Landlock, and nothing here relies on a file's permission bits (every
//! refused path is one root could write).
//!
//! A test that needs a Landlock ABI the kernel lacks says so and returns.

mod common;

use std::io::ErrorKind as IoErrorKind;
use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use bashtools::{BashTools, CallError, Caller, Command, ErrorKind, Outcome, Sandbox, TaskStatus};
use common::*;
use serde_json::json;

/// The kernel's Landlock ABI (0: none), as a sandbox reports it.
fn abi() -> u32 {
    let tools = builder()
        .sandbox(Sandbox::new().best_effort(true))
        .build()
        .expect("a best-effort sandbox builds");
    tools.sandbox_status().expect("a status").abi()
}

/// Whether the kernel has ABI `need`; prints why the test is skipped if not.
fn kernel_has(need: u32, what: &str) -> bool {
    let abi = abi();
    if abi < need {
        println!("skipped: {what} needs Landlock ABI {need}, this kernel has {abi}");
    }
    abi >= need
}

/// How many writes `text` says were refused: `Read-only file system` in
/// the read-only view, `Permission denied` from Landlock without it.
fn refusals(text: &str) -> usize {
    text.matches("Read-only file system").count() + text.matches("Permission denied").count()
}

/// Whether `text` says a write was refused.
fn refused(text: &str) -> bool {
    refusals(text) > 0
}

/// Tools whose working directory is `dir`, sandboxed by `sandbox`.
fn sandboxed(dir: &Path, sandbox: Sandbox) -> BashTools {
    builder()
        .working_directory(dir)
        .sandbox(sandbox)
        .build()
        .expect("a sandbox builds")
}

#[test]
fn the_status_reports_what_this_kernel_enforces() {
    if !kernel_has(1, "the sandbox") {
        return;
    }
    let abi = abi();
    let dir = Scratch::new("status");
    let status = sandboxed(&dir.0, Sandbox::new()).sandbox_status().unwrap();
    assert_eq!(status.abi(), abi);
    assert!(status.filesystem());
    assert_eq!(status.network(), abi >= 4);
    assert_eq!(status.scoping(), abi >= 6);
    assert!(status
        .to_string()
        .starts_with(&format!("Landlock ABI {abi}: filesystem restricted")));
    let open = sandboxed(&dir.0, Sandbox::new().allow_network(true));
    assert!(!open.sandbox_status().unwrap().network());
    assert_eq!(tools().sandbox_status(), None);
}

#[test]
fn touch_outside_the_write_roots_is_denied_and_creates_nothing() {
    if !kernel_has(1, "the filesystem sandbox") {
        return;
    }
    let work = Scratch::new("work");
    let outside = Scratch::new("outside");
    let tools = sandboxed(&work.0, Sandbox::new());
    let target = outside.path("f");
    let r = bash(
        &tools,
        json!({"command": format!("touch {}", target.display())}),
    );
    assert!(r.is_error, "{r:?}");
    assert!(r.text.starts_with("Exit code 1\n"), "{}", r.text);
    assert!(refused(&r.text), "{}", r.text);
    assert!(!target.exists());
    // Nor by any other way of making or changing a file there.
    std::fs::write(outside.path("old"), "old").unwrap();
    let r = bash(
        &tools,
        json!({"command": format!(
            "cd {}; mkdir d; echo x > old; echo y >> old; ln -s old s; mv old new; rm old",
            outside.0.display()
        )}),
    );
    assert!(r.is_error, "{r:?}");
    assert_eq!(refusals(&r.text), 6, "{}", r.text);
    let mut names: Vec<_> = std::fs::read_dir(&outside.0)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["old"]);
    assert_eq!(std::fs::read_to_string(outside.path("old")).unwrap(), "old");
}

/// The host's mount table, one line per mount, without the mount ids.
fn host_mounts() -> Vec<String> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .map(|l| l.split(' ').skip(4).collect::<Vec<_>>().join(" "))
        .collect()
}

#[test]
fn metadata_outside_the_write_roots_cannot_be_changed() {
    if !kernel_has(1, "the filesystem sandbox") {
        return;
    }
    let work = Scratch::new("work");
    let outside = Scratch::new("outside");
    let before = host_mounts();
    let tools = sandboxed(&work.0, Sandbox::new());
    let status = tools.sandbox_status().unwrap();
    let xattr = std::path::Path::new("/usr/bin/setfattr").exists();
    if !xattr {
        eprintln!("no setfattr here (package attr): extended attributes are not tried");
    }
    // A file the command's own user owns (root's on CI's root pass), so
    // that nothing but the sandbox stands in the way.
    let file = outside.path("f");
    std::fs::write(&file, "f").unwrap();
    let meta = |p: &Path| std::fs::metadata(p).unwrap();
    let (mode, mtime) = {
        use std::os::unix::fs::MetadataExt;
        (meta(&file).mode(), meta(&file).mtime())
    };
    let attack = format!(
        "f={f}; chmod 600 \"$f\"; echo chmod=$?; chown \"$(id -u):$(id -g)\" \"$f\"; echo chown=$?; \
         touch -d 2001-01-01 \"$f\"; echo utime=$?; \
         {xattr} \
         unshare -rm sh -c 'mount -o remount,bind,rw / && chmod 600 \"$0\"' \"$f\" 2>/dev/null; echo nested=$?",
        f = file.display(),
        xattr = if xattr {
            "setfattr -n user.bashtools -v x \"$f\"; echo xattr=$?;"
        } else {
            ""
        },
    );
    let r = bash(&tools, json!({ "command": attack }));
    if !status.read_only_view() {
        eprintln!(
            "no read-only view could be made here ({status}): only Landlock's refusals hold: {}",
            r.text
        );
        assert!(status.to_string().contains("no read-only view"), "{status}");
        assert!(
            r.text.contains("nested=1"),
            "a mount got through: {}",
            r.text
        );
        return;
    }
    for op in ["chmod", "chown", "utime", "xattr", "nested"] {
        if op == "xattr" && !xattr {
            continue;
        }
        assert!(
            !r.text.contains(&format!("{op}=0")),
            "{op} got through: {}",
            r.text
        );
    }
    assert_eq!(
        r.text.matches("Read-only file system").count(),
        3 + usize::from(xattr),
        "{}",
        r.text
    );
    {
        use std::os::unix::fs::MetadataExt;
        assert_eq!((meta(&file).mode(), meta(&file).mtime()), (mode, mtime));
    }
    if xattr {
        let listed = std::process::Command::new("getfattr")
            .args(["-d", "--absolute-names"])
            .arg(&file)
            .output()
            .unwrap();
        assert!(!String::from_utf8_lossy(&listed.stdout).contains("bashtools"));
    }
    // Inside the write roots, each of them works.
    let inside = format!(
        "set -e; echo f > f; chmod 600 f; chown \"$(id -u):$(id -g)\" f; touch -d 2001-01-01 f; {} echo ok",
        if xattr { "setfattr -n user.bashtools -v x f;" } else { "" }
    );
    let r = bash(&tools, json!({ "command": inside }));
    assert_eq!((r.text.as_str(), r.is_error), ("ok", false), "{r:?}");
    {
        use std::os::unix::fs::MetadataExt;
        assert_eq!(meta(&work.path("f")).mode() & 0o777, 0o600);
    }
    // And the host's own mount table is untouched by the view.
    drop(tools);
    assert_eq!(host_mounts(), before);
}

#[test]
fn the_working_directory_the_allowed_ones_and_tmpdir_are_writable() {
    if !kernel_has(1, "the filesystem sandbox") {
        return;
    }
    let work = Scratch::new("work");
    let extra = Scratch::new("extra");
    let tools = sandboxed(&work.0, Sandbox::new().allow_write(&extra.0));
    let r = bash(
        &tools,
        json!({"command": format!(
            "set -e; touch here; mkdir -p sub/deeper; echo x > sub/deeper/f; mv sub/deeper/f g; rm g; \
             echo y > {extra}/f; : > {extra}/f; ln -s f {extra}/link; mv {extra}/f here2; \
             echo t > \"$TMPDIR/t\"; cat \"$TMPDIR/t\"; echo ok",
            extra = extra.0.display()
        )}),
    );
    assert_eq!((r.text.as_str(), r.is_error), ("t\nok", false), "{r:?}");
    assert!(work.path("here").exists() && work.path("here2").exists());
    assert!(extra.path("link").symlink_metadata().is_ok());
}

#[test]
fn tmpdir_is_private_to_the_tools_and_removed_with_them() {
    if !kernel_has(1, "the filesystem sandbox") {
        return;
    }
    let work = Scratch::new("work");
    let tools = sandboxed(&work.0, Sandbox::new());
    let other = sandboxed(&work.0, Sandbox::new());
    let tmp = bash(&tools, json!({"command": "echo \"$TMPDIR\""})).text;
    let tmp_other = bash(&other, json!({"command": "echo \"$TMPDIR\""})).text;
    assert_ne!(tmp, tmp_other);
    let tmp = std::path::PathBuf::from(tmp);
    assert!(tmp.is_dir());
    // One BashTools' commands cannot write in another's TMPDIR.
    let r = bash(
        &other,
        json!({"command": format!("touch {}/x", tmp.display())}),
    );
    assert!(refused(&r.text), "{r:?}");
    let r = bash(&tools, json!({"command": "mktemp"}));
    assert!(!r.is_error, "{r:?}");
    assert!(Path::new(&r.text).starts_with(&tmp), "{r:?}");
    drop(tools);
    assert!(!tmp.exists(), "{} is left", tmp.display());
}

#[test]
fn reading_and_running_work_everywhere_and_the_devices_are_writable() {
    if !kernel_has(1, "the filesystem sandbox") {
        return;
    }
    let work = Scratch::new("work");
    let tools = sandboxed(&work.0, Sandbox::new());
    let r = bash(
        &tools,
        json!({"command": "set -e; head -c 5 /etc/passwd; echo; ls / >/dev/null; echo gone > /dev/null; \
                           head -c 3 /dev/zero | od -An -tx1 | tr -d ' \\n'; echo; \
                           head -c 4 /dev/urandom | wc -c; \
                           echo out >> /dev/stdout; echo err >> /dev/stderr"}),
    );
    // The last two opened the output file again, by /proc/self/fd (appending, as
    // the shell's own descriptors would overwrite what comes after).
    assert!(!r.is_error, "{r:?}");
    let first = std::fs::read_to_string("/etc/passwd").unwrap();
    assert_eq!(
        r.text,
        format!("{}\n000000\n4\nout\nerr", &first[..5]),
        "{r:?}"
    );
}

#[test]
fn a_tcp_connection_is_refused_unless_the_network_is_allowed() {
    if !kernel_has(4, "the network sandbox") {
        return;
    }
    let work = Scratch::new("work");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");

    let tools = sandboxed(&work.0, Sandbox::new());
    let r = bash(&tools, json!({ "command": connect }));
    assert!(r.is_error, "{r:?}");
    assert!(r.text.contains("Permission denied"), "{r:?}");
    assert_eq!(
        listener.accept().map(|_| ()).unwrap_err().kind(),
        IoErrorKind::WouldBlock,
        "a connection got through"
    );

    let tools = sandboxed(&work.0, Sandbox::new().allow_network(true));
    let r = bash(&tools, json!({ "command": connect }));
    assert_eq!((r.text.as_str(), r.is_error), ("connected", false), "{r:?}");
    listener.set_nonblocking(false).unwrap();
    assert!(listener.accept().is_ok());
}

#[test]
fn a_command_cannot_signal_the_host_or_its_other_children() {
    if !kernel_has(6, "signal scoping") {
        return;
    }
    let work = Scratch::new("work");
    let tools = sandboxed(&work.0, Sandbox::new());
    let mut host_child = Reaped(
        std::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .unwrap(),
    );
    let r = bash(
        &tools,
        json!({"command": format!(
            "kill -0 {host}; kill -TERM {child}; kill -0 $$ && echo self",
            host = std::process::id(),
            child = host_child.0.id()
        )}),
    );
    assert_eq!(
        r.text.matches("Operation not permitted").count(),
        2,
        "{r:?}"
    );
    assert!(r.text.ends_with("self"), "{r:?}");
    assert!(
        host_child.0.try_wait().unwrap().is_none(),
        "the sleep was hit"
    );
}

/// A child of the test's own, killed and reaped however the test ends.
struct Reaped(std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_working_directory_outside_the_roots_is_refused() {
    if !kernel_has(1, "the filesystem sandbox") {
        return;
    }
    let work = Scratch::new("work");
    let outside = Scratch::new("outside");
    let extra = Scratch::new("extra");
    std::fs::create_dir(work.path("sub")).unwrap();
    std::os::unix::fs::symlink(&outside.0, work.path("escape")).unwrap();
    let tools = sandboxed(&work.0, Sandbox::new().allow_write(&extra.0));
    let run = |cmd: Command, caller: &Caller| tools.run(&cmd, caller);

    assert_eq!(
        run(Command::new("true").working_directory(&outside.0), &me()),
        Err(CallError::OutsideSandbox(outside.0.clone()))
    );
    // A symlink inside the working directory that leads out is out.
    assert_eq!(
        run(Command::new("true").working_directory("escape"), &me()),
        Err(CallError::OutsideSandbox(work.path("escape")))
    );
    let caller = Caller::default().working_directory(&outside.0);
    assert_eq!(
        run(Command::new("true"), &caller),
        Err(CallError::OutsideSandbox(outside.0.clone()))
    );
    for inside in [work.path("sub"), extra.0.clone()] {
        let outcome = run(Command::new("pwd").working_directory(&inside), &me());
        let Ok(Outcome::Exited(e)) = outcome else {
            panic!("{outcome:?}")
        };
        assert_eq!(e.output(), inside.display().to_string());
    }
    let r = bash(&tools, json!({"command": "true", "working_directory": "/"}));
    assert!(r.is_error);
    assert!(
        r.text
            .starts_with("Working directory is outside the sandbox: / ("),
        "{}",
        r.text
    );
}

#[test]
fn the_host_still_writes_anywhere_after_sandboxed_commands_ran() {
    if !kernel_has(1, "the filesystem sandbox") {
        return;
    }
    let work = Scratch::new("work");
    let outside = Scratch::new("outside");
    let tools = sandboxed(&work.0, Sandbox::new());
    let r = bash(
        &tools,
        json!({"command": format!("touch {}/f", outside.0.display())}),
    );
    assert!(refused(&r.text), "{r:?}");
    std::fs::write(outside.path("host"), "host").unwrap();
    let from_thread = outside.path("thread");
    std::thread::spawn(move || std::fs::write(from_thread, "t"))
        .join()
        .unwrap()
        .unwrap();
    assert!(outside.path("thread").exists());
    // And so do commands of tools without a sandbox.
    let plain = builder().working_directory(&work.0).build().unwrap();
    let r = bash(
        &plain,
        json!({"command": format!("touch {}/plain", outside.0.display())}),
    );
    assert!(!r.is_error, "{r:?}");
}

#[test]
fn grandchildren_and_background_processes_are_restricted_too() {
    if !kernel_has(1, "the filesystem sandbox") {
        return;
    }
    let work = Scratch::new("work");
    let outside = Scratch::new("outside");
    let out = outside.0.display();
    let tools = sandboxed(&work.0, Sandbox::new());

    // A grandchild (a new bash, a new session) started in the foreground.
    let r = bash(
        &tools,
        json!({"command": format!("bash -c 'setsid -w sh -c \"touch {out}/grandchild\"'")}),
    );
    assert!(refused(&r.text), "{r:?}");

    // A background shell.
    let r = bash(
        &tools,
        json!({"command": format!("touch {out}/background"), "run_in_background": true}),
    );
    let id = bashtools::ShellId::from(id_of(&r));
    let info = tools.wait(&id, DEADLINE).unwrap();
    assert_eq!(info.status(), TaskStatus::Failed);
    assert!(refused(tools.read_output(&id, None).unwrap().text()));

    // A process left running by a command that has ended.
    let r = bash(
        &tools,
        json!({"command": format!(
            "(sleep 0.2; touch {out}/orphan 2>/dev/null; echo $? > code.tmp; mv code.tmp code) \
             >/dev/null 2>&1 &"
        )}),
    );
    assert!(!r.is_error, "{r:?}");
    wait_until("the orphan has tried", || work.path("code").exists());
    assert_eq!(std::fs::read_to_string(work.path("code")).unwrap(), "1\n");
    for name in ["grandchild", "background", "orphan"] {
        assert!(!outside.path(name).exists(), "{name} was made");
    }
    wait_until("no zombie child is left", || zombie_children().is_empty());
}

#[test]
fn a_missing_allowed_directory_fails_the_build() {
    let missing = Path::new("/no/such/sandbox/dir");
    let err = builder()
        .sandbox(Sandbox::new().allow_write(missing).best_effort(true))
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Sandbox);
    assert_eq!(err.path(), Some(missing));
    assert!(err.to_string().contains("/no/such/sandbox/dir"), "{err}");
}

#[test]
fn the_bash_description_says_what_the_sandbox_forbids() {
    let work = Scratch::new("work");
    let extra = Scratch::new("extra");
    let describe = |tools: &BashTools| {
        tools
            .definitions()
            .into_iter()
            .find(|d| d.name == "bash")
            .unwrap()
            .description
    };
    let plain = describe(&builder().working_directory(&work.0).build().unwrap());
    assert!(!plain.contains("sandbox"), "{plain}");
    let tools = builder()
        .working_directory(&work.0)
        .sandbox(Sandbox::new().allow_write(&extra.0).best_effort(true))
        .build()
        .unwrap();
    let text = describe(&tools);
    assert!(text.contains("Commands run in a sandbox"), "{text}");
    assert!(
        text.contains(&format!("$TMPDIR, {}", extra.0.display())),
        "{text}"
    );
    assert!(
        text.contains(
            "the network is off (TCP connect and bind, UDP and every other IP socket are refused)"
        ),
        "{text}"
    );
    assert!(
        text.contains("(`Read-only file system` or `Permission denied`)"),
        "{text}"
    );
    let open = builder()
        .working_directory(&work.0)
        .sandbox(Sandbox::new().allow_network(true).best_effort(true))
        .build()
        .unwrap();
    assert!(!describe(&open).contains("TCP"));
}

#[test]
fn sandboxed_commands_are_stopped_and_reaped_like_any_other() {
    if !kernel_has(1, "the sandbox") {
        return;
    }
    let work = Scratch::new("work");
    let tools = sandboxed(&work.0, Sandbox::new());
    let cmd = Command::new("echo $$ > pid; sleep 600").timeout(Duration::from_millis(1));
    let Ok(Outcome::Background(bg)) = tools.run(&cmd, &me()) else {
        panic!("not backgrounded")
    };
    let pid = read_pid(&work.path("pid"));
    let info = tools.kill(bg.id()).unwrap();
    assert_eq!(info.status(), TaskStatus::Killed);
    drop(tools);
    assert_gone(&[pid]);
    wait_until("no zombie child is left", || zombie_children().is_empty());
}

#[test]
fn a_monitor_is_sandboxed_and_its_lines_still_arrive() {
    if !kernel_has(1, "the filesystem sandbox") {
        return;
    }
    let work = Scratch::new("work");
    let outside = Scratch::new("outside");
    let tasks = bashtools::Tasks::new();
    let inbox = tasks.subscribe("main");
    let tools = builder()
        .working_directory(&work.0)
        .tasks(tasks.clone())
        .monitor_options(
            bashtools::MonitorOptions::default().batch_window(Duration::from_millis(50)),
        )
        .sandbox(Sandbox::new())
        .build()
        .unwrap();
    let r = tools.monitor(
        &json!({"description": "touch", "timeout_ms": 60000, "command": format!(
            "touch {}/m 2>/dev/null && echo made || echo refused; echo piped >> /dev/stdout",
            outside.0.display()
        )}),
        &me(),
    );
    assert!(!r.is_error, "{r:?}");
    let mut lines = String::new();
    loop {
        let n = inbox.recv_timeout(DEADLINE).expect("the monitor ends");
        if n.status.is_some() {
            break;
        }
        lines.push_str(&n.text);
    }
    assert!(lines.contains("refused\npiped"), "{lines}");
    assert!(!outside.path("m").exists());
}

/// A sandboxed owner's commands are contained as any other's — in a cell
/// of their own where cgroups can be made, since the child joins its cell
/// before it restricts itself — so a sandboxed `setsid` that also clears
/// its environment does not outlive `kill_shell`.
#[test]
fn sandboxed_commands_are_contained_like_any_other() {
    if !kernel_has(1, "the sandbox") {
        return;
    }
    let dir = Scratch::new("contained");
    let tools = sandboxed(&dir.0, Sandbox::new());
    let plain = builder().working_directory(&dir.0).build().unwrap();
    assert_eq!(tools.containment(), plain.containment());
    if tools.containment() != bashtools::Containment::Cgroup {
        eprintln!("SKIP (escape): no cgroup can be made here: a setsid escapes session mode");
    }
    let escape = if tools.containment() == bashtools::Containment::Cgroup {
        "env -i setsid sleep 1000 & sleep 1000"
    } else {
        "sleep 1000"
    };
    let r = tools.bash(
        &json!({"command": escape, "run_in_background": true}),
        &me(),
    );
    let id = id_of(&r);
    let cgroup = tools.cgroup();
    if let Some(jail) = &cgroup {
        wait_until("both sleeps run", || {
            let procs = std::fs::read_dir(jail)
                .unwrap()
                .flatten()
                .filter(|e| e.path().is_dir())
                .map(|e| std::fs::read_to_string(e.path().join("cgroup.procs")).unwrap_or_default())
                .collect::<String>();
            procs.lines().count() >= 3
        });
    }
    let pgids = tools.background_pids();
    let r = tools.kill_shell(&json!({"shell_id": id}));
    assert!(!r.is_error, "{r:?}");
    assert_gone(&pgids);
    if let Some(jail) = cgroup {
        let left: Vec<_> = std::fs::read_dir(&jail)
            .unwrap()
            .flatten()
            .filter(|e| e.path().is_dir())
            .map(|e| std::fs::read_to_string(e.path().join("cgroup.procs")).unwrap_or_default())
            .filter(|p| !p.trim().is_empty())
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}

/// Hardening item 16: a sandboxed command writes its own output (and
/// reaches it again through `/dev/stdout` and `/dev/stderr`), but nothing
/// else of the private output directory: not another shell's output file,
/// not a new file there.
#[test]
fn a_command_writes_its_own_output_and_no_other_file_of_the_output_directory() {
    if !kernel_has(1, "the sandbox") {
        return;
    }
    let dir = Scratch::new("outdir");
    let t = sandboxed(&dir.0, Sandbox::new());
    let out = t.output_directory().to_path_buf();
    let victim = bash(
        &t,
        json!({"command": "echo original; sleep 1000", "run_in_background": true}),
    );
    let victim_id = id_of(&victim);
    let victim_file = out.join(format!("{victim_id}.output"));
    wait_until("the victim printed", || {
        std::fs::read_to_string(&victim_file).is_ok_and(|s| s.contains("original"))
    });
    // Reopened, the file starts afresh (`>` truncates): one per command.
    for (command, text) in [
        ("echo to-stdout > /dev/stdout", "to-stdout"),
        ("echo to-stderr > /dev/stderr", "to-stderr"),
        ("echo own", "own"),
    ] {
        let r = bash(&t, json!({ "command": command }));
        assert_eq!((r.text.as_str(), r.is_error), (text, false), "{command}");
    }
    let attack = format!(
        "echo forged > {v} || echo refused-write; echo forged >> {v} || echo refused-append; \
         : > {v} || echo refused-truncate; touch {o}/new || echo refused-create; \
         echo 1 > {o}/bash_99.output || echo refused-guess",
        v = victim_file.display(),
        o = out.display()
    );
    let r = bash(&t, json!({"command": attack}));
    for word in [
        "refused-write",
        "refused-append",
        "refused-truncate",
        "refused-create",
        "refused-guess",
    ] {
        assert!(r.text.contains(word), "{word}: {}", r.text);
    }
    let victim_text = std::fs::read_to_string(&victim_file).unwrap();
    assert_eq!(victim_text, "original\n");
    assert!(!out.join("new").exists() && !out.join("bash_99.output").exists());
    let r = t.kill_shell(&json!({"shell_id": victim_id}));
    assert!(!r.is_error, "{}", r.text);
}

/// Hardening items 3, 4, 5 and 20: nothing of the host is reachable from
/// the sandbox — not its environment (variables removed from the commands'
/// included), its descriptors (its stdin and stdout: the protocol, for the
/// server), its memory, nor its threads' signals — as root too.
#[test]
fn a_sandboxed_command_reaches_nothing_of_the_host() {
    if !kernel_has(1, "the sandbox") {
        return;
    }
    let dir = Scratch::new("host");
    let t = sandboxed(&dir.0, Sandbox::new());
    let host = std::process::id();
    let r = bash(&t, json!({"command": "echo $PPID"}));
    assert_eq!(r.text, host.to_string(), "bash's parent is the host");
    for (what, command) in [
        ("environ", "cat /proc/$PPID/environ"),
        ("stdout", "echo forged > /proc/$PPID/fd/1"),
        ("stdin", "head -c 1 /proc/$PPID/fd/0"),
        ("memory", "head -c 1 /proc/$PPID/mem"),
        (
            "a thread's stdout",
            "(for t in /proc/$PPID/task/*; do echo forged > $t/fd/1 && exit 0; done; exit 1)",
        ),
    ] {
        let r = bash(
            &t,
            json!({"command": format!("{{ {command}; }} >/dev/null 2>&1 && echo REACHED || echo refused")}),
        );
        assert_eq!(r.text, "refused", "{what}");
    }
    if t.sandbox_status().unwrap().scoping() {
        let r = bash(
            &t,
            json!({"command": "for t in /proc/$PPID/task/*; do kill -0 ${t##*/} 2>/dev/null && echo REACHED; done; echo done"}),
        );
        assert_eq!(r.text, "done");
    }
}

/// Hardening item 9, sandboxed: a command cannot move itself out of its
/// cell (it may not write under `/sys`), whatever the mount options.
#[test]
fn a_sandboxed_command_cannot_leave_its_cell() {
    if !kernel_has(1, "the sandbox") {
        return;
    }
    let dir = Scratch::new("cell");
    let t = sandboxed(&dir.0, Sandbox::new());
    let Some(jail) = t.cgroup() else {
        eprintln!("SKIP: no cgroup can be made here: commands are held by sessions");
        return;
    };
    let command = format!(
        "(echo $$ > {}/cgroup.procs) 2>/dev/null && echo moved || echo refused",
        jail.parent().unwrap().display()
    );
    let r = bash(&t, json!({ "command": command }));
    assert_eq!(r.text, "refused");
}
