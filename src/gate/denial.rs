//! Why the gate denied a line: a typed value whose `Display` is the model-facing text.

use std::fmt;

/// Why [`check_allowed`](super::check_allowed) refused a line.
///
/// `Display` gives exactly the text shown to the model (contract §3): the bare
/// `Command not allowed: WORD` for a word outside the list, and for a refusal of a
/// construct the construct followed by one short clause saying why and what to write
/// instead.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Denial {
    /// A command word, after quote removal, that is not in `allowed_commands`.
    NotAllowed {
        /// The word as bash will look it up (`"t"ouch` is `touch`).
        word: String,
    },
    /// A rule of the policy denies it ([`Policy`](crate::Policy)).
    ByRule {
        /// The command's words as written, as many as the rule's prefix has.
        words: String,
        /// The rule's justification.
        justification: Option<String>,
    },
    /// A command word that is not a plain literal (an expansion, a substitution, a
    /// glob, a brace expansion, a leading `~`, an empty word): its value is not known
    /// before the line runs.
    NotLiteral {
        /// The word as written.
        word: String,
    },
    /// A construct that sets, unsets or rebinds a variable that changes which program
    /// a word runs or how bash reads the line (`PATH`, `BASH_ENV`, `IFS`, `LD_*`, …).
    ForbiddenVariable {
        /// The variable.
        name: String,
        /// The construct, as written, with an assigned value shown as `…`.
        text: String,
        /// What the construct does to the variable.
        change: Change,
    },
    /// A variable name given to a builtin (`export`, `read`, `printf -v`, `unset`, …)
    /// that is not a plain literal after quote removal, or a nameref whose target is
    /// not a plain literal name: which variable it names is not known before the line
    /// runs.
    NotLiteralName {
        /// The construct as written.
        text: String,
    },
    /// A builtin option that runs its argument as a command or changes what later
    /// words run or how later lines are read (`jobs -x`, `mapfile -C`, `set -k`, …).
    Option {
        /// The builtin and the option, as written.
        text: String,
        /// Why it is refused and what to write instead.
        reason: &'static str,
    },
    /// A line the gate cannot read the way bash will, or at all.
    Unparseable {
        /// What is unsupported, and what to write instead.
        reason: &'static str,
    },
}

/// What a refused construct does to a forbidden variable.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// An assignment, by any means (`NAME=`, `export`, `read`, `printf -v`, `for NAME`,
    /// arithmetic, `${NAME:=…}`, `{NAME}>file`).
    Assign,
    /// `unset NAME`: bash's default `PATH` then ends in `.`.
    Unset,
    /// A nameref to it (`declare -n r=NAME`, or a `for` loop over a nameref).
    Nameref,
}

impl Denial {
    /// The word or construct the refusal is about, as it appears in the text.
    pub fn subject(&self) -> &str {
        match self {
            Denial::NotAllowed { word } | Denial::NotLiteral { word } => word,
            Denial::ByRule { words, .. } => words,
            Denial::ForbiddenVariable { text, .. }
            | Denial::NotLiteralName { text }
            | Denial::Option { text, .. } => text,
            Denial::Unparseable { .. } => PARSE_ERROR,
        }
    }

    /// Whether this is the plain refusal of a word outside the list or of a
    /// rule, as opposed to a construct refused whatever the list holds.
    pub fn is_unlisted_word(&self) -> bool {
        matches!(self, Denial::NotAllowed { .. } | Denial::ByRule { .. })
    }
}

/// The subject of an unparseable line, kept from the text before reasons were given.
const PARSE_ERROR: &str = "could not parse the command line";

impl fmt::Display for Denial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let subject = self.subject();
        match self {
            Denial::NotAllowed { .. } => write!(f, "{}", crate::texts::not_allowed(subject)),
            Denial::ByRule {
                justification: Some(why),
                ..
            } => write!(f, "{}: {why}", crate::texts::not_allowed(subject)),
            Denial::ByRule { .. } => write!(f, "{}", crate::texts::not_allowed(subject)),
            Denial::NotLiteral { .. } => write!(
                f,
                "{} (a command word must be a plain name: write the command itself)",
                crate::texts::not_allowed(subject)
            ),
            Denial::ForbiddenVariable { name, change, .. } => {
                let clause = match change {
                    Change::Assign => format!("assignments to {name} are not allowed"),
                    Change::Unset => format!("unsetting {name} is not allowed"),
                    Change::Nameref => format!("namerefs to {name} are not allowed"),
                };
                write!(f, "{} ({clause})", crate::texts::not_allowed(subject))
            }
            Denial::NotLiteralName { .. } => write!(
                f,
                "{} (a variable name must be a plain word: write the name itself)",
                crate::texts::not_allowed(subject)
            ),
            Denial::Option { reason, .. } | Denial::Unparseable { reason } => {
                write!(f, "{} ({reason})", crate::texts::not_allowed(subject))
            }
        }
    }
}

impl std::error::Error for Denial {}
