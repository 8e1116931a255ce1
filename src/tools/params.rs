//! The arguments each tool takes, as one table from which both the JSON
//! Schema a model reads (`definitions.rs`) and the check every call passes
//! first ([`check`]) are made: what a tool accepts is exactly what its
//! schema accepts (strict inputs, contract §9).
//!
//! A check that fails is an error result naming the argument: an unknown
//! one, a missing required one, a value of the wrong type (`null`
//! included), a number out of range, a blank command. Values the schema
//! cannot judge (an ID nobody knows, a filter that is no regular
//! expression) are the tool's to refuse afterwards, with texts of their own.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::{json, Map, Value};

use crate::texts;

/// What a value must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Any string.
    Text,
    /// A string with something other than blanks in it ([`NOT_BLANK`]).
    Words,
    /// A command line: [`Kind::Words`], and no NUL byte ([`COMMAND`]).
    Command,
    /// Any number.
    Number,
    /// A number above zero.
    Positive,
    /// `true` or `false`.
    Flag,
    /// A whole number, 1 or more.
    Count,
}

/// One argument of a tool.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Param {
    pub name: &'static str,
    pub kind: Kind,
    pub required: bool,
}

const fn param(name: &'static str, kind: Kind, required: bool) -> Param {
    Param {
        name,
        kind,
        required,
    }
}

/// The pattern of [`Kind::Words`]: one character that is not a blank
/// (space, tab, newline, carriage return, form feed, vertical tab). Written
/// the same way in every regular-expression dialect a JSON Schema validator
/// may use (ECMA-262, Python's `re`, this crate's `regex`).
pub(crate) const NOT_BLANK: &str = "[^ \\t\\n\\r\\f\\v]";

/// The pattern of [`Kind::Command`]: no NUL anywhere, and one character
/// that is not a blank.
pub(crate) const COMMAND: &str = "^[^\\u0000]*[^\\u0000 \\t\\n\\r\\f\\v][^\\u0000]*$";

/// `bash`, always.
pub(crate) const BASH: &[Param] = &[
    param("command", Kind::Command, true),
    param("timeout", Kind::Positive, false),
    param("description", Kind::Text, false),
    param("run_in_background", Kind::Flag, false),
    param("working_directory", Kind::Text, false),
    param("stdin", Kind::Text, false),
];

/// `bash`, with the `interactive` option.
pub(crate) const BASH_INTERACTIVE: &[Param] = &[
    param("interactive", Kind::Flag, false),
    param("yield_ms", Kind::Positive, false),
];

pub(crate) const BASH_OUTPUT: &[Param] = &[
    param("bash_id", Kind::Text, true),
    param("filter", Kind::Text, false),
    param("block", Kind::Flag, false),
    param("timeout", Kind::Positive, false),
    param("tail", Kind::Count, false),
];

pub(crate) const KILL_SHELL: &[Param] = &[param("shell_id", Kind::Text, true)];

pub(crate) const LIST_SHELLS: &[Param] = &[];

pub(crate) const MONITOR: &[Param] = &[
    param("description", Kind::Words, true),
    param("command", Kind::Command, true),
    param("timeout_ms", Kind::Number, false),
];

pub(crate) const WRITE_STDIN: &[Param] = &[
    param("shell_id", Kind::Text, true),
    param("input", Kind::Text, true),
    param("yield_ms", Kind::Positive, false),
];

/// The JSON Schema of `params` (the parts after the first add to it), each
/// property described by `describe(name)`.
pub(crate) fn schema(params: &[&[Param]], describe: impl Fn(&str) -> String) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for p in params.iter().copied().flatten() {
        let mut property = match p.kind {
            Kind::Text => json!({"type": "string"}),
            Kind::Words => json!({"type": "string", "pattern": NOT_BLANK}),
            Kind::Command => json!({"type": "string", "pattern": COMMAND}),
            Kind::Number => json!({"type": "number"}),
            Kind::Positive => json!({"type": "number", "exclusiveMinimum": 0}),
            Kind::Flag => json!({"type": "boolean"}),
            Kind::Count => json!({"type": "integer", "minimum": 1}),
        };
        property["description"] = Value::String(describe(p.name));
        properties.insert(p.name.to_string(), property);
        if p.required {
            required.push(p.name);
        }
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false
    })
}

/// The arguments object of a call to `tool`, checked against `params`;
/// the error text names the first argument that fails.
pub(crate) fn check<'a>(
    tool: &str,
    params: &[&[Param]],
    input: &'a Value,
) -> Result<&'a Map<String, Value>, String> {
    let args = input
        .as_object()
        .ok_or_else(|| texts::NOT_AN_OBJECT.to_string())?;
    let all = || params.iter().copied().flatten();
    for name in args.keys() {
        if !all().any(|p| p.name == name) {
            let known: Vec<&str> = all().map(|p| p.name).collect();
            return Err(texts::unknown_param(tool, name, &known));
        }
    }
    for p in all() {
        match args.get(p.name) {
            None if p.required => return Err(missing(p)),
            None => {}
            Some(value) => value_ok(p, value)?,
        }
    }
    Ok(args)
}

/// The text for a required argument left out (for commands, the one
/// Claude Code gives).
fn missing(p: &Param) -> String {
    match p.kind {
        Kind::Command => texts::NO_COMMAND.to_string(),
        _ => texts::missing(p.name),
    }
}

fn value_ok(p: &Param, value: &Value) -> Result<(), String> {
    let name = p.name;
    match (p.kind, value) {
        (Kind::Text, Value::String(_)) => Ok(()),
        (Kind::Words, Value::String(s)) if not_blank(s) => Ok(()),
        (Kind::Words, Value::String(_)) => Err(texts::blank(name)),
        (Kind::Command, Value::String(s)) if s.contains('\0') => {
            Err(texts::NUL_IN_COMMAND.to_string())
        }
        (Kind::Command, Value::String(s)) if not_blank(s) => Ok(()),
        (Kind::Command, Value::String(_)) => Err(texts::NO_COMMAND.to_string()),
        (Kind::Text | Kind::Words, _) => Err(texts::wrong_type(name, "a string")),
        (Kind::Command, _) => Err(texts::NO_COMMAND.to_string()),
        (Kind::Number, Value::Number(_)) => Ok(()),
        (Kind::Positive, Value::Number(n)) if n.as_f64().is_some_and(|v| v > 0.0) => Ok(()),
        (Kind::Positive, Value::Number(_)) => {
            Err(texts::wrong_type(name, "a number greater than 0"))
        }
        (Kind::Number, _) => Err(texts::wrong_type(name, "a number")),
        (Kind::Positive, _) => Err(texts::wrong_type(name, "a number greater than 0")),
        (Kind::Count, Value::Number(n)) if count(n).is_some() => Ok(()),
        (Kind::Count, _) => Err(texts::wrong_type(name, "a whole number of 1 or more")),
        (Kind::Flag, Value::Bool(_)) => Ok(()),
        (Kind::Flag, _) => Err(texts::wrong_type(name, "a boolean")),
    }
}

/// The value of a [`Kind::Count`]: a whole number of 1 or more (`2.0` is
/// one, as JSON Schema says), cut to `u64::MAX`.
pub(crate) fn count(n: &serde_json::Number) -> Option<u64> {
    if let Some(v) = n.as_u64() {
        return (v >= 1).then_some(v);
    }
    let f = n.as_f64()?;
    // `as` saturates: a whole number past u64::MAX reads as u64::MAX.
    (f >= 1.0 && f.fract() == 0.0).then_some(f as u64)
}

/// Whether `s` holds a character that is not a blank ([`NOT_BLANK`]).
pub(crate) fn not_blank(s: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(NOT_BLANK).expect("a valid pattern"))
        .is_match(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_bash(v: Value) -> Result<(), String> {
        check("bash", &[BASH], &v).map(drop)
    }

    #[test]
    fn the_patterns_say_what_the_checks_do() {
        let command = Regex::new(COMMAND).unwrap();
        for s in ["ls", " x ", "\u{a0}", "a\nb", "\u{feff}"] {
            assert!(command.is_match(s) && not_blank(s), "{s:?}");
        }
        for s in ["", " ", "\t\n\r\u{b}\u{c}", "ls\0", "\0"] {
            assert!(!command.is_match(s), "{s:?}");
        }
        assert!(!not_blank(" \t\n\r\u{b}\u{c}"));
        // The typed API's own check says the same of every character.
        for c in (0..0x3100)
            .filter_map(char::from_u32)
            .filter(|&c| c != '\0')
        {
            let s = c.to_string();
            let typed = crate::api::core::Core::check_command(&s).is_ok();
            assert_eq!(typed, not_blank(&s), "{c:?}");
        }
    }

    #[test]
    fn each_refusal_names_the_argument() {
        let err = |v: Value| check_bash(v).unwrap_err();
        assert!(err(json!({"command": "true", "bogus": 1})).contains("bogus"));
        assert!(err(json!({"command": "true", "timeout": "soon"})).contains("timeout"));
        assert!(err(json!({"command": "true", "timeout": -5})).contains("timeout"));
        assert!(err(json!({"command": "true", "timeout": 0})).contains("timeout"));
        assert!(err(json!({"command": "true", "timeout": null})).contains("timeout"));
        assert!(err(json!({"command": "true", "run_in_background": "true"}))
            .contains("run_in_background"));
        assert_eq!(err(json!({"command": " "})), texts::NO_COMMAND);
        assert_eq!(err(json!({})), texts::NO_COMMAND);
        assert_eq!(err(json!({"command": "a\0"})), texts::NUL_IN_COMMAND);
        assert_eq!(err(json!([1])), texts::NOT_AN_OBJECT);
        assert!(check_bash(json!({"command": "true", "timeout": 1e300})).is_ok());
    }

    #[test]
    fn the_schema_lists_every_argument_and_the_required_ones() {
        let s = schema(&[BASH, BASH_INTERACTIVE], |n| format!("about {n}"));
        assert_eq!(s["required"], json!(["command"]));
        assert_eq!(s["additionalProperties"], json!(false));
        assert_eq!(s["properties"]["yield_ms"]["exclusiveMinimum"], json!(0));
        assert_eq!(s["properties"]["command"]["pattern"], json!(COMMAND));
        assert_eq!(
            s["properties"]["stdin"]["description"],
            json!("about stdin")
        );
    }
}
