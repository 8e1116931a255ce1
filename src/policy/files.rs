//! Rule files people already keep: Claude Code's settings JSON and Codex's
//! `prefix_rule(…)` files, told apart by content.
//!
//! Loading is all or nothing: an unreadable file, a syntax error or a
//! failing example is an error naming `FILE:LINE`, and no rule of the file
//! is kept.

mod claude;
mod codex;

use std::fmt;
use std::path::{Path, PathBuf};

use super::Rule;

/// The rules of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RulesFile {
    /// Its rules, in file order.
    pub rules: Vec<Rule>,
    /// Entries for tools other than Bash (Claude Code's `Read(…)`,
    /// `WebFetch`, …), skipped.
    pub skipped: usize,
}

/// Why a rules file could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RulesFileError {
    /// The file.
    pub path: PathBuf,
    /// The line at fault (1-based), when there is one.
    pub line: Option<usize>,
    /// What is wrong.
    pub problem: String,
}

impl fmt::Display for RulesFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path.display(), self.problem),
            None => write!(f, "{}: {}", self.path.display(), self.problem),
        }
    }
}

impl std::error::Error for RulesFileError {}

/// Loads the rules of `path`: a Claude Code settings file (JSON, rules
/// under `permissions.allow`/`ask`/`deny`) or a Codex rules file
/// (`prefix_rule(…)` calls), told apart by content.
///
/// ```no_run
/// let file = bashtools::load_rules(std::path::Path::new(".claude/settings.json"))?;
/// println!("{} rules, {} entries for other tools", file.rules.len(), file.skipped);
/// # Ok::<(), bashtools::RulesFileError>(())
/// ```
pub fn load_rules(path: &Path) -> Result<RulesFile, RulesFileError> {
    let fail = |line: Option<usize>, problem: String| RulesFileError {
        path: path.to_path_buf(),
        line,
        problem,
    };
    let text =
        std::fs::read_to_string(path).map_err(|e| fail(None, format!("cannot read: {e}")))?;
    let parsed = if text.trim_start().starts_with('{') {
        claude::parse(&text)
    } else {
        codex::parse(&text)
    };
    parsed.map_err(|(line, problem)| fail(line, problem))
}

/// A problem at a line (or the whole file).
type Located = (Option<usize>, String);
