//! The builder's setters of what is secret (README, "Secrets"): values masked in
//! every text the model reads.

use super::*;

impl Builder {
    /// Variables whose values are masked as `[redacted NAME]` in every text
    /// the model reads (results, reads, notifications, monitor events),
    /// beside those the automatic rule finds ([`redact_auto`](Self::redact_auto)).
    /// Values under 8 bytes are never masked.
    ///
    /// ```
    /// use bashtools::{BashTools, Caller};
    /// use serde_json::json;
    /// let tools = BashTools::builder()
    ///     .working_directory(std::env::temp_dir())
    ///     .env("DEPLOY_HOOK", "https://example.com/hook/0123456789")
    ///     .redact_env(["DEPLOY_HOOK"])
    ///     .build()?;
    /// let r = tools.bash(&json!({"command": "echo \"hook: $DEPLOY_HOOK\""}), &Caller::default());
    /// assert_eq!(r.text, "hook: [redacted DEPLOY_HOOK]");
    /// # Ok::<(), bashtools::Error>(())
    /// ```
    pub fn redact_env<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.redact_names.extend(names.into_iter().map(Into::into));
        self
    }

    /// Whether every variable of the commands' environment whose name says
    /// it is secret is masked (default `true`): see
    /// [`is_secret_name`](crate::is_secret_name). The carried environment
    /// counts too: a variable a command exports is secret from the next
    /// command on.
    pub fn redact_auto(mut self, on: bool) -> Self {
        self.redact_auto = on;
        self
    }

    /// Values the host knows are secret but holds in no variable of the
    /// commands' environment; shown as `[redacted value]`.
    pub fn redact_values<I, S>(mut self, values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.redact_values
            .extend(values.into_iter().map(Into::into));
        self
    }
}
