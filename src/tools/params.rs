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
pub(crate) enum ValueType {
    /// Any string.
    Text,
    /// A string with something other than blanks in it ([`NOT_BLANK`]).
    Words,
    /// A command line: [`ValueType::Words`], and no NUL byte ([`COMMAND`]).
    Command,
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
    pub kind: ValueType,
    pub required: bool,
}

const fn param(name: &'static str, kind: ValueType, required: bool) -> Param {
    Param {
        name,
        kind,
        required,
    }
}

/// The pattern of [`ValueType::Words`]: one character that is not a blank
/// (space, tab, newline, carriage return, form feed, vertical tab). Written
/// the same way in every regular-expression dialect a JSON Schema validator
/// may use (ECMA-262, Python's `re`, this crate's `regex`).
pub(crate) const NOT_BLANK: &str = "[^ \\t\\n\\r\\f\\v]";

/// The pattern of [`ValueType::Command`]: no NUL anywhere, and one character
/// that is not a blank.
pub(crate) const COMMAND: &str = "^[^\\u0000]*[^\\u0000 \\t\\n\\r\\f\\v][^\\u0000]*$";

/// `bash`, always.
pub(crate) const BASH: &[Param] = &[
    param("command", ValueType::Command, true),
    param("timeout", ValueType::Positive, false),
    param("description", ValueType::Text, false),
    param("run_in_background", ValueType::Flag, false),
    param("working_directory", ValueType::Text, false),
    param("stdin", ValueType::Text, false),
];

/// `bash`, with the `interactive` option.
pub(crate) const BASH_INTERACTIVE: &[Param] = &[
    param("interactive", ValueType::Flag, false),
    param("yield_ms", ValueType::Positive, false),
];

pub(crate) const BASH_OUTPUT: &[Param] = &[
    param("bash_id", ValueType::Text, true),
    param("filter", ValueType::Text, false),
    param("block", ValueType::Flag, false),
    param("timeout", ValueType::Positive, false),
    param("tail", ValueType::Count, false),
];

pub(crate) const KILL_SHELL: &[Param] = &[param("shell_id", ValueType::Text, true)];

pub(crate) const LIST_SHELLS: &[Param] = &[];

pub(crate) const MONITOR: &[Param] = &[
    param("description", ValueType::Words, true),
    param("command", ValueType::Command, true),
    param("timeout_ms", ValueType::Positive, false),
];

pub(crate) const WRITE_STDIN: &[Param] = &[
    param("shell_id", ValueType::Text, true),
    param("input", ValueType::Text, true),
    param("yield_ms", ValueType::Positive, false),
];

/// The JSON Schema of `params` (the parts after the first add to it), each
/// property described by `describe(name)`.
pub(crate) fn schema(params: &[&[Param]], describe: impl Fn(&str) -> String) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for p in params.iter().copied().flatten() {
        let mut property = match p.kind {
            ValueType::Text => json!({"type": "string"}),
            ValueType::Words => json!({"type": "string", "pattern": NOT_BLANK}),
            ValueType::Command => json!({"type": "string", "pattern": COMMAND}),
            ValueType::Positive => json!({"type": "number", "exclusiveMinimum": 0}),
            ValueType::Flag => json!({"type": "boolean"}),
            ValueType::Count => json!({"type": "integer", "minimum": 1}),
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
        ValueType::Command => texts::NO_COMMAND.to_string(),
        _ => texts::missing(p.name),
    }
}

fn value_ok(p: &Param, value: &Value) -> Result<(), String> {
    let name = p.name;
    match (p.kind, value) {
        (ValueType::Text, Value::String(_)) => Ok(()),
        (ValueType::Words, Value::String(s)) if not_blank(s) => Ok(()),
        (ValueType::Words, Value::String(_)) => Err(texts::blank(name)),
        (ValueType::Command, Value::String(s)) if s.contains('\0') => {
            Err(texts::NUL_IN_COMMAND.to_string())
        }
        (ValueType::Command, Value::String(s)) if not_blank(s) => Ok(()),
        (ValueType::Command, Value::String(_)) => Err(texts::NO_COMMAND.to_string()),
        (ValueType::Text | ValueType::Words, _) => Err(texts::wrong_type(name, "a string")),
        (ValueType::Command, _) => Err(texts::NO_COMMAND.to_string()),
        (ValueType::Positive, Value::Number(n)) if n.as_f64().is_some_and(|v| v > 0.0) => Ok(()),
        (ValueType::Positive, Value::Number(_)) => {
            Err(texts::wrong_type(name, "a number greater than 0"))
        }
        (ValueType::Positive, _) => Err(texts::wrong_type(name, "a number greater than 0")),
        (ValueType::Count, Value::Number(n)) if count(n).is_some() => Ok(()),
        (ValueType::Count, _) => Err(texts::wrong_type(name, "a whole number of 1 or more")),
        (ValueType::Flag, Value::Bool(_)) => Ok(()),
        (ValueType::Flag, _) => Err(texts::wrong_type(name, "a boolean")),
    }
}

/// The value of a [`ValueType::Count`]: a whole number of 1 or more (`2.0` is
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
