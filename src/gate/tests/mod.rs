//! The gate's unit tests: one per hazard, with the exact refusal texts.

use super::*;

const LIST: &[&str] = &["ls", "echo", "cat", "git", "grep", "true", "["];
#[track_caller]
fn ok(line: &str) {
    assert_eq!(check_allowed(line, LIST), Ok(()), "line: {line:?}");
}

/// Refused as a word outside the list, with exactly the bare text.
#[track_caller]
fn refused(line: &str, word: &str) {
    let refusal = check_allowed(line, LIST).expect_err(line);
    assert_eq!(
        refusal.to_string(),
        format!("Command not allowed: {word}"),
        "line: {line:?}"
    );
    assert_eq!(
        refusal,
        Denial::NotAllowed { word: word.into() },
        "line: {line:?}"
    );
}

/// Refused as a command word that is not a plain literal, shown as written.
#[track_caller]
fn not_literal(line: &str, word: &str) {
    let refusal = check_allowed(line, LIST).expect_err(line);
    assert_eq!(
        refusal,
        Denial::NotLiteral { word: word.into() },
        "line: {line:?}"
    );
}

/// Refused for setting, unsetting or rebinding `name`, whatever the list holds.
#[track_caller]
fn forbidden(line: &str, name: &str) {
    forbidden_with(line, LIST, name);
}

#[track_caller]
fn forbidden_with(line: &str, list: &[&str], name: &str) {
    match check_allowed(line, list) {
        Err(Denial::ForbiddenVariable { name: n, .. }) if n == name => {}
        other => panic!("line {line:?}: expected a refusal for {name}, got {other:?}"),
    }
}

/// Refused for naming a variable that is not known before the line runs.
#[track_caller]
fn unknown_name(line: &str, list: &[&str]) {
    match check_allowed(line, list) {
        Err(Denial::NotLiteralName { .. } | Denial::Option { .. }) => {}
        other => panic!("line {line:?}: expected an unknown-name refusal, got {other:?}"),
    }
}

/// Refused for an option that runs code or changes reading.
#[track_caller]
fn option(line: &str, list: &[&str], text: &str) {
    match check_allowed(line, list) {
        Err(Denial::Option { text: t, .. }) if t == text => {}
        other => panic!("line {line:?}: expected an option refusal {text:?}, got {other:?}"),
    }
}

#[track_caller]
fn unparsable(line: &str) {
    match check_allowed(line, LIST) {
        Err(Denial::Unparseable { .. }) => {}
        other => panic!("line {line:?}: expected unparseable, got {other:?}"),
    }
}

/// The text a model would see.
fn text<S: AsRef<str>>(line: &str, list: &[S]) -> Result<(), String> {
    check_allowed(line, list).map_err(|r| r.to_string())
}

mod basics;
mod compound;
mod redirections;
mod robustness;
mod substitutions;
