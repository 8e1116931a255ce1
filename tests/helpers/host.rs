//! A host program for the containment tests (`tests/containment.rs`): each
//! case needs a process of its own — one under a pseudo-terminal, one
//! SIGKILLed while its shells run, one with a signal setup of its own.
//!
//! `containment-host CASE`; it prints what the test checks, one `key=value`
//! a line, on stdout.

use bashtools::{BashTools, Caller};
use serde_json::json;

fn main() {
    let case = std::env::args().nth(1).unwrap_or_default();
    match case.as_str() {
        "tty" => tty(),
        other => {
            eprintln!("containment-host: unknown case {other:?}");
            std::process::exit(2);
        }
    }
}

/// Under a terminal (`script -qc`): a command that opens `/dev/tty` must
/// fail at once instead of stopping with SIGTTIN.
fn tty() {
    let host_has_tty = std::fs::File::open("/dev/tty").is_ok();
    println!("host_tty={host_has_tty}");
    let tools = BashTools::builder().build().expect("tools");
    let r = tools.bash(
        &json!({"command": "read -r line < /dev/tty; echo read=$?", "timeout": 20}),
        &Caller::default(),
    );
    println!("result={}", r.text.replace('\n', " | "));
}
