//! Asking the person: what an approver is shown, and what it answers.

use super::Part;
use crate::Caller;

/// A line that needs the person's approval, as an approver is asked
/// ([`Builder::approver`](crate::Builder::approver)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    /// The whole command line.
    pub line: String,
    /// Each simple command that needs approval: its words as written, as
    /// many as the deciding rule's prefix has.
    pub parts: Vec<Vec<String>>,
    /// The first deciding rule's justification, if any.
    pub justification: Option<String>,
    /// Who asks.
    pub caller: Caller,
    /// What [`Approved::Always`] allows for this caller from now on: the
    /// first part's command word and up to two following plain words.
    pub suggested_prefix: Vec<String>,
}

impl Approval {
    pub(crate) fn new(line: &str, parts: &[Part], caller: &Caller) -> Approval {
        Approval {
            line: line.to_string(),
            parts: parts.iter().map(|p| p.words.clone()).collect(),
            justification: parts.iter().find_map(|p| p.justification.clone()),
            caller: caller.clone(),
            suggested_prefix: parts
                .first()
                .map(|p| p.suggested_prefix.clone())
                .unwrap_or_default(),
        }
    }

    /// The parts' words, joined: `git push, npm publish`.
    pub fn words(&self) -> String {
        self.parts
            .iter()
            .map(|p| p.join(" "))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// An approver's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Approved {
    /// Run this line, this once.
    Once,
    /// Run it, and allow [`Approval::suggested_prefix`] for this caller for
    /// the life of the tools (never over a deny rule).
    Always,
    /// Do not run it, with a reason to show, if any.
    Deny(Option<String>),
}

/// The approver: asked, blocking, before a line that needs approval runs.
pub type Approver = dyn Fn(&Approval) -> Approved + Send + Sync;
