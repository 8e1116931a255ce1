//! The variables a name-taking builtin sets: each name operand, and each declaration
//! (`NAME=VALUE`), judged after quote removal; a forbidden name, or one not known before
//! the line runs, is refused.

use super::rules::*;
use super::*;

pub(super) fn forbidden(name: String, text: String, change: Change) -> Check {
    Check::Refuse(Denial::ForbiddenVariable { name, text, change })
}

pub(super) fn not_literal_name(text: &str) -> Check {
    Check::Refuse(Denial::NotLiteralName {
        text: text.to_string(),
    })
}

/// The variable a name operand (`IFS`, `a[1]`) sets, or None when it expands.
pub(super) fn name_operand(value: Option<&str>, text: &str, out: &mut Vec<Check>) {
    let Some(value) = value else {
        out.push(not_literal_name(text));
        return;
    };
    let name = value.split('[').next().unwrap_or_default();
    if is_forbidden_name(name) {
        let change = if text.starts_with("unset") {
            Change::Unset
        } else {
            Change::Assign
        };
        out.push(forbidden(name.to_string(), text.to_string(), change));
    }
    if let Some(sub) = value.strip_prefix(name) {
        if let Some(name) = assigned_in_arithmetic(sub) {
            out.push(forbidden(name, text.to_string(), Change::Assign));
        }
    }
}

/// `NAME`, `NAME=VALUE`, `NAME+=VALUE`, `NAME[…]=VALUE` to a declaration builtin. The
/// name must be known; with `-n` the target must be a known name too.
pub(super) fn declaration(arg: &Word, text: &str, nameref: bool, out: &mut Vec<Check>) {
    let known = arg.known_value();
    let name_len = known.find(|c| !is_name_char(c)).unwrap_or(known.len());
    let name = &known[..name_len];
    let rest = &known[name_len..];
    let assigns = rest.starts_with('=') || rest.starts_with("+=");
    // A word that starts with neither a name nor an expansion (`=x`, `/dev/x`) names no
    // variable: bash says it is not a valid identifier and sets nothing. Only a literal
    // word or one that starts with `=` is sure to: `{PATH=1,x}` and `[P]ATH=1` expand
    // to names (the known part of such a word is not a prefix of what it becomes).
    if name.is_empty() && (arg.literal || known.starts_with('=')) {
        return;
    }
    // A name that ends where the word starts to expand, or a subscript of a word that
    // expands (globbing may change it), is not known.
    let known_name = !name.is_empty() && (arg.literal || assigns);
    if !known_name {
        out.push(not_literal_name(text));
        return;
    }
    if is_forbidden_name(name) {
        out.push(forbidden(
            name.to_string(),
            elide_value(text),
            Change::Assign,
        ));
        return;
    }
    // The value may be evaluated as arithmetic (`declare -i`, subscripts of `-a`).
    if let Some(assigned) = assigned_in_arithmetic(rest) {
        out.push(forbidden(assigned, elide_value(text), Change::Assign));
    }
    if !nameref {
        return;
    }
    // `declare -n r` takes its target from r's value, and one without a known target
    // is set by the next `r=…`: either way the target is not known.
    let target = rest.strip_prefix('=').filter(|_| arg.literal);
    let target_name = target.map(|t| t.split('[').next().unwrap_or_default());
    match target_name {
        Some(t) if is_forbidden_name(t) => {
            out.push(forbidden(t.to_string(), text.to_string(), Change::Nameref));
        }
        Some(t) if is_name(t) => out.push(Check::Nameref(name.to_string())),
        _ => out.push(not_literal_name(text)),
    }
}

/// The name a name operand sets, when it is known: its value for a literal word; for an
/// unquoted array element with a plain subscript (`unset array[2]`), which bash also
/// reads as a glob, the element itself when every variable the glob could match
/// instead (`array2`, in any case under `nocaseglob`) is one the gate lets be set.
pub(super) fn element_name(arg: &Word) -> Option<String> {
    if arg.literal {
        return Some(arg.value.clone());
    }
    let (name, rest) = arg.raw.split_once('[')?;
    let subscript = rest.strip_suffix(']')?;
    let plain = |s: &str| !s.is_empty() && s.chars().all(is_name_char);
    if !is_name(name) || !plain(subscript) {
        return None;
    }
    let matched = subscript.chars().map(|c| format!("{name}{c}"));
    let harmless = matched
        .chain([name.to_string()])
        .all(|v| !is_forbidden_name(&v) && !is_forbidden_name(&v.to_uppercase()));
    harmless.then(|| arg.raw.clone())
}
