//! Judges command lines with the allow-list gate, for `benches/gate_refusals/measure.py`.
//!
//! Reads one JSON object per line on stdin, `{"line": "...", "allowed": ["ls", ...]}`,
//! and writes one per line on stdout: `{"ok": true}`, or the refusal's kind and text.

use std::io::{self, BufRead, Write};

use bashtools::gate::{check_allowed, Denial};
use serde_json::{json, Value};

fn main() {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    for line in io::stdin().lock().lines() {
        let line = line.expect("stdin");
        let input: Value = serde_json::from_str(&line).expect("one JSON object per line");
        let text = input["line"].as_str().unwrap_or_default();
        let allowed: Vec<&str> = input["allowed"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let verdict = match check_allowed(text, &allowed) {
            Ok(()) => json!({"ok": true}),
            Err(denial) => json!({"ok": false, "kind": kind(&denial), "text": denial.to_string()}),
        };
        writeln!(out, "{verdict}").expect("stdout");
    }
}

fn kind(denial: &Denial) -> &'static str {
    match denial {
        Denial::NotAllowed { .. } => "not-allowed",
        Denial::NotLiteral { .. } => "not-literal",
        Denial::ForbiddenVariable { .. } => "forbidden-variable",
        Denial::NotLiteralName { .. } => "not-literal-name",
        Denial::Option { .. } => "option",
        Denial::Unparseable { .. } => "unparseable",
        _ => "other",
    }
}
