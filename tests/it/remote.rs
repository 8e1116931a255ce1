//! The server on another machine: `ssh -T HOST bashtools-mcp …` through a
//! real `sshd` started on localhost for the test (`.ci/run` installs
//! openssh-server). When the ssh client dies (SIGKILL: a dropped
//! connection), sshd closes the server's stdin, the server sees the end of
//! its input, and nothing it started outlives `kill_grace` + 1 s.
//!
//! Where there is no sshd, or it cannot run here, the test says so on
//! stderr and checks the same through a plain pipe instead.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_bashtools-mcp");
const SSHD: &str = "/usr/sbin/sshd";

/// An sshd of the test's own, on a free port of 127.0.0.1.
struct Sshd {
    child: Child,
    port: u16,
    dir: Scratch,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn run(cmd: &mut Command) -> bool {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn keygen(path: &Path) -> bool {
    run(Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path))
}

/// Starts the sshd; `None` (said on stderr) where it cannot run.
fn sshd() -> Option<Sshd> {
    if !Path::new(SSHD).exists() || !run(Command::new("ssh").arg("-V")) {
        eprintln!("SKIP (fallback checked): no sshd or ssh here (package openssh-server)");
        return None;
    }
    let dir = Scratch::new("sshd");
    let (host, client) = (dir.path("host_key"), dir.path("client_key"));
    if !keygen(&host) || !keygen(&client) {
        eprintln!("SKIP (fallback checked): ssh-keygen failed");
        return None;
    }
    std::fs::copy(dir.path("client_key.pub"), dir.path("authorized_keys")).unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = dir.path("sshd_config");
    std::fs::write(
        &config,
        format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {host}\nAuthorizedKeysFile {keys}\n\
             PidFile {pid}\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             PubkeyAuthentication yes\nPermitRootLogin yes\nStrictModes no\nUsePAM no\n",
            host = host.display(),
            keys = dir.path("authorized_keys").display(),
            pid = dir.path("sshd.pid").display(),
        ),
    )
    .unwrap();
    // As root, sshd wants its privilege separation directory.
    // SAFETY: a plain getter.
    if unsafe { nix::libc::geteuid() } == 0 {
        let _ = std::fs::create_dir_all("/run/sshd");
    }
    let child = Command::new(SSHD)
        .args(["-D", "-e", "-f"])
        .arg(&config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut sshd = Sshd { child, port, dir };
    let end = Instant::now() + DEADLINE;
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if sshd.child.try_wait().ok().flatten().is_some() || Instant::now() > end {
            eprintln!("SKIP (fallback checked): sshd would not start here");
            return None;
        }
        poll_pause(Duration::from_millis(20));
    }
    Some(sshd)
}

/// `ssh -T` to the test's sshd, running the server.
fn ssh_server(sshd: &Sshd, args: &[&str]) -> Command {
    let user = Command::new("id")
        .arg("-un")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|_| "root".to_string());
    let mut cmd = Command::new("ssh");
    cmd.arg("-T")
        .arg("-i")
        .arg(sshd.dir.path("client_key"))
        .args(["-p", &sshd.port.to_string()])
        .args([
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            "-o",
            "BatchMode=yes",
            "-o",
            "LogLevel=ERROR",
        ])
        .arg(format!("{user}@127.0.0.1"))
        .arg(BIN)
        .args(args);
    cmd
}

/// Whether a process whose command line holds `marker` exists.
fn running(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let is_zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.rsplit(") ").next().is_some_and(|r| r.starts_with('Z')));
        if !is_zombie && String::from_utf8_lossy(&cmdline).contains(marker) {
            found.push(pid);
        }
    }
    found
}

/// Starts a background `sleep` marked with `marker` through the server on
/// the other end of `client`, and waits until it runs.
fn start_marked_sleep(client: &mut Child, marker: &str) {
    let mut stdin = client.stdin.take().unwrap();
    let mut lines = BufReader::new(client.stdout.take().unwrap()).lines();
    let mut send = |v: Value| {
        let mut line = serde_json::to_vec(&v).unwrap();
        line.push(b'\n');
        stdin.write_all(&line).unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "remote-test", "version": "0"}}}),
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "bash", "arguments": {
            "command": format!("exec -a {marker} sleep 1000"), "run_in_background": true}}}),
    );
    // Until the call's answer (the server has started the shell).
    for line in lines.by_ref() {
        let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if v["id"] == 2 {
            assert_eq!(v["result"]["isError"], false, "{v}");
            break;
        }
    }
    wait_until("the marked sleep runs", || !running(marker).is_empty());
    // The client's end of the pipes stays open: only its death closes it.
    std::mem::forget(stdin);
    std::mem::forget(lines);
}

#[test]
fn a_dropped_ssh_connection_leaves_nothing_running() {
    let marker = format!("bashtools-remote-{}", std::process::id());
    let grace = Duration::from_millis(500);
    let args = ["--kill-grace", "0.5", "--working-directory", "/tmp"];
    let sshd = sshd();
    let mut client = match &sshd {
        Some(sshd) => ssh_server(sshd, &args),
        None => {
            // The fallback: the same server on a plain pipe, its client killed.
            let mut c = Command::new(BIN);
            c.args(args);
            c
        }
    }
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    start_marked_sleep(&mut client, &marker);
    let pids = running(&marker);
    // The connection drops: the client dies at once.
    client.kill().unwrap();
    client.wait().unwrap();
    let dropped = Instant::now();
    wait_until("the remote sleep ends with the connection", || {
        running(&marker).is_empty()
    });
    let took = dropped.elapsed();
    // kill_grace + 1 s, with room for a loaded machine.
    assert!(
        took < grace + Duration::from_secs(1) + Duration::from_secs(3),
        "gone only after {took:?}"
    );
    eprintln!(
        "the remote sleep ({pids:?}) was gone {took:?} after the {} dropped",
        if sshd.is_some() {
            "ssh client"
        } else {
            "pipe's client"
        }
    );
    drop(sshd);
}
