//! Who makes a tool call (contract §8).

use std::path::PathBuf;

/// Setters take the option's name and getters are `get_NAME` (`is_NAME`
/// for a flag), as in [`std::process::Command`].
///
/// The caller of a tool call: who is notified when its command ends in the
/// background, which tool-use id the notification names, whether the run goes
/// on without a person, and where its commands run by default.
///
/// ```
/// use bashtools::Caller;
/// let caller = Caller::default()
///     .recipient("agent_2")
///     .call("toolu_01")
///     .detached(true);
/// assert_eq!(caller.get_recipient(), "agent_2");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub(crate) recipient: String,
    pub(crate) call: Option<String>,
    pub(crate) detached: bool,
    pub(crate) working_directory: Option<PathBuf>,
    pub(crate) session: Option<String>,
    /// A line the person already approved for this call (the MCP server
    /// asked before calling): it runs without asking again.
    pub(crate) approved: Option<String>,
    /// The MCP client cannot ask the user: a line that needs approval is
    /// refused, saying what to allow (this prefix).
    pub(crate) cannot_ask: Option<String>,
}

impl Default for Caller {
    /// The recipient `main`, no call id, attached, no working directory of its own.
    fn default() -> Self {
        Caller {
            recipient: "main".to_string(),
            call: None,
            detached: false,
            working_directory: None,
            session: None,
            approved: None,
            cannot_ask: None,
        }
    }
}

impl Caller {
    /// Who receives the notification when a command of this caller ends in the background.
    pub fn recipient(mut self, recipient: impl Into<String>) -> Self {
        self.recipient = recipient.into();
        self
    }

    /// The tool-use id of the call, named by its notification as `<tool-use-id>`.
    pub fn call(mut self, call: impl Into<String>) -> Self {
        self.call = Some(call.into());
        self
    }

    /// A detached run goes on without the person: its foreground command
    /// belongs to the session and is listed by
    /// [`BashTools::background_pids`](crate::BashTools::background_pids).
    pub fn detached(mut self, detached: bool) -> Self {
        self.detached = detached;
        self
    }

    /// Where a command of this caller runs when the call names no directory
    /// (e.g. a subagent working in a worktree of its own). A relative path is
    /// taken from the configured working directory.
    ///
    /// With [`persist_working_directory`](crate::Builder::persist_working_directory)
    /// this is where the recipient *starts*: after a `cd` its commands run
    /// where the last one ended, for as long as the caller names the same
    /// directory; naming another one moves the recipient there.
    pub fn working_directory(mut self, dir: impl Into<PathBuf>) -> Self {
        self.working_directory = Some(dir.into());
        self
    }

    /// Whose carried state its commands start from and update — the
    /// directory the last foreground command ended in
    /// ([`persist_working_directory`](crate::Builder::persist_working_directory))
    /// and the variables it exported
    /// ([`persist_environment`](crate::Builder::persist_environment)). By
    /// default the recipient's: name a session when one agent's calls go
    /// to several recipients (the MCP server sends a call's notifications
    /// to one of two, by the client's log level, yet a `cd` is the
    /// client's whatever its log level).
    ///
    /// ```
    /// use bashtools::Caller;
    /// let quiet = Caller::default().recipient("logs-off").session("client-1");
    /// let loud = Caller::default().recipient("logs-on").session("client-1");
    /// assert_eq!(quiet.get_session(), loud.get_session());
    /// assert_eq!(Caller::default().get_session(), "main");
    /// ```
    pub fn session(mut self, session: impl Into<String>) -> Self {
        self.session = Some(session.into());
        self
    }

    /// The session whose carried state this caller's commands use: the one
    /// named, else the recipient.
    pub fn get_session(&self) -> &str {
        self.session.as_deref().unwrap_or(&self.recipient)
    }

    /// The recipient of this caller's notifications.
    pub fn get_recipient(&self) -> &str {
        &self.recipient
    }

    /// The tool-use id, if one was given.
    pub fn get_call(&self) -> Option<&str> {
        self.call.as_deref()
    }

    /// Whether this caller's run is detached.
    pub fn is_detached(&self) -> bool {
        self.detached
    }

    /// The caller's own working directory, if any.
    pub fn get_working_directory(&self) -> Option<&std::path::Path> {
        self.working_directory.as_deref()
    }
}
