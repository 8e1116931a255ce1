//! The flags of `bashtools-mcp`: one per option of the builder (contract §3), parsed
//! by hand (no dependency for a flat list of flags).

use std::ffi::OsString;
use std::time::Duration;

use bashtools::defaults as d;
use bashtools::mcp::{Deliver, Options};
use bashtools::{BashTools, Builder, MonitorOptions, Sandbox, Tasks};

use crate::checks::{Timeouts, Written};

/// What the command line asks for.
pub(crate) enum Action {
    /// Serve with these tools and these options.
    Serve(Box<Builder>, Options),
    /// Print this text to stdout and exit 0 (`--help`, `--version`).
    Print(String),
}

/// A bad command line: one line naming the flag as it was written; exit 2.
pub(crate) struct UsageError(pub(crate) String);

/// Every flag: name, value placeholder (empty for a switch), and help;
/// the defaults that are numbers are added by [`default_of`], from the
/// library.
const FLAGS: &[(&str, &str, &str)] = &[
    ("--working-directory", "DIR", "where commands run (default: the current directory)"),
    ("--allow", "CMD", "allow only these command words; repeat for each (default: all allowed). Every simple command of a line is checked"),
    ("--default-timeout", "SECS", "foreground time of a bash call without timeout"),
    ("--max-timeout", "SECS", "cap of bash and bash_output timeouts"),
    ("--output-limit", "CHARS", "characters a result carries; longer output keeps head and tail"),
    ("--kill-grace", "SECS", "between SIGTERM and SIGKILL when a shell is stopped"),
    ("--block-timeout", "SECS", "how long bash_output with block waits without timeout"),
    ("--monitor-timeout", "SECS", "a monitor's watch without timeout_ms"),
    ("--monitor-max-timeout", "SECS", "cap of a monitor's timeout_ms"),
    ("--monitor-min-timeout", "SECS", "floor of a monitor's timeout_ms"),
    ("--monitor-unattended-max-timeout", "SECS", "cap of timeout_ms with --unattended"),
    ("--unattended", "", "nobody is at the keyboard: monitors use the unattended cap (default: attended)"),
    ("--max-output-bytes", "BYTES", "an output file past this stops its shell"),
    ("--memory-limit", "SIZE", "memory one command's whole tree may use, no swap (e.g. 512M; suffixes K, M, G; at least 1M): past it the tree is stopped (default: none)"),
    ("--pids-limit", "N", "processes and threads one command's tree may hold at once; 0 = none (default: 4096 where cgroups can be made)"),
    ("--cpu-limit", "CPUS", "CPUs one command's tree may use, e.g. 0.5 or 2 (default: none)"),
    ("--no-noninteractive-env", "", "do not set PAGER=cat, GIT_PAGER=cat, GIT_EDITOR=true, TERM=dumb (default: set)"),
    ("--raw-output", "", "show output as written: escape sequences, \\r and backspaces kept (default: as a terminal would show it)"),
    ("--no-persist-cwd", "", "persist_working_directory off: a cd in one command no longer carries to the next ones"),
    ("--no-persist-env", "", "persist_environment off: variables a command exports no longer carry to the next ones"),
    ("--env", "KEY=VALUE", "set a variable for every command; repeatable"),
    ("--env-remove", "KEY", "remove a variable from every command's environment; repeatable"),
    ("--batch-window-ms", "MS", "a monitor's lines within this window go out as one event"),
    ("--burst-limit", "N", "at most this many lines per monitor event"),
    ("--line-limit", "CHARS", "a monitor line longer than this is cut"),
    ("--flood-timeout", "SECS", "a monitor suppressing lines this long is stopped"),
    ("--output-root", "DIR", "where the private output directory is made (default: the temp directory)"),
    ("--deliver", "WHERE", "where task notifications go: result (in the next tool result), log (notifications/message) or both"),
    ("--progress-interval-ms", "MS", "how often a call with a progressToken gets notifications/progress"),
    ("--max-line-bytes", "BYTES", "the longest message line read; longer ones are answered with an error"),
    ("--task-after-ms", "MS", "a bash call from a request that declares the tasks extension answers with a task once it has run this long"),
    ("--sandbox", "", "run commands in a Landlock sandbox: writable only the working directory, a private TMPDIR and the --sandbox-allow-write directories; no TCP; no signals to outside processes (default: no sandbox)"),
    ("--sandbox-allow-write", "DIR", "with the sandbox, also writable; repeatable (implies --sandbox)"),
    ("--sandbox-allow-network", "", "with the sandbox, allow TCP connect and bind (implies --sandbox)"),
    ("--sandbox-best-effort", "", "with the sandbox, run even where the kernel has no Landlock (implies --sandbox)"),
    ("--interactive", "", "offer interactive: true on bash (a pseudo-terminal of its own) and the write_stdin tool (default: off)"),
    ("--interactive-ungated", "", "accept --interactive beside --allow: what is typed into a running program is not checked (default: refused)"),
    ("--terminal-size", "COLSxROWS", "the terminal of an interactive command"),
    ("--help", "", "print this help (also -h)"),
    ("--version", "", "print the version (also -V)"),
];

/// The short spellings, and the flag each stands for.
const SHORT: &[(&str, &str)] = &[("-h", "--help"), ("-V", "--version")];

/// The usage line shown with every error.
pub(crate) const USAGE: &str =
    "usage: bashtools-mcp [--working-directory DIR] [--allow CMD]... [OPTIONS] (see --help)";

fn help() -> String {
    let mut s = format!(
        "bashtools-mcp {}: the shell tools of Claude Code (bash, bash_output, kill_shell, monitor) as an MCP server on stdio; with --interactive also write_stdin.\n\n\
         Speaks JSON-RPC 2.0, one message per line, on stdin and stdout; logs go to stderr.\n\
         At the end of stdin, SIGTERM, SIGINT or SIGHUP every shell and monitor is stopped before exit.\n\n\
         {USAGE}\n\nOptions:\n",
        env!("CARGO_PKG_VERSION")
    );
    let options = Options::default();
    for (name, value, text) in FLAGS {
        let flag = if value.is_empty() {
            name.to_string()
        } else {
            format!("{name} {value}")
        };
        let default = default_of(name, &options)
            .map(|d| format!(" (default {d})"))
            .unwrap_or_default();
        s.push_str(&format!("  {flag:<40} {text}{default}\n"));
    }
    s
}

/// Seconds as the flags take them: `120`, `0.5`.
pub(crate) fn secs_text(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", d.as_secs())
    } else {
        format!("{s}")
    }
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

/// A number of seconds, zero allowed (`--kill-grace 0`: no grace).
fn secs(flag: &str, v: &str) -> Result<Duration, UsageError> {
    v.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| UsageError(format!("{flag} wants a number of seconds, not {v:?}")))
}

/// A number of seconds above zero (a timeout of 0 would end every call
/// at once).
fn positive_secs(flag: &str, v: &str) -> Result<Duration, UsageError> {
    let d = secs(flag, v)?;
    if d.is_zero() {
        return Err(UsageError(format!(
            "{flag} wants a number of seconds above 0, not {v:?}"
        )));
    }
    Ok(d)
}

fn number<T: std::str::FromStr>(flag: &str, v: &str, what: &str) -> Result<T, UsageError> {
    v.parse::<T>()
        .map_err(|_| UsageError(format!("{flag} wants {what}, not {v:?}")))
}

/// A count above zero (a limit of 0 would leave nothing).
fn positive<T: std::str::FromStr + Default + PartialEq>(
    flag: &str,
    v: &str,
    what: &str,
) -> Result<T, UsageError> {
    let n: T = number(flag, v, what)?;
    if n == T::default() {
        return Err(UsageError(format!(
            "{flag} wants {what} above 0, not {v:?}"
        )));
    }
    Ok(n)
}

/// Reads the arguments (without the program name).
pub(crate) fn parse(
    args: impl IntoIterator<Item = OsString>,
) -> Result<(Action, Written), UsageError> {
    let mut b = BashTools::builder()
        .tasks(Tasks::new())
        .persist_working_directory(d::SERVER_PERSIST_WORKING_DIRECTORY)
        .persist_environment(d::SERVER_PERSIST_ENVIRONMENT);
    let mut monitor = MonitorOptions::default();
    let mut options = Options::default();
    let mut allowed: Option<Vec<String>> = None;
    let mut sandbox: Option<Sandbox> = None;
    let mut timeouts = Timeouts::default();
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
        let name = SHORT
            .iter()
            .find(|(short, _)| *short == as_written)
            .map_or(as_written.clone(), |(_, long)| long.to_string());
        let Some(&(_, placeholder, _)) = FLAGS.iter().find(|(n, ..)| *n == name) else {
            return Err(UsageError(format!("unknown flag {as_written}")));
        };
        let value = if placeholder.is_empty() {
            if inline.is_some() {
                return Err(UsageError(format!("{as_written} takes no value")));
            }
            String::new()
        } else {
            let is_flag = |v: &OsString| {
                v.to_str().is_some_and(|v| {
                    let v = v.split_once('=').map_or(v, |(n, _)| n);
                    FLAGS.iter().any(|(n, ..)| *n == v) || SHORT.iter().any(|(s, _)| *s == v)
                })
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
        written.0.push((name.clone(), as_written.clone()));
        let v = value.as_str();
        // Errors name the flag as written.
        let name_as_written = as_written.as_str();
        let given = |slot: &mut Option<(String, Duration)>| -> Result<Duration, UsageError> {
            let d = positive_secs(name_as_written, v)?;
            *slot = Some((name_as_written.to_string(), d));
            Ok(d)
        };
        b = match name.as_str() {
            "--help" => return Ok((Action::Print(help()), written)),
            "--version" => {
                let version = format!("bashtools-mcp {}\n", env!("CARGO_PKG_VERSION"));
                return Ok((Action::Print(version), written));
            }
            "--working-directory" => b.working_directory(v),
            "--allow" => {
                allowed.get_or_insert_with(Vec::new).push(v.to_string());
                b
            }
            "--default-timeout" => b.default_timeout(given(&mut timeouts.default)?),
            "--max-timeout" => b.max_timeout(given(&mut timeouts.max)?),
            "--output-limit" => {
                b.output_limit(positive(name_as_written, v, "a number of characters")?)
            }
            "--kill-grace" => b.kill_grace(secs(name_as_written, v)?),
            "--block-timeout" => b.block_timeout(given(&mut timeouts.block)?),
            "--monitor-timeout" => b.monitor_timeout(given(&mut timeouts.monitor)?),
            "--monitor-max-timeout" => b.monitor_max_timeout(given(&mut timeouts.monitor_max)?),
            "--monitor-min-timeout" => {
                let d = secs(name_as_written, v)?;
                timeouts.monitor_min = Some((as_written.clone(), d));
                b.monitor_min_timeout(d)
            }
            "--monitor-unattended-max-timeout" => {
                b.monitor_unattended_max_timeout(positive_secs(name_as_written, v)?)
            }
            "--unattended" => b.unattended(|| true),
            "--max-output-bytes" => {
                b.max_output_bytes(positive(name_as_written, v, "a number of bytes")?)
            }
            "--no-noninteractive-env" => b.noninteractive_env(false),
            "--no-persist-cwd" => b.persist_working_directory(false),
            "--no-persist-env" => b.persist_environment(false),
            "--raw-output" => b.render_output(false),
            "--memory-limit" => b.memory_limit(
                bashtools::Limits::parse_memory(v)
                    .map_err(|e| UsageError(format!("{as_written} {e}")))?,
            ),
            "--pids-limit" => b.pids_limit(number(
                name_as_written,
                v,
                "a number of processes (0 = none)",
            )?),
            "--cpu-limit" => b.cpu_limit(
                bashtools::Limits::parse_cpu(v)
                    .map_err(|e| UsageError(format!("{as_written} {e}")))?,
            ),
            "--env" => match v.split_once('=') {
                Some((key, value)) if !key.is_empty() => b.env(key, value),
                _ => {
                    return Err(UsageError(format!(
                        "{as_written} wants KEY=VALUE, not {v:?}"
                    )))
                }
            },
            "--env-remove" if !v.is_empty() => b.env_remove(v),
            "--env-remove" => {
                return Err(UsageError(format!("{as_written} wants a variable name")))
            }
            "--batch-window-ms" => {
                let ms: u64 = number(name_as_written, v, "a number of milliseconds")?;
                monitor = monitor.batch_window(Duration::from_millis(ms));
                b
            }
            "--burst-limit" => {
                monitor = monitor.burst_limit(positive(name_as_written, v, "a number of lines")?);
                b
            }
            "--line-limit" => {
                monitor =
                    monitor.line_limit(positive(name_as_written, v, "a number of characters")?);
                b
            }
            "--flood-timeout" => {
                monitor = monitor.flood_timeout(positive_secs(name_as_written, v)?);
                b
            }
            "--output-root" => b.output_root(v),
            "--interactive" => b.interactive(true),
            "--interactive-ungated" => b.interactive_ungated(true),
            "--terminal-size" => {
                let size = v
                    .split_once('x')
                    .and_then(|(c, r)| Some((c.parse::<u16>().ok()?, r.parse::<u16>().ok()?)))
                    .filter(|&(c, r)| c > 0 && r > 0);
                let Some((cols, rows)) = size else {
                    return Err(UsageError(format!(
                        "{as_written} wants COLSxROWS, not {v:?}"
                    )));
                };
                b.terminal_size(cols, rows)
            }
            "--deliver" => {
                let d: Deliver = v.parse().map_err(|_| {
                    UsageError(format!("{as_written} wants result, log or both, not {v:?}"))
                })?;
                options = options.deliver(d);
                b
            }
            "--progress-interval-ms" => {
                let ms: u64 = positive(name_as_written, v, "a number of milliseconds")?;
                options = options.progress_interval(Duration::from_millis(ms));
                b
            }
            "--task-after-ms" => {
                let ms: u64 = positive(name_as_written, v, "a number of milliseconds")?;
                options = options.task_after(Duration::from_millis(ms));
                b
            }
            "--max-line-bytes" => {
                options =
                    options.max_line_bytes(positive(name_as_written, v, "a number of bytes")?);
                b
            }
            "--sandbox" => {
                sandbox.get_or_insert_with(Sandbox::new);
                b
            }
            "--sandbox-allow-write" if !v.is_empty() => {
                sandbox = Some(sandbox.unwrap_or_default().allow_write(v));
                b
            }
            "--sandbox-allow-write" => {
                return Err(UsageError(format!("{as_written} wants a directory")))
            }
            "--sandbox-allow-network" => {
                sandbox = Some(sandbox.unwrap_or_default().allow_network(true));
                b
            }
            "--sandbox-best-effort" => {
                sandbox = Some(sandbox.unwrap_or_default().best_effort(true));
                b
            }
            _ => unreachable!("every flag of FLAGS is handled"),
        };
    }
    timeouts.check()?;
    if let Some(words) = allowed {
        b = b.allowed_commands(words);
    }
    if let Some(sandbox) = sandbox {
        b = b.sandbox(sandbox);
    }
    Ok((
        Action::Serve(Box::new(b.monitor_options(monitor)), options),
        written,
    ))
}
