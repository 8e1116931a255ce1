//! A rule: a decision on a word prefix.

use std::fmt;

/// What a rule, or the policy, decides for a command. Ordered by
/// strictness: `Allow < Ask < Deny`, and a line gets the strictest
/// decision of its parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Decision {
    /// Runs without a question.
    Allow,
    /// Runs once the person says so (an approver, or MCP elicitation).
    Ask,
    /// Never runs.
    Deny,
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        })
    }
}

/// A decision on a word prefix: the command word and zero or more
/// following words, each a literal or a set of alternatives.
///
/// ```
/// use bashtools::{Decision, Rule};
/// let push = Rule::parse(Decision::Ask, "git [push fetch]").unwrap();
/// assert_eq!(push.to_string(), "ask git [push fetch]");
/// let rm = Rule::deny("rm -rf").unwrap().justification("use trash instead");
/// assert_eq!(rm.decision(), Decision::Deny);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub(crate) decision: Decision,
    /// Each position's alternatives (each non-empty); no positions at all
    /// for a rule on every command ([`Rule::every`]).
    pub(crate) words: Vec<Vec<String>>,
    /// Matches only a command of exactly these words (a Claude Code
    /// `Bash(…)` entry without a `*`).
    pub(crate) exact: bool,
    pub(crate) justification: Option<String>,
}

/// Why a rule could not be made from its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError(pub(crate) String);

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RuleError {}

impl Rule {
    /// A rule from its words: `git status`, `git [push fetch]` (a set of
    /// alternatives in brackets, held to its first and last word), split on
    /// blanks; `[` and `[[` alone are the commands of those names. At least one word; no
    /// word may be empty or hold a quote (the words are matched after the
    /// gate's quote removal, so a quote here could never match).
    pub fn parse(decision: Decision, words: &str) -> Result<Rule, RuleError> {
        let mut positions = Vec::new();
        let mut open: Option<Vec<String>> = None;
        for token in words.split_whitespace() {
            // The commands `[` and `[[` (and their closing words) are words of
            // their own; alternatives hold to their brackets: `[push fetch]`.
            if open.is_none() && matches!(token, "[" | "[[" | "]" | "]]") {
                positions.push(vec![token.to_string()]);
                continue;
            }
            let (opens, rest) = match token.strip_prefix('[') {
                Some(rest) if open.is_none() => (true, rest),
                Some(_) => return Err(RuleError(format!("a [ inside [ … ] in `{words}`"))),
                None => (false, token),
            };
            let (rest, closes) = match rest.strip_suffix(']') {
                Some(r) => (r, true),
                None => (rest, false),
            };
            if rest.contains(['[', ']', '"', '\'']) {
                return Err(RuleError(format!(
                    "`{token}` in `{words}`: write plain words, alternatives as [a b]"
                )));
            }
            if opens {
                open = Some(Vec::new());
            }
            match open.as_mut() {
                Some(alternatives) => {
                    if !rest.is_empty() {
                        alternatives.push(rest.to_string());
                    }
                    if closes {
                        let alternatives = open.take().unwrap_or_default();
                        if alternatives.is_empty() {
                            return Err(RuleError(format!("an empty [ ] in `{words}`")));
                        }
                        positions.push(alternatives);
                    }
                }
                None if closes => return Err(RuleError(format!("a ] without [ in `{words}`"))),
                None => positions.push(vec![rest.to_string()]),
            }
        }
        if open.is_some() {
            return Err(RuleError(format!("a [ without ] in `{words}`")));
        }
        Rule::new(decision, positions)
    }

    /// A rule on `words`, each position a set of alternatives.
    pub fn new(decision: Decision, words: Vec<Vec<String>>) -> Result<Rule, RuleError> {
        if words.is_empty() {
            return Err(RuleError("a rule needs at least the command word".into()));
        }
        if words
            .iter()
            .any(|w| w.is_empty() || w.iter().any(String::is_empty))
        {
            return Err(RuleError("a rule's words cannot be empty".into()));
        }
        Ok(Rule {
            decision,
            words,
            exact: false,
            justification: None,
        })
    }

    /// A rule that matches every command (Claude Code's bare `Bash`).
    pub fn every(decision: Decision) -> Rule {
        Rule {
            decision,
            words: Vec::new(),
            exact: false,
            justification: None,
        }
    }

    /// `allow` on a prefix ([`parse`](Self::parse)).
    pub fn allow(words: &str) -> Result<Rule, RuleError> {
        Rule::parse(Decision::Allow, words)
    }

    /// `ask` on a prefix ([`parse`](Self::parse)).
    pub fn ask(words: &str) -> Result<Rule, RuleError> {
        Rule::parse(Decision::Ask, words)
    }

    /// `deny` on a prefix ([`parse`](Self::parse)).
    pub fn deny(words: &str) -> Result<Rule, RuleError> {
        Rule::parse(Decision::Deny, words)
    }

    /// Why: shown after a denial (`Command not allowed: WORDS: WHY`) and in
    /// a question.
    pub fn justification(mut self, why: impl Into<String>) -> Rule {
        self.justification = Some(why.into());
        self
    }

    /// Matches only a command of exactly these words, none after.
    pub fn exact(mut self) -> Rule {
        self.exact = true;
        self
    }

    /// Its decision.
    pub fn decision(&self) -> Decision {
        self.decision
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.decision)?;
        if self.words.is_empty() {
            f.write_str(" (every command)")?;
        }
        for alternatives in &self.words {
            match alternatives.as_slice() {
                [one] => write!(f, " {one}")?,
                many => write!(f, " [{}]", many.join(" "))?,
            }
        }
        if self.exact {
            f.write_str(" (exactly)")?;
        }
        if let Some(why) = &self.justification {
            write!(f, " — {why}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_alternatives_are_read() {
        let r = Rule::parse(Decision::Ask, " git  [push fetch]  --force ").unwrap();
        assert_eq!(
            r.words,
            vec![
                vec!["git".to_string()],
                vec!["push".into(), "fetch".into()],
                vec!["--force".into()]
            ]
        );
        assert_eq!(r.to_string(), "ask git [push fetch] --force");
        let one = Rule::parse(Decision::Allow, "git [push]").unwrap();
        assert_eq!(one.words[1], vec!["push".to_string()]);
    }

    #[test]
    fn bad_rules_say_what_is_wrong() {
        for bad in [
            "",
            "   ",
            "git [push",
            "git push]",
            "git []",
            "git [a [b]]",
            "'rm'",
            "a\"b",
        ] {
            assert!(
                Rule::parse(Decision::Deny, bad).is_err(),
                "{bad:?} was accepted"
            );
        }
    }
}
