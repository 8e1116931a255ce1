//! A command to run: its line and the options of one `bash` call, built
//! up one setter at a time.

use super::*;

/// A command to run, with the options of the `bash` tool. Setters take the
/// option's name, getters are `get_NAME` (`is_NAME` for a flag), as in
/// [`std::process::Command`].
///
/// ```
/// use std::time::Duration;
/// use bashtools::Command;
/// let cmd = Command::new("cargo build")
///     .timeout(Duration::from_secs(300))
///     .description("build the crate");
/// assert_eq!(cmd.get_command(), "cargo build");
/// assert!(!cmd.is_background());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    command: String,
    timeout: Option<Duration>,
    description: Option<String>,
    background: bool,
    working_directory: Option<PathBuf>,
    interactive: bool,
    stdin: Option<String>,
    limits: Option<Limits>,
}

impl Command {
    /// `command`, run as `bash -c COMMAND`.
    pub fn new(command: impl Into<String>) -> Command {
        Command {
            command: command.into(),
            timeout: None,
            description: None,
            background: false,
            working_directory: None,
            interactive: false,
            stdin: None,
            limits: None,
        }
    }

    /// Limits for this command in place of the builder's, field by field
    /// (a field not set keeps the builder's value). A limit that cannot be
    /// applied here fails the call ([`CallError::SpawnFailed`]) instead of
    /// running the command without it.
    ///
    /// ```
    /// use bashtools::{Command, Limits};
    /// let cmd = Command::new("make -j8").limits(Limits::new().memory(2 << 30).cpu(2.0));
    /// assert_eq!(cmd.get_limits().and_then(|l| l.memory_bytes()), Some(2 << 30));
    /// ```
    pub fn limits(mut self, limits: Limits) -> Command {
        self.limits = Some(limits);
        self
    }

    /// The limits set with [`limits`](Self::limits).
    pub fn get_limits(&self) -> Option<Limits> {
        self.limits
    }

    /// How long it runs in the foreground before it moves to the background
    /// (default: the configured `default_timeout`; cut to `max_timeout`).
    pub fn timeout(mut self, timeout: Duration) -> Command {
        self.timeout = Some(timeout);
        self
    }

    /// What it does, in a few words: named by its notification instead of
    /// the command.
    pub fn description(mut self, description: impl Into<String>) -> Command {
        self.description = Some(description.into());
        self
    }

    /// Start it in the background at once (`run_in_background`).
    pub fn background(mut self, background: bool) -> Command {
        self.background = background;
        self
    }

    /// Where it runs (a relative path is taken from the configured working
    /// directory), for this command only. Default: where the recipient's
    /// last command ended, with
    /// [`persist_working_directory`](crate::Builder::persist_working_directory);
    /// else the caller's directory, else the configured one.
    pub fn working_directory(mut self, dir: impl Into<PathBuf>) -> Command {
        self.working_directory = Some(dir.into());
        self
    }

    /// Start it at once in the background on a pseudo-terminal of its own
    /// (its controlling terminal, in a session of its own), so that
    /// [`BashTools::send_input`](crate::BashTools::send_input) can answer
    /// its prompts. Needs the [`interactive`](crate::Builder::interactive)
    /// option; its timeout does not apply.
    pub fn interactive(mut self, interactive: bool) -> Command {
        self.interactive = interactive;
        self
    }

    /// What the command reads on its standard input (default: nothing,
    /// `/dev/null`). It is written to a private file (0600, in the output
    /// directory, removed before the command starts) that becomes its
    /// stdin: a file, never a pipe, so neither side can block, and a
    /// command that reads less than all of it still ends.
    ///
    /// ```
    /// use bashtools::{BashTools, Caller, Command, Outcome};
    /// let tools = BashTools::builder().build()?;
    /// let cmd = Command::new("tr a-z A-Z").stdin("shout\n");
    /// match tools.run(&cmd, &Caller::default())? {
    ///     Outcome::Exited(e) => assert_eq!(e.output(), "SHOUT"),
    ///     other => panic!("{other:?}"),
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stdin(mut self, input: impl Into<String>) -> Command {
        self.stdin = Some(input.into());
        self
    }

    /// The command line.
    pub fn get_command(&self) -> &str {
        &self.command
    }
    /// The timeout asked for, if any.
    pub fn get_timeout(&self) -> Option<Duration> {
        self.timeout
    }
    /// The description, if any.
    pub fn get_description(&self) -> Option<&str> {
        self.description.as_deref()
    }
    /// Whether it starts in the background (an interactive command always
    /// does).
    pub fn is_background(&self) -> bool {
        self.background || self.interactive
    }
    /// Whether it runs on a terminal of its own.
    pub fn is_interactive(&self) -> bool {
        self.interactive
    }
    /// The working directory asked for, if any.
    pub fn get_working_directory(&self) -> Option<&Path> {
        self.working_directory.as_deref()
    }
    /// Its standard input, if one was given.
    pub fn get_stdin(&self) -> Option<&str> {
        self.stdin.as_deref()
    }
}
