//! `bashtools-mcp`: the MCP server of bashtools on stdio (contract §9).
//!
//! Stdout carries MCP messages only; everything else goes to stderr. The
//! server ends at the end of stdin, or at SIGTERM, SIGINT or SIGHUP; either
//! way every shell and monitor it started is stopped first, so no process
//! of ours outlives it.

#![forbid(unsafe_code)]
#![warn(unreachable_pub, rust_2018_idioms, missing_debug_implementations)]

mod checks;
mod cli;
mod flags;
mod values;

use std::process::ExitCode;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

fn main() -> ExitCode {
    // Not dumpable: a process of the same user that is not root cannot
    // open our descriptors (our stdin and stdout are the protocol), read
    // our memory or our environment through /proc, or trace us. Each
    // command is dumpable again after its exec.
    let _ = nix::sys::prctl::set_dumpable(false);
    let (builder, options, written) = match cli::parse(std::env::args_os().skip(1)) {
        Ok((cli::Action::Serve(b, o, removed), written)) => {
            shed(&removed);
            // Room for many background shells; commands get the limit as
            // it was. After `shed`: started again, the program would find
            // its limit raised already and hand that on.
            let _ = bashtools::raise_descriptor_limit();
            (b, o, written)
        }
        Ok((cli::Action::Print(text), _)) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        // One line, naming the flag as it was written.
        Err(values::UsageError(message)) => {
            eprintln!("bashtools-mcp: {message} (see --help)");
            return ExitCode::from(2);
        }
    };
    let tools = match builder.build() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("bashtools-mcp: {}", checks::build_error(&e, &written));
            return ExitCode::from(2);
        }
    };
    // What holds the commands, and what the sandbox enforces: one line each.
    eprintln!("bashtools-mcp: containment: {}", containment(&tools));
    match tools.pids_limit() {
        Ok(n) => eprintln!("bashtools-mcp: limits: pids {n}"),
        Err(why) => eprintln!("bashtools-mcp: limits: pids not applied ({why})"),
    }
    if let Some(status) = tools.sandbox_status() {
        eprintln!("bashtools-mcp: sandbox: {status}");
    }
    // As a container's entry point, the orphans of every command are ours.
    if std::process::id() == 1 {
        if let Err(e) = bashtools::reap_orphans() {
            eprintln!("bashtools-mcp: cannot reap orphans as PID 1: {e}");
        }
    }
    if let Err(e) = stop_on_signals(tools.clone()) {
        eprintln!("bashtools-mcp: cannot watch for signals: {e}");
        return ExitCode::FAILURE;
    }
    let served = tools.server().serve_stdio_with(&options);
    // `serve` has ended the tools (every shell stopped). The signal thread
    // holds a handle too, so they are not dropped here: their files are
    // removed by hand.
    let _ = std::fs::remove_dir_all(tools.output_directory());
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bashtools-mcp: reading stdin failed: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The containment mode, in words.
fn containment(tools: &bashtools::BashTools) -> String {
    match (tools.containment(), tools.cgroup()) {
        (bashtools::Containment::Cgroup, Some(dir)) => {
            format!("a cgroup per command, under {}", dir.display())
        }
        (bashtools::Containment::Cgroup, None) => "a cgroup per command".to_string(),
        _ => "a session per command (no cgroup could be made)".to_string(),
    }
}

/// On the first of SIGTERM, SIGINT or SIGHUP: stop every shell and monitor,
/// remove the output directory, and exit with 128 + the signal.
///
/// The main thread may be blocked reading stdin, which a signal does not
/// end, so the exit happens here.
fn stop_on_signals(tools: bashtools::BashTools) -> std::io::Result<()> {
    let mut signals = Signals::new([SIGTERM, SIGINT, SIGHUP])?;
    std::thread::Builder::new()
        .name("bashtools-mcp-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                eprintln!("bashtools-mcp: signal {signal}: stopping every shell");
                tools.close();
                let _ = std::fs::remove_dir_all(tools.output_directory());
                std::process::exit(128 + signal);
            }
        })?;
    Ok(())
}

/// Starts this program again without the variables `--env-remove` names,
/// if it has any: a process's `/proc/PID/environ` shows the environment it
/// was started with whatever it removes later, and root reads it even of a
/// process that is not dumpable. Done first, before any thread or command
/// exists; the new program finds none of them and goes on.
fn shed(removed: &[String]) {
    use std::os::unix::process::CommandExt;
    if !removed.iter().any(|n| std::env::var_os(n).is_some()) {
        return;
    }
    let mut args = std::env::args_os();
    let argv0 = args.next().unwrap_or_default();
    let kept = std::env::vars_os().filter(|(k, _)| !removed.iter().any(|r| k == r.as_str()));
    let e = std::process::Command::new("/proc/self/exe")
        .arg0(argv0)
        .args(args)
        .env_clear()
        .envs(kept)
        .exec();
    eprintln!("bashtools-mcp: cannot start again without the removed variables ({e}): they stay readable in /proc/PID/environ to root");
}
