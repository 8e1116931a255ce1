//! Starting a command: the gates, the directory it starts in (and the one
//! a session's last foreground command ended in), and the start itself,
//! in the foreground or the background.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::core::{Core, LastDir};
use super::types::{Backgrounded, CallError, Command, CwdReset, Outcome, Refusal, ShellId};
use crate::caller::Caller;
use crate::policy::{Approval, Approved, Decision, Judgement, Rule};
use crate::shells::{Key, Kind, NewShell, StartError, Stdio};

/// What starting a command led to.
pub(crate) enum Started {
    /// Refused by a gate, or started in the background: known at once.
    Answered(Outcome),
    /// Running in the foreground until `timeout`.
    Foreground {
        key: Key,
        timeout: Duration,
        place: Origin,
    },
}

/// Where a foreground command started, for its settling: whose directory
/// its end may become, and whether the recorded one had to be dropped.
#[derive(Debug, Clone)]
pub(crate) struct Origin {
    pub(super) session: String,
    pub(super) base: Option<PathBuf>,
    pub(super) reset: Option<CwdReset>,
    /// Whether the directory it ends in becomes the session's (it ran
    /// where this order put it, with `persist_working_directory`).
    pub(super) keep_dir: bool,
}

impl Core {
    /// The directory a command runs in: the call's, else the caller's, else
    /// the configured one; relative paths are taken from the configured one.
    /// With a sandbox it must lie inside one of its write roots.
    pub(crate) fn resolve_cwd(
        &self,
        arg: Option<&Path>,
        caller: &Caller,
    ) -> Result<PathBuf, CallError> {
        let base = &self.config.working_directory;
        let dir = match (arg, caller.get_working_directory()) {
            (Some(a), _) => base.join(a),
            (None, Some(c)) => base.join(c),
            (None, None) => base.clone(),
        };
        self.check_dir(&dir)?;
        Ok(dir)
    }

    /// The directory a command starts in: [`resolve_cwd`](Self::resolve_cwd),
    /// except that with `persist_working_directory` and no directory of
    /// the call's own, where the session's last foreground command ended
    /// comes first — if it is still usable; else it is forgotten and the
    /// reset returned.
    pub(crate) fn start_dir(
        &self,
        arg: Option<&Path>,
        caller: &Caller,
    ) -> Result<(PathBuf, Option<CwdReset>), CallError> {
        if arg.is_none() && self.config.persist_working_directory {
            if let Some(last) = self.last_dir(caller) {
                match self.check_dir(&last) {
                    Ok(()) => return Ok((last, None)),
                    Err(e) => {
                        self.last_dirs.lock().remove(caller.get_session());
                        let ran_in = self.resolve_cwd(None, caller)?;
                        let reset = CwdReset {
                            lost: last,
                            ran_in: ran_in.clone(),
                            outside_sandbox: matches!(e, CallError::OutsideSandbox(_)),
                        };
                        return Ok((ran_in, Some(reset)));
                    }
                }
            }
        }
        Ok((self.resolve_cwd(arg, caller)?, None))
    }

    /// Where `caller`'s session last ended, while its caller's own
    /// directory is the one it started from.
    fn last_dir(&self, caller: &Caller) -> Option<PathBuf> {
        let dirs = self.last_dirs.lock();
        let last = dirs.get(caller.get_session())?;
        (last.base.as_deref() == caller.get_working_directory()).then(|| last.dir.clone())
    }

    /// Keeps `dir` as where `place`'s session ended.
    pub(super) fn keep_last_dir(&self, place: &Origin, dir: PathBuf) {
        self.last_dirs.lock().insert(
            place.session.clone(),
            LastDir {
                dir,
                base: place.base.clone(),
            },
        );
    }

    /// A directory a command may run in: one that exists and, with a
    /// sandbox, lies inside one of its write roots.
    fn check_dir(&self, dir: &Path) -> Result<(), CallError> {
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(CallError::NotADirectory(dir.to_path_buf())),
            Err(_) => return Err(CallError::NoSuchDirectory(dir.to_path_buf())),
        }
        if let Some(sandbox) = &self.config.sandbox {
            // Resolved as the kernel will: a symlink out of a root is out.
            let inside = dir
                .canonicalize()
                .is_ok_and(|real| sandbox.allows_cwd(&real));
            if !inside {
                return Err(CallError::OutsideSandbox(dir.to_path_buf()));
            }
        }
        Ok(())
    }

    /// The gates: the policy (`allowed_commands` and rules; asking the
    /// approver when the line needs it), then the validator.
    pub(crate) fn check_gates(
        &self,
        command: &str,
        cwd: &Path,
        caller: &Caller,
    ) -> Result<(), Refusal> {
        if let Some(policy) = &self.gates.policy {
            match policy.judge_with(command, &self.always_of(caller)) {
                Judgement::Allow => {}
                Judgement::Deny(denial) => return Err(Refusal::Gate(denial)),
                Judgement::Ask(parts) => self.ask(&Approval::new(command, &parts, caller))?,
            }
        }
        if let Some(validator) = &self.config.validator {
            let verdict =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| validator(command, cwd)));
            match verdict {
                Ok(Ok(())) => {}
                Ok(Err(reason)) => return Err(Refusal::Validator(reason)),
                Err(_) => return Err(Refusal::ValidatorPanicked),
            }
        }
        Ok(())
    }

    /// What the person would be asked before `command` runs for `caller`
    /// (whoever asks): `None` when the policy does not ask about it, or
    /// already has the answer.
    pub(crate) fn asks(&self, command: &str, caller: &Caller) -> Option<Approval> {
        let policy = self.gates.policy.as_ref()?;
        match policy.judge_with(command, &self.always_of(caller)) {
            Judgement::Ask(parts) => Some(Approval::new(command, &parts, caller)),
            _ => None,
        }
    }

    /// What the `bash` and `monitor` descriptions say of the policy, when
    /// there is one: which decisions it can give, never its rules.
    pub(crate) fn policy_note(&self) -> Option<String> {
        let decisions = self.gates.policy.as_ref()?.active_decisions();
        let mut said = String::from(
            "\n\nA policy judges every command of a line (wrappers and sh -c included): ",
        );
        let parts: Vec<&str> = decisions
            .iter()
            .map(|d| match d {
                Decision::Allow => "some run",
                Decision::Ask => {
                    "some run only once the user approves them (the call waits for the answer)"
                }
                Decision::Deny => "some are refused with \"Command not allowed\"",
            })
            .collect();
        said.push_str(&parts.join("; "));
        said.push('.');
        Some(said)
    }

    /// Whether starting `command` for `caller` would ask the approver
    /// (and so block on the person).
    pub(crate) fn will_ask(&self, command: &str, caller: &Caller) -> bool {
        self.gates.approver.is_some()
            && caller.approved.as_deref() != Some(command)
            && caller.cannot_ask.is_none()
            && self.asks(command, caller).is_some()
    }

    /// The prefixes allowed *always* for `caller`'s session.
    fn always_of(&self, caller: &Caller) -> Vec<Rule> {
        self.always
            .lock()
            .get(caller.get_session())
            .cloned()
            .unwrap_or_default()
    }

    /// Allows `prefix` for `caller`'s session from now on (an *always*
    /// answer). It never overrides a deny rule: it only turns an ask into
    /// an allow.
    pub(crate) fn allow_always(&self, caller: &Caller, prefix: &[String]) {
        let words = prefix.iter().map(|w| vec![w.clone()]).collect();
        if let Ok(rule) = Rule::new(Decision::Allow, words) {
            let mut always = self.always.lock();
            let rules = always.entry(caller.get_session().to_string()).or_default();
            if !rules.contains(&rule) {
                rules.push(rule);
            }
        }
    }

    /// Asks for `approval`: the line the caller's client already approved
    /// (MCP), else the approver; without one, a refusal.
    fn ask(&self, approval: &Approval) -> Result<(), Refusal> {
        if approval.caller.approved.as_deref() == Some(approval.line.as_str()) {
            return Ok(());
        }
        if let Some(client) = &approval.caller.cannot_ask {
            return Err(Refusal::NeedsApproval {
                words: approval.words(),
                client_cannot_ask: Some(client.clone()),
            });
        }
        let Some(approver) = &self.gates.approver else {
            return Err(Refusal::NeedsApproval {
                words: approval.words(),
                client_cannot_ask: None,
            });
        };
        let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| approver(approval)));
        match answer {
            Ok(Approved::Once) => Ok(()),
            Ok(Approved::Always) => {
                self.allow_always(&approval.caller, &approval.suggested_prefix);
                Ok(())
            }
            Ok(Approved::Deny(reason)) => Err(Refusal::Declined {
                line: approval.line.clone(),
                reason,
            }),
            Err(_) => Err(Refusal::Declined {
                line: approval.line.clone(),
                reason: Some("the approver panicked".into()),
            }),
        }
    }

    /// Checks a command line before anything else is looked at. Blank
    /// means made only of spaces, tabs, newlines, carriage returns, form
    /// feeds and vertical tabs: what the tools' schema says (`pattern`), in
    /// every regular-expression dialect alike.
    pub(crate) fn check_command(command: &str) -> Result<(), CallError> {
        let blank = |c: char| matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0c' | '\x0b');
        if command.chars().all(blank) {
            return Err(CallError::NoCommand);
        }
        if command.contains('\0') {
            return Err(CallError::NulInCommand);
        }
        Ok(())
    }

    /// The foreground time of `cmd`: its own, else the default; at most the cap.
    pub(crate) fn timeout_of(&self, cmd: &Command) -> Duration {
        cmd.get_timeout()
            .unwrap_or(self.config.default_timeout)
            .min(self.config.max_timeout)
    }

    /// Checks and starts `cmd`: in the background at once, or in the
    /// foreground until its timeout.
    pub(crate) fn start(
        self: &Arc<Self>,
        cmd: &Command,
        caller: &Caller,
    ) -> Result<Started, CallError> {
        Core::check_command(cmd.get_command())?;
        self.check_open()?;
        if cmd.is_interactive() && !self.config.interactive {
            return Err(CallError::InteractiveOff);
        }
        if cmd.is_interactive() && cmd.get_stdin().is_some() {
            return Err(CallError::StdinWithInteractive);
        }
        let (cwd, reset) = self.start_dir(cmd.get_working_directory(), caller)?;
        if let Err(refusal) = self.check_gates(cmd.get_command(), &cwd, caller) {
            return Ok(Started::Answered(Outcome::Refused(refusal)));
        }
        let id = cmd.is_background().then(|| self.next_bash_id());
        // A directory carries only from where this order put the command.
        let keep_dir =
            self.config.persist_working_directory && cmd.get_working_directory().is_none();
        let carried = self.carried_for(caller.get_session());
        // Its end is recorded only if it may change what is kept.
        let record_end = id.is_none()
            && (keep_dir || self.config.persist_environment)
            && !self.leaves_shell_as_it_was(cmd.get_command(), &carried);
        let new = NewShell {
            command: cmd.get_command().to_string(),
            description: cmd.get_description().map(str::to_string),
            id: id.clone(),
            kind: if id.is_some() {
                Kind::Background
            } else {
                Kind::Foreground
            },
            recipient: caller.get_recipient().to_string(),
            call: caller.get_call().map(str::to_string),
            detached: caller.is_detached(),
            limits: cmd.get_limits(),
            carried,
        };
        let key = self.start_shell(
            new,
            &cwd,
            Stdio {
                stdout: None,
                terminal: cmd.is_interactive().then_some(self.config.terminal_size),
                stdin: cmd.get_stdin().map(str::to_string),
                record_end,
            },
        )?;
        match id {
            Some(id) => {
                let output_file = self.output_of(key).unwrap_or_default();
                Ok(Started::Answered(Outcome::Background(Backgrounded {
                    id: ShellId::from(id),
                    output_file,
                    after: None,
                    notified: self.notifies(),
                    cwd_reset: reset,
                })))
            }
            None => Ok(Started::Foreground {
                key,
                timeout: self.timeout_of(cmd),
                place: Origin {
                    session: caller.get_session().to_string(),
                    base: caller.get_working_directory().map(Path::to_path_buf),
                    reset,
                    keep_dir,
                },
            }),
        }
    }

    /// Whether `command` can change neither the directory nor a variable of
    /// the shell that runs it, so that its end need not be recorded (the
    /// trap and its record cost some 0.1-0.2 ms a command): judged from the
    /// line (`gate::inert`), and only when nothing in the command's
    /// environment can put a function or alias in place of a program the
    /// line names (`BASH_ENV`, an imported `BASH_FUNC_…`).
    fn leaves_shell_as_it_was(
        &self,
        command: &str,
        carried: &[(std::ffi::OsString, Option<std::ffi::OsString>)],
    ) -> bool {
        use std::os::unix::ffi::OsStrExt;
        if !crate::gate::inert::is_inert(command) {
            return false;
        }
        let code = |k: &std::ffi::OsStr| k == "BASH_ENV" || k.as_bytes().starts_with(b"BASH_FUNC_");
        let unset_by_caller = |k: &std::ffi::OsStr| {
            carried
                .iter()
                .any(|(c, v)| c.as_os_str() == k && v.is_none())
        };
        !carried.iter().any(|(k, v)| v.is_some() && code(k))
            && !crate::os::bash::spawn::base_environment(&self.config)
                .iter()
                .any(|(k, _)| code(k) && !unset_by_caller(k))
    }

    /// Starts a shell, registering it when it starts in the background; a
    /// failed start forgets its registry entry too.
    pub(crate) fn start_shell(
        self: &Arc<Self>,
        new: NewShell,
        cwd: &Path,
        stdio: Stdio,
    ) -> Result<Key, CallError> {
        let id = new.id.clone();
        let started = self
            .shells
            .start(new, cwd, stdio, |shell, key| self.register(shell, key));
        started.map_err(|e| {
            if let (Some(tasks), Some(id)) = (&self.tasks, &id) {
                tasks.remove(id);
            }
            match e {
                StartError::Closed => CallError::Closed,
                StartError::Io(e) => CallError::SpawnFailed(e.into()),
            }
        })
    }
}
