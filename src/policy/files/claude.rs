//! Claude Code settings: `{"permissions": {"allow": [...], "ask": [...],
//! "deny": [...]}}`, with `Bash(git status)` (exactly these words),
//! `Bash(npm run test:*)` (the legacy `:*`: a prefix), `Bash(ls *)` (`*`
//! after a blank: any further words) and `Bash` (every command).

use serde_json::Value;

use super::{Located, RulesFile};
use crate::policy::{Decision, Rule};

pub(super) fn parse(text: &str) -> Result<RulesFile, Located> {
    let json: Value =
        serde_json::from_str(text).map_err(|e| (Some(e.line()), format!("not valid JSON: {e}")))?;
    let Some(permissions) = json.get("permissions") else {
        return Ok(RulesFile {
            rules: Vec::new(),
            skipped: 0,
        });
    };
    if !permissions.is_object() {
        return Err((
            line_of(text, "\"permissions\""),
            "permissions must be an object".into(),
        ));
    }
    let mut file = RulesFile {
        rules: Vec::new(),
        skipped: 0,
    };
    for (key, decision) in [
        ("deny", Decision::Deny),
        ("ask", Decision::Ask),
        ("allow", Decision::Allow),
    ] {
        let Some(entries) = permissions.get(key) else {
            continue;
        };
        let Some(entries) = entries.as_array() else {
            let at = line_of(text, &format!("\"{key}\""));
            return Err((at, format!("permissions.{key} must be a list of strings")));
        };
        for entry in entries {
            let Some(entry) = entry.as_str() else {
                let at = line_of(text, &format!("\"{key}\""));
                return Err((at, format!("permissions.{key} holds {entry}, not a string")));
            };
            let at = || line_of(text, &serde_json::to_string(entry).unwrap_or_default());
            match entry_rule(decision, entry) {
                Ok(Some(rule)) => file.rules.push(rule),
                Ok(None) => file.skipped += 1,
                Err(problem) => return Err((at(), format!("{entry}: {problem}"))),
            }
        }
    }
    Ok(file)
}

/// The rule of one entry; `None` for another tool's entry.
fn entry_rule(decision: Decision, entry: &str) -> Result<Option<Rule>, String> {
    let entry = entry.trim();
    if entry == "Bash" || entry == "Bash()" || entry == "Bash(*)" {
        return Ok(Some(Rule::every(decision)));
    }
    let Some(inner) = entry.strip_prefix("Bash(") else {
        return Ok(None);
    };
    let inner = inner
        .strip_suffix(')')
        .ok_or("a Bash( entry must end with )")?
        .trim();
    let (words, exact) = if let Some(prefix) = inner.strip_suffix(":*") {
        (prefix, false)
    } else if let Some(prefix) = inner.strip_suffix(" *") {
        (prefix, false)
    } else {
        (inner, true)
    };
    if words.contains(['*', '"', '\'', '[', ']']) {
        return Err(
            "only word prefixes are understood: write Bash(WORDS), Bash(WORDS:*) or Bash(WORDS *), \
             without quotes, brackets or a * inside"
                .into(),
        );
    }
    let words: Vec<Vec<String>> = words
        .split_whitespace()
        .map(|w| vec![w.to_string()])
        .collect();
    let rule = Rule::new(decision, words).map_err(|e| e.to_string())?;
    Ok(Some(if exact { rule.exact() } else { rule }))
}

/// The line where `needle` first appears (1-based).
fn line_of(text: &str, needle: &str) -> Option<usize> {
    let at = text.find(needle)?;
    Some(text[..at].matches('\n').count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_become_rules() {
        let text = r#"{
  "permissions": {
    "allow": ["Bash(git status)", "Bash(npm run test:*)", "Bash(ls *)", "Read(./src/**)"],
    "ask": ["Bash(git push:*)"],
    "deny": ["Bash(rm -rf:*)", "WebFetch"]
  },
  "env": {"X": "1"}
}"#;
        let file = parse(text).unwrap();
        let shown: Vec<String> = file.rules.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "deny rm -rf",
                "ask git push",
                "allow git status (exactly)",
                "allow npm run test",
                "allow ls"
            ]
        );
        assert_eq!(file.skipped, 2);
    }

    #[test]
    fn every_command_and_errors() {
        let file = parse(r#"{"permissions": {"ask": ["Bash"]}}"#).unwrap();
        assert_eq!(file.rules[0].to_string(), "ask (every command)");
        let err = parse("{\n\"permissions\": {\n\"deny\": [\n\"Bash(rm*)\"]}}").unwrap_err();
        assert_eq!(err.0, Some(4), "{err:?}");
        let err = parse("{\n\"permissions\": {\"allow\": [1]}}").unwrap_err();
        assert_eq!(err.0, Some(2), "{err:?}");
        let err = parse("{\n\"permissions\": \n").unwrap_err();
        assert!(
            err.0.is_some() && err.1.starts_with("not valid JSON"),
            "{err:?}"
        );
        assert!(parse("{}").unwrap().rules.is_empty());
    }
}
