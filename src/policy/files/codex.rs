//! Codex rules: `prefix_rule(pattern=[...], decision="allow"|"prompt"|
//! "forbidden", justification="...", match=[...], not_match=[...])` calls,
//! with `#` comments. A pattern element is a word or a list of
//! alternatives; `prompt` is ask, `forbidden` is deny, and the decision
//! defaults to allow. Each `match` example (a command line, or a list of
//! words) must match the pattern, each `not_match` example must not: they
//! are checked at load.
//!
//! The subset of Starlark read here is small and read by hand: calls of
//! `prefix_rule` with keyword arguments whose values are strings (double
//! or single quotes, backslash escapes) and lists (nested once, trailing
//! commas allowed).

use super::{Located, RulesFile};
use crate::gate::Spelled;
use crate::policy::{matches, Decision, Rule};

/// A value of the subset.
#[derive(Debug, Clone)]
enum Value {
    Str(String),
    List(Vec<Value>),
}

struct Reader<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    line: usize,
}

impl Reader<'_> {
    fn fail<T>(&self, problem: impl Into<String>) -> Result<T, Located> {
        Err((Some(self.line), problem.into()))
    }

    /// Skips blanks, newlines and comments.
    fn skip(&mut self) {
        while let Some(&c) = self.chars.peek() {
            match c {
                '\n' => {
                    self.line += 1;
                    self.chars.next();
                }
                '#' => {
                    while self.chars.peek().is_some_and(|c| *c != '\n') {
                        self.chars.next();
                    }
                }
                c if c.is_whitespace() => {
                    self.chars.next();
                }
                _ => return,
            }
        }
    }

    fn eat(&mut self, want: char) -> bool {
        self.skip();
        if self.chars.peek() == Some(&want) {
            self.chars.next();
            true
        } else {
            false
        }
    }

    fn name(&mut self) -> String {
        self.skip();
        let mut name = String::new();
        while let Some(&c) = self.chars.peek() {
            if c.is_ascii_alphanumeric() || c == '_' {
                name.push(c);
                self.chars.next();
            } else {
                break;
            }
        }
        name
    }

    fn value(&mut self, depth: usize) -> Result<Value, Located> {
        self.skip();
        match self.chars.peek() {
            Some('"' | '\'') => self.string().map(Value::Str),
            Some('[') if depth < 2 => {
                self.chars.next();
                let mut items = Vec::new();
                loop {
                    if self.eat(']') {
                        return Ok(Value::List(items));
                    }
                    items.push(self.value(depth + 1)?);
                    if !self.eat(',') {
                        if self.eat(']') {
                            return Ok(Value::List(items));
                        }
                        return self.fail("expected , or ] in a list");
                    }
                }
            }
            Some('[') => self.fail("lists nest at most twice"),
            Some(c) => {
                let c = *c;
                self.fail(format!("expected a string or a list, found {c:?}"))
            }
            None => self.fail("the file ends inside a value"),
        }
    }

    fn string(&mut self) -> Result<String, Located> {
        let quote = self.chars.next().unwrap_or('"');
        let mut out = String::new();
        loop {
            match self.chars.next() {
                None | Some('\n') => return self.fail("a string is not closed on its line"),
                Some(c) if c == quote => return Ok(out),
                Some('\\') => match self.chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some(c @ ('\\' | '"' | '\'')) => out.push(c),
                    Some(c) => return self.fail(format!("unknown escape \\{c}")),
                    None => return self.fail("the file ends inside a string"),
                },
                Some(c) => out.push(c),
            }
        }
    }
}

pub(super) fn parse(text: &str) -> Result<RulesFile, Located> {
    let mut r = Reader {
        chars: text.chars().peekable(),
        line: 1,
    };
    let mut rules = Vec::new();
    loop {
        r.skip();
        if r.chars.peek().is_none() {
            break;
        }
        let start = r.line;
        let name = r.name();
        if name != "prefix_rule" {
            return r.fail(if name.is_empty() {
                "expected prefix_rule(…)".to_string()
            } else {
                format!("{name}: only prefix_rule(…) is understood")
            });
        }
        if !r.eat('(') {
            return r.fail("expected ( after prefix_rule");
        }
        let mut args: Vec<(String, Value, usize)> = Vec::new();
        loop {
            if r.eat(')') {
                break;
            }
            let key = r.name();
            let at = r.line;
            if key.is_empty() || !r.eat('=') {
                return r.fail("expected NAME=VALUE");
            }
            if args.iter().any(|(k, _, _)| *k == key) {
                return r.fail(format!("{key} is given twice"));
            }
            let value = r.value(0)?;
            args.push((key, value, at));
            if !r.eat(',') {
                if r.eat(')') {
                    break;
                }
                return r.fail("expected , or ) after an argument");
            }
        }
        rules.push(rule_of(start, args)?);
    }
    Ok(RulesFile { rules, skipped: 0 })
}

fn rule_of(start: usize, args: Vec<(String, Value, usize)>) -> Result<Rule, Located> {
    let mut pattern = None;
    let mut decision = Decision::Allow;
    let mut justification = None;
    let mut examples = Vec::new();
    for (key, value, at) in args {
        let fail = |problem: &str| Err((Some(at), format!("{key}: {problem}")));
        match (key.as_str(), value) {
            ("pattern", Value::List(items)) => {
                let mut words = Vec::new();
                for item in items {
                    match item {
                        Value::Str(w) => words.push(vec![w]),
                        Value::List(alts) => {
                            let alts: Option<Vec<String>> = alts
                                .into_iter()
                                .map(|a| match a {
                                    Value::Str(s) => Some(s),
                                    Value::List(_) => None,
                                })
                                .collect();
                            match alts {
                                Some(alts) => words.push(alts),
                                None => return fail("alternatives are strings"),
                            }
                        }
                    }
                }
                pattern = Some(words);
            }
            ("decision", Value::Str(d)) => {
                decision = match d.as_str() {
                    "allow" => Decision::Allow,
                    "prompt" => Decision::Ask,
                    "forbidden" => Decision::Deny,
                    _ => return fail("must be \"allow\", \"prompt\" or \"forbidden\""),
                };
            }
            ("justification", Value::Str(j)) => justification = Some(j),
            (kind @ ("match" | "not_match"), Value::List(items)) => {
                let wanted = kind == "match";
                for item in items {
                    let words = match item {
                        Value::Str(line) => split_example(&line),
                        Value::List(words) => words
                            .into_iter()
                            .map(|w| match w {
                                Value::Str(s) => Ok(s),
                                Value::List(_) => {
                                    Err((Some(at), format!("{key}: a word is a string")))
                                }
                            })
                            .collect::<Result<_, _>>()?,
                    };
                    examples.push((wanted, words, at));
                }
            }
            ("pattern" | "match" | "not_match", Value::Str(_)) => return fail("must be a list"),
            ("decision" | "justification", Value::List(_)) => return fail("must be a string"),
            _ => {
                return fail(
                    "unknown argument (pattern, decision, justification, match, not_match)",
                )
            }
        }
    }
    let Some(pattern) = pattern else {
        return Err((Some(start), "prefix_rule needs a pattern".into()));
    };
    let mut rule = Rule::new(decision, pattern).map_err(|e| (Some(start), e.to_string()))?;
    if let Some(j) = justification {
        rule = rule.justification(j);
    }
    for (wanted, words, at) in examples {
        let spelled: Vec<Spelled> = words.iter().map(|w| Spelled::plain(w)).collect();
        // Examples are checked as an allow rule matches: literally.
        let mut literal = rule.clone();
        literal.decision = Decision::Allow;
        let matched = !spelled.is_empty() && matches(&literal, &spelled);
        if matched != wanted {
            let line = words.join(" ");
            let problem = if wanted {
                format!("the example `{line}` does not match the pattern")
            } else {
                format!("the example `{line}` matches the pattern, but is listed in not_match")
            };
            return Err((Some(at), problem));
        }
    }
    Ok(rule)
}

/// An example command line split into words: blanks separate, quotes
/// group (no expansions: it is an example).
fn split_example(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rules_file_is_read() {
        let text = r#"
# Codex rules
prefix_rule(
    pattern = ["git", ["push", "fetch"]],
    decision = "prompt",
    justification = 'network: "ask" first',
    match = ["git push origin main", ["git", "fetch"]],
    not_match = ["git status"],
)
prefix_rule(pattern=["rm", "-rf"], decision="forbidden")
prefix_rule(pattern=["ls"])  # allow is the default
"#;
        let file = parse(text).unwrap();
        let shown: Vec<String> = file.rules.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "ask git [push fetch] — network: \"ask\" first",
                "deny rm -rf",
                "allow ls"
            ]
        );
    }

    #[test]
    fn errors_name_the_line() {
        let cases = [
            (
                "prefix_rule(pattern=[\"git\"],\n match=[\"ls\"])",
                2,
                "does not match",
            ),
            (
                "\n\nprefix_rule(pattern=[\"git\"], not_match=[\"git x\"])",
                3,
                "not_match",
            ),
            (
                "prefix_rule(pattern=[\"git\"], decision=\"maybe\")",
                1,
                "decision",
            ),
            ("prefix_rule(\n  decision=\"allow\")", 1, "needs a pattern"),
            ("allow_rule(pattern=[\"x\"])", 1, "only prefix_rule"),
            ("prefix_rule(pattern=[\"x\"]", 1, "expected"),
            (
                "prefix_rule(pattern=[\"x], decision=\"allow\")",
                1,
                "expected ,",
            ),
            (
                "prefix_rule(pattern=[\"x\"], colour=\"red\")",
                1,
                "unknown argument",
            ),
            ("prefix_rule(pattern=[])", 1, "at least the command word"),
            ("prefix_rule(pattern=[\"a\"], pattern=[\"b\"])", 1, "twice"),
        ];
        for (text, line, what) in cases {
            let (at, problem) = parse(text).unwrap_err();
            assert_eq!(at, Some(line), "{text}: {problem}");
            assert!(problem.contains(what), "{text}: {problem}");
        }
    }

    /// The reader never panics and always ends, whatever it is given:
    /// random mutations of a valid file.
    #[test]
    fn fuzz_the_reader() {
        let seed_text = "prefix_rule(pattern=[\"git\", [\"a\", 'b']], decision=\"prompt\", justification=\"x\\\"y\", match=[\"git a\"], not_match=[[\"git\", \"c\"]]) # c\n";
        let alphabet: Vec<char> = "prefix_rule()[],=\"'\\# \nabcdgit".chars().collect();
        let mut rng = crate::test_rng::Rng(0x9E37_79B9_7F4A_7C15);
        let mut next = |n: usize| rng.below(n);
        for _ in 0..20_000 {
            let mut chars: Vec<char> = seed_text.chars().collect();
            for _ in 0..1 + next(4) {
                let at = next(chars.len() + 1);
                match next(3) {
                    0 if at < chars.len() => {
                        chars.remove(at);
                    }
                    1 => chars.insert(at, alphabet[next(alphabet.len())]),
                    _ if at < chars.len() => chars[at] = alphabet[next(alphabet.len())],
                    _ => {}
                }
            }
            let text: String = chars.into_iter().collect();
            if let Err((line, _)) = parse(&text) {
                let lines = text.matches('\n').count() + 1;
                assert!(line.is_some_and(|l| l >= 1 && l <= lines), "{text:?}");
            }
        }
    }
}
