//! Resolving a builder into the configuration every call reads: the
//! working directory checked, the output root and the sandbox resolved.

use std::path::Path;

use super::sandbox_setup::resolve_sandbox;
use super::Builder;
use crate::api::core::Gates;
use crate::config::Config;
use crate::error::Error;
use crate::os::files::outdir::OutputDir;
use crate::policy::{Decision, Policy, Rule};
use crate::tasks::Tasks;

impl Builder {
    /// The policy: the allowed commands as allow rules, then the rules;
    /// `None` when there is nothing to judge. Under an allow-list the
    /// default stays `deny` even when the list is empty.
    fn resolve_policy(&mut self) -> Result<Option<Policy>, Error> {
        let mut policy = Policy::new();
        if let Some(words) = &self.allowed_commands {
            for entry in words {
                let rule =
                    Rule::allow(entry).map_err(|e| Error::rule(entry.clone(), e.to_string()))?;
                policy = policy.rule(rule);
            }
        }
        let rules = std::mem::take(&mut self.policy);
        let unlisted = rules.unlisted_decision();
        policy = policy.rules(rules.rule_list().iter().cloned());
        match unlisted {
            Some(decision) => policy = policy.unlisted(decision),
            None if self.allowed_commands.is_some() => policy = policy.unlisted(Decision::Deny),
            None => {}
        }
        Ok((!policy.is_empty() || self.allowed_commands.is_some()).then_some(policy))
    }

    /// The resolved configuration, the registry, and the sandbox's private
    /// temporary directory.
    pub(super) fn resolve(
        mut self,
    ) -> Result<(Config, Gates, Option<Tasks>, Option<OutputDir>), Error> {
        let policy = self.resolve_policy()?;
        let gated = policy.is_some() || self.validator.is_some();
        if self.interactive && gated && !self.interactive_ungated {
            return Err(Error::interactive_gated());
        }
        let working_directory = match self.working_directory {
            Some(dir) => {
                check_directory(&dir)?;
                dir
            }
            None => std::env::current_dir().map_err(Error::current_directory)?,
        };
        let output_root = match self.output_root {
            Some(dir) => absolute_root(dir)?,
            None => std::env::temp_dir(),
        };
        let (sandbox, tmp) = match &self.sandbox {
            Some(sandbox) => {
                let (policy, tmp) = resolve_sandbox(sandbox, &working_directory, &output_root)?;
                // First, so an `env("TMPDIR", …)` of the caller's wins.
                self.env
                    .insert(0, ("TMPDIR".into(), policy.tmp.clone().into_os_string()));
                (Some(policy), Some(tmp))
            }
            None => (None, None),
        };
        let config = Config {
            working_directory,
            allowed_commands: self.allowed_commands,
            gated: policy.is_some(),
            redact_names: self.redact_names,
            redact_auto: self.redact_auto,
            redact_values: self.redact_values,
            validator: self.validator,
            default_timeout: self.default_timeout,
            max_timeout: self.max_timeout,
            output_limit: self.output_limit,
            kill_grace: self.kill_grace,
            block_timeout: self.block_timeout,
            monitor_timeout: self.monitor_timeout,
            monitor_max_timeout: self.monitor_max_timeout,
            monitor_unattended_max_timeout: self.monitor_unattended_max_timeout,
            monitor_min_timeout: self.monitor_min_timeout,
            unattended: self.unattended,
            max_output_bytes: self.max_output_bytes,
            noninteractive_env: self.noninteractive_env,
            render_output: self.render_output,
            persist_working_directory: self.persist_working_directory,
            persist_environment: self.persist_environment,
            env: self.env,
            env_remove: self.env_remove,
            output_root,
            monitor_options: self.monitor_options,
            sandbox,
            interactive: self.interactive,
            terminal_size: self.terminal_size,
        };
        // The rule index is made now, not on the first command.
        if let Some(policy) = &policy {
            policy.prepare();
        }
        let gates = Gates {
            policy,
            approver: self.approver,
        };
        Ok((config, gates, self.tasks, tmp))
    }
}

fn check_directory(dir: &Path) -> Result<(), Error> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(Error::working_directory_not_a_directory(dir.to_path_buf())),
        Err(_) => Err(Error::working_directory_missing(dir.to_path_buf())),
    }
}

/// The output root as an absolute path: results name files under it, and
/// the keeper, which runs in `/`, removes them if the host dies. A relative
/// one is taken from the current directory; an empty one is refused.
fn absolute_root(dir: std::path::PathBuf) -> Result<std::path::PathBuf, Error> {
    if dir.as_os_str().is_empty() {
        let empty = std::io::Error::new(std::io::ErrorKind::InvalidInput, "an empty path");
        return Err(Error::output_directory(dir, empty));
    }
    dir.canonicalize()
        .or_else(|_| std::path::absolute(&dir))
        .map_err(|e| Error::output_directory(dir, e))
}
