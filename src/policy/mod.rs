//! The policy: rules that allow, ask about or deny commands, judged on the
//! gate's parse of a line, per simple command.
//!
//! A line is read by the gate ([`crate::gate`]) as today: its refusals of
//! constructs it cannot judge stay refusals, whatever the rules say. Each
//! simple command found anywhere in the line (lists, pipelines, subshells,
//! `$(…)`, `<(…)`, …) then gets the strictest decision of the rules whose
//! prefix its words match; a command no rule matches gets the default
//! ([`Policy::default_decision`]). Commands that run other commands
//! (`env`, `sudo`, `xargs`, `find -exec`, `sh -c '…'`, …) are looked
//! through: what they run is judged too ([`wrappers`]).
//!
//! A word that expands is not known before the line runs: it matches no
//! allow rule, and it matches every ask or deny rule its known beginning
//! fits (with everything after it), since it may expand to those words.
//! A wrapped command that cannot be known (`sh -c "$x"`, `eval "$x"`,
//! `source FILE`) gets the strictest decision any command could get: the
//! default, or the strictest rule there is.
//!
//! The line is denied if any part is; else asked if any part is (once, for
//! every part that needs it); else allowed.

mod approval;
mod files;
mod index;
mod rule;
mod wrappers;

pub use approval::{Approval, Approved, Approver};
pub use files::{load_rules, RulesFile, RulesFileError};
pub use rule::{Decision, Rule, RuleError};

use crate::gate::{self, Denial, Spelled};
use index::{Candidate, Lazy};
use wrappers::{last_part, Wrapped};

/// How deep wrappers and `sh -c` strings are followed; past it, the
/// command inside is unknown.
const MAX_WRAPPING: usize = 8;

/// Rules and the decision for commands no rule matches.
///
/// ```
/// use bashtools::{Decision, Judgement, Policy, Rule};
/// let policy = Policy::new()
///     .rule(Rule::allow("git [status log diff]").unwrap())
///     .rule(Rule::allow("cd").unwrap())
///     .rule(Rule::ask("git push").unwrap())
///     .rule(Rule::deny("rm -rf").unwrap().justification("use trash"));
/// assert_eq!(policy.judge("git status && git log -3"), Judgement::Allow);
/// assert!(matches!(policy.judge("cd x && git push origin"), Judgement::Ask(_)));
/// match policy.judge("git diff; rm -rf /") {
///     Judgement::Deny(d) => assert_eq!(d.to_string(), "Command not allowed: rm -rf: use trash"),
///     other => panic!("{other:?}"),
/// }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    rules: Vec<Rule>,
    unlisted: Option<Decision>,
    /// Where to look for the rules that may match a command.
    index: Lazy,
    /// Whether any rule allows (the default is then `deny`).
    any_allow: bool,
    /// The strictest decision of any rule.
    strictest: Option<Decision>,
}

/// What the policy makes of a line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Judgement {
    /// Every part is allowed.
    Allow,
    /// Some parts need the person's approval, and none is denied.
    Ask(Vec<Part>),
    /// A part is denied, or the gate refused the line: the first such.
    Deny(Denial),
}

/// A simple command that needs approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// Its words as written, as many as the deciding rule's prefix has
    /// (its command word alone when no rule matched).
    pub words: Vec<String>,
    /// The deciding rule's justification.
    pub justification: Option<String>,
    /// What *always* would allow: the command word and up to two following
    /// plain words (lowercase letters, digits, `-`, `_`, `:`, not starting
    /// with `-`). Empty when the command word is not known.
    pub suggested_prefix: Vec<String>,
}

/// One simple command's verdict.
enum Verdict {
    Allow,
    Ask(Part),
}

impl Policy {
    /// No rules: every command is allowed (and the default is `allow`).
    pub fn new() -> Policy {
        Policy::default()
    }

    /// Adds a rule.
    pub fn rule(mut self, rule: Rule) -> Policy {
        self.index.reset();
        self.any_allow |= rule.decision == Decision::Allow;
        self.strictest = self.strictest.max(Some(rule.decision));
        self.rules.push(rule);
        self
    }

    /// Adds rules.
    pub fn rules(self, rules: impl IntoIterator<Item = Rule>) -> Policy {
        rules.into_iter().fold(self, Policy::rule)
    }

    /// The decision for commands no rule matches (see
    /// [`default_decision`](Self::default_decision)).
    pub fn unlisted(mut self, decision: Decision) -> Policy {
        self.unlisted = Some(decision);
        self
    }

    /// The decision set with [`unlisted`](Self::unlisted), if any.
    pub fn unlisted_decision(&self) -> Option<Decision> {
        self.unlisted
    }

    /// The rules, in the order they were added.
    pub fn rule_list(&self) -> &[Rule] {
        &self.rules
    }

    /// Whether there is nothing to judge: no rule and no default set.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty() && self.unlisted.is_none()
    }

    /// The decision for a command no rule matches: the one set with
    /// [`unlisted`](Self::unlisted); else `allow` when there are no allow
    /// rules at all, and `deny` when there are.
    pub fn default_decision(&self) -> Decision {
        self.unlisted.unwrap_or(if self.any_allow {
            Decision::Deny
        } else {
            Decision::Allow
        })
    }

    /// The decisions that can come out of judging (for the tool
    /// description): the rules' and the default.
    pub fn active_decisions(&self) -> Vec<Decision> {
        let mut all: Vec<Decision> = self.rules.iter().map(|r| r.decision).collect();
        all.push(self.default_decision());
        all.sort();
        all.dedup();
        all
    }

    /// Makes the rule index now (it is otherwise made on the first
    /// judging after a rule is added).
    pub(crate) fn prepare(&self) {
        self.index.get(&self.rules);
    }

    /// Judges `line`.
    pub fn judge(&self, line: &str) -> Judgement {
        self.judge_with(line, &[])
    }

    /// Judges `line`, with `always` (prefixes the person allowed for this
    /// caller) turning an *ask* into an *allow*; never a *deny*.
    pub(crate) fn judge_with(&self, line: &str, always: &[Rule]) -> Judgement {
        let mut asked = Vec::new();
        let judged = gate::walk(line, |words| self.command(words, always, 0, &mut asked));
        match judged {
            Err(denial) => Judgement::Deny(denial),
            Ok(()) if asked.is_empty() => Judgement::Allow,
            Ok(()) => Judgement::Ask(asked),
        }
    }

    /// Judges one simple command and what it wraps; an ask is pushed to
    /// `asked`, a denial returned.
    fn command(
        &self,
        words: &[Spelled],
        always: &[Rule],
        depth: usize,
        asked: &mut Vec<Part>,
    ) -> Result<(), Denial> {
        let (verdict, wrapper) = self.own(words, always)?;
        if let Verdict::Ask(part) = verdict {
            asked.push(part);
        }
        let wraps = |name: &str| wrapper.unwrap_or_else(|| wrappers::is_wrapper(name));
        let Some(name) = words[0].literal().filter(|n| wraps(n)) else {
            return Ok(());
        };
        for inner in wrappers::wrapped(name, words) {
            match inner {
                Wrapped::Nothing => {}
                Wrapped::Words(inner) if depth < MAX_WRAPPING => {
                    self.command(inner, always, depth + 1, asked)?
                }
                Wrapped::Echo => {
                    self.command(&[Spelled::plain("echo")], always, depth + 1, asked)?
                }
                Wrapped::Line(line) if depth < MAX_WRAPPING => {
                    gate::walk(&line, |inner| self.command(inner, always, depth + 1, asked))?
                }
                _ => self.unknown(words, asked)?,
            }
        }
        Ok(())
    }

    /// The rule that decides `words`: the strictest that matches, of
    /// equals the first added. With it, whether the command word runs
    /// other commands, when the index knows that word.
    fn deciding(&self, words: &[Spelled]) -> (Option<usize>, Option<bool>) {
        let mut best: Option<Candidate> = None;
        let mut consider = |rule: Candidate, from: usize| {
            let better = best.map_or(true, |b| {
                rule.decision > b.decision || rule.decision == b.decision && rule.at < b.at
            });
            if better
                && (rule.settled(from) || matches_from(&self.rules[rule.at as usize], words, from))
            {
                best = Some(rule);
            }
        };
        let index = self.index.get(&self.rules);
        let wrapper = index.candidates(&self.rules, words, &mut consider);
        (best.map(|c| c.at as usize), wrapper)
    }

    /// A wrapped command that cannot be known: the strictest decision any
    /// command could get, shown as the wrapper's command word.
    fn unknown(&self, wrapper: &[Spelled], asked: &mut Vec<Part>) -> Result<(), Denial> {
        let strictest = self
            .strictest
            .map_or(self.default_decision(), |s| s.max(self.default_decision()));
        let word = shown_word(&wrapper[0]);
        match strictest {
            Decision::Allow => Ok(()),
            Decision::Ask => {
                asked.push(Part {
                    words: vec![word],
                    justification: None,
                    suggested_prefix: Vec::new(),
                });
                Ok(())
            }
            Decision::Deny => Err(Denial::NotAllowed { word }),
        }
    }

    /// The decision of the rules on `words` themselves, and whether its
    /// command word runs other commands, when the index knows that word.
    fn own(&self, words: &[Spelled], always: &[Rule]) -> Result<(Verdict, Option<bool>), Denial> {
        let (deciding, wrapper) = self.deciding(words);
        let deciding = deciding.map(|at| &self.rules[at]);
        let decision = deciding.map_or(self.default_decision(), |r| r.decision);
        if decision == Decision::Allow {
            return Ok((Verdict::Allow, wrapper));
        }
        // The words shown: as many as the deciding rule's prefix has.
        let shown = |rule: &Rule| words.iter().take(rule.words.len().max(1));
        match (decision, deciding) {
            (Decision::Allow, _) => Ok((Verdict::Allow, wrapper)),
            (Decision::Ask, _) if always.iter().any(|r| matches(r, words)) => {
                Ok((Verdict::Allow, wrapper))
            }
            (Decision::Ask, _) => Ok((
                Verdict::Ask(Part {
                    words: match deciding {
                        Some(rule) => shown(rule).map(|w| w.raw.clone()).collect(),
                        None => vec![shown_word(&words[0])],
                    },
                    justification: deciding.and_then(|r| r.justification.clone()),
                    suggested_prefix: suggested_prefix(words),
                }),
                wrapper,
            )),
            (Decision::Deny, Some(rule)) => Err(Denial::ByRule {
                words: shown(rule)
                    .enumerate()
                    .fold(String::new(), |mut all, (i, w)| {
                        if i > 0 {
                            all.push(' ');
                        }
                        all.push_str(&w.raw);
                        all
                    }),
                justification: rule.justification.clone(),
            }),
            // Today's allow-list texts.
            (Decision::Deny, None) => Err(match words[0].literal() {
                Some(word) => Denial::NotAllowed {
                    word: word.to_string(),
                },
                None => Denial::NotLiteral {
                    word: words[0].raw.clone(),
                },
            }),
        }
    }
}

/// A command word as a refusal names it: its value, or as written when it
/// expands.
fn shown_word(word: &Spelled) -> String {
    word.literal().unwrap_or(&word.raw).to_string()
}

/// Whether `rule`'s prefix matches `words`. A literal word matches one of
/// its position's alternatives (a command word given as a path matches
/// by its last part, for ask and deny). A word that expands matches no
/// allow rule; against ask and deny it matches when its known beginning
/// fits an alternative, and so does everything after it (it may expand
/// to several words).
pub(crate) fn matches(rule: &Rule, words: &[Spelled]) -> bool {
    matches_from(rule, words, 0)
}

/// [`matches`], the positions before `from` known to match already (a rule
/// found by its command word).
fn matches_from(rule: &Rule, words: &[Spelled], from: usize) -> bool {
    let strict = rule.decision != Decision::Allow;
    for (i, alternatives) in rule.words.iter().enumerate().skip(from) {
        let Some(word) = words.get(i) else {
            return false;
        };
        match word.literal() {
            Some(value) => {
                let base = if i == 0 && strict {
                    last_part(value)
                } else {
                    value
                };
                if !alternatives.iter().any(|a| a == value || a == base) {
                    return false;
                }
            }
            None if strict => {
                let known = if i == 0 {
                    last_part(&word.known)
                } else {
                    &word.known
                };
                return alternatives.iter().any(|a| a.starts_with(known));
            }
            None => return false,
        }
    }
    if rule.exact {
        let extra = &words[rule.words.len()..];
        return extra.is_empty() || strict && extra.iter().all(|w| w.literal().is_none());
    }
    true
}

/// The command word and up to two following plain words.
fn suggested_prefix(words: &[Spelled]) -> Vec<String> {
    let Some(first) = words[0].literal() else {
        return Vec::new();
    };
    let plain = |w: &str| {
        !w.starts_with('-')
            && w.bytes().all(|b| {
                b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b':')
            })
    };
    let mut prefix = vec![first.to_string()];
    for word in words[1..].iter().take(2) {
        match word.literal() {
            Some(w) if plain(w) => prefix.push(w.to_string()),
            _ => break,
        }
    }
    prefix
}

#[cfg(test)]
mod tests;
