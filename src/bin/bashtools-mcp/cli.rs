//! The command line of `bashtools-mcp`: the flags of `flags.rs` (one per
//! option of the builder, contract §3), read by hand (no dependency for a
//! flat list of flags), and the help made from the same table.

use std::ffi::OsString;

use bashtools::defaults as d;
use bashtools::mcp::Options;
use bashtools::{BashTools, Builder, Decision, Policy, Rule, Tasks};

use crate::checks::Written;
use crate::flags::{Flag, Parsed, FLAGS, SHORT};
use crate::values::{secs_text, UsageError};

/// What the command line asks for.
pub(crate) enum Action {
    /// Serve with these tools and these options; the variables removed
    /// from the commands' environment (`--env-remove`), which the server
    /// sheds from its own too.
    Serve(Box<Builder>, Options, Vec<String>),
    /// Print this text to stdout and exit 0 (`--help`, `--version`).
    Print(String),
}

/// The usage line shown with every error.
pub(crate) const USAGE: &str =
    "usage: bashtools-mcp [--working-directory DIR] [--allow CMD]... [OPTIONS] (see --help)";

pub(crate) fn help() -> String {
    let mut s = format!(
        "bashtools-mcp {}: the shell tools of Claude Code (bash, bash_output, kill_shell, monitor) as an MCP server on stdio; with --interactive also write_stdin.\n\n\
         Speaks JSON-RPC 2.0, one message per line, on stdin and stdout; logs go to stderr.\n\
         At the end of stdin, SIGTERM, SIGINT or SIGHUP every shell and monitor is stopped before exit.\n\n\
         {USAGE}\n\nOptions:\n",
        env!("CARGO_PKG_VERSION")
    );
    let options = Options::default();
    for f in FLAGS {
        let flag = if f.placeholder.is_empty() {
            f.name.to_string()
        } else {
            format!("{} {}", f.name, f.placeholder)
        };
        let default = default_of(f.name, &options)
            .map(|d| format!(" (default {d})"))
            .unwrap_or_default();
        s.push_str(&format!("  {flag:<40} {}{default}\n", f.help));
    }
    s
}

/// The default of a flag with a value, from the library's own defaults.
fn default_of(flag: &str, o: &Options) -> Option<String> {
    match flag {
        "--deliver" => return Some(o.delivery().as_str().to_string()),
        "--progress-interval-ms" => return Some(o.progress_every().as_millis().to_string()),
        "--max-line-bytes" => return Some(o.line_limit().to_string()),
        "--task-after-ms" => return Some(o.task_delay().as_millis().to_string()),
        "--no-persist-cwd" => {
            return Some(
                if d::SERVER_PERSIST_WORKING_DIRECTORY {
                    "cd persists"
                } else {
                    "cd does not persist"
                }
                .to_string(),
            )
        }
        "--no-persist-env" => {
            return Some(
                if d::SERVER_PERSIST_ENVIRONMENT {
                    "exports persist"
                } else {
                    "exports do not persist"
                }
                .to_string(),
            )
        }
        _ => {}
    }
    Some(match flag {
        "--default-timeout" => secs_text(d::DEFAULT_TIMEOUT),
        "--max-timeout" => secs_text(d::MAX_TIMEOUT),
        "--output-limit" => d::OUTPUT_LIMIT.to_string(),
        "--kill-grace" => secs_text(d::KILL_GRACE),
        "--block-timeout" => secs_text(d::BLOCK_TIMEOUT),
        "--monitor-timeout" => secs_text(d::MONITOR_TIMEOUT),
        "--monitor-max-timeout" => secs_text(d::MONITOR_MAX_TIMEOUT),
        "--monitor-min-timeout" => secs_text(d::MONITOR_MIN_TIMEOUT),
        "--monitor-unattended-max-timeout" => secs_text(d::MONITOR_UNATTENDED_MAX_TIMEOUT),
        "--max-output-bytes" => d::MAX_OUTPUT_BYTES.to_string(),
        "--batch-window-ms" => d::BATCH_WINDOW.as_millis().to_string(),
        "--burst-limit" => d::BURST_LIMIT.to_string(),
        "--line-limit" => d::LINE_LIMIT.to_string(),
        "--flood-timeout" => secs_text(d::FLOOD_TIMEOUT),
        "--terminal-size" => format!("{}x{}", d::TERMINAL_SIZE.0, d::TERMINAL_SIZE.1),
        _ => return None,
    })
}

/// Reads the arguments (without the program name).
pub(crate) fn parse(
    args: impl IntoIterator<Item = OsString>,
) -> Result<(Action, Written), UsageError> {
    let mut parsed = Parsed::new(
        BashTools::builder()
            .tasks(Tasks::new())
            .persist_working_directory(d::SERVER_PERSIST_WORKING_DIRECTORY)
            .persist_environment(d::SERVER_PERSIST_ENVIRONMENT),
    );
    let mut written = Written::default();
    let mut args = args.into_iter().peekable();
    while let Some(arg) = args.next() {
        let arg = arg
            .into_string()
            .map_err(|a| UsageError(format!("not a UTF-8 argument: {a:?}")))?;
        let (as_written, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        if as_written == "--check-rules" {
            // The rest are files; nothing is served.
            let mut files = Vec::new();
            for file in args.by_ref() {
                let file = file
                    .into_string()
                    .map_err(|a| UsageError(format!("not a UTF-8 argument: {a:?}")))?;
                files.push(file);
            }
            for file in &files {
                parsed
                    .rules
                    .extend(crate::flags::rules_file("--check-rules", file)?);
            }
            return Ok((Action::Print(check_rules(&mut parsed)?), written));
        }
        let Some(flag) = find(&as_written) else {
            return Err(UsageError(format!("unknown flag {as_written}")));
        };
        let placeholder = flag.placeholder;
        let value = if placeholder.is_empty() {
            if inline.is_some() {
                return Err(UsageError(format!("{as_written} takes no value")));
            }
            String::new()
        } else {
            let is_flag = |v: &OsString| {
                v.to_str()
                    .is_some_and(|v| find(v.split_once('=').map_or(v, |(n, _)| n)).is_some())
            };
            match inline {
                Some(v) => v,
                // A flag where the value should be: the value is missing.
                None if args.peek().map_or(true, is_flag) => {
                    return Err(UsageError(format!(
                        "{as_written} needs a value ({placeholder})"
                    )))
                }
                None => args
                    .next()
                    .and_then(|v| v.into_string().ok())
                    .ok_or_else(|| {
                        UsageError(format!("{as_written} wants a UTF-8 value ({placeholder})"))
                    })?,
            }
        };
        written.0.push((flag.name.to_string(), as_written.clone()));
        // Errors name the flag as written.
        (flag.apply)(&mut parsed, &as_written, &value)?;
        if let Some(text) = parsed.print.take() {
            return Ok((Action::Print(text), written));
        }
    }
    parsed.timeouts.check()?;
    let mut b = parsed.builder();
    if let Some(words) = parsed.allowed {
        b = b.allowed_commands(words);
    }
    for rule in parsed.rules {
        b = b.rule(rule);
    }
    if let Some(decision) = parsed.unlisted {
        b = b.unlisted(decision);
    }
    if let Some(sandbox) = parsed.sandbox {
        b = b.sandbox(sandbox);
    }
    Ok((
        Action::Serve(
            Box::new(b.monitor_options(parsed.monitor)),
            parsed.options,
            parsed.removed,
        ),
        written,
    ))
}

/// The flag `name` stands for, by its long or its short spelling.
fn find(name: &str) -> Option<&'static Flag> {
    let long = SHORT
        .iter()
        .find(|(short, _)| *short == name)
        .map_or(name, |(_, long)| long);
    FLAGS.iter().find(|f| f.name == long)
}

/// The merged rules, one per line, then the decision for unlisted
/// commands: what `--check-rules` prints.
fn check_rules(parsed: &mut Parsed) -> Result<String, UsageError> {
    let mut policy = Policy::new();
    for entry in parsed.allowed.iter().flatten() {
        let rule = Rule::allow(entry).map_err(|e| UsageError(format!("--allow {entry:?}: {e}")))?;
        policy = policy.rule(rule);
    }
    policy = policy.rules(parsed.rules.iter().cloned());
    let unlisted = match parsed.unlisted {
        Some(d) => d,
        None if parsed.allowed.is_some() => Decision::Deny,
        None => policy.default_decision(),
    };
    let mut out = String::new();
    for rule in policy.rule_list() {
        out.push_str(&format!("{rule}\n"));
    }
    out.push_str(&format!("{unlisted} (every command no rule matches)\n"));
    Ok(out)
}
