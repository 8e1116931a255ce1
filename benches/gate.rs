//! The allow-list gate on hostile input: `gate::check_allowed` must stay linear.
//!
//! `cargo bench --bench gate` checks a 1 MB line holding 100 000 substitutions, and a
//! few other shapes, and prints the median and the worst of several runs. Then the
//! policy against the allow list it grew from: the same real lines judged by
//! `check_allowed` and by a `Policy` of 200 rules, taking turns at going first, and
//! the ratio of their medians (`cargo bench --bench gate -- policy`). Plain
//! `std::time`, no harness.

use std::time::{Duration, Instant};

use bashtools::gate::check_allowed;
use bashtools::{Decision, Policy, Rule};

const ALLOWED: &[&str] = &["echo", "ls", "cat"];
const RUNS: usize = 15;

fn measure(name: &str, line: &str) {
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            let verdict = check_allowed(line, ALLOWED);
            let took = started.elapsed();
            std::hint::black_box(verdict).ok();
            took
        })
        .collect();
    times.sort();
    println!(
        "| {name} | {:.1} KB | {:.1} ms | {:.1} ms |",
        line.len() as f64 / 1000.0,
        times[RUNS / 2].as_secs_f64() * 1000.0,
        times[RUNS - 1].as_secs_f64() * 1000.0,
    );
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let cases: Vec<(&str, String)> = vec![
        (
            "1 MB, 100 000 sequential substitutions",
            // "echo " then 100 000 × " $(ls)x" padded to 1 MB.
            {
                let mut line = "echo".to_string() + &" $(ls) ".repeat(100_000);
                line.push_str(&"a".repeat(1_000_000 - line.len().min(1_000_000)));
                line
            },
        ),
        (
            "100 000 nested substitutions (refused at depth 64)",
            "$(".repeat(100_000) + &")".repeat(100_000),
        ),
        (
            "1 MB of one quoted word",
            format!("echo '{}'", "x".repeat(1_000_000)),
        ),
        ("50 000 commands in a list", "ls; ".repeat(50_000)),
    ];
    if filter.as_deref().map_or(true, |f| "policy".contains(f)) {
        policy_against_allow_list();
    }
    if filter.as_deref() == Some("policy") {
        return;
    }
    println!("| case | line | median | worst of {RUNS} |");
    println!("|---|---|---|---|");
    for (name, line) in &cases {
        if filter.as_deref().map_or(true, |f| name.contains(f)) {
            measure(name, line);
        }
    }
}

/// Lines as agents type them, from the repository's gate corpus.
fn real_lines() -> Vec<String> {
    include_str!("../tests/gate_corpus.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("## ") && !l.starts_with("! "))
        .map(|l| l.replace("\\n", "\n"))
        .collect()
}

/// The corpus's command words, allowed; then 200 rules: those words as
/// allow rules, and ask and deny rules of two and three words with
/// alternatives, as a rules file would hold them.
fn policy_against_allow_list() {
    const WORDS: &[&str] = &[
        "grep", "sed", "awk", "find", "sort", "uniq", "head", "tail", "wc", "cut", "tr", "cat",
        "echo", "printf", "git", "cargo", "ls", "test", "[", "[[", "true", "read", "export",
        "declare", "jobs", "trap", "set", "cd", "mapfile", "unset", "let", "xargs", "time", "wait",
        "hash", "fc", "getopts", "shopt",
    ];
    let mut policy = Policy::new();
    for w in WORDS {
        policy = policy.rule(Rule::allow(w).unwrap());
    }
    let mut n = 0;
    while policy.rule_list().len() < 200 {
        let w = WORDS[n % WORDS.len()];
        let rule = match n % 3 {
            0 => Rule::parse(Decision::Ask, &format!("{w} [push publish deploy-{n}]")),
            1 => Rule::parse(Decision::Deny, &format!("{w} --force-{n} [-rf -fr]")),
            _ => Rule::parse(Decision::Ask, &format!("{w} sub{n}")),
        };
        policy = policy.rule(rule.unwrap());
        n += 1;
    }
    // Each sample judges the lines `ROUNDS` times: one pass takes a few
    // tenths of a millisecond, too short to time steadily.
    const ROUNDS: usize = 20;
    let lines = real_lines();
    let mut allow_times = Vec::new();
    let mut policy_times = Vec::new();
    let allow_list = |times: &mut Vec<Duration>| {
        let started = Instant::now();
        for line in lines.iter().cycle().take(ROUNDS * lines.len()) {
            std::hint::black_box(check_allowed(line, WORDS)).ok();
        }
        times.push(started.elapsed() / ROUNDS as u32);
    };
    let rules = |times: &mut Vec<Duration>| {
        let started = Instant::now();
        for line in lines.iter().cycle().take(ROUNDS * lines.len()) {
            std::hint::black_box(policy.judge(line));
        }
        times.push(started.elapsed() / ROUNDS as u32);
    };
    // In turn, each first every other sample: what runs second finds the
    // allocator and the caches as the first left them.
    for run in 0..RUNS {
        if run % 2 == 0 {
            allow_list(&mut allow_times);
            rules(&mut policy_times);
        } else {
            rules(&mut policy_times);
            allow_list(&mut allow_times);
        }
    }
    allow_times.sort();
    policy_times.sort();
    let (a, p) = (allow_times[RUNS / 2], policy_times[RUNS / 2]);
    println!("| judging {} real lines | median |", lines.len());
    println!("|---|---|");
    println!(
        "| allow list of {} words (check_allowed) | {:.3} ms |",
        WORDS.len(),
        a.as_secs_f64() * 1000.0
    );
    println!(
        "| policy of {} rules (Policy::judge) | {:.3} ms |",
        policy.rule_list().len(),
        p.as_secs_f64() * 1000.0
    );
    println!("| ratio | {:.3}x |", p.as_secs_f64() / a.as_secs_f64());
    println!();
}
