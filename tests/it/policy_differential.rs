//! The policy checked against bash itself (README, "Policy"): lines built from a
//! deny list and the wrappers that run other commands are judged by the
//! policy, and every line it does not deny is run by a real `bash -c`
//! whose `PATH` holds recording stubs for the command words and the real
//! wrapper programs (`env`, `xargs`, `find`, `sh`, …), every builtin
//! enabled (`eval`, `exec`, `command`, `builtin`). A denied word that runs
//! is a bypass, and fails the test.
//!
//! Seeded: `POLICY_SEED` and `POLICY_LINES` override the seed and the
//! number of lines.

use bashtools::{Judgement, Policy, Rule};

use crate::gate_differential::{bash_usable, Rng, Sandbox};

const DENIED: &[&str] = &["rm", "ga"];

/// Ways to spell a command word, denied or not.
const WORDS: &[&str] = &[
    "al",
    "be",
    "rm",
    "ga",
    "'r'm",
    "g\\a",
    "\"ga\"",
    "$'\\x72m'",
    "./ga",
    "$c",
    "\"$c\"",
    "${c}",
    "r$e",
    "$(printf rm)",
    "`echo ga`",
    "al",
];

/// What a wrapper looks like around a command (`{}`).
const WRAPPERS: &[&str] = &[
    "{}",
    "env {}",
    "env -i PATH=$PATH X=1 {}",
    "env -u X -- {}",
    "command {}",
    "command -p {}",
    "builtin eval {}",
    "exec {}",
    "nice {}",
    "nice -n 2 {}",
    "nohup {} >/dev/null",
    "timeout 5 {}",
    "timeout -s KILL 5s {}",
    "stdbuf -oL {}",
    "time {}",
    "time -p {}",
    "\\time {}",
    "echo x | xargs {}",
    "echo x | xargs -n 1 -I@ {} @",
    "find . -maxdepth 0 -exec {} \\;",
    "find . -maxdepth 0 -execdir {} {{}} +",
    "sh -c '{}'",
    "bash -c '{}'",
    "bash -e -o pipefail -c '{}'",
    "dash -c '{}'",
    "sh -c \"sh -c '{}'\"",
    "eval '{}'",
    "eval {}",
    "eval \"{}\"",
    "bash -c \"$s\"",
    "eval \"$s\"",
    "$w {}",
    "env $w {}",
];

fn line(rng: &mut Rng) -> String {
    let mut parts = Vec::new();
    for _ in 0..1 + rng.below(3) {
        // Mostly allowed words, so that many lines get to run.
        let mut cmd = match rng.chance(70) {
            true => rng.pick(&["al", "be", "'a'l", "b\\e", "./al"]).to_string(),
            false => rng.pick(WORDS).to_string(),
        };
        for _ in 0..1 + rng.below(2) {
            let wrapper = rng.pick(WRAPPERS);
            if wrapper.contains('\'') && cmd.contains('\'') {
                continue;
            }
            cmd = wrapper.replace("{}", &cmd).replace("{{}}", "{}");
        }
        if rng.chance(20) {
            cmd = format!("echo $({cmd})");
        }
        parts.push(cmd);
    }
    let sep = rng.pick(&["; ", " && ", " | ", " || true; "]);
    // Values the expanding words take: the denied words, and wrappers.
    let prelude = rng.pick(&[
        "c=rm e=m s=rm w=env; ",
        "c=ga e=m s='ga x' w=command; ",
        "c=al e=x s=al w=nice; ",
        "",
    ]);
    format!("{prelude}{}", parts.join(sep))
}

#[test]
fn lines_the_policy_lets_through_never_run_a_denied_word() {
    let seed = std::env::var("POLICY_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5EED_0DE1_u64);
    let lines: usize = std::env::var("POLICY_LINES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500);
    let policy = DENIED
        .iter()
        .fold(Policy::new(), |p, w| p.rule(Rule::deny(w).unwrap()));
    let mut rng = Rng(seed | 1);
    let mut sandbox = Sandbox::with_programs(
        "policy",
        &["al", "be", "rm", "ga", "printf"],
        &[
            "env", "nice", "nohup", "timeout", "stdbuf", "time", "xargs", "find", "sh", "bash",
            "dash", "echo",
        ],
    );
    let usable = bash_usable();
    let (mut let_through, mut denied, mut ran_allowed) = (0, 0, 0);
    let mut bypasses = Vec::new();
    for _ in 0..lines {
        let line = line(&mut rng);
        match policy.judge(&line) {
            Judgement::Deny(_) => {
                denied += 1;
                continue;
            }
            _ => let_through += 1,
        }
        if !usable {
            continue;
        }
        let records = sandbox.run(&line);
        let ran = sandbox.ran(&records);
        ran_allowed += ran.iter().filter(|w| !DENIED.contains(&w.as_str())).count();
        let bad: Vec<&String> = ran
            .iter()
            .filter(|w| DENIED.contains(&w.as_str()))
            .collect();
        if !bad.is_empty() {
            bypasses.push(format!("{line:?} ran {bad:?}"));
        }
    }
    eprintln!(
        "policy differential: seed {seed:#x}: {lines} lines, {denied} denied, {let_through} let through \
         and run ({ran_allowed} allowed programs ran), {} bypasses",
        bypasses.len()
    );
    assert!(let_through > lines / 10, "hardly any line was let through");
    assert!(
        !usable || ran_allowed > let_through / 2,
        "the lines let through hardly ran anything"
    );
    assert!(
        bypasses.is_empty(),
        "lines the policy let through ran a denied word:\n{}",
        bypasses.join("\n")
    );
}
