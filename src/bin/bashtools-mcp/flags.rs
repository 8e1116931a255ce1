//! Every flag of `bashtools-mcp`, one row each: its name, the placeholder
//! of its value (empty for a switch), its help, and what it does to the
//! command line being read. `--help` and the parser both read this one
//! table, so a flag cannot be listed without being handled, or the reverse.

use std::time::Duration;

use bashtools::mcp::{Deliver, Options};
use bashtools::{Builder, Decision, Limits, MonitorOptions, Rule, Sandbox};

use crate::checks::Timeouts;
use crate::values::{number, positive, positive_secs, secs, UsageError};

/// What the flags read so far ask for.
pub(crate) struct Parsed {
    builder: Option<Builder>,
    pub(crate) monitor: MonitorOptions,
    pub(crate) options: Options,
    pub(crate) allowed: Option<Vec<String>>,
    /// `--ask`, `--deny` and the rules files' rules, in order.
    pub(crate) rules: Vec<Rule>,
    /// `--ask-unlisted`.
    pub(crate) unlisted: Option<Decision>,
    pub(crate) sandbox: Option<Sandbox>,
    pub(crate) timeouts: Timeouts,
    /// A text to print instead of serving (`--help`, `--version`).
    pub(crate) print: Option<String>,
    /// The variables `--env-remove` names.
    pub(crate) removed: Vec<String>,
}

impl Parsed {
    pub(crate) fn new(builder: Builder) -> Parsed {
        Parsed {
            builder: Some(builder),
            monitor: MonitorOptions::default(),
            options: Options::default(),
            allowed: None,
            rules: Vec::new(),
            unlisted: None,
            sandbox: None,
            timeouts: Timeouts::default(),
            print: None,
            removed: Vec::new(),
        }
    }

    /// The builder, once every flag is read.
    pub(crate) fn builder(&mut self) -> Builder {
        self.builder.take().expect("the builder is taken once")
    }

    /// Applies a setter of the builder.
    fn set(&mut self, f: impl FnOnce(Builder) -> Builder) {
        self.builder = self.builder.take().map(f);
    }

    /// Applies a setter of the sandbox, which it asks for.
    fn sandbox(&mut self, f: impl FnOnce(Sandbox) -> Sandbox) {
        self.sandbox = Some(f(self.sandbox.take().unwrap_or_default()));
    }
}

/// What a flag does: the flag as written (for errors) and its value
/// (empty for a switch).
type Apply = fn(&mut Parsed, &str, &str) -> Result<(), UsageError>;

/// One flag.
pub(crate) struct Flag {
    pub(crate) name: &'static str,
    /// Empty for a switch.
    pub(crate) placeholder: &'static str,
    pub(crate) help: &'static str,
    pub(crate) apply: Apply,
}

const fn flag(
    name: &'static str,
    placeholder: &'static str,
    help: &'static str,
    apply: Apply,
) -> Flag {
    Flag {
        name,
        placeholder,
        help,
        apply,
    }
}

/// A timeout above zero, remembered as written for the checks across flags.
fn given(slot: &mut Option<(String, Duration)>, f: &str, v: &str) -> Result<Duration, UsageError> {
    let d = positive_secs(f, v)?;
    *slot = Some((f.to_string(), d));
    Ok(d)
}

/// A rule from a flag's words.
fn rule_of(f: &str, v: &str, decision: Decision) -> Result<Rule, UsageError> {
    Rule::parse(decision, v).map_err(|e| UsageError(format!("{f} {v:?}: {e}")))
}

/// The rules of a rules file; entries for other tools are skipped with a
/// line on stderr.
pub(crate) fn rules_file(f: &str, v: &str) -> Result<Vec<Rule>, UsageError> {
    let file = bashtools::load_rules(std::path::Path::new(v))
        .map_err(|e| UsageError(format!("{f}: {e}")))?;
    if file.skipped > 0 {
        eprintln!(
            "bashtools-mcp: {v}: skipped {} entries for other tools than Bash",
            file.skipped
        );
    }
    Ok(file.rules)
}

fn millis(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

/// Every flag; the defaults that are numbers are added to the help by
/// `cli::default_of`, from the library.
#[rustfmt::skip]
pub(crate) const FLAGS: &[Flag] = &[
    flag("--working-directory", "DIR", "where commands run (default: the current directory)",
        |p, _, v| { p.set(|b| b.working_directory(v)); Ok(()) }),
    flag("--allow", "WORDS", "allow commands starting with these words (\"git status\", \"git [log diff]\"); repeat for each. With any --allow, other commands are denied (or asked, with --ask-unlisted). Every simple command of a line is judged, wrappers and sh -c looked through",
        |p, f, v| { rule_of(f, v, Decision::Allow)?; p.allowed.get_or_insert_with(Vec::new).push(v.to_string()); Ok(()) }),
    flag("--ask", "WORDS", "ask the user (MCP elicitation) before commands starting with these words run; repeatable",
        |p, f, v| { let r = rule_of(f, v, Decision::Ask)?; p.rules.push(r); Ok(()) }),
    flag("--deny", "WORDS", "never run commands starting with these words; repeatable",
        |p, f, v| { let r = rule_of(f, v, Decision::Deny)?; p.rules.push(r); Ok(()) }),
    flag("--ask-unlisted", "", "ask about commands no rule matches (default: denied when there are allow rules, else allowed)",
        |p, _, _| { p.unlisted = Some(Decision::Ask); Ok(()) }),
    flag("--rules", "FILE", "read rules from a Claude Code settings file (permissions.allow/ask/deny, Bash(...) entries) or a Codex rules file (prefix_rule(...)); repeatable",
        |p, f, v| { let file = rules_file(f, v)?; p.rules.extend(file); Ok(()) }),
    flag("--redact", "NAME", "mask this variable's value in every text the model reads, as [redacted NAME]; repeatable (variables named like TOKEN, SECRET, PASSWORD, API_KEY, *_KEY ... are masked anyway)",
        |p, _, v| { p.set(|b| b.redact_env([v])); Ok(()) }),
    flag("--no-redact-auto", "", "mask only the --redact variables, not every variable whose name says it is secret",
        |p, _, _| { p.set(|b| b.redact_auto(false)); Ok(()) }),
    flag("--approval-timeout", "SECS", "how long the user has to answer a question of the policy before the line is denied (default 300)",
        |p, f, v| { let d = positive_secs(f, v)?; p.options = p.options.clone().approval_timeout(d); Ok(()) }),
    flag("--check-rules", "", "print the rules of the flags before it and of the FILEs after it (bashtools-mcp --check-rules FILE...), merged, and exit: 0, or 2 naming FILE:LINE",
        |_, _, _| Ok(())),
    flag("--default-timeout", "SECS", "foreground time of a bash call without timeout",
        |p, f, v| { let d = given(&mut p.timeouts.default, f, v)?; p.set(|b| b.default_timeout(d)); Ok(()) }),
    flag("--max-timeout", "SECS", "cap of bash and bash_output timeouts",
        |p, f, v| { let d = given(&mut p.timeouts.max, f, v)?; p.set(|b| b.max_timeout(d)); Ok(()) }),
    flag("--output-limit", "CHARS", "characters a result carries; longer output keeps head and tail",
        |p, f, v| { let n = positive(f, v, "a number of characters")?; p.set(|b| b.output_limit(n)); Ok(()) }),
    flag("--kill-grace", "SECS", "between SIGTERM and SIGKILL when a shell is stopped",
        |p, f, v| { let d = secs(f, v)?; p.set(|b| b.kill_grace(d)); Ok(()) }),
    flag("--block-timeout", "SECS", "how long bash_output with block waits without timeout",
        |p, f, v| { let d = given(&mut p.timeouts.block, f, v)?; p.set(|b| b.block_timeout(d)); Ok(()) }),
    flag("--monitor-timeout", "SECS", "a monitor's watch without timeout_ms",
        |p, f, v| { let d = given(&mut p.timeouts.monitor, f, v)?; p.set(|b| b.monitor_timeout(d)); Ok(()) }),
    flag("--monitor-max-timeout", "SECS", "cap of a monitor's timeout_ms",
        |p, f, v| { let d = given(&mut p.timeouts.monitor_max, f, v)?; p.set(|b| b.monitor_max_timeout(d)); Ok(()) }),
    flag("--monitor-min-timeout", "SECS", "floor of a monitor's timeout_ms",
        |p, f, v| { let d = secs(f, v)?; p.timeouts.monitor_min = Some((f.to_string(), d)); p.set(|b| b.monitor_min_timeout(d)); Ok(()) }),
    flag("--monitor-unattended-max-timeout", "SECS", "cap of timeout_ms with --unattended",
        |p, f, v| { let d = positive_secs(f, v)?; p.set(|b| b.monitor_unattended_max_timeout(d)); Ok(()) }),
    flag("--unattended", "", "nobody is at the keyboard: monitors use the unattended cap (default: attended)",
        |p, _, _| { p.set(|b| b.unattended(|| true)); Ok(()) }),
    flag("--max-output-bytes", "BYTES", "an output file past this stops its shell",
        |p, f, v| { let n = positive(f, v, "a number of bytes")?; p.set(|b| b.max_output_bytes(n)); Ok(()) }),
    flag("--memory-limit", "SIZE", "memory one command's whole tree may use, no swap (e.g. 512M; suffixes K, M, G; at least 1M): past it the tree is stopped (default: none)",
        |p, f, v| { let m = Limits::parse_memory(v).map_err(|e| UsageError(format!("{f} {e}")))?; p.set(|b| b.memory_limit(m)); Ok(()) }),
    flag("--pids-limit", "N", "processes and threads one command's tree may hold at once; 0 = none (default: 4096 where cgroups can be made)",
        |p, f, v| { let n = number(f, v, "a number of processes (0 = none)")?; p.set(|b| b.pids_limit(n)); Ok(()) }),
    flag("--cpu-limit", "CPUS", "CPUs one command's tree may use, e.g. 0.5 or 2 (default: none)",
        |p, f, v| { let c = Limits::parse_cpu(v).map_err(|e| UsageError(format!("{f} {e}")))?; p.set(|b| b.cpu_limit(c)); Ok(()) }),
    flag("--no-noninteractive-env", "", "do not set PAGER=cat, GIT_PAGER=cat, GIT_EDITOR=true, TERM=dumb (default: set)",
        |p, _, _| { p.set(|b| b.noninteractive_env(false)); Ok(()) }),
    flag("--raw-output", "", "show output as written: escape sequences, \\r and backspaces kept (default: as a terminal would show it)",
        |p, _, _| { p.set(|b| b.render_output(false)); Ok(()) }),
    flag("--no-persist-cwd", "", "persist_working_directory off: a cd in one command no longer carries to the next ones",
        |p, _, _| { p.set(|b| b.persist_working_directory(false)); Ok(()) }),
    flag("--no-persist-env", "", "persist_environment off: variables a command exports no longer carry to the next ones",
        |p, _, _| { p.set(|b| b.persist_environment(false)); Ok(()) }),
    flag("--env", "KEY=VALUE", "set a variable for every command; repeatable",
        |p, f, v| match v.split_once('=') {
            Some((key, value)) if !key.is_empty() => { p.set(|b| b.env(key, value)); Ok(()) }
            _ => Err(UsageError(format!("{f} wants KEY=VALUE, not {v:?}"))),
        }),
    flag("--env-remove", "KEY", "remove a variable from every command's environment; repeatable",
        |p, f, v| {
            if v.is_empty() { return Err(UsageError(format!("{f} wants a variable name"))); }
            p.removed.push(v.to_string());
            p.set(|b| b.env_remove(v)); Ok(())
        }),
    flag("--batch-window-ms", "MS", "a monitor's lines within this window go out as one event",
        |p, f, v| { let ms = number(f, v, "a number of milliseconds")?; p.monitor = std::mem::take(&mut p.monitor).batch_window(millis(ms)); Ok(()) }),
    flag("--burst-limit", "N", "at most this many lines per monitor event",
        |p, f, v| { let n = positive(f, v, "a number of lines")?; p.monitor = std::mem::take(&mut p.monitor).burst_limit(n); Ok(()) }),
    flag("--line-limit", "CHARS", "a monitor line longer than this is cut",
        |p, f, v| { let n = positive(f, v, "a number of characters")?; p.monitor = std::mem::take(&mut p.monitor).line_limit(n); Ok(()) }),
    flag("--flood-timeout", "SECS", "a monitor suppressing lines this long is stopped",
        |p, f, v| { let d = positive_secs(f, v)?; p.monitor = std::mem::take(&mut p.monitor).flood_timeout(d); Ok(()) }),
    flag("--output-root", "DIR", "where the private output directory is made (default: the temp directory)",
        |p, _, v| { p.set(|b| b.output_root(v)); Ok(()) }),
    flag("--deliver", "WHERE", "where task notifications go: result (in the next tool result), log (notifications/message) or both",
        |p, f, v| {
            let d: Deliver = v.parse().map_err(|_| UsageError(format!("{f} wants result, log or both, not {v:?}")))?;
            p.options = std::mem::take(&mut p.options).deliver(d); Ok(())
        }),
    flag("--progress-interval-ms", "MS", "how often a call with a progressToken gets notifications/progress",
        |p, f, v| { let ms = positive(f, v, "a number of milliseconds")?; p.options = std::mem::take(&mut p.options).progress_interval(millis(ms)); Ok(()) }),
    flag("--max-line-bytes", "BYTES", "the longest message line read; longer ones are answered with an error",
        |p, f, v| { let n = positive(f, v, "a number of bytes")?; p.options = std::mem::take(&mut p.options).max_line_bytes(n); Ok(()) }),
    flag("--task-after-ms", "MS", "a bash call from a request that declares the tasks extension answers with a task once it has run this long",
        |p, f, v| { let ms = positive(f, v, "a number of milliseconds")?; p.options = std::mem::take(&mut p.options).task_after(millis(ms)); Ok(()) }),
    flag("--sandbox", "", "run commands in a Landlock sandbox: writable only the working directory, a private TMPDIR and the --sandbox-allow-write directories; no TCP; no signals to outside processes (default: no sandbox)",
        |p, _, _| { p.sandbox(|s| s); Ok(()) }),
    flag("--sandbox-allow-write", "DIR", "with the sandbox, also writable; repeatable (implies --sandbox)",
        |p, f, v| {
            if v.is_empty() { return Err(UsageError(format!("{f} wants a directory"))); }
            p.sandbox(|s| s.allow_write(v)); Ok(())
        }),
    flag("--sandbox-allow-network", "", "with the sandbox, allow TCP connect and bind (implies --sandbox)",
        |p, _, _| { p.sandbox(|s| s.allow_network(true)); Ok(()) }),
    flag("--sandbox-best-effort", "", "with the sandbox, run even where the kernel has no Landlock (implies --sandbox)",
        |p, _, _| { p.sandbox(|s| s.best_effort(true)); Ok(()) }),
    flag("--interactive", "", "offer interactive: true on bash (a pseudo-terminal of its own) and the write_stdin tool (default: off)",
        |p, _, _| { p.set(|b| b.interactive(true)); Ok(()) }),
    flag("--interactive-ungated", "", "accept --interactive beside --allow: what is typed into a running program is not checked (default: refused)",
        |p, _, _| { p.set(|b| b.interactive_ungated(true)); Ok(()) }),
    flag("--terminal-size", "COLSxROWS", "the terminal of an interactive command",
        |p, f, v| {
            let size = v
                .split_once('x')
                .and_then(|(c, r)| Some((c.parse::<u16>().ok()?, r.parse::<u16>().ok()?)))
                .filter(|&(c, r)| c > 0 && r > 0);
            let Some((cols, rows)) = size else {
                return Err(UsageError(format!("{f} wants COLSxROWS, not {v:?}")));
            };
            p.set(|b| b.terminal_size(cols, rows)); Ok(())
        }),
    flag("--help", "", "print this help (also -h)",
        |p, _, _| { p.print = Some(crate::cli::help()); Ok(()) }),
    flag("--version", "", "print the version (also -V)",
        |p, _, _| { p.print = Some(format!("bashtools-mcp {}\n", env!("CARGO_PKG_VERSION"))); Ok(()) }),
];

/// The short spellings, and the flag each stands for.
pub(crate) const SHORT: &[(&str, &str)] = &[("-h", "--help"), ("-V", "--version")];
