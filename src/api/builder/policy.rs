//! The builder's setters of the policy: rules that allow, ask about or
//! deny commands, and who is asked.

use super::*;
use crate::policy::{Approval, Approved, Decision, Rule};

impl Builder {
    /// Adds a rule to the policy (see [`Policy`]): lines are judged per
    /// simple command on the gate's parse, the strictest matching rule
    /// deciding; rules add to [`allowed_commands`](Self::allowed_commands).
    ///
    /// ```
    /// use bashtools::{BashTools, Caller, Rule};
    /// use serde_json::json;
    /// let tools = BashTools::builder()
    ///     .working_directory(std::env::temp_dir())
    ///     .rule(Rule::deny("rm -rf").unwrap().justification("use trash"))
    ///     .build()?;
    /// let r = tools.bash(&json!({"command": "cd /tmp && sudo rm -rf x"}), &Caller::default());
    /// assert_eq!(r.text, "Command not allowed: rm -rf: use trash");
    /// # Ok::<(), bashtools::Error>(())
    /// ```
    pub fn rule(mut self, rule: Rule) -> Self {
        self.policy = std::mem::take(&mut self.policy).rule(rule);
        self
    }

    /// Adds a policy's rules, and its decision for unlisted commands if it
    /// set one.
    pub fn policy(mut self, policy: Policy) -> Self {
        let mut merged = std::mem::take(&mut self.policy).rules(policy.rule_list().iter().cloned());
        if let Some(decision) = policy.unlisted_decision() {
            merged = merged.unlisted(decision);
        }
        self.policy = merged;
        self
    }

    /// The decision for commands no rule matches. Default: `allow` when
    /// there are no allow rules (and no `allowed_commands`), else `deny`.
    pub fn unlisted(mut self, decision: Decision) -> Self {
        self.policy = std::mem::take(&mut self.policy).unlisted(decision);
        self
    }

    /// Who is asked when a line needs approval: called, blocking, before
    /// anything of the line starts (the command's timeout starts after).
    /// Without one, such a line is refused with `Command needs approval:
    /// WORDS (no one can be asked here; allow it with a rule)`. A panic is
    /// a denial.
    ///
    /// ```
    /// use bashtools::{Approved, BashTools, Caller, Rule};
    /// use serde_json::json;
    /// let tools = BashTools::builder()
    ///     .working_directory(std::env::temp_dir())
    ///     .rule(Rule::ask("echo").unwrap())
    ///     .approver(|a| if a.line.contains("yes") { Approved::Once } else { Approved::Deny(None) })
    ///     .build()?;
    /// assert_eq!(tools.bash(&json!({"command": "echo yes"}), &Caller::default()).text, "yes");
    /// assert_eq!(tools.bash(&json!({"command": "echo no"}), &Caller::default()).text,
    ///            "Command denied: echo no");
    /// # Ok::<(), bashtools::Error>(())
    /// ```
    pub fn approver<F>(mut self, approver: F) -> Self
    where
        F: Fn(&Approval) -> Approved + Send + Sync + 'static,
    {
        self.approver = Some(Arc::new(approver));
        self
    }
}
